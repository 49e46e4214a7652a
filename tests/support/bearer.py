"""A raw MCP-over-HTTP client that presents one bearer token on every request.

async with bearer_client(url, token) as http:
    await Legacy(http).open()    # initialize, notifications/initialized, every later request: all with the token
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import httpx
from tests.http_support import TIMEOUT, McpHttp


@contextlib.asynccontextmanager
async def bearer_client(url: str, token: str | None) -> AsyncIterator[McpHttp]:
    """``McpHttp`` for ``url`` sending ``Authorization: Bearer token`` (nothing when ``token`` is None)."""
    headers = {"authorization": f"Bearer {token}"} if token is not None else {}
    limits = httpx.Limits(max_keepalive_connections=0)
    async with httpx.AsyncClient(timeout=httpx.Timeout(TIMEOUT), limits=limits, headers=headers) as http:
        yield McpHttp(url, http)
