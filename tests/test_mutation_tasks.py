"""What the mutation run of ``toolkit/_extensions/tasks/runs.py`` found unchecked.

Tasks across replicas, in one process: two servers built from the same code, each served over
real HTTP (uvicorn on 127.0.0.1), keep their sessions and tasks in one shared store and tell each
other things on its bus, as replicas on Redis do (``tests/test_scaleout.py`` runs those, as
subprocesses on a real redis-server; these run in process so that the mutation run can). The
shared store is ``Deployment`` below: an implementation of the public ``Store`` interface, the
memory store's state shared by every replica of it, a bus that reaches every replica, and leases
a test can take away (a replica that hangs or dies without a word).

Each store's periodic recheck (a task waiting for input looks in the store every 5 s; a
``tasks/result`` on another replica every 1 s) is set to an hour here: what these tests see
arrives over the bus, or not at all.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from pydantic import BaseModel
from tests.http_support import Legacy, McpHttp, Modern, connect, serve

from toolkit import Context, Server, ToolError, ToolResult
from toolkit._extensions.tasks import runs
from toolkit._store.tasks import MemoryTaskStore
from toolkit._types import log_digest
from toolkit.middleware import CallNext, McpRequest, Middleware
from toolkit.stores import MemoryStore, StoreUnavailable
from toolkit.testing import Client

pytestmark = pytest.mark.timeout(30)

EXTENSION = "io.modelcontextprotocol/tasks"
RELATED = "io.modelcontextprotocol/related-task"
WITH_TASKS = {"elicitation": {}, "extensions": {EXTENSION: {}}}
STOPPED = "The server replica running this task stopped before it finished; start it again"


class Deployment:
    """What the replicas of one deployment share: sessions, tasks, the bus, and who is alive."""

    def __init__(self) -> None:
        self.sessions: dict[str, Any] = {}
        self.get_streams: dict[str, Any] = {}
        self.tasks = SharedTasks()
        self.listening: dict[str, Callable[[dict[str, Any]], None]] = {}
        self.alive: set[str] = set()
        self.heard: list[dict[str, Any]] = []
        self.replicas: list[Replica] = []
        self.lost: set[str] = set()
        """Task actions (``"ended"``, ...) whose bus messages are lost on the way."""

    def replica(self) -> Replica:
        made = Replica(self)
        self.replicas.append(made)
        return made


class SharedTasks(MemoryTaskStore):
    """The deployment's tasks; ``forget`` is a record expiring in Redis under a waiting replica."""

    unreachable = False
    """While set, taking answers fails as a store out of reach does."""

    def forget(self, task_id: str) -> None:
        self._tasks.pop(task_id)

    ends_unrecorded = False
    """While set, recording a task's end fails as a store out of reach does."""

    async def update_task(self, task_id: str, **changes: Any) -> Any:
        if self.ends_unrecorded and changes.get("status") in ("completed", "failed", "cancelled"):
            raise StoreUnavailable("the task store is out of reach")
        return await super().update_task(task_id, **changes)

    async def take_answers(self, task_id: str) -> dict[str, Any]:
        if self.unreachable:
            raise StoreUnavailable("the task store is out of reach")
        return await super().take_answers(task_id)


class Replica(MemoryStore):
    """One replica's view of a ``Deployment`` (a ``Store`` whose state other replicas see)."""

    shared = True

    def __init__(self, deployment: Deployment) -> None:
        super().__init__()
        self.deployment = deployment
        self._sessions = deployment.sessions
        self._get_streams = deployment.get_streams
        self._task_store = deployment.tasks

    async def start(self, on_message: Callable[[dict[str, Any]], None] | None = None) -> None:
        if on_message is not None:
            self.deployment.listening[self.replica] = on_message
        self.deployment.alive.add(self.replica)

    async def close(self) -> None:
        self.deployment.listening.pop(self.replica, None)
        self.deployment.alive.discard(self.replica)

    async def publish(self, message: dict[str, Any]) -> None:
        self.deployment.heard.append(message)
        if message.get("a") in self.deployment.lost:
            return
        loop = asyncio.get_running_loop()
        for deliver in list(self.deployment.listening.values()):
            loop.call_soon(deliver, message)

    async def replica_alive(self, replica: str) -> bool:
        return replica in self.deployment.alive


class Confirm(BaseModel):
    confirm: bool


def make_server(seen: dict[str, Any]) -> Server:
    """The code every replica runs; ``seen`` records what its tools did."""
    server = Server("replicated", task_poll_interval_ms=20)

    @server.tool(task="optional")
    async def forever(ctx: Context) -> str:
        """Runs until cancelled."""
        seen["started"].set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            seen["cancelled"].set()
            raise
        return "never"

    @server.tool(task="required")
    async def confirm(item: str, ctx: Context) -> str:
        """Asks for a confirmation through the task."""
        answer = await ctx.elicit(f"Delete {item}?", Confirm)
        return f"deleted {item}" if answer.accepted and answer.data and answer.data.confirm else f"kept {item}"

    @server.tool(task="optional")
    async def slow(n: int, ctx: Context) -> int:
        """Doubles once the test lets it."""
        seen["started"].set()
        await seen["go"].wait()
        return n * 2

    return server


@pytest.fixture(autouse=True)
def bus_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runs, "ANSWER_RECHECK_SECONDS", 3600.0)
    monkeypatch.setattr(runs, "END_RECHECK_SECONDS", 3600.0)


@contextlib.asynccontextmanager
async def two_replicas() -> AsyncIterator[tuple[Deployment, list[dict[str, Any]], McpHttp, McpHttp]]:
    """Replicas A and B of one deployment: what each one's tools did, and a client of each."""
    deployment = Deployment()
    seen = [{"started": asyncio.Event(), "cancelled": asyncio.Event(), "go": asyncio.Event()} for _ in range(2)]
    async with contextlib.AsyncExitStack() as stack:
        clients = []
        for index in range(2):
            running = await stack.enter_async_context(serve(make_server(seen[index]), store=deployment.replica()))
            clients.append(await stack.enter_async_context(connect(running.url)))
        yield deployment, seen, clients[0], clients[1]


async def poll(client: Modern, task_id: str, until: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    deadline = time.monotonic() + 10
    while True:
        task = (await client.request("tasks/get", {"taskId": task_id})).result
        if until(task):
            return task
        assert time.monotonic() < deadline, f"not within 10 s: {task}"
        await asyncio.sleep(0.02)


async def test_an_answer_given_to_another_replica_reaches_the_question_over_the_bus() -> None:
    async with two_replicas() as (deployment, _, a, b):
        on_a, on_b = Modern(a, capabilities=WITH_TASKS), Modern(b, capabilities=WITH_TASKS)
        task_id = (await on_a.call_tool("confirm", {"item": "x"})).result["taskId"]
        asking = await poll(on_b, task_id, lambda task: task["status"] == "input_required")
        (key,) = asking["inputRequests"]
        accept = {"action": "accept", "content": {"confirm": True}}
        ack = await on_b.request("tasks/update", {"taskId": task_id, "inputResponses": {key: accept}})
        assert ack.result["resultType"] == "complete"
        done = await poll(on_b, task_id, lambda task: task["status"] not in ("input_required", "working"))
    assert done["status"] == "completed"
    assert done["result"]["content"] == [{"type": "text", "text": "deleted x"}]
    assert {"t": "task", "a": "input", "i": task_id} in deployment.heard


async def test_a_cancel_sent_to_another_replica_stops_the_tool_over_the_bus() -> None:
    async with two_replicas() as (deployment, seen, a, b):
        on_a, on_b = Modern(a, capabilities=WITH_TASKS), Modern(b, capabilities=WITH_TASKS)
        task_id = (await on_a.call_tool("forever")).result["taskId"]
        await asyncio.wait_for(seen[0]["started"].wait(), 5)
        assert (await on_b.request("tasks/cancel", {"taskId": task_id})).result["resultType"] == "complete"
        await asyncio.wait_for(seen[0]["cancelled"].wait(), 5)
        cancelled = await poll(on_a, task_id, lambda task: task["status"] != "working")
    assert cancelled["status"] == "cancelled"
    assert {"t": "task", "a": "cancel", "i": task_id} in deployment.heard
    assert {"t": "task", "a": "ended", "i": task_id} in deployment.heard


async def test_a_task_whose_replica_died_is_failed_by_the_next_look_and_not_before() -> None:
    async with two_replicas() as (deployment, seen, a, b):
        on_a, on_b = Modern(a, capabilities=WITH_TASKS), Modern(b, capabilities=WITH_TASKS)
        task_id = (await on_a.call_tool("forever")).result["taskId"]
        await asyncio.wait_for(seen[0]["started"].wait(), 5)
        record = await deployment.tasks.get_task(task_id)
        assert record is not None
        # A live replica's task is left alone, by its own replica and by the others.
        assert (await on_b.request("tasks/get", {"taskId": task_id})).result["status"] == "working"
        assert (await on_a.request("tasks/get", {"taskId": task_id})).result["status"] == "working"
        # Replica A's lease lapses (it hangs, or died without a word): B fails its task.
        deployment.alive.discard(record.replica)
        assert (await on_a.request("tasks/get", {"taskId": task_id})).result["status"] == "working"
        failed = (await on_b.request("tasks/get", {"taskId": task_id})).result
    assert failed["status"] == "failed"
    assert failed["statusMessage"] == STOPPED
    assert failed["error"] == {"code": -32603, "message": STOPPED}


async def test_a_2025_tasks_result_on_another_replica_returns_when_the_bus_says_the_task_ended() -> None:
    async with two_replicas() as (_, seen, a, b):
        session = await Legacy(a, "2025-11-25").open()
        reply = await session.request("tools/call", {"name": "slow", "arguments": {"n": 21}, "task": {}})
        task_id = reply.result["task"]["taskId"]
        await asyncio.wait_for(seen[0]["started"].wait(), 5)
        on_b = Legacy(b, "2025-11-25")
        on_b.session_id = session.session_id
        waiting = asyncio.create_task(on_b.request("tasks/result", {"taskId": task_id}))
        await asyncio.sleep(0.2)  # B is waiting; only the bus can tell it the task ended
        assert not waiting.done()
        seen[0]["go"].set()
        result = (await asyncio.wait_for(waiting, 10)).result
    assert result["content"] == [{"type": "text", "text": "42"}]
    assert result["_meta"][RELATED] == {"taskId": task_id}


async def test_a_task_finds_an_answer_in_the_store_when_no_bus_message_came(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bus message may be lost (Redis pub/sub keeps nothing): a waiting task looks in the store itself."""
    monkeypatch.setattr(runs, "ANSWER_RECHECK_SECONDS", 0.05)
    async with two_replicas() as (deployment, _, a, _b):
        on_a = Modern(a, capabilities=WITH_TASKS)
        task_id = (await on_a.call_tool("confirm", {"item": "x"})).result["taskId"]
        asking = await poll(on_a, task_id, lambda task: task["status"] == "input_required")
        (key,) = asking["inputRequests"]
        # The answer reaches the store, and no replica is told.
        await deployment.tasks.answer_task(task_id, {key: {"action": "accept", "content": {"confirm": True}}})
        done = await poll(on_a, task_id, lambda task: task["status"] not in ("input_required", "working"))
    assert done["status"] == "completed"
    assert done["result"]["content"] == [{"type": "text", "text": "deleted x"}]
    assert not [message for message in deployment.heard if message.get("a") == "input"]


# --- 2025-11-25 tasks over HTTP: where a task's messages go ---------------------------------------------


def chatty_server(seen: dict[str, Any], **options: Any) -> Server:
    server = Server("chatty", task_poll_interval_ms=20, **options)

    @server.tool(task="optional")
    async def chatty(ctx: Context) -> str:
        """Asks, logs, asks again, then waits to be let go."""
        first = await ctx.elicit("Sure?", Confirm)
        await ctx.info("asking again")
        second = await ctx.elicit("Really?", Confirm)
        await seen["after"].wait()
        return f"{first.action} {second.action}"

    return server


def _related(message: dict[str, Any]) -> Any:
    return message["params"]["_meta"][RELATED]


async def _start_chatty(http: McpHttp) -> tuple[Legacy, str]:
    session = await Legacy(http, "2025-11-25", capabilities={"elicitation": {}}).open()
    reply = await session.request("tools/call", {"name": "chatty", "arguments": {}, "task": {}})
    return session, reply.result["task"]["taskId"]


async def _next(stream: Any) -> dict[str, Any]:
    message = await stream.next_message()
    assert message is not None, "the stream ended"
    return message


ACCEPT = {"action": "accept", "content": {"confirm": True}}


async def test_a_2025_tasks_messages_wait_for_and_then_go_on_its_tasks_result_stream_carrying_the_task() -> None:
    seen = {"after": asyncio.Event()}
    async with serve(chatty_server(seen)) as running, connect(running.url) as http:
        session, task_id = await _start_chatty(http)
        # Nothing reaches this client (no GET stream, no tasks/result yet): the question waits.
        asking = await _poll_legacy(session, task_id, lambda task: task["status"] == "input_required")
        assert asking["statusMessage"] == "Waiting for the client: elicitation/create"
        async with session.stream("tasks/result", {"taskId": task_id}) as stream:
            first = await _next(stream)
            assert (first["method"], first["params"]["message"], _related(first)) == (
                "elicitation/create",
                "Sure?",
                {"taskId": task_id},
            )
            await session.respond(first["id"], ACCEPT)
            log = await _next(stream)
            assert (log["method"], log["params"]["data"], _related(log)) == (
                "notifications/message",
                "asking again",
                {"taskId": task_id},
            )
            second = await _next(stream)
            assert (second["method"], second["params"]["message"], _related(second)) == (
                "elicitation/create",
                "Really?",
                {"taskId": task_id},
            )
            await session.respond(second["id"], ACCEPT)
            # Answered: working again, and the status message is gone.
            working = await _poll_legacy(session, task_id, lambda task: task["status"] != "input_required")
            assert working["status"] == "working"
            assert "statusMessage" not in working
            seen["after"].set()
            result = await _next(stream)
    assert result["result"]["content"] == [{"type": "text", "text": "accept accept"}]
    assert result["result"]["_meta"][RELATED] == {"taskId": task_id}


async def test_a_2025_tasks_messages_go_to_the_open_get_stream_without_tasks_result() -> None:
    seen = {"after": asyncio.Event()}
    seen["after"].set()
    async with serve(chatty_server(seen)) as running, connect(running.url) as http:
        session = await Legacy(http, "2025-11-25", capabilities={"elicitation": {}}).open()
        async with session.listen() as standalone:
            reply = await session.request("tools/call", {"name": "chatty", "arguments": {}, "task": {}})
            task_id = reply.result["task"]["taskId"]
            first = await _next(standalone)
            assert (first["method"], _related(first)) == ("elicitation/create", {"taskId": task_id})
            await session.respond(first["id"], ACCEPT)
            log = await _next(standalone)
            assert (log["method"], _related(log)) == ("notifications/message", {"taskId": task_id})
            second = await _next(standalone)
            assert (second["method"], _related(second)) == ("elicitation/create", {"taskId": task_id})
            await session.respond(second["id"], {"action": "decline"})
            result = (await session.request("tasks/result", {"taskId": task_id})).result
    assert result["content"] == [{"type": "text", "text": "accept decline"}]


async def test_a_2025_tasks_question_nobody_answers_fails_it_after_the_client_request_timeout() -> None:
    seen = {"after": asyncio.Event()}
    async with serve(chatty_server(seen, client_request_timeout=0.5)) as running, connect(running.url) as http:
        session, task_id = await _start_chatty(http)
        async with session.stream("tasks/result", {"taskId": task_id}) as stream:
            question = await _next(stream)
            assert question["method"] == "elicitation/create"
            result = await _next(stream)  # never answered
    assert result["result"]["isError"] is True
    assert result["result"]["content"][0]["text"].startswith("elicitation/create failed: ")


async def _poll_legacy(session: Legacy, task_id: str, until: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    deadline = time.monotonic() + 10
    while True:
        task = (await session.request("tasks/get", {"taskId": task_id})).result
        if until(task):
            return task
        assert time.monotonic() < deadline, f"not within 10 s: {task}"
        await asyncio.sleep(0.02)


async def test_2025_tasks_list_pages_end_exactly_and_unknown_cursors_are_refused_naming_them() -> None:
    server = Server("listing", page_size=2)

    @server.tool(task="optional")
    def quick(n: int) -> int:
        """Returns n."""
        return n

    async with Client(server, protocol_version="2025-11-25") as client:
        made = [
            (await client.request("tools/call", {"name": "quick", "arguments": {"n": n}, "task": {}}))["result"][
                "task"
            ]["taskId"]
            for n in range(4)
        ]
        first = (await client.request("tasks/list", {}))["result"]
        second = (await client.request("tasks/list", {"cursor": first["nextCursor"]}))["result"]
        past_the_end = (await client.request("tasks/list", {"cursor": "4"}))["result"]
        refused = [(await client.request("tasks/list", {"cursor": cursor}))["error"] for cursor in (2, "5", "-1", "x")]
    assert first["nextCursor"] == "2"
    assert [task["taskId"] for task in first["tasks"] + second["tasks"]] == made
    assert "nextCursor" not in second, "a last page that is full has no next one"
    assert past_the_end == {"tasks": []}, "the cursor just past the last task is an empty page, not an error"
    assert refused == [
        {"code": -32602, "message": f"Invalid params: unknown cursor {cursor!r}", "data": {"cursor": cursor}}
        for cursor in (2, "5", "-1", "x")
    ]


async def test_a_tasks_result_on_another_replica_finds_the_end_in_the_store_when_the_bus_message_is_lost(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(runs, "END_RECHECK_SECONDS", 0.05)
    async with two_replicas() as (deployment, seen, a, b):
        deployment.lost.add("ended")
        session = await Legacy(a, "2025-11-25").open()
        reply = await session.request("tools/call", {"name": "slow", "arguments": {"n": 21}, "task": {}})
        task_id = reply.result["task"]["taskId"]
        await asyncio.wait_for(seen[0]["started"].wait(), 5)
        on_b = Legacy(b, "2025-11-25")
        on_b.session_id = session.session_id
        waiting = asyncio.create_task(on_b.request("tasks/result", {"taskId": task_id}))
        seen[0]["go"].set()
        result = (await asyncio.wait_for(waiting, 10)).result
    assert result["content"] == [{"type": "text", "text": "42"}]


async def test_two_tasks_result_waiting_on_one_replica_both_get_the_result() -> None:
    async with two_replicas() as (_, seen, a, b):
        session = await Legacy(a, "2025-11-25").open()
        reply = await session.request("tools/call", {"name": "slow", "arguments": {"n": 21}, "task": {}})
        task_id = reply.result["task"]["taskId"]
        await asyncio.wait_for(seen[0]["started"].wait(), 5)
        on_b = Legacy(b, "2025-11-25")
        on_b.session_id = session.session_id
        waiting = [asyncio.create_task(on_b.request("tasks/result", {"taskId": task_id})) for _ in range(2)]
        await asyncio.sleep(0.2)  # both are waiting on B
        seen[0]["go"].set()
        replies = [await asyncio.wait_for(one, 10) for one in waiting]
    assert [reply.result["content"] for reply in replies] == [[{"type": "text", "text": "42"}]] * 2


async def test_a_task_that_expires_while_tasks_result_waits_is_not_found_naming_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(runs, "END_RECHECK_SECONDS", 0.05)
    async with two_replicas() as (deployment, seen, a, b):
        session = await Legacy(a, "2025-11-25").open()
        reply = await session.request("tools/call", {"name": "forever", "arguments": {}, "task": {}})
        task_id = reply.result["task"]["taskId"]
        await asyncio.wait_for(seen[0]["started"].wait(), 5)
        on_b = Legacy(b, "2025-11-25")
        on_b.session_id = session.session_id
        waiting = asyncio.create_task(on_b.request("tasks/result", {"taskId": task_id}))
        await asyncio.sleep(0.2)  # B is waiting
        deployment.tasks.forget(task_id)
        error = (await asyncio.wait_for(waiting, 10)).error
    assert error == {
        "code": -32602,
        "message": f"Failed to retrieve task: Task not found ({task_id!r} is unknown, has expired, or is not yours)",
        "data": {"taskId": task_id},
    }


# --- in process: what a client is told --------------------------------------------------------------


def steps_server(seen: dict[str, asyncio.Event]) -> Server:
    server = Server("steps", task_poll_interval_ms=20)

    @server.tool(task="required")
    async def steps(ctx: Context) -> str:
        """Reports progress three ways, waiting for the test between them."""
        await ctx.report_progress(1, 2)
        await seen["one"].wait()
        await ctx.report_progress(3)
        await seen["two"].wait()
        await ctx.report_progress(4, 5, "almost")
        await seen["three"].wait()
        return "done"

    @server.tool(task="optional")
    async def stubborn(ctx: Context) -> str:
        """Ignores its cancellation until the test lets it end."""
        seen["started"].set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            await seen["release"].wait()
        return "ended anyway"

    @server.tool(task="optional")
    async def forever(ctx: Context) -> str:
        """Runs until cancelled."""
        seen["started"].set()
        await asyncio.sleep(3600)
        return "never"

    return server


def _step_events() -> dict[str, asyncio.Event]:
    return {name: asyncio.Event() for name in ("one", "two", "three", "started", "release")}


async def _poll_client(client: Client, task_id: str, until: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    deadline = time.monotonic() + 10
    while True:
        task = (await client.request("tasks/get", {"taskId": task_id}))["result"]
        if until(task):
            return task
        assert time.monotonic() < deadline, f"not within 10 s: {task}"
        await asyncio.sleep(0.02)


async def test_a_tasks_progress_is_its_status_message() -> None:
    seen = _step_events()
    async with Client(steps_server(seen), capabilities=WITH_TASKS) as client:
        task_id = (await client.request("tools/call", {"name": "steps", "arguments": {}}))["result"]["taskId"]
        messages = []
        for step, expected in (("one", "1/2"), ("two", "3"), ("three", "almost")):
            task = await _poll_client(client, task_id, lambda task, text=expected: task.get("statusMessage") == text)
            messages.append(task["statusMessage"])
            seen[step].set()
        await _poll_client(client, task_id, lambda task: task["status"] == "completed")
    assert messages == ["1/2", "3", "almost"]


async def test_a_tasks_ttl_is_checked_exactly() -> None:
    seen = _step_events()
    async with Client(steps_server(seen), protocol_version="2025-11-25") as client:

        async def call(ttl: Any) -> dict[str, Any]:
            return await client.request("tools/call", {"name": "forever", "arguments": {}, "task": {"ttl": ttl}})

        shortest = (await call(1))["result"]["task"]
        too_short = (await call(0.5))["error"]
        not_a_number = (await call("soon"))["error"]
    assert shortest["ttl"] == 1
    assert too_short == {"code": -32602, "message": 'Invalid params: "task.ttl" must be at least 1 ms, not 0.5'}
    assert not_a_number == {"code": -32602, "message": 'Invalid params: "task.ttl" must be a number of milliseconds'}


async def test_unknown_tasks_and_bad_answers_are_refused_word_for_word() -> None:
    seen = _step_events()
    async with Client(steps_server(seen), capabilities=WITH_TASKS) as client:
        unknown = (await client.request("tasks/get", {"taskId": "nope"}))["error"]
        task_id = (await client.request("tools/call", {"name": "forever", "arguments": {}}))["result"]["taskId"]
        bad = (await client.request("tasks/update", {"taskId": task_id, "inputResponses": []}))["error"]
        missing = (await client.request("tasks/get", {}))["error"]
        not_a_string = (await client.request("tasks/get", {"taskId": 7}))["error"]
    assert unknown == {
        "code": -32602,
        "message": "Failed to retrieve task: Task not found ('nope' is unknown, has expired, or is not yours)",
        "data": {"taskId": "nope"},
    }
    assert bad == {
        "code": -32602,
        "message": 'Invalid params: "inputResponses" must be an object of answers by request key',
    }
    assert missing == {"code": -32602, "message": 'Invalid params: "taskId" is missing', "data": {"param": "taskId"}}
    assert not_a_string == {
        "code": -32602,
        "message": 'Invalid params: "taskId" must be a string, not int',
        "data": {"param": "taskId"},
    }


async def test_a_2025_cancel_says_who_cancelled_and_tasks_result_says_it_was_cancelled() -> None:
    seen = _step_events()
    async with Client(steps_server(seen), protocol_version="2025-11-25") as client:
        created = await client.request("tools/call", {"name": "forever", "arguments": {}, "task": {}})
        task_id = created["result"]["task"]["taskId"]
        await asyncio.wait_for(seen["started"].wait(), 5)
        cancelled = (await client.request("tasks/cancel", {"taskId": task_id}))["result"]
        result = (await client.request("tasks/result", {"taskId": task_id}))["error"]
        final = (await client.request("tasks/get", {"taskId": task_id}))["result"]
    assert (cancelled["status"], cancelled["statusMessage"]) == ("cancelled", "Cancelled by the client")
    assert (final["status"], final["statusMessage"]) == ("cancelled", "Cancelled by the client")
    assert result == {"code": -32603, "message": "The task was cancelled before it finished"}


async def test_cancel_answers_even_when_the_tool_ignores_its_cancellation() -> None:
    seen = _step_events()
    async with Client(steps_server(seen), capabilities=WITH_TASKS) as client:
        task_id = (await client.request("tools/call", {"name": "stubborn", "arguments": {}}))["result"]["taskId"]
        await asyncio.wait_for(seen["started"].wait(), 5)
        try:
            ack = await asyncio.wait_for(client.request("tasks/cancel", {"taskId": task_id}), 10)
            status = (await client.request("tasks/get", {"taskId": task_id}))["result"]["status"]
        finally:
            seen["release"].set()
    assert ack["result"]["resultType"] == "complete"
    assert status == "cancelled"


async def test_a_question_asked_after_a_tasks_result_was_dropped_waits_for_the_next_one(
    caplog: pytest.LogCaptureFixture,
) -> None:
    seen = {"after": asyncio.Event(), "go": asyncio.Event()}
    server = Server("patient", task_poll_interval_ms=20)

    @server.tool(task="optional")
    async def patient(ctx: Context) -> str:
        """Asks once the test lets it."""
        await seen["go"].wait()
        answer = await ctx.elicit("Sure?", Confirm)
        return answer.action

    async with serve(server) as running, connect(running.url) as http:
        session = await Legacy(http, "2025-11-25", capabilities={"elicitation": {}}).open()
        reply = await session.request("tools/call", {"name": "patient", "arguments": {}, "task": {}})
        task_id = reply.result["task"]["taskId"]
        dropped = asyncio.create_task(session.request("tasks/result", {"taskId": task_id}))
        await asyncio.sleep(0.3)  # the request is in, waiting for the task
        dropped.cancel()  # the client gives up: the connection closes
        with contextlib.suppress(asyncio.CancelledError):
            await dropped
        await asyncio.sleep(0.3)  # the server has seen it go
        seen["go"].set()
        await _poll_legacy(session, task_id, lambda task: task["status"] == "input_required")
        async with session.stream("tasks/result", {"taskId": task_id}) as stream:
            question = await _next(stream)
            assert (question["method"], _related(question)) == ("elicitation/create", {"taskId": task_id})
            await session.respond(question["id"], {"action": "decline"})
            result = await _next(stream)
    assert result["result"]["content"] == [{"type": "text", "text": "decline"}]
    # The dropped tasks/result ended quietly once the task did (its stream was already let go).
    assert [record.getMessage() for record in caplog.records if record.levelno >= logging.ERROR] == []


def _patient_server(seen: dict[str, asyncio.Event]) -> Server:
    server = Server("patient", task_poll_interval_ms=20)

    @server.tool(task="optional")
    async def patient(ctx: Context) -> str:
        """Asks once the test lets it, then logs."""
        await seen["go"].wait()
        answer = await ctx.elicit("Sure?", Confirm)
        await ctx.info("answered")
        return answer.action

    return server


async def test_after_a_dropped_tasks_result_the_tasks_messages_go_to_the_open_get_stream() -> None:
    seen = {"go": asyncio.Event()}
    async with serve(_patient_server(seen)) as running, connect(running.url) as http:
        session = await Legacy(http, "2025-11-25", capabilities={"elicitation": {}}).open()
        async with session.listen() as standalone:
            reply = await session.request("tools/call", {"name": "patient", "arguments": {}, "task": {}})
            task_id = reply.result["task"]["taskId"]
            dropped = asyncio.create_task(session.request("tasks/result", {"taskId": task_id}))
            await asyncio.sleep(0.3)  # the request is in, waiting for the task
            dropped.cancel()  # the client gives up: the connection closes
            with contextlib.suppress(asyncio.CancelledError):
                await dropped
            await asyncio.sleep(0.3)  # the server has seen it go
            seen["go"].set()
            question = await _next(standalone)
            assert (question["method"], _related(question)) == ("elicitation/create", {"taskId": task_id})
            await session.respond(question["id"], {"action": "decline"})
            log = await _next(standalone)
            assert (log["method"], log["params"]["data"], _related(log)) == (
                "notifications/message",
                "answered",
                {"taskId": task_id},
            )
        result = (await session.request("tasks/result", {"taskId": task_id})).result
    assert result["content"] == [{"type": "text", "text": "decline"}]


async def test_a_question_asked_after_a_tasks_result_was_cancelled_waits_for_the_next_one() -> None:
    seen = {"go": asyncio.Event()}
    async with serve(_patient_server(seen)) as running, connect(running.url) as http:
        session = await Legacy(http, "2025-11-25", capabilities={"elicitation": {}}).open()
        reply = await session.request("tools/call", {"name": "patient", "arguments": {}, "task": {}})
        task_id = reply.result["task"]["taskId"]
        waiting = asyncio.create_task(session.request("tasks/result", {"taskId": task_id}, id="wait-1"))
        await asyncio.sleep(0.3)  # the request is in, waiting for the task
        await session.notify("notifications/cancelled", {"requestId": "wait-1", "reason": "enough"})
        with contextlib.suppress(Exception):
            await asyncio.wait_for(waiting, 5)
        seen["go"].set()
        await _poll_legacy(session, task_id, lambda task: task["status"] == "input_required")
        async with session.stream("tasks/result", {"taskId": task_id}) as stream:
            question = await _next(stream)
            assert (question["method"], _related(question)) == ("elicitation/create", {"taskId": task_id})
            await session.respond(question["id"], {"action": "accept", "content": {"confirm": True}})
            messages = [await _next(stream), await _next(stream)]
    assert messages[0]["method"] == "notifications/message"
    assert messages[1]["result"]["content"] == [{"type": "text", "text": "accept"}]


async def test_a_failure_to_collect_answers_after_a_bus_message_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    async with two_replicas() as (deployment, _, a, b):
        on_a, on_b = Modern(a, capabilities=WITH_TASKS), Modern(b, capabilities=WITH_TASKS)
        task_id = (await on_a.call_tool("confirm", {"item": "x"})).result["taskId"]
        asking = await poll(on_b, task_id, lambda task: task["status"] == "input_required")
        (key,) = asking["inputRequests"]
        deployment.tasks.unreachable = True  # the store fails the replica that takes the answers
        with caplog.at_level(logging.ERROR, logger="toolkit"):
            await deployment.tasks.answer_task(task_id, {key: {"action": "decline"}})
            await deployment.replicas[1].publish({"t": "task", "a": "input", "i": task_id})  # B tells A
            deadline = time.monotonic() + 10
            while not [record for record in caplog.records if record.getMessage() == "task bookkeeping failed"]:
                assert time.monotonic() < deadline, [record.getMessage() for record in caplog.records]
                await asyncio.sleep(0.02)
        deployment.tasks.unreachable = False
    (logged,) = [record for record in caplog.records if record.getMessage() == "task bookkeeping failed"]
    assert logged.exc_info is not None
    assert isinstance(logged.exc_info[1], StoreUnavailable)


class _Crashing(Middleware):
    """A bug in a middleware, after the tool ran: an exception no layer below turned into an answer."""

    async def on_call_tool(self, request: McpRequest, call_next: CallNext[ToolResult]) -> ToolResult:
        result = await call_next(request)
        if request.name == "crashes":
            raise RuntimeError("boom")
        return result


def _ending_server() -> Server:
    server = Server("endings", task_poll_interval_ms=20, max_running_tasks=1)

    server.add_middleware(_Crashing())

    @server.tool(task="optional")
    async def crashes() -> str:
        """Ends, and then its middleware fails."""
        return "ended"

    @server.tool(task="optional")
    async def refuses() -> str:
        """A tool error."""
        raise ToolError("no")

    @server.tool(task="optional")
    async def forever() -> str:
        """Runs until cancelled."""
        await asyncio.sleep(3600)
        return "never"

    return server


async def test_a_tool_that_crashes_fails_its_task_with_an_internal_error_and_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with Client(_ending_server(), capabilities=WITH_TASKS) as client:
        with caplog.at_level(logging.ERROR, logger="toolkit"):
            task_id = (await client.request("tools/call", {"name": "crashes", "arguments": {}}))["result"]["taskId"]
            failed = await _poll_client(client, task_id, lambda task: task["status"] != "working")
    assert failed["status"] == "failed"
    assert failed["statusMessage"] == "Internal error"
    assert failed["error"] == {"code": -32603, "message": "Internal error"}
    (logged,) = [record for record in caplog.records if record.levelno >= logging.ERROR]
    assert logged.getMessage() == f"task {log_digest(task_id)} (tool 'crashes') failed"
    assert logged.exc_info is not None and str(logged.exc_info[1]) == "boom"


async def test_a_2025_tool_error_fails_the_task_saying_where_the_result_is() -> None:
    async with Client(_ending_server(), protocol_version="2025-11-25") as client:
        created = await client.request("tools/call", {"name": "refuses", "arguments": {}, "task": {}})
        task_id = created["result"]["task"]["taskId"]
        failed = await _poll_client(client, task_id, lambda task: task["status"] != "working")
    assert failed["status"] == "failed"
    assert failed["statusMessage"] == "The tool reported an error (isError); tasks/result has it"


async def test_the_running_task_limit_is_refused_word_for_word() -> None:
    async with Client(_ending_server(), capabilities=WITH_TASKS) as client:
        first = (await client.request("tools/call", {"name": "forever", "arguments": {}}))["result"]
        refused = (await client.request("tools/call", {"name": "forever", "arguments": {}}))["error"]
        await client.request("tasks/cancel", {"taskId": first["taskId"]})
    assert refused == {
        "code": -32600,
        "message": "Invalid Request: 1 tasks of this caller are running already (max_running_tasks); "
        "wait for one to end, or cancel one",
    }


async def test_a_client_cancel_ends_the_task_without_an_error_in_the_logs(caplog: pytest.LogCaptureFixture) -> None:
    seen = _step_events()
    async with Client(steps_server(seen), capabilities=WITH_TASKS) as client:
        with caplog.at_level(logging.WARNING):
            task_id = (await client.request("tools/call", {"name": "forever", "arguments": {}}))["result"]["taskId"]
            await asyncio.wait_for(seen["started"].wait(), 5)
            await client.request("tasks/cancel", {"taskId": task_id})
            cancelled = await _poll_client(client, task_id, lambda task: task["status"] != "working")
            await asyncio.sleep(0.1)  # the tool has unwound and its run has ended
    assert cancelled["status"] == "cancelled"
    assert [record.getMessage() for record in caplog.records if record.levelno >= logging.WARNING] == []


async def test_a_task_stopped_with_the_server_fails_with_an_internal_error() -> None:
    seen = _step_events()
    server = steps_server(seen)
    async with Client(server, capabilities=WITH_TASKS) as client:
        task_id = (await client.request("tools/call", {"name": "forever", "arguments": {}}))["result"]["taskId"]
        await asyncio.wait_for(seen["started"].wait(), 5)
        await asyncio.wait_for(server.engine.stop_tasks(), 10)
        stopped = (await client.request("tasks/get", {"taskId": task_id}))["result"]
    assert stopped["status"] == "failed"
    assert stopped["error"] == {"code": -32603, "message": "The server stopped before the task finished"}


async def test_a_task_past_its_ttl_frees_its_callers_slot_quietly(caplog: pytest.LogCaptureFixture) -> None:
    server = Server("short", task_poll_interval_ms=20, max_running_tasks=1)
    started = asyncio.Event()

    @server.tool(task="optional")
    async def forever() -> str:
        """Runs until stopped."""
        started.set()
        await asyncio.sleep(3600)
        return "never"

    async with Client(server, protocol_version="2025-11-25") as client:
        with caplog.at_level(logging.WARNING):
            call = {"name": "forever", "arguments": {}, "task": {"ttl": 200}}
            first = (await client.request("tools/call", call))["result"]["task"]
            await asyncio.wait_for(started.wait(), 5)
            deadline = time.monotonic() + 10
            while "error" in (again := await client.request("tools/call", call)):
                assert again["error"]["code"] == -32600, again
                assert time.monotonic() < deadline, "the slot of a task stopped at its TTL was never freed"
                await asyncio.sleep(0.05)
            await client.request("tasks/cancel", {"taskId": again["result"]["task"]["taskId"]})
    assert first["ttl"] == 200
    assert [record.getMessage() for record in caplog.records if record.levelno >= logging.WARNING] == []


async def test_a_task_whose_end_cannot_be_recorded_says_so_in_the_logs(caplog: pytest.LogCaptureFixture) -> None:
    async with two_replicas() as (deployment, seen, a, _b):
        on_a = Modern(a, capabilities=WITH_TASKS)
        task_id = (await on_a.call_tool("slow", {"n": 1})).result["taskId"]
        await asyncio.wait_for(seen[0]["started"].wait(), 5)
        deployment.tasks.ends_unrecorded = True
        with caplog.at_level(logging.ERROR, logger="toolkit"):
            seen[0]["go"].set()
            deadline = time.monotonic() + 10
            while not [record for record in caplog.records if record.levelno >= logging.ERROR]:
                assert time.monotonic() < deadline, "nothing logged"
                await asyncio.sleep(0.02)
        deployment.tasks.ends_unrecorded = False
        # The record still says working: the replica's lease, once it runs out, fails it for everyone.
        assert (await on_a.request("tasks/get", {"taskId": task_id})).result["status"] == "working"
    (logged,) = [record for record in caplog.records if record.levelno >= logging.ERROR]
    assert logged.getMessage() == f"could not record the end of task {log_digest(task_id)}"
    assert logged.exc_info is not None and isinstance(logged.exc_info[1], StoreUnavailable)


async def test_task_methods_on_a_server_without_task_tools_are_not_found_naming_method_and_version() -> None:
    server = Server("no-tasks")

    @server.tool
    def plain() -> str:
        """Never a task."""
        return "plain"

    async with Client(server, capabilities=WITH_TASKS) as client:
        modern = await client.request("tasks/get", {"taskId": "x"})
    async with Client(server, protocol_version="2025-11-25") as client:
        legacy = await client.request("tasks/list", {})
    assert (modern["error"], modern["_http_status"]) == (
        {"code": -32601, "message": "Method not found: 'tasks/get' is not available in protocol version 2026-07-28"},
        404,
    )
    assert (legacy["error"], legacy["_http_status"]) == (
        {"code": -32601, "message": "Method not found: 'tasks/list' is not available in protocol version 2025-11-25"},
        200,
    )


async def test_a_2025_task_request_that_is_not_an_object_is_refused_word_for_word() -> None:
    seen = _step_events()
    async with Client(steps_server(seen), protocol_version="2025-11-25") as client:
        refused = await client.request("tools/call", {"name": "forever", "arguments": {}, "task": []})
    assert refused["error"] == {
        "code": -32602,
        "message": 'Invalid params: "task" must be an object ({"ttl": ms} or {})',
    }
