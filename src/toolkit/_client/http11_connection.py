"""One HTTP/1.1 connection of ``http11.Http11Client``: an asyncio protocol that ``httptools`` parses for.

``Connection`` owns one socket and reads one response at a time into an ``Http11Response``:
the head (status, reason, headers by lower-case name, the cookies it sets), then the body as the
parser hands it over, de-chunked, until ``Content-Length``, the last chunk, or the connection's
end says it is complete (RFC 9112 §6.3). The response is read with ``read_chunk`` without a
loop pass when its bytes are there already, which is the common case of a small JSON answer.

- Nothing from the server is trusted: a head over ``MAX_HEAD_BYTES`` fails the response; a body
  waits in memory up to ``HIGH_WATER`` bytes, then reading from the socket pauses until the
  reader catches up (the transport bounds what it keeps of it: ``max_message_bytes``).
- A connection goes back to its pool only when its response was read to its end and both sides
  meant to keep it alive; anything else (abandoned half-way, broken, ``Connection: close``)
  closes it. A close before any byte of the response says ``before_response`` (a stale socket
  the pool may retry on).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Final, Literal, Protocol, cast

import httptools

from .exchange import HttpError, HttpTimeout, ReadTimeout

MAX_HEAD_BYTES: Final = 64 * 1024
HIGH_WATER: Final = 256 * 1024

Origin = tuple[str, str, int]
"""(scheme, host, port): what a connection is kept for."""

Event = Literal["head", "full", "complete", "failed"]
"""What a response's ``watcher`` is told: the head came; the body reached ``HIGH_WATER`` unread
(reading paused); the body is all there; the response failed."""


class Pool(Protocol):
    """What a connection tells the pool that keeps it."""

    def release(self, connection: Connection) -> None: ...

    def forget(self, connection: Connection) -> None: ...

    def remember_cookies(self, host: str, response: Http11Response) -> None: ...


class RemoteClosed(HttpError):
    """The server closed the connection before the response was complete."""

    def __init__(self, message: str, *, before_response: bool) -> None:
        super().__init__(message)
        self.before_response = before_response


class Http11Response:
    """One response on one connection: its head, then its body as it arrives."""

    __slots__ = (
        "_buffered",
        "_chunks",
        "_connection",
        "_error",
        "_waiter",
        "complete",
        "cookies",
        "head_size",
        "headers",
        "keep_alive",
        "read_timeout",
        "reason",
        "received",
        "status",
        "until_close",
        "watcher",
    )

    def __init__(self, connection: Connection, read_timeout: float | None) -> None:
        self._connection = connection
        self.read_timeout = read_timeout
        self.status = 0
        self.reason = ""
        self.headers: dict[str, str] = {}
        self.cookies: list[str] = []
        self.received = False
        """Whether any byte of the response came."""
        self.head_size = 0
        self.until_close = True
        """A body that ends with the connection (no Content-Length, not chunked)."""
        self.keep_alive = False
        self.complete = False
        self._chunks: list[bytes] = []
        self._buffered = 0
        self._error: BaseException | None = None
        self._waiter: asyncio.Future[None] | None = None
        self.watcher: Callable[[Http11Response, Event], bool] | None = None
        """Told of each event from the connection's own callbacks, while nobody reads the response
        (``Http11Client.send_now``); it returns ``True`` once it has taken the response over, and
        is not told again."""

    def header(self, name: str) -> str | None:
        return self.headers.get(name)

    async def read_chunk(self) -> bytes:
        while True:
            if self._chunks:
                chunks, self._chunks = self._chunks, []
                self._buffered = 0
                self._connection.resume_reading()
                return chunks[0] if len(chunks) == 1 else b"".join(chunks)
            if self._error is not None:
                raise self._error
            if self.complete:
                return b""
            await self._wait(self.read_timeout)

    async def aclose(self) -> None:
        self._connection.done(self)

    async def wait_head(self) -> None:
        """Until the head has come: within ``read_timeout`` in all (a server trickling it byte by byte
        does not hold the request longer)."""
        deadline = None if self.read_timeout is None else asyncio.get_running_loop().time() + self.read_timeout
        while not self.status:
            if self._error is not None:
                raise self._error
            await self._wait(None if deadline is None else deadline - asyncio.get_running_loop().time())

    @property
    def failed(self) -> bool:
        return self._error is not None

    @property
    def error(self) -> BaseException | None:
        """Why the response failed, if it did."""
        return self._error

    async def _wait(self, timeout: float | None) -> None:
        loop = asyncio.get_running_loop()
        waiter = self._waiter = loop.create_future()
        if timeout is None:
            await waiter
            return
        handle = loop.call_later(max(timeout, 0.0), _expire, waiter, self.read_timeout)
        try:
            await waiter
        finally:
            handle.cancel()

    def body_so_far(self) -> bytes:
        """The body received and not read yet, without reading it."""
        chunks = self._chunks
        if len(chunks) > 1:
            chunks[:] = [b"".join(chunks)]
        return chunks[0] if chunks else b""

    def tell(self, event: Event) -> None:
        watcher = self.watcher
        if watcher is not None and watcher(self, event):
            self.watcher = None

    def wake(self) -> None:
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)

    def finish(self) -> None:
        self.complete = True
        if self._waiter is not None:
            self.wake()
        if self.watcher is not None:
            self.tell("complete")

    def fail(self, error: BaseException) -> None:
        if self._error is None and not self.complete:
            self._error = error
        self.wake()
        self.tell("failed")


def _expire(waiter: asyncio.Future[None], seconds: float | None) -> None:
    if not waiter.done():
        waiter.set_exception(ReadTimeout(f"no answer within {seconds:g} s"))


class Connection(asyncio.Protocol):
    """One socket: the parser's callbacks fill the response being read."""

    def __init__(self, pool: Pool, origin: Origin) -> None:
        self.pool = pool
        self.origin = origin
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpResponseParser(self)
        self.response: Http11Response | None = None
        self.reused = False
        self.idle_since = 0.0
        self.lost = False
        self._paused_reading = False
        self._drained: asyncio.Future[None] | None = None

    # --- asyncio.Protocol --------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # A cast, not an isinstance check: uvloop's transports are not registered with asyncio's ABCs.
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        response = self.response
        if response is None:  # bytes nobody asked for: the connection is not in a state to reuse
            self.close()
            return
        response.received = True
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError as exc:
            response.fail(HttpError(f"the server's answer is not HTTP/1.1: {exc}"))
            self.close()
            return
        if self.response is response and not response.status:
            response.head_size += len(data)
            if response.head_size > MAX_HEAD_BYTES:
                response.fail(HttpError(f"the response head is over {MAX_HEAD_BYTES} bytes"))
                self.close()

    def eof_received(self) -> bool:
        return False  # close our side too: connection_lost follows

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        self.pool.forget(self)
        drained, self._drained = self._drained, None
        if drained is not None and not drained.done():
            drained.set_exception(RemoteClosed("the server closed the connection", before_response=True))
        response = self.response
        if response is None or response.complete:
            return
        if response.status and response.until_close:
            response.finish()  # a body delimited by the connection's end (RFC 9112 §6.3, 8)
            return
        detail = f": {exc}" if exc else ""
        if response.received:
            error: HttpError = RemoteClosed(
                f"the server closed the connection mid-response{detail}", before_response=False
            )
        else:
            error = RemoteClosed(f"the server closed the connection without a response{detail}", before_response=True)
        response.fail(error)

    def pause_writing(self) -> None:
        if self._drained is None:
            self._drained = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        drained, self._drained = self._drained, None
        if drained is not None and not drained.done():
            drained.set_result(None)

    # --- httptools' callbacks ------------------------------------------------------------------------

    def on_message_begin(self) -> None:
        if self.response is None or self.response.complete:
            raise HttpError("the server sent more than the response")  # stops the parser: the connection closes

    def on_status(self, status: bytes) -> None:
        assert self.response is not None
        self.response.reason += status.decode("latin-1")

    def on_header(self, name: bytes, value: bytes) -> None:
        assert self.response is not None
        key = name.decode("latin-1").lower()
        text = value.decode("latin-1")
        if key == "set-cookie":
            self.response.cookies.append(text)
        self.response.headers[key] = text

    def on_headers_complete(self) -> None:
        response = self.response
        assert response is not None
        status = self.parser.get_status_code()
        if 100 <= status < 200:  # an interim response (100 Continue): the real one follows
            response.reason, response.headers, response.cookies = "", {}, []
            return
        headers = response.headers
        response.status = status
        response.until_close = (
            status not in (204, 304)  # never a body (RFC 9112 §6.3, 1)
            and "content-length" not in headers
            and "chunked" not in headers.get("transfer-encoding", "").lower()
        )
        response.keep_alive = self.parser.should_keep_alive() and not response.until_close
        if response.cookies:
            self.pool.remember_cookies(self.origin[1], response)
        if response._waiter is not None:
            response.wake()
        if response.watcher is not None:
            response.tell("head")

    def on_body(self, body: bytes) -> None:
        response = self.response
        assert response is not None
        if body:
            response._chunks.append(body)
            response._buffered += len(body)
            if response._buffered > HIGH_WATER:
                self.pause_reading()
                response.tell("full")
            if response._waiter is not None:
                response.wake()

    def on_message_complete(self) -> None:
        response = self.response
        if response is not None and response.status:
            response.finish()

    # --- used by the pool and the response ---------------------------------------------------------

    def start(self, data: bytes, read_timeout: float | None) -> Http11Response:
        assert self.transport is not None
        response = self.response = Http11Response(self, read_timeout)
        self.transport.write(data)
        return response

    @property
    def writing(self) -> bool:
        """Whether what was written goes out without waiting (the socket's buffer is not full)."""
        return self._drained is None

    async def drain(self, timeout: float) -> None:
        drained = self._drained
        if drained is None:
            return
        try:
            async with asyncio.timeout(timeout):
                await drained
        except TimeoutError:
            raise HttpTimeout(f"the request could not be sent within {timeout:g} s") from None

    def pause_reading(self) -> None:
        if not self._paused_reading and self.transport is not None:
            self._paused_reading = True
            self.transport.pause_reading()

    def resume_reading(self) -> None:
        if self._paused_reading and self.transport is not None:
            self._paused_reading = False
            self.transport.resume_reading()

    def done(self, response: Http11Response) -> None:
        """The reader is done with ``response``: keep the connection if it can serve another."""
        if self.response is not response:
            return
        self.response = None
        if response.complete and response.keep_alive and not response.failed and not self.lost:
            self.pool.release(self)
        else:
            self.close()

    def close(self) -> None:
        if not self.lost:
            self.lost = True
            self.pool.forget(self)
            if self.transport is not None:
                self.transport.close()
