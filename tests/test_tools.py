"""``@server.tool``: registration, calling, results and errors, as a client sees them."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from typing import Any

import pytest
from pydantic import BaseModel
from tests.wire import assert_valid

from toolkit import (
    Audio,
    EmbeddedResource,
    Image,
    RegistrationError,
    ResourceLink,
    Server,
    Text,
    Tool,
    ToolError,
    ToolResult,
)
from toolkit.testing import Client

MODERN = "2026-07-28"
ALL_VERSIONS = ("2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
PNG = b"\x89PNG\r\n\x1a\n"


class Forecast(BaseModel):
    city: str
    temp: float


class ById(BaseModel):
    id: int


async def list_tools(client: Client) -> dict[str, dict[str, Any]]:
    response = await client.request("tools/list")
    assert_valid(response, client.protocol_version, method="tools/list")
    return {tool["name"]: tool for tool in response["result"]["tools"]}


async def call(client: Client, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    response = await client.request("tools/call", {"name": name, "arguments": arguments or {}})
    assert_valid(response, client.protocol_version, method="tools/call")
    assert "error" not in response, response
    result: dict[str, Any] = response["result"]
    return result


def texts(result: dict[str, Any]) -> list[str]:
    return [block["text"] for block in result["content"] if block["type"] == "text"]


# --- the decorator ---------------------------------------------------------------------------


async def test_bare_decorator_registers_and_returns_the_function() -> None:
    server = Server("tools")

    @server.tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    assert add(2, 3) == 5
    assert isinstance(server.tools["add"], Tool)
    async with Client(server) as client:
        tool = (await list_tools(client))["add"]
        assert tool == {
            "name": "add",
            "description": "Add two integers.",
            "inputSchema": {
                "type": "object",
                "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                "required": ["a", "b"],
                "additionalProperties": False,
            },
            "outputSchema": {"type": "integer"},
        }
        result = await call(client, "add", {"a": 2, "b": 3})
        assert result["structuredContent"] == 5
        assert result["content"] == [{"type": "text", "text": "5"}]


INPUT = {
    "type": "object",
    "properties": {"city": {"type": "string", "minLength": 1}},
    "required": ["city"],
    "additionalProperties": False,
}
OUTPUT = {"type": "object", "properties": {"temp": {"type": "number"}}, "required": ["temp"]}
ICONS = [{"src": "https://example.com/icon.png", "mimeType": "image/png", "sizes": ["48x48"]}]


def make_full_server() -> Server:
    server = Server("tools")

    @server.tool(
        name="weather.current",
        title="Current weather",
        description="The temperature now.",
        annotations={"readOnlyHint": True, "openWorldHint": False},
        meta={"com.example/owner": "team-weather"},
        icons=ICONS,
        input_schema=INPUT,
        output_schema=OUTPUT,
        structured_output=True,
        timeout=5.0,
    )
    async def current(city: str) -> dict[str, float]:
        """Not the description."""
        return {"temp": 21.5}

    @server.tool(root_param="query")
    def lookup(query: ById) -> int:
        return query.id

    return server


@pytest.mark.parametrize("version", ALL_VERSIONS)
async def test_decorator_with_every_argument(version: str) -> None:
    server = make_full_server()
    async with Client(server, protocol_version=version) as client:
        tools = await list_tools(client)
        tool = tools["weather.current"]
        assert tool["name"] == "weather.current"
        assert tool["description"] == "The temperature now."
        assert tool["inputSchema"] == INPUT
        assert (tool.get("title") == "Current weather") is (version >= "2025-06-18")
        assert (tool.get("annotations") == {"readOnlyHint": True, "openWorldHint": False}) is (version >= "2025-03-26")
        assert (tool.get("_meta") == {"com.example/owner": "team-weather"}) is (version >= "2025-06-18")
        assert (tool.get("icons") == ICONS) is (version >= "2025-11-25")
        assert (tool.get("outputSchema") == OUTPUT) is (version >= "2025-06-18")
        result = await call(client, "weather.current", {"city": "Paris"})
        assert json.loads(result["content"][0]["text"]) == {"temp": 21.5}
        if version >= "2025-06-18":
            assert result["structuredContent"] == {"temp": 21.5}
        else:
            assert "structuredContent" not in result
        assert (await call(client, "weather.current", {"city": ""}))["isError"] is True
        assert tools["lookup"]["inputSchema"]["properties"] == {"id": {"type": "integer"}}
        assert texts(await call(client, "lookup", {"id": 4})) == ["4"]


async def test_add_tool_is_the_decorator_without_the_sugar() -> None:
    server = Server("tools")

    def shout(text: str) -> str:
        return text.upper()

    tool = server.add_tool(shout, name="loud", description="Shout.")
    assert server.tools == {"loud": tool}
    async with Client(server) as client:
        assert (await list_tools(client))["loud"]["description"] == "Shout."
        assert (await call(client, "loud", {"text": "hi"}))["content"] == [{"type": "text", "text": "HI"}]
    server.remove_tool("loud")
    assert server.tools == {}


async def test_structured_output_false_sends_content_only() -> None:
    server = Server("tools")

    @server.tool(structured_output=False)
    def count() -> list[int]:
        return [1, 2]

    async with Client(server) as client:
        assert "outputSchema" not in (await list_tools(client))["count"]
        result = await call(client, "count")
        assert "structuredContent" not in result
        assert result["content"] == [{"type": "text", "text": "[1,2]"}]


def test_structured_output_options_that_cannot_work_are_refused() -> None:
    server = Server("tools")

    def untyped():  # type: ignore[no-untyped-def]
        return 1

    def typed() -> int:
        return 1

    with pytest.raises(RegistrationError, match="'untyped'"):
        server.tool(structured_output=True)(untyped)
    with pytest.raises(RegistrationError, match="'typed'"):
        server.tool(output_schema={"type": "integer"}, structured_output=False)(typed)
    assert server.tools == {}


async def test_timeout_turns_a_slow_call_into_an_error() -> None:
    server = Server("tools", tool_timeout=0.05)

    @server.tool
    async def slow() -> int:
        await asyncio.sleep(5)
        return 1

    @server.tool(timeout=5)
    async def patient() -> int:
        await asyncio.sleep(0.1)
        return 2

    async with Client(server) as client:
        result = await call(client, "slow")
        assert result["isError"] is True
        assert "timed out" in texts(result)[0]
        assert (await call(client, "patient"))["structuredContent"] == 2


# --- sync and async ----------------------------------------------------------------------------


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
async def test_a_sync_tool_does_not_block_the_event_loop(version: str) -> None:
    # The sync tool blocks its thread until the async tool has run. Were it run on the event
    # loop, the async tool could not start, and the sync one would give up after 5 s.
    server = Server("tools")
    released = threading.Event()
    threads: dict[str, int] = {}

    @server.tool
    def wait_for_release() -> bool:
        threads["sync"] = threading.get_ident()
        return released.wait(timeout=5)

    @server.tool
    async def release() -> str:
        threads["async"] = threading.get_ident()
        released.set()
        return "released"

    async with Client(server, protocol_version=version) as client:
        waiting = asyncio.create_task(call(client, "wait_for_release"))
        await asyncio.sleep(0.05)
        assert not waiting.done()
        assert texts(await call(client, "release")) == ["released"]
        result = await asyncio.wait_for(waiting, timeout=10)
    assert texts(result) == ["true"]
    assert threads["sync"] != threads["async"] == threading.get_ident()


async def test_sync_and_async_tools_give_the_same_results() -> None:
    server = Server("tools")

    @server.tool
    def sync_forecast(city: str) -> list[Forecast]:
        return [Forecast(city=city, temp=1.5)]

    @server.tool
    async def async_forecast(city: str) -> list[Forecast]:
        await asyncio.sleep(0)
        return [Forecast(city=city, temp=1.5)]

    async with Client(server) as client:
        tools = await list_tools(client)
        assert tools["sync_forecast"]["outputSchema"] == tools["async_forecast"]["outputSchema"]
        sync = await call(client, "sync_forecast", {"city": "Lima"})
        asynchronous = await call(client, "async_forecast", {"city": "Lima"})
        assert sync == asynchronous
        assert sync["structuredContent"] == [{"city": "Lima", "temp": 1.5}]


# --- errors ------------------------------------------------------------------------------------


def make_failing_server(**options: Any) -> Server:
    server = Server("tools", **options)

    @server.tool
    def refuse(amount: int) -> int:
        raise ToolError(f"{amount} is over the limit of 100")

    @server.tool
    async def refuse_async() -> int:
        raise ToolError("not today")

    @server.tool
    def crash() -> int:
        raise ValueError("password=hunter2 at /srv/secret.py")

    @server.tool
    async def crash_async() -> int:
        raise KeyError("internal-key")

    return server


async def test_tool_error_message_is_shown() -> None:
    async with Client(make_failing_server()) as client:
        result = await call(client, "refuse", {"amount": 500})
        assert result["isError"] is True
        assert result["content"] == [{"type": "text", "text": "500 is over the limit of 100"}]
        assert "structuredContent" not in result
        assert texts(await call(client, "refuse_async")) == ["not today"]


async def test_other_exceptions_are_masked_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR, logger="toolkit"):
        async with Client(make_failing_server()) as client:
            for name, secret in (("crash", "hunter2"), ("crash_async", "internal-key")):
                result = await call(client, name)
                assert result["isError"] is True
                assert "structuredContent" not in result
                assert secret not in json.dumps(result)
                assert name in texts(result)[0]
    logged = [record for record in caplog.records if record.exc_info]
    assert {type(record.exc_info[1]) for record in logged if record.exc_info} >= {ValueError, KeyError}


async def test_mask_errors_false_shows_other_exceptions() -> None:
    async with Client(make_failing_server(mask_errors=False)) as client:
        result = await call(client, "crash")
        assert result["isError"] is True
        assert "ValueError" in texts(result)[0]
        assert "password=hunter2 at /srv/secret.py" in texts(result)[0]
        assert texts(await call(client, "refuse", {"amount": 101})) == ["101 is over the limit of 100"]


async def test_invalid_arguments_are_an_error_result_the_model_can_read() -> None:
    server = Server("tools")

    @server.tool
    def forecast(city: str, days: int = 1) -> int:
        return days

    async with Client(server) as client:
        for arguments, fragment in (
            ({}, "city"),
            ({"city": "x", "days": "two"}, "days"),
            ({"city": "x", "extra": True}, "extra"),
        ):
            result = await call(client, "forecast", arguments)
            assert result["isError"] is True
            assert "structuredContent" not in result
            assert fragment in texts(result)[0]


async def test_unknown_tool_is_a_protocol_error() -> None:
    async with Client(Server("tools")) as client:
        response = await client.request("tools/call", {"name": "nope", "arguments": {}})
        assert_valid(response, MODERN, method="tools/call")
        assert response["error"]["code"] == -32602


# --- results -------------------------------------------------------------------------------------


def make_content_server() -> Server:
    server = Server("tools")

    @server.tool
    def plain() -> str:
        return '{"not": "json-encoded again"}'

    @server.tool
    def one_block() -> Text:
        return Text("hello", annotations={"audience": ["user"]})

    @server.tool
    def picture() -> Image:
        return Image(PNG, mime_type="image/png")

    @server.tool
    def mixed() -> list[Text | Image | Audio | ResourceLink | EmbeddedResource]:
        return [
            Text("a chart:"),
            Image(PNG, mime_type="image/png"),
            Audio(b"RIFF", mime_type="audio/wav"),
            ResourceLink("file:///data.csv", "data.csv", mime_type="text/csv"),
            EmbeddedResource("file:///notes.txt", text="notes", mime_type="text/plain"),
        ]

    @server.tool
    def full() -> ToolResult:
        return ToolResult([Text("3 matches")], structured_content={"matches": 3}, meta={"com.example/trace": "t1"})

    @server.tool
    def failed() -> ToolResult:
        return ToolResult("could not reach the upstream service", is_error=True)

    @server.tool
    def typed_result() -> Forecast:
        return ToolResult("Paris: 21.5 degrees", structured_content=Forecast(city="Paris", temp=21.5))  # type: ignore[return-value]

    return server


async def test_content_blocks_are_sent_as_given() -> None:
    async with Client(make_content_server()) as client:
        tools = await list_tools(client)
        for name in ("plain", "one_block", "picture", "mixed", "full", "failed"):
            assert "outputSchema" not in tools[name], name
        assert (await call(client, "plain"))["content"] == [{"type": "text", "text": '{"not": "json-encoded again"}'}]
        assert (await call(client, "one_block"))["content"] == [
            {"type": "text", "text": "hello", "annotations": {"audience": ["user"]}}
        ]
        assert (await call(client, "picture"))["content"] == [
            {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
        ]
        mixed = await call(client, "mixed")
        assert [block["type"] for block in mixed["content"]] == ["text", "image", "audio", "resource_link", "resource"]
        assert "structuredContent" not in mixed


async def test_tool_result_sets_content_structured_content_and_error_separately() -> None:
    async with Client(make_content_server()) as client:
        tools = await list_tools(client)
        full = await call(client, "full")
        assert full["content"] == [{"type": "text", "text": "3 matches"}]
        assert full["structuredContent"] == {"matches": 3}
        assert full["_meta"]["com.example/trace"] == "t1"
        failed = await call(client, "failed")
        assert failed["isError"] is True
        assert failed["content"] == [{"type": "text", "text": "could not reach the upstream service"}]
        typed = await call(client, "typed_result")
        assert tools["typed_result"]["outputSchema"]["required"] == ["city", "temp"]
        assert typed["content"] == [{"type": "text", "text": "Paris: 21.5 degrees"}]
        assert typed["structuredContent"] == {"city": "Paris", "temp": 21.5}


@pytest.mark.parametrize("version", ALL_VERSIONS)
async def test_text_fallback_is_one_block_with_the_json_of_the_value(version: str) -> None:
    server = Server("tools")

    @server.tool
    def forecasts() -> list[Forecast]:
        return [Forecast(city=city, temp=20) for city in ("Oslo", "Rome", "Lima")]

    @server.tool
    def nothing() -> None:
        return None

    @server.tool
    def maybe() -> Forecast | None:
        return None

    @server.tool
    def count() -> int:
        return 3

    @server.tool
    def untyped():  # type: ignore[no-untyped-def]
        return {"b": [1, 2], "a": None}

    natural = {
        "forecasts": [{"city": "Oslo", "temp": 20.0}, {"city": "Rome", "temp": 20.0}, {"city": "Lima", "temp": 20.0}],
        "nothing": None,
        "maybe": None,
        "count": 3,
        "untyped": {"b": [1, 2], "a": None},
    }
    async with Client(server, protocol_version=version) as client:
        for name, value in natural.items():
            result = await call(client, name)
            assert len(result["content"]) == 1, result
            assert result["content"][0]["type"] == "text"
            assert json.loads(result["content"][0]["text"]) == value
        assert texts(await call(client, "nothing")) == ["null"]


# --- registration errors -------------------------------------------------------------------------


def test_a_duplicate_name_is_refused() -> None:
    server = Server("tools")

    @server.tool
    def search(query: str) -> str:
        return query

    def other(query: str) -> str:
        return query

    with pytest.raises(RegistrationError, match=r"'search'.*already registered"):
        server.tool(search)
    with pytest.raises(RegistrationError, match=r"'search'.*already registered"):
        server.tool(name="search")(other)
    assert list(server.tools) == ["search"]
    assert server.tools["search"].fn is search
    server.tool(name="search_again")(other)
    assert list(server.tools) == ["search", "search_again"]


def positional_only(a: int, /, b: int) -> int:
    return a + b


def star_args(*values: int) -> int:
    return sum(values)


def star_kwargs(**options: int) -> int:
    return len(options)


def unresolvable(x: NotDefinedAnywhere) -> int:  # type: ignore[name-defined]  # noqa: F821
    return 1


@pytest.mark.parametrize(
    ("fn", "fragment"),
    [
        pytest.param(positional_only, "positional-only", id="positional-only"),
        pytest.param(star_args, r"\*values", id="*args"),
        pytest.param(star_kwargs, r"\*\*kwargs", id="**kwargs"),
        pytest.param(unresolvable, "NotDefinedAnywhere", id="unresolvable hint"),
    ],
)
def test_bad_signatures_are_refused_naming_the_function(fn: Any, fragment: str) -> None:
    server = Server("tools")
    with pytest.raises(RegistrationError, match=fragment) as error:
        server.tool(fn)
    assert f"'{fn.__name__}'" in str(error.value)
    assert server.tools == {}


async def test_kwargs_are_fine_with_a_hand_written_input_schema() -> None:
    server = Server("tools")
    server.tool(input_schema={"type": "object", "properties": {"a": {"type": "integer"}}})(star_kwargs)
    async with Client(server) as client:
        assert texts(await call(client, "star_kwargs", {"a": 1})) == ["1"]


def test_server_tool_called_with_a_function_and_options_keeps_the_options() -> None:
    server = Server("options")

    def one() -> int:
        return 1

    assert server.tool(one, name="uno", title="Uno") is one
    (tool,) = server.tools.values()
    assert (tool.name, tool.title) == ("uno", "Uno")
