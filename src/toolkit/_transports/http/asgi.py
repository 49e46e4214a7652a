"""Small ASGI helpers the HTTP modules share."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any

from ..._jsonrpc import encode, error_reply

if TYPE_CHECKING:
    from starlette.types import Receive, Scope, Send


async def respond(send: Send, status: int, body: bytes = b"", headers: Iterable[tuple[str, str]] = ()) -> None:
    raw_headers = [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in headers]
    if body:
        raw_headers.append((b"content-type", b"application/json"))
    raw_headers.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": raw_headers})
    await send({"type": "http.response.body", "body": body})


async def respond_error(
    send: Send, status: int, code: int, message: str, request_id: Any = None, headers: Iterable[tuple[str, str]] = ()
) -> None:
    await respond(send, status, encode(error_reply(request_id, code, message)), headers)


class BodyTooLarge(Exception):
    """A request body over the limit ``read_body`` was given."""


async def read_body(receive: Receive, limit: int) -> bytes | None:
    """The request's whole body, or ``None`` if the client went away; ``BodyTooLarge`` past ``limit`` bytes."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def header_map(scope: Scope) -> dict[str, str]:
    """Lower-case header names to values; repeated headers joined with ", " (RFC 9110 §5.3)."""
    raw = scope["headers"]
    if not isinstance(raw, list | tuple):  # ASGI allows any iterable
        raw = list(raw)
    headers = {name.decode("latin-1").lower(): value.decode("latin-1").strip() for name, value in raw}
    if len(headers) == len(raw):
        return headers  # no name repeated: the common case, in one pass
    headers = {}
    for name, value in raw:
        key = name.decode("latin-1").lower()
        text = value.decode("latin-1").strip()
        headers[key] = f"{headers[key]}, {text}" if key in headers else text
    return headers


async def wait_disconnect(receive: Receive) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return


class RequestInfo:
    """What ``ctx.request`` exposes over HTTP: the ASGI scope, headers, and the stream closer."""

    def __init__(self, scope: Scope, close_stream: Callable[[], Awaitable[None]]) -> None:
        self.scope = scope
        self.close_stream = close_stream

    @property
    def headers(self) -> dict[str, str]:
        return header_map(self.scope)

    @property
    def client(self) -> tuple[str, int] | None:
        client = self.scope.get("client")
        return (str(client[0]), int(client[1])) if client else None
