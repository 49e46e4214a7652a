"""Exact behaviour of the protected-resource checks where mutation testing found the other tests lenient.

Each test pins a detail that a changed line in ``src/toolkit/_auth/resource.py`` altered without
any other fast test failing (``scripts/mutate src/toolkit/_auth/resource.py``;
docs/contributing.md): which ``Authorization`` values reach the verifier and as what, the status,
error code and ``error_description`` of every refusal and its ``WWW-Authenticate`` challenge,
the verifier's expiry leeway, where the metadata of a resource lives, and what the server log
says about a refused token. ``ResourceServer`` is called directly: the HTTP wing
(``_transports/http/auth.py``) only turns its ``Refusal`` into a status, a header and a body.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable

import pytest

from toolkit._auth.resource import (
    INVALID_TOKEN_TEXT,
    MAX_HEADER_BYTES,
    Refusal,
    ResourceServer,
    metadata_url,
)
from toolkit._auth.tokens import AccessToken, InvalidToken, TokenVerifier, VerifierUnavailable

NOW = 1_800_000_000.0
RESOURCE = "https://example.com/mcp"
METADATA = "https://example.com/.well-known/oauth-protected-resource/mcp"
MALFORMED_TEXT = "Malformed Authorization header: use 'Bearer <token>'"
UNAVAILABLE_TEXT = "Access tokens cannot be verified right now; retry later"


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Callable[[float], None]:
    """Set the time ``tokens`` reads: ``clock(seconds_after_NOW)``."""
    now = [NOW]
    monkeypatch.setattr(time, "time", lambda: now[0])  # the module tokens reads the clock from

    def set_to(offset: float) -> None:
        now[0] = NOW + offset

    return set_to


def access(expires_at: float | None = None, scopes: frozenset[str] = frozenset()) -> AccessToken:
    return AccessToken(subject="u", client_id="c", scopes=scopes, expires_at=expires_at)


class Known:
    """A verifier that accepts exactly the tokens it knows (refusing the rest with ``None``); no ``leeway``."""

    def __init__(self, known: dict[str, AccessToken]) -> None:
        self.known = known
        self.seen: list[str] = []

    async def verify(self, token: str) -> AccessToken | None:
        self.seen.append(token)
        return self.known.get(token)


class KnownWithLeeway(Known):
    leeway = 30.0


class Raising:
    def __init__(self, exc: Exception) -> None:
        self.exc = exc

    async def verify(self, token: str) -> AccessToken | None:
        raise self.exc


def server(verifier: TokenVerifier, required_scopes: Iterable[str] = ()) -> ResourceServer:
    return ResourceServer(
        verifier,
        authorization_servers=["https://as.example.com"],
        resource_url=RESOURCE,
        required_scopes=required_scopes,
    )


def invalid_token() -> Refusal:
    return Refusal(401, "invalid_token", description=INVALID_TOKEN_TEXT)


INVALID_TOKEN_CHALLENGE = (
    f'Bearer error="invalid_token", resource_metadata="{METADATA}", error_description="{INVALID_TOKEN_TEXT}"'
)


# --- where the metadata lives ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("resource", "expected"),
    [
        ("https://example.com/BOX", "https://example.com/.well-known/oauth-protected-resource/BOX"),
        ("https://example.com/mcpX/", "https://example.com/.well-known/oauth-protected-resource/mcpX"),
        ("https://example.com/", "https://example.com/.well-known/oauth-protected-resource"),
    ],
)
def test_metadata_url_drops_only_trailing_slashes(resource: str, expected: str) -> None:
    assert metadata_url(resource) == expected


# --- which Authorization values reach the verifier -------------------------------------------------


async def test_only_spaces_around_the_token_are_stripped() -> None:
    # RFC 6750 §2.1: credentials = "Bearer" 1*SP b64token. Spaces go; any other character stays
    # part of the token, and the verifier sees the token exactly.
    verifier = Known({"goodX": access(), "good": access()})
    rs = server(verifier)
    assert await rs.authenticate("Bearer   goodX  ") == access()
    assert verifier.seen == ["goodX"]


@pytest.mark.parametrize("header", ["Bearer \tgood", "Bearer good\t", "Bearer good\n"])
async def test_whitespace_other_than_space_makes_the_header_malformed(header: str) -> None:
    verifier = Known({"good": access()})
    rs = server(verifier)
    refusal = await rs.authenticate(header)
    assert refusal == Refusal(400, "invalid_request", description=MALFORMED_TEXT)
    assert verifier.seen == []


async def test_malformed_header_is_400_with_this_challenge() -> None:
    rs = server(Known({}))
    refusal = await rs.authenticate("Bearer two tokens")
    assert refusal == Refusal(400, "invalid_request", description=MALFORMED_TEXT)
    assert isinstance(refusal, Refusal)
    assert rs.challenge(refusal, METADATA) == (
        f'Bearer error="invalid_request", resource_metadata="{METADATA}", error_description="{MALFORMED_TEXT}"'
    )


async def test_a_header_of_exactly_the_maximum_length_is_verified() -> None:
    token = "a" * (MAX_HEADER_BYTES - len("Bearer "))
    verifier = Known({token: access()})
    rs = server(verifier)
    assert len("Bearer " + token) == MAX_HEADER_BYTES
    assert await rs.authenticate("Bearer " + token) == access()
    assert verifier.seen == [token]


async def test_a_header_one_byte_over_the_maximum_is_refused_unverified() -> None:
    token = "a" * (MAX_HEADER_BYTES - len("Bearer ") + 1)
    verifier = Known({token: access()})
    rs = server(verifier)
    refusal = await rs.authenticate("Bearer " + token)
    assert refusal == invalid_token()
    assert isinstance(refusal, Refusal)
    assert rs.challenge(refusal, METADATA) == INVALID_TOKEN_CHALLENGE
    assert verifier.seen == []


# --- refusals of tokens the verifier turned down ---------------------------------------------------


async def test_a_token_the_verifier_refuses_with_none_is_401_invalid_token() -> None:
    rs = server(Known({}))
    refusal = await rs.authenticate("Bearer unknown")
    assert refusal == invalid_token()
    assert isinstance(refusal, Refusal)
    assert rs.challenge(refusal, METADATA) == INVALID_TOKEN_CHALLENGE


async def test_an_expired_token_is_401_invalid_token(clock: Callable[[float], None]) -> None:
    clock(0.5)
    rs = server(Known({"old": access(expires_at=NOW)}))
    refusal = await rs.authenticate("Bearer old")
    assert refusal == invalid_token()
    assert isinstance(refusal, Refusal)
    assert rs.challenge(refusal, METADATA) == INVALID_TOKEN_CHALLENGE


async def test_a_verifier_that_cannot_check_now_gives_503_saying_so() -> None:
    rs = server(Raising(VerifierUnavailable("jwks down")))
    assert await rs.authenticate("Bearer anything") == Refusal(503, description=UNAVAILABLE_TEXT)


# --- the verifier's leeway ------------------------------------------------------------------------


@pytest.mark.parametrize(("offset", "accepted"), [(-10.0, True), (29.0, True), (30.5, False)])
async def test_expiry_allows_the_verifiers_leeway(
    clock: Callable[[float], None], offset: float, accepted: bool
) -> None:
    clock(offset)
    rs = server(KnownWithLeeway({"t": access(expires_at=NOW)}))
    assert await rs.authenticate("Bearer t") == (access(expires_at=NOW) if accepted else invalid_token())


@pytest.mark.parametrize(("offset", "accepted"), [(-10.0, True), (0.0, True), (0.5, False)])
async def test_expiry_has_no_leeway_when_the_verifier_has_none(
    clock: Callable[[float], None], offset: float, accepted: bool
) -> None:
    clock(offset)
    rs = server(Known({"t": access(expires_at=NOW)}))
    assert await rs.authenticate("Bearer t") == (access(expires_at=NOW) if accepted else invalid_token())


# --- step-up: the 403 ------------------------------------------------------------------------------


def test_insufficient_scope_names_every_scope_needed_in_the_description() -> None:
    rs = server(Known({}), required_scopes=["read"])
    refusal = rs.require(access(scopes=frozenset({"read"})), frozenset({"write", "admin"}))
    description = "This request needs the scope(s): admin read write"
    assert refusal == Refusal(403, "insufficient_scope", ("admin", "read", "write"), description)
    assert refusal is not None
    assert rs.challenge(refusal, METADATA) == (
        f'Bearer error="insufficient_scope", scope="admin read write", resource_metadata="{METADATA}", '
        f'error_description="{description}"'
    )


# --- what the server log says (the only place a refusal's reason goes) ------------------------------


def logged(caplog: pytest.LogCaptureFixture) -> list[tuple[int, str]]:
    return [(record.levelno, record.getMessage()) for record in caplog.records if record.name == "toolkit.auth"]


async def test_the_log_gives_the_verifiers_reason(caplog: pytest.LogCaptureFixture) -> None:
    rs = server(Raising(InvalidToken("bad signature")))
    with caplog.at_level(logging.INFO, logger="toolkit.auth"):
        assert await rs.authenticate("Bearer forged") == invalid_token()
    assert logged(caplog) == [(logging.INFO, "refused a bearer token: bad signature")]


async def test_the_log_says_why_tokens_cannot_be_checked(caplog: pytest.LogCaptureFixture) -> None:
    rs = server(Raising(VerifierUnavailable("jwks down")))
    with caplog.at_level(logging.INFO, logger="toolkit.auth"):
        await rs.authenticate("Bearer anything")
    assert logged(caplog) == [(logging.WARNING, "cannot verify bearer tokens: jwks down")]


async def test_the_log_tells_a_refused_token_from_an_expired_one(
    caplog: pytest.LogCaptureFixture, clock: Callable[[float], None]
) -> None:
    clock(0.5)
    rs = server(Known({"old": access(expires_at=NOW)}))
    with caplog.at_level(logging.INFO, logger="toolkit.auth"):
        await rs.authenticate("Bearer unknown")
        await rs.authenticate("Bearer old")
    assert logged(caplog) == [
        (logging.INFO, "refused a bearer token: the verifier refused it"),
        (logging.INFO, "refused a bearer token: expired"),
    ]
