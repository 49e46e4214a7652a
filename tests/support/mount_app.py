"""A gateway mounting two servers (``toolkit run tests/support/mount_app.py:server``), for tests/test_mount.py.

``billing`` (under ``billing``) has a lifespan, an ``on_call_tool`` middleware, a tool returning a
list, one asking a question, a resource template with a completer and a prompt; ``weather``
(under ``weather``) a tool and a static resource. The gateway's own ``add_city`` adds a tool to
``weather`` while clients are connected, so they hear of a mounted server's change.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from pydantic import BaseModel

from toolkit import Context, Server, ToolResult
from toolkit.middleware import CallNext, McpRequest, Middleware


class Confirm(BaseModel):
    confirm: bool


@contextlib.asynccontextmanager
async def ledger(server: Server) -> AsyncIterator[dict[str, Any]]:
    yield {"ledger": "open"}


class Stamp(Middleware):
    """Billing's own middleware: marks each of its tool results, so a test sees it ran."""

    async def on_call_tool(self, request: McpRequest, call_next: CallNext[ToolResult]) -> ToolResult:
        result = await call_next(request)
        result.meta = {**(result.meta or {}), "billing/stamp": request.name}
        return result


billing = Server("billing", lifespan=ledger, middleware=[Stamp()])


@billing.tool
def charge(amount: int) -> list[int]:
    """Charge an amount; the charge and its total with tax."""
    return [amount, amount * 2]


@billing.tool
def whoami(ctx: Context) -> dict[str, Any]:
    """The server running this tool, and its lifespan's state."""
    return {"server": ctx.server.name, "lifespan": ctx.lifespan}


@billing.tool
async def refund(amount: int, ctx: Context) -> str:
    """Refund, after the user confirms."""
    answer = await ctx.elicit(f"Refund {amount}?", Confirm)
    return f"refunded {amount}" if answer.data is not None and answer.data.confirm else "kept"


@billing.resource("data://invoices/{number}")
def invoice(number: int) -> str:
    """One invoice."""
    return f"invoice {number}"


@billing.completion(resource="data://invoices/{number}", argument="number")
def invoice_numbers(value: str) -> list[str]:
    return [number for number in ("7", "8", "17") if number.startswith(value)]


@billing.prompt
def remind(customer: str) -> str:
    """A payment reminder."""
    return f"Remind {customer} to pay."


weather = Server("weather")


@weather.tool
def temperatures(city: str) -> list[int]:
    """Hourly temperatures."""
    return [61, 63, 66]


@weather.resource("weather://today")
def today() -> str:
    return "sunny"


server = Server("gateway")
server.mount(billing, "billing")
server.mount(weather, "weather")


@server.tool
def add_city(city: str) -> str:
    """Add a tool to the mounted weather server (its clients hear that the list changed)."""

    def temperature() -> int:
        return 70

    weather.add_tool(temperature, name=f"temperature_{city}")
    return f"weather_temperature_{city} added"
