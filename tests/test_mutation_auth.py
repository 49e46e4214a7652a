"""Exact behaviour of the token checks where mutation testing found the other tests lenient.

Each test pins a detail that a changed line in ``src/toolkit/_auth`` altered without any other
fast test failing (``scripts/mutate src/toolkit/_auth/tokens.py``; docs/contributing.md): when a
token counts as expired, how long a verified token is remembered, which claims name the client,
and what the protected resource metadata says.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from toolkit._auth import tokens
from toolkit._auth.resource import ResourceServer, metadata_url
from toolkit._auth.tokens import AccessToken, TokenCache, parse_scopes, token_from_claims
from toolkit.auth import JWTVerifier

NOW = 1_800_000_000.0


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Callable[[float], None]:
    """Set the time ``tokens`` reads: ``clock(seconds_after_NOW)``."""
    now = [NOW]
    monkeypatch.setattr(tokens.time, "time", lambda: now[0])

    def set_to(offset: float) -> None:
        now[0] = NOW + offset

    return set_to


def token(expires_at: float | None) -> AccessToken:
    return AccessToken(subject="u", client_id="c", scopes=frozenset(), expires_at=expires_at)


@pytest.mark.parametrize(
    ("offset", "leeway", "expired"),
    [(0.5, 0.0, True), (0.5, 1.0, False), (29.0, 30.0, False), (30.0, 30.0, False), (30.5, 30.0, True)],
)
def test_a_token_expires_after_exp_plus_the_leeway(
    clock: Callable[[float], None], offset: float, leeway: float, expired: bool
) -> None:
    clock(offset)
    assert token(NOW).expired(leeway) is expired


def test_expired_has_no_leeway_by_default(clock: Callable[[float], None]) -> None:
    clock(0.5)
    assert token(NOW).expired() is True
    assert token(None).expired() is False


def test_a_cached_token_is_forgotten_at_its_expiry_plus_the_leeway(clock: Callable[[float], None]) -> None:
    cache = TokenCache()
    key = TokenCache.key("t")
    access = token(NOW + 10)
    cache.put(key, access, seconds=60, expiry_leeway=5)
    clock(14.5)
    assert cache.get(key) is access
    clock(15.5)
    assert cache.get(key) is None


def test_a_cached_token_without_leeway_is_forgotten_at_its_expiry(clock: Callable[[float], None]) -> None:
    cache = TokenCache()
    key = TokenCache.key("t")
    cache.put(key, token(NOW + 10), seconds=60)
    clock(10.5)
    assert cache.get(key) is None


def test_a_token_without_expiry_is_cached_for_the_seconds_given(clock: Callable[[float], None]) -> None:
    cache = TokenCache()
    key = TokenCache.key("t")
    access = token(None)
    cache.put(key, access, seconds=60)
    clock(59)
    assert cache.get(key) is access
    clock(61)
    assert cache.get(key) is None


def test_the_cache_keeps_at_most_its_limit_dropping_the_oldest(clock: Callable[[float], None]) -> None:
    cache = TokenCache(limit=2)
    first, second, third = (TokenCache.key(name) for name in ("first", "second", "third"))
    for key in (first, second, third):
        cache.put(key, token(None), seconds=60)
    assert cache.get(first) is None
    assert cache.get(second) is not None
    assert cache.get(third) is not None


def test_claims_name_the_client_by_client_id_else_azp() -> None:
    assert token_from_claims({"azp": "web"}).client_id == "web"
    assert token_from_claims({"client_id": "cli", "azp": "web"}).client_id == "cli"
    assert token_from_claims({}).client_id is None


@pytest.mark.parametrize("claims", [{"sub": 7, "client_id": ["x"], "exp": "soon"}, {"exp": True}])
def test_claims_of_the_wrong_type_are_ignored(claims: dict[str, object]) -> None:
    access = token_from_claims(claims)
    assert (access.subject, access.client_id, access.expires_at) == (None, None, None)


def test_a_numeric_exp_is_the_expiry() -> None:
    assert token_from_claims({"exp": 1_800_000_000}).expires_at == 1_800_000_000.0


def test_scp_may_be_a_space_separated_string() -> None:
    assert parse_scopes({"scp": "read write"}) == frozenset({"read", "write"})


# --- the protected resource metadata (RFC 9728) ----------------------------------------------------


class Nobody:
    async def verify(self, token: str) -> AccessToken | None:
        return None


def test_the_metadata_names_the_documentation() -> None:
    server = ResourceServer(
        Nobody(),
        authorization_servers=["https://auth.example.com"],
        resource_documentation="https://example.com/docs",
    )
    document = server.metadata("https://example.com/mcp")
    assert document["resource_documentation"] == "https://example.com/docs"


@pytest.mark.parametrize(
    ("resource", "url"),
    [
        ("https://example.com/mcp", "https://example.com/.well-known/oauth-protected-resource/mcp"),
        ("https://example.com/mcp/", "https://example.com/.well-known/oauth-protected-resource/mcp"),
        ("https://example.com/", "https://example.com/.well-known/oauth-protected-resource"),
    ],
)
def test_the_metadata_url_inserts_the_well_known_path(resource: str, url: str) -> None:
    assert metadata_url(resource) == url


# --- a verifier with one public key ----------------------------------------------------------------


@pytest.mark.parametrize("as_text", [True, False])
async def test_a_pem_public_key_verifies_tokens_it_signed(as_text: bool) -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    verifier = JWTVerifier(
        public_key=pem.decode() if as_text else pem, issuer="https://auth.example.com", audience="https://mcp"
    )
    claims = {"iss": "https://auth.example.com", "aud": "https://mcp", "sub": "u", "exp": int(time.time()) + 60}
    access = await verifier.verify(jwt.encode(claims, key, algorithm="ES256"))
    assert access is not None and access.subject == "u"
    assert repr(verifier) == "JWTVerifier('public_key', issuer='https://auth.example.com', audience='https://mcp')"


def test_a_public_key_that_is_not_pem_is_refused_with_a_reason() -> None:
    with pytest.raises(ValueError, match=r"^JWTVerifier\(public_key=\.\.\.\): not a PEM public key \("):
        JWTVerifier(public_key="not a key", issuer="https://auth.example.com", audience="https://mcp")


def test_implied_scopes_are_expanded_transitively() -> None:
    """A broad scope implies what its narrower scopes imply in turn (admin -> write -> read)."""
    rules = tokens.ScopeRules({"forecast:admin": ["forecast:write"], "forecast:write": ["forecast:read"]})
    expanded = rules.expand(frozenset({"forecast:admin", "other"}))
    assert expanded == {"forecast:admin", "forecast:write", "forecast:read", "other"}
    assert rules.expand(frozenset({"forecast:write"})) == {"forecast:write", "forecast:read"}
    assert rules.expand(frozenset({"other"})) == {"other"}
