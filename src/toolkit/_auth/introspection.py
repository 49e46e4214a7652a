"""``IntrospectionVerifier``: opaque tokens checked by asking the authorization server (RFC 7662).

Each token unknown to the cache costs one POST to the introspection endpoint, authenticated
as this resource server (HTTP Basic). An active answer is remembered (by the token's SHA-256)
for ``cache_seconds`` at most, never beyond its ``exp``; an inactive one is not remembered.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any, Final

from .jwt import MAX_TOKEN_BYTES, require_extra
from .tokens import AccessToken, InvalidToken, TokenCache, VerifierUnavailable, token_from_claims

logger = logging.getLogger("toolkit.auth")

MAX_RESPONSE_BYTES: Final = 256 * 1024


class IntrospectionVerifier:
    """Verifies tokens with the authorization server's introspection endpoint.

    Args:
        endpoint: The ``introspection_endpoint`` URL.
        client_id, client_secret: This resource server's credentials at the authorization server.
        audience: When set, the response's ``aud`` must contain it (this server's resource URL).
        issuer: When set, the response's ``iss`` (if present) must equal it.
        cache_seconds: How long an active token is remembered.
        timeout: Seconds an introspection call may take.
    """

    def __init__(
        self,
        endpoint: str,
        *,
        client_id: str,
        client_secret: str,
        audience: str | Sequence[str] | None = None,
        issuer: str | None = None,
        cache_seconds: float = 60.0,
        timeout: float = 5.0,
    ) -> None:
        require_extra("httpx", "IntrospectionVerifier")
        self.endpoint = endpoint
        self._auth = (client_id, client_secret)
        self.audience = {audience} if isinstance(audience, str) else set(audience or ())
        self.issuer = issuer
        self.cache_seconds = cache_seconds
        self.timeout = timeout
        self._active = TokenCache()
        self._clients: dict[asyncio.AbstractEventLoop, Any] = {}

    def __repr__(self) -> str:
        return f"IntrospectionVerifier({self.endpoint!r})"

    async def verify(self, token: str) -> AccessToken:
        if len(token) > MAX_TOKEN_BYTES:
            raise InvalidToken(f"token longer than {MAX_TOKEN_BYTES} bytes")
        key = TokenCache.key(token)
        known = self._active.get(key)
        if known is not None:
            return known
        access = self._judge(await self._introspect(token))
        self._active.put(key, access, self.cache_seconds)
        return access

    async def _introspect(self, token: str) -> dict[str, Any]:
        import httpx  # noqa: PLC0415 - the auth extra

        try:
            response = await self._client().post(
                self.endpoint,
                data={"token": token, "token_type_hint": "access_token"},
                auth=self._auth,
                headers={"accept": "application/json"},
            )
        except httpx.HTTPError as exc:
            raise VerifierUnavailable(f"introspection at {self.endpoint} failed: {type(exc).__name__}") from None
        if response.status_code == 400 and _oauth_error(response) in ("unsupported_token_type", "invalid_request"):
            # The authorization server cannot use this token (a JWT sent to an opaque-token
            # introspection, say): the token is what is wrong, not the service.
            raise InvalidToken(f"introspection refused the token: {_oauth_error(response)}")
        if response.status_code != 200 or len(response.content) > MAX_RESPONSE_BYTES:
            raise VerifierUnavailable(f"introspection at {self.endpoint} answered HTTP {response.status_code}")
        try:
            answer = response.json()
        except ValueError:
            raise VerifierUnavailable(f"introspection at {self.endpoint} answered with something not JSON") from None
        if not isinstance(answer, dict):
            raise VerifierUnavailable(f"introspection at {self.endpoint} answered with something not an object")
        return answer

    def _judge(self, answer: dict[str, Any]) -> AccessToken:
        if answer.get("active") is not True:
            raise InvalidToken("introspection: the token is not active")
        access = token_from_claims(answer)
        if access.expired():
            raise InvalidToken("introspection: the token has expired")
        if self.issuer is not None and answer.get("iss", self.issuer) != self.issuer:
            raise InvalidToken(f"introspection: issuer {answer.get('iss')!r} is not {self.issuer!r}")
        if self.audience:
            aud = answer.get("aud")
            audiences = {aud} if isinstance(aud, str) else set(aud) if isinstance(aud, list) else set()
            if not audiences & self.audience:
                raise InvalidToken(f"introspection: audience {aud!r} is not this resource")
        return access

    async def aclose(self) -> None:
        """Close the HTTP client this event loop uses (the server's shutdown calls it)."""
        client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.aclose()

    def _client(self) -> Any:
        """One HTTP client per event loop (a client's connections belong to the loop that made them)."""
        import httpx  # noqa: PLC0415

        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            for other in [other for other in self._clients if other.is_closed()]:
                del self._clients[other]
            client = self._clients[loop] = httpx.AsyncClient(timeout=self.timeout, follow_redirects=False)
        return client


def _oauth_error(response: Any) -> str | None:
    try:
        answer = response.json()
    except ValueError:
        return None
    error = answer.get("error") if isinstance(answer, dict) else None
    return error if isinstance(error, str) else None
