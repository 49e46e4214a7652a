"""A gateway scaled out: three ``toolkit run gateway.py:server`` replicas behind a real HAProxy (round-robin
per request, no stickiness) with their legacy sessions in a real Redis, proxying a real upstream.

- One upstream HTTP server behind every replica: a 2026-07-28 client and a legacy client (its session
  in Redis) are served by all three replicas in turn, the same upstream answering; logs relayed
  through the balancer's SSE.
- The same upstream spoken to in a legacy version (stateful): each legacy downstream session gets
  upstream sessions of its own, never another caller's, but one per replica it reaches (what such an
  upstream keeps per session, a log level, roots, subscriptions, is per replica: documented, and
  shown here). A caller's ``DELETE`` ends all three, whichever replica it reached.
- ``toolkit proxy URL --store redis://...`` as the replicas: the same, with no gateway file to write.
- A stdio upstream per replica: each replica runs its own; a replica killed takes its upstream with
  it (no orphan), the balancer routes around it, and the replica restarted starts a new one.

``scripts/cluster --install-only`` installs redis-server and haproxy; without them these tests skip,
or fail under ``TOOLKIT_TESTS_STRICT=1``.
"""

from __future__ import annotations

import asyncio
import collections
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.support.cluster import cluster
from tests.support.processes import LOCALHOST, free_port, wait_for_port
from tests.support.proxy_faults.marks import DIR_VARIABLE, spawns
from tests.support.redis_rig import RedisServer, redis_server

import toolkit

SUPPORT = Path(__file__).parent / "support" / "proxy_faults"
UPSTREAM = SUPPORT / "upstream.py"
GATEWAY = f"{SUPPORT / 'gateway.py'}:server"
LEGACY = "2025-11-25"
HANG_GUARD = 60.0
"""The longest any wait here may take: a bound for a hang, never for speed."""

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def redis() -> Iterator[RedisServer]:
    with redis_server() as server:
        yield server


@pytest.fixture
def upstream(tmp_path: Path) -> Iterator[str]:
    """One toolkit upstream over HTTP (``upstream.py --http``): its URL."""
    port = free_port()
    env = {**os.environ, DIR_VARIABLE: str(tmp_path)}
    argv = [sys.executable, str(UPSTREAM), "--http", str(port)]
    with subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL) as process:
        try:
            wait_for_port(port, timeout=HANG_GUARD, process=process)
            yield f"http://{LOCALHOST}:{port}/mcp"
        finally:
            process.kill()  # the replicas' standing subscriptions would hold up a graceful shutdown


def gateways(redis: RedisServer, marks: Path, target: Any, **settings: str) -> Any:
    """Three gateway replicas proxying ``target`` behind HAProxy, sharing ``redis`` (see gateway.py)."""
    env = {DIR_VARIABLE: str(marks), "PROXY_FAULTS_TARGET": json.dumps(target)}
    env.update({f"PROXY_FAULTS_{key.upper()}": value for key, value in settings.items()})
    return cluster(GATEWAY, replicas=3, store_url=redis.url, env=env)


async def ping_status(url: str, session_id: str) -> int:
    """The status of a ``ping`` sent straight to ``url`` (an upstream, a replica) in legacy session ``session_id``."""
    headers = {
        "Mcp-Session-Id": session_id,
        "MCP-Protocol-Version": LEGACY,
        "Accept": "application/json, text/event-stream",
    }
    async with httpx.AsyncClient(timeout=HANG_GUARD) as http:
        response = await http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers=headers)
    return response.status_code


async def until_ended(url: str, session_id: str) -> None:
    """Wait until the upstream answers ``session_id``'s requests 404 (the session was ended)."""
    async with asyncio.timeout(HANG_GUARD):  # a hang guard, not a measure
        while (status := await ping_status(url, session_id)) != 404:
            assert status == 200, status
            await asyncio.sleep(0.05)


async def served(client: toolkit.Client, tool: str, times: int) -> list[Any]:
    """``tool``'s value for ``times`` calls made one after another (each balanced on its own)."""
    return [(await asyncio.wait_for(client.call_tool(tool), HANG_GUARD)).data for _ in range(times)]


async def test_three_replicas_serve_modern_and_legacy_clients_from_one_http_upstream(
    redis: RedisServer, upstream: str, tmp_path: Path
) -> None:
    logs: list[dict[str, Any]] = []
    with gateways(redis, tmp_path, upstream) as running:
        [upstream_pid] = spawns(tmp_path)
        async with toolkit.Client(running.url, log_level="debug", on_log=logs.append) as modern:
            assert modern.negotiated_version == "2026-07-28"
            assert len(set(await served(modern, "replica", 6))) == 3, "every replica answered in turn"
            assert set(await served(modern, "pid", 6)) == {upstream_pid}, "one upstream behind them all"
            assert (await modern.call_tool("chatter", {"count": 3})).data == 3
            assert [entry["data"] for entry in logs] == ["line 0", "line 1", "line 2"], "relayed through the SSE"

        async with toolkit.Client(running.url, protocol_version=LEGACY) as legacy:
            session_id = legacy.session.transport.session_id  # type: ignore[attr-defined]
            assert redis.command("EXISTS", f"toolkit:s:{session_id}") == 1, "the legacy session is in Redis"
            assert len(set(await served(legacy, "replica", 6))) == 3, "its session served by every replica"
            assert set(await served(legacy, "pid", 6)) == {upstream_pid}
            # A 2026-07-28 upstream is stateless: every replica shares one upstream session, with no id.
            assert {value["session"] for value in await served(legacy, "session", 6)} == {None}
        assert spawns(tmp_path) == [upstream_pid]


async def test_a_legacy_upstream_session_per_downstream_session_is_one_per_replica(
    redis: RedisServer, upstream: str, tmp_path: Path
) -> None:
    with gateways(redis, tmp_path, upstream, version=LEGACY) as running:
        async with toolkit.Client(running.url, protocol_version=LEGACY) as other, toolkit.Client(running.url) as modern:
            async with toolkit.Client(running.url, protocol_version=LEGACY) as one:
                ones = collections.Counter(value["session"] for value in await served(one, "session", 9))
                others = collections.Counter(value["session"] for value in await served(other, "session", 9))
                # One downstream session, three upstream sessions: one per replica it reached, each kept.
                assert len(ones) == 3 and min(ones.values()) >= 2, ones
                assert len(others) == 3 and min(others.values()) >= 2, others
                assert not set(ones) & set(others), "never another caller's upstream session"
                assert None not in ones
                # A caller with no session (2026-07-28) goes through each replica's shared upstream session.
                shared = {value["session"] for value in await served(modern, "session", 9)}
                assert len(shared) == 3 and not shared & (set(ones) | set(others)), shared
            # one's DELETE reached one replica, and the other two through Redis: each of the three
            # closed the upstream session it held for one. other's stay open.
            for upstream_session in ones:
                await until_ended(upstream, upstream_session)
            assert [await ping_status(upstream, session) for session in others] == [200] * 3


async def test_toolkit_proxy_with_a_store_scales_out_behind_a_balancer(
    redis: RedisServer, upstream: str, tmp_path: Path
) -> None:
    # toolkit proxy URL --transport http --store redis://..., three times: no gateway.py to write.
    with cluster(upstream, replicas=3, store_url=redis.url, command="proxy") as running:
        [upstream_pid] = spawns(tmp_path)
        async with toolkit.Client(running.url, protocol_version=LEGACY) as legacy:
            session_id = legacy.session.transport.session_id  # type: ignore[attr-defined]
            assert redis.command("EXISTS", f"toolkit:s:{session_id}") == 1, "the legacy session is in Redis"
            # Round-robin per request, no stickiness: the calls of one session land on every replica.
            assert set(await served(legacy, "pid", 6)) == {upstream_pid}
            # Each replica, asked directly, knows the session (one without the store would answer 404).
            for name in running.replicas.names:
                replica = f"http://{LOCALHOST}:{running.replicas.port(name)}/mcp"
                assert await ping_status(replica, session_id) == 200, name
        async with toolkit.Client(running.url) as modern:
            assert modern.negotiated_version == "2026-07-28"
            assert set(await served(modern, "pid", 3)) == {upstream_pid}


async def test_each_replica_runs_its_own_stdio_upstream_and_takes_it_along_when_killed(
    redis: RedisServer, tmp_path: Path
) -> None:
    with gateways(redis, tmp_path, [sys.executable, str(UPSTREAM)]) as running:
        async with (
            toolkit.Client(running.url) as modern,
            toolkit.Client(running.url, protocol_version=LEGACY) as legacy,
        ):
            started = set(await served(modern, "pid", 6))
            assert len(started) == 3 and started == set(spawns(tmp_path)), "one upstream process per replica"
            assert set(await served(legacy, "pid", 6)) == started
            assert len(spawns(tmp_path)) == 3, "a 2026-07-28 upstream is shared by every caller of a replica"

            running.replicas.kill("r1")  # SIGKILL: no shutdown; its upstream sees its stdin end
            await until(lambda: sum(map(alive, started)) == 2, "the killed replica's upstream exits with it")
            survivors = {pid for pid in started if alive(pid)}
            assert set(await served(modern, "pid", 6)) == survivors, "the balancer routes around r1"
            assert set(await served(legacy, "pid", 6)) == survivors, "the legacy session goes on, on the others"

            running.replicas.start("r1")
            restarted = set(await served(modern, "pid", 6)) - survivors
            assert len(restarted) == 1 and restarted <= set(spawns(tmp_path)), "r1 started an upstream of its own"
            assert len(spawns(tmp_path)) == 4


def alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (a zombie does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


async def until(condition: Callable[[], bool], what: str) -> None:
    """Wait until ``condition()`` holds (an ``AssertionError`` naming ``what`` if it never does)."""
    deadline = time.monotonic() + HANG_GUARD
    while not condition():
        assert time.monotonic() < deadline, f"not within {HANG_GUARD:g} s: {what}"
        await asyncio.sleep(0.02)
