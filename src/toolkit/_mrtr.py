"""Multi round-trip input (2026-07-28): the sealed ``requestState``.

A modern server keeps nothing between rounds. When a tool asks for input it has not got,
the call ends with ``resultType: "input_required"``, the questions, and a ``requestState``
holding the answers gathered so far. The client asks the user, then repeats the call with
``inputResponses`` and the state; the tool runs again from the top and this time its
questions are answered. The state passes through the client, so it is sealed: encrypted and
authenticated with AES-256-GCM (the client can neither read nor alter the answers), bound to
the request it belongs to (method, name, arguments digest), to the caller (the access token's
subject, when the server has ``auth=``) and to an expiry; anything else is refused (spec:
basic/patterns/mrtr, "Server Requirements").

Keys form a ring: the first seals, every one opens. Rotate by putting the new secret first
and keeping the old one until the states it sealed have expired (``state_ttl_seconds``).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import math
import os
import secrets
import time
from collections.abc import Sequence
from typing import Any, Final

import pydantic_core

from ._errors import INVALID_PARAMS, McpError

STATE_SECRET_ENV: Final = "TOOLKIT_STATE_SECRET"
"""One secret, or several separated by spaces: the first seals, all open (rotation)."""
STATE_FORMAT: Final = "2"
KEY_INFO: Final = b"toolkit requestState v2"

Secret = str | bytes


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def digest(value: Any) -> str:
    """A short, stable digest of a JSON value (the call's arguments)."""
    canonical = pydantic_core.to_json(value, round_trip=False)
    return hashlib.sha256(canonical).hexdigest()[:32]


def _ring(secret: Secret | Sequence[Secret] | None) -> list[bytes]:
    if secret is None:
        configured = os.environ.get(STATE_SECRET_ENV, "").split()
        secret = configured or [secrets.token_bytes(32)]
    secrets_in_order = [secret] if isinstance(secret, str | bytes) else list(secret)
    if not secrets_in_order or any(not item for item in secrets_in_order):
        raise ValueError("state_secret: give a non-empty secret, or a list of them (the first seals new states)")
    return [item.encode() if isinstance(item, str) else bytes(item) for item in secrets_in_order]


class StateSealer:
    """Seals and opens ``requestState`` values with a ring of keys.

    The keys come from ``secret`` (one, or a list: the first seals, all open), else the
    ``TOOLKIT_STATE_SECRET`` environment variable (space-separated), else one random key for
    this process. Replicas behind a load balancer need the same secrets.
    """

    def __init__(self, secret: Secret | Sequence[Secret] | None = None, *, ttl_seconds: float = 600.0) -> None:
        self.generated = secret is None and not os.environ.get(STATE_SECRET_ENV, "").split()
        """True when no secret was configured and this process made one up (replicas would disagree)."""
        self._secrets = _ring(secret)
        self.ttl_seconds = ttl_seconds
        self._keys: dict[str, Any] | None = None  # key id -> AESGCM, made on first use
        self._sealing_id = ""

    def adopt(self, secret: bytes) -> None:
        """Use ``secret``, which the other replicas share, instead of the one made up at start."""
        self._secrets = [secret]
        self._keys = None
        self.generated = False

    def _ciphers(self) -> dict[str, Any]:
        # cryptography is imported when a state is first sealed or opened: most servers never do.
        if self._keys is None:
            from cryptography.hazmat.primitives import hashes  # noqa: PLC0415
            from cryptography.hazmat.primitives.ciphers.aead import AESGCM  # noqa: PLC0415
            from cryptography.hazmat.primitives.kdf.hkdf import HKDF  # noqa: PLC0415

            keys: dict[str, Any] = {}
            for index, secret in enumerate(self._secrets):
                key = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=KEY_INFO).derive(secret)
                key_id = _b64(hmac.new(key, b"key id", hashlib.sha256).digest()[:6])
                keys.setdefault(key_id, AESGCM(key))
                if index == 0:
                    self._sealing_id = key_id
            self._keys = keys
        return self._keys

    def seal(
        self, *, method: str, name: str, arguments: Any, answers: dict[str, Any], caller: str | None = None
    ) -> str:
        """A sealed state for this request, this caller and these answers."""
        ciphers = self._ciphers()
        payload = pydantic_core.to_json(
            {
                "m": method,
                "n": name,
                "d": digest(arguments),
                "c": caller,
                "e": math.ceil(time.time() + self.ttl_seconds),  # lives at least ttl_seconds
                "a": answers,
            }
        )
        nonce = secrets.token_bytes(12)
        sealed = ciphers[self._sealing_id].encrypt(nonce, payload, self._aad(self._sealing_id))
        return f"{STATE_FORMAT}.{self._sealing_id}.{_b64(nonce + sealed)}"

    @staticmethod
    def _aad(key_id: str) -> bytes:
        return f"toolkit requestState {STATE_FORMAT}.{key_id}".encode()

    def open(self, state: Any, *, method: str, name: str, arguments: Any, caller: str | None = None) -> dict[str, Any]:
        """The answers a state carries; a JSON-RPC -32602 error if it is not ours or not for this call."""
        if not isinstance(state, str) or state.count(".") != 2:
            raise _invalid("requestState is malformed")
        version, key_id, body = state.split(".")
        if version != STATE_FORMAT:
            raise _invalid("requestState has an unknown format; start the request again without it")
        cipher = self._ciphers().get(key_id)
        if cipher is None:
            raise _invalid("requestState was sealed with a key this server does not have; start the request again")
        from cryptography.exceptions import InvalidTag  # noqa: PLC0415 - loaded by _ciphers already

        try:
            sealed = _unb64(body)
            payload = cipher.decrypt(sealed[:12], sealed[12:], self._aad(key_id))
            data = pydantic_core.from_json(payload)
        except (ValueError, TypeError, InvalidTag):
            raise _invalid("requestState failed verification (tampered, or sealed by another key)") from None
        if not isinstance(data, dict):
            raise _invalid("requestState is malformed")
        if data.get("m") != method or data.get("n") != name or data.get("d") != digest(arguments):
            raise _invalid("requestState belongs to a different request; repeat the original request unchanged")
        if data.get("c") != caller:
            raise _invalid("requestState belongs to another caller; start the request again without it")
        if not isinstance(data.get("e"), int) or data["e"] < time.time():
            raise _invalid("requestState has expired; start the request again without it")
        answers = data.get("a")
        return answers if isinstance(answers, dict) else {}


def _invalid(message: str) -> McpError:
    return McpError(INVALID_PARAMS, f"Invalid params: {message}")
