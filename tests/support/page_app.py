"""A server for the tools page's browser tests (tests/test_tools_page_browser.py): richer arguments
than examples/weather.py has, and hostile text in every place the page shows server data.

    toolkit run tests/support/page_app.py --transport http --port 8000 --docs

- ``plan_trip`` takes nested objects, an array of objects, ``date`` and ``email`` formats, bounded
  numbers, a required and a defaulted boolean, defaults and ``T | None``; it returns its arguments.
- ``hostile_markup``'s description and result are markup that must show as text, never run.
- ``media`` returns an image and ``resource_link`` blocks (one ``javascript:``, one ``https:``).
- A text resource whose name is markup, a resource template and a prompt with an argument.
- ``MARK`` (markup that would make elements of class ``pwn``) in the instructions, a tool's title,
  a parameter's description, enum values, a validation message, a resource link's name, a prompt's
  message and an icon list with a ``javascript:`` source; and ``clobber``, a prompt whose argument
  names are those of a form's own methods (``addEventListener``, ``append``).
"""

from __future__ import annotations

import struct
import zlib
from datetime import date
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from toolkit import Image, ResourceLink, Server, Text

MARK = '<b class="pwn">bold</b><img class="pwn" src="x" onerror="window.__pwned=9">'
"""Markup that, if the page ever parsed it, would leave elements of class ``pwn`` in the DOM."""

server = Server("page-test", version="0.1.0", instructions="A server for the tools page's browser tests. " + MARK)

Email = Annotated[str, Field(json_schema_extra={"format": "email"})]

HOSTILE_DESCRIPTION = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'
HOSTILE_RESULT = "<b>bold</b><script>window.__pwned=3</script>"
JAVASCRIPT_URI = "javascript:window.__pwned=4"
HTTPS_URI = "https://example.com/report"
RESOURCE_URI = "notes://welcome"
RESOURCE_NAME = "<em>welcome</em>"
RESOURCE_TEXT = "Hello <b>reader</b>"
TEMPLATE = "notes://{note_id}"


class Address(BaseModel):
    street: str
    city: str
    postcode: str | None = None


class Traveller(BaseModel):
    name: str
    email: Email
    age: Annotated[int, Field(ge=0, le=130)]
    address: Address


class Stop(BaseModel):
    city: str
    arrive: date
    nights: Annotated[int, Field(ge=1, le=30)] = 1


@server.tool
def plan_trip(
    traveller: Traveller,
    stops: list[Stop],
    refundable: bool,
    insurance: bool = False,
    budget: Annotated[float, Field(ge=0, le=10_000)] = 500.0,
    notes: str | None = None,
) -> dict[str, Any]:
    """Plan a trip; returns the arguments it was given, as JSON.

    Args:
        traveller: Who travels.
        stops: Where, in order.
        refundable: Whether the tickets must be refundable.
        insurance: Whether to add travel insurance.
        budget: Most to spend, in euros.
        notes: Anything else.
    """
    return {
        "traveller": traveller.model_dump(mode="json"),
        "stops": [stop.model_dump(mode="json") for stop in stops],
        "refundable": refundable,
        "insurance": insurance,
        "budget": budget,
        "notes": notes,
    }


@server.tool(description=HOSTILE_DESCRIPTION)
def hostile_markup() -> str:
    return HOSTILE_RESULT


def _png(width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
    """A solid-colour PNG, built by hand (no imaging library)."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    row = b"\x00" + bytes(rgb) * width
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(row * height))
        + chunk(b"IEND", b"")
    )


RED_DOT = _png(16, 16, (200, 30, 30))


@server.tool
def media() -> list[Text | Image | ResourceLink]:
    """An image and two links: one the page may make clickable, one it must not."""
    return [
        Text("A red square:"),
        Image(RED_DOT, mime_type="image/png"),
        ResourceLink(JAVASCRIPT_URI, name="<i>run me</i>"),
        ResourceLink(HTTPS_URI, name="report", mime_type="text/html"),
    ]


@server.resource(RESOURCE_URI, name=RESOURCE_NAME, mime_type="text/plain")
def welcome() -> str:
    """A text resource whose name is markup."""
    return RESOURCE_TEXT


@server.resource(TEMPLATE, name="note", mime_type="text/plain")
def note(note_id: str) -> str:
    """One note; its text repeats the id exactly as the URI carried it."""
    return f"Note {note_id}"


@server.prompt
def greet(name: str) -> str:
    """Ask the model to greet someone.

    Args:
        name: Who to greet.
    """
    return f"Say hello to {name}."


RED_DOT_ICON = "data:image/png;base64," + __import__("base64").b64encode(RED_DOT).decode()


@server.tool(
    title="Hostile " + MARK,
    icons=[{"src": "javascript:window.__pwned=5"}, {"src": RED_DOT_ICON, "mimeType": "image/png"}],
)
def hostile_everywhere(
    label: Annotated[str, Field(description="Help " + MARK, min_length=3)],
    pick: Literal["<b class='pwn'>a</b>", "plain"] = "plain",
) -> list[Text | ResourceLink]:
    """Markup in its title, icons, help text and enum values; a link named with markup."""
    return [Text(label + " " + pick), ResourceLink(HTTPS_URI, name=MARK)]


@server.prompt
def clobber(addEventListener: str, append: str) -> str:
    """A prompt whose arguments are named like a form's own methods."""
    return f"{addEventListener} and {append} {MARK}"
