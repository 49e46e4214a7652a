"""Load test: many concurrent clients, both protocol eras, HTTP and stdio; every answer checked.

    scripts/loadtest                 20,000 HTTP requests from 16 clients + 5,000 over stdio
    scripts/loadtest --quick         a smoke run (small counts), what the test suite runs
    scripts/loadtest --help

Two servers run as ``toolkit run`` subprocesses: ``examples/weather.py`` (tools of every
result shape, tool errors, argument errors) and ``examples/notes.py`` (resources, templates,
prompts, completions, progress over SSE). Half the HTTP clients hold a legacy session
(``initialize``, then ``Mcp-Session-Id``), half send stateless 2026-07-28 requests. Each
request is drawn from a fixed mix and its expected answer is computed beforehand in-process
with ``toolkit.testing.Client``; a response is correct when its id is the request's and its
``result`` or ``error`` equals the expected one exactly.

Exit status: 0 when every request got exactly one correct response; 1 when any was lost,
duplicated, unexpected or wrong (each is listed); 2 for a usage error or a run over its time
limit. The figures (throughput, p50/p99 latency) are printed per transport and era.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import importlib.util
import itertools
import json
import os
import random
import socket
import statistics
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
MODERN = "2026-07-28"
LEGACY_VERSIONS = ("2025-03-26", "2025-06-18", "2025-11-25")
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "toolkit-loadtest", "version": "1.0"},
}
NAMED = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
REQUEST_TIMEOUT = 30.0

Json = dict[str, Any]


# --- the request mix ----------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Template:
    """One kind of request in the mix: sent to ``app``, with ``params`` (no ``_meta``)."""

    app: str
    method: str
    params: Json
    progress: bool = False

    @property
    def key(self) -> str:
        return f"{self.app} {self.method} {json.dumps(self.params, sort_keys=True)}"

    @property
    def label(self) -> str:
        name = self.params.get("name") or self.params.get("uri") or ""
        return f"{self.app}:{self.method}{' ' + str(name) if name else ''}"


def _weather_mix(module: ModuleType) -> list[Template]:
    mix = [
        Template("weather", "tools/list", {}),
        Template("weather", "tools/call", {"name": "no_such_tool", "arguments": {}}),
        Template("weather", "no/such/method", {}),
        Template("weather", "tools/call", {"name": "find_user", "arguments": {"id": "u9"}}),
        Template("weather", "tools/call", {"name": "get_weather_forecast", "arguments": {"city": "Oslo", "hours": 24}}),
    ]
    for step in module.INTEROP_PLAN:
        mix.append(Template("weather", "tools/call", {"name": step["tool"], "arguments": step["arguments"]}))
    return mix


def _notes_mix() -> list[Template]:
    summarize = {"ref": {"type": "ref/prompt", "name": "summarize"}, "argument": {"name": "note_id", "value": "1"}}
    return [
        Template("notes", "tools/list", {}),
        Template("notes", "resources/list", {}),
        Template("notes", "resources/templates/list", {}),
        Template("notes", "resources/read", {"uri": "notes://all"}),
        Template("notes", "resources/read", {"uri": "notes://1"}),
        Template("notes", "resources/read", {"uri": "notes://99"}),
        Template("notes", "prompts/list", {}),
        Template("notes", "prompts/get", {"name": "summarize", "arguments": {"note_id": "2", "style": "paragraph"}}),
        Template("notes", "prompts/get", {"name": "no_such_prompt", "arguments": {}}),
        Template("notes", "completion/complete", summarize),
        Template("notes", "tools/call", {"name": "search_notes", "arguments": {"query": "toolkit"}}),
        Template("notes", "tools/call", {"name": "search_notes", "arguments": {"query": ""}}),
        Template("notes", "tools/call", {"name": "reindex", "arguments": {}}, progress=True),
    ]


def request_params(template: Template, *, modern: bool) -> Json:
    params: Json = json.loads(json.dumps(template.params))
    meta: Json = {}
    if modern:
        meta.update(META)
    if template.progress:
        meta["progressToken"] = "load"
    if meta:
        params["_meta"] = meta
    return params


def _load(path: Path) -> ModuleType:
    name = f"_loadtest_{path.stem}_{time.monotonic_ns()}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


async def expected_answers(mix: list[Template], versions: Iterable[str]) -> dict[tuple[str, str], Json]:
    """The answer (``result`` or ``error``) to every template, per protocol version, computed in-process."""
    from toolkit.testing import Client

    answers: dict[tuple[str, str], Json] = {}
    for version in versions:
        modules = {"weather": _load(EXAMPLES / "weather.py"), "notes": _load(EXAMPLES / "notes.py")}
        for app, module in modules.items():
            async with Client(module.server, protocol_version=version) as client:
                for template in (t for t in mix if t.app == app):
                    params = request_params(template, modern=False)
                    response = await client.request(template.method, params)
                    response.pop("_http_status", None)
                    answers[(version, template.key)] = _answer_of(response)
    return answers


def _answer_of(message: Json) -> Json:
    return {"result": message["result"]} if "result" in message else {"error": message.get("error")}


# --- results ------------------------------------------------------------------------------------


@dataclasses.dataclass
class Tally:
    """What one transport and era saw."""

    name: str
    sent: int = 0
    correct: int = 0
    latencies: list[float] = dataclasses.field(default_factory=list)
    problems: list[str] = dataclasses.field(default_factory=list)
    started: float = 0.0
    finished: float = 0.0

    def fail(self, problem: str) -> None:
        self.problems.append(problem)

    def check(self, template: Template, version: str, request_id: int, answer: Json | None, expected: Json) -> bool:
        if answer is None:
            self.fail(f"lost: id {request_id} ({template.label}, {version}) got no response")
            return False
        if answer != expected:
            self.fail(
                f"wrong: id {request_id} ({template.label}, {version}): got {json.dumps(answer)[:300]}, "
                f"expected {json.dumps(expected)[:300]}"
            )
            return False
        self.correct += 1
        return True

    def line(self) -> str:
        seconds = max(self.finished - self.started, 1e-9)
        lat = sorted(self.latencies)
        p50 = statistics.median(lat) * 1000 if lat else float("nan")
        p99 = lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1000 if lat else float("nan")
        return (
            f"{self.name:<22} {self.sent:>7} {self.correct:>7} {len(self.problems):>6} "
            f"{self.sent / seconds:>9.0f} {p50:>9.2f} {p99:>9.2f}"
        )


# --- a raw HTTP/1.1 client ----------------------------------------------------------------------


class HttpError(Exception):
    pass


class Http:
    """One keep-alive connection POSTing JSON-RPC; reads JSON or SSE answers whole."""

    def __init__(self, port: int, path: str = "/mcp") -> None:
        self.port = port
        self.path = path
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            with contextlib.suppress(OSError):
                await self.writer.wait_closed()
        self.reader = self.writer = None

    async def post(self, body: bytes, headers: dict[str, str]) -> tuple[int, dict[str, str], list[Json]]:
        if self.reader is None or self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port, limit=64 * 1024 * 1024)
        lines = [
            f"POST {self.path} HTTP/1.1",
            f"Host: 127.0.0.1:{self.port}",
            "Content-Type: application/json",
            "Accept: application/json, text/event-stream",
            f"Content-Length: {len(body)}",
            *(f"{name}: {value}" for name, value in headers.items()),
        ]
        self.writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)
        head = await self.reader.readuntil(b"\r\n\r\n")
        status_line, *header_lines = head.decode("latin-1").split("\r\n")
        status = int(status_line.split(" ", 2)[1])
        response_headers: dict[str, str] = {}
        for line in header_lines:
            if line:
                name, _, value = line.partition(":")
                response_headers[name.strip().lower()] = value.strip()
        payload = await self._body(response_headers)
        if response_headers.get("connection", "").lower() == "close":
            await self.close()
        content_type = response_headers.get("content-type", "")
        if content_type.startswith("text/event-stream"):
            return status, response_headers, _sse_messages(payload)
        if not payload.strip():
            return status, response_headers, []
        message = json.loads(payload)
        return status, response_headers, [message]

    async def _body(self, headers: dict[str, str]) -> bytes:
        assert self.reader is not None
        if "content-length" in headers:
            return await self.reader.readexactly(int(headers["content-length"]))
        if headers.get("transfer-encoding", "").lower() == "chunked":
            parts = []
            while True:
                size = int((await self.reader.readuntil(b"\r\n")).split(b";", 1)[0], 16)
                if size == 0:
                    while await self.reader.readuntil(b"\r\n") != b"\r\n":
                        pass
                    return b"".join(parts)
                parts.append((await self.reader.readexactly(size + 2))[:-2])
        data = await self.reader.read()
        await self.close()
        return data


def _sse_messages(payload: bytes) -> list[Json]:
    messages = []
    for event in payload.replace(b"\r\n", b"\n").split(b"\n\n"):
        data = b"\n".join(line[5:].lstrip(b" ") for line in event.split(b"\n") if line.startswith(b"data:"))
        if data.strip():
            messages.append(json.loads(data))
    return messages


# --- servers ------------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


async def wait_listening(port: int, processes: list[Any], failure: str, timeout: float = 30.0) -> None:
    """Return once 127.0.0.1:``port`` accepts connections; RuntimeError(``failure``) if a process ends first."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            if time.monotonic() > deadline or any(process.returncode is not None for process in processes):
                raise RuntimeError(failure) from None
            await asyncio.sleep(0.05)
            continue
        writer.close()
        return


def _toolkit() -> str:
    candidate = Path(sys.executable).with_name("toolkit")
    return str(candidate) if candidate.exists() else "toolkit"


@contextlib.asynccontextmanager
async def http_servers(log_dir: Path) -> Any:
    ports = {"weather": _free_port(), "notes": _free_port()}
    processes = []
    try:
        for app, port in ports.items():
            log = (log_dir / f"loadtest-{app}-http.log").open("wb")
            process = await asyncio.create_subprocess_exec(
                _toolkit(), "run", str(EXAMPLES / f"{app}.py"), "--transport", "http", "--port", str(port),
                stdout=log, stderr=log,
            )  # fmt: skip
            processes.append(process)
        for port in ports.values():
            await wait_listening(port, processes, f"an HTTP server did not start; see {log_dir}")
        yield ports
    finally:
        for process in processes:
            if process.returncode is None:
                process.terminate()
        for process in processes:
            try:
                await asyncio.wait_for(process.wait(), 15)
            except TimeoutError:
                process.kill()
                await process.wait()


# --- HTTP clients -------------------------------------------------------------------------------


class HttpClient:
    """One simulated client: a connection (and, for legacy, a session) per server."""

    def __init__(self, ports: dict[str, int], version: str, tally: Tally, answers: dict[tuple[str, str], Json]) -> None:
        self.modern = version == MODERN
        self.version = version
        self.tally = tally
        self.answers = answers
        self.connections = {app: Http(port) for app, port in ports.items()}
        self.sessions: dict[str, str] = {}

    async def open(self, ids: Iterable[int]) -> None:
        if self.modern:
            return
        numbers = iter(ids)
        for app, connection in self.connections.items():
            init = {
                "jsonrpc": "2.0",
                "id": next(numbers),
                "method": "initialize",
                "params": {
                    "protocolVersion": self.version,
                    "capabilities": {},
                    "clientInfo": {"name": "toolkit-loadtest", "version": "1.0"},
                },
            }
            status, headers, messages = await connection.post(json.dumps(init).encode(), {})
            if status != 200 or "mcp-session-id" not in headers:
                raise HttpError(f"{app}: initialize failed: HTTP {status} {messages}")
            self.sessions[app] = headers["mcp-session-id"]
            note = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()
            status, _, _ = await connection.post(note, self._headers(app, None))
            if status != 202:
                raise HttpError(f"{app}: notifications/initialized: HTTP {status}")

    def _headers(self, app: str, template: Template | None) -> dict[str, str]:
        headers = {"MCP-Protocol-Version": self.version}
        if self.modern and template is not None:
            headers["Mcp-Method"] = template.method
            field = NAMED.get(template.method)
            if field is not None:
                headers["Mcp-Name"] = str(template.params[field])
        if not self.modern:
            headers["Mcp-Session-Id"] = self.sessions[app]
        return headers

    async def run(self, templates: list[Template], ids: Iterable[int]) -> None:
        for template, request_id in zip(templates, ids, strict=False):
            body = {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": template.method,
                "params": request_params(template, modern=self.modern),
            }
            self.tally.sent += 1
            connection = self.connections[template.app]
            started = time.perf_counter()
            try:
                status, _, messages = await asyncio.wait_for(
                    connection.post(json.dumps(body).encode(), self._headers(template.app, template)), REQUEST_TIMEOUT
                )
            except (OSError, asyncio.IncompleteReadError, TimeoutError, ValueError, HttpError) as exc:
                self.tally.fail(f"lost: id {request_id} ({template.label}, {self.version}): {exc!r}")
                await connection.close()
                continue
            elapsed = time.perf_counter() - started
            responses = [m for m in messages if "result" in m or "error" in m]
            mine = [m for m in responses if m.get("id") == request_id]
            if len(mine) > 1:
                self.tally.fail(f"duplicated: id {request_id} ({template.label}) answered {len(mine)} times")
                continue
            strangers = [m for m in responses if m.get("id") != request_id]
            if strangers:
                self.tally.fail(f"unexpected: HTTP answer to id {request_id} carried {strangers[:2]}")
                continue
            answer = _answer_of(mine[0]) if mine else None
            expected = self.answers[(self.version, template.key)]
            if self.tally.check(template, self.version, request_id, answer, expected):
                self.tally.latencies.append(elapsed)
            if mine and "result" in mine[0] and status != 200:
                self.tally.fail(f"wrong status: id {request_id} ({template.label}): HTTP {status} with a result")

    async def close(self) -> None:
        for connection in self.connections.values():
            await connection.close()


# --- stdio --------------------------------------------------------------------------------------


class StdioServer:
    """One ``toolkit run APP`` over stdio, requests pipelined, every line on stdout recorded."""

    def __init__(self, app: str, tally: Tally, answers: dict[tuple[str, str], Json], log_dir: Path) -> None:
        self.app = app
        self.tally = tally
        self.answers = answers
        self.log_dir = log_dir
        self.responses: dict[Any, list[Json]] = {}
        self.waiters: dict[Any, asyncio.Future[Json]] = {}
        self.bad_lines: list[bytes] = []
        self.process: asyncio.subprocess.Process | None = None

    async def start(self) -> None:
        log = (self.log_dir / f"loadtest-{self.app}-stdio.log").open("wb")
        self.process = await asyncio.create_subprocess_exec(
            _toolkit(), "run", str(EXAMPLES / f"{self.app}.py"),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=log, limit=64 * 1024 * 1024,
        )  # fmt: skip
        self.reading = asyncio.create_task(self._read())

    async def _read(self) -> None:
        assert self.process is not None
        assert self.process.stdout is not None
        while line := await self.process.stdout.readline():
            try:
                message = json.loads(line)
            except ValueError:
                self.bad_lines.append(line)
                continue
            if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
                self.bad_lines.append(line)
                continue
            if "result" in message or "error" in message:
                request_id = message.get("id")
                self.responses.setdefault(request_id, []).append(message)
                waiter = self.waiters.pop(request_id, None)
                if waiter is not None and not waiter.done():
                    waiter.set_result(message)

    async def request(self, request_id: int, method: str, params: Json) -> Json:
        assert self.process is not None
        assert self.process.stdin is not None
        waiter: asyncio.Future[Json] = asyncio.get_running_loop().create_future()
        self.waiters[request_id] = waiter
        line = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}) + "\n"
        self.process.stdin.write(line.encode())
        await self.process.stdin.drain()
        return await asyncio.wait_for(waiter, REQUEST_TIMEOUT)

    async def notify(self, method: str) -> None:
        assert self.process is not None
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps({"jsonrpc": "2.0", "method": method}).encode() + b"\n")
        await self.process.stdin.drain()

    async def finish(self) -> int:
        assert self.process is not None
        assert self.process.stdin is not None
        self.process.stdin.close()
        code = await asyncio.wait_for(self.process.wait(), 60)
        await self.reading
        return code


async def run_stdio(
    mix: list[Template], total: int, answers: dict[tuple[str, str], Json], log_dir: Path, seed: int
) -> list[Tally]:
    """Both apps over stdio, each process serving a legacy session and modern requests at once."""
    tallies = {"legacy": Tally("stdio legacy"), "modern": Tally("stdio modern")}
    servers = {app: StdioServer(app, tallies["legacy"], answers, log_dir) for app in ("weather", "notes")}
    numbers = itertools.count(1)
    rng = random.Random(seed)
    setup: set[int] = set()
    for server in servers.values():
        await server.start()
        request_id = next(numbers)
        setup.add(request_id)
        init = await server.request(
            request_id,
            "initialize",
            {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "load", "version": "1"}},
        )
        if "result" not in init:
            raise RuntimeError(f"stdio initialize failed: {init}")
        await server.notify("notifications/initialized")
    plan = [(rng.choice(mix), rng.random() < 0.5) for _ in range(total)]
    sent: dict[int, tuple[Template, str]] = {}
    in_flight = asyncio.Semaphore(16)
    started = time.perf_counter()
    for tally in tallies.values():
        tally.started = started

    async def one(template: Template, modern: bool) -> None:
        async with in_flight:
            request_id = next(numbers)
            version = MODERN if modern else "2025-11-25"
            tally = tallies["modern" if modern else "legacy"]
            sent[request_id] = (template, version)
            tally.sent += 1
            began = time.perf_counter()
            try:
                await servers[template.app].request(
                    request_id, template.method, request_params(template, modern=modern)
                )
            except TimeoutError:
                return  # reported as lost below
            tally.latencies.append(time.perf_counter() - began)

    await asyncio.gather(*(one(template, modern) for template, modern in plan))
    finished = time.perf_counter()
    for tally in tallies.values():
        tally.finished = finished
    for app, server in servers.items():
        code = await server.finish()
        if code != 0:
            tallies["legacy"].fail(f"stdio {app}: the server exited with code {code}")
        for line in server.bad_lines[:5]:
            tallies["legacy"].fail(f"stdio {app}: not a JSON-RPC message on stdout: {line[:200]!r}")
    responses: dict[Any, list[Json]] = {}
    for server in servers.values():
        for request_id, messages in server.responses.items():
            responses.setdefault(request_id, []).extend(messages)
    for request_id, (template, version) in sent.items():
        tally = tallies["modern" if version == MODERN else "legacy"]
        got = responses.get(request_id, [])
        if len(got) > 1:
            tally.fail(f"duplicated: id {request_id} ({template.label}) answered {len(got)} times")
            continue
        tally.check(
            template, version, request_id, _answer_of(got[0]) if got else None, answers[(version, template.key)]
        )
    for request_id in responses.keys() - sent.keys() - setup:
        tallies["legacy"].fail(f"unexpected: a response to id {request_id!r}, which nobody sent")
    return list(tallies.values())


# --- the run ------------------------------------------------------------------------------------


async def run_http(
    mix: list[Template], total: int, clients: int, answers: dict[tuple[str, str], Json], log_dir: Path, seed: int
) -> list[Tally]:
    tallies = {"legacy": Tally("HTTP legacy sessions"), "modern": Tally("HTTP modern stateless")}
    rng = random.Random(seed)
    numbers = itertools.count(1_000_000)
    async with http_servers(log_dir) as ports:
        workers = []
        for index in range(clients):
            modern = index % 2 == 1
            version = MODERN if modern else LEGACY_VERSIONS[(index // 2) % len(LEGACY_VERSIONS)]
            workers.append(HttpClient(ports, version, tallies["modern" if modern else "legacy"], answers))
        for worker in workers:
            await worker.open(numbers)
        share, extra = divmod(total, clients)
        plans = [[rng.choice(mix) for _ in range(share + (1 if i < extra else 0))] for i in range(clients)]
        started = time.perf_counter()
        for tally in tallies.values():
            tally.started = started
        await asyncio.gather(*(worker.run(plan, numbers) for worker, plan in zip(workers, plans, strict=True)))
        finished = time.perf_counter()
        for tally in tallies.values():
            tally.finished = finished
        for worker in workers:
            await worker.close()
    return list(tallies.values())


async def main_async(args: argparse.Namespace) -> int:
    log_dir = Path(args.log_dir)
    log_dir.mkdir(parents=True, exist_ok=True)
    mix = _weather_mix(_load(EXAMPLES / "weather.py")) + _notes_mix()
    versions = {MODERN, "2025-11-25", *LEGACY_VERSIONS}
    answers = await expected_answers(mix, sorted(versions))
    tallies: list[Tally] = []
    try:
        async with asyncio.timeout(args.time_limit):
            if args.requests:
                tallies += await run_http(mix, args.requests, args.clients, answers, log_dir, args.seed)
            if args.stdio_requests:
                tallies += await run_stdio(mix, args.stdio_requests, answers, log_dir, args.seed + 1)
    except TimeoutError:
        print(f"error: the run took longer than {args.time_limit:g} s", file=sys.stderr)
        return 2
    print(f"{'transport / era':<22} {'sent':>7} {'correct':>7} {'bad':>6} {'req/s':>9} {'p50 ms':>9} {'p99 ms':>9}")
    for tally in tallies:
        print(tally.line())
    for transport in ("HTTP", "stdio"):
        group = [tally for tally in tallies if tally.name.startswith(transport)]
        if len(group) > 1:
            merged = Tally(f"{transport} (both eras)")
            merged.sent = sum(t.sent for t in group)
            merged.correct = sum(t.correct for t in group)
            merged.latencies = [latency for t in group for latency in t.latencies]
            merged.problems = [problem for t in group for problem in t.problems]
            merged.started = min(t.started for t in group)
            merged.finished = max(t.finished for t in group)
            print(merged.line())
    sent = sum(t.sent for t in tallies)
    correct = sum(t.correct for t in tallies)
    problems = [problem for tally in tallies for problem in tally.problems]
    print(f"total: {sent} requests, {correct} correct, {len(problems)} problems ({len(mix)} request kinds)")
    for problem in problems[:50]:
        print(f"  {problem}")
    if len(problems) > 50:
        print(f"  ... and {len(problems) - 50} more")
    return 0 if not problems and correct == sent else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="loadtest", description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--requests", type=int, default=20_000, help="HTTP requests in all (default 20000)")
    parser.add_argument("--stdio-requests", type=int, default=5_000, help="stdio requests in all (default 5000)")
    parser.add_argument("--clients", type=int, default=16, help="concurrent HTTP clients (default 16)")
    parser.add_argument("--time-limit", type=float, default=900.0, help="give up after this many seconds (900)")
    parser.add_argument("--seed", type=int, default=2106, help="seed of the request mix (default 2106)")
    parser.add_argument("--log-dir", default=os.environ.get("TMPDIR", "/tmp"), help="server logs go here")
    parser.add_argument("--quick", action="store_true", help="smoke run: 400 HTTP and 200 stdio requests, 4 clients")
    args = parser.parse_args(argv)
    if args.quick:
        args.requests, args.stdio_requests, args.clients = 400, 200, 4
    if args.clients < 1 or args.requests < 0 or args.stdio_requests < 0:
        parser.error("counts must be positive")
    return asyncio.run(main_async(args))


if __name__ == "__main__":
    sys.exit(main())
