"""The OAuth client (``toolkit._client.oauth``): an ``httpx.Auth`` that signs in on the first 401.

Against the real authorization server of the test rig (oidc-provider, tests/support/authserver.py)
and toolkit servers protecting themselves with it: dynamic registration, a pre-registered client,
PKCE, ``resource``, ``iss``, refresh, step-up, client credentials, a login kept in a file and
reused by a second client, the default browser step with its loopback listener. Against small
local servers (tests/support/oauth_fakes.py): every refusal the spec asks for, bounded loops,
and client ID metadata documents, which oidc-provider does not implement.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import json
import logging
import os
import stat
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, NoReturn

import httpx
import pytest
from tests.http_support import CliServer, Legacy, McpHttp, Modern, serve
from tests.support.authserver import READY_TIMEOUT, AuthServer
from tests.support.oauth_fakes import Answer, FakeSite, fake_site
from tests.support.oauth_login import BrowserStandIn, HeadlessLogin, query
from tests.support.processes import REPO, TOOLKIT, free_port
from tests.test_auth_real import auth, secure_weather, stepup

from toolkit._auth.oauth import (
    AccessDenied,
    AuthorizationFailed,
    InsecureURL,
    MetadataRefused,
    OAuthError,
    RegistrationFailed,
    authorization_code,
    authorization_server_metadata_urls,
    parse_challenge,
    protected_resource_metadata_urls,
    resource_covers,
    s256_challenge,
    scope_union,
)
from toolkit._client.oauth import FileTokenStorage, LoopbackBrowser, MemoryTokenStorage, OAuth
from toolkit.auth import JWTVerifier
from toolkit.client import Client

pytestmark = pytest.mark.timeout(READY_TIMEOUT + 120)
__all__ = ["auth", "stepup"]  # the rig's fixtures, shared with test_auth_real (named here for pytest and ruff)

TIMEOUT = 60.0
PARIS = [{"hour": "09:00", "temp": 20.5}, {"hour": "10:00", "temp": 26.0}]


@contextlib.asynccontextmanager
async def protected(auth: AuthServer) -> AsyncIterator[str]:
    """secure_app's server in this process, protected by the rig's authorization server: its URL."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    server = secure_weather()
    server.set_auth(
        JWTVerifier(jwks_uri=auth.jwks_uri, issuer=auth.issuer, audience=url),
        authorization_servers=[auth.issuer],
        resource_url=url,
    )
    async with serve(server, port=port):
        yield url


@contextlib.asynccontextmanager
async def client(url: str, oauth: OAuth) -> AsyncIterator[McpHttp]:
    async with httpx.AsyncClient(auth=oauth, timeout=TIMEOUT) as http:
        yield McpHttp(url, http)


def claims(token: str) -> dict[str, Any]:
    payload = token.split(".")[1]
    decoded: dict[str, Any] = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    return decoded


async def whoami(http: McpHttp) -> Any:
    reply = await Modern(http).call_tool("whoami")
    assert reply.status == 200, reply
    return reply.result["structuredContent"]


def never(authorization_url: str) -> NoReturn:
    raise AssertionError(f"the user was asked to sign in again: {authorization_url}")


async def no_sign_in(authorization_url: str) -> str:
    never(authorization_url)


# --- the real authorization server ------------------------------------------------------------------


async def test_sign_in_with_dynamic_registration(auth: AuthServer) -> None:
    login, storage = HeadlessLogin(), MemoryTokenStorage()
    async with protected(auth) as url:
        oauth = OAuth(user_agent=login, storage=storage, allow_http_loopback=True, client_name="oauth-tests")
        async with client(url, oauth) as http:
            listed = await Modern(http).request("tools/list")
            assert listed.status == 200
            assert {tool["name"] for tool in listed.result["tools"]} == {"forecast", "whoami", "admin_reset"}
            legacy = await Legacy(http).open()  # the same token serves a legacy session
            assert (await legacy.call_tool("forecast", {"city": "Paris"})).status == 200
            me = await whoami(http)

    (asked,) = login.asked  # one sign-in for all of it
    assert asked["response_type"] == "code"
    assert (asked["code_challenge_method"], len(asked["code_challenge"])) == ("S256", 43)
    assert asked["resource"] == url  # RFC 8707, the metadata's resource
    assert asked["scope"] == "admin forecast:read offline_access"  # scopes_supported, + offline_access (SEP-2207)
    assert asked["redirect_uri"].startswith("http://127.0.0.1:")
    assert query(login.callbacks[0])["iss"] == auth.issuer  # RFC 9207, checked by the client

    registration = await storage.get(f"client:{auth.issuer}")
    assert registration is not None
    assert registration["client_id"] == asked["client_id"]
    assert registration["redirect_uris"] == [asked["redirect_uri"]]
    token = await storage.get(f"token:{url}")
    assert token is not None
    assert token["refresh_token"]
    assert claims(token["access_token"])["aud"] == url
    assert me == {"subject": "alice", "client_id": asked["client_id"], "scopes": ["admin", "forecast:read"]}


async def test_a_pre_registered_client_is_used_first(auth: AuthServer) -> None:
    login, storage = HeadlessLogin(), MemoryTokenStorage()
    async with protected(auth) as url:
        oauth = OAuth(client_id="public-client", user_agent=login, storage=storage, allow_http_loopback=True)
        async with client(url, oauth) as http:
            assert (await whoami(http))["client_id"] == "public-client"
    assert [a["client_id"] for a in login.asked] == ["public-client"]
    assert await storage.get(f"client:{auth.issuer}") is None  # nothing registered


async def test_the_default_browser_step_catches_the_redirect_on_loopback(auth: AuthServer) -> None:
    browser = BrowserStandIn()
    async with protected(auth) as url:
        oauth = OAuth(user_agent=LoopbackBrowser(open_url=browser), allow_http_loopback=True)
        async with client(url, oauth) as http:
            assert (await whoami(http))["subject"] == "alice"
    (opened,) = browser.opened
    assert opened.startswith(auth.authorization_endpoint + "?")
    # A request with another state is turned away and the listener keeps waiting for the real one.
    assert browser.listener_answers == [("wrong state", 400), ("redirect", 200)]


async def test_a_login_kept_in_a_file_serves_a_second_client(auth: AuthServer, tmp_path: Path) -> None:
    path = tmp_path / "config" / "tokens.json"
    login = HeadlessLogin()
    async with protected(auth) as url:
        first = OAuth(storage=FileTokenStorage(path), user_agent=login, allow_http_loopback=True)
        async with client(url, first) as http:
            assert (await whoami(http))["subject"] == "alice"
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert not [p for p in path.parent.iterdir() if p != path]  # no temporary file left behind

        second = OAuth(storage=FileTokenStorage(path), user_agent=no_sign_in, allow_http_loopback=True)
        async with client(url, second) as http:
            assert (await whoami(http))["subject"] == "alice"
    assert len(login.authorizations) == 1


async def test_refresh_instead_of_a_new_sign_in(auth: AuthServer) -> None:
    storage = MemoryTokenStorage()
    async with protected(auth) as url:
        async with client(url, OAuth(storage=storage, user_agent=HeadlessLogin(), allow_http_loopback=True)) as http:
            await whoami(http)
        signed_in = await storage.get(f"token:{url}")
        assert signed_in is not None

        # A token the server refuses (401), with a good refresh token: refreshed, no sign-in.
        await storage.set(f"token:{url}", {**signed_in, "access_token": "not-a-token"})
        async with client(url, OAuth(storage=storage, user_agent=no_sign_in, allow_http_loopback=True)) as http:
            assert (await whoami(http))["subject"] == "alice"
        refreshed = await storage.get(f"token:{url}")
        assert refreshed is not None
        assert refreshed["access_token"] not in ("not-a-token", signed_in["access_token"])
        assert refreshed["scopes"] == signed_in["scopes"]

        # A token known to have expired is refreshed before it is sent.
        await storage.set(f"token:{url}", {**refreshed, "expires_at": time.time() - 1})
        async with client(url, OAuth(storage=storage, user_agent=no_sign_in, allow_http_loopback=True)) as http:
            assert (await whoami(http))["subject"] == "alice"
        again = await storage.get(f"token:{url}")
        assert again is not None
        assert again["access_token"] != refreshed["access_token"]
        assert again["expires_at"] > time.time()


async def test_a_refused_refresh_falls_back_to_signing_in(auth: AuthServer) -> None:
    storage, login = MemoryTokenStorage(), HeadlessLogin()
    async with protected(auth) as url:
        async with client(url, OAuth(storage=storage, user_agent=login, allow_http_loopback=True)) as http:
            await whoami(http)
        stored = await storage.get(f"token:{url}")
        assert stored is not None
        await storage.set(f"token:{url}", {**stored, "access_token": "bad", "refresh_token": "bad"})
        async with client(url, OAuth(storage=storage, user_agent=login, allow_http_loopback=True)) as http:
            assert (await whoami(http))["subject"] == "alice"
    assert len(login.authorizations) == 2


async def test_step_up_asks_for_the_union_of_scopes(auth: AuthServer, stepup: CliServer) -> None:
    login = HeadlessLogin()
    async with client(stepup.url, OAuth(user_agent=login, allow_http_loopback=True)) as http:
        modern = Modern(http)
        listed = await modern.request("tools/list")
        assert {tool["name"] for tool in listed.result["tools"]} == {"forecast", "whoami"}
        reset = await modern.call_tool("admin_reset")  # 403 insufficient_scope, then again with admin
        assert reset.status == 200
        assert reset.result["content"] == [{"type": "text", "text": "reset done"}]
        forecast = await modern.call_tool("forecast", {"city": "Paris"})  # forecast:read was kept
        assert forecast.result["structuredContent"] == PARIS
        assert (await whoami(http))["scopes"] == ["admin", "forecast:read"]
    assert [a["scope"] for a in login.asked] == ["forecast:read offline_access", "forecast:read offline_access admin"]
    # A dynamically registered client registers no scope, so the server lets it step up.
    assert len({a["client_id"] for a in login.asked}) == 1


async def test_client_credentials(auth: AuthServer) -> None:
    async with protected(auth) as url:
        oauth = OAuth(
            grant="client_credentials", client_id="cc-client", client_secret="cc-secret", allow_http_loopback=True
        )
        async with client(url, oauth) as http:
            assert (await Modern(http).call_tool("forecast", {"city": "Paris"})).status == 200
            me = await whoami(http)
    assert me == {"subject": "cc-client", "client_id": "cc-client", "scopes": ["admin", "forecast:read"]}


async def test_client_credentials_step_up(auth: AuthServer, stepup: CliServer) -> None:
    oauth = OAuth(
        grant="client_credentials", client_id="cc-client", client_secret="cc-secret", allow_http_loopback=True
    )
    async with client(stepup.url, oauth) as http:
        assert (await Modern(http).call_tool("admin_reset")).status == 200
        assert (await whoami(http))["scopes"] == ["admin", "forecast:read"]


async def test_a_wrong_client_secret_is_a_clear_error(auth: AuthServer) -> None:
    async with protected(auth) as url:
        oauth = OAuth(
            grant="client_credentials", client_id="cc-client", client_secret="wrong", allow_http_loopback=True
        )
        async with client(url, oauth) as http:
            with pytest.raises(OAuthError, match="invalid_client") as refused:
                await Modern(http).request("tools/list")
    assert "wrong" not in str(refused.value)


# --- hostile and minimal servers ---------------------------------------------------------------------


def oauth_for(site: FakeSite, **options: Any) -> OAuth:
    return OAuth(user_agent=site.user_agent, allow_http_loopback=True, **options)


async def call(site: FakeSite, oauth: OAuth) -> httpx.Response:
    async with httpx.AsyncClient(auth=oauth, timeout=TIMEOUT) as http:
        return await http.post(site.mcp, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})


async def test_a_well_behaved_fake_lets_the_client_in() -> None:
    """The baseline each refusal below breaks in one place."""
    async with fake_site() as site:
        reply = await call(site, oauth_for(site))
        assert reply.status_code == 200
        assert site.paths() == [
            "/mcp",
            "/.well-known/oauth-protected-resource/mcp",
            "/.well-known/oauth-authorization-server",
            "/register",
            "/token",
            "/mcp",
        ]
        (registered,) = site.registered
        assert registered["application_type"] == "native"
        assert registered["token_endpoint_auth_method"] == "none"
        assert "scope" not in registered


async def test_client_id_metadata_document_instead_of_registration() -> None:
    """oidc-provider has no client ID metadata documents (SEP-991): a minimal server stands in."""
    document = "https://client.example/oauth/client.json"
    async with fake_site(cimd=True) as site:
        assert (await call(site, oauth_for(site, client_metadata_url=document))).status_code == 200
        assert "/register" not in site.paths()
        (token_request,) = [seen for seen in site.log if seen.path == "/token"]
        assert token_request.form["client_id"] == document
    async with fake_site(cimd=False) as site:  # not advertised: dynamic registration
        assert (await call(site, oauth_for(site, client_metadata_url=document))).status_code == 200
        assert "/register" in site.paths()


async def test_a_metadata_resource_for_another_server_is_refused() -> None:
    async with fake_site() as site:
        site.documents["/.well-known/oauth-protected-resource/mcp"] = Answer(
            200, {**site.resource_metadata(), "resource": "https://elsewhere.example/mcp"}
        )
        with pytest.raises(MetadataRefused, match="RFC 9728"):
            await call(site, oauth_for(site))
        assert "/.well-known/oauth-authorization-server" not in site.paths()


async def test_an_issuer_mismatch_is_refused() -> None:
    async with fake_site() as site:
        doc = {**site.server_metadata(), "issuer": "https://honest.example"}
        site.documents["/.well-known/oauth-authorization-server"] = Answer(200, doc)
        with pytest.raises(MetadataRefused, match="RFC 8414"):
            await call(site, oauth_for(site))
        assert not {"/register", "/authorize", "/token"} & set(site.paths())


@pytest.mark.parametrize("methods", [None, ["plain"]], ids=["absent", "plain-only"])
async def test_an_authorization_server_without_s256_is_refused(methods: list[str] | None) -> None:
    async with fake_site() as site:
        doc = {k: v for k, v in site.server_metadata().items() if k != "code_challenge_methods_supported"}
        if methods is not None:
            doc["code_challenge_methods_supported"] = methods
        site.documents["/.well-known/oauth-authorization-server"] = Answer(200, doc)
        with pytest.raises(MetadataRefused, match="S256"):
            await call(site, oauth_for(site))
        assert not {"/register", "/token"} & set(site.paths())


@pytest.mark.parametrize(
    ("document", "field", "value"),
    [
        ("as", "token_endpoint", "http://auth.example.com/token"),
        ("as", "authorization_endpoint", "http://auth.example.com/authorize"),
        ("as", "registration_endpoint", "http://auth.example.com/register"),
        ("prm", "authorization_servers", ["http://auth.example.com"]),
    ],
)
async def test_plain_http_outside_loopback_is_refused(document: str, field: str, value: Any) -> None:
    async with fake_site() as site:
        if document == "as":
            path, doc = "/.well-known/oauth-authorization-server", {**site.server_metadata(), field: value}
        else:
            path, doc = "/.well-known/oauth-protected-resource/mcp", {**site.resource_metadata(), field: value}
        site.documents[path] = Answer(200, doc)
        with pytest.raises(InsecureURL, match="https"):
            await call(site, oauth_for(site))
        assert not {"/register", "/token"} & set(site.paths())


async def test_plain_http_on_loopback_needs_to_be_allowed() -> None:
    async with fake_site() as site:
        with pytest.raises(InsecureURL, match="allow_http_loopback"):
            await call(site, OAuth(user_agent=site.user_agent))
        assert site.paths() == []  # refused before anything was sent


@pytest.mark.parametrize("endpoint", ["javascript:alert(document.cookie)", "myapp://authorize", "file:///etc/passwd"])
async def test_an_authorization_endpoint_of_another_scheme_is_never_opened(endpoint: str) -> None:
    opened: list[str] = []

    async def user_agent(url: str) -> str:
        opened.append(url)
        raise AssertionError("opened")

    async with fake_site() as site:
        doc = {**site.server_metadata(), "authorization_endpoint": endpoint}
        site.documents["/.well-known/oauth-authorization-server"] = Answer(200, doc)
        with pytest.raises(InsecureURL):
            await call(site, OAuth(user_agent=user_agent, allow_http_loopback=True))
    assert opened == []


@pytest.mark.parametrize("redirect_uri", ["myapp://callback", "javascript:alert(1)", "http://example.com/cb"])
def test_a_redirect_uri_of_another_scheme_or_host_is_refused(redirect_uri: str) -> None:
    with pytest.raises(InsecureURL, match="redirect_uri"):
        OAuth(redirect_uri=redirect_uri)


async def test_a_metadata_redirect_is_not_followed() -> None:
    async with fake_site() as site:
        stolen = Answer(302, None, {"location": f"{site.base}/stolen"})
        site.documents["/.well-known/oauth-protected-resource/mcp"] = stolen
        site.documents["/.well-known/oauth-protected-resource"] = stolen
        with pytest.raises(MetadataRefused, match="publishes no protected resource metadata"):
            await call(site, oauth_for(site))
        assert "/stolen" not in site.paths()

        site.documents["/.well-known/oauth-protected-resource/mcp"] = Answer(302, None, {"location": "javascript:x()"})
        with pytest.raises(OAuthError, match="redirect to an invalid URL"):
            await call(site, oauth_for(site))


async def test_an_oversized_document_is_refused() -> None:
    async with fake_site() as site:
        huge = json.dumps({**site.resource_metadata(), "padding": "x" * 300_000}).encode()
        site.documents["/.well-known/oauth-protected-resource/mcp"] = Answer(200, huge)
        with pytest.raises(OAuthError, match="exceeds"):
            await call(site, oauth_for(site))


async def test_a_server_that_keeps_answering_401_is_not_followed_forever() -> None:
    async with fake_site(always_unauthorized=True) as site:
        with pytest.raises(AccessDenied, match="refused the token just issued"):
            await call(site, oauth_for(site))
        assert site.paths().count("/mcp") == 2  # the request, and one retry with a fresh token
        assert site.paths().count("/token") == 1


async def test_step_up_is_bounded() -> None:
    asked: list[str] = []
    async with fake_site(forbidden_scope="write") as site:

        async def user_agent(url: str) -> str:
            asked.append(query(url).get("scope", ""))
            return await site.user_agent(url)

        with pytest.raises(AccessDenied, match="after 2 re-authorization") as refused:
            await call(site, OAuth(user_agent=user_agent, allow_http_loopback=True))
    assert refused.value.error == "insufficient_scope"
    assert asked == ["read", "read write", "read write"]


async def test_a_mix_up_is_refused_before_the_code_is_sent() -> None:
    """RFC 9207: the authorization response names another issuer; the code goes nowhere."""
    async with fake_site() as site:

        async def user_agent(url: str) -> str:
            callback = await site.user_agent(url)
            return callback.replace("iss=", "iss=https%3A%2F%2Fattacker.example&was=")

        with pytest.raises(AuthorizationFailed, match="RFC 9207"):
            await call(site, OAuth(user_agent=user_agent, allow_http_loopback=True))
        assert "/token" not in site.paths()


async def test_a_forged_state_is_refused_before_the_code_is_sent() -> None:
    async with fake_site() as site:

        async def user_agent(url: str) -> str:
            callback = await site.user_agent(url)
            return callback.replace("state=", "state=forged&was=")

        with pytest.raises(AuthorizationFailed, match="state"):
            await call(site, OAuth(user_agent=user_agent, allow_http_loopback=True))
        assert "/token" not in site.paths()


async def test_no_way_to_get_a_client_id_says_what_to_pass() -> None:
    async with fake_site() as site:
        doc = {k: v for k, v in site.server_metadata().items() if k != "registration_endpoint"}
        site.documents["/.well-known/oauth-authorization-server"] = Answer(200, doc)
        with pytest.raises(RegistrationFailed, match=r"pass client_id=\.\.\."):
            await call(site, oauth_for(site))


async def test_the_token_is_never_sent_to_another_origin() -> None:
    async with fake_site() as site, fake_site() as other:
        async with httpx.AsyncClient(auth=oauth_for(site), timeout=TIMEOUT) as http:
            assert (await http.post(site.mcp, json={})).status_code == 200
            assert (await http.post(other.mcp, json={})).status_code == 401  # passed through, untouched
        assert [seen.headers.get("authorization") for seen in other.log] == [None]
        assert other.paths() == ["/mcp"]


async def test_concurrent_requests_share_one_sign_in() -> None:
    signed_in: list[str] = []
    async with fake_site() as site:

        async def user_agent(url: str) -> str:
            signed_in.append(url)
            return await site.user_agent(url)

        oauth = OAuth(user_agent=user_agent, allow_http_loopback=True)
        async with httpx.AsyncClient(auth=oauth, timeout=TIMEOUT) as http:
            replies = await asyncio.gather(*(http.post(site.mcp, json={}) for _ in range(5)))
    assert [reply.status_code for reply in replies] == [200] * 5
    assert len(signed_in) == 1


async def test_no_token_code_or_secret_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    async with fake_site(token="secret-access-token") as site:
        seen: list[str] = []

        async def user_agent(url: str) -> str:
            callback = await site.user_agent(url)
            seen.append(query(callback)["code"])
            return callback

        assert (await call(site, OAuth(user_agent=user_agent, allow_http_loopback=True))).status_code == 200
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert "toolkit.client.oauth" in {record.name for record in caplog.records}
    for secret in ("secret-access-token", *seen):
        assert secret not in logged


def test_the_sync_client_is_refused() -> None:
    with httpx.Client(auth=OAuth()) as http, pytest.raises(TypeError, match="AsyncClient"):
        http.get("https://mcp.example/mcp")


# --- the helpers, on their own ------------------------------------------------------------------------


def test_challenge_parsing() -> None:
    header = 'Basic realm="x", Bearer error="insufficient_scope", scope="a b", resource_metadata="https://m/x,y"'
    challenge = parse_challenge([header])
    assert (challenge.error, challenge.scopes, challenge.resource_metadata) == (
        "insufficient_scope",
        ("a", "b"),
        "https://m/x,y",
    )
    assert parse_challenge(['Bearer realm="a \\"b\\"", scope=read']).scopes == ("read",)
    assert parse_challenge(["Basic realm=x"]).scopes is None
    assert parse_challenge(["Bearer"]).error is None


def test_well_known_urls_in_the_spec_order() -> None:
    assert protected_resource_metadata_urls("https://h/public/mcp", "https://h/meta") == [
        "https://h/meta",
        "https://h/.well-known/oauth-protected-resource/public/mcp",
        "https://h/.well-known/oauth-protected-resource",
    ]
    assert authorization_server_metadata_urls("https://a/tenant1") == [
        "https://a/.well-known/oauth-authorization-server/tenant1",
        "https://a/.well-known/openid-configuration/tenant1",
        "https://a/tenant1/.well-known/openid-configuration",
    ]
    assert authorization_server_metadata_urls("https://a") == [
        "https://a/.well-known/oauth-authorization-server",
        "https://a/.well-known/openid-configuration",
    ]


def test_which_resources_name_a_server() -> None:
    assert resource_covers("https://h/mcp", "https://h/mcp")
    assert resource_covers("HTTPS://H/mcp/", "https://h/mcp")
    assert resource_covers("https://h", "https://h/mcp")
    assert not resource_covers("https://h/mc", "https://h/mcp")
    assert not resource_covers("https://h/mcp/other", "https://h/mcp")
    assert not resource_covers("https://h:8443/mcp", "https://h/mcp")
    assert not resource_covers("http://h/mcp", "https://h/mcp")


def test_pkce_and_the_authorization_response() -> None:
    verifier = "a" * 43
    digest = hashlib.sha256(verifier.encode()).digest()
    assert s256_challenge(verifier) == base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
    redirect = "http://127.0.0.1:9/callback"
    check = {"redirect_uri": redirect, "state": "s", "issuer": "https://as", "iss_supported": True}
    assert authorization_code(f"{redirect}?code=c&state=s&iss=https%3A%2F%2Fas", **check) == "c"  # type: ignore[arg-type]
    with pytest.raises(AuthorizationFailed, match="no iss"):
        authorization_code(f"{redirect}?code=c&state=s", **check)  # type: ignore[arg-type]
    with pytest.raises(AuthorizationFailed, match="access_denied"):
        authorization_code(f"{redirect}?error=access_denied&state=s&iss=https%3A%2F%2Fas", **check)  # type: ignore[arg-type]
    with pytest.raises(AuthorizationFailed, match="redirect URI"):
        authorization_code("http://127.0.0.1:10/callback?code=c&state=s", **check)  # type: ignore[arg-type]
    assert scope_union(["a", "b"], None, ["b", "c"]) == ("a", "b", "c")


async def test_memory_and_file_storage_keep_the_same_things(tmp_path: Path) -> None:
    for storage in (MemoryTokenStorage(), FileTokenStorage(tmp_path / "t.json")):
        assert await storage.get("k") is None
        await storage.set("k", {"a": 1})
        assert await storage.get("k") == {"a": 1}
        await storage.delete("k")
        assert await storage.get("k") is None


async def test_the_file_is_refused_when_it_is_not_json(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text("{not json")
    with pytest.raises(OAuthError, match="cannot read the token file"):
        await FileTokenStorage(path).get("k")


# --- toolkit.Client and the CLI, signed in --------------------------------------------------------


@pytest.mark.parametrize("version", ["auto", "2025-11-25"])
async def test_toolkit_client_signs_in_and_calls_in_both_eras(auth: AuthServer, version: str) -> None:
    login = HeadlessLogin()
    async with protected(auth) as url:
        oauth = OAuth(user_agent=login, allow_http_loopback=True)
        async with Client(url, auth=oauth, protocol_version=version) as mcp:
            result = await mcp.call_tool("forecast", {"city": "Paris"})
            me = await mcp.call_tool("whoami")
    assert result.data == PARIS
    assert me.data["subject"] == "alice"
    assert len(login.authorizations) == 1


async def test_the_cli_signs_in_with_the_browser_once_and_keeps_the_login(auth: AuthServer, tmp_path: Path) -> None:
    browser = f"{sys.executable} {REPO / 'tests' / 'support' / 'oauth_browser.py'} %s"
    env = {**os.environ, "TOOLKIT_OAUTH_FILE": str(tmp_path / "oauth.json"), "PYTHONPATH": str(REPO)}
    env.pop("TOOLKIT_TOKEN", None)

    async def toolkit_call(url: str, browser_command: str) -> tuple[int, str, str]:
        process = await asyncio.create_subprocess_exec(
            str(TOOLKIT),
            "call",
            url,
            "forecast",
            "city=Paris",
            "--oauth",
            env={**env, "BROWSER": browser_command},
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(process.communicate(), TIMEOUT * 2)
        assert process.returncode is not None
        return process.returncode, out.decode(), err.decode()

    async with protected(auth) as url:
        code, out, err = await toolkit_call(url, browser)
        assert code == 0, err
        assert json.loads(out)["structuredContent"] == PARIS
        # Signed in: the second run reuses the login kept in the file and opens no browser.
        code, out, err = await toolkit_call(url, "false %s")
        assert code == 0, err
        assert json.loads(out)["structuredContent"] == PARIS
    assert stat.S_IMODE((tmp_path / "oauth.json").stat().st_mode) == 0o600


@pytest.mark.parametrize("version", ["auto", "2025-11-25", "2026-07-28"])
async def test_toolkit_client_raises_the_oauth_refusal_itself(version: str) -> None:
    """A refusal reaches the caller of ``toolkit.Client`` as the ``OAuthError`` it is, not a JSON-RPC error."""
    async with fake_site() as site:
        doc = {**site.server_metadata(), "issuer": "https://honest.example"}
        site.documents["/.well-known/oauth-authorization-server"] = Answer(200, doc)
        with pytest.raises(MetadataRefused, match="RFC 8414"):
            async with Client(site.mcp, auth=oauth_for(site), protocol_version=version) as client:
                await client.list_tools()  # pinned to 2026-07-28, the first request is this one
