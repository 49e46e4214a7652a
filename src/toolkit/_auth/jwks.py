"""A JSON Web Key Set fetched over HTTP: cached, refreshed without making requests wait, rotation-aware.

- A key the set has is used at once. Once the set is older than ``cache_seconds`` it is
  refreshed in the background while requests go on with the keys in hand.
- A token naming an unknown ``kid`` (the authorization server rotated its keys) triggers a
  refetch, at most once per ``refetch_interval``; concurrent requests share that one fetch.
- When a fetch fails (down, slow, garbage) the keys in hand stay in use; with none in hand,
  requests are refused as "cannot verify now" (503), and not more than once per interval does
  a request wait for another attempt. Nothing piles up behind a slow endpoint: at most one
  fetch is in flight, and it gives up after ``timeout`` seconds.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any, Final

from .tls import shared_tls
from .tokens import InvalidToken, VerifierUnavailable

logger = logging.getLogger("toolkit.auth")

MAX_JWKS_BYTES: Final = 512 * 1024

KEY_TYPES: Final = {
    "RS256": "RSA",
    "RS384": "RSA",
    "RS512": "RSA",
    "PS256": "RSA",
    "PS384": "RSA",
    "PS512": "RSA",
    "ES256": "EC",
    "ES384": "EC",
    "ES512": "EC",
    "EdDSA": "OKP",
}
"""The asymmetric algorithms toolkit verifies, and the key type each needs."""
CURVES: Final = {"ES256": "secp256r1", "ES384": "secp384r1", "ES512": "secp521r1"}
Keys = dict[str | None, list[tuple[Any, frozenset[str]]]]
"""``kid`` → the keys with that id, each with the algorithms it may verify."""


class KeySet:
    """The keys at ``uri``, as cryptography key objects by ``kid``."""

    def __init__(self, uri: str, *, cache_seconds: float, refetch_interval: float, timeout: float) -> None:
        self.uri = uri
        self.cache_seconds = cache_seconds
        self.refetch_interval = refetch_interval
        self.timeout = timeout
        self.keys: Keys | None = None
        """``kid`` → [(public key, the algorithms it may verify)]; ``None`` until a fetch succeeds."""
        self.version = 0
        """Bumped whenever the set of key ids changes (a verifier drops what it verified before)."""
        self._fetched_at = 0.0
        self._attempted_at: float | None = None
        self._fetch: asyncio.Task[None] | None = None
        self._problem = "not fetched yet"

    async def key(self, kid: str | None, algorithm: str) -> Any:
        """The public key to check a token signed with ``algorithm`` by key ``kid``."""
        now = time.monotonic()
        if self.keys is not None:
            found = _pick(self.keys, kid, algorithm)
            if found is not None:
                if now - self._fetched_at > self.cache_seconds and self._may_attempt(now):
                    self._start_fetch()  # refresh in the background; this request goes on
                return found
        if not self._may_attempt(now):
            if self.keys is None:
                raise VerifierUnavailable(f"the key set at {self.uri} is unavailable ({self._problem})")
            raise InvalidToken(f"no key {kid!r} for {algorithm} in the key set (refetched recently)")
        await self._refetch()
        if self.keys is None:
            raise VerifierUnavailable(f"the key set at {self.uri} is unavailable ({self._problem})")
        found = _pick(self.keys, kid, algorithm)
        if found is None:
            raise InvalidToken(f"no key {kid!r} for {algorithm} in the key set")
        return found

    def refresh_if_stale(self) -> None:
        """Start a background refresh when the keys in hand are older than ``cache_seconds``.

        Called for every token, verified before or not: traffic of remembered tokens alone must
        still notice a key withdrawn from the set (an emergency revocation).
        """
        if self.keys is not None:
            now = time.monotonic()
            if now - self._fetched_at > self.cache_seconds and self._may_attempt(now):
                self._start_fetch()

    def _may_attempt(self, now: float) -> bool:
        fetching = self._fetch is not None and not self._fetch.done()
        return fetching or self._attempted_at is None or now - self._attempted_at >= self.refetch_interval

    def _start_fetch(self) -> asyncio.Task[None]:
        task = self._fetch
        if task is None or task.done() or task.get_loop() is not asyncio.get_running_loop():
            self._attempted_at = time.monotonic()
            task = self._fetch = asyncio.get_running_loop().create_task(self._load())
        return task

    async def _refetch(self) -> None:
        # Shielded: a request that gives up (client gone) must not cancel the shared fetch.
        await asyncio.shield(self._start_fetch())

    async def _load(self) -> None:
        try:
            keys = await self._download()
        except Exception as exc:  # any failure leaves the keys in hand in use
            self._problem = _describe(exc)
            logger.warning("could not refresh the key set at %s: %s", self.uri, self._problem)
            return
        if self.keys is None or set(keys) != set(self.keys):
            self.version += 1
        self.keys = keys
        self._fetched_at = time.monotonic()
        self._problem = ""

    async def _download(self) -> Keys:
        import httpx  # noqa: PLC0415 - the auth extra, imported when first used

        tls = shared_tls(trust_env=True)
        async with httpx.AsyncClient(timeout=self.timeout, follow_redirects=False, verify=tls) as client:
            response = await client.get(self.uri, headers={"accept": "application/json"})
        if response.status_code != 200:
            raise ValueError(f"HTTP {response.status_code}")
        if len(response.content) > MAX_JWKS_BYTES:
            raise ValueError(f"more than {MAX_JWKS_BYTES} bytes")
        return parse_jwks(response.content)


def parse_jwks(content: bytes) -> Keys:
    """The usable signing keys of a JWKS document (others are skipped); ValueError if there are none."""
    from jwt import PyJWK  # noqa: PLC0415 - the auth extra
    from jwt.exceptions import PyJWTError  # noqa: PLC0415 (PyJWKError and InvalidKeyError both)

    document = json.loads(content)
    entries = document.get("keys") if isinstance(document, dict) else None
    if not isinstance(entries, list):
        raise ValueError('not a JWKS document (no "keys" array)')
    keys: Keys = {}
    for entry in entries:
        if not isinstance(entry, dict) or entry.get("use", "sig") != "sig" or entry.get("kty") == "oct":
            continue
        if "d" in entry:  # a private key published by mistake: refuse to use it
            logger.warning("the key set publishes a private key (kid %r); skipped", entry.get("kid"))
            continue
        try:
            jwk = PyJWK(entry)
        except (PyJWTError, ValueError, TypeError) as exc:  # one unusable key must not sink the set
            logger.info("skipping an unusable key (kid %r): %s", entry.get("kid"), exc)
            continue
        fits = fitting_algorithms(jwk.key)
        alg = entry.get("alg")
        if isinstance(alg, str):  # the key names its algorithm: that one only
            fits &= {alg}
        keys.setdefault(entry.get("kid"), []).append((jwk.key, fits))
    if not keys:
        raise ValueError("no usable signing keys")
    return keys


def _pick(keys: Keys, kid: str | None, algorithm: str) -> Any:
    """The key for ``kid`` fit for ``algorithm``; without a ``kid``, the only key fit for it."""
    candidates = keys.get(kid, []) if kid is not None else [entry for entries in keys.values() for entry in entries]
    fit = [key for key, fits in candidates if algorithm in fits]
    return fit[0] if len(fit) == 1 or (kid is not None and fit) else None


def fitting_algorithms(key: Any) -> frozenset[str]:
    """The algorithms of ``KEY_TYPES`` that ``key`` (a cryptography public key) can verify."""
    from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, rsa  # noqa: PLC0415

    if isinstance(key, rsa.RSAPublicKey):
        kind = "RSA"
    elif isinstance(key, ed25519.Ed25519PublicKey | ed448.Ed448PublicKey):
        kind = "OKP"
    elif isinstance(key, ec.EllipticCurvePublicKey):
        return frozenset(alg for alg, curve in CURVES.items() if key.curve.name == curve)
    else:
        return frozenset()
    return frozenset(alg for alg, needed in KEY_TYPES.items() if needed == kind)


def _describe(exc: Exception) -> str:
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if text != type(exc).__name__ else text
