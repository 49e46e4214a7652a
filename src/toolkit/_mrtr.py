"""Multi round-trip input (2026-07-28): the signed ``requestState`` and the pause signal.

A modern server keeps nothing between rounds. When a tool asks for input it has not got,
the call ends with ``resultType: "input_required"``, the questions, and a ``requestState``
holding the answers gathered so far. The client asks the user, then repeats the call with
``inputResponses`` and the state; the tool runs again from the top and this time its
questions are answered. The state passes through the client, so it is signed (HMAC-SHA256)
and bound to the request it belongs to (method, name, arguments digest) and to an expiry;
anything else is refused (spec: basic/patterns/mrtr, "Server Requirements").
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
import time
from typing import Any, Final

import pydantic_core

from ._errors import INVALID_PARAMS, McpError

STATE_SECRET_ENV: Final = "TOOLKIT_STATE_SECRET"
STATE_FORMAT: Final = 1


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def digest(value: Any) -> str:
    """A short, stable digest of a JSON value (the call's arguments)."""
    canonical = pydantic_core.to_json(value, round_trip=False)
    return hashlib.sha256(canonical).hexdigest()[:32]


class StateSigner:
    """Signs and verifies ``requestState`` values.

    The key comes from ``secret``, else the ``TOOLKIT_STATE_SECRET`` environment variable,
    else is random for this process. Replicas behind a load balancer need the same key.
    """

    def __init__(self, secret: str | bytes | None = None, *, ttl_seconds: float = 600.0) -> None:
        if secret is None:
            secret = os.environ.get(STATE_SECRET_ENV) or secrets.token_bytes(32)
        self._key = secret.encode() if isinstance(secret, str) else secret
        self.ttl_seconds = ttl_seconds

    def _mac(self, payload: bytes) -> bytes:
        return hmac.new(self._key, payload, hashlib.sha256).digest()

    def sign(self, *, method: str, name: str, arguments: Any, answers: dict[str, Any]) -> str:
        payload = pydantic_core.to_json(
            {
                "v": STATE_FORMAT,
                "m": method,
                "n": name,
                "d": digest(arguments),
                "e": int(time.time() + self.ttl_seconds),
                "a": answers,
            }
        )
        return f"{_b64(payload)}.{_b64(self._mac(payload))}"

    def verify(self, state: Any, *, method: str, name: str, arguments: Any) -> dict[str, Any]:
        """The answers a state carries; a JSON-RPC -32602 error if it is not ours or not for this call."""
        if not isinstance(state, str) or state.count(".") != 1:
            raise _invalid("requestState is malformed")
        body, mac = state.split(".")
        try:
            payload = _unb64(body)
            signature = _unb64(mac)
        except (ValueError, TypeError):
            raise _invalid("requestState is malformed") from None
        if not hmac.compare_digest(signature, self._mac(payload)):
            raise _invalid("requestState failed verification (tampered, or signed by another key)")
        try:
            data = pydantic_core.from_json(payload)
        except ValueError:
            raise _invalid("requestState is malformed") from None
        if not isinstance(data, dict) or data.get("v") != STATE_FORMAT:
            raise _invalid("requestState has an unknown format")
        if data.get("m") != method or data.get("n") != name or data.get("d") != digest(arguments):
            raise _invalid("requestState belongs to a different request; repeat the original request unchanged")
        if not isinstance(data.get("e"), int) or data["e"] < time.time():
            raise _invalid("requestState has expired; start the request again without it")
        answers = data.get("a")
        return answers if isinstance(answers, dict) else {}


def _invalid(message: str) -> McpError:
    return McpError(INVALID_PARAMS, f"Invalid params: {message}")
