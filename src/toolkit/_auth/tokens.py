"""Access tokens as toolkit sees them once verified, and the protocol every verifier follows."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


class InvalidToken(Exception):
    """The token is not acceptable: bad signature, expired, wrong issuer or audience, unknown...

    The client gets 401 ``invalid_token`` and nothing more: the reason given here goes to the
    server's log only (RFC 6750 §3.1 lets a server say no more than that the token is invalid).
    """


class VerifierUnavailable(Exception):
    """Tokens cannot be checked right now (the key set or the introspection endpoint is down).

    The client gets 503 with ``Retry-After``: its token may well be good.
    """


@dataclass(frozen=True, slots=True)
class AccessToken:
    """A verified access token: who it speaks for, what it grants, until when.

    ``ctx.access_token`` in tools, resources and prompts; ``None`` when the request carried none
    (stdio, or a server without ``auth=``).
    """

    subject: str | None
    """The ``sub`` claim: the user (or, for a client-credentials token, usually the client)."""
    client_id: str | None
    """The OAuth client the token was issued to (``client_id``, else ``azp``)."""
    scopes: frozenset[str]
    """The scopes the token grants here, with those they imply (``Server(implied_scopes=...)``)."""
    expires_at: float | None
    """Expiry as a Unix timestamp (``exp``), if the token has one."""
    claims: Mapping[str, Any] = field(default_factory=dict)
    """Every claim of a JWT, or every field of an introspection response."""

    @property
    def caller(self) -> str:
        """Who is calling, for binding state to them: the subject, else the client."""
        return f"sub:{self.subject}" if self.subject is not None else f"client:{self.client_id}"

    def expired(self, leeway: float = 0.0) -> bool:
        return self.expires_at is not None and self.expires_at + leeway < time.time()


@runtime_checkable
class TokenVerifier(Protocol):
    """Checks a bearer token: returns an ``AccessToken``, or refuses.

    Refuse with ``None`` or by raising ``InvalidToken``; raise ``VerifierUnavailable`` when the
    token cannot be checked at the moment. toolkit calls ``verify`` for every HTTP request of
    an authenticated server, so a verifier that does I/O should cache (the built-in ones do).
    """

    async def verify(self, token: str) -> AccessToken | None: ...


def parse_scopes(claims: Mapping[str, Any]) -> frozenset[str]:
    """The scopes of a JWT or an introspection response: ``scope`` (space-separated) or ``scp`` (list)."""
    scope = claims.get("scope")
    if isinstance(scope, str):
        return frozenset(scope.split())
    scp = claims.get("scp")
    if isinstance(scp, str):
        return frozenset(scp.split())
    if isinstance(scp, list):
        return frozenset(item for item in scp if isinstance(item, str))
    return frozenset()


def token_from_claims(claims: Mapping[str, Any]) -> AccessToken:
    """An ``AccessToken`` for verified claims (RFC 9068 names, with the common alternatives)."""
    subject = claims.get("sub")
    client_id = claims.get("client_id", claims.get("azp"))
    expires = claims.get("exp")
    return AccessToken(
        subject=subject if isinstance(subject, str) else None,
        client_id=client_id if isinstance(client_id, str) else None,
        scopes=parse_scopes(claims),
        expires_at=float(expires) if isinstance(expires, int | float) and not isinstance(expires, bool) else None,
        claims=dict(claims),
    )


class ScopeRules:
    """Which granted scopes imply which others (the spec: a broader scope implies narrower ones)."""

    def __init__(self, implied: Mapping[str, Iterable[str]] | None = None) -> None:
        self.implied = {broad: frozenset(narrow) for broad, narrow in (implied or {}).items()}

    def expand(self, scopes: frozenset[str]) -> frozenset[str]:
        """``scopes`` with everything they imply, transitively."""
        if not self.implied or not scopes & self.implied.keys():
            return scopes
        result = set(scopes)
        pending = list(scopes)
        while pending:
            for narrow in self.implied.get(pending.pop(), ()):
                if narrow not in result:
                    result.add(narrow)
                    pending.append(narrow)
        return frozenset(result)


class TokenCache:
    """Tokens already verified, by their SHA-256 (never the token itself), each until a deadline.

    Bounded: past ``limit`` entries the oldest goes. A verifier asks it first and remembers what
    it verified; ``clear`` forgets everything (a signing key went away).
    """

    def __init__(self, limit: int = 10_000) -> None:
        self.limit = limit
        self._entries: dict[bytes, tuple[AccessToken, float]] = {}

    @staticmethod
    def key(token: str) -> bytes:
        return hashlib.sha256(token.encode()).digest()

    def get(self, key: bytes) -> AccessToken | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        if time.time() < entry[1]:
            return entry[0]
        del self._entries[key]
        return None

    def put(self, key: bytes, access: AccessToken, seconds: float, expiry_leeway: float = 0.0) -> None:
        """Remember ``access`` for ``seconds``, never beyond its expiry (plus ``expiry_leeway``)."""
        until = time.time() + seconds
        if access.expires_at is not None:
            until = min(until, access.expires_at + expiry_leeway)
        if len(self._entries) >= self.limit:
            del self._entries[next(iter(self._entries))]
        self._entries[key] = (access, until)

    def clear(self) -> None:
        self._entries.clear()
