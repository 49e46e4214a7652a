"""The scale-out rig itself (tests/support/redis_rig.py, tests/support/cluster.py), with real parts:
a real redis-server, real ``toolkit run`` replicas and a real HAProxy in front of them.

``scripts/cluster --install-only`` installs redis-server and haproxy; without them these tests
skip, or fail under ``TOOLKIT_TESTS_STRICT=1``.
"""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path
from typing import Any

import httpx
from tests.support.cluster import SERVED_BY, cluster, haproxy_config
from tests.support.processes import LOCALHOST, REPO
from tests.support.redis_rig import redis_server

WEATHER = REPO / "examples" / "weather.py"
MODERN = "2026-07-28"


def modern_post(method: str, params: dict[str, Any] | None = None, *, id: int = 1) -> dict[str, Any]:
    """``json`` and ``headers`` for a stateless 2026-07-28 request (no session: any replica answers)."""
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
    params = dict(params or {})
    params["_meta"] = {**meta, **params.get("_meta", {})}
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": method,
    }
    if method == "tools/call":
        headers["Mcp-Name"] = params["name"]
    return {"json": {"jsonrpc": "2.0", "id": id, "method": method, "params": params}, "headers": headers}


def discover(client: httpx.Client, url: str, id: int) -> httpx.Response:
    reply = client.post(url, **modern_post("server/discover", id=id))
    assert reply.status_code == 200, reply.text
    assert reply.json()["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "weather"
    return reply


def client_port(reply: httpx.Response) -> int:
    """The client side's local port of the connection that carried ``reply``."""
    port: int = reply.extensions["network_stream"].get_extra_info("client_addr")[1]
    return port


def refused(port: int) -> bool:
    try:
        with socket.create_connection((LOCALHOST, port), timeout=1):
            return False
    except ConnectionRefusedError:
        return True


def test_redis_server_starts_restarts_on_the_same_port_and_stops() -> None:
    with redis_server() as redis:
        assert redis.url == f"redis://127.0.0.1:{redis.port}/0"
        assert redis.command("SET", "greeting", "hello") is True
        assert redis.command("GET", "greeting") == "hello"
        assert redis.keys_count() == 1

        port = redis.port
        redis.restart()
        assert redis.port == port
        assert redis.keys_count() == 0, "nothing is persisted across a restart"
        assert redis.command("SET", "greeting", "again") is True
        assert redis.command("GET", "greeting") == "again"
        redis.flushall()
        assert redis.keys_count() == 0

        redis.stop()
        assert not redis.running
        assert refused(port)
    assert refused(port)


def test_balancer_spreads_kept_alive_requests_round_robin_and_routes_around_a_killed_replica() -> None:
    with cluster(WEATHER, replicas=3) as running, httpx.Client(timeout=10) as client:
        replies = [discover(client, running.url, id) for id in range(6)]
        assert len({client_port(reply) for reply in replies}) == 1, "one kept-alive client connection"
        served = [reply.headers[SERVED_BY] for reply in replies]
        assert sorted(served[:3]) == ["r0", "r1", "r2"], served
        assert served[3:] == served[:3], f"not round-robin: {served}"

        running.replicas.kill("r1")
        assert not running.replicas.running("r1")
        assert refused(running.replicas.port("r1"))
        after = [discover(client, running.url, id).headers[SERVED_BY] for id in range(6, 12)]
        assert "r1" not in after, after
        assert set(after) == {"r0", "r2"}, after
        # r1's turns were tried, refused and redispatched: HAProxy logs the retry count as "+1".
        deadline = time.monotonic() + 5
        while "/+1 " not in running.balancer.log and time.monotonic() < deadline:
            time.sleep(0.05)
        assert "/+1 " in running.balancer.log, running.balancer.log

        running.replicas.restart("r1")
        back = [discover(client, running.url, id).headers[SERVED_BY] for id in range(12, 18)]
        assert sorted(back[:3]) == ["r0", "r1", "r2"], back
        assert back[3:] == back[:3], back


SLOW_APP = """
import asyncio
import pathlib

from toolkit import Context, Server

server = Server("slow")
RELEASE = pathlib.Path(__file__).with_name("release")


@server.tool
async def slow(ctx: Context) -> str:
    await ctx.report_progress(1, 2, "halfway")
    for _ in range(600):  # until the client, having read the progress event, says so (at most 60 s)
        if RELEASE.exists():
            return "done"
        await asyncio.sleep(0.1)
    return "never released: the progress event did not reach the client before the result"
"""


def test_balancer_streams_sse_events_as_they_come(tmp_path: Path) -> None:
    app = tmp_path / "slow.py"
    app.write_text(SLOW_APP)
    request = modern_post("tools/call", {"name": "slow", "arguments": {}, "_meta": {"progressToken": "p"}})
    with (
        cluster(app, replicas=2) as running,
        httpx.Client(timeout=10) as client,
        client.stream("POST", running.url, **request) as reply,
    ):
        assert reply.status_code == 200
        assert reply.headers["content-type"].startswith("text/event-stream")
        assert reply.headers[SERVED_BY] in {"r0", "r1"}
        arrivals: list[dict[str, Any]] = []
        for line in reply.iter_lines():
            if line.startswith("data:"):
                arrivals.append(json.loads(line.removeprefix("data:")))
                (tmp_path / "release").touch()  # the tool finishes only once the first event is here
    # The progress event must not wait for the result (buffering): the tool ends only after the
    # client has read it. HAProxy's small-write delay is off (option http-no-delay in the rig).
    progress, result = arrivals
    assert progress["method"] == "notifications/progress"
    assert result["result"]["content"][0]["text"] == "done"
    assert "option http-no-delay" in haproxy_config(1, [("r0", 2)])  # no ~200 ms small-write delay per event
