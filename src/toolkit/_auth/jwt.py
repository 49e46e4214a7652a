"""``JWTVerifier``: JWT access tokens (RFC 9068) checked against the authorization server's keys.

Built on PyJWT with ``cryptography`` (``pip install 'toolkit-mcp[auth]'``). What is checked, in order:
the token is three canonical base64url segments; the header's ``alg`` is on the allow-list
(asymmetric only: never ``none``, never an HMAC algorithm, so a public key can never be used as a
shared secret); the key (by ``kid``, from the JWKS or the one ``public_key``) is of the kind that
algorithm needs; the signature (PyJWT's algorithm object, with ``cryptography``); ``exp``
(required), ``nbf`` and ``iat`` with ``leeway`` seconds of clock skew; ``iss``; ``aud`` contains
the resource (RFC 8707); ``sub`` and ``jti`` are strings when present. The same verdicts as
``jwt.decode`` (tests/test_jwt_verify.py), in about half its time: PyJWT's per-character check
of the segments is a regular expression here, and a key is prepared once, not per token.

A token that passed is remembered (``TokenCache``: by its SHA-256, never the token itself) until
it expires, for at most ``cache_seconds``, and forgotten when the key set loses a key: the next
request with it costs a dictionary lookup instead of a signature check.
"""

from __future__ import annotations

import binascii
import json
import logging
import re
import string
import time
from collections.abc import Callable, Sequence
from typing import Any, Final

from .jwks import KEY_TYPES, KeySet, fitting_algorithms
from .tokens import AccessToken, InvalidToken, TokenCache, token_from_claims

logger = logging.getLogger("toolkit.auth")

DEFAULT_ALGORITHMS: Final = ("RS256", "PS256", "ES256", "ES384", "EdDSA")
MAX_TOKEN_BYTES: Final = 16 * 1024
TOKEN: Final = re.compile(r"([A-Za-z0-9_-]+={0,2})\.([A-Za-z0-9_-]+={0,2})\.([A-Za-z0-9_-]+={0,2})")
"""The compact serialization: three base64url segments (trailing ``=`` padding allowed, as PyJWT allows it)."""
_STANDARD: Final = bytes.maketrans(b"-_", b"+/")
_SIXTETS: Final = {
    char: value for value, char in enumerate(string.ascii_uppercase + string.ascii_lowercase + string.digits + "-_")
}
_UNUSED_BITS: Final = {2: 0b1111, 3: 0b11}
"""Per length mod 4 of an unpadded segment: the bits of its last character that encode nothing."""
MAX_VERIFIERS: Final = 64
"""Prepared (algorithm, key) pairs kept; the map starts over past it."""
MAX_HEADERS: Final = 64
"""Distinct JOSE headers remembered (a few per issuer and key); the map starts over past it."""


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
        header_segment, payload_segment, signature_segment = _segments(token)
        header = _HEADERS.get(header_segment)
        if header is None:
            header = _json_object(_decode_segment(header_segment, "header"), "header")
            if len(_HEADERS) >= MAX_HEADERS:
                _HEADERS.clear()
            _HEADERS[header_segment] = header
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
        signature = _decode_segment(signature_segment, "signature")
        signing_input = token[: len(header_segment) + 1 + len(payload_segment)].encode("ascii")
        if not _verifier(algorithm, key)(signing_input, signature):
            raise InvalidToken("InvalidSignatureError: Signature verification failed")
        claims = _json_object(_decode_segment(payload_segment, "payload"), "payload")
        _check_claims(claims, self.issuer, self.audience, self.leeway)
        return token_from_claims(claims)


def _segments(token: str) -> tuple[str, str, str]:
    """The compact serialization's three segments, each base64url, checked with one C-speed match
    instead of PyJWT's per-character loop."""
    match = TOKEN.fullmatch(token)
    if match is None:
        raise InvalidToken("malformed token: not three base64url segments")
    return match[1], match[2], match[3]


def _decode_segment(segment: str, name: str) -> bytes:
    """A segment's bytes; only the canonical encoding of them (PyJWT's rule, GHSA-hxm8-2xgr-2p9m).

    ``segment`` matched ``TOKEN``: base64url characters, then at most two ``=``. Canonical: padded
    only to a multiple of four, never one character too many (``len % 4 == 1`` encodes no byte),
    and the last character's bits that encode nothing are zero (RFC 4648 §3.5), which is what
    decoding and encoding again to the same text checks, without the second conversion.
    """
    stripped = segment.rstrip("=")
    padding = len(segment) - len(stripped)
    tail = len(stripped) % 4
    if (padding and len(segment) % 4) or tail == 1:
        raise InvalidToken(f"malformed token: invalid {name} padding")
    if tail and _SIXTETS[stripped[-1]] & _UNUSED_BITS[tail]:
        raise InvalidToken(f"malformed token: invalid {name} padding")
    try:
        return binascii.a2b_base64(stripped.encode("ascii").translate(_STANDARD) + b"=" * (-tail % 4), strict_mode=True)
    except (ValueError, binascii.Error):
        raise InvalidToken(f"malformed token: the {name} is not base64url") from None


def _json_object(decoded: bytes, name: str) -> dict[str, Any]:
    try:
        value = json.loads(decoded)
    except ValueError:
        raise InvalidToken(f"malformed token: the {name} is not JSON") from None
    if not isinstance(value, dict):
        raise InvalidToken(f"malformed token: the {name} is not an object")
    return value


_HEADERS: dict[str, dict[str, Any]] = {}
"""Header segments already read: an issuer's tokens share one (its ``alg``, ``kid`` and ``typ``), so
it is decoded once, not per token. Only read here, never changed; checked again for every token."""
_VERIFIERS: dict[tuple[str, int], tuple[Any, Callable[[bytes, bytes], bool]]] = {}


def _verifier(algorithm: str, key: Any) -> Callable[[bytes, bytes], bool]:
    """``(signing input, signature) -> valid?`` for ``key`` with PyJWT's implementation of ``algorithm``.

    PyJWT's algorithm objects do the JWS cryptography (the RSA padding, the EC signature's
    r || s to DER, the Ed25519 check) with ``cryptography``; made and checked once per key
    (``prepare_key`` refuses a key of the wrong kind) instead of once per token. The key object
    is kept beside its entry, so an ``id`` is never reused for another key while the entry lives.
    """
    entry = _VERIFIERS.get((algorithm, id(key)))
    if entry is not None and entry[0] is key:
        return entry[1]
    import jwt  # noqa: PLC0415 - the auth extra

    try:
        implementation = jwt.get_algorithm_by_name(algorithm)
        prepared = implementation.prepare_key(key)
    except (jwt.PyJWTError, NotImplementedError) as exc:
        raise InvalidToken(f"cannot verify {algorithm} with this key: {exc}") from None
    check_length = getattr(implementation, "check_key_length", None)  # not in every PyJWT 2.x
    weak = check_length(prepared) if callable(check_length) else None
    if weak:  # jwt.decode warns on every token; once per key says the same
        logger.warning("a %s key in use is weak: %s", algorithm, weak)

    def verify(signing_input: bytes, signature: bytes) -> bool:
        return bool(implementation.verify(signing_input, prepared, signature))

    if len(_VERIFIERS) >= MAX_VERIFIERS:  # keys come and go with rotation: never an unbounded map
        _VERIFIERS.clear()
    _VERIFIERS[(algorithm, id(key))] = (key, verify)
    return verify


def _check_claims(claims: dict[str, Any], issuer: str | list[str], audience: str | list[str], leeway: float) -> None:
    """RFC 7519 §4.1 as PyJWT's ``decode`` checks it with ``require=["exp", "iss", "aud"]``:
    ``exp`` (past it, less ``leeway``: expired), ``nbf`` and ``iat`` (later than now, plus
    ``leeway``: not yet valid), ``iss`` is the issuer (or one of them), ``aud`` names the resource,
    ``sub`` and ``jti`` are strings when present."""
    for required in ("exp", "iss", "aud"):
        if claims.get(required) is None:
            raise InvalidToken(f'MissingRequiredClaimError: Token is missing the "{required}" claim')
    now = time.time()
    for name in ("exp", "nbf", "iat"):
        value = claims.get(name)
        if name != "exp" and value is None:
            continue
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise InvalidToken(f"DecodeError: the {name} claim must be a number (a NumericDate)")
        if name == "exp" and value <= now - leeway:
            raise InvalidToken("ExpiredSignatureError: Signature has expired")
        if name != "exp" and value > now + leeway:
            raise InvalidToken(f"ImmatureSignatureError: The token is not yet valid ({name})")
    iss = claims["iss"]
    if not isinstance(iss, str) or (iss != issuer if isinstance(issuer, str) else iss not in issuer):
        raise InvalidToken("InvalidIssuerError: Invalid issuer")
    aud = claims["aud"]
    named = [aud] if isinstance(aud, str) else aud
    if not isinstance(named, list) or not all(isinstance(item, str) for item in named):
        raise InvalidToken("InvalidAudienceError: Invalid claim format in token")
    expected = [audience] if isinstance(audience, str) else audience
    if not any(item in named for item in expected):
        raise InvalidToken("InvalidAudienceError: Audience doesn't match")
    for name in ("sub", "jti"):
        if name in claims and not isinstance(claims[name], str):
            raise InvalidToken(f"InvalidClaimError: the {name} claim must be a string")


def _load_public_key(pem: str | bytes) -> Any:
    from cryptography.hazmat.primitives.serialization import load_pem_public_key  # noqa: PLC0415

    try:
        return load_pem_public_key(pem.encode() if isinstance(pem, str) else pem)
    except ValueError as exc:
        raise ValueError(f"JWTVerifier(public_key=...): not a PEM public key ({exc})") from None
