"""Exact wire output of ``_compat`` where mutation testing found the other tests lenient.

Each test pins a detail that a changed line in ``src/toolkit/_compat/`` altered without any
other fast test failing (``scripts/mutate src/toolkit/_compat/tools.py``; docs/contributing.md).
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from tests.support.memory import ALL_VERSIONS, MODERN, SERVER_INFO_KEY, STRUCTURED, called, listed_tools

from toolkit import Audio, ContentBlock, McpError, ResourceLink, Server, ToolError, ToolResult, _compat
from toolkit.testing import Client

ID = "https://example.com/schemas/readings.json"


@pytest.mark.parametrize("version", STRUCTURED)
async def test_a_wrapped_schema_keeps_its_id_at_the_root(version: str) -> None:
    # "$id" stays beside "$defs": inside "result" it would re-base "#/$defs/..." onto a
    # resource that has no "$defs".
    natural = {
        "$id": ID,
        "type": "array",
        "items": {"$ref": "#/$defs/Reading"},
        "$defs": {"Reading": {"type": "integer"}},
    }
    server = Server("ids")
    server.add_tool(lambda: [1, 2], name="readings", description="d", output_schema=natural)
    async with Client(server, protocol_version=version) as client:
        advertised = (await listed_tools(client))["readings"]["outputSchema"]
        result = await called(client, "readings")
    assert advertised == {
        "$id": ID,
        "type": "object",
        "properties": {"result": {"type": "array", "items": {"$ref": "#/$defs/Reading"}}},
        "required": ["result"],
        "$defs": {"Reading": {"type": "integer"}},
    }
    assert result["structuredContent"] == {"result": [1, 2]}


@pytest.mark.parametrize("version", STRUCTURED)
async def test_an_object_type_list_is_advertised_as_the_string_legacy_clients_require(version: str) -> None:
    # 2025-06-18 and 2025-11-25 define outputSchema.type as the constant "object".
    natural = {"type": ["object"], "properties": {"count": {"type": "integer"}}, "required": ["count"]}
    server = Server("types")
    server.add_tool(lambda: {"count": 1}, name="count", description="d", output_schema=natural)
    async with Client(server, protocol_version=version) as client:
        advertised = (await listed_tools(client))["count"]["outputSchema"]
        result = await called(client, "count")
    assert advertised == {"type": "object", "properties": {"count": {"type": "integer"}}, "required": ["count"]}
    assert result["structuredContent"] == {"count": 1}


@pytest.mark.parametrize("version", STRUCTURED)
async def test_an_upper_case_type_keyword_is_not_the_type(version: str) -> None:
    # Keywords are case-sensitive: "TYPE" is an unknown keyword, carried as it is; the root
    # "type" is still made the constant "object" that 2025-06-18 and 2025-11-25 require.
    natural = {"type": ["object"], "TYPE": "object", "properties": {"count": {"type": "integer"}}}
    server = Server("types")
    server.add_tool(lambda: {"count": 1}, name="count", description="d", output_schema=natural)
    async with Client(server, protocol_version=version) as client:
        advertised = (await listed_tools(client))["count"]["outputSchema"]
    assert advertised == {"type": "object", "TYPE": "object", "properties": {"count": {"type": "integer"}}}


@pytest.mark.parametrize("version", ALL_VERSIONS)
async def test_an_empty_tool_result_is_an_empty_content_list(version: str) -> None:
    server = Server("empty")
    server.add_tool(ToolResult, name="nothing", description="d")
    async with Client(server, protocol_version=version) as client:
        result = await called(client, "nothing")
    assert result["content"] == []
    assert "structuredContent" not in result


async def test_the_text_fallback_writes_non_finite_numbers_as_null() -> None:
    server = Server("numbers")
    server.add_tool(lambda: ToolResult(structured_content=[1.5, math.nan, math.inf]), name="numbers", description="d")
    async with Client(server, protocol_version="2024-11-05") as client:
        result = await called(client, "numbers")
    assert result == {"content": [{"type": "text", "text": "[1.5,null,null]"}]}


def blocks() -> list[ContentBlock]:
    return [
        Audio(b"RIFF....WAVE", mime_type="audio/wav"),
        ResourceLink("file:///data/report.csv", "report", title="Quarterly report"),
        ResourceLink("file:///data/raw.csv", "raw"),
    ]


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        (
            "2024-11-05",
            [
                {"type": "text", "text": "[audio content (audio/wav) omitted]"},
                {"type": "text", "text": "Resource: Quarterly report <file:///data/report.csv>"},
                {"type": "text", "text": "Resource: raw <file:///data/raw.csv>"},
            ],
        ),
        (
            "2025-03-26",
            [
                {"type": "audio", "data": "UklGRi4uLi5XQVZF", "mimeType": "audio/wav"},
                {"type": "text", "text": "Resource: Quarterly report <file:///data/report.csv>"},
                {"type": "text", "text": "Resource: raw <file:///data/raw.csv>"},
            ],
        ),
    ],
)
async def test_blocks_a_version_lacks_become_exactly_this_text(version: str, expected: list[dict[str, Any]]) -> None:
    server = Server("media")
    server.add_tool(blocks, name="media", description="d")
    async with Client(server, protocol_version=version) as client:
        result = await called(client, "media")
    assert result["content"] == expected


@pytest.mark.parametrize(("version", "status"), [*((version, 200) for version in ALL_VERSIONS[:-1]), (MODERN, 404)])
def test_an_unknown_method_is_http_404_in_the_modern_era_only(version: str, status: int) -> None:
    # To a legacy session a 404 means "your session is gone": its unknown method stays a 200.
    error = _compat.method_not_found("tools/frobnicate", version)
    assert (error.code, error.http_status) == (-32601, status)
    assert error.message == f"Method not found: 'tools/frobnicate' is not available in protocol version {version}"


@pytest.mark.parametrize("version", ALL_VERSIONS)
async def test_an_empty_server_version_is_sent_as_it_is(version: str) -> None:
    async with Client(Server("bare", version=""), protocol_version=version) as client:
        if version == MODERN:
            info = (await client.result("server/discover"))["_meta"][SERVER_INFO_KEY]
        else:
            assert client.initialize_result is not None
            info = client.initialize_result["serverInfo"]
    assert info == {"name": "bare", "version": ""}


def test_a_missing_client_capability_is_error_32021_with_http_400_in_the_modern_era() -> None:
    error = _compat.missing_capability("elicitation", MODERN)
    assert isinstance(error, McpError)
    assert (error.code, error.http_status, error.data) == (-32021, 400, {"requiredCapabilities": {"elicitation": {}}})
    assert error.message == (
        "This request needs the client capability 'elicitation', which the request's "
        "_meta clientCapabilities does not declare"
    )


def test_a_missing_client_capability_fails_the_tool_in_the_legacy_era() -> None:
    error = _compat.missing_capability("sampling", "2025-11-25")
    assert isinstance(error, ToolError)
    assert (
        str(error) == "This tool needs the client capability 'sampling', which the client did not declare at initialize"
    )
