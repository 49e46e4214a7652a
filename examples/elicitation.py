"""A table-booking server that asks the user for details, then for a confirmation (elicitation).

Run it:  toolkit run examples/elicitation.py                       (stdio)
         toolkit run examples/elicitation.py --transport http      (http://127.0.0.1:8000/mcp)

The same code serves both protocol eras. A 2025-11-25 client gets two ``elicitation/create``
requests while the call is running. A 2026-07-28 client gets ``resultType: "input_required"``
twice, and calls again with the answers; the tool then runs again from the top. That is why
the booking is made after the last question, never before.
"""

from __future__ import annotations

import datetime
import enum

from pydantic import BaseModel, Field

from toolkit import Context, Server, ToolError

server = Server(
    "bookings",
    version="1.0.0",
    instructions="Books restaurant tables. book_table asks the user who is coming and for a confirmation.",
)


class Seating(enum.Enum):
    INDOOR = "indoor"
    TERRACE = "terrace"


class Party(BaseModel):
    """What the user is asked first: a flat form of primitive fields (the spec allows no more)."""

    name: str = Field(min_length=1, description="Name for the booking")
    guests: int = Field(ge=1, le=12, description="How many people?")
    seating: Seating = Field(default=Seating.INDOOR, description="Where to sit")


class Confirmation(BaseModel):
    confirm: bool = Field(description="Book this table?")


class Booking(BaseModel):
    reference: str
    restaurant: str
    day: datetime.date
    name: str
    guests: int
    seating: Seating


BOOKINGS: dict[str, Booking] = {}


@server.tool(annotations={"destructiveHint": False, "idempotentHint": False})
async def book_table(restaurant: str, day: datetime.date, ctx: Context) -> Booking:
    """Book a table: asks the user who is coming, then asks them to confirm.

    Args:
        restaurant: The restaurant's name.
        day: The day of the booking (YYYY-MM-DD).
    """
    party = await ctx.elicit(f"Booking at {restaurant} on {day:%A %d %B}: who is coming?", Party, key="party")
    if not party.accepted or party.data is None:
        raise ToolError("The user did not give the booking details; nothing was booked.")
    details = party.data
    summary = f"{details.guests} at {restaurant}, {day:%A %d %B}, {details.seating.value}, for {details.name}"
    confirmation = await ctx.elicit(f"Book a table for {summary}?", Confirmation, key="confirm")
    if not (confirmation.accepted and confirmation.data and confirmation.data.confirm):
        raise ToolError("The user did not confirm; nothing was booked.")
    # Only now, after the last question, change anything: in the 2026-07-28 era this function
    # runs once per round, and every line above may run again.
    booking = Booking(
        reference=f"B{len(BOOKINGS) + 1:04d}",
        restaurant=restaurant,
        day=day,
        name=details.name,
        guests=details.guests,
        seating=details.seating,
    )
    BOOKINGS[booking.reference] = booking
    await ctx.info(f"booked {booking.reference}: {summary}")
    return booking


@server.tool(annotations={"readOnlyHint": True})
def list_bookings() -> list[Booking]:
    """Every booking made so far."""
    return list(BOOKINGS.values())


if __name__ == "__main__":
    server.run()
