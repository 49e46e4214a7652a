"""The official conformance suite through a gateway scores what the server scores alone.

The suite's run is the first test; the tests after it take the same server, in process
(``toolkit.Client(server)`` as the upstream of ``Server.proxy``, a ``toolkit.testing.Client`` as
the caller), through what the suite checks there: a tool the upstream runs as a task followed to
its end in both task forms (its questions, partial answers, a tool error, a failed task, a round
before the task, cancellation), the caller's capabilities told upstream (``-32021`` and its HTTP
400, questions only of what the caller can answer), answers sent without a round, and a
subscription to a proxied resource subscribing upstream (the first here subscribes, the last one
leaving unsubscribes; the upstream's updates reach the subscribers, in both eras each way).

``scripts/conformance --gateway stdio --gateway http --compare`` runs every server scenario of
2025-11-25 and of 2026-07-28, and the tasks extension's (``tasks-*``), three times: against
``examples/conformance_server.py`` alone, against a gateway (``conformance/gateway.py``, a
``Server.proxy``) that starts the same server as its stdio child, and against a gateway in front
of the same server served over Streamable HTTP. Every process is real (the suite's harness in
Node.js, ``toolkit run`` for the server and the gateways), on free ports of 127.0.0.1, always
stopped. A scenario the server passes alone that a gateway does not pass fails the test, with
the scenario, the version and both verdicts named.

The suite is installed by ``scripts/conformance --install-only`` (``scripts/test`` does it first);
without it the test skips, or fails under ``TOOLKIT_TESTS_STRICT=1``. The three runs take about
two minutes on two cores.
"""

from __future__ import annotations

import asyncio
import importlib.util
import itertools
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.support.processes import REPO
from tests.support.stalls import NeverListens

import toolkit
from toolkit import Server, testing
from toolkit._errors import ClientError
from toolkit.middleware import McpRequest, Middleware

pytestmark = pytest.mark.timeout(120)

SUITE = REPO / ".conformance" / "node_modules" / ".bin" / "conformance"
GATEWAYS = ("stdio", "http")


@pytest.mark.slow
@pytest.mark.timeout(1500)  # a hang, not a speed limit: each suite invocation is bounded by run.py too
@pytest.mark.skipif(sys.platform == "win32", reason="POSIX processes")
def test_through_a_gateway_every_scenario_scores_what_it_scores_alone(tmp_path: Path) -> None:
    if not SUITE.exists():
        what = f"{SUITE} is missing: scripts/conformance --install-only installs it"
        if os.environ.get("TOOLKIT_TESTS_STRICT"):  # scripts/test installs the suite first
            pytest.fail(what)
        pytest.skip(what)
    command = [str(REPO / "scripts" / "conformance"), "--compare", "--out", str(tmp_path), "--timeout", "600"]
    for gateway in GATEWAYS:
        command += ["--gateway", gateway]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=1400, check=False)
    report = f"{' '.join(command)} exited {done.returncode}\n{done.stdout}\n{done.stderr[-3000:]}"

    rows = json.loads((tmp_path / "summary.json").read_text())
    verdicts = {(row["target"], row["scenario"], row["version"]): row["verdict"] for row in rows}
    alone = {
        (scenario, version): verdict for (target, scenario, version), verdict in verdicts.items() if target == "alone"
    }
    passed = sorted(key for key, verdict in alone.items() if verdict == "PASS")
    assert {version for _, version in passed} == {"2025-11-25", "2026-07-28", "extension"}, report
    assert any(scenario.startswith("tasks-") for scenario, _ in passed), report
    below = [
        f"{gateway}: {scenario} at {version}: PASS alone, {verdicts.get((gateway, scenario, version), 'no result')}"
        for gateway in GATEWAYS
        for scenario, version in passed
        if verdicts.get((gateway, scenario, version)) != "PASS"
    ]
    assert not below, "through the gateway, below the server alone:\n" + "\n".join(below) + "\n" + report
    assert done.returncode == 0, report


# --- in process: what the suite checks through the gateway -------------------------------------------

EXAMPLE = REPO / "examples" / "conformance_server.py"
MODERN = "2026-07-28"
LEGACY = "2025-11-25"
TASKS = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
QUESTIONS = {"elicitation": {}, "sampling": {}, "roots": {}}
_loaded = itertools.count()


def conformance_server() -> Server:
    """A fresh ``examples/conformance_server.py`` (its module loaded anew: the server is module state)."""
    spec = importlib.util.spec_from_file_location(f"conformance_server_{next(_loaded)}", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    server: Server = module.server
    server.task_poll_interval_ms = 10  # the gateway follows the upstream's tasks at this interval
    return server


def gateway(upstream: Server, version: str = MODERN) -> Server:
    proxy = Server.proxy(toolkit.Client(upstream, protocol_version=version), name="gateway")
    proxy.task_poll_interval_ms = 10
    return proxy


def meta(capabilities: dict[str, Any]) -> dict[str, Any]:
    return {"io.modelcontextprotocol/clientCapabilities": capabilities}


def confirm(params: dict[str, Any]) -> dict[str, Any]:
    properties = params["requestedSchema"]["properties"]
    content = {"confirm": True} if "confirm" in properties else {"name": "Ann"}
    return {"action": "accept", "content": content}


async def status_of(caller: testing.Client, task_id: str, wanted: str) -> dict[str, Any]:
    """``tasks/get`` until the task is ``wanted`` (bounded by the test's timeout, for a hang)."""
    while True:
        task = await caller.result("tasks/get", {"taskId": task_id}, meta=meta({**QUESTIONS, **TASKS}))
        if task["status"] == wanted:
            return task
        assert task["status"] in ("working", "input_required"), task
        await asyncio.sleep(0.01)


@pytest.mark.parametrize("upstream_version", [MODERN, LEGACY])
async def test_a_tool_the_upstream_runs_as_a_task_is_followed_with_its_questions(upstream_version: str) -> None:
    async with testing.Client(gateway(conformance_server(), upstream_version), elicitation=confirm) as caller:
        result = await caller.call_task("confirm_delete", {"filename": "notes.txt"})
    assert result["content"] == [{"type": "text", "text": "Deleted notes.txt"}]


async def test_the_upstream_tasks_questions_are_asked_at_once_under_its_keys_and_answered_one_by_one() -> None:
    """tasks-mrtr-partial-fulfillment: two questions listed together; answering one leaves the other."""
    async with testing.Client(gateway(conformance_server())) as caller:
        created = await caller.result(
            "tools/call", {"name": "multi_input", "arguments": {}}, meta=meta({**QUESTIONS, **TASKS})
        )
        assert created["resultType"] == "task"
        task_id = created["taskId"]
        asked = await status_of(caller, task_id, "input_required")
        assert sorted(asked["inputRequests"]) == ["confirm", "name"]
        answer = {"name": {"action": "accept", "content": {"name": "Ann"}}}
        await caller.result("tasks/update", {"taskId": task_id, "inputResponses": answer}, meta=meta(TASKS))
        while sorted((await status_of(caller, task_id, "input_required"))["inputRequests"]) != ["confirm"]:
            await asyncio.sleep(0.01)
        answer = {"confirm": {"action": "accept", "content": {"confirm": True}}}
        await caller.result("tasks/update", {"taskId": task_id, "inputResponses": answer}, meta=meta(TASKS))
        done = await status_of(caller, task_id, "completed")
    assert done["result"]["content"] == [{"type": "text", "text": "Ann confirmed=True"}]


async def test_an_upstream_tasks_tool_error_completes_and_its_protocol_error_fails_the_task() -> None:
    async with testing.Client(gateway(conformance_server())) as caller:
        failed_tool = await caller.call_task("failing_job", {})
        with pytest.raises(ClientError) as failed:
            await caller.call_task("protocol_error_job", {})
    assert failed_tool["isError"] is True
    assert failed_tool["content"] == [{"type": "text", "text": "the job failed: the input could not be processed"}]
    assert failed.value.error["code"] == -32603
    assert failed.value.error["message"] == "the job's backend refused the request"


async def test_questions_the_upstream_asks_before_its_task_are_a_round_then_the_call_becomes_a_task() -> None:
    """tasks-mrtr-composition: round 1 is input_required; answered, the call becomes a task."""
    async with testing.Client(gateway(conformance_server())) as caller:
        params: dict[str, Any] = {"name": "test_tool_with_task", "arguments": {}}
        first = await caller.result("tools/call", params, meta=meta({**QUESTIONS, **TASKS}))
        assert first["resultType"] == "input_required"
        assert list(first["inputRequests"]) == ["user_name"]
        answers = {"user_name": {"action": "accept", "content": {"name": "Ann"}}}
        again = {**params, "inputResponses": answers, "requestState": first["requestState"]}
        created = await caller.result("tools/call", again, meta=meta({**QUESTIONS, **TASKS}))
        assert created["resultType"] == "task"
        done = await status_of(caller, created["taskId"], "completed")
    assert done["result"]["content"] == [{"type": "text", "text": "Hello, Ann!"}]


async def test_a_tool_the_upstream_answers_at_once_is_no_task_here() -> None:
    """tasks-lifecycle: a synchronous tool's result, though the caller could take a task."""
    async with testing.Client(gateway(conformance_server())) as caller:
        result = await caller.result(
            "tools/call", {"name": "greet", "arguments": {"name": "Ann"}}, meta=meta({**QUESTIONS, **TASKS})
        )
    assert result["resultType"] == "complete"
    assert "taskId" not in result
    assert result["content"] == [{"type": "text", "text": "Hello, Ann!"}]


@pytest.mark.parametrize("upstream_version", [MODERN, LEGACY])
async def test_cancelling_the_task_here_cancels_the_upstreams(upstream_version: str) -> None:
    upstream = Server("upstream", task_poll_interval_ms=10)
    started, cancelled = asyncio.Event(), asyncio.Event()

    @upstream.tool(task="required")
    async def wait_forever() -> str:
        started.set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    async with testing.Client(gateway(upstream, upstream_version)) as caller:
        created = await caller.result(
            "tools/call", {"name": "wait_forever", "arguments": {}}, meta=meta({**QUESTIONS, **TASKS})
        )
        await started.wait()
        await status_of(caller, created["taskId"], "working")
        await caller.result("tasks/cancel", {"taskId": created["taskId"]}, meta=meta(TASKS))
        await cancelled.wait()
        assert (await status_of(caller, created["taskId"], "cancelled"))["status"] == "cancelled"


async def test_a_capability_the_caller_lacks_is_refused_upstream_with_its_http_status() -> None:
    """server-stateless: -32021 naming the capability, HTTP 400, though the gateway itself could sample."""
    async with testing.Client(gateway(conformance_server()), capabilities={}) as caller:
        response = await caller.request("tools/call", {"name": "test_missing_capability", "arguments": {}})
    assert response["error"]["code"] == -32021
    assert response["error"]["data"] == {"requiredCapabilities": {"sampling": {}}}
    assert response["_http_status"] == 400


async def test_the_upstream_asks_only_what_the_caller_can_answer() -> None:
    """input-required-result-capability-check: a caller that can sample but not elicit is asked to sample."""
    async with testing.Client(gateway(conformance_server()), capabilities={"sampling": {}}) as caller:
        params = {"name": "test_input_required_result_capabilities", "arguments": {}}
        result = await caller.result("tools/call", params)
    assert result["resultType"] == "input_required"
    assert [question["method"] for question in result["inputRequests"].values()] == ["sampling/createMessage"]


async def test_answers_sent_without_a_round_go_upstream_as_they_came() -> None:
    """input-required-result-ignore-extra-params: the expected answer among unknown ones completes the call."""
    answers = {
        "user_name": {"action": "accept", "content": {"name": "Alice"}},
        "unknown_extra_key": {"action": "accept", "content": {"foo": "bar"}},
    }
    async with testing.Client(gateway(conformance_server()), capabilities=QUESTIONS) as caller:
        params = {"name": "test_input_required_result_elicitation", "arguments": {}, "inputResponses": answers}
        result = await caller.result("tools/call", params)
    assert result["resultType"] == "complete"
    assert result["content"] == [{"type": "text", "text": "Hello, Alice!"}]


# --- resource subscriptions (resources-subscribe, through to the upstream) ----------------------------------

WATCHED = "test://watched-resource"


@pytest.mark.parametrize("upstream_version", [MODERN, LEGACY])
async def test_a_legacy_callers_subscription_subscribes_upstream_and_its_updates_come_back(
    upstream_version: str,
) -> None:
    upstream = conformance_server()
    async with (
        toolkit.Client(gateway(upstream, upstream_version), protocol_version=LEGACY) as caller,
        await caller.listen(resources=[WATCHED]) as updates,  # resources/subscribe
    ):
        await upstream.notify_resource_updated(WATCHED)
        update = await anext(aiter(updates))
        await upstream.notify_resource_updated("test://static-text")  # not watched: not relayed
        await upstream.notify_resource_updated(WATCHED)
        again = await anext(aiter(updates))
    assert update["method"] == again["method"] == "notifications/resources/updated"
    assert update["params"]["uri"] == again["params"]["uri"] == WATCHED


@pytest.mark.parametrize("upstream_version", [MODERN, LEGACY])
async def test_a_modern_callers_listen_subscribes_upstream_and_its_updates_come_back(upstream_version: str) -> None:
    upstream = conformance_server()
    async with (
        toolkit.Client(gateway(upstream, upstream_version), protocol_version=MODERN) as caller,
        await caller.listen(resources=[WATCHED]) as updates,
    ):
        await upstream.notify_resource_updated(WATCHED)
        update = await anext(aiter(updates))
    assert update["method"] == "notifications/resources/updated"
    assert update["params"]["uri"] == WATCHED


async def test_a_subscription_here_is_not_held_for_ever_by_an_upstream_that_never_listens() -> None:
    """A subscription here opens the upstream's listen again with the URI, and waits for it to be
    acknowledged as long as a request would wait for its answer (the listen itself waits on)."""

    upstream = conformance_server()
    upstream.add_middleware(NeverListens())
    proxy = Server.proxy(toolkit.Client(upstream, protocol_version=MODERN, timeout=2.0), name="gateway")
    async with toolkit.Client(proxy, protocol_version=LEGACY) as caller:
        await asyncio.wait_for(caller.subscribe(WATCHED), 60)  # the hang guard
        assert (await caller.call_tool("test_simple_text", {})).text


class Subscriptions(Middleware):
    """Middleware on the upstream: what it was asked to watch (subscribe, unsubscribe, listen's URIs)."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, Any]] = []
        self.changed = asyncio.Event()

    async def on_request(self, request: McpRequest, call_next: Any) -> Any:
        if request.method in ("resources/subscribe", "resources/unsubscribe"):
            self.asked.append((request.method, request.params["uri"]))
            self.changed.set()
        elif request.method == "subscriptions/listen":
            self.asked.append((request.method, request.params["notifications"].get("resourceSubscriptions", [])))
            self.changed.set()
        return await call_next(request)

    async def next(self) -> tuple[str, Any]:
        while not self.asked:
            self.changed.clear()
            await self.changed.wait()
        return self.asked.pop(0)


@pytest.mark.parametrize("upstream_version", [MODERN, LEGACY])
async def test_the_upstream_is_asked_to_watch_by_the_first_subscription_here_and_to_stop_after_the_last(
    upstream_version: str,
) -> None:
    upstream = conformance_server()
    seen = Subscriptions()
    upstream.add_middleware(seen)
    proxy = gateway(upstream, upstream_version)
    async with (
        toolkit.Client(proxy, protocol_version=LEGACY) as first,
        toolkit.Client(proxy, protocol_version=LEGACY) as second,
    ):
        if upstream_version == MODERN:
            assert await seen.next() == ("subscriptions/listen", [])  # the lists' changes, from the start
        await first.subscribe(WATCHED)
        await second.subscribe(WATCHED)
        await first.unsubscribe(WATCHED)
        await second.unsubscribe(WATCHED)
        await first.subscribe("test://static-text")
    if upstream_version == MODERN:
        expected = [
            ("subscriptions/listen", [WATCHED]),
            ("subscriptions/listen", []),
            ("subscriptions/listen", ["test://static-text"]),
        ]
    else:
        expected = [
            ("resources/subscribe", WATCHED),
            ("resources/unsubscribe", WATCHED),
            ("resources/subscribe", "test://static-text"),
        ]
    assert [await seen.next() for _ in expected] == expected


async def test_a_read_through_the_gateway_keeps_the_upstreams_freshness() -> None:
    """caching: ttlMs and cacheScope of a read are the upstream's, not the gateway's defaults."""
    upstream = Server("upstream")

    @upstream.resource("data://rates", ttl_ms=5000, cache_scope="public")
    def rates() -> str:
        return "1.1"

    async with testing.Client(gateway(upstream)) as caller:
        read = await caller.result("resources/read", {"uri": "data://rates"})
    assert read["contents"] == [{"uri": "data://rates", "mimeType": "text/plain", "text": "1.1"}]
    assert (read["ttlMs"], read["cacheScope"]) == (5000, "public")
