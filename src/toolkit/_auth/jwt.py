"""``JWTVerifier``: JWT access tokens (RFC 9068) checked against the authorization server's keys.

Built on PyJWT with ``cryptography`` (``pip install 'toolkit-mcp[auth]'``). What is checked, in order:
the header's ``alg`` is on the allow-list (asymmetric only: never ``none``, never an HMAC
algorithm, so a public key can never be used as a shared secret); the key (by ``kid``, from the
JWKS or the one ``public_key``) is of the kind that algorithm needs; the signature; ``exp`` (required)
and ``nbf`` with ``leeway`` seconds of clock skew; ``iss``; ``aud`` contains the resource (RFC 8707).

A token that passed is remembered (``TokenCache``: by its SHA-256, never the token itself) until
it expires, for at most ``cache_seconds``, and forgotten when the key set loses a key: the next
request with it costs a dictionary lookup instead of a signature check.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import re
from collections.abc import Sequence
from typing import Any, Final

from .jwks import KEY_TYPES, KeySet, fitting_algorithms
from .tokens import AccessToken, InvalidToken, TokenCache, token_from_claims

logger = logging.getLogger("toolkit.auth")

DEFAULT_ALGORITHMS: Final = ("RS256", "PS256", "ES256", "ES384", "EdDSA")
MAX_TOKEN_BYTES: Final = 16 * 1024
BASE64URL: Final = re.compile(r"[A-Za-z0-9_-]+")


def require_extra(module: str, feature: str) -> None:
    """Fail with the install command when an optional dependency is missing."""
    try:
        __import__(module)
    except ImportError:
        raise ImportError(f"{feature} needs the {module!r} package: pip install 'toolkit-mcp[auth]'") from None


class JWTVerifier:
    """Verifies JWT access tokens with the keys at ``jwks_uri`` (or one ``public_key``).

    Args:
        jwks_uri: The authorization server's JWKS URL (its metadata's ``jwks_uri``).
        public_key: Instead of ``jwks_uri``: one PEM public key.
        issuer: The expected ``iss`` (one, or several accepted).
        audience: The expected ``aud``: this server's resource URL (RFC 8707), or several.
        algorithms: Accepted ``alg`` values; asymmetric algorithms only.
        leeway: Seconds of clock skew allowed on ``exp`` and ``nbf``.
        jwks_cache_seconds: How long a fetched key set is used before a background refresh.
        jwks_refetch_interval: Least time between two fetches of the key set (an unknown
            ``kid`` triggers one; a flood of forged ``kid``s does not hammer the server).
        jwks_timeout: Seconds a key-set fetch may take.
        cache_seconds: How long a verified token is remembered (never beyond its expiry).
    """

    def __init__(
        self,
        *,
        jwks_uri: str | None = None,
        public_key: str | bytes | None = None,
        issuer: str | Sequence[str],
        audience: str | Sequence[str],
        algorithms: Sequence[str] = DEFAULT_ALGORITHMS,
        leeway: float = 30.0,
        jwks_cache_seconds: float = 3600.0,
        jwks_refetch_interval: float = 30.0,
        jwks_timeout: float = 5.0,
        cache_seconds: float = 300.0,
    ) -> None:
        require_extra("jwt", "JWTVerifier")
        if (jwks_uri is None) == (public_key is None):
            raise ValueError("JWTVerifier takes exactly one of jwks_uri= (the usual) or public_key=")
        unsupported = [alg for alg in algorithms if alg not in KEY_TYPES]
        if unsupported or not algorithms:
            raise ValueError(
                f"JWTVerifier(algorithms=...): {unsupported or 'an empty list'} not allowed; use asymmetric "
                f"algorithms from {sorted(KEY_TYPES)} (never 'none' or HS*: a public key is not a shared secret)"
            )
        if not issuer:
            raise ValueError("JWTVerifier needs issuer=: the authorization server's issuer identifier")
        if not audience:
            raise ValueError("JWTVerifier needs audience=: this server's resource URL, as tokens name it in 'aud'")
        self.issuer = issuer if isinstance(issuer, str) else list(issuer)
        self.audience = audience if isinstance(audience, str) else list(audience)
        self.algorithms = tuple(algorithms)
        self.leeway = leeway
        self.cache_seconds = cache_seconds
        self.key_set = (
            KeySet(
                jwks_uri,
                cache_seconds=jwks_cache_seconds,
                refetch_interval=jwks_refetch_interval,
                timeout=jwks_timeout,
            )
            if jwks_uri is not None
            else None
        )
        self._public_key: tuple[Any, frozenset[str]] = (None, frozenset())
        if public_key is not None:
            loaded = _load_public_key(public_key)
            self._public_key = (loaded, fitting_algorithms(loaded))
        self._verified = TokenCache()
        self._verified_version = 0

    def __repr__(self) -> str:
        source = self.key_set.uri if self.key_set is not None else "public_key"
        return f"JWTVerifier({source!r}, issuer={self.issuer!r}, audience={self.audience!r})"

    async def verify(self, token: str) -> AccessToken:
        if len(token) > MAX_TOKEN_BYTES:
            raise InvalidToken(f"token longer than {MAX_TOKEN_BYTES} bytes")
        key = TokenCache.key(token)
        if self.key_set is not None:
            self.key_set.refresh_if_stale()  # also for remembered tokens: a withdrawn key must show
        self._follow_key_set()
        known = self._verified.get(key)
        if known is not None:
            return known
        access = await self._check(token)
        self._verified.put(key, access, self.cache_seconds, self.leeway)
        return access

    def _follow_key_set(self) -> None:
        """A key went away from the set: forget what was verified, it must be checked again."""
        if self.key_set is not None and self.key_set.version != self._verified_version:
            self._verified.clear()
            self._verified_version = self.key_set.version

    async def _check(self, token: str) -> AccessToken:
        import jwt  # noqa: PLC0415 - the auth extra

        header = _header(token)
        algorithm = header.get("alg")
        if not isinstance(algorithm, str) or algorithm not in self.algorithms:
            raise InvalidToken(f"algorithm {algorithm!r} is not allowed (allowed: {', '.join(self.algorithms)})")
        kid = header.get("kid")
        if kid is not None and not isinstance(kid, str):
            raise InvalidToken("malformed token: kid is not a string")
        if self.key_set is not None:
            key = await self.key_set.key(kid, algorithm)
            self._follow_key_set()  # the fetch this may have caused can retire keys
        else:
            key, fits = self._public_key
            if algorithm not in fits:
                raise InvalidToken(f"the configured public key cannot verify {algorithm}")
        try:
            claims = jwt.decode(
                token,
                key,
                algorithms=[algorithm],
                audience=self.audience,
                issuer=self.issuer,
                leeway=self.leeway,
                options={"require": ["exp", "iss", "aud"]},
            )
        except jwt.PyJWTError as exc:
            raise InvalidToken(f"{type(exc).__name__}: {exc}") from None
        return token_from_claims(claims)


def _header(token: str) -> dict[str, Any]:
    """The JOSE header, read to choose the key (PyJWT then checks the whole token, header included).

    Decoded with the C base64 decoder: ``jwt.get_unverified_header`` would parse and check the
    whole token a first time, a third of the cost of verifying it.
    """
    segment, dot, rest = token.partition(".")
    if not dot or rest.count(".") != 1 or not BASE64URL.fullmatch(segment):
        raise InvalidToken("malformed token: not three base64url segments")
    try:
        header = json.loads(base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4)))
    except (ValueError, binascii.Error):
        raise InvalidToken("malformed token: the header is not base64url JSON") from None
    if not isinstance(header, dict):
        raise InvalidToken("malformed token: the header is not an object")
    return header


def _load_public_key(pem: str | bytes) -> Any:
    from cryptography.hazmat.primitives.serialization import load_pem_public_key  # noqa: PLC0415

    try:
        return load_pem_public_key(pem.encode() if isinstance(pem, str) else pem)
    except ValueError as exc:
        raise ValueError(f"JWTVerifier(public_key=...): not a PEM public key ({exc})") from None
