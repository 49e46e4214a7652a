"""Tasks as a user runs them: ``toolkit run examples/long_running.py`` over stdio and HTTP.

A raw JSON-RPC client (no MCP library) drives both forms: the 2026-07-28 extension (task
handle, ``tasks/get`` polling, ``tasks/update`` with the answer, ``tasks/cancel``) and 2025-11-25
experimental tasks (``params.task``, the tool's question as a request carrying the task's id,
``tasks/result``). Every message received is validated against its version's schema.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.http_support import LEGACY, MODERN, CliServer, Legacy, Modern, connect
from tests.support.stdio import StdioClient

pytestmark = pytest.mark.timeout(60)

APP = Path(__file__).resolve().parent.parent / "examples" / "long_running.py"
EXTENSION = "io.modelcontextprotocol/tasks"
RELATED = "io.modelcontextprotocol/related-task"
WITH_TASKS = {"elicitation": {}, "extensions": {EXTENSION: {}}}
TERMINAL = ("completed", "failed", "cancelled")
StartStdio = Callable[..., StdioClient]


def poll_stdio(client: StdioClient, task_id: str, until: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    deadline = time.monotonic() + 20
    while True:
        task = client.result("tasks/get", {"taskId": task_id})
        if until(task):
            return task
        assert time.monotonic() < deadline, f"task still {task['status']}"
        time.sleep(0.05)


def test_stdio_modern_task_with_progress_a_question_and_a_cancel(stdio_client: StartStdio) -> None:
    client = stdio_client(APP)
    client.use_modern(capabilities=WITH_TASKS)
    assert client.result("server/discover")["capabilities"]["extensions"] == {EXTENSION: {}}

    report = client.call_tool("build_report", {"topic": "tides", "sections": 3, "seconds_per_section": 0.2})
    assert report["resultType"] == "task"
    working = poll_stdio(client, report["taskId"], lambda task: task.get("statusMessage", "").startswith("writing"))
    assert working["status"] == "working"
    done = poll_stdio(client, report["taskId"], lambda task: task["status"] in TERMINAL)
    assert done["status"] == "completed"
    assert done["result"]["structuredContent"] == {
        "topic": "tides",
        "sections": ["tides: section 1", "tides: section 2", "tides: section 3"],
    }

    purge = client.call_tool("purge_archive", {"archive": "2019"})
    asking = poll_stdio(client, purge["taskId"], lambda task: task["status"] == "input_required")
    (key,) = asking["inputRequests"]
    assert "2019" in asking["inputRequests"][key]["params"]["message"]
    answer = {"action": "accept", "content": {"confirm": True}}
    assert client.result("tasks/update", {"taskId": purge["taskId"], "inputResponses": {key: answer}}) is not None
    purged = poll_stdio(client, purge["taskId"], lambda task: task["status"] in TERMINAL)
    assert purged["result"]["content"][0]["text"] == "2019 purged"

    long = client.call_tool("build_report", {"topic": "x", "sections": 100})
    client.result("tasks/cancel", {"taskId": long["taskId"]})
    assert poll_stdio(client, long["taskId"], lambda task: task["status"] in TERMINAL)["status"] == "cancelled"
    assert client.invalid_lines == []
    client.assert_all_valid(MODERN)


def test_stdio_2025_task_asks_its_question_as_a_request_and_tasks_result_waits(stdio_client: StartStdio) -> None:
    client = stdio_client(APP)
    initialized = client.initialize(LEGACY, {"elicitation": {}})
    assert initialized["result"]["capabilities"]["tasks"]["requests"] == {"tools": {"call": {}}}
    created = client.result("tools/call", {"name": "purge_archive", "arguments": {"archive": "old"}, "task": {}})
    task_id = created["task"]["taskId"]
    pending = client.start_request("tasks/result", {"taskId": task_id})
    question = client.wait_for(lambda message: message.get("method") == "elicitation/create")
    assert question["params"]["_meta"] == {RELATED: {"taskId": task_id}}
    assert client.result("tasks/get", {"taskId": task_id})["status"] == "input_required"
    client.send({"jsonrpc": "2.0", "id": question["id"], "result": {"action": "accept", "content": {"confirm": True}}})
    result = client.response(pending)["result"]
    assert result["content"][0]["text"] == "old purged"
    assert result["_meta"] == {RELATED: {"taskId": task_id}}
    listed = client.result("tasks/list")["tasks"]
    assert [(task["taskId"], task["status"]) for task in listed] == [(task_id, "completed")]
    client.assert_all_valid(LEGACY)


@pytest.fixture
def served(mcp_cli: Callable[..., CliServer]) -> CliServer:
    return mcp_cli(APP)


async def poll_http(modern: Modern, task_id: str, until: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    deadline = time.monotonic() + 20
    while True:
        task = (await modern.request("tasks/get", {"taskId": task_id})).result
        if until(task):
            return task
        assert time.monotonic() < deadline, f"task still {task['status']}"
        await asyncio.sleep(0.05)


async def test_http_modern_task_and_its_routing_header(served: CliServer) -> None:
    async with connect(served.url) as http:
        modern = Modern(http, capabilities=WITH_TASKS)
        created = (await modern.call_tool("purge_archive", {"archive": "a"})).result
        task_id = created["taskId"]
        asking = await poll_http(modern, task_id, lambda task: task["status"] == "input_required")
        (key,) = asking["inputRequests"]
        update = {"taskId": task_id, "inputResponses": {key: {"action": "accept", "content": {"confirm": False}}}}
        misrouted = await modern.request("tasks/update", update, headers={"Mcp-Name": "another-task"})
        assert misrouted.status == 400
        assert misrouted.error["code"] == -32020
        unrouted = await modern.request("tasks/update", update, headers={"Mcp-Name": None})
        assert unrouted.status == 400
        assert (await modern.request("tasks/update", update)).result["resultType"] == "complete"
        done = await poll_http(modern, task_id, lambda task: task["status"] in TERMINAL)
        assert done["result"]["content"][0]["text"] == "a kept"
        plain = Modern(http, capabilities={})
        refused = await plain.request("tasks/get", {"taskId": task_id})
        assert refused.status == 400
        assert refused.error["code"] == -32021
        without_task = await plain.call_tool("build_report", {"topic": "t", "sections": 1, "seconds_per_section": 0})
        assert without_task.result["structuredContent"] == {"topic": "t", "sections": ["t: section 1"]}


async def test_http_2025_question_arrives_on_the_tasks_result_stream(served: CliServer) -> None:
    async with connect(served.url) as http:
        session = await Legacy(http, LEGACY, capabilities={"elicitation": {}}).open()
        created = (
            await session.request(
                "tools/call", {"name": "purge_archive", "arguments": {"archive": "b"}, "task": {"ttl": 60000}}
            )
        ).result
        task_id = created["task"]["taskId"]
        assert created["task"]["ttl"] == 60000
        async with session.stream("tasks/result", {"taskId": task_id}) as stream:
            question = await stream.next_message()
            assert question is not None and question["method"] == "elicitation/create"
            assert question["params"]["_meta"] == {RELATED: {"taskId": task_id}}
            accepted = await session.respond(question["id"], {"action": "accept", "content": {"confirm": True}})
            assert accepted.status == 202
            final = await stream.next_message()
        assert final is not None
        assert final["result"]["content"][0]["text"] == "b purged"
        assert final["result"]["_meta"] == {RELATED: {"taskId": task_id}}
        status = (await session.request("tasks/get", {"taskId": task_id})).result
        assert status["status"] == "completed"


async def test_http_2025_question_goes_on_the_open_get_stream(served: CliServer) -> None:
    """A client that listens on its GET stream gets the task's question there, no tasks/result needed."""
    async with connect(served.url) as http:
        session = await Legacy(http, LEGACY, capabilities={"elicitation": {}}).open()
        async with session.listen() as background:
            created = (
                await session.request(
                    "tools/call", {"name": "purge_archive", "arguments": {"archive": "c"}, "task": {}}
                )
            ).result
            task_id = created["task"]["taskId"]
            question = await background.next_message()
            assert question is not None and question["method"] == "elicitation/create"
            assert question["params"]["_meta"] == {RELATED: {"taskId": task_id}}
            answered = await session.respond(question["id"], {"action": "accept", "content": {"confirm": False}})
            assert answered.status == 202
        result = (await session.request("tasks/result", {"taskId": task_id})).result
        assert result["content"][0]["text"] == "c kept"
