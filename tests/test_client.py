"""``toolkit.Client`` as a user drives it, against a toolkit server in this process, in every era.

The transports have their own tests (test_client_stdio.py, test_client_http.py) and the client
meets other frameworks' servers in test_client_servers.py; here is what the client itself adds:
natural values, the output check, handlers, progress, subscriptions, tasks, errors.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from typing import Any

import pytest
from pydantic import BaseModel

import toolkit
from toolkit import Context, Server
from toolkit._compat.schemas import declares_wrapper
from toolkit._components import CallContext, ToolBase
from toolkit._content import CallOutcome
from toolkit.client import CallToolResult, Client, OutputMismatch, ToolCallFailed

ERAS = ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]
STRUCTURED_ERAS = ["2026-07-28", "2025-11-25", "2025-06-18"]


class Forecast(BaseModel):
    day: str
    high: float


PREFERENCES = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "default": "John Doe"},
        "age": {"type": "integer", "default": 30},
        "verified": {"type": "boolean", "default": True},
        "nickname": {"type": "string"},
    },
}


class Liar(ToolBase):
    """A tool that advertises one output schema and sends something else (a broken server)."""

    async def call(self, arguments: dict[str, Any], context: CallContext) -> CallOutcome:
        return CallOutcome(None, {"temperature": "warm"})


def make_server() -> Server:
    server = Server("client-test", instructions="Ask for the weather.")

    @server.tool()
    def count() -> int:
        return 42

    @server.tool()
    def forecast(city: str) -> list[Forecast]:
        return [Forecast(day="mon", high=21.5), Forecast(day="tue", high=19.0)]

    @server.tool()
    def point() -> dict[str, int]:
        return {"x": 1, "y": 2}

    @server.tool()
    def fail() -> int:
        raise toolkit.ToolError("the weather service is down")

    @server.tool()
    async def slow_steps(ctx: Context) -> str:
        for step in range(3):
            await ctx.report_progress(step + 1, 3, f"step {step + 1}")
        return "done"

    @server.tool()
    async def ask_name(ctx: Context) -> str:
        answer = await ctx.elicit("Your name?", {"type": "object", "properties": {"name": {"type": "string"}}})
        return f"hello {answer.data['name']}" if answer.action == "accept" else "no name"

    @server.tool()
    async def preferences(ctx: Context) -> dict[str, Any]:
        answer = await ctx.elicit("Preferences?", PREFERENCES)  # a JSON Schema: the content as sent
        return dict(answer.data) if answer.data is not None else {}

    @server.tool()
    async def chatter(ctx: Context) -> str:
        await ctx.info("one")
        await ctx.warning("two")
        return "ok"

    @server.tool(task="optional")
    async def long_job(n: int) -> int:
        await asyncio.sleep(0.01)
        return n * 2

    @server.resource("notes://all", mime_type="text/plain")
    def notes() -> str:
        return "buy milk"

    @server.resource("notes://{day}")
    def note_of(day: str) -> str:
        return f"note of {day}"

    @server.prompt()
    def greet(name: str) -> str:
        return f"Say hello to {name}"

    server.add_tool(
        Liar(
            "liar",
            input_schema={"type": "object"},
            output_schema={
                "type": "object",
                "properties": {"temperature": {"type": "number"}},
                "required": ["temperature"],
            },
        )
    )
    return server


@pytest.mark.parametrize("version", ERAS)
async def test_call_tool_gives_the_natural_value_in_every_era(version: str) -> None:
    async with Client(make_server(), protocol_version=version) as client:
        assert client.negotiated_version == version
        count = await client.call_tool("count")
        forecast = await client.call_tool("forecast", {"city": "Paris"}, into=list[Forecast])
        point = await client.call_tool("point")
    assert isinstance(count, CallToolResult)
    assert forecast.data == [Forecast(day="mon", high=21.5), Forecast(day="tue", high=19.0)]
    if version in STRUCTURED_ERAS:
        assert count.data == 42  # unwrapped from {"result": 42} where the server declared the wrapper
        assert point.data == {"x": 1, "y": 2}
        expected = 42 if version == "2026-07-28" else {"result": 42}
        assert count.structured_content == expected
    else:  # no structured content before 2025-06-18: the value is the text
        assert count.data is None
        assert count.text == "42"
    assert not count.is_error


async def test_auto_finds_the_modern_era_and_reports_the_server() -> None:
    async with Client(make_server()) as client:
        assert client.negotiated_version == "2026-07-28"
        assert client.server_info is not None and client.server_info["name"] == "client-test"
        assert client.instructions == "Ask for the weather."
        assert "tools" in (client.server_capabilities or {})
        await client.ping()


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
async def test_a_tool_error_raises_unless_asked_not_to(version: str) -> None:
    async with Client(make_server(), protocol_version=version) as client:
        with pytest.raises(ToolCallFailed, match="the weather service is down") as raised:
            await client.call_tool("fail")
        assert isinstance(raised.value, toolkit.ToolError)  # a proxy re-raising it reports the same failure
        assert raised.value.result.is_error
        result = await client.call_tool("fail", raise_on_error=False)
    assert result.is_error and result.data is None and "down" in result.text
    async with Client(make_server(), protocol_version=version, raise_on_error=False) as client:
        assert (await client.call_tool("fail")).is_error


@pytest.mark.parametrize("version", STRUCTURED_ERAS)
async def test_a_result_that_breaks_its_output_schema_is_an_error_naming_the_tool(version: str) -> None:
    async with Client(make_server(), protocol_version=version) as client:
        with pytest.raises(OutputMismatch, match=r"tool 'liar'.*at temperature: \"warm\" is not of type \"number\""):
            await client.call_tool("liar")
    async with Client(make_server(), protocol_version=version, check_output=False) as client:
        assert (await client.call_tool("liar")).data == {"temperature": "warm"}


async def test_into_a_type_the_value_does_not_fit_names_the_tool_and_the_type() -> None:
    async with Client(make_server()) as client:
        with pytest.raises(toolkit.ToolkitError, match=r"result of tool 'point' does not parse into Forecast"):
            await client.call_tool("point", into=Forecast)


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25", "2024-11-05"])
async def test_progress_reports_reach_the_callback(version: str) -> None:
    seen: list[tuple[float, float | None, str | None]] = []
    async with Client(make_server(), protocol_version=version) as client:
        result = await client.call_tool("slow_steps", progress=lambda *report: seen.append(report))
    if version == "2024-11-05":  # progress notifications carry no message before 2025-03-26
        assert seen == [(1, 3, None), (2, 3, None), (3, 3, None)]
    else:
        assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
    assert result.text == "done"


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
async def test_elicitation_is_answered_by_the_handler_in_both_eras(version: str) -> None:
    asked: list[dict[str, Any]] = []

    def elicitation(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params)
        return {"action": "accept", "content": {"name": "Ada"}}

    async with Client(make_server(), protocol_version=version, elicitation=elicitation) as client:
        result = await client.call_tool("ask_name")
    assert result.text == "hello Ada"
    assert asked[0]["message"] == "Your name?"


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
async def test_an_accepted_form_gets_the_defaults_of_the_fields_left_out(version: str) -> None:
    def elicitation(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"age": 41}}  # the user changed one field

    async with Client(make_server(), protocol_version=version, elicitation=elicitation) as client:
        result = await client.call_tool("preferences")
    assert result.data == {"name": "John Doe", "age": 41, "verified": True}


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
async def test_log_messages_reach_on_log_at_the_level_asked(version: str) -> None:
    logs: list[dict[str, Any]] = []
    notified: list[str] = []
    async with Client(
        make_server(),
        protocol_version=version,
        on_log=logs.append,
        on_notification=lambda message: notified.append(message["method"]),
    ) as client:
        await client.set_logging_level("warning")
        await client.call_tool("chatter")
    assert [(log["level"], log["data"]) for log in logs] == [("warning", "two")]
    assert "notifications/message" in notified


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25", "2024-11-05"])
async def test_resources_prompts_and_completion(version: str) -> None:
    async with Client(make_server(), protocol_version=version) as client:
        resources = await client.list_resources()
        templates = await client.list_resource_templates()
        contents = await client.read_resource("notes://all")
        templated = await client.read_resource("notes://monday")
        prompts = await client.list_prompts()
        prompt = await client.get_prompt("greet", {"name": "Ada"})
    assert [resource["uri"] for resource in resources] == ["notes://all"]
    assert [template["uriTemplate"] for template in templates] == ["notes://{day}"]
    assert contents[0]["text"] == "buy milk"
    assert templated[0]["text"] == "note of monday"
    assert [p["name"] for p in prompts] == ["greet"]
    assert prompt["messages"][0]["content"]["text"] == "Say hello to Ada"


async def test_list_changed_empties_the_tool_cache_so_a_new_tool_is_checked_too() -> None:
    server = make_server()
    async with Client(server, protocol_version="2025-11-25") as client:
        assert (await client.call_tool("count")).data == 42

        @server.tool()
        def later() -> int:
            return 7

        await asyncio.sleep(0)  # the list_changed notification is delivered
        assert (await client.call_tool("later")).data == 7  # listed again: its wrapper is known


async def test_listen_on_2026_07_28_is_acknowledged_and_delivers_what_was_asked() -> None:
    server = make_server()
    async with Client(server) as client:
        subscription = await client.listen(tools=True, resources=["notes://all"])
        async with subscription:
            assert subscription.acknowledged is not None
            assert subscription.acknowledged.get("toolsListChanged") is True

            @server.tool()
            def added() -> int:
                return 1

            await server.notify_resource_updated("notes://all")
            first = await asyncio.wait_for(anext(subscription), 60)
            second = await asyncio.wait_for(anext(subscription), 60)
        methods = {first["method"], second["method"]}
        assert methods == {"notifications/tools/list_changed", "notifications/resources/updated"}
        assert subscription.ended
        await client.ping()  # the connection outlives the subscription


async def test_a_subscription_stays_open_past_the_clients_timeout() -> None:
    """A listen is answered only when it ends: the client's timeout, how long a request waits for
    its answer, does not end it (it did over HTTP: ``timeout=None`` meant the client's 60 s)."""
    from tests.http_support import serve

    server = make_server()
    async with serve(server) as running, Client(running.url, timeout=2.0) as client:
        async with await client.listen(tools=True) as subscription:
            await asyncio.sleep(2.5)  # longer than the client's timeout (which other requests keep, busy or not)
            assert not subscription.ended

            @server.tool()
            def added() -> int:
                return 1

            message = await asyncio.wait_for(anext(subscription), 60)
        assert message["method"] == "notifications/tools/list_changed"
        assert (await client.call_tool("added")).data == 1


async def test_a_subscription_the_server_never_acknowledges_fails_after_the_clients_timeout() -> None:
    """The subscription waits without a timeout, but its acknowledgement is the answer the client
    waits for: a server that never gives it does not hold ``listen()`` for ever."""
    from tests.http_support import serve
    from tests.support.stalls import NeverListens

    server = make_server()
    server.add_middleware(NeverListens())
    async with serve(server) as running, Client(running.url, timeout=0.3) as client:
        with pytest.raises(TimeoutError, match=r"subscriptions/listen within 0\.3 s"):
            await asyncio.wait_for(client.listen(tools=True), 60)  # the hang guard
        assert (await client.call_tool("count", timeout=60)).data == 42


async def test_listen_in_the_legacy_era_subscribes_and_unsubscribes() -> None:
    server = make_server()
    async with Client(server, protocol_version="2025-11-25") as client:
        async with await client.listen(resources=["notes://all"]) as subscription:
            await server.notify_resource_updated("notes://all")
            await server.notify_resource_updated("notes://other")  # not asked for
            update = await asyncio.wait_for(anext(subscription), 60)
        assert update["params"]["uri"] == "notes://all"
        with pytest.raises(toolkit.ToolkitError, match=r"use client\.listen"):
            async with Client(server) as modern:
                await modern.subscribe("notes://all")


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
async def test_a_tool_runs_as_a_task_and_its_result_reads_like_a_call(version: str) -> None:
    async with Client(make_server(), protocol_version=version) as client:
        handle = await client.call_tool_as_task("long_job", {"n": 21})
        assert handle.task_id
        result = await client.task_result(handle)
        status = await handle.refresh()
    assert result.data == 42
    assert status["status"] == "completed"


async def test_a_version_without_tasks_says_which_have_them() -> None:
    async with Client(make_server(), protocol_version="2025-06-18") as client:
        with pytest.raises(ValueError, match="has no tasks"):
            await client.call_tool_as_task("long_job", {"n": 1})


async def test_misuse_is_said_plainly() -> None:
    client = Client(make_server())
    with pytest.raises(toolkit.ToolkitError, match="not connected"):
        await client.call_tool("count")
    with pytest.raises(TypeError, match="cannot connect to int"):
        async with Client(42):
            pass
    with pytest.raises(ValueError, match="unknown protocol version"):
        async with Client(make_server(), protocol_version="1999-01-01"):
            pass


def test_import_toolkit_loads_no_client() -> None:
    code = (
        "import sys, toolkit; "
        "print(sorted(m for m in sys.modules if m.startswith('toolkit._client') or m == 'toolkit.client'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    code = "import toolkit; toolkit.Client; import sys; print('toolkit._client.client' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "True"


@pytest.mark.parametrize(
    ("schema", "wrapped"),
    [
        ({"type": "object", "properties": {"result": {"type": "integer"}}, "required": ["result"]}, True),
        (  # fastmcp's mark
            {
                "type": "object",
                "properties": {"result": {"type": "array"}},
                "required": ["result"],
                "x-fastmcp-wrap-result": True,
            },
            True,
        ),
        (  # the official SDK's FastMCP: <tool>Output
            {
                "type": "object",
                "title": "countOutput",
                "properties": {"result": {"type": "integer", "title": "Result"}},
                "required": ["result"],
            },
            True,
        ),
        (  # a model that happens to have a result field
            {
                "type": "object",
                "title": "Outcome",
                "properties": {"result": {"type": "integer"}},
                "required": ["result"],
            },
            False,
        ),
        ({"type": "object", "properties": {"x": {"type": "integer"}}}, False),
        (None, False),
    ],
)
def test_only_a_declared_wrapper_is_unwrapped(schema: Any, wrapped: bool) -> None:
    assert declares_wrapper("count", schema) is wrapped
    # 2026-07-28: only the explicit declarations (fastmcp's mark, the SDK's <tool>Output title).
    explicit = isinstance(schema, dict) and ("x-fastmcp-wrap-result" in schema or schema.get("title") == "countOutput")
    assert declares_wrapper("count", schema, modern=True) is (wrapped and explicit)


async def test_an_async_callback_runs_to_its_end() -> None:
    seen: list[str] = []

    async def on_log(params: dict[str, Any]) -> None:
        await asyncio.sleep(0)
        seen.append(params["data"])

    async with Client(make_server(), on_log=on_log) as client:
        await client.set_logging_level("info")
        await client.call_tool("chatter")
        for _ in range(100):  # the callbacks run in tasks of their own: give them their turns
            if len(seen) == 2:
                break
            await asyncio.sleep(0)
    assert seen == ["one", "two"]
