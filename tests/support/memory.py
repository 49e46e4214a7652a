"""In-memory helpers on top of ``toolkit.testing.Client``."""

from __future__ import annotations

import contextlib
from typing import Any

from toolkit import Server
from toolkit.testing import Client

MODERN = "2026-07-28"
LEGACY = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
ALL_VERSIONS = (*LEGACY, MODERN)
STRUCTURED = ("2025-06-18", "2025-11-25")
"""Legacy versions that have ``outputSchema`` / ``structuredContent`` (object-only)."""
UNSTRUCTURED = ("2024-11-05", "2025-03-26")

PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"


def modern_meta(
    version: str = MODERN,
    capabilities: dict[str, Any] | None = None,
    client_info: dict[str, Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """The ``_meta`` a 2026-07-28 request carries."""
    meta: dict[str, Any] = {
        PROTOCOL_VERSION_KEY: version,
        CLIENT_CAPABILITIES_KEY: capabilities if capabilities is not None else {},
        CLIENT_INFO_KEY: client_info or {"name": "raw-test-client", "version": "1.0"},
    }
    meta.update(extra)
    return meta


class RawClient(Client):
    """A ``Client`` that does no handshake and adds no ``_meta``: every request is sent as given.

    ``async with RawClient(server) as client: await client.request("initialize", {...})``
    """

    def __init__(self, server: Server, **options: Any) -> None:
        super().__init__(server, protocol_version="2025-11-25", **options)
        self._lifespan: contextlib.AbstractAsyncContextManager[Server] = contextlib.nullcontext(server)

    async def __aenter__(self) -> RawClient:
        self._lifespan = self.server.running()
        await self._lifespan.__aenter__()
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        try:
            await super().__aexit__(*exc_info)
        finally:
            await self._lifespan.__aexit__(*exc_info)

    async def initialize(self, version: str, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send ``initialize`` for ``version`` then ``notifications/initialized``; the raw response."""
        response = await self.request(
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": capabilities or {},
                "clientInfo": {"name": "raw-test-client", "version": "1.0"},
            },
        )
        if "result" in response:
            await self.notify("notifications/initialized")
        return response


def _version_of(client: Client) -> str:
    return client.protocol_version


async def checked_request(
    client: Client, method: str, params: dict[str, Any] | None = None, *, version: str | None = None
) -> dict[str, Any]:
    """``client.request`` whose response is validated against the official schema of the version."""
    from tests.wire import assert_valid

    response = await client.request(method, params)
    assert_valid(response, version or _version_of(client), method=method)
    return response


async def listed_tools(client: Client) -> dict[str, dict[str, Any]]:
    """Every tool of ``tools/list`` (all pages) by name, each page validated."""
    tools: dict[str, dict[str, Any]] = {}
    cursor: str | None = None
    while True:
        response = await checked_request(client, "tools/list", {"cursor": cursor} if cursor else {})
        assert "result" in response, response
        for tool in response["result"]["tools"]:
            assert tool["name"] not in tools, f"{tool['name']} listed twice"
            tools[tool["name"]] = tool
        cursor = response["result"].get("nextCursor")
        if not cursor:
            return tools


async def called(client: Client, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    """The validated ``CallToolResult`` of one call."""
    response = await checked_request(client, "tools/call", {"name": name, "arguments": arguments or {}})
    assert "result" in response, response
    result: dict[str, Any] = response["result"]
    return result
