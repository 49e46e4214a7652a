"""``OAuthProxy`` against clients, browsers and documents that try something: each case its own test.

The parts are real: toolkit's authorization server served by uvicorn, the test rig's
oidc-provider as the upstream (tests/test_oauth_proxy.py's ``idp``), the steps of an OAuth
client and a browser written out (tests/support/proxy_flow.py) so that a test can change one.
Client ID metadata documents are served by small local apps; the proxy is told to fetch from
loopback only where a test needs it to (``allow_private_addresses``), never by default.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from tests.http_support import serve
from tests.support.authserver import READY_TIMEOUT, AuthServer
from tests.support.consent_login import consent_fields
from tests.support.oauth_login import query
from tests.support.processes import free_port
from tests.support.proxy_flow import ProxyFlow, Registered, new_verifier
from tests.test_oauth_proxy import idp, proxied_server

from toolkit.auth import InvalidToken, OAuthProxy
from toolkit.client import Client

pytestmark = pytest.mark.timeout(READY_TIMEOUT + 120)
__all__ = ["idp"]  # the module's upstream, shared with test_oauth_proxy

TIMEOUT = 60.0


@dataclass
class Proxied:
    base: str
    proxy: OAuthProxy
    flow: ProxyFlow


@contextlib.asynccontextmanager
async def proxied(idp: AuthServer, **options: Any) -> AsyncIterator[Proxied]:
    port = free_port()
    server, proxy = proxied_server(idp, port, **options)
    async with serve(server, port=port) as running, httpx.AsyncClient(timeout=TIMEOUT) as http:
        flow = ProxyFlow(running.base, http)
        try:
            yield Proxied(running.base, proxy, flow)
        finally:
            await flow.aclose()


def error_of(reply: httpx.Response) -> str:
    error: str = reply.json()["error"]
    return error


# --- /authorize: the client and its redirect URI ----------------------------------------------------


async def test_a_redirect_uri_not_registered_is_refused_without_a_redirect(idp: AuthServer) -> None:
    async with proxied(idp) as site:
        client = await site.flow.register()
        for elsewhere in (
            "http://127.0.0.1:9/callback/../evil",
            "http://127.0.0.1:9/callbackx",
            "https://evil.example/",
        ):
            url = site.flow.authorize_url(client.client_id, elsewhere, new_verifier())
            reply = await site.flow.browser.get(url)
            assert reply.status_code == 400
            assert "location" not in reply.headers  # an error page, never a redirect to the unchecked URI
            assert "redirect" in reply.text.lower()


async def test_an_unknown_client_gets_a_page_not_a_redirect(idp: AuthServer) -> None:
    async with proxied(idp) as site:
        reply = await site.flow.browser.get(
            site.flow.authorize_url("nobody", "https://evil.example/cb", new_verifier())
        )
    assert reply.status_code == 400 and "location" not in reply.headers


@pytest.mark.parametrize(
    ("params", "described"),
    [
        ({"code_challenge": None, "code_challenge_method": None}, "code_challenge is required"),
        ({"code_challenge_method": "plain"}, "must be S256"),
        ({"code_challenge": "too-short", "code_challenge_method": "S256"}, "not an S256 challenge"),
    ],
    ids=["missing", "plain", "malformed"],
)
async def test_pkce_s256_is_required(idp: AuthServer, params: dict[str, str | None], described: str) -> None:
    async with proxied(idp) as site:
        client = await site.flow.register()
        url = site.flow.authorize_url(client.client_id, client.redirect_uri, new_verifier(), **params)  # type: ignore[arg-type]
        reply = await site.flow.browser.get(url)
    assert reply.status_code == 303
    answer = query(reply.headers["location"])
    assert answer["error"] == "invalid_request" and described in answer["error_description"]
    assert answer["state"] == "client-state" and answer["iss"] == site.base


async def test_a_token_for_another_resource_is_refused(idp: AuthServer) -> None:
    async with proxied(idp) as site:
        client = await site.flow.register()
        url = site.flow.authorize_url(
            client.client_id, client.redirect_uri, new_verifier(), resource="https://other.example/mcp"
        )
        reply = await site.flow.browser.get(url)
    assert query(reply.headers["location"])["error"] == "invalid_target"


async def test_a_repeated_parameter_is_refused(idp: AuthServer) -> None:
    async with proxied(idp) as site:
        client = await site.flow.register()
        url = site.flow.authorize_url(client.client_id, client.redirect_uri, new_verifier()) + "&state=second"
        reply = await site.flow.browser.get(url)
    assert reply.status_code == 400 and "location" not in reply.headers


# --- the consent form --------------------------------------------------------------------------------


async def test_consent_without_the_csrf_cookie_is_refused(idp: AuthServer) -> None:
    async with proxied(idp) as site:
        client = await site.flow.register()
        page = await site.flow.consent_page(client, new_verifier())
        form = {**consent_fields(page.text), "decision": "approve"}
        async with httpx.AsyncClient(timeout=TIMEOUT) as other_site:  # another site's form: no cookie
            forged = await other_site.post(f"{site.base}/authorize/consent", data=form)
        # The user's browser (the cookie), a token that is not the page's.
        wrong = await site.flow.browser.post(f"{site.base}/authorize/consent", data={**form, "csrf": "guessed"})
        still = await site.flow.answer_consent(page)  # the real answer still works afterwards
    assert forged.status_code == 403 and "location" not in forged.headers
    assert wrong.status_code == 403
    assert still.status_code == 303 and still.headers["location"].startswith(idp.issuer)


async def test_a_refusal_goes_back_as_access_denied(idp: AuthServer) -> None:
    async with proxied(idp) as site:
        client = await site.flow.register()
        reply = await site.flow.answer_consent(await site.flow.consent_page(client, new_verifier()), "deny")
        again = await site.flow.answer_consent(await site.flow.consent_page(client, new_verifier()))
    answer = query(reply.headers["location"])
    assert answer["error"] == "access_denied" and answer["state"] == "client-state"
    assert again.headers["location"].startswith(idp.issuer)


async def test_the_consent_page_is_not_framed_cached_or_scripted(idp: AuthServer) -> None:
    async with proxied(idp) as site:
        client = await site.flow.register(client_name="<script>alert(1)</script>")
        page = await site.flow.consent_page(client, new_verifier())
    assert "<script>" not in page.text and "&lt;script&gt;" in page.text
    assert page.headers["x-frame-options"] == "DENY"
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    assert page.headers["cache-control"] == "no-store"
    cookie = page.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie


# --- the upstream's callback ------------------------------------------------------------------------


async def test_an_unknown_upstream_state_is_refused(idp: AuthServer) -> None:
    async with proxied(idp) as site:
        reply = await site.flow.browser.get(f"{site.base}/authorize/callback?code=abc&state=made-up")
    assert reply.status_code == 400 and "location" not in reply.headers


async def test_an_upstream_callback_in_another_browser_is_refused(idp: AuthServer) -> None:
    async with proxied(idp) as site:
        client = await site.flow.register()
        callback = await site.flow.upstream_callback(client, new_verifier())
        async with httpx.AsyncClient(timeout=TIMEOUT) as victim:  # the attacker's callback URL, another browser
            lured = await victim.get(callback)
        own = await site.flow.browser.get(callback)  # the browser that went upstream finishes it
        replayed = await site.flow.browser.get(callback)  # once only
    assert lured.status_code == 403 and "location" not in lured.headers
    assert own.status_code == 303 and "code" in query(own.headers["location"])
    assert replayed.status_code == 400


async def test_a_mixed_up_issuer_in_the_callback_is_refused(idp: AuthServer) -> None:
    async with proxied(idp) as site:
        client = await site.flow.register()
        callback = await site.flow.upstream_callback(client, new_verifier())
        forged = callback.replace(
            f"iss={idp.issuer.replace(':', '%3A').replace('/', '%2F')}", "iss=https%3A%2F%2Fevil.example"
        )
        assert forged != callback
        reply = await site.flow.browser.get(forged)
    answer = query(reply.headers["location"])
    assert answer["error"] == "access_denied" and "code" not in answer


# --- /token -----------------------------------------------------------------------------------------


async def test_a_wrong_code_verifier_is_refused(idp: AuthServer) -> None:
    async with proxied(idp) as site:
        client = await site.flow.register()
        verifier = new_verifier()
        code = await site.flow.code(client, verifier)
        wrong = await site.flow.exchange(client, code, new_verifier())
        missing = await site.flow.token(
            client, grant_type="authorization_code", code=code, redirect_uri=client.redirect_uri
        )
    assert wrong.status_code == 400 and error_of(wrong) == "invalid_grant"
    assert missing.status_code == 400  # the code was spent by the wrong attempt: gone either way


async def test_a_replayed_code_revokes_what_it_gave(idp: AuthServer) -> None:
    async with proxied(idp) as site:
        client = await site.flow.register()
        verifier = new_verifier()
        code = await site.flow.code(client, verifier)
        first = await site.flow.exchange(client, code, verifier)
        second = await site.flow.exchange(client, code, verifier)
        refreshed = await site.flow.refresh(client, first.json()["refresh_token"])
    assert first.status_code == 200
    assert second.status_code == 400 and error_of(second) == "invalid_grant"
    assert refreshed.status_code == 400 and error_of(refreshed) == "invalid_grant"  # the grant was revoked


async def test_a_code_used_by_another_client_is_refused(idp: AuthServer) -> None:
    async with proxied(idp) as site:
        victim, thief = await site.flow.register(), await site.flow.register()
        verifier = new_verifier()
        code = await site.flow.code(victim, verifier)
        stolen = await site.flow.exchange(Registered(thief.client_id, None, victim.redirect_uri), code, verifier)
        rightful = await site.flow.exchange(victim, code, verifier)
    assert stolen.status_code == 400 and error_of(stolen) == "invalid_grant"
    assert rightful.status_code == 400  # spent: a code is tried once


async def test_a_confidential_client_must_authenticate(idp: AuthServer) -> None:
    async with proxied(idp) as site:
        client = await site.flow.register(method="client_secret_basic")
        verifier = new_verifier()
        code = await site.flow.code(client, verifier)
        anonymous = await site.flow.exchange(Registered(client.client_id, None, client.redirect_uri), code, verifier)
        wrong = await site.flow.exchange(Registered(client.client_id, "wrong", client.redirect_uri), code, verifier)
        code = await site.flow.code(client, verifier)
        right = await site.flow.exchange(client, code, verifier)
    assert anonymous.status_code == 401 and error_of(anonymous) == "invalid_client"
    assert wrong.status_code == 401 and "basic" in wrong.headers["www-authenticate"].lower()
    assert right.status_code == 200


async def test_refresh_rotates_and_a_replay_revokes_the_family(idp: AuthServer) -> None:
    async with proxied(idp) as site:
        client = await site.flow.register()
        first = await site.flow.tokens(client)
        rotated = await site.flow.refresh(client, first["refresh_token"])
        replayed = await site.flow.refresh(client, first["refresh_token"])  # the stolen copy
        after = await site.flow.refresh(client, rotated.json()["refresh_token"])  # the family is gone
    assert rotated.status_code == 200
    assert rotated.json()["refresh_token"] != first["refresh_token"]
    assert replayed.status_code == 400 and error_of(replayed) == "invalid_grant"
    assert after.status_code == 400 and error_of(after) == "invalid_grant"


async def test_a_refresh_token_of_another_client_revokes_it(idp: AuthServer) -> None:
    async with proxied(idp) as site:
        victim, thief = await site.flow.register(), await site.flow.register()
        tokens = await site.flow.tokens(victim)
        stolen = await site.flow.refresh(thief, tokens["refresh_token"])
        rightful = await site.flow.refresh(victim, tokens["refresh_token"])
    assert stolen.status_code == 400 and rightful.status_code == 400


async def test_revocation_ends_the_family_and_the_upstream_login(idp: AuthServer) -> None:
    async with proxied(idp) as site:
        client = await site.flow.register()
        tokens = await site.flow.tokens(client)
        access = await site.proxy.verify(tokens["access_token"])
        assert await site.proxy.upstream_token(access)  # held while the grant lives
        revoked = await site.flow.http.post(
            f"{site.base}/revoke", data={"token": tokens["refresh_token"], "client_id": client.client_id}
        )
        refreshed = await site.flow.refresh(client, tokens["refresh_token"])
        unknown = await site.flow.http.post(
            f"{site.base}/revoke", data={"token": "nonsense", "client_id": client.client_id}
        )
        with pytest.raises(Exception, match="revoked or has expired"):
            await site.proxy.upstream_token(access)
    assert revoked.status_code == 200 and unknown.status_code == 200  # RFC 7009 §2.2
    assert refreshed.status_code == 400


async def test_the_access_token_names_the_resource_and_carries_no_upstream_token(idp: AuthServer) -> None:
    async with proxied(idp) as site:
        client = await site.flow.register()
        tokens = await site.flow.tokens(client)
        access = await site.proxy.verify(tokens["access_token"])
        upstream = await site.proxy.upstream_token(access)
    assert access.claims["aud"] == f"{site.base}/mcp" and access.subject == "alice"
    assert access.client_id == client.client_id
    assert upstream not in json.dumps(tokens)  # the upstream's token never reaches the MCP client
    assert set(tokens) == {"access_token", "token_type", "expires_in", "refresh_token"}  # no scope asked, none given


# --- registration -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "redirect_uri",
    [
        "javascript:alert(1)",
        "http://evil.example/cb",
        "https://app.example/cb#fragment",
        "data:text/html,hi",
        "/relative",
    ],
)
async def test_registration_refuses_dangerous_redirect_uris(idp: AuthServer, redirect_uri: str) -> None:
    async with proxied(idp) as site:
        reply = await site.flow.http.post(f"{site.base}/register", json={"redirect_uris": [redirect_uri]})
    assert reply.status_code == 400 and error_of(reply) == "invalid_redirect_uri"


async def test_registration_can_be_off(idp: AuthServer) -> None:
    async with proxied(idp, dynamic_registration=False) as site:
        reply = await site.flow.http.post(f"{site.base}/register", json={"redirect_uris": ["https://a.example/cb"]})
        metadata = (await site.flow.http.get(f"{site.base}/.well-known/oauth-authorization-server")).json()
    assert reply.status_code in (404, 405) and "registration_endpoint" not in metadata


# --- client ID metadata documents -------------------------------------------------------------------


@pytest.mark.parametrize(
    "client_id",
    [
        "https://127.0.0.1/client.json",
        "https://localhost/client.json",
        "https://10.1.2.3/client.json",
        "https://169.254.169.254/latest/meta-data",
        "https://[::1]/client.json",
        "https://192.168.0.10/client.json",
    ],
)
async def test_a_metadata_document_on_a_private_address_is_not_fetched(idp: AuthServer, client_id: str) -> None:
    async with proxied(idp) as site:
        url = site.flow.authorize_url(client_id, "http://127.0.0.1:9/callback", new_verifier())
        reply = await site.flow.browser.get(url)
    assert reply.status_code == 400 and "location" not in reply.headers
    assert "public addresses" in reply.text


@pytest.mark.parametrize(
    ("client_id", "described"),
    [
        ("http://app.example/client.json", "https"),
        ("https://user:pw@app.example/client.json", "credentials"),
        ("https://app.example/", "path"),
    ],
)
async def test_a_metadata_document_url_must_be_plain_https(idp: AuthServer, client_id: str, described: str) -> None:
    async with proxied(idp) as site:
        reply = await site.flow.browser.get(
            site.flow.authorize_url(client_id, "http://127.0.0.1:9/callback", new_verifier())
        )
    assert reply.status_code == 400 and described in reply.text


@contextlib.asynccontextmanager
async def document_site(body: Any = None, *, huge: bool = False, slow: bool = False) -> AsyncIterator[str]:
    """A local app serving one client ID metadata document at /client.json: its URL."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/client.json"

    async def document(request: Request) -> Response:
        if huge:
            return Response(b" " * (1024 * 1024) + b"{}", media_type="application/json")
        if slow:

            async def drip() -> AsyncIterator[bytes]:
                while True:
                    yield b" "
                    await asyncio.sleep(0.5)

            return StreamingResponse(drip(), media_type="application/json")
        return JSONResponse(
            body
            if body is not None
            else {"client_id": url, "client_name": "Doc Client", "redirect_uris": ["http://127.0.0.1:9/callback"]}
        )

    async with serve(Starlette(routes=[Route("/client.json", document)]), port=port):
        yield url


LOOPBACK_DOCUMENTS = {"allow_http_loopback": True, "allow_private_addresses": True}


async def test_a_metadata_document_names_the_client(idp: AuthServer) -> None:
    async with document_site() as url, proxied(idp, **LOOPBACK_DOCUMENTS) as site:
        page = await site.flow.consent_page(Registered(url, None, "http://127.0.0.1:9/callback"), new_verifier())
        verifier = new_verifier()
        code = await site.flow.code(Registered(url, None, "http://127.0.0.1:9/callback"), verifier)
        tokens = await site.flow.exchange(Registered(url, None, "http://127.0.0.1:9/callback"), code, verifier)
        elsewhere = await site.flow.browser.get(site.flow.authorize_url(url, "http://127.0.0.1:9/other", verifier))
    assert "Doc Client" in page.text and url in page.text
    assert tokens.status_code == 200
    assert elsewhere.status_code == 400 and "location" not in elsewhere.headers  # its redirect URIs, exactly


async def test_a_metadata_document_for_another_client_id_is_refused(idp: AuthServer) -> None:
    forged = {"client_id": "https://trusted.example/client.json", "redirect_uris": ["http://127.0.0.1:9/callback"]}
    async with document_site(forged) as url, proxied(idp, **LOOPBACK_DOCUMENTS) as site:
        reply = await site.flow.browser.get(site.flow.authorize_url(url, "http://127.0.0.1:9/callback", new_verifier()))
    assert reply.status_code == 400 and "must be the document" in reply.text


async def test_a_huge_metadata_document_is_refused(idp: AuthServer) -> None:
    async with document_site(huge=True) as url, proxied(idp, **LOOPBACK_DOCUMENTS) as site:
        reply = await site.flow.browser.get(site.flow.authorize_url(url, "http://127.0.0.1:9/callback", new_verifier()))
    assert reply.status_code == 400 and "larger than" in reply.text


async def test_a_slow_metadata_document_is_given_up(idp: AuthServer) -> None:
    async with document_site(slow=True) as url, proxied(idp, client_metadata_timeout=1.0, **LOOPBACK_DOCUMENTS) as site:
        reply = await site.flow.browser.get(site.flow.authorize_url(url, "http://127.0.0.1:9/callback", new_verifier()))
    assert reply.status_code == 400 and "took longer" in reply.text


# --- keys -------------------------------------------------------------------------------------------


async def test_a_rotated_key_stays_accepted_while_published(idp: AuthServer) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec, rsa

    def pem(key: Any) -> bytes:
        return key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )

    old = pem(rsa.generate_private_key(public_exponent=65537, key_size=2048))
    new = pem(ec.generate_private_key(ec.SECP256R1()))
    upstream = proxied_server(idp, 1)[1].upstream
    before = OAuthProxy(upstream=upstream, base_url="http://127.0.0.1:1", signing_key=old)
    rotated = OAuthProxy(upstream=upstream, base_url="http://127.0.0.1:1", signing_key=new, previous_signing_keys=[old])
    dropped = OAuthProxy(upstream=upstream, base_url="http://127.0.0.1:1", signing_key=new)
    claims = {"iss": "http://127.0.0.1:1", "aud": "http://127.0.0.1:1/mcp", "sub": "alice", "exp": 2**31}
    token = before.keys.sign(claims)

    assert (await rotated.verify(token)).subject == "alice"
    assert [key["kid"] for key in rotated.keys.jwks()["keys"]] == [rotated.keys.current.kid, before.keys.current.kid]
    assert rotated.keys.current.algorithm == "ES256"
    with pytest.raises(InvalidToken):
        await dropped.verify(token)


async def test_revoking_an_access_token_ends_its_family(idp: AuthServer) -> None:
    async with proxied(idp) as site:
        client, other = await site.flow.register(), await site.flow.register()
        tokens = await site.flow.tokens(client)
        by_other = await site.flow.http.post(  # another client cannot revoke it
            f"{site.base}/revoke", data={"token": tokens["access_token"], "client_id": other.client_id}
        )
        still = await site.flow.refresh(client, tokens["refresh_token"])
        revoked = await site.flow.http.post(
            f"{site.base}/revoke", data={"token": tokens["access_token"], "client_id": client.client_id}
        )
        after = await site.flow.refresh(client, still.json()["refresh_token"])
    assert by_other.status_code == 200 and still.status_code == 200
    assert revoked.status_code == 200 and after.status_code == 400


async def test_a_client_registered_for_client_secret_post_authenticates_in_the_form(idp: AuthServer) -> None:
    async with proxied(idp) as site:
        client = await site.flow.register(method="client_secret_post")
        assert client.client_secret is not None
        verifier = new_verifier()
        code = await site.flow.code(client, verifier)
        form = {"grant_type": "authorization_code", "code": code, "code_verifier": verifier}
        form |= {"redirect_uri": client.redirect_uri, "client_id": client.client_id}
        basic = await site.flow.http.post(
            f"{site.base}/token", data=form, auth=(client.client_id, client.client_secret)
        )
        code = await site.flow.code(client, verifier)
        form |= {"code": code, "client_secret": client.client_secret}
        posted = await site.flow.http.post(f"{site.base}/token", data=form)
    assert basic.status_code == 401 and "client_secret_post" in basic.json()["error_description"]  # as registered
    assert posted.status_code == 200, posted.text


async def test_replicas_need_the_keys_given() -> None:
    from toolkit.auth import OIDC
    from toolkit.stores import RedisStore

    proxy = OAuthProxy(
        upstream=OIDC("https://idp.example", "id", "secret"), base_url="https://mcp.example"
    )  # keys generated
    with pytest.raises(ValueError, match="signing_key= and encryption_key="):
        proxy.bind(RedisStore("redis://127.0.0.1:1/0"))


async def test_the_mcp_endpoint_refuses_toolkit_tokens_for_another_resource(idp: AuthServer) -> None:
    async with proxied(idp) as site:
        client = await site.flow.register()
        tokens = await site.flow.tokens(client)
        good = await site.proxy.verify(tokens["access_token"])
        foreign = site.proxy.keys.sign({**good.claims, "aud": "https://other.example/mcp"})  # toolkit's key, elsewhere
        async with Client(f"{site.base}/mcp", auth=tokens["access_token"], timeout=TIMEOUT) as mcp:
            names = [tool["name"] for tool in await mcp.list_tools()]
        listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        refused = await site.flow.http.post(
            f"{site.base}/mcp", json=listing, headers={"authorization": f"Bearer {foreign}"}
        )
    assert names == ["upstream_me"]
    assert refused.status_code == 401 and 'error="invalid_token"' in refused.headers["www-authenticate"]


@pytest.mark.parametrize(
    ("claims", "refused"),
    [
        ({"aud": "toolkit-proxy"}, False),
        ({"aud": ["toolkit-proxy"]}, False),
        ({"aud": ["toolkit-proxy", "other"], "azp": "toolkit-proxy"}, False),
        ({"aud": ["toolkit-proxy", "other"]}, True),
        ({"aud": "toolkit-proxy", "azp": "other"}, True),
    ],
)
def test_an_id_token_for_another_party_is_refused(claims: dict[str, Any], refused: bool) -> None:
    from toolkit._auth.server.upstream import check_authorized_party

    if refused:
        with pytest.raises(InvalidToken):
            check_authorized_party(claims, "toolkit-proxy")
    else:
        check_authorized_party(claims, "toolkit-proxy")
