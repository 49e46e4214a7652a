"""What the session needs of a transport: three calls, as small as httpx's transport interface.

- ``open(deliver)``: connect; from then on every message the server sends goes to ``deliver``,
  in the order it arrives: notifications, the server's own requests, and the responses to ours.
  The session correlates responses with its requests itself (``_jsonrpc.Correlator``), so no
  transport needs to know which message answers which: stdio reads lines, Streamable HTTP reads
  a JSON body or an SSE stream, the memory transport parses an engine's reply, and each of them
  just delivers. ``deliver`` may be called while a ``send`` is still running (the memory
  transport delivers a request's response before its ``send`` returns; an HTTP POST's SSE
  stream is delivered as it arrives). The session never blocks in ``deliver``: it answers the
  server's requests in tasks of their own, so a transport may await it from its reading loop.
- ``send(message, headers=...)``: send one message (a request, a notification, or the answer
  to a server request). ``headers`` are what the session wants sent beside it on HTTP
  (``MCP-Protocol-Version``; the modern ``Mcp-Method`` and ``Mcp-Name``, built by
  ``_headers.for_request``); transports without headers ignore them.
- ``close()``: end the connection (stdio: close the child's stdin; HTTP: ``DELETE`` the legacy
  session). After it, ``send`` raises ``TransportClosed`` and nothing more is delivered.
- ``open(deliver, on_close=...)``: ``on_close(reason)`` is called once when the connection ends,
  whatever ended it (the child exited, the server closed the stream, ``close()``): the session
  fails what still waits for a response with that reason at once, instead of at its timeout.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final, Protocol

import pydantic_core

Deliver = Callable[[dict[str, Any]], Awaitable[None]]
"""Where a transport hands each message the server sent (a parsed JSON-RPC object)."""

OnClose = Callable[[str], object]
"""Told once, with the reason, that the connection ended."""

CLOSE_GRACE: Final = 5.0
"""Seconds a closing client gives the server to take what it says on leaving: the cancellations of
what it gave up on, a legacy HTTP session's ``DELETE``. A server that takes nothing (hung) holds the
close no longer; both are courtesies the server can do without (a session also expires)."""

FAILURE_KEY: Final = "_failure"
"""Where an error response a transport made up for a request carries the exception that failed it
on this side (an ``OAuthError`` while signing in, say): the session raises that exception rather
than a ``ClientError``. It never goes on a wire."""


BODY_KEY: Final = "_body"
"""Where a response a transport read whole as one JSON text carries that text (``bytes``): the
session hands it to the request's ``CallScope`` (a proxy may send the result on as it came) and
takes it off the response. It never goes on a wire."""


def parse_response(text: bytes) -> Any:
    """The JSON value ``text`` holds; ``ValueError`` if it holds none.

    A response holding a result and nothing else, in strict JSON, carries ``text`` too
    (``BODY_KEY``). ``NaN`` and ``Infinity`` are taken (a value they stand in is sent on as
    ``null``), but such a text is never sent on as it came.
    """
    try:
        value = pydantic_core.from_json(text, allow_inf_nan=False)
    except ValueError:
        return pydantic_core.from_json(text)
    if type(value) is dict and len(value) == 3 and "result" in value:  # the text is the result's and the envelope's
        value[BODY_KEY] = text
    return value


class Transport(Protocol):
    """One connection to one server, as ``ClientSession`` drives it.

    ``send``'s ``headers`` are what an HTTP transport sends beside the message; a transport with a
    class attribute ``sends_headers = False`` (stdio, in memory) is handed none.
    """

    async def open(self, deliver: Deliver, *, on_close: OnClose | None = None) -> None: ...

    async def send(self, message: dict[str, Any], *, headers: Mapping[str, str] | None = None) -> None: ...

    async def close(self) -> None: ...


class TransportClosed(ConnectionError):
    """A message was sent on a transport that is not open (never opened, or closed)."""
