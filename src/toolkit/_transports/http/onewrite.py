"""One ``send()`` per HTTP response: uvicorn's protocol with a response head held for its body.

uvicorn writes a response's head (status line and headers) and its body with two
``transport.write`` calls, and with ``TCP_NODELAY`` each is a ``send()`` of its own and a
packet of its own: the server pays two system calls per response, and a client often reads the
head alone, then wakes again for the body. An MCP response is almost always one JSON body sent
right after its head, in the same step of the request's task, so the head waits for it here and
both go out in one write.

Only a head that announces its body's length is held (``Content-Length``): such a response is
of no use to a client before its body, which follows; a response of unknown length (an SSE
stream, chunked) has its head written at once, as uvicorn writes it. A held head goes out with
the next write on the connection, or when the response is complete without one (a ``HEAD``
request's), or before the connection is closed. Nothing else about the protocol changes
(parsing, flow control, keep-alive, shutdown are uvicorn's).
"""

from __future__ import annotations

import asyncio
from typing import Any, cast

from uvicorn.protocols.http.auto import AutoHTTPProtocol


class OneWriteTransport:
    """A connection's transport whose response heads that announce a length wait for the body."""

    __slots__ = ("_held", "_transport")

    def __init__(self, transport: asyncio.Transport) -> None:
        self._transport = transport
        self._held: bytes | None = None

    def write(self, data: bytes) -> None:
        held = self._held
        if held is not None:
            self._held = None
            self._transport.write(held + data)
        elif data[:5] == b"HTTP/" and data[-4:] == b"\r\n\r\n" and b"content-length:" in data.lower():
            self._held = data  # uvicorn writes a head whole, in one write
        else:
            self._transport.write(data)

    def flush(self) -> None:
        """Write a head still held."""
        held = self._held
        if held is not None:
            self._held = None
            self._transport.write(held)

    def writelines(self, list_of_data: Any) -> None:
        self.flush()
        self._transport.writelines(list_of_data)

    def write_eof(self) -> None:
        self.flush()
        self._transport.write_eof()

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def abort(self) -> None:
        self._held = None
        self._transport.abort()

    def __getattr__(self, name: str) -> Any:  # everything else is the transport's own
        return getattr(self._transport, name)


class OneWriteProtocol(AutoHTTPProtocol):  # type: ignore[misc,valid-type]
    """uvicorn's HTTP/1.1 protocol (httptools, else h11) writing each response in one ``send()``."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(OneWriteTransport(cast(asyncio.Transport, transport)))

    def on_response_complete(self) -> None:
        self.transport.flush()  # a response complete with no write after its head (a HEAD request's)
        super().on_response_complete()
