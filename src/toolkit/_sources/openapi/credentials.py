"""What the configuration adds to every request an OpenAPI source sends: ``Bearer``, ``APIKey``, ``Basic``.

Credentials come from the server's configuration, never from the model: no argument of a
generated tool can carry them, and they are applied last, over any header, query parameter or
cookie a call's arguments made (the authorization spec's confused-deputy rule: a caller's own
token is never sent on unless ``forward_headers`` names it). Plain classes, without httpx, so
``import toolkit`` can export them; any ``httpx.Auth`` (``toolkit.client.OAuth``, say) is taken
too, handed to httpx as the request's ``auth``.
"""

from __future__ import annotations

import base64
import re
from typing import Final, Literal

_TOKEN_CHARS: Final = re.compile(r"^[\x21-\x7e]+$")
"""A header value's visible ASCII: a credential with a newline would split the request's headers."""


def _visible(value: str, what: str) -> str:
    if not isinstance(value, str) or not _TOKEN_CHARS.match(value):
        raise ValueError(f"{what} must be a non-empty string of visible ASCII characters (no spaces or newlines)")
    return value


class Credential:
    """Something configured that every request carries; ``apply`` adds it to the request's parts."""

    def apply(self, headers: dict[str, str], query: list[tuple[str, str]], cookies: dict[str, str]) -> None:
        """Add this credential to a request's ``headers`` (lower-case names), ``query`` and ``cookies``."""
        raise NotImplementedError(f"{type(self).__name__} must define apply()")


class Bearer(Credential):
    """``Authorization: Bearer <token>`` on every request.

    >>> Bearer(os.environ["PETSTORE_TOKEN"])
    """

    def __init__(self, token: str) -> None:
        self.token = _visible(token, "Bearer(token)")

    def apply(self, headers: dict[str, str], query: list[tuple[str, str]], cookies: dict[str, str]) -> None:
        headers["authorization"] = f"Bearer {self.token}"

    def __repr__(self) -> str:
        return "Bearer(token='***')"


class APIKey(Credential):
    """An API key sent as a header (default), a query parameter or a cookie named ``name``.

    >>> APIKey("X-API-Key", os.environ["PETSTORE_KEY"])
    >>> APIKey("api_key", key, location="query")
    """

    def __init__(self, name: str, value: str, location: Literal["header", "query", "cookie"] = "header") -> None:
        if location not in ("header", "query", "cookie"):
            raise ValueError(f'APIKey: location={location!r} is not "header", "query" or "cookie"')
        self.name = _visible(name, "APIKey(name)")
        self.value = _visible(value, "APIKey(value)") if location != "query" else _nonempty(value)
        self.location = location

    def apply(self, headers: dict[str, str], query: list[tuple[str, str]], cookies: dict[str, str]) -> None:
        if self.location == "header":
            headers[self.name.lower()] = self.value
        elif self.location == "query":
            query[:] = [(name, value) for name, value in query if name != self.name]
            query.append((self.name, self.value))
        else:
            cookies[self.name] = self.value

    def __repr__(self) -> str:
        return f"APIKey({self.name!r}, '***', location={self.location!r})"


class Basic(Credential):
    """HTTP Basic authentication (``Authorization: Basic ...``) with ``user`` and ``password``."""

    def __init__(self, user: str, password: str) -> None:
        if not isinstance(user, str) or ":" in user:
            raise ValueError("Basic(user): a string without ':' (RFC 7617: the user-id cannot hold a colon)")
        if not isinstance(password, str):
            raise ValueError("Basic(password) must be a string")
        self.user = user
        self.password = password
        pair = f"{user}:{password}".encode()
        self._value = "Basic " + base64.b64encode(pair).decode("ascii")

    def apply(self, headers: dict[str, str], query: list[tuple[str, str]], cookies: dict[str, str]) -> None:
        headers["authorization"] = self._value

    def __repr__(self) -> str:
        return f"Basic({self.user!r}, '***')"


def _nonempty(value: str) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError("APIKey(value) must be a non-empty string")
    return value
