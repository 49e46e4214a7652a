"""What the Streamable HTTP transport needs of an HTTP client: one call, a streamed response, four errors.

Two clients answer it. ``http11.Http11Client`` speaks HTTP/1.1 itself on asyncio, for the hot
path (a ``tools/call`` through httpx + httpcore + h11 + anyio costs the client ~6x the CPU);
``httpx_client.HttpxClient`` wraps httpx for what only httpx does here: an ``httpx.Auth`` (the
OAuth flow), a user's own ``httpx.AsyncClient``, a proxy. ``lean_reachable`` says which one a URL
can take. Either way the transport sees the same responses and the same errors, so what the
session gets does not depend on the client.
"""

from __future__ import annotations

import urllib.parse
import urllib.request
from collections.abc import Callable, Collection
from typing import Protocol

Headers = Collection[tuple[str, str]]
"""Request headers as (name, value) pairs, sent in that order."""


class HttpError(Exception):
    """The HTTP exchange failed: the connection broke, or the server's answer is not HTTP."""


class ConnectFailed(HttpError):
    """No connection to the server (refused, unknown host, TLS refused)."""


class HttpTimeout(HttpError):
    """Connecting, sending, or waiting for a free connection took longer than the timeout."""


class ReadTimeout(HttpTimeout):
    """The server sent nothing for longer than the read timeout."""


class HttpResponse(Protocol):
    """A response whose head has arrived; the body is read as it comes."""

    status: int
    reason: str

    def header(self, name: str) -> str | None:
        """The value of header ``name`` (lower case), or ``None``."""
        ...

    async def read_chunk(self) -> bytes:
        """The next part of the body (``b""``: the end); raises ``HttpError``, ``ReadTimeout``."""
        ...

    async def aclose(self) -> None:
        """Done with it: the connection is reused if the body was read to its end, else closed."""
        ...


class HttpClient(Protocol):
    """Sends requests; a ``POST``'s body is ``body``, sent with its ``Content-Length``."""

    async def request(
        self,
        method: str,
        url: str,
        headers: Headers,
        body: bytes | None = None,
        *,
        read_timeout: float | None,
        on_sent: Callable[[], None] | None = None,
    ) -> HttpResponse:
        """The response to the request, once its head arrived. ``on_sent()``: the request is out."""
        ...

    async def aclose(self) -> None: ...


def lean_reachable(url: str) -> bool:
    """Whether ``Http11Client`` can take ``url``: http(s), ASCII, no user info, no proxy for it.

    Proxies are read from the environment as the standard library and httpx read them
    (``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY``, ``NO_PROXY``): with one, httpx goes through it.
    """
    if not url.isascii():
        return False
    try:
        parts = urllib.parse.urlsplit(url)
        parts.port  # noqa: B018  (raises on a bad port)
    except ValueError:
        return False
    if parts.scheme not in ("http", "https") or not parts.hostname or "@" in parts.netloc:
        return False
    proxies = urllib.request.getproxies()
    proxy = proxies.get(parts.scheme) or proxies.get("all")
    return not proxy or bool(urllib.request.proxy_bypass(parts.netloc))
