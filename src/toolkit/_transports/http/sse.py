"""toolkit's own Server-Sent Events response: one coroutine writes a stream, from its headers to its end.

An open stream is what a deployment holds by the thousand (a legacy session's ``GET`` stream, a
2026-07-28 ``subscriptions/listen``), so it costs one watcher task besides the coroutine that
writes it: pings come from a timer handle (sent by the writer when it next waits, never
concurrently with an event), and the client leaving is noticed by the watcher, the one task
that awaits ``receive`` (uvicorn's ``send`` says nothing once the client is gone).

The wire form is the event-stream format (WHATWG HTML, "Server-sent events"): ``id``, ``event``,
``data`` and ``retry`` fields, each line ended by CRLF, an empty line ending the event; a ping
is a comment line.
"""

from __future__ import annotations

import asyncio
import signal
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from starlette.types import Receive, Send

HEADERS: Final = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"connection", b"keep-alive"),
    (b"x-accel-buffering", b"no"),  # nginx: pass each event on at once
]
PING: Final = b": ping\r\n\r\n"
_MESSAGE: Final = b"event: message\r\n"


def frame(data: bytes, event_id: str | None = None, *, retry: int | None = None, message: bool = True) -> bytes:
    """One event: ``data`` (a JSON-RPC message, or empty for a priming event), its id, ``retry`` in ms.

    ``event: message`` is named when ``message`` (what every MCP event is); a data line break
    (never in toolkit's compact JSON) starts a new ``data:`` line, as the format requires.
    """
    if event_id is None and message and retry is None and b"\n" not in data and b"\r" not in data:
        return _MESSAGE + b"data: " + data + b"\r\n\r\n"  # a fan-out's notification: the common case
    parts = [b"id: ", event_id.encode(), b"\r\n"] if event_id is not None else []
    if message:
        parts.append(_MESSAGE)
    if b"\n" in data or b"\r" in data:
        for line in data.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n"):
            parts += (b"data: ", line, b"\r\n")
    else:
        parts += (b"data: ", data, b"\r\n")
    if retry is not None:
        parts += (b"retry: ", str(retry).encode(), b"\r\n")
    parts.append(b"\r\n")
    return b"".join(parts)


class EventStream:
    """One SSE response on an ASGI connection, written by one coroutine: ``open``, ``send`` and
    ``idle`` as often as needed, ``close`` once (always, in a ``finally``).

    What feeds the stream calls ``wake`` when it has something; the writer takes it and, when
    nothing is left, awaits ``idle``. ``gone`` is set once the client disconnected: the writer
    stops, and its ``finally`` decides what becomes of what was not sent.
    """

    __slots__ = (
        "_free",
        "_ping_due",
        "_receive",
        "_send",
        "_timer",
        "_waiter",
        "_watcher",
        "_writing",
        "gone",
        "grace",
        "ping",
        "stopping",
    )

    def __init__(self, receive: Receive, send: Send, ping: float, *, grace: float | None = None) -> None:
        self._receive = receive
        self._send = send
        self.ping = ping
        """Seconds between two keep-alive comments (0: none)."""
        self.grace = grace
        """At server shutdown, seconds the stream may still run to end by itself (``None``: it ends at once)."""
        self.gone = False
        """Set once the client disconnected."""
        self.stopping = False
        """Set once the server ends the stream (``stop``): the writer stops; the response is ended."""
        self._ping_due = False
        self._timer: asyncio.TimerHandle | None = None
        self._watcher: asyncio.Task[None] | None = None
        self._waiter: asyncio.Future[None] | None = None
        self._writing = False
        """Set while a write is under way: from the writer, or straight from a sender (``waiting``)."""
        self._free: asyncio.Future[None] | None = None
        """What a second write awaits while one is under way (made only then)."""

    @property
    def active(self) -> bool:
        """Whether the writer goes on: the client is there and the server has not ended the stream."""
        return not (self.gone or self.stopping)

    async def open(self) -> None:
        """Send the headers; start watching for the client leaving, the pings and the server's shutdown."""
        await self._send({"type": "http.response.start", "status": 200, "headers": HEADERS})
        loop = asyncio.get_running_loop()
        self._watcher = loop.create_task(self._watch())
        if self.ping > 0:
            self._timer = loop.call_later(self.ping, self._ping_now)
        _exits.add(self, loop)

    def stop(self) -> None:
        """End the stream from the server's side: the writer stops and the response is ended."""
        self.stopping = True
        self.wake()

    def server_exiting(self) -> None:
        if self.grace is None:
            self.stop()
        else:
            asyncio.get_running_loop().call_later(self.grace, self.stop)

    async def send(self, data: bytes) -> None:
        """Write one framed event (``frame``), after any write under way; nothing once the client is gone."""
        await self._write({"type": "http.response.body", "body": data, "more_body": True})

    @property
    def waiting(self) -> bool:
        """Whether the writer waits with nothing to do: then a sender may ``send`` its event itself, at
        once, instead of queueing it and waking the writer (a fan-out's cost is per subscriber)."""
        waiter = self._waiter
        return waiter is not None and not waiter.done()

    async def _write(self, message: dict[str, Any]) -> None:
        while self._writing:  # one write at a time: a sender's may be waiting for a slow client
            if self._free is None:
                self._free = asyncio.get_running_loop().create_future()
            await self._free
        if self.gone:
            return
        self._writing = True
        try:
            await self._send(message)
        except OSError:  # an ASGI server of spec 2.4 says so when the client left
            self._left()
        finally:
            self._writing = False
            free, self._free = self._free, None
            if free is not None and not free.done():
                free.set_result(None)

    def wake(self) -> None:
        """Something is there to send: the writer's ``idle`` returns."""
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def idle(self) -> None:
        """Send a ping if one is due, then wait until ``wake``, the next ping, or the client leaving."""
        if self._ping_due and self.active:
            self._ping_due = False
            await self.send(PING)
        if not self.active:
            return
        waiter = self._waiter = asyncio.get_running_loop().create_future()
        try:
            await waiter
        finally:
            self._waiter = None

    async def close(self) -> None:
        """End the response (when the client is still there) and stop the watcher and the pings."""
        _exits.discard(self)
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._watcher is not None:
            self._watcher.cancel()
            self._watcher = None
        if not self.gone:
            await self._write({"type": "http.response.body", "body": b"", "more_body": False})
            self.gone = True

    def _ping_now(self) -> None:
        self._ping_due = True
        self._timer = asyncio.get_running_loop().call_later(self.ping, self._ping_now)
        self.wake()

    async def _watch(self) -> None:
        while (await self._receive())["type"] != "http.disconnect":
            pass  # a request body has been read in full before a stream opens; nothing else comes
        self._left()

    def _left(self) -> None:
        if self.gone:
            return
        self.gone = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self.wake()


class _ExitWatch:
    """Ends the open streams when the uvicorn server serving them starts to shut down.

    uvicorn waits for every open response before it shuts an app down (its lifespan's shutdown
    comes after), and tells a streaming response nothing: under ``toolkit run`` and
    ``server.run()`` the endpoint ends its streams first (``GracefulServer``), but an app served
    by a plain ``uvicorn app:app`` would wait on its streams until a second Ctrl-C. So, while
    streams are open, one task a process looks every ``POLL`` seconds at whether the server that
    installed the SIGTERM handler (uvicorn's ``Server.handle_exit``) is exiting, and then ends
    each stream (``EventStream.server_exiting``: at once, or after its grace).
    """

    POLL: Final = 0.5

    def __init__(self) -> None:
        self.streams: dict[EventStream, None] = {}
        self.task: asyncio.Task[None] | None = None

    def add(self, stream: EventStream, loop: asyncio.AbstractEventLoop) -> None:
        self.streams[stream] = None
        if self.task is None or self.task.done() or self.task.get_loop() is not loop:
            self.task = loop.create_task(self._watch())

    def discard(self, stream: EventStream) -> None:
        self.streams.pop(stream, None)

    async def _watch(self) -> None:
        while self.streams:
            await asyncio.sleep(self.POLL)
            if _server_exiting():
                for stream in list(self.streams):
                    self.discard(stream)
                    stream.server_exiting()
        self.task = None


def _server_exiting() -> bool:
    """Whether the server whose bound method handles SIGTERM (uvicorn's ``Server``) is exiting."""
    handler = signal.getsignal(signal.SIGTERM)
    return getattr(getattr(handler, "__self__", None), "should_exit", False) is True


_exits = _ExitWatch()


class Outbox:
    """A legacy session's ``GET`` stream as its session sees it (``HttpSession.standalone``): a
    message is written at once when the stream's writer waits with nothing queued (``deliver``),
    else it waits in a list for the writer, who is woken; ``None`` ends the stream. Not an
    ``asyncio.Queue``: its getters, putters and join event would be about 2.5 KiB per stream.
    """

    def __init__(self, stream: EventStream) -> None:
        self.items: list[bytes | None] = []  # a deque's first block alone is 600 bytes
        self.stream = stream

    def put_nowait(self, item: bytes | None) -> None:
        self.items.append(item)
        self.stream.wake()

    async def deliver(self, data: bytes) -> None:
        """Hand over one message: written from here at once when the stream's writer waits with
        nothing queued (a fan-out's cost is per subscriber), else queued for the writer, in order."""
        stream = self.stream
        if not self.items and stream.waiting:
            await stream.send(frame(data))
        else:
            self.put_nowait(data)

    def __repr__(self) -> str:
        return f"<Outbox: {len(self.items)} waiting>"
