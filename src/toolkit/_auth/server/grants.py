"""What the authorization server remembers between requests, in the server's ``StateStore``.

Every record is a JSON value in a scope of its own, named by a hash of the secret that finds it
(a code, a refresh token, a ``state``), never by the secret itself, so a store dump hands out no
usable credential. A record that must be used once (a code, a refresh token, an upstream
``state``) is taken with a conditional write that swaps it for a tombstone: of two replicas
racing for it, one wins; the tombstone lets a second use be seen (a replayed code or refresh
token revokes the whole grant: RFC 6749 §4.1.2, OAuth 2.1 §4.3.1 and the BCP's reuse detection).

- ``pending``: an authorization request between ``/authorize`` and the upstream's callback
  (the client's parameters, the consent's CSRF token, the upstream's ``state``, PKCE verifier
  and ``nonce``), found by its id or by the upstream ``state``.
- ``code``: toolkit's authorization code, for one client, one redirect URI, one PKCE challenge.
- ``grant``: one login of one user for one client (the family every refresh token belongs to),
  with the upstream tokens sealed; deleting it revokes every token of the family.
- ``refresh``: one refresh token, live or used.
- ``client``: a dynamically registered client (RFC 7591).

Upstream tokens are sealed with AES-256-GCM (``cryptography``), the grant's id as associated
data: a sealed value moved to another grant does not open.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import secrets
from dataclasses import dataclass
from typing import Any, Final

from ..._store.state import StateStore

PREFIX: Final = "toolkit.oauth"
NAME: Final = "v"
USED: Final = "used"


def new_secret() -> str:
    """256 bits of randomness, URL-safe: codes, refresh tokens, ids."""
    return secrets.token_urlsafe(32)


def fingerprint(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


class Sealer:
    """AES-256-GCM with a key ring: the first key seals, every key opens (rotation)."""

    def __init__(self, keys: list[bytes]) -> None:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM  # noqa: PLC0415 - the auth extra

        if not keys or any(len(key) != 32 for key in keys):
            raise ValueError("encryption_key: give 32 bytes (or their base64), e.g. base64 of os.urandom(32)")
        self.ciphers = [AESGCM(key) for key in keys]

    @classmethod
    def from_config(cls, keys: str | bytes | list[str | bytes] | None) -> Sealer:
        given = [] if keys is None else keys if isinstance(keys, list) else [keys]
        return cls([_key_bytes(key) for key in given] or [os.urandom(32)])

    def seal(self, value: dict[str, Any], bound_to: str) -> str:
        nonce = os.urandom(12)
        sealed = self.ciphers[0].encrypt(nonce, json.dumps(value).encode(), bound_to.encode())
        return base64.urlsafe_b64encode(nonce + sealed).decode("ascii")

    def open(self, text: str, bound_to: str) -> dict[str, Any] | None:
        from cryptography.exceptions import InvalidTag  # noqa: PLC0415

        raw = base64.urlsafe_b64decode(text.encode("ascii"))
        for cipher in self.ciphers:
            try:
                value: dict[str, Any] = json.loads(cipher.decrypt(raw[:12], raw[12:], bound_to.encode()))
                return value
            except InvalidTag:
                continue
        return None


def _key_bytes(key: str | bytes) -> bytes:
    if isinstance(key, bytes) and len(key) == 32:
        return key
    text = key.decode("ascii") if isinstance(key, bytes) else key
    try:
        decoded = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except ValueError:
        raise ValueError("encryption_key: not base64; give 32 random bytes or their base64") from None
    if len(decoded) != 32:
        raise ValueError(f"encryption_key: {len(decoded)} bytes once decoded; give exactly 32")
    return decoded


class Grants:
    """The records above, over a ``StateStore`` (memory, or Redis shared by every replica)."""

    def __init__(self, state: StateStore) -> None:
        self.state = state

    @staticmethod
    def _scope(kind: str, key: str) -> str:
        return f"{PREFIX}:{kind}:{key}"

    async def put(self, kind: str, key: str, record: dict[str, Any], *, ttl: float) -> None:
        await self.state.put(self._scope(kind, key), NAME, json.dumps(record), ttl=ttl)

    async def get(self, kind: str, key: str) -> dict[str, Any] | None:
        text = await self.state.get(self._scope(kind, key), NAME)
        if text is None:
            return None
        value: dict[str, Any] = json.loads(text)
        return None if value.get(USED) else value

    async def delete(self, kind: str, key: str) -> bool:
        return await self.state.delete(self._scope(kind, key), NAME)

    async def lease(self, key: str, *, ttl: float) -> str | None:
        """Hold ``key`` for at most ``ttl`` seconds, in every replica sharing the store: the holder's
        secret (for ``release``), or ``None`` while another request holds it."""
        holder = new_secret()
        taken = await self.state.put(self._scope("lease", key), NAME, json.dumps(holder), ttl=ttl, expect=None)
        return holder if taken else None

    async def release(self, key: str, holder: str) -> None:
        """Give ``key`` back if ``holder`` still holds it (past its ``ttl`` another may hold it now)."""
        # No compare-and-delete in a state store: the value, if still ours, expires at once instead.
        await self.state.put(self._scope("lease", key), NAME, "null", ttl=0.001, expect=json.dumps(holder))

    async def take(self, kind: str, key: str, *, tombstone_ttl: float) -> Taken:
        """The record, for the first caller only; it leaves a tombstone naming the record's grant."""
        scope = self._scope(kind, key)
        text = await self.state.get(scope, NAME)
        if text is None:
            return Taken(None, reused=False, grant=None)
        record: dict[str, Any] = json.loads(text)
        if record.get(USED):
            return Taken(None, reused=True, grant=record.get("grant"))
        tombstone = json.dumps({USED: True, "grant": record.get("grant")})
        if not await self.state.put(scope, NAME, tombstone, ttl=tombstone_ttl, expect=text):
            return Taken(None, reused=True, grant=record.get("grant"))  # another request took it meanwhile
        return Taken(record, reused=False, grant=record.get("grant"))


@dataclass(frozen=True, slots=True)
class Taken:
    """What ``Grants.take`` found: the record (first use), or that it was used already (``reused``)."""

    record: dict[str, Any] | None
    reused: bool
    grant: str | None
