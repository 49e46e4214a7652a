"""Context in both eras: logging, progress, elicitation, sampling, roots, capabilities, lifespan."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest
from pydantic import BaseModel
from tests.wire import assert_valid

from toolkit import Context, Server
from toolkit.testing import Client

MODERN = "2026-07-28"
LEGACY = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
ALL_VERSIONS = (MODERN, *LEGACY)


class Name(BaseModel):
    name: str


def accept_name(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {"name": "Alice"}}


def assistant(text: str) -> Any:
    def answer(params: dict[str, Any]) -> dict[str, Any]:
        return {"role": "assistant", "content": {"type": "text", "text": text}, "model": "m", "stopReason": "endTurn"}

    return answer


def some_roots(params: dict[str, Any]) -> dict[str, Any]:
    return {"roots": [{"uri": "file:///work", "name": "work"}]}


def make_server() -> Server:
    server = Server("context-test")

    @server.tool
    async def chatty(ctx: Context) -> str:
        """Logs at every level and reports progress."""
        await ctx.debug("d")
        await ctx.info("i")
        await ctx.warning("w")
        await ctx.error("e")
        await ctx.report_progress(0, 100, "start")
        await ctx.report_progress(50, 100)
        await ctx.report_progress(50, 100)  # not increasing: dropped
        await ctx.report_progress(100, 100, "done")
        return "ok"

    @server.tool
    async def ask_name(ctx: Context) -> str:
        """Asks the user's name."""
        answer = await ctx.elicit("What is your name?", Name)
        return f"hello {answer.data.name}" if answer.accepted and answer.data else f"no name ({answer.action})"

    @server.tool
    async def ask_llm(ctx: Context) -> str:
        result = await ctx.sample("Say something", max_tokens=10, system_prompt="Be brief")
        return result.text

    @server.tool
    async def roots(ctx: Context) -> list[str]:
        return [root.uri for root in await ctx.list_roots()]

    @server.tool
    async def info(ctx: Context) -> dict[str, Any]:
        return {
            "version": ctx.protocol_version,
            "supports_sampling": ctx.client_supports("sampling"),
            "client": (ctx.client_info or {}).get("name"),
        }

    return server


@pytest.mark.parametrize("version", ALL_VERSIONS)
async def test_logging_and_progress_reach_the_client(version: str) -> None:
    server = make_server()
    async with Client(server, protocol_version=version, log_level="warning") as client:
        result = await client.call_tool("chatty", meta={"progressToken": "p-1"})
        assert result["content"] == [{"type": "text", "text": "ok"}]
        for message in client.messages:
            assert_valid(message, version)
        logs = [m["params"] for m in client.notifications if m["method"] == "notifications/message"]
        assert [log["level"] for log in logs] == ["warning", "error"]
        progress = [m["params"] for m in client.notifications if m["method"] == "notifications/progress"]
        assert [p["progress"] for p in progress] == [0, 50, 100]
        assert all(p["progressToken"] == "p-1" and p["total"] == 100 for p in progress)
        # "message" exists in progress notifications from 2025-03-26 on.
        assert progress[0].get("message") == (None if version == "2024-11-05" else "start")


async def test_modern_sends_no_log_messages_without_a_log_level() -> None:
    async with Client(make_server()) as client:
        await client.call_tool("chatty")
        assert not [m for m in client.notifications if m["method"] == "notifications/message"]


async def test_legacy_sends_every_level_until_set_level() -> None:
    async with Client(make_server(), protocol_version="2025-11-25") as client:
        await client.call_tool("chatty")
        levels = [m["params"]["level"] for m in client.notifications if m["method"] == "notifications/message"]
        assert levels == ["debug", "info", "warning", "error"]


async def test_no_progress_without_a_progress_token() -> None:
    for version in (MODERN, "2025-11-25"):
        async with Client(make_server(), protocol_version=version) as client:
            await client.call_tool("chatty")
            assert not [m for m in client.notifications if m["method"] == "notifications/progress"]


async def test_invalid_modern_log_level_is_invalid_params() -> None:
    async with Client(make_server(), log_level="loud") as client:
        response = await client.request("tools/call", {"name": "chatty"})
        assert response["error"]["code"] == -32602


@pytest.mark.parametrize("version", (MODERN, "2025-11-25", "2025-06-18"))
async def test_elicitation_sampling_and_roots_work_in_both_eras(version: str) -> None:
    server = make_server()
    async with Client(
        server, protocol_version=version, elicitation=accept_name, sampling=assistant("hi there"), roots=some_roots
    ) as client:
        assert (await client.call_tool("ask_name"))["content"][0]["text"] == "hello Alice"
        assert (await client.call_tool("ask_llm"))["content"][0]["text"] == "hi there"
        assert (await client.call_tool("roots"))["structuredContent"] == (
            ["file:///work"] if version == MODERN else {"result": ["file:///work"]}
        )
        for message in client.messages:
            assert_valid(message, version)
        if version == MODERN:  # multi round-trip: no server-to-client requests at all
            assert not [m for m in client.messages if "id" in m]
        else:
            methods = [m["method"] for m in client.messages if "id" in m]
            assert methods == ["elicitation/create", "sampling/createMessage", "roots/list"]


async def test_elicitation_request_shape() -> None:
    async with Client(make_server(), elicitation=accept_name) as client:
        first = await client.call_tool("ask_name", follow_input=False)
        assert first["resultType"] == "input_required"
        (asked,) = first["inputRequests"].values()
        assert asked == {
            "method": "elicitation/create",
            "params": {
                "mode": "form",
                "message": "What is your name?",
                "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
            },
        }


@pytest.mark.parametrize("version", (MODERN, "2025-11-25"))
async def test_declined_elicitation(version: str) -> None:
    async with Client(
        make_server(), protocol_version=version, elicitation=lambda params: {"action": "decline"}
    ) as client:
        assert (await client.call_tool("ask_name"))["content"][0]["text"] == "no name (decline)"


async def test_missing_capability_modern_is_32021() -> None:
    async with Client(make_server(), capabilities={}) as client:
        response = await client.request("tools/call", {"name": "ask_llm"})
        assert response["error"]["code"] == -32021
        assert response["error"]["data"] == {"requiredCapabilities": {"sampling": {}}}
        assert response["_http_status"] == 400
        assert_valid(response, MODERN)


async def test_missing_capability_legacy_is_an_error_result() -> None:
    async with Client(make_server(), protocol_version="2025-11-25", capabilities={}) as client:
        result = await client.call_tool("ask_llm")
        assert result["isError"] is True
        assert "sampling" in result["content"][0]["text"]


async def test_legacy_client_error_answer_becomes_an_error_result() -> None:
    server = make_server()
    async with Client(server, protocol_version="2025-11-25", capabilities={"roots": {}}) as client:
        # The client declared roots but has no handler: it answers with a JSON-RPC error.
        result = await client.call_tool("roots")
        assert result["isError"] is True
        assert "roots/list" in result["content"][0]["text"]


@pytest.mark.parametrize("version", (MODERN, "2025-11-25"))
async def test_request_information(version: str) -> None:
    async with Client(
        make_server(), protocol_version=version, client_info={"name": "probe", "version": "9"}, sampling=assistant("x")
    ) as client:
        result = await client.call_tool("info")
        assert result["structuredContent"] == {"version": version, "supports_sampling": True, "client": "probe"}


async def test_lifespan_state_is_visible_to_tools() -> None:
    events: list[str] = []

    @contextlib.asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[dict[str, str]]:
        events.append("start")
        yield {"db": "connected"}
        events.append("stop")

    server = Server("lifespan", lifespan=lifespan)

    @server.tool
    def database(ctx: Context) -> str:
        return str(ctx.lifespan["db"])

    async with Client(server) as client:
        assert events == ["start"]
        assert (await client.call_tool("database"))["content"][0]["text"] == "connected"
    assert events == ["start", "stop"]
    assert server.lifespan_state is None
