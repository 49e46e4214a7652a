"""Legacy sessions kept in a real Redis and reloaded by real replicas: who may use them, how long they live.

Two ``toolkit run tests/support/sessions_app.py:app`` processes share one redis-server; each
request goes straight to the replica the test names (no balancer), so a test knows whether the
replica holds a local copy of the session or must load it from Redis. The ownership test signs
its callers in at the real authorization server (oidc-provider, two client-credentials clients:
two token subjects); the reaper test reads the session's TTL in Redis itself.

``scripts/cluster --install-only`` and ``scripts/authserver --install-only`` install what this
needs; without them the tests skip, or fail under ``TOOLKIT_TESTS_STRICT=1``.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.http_support import Legacy, Reply
from tests.support.authserver import READY_TIMEOUT, AuthServer, authserver_available, start_authserver
from tests.support.bearer import bearer_client
from tests.support.cluster import Replicas
from tests.support.processes import LOCALHOST, free_port
from tests.support.redis_rig import RedisServer, missing, redis_server

from toolkit._transports.http.sessions import RECHECK_SECONDS

# The usual hang guard, plus the longest the authorization server may take to start.
pytestmark = pytest.mark.timeout(READY_TIMEOUT + 120)

APP = Path(__file__).parent / "support" / "sessions_app.py"
APP_SPEC = f"{APP}:app"
OWNED_IDLE_TIMEOUT = 4.0
"""For the ownership test: a local copy is rechecked after min(1 s, a quarter of this), and it
stays in the replica's memory and in Redis for this long, well past that recheck."""
BUSY_IDLE_TIMEOUT = 3.0
"""For the reaper test: the reaper runs every second and refreshes a busy session's TTL to this."""
ALICE = ("cc-client", "cc-secret")
MALLORY = ("cc-client-2", "cc-secret-2")
UNKNOWN_SESSION = "x" * 43


@pytest.fixture(scope="module")
def redis() -> Iterator[RedisServer]:
    with redis_server() as server:
        yield server


@pytest.fixture(scope="module")
def auth(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AuthServer]:
    if not authserver_available():
        missing("the test authorization server is not installed: scripts/authserver --install-only installs it")
    with start_authserver(tmp_path_factory.mktemp("auth")) as server:
        yield server


@pytest.fixture(scope="module")
def resource() -> str:
    """The one URL the deployment is known by (as behind a balancer): the tokens' audience."""
    return f"http://{LOCALHOST}:{free_port()}/mcp"


@pytest.fixture(scope="module")
def owned(redis: RedisServer, auth: AuthServer, resource: str) -> Iterator[Replicas]:
    """Two replicas with JWT authorization on one Redis."""
    env = {
        "SESSIONS_STORE": redis.url,
        "SESSIONS_IDLE_TIMEOUT": str(OWNED_IDLE_TIMEOUT),
        "SESSIONS_ISSUER": auth.issuer,
        "SESSIONS_JWKS_URI": auth.jwks_uri,
        "SESSIONS_RESOURCE": resource,
    }
    with Replicas(APP_SPEC, 2, env=env) as replicas:
        replicas.start()
        yield replicas


@pytest.fixture(scope="module")
def marks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("marks")


@pytest.fixture(scope="module")
def plain(redis: RedisServer, marks: Path) -> Iterator[Replicas]:
    """Two replicas without authorization on one Redis, with a short idle timeout."""
    env = {"SESSIONS_STORE": redis.url, "SESSIONS_IDLE_TIMEOUT": str(BUSY_IDLE_TIMEOUT), "SESSIONS_MARKS": str(marks)}
    with Replicas(APP_SPEC, 2, env=env) as replicas:
        replicas.start()
        yield replicas


def url_of(replicas: Replicas, name: str) -> str:
    return f"http://{LOCALHOST}:{replicas.port(name)}/mcp"


async def eventually(condition: Callable[[], bool], what: str, timeout: float = 10.0) -> None:
    """Wait until ``condition()`` holds (AssertionError naming ``what`` after ``timeout`` seconds)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout:g} s: {what}")
        await asyncio.sleep(0.02)


def whoami(reply: Reply) -> dict[str, Any]:
    assert reply.status == 200, (reply.status, reply.messages)
    result = reply.result
    assert not result.get("isError"), result
    value: dict[str, Any] = result["structuredContent"]
    return value


def refusal(reply: Reply) -> tuple[int, Any]:
    """What a refused POST tells the client: its status and its JSON-RPC error."""
    return reply.status, reply.error


async def assert_refused(intruder: Legacy, session_id: str, *, owner: str) -> None:
    """``intruder`` presenting ``session_id`` learns nothing: every method answers as for an unknown session."""
    stranger = Legacy(intruder.http)
    stranger.session_id = UNKNOWN_SESSION
    unknown = await stranger.call_tool("whoami")
    assert unknown.status == 404

    intruder.session_id = session_id
    call = await intruder.call_tool("whoami")
    assert call.status == 404, f"another caller was served the session: {call.messages}"
    assert refusal(call) == refusal(unknown), "refused exactly as an unknown session"
    assert "mcp-session-id" not in call.headers
    assert owner not in str(call.messages), "nothing of the owner's session in the refusal"
    async with intruder.listen() as stream:
        assert stream.status == 404, "the session's GET stream"
    ended = await intruder.delete()
    assert ended.status == 404, "DELETE of the session"


# --- (a) a session reloaded from Redis belongs to the caller that opened it -------------------


async def test_a_session_reloaded_from_redis_is_refused_to_another_caller(
    owned: Replicas, auth: AuthServer, resource: str, redis: RedisServer
) -> None:
    alice_token = auth.client_credentials_token(resource, client_id=ALICE[0], client_secret=ALICE[1])
    mallory_token = auth.client_credentials_token(resource, client_id=MALLORY[0], client_secret=MALLORY[1])
    first, second = url_of(owned, "r0"), url_of(owned, "r1")
    async with (
        bearer_client(first, alice_token) as alice_first,
        bearer_client(second, alice_token) as alice_second,
        bearer_client(first, mallory_token) as mallory_first,
        bearer_client(second, mallory_token) as mallory_second,
    ):
        alice = await Legacy(alice_first).open()
        session_id = alice.session_id
        assert session_id is not None
        opened = whoami(await alice.call_tool("whoami"))
        first_checked = time.monotonic()  # r0's copy was checked at the latest while serving this
        assert opened["subject"] == ALICE[0]
        assert redis.command("EXISTS", f"toolkit:s:{session_id}") == 1

        # r1 never saw the session: it loads it from Redis, and refuses it to mallory.
        await assert_refused(Legacy(mallory_second), session_id, owner=ALICE[0])
        await eventually(lambda: "refused session" in owned.stderr("r1"), "r1 logs the refused attempt")
        on_second = Legacy(alice_second)
        on_second.session_id = session_id
        served = whoami(await on_second.call_tool("whoami"))
        assert served["subject"] == ALICE[0]
        assert served["pid"] != opened["pid"], "another process served alice's session"

        # r0 holds a copy; once its recheck interval has passed, it reloads the session from Redis.
        recheck = min(RECHECK_SECONDS, OWNED_IDLE_TIMEOUT / 4)
        await eventually(lambda: time.monotonic() - first_checked > recheck, "r0's copy is due for a recheck")
        await assert_refused(Legacy(mallory_first), session_id, owner=ALICE[0])
        again = whoami(await alice.call_tool("whoami"))
        assert again == opened, "alice's session is untouched on the replica that opened it"
        assert whoami(await on_second.call_tool("whoami")) == served
        assert redis.command("EXISTS", f"toolkit:s:{session_id}") == 1, "the refused DELETEs ended nothing"


# --- (b) the reaper keeps a busy session alive in Redis ---------------------------------------


def pttl(redis: RedisServer, session_id: str) -> int:
    """The session key's remaining time to live in ms (-2: gone)."""
    return int(redis.command("PTTL", f"toolkit:s:{session_id}"))


@contextlib.asynccontextmanager
async def busy(session: Legacy, how: str, marks: Path) -> AsyncIterator[None]:
    """Keep ``session`` busy on its replica: its ``GET`` stream open, or a request in flight."""
    if how == "get_stream":
        async with session.listen() as stream:
            assert stream.status == 200 and stream.is_sse
            yield
        return
    tag = f"t{time.monotonic_ns()}"
    async with session.stream("tools/call", {"name": "hold", "arguments": {"tag": tag}}) as stream:
        assert stream.status == 200
        try:
            yield
        finally:
            (marks / f"release-{tag}").touch()
        answer = await stream.next_message()
    assert answer is not None and "result" in answer, answer
    assert not answer["result"].get("isError"), answer


@pytest.mark.parametrize("how", ["get_stream", "request_in_flight"])
async def test_the_reaper_refreshes_a_busy_sessions_ttl_in_redis_past_its_idle_timeout(
    plain: Replicas, redis: RedisServer, marks: Path, how: str
) -> None:
    first, second = url_of(plain, "r0"), url_of(plain, "r1")
    async with bearer_client(first, None) as on_first, bearer_client(second, None) as on_second:
        session = await Legacy(on_first).open()
        session_id = session.session_id
        assert session_id is not None
        assert 0 < pttl(redis, session_id) <= BUSY_IDLE_TIMEOUT * 1000
        async with busy(session, how, marks):
            # Every request so far pushed the expiry back to at most BUSY_IDLE_TIMEOUT from now;
            # only the reaper touches the key from here on.
            since = time.monotonic()
            previous, refreshes = pttl(redis, session_id), 0
            while True:
                ttl = pttl(redis, session_id)
                elapsed = time.monotonic() - since
                assert ttl > 0, f"the busy session's key expired in Redis {elapsed:.2f} s into its activity"
                refreshes += ttl > previous + 100
                previous = ttl
                if elapsed > BUSY_IDLE_TIMEOUT + 0.5 and refreshes >= 2:
                    break
                assert elapsed < BUSY_IDLE_TIMEOUT * 4, f"{refreshes} refreshes of the TTL in {elapsed:.2f} s"
                await asyncio.sleep(0.05)
        # No longer busy, long past its idle timeout: the session still works, from Redis too.
        assert (await session.request("ping")).status == 200
        other = Legacy(on_second)
        other.session_id = session_id
        assert whoami(await other.call_tool("whoami"))["pid"] != whoami(await session.call_tool("whoami"))["pid"]
