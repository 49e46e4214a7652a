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
import enum
import logging
import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from sse_starlette import EventSourceResponse, ServerSentEvent

from ..._errors import INVALID_REQUEST, ClientRequestError, StoreUnavailable
from ..._events import EventStore
from ..._jsonrpc import Reply, Request, encode
from ..._session import Connection
from ..._types import RequestId
from ..base import Lifecycle
from .asgi import RequestInfo, respond, respond_error, wait_disconnect
from .sessions import HttpSession

if TYPE_CHECKING:
    from starlette.types import Receive, Scope, Send

    from ..._auth.tokens import AccessToken

logger = logging.getLogger("toolkit")

SSE_HEADERS: Final = {"Cache-Control": "no-cache, no-transform", "X-Accel-Buffering": "no"}
RESUMABLE_AFTER: Final = 0.1
"""Seconds a legacy request may take to answer with plain JSON before its answer becomes a resumable stream."""
WATCH_AFTER: Final = 0.05
"""Seconds a request runs before toolkit starts watching for its client to disconnect."""


@dataclass(frozen=True, slots=True)
class Event:
    """A message the request sent before its response."""

    data: bytes


@dataclass(frozen=True, slots=True)
class Done:
    """The request ended: its response, or ``None`` when the client cancelled it (no response, per spec)."""

    reply: Reply | None


Item = Event | Done


class Waiting(enum.Enum):
    WAITING = "waiting"


WAITING: Final = Waiting.WAITING
"""The request has produced nothing yet (``Responder._first`` with ``patience``)."""


class RequestStream:
    """The queue between one running request and the HTTP response that carries what it sends."""

    def __init__(self, *, streaming: bool, session: HttpSession | None) -> None:
        self.queue: asyncio.Queue[Item] = asyncio.Queue()
        self.arrived: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.streaming = streaming
        self.session = session
        self.unheard = False
        """Set once a legacy client left with no way to resume: what the request sends is dropped."""
        self.close_requested = asyncio.Event()

    def put(self, item: Item) -> None:
        if self.unheard:
            return
        self.queue.put_nowait(item)
        if not self.arrived.done():
            self.arrived.set_result(None)

    async def deliver(self, message: dict[str, Any]) -> None:
        """The request's ``send``: onto this stream, or (JSON-only mode) to the session's GET stream."""
        if self.unheard and self.streaming and "id" in message:  # a question nobody can answer: fail it now
            raise ClientRequestError("the client disconnected from this request's stream")
        if self.streaming:
            self.put(Event(encode(message)))
        elif self.session is not None:
            await self.session.send_unsolicited(message)

    async def finish(self, reply: Reply | None) -> None:
        self.put(Done(reply))

    async def close(self) -> None:
        """``ctx.close_stream()``: end the SSE connection now; the request goes on."""
        self.close_requested.set()

    async def next_or_close(self) -> Item | None:
        """The next item, or ``None`` once the handler asked to close the connection."""
        if not self.queue.empty():
            return self.queue.get_nowait()
        getting = asyncio.ensure_future(self.queue.get())
        closing = asyncio.ensure_future(self.close_requested.wait())
        try:
            done, _ = await asyncio.wait({getting, closing}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            # Also when the stream itself is cancelled (client gone): a pending get left behind
            # would swallow the next message before anyone else reads the queue.
            closing.cancel()
            if not getting.done():
                getting.cancel()
        return getting.result() if getting in done else None


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
    ) -> None:
        self.lifecycle = lifecycle
        self.json_response = json_response
        self.event_store = event_store
        self.retry_ms = retry_ms
        self.sse_ping_seconds = sse_ping_seconds
        self.stateless_inflight = 0

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
        """Run ``request`` and answer it on this HTTP exchange."""
        connection = connection if connection is not None else (session.connection if session is not None else None)
        if not await self._admit(request, session, connection, send, sse):
            return
        # A listen request is a stream by nature, even in JSON-response mode.
        streaming = request.method == "subscriptions/listen" or (sse and not self.json_response)
        stream = RequestStream(streaming=streaming, session=session)
        stream_id = secrets.token_hex(8) if resumable and streaming and session is not None else None
        info = RequestInfo(scope, stream.close)
        task = self.lifecycle.start(
            request,
            connection,
            stream.deliver,
            stream.finish,
            request_info=info,
            modern=modern,
            access_token=access_token,
        )
        if session is None:
            self.stateless_inflight += 1
            task.add_done_callback(self._stateless_done)
        if stream_id is not None:
            await self._resumable(request, scope, receive, send, stream, task, stream_id)
            return
        first = await self._first(stream, receive, task, cancel=modern is True)
        if first is None or first is WAITING:
            stream.unheard = True
            return  # the client went away: the request was cancelled (modern) or runs on unheard
        if isinstance(first, Done):
            if first.reply is None:  # cancelled by notifications/cancelled: nothing to answer
                await respond(send, 204)
            else:
                await respond(send, first.reply.status, first.reply.body)
            return
        await self._sse(scope, receive, send, stream, task, None, first=first, modern=modern is True)
        if not task.done() and modern is not True:
            stream.unheard = True

    async def _resumable(
        self,
        request: Request,
        scope: Scope,
        receive: Receive,
        send: Send,
        stream: RequestStream,
        task: asyncio.Task[Any],
        stream_id: str,
    ) -> None:
        """Answer with plain JSON if the request ends quickly; else with a stream a client can resume.

        A request that sends something first, or runs longer than ``RESUMABLE_AFTER``, gets an
        SSE stream whose every event is stored (a priming event first, to resume from).
        """
        first = await self._first(stream, receive, task, cancel=False, patience=RESUMABLE_AFTER)
        if first is None:
            stream.unheard = True  # the client went away before a stream it could resume existed
            return
        if isinstance(first, Done):
            if first.reply is None:
                await respond(send, 204)
            else:
                await respond(send, first.reply.status, first.reply.body)
            return
        opening = first if isinstance(first, Event) else None
        await self._sse(scope, receive, send, stream, task, (stream_id, request.id), first=opening, modern=False)

    async def _admit(
        self, request: Request, session: HttpSession | None, connection: Connection | None, send: Send, sse: bool
    ) -> bool:
        """Whether the request may start; if not, its refusal has been sent."""
        inflight = len(connection.inflight) if session is not None and connection is not None else None
        busy = self.lifecycle.busy(request.id, self.stateless_inflight if inflight is None else inflight)
        if busy is not None:
            await respond(send, 503, encode(busy), [("retry-after", "1")])
            return False
        if request.method == "subscriptions/listen" and not sse:
            message = "Not Acceptable: subscriptions/listen answers with an SSE stream"
            await respond_error(send, 406, INVALID_REQUEST, message, request.id)
            return False
        return True

    def _stateless_done(self, task: asyncio.Task[Any]) -> None:
        self.stateless_inflight -= 1

    async def _first(
        self,
        stream: RequestStream,
        receive: Receive,
        task: asyncio.Task[Any],
        *,
        cancel: bool,
        patience: float | None = None,
    ) -> Item | Waiting | None:
        """The first thing the request produces, or None if the client disconnected first.

        With ``patience``, ``WAITING`` once that many seconds passed with nothing produced.

        On a disconnect the request is cancelled when ``cancel`` (2026-07-28: a disconnect
        MUST be treated as cancellation); otherwise it runs to its end unheard (2025-11-25:
        disconnection SHOULD NOT be taken as cancellation). Watching for a disconnect costs a
        task per request; most requests finish within milliseconds, so the watch starts only
        once a request has taken ``WATCH_AFTER``.
        """
        if stream.queue.empty():
            loop = asyncio.get_running_loop()
            watchers: list[asyncio.Task[None]] = []
            timer = loop.call_later(
                WATCH_AFTER, lambda: watchers.append(loop.create_task(_settle_on_disconnect(receive, stream.arrived)))
            )
            try:
                if patience is None:
                    await stream.arrived
                else:
                    done, _ = await asyncio.wait((stream.arrived,), timeout=patience)
                    if not done:
                        return WAITING
            finally:
                timer.cancel()
                for watcher in watchers:
                    watcher.cancel()
            if stream.queue.empty():  # the client went away first
                if cancel:
                    task.cancel()
                return None
        return stream.queue.get_nowait()

    async def _sse(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        stream: RequestStream,
        task: asyncio.Task[Any],
        resumable: tuple[str, RequestId] | None,
        *,
        first: Item | None,
        modern: bool,
    ) -> None:
        events = self._events(stream, task, resumable, first, modern)
        # At shutdown sse-starlette would end the stream at once; a request's stream ends by
        # itself with its response, so it gets the grace period to get there.
        grace = self.lifecycle.shutdown_grace
        response = EventSourceResponse(
            events, headers=SSE_HEADERS, ping=self.sse_ping_seconds, shutdown_grace_period=grace
        )
        await response(scope, receive, send)

    async def _events(
        self,
        stream: RequestStream,
        task: asyncio.Task[Any],
        resumable: tuple[str, RequestId] | None,
        first: Item | None,
        modern: bool,
    ) -> AsyncIterator[ServerSentEvent]:
        store = self.event_store if resumable is not None else None
        stream_id = resumable[0] if resumable is not None else None
        finished = False
        try:
            if store is not None and resumable is not None:
                assert stream.session is not None
                priming = await store.open(resumable[0], session_id=stream.session.id, request_id=resumable[1])
                yield ServerSentEvent(data="", id=priming, retry=self.retry_ms)
            item = first
            while True:
                if item is None:
                    item = await stream.next_or_close()
                    if item is None:
                        return  # the handler asked the client to reconnect; the request goes on
                data = item.data if isinstance(item, Event) else item.reply.body if item.reply is not None else None
                event_id = None
                if isinstance(item, Done):
                    finished = True
                    if store is not None and stream_id is not None:
                        event_id = await store.finish(stream_id, data)
                    if data is not None:
                        yield ServerSentEvent(data=data.decode(), id=event_id, event="message")
                    return
                if store is not None and stream_id is not None:
                    event_id = await store.append(stream_id, item.data)
                yield ServerSentEvent(data=item.data.decode(), id=event_id, event="message")
                item = None
        finally:
            if not finished:
                if store is not None and stream_id is not None:
                    self._keep_storing(stream, store, stream_id)
                elif modern:
                    task.cancel()  # 2026-07-28: a disconnect is the request's cancellation
                # else (2025-11-25): a disconnect SHOULD NOT cancel; the request runs on and
                # what it still sends has no reader (the queue is dropped with the stream)

    def _keep_storing(self, stream: RequestStream, store: EventStore, stream_id: str) -> None:
        """After a resumable stream's connection ended, keep the request's messages for a GET to replay."""

        async def drain() -> None:
            try:
                while True:
                    item = await stream.queue.get()
                    if isinstance(item, Event):
                        await store.append(stream_id, item.data)
                        continue
                    await store.finish(stream_id, item.reply.body if item.reply is not None else None)
                    return
            except StoreUnavailable as exc:
                logger.warning("%s: the rest of stream %s is lost", exc.message, stream_id)

        self.lifecycle.track(asyncio.create_task(drain()))


async def _settle_on_disconnect(receive: Receive, arrived: asyncio.Future[None]) -> None:
    await wait_disconnect(receive)
    if not arrived.done():
        arrived.set_result(None)
