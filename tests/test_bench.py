"""The benchmark keeps working: ``scripts/bench --quick --only toolkit`` runs clean.

A smoke run for correctness only: every request of every scenario must get the right answer
(the driver checks each one, and exits 1 otherwise) and every metric must get a value. No
timing is asserted here; performance is read from a full ``scripts/bench`` run, side by side
with the anchors (docs/performance.md). The same holds for a before/after run against the
repository's own ``HEAD`` (``--baseline HEAD --only toolkit,base``), and for the ``store`` and
``scaleout`` scenarios, which start a real redis-server and a real HAProxy.
"""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from bench import procs, report
from bench.driver import MODERN_META, Era, HttpTransport, ProtocolError, Session, StdioTransport
from bench.metrics import Collector
from bench.run import Framework, Settings, parse_args, server_env
from tests.support.processes import PYTHON, REPO
from tests.support.redis_rig import require


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


def test_the_benchmark_runs_clean_in_quick_mode(tmp_path: Path) -> None:
    run = _bench("--quick", "--only", "toolkit", "--out", str(tmp_path), timeout=110)
    results = json.loads((tmp_path / "latest.json").read_text())
    assert results["errors"] == []
    assert results["frameworks"]["toolkit"]["available"] is True
    assert len(results["metrics"]) >= 30
    missing = [
        metric["label"]
        for metric in results["metrics"].values()
        if not isinstance(metric["median"].get("toolkit"), int | float) or metric["median"]["toolkit"] <= 0
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


def test_the_benchmark_compares_toolkit_with_a_baseline_commit(tmp_path: Path) -> None:
    # HEAD always exists; its worktree (.bench/baseline-<sha>, gitignored) is reused by later runs.
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], check=True, capture_output=True, text=True, cwd=REPO
    ).stdout.strip()
    run = _bench("--quick", "--baseline", "HEAD", "--only", "toolkit,base", "--out", str(tmp_path), timeout=150)
    results = json.loads((tmp_path / "latest.json").read_text())
    assert results["errors"] == []
    baseline = results["baseline"]
    assert baseline["sha"] == head
    column = baseline["column"]
    assert column == f"toolkit@{baseline['short']}"
    assert list(results["frameworks"]) == ["toolkit", column], "the baseline sits next to toolkit, no anchors"
    base_info = results["frameworks"][column]
    assert base_info["available"] is True
    # The baseline column imported toolkit from the worktree, not from ./src.
    assert Path(base_info["module_file"]).resolve().is_relative_to(REPO / ".bench" / f"baseline-{head}" / "src")
    assert Path(results["frameworks"]["toolkit"]["module_file"]).resolve().is_relative_to(REPO / "src")
    assert len(results["metrics"]) >= 30
    missing = [
        (metric["label"], fw)
        for metric in results["metrics"].values()
        for fw in ("toolkit", column)
        if not isinstance(metric["median"].get(fw), int | float) or metric["median"][fw] <= 0
    ]
    assert missing == [], f"metrics without a figure: {missing}"
    no_ratio = [m["label"] for m in results["metrics"].values() if not m["ratio_toolkit_baseline"]]
    assert no_ratio == [], f"metrics without a toolkit/baseline ratio: {no_ratio}"
    header = next(line for line in run.stdout.splitlines() if line.startswith("metric "))
    assert f"toolkit/{column}" in header, "the table has the ratio column"
    for metric in results["metrics"].values():
        assert metric["label"] in run.stdout, "every metric is a row of the printed table"


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
FLOOR_REASON = "the floor serves get_items only (the calls and import groups)"
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


def test_the_quick_run_measures_toolkit_against_the_floor(tmp_path: Path) -> None:
    scenarios = "import,register,calls,list500,rss"
    run = _bench("--quick", "--only", "toolkit,floor", "--scenarios", scenarios, "--out", str(tmp_path), timeout=110)
    assert "anchors' venv" not in run.stdout, "--only toolkit,floor needs no anchors"
    results = json.loads((tmp_path / "latest.json").read_text())
    assert results["errors"] == []
    assert list(results["frameworks"]) == ["toolkit", "floor"]
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
    # Elsewhere the floor is unsupported, not an error, and toolkit still has its figures.
    elsewhere = [key for key in metrics if key not in measured]
    assert {"register500_ms", "rss.tools0_mib", "rss.tools500_mib", "list500.legacy.spawn_ms"} <= set(elsewhere)
    for key in elsewhere:
        assert metrics[key]["frameworks"]["floor"]["unsupported"] == FLOOR_REASON, key
        assert metrics[key]["median"]["toolkit"] > 0, key
        assert metrics[key]["ratio_toolkit_floor"] is None and metrics[key]["floor_target_met"] is None
    header = next(line for line in run.stdout.splitlines() if line.startswith("metric "))
    assert [cell.strip() for cell in header.split("|")][-4:] == [
        "toolkit/best anchor",
        "toolkit/floor",
        "target",
        "floor target",
    ]
    stdio_row = next(line for line in run.stdout.splitlines() if "server CPU/call (stdio, legacy)" in line)
    ratio = metrics["call.stdio.legacy.cpu_us"]["ratio_toolkit_floor"]
    by_floor, _, floor_target = [cell.strip() for cell in stdio_row.split("|")][-3:]
    assert by_floor == (f"{ratio:.2f}" if ratio >= 1 else f"{ratio:.3f} = 1/{1 / ratio:.1f}")
    assert floor_target == f"≤ 2x {'✓' if ratio <= 2 else '✗'}"
    assert f"- floor: {FLOOR_REASON}" in run.stdout


def test_the_floor_starts_nothing_where_it_has_nothing_to_serve(tmp_path: Path) -> None:
    """Every scenario but calls and import records the floor as unsupported, without starting a
    server (none of them could answer: no bearer tokens, 500 tools, store, tasks)."""
    scenarios = "register,auth,list500,rss,store,scaleout,tasks"
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


# --- where the time goes: bench/profile.py ---------------------------------------------------------

TOOLKIT_ITEMS = [
    "toolkit transport (_transports/*)",
    "toolkit engine (_engine, _scope, _session, _context, _registry, _tasks, _mrtr)",
    "toolkit compat + content (_compat, _content)",
    "toolkit JSON-RPC framing (_jsonrpc)",
    "toolkit tools (_tools, _functions, _schema/*)",
]


def test_the_profile_splits_toolkit_calls_into_line_items(tmp_path: Path) -> None:
    """``python -m bench.profile`` runs clean (every answer checked, exit 0) and its line items add up
    to the server CPU per call it measured; toolkit's own items get some of it. No timing asserted."""
    out = tmp_path / "profile.json"
    arguments = ["--calls", "200", "--transport", "stdio,http", "--era", "modern", "--servers", "toolkit"]
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
