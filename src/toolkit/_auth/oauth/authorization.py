"""The authorization request and response: PKCE S256 (RFC 7636), ``state``, ``iss`` (RFC 9207)."""

from __future__ import annotations

import base64
import hashlib
import secrets
from collections.abc import Mapping
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from .errors import AuthorizationFailed


def new_code_verifier() -> str:
    """A PKCE ``code_verifier`` (RFC 7636 §4.1): 43 unreserved characters, 256 bits of randomness."""
    return secrets.token_urlsafe(32)


def s256_challenge(verifier: str) -> str:
    """The ``S256`` ``code_challenge`` of ``verifier`` (RFC 7636 §4.2)."""
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def new_state() -> str:
    """An unguessable ``state`` (RFC 6749 §10.12)."""
    return secrets.token_urlsafe(24)


def with_query(url: str, params: Mapping[str, str]) -> str:
    """``url`` with ``params`` added to its query (RFC 6749 §3.1 keeps the endpoint's own query)."""
    parts = urlsplit(url)
    query = [*parse_qsl(parts.query, keep_blank_values=True), *params.items()]
    return urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(query), ""))


def same_endpoint(url: str, redirect_uri: str) -> bool:
    """Whether ``url`` lands on ``redirect_uri`` (scheme, host, port and path; the query aside)."""
    a, b = urlsplit(url), urlsplit(redirect_uri)
    return (a.scheme.lower(), a.netloc.lower(), a.path or "/") == (b.scheme.lower(), b.netloc.lower(), b.path or "/")


def authorization_code(callback_url: str, *, redirect_uri: str, state: str, issuer: str, iss_supported: bool) -> str:
    """The ``code`` of an authorization response, once every check passed; ``AuthorizationFailed`` if not.

    In order: the response came to ``redirect_uri``; ``state`` is the one sent (RFC 6749 §10.12);
    ``iss`` per MCP's RFC 9207 table (compared as a string, before any ``error`` is believed);
    then the ``error`` or the ``code``.
    """
    if not same_endpoint(callback_url, redirect_uri):
        raise AuthorizationFailed("the authorization response did not come to the redirect URI")
    params: dict[str, str] = {}
    for name, value in parse_qsl(urlsplit(callback_url).query, keep_blank_values=True):
        if name in params:  # RFC 6749 §3.1: parameters must not repeat
            raise AuthorizationFailed(f"the authorization response repeats {name!r}")
        params[name] = value
    if not secrets.compare_digest(params.get("state", "").encode(), state.encode()):
        raise AuthorizationFailed("the authorization response's state is not the one sent; discarded")
    iss = params.get("iss")
    if iss is not None and iss != issuer:
        raise AuthorizationFailed(f"the authorization response comes from {iss!r}, not {issuer!r} (RFC 9207)")
    if iss is None and iss_supported:
        raise AuthorizationFailed(f"the authorization response has no iss although {issuer} promises it (RFC 9207)")
    if "error" in params:
        description = params.get("error_description")
        raise AuthorizationFailed(
            f"the authorization server refused: {params['error']}" + (f" ({description})" if description else ""),
            error=params["error"],
        )
    code = params.get("code")
    if not code:
        raise AuthorizationFailed("the authorization response carries no code")
    return code
