"""toolkit's own requests to a provider and a key set share one TLS context (``_auth/tls.py``) and
still verify certificates: a provider on https with a certificate nobody signed is refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.support.client_http_raw import self_signed, serve_tls

from toolkit._auth.jwt import JWTVerifier
from toolkit._auth.server.upstream import OIDC
from toolkit._auth.tls import shared_tls
from toolkit._auth.tokens import VerifierUnavailable


async def provider(scope: Any, receive: Any, send: Any) -> None:
    """Any GET answered with an (empty) JSON object: the client must never get that far."""
    if scope["type"] != "http":
        return
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": json.dumps({}).encode()})


def test_one_context_is_made_per_process() -> None:
    assert shared_tls(trust_env=False) is shared_tls(trust_env=False)
    assert shared_tls(trust_env=True) is shared_tls(trust_env=True)


async def test_a_provider_whose_certificate_nobody_signed_is_refused(tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path)
    async with serve_tls(provider, cert, key) as base:
        upstream = OIDC(base, client_id="toolkit", client_secret="secret")
        with pytest.raises(VerifierUnavailable, match="CERTIFICATE_VERIFY_FAILED"):
            await upstream.metadata()


async def test_a_key_set_whose_certificate_nobody_signed_is_refused(tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path)
    async with serve_tls(provider, cert, key) as base:
        verifier = JWTVerifier(jwks_uri=f"{base}/jwks", issuer=base, audience="https://mcp.example.com/mcp")
        with pytest.raises(VerifierUnavailable, match="CERTIFICATE_VERIFY_FAILED"):
            await verifier.verify("eyJhbGciOiJSUzI1NiIsImtpZCI6ImsifQ.eyJzdWIiOiJ4In0.c2ln")
