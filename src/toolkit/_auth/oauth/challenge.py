"""What a resource server asks for: the ``Bearer`` challenge of a 401 or 403 (RFC 6750 §3), and scopes."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

_TOKEN = r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"
_PARAM = re.compile(rf'\s*({_TOKEN})\s*=\s*(?:"((?:[^"\\]|\\.)*)"|({_TOKEN}))\s*(?:,|$)')
_SCHEME = re.compile(rf"\s*,?\s*({_TOKEN})(?:\s+|$)")


@dataclass(frozen=True, slots=True)
class Challenge:
    """The ``Bearer`` challenge of a 401 or 403 (RFC 6750 §3): what the client needs to know."""

    error: str | None = None
    scopes: tuple[str, ...] | None = None
    """None when the challenge names no scope; the scopes in the server's order otherwise."""
    resource_metadata: str | None = None
    error_description: str | None = None


def parse_challenge(values: Iterable[str]) -> Challenge:
    """The ``Bearer`` challenge among the ``WWW-Authenticate`` header values (RFC 7235 §4.1:
    several challenges, quoted strings with escapes, parameters in any order); empty if none."""
    for value in values:
        params = _bearer_params(value)
        if params is not None:
            scope = params.get("scope")
            return Challenge(
                error=params.get("error"),
                scopes=None if scope is None else parse_scope(scope),
                resource_metadata=params.get("resource_metadata"),
                error_description=params.get("error_description"),
            )
    return Challenge()


def _bearer_params(value: str) -> dict[str, str] | None:
    position, bearer = 0, None
    while position < len(value):
        scheme = _SCHEME.match(value, position)
        if scheme is None:
            return bearer
        if bearer is not None:  # the next challenge starts: the Bearer one is complete
            return bearer
        position = scheme.end()
        params: dict[str, str] = {}
        while (param := _PARAM.match(value, position)) is not None:
            quoted, plain = param.group(2), param.group(3)
            text = plain if quoted is None else re.sub(r"\\(.)", r"\1", quoted)
            params.setdefault(param.group(1).lower(), text)
            position = param.end()
        if scheme.group(1).lower() == "bearer":
            bearer = params
    return bearer


# --- scopes ---------------------------------------------------------------------------------------


def parse_scope(scope: str | None) -> tuple[str, ...]:
    """A space-delimited ``scope`` (RFC 6749 §3.3) as its scopes, in order, each once."""
    return tuple(dict.fromkeys((scope or "").split()))


def scope_union(*scope_sets: Iterable[str] | None) -> tuple[str, ...]:
    """The scopes of every set, in order of first appearance (the step-up union, MCP "Step-Up")."""
    return tuple(dict.fromkeys(scope for scopes in scope_sets if scopes for scope in scopes))
