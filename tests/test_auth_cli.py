"""``toolkit run --auth-*`` and ``TOOLKIT_AUTH_*``: JWT authorization configured without code.

The servers are real ``toolkit run`` processes (one worker and two), the key set a real HTTP
endpoint (``Issuer``); the tokens are checked over the wire.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import httpx
import pytest
from tests.support.apps import WEATHER
from tests.support.issuer import serve_issuer
from tests.support.processes import TOOLKIT, free_port, http_server

pytestmark = pytest.mark.timeout(90)

MODERN = "2026-07-28"
DISCOVER = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "server/discover",
    "params": {
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {},
        }
    },
}
HEADERS = {
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-protocol-version": MODERN,
    "mcp-method": "server/discover",
}
IN_CODE = """
from toolkit import Server
from toolkit.auth import AccessToken


class Anyone:
    async def verify(self, token: str) -> AccessToken:
        return AccessToken(subject=token, client_id=None, scopes=frozenset(), expires_at=None)


server = Server("in-code", auth=Anyone(), authorization_servers=["https://as.example"])
"""


def run_toolkit(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(TOOLKIT), "run", *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=30,
        env=env,
        stdin=subprocess.DEVNULL,
    )


def clean_environment(**extra: str) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items() if not name.startswith("TOOLKIT_AUTH_")}
    env.pop("TOOLKIT_RESOURCE_URL", None)
    return {**env, **extra}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--auth-issuer", "https://as.example"], "needs --auth-jwks-uri too"),
        (["--auth-jwks-uri", "https://as.example/jwks"], "needs --auth-issuer and --auth-audience"),
        (["--auth-jwks-uri", "https://as.example/jwks", "--auth-issuer", "https://as.example"], "--auth-audience"),
    ],
)
def test_incomplete_flags_are_refused_before_serving(args: list[str], message: str) -> None:
    completed = run_toolkit(str(WEATHER), "--transport", "http", "--port", "9", *args, env=clean_environment())
    assert completed.returncode == 2, completed
    assert message in completed.stderr
    assert "Traceback" not in completed.stderr


def test_flags_on_an_app_configured_in_code_are_refused(tmp_path: Path) -> None:
    app = tmp_path / "in_code.py"
    app.write_text(IN_CODE)
    completed = run_toolkit(
        str(app),
        "--transport",
        "http",
        "--auth-jwks-uri",
        "https://as.example/jwks",
        "--auth-issuer",
        "https://as.example",
        "--resource-url",
        "https://mcp.example.com/mcp",
        env=clean_environment(),
    )
    assert completed.returncode == 2
    assert "configured in code" in completed.stderr


@pytest.mark.parametrize("workers", [1, 2])
def test_flags_protect_every_worker(workers: int) -> None:
    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    with serve_issuer(resource) as issuer:
        flags = [
            "--workers",
            str(workers),
            "--auth-jwks-uri",
            issuer.jwks_uri,
            "--auth-issuer",
            issuer.issuer,
            "--resource-url",
            resource,
            "--required-scope",
            "mcp",
        ]
        with http_server(WEATHER, *flags, port=port, env=clean_environment(), timeout=30):
            document = httpx.get(f"http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp").json()
            assert document["resource"] == resource
            assert document["authorization_servers"] == [issuer.issuer]
            good, plain = issuer.token(scope="mcp"), issuer.token()
            # Several requests, so that with two workers both are very likely to answer some.
            for _ in range(6):
                refused = httpx.post(resource, json=DISCOVER, headers=HEADERS, timeout=10)
                assert refused.status_code == 401
                assert 'scope="mcp"' in refused.headers["www-authenticate"]
                short = httpx.post(resource, json=DISCOVER, headers={**HEADERS, "authorization": f"Bearer {plain}"})
                assert short.status_code == 403
                ok = httpx.post(resource, json=DISCOVER, headers={**HEADERS, "authorization": f"Bearer {good}"})
                assert ok.status_code == 200, ok.text


def test_environment_alone_configures_it() -> None:
    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    with serve_issuer(resource) as issuer:
        env = clean_environment(
            TOOLKIT_AUTH_JWKS_URI=issuer.jwks_uri,
            TOOLKIT_AUTH_ISSUER=issuer.issuer,
            TOOLKIT_AUTH_AUDIENCE=resource,
        )
        with http_server(WEATHER, port=port, env=env, timeout=30):
            assert httpx.post(resource, json=DISCOVER, headers=HEADERS).status_code == 401
            token = issuer.token()
            ok = httpx.post(resource, json=DISCOVER, headers={**HEADERS, "authorization": f"Bearer {token}"})
            assert ok.status_code == 200


def test_stdio_ignores_authorization() -> None:
    """The spec: stdio takes its credentials from the environment; the same flags change nothing there."""
    completed = subprocess.run(
        [str(TOOLKIT), "run", str(WEATHER)],
        check=False,
        input='{"jsonrpc":"2.0","id":1,"method":"ping"}\n',
        capture_output=True,
        text=True,
        timeout=30,
        env=clean_environment(TOOLKIT_AUTH_JWKS_URI="https://as.example/jwks"),
    )
    assert '"id":1' in completed.stdout.replace(" ", ""), completed.stderr
