"""What the authorization server answers, transport-free: the HTTP wing turns each into a response."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Redirect:
    """A 303 to ``location``; ``cookies``: (name, value, path, max_age) to set on the way."""

    location: str
    cookies: tuple[tuple[str, str, str, int], ...] = ()


@dataclass(frozen=True, slots=True)
class ErrorPage:
    """An error shown to the user in the browser, never sent to an unchecked redirect URI."""

    status: int
    title: str
    message: str


@dataclass(frozen=True, slots=True)
class ConsentRequest:
    """The consent page: which client asks for what, and the hidden fields of its form."""

    pending: str
    csrf: str
    client_id: str
    client_name: str | None
    redirect_uri: str
    scopes: tuple[str, ...]
    resource: str
    server_name: str
    upstream: str
    metadata_document: bool


@dataclass(frozen=True, slots=True)
class JsonAnswer:
    """A JSON response (the token, revocation and registration endpoints; RFC 6749 §5)."""

    status: int
    body: Mapping[str, Any] | None
    headers: Mapping[str, str] = field(default_factory=dict)


def oauth_error(status: int, error: str, description: str, **headers: str) -> JsonAnswer:
    """RFC 6749 §5.2: ``error`` and a description saying what went wrong and what to do."""
    return JsonAnswer(status, {"error": error, "error_description": description}, headers)


Answer = Redirect | ErrorPage | ConsentRequest | JsonAnswer
