"""Server-to-client streams a legacy client opens with GET: its session's standalone stream, or a
dropped stream resumed from an event store (``Last-Event-ID``, 2025-11-25 transports, "Resumability").
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import TYPE_CHECKING

from ..._events import EventStore
from .sessions import HttpSession
from .sse import EventStream, Outbox, frame

if TYPE_CHECKING:
    from starlette.types import Receive, Scope, Send


async def standalone_stream(
    session: HttpSession, scope: Scope, receive: Receive, send: Send, ping: float, write_timeout: float
) -> None:
    """The session's GET stream: unsolicited notifications and requests, until the session ends.

    The caller has claimed it in the store (one GET stream per session in the whole
    deployment); the claim is released when the stream ends. It is written by this task alone.
    """
    stream = EventStream(receive, send, ping, write_timeout=write_timeout)
    outbox = Outbox(stream)
    session.standalone = outbox
    try:
        await stream.open()
        items = outbox.items
        while stream.active:
            if not items:
                await stream.idle()
                continue
            data = items.pop(0)
            if data is None:
                return
            await stream.send(frame(data))
    finally:
        if session.standalone is outbox:
            session.standalone = None
        try:
            await stream.close()
        finally:
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
    store: EventStore,
    last_event_id: str,
    scope: Scope,
    receive: Receive,
    send: Send,
    ping: float,
    write_timeout: float,
) -> None:
    """Replay the events after ``last_event_id``, then follow the stream live until it finishes.

    The store is followed by a task of its own (its waits are the store's), which hands each
    event to this one; the client leaving ends both.
    """
    stream = EventStream(receive, send, ping, write_timeout=write_timeout)
    events: deque[tuple[str, bytes]] = deque()
    ended: list[BaseException | None] = []

    async def follow() -> None:
        try:
            async for event_id, data in store.follow(last_event_id):
                if data:
                    events.append((event_id, data))
                    stream.wake()
        except Exception as exc:  # the store failed: this stream ends with it, in the writer's task
            ended.append(exc)
        else:
            ended.append(None)
        stream.wake()

    await stream.open()
    follower = asyncio.get_running_loop().create_task(follow())
    try:
        while stream.active:
            if events:
                event_id, data = events.popleft()
                await stream.send(frame(data, event_id or None))
            elif ended:
                if ended[0] is not None:
                    raise ended[0]
                return
            else:
                await stream.idle()
    finally:
        follower.cancel()
        await stream.close()
