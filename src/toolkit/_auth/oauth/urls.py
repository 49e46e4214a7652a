"""URLs: which are safe to use, the resource an MCP endpoint is, and where discovery documents live."""

from __future__ import annotations

import ipaddress
from typing import Final
from urllib.parse import urlsplit, urlunsplit

from .errors import InsecureURL

PROTECTED_RESOURCE_WELL_KNOWN: Final = "/.well-known/oauth-protected-resource"
OAUTH_WELL_KNOWN: Final = "/.well-known/oauth-authorization-server"
OPENID_WELL_KNOWN: Final = "/.well-known/openid-configuration"


def is_loopback(host: str | None) -> bool:
    """``localhost``, ``127.0.0.0/8`` or ``::1`` (RFC 8252 §7.3)."""
    if not host:
        return False
    host = host.strip("[]").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_url(url: object, what: str, *, allow_http_loopback: bool = False) -> str:
    """``url`` if it is an absolute https URL (or http on loopback, if allowed); ``InsecureURL`` otherwise.

    ``what`` names the URL in the message (``"token_endpoint of https://as.example"``). A
    fragment is refused too (RFC 8414 §2, RFC 6749 §3.1).
    """
    if not isinstance(url, str):
        raise InsecureURL(f"{what}: expected a URL string, got {type(url).__name__}")
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        raise InsecureURL(f"{what}: {url!r} is not a URL") from None
    if not host or parts.fragment:
        raise InsecureURL(f"{what}: {url!r} is not an absolute URL without a fragment")
    if parts.scheme == "https":
        return url
    if parts.scheme == "http" and is_loopback(host):
        if allow_http_loopback:
            return url
        raise InsecureURL(f"{what}: {url!r} is plain http; pass allow_http_loopback=True to allow it on loopback")
    raise InsecureURL(f"{what}: {url!r} must use https (http is only allowed on a loopback host)")


def canonical_resource(url: str) -> str:
    """The resource identifier of an MCP endpoint (RFC 8707 §2): lower-case scheme and host, no query,
    no fragment, no trailing slash (the MCP spec's "Canonical Server URI")."""
    parts = urlsplit(url)
    netloc = parts.netloc.lower()
    path = parts.path.rstrip("/")
    return urlunsplit((parts.scheme.lower(), netloc, path, "", ""))


def resource_covers(resource: str, server_url: str) -> bool:
    """Whether the metadata's ``resource`` names ``server_url``: the same origin (case-insensitively)
    and the same path or a parent of it, at a segment boundary (RFC 9728 §3.3, §7.3; a server may
    advertise ``https://host`` for ``https://host/mcp``, never ``https://host/mc`` or another host)."""
    mine, theirs = urlsplit(canonical_resource(server_url)), urlsplit(canonical_resource(resource))
    if (theirs.scheme, theirs.netloc) != (mine.scheme, mine.netloc) or urlsplit(resource).query:
        return False
    return (mine.path + "/").startswith(theirs.path + "/")


def protected_resource_metadata_urls(server_url: str, header_url: str | None = None) -> list[str]:
    """Where to look for the metadata of ``server_url``, in the spec's order: the challenge's
    ``resource_metadata``, then path insertion (RFC 9728 §3.1), then the root."""
    parts = urlsplit(server_url)
    origin = f"{parts.scheme}://{parts.netloc}"
    urls = [header_url] if header_url else []
    path = parts.path.rstrip("/")
    if path:
        urls.append(f"{origin}{PROTECTED_RESOURCE_WELL_KNOWN}{path}")
    urls.append(f"{origin}{PROTECTED_RESOURCE_WELL_KNOWN}")
    return list(dict.fromkeys(urls))


def authorization_server_metadata_urls(issuer: str) -> list[str]:
    """RFC 8414 then OpenID Connect Discovery, in the order MCP lists (2025-11-25 and 2026-07-28):
    with a path, insertion for both then OIDC appending; without, the two root documents."""
    parts = urlsplit(issuer)
    origin = f"{parts.scheme}://{parts.netloc}"
    path = parts.path.rstrip("/")
    if not path:
        return [origin + OAUTH_WELL_KNOWN, origin + OPENID_WELL_KNOWN]
    return [origin + OAUTH_WELL_KNOWN + path, origin + OPENID_WELL_KNOWN + path, origin + path + OPENID_WELL_KNOWN]


def check_client_metadata_url(url: str) -> str:
    """A client ID metadata document URL (SEP-991): https with a path, no fragment; ``InsecureURL`` if not."""
    check_url(url, "client_metadata_url")
    if urlsplit(url).path in ("", "/"):
        raise InsecureURL(f"client_metadata_url: {url!r} needs a path (e.g. https://app.example/client.json)")
    return url
