"""Exact behaviour of the token checks where mutation testing found the other tests lenient.

Each test pins a detail that a changed line in ``src/toolkit/_auth`` altered without any other
fast test failing (``scripts/mutate src/toolkit/_auth/tokens.py``; docs/contributing.md): when a
token counts as expired, how long a verified token is remembered, which claims name the client,
and what the protected resource metadata says.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Callable
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from toolkit._auth import tokens
from toolkit._auth.jwks import parse_jwks
from toolkit._auth.jwt import MAX_TOKEN_BYTES
from toolkit._auth.resource import ResourceServer, metadata_url
from toolkit._auth.tokens import AccessToken, TokenCache, parse_scopes, token_from_claims
from toolkit.auth import JWTVerifier

NOW = 1_800_000_000.0


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Callable[[float], None]:
    """Set the time ``tokens`` reads: ``clock(seconds_after_NOW)`` (PyJWT reads ``datetime``, not this)."""
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


# --- JWTVerifier: what it refuses, with which reason, and how long it remembers -------------------

ISSUER = "https://auth.example.com"
AUDIENCE = "https://mcp"
REFUSED = tokens.InvalidToken


@pytest.fixture(scope="module")
def ec_key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def public_pem(private: Any) -> bytes:
    return private.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def good_claims(**extra: Any) -> dict[str, Any]:
    return {"iss": ISSUER, "aud": AUDIENCE, "sub": "u", "exp": int(time.time()) + 3600, **extra}


def b64(value: object) -> str:
    raw = value if isinstance(value, bytes) else json.dumps(value).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def with_header(header: object) -> str:
    """A token with this JOSE header, a good payload and a signature that would not check."""
    return f"{b64(header)}.{b64(good_claims())}.{b64(b'not a signature')}"


@pytest.fixture
def decodes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Counts PyJWT's signature checks: one entry per ``jwt.decode``."""
    calls: list[str] = []
    real = jwt.decode

    def counting(token: str, *args: Any, **kwargs: Any) -> Any:
        calls.append(token)
        return real(token, *args, **kwargs)

    monkeypatch.setattr(jwt, "decode", counting)
    return calls


def ec_verifier(key: ec.EllipticCurvePrivateKey, **options: Any) -> JWTVerifier:
    return JWTVerifier(public_key=public_pem(key), issuer=ISSUER, audience=AUDIENCE, **options)


@pytest.mark.parametrize(
    "token_text",
    ["abc", f"{b64({'alg': 'ES256'})}.{b64({})}", f"{b64({'alg': 'ES256'})}.a.b.c", "!.b.c", "eyJ9=.b.c"],
)
async def test_a_token_not_of_three_base64url_segments_is_refused_as_such(
    ec_key: ec.EllipticCurvePrivateKey, token_text: str
) -> None:
    """Rule: two or four segments, or a header outside the base64url alphabet, is malformed (this reason)."""
    with pytest.raises(REFUSED, match=r"^malformed token: not three base64url segments$"):
        await ec_verifier(ec_key).verify(token_text)


async def test_a_header_that_is_not_json_is_refused_with_that_reason(ec_key: ec.EllipticCurvePrivateKey) -> None:
    with pytest.raises(REFUSED, match=r"^malformed token: the header is not base64url JSON$"):
        await ec_verifier(ec_key).verify(with_header(b"not json"))


async def test_a_header_that_is_not_an_object_is_refused_with_that_reason(
    ec_key: ec.EllipticCurvePrivateKey,
) -> None:
    with pytest.raises(REFUSED, match=r"^malformed token: the header is not an object$"):
        await ec_verifier(ec_key).verify(with_header(["ES256"]))


@pytest.mark.parametrize("alg", ["HS256", "none", None])
async def test_an_algorithm_off_the_list_is_refused_naming_the_list(
    ec_key: ec.EllipticCurvePrivateKey, alg: str | None
) -> None:
    """Rule: the reason names the token's ``alg`` and every allowed one, comma-separated."""
    header = {"typ": "JWT"} if alg is None else {"alg": alg}
    allowed = r"\(allowed: RS256, PS256, ES256, ES384, EdDSA\)$"
    with pytest.raises(REFUSED, match=rf"^algorithm {alg!r} is not allowed {allowed}"):
        await ec_verifier(ec_key).verify(with_header(header))


async def test_an_algorithm_the_key_fits_but_not_on_the_list_is_refused() -> None:
    """Rule: the allow-list is enforced even when the key could verify the algorithm (RSA: RS256 vs PS256)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    verifier = JWTVerifier(public_key=public_pem(key), issuer=ISSUER, audience=AUDIENCE, algorithms=["RS256"])
    assert await verifier.verify(jwt.encode(good_claims(), key, algorithm="RS256"))
    with pytest.raises(REFUSED, match=r"^algorithm 'PS256' is not allowed \(allowed: RS256\)$"):
        await verifier.verify(jwt.encode(good_claims(), key, algorithm="PS256"))


async def test_a_kid_that_is_not_a_string_is_refused_with_that_reason(ec_key: ec.EllipticCurvePrivateKey) -> None:
    with pytest.raises(REFUSED, match=r"^malformed token: kid is not a string$"):
        await ec_verifier(ec_key).verify(with_header({"alg": "ES256", "kid": 5}))


async def test_an_allowed_algorithm_the_public_key_cannot_do_is_refused_naming_it(
    ec_key: ec.EllipticCurvePrivateKey,
) -> None:
    with pytest.raises(REFUSED, match=r"^the configured public key cannot verify RS256$"):
        await ec_verifier(ec_key).verify(with_header({"alg": "RS256"}))


async def test_exp_has_the_leeway_and_pyjwt_s_refusal_is_named(ec_key: ec.EllipticCurvePrivateKey) -> None:
    """Rule: ``leeway`` reaches PyJWT (expired 10 s ago passes with 30 s); its error is "Class: message"."""
    expired = jwt.encode(good_claims(exp=int(time.time()) - 10), ec_key, algorithm="ES256")
    assert (await ec_verifier(ec_key, leeway=30).verify(expired)).subject == "u"
    with pytest.raises(REFUSED, match=r"^ExpiredSignatureError: Signature has expired$"):
        await ec_verifier(ec_key, leeway=0).verify(expired)


async def test_a_token_of_exactly_the_limit_is_verified_one_more_byte_is_refused(
    ec_key: ec.EllipticCurvePrivateKey,
) -> None:
    def sized(kid: str, pad: int) -> str:
        return jwt.encode(good_claims(pad="x" * pad), ec_key, algorithm="ES256", headers={"kid": kid})

    near = (MAX_TOKEN_BYTES - len(sized("k", 0))) * 3 // 4  # 3 payload bytes take 4 characters
    candidates = (sized("k" * kid, pad) for kid in range(1, 5) for pad in range(near - 8, near + 8))
    exact = next(text for text in candidates if len(text) == MAX_TOKEN_BYTES)
    assert (await ec_verifier(ec_key).verify(exact)).subject == "u"
    with pytest.raises(REFUSED, match=rf"^token longer than {MAX_TOKEN_BYTES} bytes$"):
        await ec_verifier(ec_key).verify("a" * (MAX_TOKEN_BYTES + 1))


async def test_a_verified_token_is_remembered_not_checked_again(
    ec_key: ec.EllipticCurvePrivateKey, decodes: list[str]
) -> None:
    verifier = ec_verifier(ec_key)
    text = jwt.encode(good_claims(), ec_key, algorithm="ES256")
    first = await verifier.verify(text)
    assert await verifier.verify(text) is first
    assert len(decodes) == 1


@pytest.fixture
def cache_clock(monkeypatch: pytest.MonkeyPatch) -> Callable[[float], None]:
    """Stop the time the token cache reads at now; ``cache_clock(t)`` sets it. PyJWT keeps the real time."""
    now = [time.time()]
    monkeypatch.setattr(tokens.time, "time", lambda: now[0])

    def set_to(at: float) -> None:
        now[0] = at

    return set_to


async def test_a_verified_token_is_remembered_for_cache_seconds(
    ec_key: ec.EllipticCurvePrivateKey, decodes: list[str], cache_clock: Callable[[float], None]
) -> None:
    """Rule: remembered ``cache_seconds`` (300), not ``leeway`` (30) seconds, when it expires later."""
    verifier = ec_verifier(ec_key, cache_seconds=300, leeway=30)
    start = time.time()
    text = jwt.encode(good_claims(exp=int(start) + 3600), ec_key, algorithm="ES256")
    await verifier.verify(text)
    cache_clock(start + 299)
    await verifier.verify(text)
    assert len(decodes) == 1
    cache_clock(start + 301)
    await verifier.verify(text)
    assert len(decodes) == 2


async def test_a_verified_token_is_remembered_until_exp_plus_the_leeway(
    ec_key: ec.EllipticCurvePrivateKey, decodes: list[str], cache_clock: Callable[[float], None]
) -> None:
    """Rule: a token expiring before ``cache_seconds`` is remembered until ``exp`` + ``leeway``."""
    verifier = ec_verifier(ec_key, cache_seconds=300, leeway=30)
    expires = int(time.time()) + 100
    text = jwt.encode(good_claims(exp=expires), ec_key, algorithm="ES256")
    await verifier.verify(text)
    cache_clock(expires + 29)
    await verifier.verify(text)
    assert len(decodes) == 1
    cache_clock(expires + 31)
    await verifier.verify(text)
    assert len(decodes) == 2


async def test_a_token_verified_with_the_key_set_is_remembered_while_the_set_keeps_its_keys(
    ec_key: ec.EllipticCurvePrivateKey, decodes: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rule: only a change of the key set's key ids (not its first fetch) makes the verifier forget."""
    verifier = JWTVerifier(jwks_uri="https://auth.example.com/jwks", issuer=ISSUER, audience=[AUDIENCE])
    assert repr(verifier) == (
        "JWTVerifier('https://auth.example.com/jwks', issuer='https://auth.example.com', audience=['https://mcp'])"
    )
    jwk = {**json.loads(jwt.algorithms.ECAlgorithm.to_jwk(ec_key.public_key())), "kid": "k1", "use": "sig"}

    async def download() -> Any:
        return parse_jwks(json.dumps({"keys": [jwk]}).encode())

    assert verifier.key_set is not None
    monkeypatch.setattr(verifier.key_set, "_download", download)
    text = jwt.encode(good_claims(), ec_key, algorithm="ES256", headers={"kid": "k1"})
    first = await verifier.verify(text)
    assert await verifier.verify(text) is first
    assert await verifier.verify(text) is first
    assert len(decodes) == 1
