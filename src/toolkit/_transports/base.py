"""What a transport needs of the engine, and the one request lifecycle stdio and HTTP share."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, Final, Protocol

from .._errors import INTERNAL_ERROR
from .._jsonrpc import Notification, Reply, Request, Response, busy_reply, encode, error_reply
from .._session import Connection, Session
from .._store.base import Store
from .._types import RequestId, Send

if TYPE_CHECKING:
    from .._auth.tokens import AccessToken

logger = logging.getLogger("toolkit")

STOPPING_MESSAGE: Final = "Internal error: the server is shutting down; retry later"

Running = Callable[[], AbstractAsyncContextManager[Any]]
"""Enters the server's lifespan (the ``Server.running`` context) for as long as a transport serves."""

Finish = Callable[[Reply | None], Awaitable[None]]
"""Where a request's end goes: its reply, or ``None`` when the client cancelled it (no response)."""


class EngineFacing(Protocol):
    """The engine as a transport sees it (``toolkit._engine.Engine`` implements it)."""

    async def handle_request(
        self,
        request: Request,
        connection: Connection | None,
        send: Send,
        *,
        request_info: Any = None,
        modern: bool | None = None,
        access_token: AccessToken | None = None,
    ) -> Reply: ...

    def required_scopes(self, method: str, params: dict[str, Any]) -> frozenset[str]: ...

    def named_field(self, method: str) -> str | None:
        """The ``params`` field a modern request's ``Mcp-Name`` mirrors (extensions' methods too)."""
        ...

    def handle_notification(self, notification: Notification, connection: Connection | None) -> None: ...

    def handle_response(self, response: Response, connection: Connection | None) -> bool: ...

    def close_listeners(self) -> None: ...

    def forget(self, session: Session) -> None: ...

    def remember(self, session: Session) -> None: ...

    async def attach_store(self, store: Store) -> None: ...

    def detach_store(self) -> None: ...

    async def stop_tasks(self) -> None: ...

    def handle_broadcast(self, message: dict[str, Any]) -> None: ...


class Here:
    """A request running in the task that answers it (HTTP): what ``connection.inflight`` holds.

    Cancelling it cancels that task, and says so (``cancelled``), so the task can tell the
    request's cancellation, whose answer it still sends, from its own.
    """

    __slots__ = ("cancelled", "finished", "task")

    def __init__(self, task: asyncio.Task[Any]) -> None:
        self.task = task
        self.cancelled = False
        self.finished = False

    def cancel(self) -> None:
        if not self.finished and not self.cancelled:
            self.cancelled = True
            self.task.cancel()


class Lifecycle:
    """Runs each request, from the busy check to the shutdown drain: in a task of its own
    (``start``: stdio), or in the task that answers it (``run_here``: HTTP).

    A request cancelled by the client (``notifications/cancelled``; a modern HTTP disconnect)
    gets no response, as the spec says; one cancelled because the server is stopping is owed
    an answer, and gets a JSON-RPC error saying so (HTTP 503).
    """

    def __init__(self, engine: EngineFacing, *, max_concurrent_requests: int, shutdown_grace: float) -> None:
        self.engine = engine
        self.max_concurrent_requests = max_concurrent_requests
        self.shutdown_grace = shutdown_grace
        self.tasks: set[asyncio.Task[Any]] = set()
        self.stopping = False

    def busy(self, request_id: RequestId, inflight: int) -> dict[str, Any] | None:
        """The error for a request over the concurrency limit, or ``None`` when it may run."""
        limit = self.max_concurrent_requests
        return busy_reply(request_id, limit) if inflight >= limit else None

    def start(
        self,
        request: Request,
        connection: Connection | None,
        send: Send,
        finish: Finish,
        *,
        request_info: Any = None,
        modern: bool | None = None,
        access_token: AccessToken | None = None,
    ) -> asyncio.Task[None]:
        """Run ``request`` in a task of its own; ``connection`` (if any) can cancel it by id."""
        task = asyncio.get_running_loop().create_task(
            self._run(request, connection, send, finish, request_info, modern, access_token)
        )
        self.track(task)
        if connection is not None:
            connection.inflight[request.id] = task
            task.add_done_callback(functools.partial(_forget_inflight, connection, request.id))
        return task

    async def run_here(
        self,
        request: Request,
        connection: Connection | None,
        send: Send,
        finish: Finish,
        here: Here,
        *,
        request_info: Any = None,
        modern: bool | None = None,
        access_token: AccessToken | None = None,
    ) -> None:
        """Run ``request`` in the calling task, ``here.task``; ``connection`` (if any) can cancel it
        by id, and the drain waits for it. A cancellation is re-raised once ``finish`` has its end."""
        self.tasks.add(here.task)
        if connection is not None:
            connection.inflight[request.id] = here
        try:
            await self._run(request, connection, send, finish, request_info, modern, access_token)
        finally:
            here.finished = True
            self.tasks.discard(here.task)
            if connection is not None and connection.inflight.get(request.id) is here:
                del connection.inflight[request.id]

    async def _run(
        self,
        request: Request,
        connection: Connection | None,
        send: Send,
        finish: Finish,
        request_info: Any,
        modern: bool | None,
        access_token: AccessToken | None,
    ) -> None:
        try:
            reply = await self.engine.handle_request(
                request, connection, send, request_info=request_info, modern=modern, access_token=access_token
            )
        except asyncio.CancelledError:
            await finish(stopping_reply(request.id) if self.stopping else None)
            raise
        except Exception:
            logger.exception("internal error while handling %s", request.method)
            reply = Reply(encode(error_reply(request.id, INTERNAL_ERROR, "Internal error")), 500, True)
        await finish(reply)

    def track(self, task: asyncio.Task[Any]) -> None:
        """Count ``task`` among the work the shutdown drain waits for."""
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def drain(self, grace: float | None = None) -> None:
        """Give in-flight requests ``grace`` seconds; then cancel the rest, each answered as stopping."""
        grace = self.shutdown_grace if grace is None else grace
        if not self.tasks:
            return
        _, pending = await asyncio.wait(set(self.tasks), timeout=grace)
        self.stopping = True
        if not pending:
            return
        logger.warning(
            "%d request(s) still running after the %g s shutdown grace period: cancelled", len(pending), grace
        )
        for task in pending:
            task.cancel()
        await asyncio.wait(pending, timeout=1.0)


def settle_allocator() -> None:
    """Keep asyncio's 256 KiB read buffers off ``mmap`` for the life of the serving process.

    asyncio reads a socket or pipe into a fresh 256 KiB ``bytes`` and shrinks it to what
    arrived. glibc serves an allocation that size with ``mmap`` until its adaptive threshold
    has risen past it, which happens only when a larger ``mmap``-ed block is freed: until then
    every read costs an ``mmap``, an ``mremap`` and a ``munmap`` (about 15 µs of a request's
    CPU). Freeing one 1 MiB block raises the threshold at once, as a long-running process's
    own history would sooner or later. Harmless with other allocators. Called by the entry
    points that own the process (``server.run``, ``toolkit run``), never by ``http_app()``.
    """
    bytes(1 << 20)  # calloc: fresh mmap-ed pages, none touched (bytearray would zero-fill 1 MiB)


def stopping_reply(request_id: RequestId) -> Reply:
    return Reply(encode(error_reply(request_id, INTERNAL_ERROR, STOPPING_MESSAGE)), 503, True)


def _forget_inflight(connection: Connection, request_id: RequestId, task: asyncio.Task[Any]) -> None:
    if connection.inflight.get(request_id) is task:
        del connection.inflight[request_id]
