"""Server-to-client streams a legacy client opens with GET: its session's standalone stream, or a
dropped stream resumed from an event store (``Last-Event-ID``, 2025-11-25 transports, "Resumability").
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from sse_starlette import EventSourceResponse, ServerSentEvent

from ..._events import EventStore
from .sessions import HttpSession
from .streams import SSE_HEADERS

if TYPE_CHECKING:
    from starlette.types import Receive, Scope, Send


async def standalone_stream(session: HttpSession, scope: Scope, receive: Receive, send: Send, ping: float) -> None:
    """The session's GET stream: unsolicited notifications and requests, until the session ends.

    The caller has claimed it in the store (one GET stream per session in the whole
    deployment); the claim is released when the stream ends.
    """
    queue: asyncio.Queue[bytes | None] = asyncio.Queue()
    session.standalone = queue

    async def events() -> AsyncIterator[ServerSentEvent]:
        try:
            while True:
                data = await queue.get()
                if data is None:
                    return
                yield ServerSentEvent(data=data.decode(), event="message")
        finally:
            if session.standalone is queue:
                session.standalone = None

    response = EventSourceResponse(events(), headers=SSE_HEADERS, ping=ping)
    try:
        await response(scope, receive, send)
    finally:
        if session.standalone is queue:
            session.standalone = None
        await session.table.release_stream(session)


async def can_resume(store: EventStore | None, session: HttpSession, last_event_id: str | None) -> bool:
    """Whether ``last_event_id`` names a stored stream of this session.

    Only the session's own streams replay; an unknown or foreign id is not an error (replay is
    optional, and a 404 would tell the client its session is gone): it gets a plain GET stream.
    """
    if last_event_id is None or store is None:
        return False
    return await store.owner(last_event_id) == session.id


async def resume_stream(
    store: EventStore, last_event_id: str, scope: Scope, receive: Receive, send: Send, ping: float
) -> None:
    """Replay the events after ``last_event_id``, then follow the stream live until it finishes."""

    async def events() -> AsyncIterator[ServerSentEvent]:
        async for event_id, data in store.follow(last_event_id):
            if data:
                yield ServerSentEvent(data=data.decode(), id=event_id or None, event="message")

    response = EventSourceResponse(events(), headers=SSE_HEADERS, ping=ping)
    await response(scope, receive, send)
