"""The ``Keycloak`` preset, logging in for real: the test rig's oidc-provider served as a realm.

Keycloak serves each realm under ``/realms/<realm>``, its issuer ``{base_url}/realms/<realm>``:
an issuer with a path, unlike Google's. The rig (tests/support/authserver.py) serves oidc-provider
under ``/realms/toolkit`` here (``issuer_path``), with one confidential client for toolkit
registered by the operator, as a Keycloak admin creates one in the realm (Client authentication
on, Standard flow on). ``Keycloak(base_url=<the rig's origin>, realm="toolkit")`` is the preset
as a user writes it, with ``allow_http_loopback=True`` for the rig's http; nothing else is
changed for the test. The MCP client is toolkit's own, through toolkit's consent page, and a tool
calls the realm's userinfo endpoint with the caller's upstream token.

What this does not show: Keycloak's own quirks beyond its URL layout (its ``kc_idp_hint``, its
token contents). Nothing reaches the internet: every URL is on 127.0.0.1.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from tests.http_support import serve
from tests.support.authserver import READY_TIMEOUT, AuthServer, authserver_available, start_authserver
from tests.support.consent_login import ConsentingLogin
from tests.support.oauth_login import query
from tests.support.processes import free_port
from tests.test_auth_real import missing
from tests.test_oauth_presets import logged_in
from tests.test_oauth_proxy import UPSTREAM_CLIENT, expire_upstream, upstream_for_toolkit

from toolkit import Context, Server
from toolkit.auth import Keycloak, OAuthProxy, UpstreamToken
from toolkit.client import Client, OAuth

pytestmark = pytest.mark.timeout(READY_TIMEOUT + 120)

REALM = "toolkit"
REALM_PATH = f"/realms/{REALM}"
TIMEOUT = 60.0


@pytest.fixture(scope="module")
def realm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AuthServer]:
    """oidc-provider under ``/realms/toolkit`` with toolkit's confidential client (a native client:
    its loopback redirect URI matches on any port, and each test serves toolkit on its own)."""
    with upstream_for_toolkit(tmp_path_factory.mktemp("keycloak"), issuer_path=REALM_PATH) as server:
        yield server


def origin(realm: AuthServer) -> str:
    """Where "Keycloak" is served: the rig's scheme, host and port, what ``base_url`` names."""
    parts = urlsplit(realm.issuer)
    return f"{parts.scheme}://{parts.netloc}"


# --- the rig, served as a realm ----------------------------------------------------------------------


def test_the_rig_serves_every_endpoint_under_the_realm_and_nothing_else(realm: AuthServer) -> None:
    base = origin(realm)
    endpoints = ("authorization_endpoint", "token_endpoint", "userinfo_endpoint", "jwks_uri", "registration_endpoint")
    with httpx.Client(timeout=TIMEOUT) as http:
        keys = http.get(realm.jwks_uri)
        outside = [
            http.get(f"{base}{path}").status_code
            for path in (
                "/.well-known/openid-configuration",
                "/realms/.well-known/openid-configuration",
                "/realms/toolkitx/.well-known/openid-configuration",  # a prefix of a segment is not the realm
                "/jwks",
            )
        ]
        realm_root = http.get(realm.issuer)  # the path itself reaches the provider (which has nothing there)

    assert realm.issuer == f"http://127.0.0.1:{realm.port}{REALM_PATH}"
    assert realm.metadata["issuer"] == realm.issuer
    for name in endpoints:
        assert realm.metadata[name].startswith(f"{realm.issuer}/"), (name, realm.metadata[name])
    assert keys.status_code == 200 and keys.json()["keys"]
    assert outside == [404, 404, 404, 404]
    assert realm_root.status_code == 404 and "under /realms/toolkit/" not in realm_root.text  # oidc-provider's 404


def test_a_restart_keeps_the_realm_path(tmp_path: Path) -> None:
    if not authserver_available():
        missing("the test authorization server is not installed: scripts/authserver --install-only installs it")
    with start_authserver(tmp_path, issuer_path="/auth/realms/old-style") as server:  # Keycloak 16 and older
        before = server.issuer
        server.rotate_keys()
        assert server.issuer == before == f"http://127.0.0.1:{server.port}/auth/realms/old-style"
        assert server.metadata["issuer"] == before
        assert server.authorization_endpoint == f"{before}/auth"


@pytest.mark.parametrize("path", ["/realms/", "realms/toolkit", "/realms/../toolkit", "/realms/dev team"])
def test_the_rig_refuses_a_path_it_cannot_serve_as_given(tmp_path: Path, path: str) -> None:
    if not authserver_available():
        missing("the test authorization server is not installed: scripts/authserver --install-only installs it")
    with pytest.raises(AssertionError, match="exited with code 2 before READY") as refused:
        start_authserver(tmp_path, issuer_path=path)
    assert f"--issuer-path {json.dumps(path)} is not /segment" in str(refused.value)


# --- a whole login through the Keycloak preset -------------------------------------------------------


def keycloak_site(realm: AuthServer, port: int) -> tuple[Server, OAuthProxy, Keycloak]:
    """toolkit on ``port`` logging users in at the realm, with a tool calling its userinfo as the caller."""
    keycloak = Keycloak(origin(realm), REALM, *UPSTREAM_CLIENT, allow_http_loopback=True, timeout=TIMEOUT)
    proxy = OAuthProxy(upstream=keycloak, base_url=f"http://127.0.0.1:{port}")
    server = Server("keycloak-demo", auth=proxy)
    userinfo = realm.metadata["userinfo_endpoint"]

    @server.tool
    async def keycloak_me(token: UpstreamToken, ctx: Context) -> dict[str, Any]:
        """Who the realm says the caller is, asked with the caller's own token from the realm."""
        async with httpx.AsyncClient(timeout=TIMEOUT) as http:
            reply = await http.get(userinfo, headers={"authorization": f"Bearer {token}"})
        reply.raise_for_status()
        access = ctx.access_token
        assert access is not None
        return {"subject": access.subject, "upstream": reply.json()["sub"]}

    return server, proxy, keycloak


async def test_toolkit_client_logs_in_at_a_keycloak_realm_and_a_tool_calls_it_as_the_user(realm: AuthServer) -> None:
    port = free_port()
    server, _, keycloak = keycloak_site(realm, port)
    login = ConsentingLogin()
    realm.set_account("carol")
    try:
        async with serve(server, port=port) as running:
            oauth = OAuth(user_agent=login, allow_http_loopback=True, client_name="keycloak-tests")
            async with Client(running.url, auth=oauth, timeout=TIMEOUT) as client:
                result = await client.call_tool("keycloak_me")
            endpoints = await keycloak.metadata()
    finally:
        realm.set_account("alice")

    assert keycloak.issuer == realm.issuer  # the preset's {base_url}/realms/{realm} is the rig's issuer
    assert keycloak.discovery_url == f"{realm.issuer}/.well-known/openid-configuration"
    assert endpoints.authorization_endpoint == f"{realm.issuer}/auth"
    assert endpoints.token_endpoint == f"{realm.issuer}/token"
    assert result.data == {"subject": "carol", "upstream": "carol"}  # the realm answered the token toolkit kept
    (page,) = login.consent_pages
    assert "keycloak-tests" in page and realm.issuer in page  # who asks, and the realm the user will log in at
    (asked,) = [query(url) for url in login.authorizations]
    assert asked["code_challenge_method"] == "S256" and asked["resource"] == running.url


async def test_a_keycloak_upstream_token_is_refreshed_at_the_realm(realm: AuthServer) -> None:
    port = free_port()
    server, proxy, _ = keycloak_site(realm, port)
    async with serve(server, port=port) as running, httpx.AsyncClient(timeout=TIMEOUT) as http:
        access = await logged_in(running.base, proxy)
        first = await proxy.upstream_credentials(access)
        await expire_upstream(proxy, access.claims["gid"])
        refreshed = await proxy.upstream_token(access)  # at the realm's token endpoint, under its path
        userinfo = await http.get(realm.metadata["userinfo_endpoint"], headers={"authorization": f"Bearer {refreshed}"})

    assert access.subject == "alice"
    assert first.refresh_token is not None and refreshed != first.access_token
    assert userinfo.status_code == 200 and userinfo.json()["sub"] == "alice"
