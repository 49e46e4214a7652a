"""The results: the machine, the JSON document, and the printed table."""

import hashlib
import os
import platform
import subprocess
import sys
import time
from dataclasses import asdict
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from bench import clients, compose, openapi
from bench.metrics import (
    ANCHORS,
    AUTH_TARGET,
    AUTH_VARIANTS,
    ERAS,
    FLOOR,
    METRICS,
    METRICS_BY_KEY,
    MIDDLEWARE_MODES,
    MIDDLEWARE_VARIANTS,
    NODES,
    REPLICA_COUNTS,
    STORE_TARGET,
    STORE_VARIANTS,
    TASK_FLOWS,
    Collector,
)

if TYPE_CHECKING:
    from bench.baseline import Baseline
    from bench.run import Framework, Settings


def machine_info() -> dict[str, Any]:
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    memory_gib = None
    try:
        with open("/proc/meminfo") as f:
            memory_gib = round(int(f.readline().split()[1]) / 1024**2, 1)
    except (OSError, ValueError, IndexError):
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "cores_usable": len(os.sched_getaffinity(0)),
        "memory_gib": memory_gib,
        "kernel": platform.release(),
        "driver_python": sys.version.split()[0],
        "loadavg_start": os.getloadavg(),
    }


def toolkit_source(root: str) -> str:
    """The commit of the toolkit sources, and a digest of uncommitted changes under src/ if any.

    Taken at the start and the end of a run: toolkit is developed while it is benchmarked, and a
    run whose source changed midway mixes two versions in its medians.
    """

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=False)
        return done.stdout if done.returncode == 0 else ""

    head = git("rev-parse", "--short", "HEAD").strip() or "no-git"
    dirty = git("status", "--porcelain", "--untracked-files=all", "--", "src")
    if not dirty:
        return head
    digest = hashlib.sha256((dirty + git("diff", "HEAD", "--", "src")).encode()).hexdigest()[:8]
    return f"{head}+dirty:{digest}"


def build(
    collector: Collector,
    frameworks: "list[Framework]",
    settings: "Settings",
    machine: dict[str, Any],
    started: float,
    scenarios: set[str],
    source_start: str,
    source_end: str,
    baseline: "Baseline | None" = None,
) -> dict[str, Any]:
    machine = {**machine, "loadavg_end": os.getloadavg()}
    return {
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "toolkit_source": {"start": source_start, "end": source_end},
        "baseline": baseline.as_json() if baseline is not None else None,
        "duration_s": round(time.time() - started, 1),
        "machine": machine,
        "settings": asdict(settings),
        "scenarios": sorted(scenarios),
        "frameworks": {
            fw.name: {
                "available": fw.available,
                "reason": fw.reason,
                "version": fw.version,
                "python": str(fw.python),
                "python_version": fw.python_version,
                "kind": fw.kind,
                "module_file": fw.module_file,
                "pythonpath": str(fw.pythonpath) if fw.pythonpath is not None else None,
            }
            for fw in frameworks
        },
        "metrics": {m.key: collector.summary(m.key) for m in METRICS if collector.cells[m.key]},
        "errors": collector.errors,
    }


def published(results: dict[str, Any]) -> dict[str, Any]:
    """The run's JSON as the docs keep it (``docs/assets/bench/results.json``): every figure, sample and
    raw record as the run wrote them, but each batch's per-call latencies (a list per round, some
    thousands of numbers) cut to ``{"count", "max"}``, the slowest call being all the page shows of them.
    Applied to its own output it changes nothing."""

    def cut(raw: Any) -> Any:
        if isinstance(raw, list) and raw and all(isinstance(v, int | float) for v in raw):
            return {"count": len(raw), "max": max(raw)}
        return raw

    metrics = {
        key: {
            **metric,
            "frameworks": {
                fw: {**cell, "raw": [cut(raw) for raw in cell.get("raw", [])]}
                for fw, cell in metric["frameworks"].items()
            },
        }
        for key, metric in results["metrics"].items()
    }
    return {**results, "metrics": metrics}


def _value(value: float, unit: str) -> str:
    if unit in ("µs", "1/s", "%"):
        return f"{value:,.0f}"
    if unit == "x":
        return f"{value:.3f}"
    if unit == "req":  # requests per operation: a mean over the batch
        return f"{value:.2f}"
    return f"{value:,.1f}"


def _ratio(ratio: float) -> str:
    if ratio < 1:
        return f"{ratio:.3f} = 1/{1 / ratio:.1f}"
    return f"{ratio:.2f}"


def _change(ratio: float) -> str:
    # Before/after ratios sit near 1, where "0.970 = 1/1.0" says less than the change in percent.
    change = round((ratio - 1) * 100, 1) + 0.0  # + 0.0: no "-0.0%"
    return f"{ratio:.3f} ({change:+.1f}%)"


VERDICTS = {True: "✓", False: "✗", None: "?"}  # met, missed, no figure to judge


def table(results: dict[str, Any]) -> str:
    """Medians per framework, toolkit/best-anchor ratio, the verdict against each target,
    toolkit/baseline when the run has a baseline column, and toolkit/floor with the verdict against
    each floor target when the run has the floor column."""
    frameworks = list(results["frameworks"])  # run order; the baseline comes right after toolkit
    baseline = (results.get("baseline") or {}).get("column")
    by_baseline = [f"toolkit/{baseline}"] if baseline else []
    floor = FLOOR in results["frameworks"]
    by_floor = ["toolkit/floor"] if floor else []
    node = any(fw in results["frameworks"] for fw in NODES)
    by_node = ["toolkit/node"] if node else []
    header = ["metric", "unit", *frameworks, "toolkit/best anchor", *by_floor, *by_node, *by_baseline, "target"]
    header += ["floor target"] if floor else []
    header += ["node target"] if node else []
    rows: list[list[str]] = []
    for metric in METRICS:
        summary = results["metrics"].get(metric.key)
        if summary is None:
            continue
        row = [metric.label, metric.unit]
        for fw in frameworks:
            info = results["frameworks"][fw]
            cell = summary["frameworks"].get(fw)
            if not info["available"]:
                row.append("unavailable")
            elif cell is None:
                row.append("-")
            elif cell["errors"]:
                row.append("ERROR")
            elif cell["unsupported"]:
                row.append("n/a (unsupported)")
            else:
                row.append(_value(summary["median"][fw], metric.unit))
        ratio = summary["ratio_toolkit_best_anchor"]
        row.append(f"{_ratio(ratio)} ({summary['best_anchor']})" if ratio is not None else "-")
        if floor:
            ratio = summary.get("ratio_toolkit_floor")
            row.append(_ratio(ratio) if ratio is not None else "-")
        if node:
            ratio = summary.get("ratio_toolkit_best_node")
            row.append(f"{_ratio(ratio)} ({summary['best_node']})" if ratio is not None else "-")
        if baseline:
            ratio = summary.get("ratio_toolkit_baseline")
            row.append(_change(ratio) if ratio is not None else "-")
        if metric.target is None:
            row.append("")
        else:
            unit = "x" if metric.unit == "x" else f" {metric.unit}"
            value = f"{float(metric.target):g}{unit} (toolkit)"
            bound = value if metric.target_of == "value" else _fraction(metric.target)
            row.append(f"≤ {bound} {VERDICTS[summary['target_met']]}")
        if floor:
            bound = f"{float(metric.floor_target):g}x" if metric.floor_target is not None else ""
            row.append(f"≤ {bound} {VERDICTS[summary.get('floor_target_met')]}" if bound else "")
        if node:
            bound = f"{float(metric.node_target):g}x" if metric.node_target is not None else ""
            row.append(f"≤ {bound} {VERDICTS[summary.get('node_target_met')]}" if bound else "")
        rows.append(row)
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    right = set(range(2, header.index("target")))  # the figures and ratios; the targets read left to right

    def line(cells: list[str]) -> str:
        return " | ".join(
            c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        )

    m = results["machine"]
    versions = ", ".join(
        f"{fw} (pydantic {info['version'] or '-'})" if info.get("kind") == FLOOR else f"{fw} {info['version'] or '-'}"
        for fw, info in results["frameworks"].items()
        if info["available"]
    )
    s = results["settings"]
    out = [
        f"toolkit benchmark — {results['date']} — {m['cpu']}, {m['cores']} cores "
        f"({m['cores_usable']} usable), {m['memory_gib']} GiB, Linux {m['kernel']}",
        f"Python {m['driver_python']} (driver); {versions}; load avg at start {m['loadavg_start'][0]:.2f}, "
        f"end {m['loadavg_end'][0]:.2f}",
        f"medians over {s['rounds']} round(s); {s['calls']} calls per batch after {s['warmup']} warm-up; "
        f"{s['concurrency']} concurrent HTTP clients; ratio = toolkit / best anchor ({', '.join(ANCHORS)})",
        f"toolkit source: {results['toolkit_source']['start']}"
        + (
            ""
            if results["toolkit_source"]["start"] == results["toolkit_source"]["end"]
            else f" -> {results['toolkit_source']['end']} (CHANGED DURING THE RUN: medians mix versions)"
        ),
        *(
            [
                "floor: a frameworkless server (bench/servers/floor_server.py) doing the least work any correct "
                "Python server must do per call; toolkit/floor is how far toolkit is from that lower bound "
                "(it is not an anchor); floor target = the bound on toolkit/floor"
            ]
            if floor
            else []
        ),
        *(
            [
                "node, node2: the TypeScript SDK's McpServer, 1.x and 2.x (bench/servers/node/); toolkit/node = "
                "toolkit / the lower Node median (the higher for calls/s); node target = the bound on it"
            ]
            if node
            else []
        ),
        *(
            [
                f"baseline: {baseline} = toolkit at {results['baseline']['sha']} ({results['baseline']['ref']}: "
                f"{results['baseline']['subject'][:60]}); ratio toolkit/{baseline} < 1 = lower now "
                "(better, except calls/s)"
            ]
            if baseline
            else []
        ),
        "",
        line(header),
        "-+-".join("-" * w for w in widths),
        *(line(r) for r in rows),
    ]
    notes = sorted(
        {
            f"- {fw}: {cell['unsupported']}"
            for summary in results["metrics"].values()
            for fw, cell in summary["frameworks"].items()
            if cell["unsupported"]
        }
    )
    if notes:
        out += ["", "n/a (unsupported):", *notes]
    out += _auth_verdict(results)
    out += _middleware_note(results)
    out += _store_verdict(results)
    out += _scaleout_note(results)
    out += _tasks_note(results)
    out += clients.note(results)
    out += compose.note(results)
    out += openapi.note(results)
    return "\n".join(out)


def _auth_verdict(results: dict[str, Any]) -> list[str]:
    """The auth target, spelled out: toolkit's authenticated / unauthenticated server CPU per call."""
    metrics = results["metrics"]
    if not any(key.startswith("auth.") for key in metrics):
        return []
    lines = ["", f"auth target: server CPU per authenticated call ≤ {float(AUTH_TARGET):g}x the unauthenticated call"]
    for era in ERAS:
        parts = []
        for variant, label in AUTH_VARIANTS.items():
            key = f"auth.http_seq.{era}.{variant}.cpu_ratio"
            summary = metrics.get(key)
            toolkit = summary["median"].get("toolkit") if summary is not None else None
            if toolkit is None:
                top, bottom = METRICS_BY_KEY[key].ratio_of or ("", "")
                missing = bottom if metrics.get(top, {}).get("median", {}).get("toolkit") is not None else top
                parts.append(f"{label}: - (no toolkit figure for {missing})")
                continue
            verdict = "meets the target" if summary["target_met"] else "MISSES the target"
            parts.append(f"{label} {toolkit:.3f}x ({verdict})")
        lines.append(f"  HTTP sequential, {era}: " + "; ".join(parts))
    return lines


def _middleware_note(results: dict[str, Any]) -> list[str]:
    """What each middleware variant costs, in one line per transport and era: toolkit's CPU per call
    with it ÷ without it (the ``none`` server of the same round)."""
    metrics = results["metrics"]
    if not any(key.startswith("middleware.") for key in metrics):
        return []
    lines = [
        "",
        "middleware: get_items server CPU/call with each variant / with none (no middleware, no SDK), "
        "median of the per-round ratios; pass-through = one Middleware overriding on_request and on_call_tool, "
        "RequestLogging = one record per request to a NullHandler, OpenTelemetry SDK = TracerProvider "
        "(SimpleSpanProcessor, InMemorySpanExporter) + MeterProvider (InMemoryMetricReader), no middleware",
    ]
    for mode, mode_label in MIDDLEWARE_MODES.items():
        for era in ERAS:
            parts = []
            for variant, label in MIDDLEWARE_VARIANTS.items():
                if variant == "none":
                    continue
                summary = metrics.get(f"middleware.{mode}.{era}.{variant}.cpu_ratio")
                toolkit = summary["median"].get("toolkit") if summary is not None else None
                parts.append(f"{label} {toolkit:.2f}x" if toolkit is not None else f"{label} -")
            lines.append(f"  {mode_label}, {era}: " + ", ".join(parts))
    return lines


def _fraction(target: Fraction) -> str:
    return f"{target.numerator}/{target.denominator}"


def _store_verdict(results: dict[str, Any]) -> list[str]:
    """The store target, spelled out per variant, with how the calls were answered (JSON or SSE)."""
    metrics = results["metrics"]
    if not any(key.startswith("store.") for key in metrics):
        return []
    lines = [
        "",
        f"store target: toolkit's server CPU per call with --store redis:// ≤ {float(STORE_TARGET):g}x with the "
        "memory store (examples/weather.py get_weather_forecast, HTTP sequential, one session / client); "
        "redis-server's own CPU is its own row, not in the ratio",
    ]
    for variant, label in STORE_VARIANTS.items():
        summary = metrics.get(f"store.{variant}.cpu_ratio")
        toolkit = summary["median"].get("toolkit") if summary is not None else None
        if toolkit is None:
            lines.append(f"  {label}: - (no toolkit figure for both stores)")
            continue
        verdict = "meets the target" if summary["target_met"] else "MISSES the target"
        answers = []
        for store in ("memory", "redis"):
            cell = metrics.get(f"store.{variant}.{store}.cpu_us", {}).get("frameworks", {}).get("toolkit") or {}
            raw = [r for r in cell.get("raw", []) if isinstance(r, dict) and "sse_responses" in r]
            if raw:
                sse, total = sum(r["sse_responses"] for r in raw), sum(r["answered"] for r in raw)
                answers.append(f"{store} store: {sse}/{total} answered as SSE streams")
        lines.append(f"  {label}: {toolkit:.3f}x ({verdict}); " + ", ".join(answers))
    return lines


def _scaleout_note(results: dict[str, Any]) -> list[str]:
    """The scaling factor per era, and what it ran on: no target, the machine is the limit."""
    metrics = results["metrics"]
    if not any(key.startswith("scaleout.") for key in metrics):
        return []
    m, s = results["machine"], results["settings"]
    lines = [
        "",
        f"scale-out: {s['concurrency']} concurrent clients through HAProxy (round-robin, no stickiness) to "
        f"toolkit replicas with --store redis://, {s['scaleout_seconds']:g} s measured per replica count, era and "
        f"round; this machine has {m['cores_usable']} usable cores shared by the load generator, HAProxy, "
        "Redis and the replicas, so the scaling factor is what this machine allows (no target)",
    ]
    low, high = REPLICA_COUNTS[0], REPLICA_COUNTS[-1]
    for era in ERAS:
        figures = [metrics.get(f"scaleout.{era}.r{count}.calls_per_s") for count in (low, high)]
        scaling = metrics.get(f"scaleout.{era}.scaling")
        values = [f["median"].get("toolkit") if f is not None else None for f in figures]
        factor = scaling["median"].get("toolkit") if scaling is not None else None
        if None in values or factor is None:
            lines.append(f"  {era}: - (incomplete)")
            continue
        others = [metrics.get(f"scaleout.{era}.r{count}.others_pct") for count in (low, high)]
        busy = [o["median"].get("toolkit") if o is not None else None for o in others]
        elsewhere = (
            f"; other processes meanwhile kept {busy[0]:.0f}% / {busy[1]:.0f}% of the cores busy"
            if None not in busy
            else ""
        )
        lines.append(
            f"  {era}: {low} replica {values[0]:,.0f} calls/s, {high} replicas {values[1]:,.0f} calls/s: "
            f"{factor:.2f}x (median of per-round ratios){elsewhere}"
        )
    return lines


def _tasks_note(results: dict[str, Any]) -> list[str]:
    """What a task operation was, per era: how many requests it took (over every round), and its cost."""
    metrics = results["metrics"]
    if not any(key.startswith("tasks.") for key in metrics):
        return []
    lines = [
        "",
        "tasks: examples/long_running.py build_report(topic='t', sections=0), HTTP sequential, one client; "
        "a task operation runs from its tools/call to the response that carries the tool's result",
    ]
    for era in ERAS:
        cell = metrics.get(f"tasks.{era}.task.requests", {}).get("frameworks", {}).get("toolkit") or {}
        counts: dict[int, int] = {}
        for raw in cell.get("raw", []):
            for requests, calls in raw.items():
                counts[int(requests)] = counts.get(int(requests), 0) + calls
        if not counts:
            lines.append(f"  {era}: - (no toolkit figure)")
            continue
        spread = ", ".join(f"{calls} took {requests}" for requests, calls in sorted(counts.items()))
        ratios = [
            metrics.get(f"tasks.{era}.{name}_ratio", {}).get("median", {}).get("toolkit") for name in ("cpu", "p50")
        ]
        cost = f"; task / plain: server CPU {ratios[0]:.2f}x, wall-clock {ratios[1]:.2f}x" if None not in ratios else ""
        lines.append(f"  {era} ({TASK_FLOWS[era]}): requests per task operation: {spread}{cost}")
    return lines
