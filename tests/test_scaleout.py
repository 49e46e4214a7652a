"""Scale-out with real parts: a real redis-server, three ``toolkit run --store`` replicas, a real
HAProxy balancing round-robin without stickiness. Every request goes through the balancer;
``X-Served-By`` (set by HAProxy) says which replica answered, and the tools say which process
ran them, so each test proves where things happened instead of assuming it.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.http_support import LEGACY, Legacy, McpHttp, Modern, connect
from tests.support.cluster import SERVED_BY, Cluster, cluster
from tests.support.processes import PYTHON, REPO, TOOLKIT, free_port, wait_for_port
from tests.support.redis_rig import RedisServer, redis_server

from toolkit._transports.http.sessions import RECHECK_SECONDS

pytestmark = pytest.mark.timeout(120)

APP = Path(__file__).parent / "support" / "scaleout_app.py"
APP_SPEC = f"{APP}:server"
DEAD_OWNER = "stopped before it answered"


@pytest.fixture(scope="module")
def redis() -> Iterator[RedisServer]:
    with redis_server() as server:
        yield server


@pytest.fixture(scope="module")
def marks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("marks")


@pytest.fixture(scope="module")
def three(redis: RedisServer, marks: Path) -> Iterator[Cluster]:
    """Three replicas on one Redis; no state secret configured (the replicas agree on one through Redis)."""
    env = {"SCALEOUT_MARKS": str(marks), "TOOLKIT_STATE_SECRET": ""}
    with cluster(APP_SPEC, replicas=3, store_url=redis.url, env=env) as running:
        yield running


@pytest.fixture
async def http(three: Cluster) -> AsyncIterator[McpHttp]:
    async with connect(three.url) as client:
        yield client


def served_by(reply: Any) -> str:
    name: str = reply.headers[SERVED_BY]
    return name


async def wait_for_file(path: Path, timeout: float = 10.0) -> str:
    async with asyncio.timeout(timeout):
        while not path.exists():
            await asyncio.sleep(0.02)
    return path.read_text()


def structured(reply: Any) -> Any:
    result = reply.result
    assert not result.get("isError"), result
    return result["structuredContent"]


# --- legacy sessions ------------------------------------------------------------------------------


async def test_a_legacy_session_is_served_by_every_replica(http: McpHttp) -> None:
    session = await Legacy(http).open()
    replicas, pids = set(), set()
    for _ in range(6):
        reply = await session.call_tool("whoami")
        assert reply.status == 200
        replicas.add(served_by(reply))
        pids.add(structured(reply)["result"])  # 2025-11-25 wraps the int
    assert replicas == {"r0", "r1", "r2"}, "consecutive requests of one session reached every replica"
    assert len(pids) == 3, "and three processes ran them"


async def test_the_log_level_set_through_one_replica_holds_on_the_others(http: McpHttp) -> None:
    session = await Legacy(http).open()
    assert (await session.request("logging/setLevel", {"level": "error"})).status == 200
    seen = set()
    for _ in range(3):  # the next calls reach the other replicas, which never saw setLevel
        reply = await session.call_tool("chatter")
        seen.add(served_by(reply))
        levels = [m["params"]["level"] for m in reply.notifications if m["method"] == "notifications/message"]
        assert levels == ["error"], f"{served_by(reply)} sent {levels}"
    assert seen == {"r0", "r1", "r2"}


async def test_delete_ends_the_session_on_every_replica_and_a_replay_is_refused(http: McpHttp) -> None:
    session = await Legacy(http).open()
    assert (await session.request("ping")).status == 200
    assert (await session.delete()).status == 204
    refused = set()
    for _ in range(3):
        reply = await session.request("ping")
        assert reply.status == 404, f"{served_by(reply)} still served a deleted session"
        refused.add(served_by(reply))
    assert refused == {"r0", "r1", "r2"}


async def test_a_guessed_session_id_is_refused(http: McpHttp) -> None:
    session = Legacy(http)
    session.session_id = "x" * 43
    for _ in range(3):
        assert (await session.request("ping")).status == 404


async def test_two_replicas_racing_to_end_one_session(http: McpHttp, redis: RedisServer) -> None:
    session = await Legacy(http).open()
    first, second = await asyncio.gather(session.delete(), session.delete())
    assert {served_by(first), served_by(second)} != {served_by(first)}, "the two DELETEs reached two replicas"
    assert sorted([first.status, second.status]) in ([204, 204], [204, 404])
    assert session.session_id is not None
    assert redis.command("EXISTS", f"toolkit:s:{session.session_id}") == 0
    for _ in range(3):
        assert (await session.request("ping")).status == 404


# --- server-to-client requests, cancellation, notifications ----------------------------------------


async def test_an_elicitation_is_answered_through_another_replica(http: McpHttp) -> None:
    session = await Legacy(http, capabilities={"elicitation": {}}).open()
    async with session.stream("tools/call", {"name": "ask", "arguments": {}}) as stream:
        question = await stream.next_message()
        assert question is not None and question["method"] == "elicitation/create"
        answer = await session.respond(question["id"], {"action": "accept", "content": {"colour": "teal"}})
        assert answer.status == 202
        assert served_by(answer) != served_by(stream), "the answer went to another replica than the tool's"
        result = await stream.next_message()
    assert result is not None
    value = result["result"]["structuredContent"]
    assert value["action"] == "accept" and value["colour"] == "teal"


async def test_a_cancellation_reaches_the_replica_running_the_request(http: McpHttp, marks: Path) -> None:
    session = await Legacy(http).open()
    tag = f"t{time.monotonic_ns()}"
    request_id = f"wait-{tag}"
    async with session.stream("tools/call", {"name": "wait", "arguments": {"tag": tag}}, id=request_id) as stream:
        running_pid = await wait_for_file(marks / f"started-{tag}")
        cancel = await session.notify("notifications/cancelled", {"requestId": request_id, "reason": "test"})
        assert cancel.status == 202
        assert served_by(cancel) != served_by(stream), "the cancellation reached another replica"
        cancelled_pid = await wait_for_file(marks / f"cancelled-{tag}")
        assert cancelled_pid == running_pid
        assert await stream.next_message() is None, "a cancelled request gets no response"


async def test_a_subscription_hears_an_update_made_on_another_replica(http: McpHttp) -> None:
    session = await Legacy(http).open()
    assert (await session.request("resources/subscribe", {"uri": "note://a"})).status == 200
    async with session.listen() as events:
        assert events.status == 200
        listener = served_by(events)
        for _ in range(3):  # touch from every replica: each update must arrive exactly once
            touched = await session.call_tool("touch", {"uri": "note://a"})
            assert touched.status == 200
        others = await session.call_tool("touch", {"uri": "note://other"})  # nobody subscribed
        assert others.status == 200
        updates = [await events.next_message() for _ in range(3)]
        assert all(u is not None and u["params"]["uri"] == "note://a" for u in updates), updates
        assert await events.within(0.5) is None, "one update per touch, nothing for note://other"
    assert listener in {"r0", "r1", "r2"}


async def test_one_get_stream_per_session_in_the_whole_deployment(http: McpHttp) -> None:
    session = await Legacy(http).open()
    async with session.listen() as first:
        assert first.status == 200
        async with session.listen() as second:
            assert served_by(second) != served_by(first)
            assert second.status == 409


async def test_a_modern_listener_hears_an_update_made_on_another_replica(http: McpHttp) -> None:
    modern = Modern(http)
    filter_ = {"notifications": {"resourceSubscriptions": ["note://m"], "toolsListChanged": True}}
    async with modern.stream("subscriptions/listen", filter_) as listen:
        acknowledged = await listen.next_message()
        assert acknowledged is not None and acknowledged["method"] == "notifications/subscriptions/acknowledged"
        for _ in range(3):
            assert (await modern.call_tool("touch", {"uri": "note://m"})).status == 200
        updates = [await listen.next_message() for _ in range(3)]
    assert all(u is not None and u["params"]["uri"] == "note://m" for u in updates), updates


async def test_a_list_change_on_one_replica_reaches_listeners_on_the_others(http: McpHttp) -> None:
    session = await Legacy(http).open()
    modern = Modern(http)
    async with (
        session.listen() as events,
        modern.stream("subscriptions/listen", {"notifications": {"toolsListChanged": True}}) as listen,
    ):
        acknowledged = await listen.next_message()
        assert acknowledged is not None and acknowledged["method"] == "notifications/subscriptions/acknowledged"
        flipped = await session.call_tool("flip")
        assert flipped.status == 200
        assert served_by(flipped) != served_by(events), "the change happened on another replica than the GET stream's"
        legacy = await events.next_message()
        assert legacy is not None and legacy["method"] == "notifications/tools/list_changed"
        heard = await listen.next_message()
        assert heard is not None and heard["method"] == "notifications/tools/list_changed"
        assert await events.within(0.5) is None, "told once"


async def test_a_roots_request_is_answered_through_another_replica(http: McpHttp) -> None:
    session = await Legacy(http, capabilities={"roots": {}}).open()
    async with session.stream("tools/call", {"name": "roots", "arguments": {}}) as stream:
        question = await stream.next_message()
        assert question is not None and question["method"] == "roots/list"
        answer = await session.respond(question["id"], {"roots": [{"uri": "file:///work", "name": "work"}]})
        assert served_by(answer) != served_by(stream)
        result = await stream.next_message()
    assert result is not None and result["result"]["structuredContent"] == {"result": ["file:///work"]}


async def test_modern_input_rounds_cross_replicas_with_the_secret_agreed_in_redis(http: McpHttp) -> None:
    modern = Modern(http, capabilities={"elicitation": {}})
    first = await modern.call_tool("ask")
    assert first.result["resultType"] == "input_required"
    (key,) = first.result["inputRequests"]
    second = await modern.request(
        "tools/call",
        {
            "name": "ask",
            "arguments": {},
            "inputResponses": {key: {"action": "accept", "content": {"colour": "red"}}},
            "requestState": first.result["requestState"],
        },
    )
    assert served_by(second) != served_by(first)
    assert second.result["structuredContent"]["colour"] == "red"


# --- resumable streams ----------------------------------------------------------------------------


async def _start_steps(session: Legacy, count: int, pause: float, seen: int) -> tuple[str, str, list[str], Any]:
    """Start ``steps``; read ``seen`` progress events; disconnect. (replica, last event id, events, request id)"""
    request_id = f"steps-{time.monotonic_ns()}"
    params = {"name": "steps", "arguments": {"count": count, "pause": pause}, "_meta": {"progressToken": "p"}}
    async with session.stream("tools/call", params, id=request_id) as stream:
        assert stream.is_sse
        priming = await stream.next_event()
        assert priming is not None and priming.id
        ids = [priming.id]
        for _ in range(seen):
            event = await stream.next_event()
            assert event is not None and event.id and json.loads(event.data)["method"] == "notifications/progress"
            ids.append(event.id)
        return served_by(stream), ids[-1], ids, request_id


async def test_a_dropped_stream_resumes_on_another_replica_exactly_once_in_order(http: McpHttp) -> None:
    session = await Legacy(http).open()
    origin, last, _, request_id = await _start_steps(session, count=6, pause=0.15, seen=2)
    async with session.listen(headers={"last-event-id": last}) as resumed:
        assert resumed.status == 200
        assert served_by(resumed) != origin
        messages = await resumed.read(timeout=15)
    progress = [m["params"]["progress"] for m in messages if m.get("method") == "notifications/progress"]
    assert progress == [3, 4, 5, 6], "every event after the last one seen, once, in order"
    assert messages[-1]["id"] == request_id and messages[-1]["result"]["structuredContent"]["steps"] == 6
    event_ids = [event.id for event in resumed.events if event.data]
    assert len(set(event_ids)) == len(event_ids) and last not in event_ids


async def test_a_resume_after_the_stream_replica_is_killed_gets_the_stored_events_then_an_error(
    redis: RedisServer,
) -> None:
    with cluster(APP_SPEC, replicas=2, store_url=redis.url) as pair:
        # A real client waits minutes on an SSE stream (mcp: 300 s); the dead replica's lease
        # takes 10 s to run out, longer than the tests' usual 10 s read timeout.
        async with httpx.AsyncClient(timeout=httpx.Timeout(60.0)) as raw:
            client = McpHttp(pair.url, raw)
            session = await Legacy(client).open()
            origin, last, _, request_id = await _start_steps(session, count=50, pause=0.1, seen=1)
            await asyncio.sleep(0.35)  # a few more progress events get stored after the disconnect
            pair.replicas.kill(origin)
            started = time.monotonic()
            async with session.listen(headers={"last-event-id": last}) as resumed:
                assert resumed.status == 200
                assert served_by(resumed) != origin
                messages = await resumed.read(timeout=40)
            took = time.monotonic() - started
    progress = [m["params"]["progress"] for m in messages if m.get("method") == "notifications/progress"]
    assert progress and progress == list(range(2, 2 + len(progress))), "the stored events, in order, once"
    final = messages[-1]
    assert final["id"] == request_id and DEAD_OWNER in final["error"]["message"]
    # Liveness, not speed: the dead replica's lease (10 s) runs out, then the follower says so.
    assert took < 35, f"the resumed stream took {took:.1f} s to end"


# --- tasks ----------------------------------------------------------------------------------------

WITH_TASKS = {"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}}


async def _poll_task(
    modern: Modern, task_id: str, until: Any, seen: set[str] | None = None, timeout: float = 30
) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        reply = await modern.request("tasks/get", {"taskId": task_id})
        if seen is not None:
            seen.add(served_by(reply))
        task: dict[str, Any] = reply.result
        if until(task):
            return task
        assert time.monotonic() < deadline, f"task {task_id} still {task['status']}"
        await asyncio.sleep(0.05)


async def test_a_task_runs_where_it_was_created_and_every_replica_answers_for_it(http: McpHttp, marks: Path) -> None:
    modern = Modern(http, capabilities=WITH_TASKS)
    tag = f"t{time.monotonic_ns()}"
    created = await modern.call_tool("job", {"tag": tag, "seconds": 1.0})
    assert created.result["resultType"] == "task"
    runner = await wait_for_file(marks / f"started-{tag}")
    seen: set[str] = set()
    done = await _poll_task(modern, created.result["taskId"], lambda task: task["status"] != "working", seen)
    assert done["status"] == "completed"
    assert str(done["result"]["structuredContent"]["pid"]) == runner, "it ran on the replica that created it"
    assert len(seen) >= 2 and seen != {served_by(created)}, f"polled through several replicas: {seen}"


async def test_a_tasks_question_is_answered_through_another_replica(http: McpHttp, marks: Path) -> None:
    modern = Modern(http, capabilities=WITH_TASKS)
    tag = f"t{time.monotonic_ns()}"
    created = await modern.call_tool("job", {"tag": tag, "seconds": 0.5, "ask": True})
    task_id = created.result["taskId"]
    runner = await wait_for_file(marks / f"started-{tag}")
    asking = await _poll_task(modern, task_id, lambda task: task["status"] == "input_required")
    (key,) = asking["inputRequests"]
    for _ in range(3):  # round-robin: one of three updates lands on another replica than the creator
        answer = {key: {"action": "accept", "content": {"colour": "teal"}}}
        update = await modern.request("tasks/update", {"taskId": task_id, "inputResponses": answer})
        assert update.result["resultType"] == "complete"
        if served_by(update) != served_by(created):
            break
    assert served_by(update) != served_by(created), "the answer went through another replica"
    done = await _poll_task(modern, task_id, lambda task: task["status"] not in ("input_required", "working"))
    assert done["status"] == "completed"
    assert done["result"]["structuredContent"] == {"pid": int(runner), "colour": "teal"}, "the runner got the answer"


async def test_a_task_is_cancelled_through_another_replica(http: McpHttp, marks: Path) -> None:
    modern = Modern(http, capabilities=WITH_TASKS)
    for _attempt in range(5):  # round-robin: retry until the cancellation lands elsewhere than the runner
        tag = f"t{time.monotonic_ns()}"
        created = await modern.call_tool("job", {"tag": tag, "seconds": 120.0})
        runner = await wait_for_file(marks / f"started-{tag}")
        cancel = await modern.request("tasks/cancel", {"taskId": created.result["taskId"]})
        assert cancel.result["resultType"] == "complete"
        if served_by(cancel) != served_by(created):
            break
    assert served_by(cancel) != served_by(created), "a cancellation went through another replica"
    assert await wait_for_file(marks / f"cancelled-{tag}") == runner, "the running tool itself was cancelled"
    final = await _poll_task(modern, created.result["taskId"], lambda task: task["status"] != "working")
    assert final["status"] == "cancelled"


async def test_a_2025_task_result_waits_on_another_replica_than_the_one_running_it(http: McpHttp, marks: Path) -> None:
    session = await Legacy(http, capabilities={"elicitation": {}}).open()
    tag = f"t{time.monotonic_ns()}"
    created = await session.request(
        "tools/call", {"name": "job", "arguments": {"tag": tag, "seconds": 1.5}, "task": {}}
    )
    task_id = created.result["task"]["taskId"]
    runner = await wait_for_file(marks / f"started-{tag}")
    result = await session.request("tasks/result", {"taskId": task_id})
    if served_by(result) == served_by(created):
        result = await session.request("tasks/result", {"taskId": task_id})
    assert served_by(result) != served_by(created)
    assert str(result.result["structuredContent"]["pid"]) == runner
    assert result.result["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task_id}
    listed = (await session.request("tasks/list")).result["tasks"]
    assert [task["taskId"] for task in listed] == [task_id]


async def test_a_task_whose_replica_is_killed_ends_failed_once_its_lease_runs_out(
    redis: RedisServer, marks: Path
) -> None:
    env = {"SCALEOUT_MARKS": str(marks)}
    with cluster(APP_SPEC, replicas=2, store_url=redis.url, env=env) as pair:
        async with httpx.AsyncClient(timeout=httpx.Timeout(30.0)) as raw:
            modern = Modern(McpHttp(pair.url, raw), capabilities=WITH_TASKS)
            tag = f"t{time.monotonic_ns()}"
            created = await modern.call_tool("job", {"tag": tag, "seconds": 300.0})
            await wait_for_file(marks / f"started-{tag}")
            pair.replicas.kill(served_by(created))
            # Liveness, not speed: the dead replica's lease (10 s) runs out, then the survivor says so.
            failed = await _poll_task(
                modern, created.result["taskId"], lambda task: task["status"] != "working", timeout=40
            )
    assert failed["status"] == "failed"
    assert failed["error"]["code"] == -32603
    assert "replica running this task stopped" in failed["error"]["message"]


# --- faults ---------------------------------------------------------------------------------------


def test_an_unreachable_redis_at_start_is_named_and_nothing_serves() -> None:
    url = f"redis://127.0.0.1:{free_port()}/0"
    run = subprocess.run(
        [str(TOOLKIT), "run", APP_SPEC, "--transport", "http", "--port", str(free_port()), "--store", url],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.returncode == 1
    assert f"cannot reach Redis at {url}" in run.stderr
    assert "--store" in run.stderr and "Traceback" not in run.stderr


async def test_redis_lost_while_serving_gives_503_then_service_resumes(tmp_path: Path) -> None:
    with redis_server() as own, cluster(APP_SPEC, replicas=2, store_url=own.url) as pair:
        async with connect(pair.url) as client:
            session = await Legacy(client).open()
            own.stop()
            # For up to RECHECK_SECONDS a replica serves a session from the copy it checked last,
            # needing no Redis; then it checks again, and that needs Redis.
            await asyncio.sleep(RECHECK_SECONDS + 0.2)
            for _ in range(2):  # each replica: a clear 503, no hang (the client's timeout is 10 s)
                reply = await session.request("ping")
                assert reply.status == 503
                assert "Redis at" in reply.error["message"] and reply.headers["retry-after"] == "1"
            refused = await client.send(
                version=LEGACY,
                body={
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": LEGACY,
                        "capabilities": {},
                        "clientInfo": {"name": "t", "version": "1"},
                    },
                },
            )
            assert refused.status == 503
            modern = await Modern(client).call_tool("whoami")
            assert modern.status == 200, "the modern era needs no store: it keeps working"
            own.restart()  # an empty Redis: the old session is gone, new ones work everywhere
            assert (await session.request("ping")).status == 404
            fresh = await Legacy(client).open()
            for _ in range(2):
                assert (await fresh.call_tool("whoami")).status == 200


def test_workers_with_a_store_keep_legacy_sessions(redis: RedisServer) -> None:
    port = free_port()
    argv = [str(TOOLKIT), "run", APP_SPEC, "--transport", "http", "--port", str(port), "--workers", "2"]
    process = subprocess.Popen([*argv, "--store", redis.url], stderr=subprocess.PIPE)
    try:
        wait_for_port(port, process=process)
        url = f"http://127.0.0.1:{port}/mcp"
        pids: set[int] = set()

        async def drive() -> None:
            async with connect(url) as client:
                session = await Legacy(client).open()
                for _ in range(20):
                    reply = await session.call_tool("whoami")
                    assert reply.status == 200, "every worker serves the session"
                    pids.add(reply.result["structuredContent"]["result"])

        asyncio.run(drive())
    finally:
        process.terminate()
        _, err = process.communicate(timeout=20)
    assert b"WITHOUT sessions" not in err
    assert pids, "the tool answered with the worker's process id"


def _stderr_of_workers(app_spec: str) -> bytes:
    """What ``toolkit run APP --workers 2`` without a store says while it starts."""
    port = free_port()
    argv = [str(TOOLKIT), "run", app_spec, "--transport", "http", "--port", str(port), "--workers", "2"]
    process = subprocess.Popen(argv, stderr=subprocess.PIPE, env={**os.environ, "TOOLKIT_STORE": ""})
    try:
        wait_for_port(port, process=process)
    finally:
        process.terminate()
        _, err = process.communicate(timeout=20)
    return err


def test_workers_without_a_store_say_loudly_that_legacy_sessions_are_off() -> None:
    err = _stderr_of_workers(APP_SPEC)
    assert b"WITHOUT sessions" in err and b"--store redis://" in err


def test_workers_of_an_app_built_in_code_warn_that_sessions_stay_in_one_worker(tmp_path: Path) -> None:
    app = tmp_path / "built.py"
    app.write_text("from toolkit import Server\nserver = Server('built')\napp = server.http_app()\n")
    err = _stderr_of_workers(f"{app}:app")
    assert b"lives in one worker" in err and b"stateless=True" in err
    assert b"WITHOUT sessions" not in err, "that app keeps its sessions: saying they are off would be false"


async def test_a_mounted_app_with_a_shared_store_needs_its_lifespan(redis: RedisServer) -> None:
    from starlette.applications import Starlette
    from starlette.routing import Mount

    from toolkit import Server

    mcp_app = Server("mounted", store=redis.url).http_app()
    host = Starlette(routes=[Mount("/api", app=mcp_app)])  # no lifespan=mcp_app.lifespan
    transport = httpx.ASGITransport(app=host)
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
        reply = await client.post(
            "/api/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
            headers={"accept": "application/json, text/event-stream"},
        )
    assert reply.status_code == 500
    assert "lifespan=mcp_app.lifespan" in reply.json()["error"]["message"]


# --- real clients of both eras through the balancer ------------------------------------------------


@pytest.mark.timeout(300)
def test_real_clients_of_both_eras_pass_the_interop_plan_through_the_balancer(redis: RedisServer) -> None:
    weather = REPO / "examples" / "weather.py"
    with cluster(f"{weather}:server", replicas=3, store_url=redis.url) as running:
        run = subprocess.run(
            [str(PYTHON), "interop/run.py", "--url", running.url],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=280,
            check=False,
        )
    last = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else ""
    assert run.returncode == 0 and last.endswith(" passed, 0 failed"), run.stdout[-3000:] + run.stderr[-2000:]
    passed = int(last.split()[0])
    assert passed >= 150, "six client configurations, 25 checks each"
    for client in ("mcp 1.30.0", "ts client 2.4.0 (modern)", "ts client 2.4.0 (default=legacy)"):
        assert client in run.stdout
