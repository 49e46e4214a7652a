"""The Streamable HTTP transport's requests through httpx: OAuth (an ``httpx.Auth``), a user's client, proxies.

``HttpxClient`` answers ``exchange.HttpClient`` with an ``httpx.AsyncClient``: its own one
(redirects followed; an idle connection reused for ``keepalive`` seconds only, under uvicorn's
5 s, so a request retried after a long sign-in does not meet a closed socket; proxies from the
environment) or the user's (not closed here). httpx's errors become ``exchange``'s, so the
transport reads both clients alike.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

import httpx

from .exchange import ConnectFailed, Headers, HttpError, HttpTimeout, ReadTimeout


def _failure(exc: httpx.HTTPError) -> HttpError:
    detail = str(exc) or type(exc).__name__
    if isinstance(exc, httpx.ConnectError):
        return ConnectFailed(detail)
    if isinstance(exc, httpx.ReadTimeout):
        return ReadTimeout(detail)
    if isinstance(exc, httpx.TimeoutException):
        return HttpTimeout(detail)
    return HttpError(detail)


class HttpxResponse:
    """An ``httpx.Response`` opened with ``stream=True``, read as ``exchange.HttpResponse``."""

    __slots__ = ("_chunks", "_response", "reason", "status")

    def __init__(self, response: httpx.Response) -> None:
        self._response = response
        self.status = response.status_code
        self.reason = response.reason_phrase
        self._chunks: AsyncIterator[bytes] | None = None

    def header(self, name: str) -> str | None:
        value: str | None = self._response.headers.get(name)
        return value

    async def read_chunk(self) -> bytes:
        if self._chunks is None:
            self._chunks = self._response.aiter_bytes()
        try:
            return await anext(self._chunks, b"")
        except httpx.HTTPError as exc:
            raise _failure(exc) from exc

    async def aclose(self) -> None:
        await self._response.aclose()


class HttpxClient:
    """``exchange.HttpClient`` on an ``httpx.AsyncClient``, with ``auth`` on every request."""

    def __init__(
        self, client: httpx.AsyncClient | None, *, auth: httpx.Auth | None, timeout: float, keepalive: float
    ) -> None:
        self.timeout = timeout
        self.auth = auth
        self._owns_client = client is None
        if client is None:
            # Redirects are followed as the other MCP clients do (a mount's ``/mcp`` → ``/mcp/``).
            client = httpx.AsyncClient(
                timeout=httpx.Timeout(timeout, read=None),
                follow_redirects=True,
                limits=httpx.Limits(keepalive_expiry=keepalive),
            )
        self.client = client

    async def request(
        self,
        method: str,
        url: str,
        headers: Headers,
        body: bytes | None = None,
        *,
        read_timeout: float | None,
        on_sent: Callable[[], None] | None = None,
    ) -> HttpxResponse:
        extensions: dict[str, Any] = {}
        if on_sent is not None:

            async def trace(event: str, info: Mapping[str, Any]) -> None:
                # httpcore's trace extension: the body is out, the request is the server's now.
                if event.endswith("send_request_body.complete"):
                    on_sent()

            extensions["trace"] = trace
        request = self.client.build_request(
            method,
            url,
            content=body,
            headers=list(headers),
            timeout=httpx.Timeout(self.timeout, read=read_timeout),
            extensions=extensions,
        )
        try:
            if self.auth is not None:
                response = await self.client.send(request, stream=True, auth=self.auth)
            else:
                response = await self.client.send(request, stream=True)
        except httpx.HTTPError as exc:
            raise _failure(exc) from exc
        return HttpxResponse(response)

    async def aclose(self) -> None:
        if self._owns_client:
            await self.client.aclose()
