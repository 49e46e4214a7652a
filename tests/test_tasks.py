"""Tasks in both forms, through the public API (``toolkit.testing.Client``, in process).

2026-07-28: the ``io.modelcontextprotocol/tasks`` extension (``../shared/mcp-spec/ext-tasks``);
2025-11-25: experimental tasks (``docs/2025-11-25/basic/utilities/tasks.mdx``). Every response is
validated against the schema of its version (the extension's own schema for ``tasks/*`` at
2026-07-28). The wire (HTTP, stdio) and Redis replicas are in ``test_tasks_wire.py`` and
``test_scaleout.py``; the task store contract in ``test_task_store.py``.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import BaseModel
from tests.wire import assert_valid

from toolkit import Context, McpError, Server, ToolError, ToolResult
from toolkit.auth import AccessToken
from toolkit.testing import Client, ClientError

pytestmark = pytest.mark.timeout(20)

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
EXTENSION = "io.modelcontextprotocol/tasks"
RELATED = "io.modelcontextprotocol/related-task"
WITH_TASKS = {"elicitation": {}, "extensions": {EXTENSION: {}}}
TERMINAL = ("completed", "failed", "cancelled")
ISO = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")


class Confirm(BaseModel):
    confirm: bool


def make_server(**options: Any) -> tuple[Server, dict[str, Any]]:
    """A server with task tools; ``seen`` records what the tools did."""
    options.setdefault("task_poll_interval_ms", 20)
    server = Server("tasks", **options)
    seen: dict[str, Any] = {"started": asyncio.Event(), "cancelled": asyncio.Event(), "runs": 0}

    @server.tool
    def plain(n: int) -> int:
        """Never a task."""
        return n

    @server.tool(task="optional")
    async def double(n: int, ctx: Context, seconds: float = 0.0) -> list[int]:
        """Doubles, taking its time."""
        seen["runs"] += 1
        await ctx.report_progress(1, 2, "half way")
        await asyncio.sleep(seconds)
        return [n, n * 2]

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
    async def fails() -> str:
        """A tool error."""
        raise ToolError("the input could not be processed")

    @server.tool(task="required")
    async def broken() -> str:
        """A JSON-RPC error."""
        raise McpError(-32603, "the backend refused", {"backend": "db-1"})

    @server.tool(task="required")
    async def confirm(item: str, ctx: Context) -> str:
        """Asks for a confirmation through the task."""
        answer = await ctx.elicit(f"Delete {item}?", Confirm)
        return f"deleted {item}" if answer.accepted and answer.data and answer.data.confirm else f"kept {item}"

    @server.tool(task="required")
    async def two_questions(ctx: Context) -> str:
        """Asks two questions at once, then the first again."""
        first, second = await asyncio.gather(ctx.elicit("One?", Confirm, key="q"), ctx.elicit("Two?", Confirm, key="r"))
        third = await ctx.elicit("One again?", Confirm, key="q")
        return f"{first.action} {second.action} {third.action}"

    @server.tool(task="required", task_start="begin_task")
    async def name_first(ctx: Context) -> str:
        """Asks a name (multi round-trip), then becomes a task."""
        answer = await ctx.elicit("Name?", {"type": "object", "properties": {"name": {"type": "string"}}}, key="who")
        await ctx.begin_task()
        await asyncio.sleep(0.05)
        return f"hello {answer.data['name'] if answer.data else '?'}"

    return server, seen


def checked(response: dict[str, Any], version: str, method: str) -> dict[str, Any]:
    assert_valid(response, version, method=method)
    return response


async def call(client: Client, method: str, params: dict[str, Any], **options: Any) -> dict[str, Any]:
    return checked(await client.request(method, params, **options), client.protocol_version, method)


async def poll(
    client: Client, task_id: str, until: Callable[[dict[str, Any]], bool], timeout: float = 10
) -> dict[str, Any]:
    """``tasks/get`` until ``until(task)``; the task."""
    deadline = time.monotonic() + timeout
    while True:
        task = (await call(client, "tasks/get", {"taskId": task_id}))["result"]
        if until(task):
            return task
        assert time.monotonic() < deadline, f"task {task_id} still {task['status']} after {timeout} s"
        await asyncio.sleep(0.01)


def ended(task: dict[str, Any]) -> bool:
    return task["status"] in TERMINAL


# --- 2026-07-28: the extension ----------------------------------------------------------------


async def test_the_extension_is_declared_only_by_a_server_with_task_tools() -> None:
    server, _ = make_server()
    async with Client(server, capabilities=WITH_TASKS) as client:
        capabilities = (await call(client, "server/discover", {}))["result"]["capabilities"]
    assert capabilities["extensions"] == {EXTENSION: {}}
    assert "tasks" not in capabilities, "the 2025-11-25 slot is not used at 2026-07-28"
    bare = Server("bare")
    bare.tool(lambda: 1, name="one")
    async with Client(bare, capabilities=WITH_TASKS) as client:
        capabilities = (await call(client, "server/discover", {}))["result"]["capabilities"]
        refused = await call(client, "tasks/get", {"taskId": "x"})
    assert "extensions" not in capabilities
    assert refused["error"]["code"] == -32601
    bare.tool(lambda: 2, name="two", task="optional")
    async with Client(bare, capabilities=WITH_TASKS) as client:
        assert (await client.result("server/discover"))["capabilities"]["extensions"] == {EXTENSION: {}}
        bare.remove_tool("two")
        assert "extensions" not in (await client.result("server/discover"))["capabilities"], "declared while needed"


async def test_a_declaring_request_gets_a_task_handle_and_polls_it_to_the_same_result() -> None:
    server, _ = make_server()
    async with Client(server, capabilities=WITH_TASKS) as client:
        created = (await call(client, "tools/call", {"name": "double", "arguments": {"n": 21, "seconds": 0.1}}))[
            "result"
        ]
        assert created["resultType"] == "task"
        assert created["status"] == "working"
        assert ISO.match(created["createdAt"]) and ISO.match(created["lastUpdatedAt"])
        assert created["ttlMs"] == 3_600_000 and created["pollIntervalMs"] == 20
        assert not {"ttl", "pollInterval", "result", "error", "inputRequests", "requestState"} & set(created)
        done = await poll(client, created["taskId"], ended)
    async with Client(server) as plain:  # the same call from a client without the extension: no task
        direct = (await call(plain, "tools/call", {"name": "double", "arguments": {"n": 21, "seconds": 0.1}}))["result"]
    assert "taskId" not in direct
    assert done["status"] == "completed"
    assert done["resultType"] == "complete"
    assert done["statusMessage"] == "half way", "progress shows as the status message"
    assert done["result"] == direct, "the task's result is exactly what the call returns without a task"
    assert done["result"]["structuredContent"] == [21, 42]
    assert RELATED not in done["result"].get("_meta", {})


async def test_a_task_sends_no_progress_or_log_notifications() -> None:
    server, _ = make_server()
    async with Client(server, capabilities=WITH_TASKS, log_level="debug") as client:
        created = await client.result(
            "tools/call", {"name": "double", "arguments": {"n": 1}, "_meta": {"progressToken": "p"}}
        )
        await poll(client, created["taskId"], ended)
    assert client.notifications == []


async def test_the_server_decides_per_request_never_from_an_earlier_declaration() -> None:
    server, _ = make_server()
    async with Client(server, capabilities=WITH_TASKS) as client:
        assert (await client.result("tools/call", {"name": "double", "arguments": {"n": 1}}))["resultType"] == "task"
        without = {"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}
        again = await call(client, "tools/call", {"name": "double", "arguments": {"n": 1}}, meta=without)
        legacy_style = {"io.modelcontextprotocol/clientCapabilities": {"tasks": {"requests": {"tools": {"call": {}}}}}}
        legacy_only = await call(client, "tools/call", {"name": "double", "arguments": {"n": 1}}, meta=legacy_style)
        plain = await call(client, "tools/call", {"name": "plain", "arguments": {"n": 1}, "task": {"ttl": 10}})
    assert again["result"]["resultType"] == "complete" and "taskId" not in again["result"]
    assert legacy_only["result"]["resultType"] == "complete", "only the extension counts at 2026-07-28"
    assert plain["result"]["resultType"] == "complete", "a 2025 task param is ignored at 2026-07-28"


async def test_required_tools_and_task_methods_refuse_a_request_without_the_extension() -> None:
    server, _ = make_server()
    async with Client(server, capabilities={"elicitation": {}}) as client:
        refused = await call(client, "tools/call", {"name": "fails", "arguments": {}})
        methods = [
            await call(client, method, params)
            for method, params in (
                ("tasks/get", {"taskId": "x"}),
                ("tasks/update", {"taskId": "x", "inputResponses": {}}),
                ("tasks/cancel", {"taskId": "x"}),
            )
        ]
    required = {"requiredCapabilities": {"extensions": {EXTENSION: {}}}}
    assert refused["error"] == {
        "code": -32021,
        "message": f"Tool 'fails' runs only as a task: declare the {EXTENSION} extension in the request's "
        "_meta clientCapabilities",
        "data": required,
    }
    assert refused["_http_status"] == 400
    for method, answer in zip(("tasks/get", "tasks/update", "tasks/cancel"), methods, strict=True):
        assert answer["error"] == {
            "code": -32021,
            "message": f"{method} needs the {EXTENSION} extension: declare it in the request's _meta "
            "clientCapabilities",
            "data": required,
        }
        assert answer["_http_status"] == 400
    async with Client(server, capabilities=WITH_TASKS) as client:
        gone = [await call(client, method, {"taskId": "x"}) for method in ("tasks/result", "tasks/list")]
    assert [answer["error"]["code"] for answer in gone] == [-32601, -32601], "2025-11-25 only"


async def test_a_tool_error_completes_and_a_json_rpc_error_fails_the_task() -> None:
    server, _ = make_server()
    async with Client(server, capabilities=WITH_TASKS) as client:
        tool_error = await client.result("tools/call", {"name": "fails", "arguments": {}})
        rpc_error = await client.result("tools/call", {"name": "broken", "arguments": {}})
        completed = await poll(client, tool_error["taskId"], ended)
        failed = await poll(client, rpc_error["taskId"], ended)
    assert completed["status"] == "completed"
    assert completed["result"]["isError"] is True
    assert completed["result"]["content"][0]["text"] == "the input could not be processed"
    assert failed["status"] == "failed"
    assert failed["error"] == {"code": -32603, "message": "the backend refused", "data": {"backend": "db-1"}}
    assert failed["statusMessage"] == "the backend refused"
    assert "result" not in failed


async def test_questions_go_through_the_task_and_leave_it_the_moment_they_are_answered() -> None:
    server, _ = make_server()
    async with Client(server, capabilities=WITH_TASKS) as client:
        task_id = (await client.result("tools/call", {"name": "two_questions", "arguments": {}}))["taskId"]
        asking = await poll(client, task_id, lambda task: len(task.get("inputRequests", {})) == 2)
        assert asking["status"] == "input_required"
        assert set(asking["inputRequests"]) == {"q", "r"}
        assert asking["inputRequests"]["q"]["method"] == "elicitation/create"
        assert asking["inputRequests"]["q"]["params"]["message"] == "One?"
        ack = await call(
            client,
            "tasks/update",
            {"taskId": task_id, "inputResponses": {"q": {"action": "accept", "content": {"confirm": True}}, "zz": {}}},
        )
        assert set(ack["result"]) == {"resultType", "_meta"} and ack["result"]["resultType"] == "complete"
        after = (await call(client, "tasks/get", {"taskId": task_id}))["result"]
        assert after["status"] == "input_required"
        assert set(after["inputRequests"]) == {"r"}, "an answered question is gone before the ack"
        await call(client, "tasks/update", {"taskId": task_id, "inputResponses": {"r": {"action": "decline"}}})
        third = await poll(client, task_id, lambda task: "q-2" in task.get("inputRequests", {}))
        assert set(third["inputRequests"]) == {"q-2"}, "a key is never reused within a task"
        await call(client, "tasks/update", {"taskId": task_id, "inputResponses": {"q": {"action": "accept"}}})
        still = (await call(client, "tasks/get", {"taskId": task_id}))["result"]
        assert set(still["inputRequests"]) == {"q-2"}, "an answer to an answered key is ignored"
        await call(client, "tasks/update", {"taskId": task_id, "inputResponses": {"q-2": {"action": "cancel"}}})
        done = await poll(client, task_id, ended)
    assert done["result"]["content"][0]["text"] == "accept decline cancel"


async def test_an_invalid_answer_is_asked_again_under_a_new_key() -> None:
    server, _ = make_server()
    async with Client(server, capabilities=WITH_TASKS) as client:
        task_id = (await client.result("tools/call", {"name": "confirm", "arguments": {"item": "x"}}))["taskId"]
        first = await poll(client, task_id, lambda task: task["status"] == "input_required")
        (key,) = first["inputRequests"]
        await call(client, "tasks/update", {"taskId": task_id, "inputResponses": {key: {"action": "maybe"}}})
        second = await poll(client, task_id, lambda task: bool(set(task.get("inputRequests", {})) - {key}))
        (new_key,) = second["inputRequests"]
        accept = {"action": "accept", "content": {"confirm": True}}
        await call(client, "tasks/update", {"taskId": task_id, "inputResponses": {new_key: accept}})
        done = await poll(client, task_id, ended)
    assert new_key != key
    assert done["result"]["content"][0]["text"] == "deleted x"


async def test_cancel_stops_the_tool_and_an_ended_task_is_acknowledged_as_it_is() -> None:
    server, seen = make_server()
    async with Client(server, capabilities=WITH_TASKS) as client:
        task_id = (await client.result("tools/call", {"name": "forever", "arguments": {}}))["taskId"]
        await asyncio.wait_for(seen["started"].wait(), 5)
        ack = await call(client, "tasks/cancel", {"taskId": task_id})
        assert ack["result"]["resultType"] == "complete"
        assert not {"taskId", "status"} & set(ack["result"])
        await asyncio.wait_for(seen["cancelled"].wait(), 5)
        cancelled = await poll(client, task_id, ended)
        assert cancelled["status"] == "cancelled"
        assert not {"result", "error"} & set(cancelled)
        again = await call(client, "tasks/cancel", {"taskId": task_id})
        update = await call(client, "tasks/update", {"taskId": task_id, "inputResponses": {"q": {}}})
        final = (await call(client, "tasks/get", {"taskId": task_id}))["result"]
    assert again["result"]["resultType"] == "complete"
    assert update["result"]["resultType"] == "complete"
    assert final["status"] == "cancelled"


async def test_unknown_and_foreign_tasks_get_the_same_answer() -> None:
    server, _ = make_server()
    ada = AccessToken(subject="ada", client_id="app", scopes=frozenset(), expires_at=None)
    bob = AccessToken(subject="bob", client_id="app", scopes=frozenset(), expires_at=None)
    async with Client(server, capabilities=WITH_TASKS, access_token=ada) as client:
        task_id = (await client.result("tools/call", {"name": "forever", "arguments": {}}))["taskId"]
        assert (await client.result("tasks/get", {"taskId": task_id}))["status"] == "working"
    async with Client(server, capabilities=WITH_TASKS, access_token=bob) as mallory:
        answers = {
            method: await call(mallory, method, params)
            for method, params in (
                ("tasks/get", {"taskId": task_id}),
                ("tasks/update", {"taskId": task_id, "inputResponses": {}}),
                ("tasks/cancel", {"taskId": task_id}),
            )
        }
        unknown = await call(mallory, "tasks/get", {"taskId": "no-such-task"})
    async with Client(server, capabilities=WITH_TASKS) as anonymous:
        no_token = await call(anonymous, "tasks/get", {"taskId": task_id})
    for answer in [*answers.values(), no_token]:
        assert answer["error"]["code"] == -32602
        assert answer["error"]["message"] == unknown["error"]["message"].replace("no-such-task", task_id)
    async with Client(server, capabilities=WITH_TASKS, access_token=ada) as client:
        assert (await client.result("tasks/get", {"taskId": task_id}))["status"] == "working", "untouched"
        await client.result("tasks/cancel", {"taskId": task_id})


async def test_bad_task_ids_and_answers_are_invalid_params() -> None:
    server, _ = make_server()
    async with Client(server, capabilities=WITH_TASKS) as client:
        task_id = (await client.result("tools/call", {"name": "forever", "arguments": {}}))["taskId"]
        answers = [
            await call(client, "tasks/get", {}),
            await call(client, "tasks/get", {"taskId": 7}),
            await call(client, "tasks/update", {"taskId": task_id, "inputResponses": ["yes"]}),
            await call(client, "tasks/update", {"taskId": task_id}),
        ]
        await client.result("tasks/cancel", {"taskId": task_id})
    assert [answer["error"]["code"] for answer in answers] == [-32602] * 4
    assert "taskId" in answers[0]["error"]["message"] and "inputResponses" in answers[3]["error"]["message"]


async def test_task_ids_are_unguessable_and_distinct() -> None:
    server, _ = make_server()
    async with Client(server, capabilities=WITH_TASKS) as client:
        ids = [
            (await client.result("tools/call", {"name": "double", "arguments": {"n": i}}))["taskId"] for i in range(20)
        ]
    assert len(set(ids)) == 20
    assert all(re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", i) for i in ids)


async def test_a_task_is_gone_after_its_ttl_and_one_running_past_it_is_stopped() -> None:
    server, seen = make_server(task_ttl_ms=1000)
    async with Client(server, capabilities=WITH_TASKS) as client:
        quick = await client.result("tools/call", {"name": "double", "arguments": {"n": 1}})
        slow = (await client.result("tools/call", {"name": "forever", "arguments": {}}))["taskId"]
        assert quick["ttlMs"] == 1000
        await asyncio.wait_for(seen["cancelled"].wait(), 10)  # the TTL stopped the running tool
        await asyncio.sleep(0.2)  # both records are past their TTL now (the quick one was first)
        gone = [await call(client, "tasks/get", {"taskId": task_id}) for task_id in (quick["taskId"], slow)]
    assert [answer["error"]["code"] for answer in gone] == [-32602, -32602]


async def test_questions_before_begin_task_are_multi_round_trip_then_it_is_a_task() -> None:
    server, _ = make_server()
    async with Client(server, capabilities=WITH_TASKS) as client:
        first = (await call(client, "tools/call", {"name": "name_first", "arguments": {}}))["result"]
        assert first["resultType"] == "input_required"
        assert "taskId" not in first and list(first["inputRequests"]) == ["who"]
        second = (
            await call(
                client,
                "tools/call",
                {
                    "name": "name_first",
                    "arguments": {},
                    "inputResponses": {"who": {"action": "accept", "content": {"name": "Ada"}}},
                    "requestState": first["requestState"],
                },
            )
        )["result"]
        assert second["resultType"] == "task"
        assert not {"requestState", "inputRequests"} & set(second)
        done = await poll(client, second["taskId"], ended)
    assert done["result"]["content"][0]["text"] == "hello Ada"
    async with Client(server, capabilities={"elicitation": {}}) as plain:  # cannot take a task: refused
        refused = await call(plain, "tools/call", {"name": "name_first", "arguments": {}})
    assert refused["error"]["code"] == -32021


async def test_begin_task_elsewhere_does_nothing() -> None:
    server = Server("t")

    @server.tool(task="optional", task_start="begin_task")
    async def maybe(ctx: Context) -> int:
        await ctx.begin_task()
        await ctx.begin_task()
        return 1

    @server.tool
    async def never(ctx: Context) -> int:
        await ctx.begin_task()
        return 2

    async with Client(server) as plain:
        assert (await plain.call_tool("maybe"))["structuredContent"] == 1
        assert (await plain.call_tool("never"))["structuredContent"] == 2
    async with Client(server, capabilities=WITH_TASKS) as client:
        task = await client.result("tools/call", {"name": "maybe", "arguments": {}})
        assert (await poll(client, task["taskId"], ended))["result"]["structuredContent"] == 1
        assert (await client.call_tool("never"))["structuredContent"] == 2


async def test_a_call_that_ends_before_begin_task_is_an_ordinary_answer() -> None:
    server = Server("t")

    @server.tool(task="required", task_start="begin_task")
    async def quick(n: int, ctx: Context) -> int:
        if n < 0:
            raise ToolError("negative")
        if n == 0:
            return 0
        await ctx.begin_task()
        return n

    async with Client(server, capabilities=WITH_TASKS) as client:
        zero = await call(client, "tools/call", {"name": "quick", "arguments": {"n": 0}})
        negative = await call(client, "tools/call", {"name": "quick", "arguments": {"n": -1}})
        bad = await call(client, "tools/call", {"name": "quick", "arguments": {"n": "x"}})
        task = await call(client, "tools/call", {"name": "quick", "arguments": {"n": 3}})
    assert zero["result"]["structuredContent"] == 0 and zero["result"]["resultType"] == "complete"
    assert negative["result"]["isError"] is True
    assert bad["result"]["isError"] is True
    assert task["result"]["resultType"] == "task"


def test_task_options_are_checked_at_registration() -> None:
    server = Server("t")
    with pytest.raises(ValueError, match=r"tool 'f': task='sometimes' is not one of"):
        server.tool(lambda: 1, name="f", task="sometimes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"tool 'g': task_start='later'"):
        server.tool(lambda: 1, name="g", task="optional", task_start="later")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"tool 'h': task_start='begin_task' needs an async function that takes"):
        server.tool(lambda ctx: 1, name="h", task="optional", task_start="begin_task")

    async def no_context() -> int:
        return 1

    with pytest.raises(ValueError, match=r"tool 'no_context': task_start='begin_task' needs an async function"):
        server.tool(no_context, task="optional", task_start="begin_task")
    with pytest.raises(ValueError, match="task_ttl_ms"):
        Server("t", task_ttl_ms=0)
    with pytest.raises(ValueError, match="task_ttl_ms"):
        Server("t", task_ttl_ms=10, max_task_ttl_ms=5)
    with pytest.raises(ValueError, match="task_poll_interval_ms"):
        Server("t", task_poll_interval_ms=0)


# --- 2025-11-25: experimental tasks -------------------------------------------------------------


def legacy(server: Server, **options: Any) -> Client:
    return Client(server, protocol_version=LEGACY, **options)


async def test_2025_sessions_see_the_tasks_capability_and_each_tools_task_support() -> None:
    server, _ = make_server()
    async with legacy(server) as client:
        capabilities = client.initialize_result["capabilities"] if client.initialize_result else {}
        tools = {tool["name"]: tool for tool in (await call(client, "tools/list", {}))["result"]["tools"]}
    assert capabilities["tasks"] == {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
    assert "extensions" not in capabilities
    assert "execution" not in tools["plain"], "absent means forbidden"
    assert tools["double"]["execution"] == {"taskSupport": "optional"}
    assert tools["fails"]["execution"] == {"taskSupport": "required"}
    async with Client(server, protocol_version="2025-06-18") as older:
        capabilities = older.initialize_result["capabilities"] if older.initialize_result else {}
        listed = (await call(older, "tools/list", {}))["result"]["tools"]
        ran = await call(older, "tools/call", {"name": "fails", "arguments": {}, "task": {}})
    assert "tasks" not in capabilities
    assert all("execution" not in tool for tool in listed)
    assert ran["result"]["isError"] is True, "no tasks before 2025-11-25: the tool runs as a call"


async def test_a_2025_task_is_asked_for_polled_and_its_result_fetched() -> None:
    server, _ = make_server()
    async with legacy(server) as client:
        created = (
            await call(
                client, "tools/call", {"name": "double", "arguments": {"n": 4, "seconds": 0.1}, "task": {"ttl": 5000}}
            )
        )["result"]
        task = created["task"]
        assert (task["status"], task["ttl"], task["pollInterval"]) == ("working", 5000, 20)
        assert ISO.match(task["createdAt"])
        got = (await call(client, "tasks/get", {"taskId": task["taskId"]}))["result"]
        assert got["taskId"] == task["taskId"] and got["status"] in ("working", "completed")
        result = await call(client, "tasks/result", {"taskId": task["taskId"]})
        done = (await call(client, "tasks/get", {"taskId": task["taskId"]}))["result"]
        direct = (await call(client, "tools/call", {"name": "double", "arguments": {"n": 4}}))["result"]
    assert result["result"]["_meta"] == {RELATED: {"taskId": task["taskId"]}}
    assert {key: value for key, value in result["result"].items() if key != "_meta"} == direct
    assert result["result"]["structuredContent"] == {"result": [4, 8]}, "shaped for 2025-11-25"
    assert done["status"] == "completed"
    assert "result" not in done


async def test_2025_tasks_result_keeps_the_tools_own_meta_beside_the_related_task() -> None:
    server = Server("meta")

    @server.tool(task="optional")
    def tagged() -> ToolResult:
        return ToolResult("done", meta={"example.com/trace": "t-1"})

    async with legacy(server) as client:
        task = (await client.result("tools/call", {"name": "tagged", "arguments": {}, "task": {}}))["task"]
        result = await call(client, "tasks/result", {"taskId": task["taskId"]})
    assert result["result"]["_meta"] == {"example.com/trace": "t-1", RELATED: {"taskId": task["taskId"]}}


async def test_2025_ttl_is_honoured_capped_and_checked() -> None:
    server, _ = make_server(task_ttl_ms=5_000, max_task_ttl_ms=10_000)
    async with legacy(server) as client:
        default = (await client.result("tools/call", {"name": "double", "arguments": {"n": 1}, "task": {}}))["task"]
        capped = (await client.result("tools/call", {"name": "double", "arguments": {"n": 1}, "task": {"ttl": 10**9}}))[
            "task"
        ]
        bad = [
            await call(client, "tools/call", {"name": "double", "arguments": {"n": 1}, "task": task})
            for task in ({"ttl": 0}, {"ttl": "soon"}, {"ttl": True}, [])
        ]
    assert default["ttl"] == 5_000
    assert capped["ttl"] == 10_000
    assert [answer["error"]["code"] for answer in bad] == [-32602] * 4


async def test_2025_task_support_is_enforced_per_tool() -> None:
    server, _ = make_server()
    async with legacy(server) as client:
        required = await call(client, "tools/call", {"name": "fails", "arguments": {}})
        forbidden = await call(client, "tools/call", {"name": "plain", "arguments": {"n": 1}, "task": {}})
    assert required["error"] == {
        "code": -32601,
        "message": "Tool 'fails' runs only as a task (execution.taskSupport is required): call it with \"task\": {}",
    }
    assert forbidden["error"] == {
        "code": -32601,
        "message": "Tool 'plain' cannot run as a task (its execution.taskSupport is forbidden); "
        'call it without "task"',
    }


async def test_2025_a_tool_error_fails_the_task_and_tasks_result_returns_it() -> None:
    server, _ = make_server()
    async with legacy(server) as client:
        tool_error = (await client.result("tools/call", {"name": "fails", "arguments": {}, "task": {}}))["task"]
        rpc_error = (await client.result("tools/call", {"name": "broken", "arguments": {}, "task": {}}))["task"]
        tool_result = await call(client, "tasks/result", {"taskId": tool_error["taskId"]})
        rpc_result = await call(client, "tasks/result", {"taskId": rpc_error["taskId"]})
        statuses = [
            (await client.result("tasks/get", {"taskId": task["taskId"]}))["status"] for task in (tool_error, rpc_error)
        ]
    assert statuses == ["failed", "failed"], "2025-11-25 counts an isError result as a failed task"
    assert tool_result["result"]["isError"] is True
    assert rpc_result["error"] == {"code": -32603, "message": "the backend refused", "data": {"backend": "db-1"}}


async def test_2025_a_question_inside_a_task_is_a_request_carrying_the_task() -> None:
    server, _ = make_server()
    asked: list[dict[str, Any]] = []

    async def answer(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params)
        return {"action": "accept", "content": {"confirm": True}}

    async with legacy(server, elicitation=answer) as client:
        task = (await client.result("tools/call", {"name": "confirm", "arguments": {"item": "x"}, "task": {}}))["task"]
        result = await call(client, "tasks/result", {"taskId": task["taskId"]})
    assert result["result"]["content"][0]["text"] == "deleted x"
    assert asked[0]["_meta"] == {RELATED: {"taskId": task["taskId"]}}
    requests = [message for message in client.messages if message.get("method") == "elicitation/create"]
    assert len(requests) == 1
    assert_valid(requests[0], LEGACY)


async def test_2025_cancel_returns_the_cancelled_task_and_refuses_an_ended_one() -> None:
    server, seen = make_server()
    async with legacy(server) as client:
        task = (await client.result("tools/call", {"name": "forever", "arguments": {}, "task": {}}))["task"]
        await asyncio.wait_for(seen["started"].wait(), 5)
        cancelled = await call(client, "tasks/cancel", {"taskId": task["taskId"]})
        await asyncio.wait_for(seen["cancelled"].wait(), 5)
        again = await call(client, "tasks/cancel", {"taskId": task["taskId"]})
        result = await call(client, "tasks/result", {"taskId": task["taskId"]})
    assert cancelled["result"]["status"] == "cancelled"
    assert cancelled["result"]["taskId"] == task["taskId"]
    assert again["error"]["code"] == -32602
    assert again["error"]["message"] == "Cannot cancel task: already in terminal status 'cancelled'"
    assert result["error"]["code"] == -32603 and "cancelled" in result["error"]["message"]


async def test_2025_tasks_list_shows_the_callers_tasks_a_page_at_a_time() -> None:
    server, _ = make_server(page_size=2)
    ada = AccessToken(subject="ada", client_id="app", scopes=frozenset(), expires_at=None)
    bob = AccessToken(subject="bob", client_id="app", scopes=frozenset(), expires_at=None)
    async with legacy(server, access_token=ada) as client:
        made = [
            (await client.result("tools/call", {"name": "double", "arguments": {"n": i}, "task": {}}))["task"]["taskId"]
            for i in range(3)
        ]
        first = (await call(client, "tasks/list", {}))["result"]
        second = (await call(client, "tasks/list", {"cursor": first["nextCursor"]}))["result"]
        bad = await call(client, "tasks/list", {"cursor": "99"})
    async with legacy(server, access_token=bob) as other:
        theirs = (await call(other, "tasks/list", {}))["result"]
    assert [task["taskId"] for task in first["tasks"] + second["tasks"]] == made
    assert "nextCursor" not in second
    assert bad["error"]["code"] == -32602
    assert theirs["tasks"] == []


async def test_2025_tasks_belong_to_their_session_without_authorization() -> None:
    server, _ = make_server()
    async with legacy(server) as one, legacy(server) as two:
        one._connection.session.id = "session-one"
        two._connection.session.id = "session-two"
        task = (await one.result("tools/call", {"name": "forever", "arguments": {}, "task": {}}))["task"]
        foreign = await call(two, "tasks/get", {"taskId": task["taskId"]})
        assert (await one.result("tasks/get", {"taskId": task["taskId"]}))["status"] == "working"
        await one.result("tasks/cancel", {"taskId": task["taskId"]})
    assert foreign["error"]["code"] == -32602


# --- toolkit.testing.Client.call_task -----------------------------------------------------------


@pytest.mark.parametrize("version", [MODERN, LEGACY])
async def test_the_test_client_follows_a_task_to_its_end_in_both_eras(version: str) -> None:
    server, _ = make_server()

    def yes(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"confirm": True}}

    async with Client(server, protocol_version=version, elicitation=yes) as client:
        confirmed = await client.call_task("confirm", {"item": "x"})
        doubled = await client.call_task("double", {"n": 2}, ttl_ms=5000)
        plain = await client.call_task("plain", {"n": 3}) if version == MODERN else None
        with pytest.raises(ClientError) as failed:
            await client.call_task("broken")
    assert confirmed["content"][0]["text"] == "deleted x"
    assert doubled["structuredContent"] == ([2, 4] if version == MODERN else {"result": [2, 4]})
    assert failed.value.error["code"] == -32603
    if plain is not None:
        assert plain["structuredContent"] == 3, "a tool that never runs as a task answers as usual"


async def test_the_test_client_refuses_tasks_where_the_version_has_none() -> None:
    server, _ = make_server()
    async with Client(server, protocol_version="2025-06-18") as client:
        with pytest.raises(ValueError, match="2025-06-18 has no tasks"):
            await client.call_task("double", {"n": 1})


async def test_a_caller_may_run_only_so_many_tasks_at_once() -> None:
    server, _ = make_server(max_running_tasks=2)
    ada = AccessToken(subject="ada", client_id="app", scopes=frozenset(), expires_at=None)
    bob = AccessToken(subject="bob", client_id="app", scopes=frozenset(), expires_at=None)
    async with Client(server, capabilities=WITH_TASKS, access_token=ada) as client:
        running = [(await client.result("tools/call", {"name": "forever", "arguments": {}}))["taskId"] for _ in "ab"]
        refused = await call(client, "tools/call", {"name": "forever", "arguments": {}})
        async with Client(server, capabilities=WITH_TASKS, access_token=bob) as other:
            theirs = await other.result("tools/call", {"name": "forever", "arguments": {}})
            await other.result("tasks/cancel", {"taskId": theirs["taskId"]})
        await client.result("tasks/cancel", {"taskId": running[0]})
        await poll(client, running[0], ended)
        again = await client.result("tools/call", {"name": "forever", "arguments": {}})
        for task_id in (running[1], again["taskId"]):
            await client.result("tasks/cancel", {"taskId": task_id})
    assert refused["error"]["code"] == -32600
    assert "2 tasks of this caller are running" in refused["error"]["message"]
    assert theirs["resultType"] == "task", "another caller's limit is their own"
    assert again["resultType"] == "task", "a slot frees when a task ends"


async def test_a_stopping_server_fails_its_running_tasks_and_does_not_wait_forever() -> None:
    server, seen = make_server()
    stubborn_started, release = asyncio.Event(), asyncio.Event()

    @server.tool(task="optional")
    async def stubborn() -> str:
        stubborn_started.set()
        while not release.is_set():
            try:
                await release.wait()
            except asyncio.CancelledError:
                continue  # ignores every cancellation until released
        return "released"

    async with Client(server, capabilities=WITH_TASKS) as client:
        polite = (await client.result("tools/call", {"name": "forever", "arguments": {}}))["taskId"]
        rude = (await client.result("tools/call", {"name": "stubborn", "arguments": {}}))["taskId"]
        await asyncio.wait_for(seen["started"].wait(), 5)
        await asyncio.wait_for(stubborn_started.wait(), 5)
        # Liveness, not speed: the stubborn tool is left behind after SHUTDOWN_WAIT_SECONDS (5 s).
        await asyncio.wait_for(server.engine.stop_tasks(), 15)
        stopped = await client.result("tasks/get", {"taskId": polite})
        left = await client.result("tasks/get", {"taskId": rude})
        release.set()
        await poll(client, rude, ended)
    assert stopped["status"] == "failed"
    assert stopped["error"]["message"] == "The server stopped before the task finished"
    assert left["status"] == "working", "a tool that ignores cancellation is not reported as stopped"
