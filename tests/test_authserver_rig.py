"""The test authorization server itself (tests/support/authserver.py): what the OAuth tests rely on."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import secrets
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest
from tests.support import authserver as rig
from tests.support.authserver import READY_TIMEOUT, AuthServer, authserver_available, start_authserver

# The usual hang guard, plus the longest the authorization server may take to start.
pytestmark = pytest.mark.timeout(READY_TIMEOUT + 120)

RESOURCE = "http://127.0.0.1:9/mcp"


def require_authserver() -> None:
    if not authserver_available():
        missing = "the test authorization server is not installed: scripts/authserver --install-only installs it"
        if os.environ.get("TOOLKIT_TESTS_STRICT"):  # scripts/test installs every client first
            pytest.fail(missing)
        pytest.skip(missing)


@pytest.fixture
def auth(tmp_path: Path) -> Iterator[AuthServer]:
    require_authserver()
    with start_authserver(tmp_path) as server:
        yield server


def decode(token: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The JWT's header and claims, unverified."""
    header, claims = (
        json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))) for part in token.split(".")[:2]
    )
    return header, claims


def kids(auth: AuthServer) -> list[str]:
    return [key["kid"] for key in httpx.get(auth.jwks_uri).json()["keys"]]


def test_runs_on_the_pinned_node_22_and_logs_its_startup_steps(auth: AuthServer) -> None:
    assert auth.issuer == f"http://127.0.0.1:{auth.port}"
    assert f"{rig.NODE} {rig.SERVER} --port 0 " in auth.stderr  # the kernel picked the port
    assert "authserver: node v22." in auth.stderr
    for step in ("oidc-provider loaded", f"listening on 127.0.0.1:{auth.port}", "signing keys ready, 1 in keys.json"):
        assert f"authserver: {step} (" in auth.stderr
    assert auth.stdout == f"READY {auth.issuer}\n"


def test_a_start_that_fails_says_why_with_nodes_output(tmp_path: Path) -> None:
    require_authserver()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        server = AuthServer(tmp_path)
        server.port = taken.getsockname()[1]  # what a restart asks for; here something else holds it
        with pytest.raises(AssertionError, match="exited with code 1 before READY") as failed:
            server.start()
    assert f"authserver: cannot listen on 127.0.0.1:{server.port}: listen EADDRINUSE" in str(failed.value)
    assert "authserver: node v22." in str(failed.value)


def test_a_start_past_its_deadline_reports_progress_and_fails_with_nodes_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    require_authserver()
    stuck = tmp_path / "stuck.mjs"
    stuck.write_text("setInterval(() => {}, 1000);\n")  # never prints READY
    monkeypatch.setattr(rig, "SERVER", stuck)
    monkeypatch.setattr(rig, "PROGRESS_EVERY", 0.0)
    server = AuthServer(tmp_path, timeout=0.0)
    with pytest.raises(AssertionError, match=r"not ready after \d+\.\d s") as failed:
        server.start()
    assert f"--- node's stderr (this and earlier starts):\nauthserver: starting {rig.NODE} {stuck}" in str(failed.value)
    assert "authserver: still waiting for READY on node's stdout (pid " in capsys.readouterr().err
    server.stop()  # already stopped by the failed start: a second stop is harmless


def test_discovery_advertises_pkce_s256_and_iss_in_responses(auth: AuthServer) -> None:
    oauth = httpx.get(f"{auth.issuer}/.well-known/oauth-authorization-server").json()
    assert oauth == auth.metadata
    assert oauth["issuer"] == auth.issuer
    assert oauth["code_challenge_methods_supported"] == ["S256"]
    assert oauth["authorization_response_iss_parameter_supported"] is True
    assert oauth["response_types_supported"] == ["code"]
    assert {"authorization_code", "client_credentials", "refresh_token"} <= set(oauth["grant_types_supported"])


def test_client_credentials_gives_a_resource_bound_jwt(auth: AuthServer) -> None:
    header, claims = decode(auth.client_credentials_token(RESOURCE, "forecast:read admin"))
    assert header["alg"] == "RS256"
    assert header["typ"] == "at+jwt"
    assert header["kid"] in kids(auth)
    assert set(claims) == {"jti", "sub", "iat", "exp", "scope", "client_id", "iss", "aud"}
    assert claims["aud"] == RESOURCE
    assert claims["scope"] == "forecast:read admin"
    assert claims["client_id"] == claims["sub"] == "cc-client"
    assert claims["iss"] == auth.issuer
    assert claims["exp"] - claims["iat"] == 300

    form = {"grant_type": "client_credentials", "resource": RESOURCE, "scope": "admin"}
    posted = httpx.post(auth.token_endpoint, data=form | {"client_id": "cc-client-2", "client_secret": "cc-secret-2"})
    other = decode(posted.json()["access_token"])[1]  # client_secret_post works as well as basic
    assert (other["sub"], other["scope"]) == ("cc-client-2", "admin")
    with pytest.raises(AssertionError, match="invalid_target"):
        auth.client_credentials_token("https://example.com/mcp")


def test_opaque_tokens_introspect(auth: AuthServer) -> None:
    token = auth.client_credentials_token(RESOURCE, "forecast:read", "opaque-client", "opaque-secret")
    assert "." not in token
    answer = auth.introspect(token)
    assert answer["active"] is True
    assert (answer["scope"], answer["aud"], answer["client_id"]) == ("forecast:read", RESOURCE, "opaque-client")
    assert answer["iss"] == auth.issuer
    assert auth.introspect("not-a-token") == {"active": False}
    with pytest.raises(httpx.HTTPStatusError):  # oidc-provider does not introspect its JWT access tokens
        auth.introspect(auth.client_credentials_token(RESOURCE, "forecast:read"))


@pytest.mark.parametrize(
    "registration",
    [
        {"token_endpoint_auth_method": "client_secret_post"},  # application_type web, the default
        {"token_endpoint_auth_method": "none", "application_type": "native"},  # what mcp 2.x registers
    ],
)
def test_registration_then_code_with_pkce_and_resource(auth: AuthServer, registration: dict[str, str]) -> None:
    redirect_uri = "http://localhost:3030/callback"
    registered = httpx.post(
        auth.registration_endpoint,
        json={
            "redirect_uris": [redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "client_name": "rig",
            "scope": "forecast:read mcp:tools",
            **registration,
        },
    )
    assert registered.status_code == 201, registered.text
    client = registered.json()
    credentials = {"client_id": client["client_id"]} | (
        {"client_secret": client["client_secret"]} if "client_secret" in client else {}
    )

    def sign_in() -> dict[str, Any]:
        verifier = secrets.token_urlsafe(48)
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        query = {
            "response_type": "code",
            "client_id": client["client_id"],
            "redirect_uri": redirect_uri,
            "scope": "forecast:read",
            "state": "xyz",
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "resource": RESOURCE,
        }
        code, state, iss = auth.authorize_headless(f"{auth.authorization_endpoint}?{urlencode(query)}", redirect_uri)
        assert (state, iss) == ("xyz", auth.issuer)
        form = {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri}
        form |= {"code_verifier": verifier, "resource": RESOURCE} | credentials
        tokens = httpx.post(auth.token_endpoint, data=form).json()
        assert tokens["refresh_token"]
        header, claims = decode(tokens["access_token"])
        assert header["typ"] == "at+jwt"
        assert (claims["aud"], claims["scope"], claims["client_id"]) == (RESOURCE, "forecast:read", client["client_id"])
        return claims

    assert sign_in()["sub"] == "alice"
    auth.set_account("bob")
    assert sign_in()["sub"] == "bob"

    without_pkce = (
        f"{auth.authorization_endpoint}?{urlencode({'response_type': 'code', 'client_id': client['client_id']})}"
    )
    with pytest.raises(AssertionError, match="requires PKCE"):
        auth.authorize_headless(without_pkce, redirect_uri)


def test_rotate_keys_signs_with_the_new_key(auth: AuthServer) -> None:
    (first,) = kids(auth)
    issuer = auth.issuer
    auth.rotate_keys()
    assert auth.issuer == issuer  # the restart listens on the same port
    second, kept = kids(auth)
    assert (kept, second != first) == (first, True)
    assert decode(auth.client_credentials_token(RESOURCE))[0]["kid"] == second
    auth.rotate_keys(keep_old=False)
    (third,) = kids(auth)
    assert third not in (first, second)
    assert decode(auth.client_credentials_token(RESOURCE))[0]["kid"] == third
