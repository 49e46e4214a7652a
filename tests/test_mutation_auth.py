"""Exact behaviour of the token checks where mutation testing found the other tests lenient.

Each test pins a detail that a changed line in ``src/toolkit/_auth`` altered without any other
fast test failing (``scripts/mutate src/toolkit/_auth/tokens.py``; docs/contributing.md): when a
token counts as expired, how long a verified token is remembered, which claims name the client,
and what the protected resource metadata says.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import re
import time
from collections.abc import Callable
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from toolkit._auth import jwt as jwt_module
from toolkit._auth import tokens
from toolkit._auth.jwks import parse_jwks
from toolkit._auth.jwt import MAX_TOKEN_BYTES
from toolkit._auth.resource import Refusal, ResourceServer, metadata_url
from toolkit._auth.tls import shared_tls
from toolkit._auth.tokens import AccessToken, TokenCache, VerifierUnavailable, parse_scopes, token_from_claims
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


def test_the_cache_holds_ten_thousand_tokens_by_default(clock: Callable[[float], None]) -> None:
    """Rule: the documented bound on the verified-token cache (its memory) is 10,000 entries."""
    cache = TokenCache()
    keys = [i.to_bytes(4, "big") for i in range(10_001)]
    for key in keys[:10_000]:
        cache.put(key, token(None), seconds=60)
    assert cache.get(keys[0]) is not None
    cache.put(keys[10_000], token(None), seconds=60)
    assert cache.get(keys[0]) is None
    assert cache.get(keys[1]) is not None and cache.get(keys[10_000]) is not None


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
    """Counts the verifier's signature checks (PyJWT's algorithm object on a key; ``jwt.decode`` is
    not called, tests/test_jwt_verify.py): one entry, the signed part, per check."""
    calls: list[str] = []
    real = jwt_module._verifier

    def counting_verifier(algorithm: str, key: Any) -> Callable[[bytes, bytes], bool]:
        verify = real(algorithm, key)

        def counted(signing_input: bytes, signature: bytes) -> bool:
            calls.append(signing_input.decode("ascii"))
            return verify(signing_input, signature)

        return counted

    monkeypatch.setattr(jwt_module, "_verifier", counting_verifier)
    return calls


def ec_verifier(key: ec.EllipticCurvePrivateKey, **options: Any) -> JWTVerifier:
    return JWTVerifier(public_key=public_pem(key), issuer=ISSUER, audience=AUDIENCE, **options)


@pytest.mark.parametrize(
    "token_text",
    ["abc", f"{b64({'alg': 'ES256'})}.{b64({})}", f"{b64({'alg': 'ES256'})}.a.b.c", "!.b.c", "e=yJ9.b.c"],
)
async def test_a_token_not_of_three_base64url_segments_is_refused_as_such(
    ec_key: ec.EllipticCurvePrivateKey, token_text: str
) -> None:
    """Rule: two or four segments, or a header outside the base64url alphabet, is malformed (this reason)."""
    with pytest.raises(REFUSED, match=r"^malformed token: not three base64url segments$"):
        await ec_verifier(ec_key).verify(token_text)


async def test_a_header_that_is_not_json_is_refused_with_that_reason(ec_key: ec.EllipticCurvePrivateKey) -> None:
    with pytest.raises(REFUSED, match=r"^malformed token: the header is not JSON$"):
        await ec_verifier(ec_key).verify(with_header(b"not json"))


async def test_a_header_padded_where_it_may_not_be_is_refused_as_such(ec_key: ec.EllipticCurvePrivateKey) -> None:
    """Rule: '=' padding is taken as PyJWT takes it, only where base64 puts it ('eyJ9=' is not)."""
    with pytest.raises(REFUSED, match=r"^malformed token: invalid header padding$"):
        await ec_verifier(ec_key).verify("eyJ9=.b.c")


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
    cache_clock(expires + 31)  # forgotten, and checked again: expired by then (the same clock)
    with pytest.raises(REFUSED, match="expired"):
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


# --- the key set: fetched, cached, refreshed, rotated (jwks.py) -----------------------------------
#
# Driven with a stopped clock (``jwks.time.monotonic``) and httpx's MockTransport instead of a real
# JWKS endpoint, so each rule is checked in milliseconds: tests/test_auth.py holds the same rules
# over the real wire, too slowly to count against thousands of mutants (docs/contributing.md).

JWKS_URI = "https://auth.example.com/jwks"


def ec_jwk(private: ec.EllipticCurvePrivateKey, **fields: Any) -> dict[str, Any]:
    return {**json.loads(jwt.algorithms.ECAlgorithm.to_jwk(private.public_key())), "use": "sig", **fields}


def rsa_jwk(private: rsa.RSAPrivateKey, **fields: Any) -> dict[str, Any]:
    return {**json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(private.public_key())), "use": "sig", **fields}


@pytest.fixture(scope="module")
def rsa_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


class JwksEndpoint:
    """A JWKS endpoint behind httpx's MockTransport: what it answers, and every request it got."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, document: object) -> None:
        import httpx

        self.document = document
        self.status = 200
        self.body: bytes | None = None
        self.requests: list[Any] = []
        self.clients: list[dict[str, Any]] = []
        self.release: asyncio.Event | None = None
        endpoint = self

        async def answer(request: httpx.Request) -> httpx.Response:
            endpoint.requests.append(request)
            if endpoint.release is not None:
                await endpoint.release.wait()
            body = endpoint.body if endpoint.body is not None else json.dumps(endpoint.document).encode()
            return httpx.Response(endpoint.status, content=body)

        real = httpx.AsyncClient

        def client(**options: Any) -> Any:
            endpoint.clients.append(options)
            return real(transport=httpx.MockTransport(answer), **options)

        monkeypatch.setattr(httpx, "AsyncClient", client)


@pytest.fixture
def mono(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The monotonic clock the key set reads, stopped at 1000.0: ``mono[0] = ...`` moves it."""
    from toolkit._auth import jwks

    now = [1000.0]
    monkeypatch.setattr(jwks.time, "monotonic", lambda: now[0])
    return now


def key_set(**options: Any) -> Any:
    from toolkit._auth.jwks import KeySet

    settings = {"cache_seconds": 100.0, "refetch_interval": 10.0, "timeout": 5.0, **options}
    return KeySet(JWKS_URI, **settings)


async def settle() -> None:
    """Let a background fetch (MockTransport answers at once) run to its end."""
    for _ in range(20):
        await asyncio.sleep(0)


async def test_the_key_set_is_fetched_once_with_these_http_options(
    monkeypatch: pytest.MonkeyPatch, mono: list[float], ec_key: ec.EllipticCurvePrivateKey
) -> None:
    """Rule: a GET asking for JSON, with the configured timeout, never following a redirect, over the
    process's one TLS context (``_auth/tls.py``: httpx would make one per client)."""
    endpoint = JwksEndpoint(monkeypatch, {"keys": [ec_jwk(ec_key, kid="k1")]})
    keys = key_set(timeout=2.5)
    found = await keys.key("k1", "ES256")
    assert found.public_numbers() == ec_key.public_key().public_numbers()
    assert len(endpoint.requests) == 1
    request = endpoint.requests[0]
    assert (request.method, str(request.url), request.headers["accept"]) == ("GET", JWKS_URI, "application/json")
    assert endpoint.clients == [{"timeout": 2.5, "follow_redirects": False, "verify": shared_tls(trust_env=True)}]
    assert await keys.key("k1", "ES256") is found
    assert len(endpoint.requests) == 1  # fresh: no second fetch
    assert (keys.version, keys._problem) == (1, "")


async def test_a_stale_key_set_is_refreshed_in_the_background_once(
    monkeypatch: pytest.MonkeyPatch, mono: list[float], ec_key: ec.EllipticCurvePrivateKey
) -> None:
    """Rule: older than cache_seconds (strictly), the set is refetched; the request goes on with the key in hand."""
    endpoint = JwksEndpoint(monkeypatch, {"keys": [ec_jwk(ec_key, kid="k1")]})
    keys = key_set(cache_seconds=100.0, refetch_interval=10.0)
    found = await keys.key("k1", "ES256")
    mono[0] += 100.0  # exactly cache_seconds: not stale yet
    assert await keys.key("k1", "ES256") is found
    keys.refresh_if_stale()
    await settle()
    assert len(endpoint.requests) == 1
    mono[0] += 0.5
    endpoint.release = asyncio.Event()  # the refresh hangs: the request must not wait for it
    assert await keys.key("k1", "ES256") is found
    await settle()
    assert len(endpoint.requests) == 2
    assert await keys.key("k1", "ES256") is found  # one refresh in flight: no second one
    keys.refresh_if_stale()
    await settle()
    assert len(endpoint.requests) == 2
    endpoint.release.set()
    await settle()
    assert keys._fetched_at == mono[0]


async def test_refresh_if_stale_starts_a_refresh_only_when_stale_and_allowed(
    monkeypatch: pytest.MonkeyPatch, mono: list[float], ec_key: ec.EllipticCurvePrivateKey
) -> None:
    endpoint = JwksEndpoint(monkeypatch, {"keys": [ec_jwk(ec_key, kid="k1")]})
    keys = key_set(cache_seconds=100.0, refetch_interval=10.0)
    keys.refresh_if_stale()  # nothing in hand: nothing to refresh (the first request fetches)
    await settle()
    assert endpoint.requests == []
    await keys.key("k1", "ES256")
    mono[0] += 50.0
    keys.refresh_if_stale()
    await settle()
    assert len(endpoint.requests) == 1
    mono[0] += 51.0
    keys.refresh_if_stale()
    await settle()
    assert len(endpoint.requests) == 2
    assert keys._fetched_at == mono[0]


async def test_an_unknown_kid_refetches_at_most_once_per_interval(
    monkeypatch: pytest.MonkeyPatch, mono: list[float], ec_key: ec.EllipticCurvePrivateKey
) -> None:
    """Rule: a rotated key is fetched on first sight; a flood of unknown kids costs one fetch per interval."""
    endpoint = JwksEndpoint(monkeypatch, {"keys": [ec_jwk(ec_key, kid="k1")]})
    keys = key_set(refetch_interval=10.0)
    await keys.key("k1", "ES256")
    mono[0] += 9.5
    with pytest.raises(REFUSED, match=r"^no key 'k2' for ES256 in the key set \(refetched recently\)$"):
        await keys.key("k2", "ES256")
    assert len(endpoint.requests) == 1
    mono[0] += 0.5  # exactly the interval since the last attempt: allowed
    endpoint.document = {"keys": [ec_jwk(ec_key, kid="k1"), ec_jwk(ec_key, kid="k2")]}
    assert await keys.key("k2", "ES256") is not None
    assert (len(endpoint.requests), keys.version) == (2, 2)
    mono[0] += 10.0
    with pytest.raises(REFUSED, match=r"^no key 'k3' for ES256 in the key set$"):
        await keys.key("k3", "ES256")
    assert (len(endpoint.requests), keys.version) == (3, 2)  # the same key ids: same version


async def test_concurrent_requests_for_an_unknown_kid_share_one_fetch(
    monkeypatch: pytest.MonkeyPatch, mono: list[float], ec_key: ec.EllipticCurvePrivateKey
) -> None:
    endpoint = JwksEndpoint(monkeypatch, {"keys": [ec_jwk(ec_key, kid="k1")]})
    endpoint.release = asyncio.Event()
    keys = key_set()
    waiting = [asyncio.ensure_future(keys.key("k1", "ES256")) for _ in range(3)]
    await settle()
    endpoint.release.set()
    found = await asyncio.gather(*waiting)
    assert len(endpoint.requests) == 1
    assert found[0] is found[1] is found[2]


async def test_a_request_that_gives_up_does_not_cancel_the_shared_fetch(
    monkeypatch: pytest.MonkeyPatch, mono: list[float], ec_key: ec.EllipticCurvePrivateKey
) -> None:
    endpoint = JwksEndpoint(monkeypatch, {"keys": [ec_jwk(ec_key, kid="k1")]})
    endpoint.release = asyncio.Event()
    keys = key_set()
    first = asyncio.ensure_future(keys.key("k1", "ES256"))
    await settle()
    first.cancel()
    await settle()
    endpoint.release.set()
    await settle()
    assert keys.keys is not None and "k1" in keys.keys


@pytest.mark.parametrize(
    ("status", "body", "problem"),
    [
        (503, b"", "ValueError: HTTP 503"),
        (200, b"<html>", "JSONDecodeError: Expecting value: line 1 column 1 (char 0)"),
        (200, b'{"keys": []}', "ValueError: no usable signing keys"),
        (200, b"[]", 'ValueError: not a JWKS document (no "keys" array)'),
        (200, b'{"keys": {}}', 'ValueError: not a JWKS document (no "keys" array)'),
    ],
)
async def test_a_key_set_never_fetched_is_unavailable_saying_why(
    monkeypatch: pytest.MonkeyPatch,
    mono: list[float],
    caplog: pytest.LogCaptureFixture,
    status: int,
    body: bytes,
    problem: str,
) -> None:
    """Rule: no keys in hand is 503 (the token may be good), with the reason, once per interval."""
    endpoint = JwksEndpoint(monkeypatch, {})
    endpoint.status, endpoint.body = status, body
    keys = key_set(refetch_interval=10.0)
    unavailable = rf"^the key set at {JWKS_URI} is unavailable \({re.escape(problem)}\)$"
    with caplog.at_level(logging.WARNING, logger="toolkit.auth"), pytest.raises(VerifierUnavailable, match=unavailable):
        await keys.key("k1", "ES256")
    assert f"could not refresh the key set at {JWKS_URI}: {problem}" in caplog.messages
    mono[0] += 9.9
    with pytest.raises(VerifierUnavailable, match=unavailable):
        await keys.key("k1", "ES256")
    assert len(endpoint.requests) == 1
    assert (keys.keys, keys.version) == (None, 0)


async def test_a_key_set_not_fetched_yet_says_so(mono: list[float]) -> None:
    keys = key_set()
    keys._attempted_at = mono[0]  # as if a fetch had just been tried
    with pytest.raises(VerifierUnavailable, match=rf"^the key set at {JWKS_URI} is unavailable \(not fetched yet\)$"):
        await keys.key("k1", "ES256")


async def test_a_key_set_over_the_size_limit_is_refused(
    monkeypatch: pytest.MonkeyPatch, mono: list[float], ec_key: ec.EllipticCurvePrivateKey
) -> None:
    from toolkit._auth.jwks import MAX_JWKS_BYTES

    endpoint = JwksEndpoint(monkeypatch, {})
    document = json.dumps({"keys": [ec_jwk(ec_key, kid="k1")]}).encode()
    endpoint.body = document + b" " * (MAX_JWKS_BYTES - len(document))  # exactly the limit: used
    assert await key_set().key("k1", "ES256") is not None
    endpoint.body += b" "
    with pytest.raises(VerifierUnavailable, match=rf"\(ValueError: more than {MAX_JWKS_BYTES} bytes\)$"):
        await key_set().key("k1", "ES256")


async def test_keys_in_hand_stay_in_use_when_a_refresh_fails(
    monkeypatch: pytest.MonkeyPatch, mono: list[float], ec_key: ec.EllipticCurvePrivateKey
) -> None:
    endpoint = JwksEndpoint(monkeypatch, {"keys": [ec_jwk(ec_key, kid="k1")]})
    keys = key_set(cache_seconds=0.0, refetch_interval=1.0)
    found = await keys.key("k1", "ES256")
    endpoint.status = 500
    mono[0] += 1.0
    assert await keys.key("k1", "ES256") is found
    await settle()
    assert (len(endpoint.requests), keys._problem, keys.version) == (2, "ValueError: HTTP 500", 1)
    assert keys.keys is not None and keys._fetched_at == 1000.0


async def test_a_key_withdrawn_from_the_set_is_refused_even_for_a_remembered_token(
    monkeypatch: pytest.MonkeyPatch, mono: list[float], ec_key: ec.EllipticCurvePrivateKey, decodes: list[str]
) -> None:
    """Rule: every request, a remembered token's too, refreshes a stale set; a withdrawn key forgets the token."""
    other = ec.generate_private_key(ec.SECP256R1())
    endpoint = JwksEndpoint(monkeypatch, {"keys": [ec_jwk(ec_key, kid="k1"), ec_jwk(other, kid="k2")]})
    verifier = JWTVerifier(
        jwks_uri=JWKS_URI, issuer=ISSUER, audience=AUDIENCE, jwks_cache_seconds=60.0, jwks_refetch_interval=5.0
    )
    text = jwt.encode(good_claims(), ec_key, algorithm="ES256", headers={"kid": "k1"})
    first = await verifier.verify(text)
    assert await verifier.verify(text) is first
    endpoint.document = {"keys": [ec_jwk(other, kid="k2")]}
    mono[0] += 61.0
    assert await verifier.verify(text) is first  # this request starts the refresh and goes on
    await settle()
    assert len(endpoint.requests) == 2
    with pytest.raises(REFUSED, match=r"^no key 'k1' for ES256 in the key set \(refetched recently\)$"):
        await verifier.verify(text)
    assert len(decodes) == 1


def test_parse_jwks_keeps_signing_keys_only(
    ec_key: ec.EllipticCurvePrivateKey, rsa_key: rsa.RSAPrivateKey, caplog: pytest.LogCaptureFixture
) -> None:
    """Rule: encryption keys, shared secrets, private keys and unusable entries are skipped; ``alg`` narrows."""
    private = {**ec_jwk(ec_key, kid="private"), "d": "AAAA"}
    entries = [
        "not an object",
        ec_jwk(ec_key, kid="enc", use="enc"),
        {"kty": "oct", "k": "c2VjcmV0", "kid": "hmac"},
        private,
        {"kty": "RSA", "alg": "XX256", "n": "AQAB", "e": "AQAB", "kid": "broken"},
        ec_jwk(ec_key, kid="ec"),
        rsa_jwk(rsa_key, kid="rsa"),
        rsa_jwk(rsa_key, kid="ps", alg="PS256"),
        {key: value for key, value in ec_jwk(ec_key, kid="no-use").items() if key != "use"},
        ec_jwk(ec_key, kid="ec", alg="ES256"),
    ]
    with caplog.at_level(logging.INFO, logger="toolkit.auth"):
        keys = parse_jwks(json.dumps({"keys": entries}).encode())
    assert sorted(keys) == ["ec", "no-use", "ps", "rsa"]
    assert [fits for _, fits in keys["ec"]] == [frozenset({"ES256"}), frozenset({"ES256"})]
    assert [fits for _, fits in keys["rsa"]] == [frozenset({"RS256", "RS384", "RS512", "PS256", "PS384", "PS512"})]
    assert [fits for _, fits in keys["ps"]] == [frozenset({"PS256"})]
    assert "the key set publishes a private key (kid 'private'); skipped" in caplog.messages
    assert any(message.startswith("skipping an unusable key (kid 'broken'): Unable") for message in caplog.messages)


def test_pick_a_key_by_kid_or_the_only_one_fit() -> None:
    from toolkit._auth.jwks import _pick

    keys = {"a": [("A1", frozenset({"ES256"})), ("A2", frozenset({"ES256"}))], "b": [("B", frozenset({"RS256"}))]}
    assert _pick(keys, "a", "ES256") == "A1"  # several under one kid: the first
    assert _pick(keys, "b", "RS256") == "B"
    assert _pick(keys, "b", "ES256") is None
    assert _pick(keys, "c", "ES256") is None
    assert _pick(keys, None, "RS256") == "B"  # no kid: the only key fit for the algorithm
    assert _pick(keys, None, "ES256") is None  # two fit: ambiguous
    assert _pick(keys, None, "PS256") is None
    assert _pick({None: [("N", frozenset({"ES256"}))]}, None, "ES256") == "N"


def test_fitting_algorithms_by_key_type_and_curve(rsa_key: rsa.RSAPrivateKey) -> None:
    from cryptography.hazmat.primitives.asymmetric import dsa, ed448, ed25519

    from toolkit._auth.jwks import fitting_algorithms

    assert fitting_algorithms(rsa_key.public_key()) == {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512"}
    assert fitting_algorithms(ed25519.Ed25519PrivateKey.generate().public_key()) == {"EdDSA"}
    assert fitting_algorithms(ed448.Ed448PrivateKey.generate().public_key()) == {"EdDSA"}
    curves = {ec.SECP256R1(): "ES256", ec.SECP384R1(): "ES384", ec.SECP521R1(): "ES512"}
    for curve, algorithm in curves.items():
        assert fitting_algorithms(ec.generate_private_key(curve).public_key()) == {algorithm}
    assert fitting_algorithms(ec.generate_private_key(ec.SECP256K1()).public_key()) == frozenset()
    assert fitting_algorithms(dsa.generate_private_key(1024).public_key()) == frozenset()
    assert fitting_algorithms("not a key") == frozenset()


def test_describe_names_the_exception_class_once() -> None:
    from toolkit._auth.jwks import _describe

    assert _describe(ValueError("HTTP 500")) == "ValueError: HTTP 500"
    assert _describe(TimeoutError()) == "TimeoutError"
    assert _describe(ValueError("ValueError")) == "ValueError"


def test_a_p256_key_naming_es384_verifies_nothing(ec_key: ec.EllipticCurvePrivateKey) -> None:
    """Rule: a key's ``alg`` narrows what it verifies; it never adds an algorithm the key cannot do."""
    keys = parse_jwks(json.dumps({"keys": [ec_jwk(ec_key, kid="k", alg="ES384")]}).encode())
    assert [fits for _, fits in keys["k"]] == [frozenset()]


# --- JWTVerifier: its configuration --------------------------------------------------------------


def test_jwt_verifier_defaults_are_the_documented_ones() -> None:
    verifier = JWTVerifier(jwks_uri=JWKS_URI, issuer=ISSUER, audience=AUDIENCE)
    assert (verifier.leeway, verifier.cache_seconds, verifier.algorithms) == (
        30.0,
        300.0,
        ("RS256", "PS256", "ES256", "ES384", "EdDSA"),
    )
    assert verifier.key_set is not None
    assert (verifier.key_set.cache_seconds, verifier.key_set.refetch_interval, verifier.key_set.timeout) == (
        3600.0,
        30.0,
        5.0,
    )
    custom = JWTVerifier(
        jwks_uri=JWKS_URI,
        issuer=ISSUER,
        audience=AUDIENCE,
        jwks_cache_seconds=7.0,
        jwks_refetch_interval=8.0,
        jwks_timeout=9.0,
    )
    assert custom.key_set is not None
    assert (custom.key_set.cache_seconds, custom.key_set.refetch_interval, custom.key_set.timeout) == (7.0, 8.0, 9.0)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({}, "JWTVerifier takes exactly one of jwks_uri= (the usual) or public_key="),
        (
            {"jwks_uri": JWKS_URI, "public_key": "x"},
            "JWTVerifier takes exactly one of jwks_uri= (the usual) or public_key=",
        ),
        (
            {"jwks_uri": JWKS_URI, "algorithms": ["RS256", "HS256"]},
            "JWTVerifier(algorithms=...): ['HS256'] not allowed; use asymmetric algorithms from "
            "['ES256', 'ES384', 'ES512', 'EdDSA', 'PS256', 'PS384', 'PS512', 'RS256', 'RS384', 'RS512'] "
            "(never 'none' or HS*: a public key is not a shared secret)",
        ),
        (
            {"jwks_uri": JWKS_URI, "algorithms": []},
            "JWTVerifier(algorithms=...): an empty list not allowed; use asymmetric algorithms from "
            "['ES256', 'ES384', 'ES512', 'EdDSA', 'PS256', 'PS384', 'PS512', 'RS256', 'RS384', 'RS512'] "
            "(never 'none' or HS*: a public key is not a shared secret)",
        ),
        (
            {"jwks_uri": JWKS_URI, "issuer": ""},
            "JWTVerifier needs issuer=: the authorization server's issuer identifier",
        ),
        (
            {"jwks_uri": JWKS_URI, "audience": []},
            "JWTVerifier needs audience=: this server's resource URL, as tokens name it in 'aud'",
        ),
    ],
)
def test_jwt_verifier_configuration_mistakes_are_refused_in_these_words(options: dict[str, Any], message: str) -> None:
    """Rule: an HMAC or unknown algorithm on the allow-list is refused at construction (a public key is no secret)."""
    arguments = {"issuer": ISSUER, "audience": AUDIENCE, **options}
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        JWTVerifier(**arguments)


def test_jwt_verifier_without_pyjwt_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "jwt", None)  # import jwt now raises ImportError
    message = "JWTVerifier needs the 'jwt' package: pip install 'toolkit-mcp[auth]'"
    with pytest.raises(ImportError, match=f"^{re.escape(message)}$"):
        JWTVerifier(jwks_uri=JWKS_URI, issuer=ISSUER, audience=AUDIENCE)


async def test_several_issuers_and_audiences_are_each_accepted(ec_key: ec.EllipticCurvePrivateKey) -> None:
    verifier = JWTVerifier(
        public_key=public_pem(ec_key), issuer=(ISSUER, "https://other.example"), audience=(AUDIENCE, "https://b")
    )
    assert repr(verifier) == (
        "JWTVerifier('public_key', issuer=['https://auth.example.com', 'https://other.example'], "
        "audience=['https://mcp', 'https://b'])"
    )
    for iss, aud in [(ISSUER, AUDIENCE), ("https://other.example", "https://b")]:
        claims = good_claims(iss=iss, aud=aud)
        assert (await verifier.verify(jwt.encode(claims, ec_key, algorithm="ES256"))).subject == "u"


async def test_a_token_from_another_issuer_is_refused(ec_key: ec.EllipticCurvePrivateKey) -> None:
    """Rule: ``iss`` is checked (a token the same key signed for another issuer is refused)."""
    foreign = jwt.encode(good_claims(iss="https://evil.example"), ec_key, algorithm="ES256")
    with pytest.raises(REFUSED, match=r"^InvalidIssuerError: Invalid issuer$"):
        await ec_verifier(ec_key).verify(foreign)


@pytest.mark.parametrize("claim", ["exp", "iss", "aud"])
async def test_a_token_without_exp_iss_or_aud_is_refused(ec_key: ec.EllipticCurvePrivateKey, claim: str) -> None:
    """Rule: a token that never expires, or names no issuer or audience, is refused (RFC 9068 §2.2)."""
    claims = {name: value for name, value in good_claims().items() if name != claim}
    missing = jwt.encode(claims, ec_key, algorithm="ES256")
    with pytest.raises(REFUSED, match=rf'^MissingRequiredClaimError: Token is missing the "{claim}" claim$'):
        await ec_verifier(ec_key).verify(missing)


# --- tokens: scopes and claims -------------------------------------------------------------------


def test_scope_is_read_before_scp_and_scp_lists_keep_strings_only() -> None:
    assert parse_scopes({"scope": "a b", "scp": ["c"]}) == frozenset({"a", "b"})
    assert parse_scopes({"scp": ["a", 5, "b"]}) == frozenset({"a", "b"})
    assert parse_scopes({"scope": 5}) == frozenset()


def test_a_token_keeps_its_scopes_and_every_claim() -> None:
    claims = {"sub": "u", "scope": "read write", "extra": [1]}
    access = token_from_claims(claims)
    assert access.scopes == frozenset({"read", "write"})
    assert access.claims == claims


# --- ResourceServer: its configuration, metadata and challenges ----------------------------------


class Granting:
    """A verifier that grants every token ``access``; with an ``aclose`` that records its call."""

    def __init__(self, access: AccessToken) -> None:
        self.access = access
        self.closed = 0

    async def verify(self, token: str) -> AccessToken | None:
        return self.access

    async def aclose(self) -> None:
        self.closed += 1


@pytest.mark.parametrize("url", ["http://a.example", "https://a.example/mcp", "HTTP://a.example/x"])
def test_check_url_accepts_absolute_http_urls(url: str) -> None:
    from toolkit._auth.resource import check_url

    check_url(url, "resource_url")


@pytest.mark.parametrize("url", ["ftp://a.example", "a.example/mcp", "http:///mcp", "https://a/#f", 5, "//a.example"])
def test_check_url_refuses_the_rest_naming_the_option(url: object) -> None:
    from toolkit._auth.resource import check_url

    message = f"resource_url: {url!r} is not an absolute http(s) URL without a fragment"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        check_url(url, "resource_url")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        (
            {"verifier": object()},
            TypeError,
            "is not a token verifier: it needs an async verify(token) method "
            "(use toolkit.auth.JWTVerifier or IntrospectionVerifier, or write one)",
        ),
        (
            {"authorization_servers": "https://as.example"},
            ValueError,
            "auth= needs authorization_servers=[...]: the issuer URL(s) clients get tokens from "
            "(the protected resource metadata must list at least one)",
        ),
        (
            {"authorization_servers": []},
            ValueError,
            "auth= needs authorization_servers=[...]: the issuer URL(s) clients get tokens from "
            "(the protected resource metadata must list at least one)",
        ),
        (
            {"authorization_servers": ["as.example"]},
            ValueError,
            "authorization_servers: 'as.example' is not an absolute http(s) URL without a fragment",
        ),
        (
            {"resource_url": "https://x/mcp#f"},
            ValueError,
            "resource_url: 'https://x/mcp#f' is not an absolute http(s) URL without a fragment",
        ),
    ],
)
def test_resource_server_configuration_mistakes_are_refused_in_these_words(
    options: dict[str, Any], error: type[Exception], message: str
) -> None:
    arguments: dict[str, Any] = {"verifier": Nobody(), "authorization_servers": ["https://as.example"], **options}
    verifier = arguments.pop("verifier")
    with pytest.raises(error, match=f"{re.escape(message)}$"):
        ResourceServer(verifier, **arguments)


def test_the_metadata_document_in_full() -> None:
    """Rule: RFC 9728 §2 fields, exactly; the resource URL loses its trailing slashes only."""
    server = ResourceServer(
        Nobody(),
        authorization_servers=("https://as.example",),
        resource_url="https://example.com/mcp//",
        required_scopes=["mcp"],
        scopes_in_use=lambda: ["b", "a"],
        resource_name="Weather",
    )
    assert server.resource_url == "https://example.com/mcp"
    ending_in_x = ResourceServer(Nobody(), authorization_servers=["https://as.example"], resource_url="https://e/X/")
    assert ending_in_x.resource_url == "https://e/X"
    assert server.metadata("https://example.com/mcp") == {
        "resource": "https://example.com/mcp",
        "authorization_servers": ["https://as.example"],
        "scopes_supported": ["a", "b", "mcp"],
        "bearer_methods_supported": ["header"],
        "resource_name": "Weather",
    }
    listed = ResourceServer(Nobody(), authorization_servers=["https://as.example"], scopes_supported=("x", "y"))
    assert listed.resource_url is None
    assert listed.metadata("https://e/mcp")["scopes_supported"] == ["x", "y"]
    bare = ResourceServer(Nobody(), authorization_servers=["https://as.example"])
    assert "scopes_supported" not in bare.metadata("https://e/mcp")


@pytest.mark.parametrize("authorization", [None, "Basic dXNlcjpwYXNz"])
async def test_no_bearer_token_is_a_bare_401_with_the_server_wide_scopes(authorization: str | None) -> None:
    """Rule: RFC 6750 §3.1: no error code without credentials; the scope is the server-wide one, sorted."""
    server = ResourceServer(Nobody(), authorization_servers=["https://as.example"], required_scopes=["b", "a"])
    assert await server.authenticate(authorization) == Refusal(401, scopes=("a", "b"))


async def test_implied_scopes_are_added_and_the_rest_of_the_token_kept() -> None:
    granted = AccessToken("u", "c", frozenset({"admin"}), 1e12, {"sub": "u"})
    server = ResourceServer(
        Granting(granted), authorization_servers=["https://as.example"], implied_scopes={"admin": ["read"]}
    )
    access = await server.authenticate("Bearer t")
    assert access == AccessToken("u", "c", frozenset({"admin", "read"}), 1e12, {"sub": "u"})


async def test_close_closes_the_verifier_if_it_can_be() -> None:
    verifier = Granting(AccessToken("u", "c", frozenset(), None))
    await ResourceServer(verifier, authorization_servers=["https://as.example"]).close()
    assert verifier.closed == 1
    await ResourceServer(Nobody(), authorization_servers=["https://as.example"]).close()  # nothing to close


def test_a_token_with_exactly_the_scopes_needed_passes() -> None:
    server = ResourceServer(Nobody(), authorization_servers=["https://as.example"], required_scopes=["a"])
    assert server.require(AccessToken("u", "c", frozenset({"a", "b"}), None), frozenset({"b"})) is None
    assert server.require(AccessToken("u", "c", frozenset({"a"}), None)) is None


@pytest.mark.parametrize(
    "bad",
    [
        {"kty": "XX", "kid": "future"},  # a key type PyJWT does not know (a future one)
        {"kty": "EC", "crv": "P-256", "x": "AA", "y": "AA", "kid": "short"},  # malformed coordinates
        {"kty": "OKP", "crv": "X448", "x": "AA", "kid": "x448"},  # a key-agreement curve
    ],
    ids=["unknown-kty", "malformed-ec", "x448"],
)
def test_one_unusable_key_is_skipped_not_fatal(bad: dict[str, Any]) -> None:
    """PyJWT raises InvalidKeyError for these: the key is skipped, the rest of the set still verifies."""
    import jwt
    from cryptography.hazmat.primitives.asymmetric import ec

    from toolkit._auth.jwks import parse_jwks

    public = ec.generate_private_key(ec.SECP256R1()).public_key()
    good = {**json.loads(jwt.algorithms.ECAlgorithm.to_jwk(public)), "kid": "good", "use": "sig"}
    keys = parse_jwks(json.dumps({"keys": [bad, good]}).encode())
    assert list(keys) == ["good"]
