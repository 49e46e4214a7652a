"""Benchmark toolkit against the anchors (mcp 2.3.0's MCPServer, fastmcp 4.1.6), side by side.

Usually run through ``scripts/bench``, which prepares the anchors' venv first. Directly::

    python -m bench.run [--quick] [--rounds N] [--only toolkit,mcp] [--scenarios calls,list500,...]
    python -m bench.run --baseline HEAD~3 --only toolkit,base   # before/after: toolkit at HEAD~3

Every scenario runs for every framework in turn, round by round (round 1: toolkit, mcp,
fastmcp, floor; round 2: ...), and the table reports the median over rounds. With ``--baseline
REF``, toolkit as of REF is one more column (``toolkit@<short sha>``, right after toolkit),
interleaved the same way, and the table adds the ratio toolkit / toolkit@<short sha>. The
``floor`` column is a frameworkless server (``bench/servers/floor_server.py``) that does the least
work per call; it runs the ``calls`` and ``import`` groups only, and the table adds toolkit / floor.
"""

import argparse
import asyncio
import json
import math
import os
import secrets
import shutil
import signal
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import openapi, procs, publish, report
from bench.authserver import authserver_calls
from bench.baseline import ALIASES, Baseline, BaselineError, compile_sources, prepare
from bench.bigresults import big_calls
from bench.clients import client_calls, testing_calls
from bench.cluster import SERVED_BY, Balancer, RedisServer
from bench.compose import gateway_calls, mount_calls
from bench.depends import depends_calls
from bench.driver import (
    ACCEPT_BOTH,
    TASKS_EXTENSION,
    Era,
    HttpTransport,
    Session,
    StdioTransport,
    TokenSupply,
    Unsupported,
    expected_forecast,
    structured_check,
)
from bench.hop import hop_calls
from bench.jwks import JwksServer
from bench.metrics import (
    AUTH_VARIANTS,
    ERAS,
    FLOOR,
    FLOOR_UNSUPPORTED,
    FRAMEWORKS,
    MIDDLEWARE_METRICS,
    MIDDLEWARE_MODES,
    MIDDLEWARE_VARIANTS,
    NODE_GROUPS,
    NODE_UNSUPPORTED,
    NODES,
    REPLICA_COUNTS,
    SCALEOUT_CPU,
    STORE_ERAS,
    STORE_VARIANTS,
    STORES,
    TASK_METRICS,
    TASK_VARIANTS,
    Collector,
)
from bench.scale import sessions_and_streams

ROOT = Path(__file__).resolve().parent.parent
SERVERS = ROOT / "bench" / "servers"
RESULTS = ROOT / "bench" / "results"
ANCHORS_PYTHON = ROOT / ".bench" / "anchors-venv" / "bin" / "python"
TOOLKIT_PYTHON = ROOT / ".venv" / "bin" / "python"
# The Node columns: scripts/bench installs bench/servers/node there (npm ci) and copies its .mjs beside.
NODE_DIR = ROOT / ".bench" / "node"
NODE_SERVERS = {"node": "server.mjs", "node2": "server2.mjs"}
WEATHER = ROOT / "examples" / "weather.py"  # the store and scaleout scenarios' app
FORECAST_HOURS = 24
# Its forecast tool, with the arguments of bench/load.py's mix.
FORECAST = ("get_weather_forecast", {"city": "Oslo", "hours": FORECAST_HOURS})
LONG_RUNNING = ROOT / "examples" / "long_running.py"  # the tasks scenario's app
# Its task="optional" tool with no sections: it returns at once, so a task costs only the task's own work.
REPORT = ("build_report", {"topic": "t", "sections": 0})
EXPECTED_REPORT = {"topic": "t", "sections": []}

IMPORTS = {
    "toolkit": "from toolkit import Server",
    "mcp": "from mcp.server.mcpserver import MCPServer",
    "fastmcp": "from fastmcp import FastMCP",
    # What the floor server imports to serve get_items (``import pydantic`` alone loads next to
    # nothing: pydantic imports BaseModel and TypeAdapter lazily, on first access).
    FLOOR: "from pydantic import BaseModel, TypeAdapter",
}
MODULES = {"toolkit": "toolkit", "mcp": "mcp", "fastmcp": "fastmcp", FLOOR: "pydantic"}  # what the probe reports
DISTRIBUTIONS = {"toolkit": "toolkit", "mcp": "mcp", "fastmcp": "fastmcp", FLOOR: "pydantic"}
SCENARIO_GROUPS = (
    "import",
    "register",
    "calls",
    "auth",
    "middleware",
    "list500",
    "rss",
    "store",
    "scaleout",
    "tasks",
    "depends",
    "client",
    "compose",
    "openapi",
    "scale",
    "big",
    "authserver",
)
# Run when --scenarios is not given; store and scaleout (redis-server, HAProxy) and tasks
# (toolkit only) only when asked.
DEFAULT_GROUPS = ("import", "register", "calls", "auth", "middleware", "list500", "rss", "client", "compose")
BATCH_METRICS = ("cpu_us", "calls_per_s", "p50_us", "p99_us")
AUTH_METRICS = ("cpu_us", "p50_us")  # the auth batches' figures (cpu_ratio is derived after the run)
STORE_METRICS = ("cpu_us", "p50_us")  # the store batches' figures (cpu_ratio is derived after the run)
# What each middleware variant needs of toolkit's column (a statement its Python must run), and
# what its column says when that fails.
MIDDLEWARE_NEEDS: dict[str, tuple[tuple[str, str], ...]] = {
    "none": (),
    "passthrough": (("from toolkit.middleware import Middleware", "has no toolkit.middleware (it predates it)"),),
    "logging": (
        ("from toolkit.middleware import RequestLogging", "has no toolkit.middleware.RequestLogging (it predates it)"),
    ),
    "otel": (
        ("import toolkit._telemetry", "has no OpenTelemetry tracing (toolkit._telemetry; it predates it)"),
        (
            "import opentelemetry.sdk.trace, opentelemetry.sdk.metrics",
            "cannot import opentelemetry-sdk (the otel extra)",
        ),
    ),
}


@dataclass
class Framework:
    name: str  # the column: toolkit, mcp, fastmcp, floor, or toolkit@<short sha> for the baseline
    python: Path
    kind: str  # whose server, import and register code it runs: toolkit, mcp, fastmcp or floor
    # Where `import toolkit` must resolve (checked by the probe), when a comparison depends on it.
    src: Path | None = None
    # The servers' PYTHONPATH (server_env clears any inherited one), ahead of site-packages: how
    # the baseline column swaps in the old package while keeping the .venv's interpreter and deps.
    pythonpath: Path | None = None
    available: bool = True
    reason: str = ""
    version: str = ""
    python_version: str = ""
    module_file: str = ""  # the imported package's __file__, as the probe saw it

    @property
    def server(self) -> Path:
        if self.kind in NODES:
            return NODE_DIR / NODE_SERVERS[self.kind]
        return SERVERS / f"{self.kind}_server.py"

    def environ(self, base: dict[str, str]) -> dict[str, str]:
        if self.pythonpath is None:
            return base
        return {**base, "PYTHONPATH": str(self.pythonpath)}


@dataclass(frozen=True)
class Settings:
    rounds: int
    calls: int  # measured tools/call per batch
    warmup: int  # unmeasured tools/call before each batch
    concurrency: int
    list_steady: int  # measured tools/list calls after the first
    import_runs: int  # fresh interpreters per framework per round
    batch_timeout: float  # seconds one measured batch may take
    start_timeout: float  # seconds a server may take to answer its first request
    idle_settle: float  # seconds to wait before reading idle RSS
    scaleout_seconds: float  # scaleout: measured seconds per replica count, era and round
    scaleout_warmup: float  # scaleout: unmeasured seconds of the same load before that

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> "Settings":
        quick = args.quick
        return cls(
            rounds=args.rounds or (1 if quick else 5),
            calls=args.calls or (100 if quick else 2000),
            warmup=20 if quick else 200,
            concurrency=16,
            list_steady=2 if quick else 10,
            import_runs=1 if quick else 3,
            batch_timeout=120.0 if quick else 300.0,
            start_timeout=60.0,
            idle_settle=0.2,
            scaleout_seconds=args.scaleout_seconds or (1.0 if quick else 10.0),
            scaleout_warmup=0.3 if quick else 2.0,
        )


def server_env() -> dict[str, str]:
    env = dict(os.environ)
    # TOOLKIT_STORE too: a server without --store must use the memory store, whatever the shell says.
    # BENCH_MIDDLEWARE, BENCH_MOUNT and BENCH_UPSTREAM too: only the middleware and compose scenarios
    # set them. And OTEL_*: the SDK the otel variant configures reads them (sampler, limits,
    # OTEL_SDK_DISABLED), the shell must not.
    unset = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP", "TOOLKIT_STORE")
    for name in (*unset, "BENCH_MIDDLEWARE", "BENCH_MOUNT", "BENCH_UPSTREAM", "BENCH_DEPENDS"):
        env.pop(name, None)
    for name in [name for name in env if name.startswith("OTEL_")]:
        del env[name]
    env["FASTMCP_CHECK_FOR_UPDATES"] = "off"  # never let a server reach the network
    return env


def percentile(sorted_values: list[float], q: float) -> float:
    """Nearest-rank percentile of an already sorted list."""
    index = max(0, min(len(sorted_values) - 1, math.ceil(q * len(sorted_values)) - 1))
    return sorted_values[index]


class Bench:
    def __init__(
        self, settings: Settings, frameworks: list[Framework], log_dir: Path, baseline: str | None = None
    ) -> None:
        self.s = settings
        self.frameworks = frameworks
        self.log_dir = log_dir
        self.collector = Collector(baseline)
        base_env = server_env()
        self.envs = {fw.name: fw.environ(base_env) for fw in frameworks}
        self.round = 0
        self._auth_support: dict[str, str | None] = {}  # framework -> why auth cannot run there
        self._store_support: dict[str, str | None] = {}  # framework -> why store/scaleout cannot run
        self._tasks_support: dict[str, str | None] = {}  # framework -> why tasks cannot run
        self._middleware_support: dict[str, dict[str, str | None]] = {}  # framework -> variant -> why not
        self._client_support: dict[tuple[str, str], str] = {}  # (framework, transport) -> why its client cannot
        self._client_import_checked: set[str] = set()  # toolkit columns whose `import toolkit` was checked
        self._compose_support: dict[str, dict[str, str | None]] = {}  # mount/proxy -> framework -> why not

    # --- helpers ------------------------------------------------------------------------------

    def _log(self, fw: Framework, what: str) -> Path:
        return self.log_dir / f"{fw.name}-{what}-r{self.round}.log"

    async def _spawn_stdio(
        self, fw: Framework, workload: str, what: str, env: dict[str, str] | None = None
    ) -> tuple[asyncio.subprocess.Process, float]:
        argv = [str(fw.python), str(fw.server), "--workload", workload, "--transport", "stdio"]
        return await procs.start(argv, env or self.envs[fw.name], self._log(fw, what), stdio=True)

    async def _batch(
        self,
        fw: Framework,
        prefix: str,
        pid: int,
        sessions: list[Session],
        calls: int,
        warmup: int,
        metrics: tuple[str, ...] = BATCH_METRICS,
        also: dict[str, int] | None = None,
        raw: dict[str, Any] | None = None,
    ) -> dict[str, float]:
        """Warm up, then ``calls`` tools/call spread over ``sessions`` (one worker each): get_items,
        or the tool a session was given with ``Session.use_tool``, or the task operations of
        ``Session.use_task`` (a call is then the whole operation: its latency spans every request).

        ``metrics`` are the figures recorded under ``prefix`` (of cpu_us, calls_per_s, p50_us, p99_us,
        requests: requests per call, their mean; the raw record counts the calls by requests sent).
        The CPU time of the processes in ``also`` (name -> pid) is read at the same moments as the
        server's; their CPU seconds over the batch are returned by name. ``raw``, when given, is the
        cpu_us sample's raw record (CPU seconds and count are added to it; the caller may add more).
        """
        also = also or {}
        async with asyncio.timeout(self.s.batch_timeout):
            await asyncio.gather(*(_calls(s, max(1, warmup // len(sessions))) for s in sessions))
            latencies: list[float] = []
            requests: list[int] = []
            remaining = [calls]

            async def worker(session: Session) -> None:
                while remaining[0] > 0:
                    remaining[0] -= 1
                    await session.call()
                    latencies.append(session.last_latency * 1e6)
                    requests.append(session.last_requests)

            also0 = {name: procs.cpu_seconds(other) for name, other in also.items()}
            cpu0, wall0 = procs.cpu_seconds(pid), time.perf_counter()
            await asyncio.gather(*(worker(s) for s in sessions))
            wall, cpu1 = time.perf_counter() - wall0, procs.cpu_seconds(pid)
            also1 = {name: procs.cpu_seconds(other) for name, other in also.items()}
        latencies.sort()
        figures = {
            "cpu_us": ((cpu1 - cpu0) / calls * 1e6, _merge(raw, {"cpu_s": cpu1 - cpu0, "calls": calls})),
            "calls_per_s": (calls / wall, None),
            "p50_us": (percentile(latencies, 0.50), [round(v, 1) for v in latencies]),
            "p99_us": (percentile(latencies, 0.99), None),
            "requests": (sum(requests) / calls, {str(n): count for n, count in sorted(Counter(requests).items())}),
        }
        for metric in metrics:
            value, detail = figures[metric]
            self.collector.add(f"{prefix}.{metric}", fw.name, value, detail)
        return {name: also1[name] - also0[name] for name in also}

    def _floor_skips(self, fw: Framework, keys: list[str]) -> bool:
        """The floor serves get_items only: a scenario it cannot run records its keys as
        unsupported (not an error) and starts nothing."""
        if fw.kind != FLOOR:
            return False
        self.collector.unsupported(keys, fw.name, FLOOR_UNSUPPORTED)
        return True

    async def _guard(
        self, fw: Framework, keys: list[str], body: Callable[[], Awaitable[None]], era: Era | None = None
    ) -> None:
        """Run one scenario; an unsupported era or a failure is recorded against ``keys``."""
        try:
            await body()
        except Unsupported as exc:
            self.collector.unsupported(keys, fw.name, str(exc))
            print(f"    {fw.name}: {era} era unsupported ({exc})", flush=True)
        except Exception as exc:
            self.collector.fail(keys, fw.name, self.round, exc)
            print(f"    {fw.name}: ERROR {type(exc).__name__}: {str(exc)[:300]}", flush=True)

    # --- scenarios ----------------------------------------------------------------------------

    async def imports(self, fw: Framework) -> None:
        code = f"import time; t = time.perf_counter(); {IMPORTS.get(fw.kind)}; print(time.perf_counter() - t)"
        argv = [str(fw.python), "-c", code]
        if fw.kind in NODES:
            argv = [str(fw.python), str(NODE_DIR / "import.mjs"), fw.kind]

        async def body() -> None:
            for _ in range(self.s.import_runs):
                out = await _run(argv, self.envs[fw.name], 120.0)
                self.collector.add("import_ms", fw.name, float(out.strip().splitlines()[-1]) * 1e3)

        await self._guard(fw, ["import_ms"], body)

    async def register(self, fw: Framework) -> None:
        if self._floor_skips(fw, ["register500_ms"]):
            return

        async def body() -> None:
            out = await _run([str(fw.python), str(SERVERS / "register.py"), fw.kind], self.envs[fw.name], 600.0)
            data = json.loads(out.strip().splitlines()[-1])
            if data.get("tools") != 500:
                raise RuntimeError(f"register.py registered {data.get('tools')} tools")
            self.collector.add("register500_ms", fw.name, data["seconds"] * 1e3)

        await self._guard(fw, ["register500_ms"], body)

    async def stdio_calls(self, fw: Framework, era: Era) -> None:
        """Spawn -> first response -> first tool result, then the stdio call batch, in one process."""
        prefix = f"call.stdio.{era}"
        keys = [f"{prefix}.{m}" for m in ("cpu_us", "calls_per_s", "p50_us", "p99_us")]
        keys += [f"spawn.{era}.first_response_ms", f"spawn.{era}.first_tool_ms"]

        async def body() -> None:
            process, t0 = await self._spawn_stdio(fw, "items", f"stdio-{era}")
            try:
                session = Session(StdioTransport(process), era)
                await session.open(self.s.start_timeout)
                t1 = session.transport.received_at
                await session.call_items()
                t2 = session.transport.received_at
                self.collector.add(f"spawn.{era}.first_response_ms", fw.name, (t1 - t0) * 1e3)
                self.collector.add(f"spawn.{era}.first_tool_ms", fw.name, (t2 - t0) * 1e3)
                await self._batch(fw, prefix, process.pid, [session], self.s.calls, self.s.warmup)
            finally:
                await procs.stop(process)

        await self._guard(fw, keys, body, era)

    async def http_calls(self, fw: Framework) -> None:
        """One HTTP server per framework and round; sequential and 16-client batches in each era."""
        keys_by_era = {
            era: [
                f"call.{mode}.{era}.{m}"
                for mode in ("http_seq", "http_c16")
                for m in ("cpu_us", "calls_per_s", "p50_us", "p99_us")
            ]
            for era in ERAS
        }

        async def batches(era: Era, port: int, pid: int) -> None:
            for mode, clients in (("http_seq", 1), ("http_c16", self.s.concurrency)):
                sessions = [Session(HttpTransport("127.0.0.1", port), era) for _ in range(clients)]
                try:
                    for session in sessions:
                        await session.open(self.s.start_timeout)
                    calls = self.s.calls if clients == 1 else max(self.s.calls, clients * 10)
                    await self._batch(fw, f"call.{mode}.{era}", pid, sessions, calls, self.s.warmup)
                finally:
                    for session in sessions:
                        await session.transport.close()

        await self._http_server(fw, self.envs[fw.name], "http", keys_by_era, batches)

    async def _http_server(
        self,
        fw: Framework,
        env: dict[str, str],
        what: str,
        keys_by_era: dict[Era, list[str]],
        per_era: Callable[[Era, int, int], Awaitable[None]],
    ) -> None:
        """Start ``fw``'s HTTP server on a free port, run ``per_era(era, port, pid)`` for each era
        (each guarded on its own keys), and stop it, whatever happens."""
        port = procs.free_port()
        argv = [str(fw.python), str(fw.server), "--workload", "items", "--transport", "http", "--port", str(port)]
        process = None

        async def start() -> None:
            nonlocal process
            process, _ = await procs.start(argv, env, self._log(fw, what), stdio=False)
            await procs.wait_for_port(process, port, self.s.start_timeout)

        try:
            await self._guard(fw, keys_by_era["legacy"] + keys_by_era["modern"], start)
            if process is None or process.returncode is not None:
                return
            for era in ERAS:

                async def body(era: Era = era) -> None:
                    assert process is not None
                    await per_era(era, port, process.pid)

                await self._guard(fw, keys_by_era[era], body, era)
        finally:
            if process is not None:
                await procs.stop(process)

    async def _auth_unsupported(self, fw: Framework) -> str | None:
        """Why the auth scenario cannot run for ``fw``, or ``None`` when it can (asked once per column)."""
        return await self._lacks(
            fw,
            "toolkit.auth",
            self._auth_support,
            "the auth scenario configures a bearer-token verifier in toolkit only",
            "it predates authorization",
        )

    async def auth_calls(self, fw: Framework) -> None:
        """Sequential HTTP calls with a bearer token (JWT, RS256, key set fetched once): a reusable
        token on every call, then a never-seen token on every call; both eras, one server."""
        keys_by_era = {
            era: [f"auth.http_seq.{era}.{variant}.{m}" for variant in AUTH_VARIANTS for m in AUTH_METRICS]
            for era in ERAS
        }
        every_key = keys_by_era["legacy"] + keys_by_era["modern"]
        if self._floor_skips(fw, every_key):
            return
        reason = await self._auth_unsupported(fw)
        if reason is not None:
            self.collector.unsupported(every_key, fw.name, reason)
            if fw.kind == "toolkit":
                print(f"    {fw.name}: auth unsupported ({reason})", flush=True)
            return
        port = procs.free_port()
        audience = f"http://127.0.0.1:{port}/mcp"  # the resource URL toolkit derives from each request
        argv = [str(fw.python), str(fw.server), "--workload", "items", "--transport", "http", "--port", str(port)]
        # Per era: the session's opening requests (2 in the legacy era), the warm-up and the batch.
        per_era = self.s.warmup + self.s.calls + 2
        process = None
        tokens: dict[str, Any] = {}  # tokens.json: "token" (the reusable one), "fresh" (single-use ones)

        with JwksServer() as jwks, tempfile.TemporaryDirectory(prefix="bench-auth-") as tmp:

            async def start() -> None:
                nonlocal process
                await _run(
                    [str(fw.python), str(SERVERS / "auth_tokens.py"), tmp, "--audience", audience,
                     "--issuer", jwks.issuer, "--count", str(per_era * len(ERAS))],
                    self.envs[fw.name],
                    300.0,
                )  # fmt: skip
                jwks.document = (Path(tmp) / "jwks.json").read_bytes()
                tokens.update(json.loads((Path(tmp) / "tokens.json").read_text()))
                env = {
                    **self.envs[fw.name],
                    "BENCH_AUTH_JWKS": jwks.uri,
                    "BENCH_AUTH_ISSUER": jwks.issuer,
                    "BENCH_AUTH_AUDIENCE": audience,
                }
                process, _ = await procs.start(argv, env, self._log(fw, "auth"), stdio=False)
                await procs.wait_for_port(process, port, self.s.start_timeout)

            try:
                await self._guard(fw, every_key, start)
                if process is None or process.returncode is not None:
                    return
                same: str = tokens["token"]
                fresh = TokenSupply(tokens["fresh"])  # one supply for both eras: no token is sent twice
                for era in ERAS:

                    async def body(era: Era = era) -> None:
                        assert process is not None
                        for variant in AUTH_VARIANTS:
                            bearer = fresh if variant == "fresh" else (lambda: same)
                            session = Session(HttpTransport("127.0.0.1", port, bearer=bearer), era)
                            try:
                                await session.open(self.s.start_timeout)
                                prefix = f"auth.http_seq.{era}.{variant}"
                                await self._batch(
                                    fw, prefix, process.pid, [session], self.s.calls, self.s.warmup, AUTH_METRICS
                                )
                            finally:
                                await session.transport.close()
                        if jwks.fetches != 1:
                            raise RuntimeError(f"the server fetched the key set {jwks.fetches} times, not once")

                    await self._guard(fw, keys_by_era[era], body, era)
            finally:
                if process is not None:
                    await procs.stop(process)

    async def _middleware_unsupported(self, fw: Framework) -> dict[str, str | None]:
        """Why each middleware variant cannot run for ``fw`` (``None``: it can), asked once per column
        in one interpreter of its own: its Python, its environment, its toolkit."""
        if fw.name not in self._middleware_support:
            answers: dict[str, str | None] = dict.fromkeys(MIDDLEWARE_VARIANTS)
            if fw.kind != "toolkit":
                reason = "not measured: the middleware scenario measures toolkit's own middleware and tracing"
                answers = dict.fromkeys(MIDDLEWARE_VARIANTS, reason)
            else:
                statements = [statement for needs in MIDDLEWARE_NEEDS.values() for statement, _ in needs]
                code = (
                    "import json\nfailed = {}\n"
                    f"for statement in {statements!r}:\n"
                    "    try:\n        exec(statement, {})\n"
                    "    except Exception as exc:\n        failed[statement] = f'{type(exc).__name__}: {exc}'\n"
                    "print(json.dumps(failed))\n"
                )
                try:
                    failed = json.loads((await _run([str(fw.python), "-c", code], self.envs[fw.name], 120.0)).strip())
                except Exception as exc:
                    answers = dict.fromkeys(MIDDLEWARE_VARIANTS, f"could not look for middleware in {fw.name}: {exc}")
                else:
                    for variant, needs in MIDDLEWARE_NEEDS.items():
                        lacking = [
                            f"{fw.name} {lacks}: {failed[what][:120]}" for what, lacks in needs if what in failed
                        ]
                        answers[variant] = lacking[0] if lacking else None
            self._middleware_support[fw.name] = answers
        return self._middleware_support[fw.name]

    async def middleware_calls(self, fw: Framework) -> None:
        """get_items without and with a middleware or tracing (``BENCH_MIDDLEWARE``: none,
        passthrough, logging, otel), stdio and HTTP sequential, both eras. Per round: for each era,
        one stdio process per variant; then one HTTP process per variant serving both eras. The
        variants take turns within each of those blocks, so each one's figures are close in time
        to the ``none`` figures they are divided by."""
        keys = {
            (mode, era, variant): [f"middleware.{mode}.{era}.{variant}.{m}" for m in MIDDLEWARE_METRICS]
            for mode in MIDDLEWARE_MODES
            for era in ERAS
            for variant in MIDDLEWARE_VARIANTS
        }
        if self._floor_skips(fw, [key for group in keys.values() for key in group]):
            return
        support = await self._middleware_unsupported(fw)
        for variant, reason in support.items():
            if reason is not None:
                self.collector.unsupported(
                    [k for (_, _, v), group in keys.items() if v == variant for k in group], fw.name, reason
                )
                if fw.kind == "toolkit":
                    print(f"    {fw.name}: middleware {variant} unsupported ({reason})", flush=True)
        variants = [variant for variant, reason in support.items() if reason is None]
        # Alternate the order, so a drift within a round does not favour one variant.
        order = variants if self.round % 2 else variants[::-1]
        for era in ERAS:
            for variant in order:
                await self._middleware_stdio(fw, era, variant, keys[("stdio", era, variant)])
        for variant in order:
            await self._middleware_http(fw, variant, {era: keys[("http_seq", era, variant)] for era in ERAS})

    def _middleware_env(self, fw: Framework, variant: str) -> dict[str, str]:
        return {**self.envs[fw.name], "BENCH_MIDDLEWARE": variant}

    async def _middleware_stdio(self, fw: Framework, era: Era, variant: str, keys: list[str]) -> None:
        """One stdio process, the same batch as ``call.stdio.<era>``."""

        async def body() -> None:
            env = self._middleware_env(fw, variant)
            process, _ = await self._spawn_stdio(fw, "items", f"middleware-{variant}-stdio-{era}", env)
            try:
                session = Session(StdioTransport(process), era)
                await session.open(self.s.start_timeout)
                prefix = f"middleware.stdio.{era}.{variant}"
                await self._batch(fw, prefix, process.pid, [session], self.s.calls, self.s.warmup, MIDDLEWARE_METRICS)
            finally:
                await procs.stop(process)

        await self._guard(fw, keys, body, era)

    async def _middleware_http(self, fw: Framework, variant: str, keys_by_era: dict[Era, list[str]]) -> None:
        """One HTTP process, the same batch as ``call.http_seq.<era>`` in each era (each in its own
        session and connection)."""

        async def batch(era: Era, port: int, pid: int) -> None:
            session = Session(HttpTransport("127.0.0.1", port), era)
            try:
                await session.open(self.s.start_timeout)
                prefix = f"middleware.http_seq.{era}.{variant}"
                await self._batch(fw, prefix, pid, [session], self.s.calls, self.s.warmup, MIDDLEWARE_METRICS)
            finally:
                await session.transport.close()

        env = self._middleware_env(fw, variant)
        await self._http_server(fw, env, f"middleware-{variant}-http", keys_by_era, batch)

    async def _store_unsupported(self, fw: Framework) -> str | None:
        """Why the store and scaleout scenarios cannot run for ``fw``, or ``None`` when they can."""
        return await self._lacks(
            fw,
            "toolkit.stores",
            self._store_support,
            "the store and scaleout scenarios measure toolkit's own store",
            "it predates --store",
        )

    async def _lacks(
        self, fw: Framework, module: str, answers: dict[str, str | None], not_toolkit: str, too_old: str
    ) -> str | None:
        """Why ``fw`` cannot run a toolkit-only scenario that needs ``module`` (asked once per column)."""
        if fw.name not in answers:
            reason = None
            if fw.kind != "toolkit":
                reason = f"not measured: {not_toolkit}"
            else:
                code = f"import importlib.util, sys; sys.exit(0 if importlib.util.find_spec({module!r}) else 3)"
                try:
                    await _run([str(fw.python), "-c", code], self.envs[fw.name], 120.0)
                except RuntimeError as exc:
                    reason = f"{fw.name} has no {module} ({too_old})"
                    if "exited 3" not in str(exc):
                        reason = f"could not look for {module} in {fw.name}: {str(exc)[-200:]}"
            answers[fw.name] = reason
        return answers[fw.name]

    def _toolkit_run(self, fw: Framework, port: int, store_url: str | None, app: Path = WEATHER) -> list[str]:
        """``toolkit run APP --transport http``, examples/weather.py by default (as ``python -m
        toolkit``, so the baseline column's PYTHONPATH picks its package), with ``--store`` when given."""
        argv = [str(fw.python), "-m", "toolkit", "run", str(app), "--transport", "http"]
        argv += ["--host", "127.0.0.1", "--port", str(port)]
        return argv + (["--store", store_url] if store_url is not None else [])

    @staticmethod
    def _forecast_session(port: int, era: Era, accept: str = ACCEPT_BOTH) -> Session:
        name, arguments = FORECAST
        check = structured_check(expected_forecast(FORECAST_HOURS), name)
        return Session(HttpTransport("127.0.0.1", port, accept=accept), era).use_tool(name, arguments, check)

    async def store_calls(self, fw: Framework) -> None:
        """examples/weather.py's forecast tool, HTTP sequential, with the memory store and with
        ``--store redis://`` (a redis-server of its own per round); per store one server process,
        three batches: legacy with Accept JSON+SSE, legacy with Accept JSON only, modern."""
        keys_by = {
            (store, variant): [f"store.{variant}.{store}.{m}" for m in STORE_METRICS]
            + ([f"store.{variant}.redis.redis_cpu_us"] if store == "redis" else [])
            for store in STORES
            for variant in STORE_VARIANTS
        }
        every_key = [key for keys in keys_by.values() for key in keys]
        if self._floor_skips(fw, every_key):
            return
        reason = await self._store_unsupported(fw)
        if reason is not None:
            self.collector.unsupported(every_key, fw.name, reason)
            if fw.kind == "toolkit":
                print(f"    {fw.name}: store unsupported ({reason})", flush=True)
            return
        redis = RedisServer(self._log(fw, "store-redis"))
        try:
            await self._guard(fw, every_key, redis.start)
            if redis.process is None or redis.process.returncode is not None:
                return
            # Alternate which store goes first, so a drift within a round does not favour one.
            order = STORES if self.round % 2 else STORES[::-1]
            for store in order:
                await self._store_server(fw, store, redis, keys_by)
        finally:
            await redis.stop()

    async def _store_server(
        self, fw: Framework, store: str, redis: RedisServer, keys_by: dict[tuple[str, str], list[str]]
    ) -> None:
        port = procs.free_port()
        argv = self._toolkit_run(fw, port, redis.url if store == "redis" else None)
        process = None

        async def start() -> None:
            nonlocal process
            process, _ = await procs.start(argv, self.envs[fw.name], self._log(fw, f"store-{store}"), stdio=False)
            await procs.wait_for_port(process, port, self.s.start_timeout)

        try:
            await self._guard(fw, [k for (s, _), keys in keys_by.items() if s == store for k in keys], start)
            if process is None or process.returncode is not None:
                return
            for variant in STORE_VARIANTS:

                async def body(variant: str = variant) -> None:
                    assert process is not None
                    accept = "application/json" if variant == "legacy_json" else ACCEPT_BOTH
                    session = self._forecast_session(port, STORE_ERAS[variant], accept)
                    transport = session.transport
                    assert isinstance(transport, HttpTransport)
                    try:
                        await session.open(self.s.start_timeout)
                        before = transport.sse_responses
                        # How the calls were answered (JSON or SSE), counted over warm-up and batch.
                        answered: dict[str, Any] = {"accept": accept, "answered": self.s.calls + self.s.warmup}
                        prefix = f"store.{variant}.{store}"
                        also = {"redis": redis.pid} if store == "redis" else {}
                        used = await self._batch(
                            fw,
                            prefix,
                            process.pid,
                            [session],
                            self.s.calls,
                            self.s.warmup,
                            STORE_METRICS,
                            also,
                            answered,
                        )
                        answered["sse_responses"] = transport.sse_responses - before  # raw of the cpu_us sample
                        if store == "redis":
                            self.collector.add(
                                f"{prefix}.redis_cpu_us",
                                fw.name,
                                used["redis"] / self.s.calls * 1e6,
                                {"cpu_s": used["redis"], "calls": self.s.calls},
                            )
                    finally:
                        await transport.close()

                await self._guard(fw, keys_by[(store, variant)], body, STORE_ERAS[variant])
        finally:
            if process is not None:
                await procs.stop(process)

    async def scaleout(self, fw: Framework) -> None:
        """Calls/s through HAProxy (round-robin) over 1 and 2 ``toolkit run --store redis://``
        replicas, ``concurrency`` clients for a fixed time, in each era."""
        keys_by = {
            count: {
                era: [f"scaleout.{era}.r{count}.{m}" for m in ("calls_per_s", *SCALEOUT_CPU, "busy_pct", "others_pct")]
                for era in ERAS
            }
            for count in REPLICA_COUNTS
        }
        every_key = [key for by_era in keys_by.values() for keys in by_era.values() for key in keys]
        if self._floor_skips(fw, every_key):
            return
        reason = await self._store_unsupported(fw)
        if reason is not None:
            self.collector.unsupported(every_key, fw.name, reason)
            if fw.kind == "toolkit":
                print(f"    {fw.name}: scaleout unsupported ({reason})", flush=True)
            return
        order = REPLICA_COUNTS if self.round % 2 else REPLICA_COUNTS[::-1]
        for count in order:
            await self._scaleout_cluster(fw, count, keys_by[count])

    async def _scaleout_cluster(self, fw: Framework, count: int, keys_by_era: dict[Era, list[str]]) -> None:
        """A fresh redis-server, ``count`` replicas and HAProxy; a timed run in each era; all stopped."""
        redis = RedisServer(self._log(fw, f"scaleout{count}-redis"))
        replicas: dict[str, tuple[asyncio.subprocess.Process, int]] = {}
        balancer: Balancer | None = None
        # One secret for every replica, as a deployment would configure (tests/support/cluster.py).
        env = {**self.envs[fw.name], "TOOLKIT_STATE_SECRET": secrets.token_urlsafe(32)}

        async def start() -> None:
            nonlocal balancer
            await redis.start()
            for index in range(count):
                name, port = f"r{index}", procs.free_port()
                log = self._log(fw, f"scaleout{count}-replica{index}")
                process, _ = await procs.start(self._toolkit_run(fw, port, redis.url), env, log, stdio=False)
                replicas[name] = (process, port)
            for process, port in replicas.values():
                await procs.wait_for_port(process, port, self.s.start_timeout)
            balancer = Balancer(
                [(name, port) for name, (_, port) in replicas.items()], self._log(fw, f"scaleout{count}-haproxy")
            )
            await balancer.start()

        try:
            await self._guard(fw, keys_by_era["legacy"] + keys_by_era["modern"], start)
            if balancer is None or balancer.process is None:
                return
            for era in ERAS:

                async def body(era: Era = era) -> None:
                    assert balancer is not None
                    pids = {
                        "replica_cpu_us": [process.pid for process, _ in replicas.values()],
                        "haproxy_cpu_us": [balancer.pid],
                        "redis_cpu_us": [redis.pid],
                        "client_cpu_us": [os.getpid()],
                    }
                    await self._timed(fw, f"scaleout.{era}.r{count}", balancer.port, era, pids, list(replicas))

                await self._guard(fw, keys_by_era[era], body, era)
        finally:
            try:
                if balancer is not None:
                    await balancer.stop()
            finally:
                for process, _ in replicas.values():
                    await procs.stop(process)
                await redis.stop()

    async def _timed(
        self, fw: Framework, prefix: str, port: int, era: Era, pids: dict[str, list[int]], names: list[str]
    ) -> None:
        """``concurrency`` sessions (each its own connection; legacy: its own session) call the
        forecast tool back to back: ``scaleout_warmup`` seconds unmeasured, then the measured
        ``scaleout_seconds``; calls/s, and CPU per call of each group of ``pids``."""
        sessions = [self._forecast_session(port, era) for _ in range(self.s.concurrency)]
        served: Counter[str] = Counter()
        done = [0]

        async def worker(session: Session, until: float, count: bool) -> None:
            transport = session.transport
            assert isinstance(transport, HttpTransport)
            while time.perf_counter() < until:
                await session.call()
                if count:
                    done[0] += 1
                    served[transport.last_headers.get(SERVED_BY.lower(), "?")] += 1

        def cpu() -> dict[str, float]:
            figures = {name: sum(procs.cpu_seconds(pid) for pid in group) for name, group in pids.items()}
            return {**figures, "machine": procs.machine_busy_seconds()}

        try:
            async with asyncio.timeout(self.s.batch_timeout):
                for session in sessions:
                    await session.open(self.s.start_timeout)
                until = time.perf_counter() + self.s.scaleout_warmup
                await asyncio.gather(*(worker(s, until, False) for s in sessions))
                cpu0, wall0 = cpu(), time.perf_counter()
                until = wall0 + self.s.scaleout_seconds
                await asyncio.gather(*(worker(s, until, True) for s in sessions))
                wall, cpu1 = time.perf_counter() - wall0, cpu()
        finally:
            for session in sessions:
                await session.transport.close()
        calls = done[0]
        idle = [name for name in names if not served[name]]
        if idle or set(served) - set(names):
            raise RuntimeError(f"the balancer's answers were not spread over {names}: {dict(served)}")
        used = {name: cpu1[name] - cpu0[name] for name in pids}
        # Whatever else kept the machine's cores busy meanwhile (clock ticks, hence the floor at 0).
        others = max(0.0, cpu1["machine"] - cpu0["machine"] - sum(used.values()))
        cores = os.cpu_count() or 1  # /proc/stat counts every core of the machine
        raw = {"calls": calls, "wall_s": wall, "served_by": dict(served), "cpu_s": {**used, "others": others}}
        self.collector.add(f"{prefix}.calls_per_s", fw.name, calls / wall, {**raw, "cores": cores})
        for name, seconds in used.items():
            self.collector.add(f"{prefix}.{name}", fw.name, seconds / calls * 1e6)
        self.collector.add(f"{prefix}.busy_pct", fw.name, sum(used.values()) / (wall * cores) * 100)
        self.collector.add(f"{prefix}.others_pct", fw.name, others / (wall * cores) * 100)

    async def _tasks_unsupported(self, fw: Framework) -> str | None:
        """Why the tasks scenario cannot run for ``fw``, or ``None`` when it can."""
        return await self._lacks(
            fw,
            "toolkit._store.tasks",
            self._tasks_support,
            "the tasks scenario measures toolkit's tasks (examples/long_running.py)",
            "it predates tasks",
        )

    async def tasks_calls(self, fw: Framework) -> None:
        """examples/long_running.py's build_report with no sections (it returns at once), HTTP
        sequential: plain calls, and the same call as a task (modern: ``tools/call`` declaring the
        tasks extension, then ``tasks/get`` until completed; legacy: ``tools/call`` with ``"task": {}``,
        then ``tasks/result``). One server process per era and round, so each era's tasks start
        from an empty task store."""
        keys_by_era = {
            era: [f"tasks.{era}.{variant}.{m}" for variant in TASK_VARIANTS for m in TASK_METRICS] for era in ERAS
        }
        if self._floor_skips(fw, keys_by_era["legacy"] + keys_by_era["modern"]):
            return
        reason = await self._tasks_unsupported(fw)
        if reason is not None:
            self.collector.unsupported(keys_by_era["legacy"] + keys_by_era["modern"], fw.name, reason)
            if fw.kind == "toolkit":
                print(f"    {fw.name}: tasks unsupported ({reason})", flush=True)
            return
        for era in ERAS:
            await self._tasks_server(fw, era, keys_by_era[era])

    async def _tasks_server(self, fw: Framework, era: Era, keys: list[str]) -> None:
        port = procs.free_port()
        argv = self._toolkit_run(fw, port, None, LONG_RUNNING)
        process = None
        try:

            async def start() -> None:
                nonlocal process
                process, _ = await procs.start(argv, self.envs[fw.name], self._log(fw, f"tasks-{era}"), stdio=False)
                await procs.wait_for_port(process, port, self.s.start_timeout)

            await self._guard(fw, keys, start, era)
            if process is None or process.returncode is not None:
                return

            async def body() -> None:
                assert process is not None
                # Alternate which variant goes first, so a drift within a round does not favour one.
                order = list(TASK_VARIANTS) if self.round % 2 else list(TASK_VARIANTS)[::-1]
                for variant in order:
                    session = self._report_session(port, era, task=variant == "task")
                    try:
                        await session.open(self.s.start_timeout)
                        prefix = f"tasks.{era}.{variant}"
                        await self._batch(fw, prefix, process.pid, [session], self.s.calls, self.s.warmup, TASK_METRICS)
                    finally:
                        await session.transport.close()

            await self._guard(fw, keys, body, era)
        finally:
            if process is not None:
                await procs.stop(process)

    @staticmethod
    def _report_session(port: int, era: Era, task: bool) -> Session:
        """A session calling build_report(topic="t", sections=0): plainly, or as a task (``task``).

        Modern: only the task session declares the tasks extension in its clientCapabilities, so
        the plain one gets an ordinary result from the same ``task="optional"`` tool."""
        name, arguments = REPORT
        check = structured_check(EXPECTED_REPORT, name, unwrap=False)
        capabilities: dict[str, Any] | None = (
            {"extensions": {TASKS_EXTENSION: {}}} if task and era == "modern" else None
        )
        session = Session(HttpTransport("127.0.0.1", port), era, capabilities)
        return session.use_task(name, arguments, check) if task else session.use_tool(name, arguments, check)

    async def list500(self, fw: Framework, era: Era) -> None:
        """The gen500 server over stdio: spawn -> first tools/list response, the first tools/list's
        latency, RSS (legacy), then the steady tools/list calls, in one process."""
        keys = [f"list500.{era}.{m}" for m in ("first_ms", "steady_ms", "steady_cpu_ms", "spawn_ms")]
        if era == "legacy":
            keys.append("rss.tools500_mib")
        if self._floor_skips(fw, keys):
            return

        async def body() -> None:
            process, t0 = await self._spawn_stdio(fw, "gen500", f"list500-{era}")
            try:
                session = Session(StdioTransport(process), era)
                await session.open(self.s.start_timeout)
                first = await session.list_tools(expected=500)
                # The last page's bytes complete: what a client waits for before it can pick a tool.
                self.collector.add(f"list500.{era}.spawn_ms", fw.name, (session.transport.received_at - t0) * 1e3)
                self.collector.add(f"list500.{era}.first_ms", fw.name, first * 1e3)
                if era == "legacy":
                    await asyncio.sleep(self.s.idle_settle)
                    self.collector.add("rss.tools500_mib", fw.name, procs.rss_mib(process.pid))
                steady, cpu = [], []
                async with asyncio.timeout(self.s.batch_timeout):
                    for _ in range(self.s.list_steady):
                        cpu0 = procs.cpu_seconds(process.pid)
                        steady.append(await session.list_tools(expected=500) * 1e3)
                        cpu.append((procs.cpu_seconds(process.pid) - cpu0) * 1e3)
                self.collector.add(f"list500.{era}.steady_ms", fw.name, statistics.median(steady), steady)
                self.collector.add(f"list500.{era}.steady_cpu_ms", fw.name, statistics.median(cpu), cpu)
            finally:
                await procs.stop(process)

        await self._guard(fw, keys, body, era)

    async def rss_empty(self, fw: Framework) -> None:
        if self._floor_skips(fw, ["rss.tools0_mib"]):
            return

        async def body() -> None:
            process, _ = await self._spawn_stdio(fw, "empty", "rss-empty")
            try:
                session = Session(StdioTransport(process), "legacy")
                await session.open(self.s.start_timeout)
                await session.list_tools(expected=0)
                await asyncio.sleep(self.s.idle_settle)
                self.collector.add("rss.tools0_mib", fw.name, procs.rss_mib(process.pid))
            finally:
                await procs.stop(process)

        await self._guard(fw, ["rss.tools0_mib"], body)

    # --- the run ------------------------------------------------------------------------------

    def scenarios(self, selected: set[str]) -> list[tuple[str, str, Callable[[Framework], Awaitable[None]]]]:
        """(group, description, scenario) in run order; ``group`` is what ``--scenarios`` selects."""
        every: list[tuple[str, str, Callable[[Framework], Awaitable[None]]]] = [
            ("import", "import time", self.imports),
            ("register", "register 500 tools", self.register),
            ("calls", "stdio calls, legacy (+ spawn)", lambda fw: self.stdio_calls(fw, "legacy")),
            ("calls", "stdio calls, modern (+ spawn)", lambda fw: self.stdio_calls(fw, "modern")),
            ("calls", "HTTP calls, both eras", self.http_calls),
            (
                "calls",
                "get_items_hop, async def vs plain def, stdio and HTTP, both eras",
                lambda fw: hop_calls(self, fw),
            ),
            ("auth", "HTTP calls with a bearer token, both eras", self.auth_calls),
            ("middleware", "stdio and HTTP calls, with middleware or tracing, both eras", self.middleware_calls),
            ("list500", "tools/list 500, legacy (+ RSS)", lambda fw: self.list500(fw, "legacy")),
            ("list500", "tools/list 500, modern", lambda fw: self.list500(fw, "modern")),
            ("rss", "idle RSS, 0 tools", self.rss_empty),
            ("store", "forecast over HTTP, memory vs redis store, both eras", self.store_calls),
            ("scaleout", "forecast via HAProxy, 1 vs 2 replicas, both eras", self.scaleout),
            ("tasks", "build_report over HTTP, plain call vs task, both eras", self.tasks_calls),
            ("depends", "get_items_for, 2 arguments vs 2 Depends, both eras", lambda fw: depends_calls(self, fw)),
            (
                "scale",
                "1k/10k idle sessions, 1k streams of each era, fan-out to 1k, soak (HTTP)",
                lambda fw: sessions_and_streams(self, fw),
            ),
            ("big", "get_models_1mb and _10mb over stdio, both eras (+ peak RSS)", lambda fw: big_calls(self, fw)),
            (
                "authserver",
                "OAuthProxy: the login end to end, /token grants, calls with its tokens vs JWTVerifier's, both eras",
                lambda fw: authserver_calls(self, fw),
            ),
            (
                "client",
                "each framework's client: get_items over stdio and HTTP, both eras",
                lambda fw: client_calls(self, fw),
            ),
            ("client", "toolkit.testing.Client in process, both eras", lambda fw: testing_calls(self, fw)),
            (
                "compose",
                "get_items on the server and mounted, stdio and HTTP, both eras",
                lambda fw: mount_calls(self, fw),
            ),
            (
                "compose",
                "get_items direct and through a gateway (HTTP and stdio upstream), both eras",
                lambda fw: gateway_calls(self, fw),
            ),
            ("openapi", "GitHub's OpenAPI document loaded, and an empty server", lambda fw: openapi.load(self, fw)),
            (
                "openapi",
                "list_items: generated tool vs direct httpx, stdio, both eras",
                lambda fw: openapi.calls(self, fw),
            ),
        ]
        return [entry for entry in every if entry[0] in selected]

    async def run(self, selected: set[str]) -> None:
        runnable = [fw for fw in self.frameworks if fw.available]
        for round_no in range(1, self.s.rounds + 1):
            self.round = self.collector.round = round_no
            print(f"== round {self.round}/{self.s.rounds}", flush=True)
            for group, description, scenario in self.scenarios(selected):
                started = time.perf_counter()
                for fw in runnable:
                    if fw.kind in NODES and group not in NODE_GROUPS:
                        continue  # said n/a below, for every metric the other columns measured
                    await scenario(fw)
                print(f"  {description}: {time.perf_counter() - started:.1f}s", flush=True)
        for fw in runnable:
            if fw.kind in NODES:
                missing = [key for key, cells in self.collector.cells.items() if cells and fw.name not in cells]
                self.collector.unsupported(missing, fw.name, NODE_UNSUPPORTED)


def _merge(into: dict[str, Any] | None, figures: dict[str, Any]) -> dict[str, Any]:
    if into is None:
        return figures
    into.update(figures)
    return into


async def _calls(session: Session, count: int) -> None:
    for _ in range(count):
        await session.call()


async def _run(argv: list[str], env: dict[str, str], timeout: float) -> str:
    """Run a short-lived helper process; its stdout, or an error with its stderr."""
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
        cwd=ROOT,
        start_new_session=True,
    )
    procs.register(process)
    try:
        out, err = await asyncio.wait_for(process.communicate(), timeout)
    finally:
        await procs.stop(process)
    if process.returncode != 0:
        raise RuntimeError(
            f"{Path(argv[1]).name if len(argv) > 1 else argv[0]} exited {process.returncode}: {err.decode()[-800:]}"
        )
    return out.decode()


async def _probe(fw: Framework, env: dict[str, str]) -> None:
    """Is the framework importable, from where it should be, and which versions are in play?"""
    if fw.kind in NODES:
        if not (NODE_DIR / "node_modules").is_dir():
            fw.available, fw.reason = False, f"{NODE_DIR}/node_modules does not exist (scripts/bench installs it)"
            return
        try:
            out = await _run([str(fw.python), str(NODE_DIR / "import.mjs"), fw.kind, "--probe"], env, 120.0)
        except Exception as exc:
            fw.available, fw.reason = False, str(exc).strip().splitlines()[-1] if str(exc).strip() else repr(exc)
            return
        fw.version, fw.python_version, fw.module_file = out.splitlines()[-3:]
        return
    if not fw.python.exists():
        fw.available, fw.reason = False, f"{fw.python} does not exist"
        return
    # The baseline imports its package from PYTHONPATH, but the .venv's installed metadata is the
    # current tree's: only the module's own __version__ describes the code actually imported.
    version = f"m.version({DISTRIBUTIONS[fw.kind]!r})" if fw.pythonpath is None else "getattr(mod, '__version__', '?')"
    code = (
        "import sys, importlib.metadata as m\n"
        f"{IMPORTS[fw.kind]}\n"
        f"mod = sys.modules[{MODULES[fw.kind]!r}]\n"
        "try:\n"
        f"    v = {version}\n"
        "except m.PackageNotFoundError:\n"
        "    v = getattr(mod, '__version__', '?')\n"
        "print(v); print(sys.version.split()[0]); print(getattr(mod, '__file__', None) or '?')\n"
    )
    try:
        out = await _run([str(fw.python), "-c", code], env, 120.0)
    except Exception as exc:
        fw.available, fw.reason = False, str(exc).strip().splitlines()[-1] if str(exc).strip() else repr(exc)
        return
    fw.version, fw.python_version, fw.module_file = out.splitlines()[-3:]
    # A column named after a commit must run that commit's code: a stray PYTHONPATH, a
    # non-editable install in the .venv or a missing src/ would silently compare a tree to itself.
    if fw.src is not None and not Path(fw.module_file).resolve().is_relative_to(fw.src.resolve()):
        fw.available = False
        fw.reason = f"import {fw.kind} resolves to {fw.module_file}, not under {fw.src}"


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="scripts/bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: 1 round, small counts")
    parser.add_argument("--rounds", type=int, help="rounds (default 5, --quick 1)")
    parser.add_argument("--calls", type=int, help="measured tools/call per batch (default 2000, --quick 100)")
    parser.add_argument(
        "--only",
        help=f"comma-separated frameworks to run (default: {','.join(FRAMEWORKS)}, and base with --baseline); "
        "'base' (or 'baseline') names the --baseline column",
    )
    parser.add_argument(
        "--baseline",
        metavar="REF",
        help="also run toolkit as of git commit-ish REF (worktree in .bench/baseline-<sha>), "
        "as column toolkit@<short sha>, with the ratio toolkit / baseline",
    )
    parser.add_argument(
        "--scenarios",
        default=",".join(DEFAULT_GROUPS),
        help=f"comma-separated scenario groups: {','.join(SCENARIO_GROUPS)} (default: {','.join(DEFAULT_GROUPS)}); "
        "auth's ratio to the unauthenticated server CPU/call needs calls in the same run; middleware measures "
        "toolkit only (ratios to its own no-middleware server); store and scaleout start redis-server (and "
        "HAProxy) and measure toolkit only, as does tasks: add --only toolkit; client measures each framework's "
        "MCP client (toolkit.Client, mcp.Client, fastmcp.Client) against the same toolkit server, and "
        "toolkit.testing.Client; compose measures a mounted tool against the same tool on the server (toolkit, "
        "fastmcp) and a gateway (toolkit's Server.proxy, fastmcp's create_proxy) in front of toolkit's server",
    )
    parser.add_argument(
        "--scaleout-seconds",
        type=float,
        help="scaleout: measured seconds per replica count, era and round (default 10, --quick 1)",
    )
    parser.add_argument("--out", type=Path, default=RESULTS, help="results directory (default bench/results)")
    parser.add_argument(
        "--publish",
        action="store_true",
        help="after a full run (the defaults: no --quick, --only, --scenarios, --rounds, --calls, --baseline), write "
        "docs/assets/bench/results.json, its charts and the tables of docs/performance.md",
    )
    parser.add_argument(
        "--publish-from",
        type=Path,
        metavar="JSON",
        help="measure nothing: publish a full run's JSON written earlier (or docs/assets/bench/results.json itself, "
        "to redraw the charts and tables after a change to them)",
    )
    parser.add_argument(
        "--check-published",
        action="store_true",
        help="measure nothing: redraw the charts and tables from docs/assets/bench/results.json and compare them "
        "with what is committed (exit 1 on a difference)",
    )
    return parser.parse_args(argv)


def _not_full(args: argparse.Namespace) -> list[str]:
    """What on the command line keeps the run from being a full one, which alone may be published."""
    given = {
        "--quick": args.quick,
        "--only": args.only,
        "--baseline": args.baseline,
        "--rounds": args.rounds is not None,
        "--calls": args.calls is not None,
        "--scenarios": set(args.scenarios.split(",")) != set(DEFAULT_GROUPS),
    }
    return [flag for flag, used in given.items() if used]


def _published_only(args: argparse.Namespace) -> int:
    """--check-published and --publish-from: the charts and the page, no measuring."""
    if args.check_published:
        try:
            differences = publish.check()
        except publish.ChartsError as exc:
            print(f"check-published: {exc}", file=sys.stderr)
            return 1
        for line in differences:
            print(f"- {line}", file=sys.stderr)
        if differences:
            print(
                "the published charts and tables are not those of docs/assets/bench/results.json: "
                "scripts/bench --publish-from docs/assets/bench/results.json redraws them",
                file=sys.stderr,
            )
            return 1
        print(f"the charts and tables of {publish.PAGE.relative_to(ROOT)} are those of its results file")
        return 0
    results = json.loads(args.publish_from.read_text(encoding="utf-8"))
    reasons = publish.problems(results, DEFAULT_GROUPS)
    if reasons:
        print(f"not published: {args.publish_from} is not a full run: {'; '.join(reasons)}", file=sys.stderr)
        return 2
    try:
        written = publish.publish(results)
    except publish.ChartsError as exc:
        print(f"not published: {exc}", file=sys.stderr)
        return 1
    print("published: " + ", ".join(str(path.relative_to(ROOT)) for path in written))
    return 0


async def main_async(args: argparse.Namespace) -> int:
    if args.check_published or args.publish_from:
        return _published_only(args)
    if args.publish and _not_full(args):
        # Refused before measuring: a partial run would replace the page's figures with a part of them.
        print(f"--publish needs a full run: drop {', '.join(_not_full(args))}", file=sys.stderr)
        return 2
    settings = Settings.from_args(args)
    names = set(args.only.split(",")) if args.only else {*FRAMEWORKS, *(ALIASES[:1] if args.baseline else ())}
    unknown = names - set(FRAMEWORKS) - set(ALIASES)
    if unknown:
        print(f"unknown framework(s): {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    want_base = bool(names & set(ALIASES))
    if want_base != bool(args.baseline):
        # Either way round the user asked for something the run would not do: say so, not guess.
        problem = "--only names the baseline but no --baseline REF was given"
        if args.baseline:
            problem = f"--baseline was given but --only does not list it (add '{ALIASES[0]}')"
        print(problem, file=sys.stderr)
        return 2
    selected = set(args.scenarios.split(","))
    if selected - set(SCENARIO_GROUPS):
        print(f"unknown scenario group(s): {', '.join(sorted(selected - set(SCENARIO_GROUPS)))}", file=sys.stderr)
        return 2
    if "auth" in selected and "calls" not in selected:
        print("note: without the calls scenario, auth's ratios to unauthenticated calls are not computed")

    baseline: Baseline | None = None
    if args.baseline:
        try:
            baseline = prepare(ROOT, args.baseline)
        except BaselineError as exc:
            print(f"baseline: {exc}", file=sys.stderr)
            return 2
        print(f"baseline {baseline.column}: {baseline.sha} {baseline.subject[:70]!r} ({baseline.worktree})")

    frameworks: list[Framework] = []
    for name in FRAMEWORKS:
        if name in names:
            # The floor needs pydantic and uvicorn, both in toolkit's .venv (not the anchors' venv).
            python = TOOLKIT_PYTHON if name in ("toolkit", FLOOR) else ANCHORS_PYTHON
            if name in NODES:
                python = Path(shutil.which("node") or "node")
            # In a before/after run the "after" column must really be this tree's src/ too.
            src = ROOT / "src" if name == "toolkit" and baseline is not None else None
            frameworks.append(Framework(name, python, kind=name, src=src))
        if name == "toolkit" and baseline is not None:
            # Right after toolkit: the two columns to compare sit side by side in the table.
            frameworks.append(
                Framework(baseline.column, TOOLKIT_PYTHON, kind="toolkit", src=baseline.src, pythonpath=baseline.src)
            )
    if baseline is not None and TOOLKIT_PYTHON.exists():
        compile_sources(TOOLKIT_PYTHON, *(fw.src for fw in frameworks if fw.kind == "toolkit" and fw.src))
    env = server_env()
    await asyncio.gather(*(_probe(fw, fw.environ(env)) for fw in frameworks))
    width = max(len(fw.name) for fw in frameworks)
    for fw in frameworks:
        runtime = fw.python_version if fw.kind in NODES else f"Python {fw.python_version}"
        state = f"{fw.version} ({runtime})" if fw.available else f"UNAVAILABLE: {fw.reason}"
        where = f" from {fw.module_file}" if fw.available and fw.src is not None else ""
        print(f"{fw.name:{width}} {state}{where}", flush=True)
    if not any(fw.available for fw in frameworks):
        print("no framework available", file=sys.stderr)
        return 2
    if baseline is not None and not all(fw.available for fw in frameworks if fw.kind == "toolkit"):
        print("a before/after run needs every toolkit column it was asked for (see above)", file=sys.stderr)
        return 2

    started = time.time()
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(started))
    log_dir = args.out / "logs" / stamp
    bench = Bench(settings, frameworks, log_dir, baseline.column if baseline is not None else None)
    machine = report.machine_info()
    source_start = report.toolkit_source(str(ROOT))
    try:
        await bench.run(selected)
    finally:
        bench.collector.derive()
        source_end = report.toolkit_source(str(ROOT))
        results = report.build(
            bench.collector, frameworks, settings, machine, started, selected, source_start, source_end, baseline
        )
        args.out.mkdir(parents=True, exist_ok=True)
        text = json.dumps(results, indent=1, default=str)
        (args.out / f"bench-{stamp}.json").write_text(text)
        (args.out / "latest.json").write_text(text)
        print()
        print(report.table(results))
        print(f"\nJSON: {args.out / 'latest.json'}   server logs: {log_dir}")
    drawn = _charts(args, results)
    if bench.collector.errors:
        print(f"\n{len(bench.collector.errors)} error(s):", file=sys.stderr)
        for error in bench.collector.errors:
            print(f"- {error['framework']} round {error['round']}: {error['error'][:400]}", file=sys.stderr)
        return 1
    return 0 if drawn else 1


def _charts(args: argparse.Namespace, results: dict[str, Any]) -> bool:
    """The run's charts beside its JSON, and with --publish the docs' results, charts and tables.
    False when they could not be drawn (the reason printed)."""
    try:
        drawn = publish.draw(args.out / "latest.json", args.out / "charts")
    except publish.ChartsError as exc:
        print(f"\ncharts: {exc}", file=sys.stderr)
        return False
    print(f"charts: {args.out / 'charts'} ({len(drawn)} SVGs)")
    if not args.publish:
        return True
    reasons = publish.problems(results, DEFAULT_GROUPS)
    if reasons:
        print(f"not published: {'; '.join(reasons)}", file=sys.stderr)
        return False
    try:
        written = publish.publish(results)
    except publish.ChartsError as exc:
        print(f"not published: {exc}", file=sys.stderr)
        return False
    print("published: " + ", ".join(str(path.relative_to(ROOT)) for path in written))
    return True


def main() -> None:
    args = parse_args(sys.argv[1:])
    loop = asyncio.new_event_loop()
    task = loop.create_task(main_async(args))
    loop.add_signal_handler(signal.SIGTERM, task.cancel)
    loop.add_signal_handler(signal.SIGINT, task.cancel)
    code = 130
    try:
        code = loop.run_until_complete(task)
    except asyncio.CancelledError:
        print("\ninterrupted: servers stopped", file=sys.stderr)
    finally:
        procs.kill_all()
        loop.close()
    sys.exit(code)


if __name__ == "__main__":
    main()
