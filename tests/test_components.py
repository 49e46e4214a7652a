"""A tool that is not a Python function (a ``ToolBase`` subclass) is served like a decorated one.

Over stdio and Streamable HTTP, in both eras: listed with its natural schemas (shaped per version
by ``_compat``), called, its arguments checked against its input schema unless it checks them
itself, its result shaped for each version, and its errors reported as ``isError`` results.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from tests.http_support import connect, era_client
from tests.support.processes import REPO, TOOLKIT
from tests.support.stdio import StdioClient

from toolkit import Server
from toolkit._components import ToolBase
from toolkit._content import CallOutcome
from toolkit._schema import checks
from toolkit._schema.checks import LazyValidator
from toolkit.testing import Client

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
APP = REPO / "tests" / "support" / "components_app.py"
WRAPPED_NUMBER = {"type": "object", "properties": {"result": {"type": "number"}}, "required": ["result"]}


def check_listing(tools: list[dict[str, Any]], version: str) -> None:
    by_name = {tool["name"]: tool for tool in tools}
    assert set(by_name) == {"multiply", "inventory", "add"}
    multiply = by_name["multiply"]
    assert multiply["description"] == "Multiply two numbers."
    assert multiply["annotations"] == {"readOnlyHint": True}
    assert multiply["inputSchema"]["required"] == ["a", "b"]
    assert multiply["outputSchema"] == ({"type": "number"} if version == MODERN else WRAPPED_NUMBER)


def check_calls(call: Callable[[str, dict[str, Any]], dict[str, Any]], version: str) -> None:
    product = call("multiply", {"a": 6, "b": 7})
    assert product.get("isError", False) is False
    assert product["structuredContent"] == (42 if version == MODERN else {"result": 42})
    assert product["content"] == [{"type": "text", "text": "42"}]
    refused = call("multiply", {"a": 6})
    assert refused["isError"] is True
    assert "Invalid arguments for tool 'multiply'" in refused["content"][0]["text"]
    assert "b" in refused["content"][0]["text"]
    assert "structuredContent" not in refused
    shelf = call("inventory", {"shelf": "top"})
    assert shelf["structuredContent"] == (["tea", "jam"] if version == MODERN else {"result": ["tea", "jam"]})
    own_check = call("inventory", {"shelf": "cellar"})
    assert own_check["isError"] is True and "no shelf 'cellar'" in own_check["content"][0]["text"]
    assert call("add", {"a": 1, "b": 2})["structuredContent"] == (3 if version == MODERN else {"result": 3})


@pytest.mark.parametrize("version", [MODERN, LEGACY])
def test_over_stdio(version: str) -> None:
    with StdioClient([TOOLKIT, "run", APP]) as client:
        client.use_era(version)
        check_listing(client.result("tools/list")["tools"], version)
        check_calls(client.call_tool, version)
        client.assert_all_valid(version)


@pytest.mark.parametrize("version", [MODERN, LEGACY])
async def test_over_http(mcp_cli: Callable[..., Any], version: str) -> None:
    running = mcp_cli(APP)
    async with connect(running.url) as http:
        client = await era_client(http, version)
        check_listing((await client.request("tools/list")).message["result"]["tools"], version)
        results = {}
        for name, arguments in [
            ("multiply", {"a": 6, "b": 7}),
            ("multiply", {"a": 6}),
            ("inventory", {"shelf": "top"}),
            ("inventory", {"shelf": "cellar"}),
            ("add", {"a": 1, "b": 2}),
        ]:
            reply = await client.call_tool(name, arguments)
            results[(name, str(arguments))] = reply.message["result"]
        check_calls(lambda name, arguments: results[(name, str(arguments))], version)


async def test_progress_and_the_old_text_only_era() -> None:
    from tests.support.components_app import server

    async with Client(server, protocol_version="2024-11-05") as client:
        result = await client.call_tool("multiply", {"a": 2, "b": 3})
    assert result["content"] == [{"type": "text", "text": "6"}] and "structuredContent" not in result


def test_schemas_are_checked_when_the_tool_is_built() -> None:
    with pytest.raises(ValueError, match='tool \'bad\': an input schema must have "type": "object"'):
        ToolBase("bad", input_schema={"type": "array"})
    with pytest.raises(ValueError, match="tool 'bad'"):
        ToolBase("bad", input_schema={"type": "object", "properties": {"x": {"$ref": "https://example.com/s"}}})
    with pytest.raises(ValueError, match="task='sometimes'"):
        ToolBase("bad", input_schema={"type": "object"}, task="sometimes")  # type: ignore[arg-type]


class _Lazy(ToolBase):
    compile_on_first_use = True

    async def call(self, arguments: dict[str, Any], context: Any) -> CallOutcome:
        return self.finish(arguments.get("echo"))


async def test_a_tool_compiling_on_first_use_checks_its_schemas_when_built_and_validates_when_called() -> None:
    with pytest.raises(ValueError, match="tool 'bad'"):
        _Lazy("bad", input_schema={"type": "object", "properties": {"x": {"$ref": "https://example.com/s"}}})
    with pytest.raises(ValueError, match="tool 'bad': output schema"):
        _Lazy("bad", input_schema={"type": "object"}, output_schema={"type": "nonsense"})

    schema = {"type": "object", "properties": {"echo": {"type": "integer"}}, "required": ["echo"]}
    remembered = len(checks._CHECKED)
    tool = _Lazy("echo", input_schema=schema, output_schema={"type": "integer", "minimum": 0})
    validators = (tool._input_validator, tool._output_validator)
    assert all(isinstance(v, LazyValidator) and v._compiled is None for v in validators)  # nothing kept yet
    assert len(checks._CHECKED) == remembered  # nor in check_schema's memory of passed schemas

    server = Server("lazy")
    server.add_tool(tool)
    async with Client(server) as client:
        refused = await client.call_tool("echo", {"echo": "seven"})
        assert refused["isError"] is True and "echo" in refused["content"][0]["text"]
        assert (await client.call_tool("echo", {"echo": 7}))["structuredContent"] == 7
        broken = await client.call_tool("echo", {"echo": -1})
        assert broken["isError"] is True and "output schema" in broken["content"][0]["text"]
    assert all(isinstance(v, LazyValidator) and v._compiled is not None for v in validators)


async def test_a_tool_without_call_says_so() -> None:
    server = Server("incomplete")
    server.add_tool(ToolBase("nothing", input_schema={"type": "object"}))
    async with Client(server) as client:
        response = await client.request("tools/call", {"name": "nothing", "arguments": {}})
    assert "error" in response or response["result"]["isError"] is True


def test_add_tool_takes_no_options_with_a_tool_base() -> None:
    with pytest.raises(TypeError, match="carries its own options"):
        Server("x").add_tool(ToolBase("t", input_schema={"type": "object"}), title="T")  # type: ignore[call-overload]
