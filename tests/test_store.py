"""The store contract (``toolkit._store``), run against every implementation.

``MemoryStore`` (one process) and ``RedisStore`` (a REAL ``redis-server``, no mocks) must behave
alike wherever the ``Store`` interface promises something; two ``RedisStore`` instances on one
URL stand for two replicas. The event stores (``toolkit._events.EventStore`` in memory,
``RedisEventStore`` from ``RedisStore.events()``) get the same treatment.

One ``redis-server`` serves the whole file (``tests/support/redis_rig.py``), emptied before every
test that uses it; a test that stops it restarts it, and the next test restarts it anyway if a
failure left it stopped. Without ``redis-server`` installed the Redis cases skip (fail under
``TOOLKIT_TESTS_STRICT``); the memory cases still run.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import pytest
from tests.support.processes import free_port
from tests.support.redis_rig import RedisServer, redis_server

from toolkit._errors import INTERNAL_ERROR, McpError
from toolkit._events import SEPARATOR, EventStore
from toolkit._store.base import GET_STREAM_CLAIM_SECONDS
from toolkit._store.redis import FOLLOW_BLOCK_MS, HEARTBEAT_SECONDS
from toolkit._store.urls import open_store
from toolkit.stores import MemoryStore, RedisEventStore, RedisStore, SessionRecord, Store, StoreUnavailable

BUS = "toolkit:bus"
LONG = 60.0
"""A ttl (seconds) no test outlives."""


# --- fixtures ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def redis() -> Iterator[RedisServer]:
    """One real redis-server for the whole file."""
    with redis_server() as server:
        yield server


@pytest.fixture
def clean_redis(redis: RedisServer) -> RedisServer:
    """The server, running and empty."""
    if not redis.running:  # a test that stopped it failed before it could restart it
        redis.start()
    redis.flushall()
    return redis


class Replicas:
    """Started ``RedisStore`` instances (each one a replica), all closed at the end of the test."""

    def __init__(self) -> None:
        self.open: list[RedisStore] = []

    async def start(
        self, url: str, *, on_message: Callable[[dict[str, Any]], None] | None = None, **options: Any
    ) -> RedisStore:
        store = RedisStore(url, **options)
        self.open.append(store)
        await store.start(on_message)
        return store

    async def close(self, store: RedisStore) -> None:
        self.open.remove(store)
        await store.close()

    async def close_all(self) -> None:
        while self.open:
            await self.close(self.open[-1])


@pytest.fixture
async def replicas() -> AsyncIterator[Replicas]:
    made = Replicas()
    try:
        yield made
    finally:
        await made.close_all()


@pytest.fixture(params=["memory", "redis"])
async def store(request: pytest.FixtureRequest) -> AsyncIterator[Store]:
    """A started store of each kind; the Redis one is a replica of the file's redis-server."""
    made: Store = MemoryStore() if request.param == "memory" else RedisStore(request.getfixturevalue("clean_redis").url)
    try:
        await made.start()
        yield made
    finally:
        await made.close()


async def peer_of(store: Store, replicas: Replicas) -> Store:
    """Another replica of ``store``'s deployment (a memory store has only itself)."""
    if isinstance(store, RedisStore):
        return await replicas.start(store.url)
    return store


MakeEvents = Callable[..., Awaitable[EventStore]]


@pytest.fixture(params=["memory-events", "redis-events"])
async def make_events(request: pytest.FixtureRequest, replicas: Replicas) -> MakeEvents:
    """``await make_events(**options)``: an event store of each kind (options: ``max_events_per_stream``)."""
    url = request.getfixturevalue("clean_redis").url if request.param == "redis-events" else None

    async def make(**options: Any) -> EventStore:
        if url is None:
            return EventStore(**options)
        events = (await replicas.start(url, **options)).events()
        assert isinstance(events, RedisEventStore)
        return events

    return make


# --- helpers -------------------------------------------------------------------------------------


async def eventually(condition: Callable[[], bool], what: str, timeout: float = 5.0) -> None:
    """Wait until ``condition()`` holds (AssertionError naming ``what`` after ``timeout`` seconds)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout:g} s: {what}")
        await asyncio.sleep(0.01)


async def collect(events: EventStore, event_id: str, timeout: float = 5.0) -> list[tuple[str, bytes]]:
    """Everything ``follow(event_id)`` yields until it ends (AssertionError if it has not ended by ``timeout``)."""

    async def run() -> list[tuple[str, bytes]]:
        return [item async for item in events.follow(event_id)]

    try:
        return await asyncio.wait_for(run(), timeout)
    except TimeoutError:
        raise AssertionError(f"follow({event_id!r}) did not end within {timeout:g} s") from None


@contextlib.asynccontextmanager
async def following(events: EventStore, event_id: str, timeout: float = 5.0) -> AsyncIterator[asyncio.Task[Any]]:
    """``collect(events, event_id)`` as a task, cancelled at the end of the block if it is still running."""
    task = asyncio.create_task(collect(events, event_id, timeout))
    try:
        yield task
    finally:
        task.cancel()
        with contextlib.suppress(BaseException):
            await task


def xread_blocked(redis: RedisServer) -> bool:
    """Whether some client of the server is waiting in XREAD BLOCK right now."""
    listing = str(redis.command("CLIENT", "LIST"))  # one line per client: "id=3 addr=... cmd=xread ..."
    return any(" cmd=xread " in f" {line} " for line in listing.splitlines())


def session_key_exists(redis: RedisServer, session_id: str) -> bool:
    return bool(redis.command("EXISTS", f"toolkit:s:{session_id}"))


def record(session_id: str, **fields: Any) -> SessionRecord:
    return SessionRecord(id=session_id, version="2025-06-18", **fields)


# --- sessions: the record -------------------------------------------------------------------------


async def test_a_session_round_trips_every_field(store: Store) -> None:
    def full() -> SessionRecord:  # built twice: the expected value is not the object handed to the store
        return SessionRecord(
            id="full-1",
            version="2025-03-26",
            client_capabilities={
                "roots": {"listChanged": True},
                "sampling": {},
                "experimental": {"x": {"deep": [1, 2.5, {"k": None, "b": False}], "s": "é ✓"}},
            },
            client_info={"name": "probe", "version": "1.2.3", "title": "Prøbe ✓"},
            log_level="warning",
            initialized=True,
            subscriptions={"file:///a b/c d.txt", "urn:x:y:z", "mem://host:8080/p a:th?q=1"},
            caller="subject:user 42",
        )

    def bare() -> SessionRecord:
        return SessionRecord(id="bare-1", version="2025-11-25")

    assert await store.add_session(full(), ttl=LONG, limit=10) is True
    assert await store.add_session(bare(), ttl=LONG, limit=10) is True

    loaded = await store.load_session("full-1", ttl=LONG)
    assert loaded == full()
    assert loaded is not None
    assert loaded.caller == "subject:user 42"
    assert loaded.initialized is True

    loaded_bare = await store.load_session("bare-1", ttl=LONG)
    assert loaded_bare == bare()
    assert loaded_bare is not None
    assert loaded_bare.caller is None
    assert loaded_bare.initialized is False
    assert loaded_bare.log_level == "debug"
    assert loaded_bare.subscriptions == set()
    assert loaded_bare.client_capabilities == {}

    assert await store.load_session("no-such-session", ttl=LONG) is None


async def test_the_session_limit_refuses_the_one_too_many_until_one_ends(store: Store) -> None:
    for n in range(3):
        assert await store.add_session(record(f"lim-{n}"), ttl=LONG, limit=3) is True
    assert await store.add_session(record("lim-3"), ttl=LONG, limit=3) is False
    assert await store.load_session("lim-3", ttl=LONG) is None, "a refused session was kept"
    assert await store.session_count() == 3

    assert await store.end_session("lim-1") is True
    assert await store.add_session(record("lim-3"), ttl=LONG, limit=3) is True
    assert await store.load_session("lim-3", ttl=LONG) is not None
    assert await store.add_session(record("lim-4"), ttl=LONG, limit=3) is False


async def test_idle_sessions_expire_unless_loaded_or_touched(store: Store) -> None:
    ttl = 1.0  # five times the refresh interval below: a busy machine's late wake-up does not expire one
    for name in ("idle", "loaded", "touched"):
        assert await store.add_session(record(name), ttl=ttl, limit=10) is True
    # 8 rounds of 0.2 s (1.6 s, more than the ttl): "loaded" and "touched" are kept alive.
    for _ in range(8):
        await asyncio.sleep(0.2)
        assert await store.load_session("loaded", ttl=ttl) is not None, "a load did not keep the session alive"
        assert await store.touch_session("touched", ttl=ttl) is True, "a touch did not keep the session alive"
    assert await store.load_session("idle", ttl=ttl) is None, "an idle session outlived its ttl"
    assert await store.touch_session("never-existed", ttl=ttl) is False

    await asyncio.sleep(1.5)  # nobody refreshes them any more: they go too
    assert await store.load_session("loaded", ttl=ttl) is None
    assert await store.load_session("touched", ttl=ttl) is None


async def test_update_session_changes_the_level_and_initialized_flag_of_live_sessions_only(
    store: Store, request: pytest.FixtureRequest
) -> None:
    assert await store.add_session(record("upd"), ttl=LONG, limit=10) is True
    assert await store.update_session("upd", log_level="error", initialized=True) is True
    loaded = await store.load_session("upd", ttl=LONG)
    assert loaded is not None
    assert (loaded.log_level, loaded.initialized) == ("error", True)
    assert await store.update_session("upd", log_level="info") is True
    loaded = await store.load_session("upd", ttl=LONG)
    assert loaded is not None
    assert (loaded.log_level, loaded.initialized) == ("info", True)

    with pytest.raises(ValueError, match="version"):
        await store.update_session("upd", version="2024-11-05")

    assert await store.end_session("upd") is True
    redis = request.getfixturevalue("clean_redis") if isinstance(store, RedisStore) else None
    keys_before = redis.keys_count() if redis else 0
    assert await store.update_session("upd", log_level="debug") is False
    assert await store.update_session("never-existed", initialized=True) is False
    assert await store.load_session("upd", ttl=LONG) is None, "an update recreated an ended session"
    assert await store.session_count() == 0
    if redis:
        assert not session_key_exists(redis, "upd"), "an update recreated the ended session's hash"
        assert not session_key_exists(redis, "never-existed")
        assert redis.keys_count() == keys_before


async def test_a_refused_update_writes_nothing(store: Store) -> None:
    """A call that raises ValueError must not have applied part of its changes."""
    assert await store.add_session(record("atomic"), ttl=LONG, limit=10) is True
    with pytest.raises(ValueError, match="version"):
        await store.update_session("atomic", log_level="error", version="2024-11-05")
    loaded = await store.load_session("atomic", ttl=LONG)
    assert loaded is not None
    assert loaded.log_level == "debug", "update_session applied log_level before refusing the call"


async def test_subscriptions_are_added_and_removed_only_on_live_sessions(
    store: Store, request: pytest.FixtureRequest
) -> None:
    uris = ["file:///with space/and:colon.txt", "urn:a:b:c", "mem://h:1/x y?z=1:2", "u:prefixed"]
    assert await store.add_session(record("subs"), ttl=LONG, limit=10) is True
    for uri in uris:
        assert await store.subscribe("subs", uri, True) is True
    assert await store.subscribe("subs", uris[0], True) is True  # twice: still one subscription
    loaded = await store.load_session("subs", ttl=LONG)
    assert loaded is not None
    assert loaded.subscriptions == set(uris)

    assert await store.subscribe("subs", uris[1], False) is True
    assert await store.subscribe("subs", "urn:never-subscribed", False) is True
    loaded = await store.load_session("subs", ttl=LONG)
    assert loaded is not None
    assert loaded.subscriptions == set(uris) - {uris[1]}

    assert await store.end_session("subs") is True
    assert await store.subscribe("subs", "urn:late", True) is False
    assert await store.subscribe("subs", uris[0], False) is False
    assert await store.subscribe("never-existed", "urn:late", True) is False
    assert await store.load_session("subs", ttl=LONG) is None, "a subscribe recreated an ended session"
    if isinstance(store, RedisStore):
        redis = request.getfixturevalue("clean_redis")
        assert not session_key_exists(redis, "subs")
        assert not session_key_exists(redis, "never-existed")


async def test_end_session_is_true_exactly_once_even_when_replicas_race(store: Store, replicas: Replicas) -> None:
    assert await store.add_session(record("end"), ttl=LONG, limit=100) is True
    assert await store.end_session("end") is True
    assert await store.end_session("end") is False
    assert await store.load_session("end", ttl=LONG) is None
    assert await store.end_session("never-existed") is False

    peer = await peer_of(store, replicas)  # for Redis: a second replica on the same server
    for n in range(20):
        assert await store.add_session(record(f"race-{n}"), ttl=LONG, limit=100) is True
    for n in range(20):
        ended = await asyncio.gather(store.end_session(f"race-{n}"), peer.end_session(f"race-{n}"))
        assert sorted(ended) == [False, True], f"race-{n}: {ended}"
        assert await peer.load_session(f"race-{n}", ttl=LONG) is None
    assert await store.session_count() == 0


async def test_ending_an_expired_session_is_not_ending_it(store: Store) -> None:
    """An expired session is gone (load gives None): ending it afterwards must answer False, as for any unknown id."""
    assert await store.add_session(record("lapsed"), ttl=0.2, limit=10) is True
    await asyncio.sleep(0.4)
    assert await store.end_session("lapsed") is False


async def test_session_count_follows_adds_ends_and_expiry(store: Store) -> None:
    assert await store.session_count() == 0
    assert await store.add_session(record("c-long-1"), ttl=LONG, limit=10) is True
    assert await store.add_session(record("c-long-2"), ttl=LONG, limit=10) is True
    assert await store.add_session(record("c-short"), ttl=0.3, limit=10) is True
    assert await store.session_count() == 3
    assert await store.end_session("c-long-1") is True
    assert await store.session_count() == 2
    await asyncio.sleep(0.5)
    assert await store.session_count() == 1


async def test_loading_an_expired_session_does_not_bring_it_back(store: Store) -> None:
    """After expiry, a client that keeps sending its old session id must not keep a slot (or the count) taken."""
    assert await store.add_session(record("ghost"), ttl=0.3, limit=1) is True
    await asyncio.sleep(0.5)
    assert await store.load_session("ghost", ttl=LONG) is None
    assert await store.session_count() == 0, "the expired session is counted again after a load"
    assert await store.add_session(record("next"), ttl=LONG, limit=1) is True, "the expired session holds the slot"


async def test_a_flood_of_adds_stops_exactly_at_the_limit(store: Store, request: pytest.FixtureRequest) -> None:
    added = 0
    for batch in range(200):  # 10,000 attempts, 50 at a time (within redis-py's pool of 100 connections)
        results = await asyncio.gather(
            *(store.add_session(record(f"flood-{batch}-{n}"), ttl=LONG, limit=1000) for n in range(50))
        )
        added += sum(results)
    assert added == 1000
    assert await store.session_count() == 1000
    if isinstance(store, RedisStore):
        keys = request.getfixturevalue("clean_redis").keys_count()
        # Measured: 1002 = 1000 session hashes + the "sessions" sorted set + this replica's lease.
        assert 1000 < keys <= 1000 + 3, keys


async def test_more_concurrent_calls_than_connections_wait_for_one(store: Store) -> None:
    """A replica under load (hundreds of requests in flight) must queue on the store, not answer 503."""
    results = await asyncio.gather(
        *(store.add_session(record(f"busy-{n}"), ttl=LONG, limit=10_000) for n in range(300))
    )
    assert results == [True] * 300
    loaded = await asyncio.gather(*(store.load_session(f"busy-{n}", ttl=LONG) for n in range(300)))
    assert [session.id if session else None for session in loaded] == [f"busy-{n}" for n in range(300)]


# --- the GET stream claim -------------------------------------------------------------------------


async def test_one_holder_claims_a_sessions_get_stream(store: Store, replicas: Replicas) -> None:
    peer = await peer_of(store, replicas)
    assert await store.claim_get_stream("sess", "replica-a:1") is True
    assert await peer.claim_get_stream("sess", "replica-b:1") is False
    assert await store.claim_get_stream("sess", "replica-a:1") is True  # a refresh
    assert await store.claim_get_stream("other-sess", "replica-b:1") is True  # claims are per session

    await peer.release_get_stream("sess", "replica-b:1")  # not the holder: nothing changes
    assert await peer.claim_get_stream("sess", "replica-b:1") is False
    await store.release_get_stream("sess", "replica-a:1")
    assert await peer.claim_get_stream("sess", "replica-b:1") is True
    assert await store.claim_get_stream("sess", "replica-a:1") is False


async def test_a_get_stream_claim_lapses_unless_refreshed(store: Store) -> None:
    assert GET_STREAM_CLAIM_SECONDS > 1
    assert await store.claim_get_stream("lapse", "a", ttl=0.3) is True
    await asyncio.sleep(0.2)
    assert await store.claim_get_stream("lapse", "a", ttl=0.3) is True  # refreshed: held until ~0.5 s
    await asyncio.sleep(0.2)
    assert await store.claim_get_stream("lapse", "b", ttl=0.3) is False, "the refresh did not extend the claim"
    await asyncio.sleep(0.5)
    assert await store.claim_get_stream("lapse", "b", ttl=0.3) is True, "the claim did not lapse"
    assert await store.claim_get_stream("lapse", "a", ttl=0.3) is False


async def test_ending_a_session_frees_its_get_stream(store: Store, request: pytest.FixtureRequest) -> None:
    assert await store.add_session(record("with-get"), ttl=LONG, limit=10) is True
    assert await store.claim_get_stream("with-get", "a") is True
    assert await store.end_session("with-get") is True
    if isinstance(store, RedisStore):
        assert not request.getfixturevalue("clean_redis").command("EXISTS", "toolkit:g:with-get")
    assert await store.claim_get_stream("with-get", "b") is True


# --- the bus ----------------------------------------------------------------------------------------


async def test_the_memory_bus_delivers_to_itself_in_order() -> None:
    got: list[dict[str, Any]] = []
    store = MemoryStore()
    await store.start(got.append)
    try:
        for n in range(50):
            await store.publish({"t": "n", "n": n})
        await eventually(lambda: len(got) >= 50, "50 messages")
        await asyncio.sleep(0.05)
        assert got == [{"t": "n", "n": n} for n in range(50)]
    finally:
        await store.close()


async def test_the_bus_carries_every_message_to_every_replica_in_one_order(
    clean_redis: RedisServer, replicas: Replicas
) -> None:
    got_a: list[dict[str, Any]] = []
    got_b: list[dict[str, Any]] = []
    a = await replicas.start(clean_redis.url, on_message=got_a.append)
    b = await replicas.start(clean_redis.url, on_message=got_b.append)
    sent = [{"t": "n", "n": n, "from": "a" if n % 3 else "b", "payload": {"nested": [n, str(n)]}} for n in range(50)]
    for message in sent:  # both replicas publish, one after the other: everyone sees this one order
        await (a if message["from"] == "a" else b).publish(message)
    await eventually(lambda: len(got_a) >= 50 and len(got_b) >= 50, "50 messages on both replicas")
    await asyncio.sleep(0.1)  # anything extra (a duplicate) would arrive now
    assert got_a == sent
    assert got_b == sent


async def test_the_bus_ignores_malformed_messages_and_survives_a_failing_handler(
    clean_redis: RedisServer, replicas: Replicas
) -> None:
    got: list[dict[str, Any]] = []

    def on_message(message: dict[str, Any]) -> None:
        got.append(message)
        if message.get("boom"):
            raise RuntimeError("a handler bug")

    a = await replicas.start(clean_redis.url, on_message=on_message)
    b = await replicas.start(clean_redis.url)
    for raw in ("not json{", "[1, 2]", '"a string"', "42", b"\xff\xfe\x00"):
        clean_redis.command("PUBLISH", BUS, raw)
    await b.publish({"t": "first", "boom": True})
    await b.publish({"t": "second"})
    await eventually(lambda: len(got) >= 2, "the well-formed messages")
    await asyncio.sleep(0.1)
    assert got == [{"t": "first", "boom": True}, {"t": "second"}]
    await a.publish({"t": "third"})
    await eventually(lambda: len(got) >= 3, "a message after the failing handler")
    assert got[-1] == {"t": "third"}


# --- replicas and the shared secret ------------------------------------------------------------------


async def test_a_memory_store_is_its_only_live_replica_and_has_no_shared_secret() -> None:
    store = MemoryStore()
    await store.start()
    try:
        assert await store.replica_alive(store.replica) is True
        assert await store.replica_alive("someone-else") is False
        assert await store.shared_secret() is None
        assert store.shared is False
    finally:
        await store.close()


async def test_a_replica_is_alive_while_started_and_dead_once_closed(
    clean_redis: RedisServer, replicas: Replicas
) -> None:
    a = await replicas.start(clean_redis.url)
    b = await replicas.start(clean_redis.url)
    assert a.shared is True
    assert a.replica != b.replica
    assert a.request_id_base != b.request_id_base, "two replicas would number their requests alike"
    assert await b.replica_alive(a.replica) is True
    assert await a.replica_alive(b.replica) is True
    assert await b.replica_alive("never-started") is False
    await replicas.close(a)
    assert await b.replica_alive(a.replica) is False
    assert not clean_redis.command("EXISTS", f"toolkit:r:{a.replica}")


async def test_replicas_agree_on_one_shared_secret(clean_redis: RedisServer, replicas: Replicas) -> None:
    a = await replicas.start(clean_redis.url)
    b = await replicas.start(clean_redis.url)
    first = await a.shared_secret()
    assert isinstance(first, bytes)
    assert len(first) >= 32
    assert await b.shared_secret() == first
    assert await a.shared_secret() == first
    assert await b.shared_secret() == first


# --- event stores -------------------------------------------------------------------------------------


async def test_an_event_stream_replays_in_order_and_knows_its_session(make_events: MakeEvents) -> None:
    events = await make_events()
    priming = await events.open("stream-1", session_id="sess-1", request_id=7)
    assert events.stream_of(priming) == "stream-1"
    ids = [await events.append("stream-1", f'{{"n":{n}}}'.encode()) for n in range(1, 4)]
    assert len(set(ids)) == 3
    assert priming not in ids
    await events.finish("stream-1")

    for event_id in (priming, *ids):
        assert await events.owner(event_id) == "sess-1"
    for junk in ("junk", "", SEPARATOR, f"no-such-stream{SEPARATOR}0", f"no-such-stream{SEPARATOR}1-0"):
        assert await events.owner(junk) is None, junk

    assert await collect(events, priming) == [(ids[n], f'{{"n":{n + 1}}}'.encode()) for n in range(3)]
    assert await collect(events, ids[1]) == [(ids[2], b'{"n":3}')]
    assert await collect(events, ids[2]) == []  # finished: ends at once


async def test_an_event_id_the_store_never_issued_has_no_owner(make_events: MakeEvents) -> None:
    """``owner`` decides whether a client's ``Last-Event-ID`` may resume; an id never handed out must not."""
    events = await make_events()
    priming = await events.open("stream-2", session_id="sess-2", request_id=1)
    last = await events.append("stream-2", b"{}")
    await events.finish("stream-2")
    assert await events.owner(last) == "sess-2"
    assert await events.owner(f"stream-2{SEPARATOR}junk") is None, "a junk cursor on a known stream has an owner"
    assert await events.owner(priming) == "sess-2"


async def test_an_event_id_after_the_last_one_has_no_owner(make_events: MakeEvents) -> None:
    events = await make_events()
    await events.open("stream-3", session_id="sess-3", request_id=1)
    last = await events.append("stream-3", b"{}")
    stream, _, tail = last.rpartition(SEPARATOR)
    if tail.isdigit():  # the memory store's ids: a sequence number
        later = f"{stream}{SEPARATOR}{int(tail) + 1}"
    else:  # Redis Stream entry ids: MILLISECONDS-SEQUENCE
        ms, _, seq = tail.partition("-")
        later = f"{stream}{SEPARATOR}{ms}-{int(seq) + 1}"
    assert await events.owner(later) is None, f"{later!r} was never issued"


async def test_a_follower_receives_live_events_and_ends_when_the_stream_finishes(
    make_events: MakeEvents, request: pytest.FixtureRequest
) -> None:
    events = await make_events()
    priming = await events.open("live", session_id="sess", request_id="r1")
    async with following(events, priming) as follower:
        if isinstance(events, RedisEventStore):  # really waiting on Redis before anything is appended
            redis = request.getfixturevalue("clean_redis")
            await eventually(lambda: xread_blocked(redis), "the follower to block in XREAD")
        else:
            await asyncio.sleep(0.05)
        assert not follower.done()
        ids = []
        for n in range(3):
            ids.append(await events.append("live", f"event {n}".encode()))
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.1)
        assert not follower.done(), "the follower ended before the stream finished"
        await events.finish("live")
        got = await asyncio.wait_for(follower, 5)
    assert got == [(ids[n], f"event {n}".encode()) for n in range(3)]


async def test_a_stream_keeps_at_most_max_events_and_always_the_last(
    make_events: MakeEvents, request: pytest.FixtureRequest
) -> None:
    events = await make_events(max_events_per_stream=4)
    priming = await events.open("capped", session_id="sess", request_id=1)
    sent = [(await events.append("capped", str(n).encode()), str(n).encode()) for n in range(1, 11)]
    await events.finish("capped")
    got = await collect(events, priming)
    # Memory keeps the last 4 events; Redis the last 3, the finish marker taking the 4th place.
    assert 3 <= len(got) <= 4, got
    assert got == sent[-len(got) :]
    assert got[-1] == sent[-1]
    assert await events.owner(priming) == "sess"
    if isinstance(events, RedisEventStore):
        # RedisEventStore._add trims with XADD MAXLEN = max_events_per_stream (exact) for the
        # finish marker too, so the marker is within the bound, not on top of it.
        assert int(request.getfixturevalue("clean_redis").command("XLEN", "toolkit:e:capped")) <= 4


async def test_a_stream_capped_at_one_event_still_delivers_its_response(make_events: MakeEvents) -> None:
    """EventStore.append: "forgets its oldest events, never its newest: the last one is the response"."""
    events = await make_events(max_events_per_stream=1)
    priming = await events.open("tiny", session_id="sess", request_id=1)
    response = await events.finish("tiny", b'{"jsonrpc":"2.0","id":1,"result":{}}')
    assert response is not None
    assert await collect(events, priming) == [(response, b'{"jsonrpc":"2.0","id":1,"result":{}}')]


# --- event streams across Redis replicas ---------------------------------------------------------------


async def test_a_stream_written_on_one_replica_resumes_on_another(clean_redis: RedisServer, replicas: Replicas) -> None:
    a = await replicas.start(clean_redis.url)
    b = await replicas.start(clean_redis.url)
    events_a, events_b = a.events(), b.events()
    assert events_a is not None
    assert events_b is not None

    priming = await events_a.open("shared", session_id="sess-x", request_id=3)
    ids = [await events_a.append("shared", f"e{n}".encode()) for n in range(3)]
    await events_a.finish("shared")
    assert await events_b.owner(ids[0]) == "sess-x"
    assert await collect(events_b, priming) == [(ids[n], f"e{n}".encode()) for n in range(3)]
    assert await collect(events_b, ids[0]) == [(ids[1], b"e1"), (ids[2], b"e2")]

    # Live: B follows while A writes.
    priming = await events_a.open("shared-live", session_id="sess-x", request_id=4)
    async with following(events_b, priming) as follower:
        await eventually(lambda: xread_blocked(clean_redis), "B to block in XREAD")
        live = [await events_a.append("shared-live", f"l{n}".encode()) for n in range(2)]
        await events_a.finish("shared-live")
        assert await asyncio.wait_for(follower, 5) == [(live[0], b"l0"), (live[1], b"l1")]


@pytest.mark.timeout(25)
async def test_a_stream_whose_replica_died_ends_with_an_error_for_its_request(
    clean_redis: RedisServer, replicas: Replicas
) -> None:
    a = await replicas.start(clean_redis.url)
    b = await replicas.start(clean_redis.url)
    events_a, events_b = a.events(), b.events()
    assert events_a is not None
    assert events_b is not None
    priming = await events_a.open("orphan", session_id="sess", request_id="call-7")
    ids = [await events_a.append("orphan", f"e{n}".encode()) for n in range(2)]
    await replicas.close(a)  # without finish(); close() deletes A's lease
    assert await b.replica_alive(a.replica) is False

    # A liveness bound, not a speed check: the follower takes the owner for dead once its lease
    # has stayed away for two heartbeats, noticed between blocking reads.
    got = await collect(events_b, priming, timeout=3 * (FOLLOW_BLOCK_MS / 1000) + 2 * HEARTBEAT_SECONDS + 5)
    assert got[:2] == [(ids[0], b"e0"), (ids[1], b"e1")]
    assert len(got) == 3, got
    last_id, last = got[2]
    assert last_id == ""
    reply = json.loads(last)
    assert reply["jsonrpc"] == "2.0"
    assert reply["id"] == "call-7"
    assert "result" not in reply
    assert reply["error"]["code"] == INTERNAL_ERROR
    assert "stopped" in reply["error"]["message"]


@pytest.mark.timeout(10)
async def test_a_follower_waits_on_a_quiet_stream_whatever_the_store_timeout(
    clean_redis: RedisServer, replicas: Replicas
) -> None:
    """A resumed stream may be quiet for long (a slow tool); a short store timeout must not cut it off."""
    store = await replicas.start(clean_redis.url, timeout=1.0)
    events = store.events()
    assert events is not None
    priming = await events.open("quiet", session_id="sess", request_id=1)
    async with following(events, priming) as follower:
        await asyncio.sleep(1.5)  # quiet for longer than the timeout, shorter than FOLLOW_BLOCK_MS
        event = await events.append("quiet", b"late")
        await events.finish("quiet")
        assert await asyncio.wait_for(follower, 5) == [(event, b"late")]


# --- Redis outages --------------------------------------------------------------------------------------


def assert_unavailable(exc: BaseException, url: str) -> None:
    assert isinstance(exc, StoreUnavailable)
    assert isinstance(exc, McpError)
    assert exc.http_status == 503
    assert exc.code == INTERNAL_ERROR
    assert url in exc.message
    assert url in str(exc)


@pytest.mark.timeout(30)
async def test_a_stopped_redis_fails_fast_with_store_unavailable_and_service_resumes(
    clean_redis: RedisServer, replicas: Replicas
) -> None:
    url = clean_redis.url
    got: list[dict[str, Any]] = []
    store = await replicas.start(url, timeout=1.0, on_message=got.append)
    assert await store.add_session(record("before"), ttl=LONG, limit=10) is True
    events = store.events()
    assert events is not None

    operations: dict[str, Callable[[], Awaitable[Any]]] = {
        "load_session": lambda: store.load_session("before", ttl=LONG),
        "add_session": lambda: store.add_session(record("during"), ttl=LONG, limit=10),
        "publish": lambda: store.publish({"t": "lost"}),
        "touch_session": lambda: store.touch_session("before", ttl=LONG),
        "update_session": lambda: store.update_session("before", log_level="info"),
        "subscribe": lambda: store.subscribe("before", "urn:x", True),
        "end_session": lambda: store.end_session("before"),
        "session_count": store.session_count,
        "claim_get_stream": lambda: store.claim_get_stream("before", "h"),
        "replica_alive": lambda: store.replica_alive(store.replica),
        "shared_secret": store.shared_secret,
        "events.open": lambda: events.open("s", session_id="before", request_id=1),
    }
    clean_redis.stop()
    try:
        for name, operation in operations.items():
            started = time.monotonic()
            with pytest.raises(StoreUnavailable) as caught:
                await operation()
            elapsed = time.monotonic() - started
            assert_unavailable(caught.value, url)
            # Liveness ("nothing hangs"), with a wide margin for a loaded machine: not a speed check.
            assert elapsed < store.timeout + 3.0, f"{name} took {elapsed:.2f} s"
    finally:
        clean_redis.start()  # empty again: nothing is persisted

    # The same store object works again.
    assert await store.add_session(record("after"), ttl=LONG, limit=10) is True
    loaded = await store.load_session("after", ttl=LONG)
    assert loaded is not None
    assert loaded.id == "after"
    assert await store.session_count() == 1
    # ...and so does its bus, once its listener has reconnected (what was published meanwhile is lost).
    deadline = time.monotonic() + 8
    while {"t": "back"} not in got:
        assert time.monotonic() < deadline, f"the bus did not come back: {got}"
        await store.publish({"t": "back"})
        await asyncio.sleep(0.2)
    assert {"t": "lost"} not in got
    assert {"t": "resync"} in got, "the replica is told its bus was down, so it can check its copies again"


@pytest.mark.timeout(20)
async def test_a_hung_redis_fails_within_the_store_timeout(clean_redis: RedisServer, replicas: Replicas) -> None:
    url = clean_redis.url
    store = await replicas.start(url, timeout=0.5)
    pid = int(clean_redis.command("INFO", "server")["process_id"])
    os.kill(pid, signal.SIGSTOP)  # accepts connections (the kernel does) but never answers
    try:
        for name, operation in {
            "load_session": lambda: store.load_session("x", ttl=LONG),
            "add_session": lambda: store.add_session(record("x"), ttl=LONG, limit=10),
            "publish": lambda: store.publish({"t": "x"}),
            "start": lambda: replicas.start(url, timeout=0.5),
        }.items():
            started = time.monotonic()
            with pytest.raises(StoreUnavailable) as caught:
                await operation()
            elapsed = time.monotonic() - started
            assert_unavailable(caught.value, url)
            # Liveness: a hung Redis costs the store's timeout (0.5 s here), not forever.
            assert elapsed < 0.5 + 3.0, f"{name} took {elapsed:.2f} s against a 0.5 s timeout"
    finally:
        os.kill(pid, signal.SIGCONT)
    assert await store.load_session("nobody", ttl=LONG) is None  # answers again


@pytest.mark.timeout(10)
async def test_starting_against_no_redis_fails_naming_the_url(replicas: Replicas) -> None:
    url = f"redis://127.0.0.1:{free_port()}/0"
    started = time.monotonic()
    with pytest.raises(StoreUnavailable) as caught:
        await replicas.start(url, timeout=1.0)
    assert_unavailable(caught.value, url)
    assert time.monotonic() - started < 1.0 + 3.0, "liveness: refused within the 1 s timeout (wide margin)"

    secret_url = f"redis://:hunter2@127.0.0.1:{free_port()}/0"
    with pytest.raises(StoreUnavailable) as caught:
        await replicas.start(secret_url, timeout=1.0)
    assert "hunter2" not in caught.value.message, "the password leaked into the error"
    assert secret_url.replace("hunter2", "***") in caught.value.message


async def test_the_first_call_after_redis_restarted_succeeds(clean_redis: RedisServer, replicas: Replicas) -> None:
    """Redis went away and came back while the replica was idle: the next request must be served, not get a 503.

    (With Redis stopped meanwhile and called, the dropped connections are noticed then; here nothing
    called it while it was down, so the pool still holds connections Redis closed.)
    """
    store = await replicas.start(clean_redis.url)
    assert await store.add_session(record("warm"), ttl=LONG, limit=10) is True
    clean_redis.restart()  # up again, empty, before anyone calls
    assert await store.load_session("warm", ttl=LONG) is None
    assert await store.add_session(record("fresh"), ttl=LONG, limit=10) is True


@pytest.mark.timeout(15)
async def test_a_live_replica_is_not_taken_for_dead_when_its_lease_is_missing_for_a_moment(
    clean_redis: RedisServer, replicas: Replicas
) -> None:
    """Redis restarted empty (no persistence): a replica's lease is gone until its next heartbeat.

    A follower on another replica must not end a live stream with the "server process stopped"
    error meanwhile. Here A's heartbeat is held back and its lease deleted, as after a restart,
    so B finds the lease missing at every check until A writes again.
    """
    b = await replicas.start(clean_redis.url)
    a = await replicas.start(clean_redis.url)
    heartbeat = a._tasks[0]
    heartbeat.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await heartbeat
    events_a, events_b = a.events(), b.events()
    assert events_a is not None
    assert events_b is not None
    priming = await events_a.open("lease-gap", session_id="sess", request_id=9)
    clean_redis.command("DEL", f"toolkit:r:{a.replica}")
    assert await b.replica_alive(a.replica) is False
    async with following(events_b, priming, timeout=10) as follower:
        await asyncio.sleep(FOLLOW_BLOCK_MS / 1000 + 0.3)  # B's XREAD times out and B finds no lease
        event = await events_a.append("lease-gap", b"still here")
        await events_a.finish("lease-gap")
        assert await asyncio.wait_for(follower, 8) == [(event, b"still here")]


# --- open_store -------------------------------------------------------------------------------------


async def test_open_store_picks_the_store_a_url_names(clean_redis: RedisServer) -> None:
    for url in ("memory", "", "memory://"):
        assert isinstance(open_store(url), MemoryStore), url
    opened = open_store(clean_redis.url)
    try:
        assert isinstance(opened, RedisStore)
        assert opened.url == clean_redis.url
        assert isinstance(opened.events(), RedisEventStore)
    finally:
        await opened.close()
    not_resumable = RedisStore(clean_redis.url, resumable=False)
    try:
        assert not_resumable.events() is None
    finally:
        await not_resumable.close()
    with pytest.raises(ValueError, match="'http://x'"):
        open_store("http://x")
    with pytest.raises(ValueError, match="'http://x'"):
        RedisStore("http://x")
