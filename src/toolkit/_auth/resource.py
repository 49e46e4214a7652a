"""toolkit as an OAuth 2.1 resource server: who may call, and what to tell those who may not.

Transport-free: the HTTP wing hands over the ``Authorization`` header and the resource URL, and
turns a ``Refusal`` into a status and a ``WWW-Authenticate`` challenge exactly as the MCP
authorization spec (2025-11-25 and 2026-07-28) and RFC 6750 §3 describe:

- no bearer token: 401 with ``resource_metadata`` (and the server-wide ``scope``, if any);
- a bearer token that cannot be used (malformed, expired, foreign, forged): 401
  ``invalid_token``; a malformed ``Authorization`` header: 400 ``invalid_request``;
- a good token without the scopes the request needs: 403 ``insufficient_scope`` naming
  every scope the request needs (server-wide and the tool's), for a step-up authorization;
- a token that cannot be checked right now (key set or introspection down): 503.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlsplit

from .tokens import AccessToken, InvalidToken, ScopeRules, TokenVerifier, VerifierUnavailable

logger = logging.getLogger("toolkit.auth")

WELL_KNOWN: Final = "/.well-known/oauth-protected-resource"
"""RFC 9728 §3: the metadata of ``https://host/path`` lives at ``https://host`` + this + ``/path``."""
B64TOKEN: Final = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
"""RFC 6750 §2.1: the syntax of a bearer token."""
MAX_HEADER_BYTES: Final = 16 * 1024 + 7
INVALID_TOKEN_TEXT: Final = "The access token is invalid or expired"


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a request may not proceed, as an HTTP status and a Bearer challenge."""

    status: int
    error: str | None = None
    """RFC 6750 error code: ``invalid_request``, ``invalid_token``, ``insufficient_scope``."""
    scopes: tuple[str, ...] = ()
    """The challenge's ``scope``: what the request needs."""
    description: str | None = None


class ResourceServer:
    """Verifies bearer tokens, checks scopes, and describes the protected resource (RFC 9728).

    ``scopes_in_use`` gives the scopes the server's tools, resources and prompts require; with
    ``required_scopes`` they are the default ``scopes_supported``.
    """

    def __init__(
        self,
        verifier: TokenVerifier,
        *,
        authorization_servers: Sequence[str],
        resource_url: str | None = None,
        required_scopes: Iterable[str] = (),
        scopes_supported: Iterable[str] | None = None,
        implied_scopes: Mapping[str, Iterable[str]] | None = None,
        resource_name: str | None = None,
        resource_documentation: str | None = None,
        scopes_in_use: Callable[[], Iterable[str]] = tuple,
    ) -> None:
        if not callable(getattr(verifier, "verify", None)):
            raise TypeError(
                f"auth={verifier!r} is not a token verifier: it needs an async verify(token) method "
                "(use toolkit.auth.JWTVerifier or IntrospectionVerifier, or write one)"
            )
        if isinstance(authorization_servers, str) or not authorization_servers:
            raise ValueError(
                "auth= needs authorization_servers=[...]: the issuer URL(s) clients get tokens from "
                "(the protected resource metadata must list at least one)"
            )
        for url in authorization_servers:
            check_url(url, "authorization_servers")
        if resource_url is not None:
            check_url(resource_url, "resource_url")
        self.verifier = verifier
        self.authorization_servers = list(authorization_servers)
        self.resource_url = resource_url.rstrip("/") if resource_url is not None else None
        self.required_scopes = frozenset(required_scopes)
        self.scopes_supported = list(scopes_supported) if scopes_supported is not None else None
        self.rules = ScopeRules(implied_scopes)
        self.resource_name = resource_name
        self.resource_documentation = resource_documentation
        self.scopes_in_use = scopes_in_use

    # --- per request ----------------------------------------------------------------------------

    async def authenticate(self, authorization: str | None) -> AccessToken | Refusal:
        """The verified token of an ``Authorization`` header value, or why the request is refused."""
        if authorization is None:
            return self._unauthenticated()
        scheme, _, credentials = authorization.partition(" ")
        if scheme.lower() != "bearer":
            return self._unauthenticated()  # another scheme carries no bearer token: challenge for one
        token = credentials.strip(" ")
        if len(authorization) > MAX_HEADER_BYTES:
            return Refusal(401, "invalid_token", description=INVALID_TOKEN_TEXT)
        if not B64TOKEN.fullmatch(token):
            return Refusal(400, "invalid_request", description="Malformed Authorization header: use 'Bearer <token>'")
        try:
            access = await self.verifier.verify(token)
        except InvalidToken as exc:
            logger.info("refused a bearer token: %s", exc)
            return Refusal(401, "invalid_token", description=INVALID_TOKEN_TEXT)
        except VerifierUnavailable as exc:
            logger.warning("cannot verify bearer tokens: %s", exc)
            return Refusal(503, description="Access tokens cannot be verified right now; retry later")
        if access is None or access.expired(leeway=getattr(self.verifier, "leeway", 0.0)):
            logger.info("refused a bearer token: %s", "the verifier refused it" if access is None else "expired")
            return Refusal(401, "invalid_token", description=INVALID_TOKEN_TEXT)
        scopes = self.rules.expand(access.scopes)
        if scopes is not access.scopes:
            access = AccessToken(access.subject, access.client_id, scopes, access.expires_at, access.claims)
        return access

    def _unauthenticated(self) -> Refusal:
        # RFC 6750 §3.1: without credentials, no error code and no other error information.
        return Refusal(401, scopes=tuple(sorted(self.required_scopes)))

    async def close(self) -> None:
        """Release what the verifier holds (its HTTP client), if it has anything to close."""
        closing = getattr(self.verifier, "aclose", None)
        if callable(closing):
            await closing()

    def require(self, access: AccessToken, needed: frozenset[str] = frozenset()) -> Refusal | None:
        """``None`` when ``access`` grants the server-wide scopes and ``needed``; else the 403 to send."""
        wanted = self.required_scopes | needed if needed else self.required_scopes
        if wanted <= access.scopes:
            return None
        scopes = tuple(sorted(wanted))
        return Refusal(403, "insufficient_scope", scopes, f"This request needs the scope(s): {' '.join(scopes)}")

    # --- what clients are told ------------------------------------------------------------------

    def metadata(self, resource: str) -> dict[str, Any]:
        """The protected resource metadata document (RFC 9728 §2) for ``resource``."""
        document: dict[str, Any] = {"resource": resource, "authorization_servers": self.authorization_servers}
        scopes = self.supported_scopes()
        if scopes:  # absent rather than empty: clients then ask for no particular scope
            document["scopes_supported"] = scopes
        document["bearer_methods_supported"] = ["header"]
        if self.resource_name:
            document["resource_name"] = self.resource_name
        if self.resource_documentation:
            document["resource_documentation"] = self.resource_documentation
        return document

    def supported_scopes(self) -> list[str]:
        if self.scopes_supported is not None:
            return self.scopes_supported
        return sorted(self.required_scopes | frozenset(self.scopes_in_use()))

    def challenge(self, refusal: Refusal, metadata_url: str) -> str:
        """The ``WWW-Authenticate`` value for a refusal (RFC 6750 §3, RFC 9728 §5.1)."""
        parts = []
        if refusal.error is not None:
            parts.append(f'error="{refusal.error}"')
        if refusal.scopes:
            parts.append(f'scope="{" ".join(refusal.scopes)}"')
        parts.append(f'resource_metadata="{metadata_url}"')
        if refusal.description is not None:
            parts.append(f'error_description="{refusal.description}"')
        return "Bearer " + ", ".join(parts)


def metadata_url(resource: str) -> str:
    """Where the metadata of ``resource`` lives: RFC 9728 §3.1's path insertion."""
    parts = urlsplit(resource)
    path = parts.path.rstrip("/")
    return f"{parts.scheme}://{parts.netloc}{WELL_KNOWN}{path}"


def check_url(url: str, option: str) -> None:
    """An absolute http(s) URL without a fragment (RFC 8707 §2), or ValueError naming ``option``."""
    parts = urlsplit(url) if isinstance(url, str) else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.netloc or parts.fragment:
        raise ValueError(f"{option}: {url!r} is not an absolute http(s) URL without a fragment")
