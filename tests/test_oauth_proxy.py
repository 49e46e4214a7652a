"""toolkit as the authorization server (``OAuthProxy``), end to end, with real parts only.

The upstream identity provider is the test rig's oidc-provider (tests/support/authserver.py),
configured as Google or Entra are: no registration for strangers, one confidential client
(``toolkit-proxy``) registered by the operator with toolkit's callback as its redirect URI. The
MCP client is toolkit's own ``toolkit.Client`` with its OAuth flow, headless
(tests/support/consent_login.py): it discovers toolkit's metadata, registers (RFC 7591), goes
through toolkit's consent page and the upstream's login, and calls a tool that uses the
caller's upstream token against the upstream's userinfo endpoint.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.http_support import serve
from tests.support.authserver import READY_TIMEOUT, AuthServer, authserver_available, start_authserver
from tests.support.consent_login import ConsentingLogin
from tests.support.oauth_login import query
from tests.support.processes import REPO, free_port
from tests.support.proxy_flow import ProxyFlow
from tests.test_auth_real import missing

from toolkit import Context, Server
from toolkit.auth import OIDC, OAuthProxy, UpstreamLoginRequired, UpstreamToken
from toolkit.client import Client, OAuth
from toolkit.testing import Client as MemoryClient

pytestmark = pytest.mark.timeout(READY_TIMEOUT + 120)

UPSTREAM_CLIENT = ("toolkit-proxy", "proxy-secret")
TIMEOUT = 60.0


@pytest.fixture(scope="module")
def idp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AuthServer]:
    """oidc-provider with one confidential client for toolkit: a native client, so its loopback
    redirect URI matches on any port (each test serves toolkit on a port of its own)."""
    with upstream_for_toolkit(tmp_path_factory.mktemp("idp")) as server:
        yield server


@contextlib.contextmanager
def upstream_for_toolkit(directory: Path, *, issuer_path: str = "") -> Iterator[AuthServer]:
    """oidc-provider (served under ``issuer_path``) with toolkit's confidential client, running for the block."""
    if not authserver_available():
        missing("the test authorization server is not installed: scripts/authserver --install-only installs it")
    client = {
        "client_id": UPSTREAM_CLIENT[0],
        "client_secret": UPSTREAM_CLIENT[1],
        "application_type": "native",
        "token_endpoint_auth_method": "client_secret_basic",
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "redirect_uris": ["http://127.0.0.1/authorize/callback"],
    }
    os.environ["AUTHSERVER_CLIENTS"] = json.dumps([client])  # read by node at its start only
    try:
        server = start_authserver(directory, issuer_path=issuer_path)
    finally:
        del os.environ["AUTHSERVER_CLIENTS"]
    with server:
        yield server


def proxied_server(idp: AuthServer, port: int, **options: Any) -> tuple[Server, OAuthProxy]:
    proxy = OAuthProxy(
        upstream=OIDC(idp.issuer, *UPSTREAM_CLIENT, scopes=["openid"], allow_http_loopback=True),
        base_url=f"http://127.0.0.1:{port}",
        **options,
    )
    server = Server("upstream-demo", auth=proxy)
    userinfo = idp.metadata["userinfo_endpoint"]

    @server.tool
    async def upstream_me(token: UpstreamToken, ctx: Context) -> dict[str, Any]:
        """Who the upstream says the caller is, asked with the caller's own upstream token."""
        async with httpx.AsyncClient(timeout=TIMEOUT) as http:
            reply = await http.get(userinfo, headers={"authorization": f"Bearer {token}"})
        reply.raise_for_status()
        access = ctx.access_token
        assert access is not None
        return {"subject": access.subject, "upstream": reply.json()["sub"], "client": access.client_id}

    return server, proxy


async def test_toolkit_client_logs_in_through_consent_and_the_upstream(idp: AuthServer) -> None:
    port = free_port()
    server, _ = proxied_server(idp, port)
    login = ConsentingLogin()
    async with serve(server, port=port) as running:
        oauth = OAuth(user_agent=login, allow_http_loopback=True, client_name="proxy-tests")
        async with Client(running.url, auth=oauth, timeout=TIMEOUT) as client:
            result = await client.call_tool("upstream_me")
            again = await client.call_tool("upstream_me")  # the same token, no second login

    assert result.data["subject"] == "alice"
    assert result.data["upstream"] == "alice"  # the upstream answered the upstream token toolkit kept
    assert again.data == result.data
    (page,) = login.consent_pages  # one consent, naming the client and where it will be sent
    assert "proxy-tests" in page and "upstream-demo" in page and "Allow" in page and idp.issuer in page
    (asked,) = [query(url) for url in login.authorizations]
    assert asked["code_challenge_method"] == "S256"
    assert asked["resource"] == running.url


async def test_the_metadata_and_the_key_set_are_public(idp: AuthServer) -> None:
    port = free_port()
    server, proxy = proxied_server(idp, port)
    async with serve(server, port=port) as running, httpx.AsyncClient(timeout=TIMEOUT) as http:
        metadata = (await http.get(f"{running.base}/.well-known/oauth-authorization-server")).json()
        keys = (await http.get(metadata["jwks_uri"])).json()
        resource = (await http.get(f"{running.base}/.well-known/oauth-protected-resource/mcp")).json()
        challenge = await http.post(running.url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        head = await http.head(f"{running.base}/.well-known/oauth-authorization-server")

    assert metadata["issuer"] == running.base
    assert metadata["code_challenge_methods_supported"] == ["S256"]
    assert metadata["client_id_metadata_document_supported"] is True
    assert metadata["registration_endpoint"] == f"{running.base}/register"
    assert [key["kid"] for key in keys["keys"]] == [proxy.keys.current.kid]
    assert all("d" not in key for key in keys["keys"])  # public halves only
    assert resource["authorization_servers"] == [running.base]
    assert resource["resource"] == running.url
    assert challenge.status_code == 401
    assert head.status_code == 200 and head.content == b""


async def test_a_tool_without_an_upstream_login_says_so(idp: AuthServer) -> None:
    port = free_port()
    server, _ = proxied_server(idp, port)
    async with MemoryClient(server) as client:  # in process: no token at all
        reply = await client.call_tool("upstream_me")
    assert reply["isError"] is True
    assert "no token toolkit issued" in reply["content"][0]["text"]


async def expire_upstream(proxy: OAuthProxy, grant_id: str, **changes: Any) -> None:
    """Make the upstream token kept for ``grant_id`` look expired (what an hour's wait would do)."""
    grant = await proxy.grants.get("grant", grant_id)
    assert grant is not None
    upstream = proxy.sealer.open(grant["upstream"], grant_id)
    assert upstream is not None
    grant["upstream"] = proxy.sealer.seal({**upstream, "expires_at": time.time() - 120, **changes}, grant_id)
    await proxy.grants.put("grant", grant_id, grant, ttl=60)


async def test_an_expired_upstream_token_is_refreshed_upstream(idp: AuthServer) -> None:
    port = free_port()
    server, proxy = proxied_server(idp, port)
    async with serve(server, port=port) as running, httpx.AsyncClient(timeout=TIMEOUT) as http:
        flow = ProxyFlow(running.base, http)
        tokens = await flow.tokens(await flow.register())
        await flow.aclose()
        access = await proxy.verify(tokens["access_token"])
        before = await proxy.upstream_token(access)
        await expire_upstream(proxy, access.claims["gid"])
        after = await proxy.upstream_token(access)  # refreshed at oidc-provider with the kept refresh token
        await expire_upstream(proxy, access.claims["gid"])
        together = await asyncio.gather(*(proxy.upstream_token(access) for _ in range(5)))  # one user's calls at once
        userinfo = await http.get(idp.metadata["userinfo_endpoint"], headers={"authorization": f"Bearer {after}"})
        await expire_upstream(proxy, access.claims["gid"], refresh_token="not-a-refresh-token")
        with pytest.raises(UpstreamLoginRequired, match="refused to refresh"):
            await proxy.upstream_token(access)
    assert after != before
    assert len(set(together)) == 1 and together[0] != after  # refreshed once, not five times
    assert userinfo.json()["sub"] == "alice"


async def test_the_mcp_sdk_230_client_logs_in_through_the_proxy(idp: AuthServer) -> None:
    python = REPO / ".interop" / "py-mcp230" / "bin" / "python"
    if not python.exists():
        missing("the mcp 2.3.0 interop venv is missing: scripts/interop --install-only installs it")
    port = free_port()
    server, _ = proxied_server(idp, port)
    async with serve(server, port=port) as running:
        child = await asyncio.create_subprocess_exec(
            str(python), str(REPO / "tests" / "support" / "proxy_mcp230_client.py"), "--url", running.url,
            "--tool", "upstream_me", cwd=REPO, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        out, err = await child.communicate()
    assert child.returncode == 0, err.decode()
    doc = json.loads(out.decode().strip().splitlines()[-1])
    assert doc["structured"]["subject"] == "alice" and doc["structured"]["upstream"] == "alice"
    assert doc["consent_pages"] == 1
    (asked,) = doc["authorizations"]
    assert asked["code_challenge_method"] == "S256" and asked["resource"] == running.url


async def test_the_typescript_client_240_logs_in_through_the_proxy(idp: AuthServer) -> None:
    install = REPO / ".interop" / "ts-client2"
    if not (install / "node_modules" / "@modelcontextprotocol" / "client").is_dir() or shutil.which("node") is None:
        missing("the TypeScript client 2.4.0 is not installed: scripts/interop --install-only installs it")
    script = install / f"proxy_oauth_{os.getpid()}.mjs"  # beside the pinned install, so its imports resolve
    shutil.copyfile(REPO / "tests" / "support" / "proxy_ts_client2.mjs", script)
    port = free_port()
    server, _ = proxied_server(idp, port)
    try:
        async with serve(server, port=port) as running:
            child = await asyncio.create_subprocess_exec(
                "node", str(script), running.url, "upstream_me", cwd=install,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            )  # fmt: skip
            out, err = await child.communicate()
    finally:
        script.unlink()
    assert child.returncode == 0, err.decode()
    doc = json.loads(out.decode().strip().splitlines()[-1])
    assert doc["structured"]["subject"] == "alice" and doc["structured"]["upstream"] == "alice"
    assert doc["consentPages"] == 1
