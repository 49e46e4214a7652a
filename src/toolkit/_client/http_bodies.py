"""The bodies of an MCP server's HTTP answers, read as an untrusted server's: bounded, quoted, parsed.

Both readers of Streamable HTTP answers use these: ``HttpTransport`` reading a request's POST
(or its resumed stream), and the legacy session's GET stream (``http_legacy_session``).

- A body is read up to a limit and no further (``read_limited``): a JSON answer up to
  ``max_message_bytes``, an error status's body only as far as it may hold a JSON-RPC error.
- An SSE stream's ``message`` events are JSON-RPC messages (2025-11-25 transports, "Sending
  Messages to the Server" 5-6; 2026-07-28 transports/streamable-http), handed on one by one as
  they arrive (``read_messages``); an event that is not a JSON object is ``MalformedMessage``.
  Other event types are skipped.
- What an error message quotes of an unexpected body (an HTML page, invalid JSON) is an
  ``excerpt``: whitespace folded, ``EXCERPT_CHARS`` at most.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, Final

import pydantic_core

from .exchange import HttpResponse
from .sse import SseParser

logger = logging.getLogger("toolkit.client")

ACCEPT_BOTH: Final = "application/json, text/event-stream"
"""What a request accepts: an answer is one JSON body or an SSE stream (a client MUST accept both)."""
EXCERPT_CHARS: Final = 200
"""How much of an unexpected body an error message quotes."""


class MalformedMessage(ValueError):
    """A message on an SSE stream that is not JSON."""


def media_type(response: HttpResponse) -> str:
    """The media type of the answer, lower case, without its parameters (``""``: none)."""
    return media_type_of(response.header("content-type"))


def media_type_of(content_type: str | None) -> str:
    """The media type a ``Content-Type`` value names, lower case, without its parameters (``""``: none)."""
    return (content_type or "").split(";", 1)[0].strip().lower()


async def read_limited(response: HttpResponse, limit: int) -> bytes | None:
    """The body, or ``None`` once it is longer than ``limit`` bytes (the rest is not read)."""
    declared = response.header("content-length") or ""
    if declared.isdigit() and int(declared) > limit:
        return None
    chunks: list[bytes] = []
    size = 0
    while chunk := await response.read_chunk():
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def excerpt(body: bytes) -> str:
    """The start of ``body`` for an error message, whitespace folded."""
    text = " ".join(body[: EXCERPT_CHARS * 4].decode("utf-8", "replace").split())
    return text if len(text) <= EXCERPT_CHARS else text[:EXCERPT_CHARS] + "..."


async def read_messages(
    response: HttpResponse,
    parser: SseParser,
    handle: Callable[[dict[str, Any]], Awaitable[bool]],
    url: str,
) -> bool:
    """Read an SSE stream, handing each message on, until it ends or ``handle`` says it is over.

    Whether any message came. A request's stream is over once its response came: a server
    SHOULD end it then, and one that does not is not read (nor held open) any longer. Raises
    ``MalformedMessage``, the parser's ``EventTooLarge``, and the response's ``HttpError``.
    """
    received = False
    while chunk := await response.read_chunk():
        for event in parser.feed(chunk):
            if event.event != "message":
                logger.debug("%s: ignored an SSE event of type %r", url, event.event)
                continue
            try:
                message = pydantic_core.from_json(event.data)
            except ValueError:
                raise MalformedMessage(f"an event that is not JSON: {excerpt(event.data)}") from None
            if not isinstance(message, dict):
                raise MalformedMessage(f"an event that is not a JSON-RPC message: {excerpt(event.data)}")
            received = True
            if await handle(message):
                return True
    return received
