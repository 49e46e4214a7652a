"""Legacy sessions over HTTP: the table of open ``Mcp-Session-Id``s, its limit, and the idle reaper."""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

from ..._jsonrpc import encode
from ..._session import Connection
from ..base import EngineFacing

logger = logging.getLogger("toolkit")


@dataclass(eq=False)
class HttpSession:
    connection: Connection
    created: float = field(default_factory=time.monotonic)
    standalone: asyncio.Queue[bytes | None] | None = None
    """The open ``GET`` stream's queue, if any (``None`` queued ends it)."""
    streams: dict[str, None] = field(default_factory=dict)
    """Ids of this session's recent resumable streams (oldest first): it may resume only its own."""
    caller: str | None = None
    """Who opened the session (the access token's subject): no one else may use it."""

    def add_stream(self, stream_id: str, keep: int = 1000) -> None:
        self.streams[stream_id] = None
        if len(self.streams) > keep:
            del self.streams[next(iter(self.streams))]

    @property
    def id(self) -> str:
        assert self.connection.session.id is not None
        return self.connection.session.id

    async def notify(self, message: dict[str, Any]) -> None:
        """Unsolicited messages for a legacy session go to its GET stream, if one is open."""
        if self.standalone is not None:
            self.standalone.put_nowait(encode(message))

    def end_stream(self) -> None:
        if self.standalone is not None:
            self.standalone.put_nowait(None)


class SessionTable:
    """The open legacy sessions; idle ones are ended after ``idle_timeout`` seconds."""

    def __init__(self, engine: EngineFacing, *, max_sessions: int, idle_timeout: float) -> None:
        self.engine = engine
        self.max_sessions = max_sessions
        self.idle_timeout = idle_timeout
        self.sessions: dict[str, HttpSession] = {}
        self._reaper: asyncio.Task[None] | None = None

    def get(self, session_id: str) -> HttpSession | None:
        return self.sessions.get(session_id)

    def new(self) -> HttpSession | None:
        """A session not yet in the table (``add`` it once initialized), or ``None`` when full."""
        if len(self.sessions) >= self.max_sessions:
            self.reap_idle()
        if len(self.sessions) >= self.max_sessions:
            return None
        connection = Connection()
        connection.session.id = secrets.token_urlsafe(32)
        session = HttpSession(connection)
        connection.session.notify = session.notify
        return session

    def add(self, session: HttpSession) -> None:
        self.sessions[session.id] = session

    def end(self, session: HttpSession) -> None:
        """End a session: its requests are cancelled, its GET stream closed, its waits failed."""
        self.sessions.pop(session.id, None)
        for task in list(session.connection.inflight.values()):
            task.cancel()
        session.end_stream()
        self.engine.forget(session.connection.session)

    def end_all(self) -> None:
        for session in list(self.sessions.values()):
            self.end(session)

    def end_streams(self) -> None:
        """Close every GET stream (at shutdown, so their connections can end)."""
        for session in self.sessions.values():
            session.end_stream()

    def reap_idle(self) -> None:
        now = asyncio.get_running_loop().time()
        for session in list(self.sessions.values()):
            busy = session.connection.inflight or session.standalone is not None
            if not busy and now - session.connection.session.last_active > self.idle_timeout:
                logger.info("ending idle session %s", session.id)
                self.end(session)

    def start_reaper(self) -> None:
        if self._reaper is None:
            self._reaper = asyncio.create_task(self._reap())

    def stop_reaper(self) -> None:
        if self._reaper is not None:
            self._reaper.cancel()
            self._reaper = None

    async def _reap(self) -> None:
        while True:
            await asyncio.sleep(max(1.0, min(60.0, self.idle_timeout / 4)))
            self.reap_idle()
