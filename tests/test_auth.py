"""Authorization over the real wire: toolkit as an OAuth resource server, against tokens we forge.

Every test runs a real uvicorn server on 127.0.0.1 and a real JWKS endpoint (``Issuer``) whose
keys we hold, so each refusal the spec names can be provoked on purpose: no token, a malformed
header, expired, not yet valid, wrong audience or issuer, bad signature, unknown ``kid``,
``alg: none``, HS256 signed with the public key, a huge or binary header, a key set that is
down, slow or garbage. The real authorization server and real OAuth clients are in
``test_auth_real.py``.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import re
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import jwt
import pytest
from pydantic import BaseModel
from tests.http_support import (
    LEGACY,
    Legacy,
    McpHttp,
    Modern,
    Running,
    connect,
    free_port,
    raw_post,
    serve,
)
from tests.support.issuer import Issuer, SigningKey, serve_issuer

from toolkit import Context, Server
from toolkit.auth import AccessToken, IntrospectionVerifier, InvalidToken, JWTVerifier

pytestmark = pytest.mark.timeout(60)


class Forecast(BaseModel):
    hour: str
    temp: float


class Confirmation(BaseModel):
    sure: bool


def secure_server(issuer: Issuer, **options: Any) -> Server:
    verifier_options = options.pop("verifier", {})
    server = Server(
        "secure",
        auth=JWTVerifier(jwks_uri=issuer.jwks_uri, issuer=issuer.issuer, audience=issuer.audience, **verifier_options),
        authorization_servers=[issuer.issuer],
        **options,
    )

    @server.tool
    def whoami(ctx: Context) -> dict[str, Any]:
        """Who the token says is calling."""
        token = ctx.access_token
        assert token is not None
        return {
            "subject": token.subject,
            "client_id": token.client_id,
            "scopes": sorted(token.scopes),
            "expires_at": token.expires_at,
            "jti": token.claims.get("jti"),
        }

    @server.tool(scopes=["forecast:read"])
    def forecast(city: str) -> list[Forecast]:
        """Hourly forecast."""
        return [Forecast(hour="09:00", temp=20.5)]

    @server.tool(scopes=["forecast:read", "admin"])
    def reset_forecasts() -> str:
        return "reset"

    @server.tool
    async def confirm(ctx: Context) -> str:
        """Asks the user to confirm (multi round-trip input in the modern era)."""
        answer = await ctx.elicit("Sure?", Confirmation)
        return f"answer {answer.data.sure if answer.data else None}"

    @server.resource("plans://secret", scopes=["admin"])
    def secret_plans() -> str:
        return "the plans"

    @server.resource("plans://public")
    def public_plans() -> str:
        return "public plans"

    @server.prompt(scopes=["forecast:read"])
    def weather_report(city: str) -> str:
        return f"Report the weather in {city}"

    return server


@dataclass
class Secured:
    issuer: Issuer
    running: Running
    http: McpHttp

    @property
    def url(self) -> str:
        return self.running.url

    def modern(self, token: str | None) -> Modern:
        return Modern(with_token(self.http, token))

    def legacy(self, token: str | None) -> Legacy:
        return Legacy(with_token(self.http, token))


def with_token(http: McpHttp, token: str | None) -> McpHttp:
    """A view of ``http`` that sends ``Authorization: Bearer token`` (or nothing) on every request."""
    headers = {"authorization": f"Bearer {token}"} if token is not None else {}
    client = httpx.AsyncClient(timeout=http.http.timeout, headers=headers)
    _clients.append(client)
    return McpHttp(http.url, client, http.methods)


_clients: list[httpx.AsyncClient] = []


@contextlib.asynccontextmanager
async def secured(**options: Any) -> AsyncIterator[Secured]:
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    http_options = options.pop("http", {})
    with serve_issuer(url) as issuer:
        server = secure_server(issuer, **options)
        async with serve(server, port=port, **http_options) as running, connect(running.url) as http:
            try:
                yield Secured(issuer, running, http)
            finally:
                while _clients:
                    await _clients.pop().aclose()


def challenge(reply_headers: httpx.Headers | dict[str, str]) -> dict[str, str]:
    """The parameters of a ``WWW-Authenticate: Bearer ...`` header."""
    value = reply_headers["www-authenticate"]
    assert value.startswith("Bearer "), value
    return dict(re.findall(r'(\w+)="([^"]*)"', value))


def metadata_url(secure: Secured) -> str:
    return f"{secure.running.base}/.well-known/oauth-protected-resource/mcp"


# --- the protected resource metadata (RFC 9728) -----------------------------------------------


async def test_metadata_at_both_well_known_paths() -> None:
    async with secured(required_scopes=["mcp"]) as secure:
        for path in ("/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"):
            response = await secure.http.http.get(secure.running.base + path)
            assert response.status_code == 200, path
            assert response.headers["access-control-allow-origin"] == "*"
            assert response.json() == {
                "resource": secure.url,
                "authorization_servers": [secure.issuer.issuer],
                "scopes_supported": ["admin", "forecast:read", "mcp"],
                "bearer_methods_supported": ["header"],
                "resource_name": "secure",
            }


async def test_metadata_needs_no_token_and_refuses_foreign_hosts() -> None:
    async with secured() as secure:
        response = await secure.http.http.get(metadata_url(secure), headers={"host": "evil.example"})
        assert response.status_code == 421
        preflight = await secure.http.http.options(metadata_url(secure))
        assert preflight.status_code == 204
        assert preflight.headers["access-control-allow-origin"] == "*"


async def test_configured_resource_url_is_used_everywhere() -> None:
    async with secured(resource_url="https://mcp.example.com/mcp") as secure:
        document = (await secure.http.http.get(metadata_url(secure))).json()
        assert document["resource"] == "https://mcp.example.com/mcp"
        reply = await secure.modern(None).request("server/discover")
        assert reply.status == 401
        assert challenge(reply.headers)["resource_metadata"] == (
            "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
        )


async def test_any_host_allowed_needs_a_resource_url() -> None:
    with serve_issuer("http://127.0.0.1:9/mcp") as issuer:
        server = secure_server(issuer)
        with pytest.raises(ValueError, match="resource_url"):
            server.http_app(allowed_hosts=["*"])
        with pytest.raises(ValueError, match="resource_url"):
            server.http_app(dns_rebinding_protection=False)


async def test_mounted_app_describes_the_mounted_resource() -> None:
    from starlette.applications import Starlette
    from starlette.routing import Mount, Route

    port = free_port()
    url = f"http://127.0.0.1:{port}/api/mcp"
    with serve_issuer(url) as issuer:
        mcp_app = secure_server(issuer).http_app()
        assert mcp_app.resource_metadata is not None
        rfc_location = Route("/.well-known/oauth-protected-resource/api/mcp", mcp_app.resource_metadata)
        host = Starlette(routes=[rfc_location, Mount("/api", app=mcp_app)], lifespan=mcp_app.lifespan)
        async with serve(host, port=port) as running, connect(url) as http:
            reply = await Modern(http).request("server/discover")
            assert reply.status == 401
            where = challenge(reply.headers)["resource_metadata"]
            assert where == f"{running.base}/api/.well-known/oauth-protected-resource/mcp"
            document = (await http.http.get(where)).json()
            assert document["resource"] == url
            routed = await http.http.get(f"{running.base}/.well-known/oauth-protected-resource/api/mcp")
            assert routed.json() == document
            ok = await Modern(with_token(http, issuer.token())).call_tool("whoami")
            assert ok.status == 200
            assert ok.result["structuredContent"]["subject"] == "alice"
            for client in _clients:
                await client.aclose()
            _clients.clear()


# --- 401: every method, both eras ----------------------------------------------------------------


async def test_no_token_is_challenged_on_every_method_of_both_eras() -> None:
    async with secured(required_scopes=["mcp"]) as secure:
        modern, legacy = secure.modern(None), secure.legacy(None)
        replies = [
            await modern.request("server/discover"),
            await modern.call_tool("whoami"),
            await modern.request("tools/list"),
            await legacy.http.send(
                version=LEGACY,
                body={
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": LEGACY,
                        "capabilities": {},
                        "clientInfo": {"name": "t", "version": "1"},
                    },
                },
            ),
            await legacy.http.send(
                "GET", version=LEGACY, headers={"accept": "text/event-stream", "mcp-session-id": "x"}
            ),
            await legacy.http.send("DELETE", version=LEGACY, headers={"mcp-session-id": "x"}),
        ]
        for reply in replies:
            assert reply.status == 401
            params = challenge(reply.headers)
            assert params == {"scope": "mcp", "resource_metadata": metadata_url(secure)}  # RFC 6750 §3.1: no error


async def test_another_scheme_is_challenged_like_no_token() -> None:
    async with secured() as secure:
        reply = await secure.modern(None).request("server/discover", headers={"authorization": "Basic dXNlcjpwYXNz"})
        assert reply.status == 401
        assert "error" not in challenge(reply.headers)


async def test_good_token_works_in_both_eras_and_reaches_the_tool() -> None:
    async with secured() as secure:
        token = secure.issuer.token(scope="forecast:read", jti="t-1")
        modern = await secure.modern(token).call_tool("whoami")
        assert modern.status == 200
        who = modern.result["structuredContent"]
        assert who["subject"] == "alice"
        assert who["client_id"] == "test-client"
        assert who["scopes"] == ["forecast:read"]
        assert who["jti"] == "t-1"
        assert who["expires_at"] > time.time()
        session = await secure.legacy(token).open()
        legacy = await session.call_tool("forecast", {"city": "Oslo"})
        assert legacy.status == 200
        assert legacy.result["structuredContent"] == {"result": [{"hour": "09:00", "temp": 20.5}]}
        assert (await session.delete()).status == 204


@pytest.mark.parametrize(
    "case",
    [
        "expired",
        "not_yet_valid",
        "wrong_audience",
        "wrong_issuer",
        "bad_signature",
        "unknown_kid",
        "alg_none",
        "hs256_with_public_key",
        "no_exp",
        "garbage",
    ],
)
async def test_bad_tokens_get_401_invalid_token(case: str) -> None:
    async with secured() as secure:
        issuer = secure.issuer
        now = int(time.time())
        stranger = SigningKey.rsa("key-1")  # same kid, another key: a forged signature
        tokens = {
            "expired": lambda: issuer.token(exp=now - 120),
            "not_yet_valid": lambda: issuer.token(nbf=now + 600),
            "wrong_audience": lambda: issuer.token(aud="http://127.0.0.1:1/other"),
            "wrong_issuer": lambda: issuer.token(iss="https://evil.example"),
            "bad_signature": lambda: issuer.token(key=stranger),
            "unknown_kid": lambda: issuer.token(key=SigningKey.rsa("key-unknown")),
            "alg_none": lambda: jwt.encode(
                {"iss": issuer.issuer, "aud": issuer.audience, "exp": now + 60}, None, algorithm="none"
            ),
            "hs256_with_public_key": lambda: _hs256_with(issuer.keys[0].public_pem(), issuer),
            "no_exp": lambda: issuer.token(exp=None),
            "garbage": lambda: "not.a.jwt",
        }
        reply = await secure.modern(tokens[case]()).call_tool("whoami")
        assert reply.status == 401, case
        params = challenge(reply.headers)
        assert params["error"] == "invalid_token"
        assert params["error_description"] == "The access token is invalid or expired"  # no detail leaks
        assert params["resource_metadata"] == metadata_url(secure)
        assert reply.messages[0]["error"]["data"] == {"error": "invalid_token"}


def _hs256_with(secret: bytes, issuer: Issuer) -> str:
    header = {"alg": "HS256", "typ": "JWT", "kid": "key-1"}
    body = {"iss": issuer.issuer, "aud": issuer.audience, "sub": "mallory", "exp": int(time.time()) + 60}

    def part(data: dict[str, Any]) -> bytes:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=")

    import hashlib
    import hmac

    signing_input = part(header) + b"." + part(body)
    signature = base64.urlsafe_b64encode(hmac.new(secret, signing_input, hashlib.sha256).digest()).rstrip(b"=")
    return (signing_input + b"." + signature).decode()


@pytest.mark.parametrize(
    ("header", "status", "error"),
    [
        ("Bearer", 400, "invalid_request"),
        ("Bearer two tokens", 400, "invalid_request"),
        ("Bearer t\u00e9st", 400, "invalid_request"),
        ("Bearer " + "a" * 20_000, 401, "invalid_token"),
    ],
)
async def test_malformed_or_huge_headers_are_refused_clearly(header: str, status: int, error: str) -> None:
    async with secured() as secure:
        body = json.dumps(Modern(secure.http).body("server/discover")).encode()
        headers = [
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "server/discover"),
            ("Authorization", header),
        ]
        status_code, reply_headers, _ = await raw_post(secure.running.port, "/mcp", headers, body)
        assert status_code == status
        assert challenge(reply_headers)["error"] == error


async def test_binary_authorization_header_is_refused() -> None:
    async with secured() as secure:
        body = json.dumps(Modern(secure.http).body("server/discover")).encode()
        head = (
            f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{secure.running.port}\r\nConnection: close\r\n"
            "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
            "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: server/discover\r\n"
            f"Content-Length: {len(body)}\r\n"
        ).encode()
        raw = head + b"Authorization: Bearer \xff\xfe\x00\x01\r\n\r\n" + body
        reader, writer = await asyncio.open_connection("127.0.0.1", secure.running.port)
        try:
            writer.write(raw)
            await writer.drain()
            answer = await asyncio.wait_for(reader.read(), 10)
        finally:
            writer.close()
            await writer.wait_closed()
        status = int(answer.split(b" ", 2)[1])
        assert status in (400, 401), answer[:200]  # refused by the HTTP parser (400) or by us
        assert b" 500 " not in answer.split(b"\r\n", 1)[0]


# --- scopes ------------------------------------------------------------------------------------------


async def test_missing_scope_is_403_naming_every_scope_needed() -> None:
    async with secured(required_scopes=["mcp"]) as secure:
        token = secure.issuer.token(scope="mcp forecast:read")
        reply = await secure.modern(token).call_tool("reset_forecasts")
        assert reply.status == 403
        params = challenge(reply.headers)
        assert params["error"] == "insufficient_scope"
        assert params["scope"] == "admin forecast:read mcp"  # server-wide and the tool's, in one challenge
        assert params["resource_metadata"] == metadata_url(secure)
        assert reply.messages[0]["id"] is not None


async def test_server_wide_scope_missing_is_403() -> None:
    async with secured(required_scopes=["mcp"]) as secure:
        reply = await secure.modern(secure.issuer.token(scope="forecast:read")).request("server/discover")
        assert reply.status == 403
        assert challenge(reply.headers)["scope"] == "mcp"


async def test_lists_show_each_caller_what_it_may_use() -> None:
    async with secured() as secure:
        issuer = secure.issuer

        async def names(token: str, method: str, field: str, key: str) -> list[str]:
            reply = await secure.modern(token).request(method)
            assert reply.status == 200
            result = reply.result
            assert result["cacheScope"] == "private"
            return [entry[key] for entry in result[field]]

        plain, reader, admin = (
            issuer.token(),
            issuer.token(scope="forecast:read"),
            issuer.token(scope="forecast:read admin"),
        )
        assert await names(plain, "tools/list", "tools", "name") == ["whoami", "confirm"]
        assert await names(reader, "tools/list", "tools", "name") == ["whoami", "forecast", "confirm"]
        assert await names(admin, "tools/list", "tools", "name") == ["whoami", "forecast", "reset_forecasts", "confirm"]
        assert await names(plain, "resources/list", "resources", "uri") == ["plans://public"]
        assert await names(admin, "resources/list", "resources", "uri") == ["plans://secret", "plans://public"]
        assert await names(plain, "prompts/list", "prompts", "name") == []
        assert await names(reader, "prompts/list", "prompts", "name") == ["weather_report"]
        # A second caller with the same grants gets the very same cached page.
        again = await secure.modern(issuer.token(sub="bob", scope="forecast:read")).request("tools/list")
        assert [tool["name"] for tool in again.result["tools"]] == ["whoami", "forecast", "confirm"]


async def test_resource_and_prompt_scopes_are_enforced() -> None:
    async with secured() as secure:
        plain = secure.modern(secure.issuer.token())
        read = await plain.request("resources/read", {"uri": "plans://secret"})
        assert read.status == 403
        assert challenge(read.headers)["scope"] == "admin"
        assert (await plain.request("resources/read", {"uri": "plans://public"})).status == 200
        prompt = await plain.request("prompts/get", {"name": "weather_report", "arguments": {"city": "Oslo"}})
        assert prompt.status == 403
        legacy = await secure.legacy(secure.issuer.token()).open()
        subscribe = await legacy.request("resources/subscribe", {"uri": "plans://secret"})
        assert subscribe.status == 403


async def test_implied_scopes_grant_the_narrower_ones() -> None:
    async with secured(implied_scopes={"forecast:admin": ["forecast:read", "admin"]}) as secure:
        token = secure.issuer.token(scope="forecast:admin")
        reply = await secure.modern(token).call_tool("reset_forecasts")
        assert reply.status == 200
        who = await secure.modern(token).call_tool("whoami")
        assert who.result["structuredContent"]["scopes"] == ["admin", "forecast:admin", "forecast:read"]


async def test_scp_list_claim_is_read_as_scopes() -> None:
    async with secured() as secure:
        token = secure.issuer.token(scope=None, scp=["forecast:read"])
        assert (await secure.modern(token).call_tool("forecast", {"city": "Oslo"})).status == 200


# --- state bound to the caller -------------------------------------------------------------------


async def test_legacy_session_belongs_to_the_caller_that_opened_it() -> None:
    async with secured() as secure:
        alice = await secure.legacy(secure.issuer.token(sub="alice")).open()
        mallory = secure.legacy(secure.issuer.token(sub="mallory"))
        mallory.session_id = alice.session_id
        assert (await mallory.call_tool("whoami")).status == 404
        assert (await mallory.delete()).status == 404
        assert (await alice.call_tool("whoami")).status == 200  # untouched by the attempt
        refreshed = secure.legacy(secure.issuer.token(sub="alice", jti="refreshed"))
        refreshed.session_id = alice.session_id
        assert (await refreshed.call_tool("whoami")).status == 200  # a new token of the same user


async def test_request_state_cannot_be_replayed_by_another_caller() -> None:
    async with secured() as secure:
        alice = Modern(with_token(secure.http, secure.issuer.token(sub="alice")), capabilities={"elicitation": {}})
        first = await alice.call_tool("confirm")
        assert first.result["resultType"] == "input_required"
        key = next(iter(first.result["inputRequests"]))
        retry = {
            "name": "confirm",
            "arguments": {},
            "requestState": first.result["requestState"],
            "inputResponses": {key: {"action": "accept", "content": {"sure": True}}},
        }
        mallory = Modern(with_token(secure.http, secure.issuer.token(sub="mallory")), capabilities={"elicitation": {}})
        stolen = await mallory.request("tools/call", retry)
        assert stolen.messages[0]["error"]["code"] == -32602
        assert "another caller" in stolen.messages[0]["error"]["message"]
        own = await alice.request("tools/call", retry)
        assert own.result["content"][0]["text"] == "answer True"


# --- the key set: rotation, outages, floods ------------------------------------------------------


async def test_rotated_key_is_fetched_on_first_sight() -> None:
    async with secured(verifier={"jwks_refetch_interval": 0.0}) as secure:
        issuer = secure.issuer
        assert (await secure.modern(issuer.token()).call_tool("whoami")).status == 200
        new = SigningKey.ec("key-2")
        issuer.keys.insert(0, new)
        reply = await secure.modern(issuer.token(key=new)).call_tool("whoami")
        assert reply.status == 200
        assert (await secure.modern(issuer.token(key=issuer.keys[1])).call_tool("whoami")).status == 200


async def test_removed_key_stops_being_accepted_even_for_tokens_seen_before() -> None:
    async with secured(verifier={"jwks_refetch_interval": 0.0}) as secure:
        issuer = secure.issuer
        old_token = issuer.token()
        assert (await secure.modern(old_token).call_tool("whoami")).status == 200
        new = SigningKey.rsa("key-2")
        issuer.keys[:] = [new]  # the old key is retired
        assert (await secure.modern(issuer.token(key=new)).call_tool("whoami")).status == 200  # triggers the refetch
        assert (await secure.modern(old_token).call_tool("whoami")).status == 401


async def test_unknown_kid_flood_fetches_the_key_set_once_per_interval() -> None:
    async with secured(verifier={"jwks_refetch_interval": 60.0}) as secure:
        issuer = secure.issuer
        assert (await secure.modern(issuer.token()).call_tool("whoami")).status == 200
        before = issuer.fetches
        forged = [issuer.token(key=SigningKey.rsa(f"forged-{n}")) for n in range(3)]
        replies = await asyncio.gather(*(secure.modern(token).call_tool("whoami") for token in forged * 4))
        assert {reply.status for reply in replies} == {401}
        assert issuer.fetches - before <= 1


async def test_key_set_down_at_start_is_503_then_recovers() -> None:
    async with secured(verifier={"jwks_refetch_interval": 0.2}) as secure:
        issuer = secure.issuer
        issuer.mode = "down"
        reply = await secure.modern(issuer.token()).call_tool("whoami")
        assert reply.status == 503
        assert reply.headers["retry-after"] == "5"
        assert "www-authenticate" not in reply.headers  # the token may be fine: no re-authorization
        issuer.mode = "ok"
        await asyncio.sleep(0.25)
        assert (await secure.modern(issuer.token()).call_tool("whoami")).status == 200


@pytest.mark.parametrize("mode", ["down", "garbage", "empty"])
async def test_cached_keys_keep_serving_when_the_key_set_breaks(mode: str) -> None:
    async with secured(verifier={"jwks_cache_seconds": 0.0, "jwks_refetch_interval": 0.0}) as secure:
        issuer = secure.issuer
        assert (await secure.modern(issuer.token()).call_tool("whoami")).status == 200
        issuer.mode = mode  # type: ignore[assignment]
        for n in range(3):  # each new token is verified with the cached key while refreshes fail
            assert (await secure.modern(issuer.token(jti=f"n{n}")).call_tool("whoami")).status == 200
        assert issuer.fetches >= 2


async def test_slow_key_set_holds_up_nobody_with_a_known_key() -> None:
    """A key-set refresh the issuer holds unanswered delays no request whose key is known: ten of
    them are answered while it is still held (were they waiting on it, they could not be)."""
    async with secured(
        verifier={"jwks_cache_seconds": 0.0, "jwks_timeout": 60.0, "jwks_refetch_interval": 0.0}
    ) as secure:
        issuer = secure.issuer
        assert (await secure.modern(issuer.token()).call_tool("whoami")).status == 200
        issuer.mode = "slow"
        try:
            first = await secure.modern(issuer.token(jti="refresh")).call_tool("whoami")  # starts a refresh
            assert first.status == 200
            assert await asyncio.to_thread(issuer.fetching.wait, 30), "no key-set refresh was started"
            replies = await asyncio.wait_for(
                asyncio.gather(*(secure.modern(issuer.token(jti=str(n))).call_tool("whoami") for n in range(10))),
                45,  # far beyond ten requests on any machine; short of the fetch's hold (60 s)
            )
            assert not issuer.release.is_set()
        finally:
            issuer.release.set()
        assert {reply.status for reply in replies} == {200}


async def test_an_unknown_key_waits_for_the_key_set_and_gives_up_at_its_timeout() -> None:
    """An unknown kid must wait for the fetch; a fetch that does not answer within ``jwks_timeout``
    gives a clear 401, no hang."""
    async with secured(
        verifier={"jwks_cache_seconds": 0.0, "jwks_timeout": 1.0, "jwks_refetch_interval": 0.0}
    ) as secure:
        issuer = secure.issuer
        assert (await secure.modern(issuer.token()).call_tool("whoami")).status == 200
        issuer.mode = "slow"
        try:
            unknown = await secure.modern(issuer.token(key=SigningKey.rsa("late"))).call_tool("whoami")
        finally:
            issuer.release.set()
        assert unknown.status == 401


# --- verifiers as a user writes them -------------------------------------------------------------


class StaticVerifier:
    """The TokenVerifier protocol, implemented the simplest way."""

    async def verify(self, token: str) -> AccessToken | None:
        if token == "let-me-in":
            return AccessToken(subject="u1", client_id="c1", scopes=frozenset({"forecast:read"}), expires_at=None)
        if token == "raise":
            raise InvalidToken("no")
        return None


async def test_custom_verifier_protocol() -> None:
    server = Server("custom", auth=StaticVerifier(), authorization_servers=["https://as.example"])

    @server.tool(scopes=["forecast:read"])
    def secret(ctx: Context) -> str:
        assert ctx.access_token is not None
        return f"hello {ctx.access_token.subject}"

    async with serve(server) as running, connect(running.url) as http:
        for token, status in (("let-me-in", 200), ("nope", 401), ("raise", 401)):
            reply = await Modern(with_token(http, token)).call_tool("secret")
            assert reply.status == status, token
        for client in _clients:
            await client.aclose()
        _clients.clear()


async def test_introspection_endpoint_down_is_503() -> None:
    port = free_port()
    verifier = IntrospectionVerifier(
        f"http://127.0.0.1:{port}/introspect", client_id="rs", client_secret="s", timeout=1.0
    )
    server = Server("i", auth=verifier, authorization_servers=["https://as.example"])

    @server.tool
    def ping() -> str:
        return "pong"

    async with serve(server) as running, connect(running.url) as http:
        reply = await Modern(with_token(http, "opaque-token")).call_tool("ping")
        assert reply.status == 503
        for client in _clients:
            await client.aclose()
        _clients.clear()


# --- configuration errors ------------------------------------------------------------------------


def test_configuration_mistakes_are_explained() -> None:
    verifier = StaticVerifier()
    with pytest.raises(ValueError, match="authorization_servers"):
        Server("s", auth=verifier)
    with pytest.raises(ValueError, match="take effect with auth="):
        Server("s", required_scopes=["mcp"])
    with pytest.raises(ValueError, match="absolute http"):
        Server("s", auth=verifier, authorization_servers=["auth.example.com"])
    with pytest.raises(ValueError, match="fragment"):
        Server("s", auth=verifier, authorization_servers=["https://as.example"], resource_url="https://x/mcp#f")
    with pytest.raises(TypeError, match="verify"):
        Server("s", auth="secret", authorization_servers=["https://as.example"])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="HS256"):
        JWTVerifier(jwks_uri="https://as.example/jwks", issuer="https://as.example", audience="x", algorithms=["HS256"])
    with pytest.raises(ValueError, match="'none'"):
        JWTVerifier(jwks_uri="https://as.example/jwks", issuer="https://as.example", audience="x", algorithms=["none"])
    with pytest.raises(ValueError, match="exactly one"):
        JWTVerifier(issuer="https://as.example", audience="x")
    with pytest.raises(ValueError, match="audience"):
        JWTVerifier(jwks_uri="https://as.example/jwks", issuer="https://as.example", audience="")


def test_scopes_must_be_a_list_of_valid_scopes() -> None:
    from toolkit import RegistrationError

    server = Server("s")
    with pytest.raises(RegistrationError, match=r"scopes=\['read'\]"):
        server.tool(scopes="read")(lambda: 1)  # type: ignore[arg-type]
    with pytest.raises(RegistrationError, match="not a valid OAuth scope"):
        server.tool(name="spaced", scopes=["read write"])(lambda: 1)


async def test_scopes_without_auth_are_announced(caplog: pytest.LogCaptureFixture) -> None:
    server = Server("open")

    @server.tool(scopes=["admin"])
    def admin() -> str:
        return "x"

    with caplog.at_level("WARNING", logger="toolkit"):
        server.http_app()
    assert "declare scopes=, but the server has no auth=" in caplog.text


# --- the in-memory test client, acting as a caller -----------------------------------------------


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
async def test_testing_client_sees_what_its_token_grants(version: str) -> None:
    from toolkit.testing import Client

    with serve_issuer("http://127.0.0.1:9/mcp") as issuer:
        server = secure_server(issuer)
    reader = AccessToken(subject="ada", client_id="tests", scopes=frozenset({"forecast:read"}), expires_at=None)
    async with Client(server, protocol_version=version, access_token=reader) as client:
        assert [tool["name"] for tool in await client.list_tools()] == ["whoami", "forecast", "confirm"]
        assert (await client.call_tool("whoami"))["structuredContent"]["subject"] == "ada"
        refused = await client.request("tools/call", {"name": "reset_forecasts", "arguments": {}})
        assert refused["_http_status"] == 403
        assert refused["error"]["data"] == {"requiredScopes": ["admin", "forecast:read"]}
    async with Client(server, protocol_version=version) as trusted:  # no token: stdio-like, everything
        assert len(await trusted.list_tools()) == 4
