"""State on the wire: ``examples/state_counter.py`` through ``toolkit run``, real processes only.

Over stdio and HTTP, in 2026-07-28 (a conversation's state through a handle the server minted,
sent back as the ``session`` argument) and 2025-11-25 (the session itself, or a handle); per
user with real JWTs for two users from a local issuer (each their own count, a handle useless to
the other); and across three replicas on a real redis-server behind HAProxy (round robin, no
stickiness), where every replica sees one conversation's notes and no increment is lost.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from tests.http_support import Modern, cli_server, connect, free_port
from tests.support.cluster import SERVED_BY, Cluster, cluster
from tests.support.issuer import serve_issuer
from tests.support.processes import REPO
from tests.support.redis_rig import RedisServer, redis_server

from toolkit.client import Client as RemoteClient

pytestmark = pytest.mark.timeout(120)

MODERN, LEGACY = "2026-07-28", "2025-11-25"
ERAS = (MODERN, LEGACY)
EXAMPLE = REPO / "examples" / "state_counter.py"
UNKNOWN = "is unknown or has expired (a session ends when unused for a while); start a new session"


async def check_conversation(client: RemoteClient, version: str) -> str:
    """A handle minted, notes kept under it, a guessed one refused; without one, what the era allows."""
    handle = (await client.call_tool("start_conversation")).text
    assert handle.startswith("sst_")
    assert (await client.call_tool("note", {"text": "buy milk", "session": handle})).data == 1
    assert (await client.call_tool("note", {"text": "call mum", "session": handle})).data == 2
    assert (await client.call_tool("notes", {"session": handle})).data == ["buy milk", "call mum"]
    other = (await client.call_tool("start_conversation")).text
    assert (await client.call_tool("notes", {"session": other})).data == []
    guessed = await client.call_tool("notes", {"session": "sst_" + "x" * 32}, raise_on_error=False)
    assert guessed.is_error and UNKNOWN in guessed.text
    plain = await client.call_tool("note", {"text": "no handle"}, raise_on_error=False)
    if version == MODERN:
        assert plain.is_error
        assert plain.text.startswith("Tool 'note' needs a session, and the call has none: on 2026-07-28 pass")
    else:  # the legacy session's own state, apart from the handles'
        assert plain.data == 1
        assert (await client.call_tool("notes")).data == ["no handle"]
    return handle


@pytest.mark.parametrize("version", ERAS)
async def test_over_stdio(version: str) -> None:
    command = [sys.executable, "-m", "toolkit", "run", str(EXAMPLE)]
    async with RemoteClient(command, protocol_version=version) as client:
        assert client.negotiated_version == version
        tools = {tool["name"]: tool for tool in await client.list_tools()}
        assert set(tools["note"]["inputSchema"]["properties"]) == {"text", "session"}  # no 'state'
        assert [(await client.call_tool("count")).data for _ in range(3)] == [1, 2, 3]  # the local user's
        await check_conversation(client, version)
    async with RemoteClient(command, protocol_version=version) as again:
        assert (await again.call_tool("count")).data == 1  # a new process, its own memory


@pytest.fixture(scope="module")
def secured() -> Iterator[tuple[str, Any]]:
    """``toolkit run examples/state_counter.py --transport http`` requiring JWTs from a local issuer."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    with serve_issuer(url) as issuer:
        flags = ("--auth-jwks-uri", issuer.jwks_uri, "--auth-issuer", issuer.issuer, "--auth-audience", url)
        with cli_server(EXAMPLE, *flags, port=port) as running:
            yield running.url, issuer


@pytest.mark.parametrize("version", ERAS)
async def test_over_http_each_user_has_their_own_state(version: str, secured: tuple[str, Any]) -> None:
    url, issuer = secured
    alice = {"authorization": f"Bearer {issuer.token(sub=f'alice-{version}')}"}
    bob = {"authorization": f"Bearer {issuer.token(sub=f'bob-{version}')}"}
    async with (
        RemoteClient(url, protocol_version=version, headers=alice) as as_alice,
        RemoteClient(url, protocol_version=version, headers=bob) as as_bob,
        RemoteClient(url, protocol_version=version, headers=alice) as alice_again,
    ):
        for expected in (1, 2, 3):  # interleaved: a count kept for the wrong user would show
            counts = await asyncio.gather(as_alice.call_tool("count"), as_bob.call_tool("count"))
            assert [count.data for count in counts] == [expected, expected]
        assert (await alice_again.call_tool("count")).data == 4  # alice on another connection: the same user
        handle = await check_conversation(as_alice, version)
        stolen = await as_bob.call_tool("notes", {"session": handle}, raise_on_error=False)
        assert stolen.is_error and UNKNOWN in stolen.text  # a leaked handle is useless to another user
        written = await as_bob.call_tool("note", {"text": "bob was here", "session": handle}, raise_on_error=False)
        assert written.is_error
        assert (await alice_again.call_tool("notes", {"session": handle})).data == ["buy milk", "call mum"]


# --- three replicas -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def redis() -> Iterator[RedisServer]:
    with redis_server() as server:
        yield server


@pytest.fixture(scope="module")
def three(redis: RedisServer) -> Iterator[Cluster]:
    with cluster(EXAMPLE, replicas=3, store_url=redis.url) as running:
        yield running


def structured(reply: Any) -> Any:
    result = reply.result
    assert not result.get("isError"), result
    return result.get("structuredContent", result["content"][0]["text"])


async def test_three_replicas_share_one_state(three: Cluster) -> None:
    async with connect(three.url) as http:
        client = Modern(http)
        reply = await client.call_tool("start_conversation")
        handle = structured(reply)
        served = {reply.headers[SERVED_BY]}
        for n in range(1, 10):
            reply = await client.call_tool("note", {"text": f"note {n}", "session": handle})
            assert structured(reply) == n, f"{reply.headers[SERVED_BY]} did not see the notes the others kept"
            served.add(reply.headers[SERVED_BY])
        reply = await client.call_tool("notes", {"session": handle})
        assert structured(reply) == [f"note {n}" for n in range(1, 10)]
        assert served == {"r0", "r1", "r2"}, "the calls of one conversation reached every replica"

        replies = await asyncio.gather(*(client.call_tool("count") for _ in range(30)))
        assert sorted(structured(reply) for reply in replies) == list(range(1, 31))  # no increment lost
        assert {reply.headers[SERVED_BY] for reply in replies} == {"r0", "r1", "r2"}
