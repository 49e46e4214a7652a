"""The public extension API (``toolkit.extensions``): an extension written against it alone.

``tests/support/extension_app.py``'s ``Audit`` adds a capability, a method (``audit/log``, whose
``Mcp-Name`` the HTTP transport checks like a core method's), a ``tools/call`` hook, a
``tools/list`` entry hook, a source and a shutdown. Served by ``toolkit run`` over stdio and
Streamable HTTP, in both eras. The tasks extension is built on the same API (tests/test_tasks*.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from tests.http_support import Legacy, Modern, connect, header_value
from tests.support.processes import REPO, TOOLKIT
from tests.support.stdio import StdioClient

from toolkit import Server
from toolkit.extensions import LEGACY, Extension, Method

MODERN = "2026-07-28"
LEGACY_VERSION = "2025-11-25"
APP = REPO / "tests" / "support" / "extension_app.py"


@pytest.mark.parametrize("version", [MODERN, LEGACY_VERSION])
def test_an_extension_over_stdio(version: str) -> None:
    client = StdioClient([TOOLKIT, "run", APP])
    with client:
        if version == MODERN:
            client.use_modern()
            capabilities = client.result("server/discover")["capabilities"]
        else:
            capabilities = client.initialize(version)["result"]["capabilities"]
        assert capabilities["extensions"]["com.example/audit"] == {"version": 1}
        tools = {tool["name"]: tool for tool in client.result("tools/list")["tools"]}
        assert tools["echo"]["description"] == "Say it back. (audited)"
        assert tools["plain"]["description"] == "Not audited."
        assert "audit_status" in tools  # the extension's source
        assert client.call_tool("echo", {"text": "hi"})["content"][0]["text"] == "hi"
        assert client.call_tool("plain", {"text": "not logged"})["content"][0]["text"] == "not logged"
        refused = client.call_tool("echo", {"text": "forbidden"})
        assert refused["isError"] is True and refused["content"][0]["text"] == "refused by the audit"
        log = client.result("audit/log", {"tool": "echo"})
        assert log["entries"] == [{"tool": "echo", "arguments": {"text": "hi"}}]
        status = client.call_tool("audit_status")["structuredContent"]
        assert status == (1 if version == MODERN else {"result": 1})
        client.assert_all_valid(version)  # audit/log's answer: the envelope (no official schema has its result)
    assert "audit: 1 calls audited, shutting down" in client.stderr


async def test_an_extension_method_is_checked_by_mcp_name_over_http(mcp_cli: Callable[..., Any]) -> None:
    running = mcp_cli(APP)
    async with connect(running.url) as http:
        modern = Modern(http)
        body = modern.body("audit/log", {"tool": "echo"})
        right = await modern.post(body, {"Mcp-Name": header_value("echo")})
        assert right.status == 200 and right.message["result"]["entries"] == []
        wrong = await modern.post(modern.body("audit/log", {"tool": "echo"}), {"Mcp-Name": "plain"})
        assert wrong.status == 400 and wrong.message["error"]["code"] == -32020
        assert "Mcp-Name header 'plain' does not match body tool 'echo'" in wrong.message["error"]["message"]
        missing = await modern.post(modern.body("audit/log", {"tool": "echo"}))
        assert missing.status == 400 and "Mcp-Name header is missing" in missing.message["error"]["message"]
        assert (await modern.call_tool("echo", {"text": "over http"})).message["result"]["content"][0]["text"]
        legacy = Legacy(http, LEGACY_VERSION)
        await legacy.initialize()
        log = await legacy.request("audit/log", {})
        assert log.message["result"]["entries"] == [{"tool": "echo", "arguments": {"text": "over http"}}]


def test_an_extension_is_added_once_and_its_methods_keep_their_eras() -> None:
    class Legacyish(Extension):
        id = "com.example/legacy-only"

        def methods(self) -> Any:
            async def handler(inbound: Any) -> dict[str, Any]:
                return {}

            return [(Method("legacy/thing", LEGACY), handler)]

    server = Server("once")
    server.add_extension(Legacyish())
    with pytest.raises(ValueError, match="already added"):
        server.add_extension(Legacyish())
    assert server.engine.named_field("legacy/thing") is None
