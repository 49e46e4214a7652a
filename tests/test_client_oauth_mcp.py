"""The OAuth client against an ``mcp`` 2.3.0 resource server and the rig's real authorization server.

The authorization server is oidc-provider (tests/support/authserver.py, the module fixture of
tests/test_auth_real.py). The resource server is ``interop/servers/mcp230_protected.py``: an
``MCPServer`` with the SDK's ``AuthSettings`` and a PyJWT ``TokenVerifier``, run by the
``mcp`` 2.3.0 interop venv on a free port. ``toolkit.Client`` with ``toolkit.client.OAuth``
starts with nothing: the SDK's 401 and its protected resource metadata (RFC 9728) lead to the
authorization server, where the client registers (RFC 7591), signs in with PKCE and
``resource`` (RFC 8707), then lists and calls tools in both eras the server speaks (``auto``
ends on 2026-07-28, and 2025-11-25), and steps up on the server's ``403 insufficient_scope``
for ``admin_reset``. The CLI signs in once through ``$BROWSER`` and reuses the login kept in
its file.

``scripts/authserver --install-only`` and ``scripts/interop --install-only`` install what this
needs; without them the tests skip, or fail under ``TOOLKIT_TESTS_STRICT=1``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from tests.support.authserver import READY_TIMEOUT, AuthServer
from tests.support.oauth_login import HeadlessLogin
from tests.support.processes import REPO, TOOLKIT, free_port, stop, wait_for_port
from tests.test_auth_real import auth, missing

from toolkit._auth.oauth import parse_challenge
from toolkit._client.oauth import FileTokenStorage, MemoryTokenStorage, OAuth
from toolkit.client import Client

pytestmark = [
    pytest.mark.timeout(READY_TIMEOUT + 240),
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX servers"),
]
__all__ = ["auth"]  # the rig's fixture, shared with test_auth_real (named here for pytest and ruff)

PYTHON = REPO / ".interop" / "py-mcp230" / "bin" / "python"
PROGRAM = REPO / "interop" / "servers" / "mcp230_protected.py"
READY = 120.0
"""How long the server may take to listen: a deadline for a cold venv under stress-ng --cpu 2, not a delay."""
TIMEOUT = 60.0
"""A request's timeout: far longer than anything here takes, so a hang fails the test instead."""
MODERN, LEGACY = "2026-07-28", "2025-11-25"
PARIS = [{"hour": "09:00", "temp": 20.5}, {"hour": "10:00", "temp": 26.0}]
"""The forecast for Paris (the same tool as tests/support/secure_app.py's)."""


@dataclass
class McpServer:
    url: str
    log: Path

    @property
    def output(self) -> str:
        return self.log.read_text("utf-8", "replace")

    @property
    def metadata_url(self) -> str:
        return self.url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")


@pytest.fixture(scope="module")
def mcp230(auth: AuthServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpServer]:
    """``mcp230_protected.py`` on a free port of 127.0.0.1, a resource server of ``auth``; always stopped."""
    if not PYTHON.exists():
        missing(f"{PYTHON} is missing: scripts/interop --install-only installs the mcp 2.3.0 venv")
    port = free_port()
    log = tmp_path_factory.mktemp("mcp230") / "server.log"
    argv = [str(PYTHON), str(PROGRAM), "--port", str(port), "--issuer", auth.issuer, "--jwks-uri", auth.jwks_uri]
    with log.open("wb") as out:
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out, cwd=REPO)
    server = McpServer(f"http://127.0.0.1:{port}/mcp", log)
    try:
        try:
            wait_for_port(port, timeout=READY, process=process)
        except AssertionError as exc:
            raise AssertionError(f"the mcp 2.3.0 server did not start: {exc}\n{server.output}") from None
        yield server
    finally:
        stop(process)


def oauth(**options: object) -> OAuth:
    return OAuth(allow_http_loopback=True, **options)  # type: ignore[arg-type]


# --- what the mcp server says, unauthenticated ----------------------------------------------------


async def test_the_sdk_challenges_and_publishes_its_metadata(auth: AuthServer, mcp230: McpServer) -> None:
    """The SDK's 401 and RFC 9728 document, as the client is about to read them."""
    async with httpx.AsyncClient(timeout=TIMEOUT) as http:
        refused = await http.post(mcp230.url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        metadata = await http.get(mcp230.metadata_url)
    assert refused.status_code == 401, mcp230.output
    challenge = parse_challenge(refused.headers.get_list("www-authenticate"))
    assert (challenge.error, challenge.resource_metadata) == ("invalid_token", mcp230.metadata_url)
    assert challenge.scopes is None  # the SDK's 401 names no scope: the client takes scopes_supported
    assert metadata.status_code == 200
    document = metadata.json()
    assert document["resource"] == mcp230.url
    assert document["authorization_servers"] == [auth.issuer]
    assert document["scopes_supported"] == ["forecast:read"]


# --- toolkit.Client, signed in ------------------------------------------------------------------


@pytest.mark.parametrize("version", ["auto", LEGACY])
async def test_toolkit_client_signs_in_lists_and_calls_in_both_eras(
    auth: AuthServer, mcp230: McpServer, version: str
) -> None:
    login, storage = HeadlessLogin(), MemoryTokenStorage()
    async with Client(mcp230.url, auth=oauth(user_agent=login, storage=storage), protocol_version=version) as mcp:
        tools = await mcp.list_tools()
        forecast = await mcp.call_tool("forecast", {"city": "Paris"})
        me = await mcp.call_tool("whoami")
        era = mcp.negotiated_version
    assert era == (MODERN if version == "auto" else LEGACY), mcp230.output
    assert {tool["name"] for tool in tools} == {"forecast", "whoami", "admin_reset"}
    # mcp 2.3.0 wraps a list in {"result": ...} in both eras, declaring it in its output schema;
    # the natural value is the list.
    assert forecast.structured_content == {"result": PARIS}
    assert (forecast.data, forecast.is_error) == (PARIS, False)

    (asked,) = login.asked  # one sign-in for all of it
    assert asked["response_type"] == "code"
    assert (asked["code_challenge_method"], len(asked["code_challenge"])) == ("S256", 43)
    assert asked["resource"] == mcp230.url  # RFC 8707: the metadata's resource
    assert asked["scope"] == "forecast:read offline_access"  # scopes_supported, + offline_access (SEP-2207)
    registration = await storage.get(f"client:{auth.issuer}")
    assert registration is not None  # registered dynamically at the authorization server
    assert registration["client_id"] == asked["client_id"]
    token = await storage.get(f"token:{mcp230.url}")
    assert token is not None
    assert token["refresh_token"]
    assert me.data == {"subject": "alice", "client_id": asked["client_id"], "scopes": ["forecast:read"]}


@pytest.mark.parametrize("version", ["auto", LEGACY])
async def test_step_up_on_the_mcp_servers_insufficient_scope(auth: AuthServer, mcp230: McpServer, version: str) -> None:
    login = HeadlessLogin()
    async with Client(mcp230.url, auth=oauth(user_agent=login), protocol_version=version) as mcp:
        before = await mcp.call_tool("whoami")
        reset = await mcp.call_tool("admin_reset")  # 403 insufficient_scope, then again with admin
        after = await mcp.call_tool("whoami")
        forecast = await mcp.call_tool("forecast", {"city": "Paris"})  # forecast:read was kept
    assert reset.data == "reset done", mcp230.output
    assert before.data["scopes"] == ["forecast:read"]
    assert after.data["scopes"] == ["admin", "forecast:read"]
    assert forecast.data == PARIS
    assert [a["scope"] for a in login.asked] == ["forecast:read offline_access", "forecast:read offline_access admin"]
    assert len({a["client_id"] for a in login.asked}) == 1  # the same registration, signed in twice


async def test_a_login_kept_in_a_file_serves_a_second_client(
    auth: AuthServer, mcp230: McpServer, tmp_path: Path
) -> None:
    path = tmp_path / "tokens.json"
    login = HeadlessLogin()
    async with Client(mcp230.url, auth=oauth(user_agent=login, storage=FileTokenStorage(path))) as mcp:
        assert (await mcp.call_tool("forecast", {"city": "Paris"})).data == PARIS

    async def no_sign_in(authorization_url: str) -> str:
        raise AssertionError(f"the user was asked to sign in again: {authorization_url}")

    async with Client(mcp230.url, auth=oauth(user_agent=no_sign_in, storage=FileTokenStorage(path))) as mcp:
        assert (await mcp.call_tool("whoami")).data["subject"] == "alice"
    assert len(login.authorizations) == 1


async def test_a_token_the_mcp_server_refuses_is_refreshed(mcp230: McpServer) -> None:
    storage = MemoryTokenStorage()
    async with Client(mcp230.url, auth=oauth(user_agent=HeadlessLogin(), storage=storage)) as mcp:
        await mcp.call_tool("whoami")
    signed_in = await storage.get(f"token:{mcp230.url}")
    assert signed_in is not None

    async def no_sign_in(authorization_url: str) -> str:
        raise AssertionError(f"the user was asked to sign in again: {authorization_url}")

    # The SDK's 401 for a token its verifier refuses, with a good refresh token: refreshed, no sign-in.
    await storage.set(f"token:{mcp230.url}", {**signed_in, "access_token": "not-a-token"})
    async with Client(mcp230.url, auth=oauth(user_agent=no_sign_in, storage=storage)) as mcp:
        assert (await mcp.call_tool("whoami")).data["subject"] == "alice"
    refreshed = await storage.get(f"token:{mcp230.url}")
    assert refreshed is not None
    assert refreshed["access_token"] not in ("not-a-token", signed_in["access_token"])


# --- the CLI --------------------------------------------------------------------------------------


async def test_the_cli_signs_in_with_the_browser_once_and_keeps_the_login(mcp230: McpServer, tmp_path: Path) -> None:
    browser = f"{sys.executable} {REPO / 'tests' / 'support' / 'oauth_browser.py'} %s"
    env = {**os.environ, "TOOLKIT_OAUTH_FILE": str(tmp_path / "oauth.json"), "PYTHONPATH": str(REPO)}
    env.pop("TOOLKIT_TOKEN", None)

    async def toolkit_call(browser_command: str, *args: str) -> tuple[int, str, str]:
        process = await asyncio.create_subprocess_exec(
            str(TOOLKIT),
            "call",
            mcp230.url,
            *args,
            "--oauth",
            env={**env, "BROWSER": browser_command},
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            out, err = await asyncio.wait_for(process.communicate(), TIMEOUT * 2)
        finally:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
        assert process.returncode is not None
        return process.returncode, out.decode(), err.decode()

    code, out, err = await toolkit_call(browser, "forecast", "city=Paris")
    assert code == 0, f"{err}\n{mcp230.output}"
    assert json.loads(out)["structuredContent"] == {"result": PARIS}  # the CLI prints the result as it came
    # Signed in: the second run reuses the login kept in the file and opens no browser.
    code, out, err = await toolkit_call("false %s", "whoami")
    assert code == 0, f"{err}\n{mcp230.output}"
    assert json.loads(out)["structuredContent"]["subject"] == "alice"
    assert stat.S_IMODE((tmp_path / "oauth.json").stat().st_mode) == 0o600
