"""Legacy sessions over HTTP: ``Mcp-Session-Id``s kept in the store, served by whichever replica a request reaches.

The store holds each session's record (version, client capabilities, log level,
subscriptions, idle expiry). A replica keeps a local ``HttpSession`` for the sessions it is
serving now: their in-flight requests, the ``GET`` stream open here, and requests to the
client waiting for an answer. With a shared store (Redis), replicas tell each other through
the store's bus what a local copy elsewhere must act on:

- ``end``: the session ended (``DELETE`` here): cancel its requests, close its stream;
- ``cancel``: ``notifications/cancelled`` for a request running on another replica;
- ``response``: the client's answer to a server-to-client request another replica sent;
- ``sub``, ``level``: a resource subscription or the log level changed;
- ``resync`` (from this replica's own store): the bus was down, so check every local copy again;
- ``notify``: a message for the session's ``GET`` stream, held by another replica.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from ..._errors import StoreUnavailable
from ..._jsonrpc import Response, encode
from ..._session import Connection, Session
from ..._store.base import GET_STREAM_CLAIM_SECONDS, BusMessage, Store
from ..._store.sessions import SessionRecord
from ..._types import LOG_RANK, log_digest
from ..base import EngineFacing

if TYPE_CHECKING:
    from .sse import Outbox

logger = logging.getLogger("toolkit")


def made_json(message: dict[str, Any]) -> bytes | None:
    """The JSON a fan-out made once for all its recipients (``_notifications.Encoded``'s ``wire``), if any."""
    wire = getattr(message, "wire", None) if type(message) is not dict else None
    return wire if isinstance(wire, bytes) else None


def _wire(message: dict[str, Any]) -> bytes:
    """``message``'s JSON: the fan-out's, or made now."""
    made = made_json(message)
    return made if made is not None else encode(message)


RECHECK_SECONDS: Final = 1.0
"""At most this long between two checks of a session's local copy against the store (see ``SessionTable.get``)."""


@dataclass(eq=False)
class HttpSession:
    connection: Connection
    table: SessionTable
    standalone: Outbox | None = None
    """The ``GET`` stream open on this replica, if any (``None`` queued ends it)."""
    holder: str = field(default_factory=lambda: secrets.token_hex(8))
    """This replica's name for its claim on the session's ``GET`` stream."""
    caller: str | None = None
    """Who opened the session (the access token's subject): no one else may use it."""
    checked: float = float("-inf")
    """When (event loop time) this copy was last checked against the store."""

    @property
    def id(self) -> str:
        assert self.connection.session.id is not None
        return self.connection.session.id

    async def notify(self, message: dict[str, Any]) -> None:
        """A change notification: to the ``GET`` stream if it is open here (every replica is told the change)."""
        if self.standalone is not None:
            await self.standalone.deliver(_wire(message))

    async def send_unsolicited(self, message: dict[str, Any]) -> None:
        """A message of a request answered with plain JSON: to the ``GET`` stream, wherever it is open."""
        if self.standalone is not None:
            await self.standalone.deliver(_wire(message))
        elif self.table.store.shared:
            await self.table.store.publish({"t": "notify", "s": self.id, "m": message})

    def end_stream(self) -> None:
        if self.standalone is not None:
            self.standalone.put_nowait(None)

    @property
    def busy(self) -> bool:
        return bool(self.connection.inflight) or self.standalone is not None


class SessionTable:
    """The sessions this replica serves now, backed by the store; idle local copies are dropped."""

    def __init__(self, engine: EngineFacing, store: Store, *, max_sessions: int, idle_timeout: float) -> None:
        self.engine = engine
        self.store = store
        self.max_sessions = max_sessions
        self.idle_timeout = idle_timeout
        self.local: dict[str, HttpSession] = {}
        self.recheck = min(RECHECK_SECONDS, idle_timeout / 4)
        """How long a local copy is trusted without asking the store (what changes elsewhere comes on the bus)."""
        self._reaper: asyncio.Task[None] | None = None

    # --- opening and finding ------------------------------------------------------------------

    def new(self, caller: str | None) -> HttpSession:
        """A session for an ``initialize`` (``add`` it once the engine accepted it)."""
        session = self._local(Session(secrets.token_urlsafe(32), request_id_base=self.store.request_id_base))
        session.caller = caller
        return session

    def _local(self, state: Session) -> HttpSession:
        session = HttpSession(Connection(state), self)
        state.notify = session.notify
        state.notify_delivers = lambda: session.standalone is not None
        state.on_change = self._store_change
        return session

    async def add(self, session: HttpSession) -> bool:
        """Store the initialized session; False (and the session dropped) when the limit is reached."""
        state = session.connection.session
        assert state.version is not None
        record = SessionRecord(
            id=session.id,
            version=state.version,
            client_capabilities=state.client_capabilities,
            client_info=state.client_info,
            log_level=state.log_level,
            caller=session.caller,
        )
        try:
            added = await self.store.add_session(record, ttl=self.idle_timeout, limit=self.max_sessions)
        except StoreUnavailable:
            self.engine.forget(state)
            raise
        if not added:
            self.engine.forget(state)
            return False
        session.checked = asyncio.get_running_loop().time()
        self.local[session.id] = session
        return True

    async def get(self, session_id: str, caller: str | None) -> HttpSession | None:
        """The session, if it exists and belongs to ``caller`` (another caller's is as good as unknown).

        A local copy checked against the store within ``recheck`` seconds is served as it is:
        an end, a log level or a subscription changed through another replica reaches it on
        the bus, in milliseconds; checking the store as well on every request would cost a
        round trip each. If a bus message is lost, the next check (at most ``recheck`` later)
        catches up.
        """
        session = self.local.get(session_id)
        now = asyncio.get_running_loop().time()
        if session is not None and now - session.checked < self.recheck:
            if session.caller != caller:
                logger.warning("refused session %s to a caller that did not open it", log_digest(session_id))
                return None
            return session
        record = await self.store.load_session(session_id, ttl=self.idle_timeout)
        session = self.local.get(session_id)
        if record is None:
            if session is not None:  # ended or expired while this replica held a copy
                self._drop(session)
            return None
        if record.caller != caller:
            logger.warning("refused session %s to a caller that did not open it", log_digest(session_id))
            return None
        if session is None:
            session = self._adopt(record)
        else:
            state = session.connection.session
            state.log_level = record.log_level
            state.subscriptions = record.subscriptions
            state.initialized = record.initialized
        session.checked = now
        return session

    def _adopt(self, record: SessionRecord) -> HttpSession:
        """A local copy of a session opened on another replica (or dropped here while idle)."""
        state = Session(record.id, request_id_base=self.store.request_id_base)
        state.version = record.version
        state.client_capabilities = record.client_capabilities
        state.client_info = record.client_info
        state.log_level = record.log_level
        state.subscriptions = record.subscriptions
        state.initialized = record.initialized
        session = self._local(state)
        session.caller = record.caller
        self.local[record.id] = session
        self.engine.remember(state)
        return session

    async def _store_change(self, state: Session, what: str, value: Any) -> None:
        assert state.id is not None
        if what == "log_level":
            await self.store.update_session(state.id, log_level=value)
            if self.store.shared:
                await self.store.publish({"t": "level", "s": state.id, "l": value})
        elif what in ("subscribe", "unsubscribe"):
            on = what == "subscribe"
            await self.store.subscribe(state.id, value, on)
            if self.store.shared:
                await self.store.publish({"t": "sub", "s": state.id, "u": value, "on": on})

    async def initialized(self, session: HttpSession) -> None:
        session.connection.session.initialized = True
        await self.store.update_session(session.id, initialized=True)

    # --- the GET stream -----------------------------------------------------------------------

    async def claim_stream(self, session: HttpSession) -> bool:
        """Whether this replica may open the session's ``GET`` stream (one in the whole deployment)."""
        if session.standalone is not None:
            return False
        return await self.store.claim_get_stream(session.id, f"{self.store.replica}:{session.holder}")

    async def release_stream(self, session: HttpSession) -> None:
        with contextlib.suppress(StoreUnavailable):  # else the claim expires by itself
            await self.store.release_get_stream(session.id, f"{self.store.replica}:{session.holder}")

    # --- ending -------------------------------------------------------------------------------

    async def end(self, session: HttpSession) -> None:
        """``DELETE``: end the session everywhere, and the state tools kept for it."""
        ended = await self.store.end_session(session.id)
        self._drop(session)
        if self.store.shared:
            await self.store.publish({"t": "end", "s": session.id})
        if ended:  # racing DELETEs: the one that ended it clears it
            try:
                await self.store.clear_session_state(session.id)
            except StoreUnavailable as exc:  # the session has ended; its values expire on their own
                logger.warning("%s", exc.message)

    def _drop(self, session: HttpSession) -> None:
        """Forget the local copy: its requests are cancelled, its GET stream closed, its waits failed."""
        if self.local.get(session.id) is session:
            del self.local[session.id]
        for task in list(session.connection.inflight.values()):
            task.cancel()
        session.end_stream()
        self.engine.forget(session.connection.session)

    def end_all(self) -> None:
        """This replica stops: drop every local copy (a shared store keeps the sessions for the others)."""
        for session in list(self.local.values()):
            self._drop(session)

    def end_streams(self) -> None:
        """Close every GET stream (at shutdown, so their connections can end)."""
        for session in self.local.values():
            session.end_stream()

    # --- what other replicas tell this one ----------------------------------------------------

    def on_message(self, message: BusMessage) -> bool:
        """Act on a bus message about a session held here; False if the message is not about sessions."""
        kind = message.get("t")
        if kind == "resync":  # the bus was down: messages may be lost, so check every copy again
            for held in self.local.values():
                held.checked = float("-inf")
            return True
        if kind not in ("end", "cancel", "response", "sub", "level", "notify"):
            return False
        session = self.local.get(str(message.get("s")))
        if session is None:
            return True
        state = session.connection.session
        if kind == "end":
            self._drop(session)
        elif kind == "cancel":
            session.connection.cancel(message.get("r"))
        elif kind == "response":
            answer = message.get("m")
            if isinstance(answer, dict) and isinstance(answer.get("id"), str | int):
                state.resolve(Response(answer["id"], answer.get("result"), answer.get("error")))
        elif kind == "sub" and isinstance(message.get("u"), str):
            if message.get("on"):
                state.subscriptions.add(message["u"])
            else:
                state.subscriptions.discard(message["u"])
        elif kind == "level" and message.get("l") in LOG_RANK:
            state.log_level = message["l"]
        elif kind == "notify" and session.standalone is not None and isinstance(message.get("m"), dict):
            session.standalone.put_nowait(encode(message["m"]))
        return True

    async def route_cancel(self, session: HttpSession, request_id: Any) -> None:
        """``notifications/cancelled`` for a request not running here: the replica running it cancels it."""
        if self.store.shared and request_id not in session.connection.inflight:
            await self.store.publish({"t": "cancel", "s": session.id, "r": request_id})

    async def route_response(self, session: HttpSession, response: Response) -> None:
        """An answer to a request another replica sent the client: that replica takes it."""
        if self.store.shared:
            message = {"id": response.id, "result": response.result, "error": response.error}
            await self.store.publish({"t": "response", "s": session.id, "m": message})

    # --- idleness -----------------------------------------------------------------------------

    async def reap_idle(self) -> None:
        """Drop local copies idle for ``idle_timeout``; keep busy sessions alive in the store."""
        now = asyncio.get_running_loop().time()
        for session in list(self.local.values()):
            if session.busy:
                await self._keep_alive(session)
            elif now - session.connection.session.last_active > self.idle_timeout:
                logger.info("ending idle session %s", log_digest(session.id))
                self._drop(session)

    async def _keep_alive(self, session: HttpSession) -> None:
        try:
            alive = await self.store.touch_session(session.id, ttl=self.idle_timeout)
            if alive and session.standalone is not None:
                await self.store.claim_get_stream(session.id, f"{self.store.replica}:{session.holder}")
        except StoreUnavailable as exc:
            logger.warning("%s", exc.message)
            return
        if not alive:
            self._drop(session)

    def start_reaper(self) -> None:
        if self._reaper is None:
            self._reaper = asyncio.create_task(self._reap())

    def stop_reaper(self) -> None:
        if self._reaper is not None:
            self._reaper.cancel()
            self._reaper = None

    async def _reap(self) -> None:
        interval = max(1.0, min(60.0, self.idle_timeout / 4))
        if self.store.shared:
            interval = min(interval, GET_STREAM_CLAIM_SECONDS / 3)
        while True:
            await asyncio.sleep(interval)
            await self.reap_idle()
