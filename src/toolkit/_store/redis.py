"""``RedisStore``: cross-request state in Redis (or Valkey), so any replica serves any request.

Keys (all under ``prefix``, ``toolkit:`` by default):

- ``s:<session>``: a hash per legacy session (``v`` version, ``cc`` client capabilities, ``ci``
  client info, ``ll`` log level, ``in`` initialized, ``c`` caller, ``u:<uri>`` one field per
  resource subscription), expiring after ``session_idle_timeout`` of idleness (Redis TTL);
- ``sessions``: a sorted set of the open sessions by expiry, for the session limit;
- ``g:<session>``: who holds the session's ``GET`` stream (expires unless refreshed);
- ``e:<stream>`` and ``em:<stream>``: a resumable SSE stream (a Redis Stream, capped at
  ``max_events_per_stream`` entries, expiring ``event_ttl_seconds`` after its last event) and
  its owner (session, request id, replica);
- ``r:<replica>``: a replica's lease, refreshed every few seconds while it runs;
- ``state-secret``: the secret every replica seals ``requestState`` with, unless configured;
- ``t:<task>`` and ``to:<owner>``: tasks (``redis_tasks.py``);
- ``st:{<scope>}`` and ``sh:<handle>``: per-user and per-session state (``redis_state.py``);
- the channel ``bus``: what replicas tell each other (pub/sub: at most once, in order).

Uses redis-py's asyncio client (``pip install toolkit-mcp[redis]``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any, Final

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from .._errors import INTERNAL_ERROR, StoreUnavailable
from .._events import SEPARATOR, EventStore
from .._jsonrpc import encode, error_reply
from .._types import RequestId
from .base import GET_STREAM_CLAIM_SECONDS, BusMessage, OnMessage, Store, redacted, session_state_scope
from .sessions import SessionRecord
from .tasks import TaskStore

if TYPE_CHECKING:
    from .state import StateStore

logger = logging.getLogger("toolkit")

LEASE_SECONDS: Final = 10
"""A replica that has not refreshed its lease for this long is taken for dead."""
HEARTBEAT_SECONDS: Final = 3.0
FOLLOW_BLOCK_MS: Final = 2000
"""How long a resumed stream waits on Redis for new events before checking that its owner lives."""
DEAD_OWNER_MESSAGE: Final = (
    "Internal error: the server process running this request stopped before it answered; send the request again"
)

_OUTAGE = (RedisConnectionError, RedisTimeoutError, OSError)

# Write only to a session that still exists: a racing DELETE must win over a late update.
_UPDATE = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
"""
_UNSUBSCRIBE = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
return 1
"""
# The sessions set is scored with Redis's clock (milliseconds), never a replica's.
_NOW = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
"""
_ADD = (
    _NOW
    + """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[2], unpack(ARGV, 4))
redis.call('PEXPIRE', KEYS[2], ARGV[2])
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
return 1
"""
)
# Load (or only touch) a session and push back its expiry; a session whose hash has expired
# leaves the set too, so it never holds a place under the limit again.
_LOAD = (
    _NOW
    + """
if redis.call('PEXPIRE', KEYS[2], ARGV[1]) == 0 then
  redis.call('ZREM', KEYS[1], ARGV[2])
  return false
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[1]), ARGV[2])
if ARGV[3] == '1' then return redis.call('HGETALL', KEYS[2]) end
return 1
"""
)
_COUNT = (
    _NOW
    + """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
return redis.call('ZCARD', KEYS[1])
"""
)
_CLAIM = """
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
"""
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
"""


def _client(url: str, timeout: float, max_connections: int) -> Any:
    """A redis-py client whose pool waits (up to ``timeout``) for a free connection instead of failing.

    A connection found closed (Redis restarted while it sat in the pool) is retried once on a
    fresh one. Typed loosely: replies are bytes here (no decode_responses); the stubs say
    "bytes | str".
    """
    pool = aioredis.BlockingConnectionPool.from_url(
        url,
        max_connections=max_connections,
        timeout=timeout,
        socket_timeout=timeout,
        socket_connect_timeout=timeout,
        retry=Retry(NoBackoff(), 1),
        retry_on_error=[RedisConnectionError],
    )
    return aioredis.Redis.from_pool(pool)  # closing the client closes its pool


class RedisStore(Store):
    """Sessions, streams, the bus and replica leases in Redis; every replica points at the same server.

    ``url`` is a redis-py URL (``redis://[:password@]host:port/db``, ``rediss://`` for TLS,
    ``unix://``). ``prefix`` separates several servers sharing one Redis. Every operation
    gives up after ``timeout`` seconds (the request then gets HTTP 503). Resumable SSE
    streams are kept on Redis Streams (``resumable=False`` turns them off), at most
    ``max_events_per_stream`` events each, for ``event_ttl_seconds`` after the last one.
    At most ``max_connections`` connections serve requests (more wait for one, up to
    ``timeout``) and ``max_followers`` clients may follow resumed streams at once.
    """

    shared = True

    def __init__(
        self,
        url: str,
        *,
        prefix: str = "toolkit:",
        timeout: float = 5.0,
        resumable: bool = True,
        max_events_per_stream: int = 1000,
        event_ttl_seconds: float = 300.0,
        max_connections: int = 100,
        max_followers: int = 1000,
    ) -> None:
        super().__init__()
        if not url.startswith(("redis://", "rediss://", "unix://")):
            raise ValueError(f"store: {url!r} is not a Redis URL; use redis://HOST:PORT/DB (or rediss://, unix://)")
        self.url = url
        self.prefix = prefix
        self.timeout = timeout
        self.request_id_base = secrets.randbits(30) << 22
        self.client = _client(url, timeout, max_connections)
        # Resumed streams wait on Redis (XREAD BLOCK) on connections of their own, so that many
        # of them never starve the requests.
        self.blocking = _client(url, timeout + FOLLOW_BLOCK_MS / 1000, max_followers)
        self._events = (
            RedisEventStore(self, max_events_per_stream=max_events_per_stream, ttl_seconds=event_ttl_seconds)
            if resumable
            else None
        )
        self._tasks: list[asyncio.Task[None]] = []
        self._secret: bytes | None = None
        self._update = self.client.register_script(_UPDATE)
        self._unsubscribe = self.client.register_script(_UNSUBSCRIBE)
        self._add = self.client.register_script(_ADD)
        self._load = self.client.register_script(_LOAD)
        self._count = self.client.register_script(_COUNT)
        self._claim = self.client.register_script(_CLAIM)
        self._release = self.client.register_script(_RELEASE)

    @property
    def describe(self) -> str:
        return f"Redis at {redacted(self.url)}"

    def key(self, *parts: str) -> str:
        return self.prefix + ":".join(parts)

    @contextlib.contextmanager
    def guard(self) -> Iterator[None]:
        """Turn a lost connection into ``StoreUnavailable`` naming the store."""
        try:
            yield
        except _OUTAGE as exc:
            reason = str(exc).rstrip(". ") or type(exc).__name__
            raise StoreUnavailable(f"the session store ({self.describe}) is unreachable: {reason}") from None

    # --- lifetime -------------------------------------------------------------------------------

    async def start(self, on_message: OnMessage | None = None) -> None:
        await super().start(on_message)
        try:
            await self.client.ping()
        except (RedisError, OSError) as exc:
            raise StoreUnavailable(f"cannot reach {self.describe}: {str(exc).rstrip('. ')}") from None
        await self._beat()
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(self._heartbeat())]
        if on_message is not None:
            ready = loop.create_future()
            self._tasks.append(loop.create_task(self._listen(ready)))
            try:
                await asyncio.wait_for(ready, self.timeout)
            except TimeoutError:
                await self._stop_tasks()
                raise StoreUnavailable(f"cannot subscribe to the bus of {self.describe}") from None

    async def close(self) -> None:
        await super().close()
        await self._stop_tasks()
        with contextlib.suppress(RedisError, OSError):
            await self.client.delete(self.key("r", self.replica))
        await self.client.aclose()
        await self.blocking.aclose()

    async def _stop_tasks(self) -> None:
        # Cancelled again until done: a cancellation that lands while redis-py's pool waits for a free
        # connection can be swallowed there, and the heartbeat would then beat on (close() hung on it).
        running = [task for task in self._tasks if not task.done()]
        while running:
            for task in running:
                task.cancel()
            await asyncio.wait(running, timeout=1.0)
            running = [task for task in running if not task.done()]
        for task in self._tasks:
            if not task.cancelled():
                task.exception()  # read: an error it ended with is not "never retrieved"
        self._tasks = []

    def events(self) -> EventStore | None:
        return self._events

    def tasks(self) -> TaskStore:
        if self._task_store is None:
            from .redis_tasks import RedisTaskStore  # noqa: PLC0415 - only servers with tasks need it

            self._task_store = RedisTaskStore(self)
        return self._task_store

    def state(self) -> StateStore:
        state: StateStore | None = getattr(self, "_state_store", None)
        if state is None:
            from .redis_state import RedisStateStore  # noqa: PLC0415 - only servers that keep state need it

            state = RedisStateStore(self)
            self._state_store = state
        return state

    async def shared_secret(self) -> bytes | None:
        key = self.key("state-secret")
        with self.guard():
            await self.client.set(key, secrets.token_hex(32), nx=True)
            value = await self.client.get(key)
        self._secret = bytes(value) if value is not None else None
        return self._secret

    async def _beat(self) -> None:
        """Renew this replica's lease; put the shared secret back if Redis lost it (a restart without persistence)."""
        with self.guard():
            async with self.client.pipeline(transaction=False) as pipe:
                pipe.set(self.key("r", self.replica), b"1", ex=LEASE_SECONDS)
                if self._secret is not None:
                    pipe.set(self.key("state-secret"), self._secret, nx=True)
                await pipe.execute()

    async def _heartbeat(self) -> None:
        while True:
            await asyncio.sleep(HEARTBEAT_SECONDS)
            try:
                await self._beat()
            except StoreUnavailable as exc:
                logger.warning("%s", exc.message)

    async def _listen(self, ready: asyncio.Future[None]) -> None:
        """Deliver bus messages in order; reconnect (with backoff) when the connection drops."""
        delay = 0.2
        while True:
            pubsub = self.client.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.subscribe(self.key("bus"))
                if not ready.done():
                    ready.set_result(None)
                else:  # back after losing Redis: renew the lease at once (it may have restarted empty)
                    await self._beat()
                    if self._on_message is not None:  # and what was published meanwhile is lost
                        self._on_message({"t": "resync"})
                delay = 0.2
                while True:
                    message = await pubsub.get_message(timeout=None)
                    if message is not None and self._on_message is not None:
                        self._deliver(message["data"])
            except asyncio.CancelledError:
                raise
            except (RedisError, OSError, StoreUnavailable) as exc:
                logger.warning("lost the bus of %s (%s); reconnecting", self.describe, exc)
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()
            await asyncio.sleep(delay)
            delay = min(delay * 2, 5.0)

    def _deliver(self, data: bytes) -> None:
        try:
            message = json.loads(data)
        except ValueError:
            logger.warning("ignoring a malformed bus message")
            return
        if isinstance(message, dict) and self._on_message is not None:
            try:
                self._on_message(message)
            except Exception:
                logger.exception("handling bus message %r failed", message.get("t"))

    async def publish(self, message: BusMessage) -> None:
        with self.guard():
            await self.client.publish(self.key("bus"), json.dumps(message, separators=(",", ":")))

    async def replica_alive(self, replica: str) -> bool:
        with self.guard():
            return bool(await self.client.exists(self.key("r", replica)))

    # --- legacy sessions ------------------------------------------------------------------------

    async def add_session(self, record: SessionRecord, *, ttl: float, limit: int) -> bool:
        fields: list[Any] = [
            "v",
            record.version,
            "cc",
            json.dumps(record.client_capabilities),
            "ci",
            json.dumps(record.client_info),
            "ll",
            record.log_level,
            "in",
            "1" if record.initialized else "0",
            "c",
            json.dumps(record.caller),
        ]
        for uri in record.subscriptions:
            fields += ["u:" + uri, "1"]
        args = [limit, int(ttl * 1000), record.id, *fields]
        with self.guard():
            added = await self._add(keys=[self.key("sessions"), self.key("s", record.id)], args=args)
        return bool(added)

    async def load_session(self, session_id: str, *, ttl: float) -> SessionRecord | None:
        keys = [self.key("sessions"), self.key("s", session_id)]
        with self.guard():
            found = await self._load(keys=keys, args=[int(ttl * 1000), session_id, "1"])
        if not found:
            return None
        return _record(session_id, dict(zip(found[::2], found[1::2], strict=True)))

    async def touch_session(self, session_id: str, *, ttl: float) -> bool:
        keys = [self.key("sessions"), self.key("s", session_id)]
        with self.guard():
            return bool(await self._load(keys=keys, args=[int(ttl * 1000), session_id, "0"]))

    async def update_session(self, session_id: str, **changes: Any) -> bool:
        args: list[Any] = []
        if not changes:
            raise ValueError("update_session: give log_level= or initialized=")
        for name, value in changes.items():
            if name == "log_level":
                args += ["ll", value]
            elif name == "initialized":
                args += ["in", "1" if value else "0"]
            else:
                raise ValueError(f"update_session: {name!r} cannot change after initialize")
        with self.guard():
            return bool(await self._update(keys=[self.key("s", session_id)], args=args))

    async def subscribe(self, session_id: str, uri: str, subscribed: bool) -> bool:
        keys = [self.key("s", session_id)]
        with self.guard():
            if subscribed:
                return bool(await self._update(keys=keys, args=["u:" + uri, "1"]))
            return bool(await self._unsubscribe(keys=keys, args=["u:" + uri]))

    async def end_session(self, session_id: str) -> bool:
        with self.guard():
            async with self.client.pipeline(transaction=True) as pipe:
                pipe.delete(self.key("s", session_id))
                pipe.zrem(self.key("sessions"), session_id)
                pipe.delete(self.key("g", session_id))
                deleted, _, _ = await pipe.execute()
        return bool(deleted)

    async def clear_session_state(self, session_id: str) -> None:
        # Another replica may have kept it: the key goes whether or not this one made a state store.
        with self.guard():
            await self.client.delete(self.state_key(session_state_scope(session_id)))

    def state_key(self, scope: str) -> str:
        """The key of a state scope's hash (``redis_state``); braces keep a scope on one cluster slot."""
        return self.key("st", "{" + scope + "}")

    async def session_count(self) -> int:
        with self.guard():
            return int(await self._count(keys=[self.key("sessions")]))

    async def claim_get_stream(self, session_id: str, holder: str, *, ttl: float = GET_STREAM_CLAIM_SECONDS) -> bool:
        with self.guard():
            return bool(await self._claim(keys=[self.key("g", session_id)], args=[holder, int(ttl * 1000)]))

    async def release_get_stream(self, session_id: str, holder: str) -> None:
        with self.guard():
            await self._release(keys=[self.key("g", session_id)], args=[holder])


def _record(session_id: str, found: dict[bytes, bytes]) -> SessionRecord:
    text = {key.decode(): value.decode() for key, value in found.items()}
    return SessionRecord(
        id=session_id,
        version=text.get("v", ""),
        client_capabilities=json.loads(text.get("cc", "{}")),
        client_info=json.loads(text.get("ci", "{}")),
        log_level=text.get("ll", "debug"),
        initialized=text.get("in") == "1",
        subscriptions={key[2:] for key in text if key.startswith("u:")},
        caller=json.loads(text.get("c", "null")),
    )


class RedisEventStore(EventStore):
    """Resumable SSE streams on Redis Streams: a stream written on one replica resumes on any other.

    If the replica that owned a stream dies before finishing it, a client following it gets
    the events stored so far and then an error response for its request, never a hang.
    """

    def __init__(self, store: RedisStore, *, max_events_per_stream: int, ttl_seconds: float) -> None:
        super().__init__(max_events_per_stream=max_events_per_stream, ttl_seconds=ttl_seconds)
        self.store = store

    def _keys(self, stream_id: str) -> tuple[str, str]:
        return self.store.key("e", stream_id), self.store.key("em", stream_id)

    async def open(self, stream_id: str, *, session_id: str, request_id: RequestId) -> str:
        events, meta = self._keys(stream_id)
        ttl = int(self.ttl_seconds * 1000)
        owner = {"s": session_id, "r": json.dumps(request_id), "o": self.store.replica}
        with self.store.guard():
            async with self.store.client.pipeline(transaction=False) as pipe:
                pipe.hset(meta, mapping=owner)
                pipe.pexpire(meta, ttl)
                pipe.xadd(events, {"d": b""}, maxlen=self.max_events_per_stream, approximate=False)
                pipe.pexpire(events, ttl)
                _, _, entry, _ = await pipe.execute()
        return f"{stream_id}{SEPARATOR}{entry.decode()}"

    async def _add(self, stream_id: str, fields: dict[str, bytes]) -> str:
        events, meta = self._keys(stream_id)
        ttl = int(self.ttl_seconds * 1000)
        with self.store.guard():
            async with self.store.client.pipeline(transaction=False) as pipe:
                pipe.xadd(events, fields, maxlen=self.max_events_per_stream, approximate=False)
                pipe.pexpire(events, ttl)
                pipe.pexpire(meta, ttl)
                entry, _, _ = await pipe.execute()
        return f"{stream_id}{SEPARATOR}{entry.decode()}"

    async def append(self, stream_id: str, data: bytes) -> str:
        return await self._add(stream_id, {"d": data})

    async def finish(self, stream_id: str, data: bytes | None = None) -> str | None:
        # The last event carries the end mark: one entry, so a full stream never drops the response.
        fields = {"f": b"1"} if data is None else {"d": data, "f": b"1"}
        event_id = await self._add(stream_id, fields)
        return event_id if data is not None else None

    async def owner(self, event_id: str) -> str | None:
        stream_id, _, entry = event_id.rpartition(SEPARATOR)
        if not stream_id or _entry(entry) is None:
            return None
        events, meta = self._keys(stream_id)
        with self.store.guard():
            async with self.store.client.pipeline(transaction=False) as pipe:
                pipe.hget(meta, "s")
                pipe.xrevrange(events, count=1)
                session, last = await pipe.execute()
        if session is None or not last or _entry(entry) > _entry(last[0][0].decode()):  # type: ignore[operator]
            return None  # unknown stream, or an event it never had
        return str(session.decode())

    async def follow(self, event_id: str) -> AsyncIterator[tuple[str, bytes]]:
        stream_id, _, cursor = event_id.rpartition(SEPARATOR)
        events, meta = self._keys(stream_id)
        store = self.store
        block = max(100, min(FOLLOW_BLOCK_MS, int(store.timeout * 1000) // 2))
        missing_since: float | None = None
        while True:
            try:
                with store.guard():
                    found = await store.blocking.xread({events: cursor}, count=100, block=block)
            except ResponseError:
                return  # not an event id of ours (owner() checks, but the stream may have changed)
            if found:
                missing_since = None
                for entry, fields in found[0][1]:
                    cursor = entry.decode()
                    data = fields.get(b"d", b"")
                    if data or b"f" not in fields:
                        yield f"{stream_id}{SEPARATOR}{cursor}", data
                    if b"f" in fields:
                        return
                continue
            with store.guard():
                owner = await store.client.hmget(meta, ["o", "r"])
            if owner[0] is None:
                return  # the stream expired
            if await store.replica_alive(owner[0].decode()):
                missing_since = None
                continue
            # A lease can be missing for a moment while its replica is alive (Redis restarted
            # empty): the owner is dead only once its lease stayed away for two heartbeats.
            now = asyncio.get_running_loop().time()
            if missing_since is None:
                missing_since = now
            elif now - missing_since > 2 * HEARTBEAT_SECONDS:
                request_id = json.loads(owner[1]) if owner[1] is not None else None
                yield "", encode(error_reply(request_id, INTERNAL_ERROR, DEAD_OWNER_MESSAGE))
                return


def _entry(entry_id: str) -> tuple[int, int] | None:
    """A Redis Stream entry id (``<ms>-<seq>``) as a comparable pair; ``None`` if it is not one."""
    ms, dash, seq = entry_id.partition("-")
    if not dash or not ms.isdigit() or not seq.isdigit():
        return None
    return int(ms), int(seq)
