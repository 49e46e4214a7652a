"""Middleware: the hooks, their order and what they may do, in-process and over the real wire."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import pytest
from tests.http_support import Legacy, Modern, cli_server, connect
from tests.support.stdio import StdioClient

from toolkit import McpError, Server, Text, ToolError, ToolResult
from toolkit.middleware import CallNext, McpRequest, Middleware
from toolkit.testing import Client, ClientError

pytestmark = pytest.mark.timeout(60)

APP = Path(__file__).parent / "support" / "middleware_app.py"
MODERN = "2026-07-28"
LEGACY = "2025-11-25"
OLDEST = "2024-11-05"


def make_server(*middlewares: Any) -> Server:
    server = Server("mw", middleware=middlewares)

    @server.tool
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool
    def echo(text: str) -> str:
        return text

    @server.tool
    def hidden() -> str:
        return "hidden"

    @server.resource("mw://greeting")
    def greeting() -> str:
        return "hello"

    @server.prompt
    def greet(name: str) -> str:
        return f"Say hello to {name}"

    return server


class Trail(Middleware):
    """Writes ``<tag> <hook> in``/``out`` around every hook."""

    def __init__(self, tag: str, trail: list[str]) -> None:
        self.tag = tag
        self.trail = trail

    async def _around(self, hook: str, request: McpRequest, call_next: CallNext[Any]) -> Any:
        self.trail.append(f"{self.tag} {hook} in")
        result = await call_next(request)
        self.trail.append(f"{self.tag} {hook} out")
        return result

    async def on_request(self, request: McpRequest, call_next: CallNext[dict[str, Any]]) -> dict[str, Any]:
        result: dict[str, Any] = await self._around("on_request", request, call_next)
        return result

    async def on_call_tool(self, request: McpRequest, call_next: CallNext[ToolResult]) -> ToolResult:
        result: ToolResult = await self._around("on_call_tool", request, call_next)
        return result

    async def on_list(self, request: McpRequest, call_next: CallNext[dict[str, Any]]) -> dict[str, Any]:
        result: dict[str, Any] = await self._around("on_list", request, call_next)
        return result

    async def on_read_resource(self, request: McpRequest, call_next: CallNext[dict[str, Any]]) -> dict[str, Any]:
        result: dict[str, Any] = await self._around("on_read_resource", request, call_next)
        return result

    async def on_get_prompt(self, request: McpRequest, call_next: CallNext[dict[str, Any]]) -> dict[str, Any]:
        result: dict[str, Any] = await self._around("on_get_prompt", request, call_next)
        return result


# --- order and firing --------------------------------------------------------------------------


async def test_every_on_request_runs_outside_the_methods_hooks_in_the_order_added() -> None:
    trail: list[str] = []
    server = make_server(Trail("a", trail), Trail("b", trail))
    async with Client(server) as client:
        await client.call_tool("add", {"a": 1, "b": 2})
    assert trail == [
        "a on_request in",
        "b on_request in",
        "a on_call_tool in",
        "b on_call_tool in",
        "b on_call_tool out",
        "a on_call_tool out",
        "b on_request out",
        "a on_request out",
    ]


@pytest.mark.parametrize("version", [MODERN, LEGACY, OLDEST])
async def test_each_method_runs_its_own_hook_once(version: str) -> None:
    trail: list[str] = []
    server = make_server(Trail("t", trail))
    async with Client(server, protocol_version=version) as client:
        expected_initialize = ["t on_request in", "t on_request out"] if version != MODERN else []
        assert trail == expected_initialize  # initialize is a request too
        for method, params, hook in [
            ("tools/list", {}, "on_list"),
            ("resources/list", {}, "on_list"),
            ("resources/templates/list", {}, "on_list"),
            ("prompts/list", {}, "on_list"),
            ("resources/read", {"uri": "mw://greeting"}, "on_read_resource"),
            ("prompts/get", {"name": "greet", "arguments": {"name": "Ada"}}, "on_get_prompt"),
            ("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}}, "on_call_tool"),
        ]:
            trail.clear()
            await client.result(method, params)
            assert trail == [
                "t on_request in",
                f"t {hook} in",
                f"t {hook} out",
                "t on_request out",
            ], method
        trail.clear()
        with pytest.raises(ClientError):
            await client.result("no/such/method")
        assert trail == ["t on_request in"]  # it saw the request; call_next raised method-not-found


async def test_a_server_without_middleware_has_no_pipeline_and_unused_hooks_cost_nothing() -> None:
    server = make_server()
    assert server.engine.pipeline is None

    class ListsOnly(Middleware):
        async def on_list(self, request: McpRequest, call_next: CallNext[dict[str, Any]]) -> dict[str, Any]:
            return await call_next(request)

    server.add_middleware(ListsOnly())
    pipeline = server.engine.pipeline
    assert pipeline is not None
    assert pipeline.request is None
    assert pipeline.call_tool is None
    assert set(pipeline.by_method) == {"tools/list", "resources/list", "resources/templates/list", "prompts/list"}
    assert server.middlewares == (server.middlewares[0],)


async def test_the_request_view_names_method_target_version_and_caller() -> None:
    seen: list[McpRequest] = []
    values: list[dict[str, Any]] = []
    server = make_server()

    @server.middleware
    async def look(request: McpRequest, call_next: CallNext[dict[str, Any]]) -> dict[str, Any]:
        seen.append(request)
        values.append(
            {
                "method": request.method,
                "name": request.name,
                "uri": request.uri,
                "arguments": request.arguments,
                "version": request.protocol_version,
                "modern": request.modern,
                "transport": request.transport,
                "http": request.http,
                "session_id": request.session_id,
                "caller": request.caller,
            }
        )
        return await call_next(request)

    async with Client(server) as client:
        await client.call_tool("add", {"a": 1, "b": 2})
        await client.read_resource("mw://greeting")
    async with Client(server, protocol_version=LEGACY) as client:
        await client.get_prompt("greet", {"name": "Ada"})
    assert values[0] == {
        "method": "tools/call",
        "name": "add",
        "uri": None,
        "arguments": {"a": 1, "b": 2},
        "version": MODERN,
        "modern": True,
        "transport": "stdio",
        "http": None,
        "session_id": None,
        "caller": None,
    }
    assert values[1]["method"] == "resources/read"
    assert values[1]["uri"] == "mw://greeting"
    assert values[1]["name"] is None
    assert [v["method"] for v in values[2:]] == ["initialize", "prompts/get"]
    assert values[2]["version"] == LEGACY
    assert values[3]["name"] == "greet"
    assert values[3]["modern"] is False
    assert "tools/call" in repr(seen[0])
    assert "'add'" in repr(seen[0])


async def test_state_is_shared_by_the_hooks_of_one_request_only() -> None:
    states: list[dict[str, Any]] = []

    class Stamp(Middleware):
        async def on_request(self, request: McpRequest, call_next: CallNext[dict[str, Any]]) -> dict[str, Any]:
            assert request.state == {}
            request.state["stamp"] = request.request_id
            return await call_next(request)

        async def on_call_tool(self, request: McpRequest, call_next: CallNext[ToolResult]) -> ToolResult:
            states.append(dict(request.state))
            return await call_next(request)

    server = make_server(Stamp())
    async with Client(server) as client:
        await client.call_tool("add", {"a": 1, "b": 2})
        await client.call_tool("add", {"a": 3, "b": 4})
    assert len(states) == 2
    assert states[0]["stamp"] != states[1]["stamp"]


# --- short-circuit and transform ---------------------------------------------------------------


class Cache(Middleware):
    async def on_call_tool(self, request: McpRequest, call_next: CallNext[ToolResult]) -> ToolResult:
        if request.name == "add" and request.arguments == {"a": 2, "b": 2}:
            return ToolResult("from the cache", structured_content=4)
        return await call_next(request)


class Shout(Middleware):
    async def on_call_tool(self, request: McpRequest, call_next: CallNext[ToolResult]) -> ToolResult:
        result = await call_next(request)
        if request.name != "echo" or result.is_error:
            return result
        assert result.content is not None
        (block,) = result.content
        assert isinstance(block, Text)
        return ToolResult(block.text.upper())


@pytest.mark.parametrize(
    ("version", "structured"),
    [(MODERN, 4), (LEGACY, {"result": 4}), (OLDEST, None)],
)
async def test_a_short_circuit_result_is_shaped_for_each_version(version: str, structured: Any) -> None:
    ran: list[int] = []
    server = make_server(Cache())

    @server.tool
    def counted(a: int, b: int) -> int:
        ran.append(a)
        return a + b

    async with Client(server, protocol_version=version) as client:
        result = await client.call_tool("add", {"a": 2, "b": 2})
    assert result["content"] == [{"type": "text", "text": "from the cache"}]
    assert result.get("structuredContent") == structured
    assert "isError" not in result or result["isError"] is False


@pytest.mark.parametrize("version", [MODERN, LEGACY, OLDEST])
async def test_a_transformed_result_is_what_every_version_receives(version: str) -> None:
    async with Client(make_server(Shout()), protocol_version=version) as client:
        result = await client.call_tool("echo", {"text": "hi there"})
    assert result["content"] == [{"type": "text", "text": "HI THERE"}]
    assert "structuredContent" not in result


async def test_a_transformed_result_must_still_match_the_output_schema(caplog: pytest.LogCaptureFixture) -> None:
    class Wrong(Middleware):
        async def on_call_tool(self, request: McpRequest, call_next: CallNext[ToolResult]) -> ToolResult:
            await call_next(request)
            return ToolResult(structured_content="not an integer")

    with caplog.at_level(logging.ERROR, "toolkit"):
        async with Client(make_server(Wrong())) as client:
            result = await client.call_tool("add", {"a": 1, "b": 2})
    assert result["isError"] is True
    assert "does not match its output schema" in result["content"][0]["text"]
    assert "a middleware's on_call_tool result for tool 'add' violates its output schema" in caplog.text


async def test_a_tool_error_from_middleware_is_an_is_error_result_and_an_mcp_error_a_json_rpc_error() -> None:
    class Refuse(Middleware):
        async def on_call_tool(self, request: McpRequest, call_next: CallNext[ToolResult]) -> ToolResult:
            if request.name == "hidden":
                raise ToolError("not today")
            return await call_next(request)

        async def on_read_resource(self, request: McpRequest, call_next: CallNext[dict[str, Any]]) -> dict[str, Any]:
            raise McpError(-32001, "Reading is closed", {"uri": request.uri})

    async with Client(make_server(Refuse()), protocol_version=LEGACY) as client:
        result = await client.call_tool("hidden")
        assert result == {"content": [{"type": "text", "text": "not today"}], "isError": True}
        with pytest.raises(ClientError) as caught:
            await client.read_resource("mw://greeting")
    assert caught.value.code == -32001
    assert caught.value.error["data"] == {"uri": "mw://greeting"}


async def test_an_on_request_short_circuit_gets_the_modern_envelope_and_legacy_gets_none() -> None:
    class Empty(Middleware):
        async def on_request(self, request: McpRequest, call_next: CallNext[dict[str, Any]]) -> dict[str, Any]:
            if request.method == "prompts/list":
                return {"prompts": []}
            return await call_next(request)

    server = make_server(Empty())
    async with Client(server) as client:
        modern = await client.result("prompts/list")
    async with Client(server, protocol_version=LEGACY) as client:
        legacy = await client.result("prompts/list")
    assert modern["prompts"] == []
    assert modern["resultType"] == "complete"
    assert modern["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "mw"
    assert legacy == {"prompts": []}


async def test_a_list_filtered_by_middleware_leaves_the_cached_pages_whole() -> None:
    hide = {"on": True}

    class HideTools(Middleware):
        async def on_list(self, request: McpRequest, call_next: CallNext[dict[str, Any]]) -> dict[str, Any]:
            result = await call_next(request)
            if request.method == "tools/list" and hide["on"]:
                result["tools"] = [tool for tool in result["tools"] if tool["name"] != "hidden"]
            return result

    server = make_server(HideTools())
    async with Client(server) as client:
        first = [tool["name"] for tool in await client.list_tools()]
        hide["on"] = False
        second = [tool["name"] for tool in await client.list_tools()]
    assert "hidden" not in first
    assert sorted(second) == sorted([*first, "hidden"])


# --- arguments and validation ------------------------------------------------------------------


async def test_middleware_runs_before_validation_and_rewritten_arguments_are_validated() -> None:
    seen: list[dict[str, Any]] = []

    class Rewrite(Middleware):
        async def on_call_tool(self, request: McpRequest, call_next: CallNext[ToolResult]) -> ToolResult:
            seen.append(dict(request.arguments))
            arguments = dict(request.arguments)
            if arguments.get("b") == "two":  # repair what the client got wrong
                arguments["b"] = 2
            if arguments.get("b") == "break":  # make it wrong
                arguments["b"] = "still not a number"
            request.arguments = arguments
            return await call_next(request)

    async with Client(make_server(Rewrite())) as client:
        repaired = await client.call_tool("add", {"a": 1, "b": "two"})
        broken = await client.call_tool("add", {"a": 1, "b": "break"})
    assert seen == [{"a": 1, "b": "two"}, {"a": 1, "b": "break"}]  # before validation
    assert repaired["structuredContent"] == 3
    assert broken["isError"] is True
    assert "arguments/b" in broken["content"][0]["text"]
    assert "still not a number" in broken["content"][0]["text"]


async def test_setting_arguments_to_something_else_than_a_dict_is_refused() -> None:
    class Bad(Middleware):
        async def on_call_tool(self, request: McpRequest, call_next: CallNext[ToolResult]) -> ToolResult:
            request.arguments = ["a", "list"]  # type: ignore[assignment]
            return await call_next(request)

    async with Client(make_server(Bad())) as client:
        with pytest.raises(ClientError) as caught:
            await client.call_tool("add", {"a": 1, "b": 2})
    assert caught.value.code == -32603


# --- failures ----------------------------------------------------------------------------------


async def test_an_exception_in_middleware_is_an_internal_error_for_that_request_only(
    caplog: pytest.LogCaptureFixture,
) -> None:
    gate = asyncio.Event()

    class Flaky(Middleware):
        async def on_call_tool(self, request: McpRequest, call_next: CallNext[ToolResult]) -> ToolResult:
            if request.arguments.get("a") == 666:
                raise RuntimeError("a bug in the middleware")
            await gate.wait()
            return await call_next(request)

    server = make_server(Flaky())
    with caplog.at_level(logging.ERROR, "toolkit"):
        async with Client(server) as client:
            good = asyncio.ensure_future(client.call_tool("add", {"a": 1, "b": 2}))
            with pytest.raises(ClientError) as caught:
                await client.call_tool("add", {"a": 666, "b": 2})
            gate.set()
            assert (await good)["structuredContent"] == 3
            assert (await client.call_tool("add", {"a": 2, "b": 2}))["structuredContent"] == 4
    assert caught.value.code == -32603
    assert caught.value.error["message"] == "Internal error"
    assert "a bug in the middleware" in caplog.text


async def test_a_hook_returning_the_wrong_type_is_an_internal_error_that_says_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Sloppy(Middleware):
        async def on_call_tool(self, request: McpRequest, call_next: CallNext[ToolResult]) -> ToolResult:
            await call_next(request)
            return {"content": []}  # type: ignore[return-value]

    with caplog.at_level(logging.ERROR, "toolkit"):
        async with Client(make_server(Sloppy())) as client:
            with pytest.raises(ClientError) as caught:
                await client.call_tool("add", {"a": 1, "b": 2})
    assert caught.value.code == -32603
    assert "a middleware returned dict, not a toolkit.ToolResult" in caplog.text


def test_registering_something_that_is_not_a_middleware_says_what_to_pass() -> None:
    server = Server("mw")
    with pytest.raises(
        TypeError, match=r"takes an instance, not the class Trail: write add_middleware\(Trail\(...\)\)"
    ):
        server.add_middleware(Trail)  # type: ignore[arg-type]

    def sync(request: McpRequest, call_next: Any) -> Any:
        return call_next(request)

    with pytest.raises(TypeError, match="must be an async def function taking \\(request, call_next\\)"):
        server.add_middleware(sync)
    with pytest.raises(TypeError, match="not int"):
        server.add_middleware(42)  # type: ignore[arg-type]

    class SyncHook(Middleware):
        def on_list(self, request: McpRequest, call_next: Any) -> Any:  # type: ignore[override]
            return call_next(request)

    with pytest.raises(TypeError, match=r"SyncHook.on_list must be an async def method"):
        server.add_middleware(SyncHook())
    assert server.engine.pipeline is None  # nothing half-registered


def test_the_decorator_returns_the_function() -> None:
    server = Server("mw")

    @server.middleware
    async def passthrough(request: McpRequest, call_next: CallNext[dict[str, Any]]) -> dict[str, Any]:
        return await call_next(request)

    assert callable(passthrough)
    assert "passthrough" in repr(server.middlewares[0])


# --- over the wire: stdio and HTTP, both eras -------------------------------------------------

# The requests each wire test makes, and the method hook each one runs (None: on_request only).
PLAN: list[tuple[str, dict[str, Any], str | None]] = [
    ("tools/list", {}, "on_list"),
    ("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}}, "on_call_tool"),
    ("resources/list", {}, "on_list"),
    ("resources/read", {"uri": "mw://greeting"}, "on_read_resource"),
    ("prompts/list", {}, "on_list"),
    ("prompts/get", {"name": "greet", "arguments": {"name": "Ada"}}, "on_get_prompt"),
]


def expected_record(version: str, transport: str, *, initialize: bool) -> list[list[str]]:
    def around(method: str, hook: str | None) -> list[list[str]]:
        rows = [[tag, "on_request", method, version, transport] for tag in ("outer", "inner")]
        if hook is not None:
            rows += [[tag, hook, method, version, transport] for tag in ("outer", "inner")]
        return rows

    rows = around("initialize", None) if initialize else []
    for method, _params, hook in PLAN:
        rows += around(method, hook)
    return rows + around("tools/call", "on_call_tool")  # the call to ``hooks`` itself


def record_from(result: dict[str, Any], version: str) -> list[list[str]]:
    structured = result["structuredContent"]
    rows: list[list[str]] = structured if version == MODERN else structured["result"]
    return rows


@pytest.mark.parametrize("version", [MODERN, LEGACY])
def test_each_hook_fires_once_per_request_over_stdio(version: str) -> None:
    with StdioClient.toolkit(APP) as client:
        if version == MODERN:
            client.use_modern()
        else:
            client.initialize(version)
        for method, params, _hook in PLAN:
            client.result(method, params)
        record = record_from(client.call_tool("hooks"), version)
    assert record == expected_record(version, "stdio", initialize=version != MODERN)


@pytest.mark.parametrize("version", [MODERN, LEGACY])
async def test_each_hook_fires_once_per_request_over_http(version: str) -> None:
    with cli_server(APP) as running:
        async with connect(running.url) as http:
            client: Modern | Legacy = Modern(http) if version == MODERN else await Legacy(http, version).open()
            for method, params, _hook in PLAN:
                reply = await client.request(method, params)
                assert reply.status == 200, reply.body_text
            record = record_from((await client.call_tool("hooks")).result, version)
    assert record == expected_record(version, "http", initialize=version != MODERN)


def test_short_circuit_transform_and_failure_over_stdio() -> None:
    with StdioClient.toolkit(APP) as client:
        client.initialize(LEGACY)
        assert client.call_tool("add", {"a": 0, "b": 5})["structuredContent"] == {"result": -1}
        assert client.call_tool("echo", {"text": "hi"})["content"] == [{"type": "text", "text": "HI"}]
        refused = client.call_tool("add", {"a": 13, "b": 1})
        assert refused == {"content": [{"type": "text", "text": "13 is not allowed here"}], "isError": True}
        broken = client.request("tools/call", {"name": "add", "arguments": {"a": 666, "b": 1}})
        assert broken["error"]["code"] == -32603
        forbidden = client.request("tools/call", {"name": "forbidden", "arguments": {}})
        assert forbidden["error"] == {"code": -32001, "message": "Forbidden by policy", "data": {"tool": "forbidden"}}
        assert client.call_tool("add", {"a": 2, "b": 5})["structuredContent"] == {"result": 7}  # still serving
        client.assert_all_valid(LEGACY)
    # After close: a thread reads stderr, and may not have caught up with a live server's log yet.
    assert "a bug in the middleware" in client.stderr


async def test_short_circuit_transform_and_failure_over_http() -> None:
    with cli_server(APP) as running:
        async with connect(running.url) as http:
            modern = Modern(http)
            assert (await modern.call_tool("add", {"a": 0, "b": 5})).result["structuredContent"] == -1
            assert (await modern.call_tool("echo", {"text": "hi"})).result["content"][0]["text"] == "HI"
            broken = await modern.call_tool("add", {"a": 666, "b": 1})
            assert broken.status == 500
            assert broken.error["code"] == -32603
            forbidden = await modern.call_tool("forbidden")
            assert forbidden.error["code"] == -32001
            assert (await modern.call_tool("add", {"a": 2, "b": 5})).result["structuredContent"] == 7


# --- tasks ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [MODERN, LEGACY])
async def test_on_call_tool_wraps_a_tasks_run_and_its_result_is_the_tasks_result(version: str) -> None:
    trail: list[str] = []

    class Tag(Middleware):
        async def on_request(self, request: McpRequest, call_next: CallNext[dict[str, Any]]) -> dict[str, Any]:
            trail.append(request.method)
            return await call_next(request)

        async def on_call_tool(self, request: McpRequest, call_next: CallNext[ToolResult]) -> ToolResult:
            trail.append(f"on_call_tool {request.name}")
            result = await call_next(request)
            return ToolResult(structured_content={"report": result.structured_content, "checked": True})

    server = make_server(Tag())

    @server.tool(task="optional")
    async def build(topic: str) -> dict[str, Any]:
        return {"topic": topic}

    async with Client(server, protocol_version=version) as client:
        result = await client.call_task("build", {"topic": "t"})
    structured = result["structuredContent"]
    assert structured == {"report": {"topic": "t"}, "checked": True}
    assert trail.count("on_call_tool build") == 1  # once, inside the task
    assert trail.index("on_call_tool build") > trail.index("tools/call")  # in the task, after the call


async def test_a_result_changed_in_place_is_sent_as_changed() -> None:
    class Footer(Middleware):
        async def on_call_tool(self, request: McpRequest, call_next: CallNext[ToolResult]) -> ToolResult:
            result = await call_next(request)
            assert result.content is not None
            result.content.append(Text("(served by middleware)"))
            result.meta = {"example.com/checked": True}
            return result

    async with Client(make_server(Footer()), protocol_version=LEGACY) as client:
        result = await client.call_tool("echo", {"text": "hi"})
    assert result["content"] == [{"type": "text", "text": "hi"}, {"type": "text", "text": "(served by middleware)"}]
    assert result["_meta"] == {"example.com/checked": True}
