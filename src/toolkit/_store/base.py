"""The store interface and its in-memory implementation.

A store keeps what crosses requests of the legacy era, so that whichever replica receives a
request can serve it: the legacy sessions (negotiated version, client capabilities and info,
log level, resource subscriptions, idle expiry), who holds a session's ``GET`` stream, the
events of resumable SSE streams, a bus that carries what one replica must tell the others
(a session ended, a cancellation, a client's answer to a server-to-client request, a change
notification), the liveness of each replica, the secret that seals ``requestState``, and tasks (``tasks.py``).

``MemoryStore`` keeps all of it in this process (one replica: ``toolkit run`` without
``--store``, the default). ``RedisStore`` (``toolkit._store.redis``) keeps it in Redis. A session
is a ``SessionRecord`` (``sessions.py``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import secrets
import time
import weakref
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, Protocol
from urllib.parse import urlsplit, urlunsplit

if TYPE_CHECKING:
    from .._events import EventStore
    from .sessions import SessionRecord
    from .state import StateStore
    from .tasks import TaskStore

logger = logging.getLogger("toolkit")

BusMessage = dict[str, Any]
"""What replicas tell each other: ``{"t": kind, ...}`` (kinds in ``toolkit._transports.http``)."""
OnMessage = Callable[[BusMessage], None]

GET_STREAM_CLAIM_SECONDS: Final = 15.0
"""How long a replica's claim on a session's ``GET`` stream lasts unless it is refreshed."""


def session_state_scope(session_id: str) -> str:
    """The state scope of a legacy session (``ctx.state.session()``), ``s.<session id>``."""
    return f"s.{session_id}"


class Store(ABC):
    """Where cross-request state lives; see the module docstring for what that is.

    Every method may raise ``toolkit.StoreUnavailable`` when the backing service cannot be
    reached; nothing waits longer than the store's own timeout.
    """

    shared: bool = False
    """True when other processes see the same state (replicas must then tell each other things)."""

    def __init__(self) -> None:
        self.replica = secrets.token_hex(6)
        """This process's name among the replicas (random, fresh at every start)."""
        self.request_id_base = 0
        """Added to the ids of server-to-client requests, so replicas never reuse each other's."""
        self._on_message: OnMessage | None = None
        self._task_store: TaskStore | None = None

    @property
    def describe(self) -> str:
        """The store as error messages name it (a URL without its password)."""
        return "memory"

    # --- lifetime -------------------------------------------------------------------------------

    async def start(self, on_message: OnMessage | None = None) -> None:
        """Connect (failing with ``StoreUnavailable`` naming the store) and deliver bus messages to ``on_message``."""
        self._on_message = on_message

    async def close(self) -> None:
        """Disconnect; the store's state stays for the other replicas."""
        self._on_message = None

    def events(self) -> EventStore | None:
        """The event store for resumable SSE streams that this store provides by default, if any."""
        return None

    def tasks(self) -> TaskStore:
        """Where this store keeps tasks (in this process unless the store says otherwise)."""
        if self._task_store is None:
            from .tasks import MemoryTaskStore  # noqa: PLC0415 - on first use: most servers have no task tools

            self._task_store = MemoryTaskStore()
        return self._task_store

    def state(self) -> StateStore:
        """Where this store keeps per-user and per-session state (``toolkit._state``); in this process here."""
        state: StateStore | None = getattr(self, "_state_store", None)
        if state is None:
            from .state import MemoryStateStore  # noqa: PLC0415 - on first use: most servers keep no state

            state = MemoryStateStore()
            self._state_store: StateStore = state
        return state

    async def shared_secret(self) -> bytes | None:
        """A secret every replica of this store agrees on (for ``requestState``), or ``None``."""
        return None

    # --- legacy sessions ------------------------------------------------------------------------

    @abstractmethod
    async def add_session(self, record: SessionRecord, *, ttl: float, limit: int) -> bool:
        """Keep a new session for ``ttl`` seconds of idleness; False when ``limit`` sessions are open."""

    @abstractmethod
    async def load_session(self, session_id: str, *, ttl: float) -> SessionRecord | None:
        """The session, its idle expiry pushed back to ``ttl`` seconds; ``None`` if unknown, expired or ended."""

    @abstractmethod
    async def touch_session(self, session_id: str, *, ttl: float) -> bool:
        """Push back the session's idle expiry (it is busy here); False if it no longer exists."""

    @abstractmethod
    async def update_session(self, session_id: str, **changes: Any) -> bool:
        """Set ``log_level`` or ``initialized``; False (and nothing written) if the session is gone."""

    @abstractmethod
    async def subscribe(self, session_id: str, uri: str, subscribed: bool) -> bool:
        """Add or remove one resource subscription; False if the session is gone."""

    @abstractmethod
    async def end_session(self, session_id: str) -> bool:
        """End the session everywhere; True only for the call that ended it (racing ends get False)."""

    async def clear_session_state(self, session_id: str) -> None:
        """Remove what ``ctx.state.session()`` kept for a session that was ended (``DELETE``).

        Nothing to do where this process made no state store: it kept no state. A store whose
        state lives elsewhere, where other replicas write it, overrides this (``RedisStore``).
        """
        state: StateStore | None = getattr(self, "_state_store", None)
        if state is not None:
            await state.clear(session_state_scope(session_id))

    @abstractmethod
    async def session_count(self) -> int:
        """How many sessions are open (expired ones not counted)."""

    # --- the GET stream of a session: one in the whole deployment ------------------------------

    @abstractmethod
    async def claim_get_stream(self, session_id: str, holder: str, *, ttl: float = GET_STREAM_CLAIM_SECONDS) -> bool:
        """Claim the session's ``GET`` stream for ``holder`` (refresh by claiming again); False if held by another."""

    @abstractmethod
    async def release_get_stream(self, session_id: str, holder: str) -> None:
        """Give up ``holder``'s claim (someone else's is left alone)."""

    # --- replicas -------------------------------------------------------------------------------

    async def publish(self, message: BusMessage) -> None:
        """Tell every replica, this one included (in order, at most once)."""
        if self._on_message is not None:
            asyncio.get_running_loop().call_soon(self._on_message, message)

    async def replica_alive(self, replica: str) -> bool:
        """Whether ``replica`` is still serving (it refreshes a lease while it runs)."""
        return replica == self.replica


class _Held:
    __slots__ = ("expires", "record")

    def __init__(self, record: SessionRecord, expires: float) -> None:
        self.record = record
        self.expires = expires


class MemoryStore(Store):
    """Everything in this process: one replica (the default)."""

    def __init__(self) -> None:
        super().__init__()
        self._sessions: dict[str, _Held] = {}
        self._get_streams: dict[str, tuple[str, float]] = {}

    def _live(self, session_id: str) -> _Held | None:
        held = self._sessions.get(session_id)
        if held is not None and held.expires <= time.monotonic():
            del self._sessions[session_id]
            return None
        return held

    def _purge(self) -> None:
        now = time.monotonic()
        for session_id in [key for key, held in self._sessions.items() if held.expires <= now]:
            del self._sessions[session_id]

    async def add_session(self, record: SessionRecord, *, ttl: float, limit: int) -> bool:
        if len(self._sessions) >= limit:
            self._purge()
            if len(self._sessions) >= limit:
                return False
        self._sessions[record.id] = _Held(_copy(record), time.monotonic() + ttl)
        return True

    async def load_session(self, session_id: str, *, ttl: float) -> SessionRecord | None:
        held = self._live(session_id)
        if held is None:
            return None
        held.expires = time.monotonic() + ttl
        return _copy(held.record)

    async def touch_session(self, session_id: str, *, ttl: float) -> bool:
        # A busy session is kept even if its idle time ran out since the last touch (shorter
        # timeouts than the reaper's period): nothing else read it meanwhile.
        held = self._sessions.get(session_id)
        if held is None:
            return False
        held.expires = time.monotonic() + ttl
        return True

    async def update_session(self, session_id: str, **changes: Any) -> bool:
        unknown = [name for name in changes if name not in ("log_level", "initialized")]
        if unknown or not changes:
            raise ValueError(f"update_session: give log_level= or initialized=, not {unknown}")
        held = self._live(session_id)
        if held is None:
            return False
        for name, value in changes.items():
            setattr(held.record, name, value)
        return True

    async def subscribe(self, session_id: str, uri: str, subscribed: bool) -> bool:
        held = self._live(session_id)
        if held is None:
            return False
        if subscribed:
            held.record.subscriptions.add(uri)
        else:
            held.record.subscriptions.discard(uri)
        return True

    async def end_session(self, session_id: str) -> bool:
        self._get_streams.pop(session_id, None)
        ended = self._live(session_id) is not None
        self._sessions.pop(session_id, None)
        return ended

    async def session_count(self) -> int:
        self._purge()
        return len(self._sessions)

    async def claim_get_stream(self, session_id: str, holder: str, *, ttl: float = GET_STREAM_CLAIM_SECONDS) -> bool:
        now = time.monotonic()
        current = self._get_streams.get(session_id)
        if current is not None and current[0] != holder and current[1] > now:
            return False
        self._get_streams[session_id] = (holder, now + ttl)
        return True

    async def release_get_stream(self, session_id: str, holder: str) -> None:
        current = self._get_streams.get(session_id)
        if current is not None and current[0] == holder:
            del self._get_streams[session_id]


def _copy(record: SessionRecord) -> SessionRecord:
    """What a store hands out is the caller's to change; what it keeps changes only through its methods."""
    return dataclasses.replace(record, subscriptions=set(record.subscriptions))


def redacted(url: str) -> str:
    """``url`` without its password, for messages and logs."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)[1]
    # A URL with a password has a user part before its ":", empty or not (urlsplit gives "" then).
    return urlunsplit(parts._replace(netloc=f"{parts.username}:***@{netloc}"))


class _HasStore(Protocol):
    store: Store | None


_memory_stores: weakref.WeakKeyDictionary[Any, Store] = weakref.WeakKeyDictionary()


def serving_store(server: _HasStore) -> Store:
    """The store ``server`` keeps its state in: the one configured (``Server(store=...)``), else one in
    this process's memory, made on first use and the same from then on (what ``ServerStore`` gives,
    and where ``ctx.state`` keeps its values)."""
    store = server.store
    if store is None:
        store = _memory_stores.get(server)
        if store is None:
            store = _memory_stores[server] = MemoryStore()
    return store
