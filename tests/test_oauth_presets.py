"""The identity provider presets: Google, Entra, Auth0, Keycloak (OpenID Connect) and GitHub (not).

What each builds from what a provider's console shows is checked as values (issuer, discovery
URL, authorization parameters). The logins run through ``OAuthProxy`` with real parts:

- ``Google`` against the test rig's oidc-provider (tests/test_oauth_proxy.py's ``idp``), through
  the preset's one test-only argument, ``issuer=`` (Google's own issuer cannot be served here);
  everything else is the preset's: its scopes, ``access_type=offline`` and ``prompt=consent``,
  the refresh they earn.
- ``GitHub`` against a stand-in of GitHub's three documented endpoints
  (tests/support/github_standin.py), reached the way GitHub Enterprise Server is (``base_url=``),
  with toolkit's own MCP client.
- ``Entra`` against a stand-in of Entra's documented v2.0 endpoints
  (tests/support/entra_standin.py), reached the way a national cloud is (``authority=``): the
  ``{tenantid}`` issuer of ``common``/``organizations`` and ID tokens signed for one tenant or
  another.

Nothing reaches the internet: every URL is on 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from tests.http_support import Running, serve
from tests.support.authserver import READY_TIMEOUT, AuthServer
from tests.support.consent_login import ConsentingLogin
from tests.support.entra_standin import CONSUMERS, TENANT_A, TENANT_B, EntraStandIn
from tests.support.github_standin import GitHubStandIn
from tests.support.oauth_login import query
from tests.support.processes import free_port
from tests.support.proxy_flow import ProxyFlow, new_verifier
from tests.test_oauth_proxy import UPSTREAM_CLIENT, expire_upstream, idp

from toolkit import Context, Server
from toolkit._auth.oauth import InsecureURL, MetadataRefused, Token, TokenRequestFailed
from toolkit.auth import (
    OIDC,
    AccessToken,
    Auth0,
    Entra,
    GitHub,
    Google,
    InvalidToken,
    Keycloak,
    OAuthProxy,
    UpstreamLoginRequired,
    UpstreamToken,
)
from toolkit.client import Client, OAuth

pytestmark = pytest.mark.timeout(READY_TIMEOUT + 120)
__all__ = ["idp"]  # the rig's upstream, shared with test_oauth_proxy

TIMEOUT = 60.0
PARAMS = {
    "redirect_uri": "https://mcp.example.com/authorize/callback",
    "state": "s",
    "code_challenge": "c",
    "nonce": "n",
}


# --- what each preset builds --------------------------------------------------------------------


def test_google_asks_for_a_refresh_token_at_every_login() -> None:
    google = Google("id.apps.googleusercontent.com", "secret")
    asked = google.authorization_parameters(**PARAMS)

    assert google.issuer == "https://accounts.google.com"
    assert google.discovery_url == "https://accounts.google.com/.well-known/openid-configuration"
    assert asked["access_type"] == "offline" and asked["prompt"] == "consent"
    assert asked["scope"] == "openid profile email" and asked["client_id"] == "id.apps.googleusercontent.com"
    assert set(google.id_token_issuers) == {"https://accounts.google.com", "accounts.google.com"}
    online = Google("id", "secret", offline=False, authorization_params={"hd": "example.com"})
    assert "access_type" not in online.authorization_parameters(**PARAMS)
    assert online.authorization_parameters(**PARAMS)["hd"] == "example.com"


def test_entra_builds_its_issuer_from_the_tenant() -> None:
    common = Entra("app-id", "secret")
    single = Entra("app-id", "secret", tenant=TENANT_A.upper())
    gov = Entra("app-id", "secret", tenant="organizations", authority="https://login.microsoftonline.us")

    assert common.issuer == "https://login.microsoftonline.com/common/v2.0"
    assert common.discovery_url == "https://login.microsoftonline.com/common/v2.0/.well-known/openid-configuration"
    assert single.issuer == f"https://login.microsoftonline.com/{TENANT_A}/v2.0"
    assert gov.discovery_url == "https://login.microsoftonline.us/organizations/v2.0/.well-known/openid-configuration"
    assert common.scopes == ("openid", "profile", "email", "offline_access", "User.Read")
    assert common.authorization_parameters(**PARAMS)["scope"] == "openid profile email offline_access User.Read"
    assert common.issuer_of(TENANT_B) == f"https://login.microsoftonline.com/{TENANT_B}/v2.0"


@pytest.mark.parametrize(
    ("options", "refused"),
    [
        ({"tenant": "common/../evil"}, "tenant"),
        ({"tenant": ""}, "tenant"),
        ({"tenant": TENANT_A, "tenants": [TENANT_B]}, "tenants"),
        ({"tenant": "common", "tenants": ["contoso.onmicrosoft.com"]}, "tenants"),
    ],
)
def test_entra_refuses_a_tenant_it_cannot_check(options: dict[str, Any], refused: str) -> None:
    with pytest.raises(ValueError, match=refused):
        Entra("app-id", "secret", **options)
    with pytest.raises(InsecureURL, match="must use https"):
        Entra("app-id", "secret", authority="http://login.example.com")


def test_auth0_issuer_keeps_its_trailing_slash_and_asks_for_the_audience() -> None:
    auth0 = Auth0("example.us.auth0.com", "client", "secret", audience="https://api.example.com")

    assert auth0.issuer == "https://example.us.auth0.com/"  # iss is compared as a string: the slash matters
    assert auth0.discovery_url == "https://example.us.auth0.com/.well-known/openid-configuration"
    asked = auth0.authorization_parameters(**PARAMS)
    assert asked["audience"] == "https://api.example.com"
    assert asked["scope"] == "openid profile email offline_access"
    assert "audience" not in Auth0("example.us.auth0.com", "client", "secret").authorization_parameters(**PARAMS)


@pytest.mark.parametrize("domain", ["https://example.us.auth0.com", "example.us.auth0.com/", "", "a b.auth0.com"])
def test_auth0_wants_the_domain_alone(domain: str) -> None:
    with pytest.raises(ValueError, match="domain alone"):
        Auth0(domain, "client", "secret")


def test_keycloak_issuer_is_the_realm() -> None:
    keycloak = Keycloak("https://sso.example.com/", "staff", "mcp", "secret")
    local = Keycloak("http://localhost:8080", "dev team", "mcp", "secret", allow_http_loopback=True)

    assert keycloak.issuer == "https://sso.example.com/realms/staff"
    assert keycloak.discovery_url == "https://sso.example.com/realms/staff/.well-known/openid-configuration"
    assert local.issuer == "http://localhost:8080/realms/dev%20team"
    assert keycloak.authorization_parameters(**PARAMS)["scope"] == "openid profile email"
    with pytest.raises(InsecureURL, match="allow_http_loopback"):
        Keycloak("http://localhost:8080", "dev", "mcp", "secret")
    with pytest.raises(ValueError, match="realm"):
        Keycloak("https://sso.example.com", "", "mcp", "secret")


def test_github_has_fixed_endpoints_and_no_openid() -> None:
    github = GitHub("Iv1.abc", "secret")
    enterprise = GitHub("Iv1.abc", "secret", base_url="https://github.example.com/", scopes=["repo"])
    asked = github.authorization_parameters(**PARAMS)

    assert github.issuer == "https://github.com" and github.user_url == "https://api.github.com/user"
    assert enterprise.issuer == "https://github.example.com"
    assert enterprise.user_url == "https://github.example.com/api/v3/user"
    assert asked == {
        "client_id": "Iv1.abc",
        "redirect_uri": PARAMS["redirect_uri"],
        "scope": "read:user user:email",
        "state": "s",
        "code_challenge": "c",
        "code_challenge_method": "S256",
    }
    assert enterprise.scopes == ("repo",)  # no openid: GitHub is not OpenID Connect


async def test_github_endpoints_are_known_without_a_request() -> None:
    endpoints = await GitHub("Iv1.abc", "secret", base_url="https://github.example.com").metadata()
    assert endpoints.authorization_endpoint == "https://github.example.com/login/oauth/authorize"
    assert endpoints.token_endpoint == "https://github.example.com/login/oauth/access_token"
    assert endpoints.authorization_response_iss_parameter_supported is False


@pytest.mark.parametrize("name", ["state", "scope", "redirect_uri", "code_challenge_method", "nonce"])
def test_authorization_params_cannot_change_the_flow(name: str) -> None:
    with pytest.raises(ValueError, match="set by toolkit itself"):
        OIDC("https://idp.example.com", "client", "secret", authorization_params={name: "x"})
    with pytest.raises(ValueError, match="set by toolkit itself"):
        Google("client", "secret", authorization_params={name: "x"})


def test_scopes_as_one_string_are_refused() -> None:
    with pytest.raises(TypeError, match="list of scopes"):
        Keycloak("https://sso.example.com", "staff", "mcp", "secret", scopes="openid email")  # type: ignore[arg-type]


def test_every_preset_is_an_upstream_of_the_proxy() -> None:
    for upstream in (
        Google("c", "s"),
        Entra("c", "s"),
        Auth0("example.auth0.com", "c", "s"),
        Keycloak("https://sso.example.com", "r", "c", "s"),
        GitHub("c", "s"),
    ):
        proxy = OAuthProxy(upstream=upstream, base_url="https://mcp.example.com")
        assert proxy.upstream is upstream


# --- one login, by hand (tests/support/proxy_flow.py) ----------------------------------------------


async def log_in(base: str) -> dict[str, str]:
    """One whole login through toolkit at ``base``: what reaches the client's redirect URI."""
    async with httpx.AsyncClient(timeout=TIMEOUT) as http:
        flow = ProxyFlow(base, http)
        try:
            client = await flow.register()
            reply = await flow.answer_consent(await flow.consent_page(client, new_verifier()))
            return await flow.follow(reply, client.redirect_uri)
        finally:
            await flow.aclose()


async def logged_in(base: str, proxy: OAuthProxy) -> AccessToken:
    """One whole login, its code exchanged: toolkit's access token, verified."""
    async with httpx.AsyncClient(timeout=TIMEOUT) as http:
        flow = ProxyFlow(base, http)
        try:
            tokens = await flow.tokens(await flow.register())
        finally:
            await flow.aclose()
    return await proxy.verify(tokens["access_token"])


# --- Google, logging in at the rig's oidc-provider ---------------------------------------------------


async def test_a_login_through_the_google_preset_keeps_a_refreshable_upstream_token(idp: AuthServer) -> None:
    port = free_port()
    google = Google(*UPSTREAM_CLIENT, issuer=idp.issuer, allow_http_loopback=True)
    proxy = OAuthProxy(upstream=google, base_url=f"http://127.0.0.1:{port}")
    async with serve(Server("google-demo", auth=proxy), port=port) as running, httpx.AsyncClient() as http:
        flow = ProxyFlow(running.base, http)
        client = await flow.register()
        verifier = new_verifier()
        consent = await flow.answer_consent(await flow.consent_page(client, verifier))
        upstream_asked = query(consent.headers["location"])  # where the browser goes: the provider
        landed = await flow.follow(consent, client.redirect_uri)
        reply = await flow.exchange(client, landed["code"], verifier)
        await flow.aclose()
        access = await proxy.verify(reply.json()["access_token"])
        first = await proxy.upstream_credentials(access)
        await expire_upstream(proxy, access.claims["gid"])
        refreshed = await proxy.upstream_token(access)  # with the refresh token offline access earned
        userinfo = await http.get(idp.metadata["userinfo_endpoint"], headers={"authorization": f"Bearer {refreshed}"})

    assert upstream_asked["access_type"] == "offline" and upstream_asked["prompt"] == "consent"
    assert upstream_asked["scope"] == "openid profile email"
    assert upstream_asked["client_id"] == UPSTREAM_CLIENT[0] and upstream_asked["code_challenge_method"] == "S256"
    assert access.subject == "alice"
    assert first.refresh_token is not None
    assert refreshed != first.access_token
    assert userinfo.status_code == 200 and userinfo.json()["sub"] == "alice"


# --- GitHub, against the stand-in --------------------------------------------------------------------


@dataclass
class GitHubSite:
    base: str
    proxy: OAuthProxy
    github: GitHub
    standin: GitHubStandIn
    running: Running


@contextlib.asynccontextmanager
async def github_site(*, expiring: bool = False) -> AsyncIterator[GitHubSite]:
    """toolkit with ``GitHub(base_url=<stand-in>)`` and a tool calling the stand-in's ``/user`` as the caller."""
    port = free_port()
    standin = GitHubStandIn(redirect_uri=f"http://127.0.0.1:{port}/authorize/callback", expiring=expiring)
    async with serve(standin.app()) as github:
        upstream = GitHub(
            standin.client_id, standin.client_secret, base_url=github.base, allow_http_loopback=True, timeout=TIMEOUT
        )
        proxy = OAuthProxy(upstream=upstream, base_url=f"http://127.0.0.1:{port}")
        server = Server("github-demo", auth=proxy)

        @server.tool
        async def github_me(token: UpstreamToken, ctx: Context) -> dict[str, Any]:
            """Who GitHub says the caller is, asked with the caller's own GitHub token."""
            async with httpx.AsyncClient(timeout=TIMEOUT) as http:
                reply = await http.get(upstream.user_url, headers={"authorization": f"Bearer {token}"})
            reply.raise_for_status()
            access = ctx.access_token
            assert access is not None
            return {"subject": access.subject, "login": reply.json()["login"]}

        async with serve(server, port=port) as running:
            yield GitHubSite(running.base, proxy, upstream, standin, running)


async def test_toolkit_client_logs_in_with_github_and_a_tool_calls_the_api_as_the_user() -> None:
    login = ConsentingLogin()
    async with github_site() as site:
        oauth = OAuth(user_agent=login, allow_http_loopback=True, client_name="github-tests")
        async with Client(site.running.url, auth=oauth, timeout=TIMEOUT) as client:
            result = await client.call_tool("github_me")
        standin = site.standin

    assert result.data == {"subject": "583231", "login": "octocat"}  # the account id, not the renamable login
    (page,) = login.consent_pages
    assert "github-tests" in page and site.github.issuer in page  # who asks, and where the user will log in
    (token_request,) = [seen for seen in standin.requests if seen["path"] == "/login/oauth/access_token"]
    assert token_request["accept"] == "application/json"  # else GitHub answers form-encoded
    assert [seen["path"] for seen in standin.requests].count("/api/v3/user") == 2  # who logged in; the tool


async def test_a_github_oauth_app_token_is_kept_as_it_is() -> None:
    async with github_site() as site:
        access = await logged_in(site.base, site.proxy)
        upstream = await site.proxy.upstream_credentials(access)
        again = await site.proxy.upstream_token(access)

    assert upstream.access_token.startswith("gho_") and again == upstream.access_token
    assert upstream.expires_at is None and upstream.refresh_token is None  # never expires, never refreshed
    assert upstream.scopes == ("read:user", "user:email")  # GitHub's comma-separated scope, read


async def test_an_expiring_github_app_token_is_refreshed() -> None:
    async with github_site(expiring=True) as site, httpx.AsyncClient(timeout=TIMEOUT) as http:
        access = await logged_in(site.base, site.proxy)
        first = await site.proxy.upstream_credentials(access)
        await expire_upstream(site.proxy, access.claims["gid"])
        second = await site.proxy.upstream_credentials(access)
        me = await http.get(site.github.user_url, headers={"authorization": f"Bearer {second.access_token}"})
        await expire_upstream(site.proxy, access.claims["gid"], refresh_token=first.refresh_token)
        with pytest.raises(UpstreamLoginRequired, match="bad_refresh_token"):
            await site.proxy.upstream_token(access)  # the spent one: GitHub's 200-with-error answer

    assert first.access_token.startswith("ghu_") and first.refresh_token is not None
    assert first.expires_at is not None and first.expires_at > time.time() + 7 * 3600
    assert second.access_token != first.access_token and second.refresh_token != first.refresh_token
    assert me.status_code == 200 and me.json()["id"] == 583231


async def test_githubs_200_with_an_error_is_an_error() -> None:
    async with github_site() as site:
        github = site.github
        with pytest.raises(TokenRequestFailed, match="bad_verification_code"):
            await github.exchange("made-up", redirect_uri=site.standin.redirect_uri, code_verifier=new_verifier())
        wrong = GitHub("Iv1.standin", "not-the-secret", base_url=github.issuer, allow_http_loopback=True)
        with pytest.raises(TokenRequestFailed, match="incorrect_client_credentials"):
            await wrong.exchange("made-up", redirect_uri=site.standin.redirect_uri, code_verifier=new_verifier())


async def test_a_refused_github_code_goes_back_to_the_client_as_an_error() -> None:
    async with github_site() as site, httpx.AsyncClient(timeout=TIMEOUT) as http:
        flow = ProxyFlow(site.base, http)
        client = await flow.register()
        callback = await flow.upstream_callback(client, new_verifier())
        code = query(callback)["code"]
        forged = callback.replace(f"code={code}", "code=0123456789abcdef0123")  # a code GitHub never gave
        reply = await flow.browser.get(forged)
        await flow.aclose()

    answer = query(reply.headers["location"])
    assert reply.status_code == 303 and answer["error"] == "server_error" and "code" not in answer
    assert answer["state"] == "client-state"


async def test_a_mixed_up_github_state_gets_no_code() -> None:
    """Two logins in one browser; GitHub's answer to the first is delivered with the second's state."""
    async with github_site() as site, httpx.AsyncClient(timeout=TIMEOUT) as http:
        flow = ProxyFlow(site.base, http)
        client = await flow.register()
        first = await flow.upstream_callback(client, new_verifier())
        second = await flow.upstream_callback(client, new_verifier())
        mixed = first.replace(f"state={query(first)['state']}", f"state={query(second)['state']}")
        crossed = await flow.browser.get(mixed)  # the second login's record, the first login's code
        unknown = await flow.browser.get(first.replace(f"state={query(first)['state']}", "state=made-up"))
        replayed = await flow.browser.get(mixed)
        await flow.aclose()

    answer = query(crossed.headers["location"])
    assert answer["error"] == "server_error" and "code" not in answer  # the code is bound to its PKCE verifier
    assert unknown.status_code == 400 and "location" not in unknown.headers
    assert replayed.status_code == 400  # that state is spent


async def test_a_github_user_id_that_is_not_a_number_is_refused() -> None:
    async with github_site() as site:
        site.standin.account.id = "583231"  # type: ignore[assignment]
        landed = await log_in(site.base)
    assert landed["error"] == "server_error" and "code" not in landed


# --- Entra, against the stand-in ---------------------------------------------------------------------


@dataclass
class EntraSite:
    base: str
    proxy: OAuthProxy
    standin: EntraStandIn


@contextlib.asynccontextmanager
async def entra_site(**options: Any) -> AsyncIterator[EntraSite]:
    port = free_port()
    standin = EntraStandIn(redirect_uri=f"http://127.0.0.1:{port}/authorize/callback")
    async with serve(standin.app()) as entra:
        standin.base = entra.base
        upstream = Entra(
            standin.client_id,
            standin.client_secret,
            authority=entra.base,
            allow_http_loopback=True,
            timeout=TIMEOUT,
            **options,
        )
        proxy = OAuthProxy(upstream=upstream, base_url=f"http://127.0.0.1:{port}")
        async with serve(Server("entra-demo", auth=proxy), port=port) as running:
            yield EntraSite(running.base, proxy, standin)


@pytest.mark.parametrize(
    ("options", "user_tenant", "logs_in"),
    [
        ({"tenant": "common"}, TENANT_A, True),
        ({"tenant": "common"}, CONSUMERS, True),  # personal accounts are in "common"
        ({"tenant": "organizations"}, TENANT_B, True),
        ({"tenant": "organizations"}, CONSUMERS, False),
        ({"tenant": "common", "tenants": [TENANT_A]}, TENANT_A, True),
        ({"tenant": "common", "tenants": [TENANT_A]}, TENANT_B, False),
        ({"tenant": TENANT_A}, TENANT_A, True),
        ({"tenant": "contoso.onmicrosoft.com"}, TENANT_A, True),  # the domain's document names its GUID
        ({"tenant": "contoso.onmicrosoft.com"}, TENANT_B, False),
        ({"tenant": "consumers"}, CONSUMERS, True),
        ({"tenant": "consumers"}, TENANT_A, False),
    ],
)
async def test_an_entra_login_is_let_in_by_its_tenant(options: dict[str, Any], user_tenant: str, logs_in: bool) -> None:
    async with entra_site(**options) as site:
        site.standin.user_tenant = user_tenant
        landed = await log_in(site.base)
    assert ("code" in landed) is logs_in, landed
    if not logs_in:
        assert landed["error"] == "server_error"


async def test_an_entra_login_gives_the_user_and_a_refreshable_upstream_token() -> None:
    async with entra_site() as site:
        access = await logged_in(site.base, site.proxy)
        first = await site.proxy.upstream_token(access)
        await expire_upstream(site.proxy, access.claims["gid"])
        second = await site.proxy.upstream_token(access)
    assert access.subject == site.standin.user
    assert second != first


@pytest.mark.parametrize(
    ("changes", "refused"),
    [
        ({}, None),
        ({"iss": f"{{base}}/{TENANT_B}/v2.0"}, "Invalid issuer"),  # signed for tenant A, claims tenant B's issuer
        ({"tid": TENANT_B}, "Invalid issuer"),  # tenant A's issuer, tenant B's tid
        ({"iss": "{base}/{tenantid}/v2.0"}, "Invalid issuer"),  # the template itself
        ({"tid": None}, "tenant None"),
        ({"tid": "../common"}, "tenant '../common'"),
        ({"aud": "another-app"}, "Audience"),
        ({"exp": 1}, "expired"),
    ],
)
async def test_an_entra_id_token_must_carry_its_own_tenants_issuer(
    changes: dict[str, Any], refused: str | None
) -> None:
    async with entra_site(tenant="common") as site:
        entra = site.proxy.upstream
        base = site.standin.base
        made = {
            name: value.replace("{base}", base) if isinstance(value, str) else value for name, value in changes.items()
        }
        id_token = site.standin.id_token(TENANT_A, "n", **made)
        if refused is None:
            identity = await entra.identity(Token("upstream-access-token"), id_token, nonce="n")
            assert identity.claims["tid"] == TENANT_A and identity.subject == site.standin.user
        else:
            with pytest.raises(InvalidToken, match=refused):
                await entra.identity(Token("upstream-access-token"), id_token, nonce="n")


async def test_entras_discovery_document_must_be_for_the_tenant_asked() -> None:
    async with entra_site(tenant="common") as site:
        entra = site.proxy.upstream
        assert isinstance(entra, Entra)
        metadata = await entra.metadata()
        assert metadata.issuer == entra.issuer
        assert "S256" in metadata.document["code_challenge_methods_supported"]
        assert entra.accepts_issuer(f"{site.standin.base}/{TENANT_B}/v2.0")
        assert not entra.accepts_issuer(f"https://evil.example/{TENANT_B}/v2.0")
        assert not entra.accepts_issuer(f"{site.standin.base}/{{tenantid}}/v2.0")

        for document in (
            {"issuer": f"{site.standin.base}/{TENANT_A}/v2.0"},  # a tenant's document for "common"
            {"issuer": "https://login.microsoftonline.com/{tenantid}/v2.0"},  # another authority's template
        ):
            with pytest.raises(MetadataRefused, match="names the issuer"):
                entra.parse_metadata({**metadata.document, **document}, source="test")
        single = Entra("app", "secret", tenant=TENANT_A, authority=site.standin.base, allow_http_loopback=True)
        with pytest.raises(MetadataRefused, match="names the issuer"):
            single.parse_metadata({**metadata.document, "issuer": f"{site.standin.base}/{TENANT_B}/v2.0"}, source="t")
