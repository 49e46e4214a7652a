"""``JWTVerifier``'s own verification path gives PyJWT's verdict on every token.

toolkit reads the compact serialization and checks the claims itself, and has PyJWT's algorithm
objects check the signature with ``cryptography`` (``jwt.decode`` spent two thirds of its time in
a per-character check of the segments). Each case here is decided by both, with real keys and
tokens signed by PyJWT: the verifier accepts exactly the tokens ``jwt.decode`` accepts with the
same options, and refuses the others as ``InvalidToken``.
"""

from __future__ import annotations

import base64
import json
import string
import time
from collections.abc import Callable
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

from toolkit._auth import jwt as jwt_module
from toolkit.auth import InvalidToken, JWTVerifier

ISSUER = "https://issuer.example"
AUDIENCE = "http://127.0.0.1:8000/mcp"
LEEWAY = 30.0

KEYS: dict[str, Any] = {
    "RS256": rsa.generate_private_key(public_exponent=65537, key_size=2048),
    "PS256": rsa.generate_private_key(public_exponent=65537, key_size=2048),
    "ES256": ec.generate_private_key(ec.SECP256R1()),
    "ES384": ec.generate_private_key(ec.SECP384R1()),
    "EdDSA": ed25519.Ed25519PrivateKey.generate(),
}


def pem(private: Any) -> bytes:
    return private.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def claims(**changes: Any) -> dict[str, Any]:
    now = int(time.time())
    base: dict[str, Any] = {
        "iss": ISSUER,
        "aud": AUDIENCE,
        "iat": now,
        "nbf": now,
        "exp": now + 600,
        "sub": "user-1",
        "client_id": "client-1",
        "scope": "a b",
        "jti": "jti-1",
    }
    base.update(changes)
    return {name: value for name, value in base.items() if value is not None}


def sign(payload: dict[str, Any], alg: str = "RS256", key: Any = None) -> str:
    return jwt.encode(payload, key if key is not None else KEYS[alg], algorithm=alg, headers={"kid": "k1"})


def pad(token: str, segment: int) -> str:
    parts = token.split(".")
    parts[segment] += "=" * (-len(parts[segment]) % 4)
    return ".".join(parts)


def resign_last_char(token: str) -> str:
    """The same signature bytes, spelled with different unused low bits (a non-canonical encoding)."""
    head, _, signature = token.rpartition(".")
    decoded = base64.urlsafe_b64decode(signature + "=" * (-len(signature) % 4))
    canonical = base64.urlsafe_b64encode(decoded).rstrip(b"=").decode()
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    last = alphabet.index(canonical[-1])
    return f"{head}.{canonical[:-1]}{alphabet[last | 1] if last | 1 != last else alphabet[last & ~1]}"


def tamper_payload(token: str) -> str:
    header, _, rest = token.partition(".")
    _, _, signature = rest.partition(".")
    other = base64.urlsafe_b64encode(b'{"iss":"%s","aud":"%s","exp":9999999999}' % (ISSUER.encode(), AUDIENCE.encode()))
    return f"{header}.{other.rstrip(b'=').decode()}.{signature}"


now = int(time.time())
CASES: dict[str, Callable[[], str]] = {
    "valid RS256": lambda: sign(claims()),
    "valid PS256": lambda: sign(claims(), "PS256"),
    "valid ES256": lambda: sign(claims(), "ES256"),
    "valid ES384": lambda: sign(claims(), "ES384"),
    "valid EdDSA": lambda: sign(claims(), "EdDSA"),
    "float exp": lambda: sign(claims(exp=now + 600.5)),
    "expired": lambda: sign(claims(exp=now - 120)),
    "expired within leeway": lambda: sign(claims(exp=now - 10)),
    "not yet valid": lambda: sign(claims(nbf=now + 600)),
    "nbf within leeway": lambda: sign(claims(nbf=now + 10)),
    "issued in the future": lambda: sign(claims(iat=now + 600)),
    "exp not a number": lambda: sign(claims(exp="soon")),
    "nbf not a number": lambda: sign(claims(nbf="now")),
    "no exp": lambda: sign(claims(exp=None)),
    "no iss": lambda: sign(claims(iss=None)),
    "no aud": lambda: sign(claims(aud=None)),
    "wrong iss": lambda: sign(claims(iss="https://evil.example")),
    "iss not a string": lambda: jwt.api_jws.encode(
        json.dumps(claims(iss=[ISSUER])).encode(), KEYS["RS256"], algorithm="RS256"
    ),
    "aud list naming us": lambda: sign(claims(aud=["https://other.example", AUDIENCE])),
    "aud list not naming us": lambda: sign(claims(aud=["https://other.example"])),
    "wrong aud": lambda: sign(claims(aud="https://other.example")),
    "aud with a non-string": lambda: sign(claims(aud=[AUDIENCE, 7])),
    "sub not a string": lambda: sign(claims(sub=42)),
    "jti not a string": lambda: sign(claims(jti=42)),
    "padded payload": lambda: pad(sign(claims(scope="a")), 1),
    "padded signature": lambda: pad(sign(claims(), "ES256"), 2),
    "non-canonical signature": lambda: resign_last_char(sign(claims())),
    "tampered payload": lambda: tamper_payload(sign(claims())),
    "signed by another key": lambda: sign(claims(), key=rsa.generate_private_key(public_exponent=65537, key_size=2048)),
    "two segments": lambda: ".".join(sign(claims()).split(".")[:2]),
    "four segments": lambda: sign(claims()) + ".AAAA",
    "payload not an object": lambda: jwt.api_jws.encode(b"[1, 2]", KEYS["RS256"], algorithm="RS256"),
    "payload not JSON": lambda: jwt.api_jws.encode(b"not json", KEYS["RS256"], algorithm="RS256"),
}


def alg_of(token: str) -> str:
    try:
        return str(jwt.get_unverified_header(token)["alg"])
    except jwt.PyJWTError:
        return "RS256"


def pyjwt_accepts(token: str, alg: str) -> bool:
    try:
        jwt.decode(
            token,
            pem(KEYS[alg]),
            algorithms=[alg],
            audience=AUDIENCE,
            issuer=ISSUER,
            leeway=LEEWAY,
            options={"require": ["exp", "iss", "aud"]},
        )
    except jwt.PyJWTError:
        return False
    return True


async def toolkit_accepts(token: str, alg: str) -> bool:
    verifier = JWTVerifier(public_key=pem(KEYS[alg]), issuer=ISSUER, audience=AUDIENCE, algorithms=[alg], leeway=LEEWAY)
    try:
        await verifier.verify(token)
    except InvalidToken:
        return False
    return True


@pytest.mark.parametrize("case", list(CASES))
async def test_the_verifier_decides_as_pyjwt_decode(case: str) -> None:
    token = CASES[case]()
    alg = alg_of(token)
    expected = pyjwt_accepts(token, alg)
    assert await toolkit_accepts(token, alg) is expected, f"{case}: PyJWT {'accepts' if expected else 'refuses'} it"
    if case.startswith("valid"):
        assert expected  # the cases mean what they say


async def test_a_verified_token_gives_its_claims() -> None:
    verifier = JWTVerifier(public_key=pem(KEYS["ES256"]), issuer=[ISSUER, "https://b.example"], audience=AUDIENCE)
    access = await verifier.verify(sign(claims(scope="read write"), "ES256"))
    assert (access.subject, access.client_id, access.scopes) == ("user-1", "client-1", frozenset({"read", "write"}))
    assert access.claims["jti"] == "jti-1"


async def test_a_refused_signature_says_so() -> None:
    verifier = JWTVerifier(public_key=pem(KEYS["RS256"]), issuer=ISSUER, audience=AUDIENCE)
    with pytest.raises(InvalidToken, match="Signature verification failed"):
        await verifier.verify(CASES["tampered payload"]())
    with pytest.raises(InvalidToken, match="Signature has expired"):
        await verifier.verify(CASES["expired"]())


def _reference_decode(segment: str) -> bytes | None:
    """PyJWT's rule, the slow way: decode, then encode again, and the same text must come back."""
    stripped = segment.rstrip("=")
    if (len(segment) != len(stripped) and len(segment) % 4) or len(stripped) % 4 == 1:
        return None
    try:
        decoded = base64.urlsafe_b64decode(stripped + "=" * (-len(stripped) % 4))
    except ValueError:
        return None
    return decoded if base64.urlsafe_b64encode(decoded).rstrip(b"=").decode() == stripped else None


def test_a_segment_decodes_exactly_when_its_encoding_is_canonical() -> None:
    """Every last character after every length of text, padded or not: the same verdict and bytes as
    decoding and encoding again (the check the verifier makes without the second conversion)."""
    alphabet = string.ascii_uppercase + string.ascii_lowercase + string.digits + "-_"
    for size in range(1, 9):
        body = base64.urlsafe_b64encode(bytes(range(100, 100 + size))).rstrip(b"=").decode()
        for last in alphabet:
            for padded in (False, True):
                segment = body[:-1] + last
                if padded:
                    segment += "=" * (-len(segment) % 4)
                expected = _reference_decode(segment)
                try:
                    got: bytes | None = jwt_module._decode_segment(segment, "payload")
                except InvalidToken:
                    got = None
                assert got == expected, segment
