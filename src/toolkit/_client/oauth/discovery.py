"""What the flow fetches itself: the two discovery documents, and any JSON answer, bounded.

Every request here goes through the flow's own ``httpx.AsyncClient`` (no redirects followed,
a timeout per request), and no answer may exceed ``MAX_DOCUMENT_BYTES``.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx

from ..._auth.oauth import (
    MAX_DOCUMENT_BYTES,
    AuthorizationServerMetadata,
    Challenge,
    MetadataRefused,
    OAuthError,
    ProtectedResourceMetadata,
    authorization_server_metadata_urls,
    check_url,
    protected_resource_metadata_urls,
)

logger = logging.getLogger("toolkit.client.oauth")


@contextlib.asynccontextmanager
async def flow_client(*, timeout: float, verify: Any) -> AsyncIterator[httpx.AsyncClient]:
    """The flow's own HTTP client: a 3xx is an answer, never followed (a document cannot send the
    flow elsewhere)."""
    async with httpx.AsyncClient(timeout=timeout, follow_redirects=False, verify=verify) as http:
        yield http


async def discover(
    http: httpx.AsyncClient, server_url: str, challenge: Challenge, *, allow_http_loopback: bool
) -> tuple[ProtectedResourceMetadata, AuthorizationServerMetadata]:
    """The protected resource metadata of ``server_url``, then its authorization server's, both checked.

    The challenge's ``resource_metadata`` first, then the well-known URLs (RFC 9728 §3.1; MCP
    "Protected Resource Metadata Discovery"). The first listed authorization server is used; its
    metadata from RFC 8414's URL, then OpenID Connect's, in the spec's order. A document that is
    found but fails a check stops the flow: it is never skipped for the next URL.
    """
    header_url = challenge.resource_metadata
    if header_url is not None:
        check_url(header_url, "resource_metadata of the challenge", allow_http_loopback=allow_http_loopback)
    tried = protected_resource_metadata_urls(server_url, header_url)
    resource = None
    for url in tried:
        document = await get_document(http, url, "protected resource metadata")
        if document is not None:
            resource = ProtectedResourceMetadata.parse(
                document, server_url=server_url, source=url, allow_http_loopback=allow_http_loopback
            )
            break
    if resource is None:
        raise MetadataRefused(f"{server_url} publishes no protected resource metadata (RFC 9728); tried {tried}")
    issuer = resource.authorization_servers[0]
    tried = authorization_server_metadata_urls(issuer)
    for url in tried:
        document = await get_document(http, url, "authorization server metadata")
        if document is not None:
            server = AuthorizationServerMetadata.parse(
                document, issuer=issuer, source=url, allow_http_loopback=allow_http_loopback
            )
            logger.debug("authorization server %s for %s", server.issuer, resource.resource)
            return resource, server
    raise MetadataRefused(f"the authorization server {issuer} publishes no metadata; tried {tried}")


async def get_document(http: httpx.AsyncClient, url: str, what: str) -> object | None:
    """The document at ``url``, or None if it is not there (a 3xx or 4xx). A 5xx or 429 stops the
    flow: it says nothing about whether the document exists."""
    status, document = await send_json(http, "GET", url, what)
    if status >= 500 or status == 429:
        raise MetadataRefused(f"{url} answered HTTP {status} for the {what}; try again later")
    if status != 200:
        return None
    if document is None:
        raise MetadataRefused(f"the {what} at {url} is not JSON")
    return document


async def send_json(
    http: httpx.AsyncClient,
    method: str,
    url: str,
    what: str,
    *,
    data: Mapping[str, str] | None = None,
    json_body: Any = None,
    headers: Mapping[str, str] | None = None,
) -> tuple[int, object]:
    """One request of the flow: its status and JSON body (None if empty or not JSON).

    ``what`` names the request in messages; neither the form, the headers nor the answer are
    ever logged (they carry codes, secrets and tokens).
    """
    sent = {"accept": "application/json", **(headers or {})}
    try:
        async with http.stream(method, url, data=data, json=json_body, headers=sent) as response:
            body = bytearray()
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > MAX_DOCUMENT_BYTES:
                    raise OAuthError(f"the {what} answer from {url} exceeds {MAX_DOCUMENT_BYTES} bytes")
            status = response.status_code
    except httpx.InvalidURL:  # httpx reads a redirect's Location even when not following it
        raise OAuthError(f"{url} answered the {what} request with a redirect to an invalid URL") from None
    except httpx.HTTPError as exc:
        raise OAuthError(f"cannot reach {url} for the {what}: {type(exc).__name__}") from None
    logger.debug("%s %s (%s) -> %s", method, url, what, status)
    try:
        return status, json.loads(body) if body else None
    except ValueError:
        return status, None
