"""The benchmark keeps working: ``scripts/bench --quick`` runs clean.

A smoke run for correctness only: every request of every scenario must get the right answer
(the driver checks each one, and exits 1 otherwise) and every metric must get a value. No
timing is asserted here; performance is read from a full ``scripts/bench`` run, side by side
with the anchors (docs/performance.md). One quick run of every default group serves most of the
tests below (``QUICK``: toolkit, toolkit at the repository's own ``HEAD`` as the before/after
column, and the frameworkless floor), so the default groups run once per toolkit column, not once
per test. The ``store`` and ``scaleout`` scenarios, which start a real redis-server and a real
HAProxy, have a run of their own. The ``middleware`` scenario's server variants are checked for
doing what they say (a middleware that runs, a log record per request, spans), not for what they
cost; the ``compose`` scenario's gateways for relaying what the upstream serves.
"""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from bench import compose, procs, report
from bench.clients import FLOOR_NOT_A_CLIENT
from bench.driver import MODERN_META, Era, HttpTransport, ProtocolError, Session, StdioTransport
from bench.metrics import Collector
from bench.run import DEFAULT_GROUPS, Bench, Framework, Settings, parse_args, server_env
from bench.sections import GATEWAY_CPU, chart_files, number, sections
from tests.support.processes import PYTHON, REPO
from tests.support.redis_rig import missing, require

MIDDLEWARE_ADDS = ("passthrough", "logging", "otel")  # the middleware scenario's variants but none


def _bench(*arguments: str, timeout: float) -> subprocess.CompletedProcess[str]:
    """``scripts/bench ARGUMENTS``, which must exit 0 (every answer right)."""
    run = subprocess.run(
        [str(REPO / "scripts" / "bench"), *arguments],
        check=False,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return run


# The quick run of every default group that most tests below read: toolkit, toolkit at HEAD (the
# --baseline column) and the floor. It starts some hundred processes: two to three minutes idle, more
# on a busy 2-core machine. The bounds are for a hang, not for speed.
QUICK_RUN_SECONDS = 900
QUICK_TIMEOUT = pytest.mark.timeout(QUICK_RUN_SECONDS + 60)  # the first test to ask for it runs it


@dataclass(frozen=True)
class QuickRun:
    stdout: str
    results: dict[str, Any]
    out: Path  # the run's --out: latest.json, logs/<stamp>/
    column: str  # the baseline's column, toolkit@<short sha of HEAD>
    head: str

    @property
    def metrics(self) -> dict[str, Any]:
        metrics: dict[str, Any] = self.results["metrics"]
        return metrics

    @property
    def logs(self) -> Path:
        (logs,) = (self.out / "logs").iterdir()
        return logs


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> QuickRun:
    """``scripts/bench --quick --baseline HEAD --only toolkit,base,floor``, every default group, once."""
    # HEAD always exists; its worktree (.bench/baseline-<sha>, gitignored) is reused by later runs.
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], check=True, capture_output=True, text=True, cwd=REPO
    ).stdout.strip()
    out = tmp_path_factory.mktemp("bench-quick")
    arguments = ("--quick", "--baseline", "HEAD", "--only", "toolkit,base,floor", "--out", str(out))
    run = _bench(*arguments, timeout=QUICK_RUN_SECONDS)
    results = json.loads((out / "latest.json").read_text())
    return QuickRun(run.stdout, results, out, results["baseline"]["column"], head)


# Differences, not times: a quick run's p50 through a gateway may come out below the direct one's.
SIGNED = ("added_p50_us",)


def _positive(key: str, value: object) -> bool:
    return isinstance(value, int | float) and (value > 0 or key.endswith(SIGNED))


@QUICK_TIMEOUT
def test_the_benchmark_runs_clean_in_quick_mode(quick: QuickRun) -> None:
    run, results = quick, quick.results
    assert results["errors"] == []
    assert "anchors' venv" not in run.stdout, "--only toolkit,base,floor needs no anchors"
    assert results["frameworks"]["toolkit"]["available"] is True
    assert sorted(results["scenarios"]) == sorted(DEFAULT_GROUPS)
    assert len(results["metrics"]) >= 30
    missing = [
        metric["label"]
        for key, metric in results["metrics"].items()
        if not _positive(key, metric["median"].get("toolkit"))
    ]
    assert missing == [], f"metrics without a toolkit figure: {missing}"
    for metric in results["metrics"].values():
        assert metric["label"] in run.stdout, "every metric is a row of the printed table"
    # The auth scenario ran (bearer tokens, JWT with a cached key set), with its ratios to the
    # unauthenticated calls of the same round and their target verdict.
    for era in ("legacy", "modern"):
        for variant in ("same", "fresh"):
            prefix = f"auth.http_seq.{era}.{variant}"
            for key in (f"{prefix}.cpu_us", f"{prefix}.p50_us", f"{prefix}.cpu_ratio"):
                assert results["metrics"][key]["median"]["toolkit"] > 0, key
            ratio = results["metrics"][f"{prefix}.cpu_ratio"]
            assert ratio["ratio_of"] == [f"{prefix}.cpu_us", f"call.http_seq.{era}.cpu_us"]
            assert ratio["target_met"] in (True, False)
    assert "auth target:" in run.stdout
    # The middleware scenario ran: each variant on servers of its own (one stdio process per era, one
    # HTTP process), which said what they set up, with its ratios to the no-middleware server.
    for mode in ("stdio", "http_seq"):
        for era in ("legacy", "modern"):
            prefix = f"middleware.{mode}.{era}"
            for variant in ("none", *MIDDLEWARE_ADDS):
                for key in (f"{prefix}.{variant}.cpu_us", f"{prefix}.{variant}.p50_us"):
                    assert results["metrics"][key]["median"]["toolkit"] > 0, key
            for variant in MIDDLEWARE_ADDS:
                ratio = results["metrics"][f"{prefix}.{variant}.cpu_ratio"]
                assert ratio["ratio_of"] == [f"{prefix}.{variant}.cpu_us", f"{prefix}.none.cpu_us"]
    for variant in ("none", *MIDDLEWARE_ADDS):
        names = sorted(path.name for path in quick.logs.glob(f"toolkit-middleware-{variant}-*"))
        assert names == [
            f"toolkit-middleware-{variant}-{what}-r1.log" for what in ("http", "stdio-legacy", "stdio-modern")
        ]
        for name in names:
            text = (quick.logs / name).read_text()
            said = [line for line in text.splitlines() if line.startswith("bench middleware:")]
            assert said == ([] if variant == "none" else [f"bench middleware: {variant}"]), name
    assert "middleware: get_items server CPU/call with each variant" in run.stdout


@QUICK_TIMEOUT
def test_the_benchmark_compares_toolkit_with_a_baseline_commit(quick: QuickRun) -> None:
    results, column = quick.results, quick.column
    baseline = results["baseline"]
    assert baseline["sha"] == quick.head
    assert column == f"toolkit@{baseline['short']}"
    assert list(results["frameworks"]) == ["toolkit", column, "floor"], "the baseline sits next to toolkit"
    base_info = results["frameworks"][column]
    assert base_info["available"] is True
    # The baseline column imported toolkit from the worktree, not from ./src.
    worktree = REPO / ".bench" / f"baseline-{quick.head}" / "src"
    assert Path(base_info["module_file"]).resolve().is_relative_to(worktree)
    assert Path(results["frameworks"]["toolkit"]["module_file"]).resolve().is_relative_to(REPO / "src")
    # A toolkit-only scenario whose feature HEAD lacks (not committed yet) says so in the baseline's
    # column: n/a (unsupported), "... (it predates it)"; every other metric has both figures.
    predates = {
        key
        for key, metric in results["metrics"].items()
        if "predates" in (metric["frameworks"].get(column, {}).get("unsupported") or "")
    }
    missing = [
        (metric["label"], fw)
        for key, metric in results["metrics"].items()
        for fw in ("toolkit", column)
        if (key not in predates or fw == "toolkit") and not _positive(key, metric["median"].get(fw))
    ]
    assert missing == [], f"metrics without a figure: {missing}"
    no_ratio = [
        m["label"]
        for key, m in results["metrics"].items()
        if key not in predates and not key.endswith(SIGNED) and not m["ratio_toolkit_baseline"]
    ]
    assert no_ratio == [], f"metrics without a toolkit/baseline ratio: {no_ratio}"
    header = next(line for line in quick.stdout.splitlines() if line.startswith("metric "))
    assert f"toolkit/{column}" in header, "the table has the ratio column"


@QUICK_TIMEOUT
def test_the_quick_run_draws_its_charts(quick: QuickRun) -> None:
    """Every run draws its charts beside its JSON (bench/charts.py, in the charts' own venv): a chart per
    section the run has figures for, in both variants, with whatever columns it has (here the baseline's)."""
    charts = quick.out / "charts"
    assert f"charts: {charts} (" in quick.stdout
    expected = {
        name for section in sections(quick.results) if section.id != GATEWAY_CPU.id for name in chart_files(section.id)
    }
    assert {"cpu-light.svg", "cpu-dark.svg", "tail-light.svg", "gateway-dark.svg"} <= expected
    assert {path.name for path in charts.glob("*.svg")} == expected
    headline = (charts / "cpu-light.svg").read_text(encoding="utf-8")
    value = number(quick.metrics["call.stdio.legacy.cpu_us"]["median"]["toolkit"], "µs")
    assert f">{value}<" in headline, "toolkit's figure is labelled"
    assert f">{quick.column}<" in headline and ">floor<" in headline, "every column is in the legend"


# What toolkit_server.py builds for each BENCH_MIDDLEWARE, served in-process (toolkit.testing) in
# both eras; prints what a test can check that the variant really does what it says.
MIDDLEWARE_PROBE = """
import asyncio, json, logging, runpy, sys
server = runpy.run_path("bench/servers/toolkit_server.py")["server"]
logger = logging.getLogger("toolkit.requests")
seen = {"handlers": [type(h).__name__ for h in logger.handlers], "propagate": logger.propagate}
records = []
class Keep(logging.Handler):
    def emit(self, record):
        records.append(record.getMessage())
logger.addHandler(Keep())
from toolkit.testing import Client
async def main():
    for version in ("2025-11-25", "2026-07-28"):
        async with Client(server, protocol_version=version) as client:
            result = await client.call_tool("get_items")
            assert not result.get("isError") and len(result["content"]) == 1, result
asyncio.run(main())
pipeline = server.engine.pipeline
seen |= {
    "middlewares": [type(m).__name__ for m in server.middlewares],
    "hooks": {k: len(getattr(pipeline, k).hooks) if getattr(pipeline, k) else 0 for k in ("request", "call_tool")}
    if pipeline
    else None,
    "records": records,
    "imported": sorted({n.split(".")[0] for n in sys.modules} & {"middleware", "opentelemetry"}),
    "toolkit.middleware": "toolkit.middleware" in sys.modules,
}
bench = sys.modules.get("middleware")
if bench is not None and bench.exporter is not None:
    seen["spans"] = [span.name for span in bench.exporter.get_finished_spans()]
    data = bench.reader.get_metrics_data()
    seen["metrics"] = {
        m.name: sum(p.count for p in m.data.data_points)
        for rm in data.resource_metrics for sm in rm.scope_metrics for m in sm.metrics
    }
print(json.dumps(seen))
"""


@pytest.mark.parametrize("variant", ["", "none", "passthrough", "logging", "otel"])
def test_the_middleware_variants_of_the_bench_server_do_what_they_say(variant: str) -> None:
    env = server_env() | {"BENCH_MIDDLEWARE": variant}
    run = subprocess.run(
        [str(PYTHON), "-c", MIDDLEWARE_PROBE],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
        env=env,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    seen = json.loads(run.stdout)
    calls = ["tools/call get_items", "tools/call get_items"]  # one per era
    if variant in ("", "none"):
        # Exactly the plain server: no middleware, and neither toolkit.middleware nor OpenTelemetry loaded.
        assert seen["middlewares"] == [] and seen["hooks"] is None
        assert seen["imported"] == [] and seen["toolkit.middleware"] is False
        assert run.stderr == ""
    elif variant == "passthrough":
        assert seen["middlewares"] == ["Passthrough"]
        assert seen["hooks"] == {"request": 1, "call_tool": 1}, "both hooks are in the pipeline"
        assert seen["imported"] == ["middleware"] and seen["records"] == []
    elif variant == "logging":
        assert seen["middlewares"] == ["RequestLogging"] and seen["hooks"] == {"request": 1, "call_tool": 0}
        assert seen["handlers"] == ["NullHandler"] and seen["propagate"] is False
        # One record per request: initialize (legacy), then each era's call.
        assert [" ".join(r.split()[:2]) for r in seen["records"] if r.startswith("tools/call")] == calls
        assert len(seen["records"]) == 3 and seen["records"][0].startswith("initialize ")
        assert seen["imported"] == ["middleware"]
    else:
        assert seen["middlewares"] == [] and seen["hooks"] is None
        assert seen["imported"] == ["middleware", "opentelemetry"] and seen["toolkit.middleware"] is False
        spans = seen["spans"]
        assert [name for name in spans if name.startswith("tools/call")] == calls
        for child in ("validate_arguments", "run_tool", "serialize_result"):
            assert spans.count(f"{child} get_items") == 2, "the tool call's child spans"
        assert seen["metrics"] == {"mcp.server.operation.duration": 3}
    if variant not in ("", "none"):
        assert run.stderr == f"bench middleware: {variant}\n"


def test_an_unknown_middleware_variant_stops_the_server() -> None:
    env = server_env() | {"BENCH_MIDDLEWARE": "nope"}
    server = REPO / "bench" / "servers" / "toolkit_server.py"
    run = subprocess.run(
        [str(PYTHON), str(server), "--transport", "stdio"],
        input="",
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
        env=env,
    )
    assert run.returncode != 0 and "BENCH_MIDDLEWARE='nope'" in run.stderr


async def test_a_toolkit_without_middleware_runs_only_the_none_variant(tmp_path: Path) -> None:
    """A --baseline commit older than middleware or tracing: those variants are unsupported, not errors."""
    (tmp_path / "toolkit").mkdir()
    (tmp_path / "toolkit" / "__init__.py").write_text("")
    old = Framework("toolkit@old", PYTHON, kind="toolkit", pythonpath=tmp_path)
    anchor = Framework("mcp", Path(sys.executable), kind="mcp")
    settings = Settings.from_args(parse_args(["--quick"]))
    current = Framework("toolkit", PYTHON, kind="toolkit")
    bench = Bench(settings, [current, old, anchor], tmp_path / "logs")
    support = await bench._middleware_unsupported(old)
    assert support["none"] is None
    assert "toolkit@old has no toolkit.middleware (it predates it)" in str(support["passthrough"])
    assert "toolkit@old has no toolkit.middleware.RequestLogging" in str(support["logging"])
    assert "toolkit@old has no OpenTelemetry tracing" in str(support["otel"])
    assert set((await bench._middleware_unsupported(anchor)).values()) == {
        "not measured: the middleware scenario measures toolkit's own middleware and tracing"
    }
    assert await bench._middleware_unsupported(current) == dict.fromkeys(("none", "passthrough", "logging", "otel"))


def test_the_store_and_scaleout_scenarios_run_clean_in_quick_mode(tmp_path: Path) -> None:
    require("redis-server")
    require("haproxy")
    run = _bench("--quick", "--only", "toolkit", "--scenarios", "store,scaleout", "--out", str(tmp_path), timeout=150)
    results = json.loads((tmp_path / "latest.json").read_text())
    assert results["errors"] == []
    metrics = results["metrics"]
    assert all(key.startswith(("store.", "scaleout.")) for key in metrics), "only the scenarios asked for"
    for metric in metrics.values():
        assert isinstance(metric["median"].get("toolkit"), int | float), metric["label"]
        assert metric["label"] in run.stdout, "every metric is a row of the printed table"
    for variant in ("legacy", "legacy_json", "modern"):
        for store in ("memory", "redis"):
            assert metrics[f"store.{variant}.{store}.cpu_us"]["median"]["toolkit"] > 0
        assert f"store.{variant}.redis.redis_cpu_us" in metrics  # may be ~0 (modern calls leave Redis alone)
        ratio = metrics[f"store.{variant}.cpu_ratio"]
        assert ratio["ratio_of"] == [f"store.{variant}.redis.cpu_us", f"store.{variant}.memory.cpu_us"]
        assert ratio["target_met"] in (True, False)

    def sse(variant: str, store: str) -> tuple[int, int]:
        (raw,) = metrics[f"store.{variant}.{store}.cpu_us"]["frameworks"]["toolkit"]["raw"]
        return raw["sse_responses"], raw["answered"]

    # What each row says it measures: the forecast tool answers at once, so even with Redis (whose
    # legacy streams are resumable) a client accepting SSE gets plain JSON, as with the memory store.
    assert sse("legacy", "redis")[0] == 0 and sse("legacy", "redis")[1] > 0
    assert sse("legacy", "memory")[0] == 0
    assert sse("legacy_json", "redis")[0] == 0
    assert "store target:" in run.stdout
    for era in ("legacy", "modern"):
        for count in (1, 2):
            figure = metrics[f"scaleout.{era}.r{count}.calls_per_s"]["frameworks"]["toolkit"]
            assert figure["samples"][0] > 0
            # Every replica answered some of the calls through the balancer (X-Served-By).
            assert sorted(figure["raw"][0]["served_by"]) == [f"r{index}" for index in range(count)]
        assert metrics[f"scaleout.{era}.scaling"]["median"]["toolkit"] > 0
    assert "scale-out:" in run.stdout


# --- the frameworkless floor ------------------------------------------------------------------

FLOOR_SERVER = REPO / "bench" / "servers" / "floor_server.py"
FLOOR_REASON = "the floor serves get_items and the big workload only (the calls, import and big groups)"
CALL_CPU = [f"call.{mode}.{era}.cpu_us" for mode in ("stdio", "http_seq", "http_c16") for era in ("legacy", "modern")]


async def _floor_session_checks(session: Session) -> None:
    """The driver's own checks: open (initialize or server/discover), then get_items, twice."""
    await session.open(30.0)
    await session.call_items(30.0)
    await session.call()
    # Anything but get_items is refused with a JSON-RPC error, not a crash: the floor keeps serving.
    unknown = session.request_template("resources/list", {})
    with pytest.raises(ProtocolError, match="-32601"):
        await session.request(unknown, lambda result: result, 30.0)
    other_tool = session.request_template("tools/call", {"name": "nope", "arguments": {}})
    with pytest.raises(ProtocolError, match="-32602"):
        await session.request(other_tool, lambda result: result, 30.0)
    await session.call_items(30.0)


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_the_floor_answers_both_eras_over_stdio(tmp_path: Path, era: Era) -> None:
    argv = [str(PYTHON), str(FLOOR_SERVER), "--workload", "items", "--transport", "stdio"]
    process, _ = await procs.start(argv, server_env(), tmp_path / "floor.log", stdio=True)
    try:
        await _floor_session_checks(Session(StdioTransport(process), era))
    finally:
        await procs.stop(process)
    assert process.returncode == 0, "closing stdin ends the loop cleanly"
    assert (tmp_path / "floor.log").read_text() == "", "nothing on stderr"


async def test_the_floor_answers_both_eras_over_http(tmp_path: Path) -> None:
    port = procs.free_port()
    argv = [str(PYTHON), str(FLOOR_SERVER), "--workload", "items", "--transport", "http", "--port", str(port)]
    process, _ = await procs.start(argv, server_env(), tmp_path / "floor.log", stdio=False)
    try:
        await procs.wait_for_port(process, port, 30.0)
        for era in ("legacy", "modern"):
            transport = HttpTransport("127.0.0.1", port)
            try:
                await _floor_session_checks(Session(transport, era))
                # Legacy: initialize handed out a session id, sent back on every later request.
                assert (transport.session_id is not None) == (era == "legacy")
            finally:
                await transport.close()
    finally:
        await procs.stop(process)


def test_the_floor_sends_what_toolkit_sends_in_the_modern_era() -> None:
    """The same tools/call, both servers over stdio: the responses differ only by the server's name."""
    request = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "get_items", "arguments": {}, "_meta": MODERN_META},
        }
    )

    def answer(server: str) -> dict[str, object]:
        run = subprocess.run(
            [str(PYTHON), str(REPO / "bench" / "servers" / server), "--workload", "items", "--transport", "stdio"],
            input=request + "\n",
            check=True,
            capture_output=True,
            text=True,
            timeout=60,
            cwd=REPO,
        )
        message: dict[str, object] = json.loads(run.stdout)
        return message

    floor, toolkit = answer("floor_server.py"), answer("toolkit_server.py")
    assert json.dumps(floor).replace('"floor"', '"bench"') == json.dumps(toolkit)


def test_the_stdio_floor_imports_only_pydantic_and_the_standard_library() -> None:
    """Its spawn -> first response is a Python process that imports pydantic and answers: no
    uvicorn (imported for HTTP only), no asyncio (the coroutine is stepped by hand), and not the
    500 generated tools (workloads imports them for gen500 only)."""
    discover = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": MODERN_META}}
    run = subprocess.run(
        [str(PYTHON), "-X", "importtime", str(FLOOR_SERVER), "--transport", "stdio"],
        input=json.dumps(discover) + "\n",
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
    )
    assert json.loads(run.stdout)["result"]["supportedVersions"] == ["2026-07-28"]
    imported = {line.rsplit("|", 1)[1].strip() for line in run.stderr.splitlines() if line.startswith("import time:")}
    assert {"pydantic", "workloads"} <= imported
    top_level = {name.split(".")[0] for name in imported}
    assert not top_level & {"uvicorn", "asyncio", "generated", "toolkit", "starlette", "anyio"}, top_level


@QUICK_TIMEOUT
def test_the_quick_run_measures_toolkit_against_the_floor(quick: QuickRun) -> None:
    results = quick.results
    floor = results["frameworks"]["floor"]
    assert floor["available"] is True and floor["kind"] == "floor"
    assert floor["version"] == importlib.metadata.version("pydantic"), "the floor's version is pydantic's"
    metrics = results["metrics"]
    targets = {key: "2" if ".stdio." in key else "13/10" for key in CALL_CPU}
    targets |= {f"spawn.{era}.first_response_ms": "5/4" for era in ("legacy", "modern")}
    for key, target in targets.items():
        summary = metrics[key]
        assert summary["floor_target"] == target, key
        assert summary["ratio_toolkit_floor"] == summary["median"]["toolkit"] / summary["median"]["floor"] > 0
        assert summary["floor_target_met"] in (True, False), key
        assert summary["best_anchor"] is None, "the floor is never an anchor"
    # Every call and spawn figure has a floor figure; import too (pydantic's own import).
    measured = [key for key in metrics if key.startswith(("call.", "spawn.")) or key == "import_ms"]
    assert len(measured) == 3 * 2 * 4 + 4 + 1
    for key in measured:
        assert metrics[key]["median"]["floor"] > 0, key
        assert metrics[key]["ratio_toolkit_floor"] > 0, key
    # The floor's gateway: 2026-07-28 over an HTTP upstream, beside the same upstream called directly.
    gateway = [f"compose.gateway.direct.modern.{m}" for m in ("cpu_us", "p50_us")]
    gateway += [f"compose.gateway.http.modern.{m}" for m in ("cpu_us", "upstream_cpu_us", "p50_us", "added_p50_us")]
    for key in gateway:
        assert _positive(key, metrics[key]["median"]["floor"]), key
    assert metrics["compose.gateway.http.modern.cpu_ratio"]["median"]["floor"] > 0
    gateway.append("compose.gateway.http.modern.cpu_ratio")
    # Elsewhere the floor is unsupported, not an error, and toolkit still has its figures.
    elsewhere = [key for key in metrics if key not in measured and key not in gateway]
    assert {"register500_ms", "rss.tools0_mib", "rss.tools500_mib", "list500.legacy.spawn_ms"} <= set(elsewhere)
    assert {"compose.mount.stdio.legacy.mounted.cpu_us", "compose.gateway.http.legacy.cpu_us"} <= set(elsewhere)
    for key in elsewhere:
        reason = FLOOR_NOT_A_CLIENT if key.startswith("client.") else FLOOR_REASON
        if key.startswith("hop."):  # the calls group's def-hop batches: toolkit's worker threads only
            reason = "not measured: the def hop batches measure toolkit's worker threads"
        if key.startswith("compose.gateway."):
            reason = compose.FLOOR_GATEWAY_ONLY
        assert metrics[key]["frameworks"]["floor"]["unsupported"] == reason, key
        assert _positive(key, metrics[key]["median"]["toolkit"]), key
        assert metrics[key]["ratio_toolkit_floor"] is None and metrics[key]["floor_target_met"] is None
    # The floor started its call servers and its gateway, and nothing where it has nothing to serve.
    started = sorted(path.name for path in quick.logs.glob("floor-*"))
    assert started == [
        f"floor-{what}-r1.log"
        for what in ("compose-gateway-http", "compose-upstream", "http", "stdio-legacy", "stdio-modern")
    ]
    lines = quick.stdout.splitlines()
    header = [cell.strip() for cell in next(line for line in lines if line.startswith("metric ")).split("|")]
    assert header[-5:] == ["toolkit/best anchor", "toolkit/floor", f"toolkit/{quick.column}", "target", "floor target"]
    stdio_row = [
        cell.strip() for cell in next(line for line in lines if "server CPU/call (stdio, legacy)" in line).split("|")
    ]
    ratio = metrics["call.stdio.legacy.cpu_us"]["ratio_toolkit_floor"]
    by_floor, floor_target = stdio_row[header.index("toolkit/floor")], stdio_row[header.index("floor target")]
    assert by_floor == (f"{ratio:.2f}" if ratio >= 1 else f"{ratio:.3f} = 1/{1 / ratio:.1f}")
    assert floor_target == f"≤ 2x {'✓' if ratio <= 2 else '✗'}"
    assert f"- floor: {FLOOR_REASON}" in quick.stdout


def test_the_floor_starts_nothing_where_it_has_nothing_to_serve(tmp_path: Path) -> None:
    """Every scenario but calls, import and compose's gateway records the floor as unsupported,
    without starting a server (none of them could answer: no bearer tokens, middleware, 500 tools,
    store, tasks, mount)."""
    scenarios = "register,auth,middleware,list500,rss,store,scaleout,tasks"
    run = _bench("--quick", "--only", "floor", "--scenarios", scenarios, "--out", str(tmp_path), timeout=60)
    results = json.loads((tmp_path / "latest.json").read_text())
    assert results["errors"] == []
    assert len(results["metrics"]) > 50
    for key, summary in results["metrics"].items():
        assert summary["frameworks"]["floor"]["unsupported"] == FLOOR_REASON, key
    assert not [path for path in (tmp_path / "logs").rglob("*") if path.is_file()], "no server was started"
    assert "ERROR" not in run.stdout


def _fake_results(collector: Collector, names: list[str]) -> dict[str, Any]:
    frameworks = [Framework(name, PYTHON, kind=name, version="1.0") for name in names]
    settings = Settings.from_args(parse_args(["--quick"]))
    return report.build(collector, frameworks, settings, report.machine_info(), 0.0, {"calls"}, "abc", "abc")


def test_the_table_shows_toolkit_over_the_floor_beside_the_best_anchor() -> None:
    collector = Collector()
    figures = {
        "call.stdio.legacy.cpu_us": {"toolkit": 92.0, "mcp": 400.0, "fastmcp": 300.0, "floor": 50.0},
        "call.http_seq.legacy.cpu_us": {"toolkit": 140.0, "mcp": 900.0, "fastmcp": 800.0, "floor": 100.0},
        "spawn.legacy.first_response_ms": {"toolkit": 100.0, "mcp": 600.0, "fastmcp": 900.0, "floor": 80.0},
        "list500.legacy.spawn_ms": {"toolkit": 500.0, "mcp": 2500.0, "fastmcp": 2000.0},
    }
    for key, by_framework in figures.items():
        for name, value in by_framework.items():
            collector.add(key, name, value)
    collector.unsupported(["list500.legacy.spawn_ms"], "floor", FLOOR_REASON)

    stdio = collector.summary("call.stdio.legacy.cpu_us")
    assert stdio["best_anchor"] == "fastmcp", "the floor's lower figure is not the best anchor"
    assert stdio["ratio_toolkit_best_anchor"] == 92 / 300
    assert stdio["ratio_toolkit_floor"] == 92 / 50
    assert stdio["floor_target"] == "2" and stdio["floor_target_met"] is True
    http = collector.summary("call.http_seq.legacy.cpu_us")
    assert http["floor_target"] == "13/10" and http["floor_target_met"] is False
    spawn = collector.summary("spawn.legacy.first_response_ms")
    assert spawn["floor_target"] == "5/4" and spawn["floor_target_met"] is True
    listing = collector.summary("list500.legacy.spawn_ms")
    assert listing["target"] == "1/4" and listing["target_met"] is True  # 500 / 2000
    assert listing["ratio_toolkit_floor"] is None and listing["floor_target"] is None

    results = _fake_results(collector, ["toolkit", "mcp", "fastmcp", "floor"])
    lines = report.table(results).splitlines()
    header = next(line for line in lines if line.startswith("metric "))
    assert [cell.strip() for cell in header.split("|")] == [
        "metric",
        "unit",
        "toolkit",
        "mcp",
        "fastmcp",
        "floor",
        "toolkit/best anchor",
        "toolkit/floor",
        "target",
        "floor target",
    ]

    def row(label: str) -> list[str]:
        return [cell.strip() for cell in next(line for line in lines if line.startswith(label)).split("|")]

    assert row("get_items server CPU/call (stdio, legacy)")[6:] == [
        "0.307 = 1/3.3 (fastmcp)",
        "1.84",
        "≤ 1/4 ✗",
        "≤ 2x ✓",
    ]
    assert row("get_items server CPU/call (HTTP sequential, legacy)")[7:] == ["1.40", "≤ 1/3 ✓", "≤ 1.3x ✗"]
    assert row("spawn -> first initialize response (stdio)")[7:] == ["1.25", "≤ 1/3 ✓", "≤ 1.25x ✓"]
    assert row("spawn -> first tools/list response, 500 tools (stdio, legacy)")[5:] == [
        "n/a (unsupported)",
        "0.250 = 1/4.0 (fastmcp)",
        "-",
        "≤ 1/4 ✓",
        "",
    ]
    assert any("floor (pydantic 1.0)" in line for line in lines), "the floor's version is pydantic's"

    # Without the floor column, neither floor column is shown.
    without = report.table(_fake_results(collector, ["toolkit", "mcp", "fastmcp"]))
    header = next(line for line in without.splitlines() if line.startswith("metric "))
    assert "floor" not in header
    assert header.rstrip().endswith("target")


# --- composition: mount and gateways ----------------------------------------------------------------

ERAS: tuple[Era, ...] = ("legacy", "modern")
MOUNT_ROWS = [f"compose.mount.{mode}.{era}" for mode in ("stdio", "http_seq") for era in ERAS]
GATEWAY_ROWS = [f"compose.gateway.{upstream}.{era}" for upstream in ("http", "stdio") for era in ERAS]


@QUICK_TIMEOUT
def test_the_compose_scenario_measures_mounts_and_gateways_in_quick_mode(quick: QuickRun) -> None:
    """The ``compose`` group's rows, for toolkit and the HEAD column: a mounted tool against the same
    tool on the server, and toolkit's gateway in front of toolkit's server over HTTP and stdio
    against a direct call, with their ratios and targets; every answer checked by the driver."""
    metrics = quick.metrics
    for fw in ("toolkit", quick.column):
        for row in MOUNT_ROWS:
            for variant in ("direct", "mounted"):
                for metric in ("cpu_us", "p50_us"):
                    assert metrics[f"{row}.{variant}.{metric}"]["median"][fw] > 0, (row, variant, metric, fw)
        for era in ERAS:
            for metric in ("cpu_us", "p50_us"):
                assert metrics[f"compose.gateway.direct.{era}.{metric}"]["median"][fw] > 0
        for row in GATEWAY_ROWS:
            for metric in ("cpu_us", "upstream_cpu_us", "p50_us", "cpu_ratio"):
                assert metrics[f"{row}.{metric}"]["median"][fw] > 0, (row, metric, fw)
            (added,) = metrics[f"{row}.added_p50_us"]["frameworks"][fw]["raw"]
            assert metrics[f"{row}.added_p50_us"]["median"][fw] == added["via_p50_us"] - added["direct_p50_us"]
            assert added["via_p50_us"] == metrics[f"{row}.p50_us"]["median"][fw]
    for row in MOUNT_ROWS:
        ratio = metrics[f"{row}.cpu_ratio"]
        assert ratio["ratio_of"] == [f"{row}.mounted.cpu_us", f"{row}.direct.cpu_us"]
        assert (ratio["target"], ratio["target_of"]) == ("11/10", "value") and ratio["target_met"] in (True, False)
    for row in GATEWAY_ROWS:
        ratio = metrics[f"{row}.cpu_ratio"]
        assert ratio["ratio_of"] == [f"{row}.cpu_us", f"compose.gateway.direct.{row.rsplit('.', 1)[1]}.cpu_us"]
        assert (ratio["target"], ratio["target_of"]) == ("3/2", "value") and ratio["target_met"] in (True, False)
        gateway = metrics[f"{row}.cpu_us"]
        assert (gateway["target"], gateway["target_of"]) == ("3/10", "best_anchor")
        assert gateway["target_met"] is None, "no fastmcp column in this run: no verdict on toolkit / fastmcp"
    # Each gateway served over HTTP by `toolkit run`; the stdio one started its upstream itself, and
    # that upstream is gone once the gateway stopped.
    for step in ("http", "stdio"):
        log = (quick.logs / f"toolkit-compose-gateway-{step}-r1.log").read_text()
        assert "toolkit: serving MCP over Streamable HTTP at http://127.0.0.1:" in log, log[-2000:]
    for era in ERAS:
        (raw,) = metrics[f"compose.gateway.stdio.{era}.upstream_cpu_us"]["frameworks"]["toolkit"]["raw"]
        assert not Path(f"/proc/{raw['pid']}").exists(), "the stdio upstream was stopped with its gateway"
    assert "compose, mount: get_items in a child server mounted under the namespace 'shop'" in quick.stdout
    assert "compose, gateway: get_items through a gateway served over HTTP" in quick.stdout


def test_the_compose_note_compares_toolkits_gateway_with_fastmcps() -> None:
    collector = Collector()
    figures = {
        "compose.mount.stdio.legacy.direct.cpu_us": {"toolkit": 50.0, "fastmcp": 800.0},
        "compose.mount.stdio.legacy.mounted.cpu_us": {"toolkit": 52.0, "fastmcp": 1000.0},
        "compose.gateway.direct.legacy.cpu_us": {"toolkit": 130.0, "fastmcp": 128.0},
        "compose.gateway.direct.legacy.p50_us": {"toolkit": 150.0, "fastmcp": 140.0},
        "compose.gateway.http.legacy.cpu_us": {"toolkit": 260.0, "fastmcp": 4000.0},
        "compose.gateway.http.legacy.p50_us": {"toolkit": 400.0, "fastmcp": 6000.0},
        "compose.gateway.http.legacy.added_p50_us": {"toolkit": 250.0, "fastmcp": 5860.0},
    }
    collector.round = 1
    for key, by_framework in figures.items():
        for name, value in by_framework.items():
            collector.add(key, name, value)
    collector.unsupported(["compose.gateway.http.legacy.cpu_us"], "mcp", "no proxy")
    collector.derive()
    gateway = collector.summary("compose.gateway.http.legacy.cpu_us")
    assert gateway["best_anchor"] == "fastmcp" and gateway["ratio_toolkit_best_anchor"] == 260 / 4000
    assert gateway["target_met"] is True  # 0.065 <= 3/10
    assert collector.summary("compose.gateway.http.legacy.cpu_ratio")["median"]["toolkit"] == 2.0
    assert collector.summary("compose.mount.stdio.legacy.cpu_ratio")["median"] == {"toolkit": 1.04, "fastmcp": 1.25}

    lines = report.table(_fake_results(collector, ["toolkit", "mcp", "fastmcp"])).splitlines()
    mount = next(line for line in lines if line.startswith("  stdio: "))
    assert mount.startswith("  stdio: legacy 1.040x ✓ (fastmcp 1.250x), modern -")
    gateway_line = next(line for line in lines if line.startswith("  HTTP upstream, legacy: "))
    assert gateway_line == (
        "  HTTP upstream, legacy: toolkit 260 µs = 2.00x direct ✗, p50 +250 µs; "
        "fastmcp 4,000 µs: toolkit/fastmcp 0.065 ✓ (its p50 +5,860 µs)"
    )
    assert "  stdio upstream, modern: - (no toolkit figure)" in lines


def _fastmcp_python() -> Path:
    python = REPO / ".interop" / "servers" / "py-fastmcp416" / "bin" / "python"
    if not python.exists():
        missing(f"fastmcp 4.1.6 is not installed ({python}): run scripts/servers --install-only")
    return python


async def test_the_fastmcp_gateway_relays_toolkits_server_in_both_eras(tmp_path: Path) -> None:
    """``bench/servers/fastmcp_gateway.py`` (the compose scenario's fastmcp column, run here from the
    fastmcp 4.1.6 that scripts/servers installs, the anchors' own pins) in front of toolkit's bench
    server over HTTP and over stdio: get_items comes back whole in both eras (the driver checks it)."""
    fastmcp = _fastmcp_python()
    upstream_port = procs.free_port()
    argv = [str(PYTHON), str(REPO / "bench" / "servers" / "toolkit_server.py"), "--transport", "http"]
    upstream, _ = await procs.start([*argv, "--port", str(upstream_port)], server_env(), tmp_path / "up.log", False)
    try:
        await procs.wait_for_port(upstream, upstream_port, 60.0)
        command = [str(PYTHON), str(REPO / "bench" / "servers" / "toolkit_server.py"), "--transport", "stdio"]
        for target in (f"http://127.0.0.1:{upstream_port}/mcp", json.dumps(command)):
            port = procs.free_port()
            gateway_argv = [str(fastmcp), str(REPO / "bench" / "servers" / "fastmcp_gateway.py")]
            gateway_argv += ["--transport", "http", "--port", str(port)]
            env = server_env() | {"BENCH_UPSTREAM": target}
            gateway, _ = await procs.start(gateway_argv, env, tmp_path / "gateway.log", False)
            try:
                await procs.wait_for_port(gateway, port, 60.0)
                for era in ERAS:
                    session = Session(HttpTransport("127.0.0.1", port), era)
                    try:
                        await session.open(60.0)
                        for _ in range(3):
                            await session.call(60.0)
                    finally:
                        await session.transport.close()
                if target.startswith("["):
                    child = compose._only_child(gateway.pid)  # the stdio upstream, what the scenario measures
                    assert "toolkit_server.py" in Path(f"/proc/{child}/cmdline").read_text()
            finally:
                await procs.stop(gateway)
    finally:
        await procs.stop(upstream)


# --- where the time goes: bench/profile.py ---------------------------------------------------------

TOOLKIT_ITEMS = [
    "toolkit transport (_transports/*)",
    "toolkit engine (_engine, _calls, _inbound, _session, _context, _registry, _extensions/*, _mrtr)",
    "toolkit compat + content (_compat/*, _content)",
    "toolkit JSON-RPC framing (_jsonrpc, _methods, _headers)",
    "toolkit tools (_tools, _functions, _schema/*)",
]


def test_the_profile_splits_toolkit_calls_into_line_items(tmp_path: Path) -> None:
    """``python -m bench.profile`` runs clean (every answer checked, exit 0) and its line items add up
    to the server CPU per call it measured; toolkit's own items get some of it. No timing asserted."""
    out = tmp_path / "profile.json"
    arguments = ["--calls", "200", "--warmup", "50", "--transport", "stdio,http", "--era", "modern"]
    arguments += ["--servers", "toolkit"]
    run = subprocess.run(
        [str(PYTHON), "-m", "bench.profile", *arguments, "--out", str(out)],
        check=False,
        capture_output=True,
        text=True,
        timeout=180,
        cwd=REPO,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    results = json.loads(out.read_text())
    assert results["profiler"] == "cProfile"
    assert results["calls"] == 200
    configs = results["configurations"]
    assert [(c["server"], c["transport"], c["era"]) for c in configs] == [
        ("toolkit", "stdio", "modern"),
        ("toolkit", "http", "modern"),
    ]
    assert set(TOOLKIT_ITEMS) | {"socket send/recv", "other"} <= set(results["line_items"])
    assert "waiting in epoll (idle, not CPU)" in results["excluded_items"]
    for config in configs:
        items = config["items"]
        assert list(items) == results["line_items"], "every line item, in the table's order"
        cpu = config["cpu_us_per_call"]
        assert cpu > 0
        # Proportional attribution: the items share out exactly the measured CPU per call.
        assert sum(item["us_per_call"] for item in items.values()) == pytest.approx(cpu, abs=0.001 * len(items) + 0.01)
        assert sum(item["share"] for item in items.values()) == pytest.approx(1, abs=1e-3)
        assert all(item["us_per_call"] >= 0 for item in items.values())
        for label in TOOLKIT_ITEMS:
            assert items[label]["us_per_call"] > 0, (config["transport"], label)
            assert items[label]["top"], "the functions behind the item"
        assert items["floor server code"]["us_per_call"] == 0
        assert config["excluded"]["waiting in epoll (idle, not CPU)"]["profiled_wall_us_per_call"] > 0
        counts = config["calls_per_request"]
        assert counts["_run_once (loop iterations)"] >= 1
        assert counts["create_task"] >= 1
        assert (counts["socket.send"] > 0) == (config["transport"] == "http")
        assert f"== toolkit · {config['transport']} · modern: 200 calls ==" in run.stdout
    assert "Proportional attribution" in run.stdout


GATEWAY_ITEMS = [
    "toolkit client (_client/*: session, HTTP/1.1 and stdio transports)",
    "toolkit proxy (_sources/*, _compose)",
]


def test_the_profile_splits_a_gateways_calls_into_line_items(tmp_path: Path) -> None:
    """``--servers gateway-http,gateway-stdio``: toolkit's gateway of the compose scenario, in front of
    toolkit's server over HTTP (an upstream the script starts) and over stdio (the gateway's child),
    profiled alone; its client and proxy items get some of its CPU, and no tool runs in it."""
    out = tmp_path / "profile.json"
    arguments = ["--calls", "200", "--warmup", "50", "--transport", "http", "--era", "modern"]
    run = subprocess.run(
        [str(PYTHON), "-m", "bench.profile", *arguments, "--servers", "gateway-http,gateway-stdio", "--out", str(out)],
        check=False,
        capture_output=True,
        text=True,
        timeout=180,
        cwd=REPO,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    configs = json.loads(out.read_text())["configurations"]
    assert [(c["server"], c["transport"]) for c in configs] == [("gateway-http", "http"), ("gateway-stdio", "http")]
    for config in configs:
        items = config["items"]
        assert sum(item["us_per_call"] for item in items.values()) == pytest.approx(
            config["cpu_us_per_call"], abs=0.001 * len(items) + 0.01
        )
        for label in GATEWAY_ITEMS:
            assert items[label]["us_per_call"] > 0, (config["server"], label)
        assert items["toolkit tools (_tools, _functions, _schema/*)"]["us_per_call"] == 0, "the upstream runs the tool"
        assert items["the tool itself (bench/servers/workloads.py)"]["us_per_call"] == 0
        # The stdio upstream is written to through a pipe; the HTTP one through the socket.
        assert (config["calls_per_request"]["os.write"] >= 1) == (config["server"] == "gateway-stdio")


CLIENT_CPU = [f"client.{transport}.{era}.cpu_us" for transport in ("stdio", "http") for era in ("legacy", "modern")]


@QUICK_TIMEOUT
def test_the_client_scenario_measures_toolkits_client_in_quick_mode(quick: QuickRun) -> None:
    """The ``client`` group: toolkit.Client over stdio and HTTP in both eras (its own process's CPU
    per call, every result checked by the driver) and toolkit.testing.Client in process; the floor
    is a server, not a client, and starts nothing here."""
    metrics = quick.metrics
    testing = [f"client.testing.{era}.cpu_us" for era in ("legacy", "modern")]
    for key in [*CLIENT_CPU, *testing]:
        assert metrics[key]["median"]["toolkit"] > 0, key
        assert metrics[key]["frameworks"]["floor"]["unsupported"] == FLOOR_NOT_A_CLIENT, key
    for key in CLIENT_CPU:
        assert metrics[key]["target"] == "3/10", key
        raw = metrics[key]["frameworks"]["toolkit"]["raw"][0]
        assert len(raw["per_batch_us"]) == 5, "every batch is kept"
        assert min(raw["per_batch_us"]) == pytest.approx(metrics[key]["median"]["toolkit"], abs=0.01), "the lowest"
        assert metrics[key.replace("cpu_us", "p50_us")]["median"]["toolkit"] > 0
    assert "toolkit: import toolkit loads no client module" in quick.stdout
    assert "get_items client CPU/call, the client's process (HTTP, modern)" in quick.stdout
    assert "toolkit.testing.Client, modern:" in quick.stdout
    assert not list(quick.logs.glob("floor-client-*")), "the floor starts no server for the clients"


def test_the_toolkit_client_driver_says_when_toolkit_has_no_client(tmp_path: Path) -> None:
    """A --baseline commit from before toolkit.Client: the driver exits 3 with the reason, which the
    scenario records as n/a ("it predates it"), not as an error."""
    (tmp_path / "toolkit").mkdir()
    (tmp_path / "toolkit" / "__init__.py").write_text("class Server: ...\n")
    driver = REPO / "bench" / "client_drivers" / "toolkit_client.py"
    done = subprocess.run(
        [PYTHON, str(driver), "--transport", "http", "--era", "modern", "--url", "http://127.0.0.1:9/mcp"],
        env={**server_env(), "PYTHONPATH": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 3, done.stderr
    assert "predates" in json.loads(done.stdout.strip().splitlines()[-1])["unsupported"]
