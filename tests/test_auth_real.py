"""Authorization end to end: real MCP OAuth clients, a real authorization server, toolkit between.

The authorization server is oidc-provider (``tests/support/authserver.py``). The clients are the
Python SDK's own OAuth providers, mcp 1.30.0 and mcp 2.3.0, each in its pinned interop venv,
driven by ``interop/drivers/oauth_py.py``: they start with no token, get the 401, find the
protected resource metadata and the authorization server, register, sign in (PKCE, ``resource``)
or use client credentials, and call tools of ``toolkit run tests/support/secure_app.py`` (or of
``secure_app_stepup.py``, whose metadata advertises ``forecast:read`` only, for step-up). The
driver reports every HTTP exchange the client made, so the order of the dance is asserted too.
Introspection and key rotation run an in-process server against the same authorization server.

``scripts/authserver --install-only`` and ``scripts/interop --install-only`` install what this
needs; without them the tests skip, or fail under ``TOOLKIT_TESTS_STRICT=1``.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import re
import runpy
import secrets
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any, NoReturn

import httpx
import pytest
from tests.http_support import LEGACY, MODERN, CliServer, Legacy, McpHttp, Modern, Reply, cli_server, serve
from tests.support.authserver import READY_TIMEOUT, AuthServer, authserver_available, start_authserver
from tests.support.processes import REPO, free_port

from toolkit import Server
from toolkit.auth import IntrospectionVerifier, JWTVerifier

# The usual hang guard, plus the longest the authorization server may take to start.
pytestmark = pytest.mark.timeout(READY_TIMEOUT + 120)

DRIVER = REPO / "interop" / "drivers" / "oauth_py.py"
SECURE_APP = REPO / "tests" / "support" / "secure_app.py"
STEPUP_APP = REPO / "tests" / "support" / "secure_app_stepup.py"
PYTHONS = {"1.30.0": REPO / ".interop/py-mcp130/bin/python", "2.3.0": REPO / ".interop/py-mcp230/bin/python"}
DRIVER_TIMEOUT = 60.0

PARIS = [{"hour": "09:00", "temp": 20.5}, {"hour": "10:00", "temp": 26.0}]
"""secure_app's forecast for Paris."""
ALL_TOOLS = {"forecast", "whoami", "admin_reset"}


def missing(what: str) -> NoReturn:
    if os.environ.get("TOOLKIT_TESTS_STRICT"):  # scripts/test installs every client first
        pytest.fail(what)
    pytest.skip(what)


def python_of(mcp_version: str) -> Path:
    python = PYTHONS[mcp_version]
    if not python.exists():
        missing(f"{python} is missing: scripts/interop --install-only installs the interop clients")
    return python


@pytest.fixture(scope="module")
def auth(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AuthServer]:
    """One authorization server for the module (tests that restart it have their own)."""
    if not authserver_available():
        missing("the test authorization server is not installed: scripts/authserver --install-only installs it")
    with start_authserver(tmp_path_factory.mktemp("auth")) as server:
        yield server


@pytest.fixture(scope="module")
def secure(auth: AuthServer) -> Iterator[CliServer]:
    """``toolkit run secure_app.py`` with JWT authorization from the CLI flags."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    flags = ("--auth-jwks-uri", auth.jwks_uri, "--auth-issuer", auth.issuer, "--resource-url", url)
    with cli_server(SECURE_APP, *flags, port=port) as running:
        yield running


@pytest.fixture(scope="module")
def stepup(auth: AuthServer) -> Iterator[CliServer]:
    """``toolkit run secure_app_stepup.py``: authorization in code, ``scopes_supported: ["forecast:read"]``."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    with pytest.MonkeyPatch.context() as env:  # the server process inherits the environment
        env.setenv("SECURE_APP_ISSUER", auth.issuer)
        env.setenv("SECURE_APP_JWKS_URI", auth.jwks_uri)
        env.setenv("SECURE_APP_RESOURCE", url)
        with cli_server(STEPUP_APP, port=port) as running:
            yield running


# --- driving a client -----------------------------------------------------------------------------


def drive(mcp_version: str, url: str, *args: str, succeed: bool = True) -> dict[str, Any]:
    """Run the OAuth driver under mcp ``mcp_version``: its JSON report (see interop/drivers/oauth_py.py)."""
    command = [str(python_of(mcp_version)), str(DRIVER), "--url", url, *args]
    try:
        done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=DRIVER_TIMEOUT, check=False)
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(f"the driver took over {DRIVER_TIMEOUT:g} s: {command}\nstderr:\n{exc.stderr}") from None
    lines = done.stdout.strip().splitlines()
    assert lines, f"the driver printed nothing (exit {done.returncode}):\n{done.stderr}"
    doc: dict[str, Any] = json.loads(lines[-1])
    doc["stderr"] = done.stderr
    assert doc["library_version"] == mcp_version
    if succeed:
        assert done.returncode == 0, f"the client failed (exit {done.returncode}):\n{done.stderr}"
    else:
        assert done.returncode == 1, f"the client was expected to fail, exit {done.returncode}:\n{done.stderr}"
    return doc


def steps(doc: dict[str, Any]) -> list[tuple[str, str, int | None]]:
    """The client's HTTP exchanges in order: (method, URL, status)."""
    return [(e["method"], e["url"], e.get("status")) for e in doc["http"]]


def call(doc: dict[str, Any], tool: str) -> dict[str, Any]:
    """What the library handed back for the (last) call of ``tool``."""
    entry = [c for c in doc["calls"] if c["tool"] == tool][-1]
    assert entry["ok"], f"{tool}: {entry.get('error')}\n{doc['stderr']}"
    result: dict[str, Any] = entry["result"]
    assert result["isError"] is False, result
    return result


def whoami(doc: dict[str, Any]) -> Any:
    return call(doc, "whoami")["structuredContent"]


def forecast(doc: dict[str, Any]) -> Any:
    """The forecast as a list: the 2026-07-28 era sends it as is, older eras wrap it in ``result``."""
    structured = call(doc, "forecast")["structuredContent"]
    if doc["negotiated_protocol_version"] == MODERN:
        return structured
    assert set(structured) == {"result"}, structured
    return structured["result"]


def challenge(value: str) -> dict[str, str]:
    """The parameters of a ``WWW-Authenticate: Bearer ...`` value."""
    assert value.startswith("Bearer "), value
    return dict(re.findall(r'(\w+)="([^"]*)"', value))


def metadata_url(server: CliServer) -> str:
    return f"{server.base}/.well-known/oauth-protected-resource/mcp"


def assert_unauthenticated_challenge(doc: dict[str, Any], server: CliServer) -> None:
    """The first request carried no token and got the 401 pointing at the metadata, nothing else."""
    first = doc["http"][0]
    assert (first["kind"], first["authorization"], first["status"]) == ("mcp", None, 401)
    assert first["mcp_method"] == ("server/discover" if doc["mode"] == "modern" else "initialize")
    params = challenge(first["www_authenticate"])
    assert params["resource_metadata"] == metadata_url(server)
    assert "error" not in params  # RFC 6750 §3.1: no error code when the request had no token
    assert "scope" not in params  # no server-wide required scopes
    assert doc["mcp_401"] == 1


# --- 1. authorization code + PKCE, 2. client credentials, 3. a second user --------------------------

CLIENTS = [("1.30.0", "legacy"), ("2.3.0", "modern"), ("2.3.0", "legacy")]
CLIENT_IDS = ["mcp1.30-legacy", "mcp2.3-modern", "mcp2.3-legacy"]
ASKED_FOR = {"1.30.0": "admin forecast:read", "2.3.0": "admin forecast:read offline_access"}
"""What each library asks for with no scope in the 401: the metadata's scopes_supported (2.3 adds
offline_access since the authorization server supports it and the client may refresh, SEP-2207)."""


@pytest.mark.parametrize(("mcp_version", "mode"), CLIENTS, ids=CLIENT_IDS)
def test_authorization_code_with_pkce(auth: AuthServer, secure: CliServer, mcp_version: str, mode: str) -> None:
    doc = drive(mcp_version, secure.url, "--flow", "auth_code", "--mode", mode)

    assert doc["negotiated_protocol_version"] == (MODERN if mode == "modern" else LEGACY)
    assert steps(doc)[:6] == [
        ("POST", secure.url, 401),
        ("GET", metadata_url(secure), 200),  # the URL the challenge named
        ("GET", f"{auth.issuer}/.well-known/oauth-authorization-server", 200),
        ("POST", auth.registration_endpoint, 201),
        ("POST", auth.token_endpoint, 200),
        ("POST", secure.url, 200),
    ]
    assert_unauthenticated_challenge(doc, secure)
    assert all(e["authorization"] == "bearer" for e in doc["http"][5:] if e["kind"] == "mcp")

    (authorization,) = doc["authorizations"]
    params = authorization["params"]
    assert authorization["endpoint"] == auth.authorization_endpoint
    assert (params["code_challenge_method"], params["resource"]) == ("S256", secure.url)
    assert params["client_id"] == doc["client"]["client_id"]
    assert params["scope"] == ASKED_FOR[mcp_version]
    assert authorization["callback"]["iss"] == auth.issuer  # RFC 9207, which 2.3 checks
    token_request = doc["http"][4]["form"]
    assert (token_request["grant_type"], token_request["resource"]) == ("authorization_code", secure.url)

    me = whoami(doc)
    assert me == {"subject": "alice", "client_id": doc["client"]["client_id"], "scopes": ["admin", "forecast:read"]}
    assert set(me["scopes"]) == set(params["scope"].split()) - {"offline_access"}  # granted what was asked
    assert doc["token"]["claims"]["aud"] == secure.url
    assert forecast(doc) == PARIS
    assert set(doc["tools"]) == ALL_TOOLS
    assert ("admin_reset" in doc["tools"]) == ("admin" in me["scopes"])


@pytest.mark.parametrize(("mcp_version", "mode"), [CLIENTS[0], CLIENTS[1]], ids=CLIENT_IDS[:2])
def test_client_credentials(auth: AuthServer, secure: CliServer, mcp_version: str, mode: str) -> None:
    flow = ("--flow", "client_credentials", "--mode", mode, "--issuer", auth.issuer, "--scope", "forecast:read")
    doc = drive(mcp_version, secure.url, *flow)

    assert doc["negotiated_protocol_version"] == (MODERN if mode == "modern" else LEGACY)
    assert steps(doc)[:5] == [
        ("POST", secure.url, 401),
        ("GET", metadata_url(secure), 200),
        ("GET", f"{auth.issuer}/.well-known/oauth-authorization-server", 200),
        ("POST", auth.token_endpoint, 200),  # no registration: the client is pre-registered
        ("POST", secure.url, 200),
    ]
    assert_unauthenticated_challenge(doc, secure)
    token_request = doc["http"][3]
    assert token_request["client_auth"] == "client_secret_basic"
    # The provider's own scope ("forecast:read") gives way to the scope selection strategy on a
    # 401 (no scope in the challenge, so the metadata's scopes_supported): both libraries do this.
    assert token_request["form"] == {
        "grant_type": "client_credentials",
        "resource": secure.url,
        "scope": "admin forecast:read",
    }
    assert whoami(doc) == {"subject": "cc-client", "client_id": "cc-client", "scopes": ["admin", "forecast:read"]}
    assert forecast(doc) == PARIS
    assert set(doc["tools"]) == ALL_TOOLS


@pytest.mark.parametrize(("mcp_version", "mode"), [CLIENTS[0], CLIENTS[1]], ids=CLIENT_IDS[:2])
def test_a_second_user_signs_in(auth: AuthServer, secure: CliServer, mcp_version: str, mode: str) -> None:
    auth.set_account("bob")
    try:
        doc = drive(mcp_version, secure.url, "--flow", "auth_code", "--mode", mode)
    finally:
        auth.set_account("alice")
    assert whoami(doc)["subject"] == "bob"
    assert doc["token"]["claims"]["sub"] == "bob"
    assert forecast(doc) == PARIS


# --- 4. step-up: 403 insufficient_scope ---------------------------------------------------------------


@contextlib.asynccontextmanager
async def bearer(url: str, token: str | None) -> AsyncIterator[McpHttp]:
    """A raw MCP client of ``url`` sending ``Authorization: Bearer token`` (or no header) each time."""
    headers = {"authorization": f"Bearer {token}"} if token is not None else {}
    async with httpx.AsyncClient(timeout=10.0, headers=headers) as client:
        yield McpHttp(url, client)


def tool_names(reply: Reply) -> set[str]:
    return {tool["name"] for tool in reply.result["tools"]}


async def test_insufficient_scope_challenge_names_the_missing_scope(auth: AuthServer, stepup: CliServer) -> None:
    """The 403 itself, without a client library in the way (a client-credentials token)."""
    document = httpx.get(metadata_url(stepup)).json()
    assert document["scopes_supported"] == ["forecast:read"]
    token = auth.client_credentials_token(stepup.url, "forecast:read")
    async with bearer(stepup.url, token) as http:
        modern = Modern(http)
        assert tool_names(await modern.request("tools/list")) == {"forecast", "whoami"}
        assert (await modern.call_tool("forecast", {"city": "Paris"})).result["structuredContent"] == PARIS
        refused = await modern.call_tool("admin_reset")
        assert refused.status == 403
        assert challenge(refused.headers["www-authenticate"]) == {
            "error": "insufficient_scope",
            "scope": "admin",
            "resource_metadata": metadata_url(stepup),
            "error_description": "This request needs the scope(s): admin",
        }
        legacy = await Legacy(http).open()
        assert (await legacy.call_tool("admin_reset")).status == 403
    admin = auth.client_credentials_token(stepup.url, "forecast:read admin")
    async with bearer(stepup.url, admin) as http:
        done = await Modern(http).call_tool("admin_reset")
        assert done.status == 200
        assert done.result["content"] == [{"type": "text", "text": "reset done"}]


STEP_UPS = {
    # mcp 1.30 asks for the challenged scope alone, so the next tool that needs the first scope
    # is challenged in turn: three authorizations, the last token without admin.
    "1.30.0": (["forecast:read", "admin", "forecast:read"], ["forecast:read"]),
    # mcp 2.3 asks for the union of what it had and what the challenge names (SEP-2350).
    "2.3.0": (["forecast:read offline_access", "forecast:read offline_access admin"], ["admin", "forecast:read"]),
}
STEP_UPS_CC = {
    "1.30.0": (["forecast:read", "admin", "forecast:read"], ["forecast:read"]),
    "2.3.0": (["forecast:read", "forecast:read admin"], ["admin", "forecast:read"]),
}


@pytest.mark.parametrize("flow", ["auth_code", "client_credentials"])
@pytest.mark.parametrize(("mcp_version", "mode"), [CLIENTS[0], CLIENTS[1]], ids=CLIENT_IDS[:2])
def test_clients_step_up_on_insufficient_scope(
    auth: AuthServer, stepup: CliServer, mcp_version: str, mode: str, flow: str
) -> None:
    """Both libraries re-authorize on the 403 and retry. For the code flow the client is the
    pre-registered ``public-client``: a dynamically registered one is pinned to the scopes it
    registered with (next test)."""
    client = ("--client-id", "public-client") if flow == "auth_code" else ("--issuer", auth.issuer)
    calls = ("--call", "admin_reset", "--call", 'forecast={"city": "Paris"}', "--call", "whoami")
    doc = drive(mcp_version, stepup.url, "--flow", flow, "--mode", mode, *client, *calls)

    assert set(doc["tools"]) == {"forecast", "whoami"}  # listed with the first, forecast:read token
    assert call(doc, "admin_reset")["text"] == ["reset done"]
    assert forecast(doc) == PARIS
    forbidden = [e for e in doc["http"] if e.get("status") == 403]
    assert forbidden, "no 403 was seen"
    assert all(e["kind"] == "mcp" and e["mcp_method"] == "tools/call" for e in forbidden)
    first = challenge(forbidden[0]["www_authenticate"])
    assert (first["error"], first["scope"]) == ("insufficient_scope", "admin")
    assert first["resource_metadata"] == metadata_url(stepup)

    if flow == "auth_code":
        asked = [a["params"]["scope"] for a in doc["authorizations"]]
        assert all(a["params"]["resource"] == stepup.url for a in doc["authorizations"])
    else:
        asked = [e["form"]["scope"] for e in doc["http"] if e["kind"] == "token"]
    expected_asked, final_scopes = (STEP_UPS if flow == "auth_code" else STEP_UPS_CC)[mcp_version]
    assert asked == expected_asked
    assert doc["mcp_403"] == len(asked) - 1
    assert whoami(doc)["scopes"] == final_scopes
    # A step-up reuses the metadata found on the 401: the well-known documents are read once.
    assert [e["url"] for e in doc["http"] if e["kind"] == "well-known"] == [
        metadata_url(stepup),
        f"{auth.issuer}/.well-known/oauth-authorization-server",
    ]


@pytest.mark.parametrize(("mcp_version", "mode"), [CLIENTS[0], CLIENTS[1]], ids=CLIENT_IDS[:2])
def test_step_up_of_a_dynamically_registered_client_is_refused_by_the_authorization_server(
    auth: AuthServer, stepup: CliServer, mcp_version: str, mode: str
) -> None:
    """Not toolkit's doing, recorded so it is known: both libraries register with the scope they
    first ask for (here scopes_supported, ``forecast:read``), and oidc-provider holds a client to
    its registered ``scope`` (RFC 7591 §2: the scopes it "can use"), so the step-up authorization
    comes back ``invalid_scope`` and the call fails."""
    doc = drive(mcp_version, stepup.url, "--flow", "auth_code", "--mode", mode, "--call", "admin_reset", succeed=False)
    assert doc["client"]["scope"].split()[0] == "forecast:read"
    assert doc["mcp_403"] == 1
    first, second = doc["authorizations"]
    assert first["callback"]["error"] is None
    assert second["callback"]["error"] == "invalid_scope"
    assert "admin" in second["params"]["scope"].split()
    assert [c["ok"] for c in doc["calls"]] == [None]  # the session ended with the OAuth error
    assert "invalid_scope" in doc["stderr"]


# --- 5. introspection, 6. key rotation (in-process servers) -----------------------------------------------


def secure_weather() -> Server:
    """A fresh copy of secure_app's server (its tools), without authorization yet."""
    server: Server = runpy.run_path(str(SECURE_APP), run_name="secure_app_copy")["server"]
    return server


def kid_of(token: str) -> str:
    header, _, _ = token.partition(".")
    kid: str = json.loads(base64.urlsafe_b64decode(header + "=" * (-len(header) % 4)))["kid"]
    return kid


async def forecast_status(url: str, token: str) -> tuple[int, dict[str, str]]:
    """The HTTP status of a modern forecast call with ``token``, and its challenge if refused."""
    async with bearer(url, token) as http:
        reply = await Modern(http).call_tool("forecast", {"city": "Paris"})
    if reply.status == 200:
        assert reply.result["structuredContent"] == PARIS
        return 200, {}
    return reply.status, challenge(reply.headers["www-authenticate"])


async def test_introspection_with_the_real_authorization_server(auth: AuthServer) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    server = secure_weather()
    verifier = IntrospectionVerifier(
        auth.introspection_endpoint, client_id="resource-server", client_secret="rs-secret", audience=url
    )
    server.set_auth(verifier, authorization_servers=[auth.issuer], resource_url=url)
    opaque = auth.client_credentials_token(
        url, "forecast:read", client_id="opaque-client", client_secret="opaque-secret"
    )
    assert "." not in opaque
    async with serve(server, port=port):  # its shutdown closes the verifier's HTTP client
        assert await forecast_status(url, opaque) == (200, {})
        async with bearer(url, opaque) as http:
            me = (await Modern(http).call_tool("whoami")).result["structuredContent"]
            # oidc-provider's introspection answer has no sub for a client-credentials token
            assert me == {"subject": None, "client_id": "opaque-client", "scopes": ["forecast:read"]}
            legacy = await Legacy(http).open()
            assert (await legacy.call_tool("admin_reset")).status == 403

        status, params = await forecast_status(url, secrets.token_urlsafe(32))
        assert status == 401
        assert params["error"] == "invalid_token"
        assert params["resource_metadata"] == f"http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp"

        elsewhere = f"http://localhost:{port}/other"  # a real token, for another resource
        foreign = auth.client_credentials_token(elsewhere, "forecast:read", "opaque-client", "opaque-secret")
        assert (await forecast_status(url, foreign))[0] == 401

        jwt_token = auth.client_credentials_token(url, "forecast:read")  # a JWT: this server introspects opaque ones
        status, params = await forecast_status(url, jwt_token)
        assert (status, params["error"]) == (401, "invalid_token")  # not 503: retrying would not help


@pytest.fixture
def own_auth(tmp_path: Path) -> Iterator[AuthServer]:
    """An authorization server for this test alone (it gets restarted)."""
    if not authserver_available():
        missing("the test authorization server is not installed: scripts/authserver --install-only installs it")
    with start_authserver(tmp_path) as server:
        yield server


async def test_key_rotation_at_the_real_authorization_server(own_auth: AuthServer) -> None:
    auth = own_auth
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    server = secure_weather()
    verifier = JWTVerifier(jwks_uri=auth.jwks_uri, issuer=auth.issuer, audience=url, jwks_refetch_interval=0.0)
    server.set_auth(verifier, authorization_servers=[auth.issuer], resource_url=url)
    async with serve(server, port=port):
        first = auth.client_credentials_token(url, "forecast:read")
        assert await forecast_status(url, first) == (200, {})

        auth.rotate_keys(keep_old=True)  # a new signing key; the old one still published
        second = auth.client_credentials_token(url, "forecast:read")
        assert kid_of(second) != kid_of(first)
        assert await forecast_status(url, second) == (200, {})  # an unknown kid: the key set is refetched
        assert await forecast_status(url, first) == (200, {})

        auth.rotate_keys(keep_old=False)  # the old keys withdrawn
        third = auth.client_credentials_token(url, "forecast:read")
        assert kid_of(third) not in (kid_of(first), kid_of(second))
        assert await forecast_status(url, third) == (200, {})
        status, params = await forecast_status(url, first)
        assert (status, params["error"]) == (401, "invalid_token")
        assert (await forecast_status(url, second))[0] == 401
