"""State kept between calls (``toolkit._state``, ``toolkit._store.state``).

The ``StateStore`` contract runs against ``MemoryStore().state()`` and two ``RedisStore(url).state()``
replicas of a REAL ``redis-server`` (no mocks): what one writes the other reads, a conditional
write and ``incr`` never lose a concurrent change, the bounds refuse what does not fit and say
which, values and handles expire. Then ``ctx.state`` and the built-in dependencies in process,
in both eras: per-user isolation, session handles bound to their user, request state, models.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from typing import Annotated, Any

import pytest
from pydantic import BaseModel
from tests.http_support import serve
from tests.support.redis_rig import RedisServer, redis_server, replica_stores

import toolkit
from toolkit import (
    Context,
    Depends,
    LocalUserState,
    RequestState,
    Server,
    ServerStore,
    SessionState,
    State,
    StateError,
    StateLimitError,
    StateLimits,
    UserState,
)
from toolkit._store.base import session_state_scope
from toolkit._store.state import StateStore
from toolkit.auth import AccessToken
from toolkit.stores import MemoryStore, RedisStore, Store
from toolkit.testing import Client

pytestmark = pytest.mark.timeout(30)

MODERN, LEGACY = "2026-07-28", "2025-11-25"
ERAS = (MODERN, LEGACY)
TTL = 60.0


@pytest.fixture(scope="module")
def redis() -> Iterator[RedisServer]:
    with redis_server() as server:
        yield server


@pytest.fixture(params=["memory", "redis"])
async def stores(request: pytest.FixtureRequest) -> AsyncIterator[tuple[StateStore, StateStore]]:
    """Two replicas' state stores of one deployment (a memory store is its only replica)."""
    async with replica_stores(request) as (one, other):
        yield one.state(), other.state()


# --- the contract ----------------------------------------------------------------------------------


async def test_values_are_kept_per_scope_and_seen_by_every_replica(stores: tuple[StateStore, StateStore]) -> None:
    one, two = stores
    assert await two.get("u.a", "cart") is None
    assert await one.put("u.a", "cart", '{"items":["tea"],"n":1.5}', ttl=TTL)
    assert await two.get("u.a", "cart") == '{"items":["tea"],"n":1.5}'  # the text as written, never re-encoded
    assert await two.get("u.b", "cart") is None  # another scope
    await two.put("u.a", "note", '"é ✓"', ttl=TTL)
    assert await one.names("u.a") == ["cart", "note"]
    assert await one.delete("u.a", "note") is True
    assert await two.delete("u.a", "note") is False
    await one.clear("u.a")
    assert await two.names("u.a") == []
    assert await two.get("u.a", "cart") is None


async def test_a_conditional_write_happens_only_on_the_text_it_expects(stores: tuple[StateStore, StateStore]) -> None:
    one, two = stores
    assert await one.put("s.x", "n", "1", ttl=TTL, expect=None)  # absent, as expected
    assert not await two.put("s.x", "n", "2", ttl=TTL, expect=None)  # no longer absent
    assert not await two.put("s.x", "n", "2", ttl=TTL, expect="0")
    assert await two.put("s.x", "n", "2", ttl=TTL, expect="1")
    assert await one.get("s.x", "n") == "2"


async def test_incr_counts_every_concurrent_call_exactly(stores: tuple[StateStore, StateStore]) -> None:
    one, two = stores
    counts = await asyncio.gather(*(store.incr("u.a", "calls", 1, ttl=TTL) for store in (one, two) * 100))
    assert sorted(counts) == list(range(1, 201))  # each call saw its own count
    assert await one.get("u.a", "calls") == "200"
    assert await two.incr("u.a", "calls", -250, ttl=TTL) == -50
    await one.put("u.a", "name", '"ada"', ttl=TTL)
    with pytest.raises(StateError, match=r"state 'name' holds \"ada\", not an integer"):
        await two.incr("u.a", "name", 1, ttl=TTL)
    await one.put("u.a", "big", str(2**53 - 1), ttl=TTL)
    with pytest.raises(StateError, match=r"past ±2\*\*53"):
        await two.incr("u.a", "big", 1, ttl=TTL)
    assert await one.get("u.a", "big") == str(2**53 - 1)  # unchanged


async def test_the_bounds_refuse_what_does_not_fit_and_say_which(stores: tuple[StateStore, StateStore]) -> None:
    one, two = stores
    for store in stores:
        store.limits = StateLimits(max_value_bytes=10, max_scope_bytes=25, max_names=3)
    with pytest.raises(StateLimitError, match=r"11 bytes, over the limit of 10 bytes per value") as refused:
        await one.put("u.a", "x", '"123456789"', ttl=TTL)
    assert refused.value.bound == "max_value_bytes"
    assert "StateLimits.max_value_bytes" in str(refused.value) and "raise the limit" in str(refused.value)
    assert await one.put("u.a", "a", '"é"', ttl=TTL)  # 4 bytes (é is two in UTF-8)
    assert await two.put("u.a", "b", '"12345678"', ttl=TTL)  # 10
    assert await one.put("u.a", "c", '"12345678"', ttl=TTL)  # 10: 24 in all
    with pytest.raises(StateLimitError, match="over the limit of 3 names per scope"):
        await two.put("u.a", "d", "1", ttl=TTL)
    with pytest.raises(StateLimitError, match="26 bytes in this scope, over the limit of 25 bytes per scope"):
        await two.put("u.a", "a", '"abcd"', ttl=TTL)  # 6 bytes in place of 4
    assert await two.put("u.a", "a", '"abc"', ttl=TTL)  # a replacement counts once: 25
    with pytest.raises(StateLimitError, match="per scope"):
        await one.incr("u.a", "a2", 100, ttl=TTL)
    assert await one.get("u.a", "a") == '"abc"'  # nothing refused was written
    assert await one.put("u.b", "d", "1", ttl=TTL)  # another scope has bounds of its own


async def test_values_expire_and_stop_counting(stores: tuple[StateStore, StateStore]) -> None:
    one, two = stores
    for store in stores:
        store.limits = StateLimits(max_names=3)
    await one.put("u.a", "short", "1", ttl=0.05)
    await one.put("u.a", "other", "1", ttl=0.05)
    await one.put("u.a", "long", "1", ttl=TTL)
    await asyncio.sleep(0.2)
    assert await two.get("u.a", "short") is None
    assert await two.names("u.a") == ["long"]
    assert await two.put("u.a", "new", "2", ttl=TTL)  # the expired ones hold no place
    assert await one.incr("u.a", "short", 5, ttl=TTL) == 5  # counted from nothing: what expired is gone
    with pytest.raises(ValueError, match="positive number of seconds"):
        await one.put("u.a", "x", "1", ttl=0)


async def test_handles_live_while_used_and_keep_their_owner(stores: tuple[StateStore, StateStore]) -> None:
    one, two = stores
    await one.create_handle("sst_a", "owner-hash", ttl=TTL)
    await one.create_handle("sst_b", "", ttl=0.05)
    assert await two.open_handle("sst_a") == ("owner-hash", TTL)
    assert await two.open_handle("sst_unknown") is None
    await asyncio.sleep(0.2)
    assert await two.open_handle("sst_b") is None


def test_limits_are_checked() -> None:
    with pytest.raises(ValueError, match=r"StateLimits\(max_names=0\): give a positive integer"):
        StateLimits(max_names=0)


# --- ctx.state and the dependencies, in process ---------------------------------------------------


class Cart(BaseModel):
    items: list[str] = []


def alice_token(subject: str | None = "alice") -> AccessToken:
    return AccessToken(subject=subject, client_id="app", scopes=frozenset(), expires_at=None)


async def tag(state: RequestState) -> str:
    await state.set("seen-by", "the dependency")
    return "tagged"


def make_server(**options: Any) -> Server:
    server = Server("state-test", **options)

    @server.tool
    async def count(state: UserState) -> int:
        return await state.incr("calls")

    @server.tool
    async def count_local(state: LocalUserState) -> int:
        return await state.incr("calls")

    @server.tool
    async def add(item: str, ctx: Context) -> Cart:
        cart = await ctx.state.user.get("cart", Cart, Cart())
        cart.items.append(item)
        await ctx.state.user.set("cart", cart)
        return cart

    @server.tool
    async def remember(note: str, ctx: Context) -> int:
        return await ctx.state.local_user.append("notes", note, max_items=3)

    @server.tool
    async def notes(ctx: Context) -> list[str]:
        kept: list[str] = await ctx.state.local_user.get("notes", list[str], [])
        return kept

    @server.tool
    async def start_session(ctx: Context) -> str:
        """Start a session; it ends after a day unused."""
        return await ctx.state.new_session()

    @server.tool
    async def session_add(n: int, state: SessionState, session: str | None = None) -> int:
        return await state.incr("total", n)

    @server.tool
    async def legacy_add(n: int, ctx: Context) -> int:
        return await (await ctx.state.session()).incr("total", n)

    @server.tool
    async def request_state(tagged: Annotated[str, Depends(tag)], state: RequestState, ctx: Context) -> list[Any]:
        return [tagged, await state.get("seen-by"), ctx.state.request.scope]

    @server.tool
    async def big(ctx: Context) -> None:
        await ctx.state.local_user.set("big", "x" * 100_000)

    return server


def value(result: dict[str, Any]) -> Any:
    assert not result.get("isError"), result
    if "structuredContent" not in result:  # a str is sent as text alone
        return result["content"][0]["text"]
    structured = result["structuredContent"]
    return structured["result"] if isinstance(structured, dict) and set(structured) == {"result"} else structured


def text(result: dict[str, Any]) -> str:
    assert result["isError"] is True, result
    said: str = result["content"][0]["text"]
    return said


@pytest.mark.parametrize("version", ERAS)
async def test_each_user_has_their_own_state(version: str) -> None:
    server = make_server()
    async with (
        Client(server, protocol_version=version, access_token=alice_token("alice")) as alice,
        Client(server, protocol_version=version, access_token=alice_token("bob")) as bob,
    ):
        assert [value(await alice.call_tool("count")) for _ in range(3)] == [1, 2, 3]
        assert value(await bob.call_tool("count")) == 1
        assert value(await alice.call_tool("add", {"item": "tea"})) == {"items": ["tea"]}
        assert value(await alice.call_tool("add", {"item": "jam"})) == {"items": ["tea", "jam"]}
        assert value(await bob.call_tool("add", {"item": "milk"})) == {"items": ["milk"]}
        assert value(await bob.call_tool("count_local")) == 2  # with a subject, local_user is the user's own
    async with Client(server, protocol_version=version, access_token=alice_token("alice")) as again:
        assert value(await again.call_tool("count")) == 4  # kept across connections


@pytest.mark.parametrize("version", ERAS)
async def test_without_a_subject_user_state_is_refused_and_local_state_is_shared(version: str) -> None:
    server = make_server()
    async with Client(server, protocol_version=version) as one, Client(server, protocol_version=version) as two:
        assert text(await one.call_tool("count")) == (
            "Tool 'count' needs the caller's subject (the access token's sub) to keep its state under, and the "
            "request carried none (stdio, or a server without auth=); LocalUserState shares one state among "
            "callers without one"
        )
        said = text(await one.call_tool("add", {"item": "tea"}))
        assert said.startswith("ctx.state.user: the request carries no subject") and "ctx.state.local_user" in said
        assert value(await one.call_tool("count_local")) == 1
        assert value(await two.call_tool("count_local")) == 2  # one local user
        for note in ("a", "b", "c", "d"):
            await one.call_tool("remember", {"note": note})
        assert value(await two.call_tool("notes")) == ["b", "c", "d"]  # max_items kept the newest
        too_big = text(await one.call_tool("big"))
        assert "state 'big' was not written: it would make 100,002 bytes" in too_big


@pytest.mark.parametrize("version", ERAS)
async def test_a_session_handle_carries_state_between_calls_and_only_for_its_user(version: str) -> None:
    server = make_server()
    async with (
        Client(server, protocol_version=version, access_token=alice_token("alice")) as alice,
        Client(server, protocol_version=version, access_token=alice_token("bob")) as bob,
    ):
        handle = value(await alice.call_tool("start_session"))
        assert handle.startswith("sst_") and len(handle) == 36
        other = value(await alice.call_tool("start_session"))
        assert value(await alice.call_tool("session_add", {"n": 2, "session": handle})) == 2
        assert value(await alice.call_tool("session_add", {"n": 3, "session": handle})) == 5
        assert value(await alice.call_tool("session_add", {"n": 1, "session": other})) == 1
        stolen = text(await bob.call_tool("session_add", {"n": 1, "session": handle}))
        assert stolen == (
            f"session {handle!r} is unknown or has expired (a session ends when unused for a while); start a new "
            "session and use the handle it gives"
        )
        guessed = text(await alice.call_tool("session_add", {"n": 1, "session": "sst_" + "A" * 32}))
        assert "is unknown or has expired" in guessed
        assert value(await alice.call_tool("session_add", {"n": 0, "session": handle})) == 5  # bob changed nothing


async def test_without_a_handle_a_legacy_session_has_state_and_a_modern_call_is_told_how_to_get_one() -> None:
    server = make_server()
    async with Client(server, protocol_version=LEGACY) as first, Client(server, protocol_version=LEGACY) as second:
        assert value(await first.call_tool("session_add", {"n": 2})) == 2
        assert value(await first.call_tool("legacy_add", {"n": 3})) == 5  # ctx.state.session(): the same
        assert value(await second.call_tool("session_add", {"n": 1})) == 1  # another session
    async with Client(server, protocol_version=MODERN) as modern:
        said = text(await modern.call_tool("session_add", {"n": 1}))
        assert said.startswith("Tool 'session_add' needs a session, and the call has none: on 2026-07-28 pass")
        assert "'session' argument" in said
        said = text(await modern.call_tool("legacy_add", {"n": 1}))
        assert said.startswith("this 2026-07-28 request belongs to no session")


@pytest.mark.parametrize("kind", ["memory", "redis"])
async def test_a_legacy_sessions_state_goes_when_the_client_ends_the_session(
    kind: str, request: pytest.FixtureRequest
) -> None:
    # It stayed until its TTL (24 hours after its last write).
    if kind == "redis":
        redis: RedisServer = request.getfixturevalue("redis")
        if not redis.running:
            redis.start()
        redis.flushall()
        store: Store = RedisStore(redis.url)
        seen: Store = RedisStore(redis.url)  # another replica's view of the same Redis
    else:
        store = seen = MemoryStore()
    server = make_server(store=store)

    @server.tool
    def my_session(ctx: Context) -> str:
        return str(ctx.session_id)

    async def kept(session_id: str) -> list[str]:
        return await seen.state().names(session_state_scope(session_id))

    try:
        async with serve(server) as running, toolkit.Client(running.url, protocol_version=LEGACY) as staying:
            await staying.call_tool("legacy_add", {"n": 1})
            theirs = (await staying.call_tool("my_session")).text
            async with toolkit.Client(running.url, protocol_version=LEGACY) as leaving:
                assert (await leaving.call_tool("legacy_add", {"n": 2})).data == 2
                mine = (await leaving.call_tool("my_session")).text
                assert await kept(mine) == ["total"]
            assert await kept(mine) == []  # the DELETE was answered once the state was gone
            assert await kept(theirs) == ["total"]
    finally:
        if seen is not store:
            await seen.close()


@pytest.mark.parametrize("version", ERAS)
async def test_request_state_is_shared_within_one_call_only(version: str) -> None:
    async with Client(make_server(), protocol_version=version) as client:
        assert value(await client.call_tool("request_state")) == ["tagged", "the dependency", "r"]
        assert value(await client.call_tool("request_state")) == ["tagged", "the dependency", "r"]


async def test_a_configured_store_keeps_the_state_and_its_limits_apply() -> None:
    store = MemoryStore()
    store.state().limits = StateLimits(max_value_bytes=1000)
    server = make_server(store=store)
    async with Client(server, protocol_version=MODERN) as client:
        assert value(await client.call_tool("count_local")) == 1
        assert await store.state().get("u.local", "calls") == "1"
        assert "over the limit of 1,000 bytes per value" in text(await client.call_tool("big"))


async def test_without_a_configured_store_the_state_is_in_the_store_server_store_gives() -> None:
    server = make_server()
    seen: list[Store] = []

    @server.tool
    def the_store(store: ServerStore) -> None:
        seen.append(store)

    async with Client(server, protocol_version=MODERN) as client:
        assert value(await client.call_tool("count_local")) == 1
        await client.call_tool("the_store")
    assert await seen[0].state().get("u.local", "calls") == "1"  # one store in memory, not two


async def test_the_state_api() -> None:
    state = State(MemoryStore().state(), "u.test", ttl=TTL)
    await state.set("cart", Cart(items=["tea"]))
    assert await state.get("cart") == {"items": ["tea"]}
    assert await state.get("cart", Cart) == Cart(items=["tea"])
    assert await state.get("missing", Cart) is None
    assert await state.get("missing", int, 7) == 7
    with pytest.raises(ValueError, match=r"state 'cart' holds a value that is not a int"):
        await state.get("cart", int)
    with pytest.raises(TypeError, match="a object cannot be kept"):
        await state.set("x", object())
    with pytest.raises(ValueError, match="state name ''"):
        await state.get("")
    with pytest.raises(TypeError, match="incr counts integers"):
        await state.incr("n", 1.5)  # type: ignore[arg-type]

    async def slowly(current: list[int] | None) -> list[int]:
        await asyncio.sleep(0)  # let the others read the same value: their writes are refused and retried
        return [*(current or []), len(current or [])]

    await asyncio.gather(*(state.update("seq", slowly) for _ in range(20)))
    assert await state.get("seq") == list(range(20))  # no change lost
    await state.set("name", "ada")
    with pytest.raises(StateError, match="holds a str, not a list"):
        await state.append("name", 1)
    assert await state.update("typed", lambda cart: Cart(items=[*cart.items, "x"]), model=Cart, default=Cart()) == Cart(
        items=["x"]
    )
    assert await state.names() == ["cart", "name", "seq", "typed"]


START = """
import sys
from toolkit import Server, Context
server = Server("no-state")

@server.tool
async def plain(ctx: Context) -> int:
    return 1

print(sorted(name for name in sys.modules if "state" in name and name.startswith("toolkit")))
"""


def test_a_server_that_keeps_no_state_loads_none_of_it() -> None:
    run = subprocess.run([sys.executable, "-c", START], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "[]"
