"""Change notifications: list_changed for legacy sessions, subscriptions/listen for modern clients."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from tests.wire import assert_valid

from toolkit import Server
from toolkit._jsonrpc import Request
from toolkit.testing import Client

MODERN = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}


def make_server() -> Server:
    server = Server("changes")

    @server.tool
    def first() -> int:
        return 1

    @server.prompt
    def hello() -> str:
        """Says hello."""
        return "hello"

    @server.resource("test://watched")
    def watched() -> str:
        return "v1"

    return server


class Listener:
    """An open subscriptions/listen request, collecting what its stream carries."""

    def __init__(self, server: Server, request_id: int, notifications: dict[str, Any]) -> None:
        self.messages: list[dict[str, Any]] = []
        self.reply: Any = None
        request = Request(request_id, "subscriptions/listen", {"_meta": META, "notifications": notifications})

        async def collect(message: dict[str, Any]) -> None:
            assert_valid(message, MODERN)
            self.messages.append(message)

        self.task = asyncio.create_task(server.engine.handle_request(request, None, collect))

    @property
    def methods(self) -> list[str]:
        return [message["method"] for message in self.messages]


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_listen_acknowledges_then_delivers_only_what_was_asked() -> None:
    server = make_server()
    async with server.running():
        tools = Listener(server, 7, {"toolsListChanged": True, "resourceSubscriptions": ["test://watched"]})
        prompts = Listener(server, "p", {"promptsListChanged": True, "bogus": True})
        await settle()
        assert tools.messages == [
            {
                "jsonrpc": "2.0",
                "method": "notifications/subscriptions/acknowledged",
                "params": {
                    "_meta": {"io.modelcontextprotocol/subscriptionId": 7},
                    "notifications": {"toolsListChanged": True, "resourceSubscriptions": ["test://watched"]},
                },
            }
        ]
        assert prompts.messages[0]["params"]["notifications"] == {"promptsListChanged": True}

        server.add_tool(lambda: 2, name="second")
        await settle()
        await server.notify_resource_updated("test://watched")

        @server.prompt
        def goodbye() -> str:
            """Says goodbye."""
            return "bye"

        await settle()
        assert tools.methods == [
            "notifications/subscriptions/acknowledged",
            "notifications/tools/list_changed",
            "notifications/resources/updated",
        ]
        assert all(m["params"]["_meta"] == {"io.modelcontextprotocol/subscriptionId": 7} for m in tools.messages)
        assert tools.messages[2]["params"]["uri"] == "test://watched"
        assert prompts.methods == ["notifications/subscriptions/acknowledged", "notifications/prompts/list_changed"]
        assert prompts.messages[1]["params"]["_meta"] == {"io.modelcontextprotocol/subscriptionId": "p"}

        server.engine.close_listeners()  # shutdown: each subscription ends with its result
        reply = await tools.task
        await prompts.task
    response = json.loads(reply.body)
    assert_valid(response, MODERN, method="subscriptions/listen")
    assert response["id"] == 7
    assert response["result"]["resultType"] == "complete"
    assert response["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 7


async def test_listen_without_filter_is_invalid_params() -> None:
    server = make_server()
    async with Client(server) as client:
        response = await client.request("subscriptions/listen", {})
        assert response["error"]["code"] == -32602


async def test_legacy_sessions_hear_list_changes_and_caches_are_invalidated() -> None:
    server = make_server()
    async with Client(server, protocol_version="2025-11-25") as client:
        assert [tool["name"] for tool in await client.list_tools()] == ["first"]
        server.add_tool(lambda: 2, name="second")
        server.remove_prompt("hello")
        server.remove_resource("test://watched")
        await settle()
        assert [tool["name"] for tool in await client.list_tools()] == ["first", "second"]
        server.remove_tool("first")
        await settle()
        assert [tool["name"] for tool in await client.list_tools()] == ["second"]
        methods = [message["method"] for message in client.notifications]
        assert methods == [
            "notifications/tools/list_changed",
            "notifications/prompts/list_changed",
            "notifications/resources/list_changed",
            "notifications/tools/list_changed",
        ]
        for message in client.notifications:
            assert_valid(message, "2025-11-25")
