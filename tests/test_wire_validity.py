"""Every message toolkit sends validates against the official schema of the version in force.

The conformance suite's ``wire-schema-valid`` check, over a broad server: every tool shape of
``examples/weather.py`` plus hand-written composition schemas, content blocks and errors,
for every protocol version.
"""

from __future__ import annotations

import asyncio
from typing import Any

import jsonschema_rs
import pytest
from tests.support.apps import weather_module
from tests.support.memory import ALL_VERSIONS, MODERN, STRUCTURED, UNSTRUCTURED, called, checked_request, listed_tools
from tests.support.spec import definitions
from tests.wire import assert_valid

from toolkit import Audio, Context, EmbeddedResource, Image, ResourceLink, Server, Text, ToolError, ToolResult
from toolkit.testing import Client

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="

SHAPE_INPUT: dict[str, Any] = {
    "type": "object",
    "oneOf": [
        {
            "properties": {"kind": {"const": "circle"}, "r": {"type": "number", "exclusiveMinimum": 0}},
            "required": ["kind", "r"],
        },
        {"properties": {"kind": {"const": "square"}, "side": {"type": "number"}}, "required": ["kind", "side"]},
    ],
}
KITCHEN_SINK_INPUT: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {"Tag": {"type": "string", "pattern": "^[a-z]+$"}, "Point": {"$anchor": "point", "type": "array"}},
    "properties": {
        "tags": {"type": "array", "items": {"$ref": "#/$defs/Tag"}, "uniqueItems": True, "maxItems": 5},
        "pair": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "items": False},
        "mode": {"enum": ["fast", "slow", None]},
        "limit": {"type": "integer", "minimum": 1, "multipleOf": 5},
        "extra": {"type": "object", "patternProperties": {"^x-": {"type": "string"}}, "additionalProperties": False},
        "card": {"type": "string"},
        "cvv": {"type": "string", "minLength": 3},
        "point": {"$ref": "#point"},
        "anything": True,
    },
    "dependentRequired": {"card": ["cvv"]},
    "if": {"properties": {"mode": {"const": "slow"}}, "required": ["mode"]},
    "then": {"required": ["limit"]},
    "else": {"not": {"required": ["limit"], "properties": {"limit": {"minimum": 100}}}},
    "allOf": [{"not": {"required": ["forbidden"]}}],
    "unevaluatedProperties": False,
}
OUTPUT_SCHEMAS: dict[str, dict[str, Any]] = {
    "out_tuple": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "number"}], "items": False},
    "out_string_or_number": {"anyOf": [{"type": "string"}, {"type": "number"}]},
    "out_root_ref": {
        "$ref": "#/$defs/Box",
        "$defs": {"Box": {"type": "object", "properties": {"w": {"type": "number"}}, "required": ["w"]}},
    },
    "out_object_one_of": {
        "type": "object",
        "oneOf": [{"required": ["a"]}, {"required": ["b"]}],
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
    },
    "out_anything": {},
    "out_boolean_properties": {"type": "object", "properties": {"free": True, "banned": False}},
    "out_self_ref": {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": ["array", "integer"],
        "items": {"$ref": "#"},
    },
}
OUTPUT_VALUES: dict[str, Any] = {
    "out_tuple": ["a", 1.5],
    "out_string_or_number": 3,
    "out_root_ref": {"w": 2},
    "out_object_one_of": {"a": 1},
    "out_anything": {"any": ["thing"]},
    "out_boolean_properties": {"free": [1, 2]},
    "out_self_ref": [1, [2, [3]]],
}


def _returning(value: Any) -> Any:
    def tool() -> Any:
        return value

    return tool


def broad_server() -> Server:
    """``examples/weather.py`` (a fresh copy) plus composition schemas, content and errors."""
    server: Server = weather_module().server

    def shape(**arguments: Any) -> float:
        return float(arguments.get("r", arguments.get("side", 0)))

    server.add_tool(shape, name="shape_area", description="Area-ish.", input_schema=SHAPE_INPUT)
    server.add_tool(
        lambda **arguments: sorted(arguments),
        name="kitchen_sink",
        description="Every keyword.",
        input_schema=KITCHEN_SINK_INPUT,
        output_schema={"type": "array", "items": {"type": "string"}},
    )
    for name, schema in OUTPUT_SCHEMAS.items():
        server.add_tool(
            _returning(OUTPUT_VALUES[name]), name=name, description=f"Returns {name}.", output_schema=schema
        )

    @server.tool(title="Media", annotations={"readOnlyHint": True, "openWorldHint": False}, meta={"example.com/x": 1})
    def media() -> list[Text | Image | Audio | ResourceLink | EmbeddedResource]:
        """Every kind of content block."""
        return [
            Text("hello", annotations={"audience": ["user", "assistant"], "priority": 0.5}),
            Image(PNG, mime_type="image/png"),
            Audio("UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=", mime_type="audio/wav"),
            ResourceLink("test://doc", "doc", title="A document", description="d", mime_type="text/plain", size=10),
            EmbeddedResource("test://text", text="embedded", mime_type="text/plain"),
            EmbeddedResource("test://blob", blob=b"\x00\x01", mime_type="application/octet-stream"),
        ]

    @server.tool
    def spelled_out() -> ToolResult:
        """Content and structured value given separately, with _meta."""
        return ToolResult("three", structured_content={"n": 3}, meta={"example.com/trace": "t1"})

    @server.tool
    def refuses(reason: str) -> int:
        """Always raises ToolError."""
        raise ToolError(f"refused: {reason}")

    @server.tool
    def crashes() -> list[int]:
        """Raises an unexpected exception."""
        raise KeyError("internal detail")

    @server.tool(output_schema={"type": "integer", "maximum": 10})
    def breaks_contract() -> Any:
        """Returns a value its output schema rejects."""
        return 11

    @server.tool(timeout=0.05)
    async def too_slow() -> int:
        """Times out."""
        await asyncio.sleep(5)
        return 0

    @server.tool
    async def chatty(ctx: Context, steps: int = 3) -> list[int]:
        """Logs and reports progress."""
        for step in range(steps):
            await ctx.debug(f"debug {step}")
            await ctx.info({"step": step, "detail": ["structured", "data"]}, logger="chatty")
            await ctx.report_progress(step + 1, steps, message=f"step {step + 1} of {steps}")
        await ctx.report_progress(steps + 1)
        await ctx.error("done", logger="chatty")
        return list(range(steps))

    return server


EXTRA_CALLS: list[tuple[str, dict[str, Any], bool]] = [
    ("shape_area", {"kind": "circle", "r": 2}, False),
    ("shape_area", {"kind": "square", "side": 3}, False),
    ("shape_area", {"kind": "circle", "side": 3}, True),
    ("shape_area", {"kind": "circle", "r": 0}, True),
    ("kitchen_sink", {"tags": ["a", "b"], "pair": ["x", 1], "mode": None, "card": "1", "cvv": "123"}, False),
    ("kitchen_sink", {"mode": "slow", "limit": 10, "point": [], "extra": {"x-a": "b"}, "anything": {"k": 1}}, False),
    ("kitchen_sink", {"tags": ["A"]}, True),
    ("kitchen_sink", {"pair": ["x", 1, 2]}, True),
    ("kitchen_sink", {"card": "1"}, True),
    ("kitchen_sink", {"mode": "slow"}, True),
    ("kitchen_sink", {"limit": 200}, True),
    ("kitchen_sink", {"forbidden": 1}, True),
    ("kitchen_sink", {"unknown": 1}, True),
    ("kitchen_sink", {"extra": {"y": "z"}}, True),
    *((name, {}, False) for name in OUTPUT_SCHEMAS),
    ("media", {}, False),
    ("spelled_out", {}, False),
    ("refuses", {"reason": "policy"}, True),
    ("refuses", {}, True),
    ("crashes", {}, True),
    ("breaks_contract", {}, True),
    ("too_slow", {}, True),
    ("chatty", {"steps": 2}, False),
]


def every_call() -> list[tuple[str, dict[str, Any], bool]]:
    plan = [(str(step["tool"]), dict(step["arguments"]), bool(step["error"])) for step in weather_module().INTEROP_PLAN]  # type: ignore[call-overload]
    return plan + EXTRA_CALLS


# --- handshake and lists -----------------------------------------------------------------------


@pytest.mark.parametrize("version", ALL_VERSIONS)
async def test_handshake_is_valid(version: str) -> None:
    async with Client(broad_server(), protocol_version=version) as client:
        if version == MODERN:
            response = await checked_request(client, "server/discover")
            assert response["result"]["resultType"] == "complete"
        else:
            assert client.initialize_result is not None
            assert_valid({"jsonrpc": "2.0", "id": 1, "result": client.initialize_result}, version, method="initialize")
            assert_valid(await client.request("ping"), version, method="ping")


@pytest.mark.parametrize("version", ALL_VERSIONS)
async def test_tools_list_is_valid(version: str) -> None:
    server = broad_server()
    async with Client(server, protocol_version=version) as client:
        tools = await listed_tools(client)
    assert list(tools) == list(server.tools)
    for tool in tools.values():
        assert tool["inputSchema"]["type"] == "object"
        assert tool["description"], "conformance: every tool has a non-empty description"
        assert jsonschema_rs.meta.is_valid(tool["inputSchema"])
        if "outputSchema" in tool:
            assert version not in UNSTRUCTURED
            assert jsonschema_rs.meta.is_valid(tool["outputSchema"])
            if version in STRUCTURED:
                assert tool["outputSchema"]["type"] == "object"


@pytest.mark.parametrize("version", ALL_VERSIONS)
async def test_tools_list_pages_are_valid_and_complete(version: str) -> None:
    server = broad_server()
    server.page_size = 4
    async with Client(server, protocol_version=version) as client:
        pages: list[list[str]] = []
        cursor: str | None = None
        while True:
            response = await checked_request(client, "tools/list", {"cursor": cursor} if cursor else {})
            result = response["result"]
            pages.append([tool["name"] for tool in result["tools"]])
            cursor = result.get("nextCursor")
            if cursor is None:
                break
            assert isinstance(cursor, str) and cursor
    assert [name for page in pages for name in page] == list(server.tools)
    assert all(len(page) == 4 for page in pages[:-1])
    assert 1 <= len(pages[-1]) <= 4
    assert len(pages) == -(-len(server.tools) // 4)


@pytest.mark.parametrize("version", ALL_VERSIONS)
async def test_stale_and_foreign_cursors_are_invalid_params(version: str) -> None:
    server = broad_server()
    server.page_size = 3
    async with Client(server, protocol_version=version) as client:
        first = await checked_request(client, "tools/list")
        cursor = first["result"]["nextCursor"]
        assert (await checked_request(client, "tools/list", {"cursor": cursor}))["result"]["tools"]
        server.remove_tool("get_count")
        await asyncio.sleep(0.01)
        stale = await checked_request(client, "tools/list", {"cursor": cursor})
        garbage = await checked_request(client, "tools/list", {"cursor": "not-a-cursor!"})
        numeric = await checked_request(client, "tools/list", {"cursor": "MTIz"})
    for response in (stale, garbage, numeric):
        assert response["error"]["code"] == -32602, response


# --- calls ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", ALL_VERSIONS)
async def test_every_call_is_valid(version: str) -> None:
    server = broad_server()
    async with Client(server, protocol_version=version, log_level="debug") as client:
        tools = await listed_tools(client)
        for name, arguments, is_error in every_call():
            result = await called(client, name, arguments)
            assert result.get("isError", False) is is_error, f"{name}({arguments}): {result}"
            assert result["content"], f"{name} sent no content"
            schema = tools[name].get("outputSchema")
            if is_error or version in UNSTRUCTURED:
                assert "structuredContent" not in result
            elif schema is not None:
                assert "structuredContent" in result, f"{name} has an output schema but sent no structured result"
                checker = jsonschema_rs.Draft202012Validator(schema, offline=True)
                errors = [error.message for error in checker.iter_errors(result["structuredContent"])]
                assert not errors, f"{name}: structuredContent does not match the advertised outputSchema: {errors}"
        for message in client.messages:
            assert_valid(message, version)


@pytest.mark.parametrize("version", ALL_VERSIONS)
async def test_error_responses_are_valid(version: str) -> None:
    async with Client(broad_server(), protocol_version=version) as client:
        responses = [
            await checked_request(client, "tools/call", {"name": "no_such_tool", "arguments": {}}),
            await checked_request(client, "tools/call", {"name": "get_count", "arguments": [1]}),
            await checked_request(client, "tools/call", {"arguments": {}}),
            await checked_request(client, "tools/frobnicate", {}),
            await checked_request(client, "prompts/list", {}),
            await checked_request(client, "tools/list", {"cursor": "%%%"}),
        ]
    assert [response["error"]["code"] for response in responses] == [-32602, -32602, -32602, -32601, -32601, -32602]


@pytest.mark.parametrize("version", ALL_VERSIONS)
async def test_log_and_progress_notifications_are_valid(version: str) -> None:
    async with Client(broad_server(), protocol_version=version, log_level="info") as client:
        result = await client.call_tool("chatty", {"steps": 3}, meta={"progressToken": "tok-7"})
        await client.call_tool("chatty", {"steps": 1})
    assert result.get("isError", False) is False
    messages = client.messages
    for message in messages:
        assert_valid(message, version)
    logs = [m["params"] for m in messages if m["method"] == "notifications/message"]
    assert [log["level"] for log in logs] == ["info"] * 3 + ["error"] + ["info", "error"]
    assert logs[0] == {"level": "info", "logger": "chatty", "data": {"step": 0, "detail": ["structured", "data"]}}
    progress = [m["params"] for m in messages if m["method"] == "notifications/progress"]
    assert [p["progress"] for p in progress] == [1, 2, 3, 4], "only the call with a token reports progress"
    assert all(p["progressToken"] == "tok-7" for p in progress)
    defined = set(definitions(version)["ProgressNotification"]["properties"]["params"].get("properties", {}))
    if not defined:
        defined = set(definitions(version)["ProgressNotificationParams"]["properties"])
    for params in progress:
        assert set(params) <= defined | {"_meta"}, f"{version} progress has no {set(params) - defined}"
