"""``arguments`` on the wire: absent means none; ``null`` is refused like any other non-object.

Every protocol version's schema declares ``CallToolRequest.params.arguments`` and
``GetPromptRequest.params.arguments`` as ``{"type": "object"}``, not nullable, so ``null`` is
-32602 (a JSON-RPC error, not a tool result) in both eras, over stdio and Streamable HTTP.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from tests.http_support import connect, era_client
from tests.support.processes import REPO, TOOLKIT
from tests.support.stdio import StdioClient

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
NOTES = REPO / "examples" / "notes.py"
REQUESTS = [
    ("tools/call", {"name": "reindex", "arguments": None}),
    ("prompts/get", {"name": "summarize", "arguments": None}),
    ("tools/call", {"name": "reindex", "arguments": []}),
]


def check(method: str, params: dict[str, Any], response: dict[str, Any]) -> None:
    error = response["error"]
    assert error["code"] == -32602, (method, params, response)
    problem = "must be an object, not null" if params["arguments"] is None else "must be an object, not array"
    assert error["data"] == {"param": "arguments", "problem": problem}
    assert error["message"] == f'Invalid params: "arguments" {problem}'


@pytest.mark.parametrize("version", [MODERN, LEGACY, "2024-11-05"])
def test_null_arguments_over_stdio(version: str) -> None:
    with StdioClient([TOOLKIT, "run", NOTES]) as client:
        client.use_era(version)
        for method, params in REQUESTS:
            check(method, params, client.request(method, params))
        assert client.call_tool("reindex").get("isError", False) is False  # without the field: no arguments
        client.assert_all_valid(version)


@pytest.mark.parametrize("version", [MODERN, LEGACY])
async def test_null_arguments_over_http(mcp_cli: Callable[..., Any], version: str) -> None:
    running = mcp_cli(NOTES)
    async with connect(running.url) as http:
        client = await era_client(http, version)
        for method, params in REQUESTS:
            reply = await client.request(method, params)
            check(method, params, reply.message)
        done = await client.request("tools/call", {"name": "reindex"})
        assert done.message["result"].get("isError", False) is False
