"""Answering one request over HTTP: plain JSON, or an SSE stream when messages come first.

A request is answered with plain JSON unless something has to be sent before the response
(progress, log messages, a legacy server-to-client request): then the answer becomes an SSE
stream carrying those messages and the response last. With an event store, a legacy stream
is resumable: every event is stored, and a client that lost the connection resumes with
``Last-Event-ID``.

What a running request produces reaches the stream through a queue of typed items: ``Event``
(a message sent before the response) and ``Done`` (the response, or ``None`` when the client
cancelled the request and no response is owed).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from ..._errors import INVALID_REQUEST, ClientRequestError, StoreUnavailable
from ..._events import EventStore
from ..._jsonrpc import Reply, Request, busy_reply, encode
from ..._session import Cancellable, Connection
from ..._types import RequestId
from ..base import Here, Lifecycle
from .asgi import RequestInfo, respond, respond_error, wait_disconnect
from .sessions import HttpSession, made_json
from .sse import EventStream, frame

if TYPE_CHECKING:
    from starlette.types import Receive, Scope, Send

    from ..._auth.tokens import AccessToken

logger = logging.getLogger("toolkit")

RESUMABLE_AFTER: Final = 0.1
"""Seconds a legacy request may take to answer with plain JSON before its answer becomes a resumable stream."""
WATCH_AFTER: Final = 0.05
"""Seconds a request runs before toolkit starts watching for its client to disconnect."""
MAX_QUEUED: Final = 256
"""Events a request may have waiting for a client that reads slower than it sends: then its ``send`` waits."""


@dataclass(frozen=True, slots=True)
class Event:
    """A message the request sent before its response."""

    data: bytes


@dataclass(frozen=True, slots=True)
class Done:
    """The request ended: its response, or ``None`` when the client cancelled it (no response, per spec)."""

    reply: Reply | None


Item = Event | Done


class RequestStream:
    """What one running request sends, on its way to the HTTP response that carries it.

    Until a stream carries them (``carried``), the request's end is kept aside (``ended``) for a
    plain JSON answer; the items wait in a list for the stream's writer, who is woken (``wake``).
    """

    __slots__ = (
        "_items",
        "_room",
        "_waiter",
        "carried",
        "close_requested",
        "direct",
        "ended",
        "on_event",
        "session",
        "streaming",
        "unheard",
        "wake",
    )

    def __init__(self, *, streaming: bool, session: HttpSession | None) -> None:
        self._items: list[Item] | None = None
        self.streaming = streaming
        self.session = session
        self.close_requested = False
        """Set by ``ctx.close_stream()``: the connection ends once what is queued has been sent."""
        self.unheard = False
        """Set once a legacy client left with no way to resume: what the request sends is dropped."""
        self.carried = False
        """Set once an SSE stream carries what the request sends: its end goes on the queue too."""
        self.ended: Done | None = None
        self.on_event: Callable[[], None] | None = None
        """Called once, when the first message sent before the response arrives (it opens the stream)."""
        self.direct: EventStream | None = None
        """The SSE stream carrying these items, while a sender may write to it itself (no event store)."""
        self.wake: Callable[[], None] | None = None
        """The writer's wake-up: called when an item arrives or the close is asked for."""
        self._room: asyncio.Event | None = None
        """Set when a stream that was full has room again (a send waits for it)."""
        self._waiter: asyncio.Future[None] | None = None
        """What ``next_item`` awaits while nothing is queued."""

    @property
    def pending(self) -> int:
        return len(self._items) if self._items is not None else 0

    def put(self, item: Item) -> None:
        if self.unheard:
            return
        if isinstance(item, Done) and not self.carried:
            self.ended = item
            return
        if self._items is None:
            self._items = []  # a list: a deque's first block is 600 bytes, and a stream rarely holds more than one item
        self._items.append(item)
        self._wake()
        if self.on_event is not None:
            on_event, self.on_event = self.on_event, None
            on_event()

    async def deliver(self, message: dict[str, Any]) -> None:
        """The request's ``send``: onto this stream, or (JSON-only mode) to the session's GET stream."""
        if self.unheard and self.streaming and "id" in message:  # a question nobody can answer: fail it now
            raise ClientRequestError("the client disconnected from this request's stream")
        if self.streaming:
            # A fan-out's notification comes with its JSON made (``_notifications.Encoded``'s ``wire``),
            # and is never held back: a client that stopped reading must not stall the others (its
            # stream is given up after ``sse_write_timeout``, and what was queued with it).
            made = made_json(message)
            if made is not None:
                data = made
            else:
                while self.pending >= MAX_QUEUED and not self.unheard:
                    self._room = self._room or asyncio.Event()
                    await self._room.wait()  # the client reads slower than the request sends: hold it back
                data = encode(message)
            direct = self.direct
            if direct is not None and not self._items and not self.unheard and direct.send_now(frame(data)):
                return  # the writer had nothing queued: written from here, at once (or handed to it)
            self.put(Event(data))
        elif self.session is not None:
            await self.session.send_unsolicited(message)

    async def finish(self, reply: Reply | None) -> None:
        self.put(Done(reply))

    async def close(self) -> None:
        """``ctx.close_stream()``: end the SSE connection now; the request goes on."""
        self.close_requested = True
        self._wake()

    def _wake(self) -> None:
        if self.wake is not None:
            self.wake()
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def no_reader(self) -> None:
        """The client left and nothing will read this stream: what is sent from now on is dropped."""
        self.unheard = True
        if self._room is not None:
            self._room.set()
            self._room = None

    def take(self) -> Item | None:
        """The next item, if one is queued; a send held back for room may go on once half of it is free."""
        items = self._items
        if not items:
            return None
        item = items.pop(0)
        if self._room is not None and len(items) < MAX_QUEUED // 2:
            self._room.set()
            self._room = None
        return item

    async def next_item(self) -> Item:
        """The next item, waiting for it (after the connection ended: what is kept for a resumption)."""
        while (item := self.take()) is None:
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        return item


class Responder:
    """Runs requests through the lifecycle and answers each with JSON or SSE."""

    def __init__(
        self,
        lifecycle: Lifecycle,
        *,
        json_response: bool,
        event_store: EventStore | None,
        retry_ms: int,
        sse_ping_seconds: float,
        sse_write_timeout: float,
        max_listeners: int = 10_000,
    ) -> None:
        self.lifecycle = lifecycle
        self.json_response = json_response
        self.event_store = event_store
        self.retry_ms = retry_ms
        self.sse_ping_seconds = sse_ping_seconds
        self.sse_write_timeout = sse_write_timeout
        self.stateless_inflight = 0
        self.max_listeners = max_listeners
        """2026-07-28 ``subscriptions/listen`` streams open at once on the endpoint (``max_sessions``: a
        listener is the modern era's held-open stream, as a legacy session's GET stream is)."""
        self.listening = 0
        self.in_sessions = 0
        """Requests of legacy sessions being answered (each session's connection counts its own)."""
        self.slow = _SlowWatch()

    async def answer(
        self,
        request: Request,
        session: HttpSession | None,
        scope: Scope,
        receive: Receive,
        send: Send,
        sse: bool,
        *,
        resumable: bool,
        connection: Connection | None = None,
        modern: bool | None = None,
        access_token: AccessToken | None = None,
    ) -> None:
        """Run ``request`` and answer it on this HTTP exchange.

        The request runs in this task, the one serving the exchange: no task of its own and no
        hand-over, so a request that answers at once costs no more than its own work. Its answer
        is plain JSON, unless it sends something first or (a resumable legacy stream) runs longer
        than ``RESUMABLE_AFTER``: then a task of the exchange's opens the SSE stream and carries
        what the request sends, the response last, while the request runs on here.
        """
        connection = connection if connection is not None else (session.connection if session is not None else None)
        if not await self._admit(request, session, connection, send, sse):
            return
        # A listen request is a stream by nature, even in JSON-response mode.
        streaming = request.method == "subscriptions/listen" or (sse and not self.json_response)
        stream = RequestStream(streaming=streaming, session=session)
        # A resumable stream's id is drawn only if the answer becomes a stream (``_Exchange._carry``).
        resume = request.id if resumable and streaming and session is not None else None
        task = asyncio.current_task()
        assert task is not None
        here = Here(task)
        exchange = _Exchange(self, scope, receive, send, stream, here, resume, modern=modern is True)
        counter = self._counter(request, session)
        setattr(self, counter, getattr(self, counter) + 1)
        try:
            await self.lifecycle.run_here(
                request,
                connection,
                stream.deliver,
                stream.finish,
                here,
                request_info=RequestInfo(scope, stream.close),
                modern=modern,
                access_token=access_token,
            )
        except asyncio.CancelledError:
            # Cancelled as a request (the client's notifications/cancelled or disconnect, its
            # session's end, the shutdown): the answer owed, if any, is in the stream. Any other
            # cancellation is the exchange's own, and goes on up.
            if not (here.cancelled or self.lifecycle.stopping):
                exchange.abandon()
                raise
            task.uncancel()
        finally:
            setattr(self, counter, getattr(self, counter) - 1)
        await exchange.respond()

    @staticmethod
    def _counter(request: Request, session: HttpSession | None) -> str:
        """What a request counts as: a listen is a stream held open, like a legacy GET stream, bounded by
        ``max_listeners``, not a request in flight (or a hundred listeners would leave room for no call);
        a legacy session's requests are counted by its connection."""
        if session is not None:
            return "in_sessions"
        return "listening" if request.method == "subscriptions/listen" else "stateless_inflight"

    async def _admit(
        self, request: Request, session: HttpSession | None, connection: Connection | None, send: Send, sse: bool
    ) -> bool:
        """Whether the request may start; if not, its refusal has been sent."""
        inflight = len(connection.inflight) if session is not None and connection is not None else None
        if inflight is None and request.method == "subscriptions/listen":
            full = self.listening >= self.max_listeners
            busy = busy_reply(request.id, self.max_listeners) if full else None
        else:
            busy = self.lifecycle.busy(request.id, self.stateless_inflight if inflight is None else inflight)
        if busy is not None:
            await respond(send, 503, encode(busy), [("retry-after", "1")])
            return False
        if request.method == "subscriptions/listen" and not sse:
            message = "Not Acceptable: subscriptions/listen answers with an SSE stream"
            await respond_error(send, 406, INVALID_REQUEST, message, request.id)
            return False
        return True

    async def _sse(
        self,
        receive: Receive,
        send: Send,
        stream: RequestStream,
        request: Cancellable,
        resumable: tuple[str, RequestId] | None,
        *,
        modern: bool,
    ) -> None:
        """Carry what the request sends as an SSE stream, its response last; written by this task alone."""
        # At a plain uvicorn's shutdown the stream gets the grace period to end by itself, with its response.
        sse = EventStream(
            receive,
            send,
            self.sse_ping_seconds,
            grace=self.lifecycle.shutdown_grace,
            write_timeout=self.sse_write_timeout,
        )
        store = self.event_store if resumable is not None else None
        stream_id = resumable[0] if resumable is not None else None
        finished = False
        stream.wake = sse.wake
        stream.direct = sse if store is None else None  # a stored event needs its id first: the writer's
        try:
            await sse.open()
            if store is not None and resumable is not None:
                assert stream.session is not None
                priming = await store.open(resumable[0], session_id=stream.session.id, request_id=resumable[1])
                await sse.send(frame(b"", priming, retry=self.retry_ms, message=False))
            while sse.active:
                item = stream.take()
                if item is None:
                    if stream.close_requested:
                        return  # the handler asked the client to reconnect; the request goes on
                    await sse.idle()
                    continue
                event_id = None
                if isinstance(item, Done):
                    finished = True
                    data = item.reply.body if item.reply is not None else None
                    if store is not None and stream_id is not None:
                        event_id = await store.finish(stream_id, data)
                    if data is not None:
                        await sse.send(frame(data, event_id))
                    return
                if store is not None and stream_id is not None:
                    event_id = await store.append(stream_id, item.data)
                await sse.send(frame(item.data, event_id))
        finally:
            stream.wake = None
            stream.direct = None
            await sse.close()
            if not finished:
                if store is not None and stream_id is not None:
                    self._keep_storing(stream, store, stream_id)
                elif modern:
                    request.cancel()  # 2026-07-28: a disconnect is the request's cancellation
                # else (2025-11-25): a disconnect SHOULD NOT cancel; the request runs on and
                # what it still sends has no reader (the queue is dropped with the stream)

    def _keep_storing(self, stream: RequestStream, store: EventStore, stream_id: str) -> None:
        """After a resumable stream's connection ended, keep the request's messages for a GET to replay."""

        async def drain() -> None:
            try:
                while True:
                    item = await stream.next_item()
                    if isinstance(item, Event):
                        await store.append(stream_id, item.data)
                        continue
                    await store.finish(stream_id, item.reply.body if item.reply is not None else None)
                    return
            except StoreUnavailable as exc:
                logger.warning("%s: the rest of stream %s is lost", exc.message, stream_id)

        self.lifecycle.track(asyncio.create_task(drain()))


class _Exchange:
    """How one HTTP exchange answers the request running in it: the timers, the disconnect
    watch, and the SSE stream once one is needed (``Responder.answer``)."""

    # Slots: a listen holds its exchange as long as it is open, a thousand of them at a time.
    __slots__ = (
        "here",
        "modern",
        "pump",
        "receive",
        "responder",
        "resume",
        "scope",
        "send",
        "stream",
        "timer",
        "watcher",
    )

    def __init__(
        self,
        responder: Responder,
        scope: Scope,
        receive: Receive,
        send: Send,
        stream: RequestStream,
        here: Here,
        resume: RequestId | None,
        *,
        modern: bool,
    ) -> None:
        self.responder = responder
        self.scope = scope
        self.receive = receive
        self.send = send
        self.stream = stream
        self.here = here
        self.resume = resume
        self.modern = modern
        self.pump: asyncio.Task[None] | None = None
        self.watcher: asyncio.Task[None] | None = None
        self.timer: asyncio.TimerHandle | None = None
        stream.on_event = self.open_stream
        responder.slow.add(self)

    def watch(self) -> None:
        """The request has run ``WATCH_AFTER``: watch for its client leaving (and, resumable, open
        its stream at ``RESUMABLE_AFTER``)."""
        if self.pump is not None or self.here.finished:
            return
        loop = asyncio.get_running_loop()
        self.watcher = loop.create_task(self._until_disconnect())
        if self.resume is not None:
            self.timer = loop.call_later(RESUMABLE_AFTER - WATCH_AFTER, self.open_stream)

    async def _until_disconnect(self) -> None:
        """The client went away before anything was sent: nobody hears the request any more
        (2025-11-25: it runs on, as disconnection SHOULD NOT cancel), or it is cancelled
        (2026-07-28: a disconnect MUST be taken as cancellation)."""
        await wait_disconnect(self.receive)
        self.stream.no_reader()
        if self.modern:
            self.here.cancel()

    def open_stream(self) -> None:
        """Answer with an SSE stream, from a task of its own, while the request runs on."""
        if self.pump is not None or self.here.finished or self.stream.unheard:
            return
        self._stop_watching()  # the stream watches the connection itself
        self.stream.carried = True
        self.stream.on_event = None
        self.pump = asyncio.get_running_loop().create_task(self._carry())

    async def _carry(self) -> None:
        resumable = (secrets.token_hex(8), self.resume) if self.resume is not None else None
        await self.responder._sse(self.receive, self.send, self.stream, self.here, resumable, modern=self.modern)
        if self.resume is None and not self.here.finished and not self.modern:
            self.stream.no_reader()  # 2025-11-25: the request runs on; what it sends has no reader

    def _stop_watching(self) -> None:
        self.stream.on_event = None  # and no stream to open: the cycle through it goes with it
        self.responder.slow.discard(self)
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if self.watcher is not None:
            self.watcher.cancel()
            self.watcher = None

    def abandon(self) -> None:
        """The exchange itself was cancelled: stop everything it started."""
        self._stop_watching()
        if self.pump is not None:
            self.pump.cancel()

    async def respond(self) -> None:
        """Send the answer once the request has ended: the stream's end, or plain JSON."""
        self._stop_watching()
        if self.pump is not None:
            await self.pump  # it sends the rest, the response last
            return
        item = self.stream.ended
        if item is None:
            return  # the client went away: nobody to answer
        if item.reply is None:  # cancelled by notifications/cancelled: nothing to answer
            await respond(self.send, 204)
        else:
            reply = item.reply
            await respond(self.send, reply.status, reply.body, reply.headers.items() if reply.headers else ())


class _SlowWatch:
    """Calls ``watch()`` on the exchanges still running ``WATCH_AFTER`` after they started.

    Most requests answer within milliseconds, so a timer each would be work thrown away: one
    timer ticks every ``WATCH_AFTER`` while exchanges run, and an exchange is watched on the
    second tick after it started (between one and two ``WATCH_AFTER`` in).
    """

    def __init__(self) -> None:
        self.new: dict[_Exchange, None] = {}
        self.due: dict[_Exchange, None] = {}
        self.timer: asyncio.TimerHandle | None = None
        self.loop: asyncio.AbstractEventLoop | None = None

    def add(self, exchange: _Exchange) -> None:
        loop = asyncio.get_running_loop()
        if loop is not self.loop:  # first use, or the app now serves on another event loop (a new TestClient)
            self.loop, self.new, self.due, self.timer = loop, {}, {}, None
        self.new[exchange] = None
        if self.timer is None:
            self.timer = loop.call_later(WATCH_AFTER, self._tick)

    def discard(self, exchange: _Exchange) -> None:
        if exchange in self.new:
            del self.new[exchange]
        else:
            self.due.pop(exchange, None)

    def _tick(self) -> None:
        due, self.due, self.new = self.due, self.new, {}
        for exchange in due:
            exchange.watch()
        self.timer = self.loop.call_later(WATCH_AFTER, self._tick) if self.due and self.loop is not None else None
