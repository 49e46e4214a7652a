"""toolkit's signing keys: the current one signs access tokens, the previous ones stay published.

A key is given as PEM (RSA or EC P-256; every replica must be given the same one) or generated
at start (one process only: its tokens die with it). Rotation: make the new key current and pass
the old one in ``previous``; tokens it signed still verify until they expire, and the JWKS keeps
publishing it. Each key's ``kid`` is its RFC 7638 thumbprint, so replicas agree on it.

``IssuedKeys`` is the key set toolkit's own ``JWTVerifier`` reads: the same keys, in process,
with no HTTP fetch of its own JWKS.
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

from ..jwks import KeySet, fitting_algorithms
from ..tokens import InvalidToken


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _int_bytes(value: int, length: int | None = None) -> bytes:
    return value.to_bytes(length or max(1, (value.bit_length() + 7) // 8), "big")


class SigningKey:
    """One private key, its algorithm, its public JWK and ``kid``."""

    def __init__(self, private_key: Any) -> None:
        from cryptography.hazmat.primitives.asymmetric import ec, rsa  # noqa: PLC0415 - the auth extra

        self.private_key = private_key
        public = private_key.public_key()
        self.public_key = public
        if isinstance(private_key, rsa.RSAPrivateKey):
            if private_key.key_size < 2048:
                raise ValueError(f"signing key: RSA keys need at least 2048 bits, this one has {private_key.key_size}")
            numbers = public.public_numbers()
            self.algorithm = "RS256"
            members = {"e": _b64(_int_bytes(numbers.e)), "kty": "RSA", "n": _b64(_int_bytes(numbers.n))}
        elif isinstance(private_key, ec.EllipticCurvePrivateKey) and private_key.curve.name == "secp256r1":
            numbers = public.public_numbers()
            self.algorithm = "ES256"
            members = {
                "crv": "P-256",
                "kty": "EC",
                "x": _b64(_int_bytes(numbers.x, 32)),
                "y": _b64(_int_bytes(numbers.y, 32)),
            }
        else:
            raise ValueError("signing key: give an RSA key (2048 bits or more, RS256) or an EC P-256 key (ES256)")
        # RFC 7638: the thumbprint of the required members, in lexicographic order, no spaces.
        canonical = json.dumps(members, sort_keys=True, separators=(",", ":")).encode()
        self.kid = _b64(hashlib.sha256(canonical).digest())
        self.jwk: dict[str, str] = {**members, "kid": self.kid, "use": "sig", "alg": self.algorithm}

    @classmethod
    def load(cls, pem: str | bytes, password: bytes | None = None) -> SigningKey:
        from cryptography.hazmat.primitives.serialization import load_pem_private_key  # noqa: PLC0415

        try:
            key = load_pem_private_key(pem.encode() if isinstance(pem, str) else pem, password=password)
        except (ValueError, TypeError) as exc:
            raise ValueError(f"signing key: not a PEM private key ({exc})") from None
        return cls(key)

    @classmethod
    def generate(cls) -> SigningKey:
        """A new RSA 2048 key (RS256: the cheapest signature to verify, and every client library knows it)."""
        from cryptography.hazmat.primitives.asymmetric import rsa  # noqa: PLC0415

        return cls(rsa.generate_private_key(public_exponent=65537, key_size=2048))


class SigningKeys:
    """The current key and the previous ones: signing, the JWKS document, and lookup by ``kid``."""

    def __init__(self, current: SigningKey, previous: Sequence[SigningKey] = ()) -> None:
        self.current = current
        self.all = [current, *(key for key in previous if key.kid != current.kid)]
        self.by_kid = {key.kid: key for key in self.all}

    @classmethod
    def from_config(cls, key: str | bytes | None, previous: Sequence[str | bytes] = ()) -> SigningKeys:
        current = SigningKey.load(key) if key is not None else SigningKey.generate()
        return cls(current, [SigningKey.load(pem) for pem in previous])

    def jwks(self) -> dict[str, Any]:
        """The public JWKS document (RFC 7517): every key, the current one first."""
        return {"keys": [dict(key.jwk) for key in self.all]}

    def sign(self, claims: Mapping[str, Any], *, typ: str = "at+jwt") -> str:
        """A compact JWS of ``claims`` with the current key (RFC 9068 ``typ`` for access tokens)."""
        import jwt  # noqa: PLC0415 - the auth extra

        key = self.current
        return jwt.encode(dict(claims), key.private_key, algorithm=key.algorithm, headers={"kid": key.kid, "typ": typ})


class IssuedKeys(KeySet):
    """The key set of toolkit's own tokens, read in process: no fetch, never stale, never down."""

    def __init__(self, keys: SigningKeys, uri: str) -> None:
        super().__init__(uri, cache_seconds=float("inf"), refetch_interval=float("inf"), timeout=0.0)
        self.signing_keys = keys
        self.keys = {key.kid: [(key.public_key, fitting_algorithms(key.public_key))] for key in keys.all}
        self._fetched_at = time.monotonic()

    async def key(self, kid: str | None, algorithm: str) -> Any:
        key = self.signing_keys.by_kid.get(kid) if kid is not None else None
        if key is None or key.algorithm != algorithm:
            raise InvalidToken(f"no key {kid!r} for {algorithm} among toolkit's signing keys")
        return key.public_key

    def refresh_if_stale(self) -> None:
        return None
