"""toolkit's own Server-Sent Events response: one coroutine writes a stream, from its headers to its end.

An open stream is what a deployment holds by the thousand (a legacy session's ``GET`` stream, a
2026-07-28 ``subscriptions/listen``), so it costs one watcher task besides the coroutine that
writes it: pings come from a timer handle (sent by the writer when it next waits, never
concurrently with an event), and the client leaving is noticed by the watcher, the one task
that awaits ``receive`` (uvicorn's ``send`` says nothing once the client is gone).

The wire form is the event-stream format (WHATWG HTML, "Server-sent events"): ``id``, ``event``,
``data`` and ``retry`` fields, each line ended by CRLF, an empty line ending the event; a ping
is a comment line.

A client that stops reading (its socket buffers and the server's full) must not hold up anyone
else: a sender writes to a stream directly only when the write finishes at once, and otherwise
hands what is left of it to the stream's writer (``send_now``); the writer gives a write
``write_timeout`` seconds, after which the stream is given up (the client accepted nothing for
that long) and what was queued for it is dropped with it.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Awaitable, Generator
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from starlette.types import Receive, Send

logger = logging.getLogger("toolkit")

HEADERS: Final = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"connection", b"keep-alive"),
    (b"x-accel-buffering", b"no"),  # nginx: pass each event on at once
]
PING: Final = b": ping\r\n\r\n"
WRITE_TIMEOUT: Final = 30.0
"""Seconds a write to a stream may wait for its client to read before the stream is given up."""
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
    nothing is left, awaits ``idle``. A sender may instead write an event itself while the
    writer waits with nothing queued (``send_now``). ``gone`` is set once the client
    disconnected, or stopped reading for ``write_timeout`` seconds: the writer stops, and its
    ``finally`` decides what becomes of what was not sent.
    """

    __slots__ = (
        "_handed",
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
        "write_timeout",
    )

    def __init__(
        self,
        receive: Receive,
        send: Send,
        ping: float,
        *,
        grace: float | None = None,
        write_timeout: float = WRITE_TIMEOUT,
    ) -> None:
        self._receive = receive
        self._send = send
        self.ping = ping
        """Seconds between two keep-alive comments (0: none)."""
        self.grace = grace
        """At server shutdown, seconds the stream may still run to end by itself (``None``: it ends at once)."""
        self.write_timeout = write_timeout
        """Seconds a write may wait for the client to read before the stream is given up."""
        self.gone = False
        """Set once the client disconnected or stopped reading."""
        self.stopping = False
        """Set once the server ends the stream (``stop``): the writer stops; the response is ended."""
        self._ping_due = False
        self._timer: asyncio.TimerHandle | None = None
        self._watcher: asyncio.Task[None] | None = None
        self._waiter: asyncio.Future[None] | None = None
        self._writing = False
        """Set while a write is under way."""
        self._handed: _Rest | None = None
        """A sender's write that could not finish at once, for the writer to finish (``send_now``)."""

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
        """The writer's write of one framed event (``frame``); nothing once the client is gone."""
        if self._handed is not None:
            await self._settle()
        if self.gone:
            return
        self._writing = True
        try:
            rest = _begin(self._send({"type": "http.response.body", "body": data, "more_body": True}))
            if rest is not None:
                await self._finish(rest)
        except OSError:  # an ASGI server of spec 2.4 says so when the client left
            self._left()
        finally:
            self._writing = False

    def send_now(self, data: bytes) -> bool:
        """A sender's write of one framed event, without waiting: done (or handed to the writer, who
        finishes it before anything else) when the writer waits with nothing to do; ``False`` when
        not, and the event must be queued for the writer. A fan-out's cost is then per subscriber,
        and a client that stopped reading holds up its own stream only."""
        waiter = self._waiter
        if waiter is None or waiter.done() or self._writing:
            return False
        self._writing = True
        try:
            rest = _begin(self._send({"type": "http.response.body", "body": data, "more_body": True}))
        except OSError:
            self._writing = False
            self._left()
            return True
        except BaseException:
            self._writing = False  # the sender hears of it; the stream stays writable
            raise
        if rest is None:
            self._writing = False
        else:
            self._handed = rest  # the client is not reading right now: the writer waits for it, not the sender
            waiter.set_result(None)
        return True

    async def _settle(self) -> None:
        rest, self._handed = self._handed, None
        assert rest is not None
        try:
            await self._finish(rest)
        except OSError:
            self._left()
        finally:
            self._writing = False

    async def _finish(self, rest: _Rest) -> None:
        try:
            async with asyncio.timeout(self.write_timeout):
                await rest
        except TimeoutError:
            logger.warning(
                "an SSE stream's client accepted nothing for %g s: the stream is given up (sse_write_timeout)",
                self.write_timeout,
            )
            self._left()

    def wake(self) -> None:
        """Something is there to send: the writer's ``idle`` returns."""
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def idle(self) -> None:
        """Send a ping if one is due, then wait until ``wake``, the next ping, or the client leaving."""
        if self._handed is not None:
            await self._settle()
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
        if self._handed is not None:
            await self._settle()

    async def close(self) -> None:
        """End the response (when the client is still there) and stop the watcher and the pings."""
        _exits.discard(self)
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._watcher is not None:
            self._watcher.cancel()
            self._watcher = None
        if self._handed is not None and not self.gone:
            await self._settle()
        if self._handed is not None:  # the client is gone: nobody reads it any more
            self._handed.close()
            self._handed = None
        if not self.gone:
            try:
                rest = _begin(self._send({"type": "http.response.body", "body": b"", "more_body": False}))
                if rest is not None:
                    await self._finish(rest)
            except OSError:
                pass  # the client left as the stream ended
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


def _begin(write: Awaitable[None]) -> _Rest | None:
    """Run ``write`` now, up to its first wait: ``None`` when it finished without one (an ASGI
    ``send`` whose client keeps up), else what is left of it to await (in any task: an ASGI send
    enters nothing bound to the task that started it before it first waits)."""
    steps = write.__await__()
    try:
        waiting_on = steps.send(None)
    except StopIteration:
        return None
    return _Rest(steps, waiting_on)


class _Rest:
    """An awaitable stepped once by ``_begin``; awaiting this runs it to its end (what it first
    waited on is passed on to the awaiting task, and each wake-up, value or exception, back)."""

    __slots__ = ("steps", "waiting_on")

    def __init__(self, steps: Generator[Any, Any, None], waiting_on: Any) -> None:
        self.steps = steps
        self.waiting_on = waiting_on

    def __await__(self) -> Generator[Any, Any, None]:
        steps, waiting_on = self.steps, self.waiting_on
        while True:
            try:
                sent = yield waiting_on
            except GeneratorExit:
                steps.close()
                raise
            except BaseException as exc:  # a cancellation, passed on to the write
                try:
                    waiting_on = steps.throw(exc)
                except StopIteration:
                    return
            else:
                try:
                    waiting_on = steps.send(sent)
                except StopIteration:
                    return

    def close(self) -> None:
        self.steps.close()


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
        """Hand over one message, never waiting: written from here when the stream's writer waits
        with nothing queued (a fan-out's cost is per subscriber), else queued for the writer, in order."""
        if self.items or not self.stream.send_now(frame(data)):
            self.put_nowait(data)

    def __repr__(self) -> str:
        return f"<Outbox: {len(self.items)} waiting>"
