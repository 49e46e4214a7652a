"""The ``openapi`` scenario: loading GitHub's REST API document, and a generated tool's call.

**Load** (``openapi.load.*``; toolkit and fastmcp 4.1.6 only: mcp 2.3.0's ``MCPServer`` has no
OpenAPI support, the floor serves ``get_items`` only). The document is ``@octokit/openapi``'s
``generated/api.github.com.json`` (OpenAPI 3.0.3, 1,223 operations, 13 MB; installed by
``scripts/apidocs --install-only``, found as ``tests/support/apidocs.py`` finds it). Per column and
round, two fresh processes of ``bench/servers/openapi_server.py`` (in the column's own Python: the
project's ``.venv`` for toolkit, the anchors' venv for fastmcp), one after the other, their order
swapped every other round:

- ``document``: imports (toolkit ``from toolkit import Server`` + ``import httpx``; fastmcp ``from
  fastmcp import FastMCP`` + ``import httpx2``, whose ``AsyncClient`` its ``from_openapi`` takes),
  a mark (the ``perf_counter``, which is CLOCK_MONOTONIC as the driver's, and the process's CPU
  seconds), ``json.load`` of the file, ``from_openapi(document, client=AsyncClient(base_url=
  "https://api.github.com"))`` (toolkit with ``include_deprecated=True``: it leaves the 37
  deprecated operations out by default, fastmcp keeps them, so both build all 1,223), then
  served over stdio: the driver sends ``initialize`` (legacy era: fastmcp has no other) and one
  ``tools/list``, all pages, and checks it lists 1,223 distinct tools;
- ``empty``: the same imports and mark, then an empty server (``Server("empty")`` /
  ``FastMCP("empty")``) served the same way, answering ``tools/list`` with no tools: the baseline.

Figures, per process, at the moment the ``tools/list`` answer's bytes are complete:

- ``load_ms``: mark -> ``tools/list`` answered, **minus the empty server's same interval** (what
  serving and answering costs without a document: ~3 ms for toolkit, ~0.5 s for fastmcp, whose
  ``run`` imports its stdio stack then), i.e. the document's own cost; ``load_gross_ms`` is the
  interval itself. Target: toolkit / fastmcp ≤ 1/2.
- ``rss_mib``: peak RSS (``VmHWM`` of ``/proc/PID/status``, the high-water mark the child's own
  ``getrusage().ru_maxrss`` reports) **minus the empty server's peak RSS** in the same round (the
  same interpreter, the same imports, serving, no document); ``peak_rss_mib`` is the peak itself,
  ``baseline_rss_mib`` the empty server's. Target: toolkit / fastmcp ≤ 1/2.
- ``total_ms``: spawn -> ``tools/list`` answered, interpreter start-up and imports included;
  ``import_ms``: spawn -> mark; ``cpu_ms``: the process's CPU from the mark to the answer (its
  CPU clock), minus the empty server's (steadier than wall time on a shared machine).

**Call** (``openapi.call.<era>.*``): a tiny real HTTP API (``bench/servers/openapi_api.py``, its
own process on 127.0.0.1, standard library only, answers pre-encoded) with one operation,
``GET /items?limit=N``, and its OpenAPI 3.1 document (``list_items``, an array of ``Item``). The
driver calls ``list_items(limit=10)`` over stdio and checks the ten items in every answer. Per
column and round one API process; per era, one stdio process per variant, the variants' order
swapped every other round:

- ``tool`` (toolkit): ``python -m toolkit run --openapi DOC --base-url URL`` (stdio), the
  generated tool as a user serves it; fastmcp: ``openapi_server.py --framework fastmcp`` on the same
  document (legacy era only, a tenth of the calls: informative, no target);
- ``direct`` (toolkit column only): ``bench/servers/openapi_direct.py``, the least a Python MCP
  server must do to make that call with httpx, and the fairest "calling the same endpoint
  directly with httpx": the same transport (stdio) and driver, the same JSON-RPC answer
  (a text block and ``structuredContent``, wrapped in ``{"result": ...}`` before 2026-07-28 as
  toolkit does), one shared ``httpx.AsyncClient`` with httpx's defaults, ``client.get("/items",
  params={"limit": ...})``, ``raise_for_status()``, ``response.json()``; nothing else (no
  validation of arguments or answer, no framework). So the ratio is what the generated tool and
  toolkit's MCP stack add to the httpx call itself. stdio, not HTTP: over HTTP the direct
  program would need an HTTP server of its own, whose choice would weigh more than the tool.

Figures: ``cpu_us`` (the serving process's CPU per call over the measured batch, the same batches
as ``call.stdio``), ``p50_us``, ``api_cpu_us`` (the API process's CPU per call meanwhile: equal
for both variants when they send the same request); ``openapi.call.<era>.cpu_ratio`` = tool /
direct, round by round. Target: toolkit's ratio ≤ 1.3.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench import procs
from bench.driver import Era, Session, StdioTransport, check_items_result
from bench.metrics import (
    ERAS,
    FLOOR,
    FLOOR_UNSUPPORTED,
    OPENAPI_CALL_METRICS,
    OPENAPI_CALL_TARGET,
    OPENAPI_CALL_VARIANTS,
    OPENAPI_LOAD_METRICS,
    OPENAPI_LOAD_TARGET,
)

if TYPE_CHECKING:
    from bench.run import Bench, Framework

ROOT = Path(__file__).resolve().parent.parent
SERVERS = ROOT / "bench" / "servers"
TOOLKIT_PYTHON = ROOT / ".venv" / "bin" / "python"
LOAD_SERVER = SERVERS / "openapi_server.py"
API_SERVER = SERVERS / "openapi_api.py"
DIRECT = SERVERS / "openapi_direct.py"
GITHUB = ROOT / ".interop" / "apidocs" / "node_modules" / "@octokit" / "openapi" / "generated" / "api.github.com.json"
INSTALL_HINT = "run scripts/apidocs --install-only"
NO_OPENAPI = "mcp 2.3.0's MCPServer has no OpenAPI support"
NEEDS = "toolkit._sources.openapi"  # what a toolkit column (a --baseline commit) needs
TOOL = "list_items"
ARGUMENTS = {"limit": 10}
HTTP_METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")
LOAD_VARIANTS = ("empty", "document")
_operations: dict[Path, int] = {}


def load_keys() -> list[str]:
    return [f"openapi.load.{m}" for m in OPENAPI_LOAD_METRICS]


def call_keys(era: Era, variant: str) -> list[str]:
    return [f"openapi.call.{era}.{variant}.{m}" for m in OPENAPI_CALL_METRICS]


def call_counts(bench: Bench, fw: Framework) -> tuple[int, int]:
    """Measured and warm-up calls: the batches' own, or a tenth of them for fastmcp's server (ms per call)."""
    if fw.kind == "fastmcp":
        return max(20, bench.s.calls // 10), max(5, bench.s.warmup // 10)
    return bench.s.calls, bench.s.warmup


async def _unsupported(bench: Bench, fw: Framework) -> str | None:
    if fw.kind == FLOOR:
        return FLOOR_UNSUPPORTED
    if fw.kind == "mcp":
        return NO_OPENAPI
    if fw.kind != "toolkit":
        return None
    answers = bench._compose_support.setdefault("openapi", {})
    return await bench._lacks(fw, NEEDS, answers, "", "it predates OpenAPI support")


def operations(path: Path) -> int:
    """The document's operations (what both frameworks make a tool of), counted once per run."""
    if path not in _operations:
        with open(path, "rb") as f:
            document = json.load(f)
        _operations[path] = sum(1 for item in document["paths"].values() for method in item if method in HTTP_METHODS)
    return _operations[path]


def _argv(fw: Framework, *args: str) -> list[str]:
    return [str(fw.python), str(LOAD_SERVER), "--framework", fw.kind, *args]


def _peak_rss_mib(pid: int) -> float:
    """``VmHWM``: the process's peak resident set size so far (what its ``ru_maxrss`` reports), MiB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmHWM for pid {pid}")


# --- load ------------------------------------------------------------------------------------------


async def load(bench: Bench, fw: Framework) -> None:
    """GitHub's document loaded and listed, and the empty baseline, each in a fresh process."""
    keys = load_keys()
    reason = await _unsupported(bench, fw)
    if reason is not None:
        bench.collector.unsupported(keys, fw.name, reason)
        if fw.kind == "toolkit":
            print(f"    {fw.name}: openapi unsupported ({reason})", flush=True)
        return

    async def body() -> None:
        if not GITHUB.is_file():
            raise RuntimeError(f"GitHub's OpenAPI document is not installed ({GITHUB}): {INSTALL_HINT}")
        expected = operations(GITHUB)
        order = LOAD_VARIANTS if bench.round % 2 else LOAD_VARIANTS[::-1]
        figures: dict[str, dict[str, float]] = {}
        for variant in order:
            figures[variant] = await _load_once(bench, fw, variant, expected)
        empty, document = figures["empty"], figures["document"]
        add = bench.collector.add
        raw = {"document": document, "empty": empty, "tools": expected}
        add("openapi.load.load_ms", fw.name, document["load_ms"] - empty["load_ms"], raw)
        add("openapi.load.load_gross_ms", fw.name, document["load_ms"])
        add("openapi.load.rss_mib", fw.name, document["peak_rss_mib"] - empty["peak_rss_mib"])
        add("openapi.load.peak_rss_mib", fw.name, document["peak_rss_mib"])
        add("openapi.load.baseline_rss_mib", fw.name, empty["peak_rss_mib"])
        add("openapi.load.total_ms", fw.name, document["total_ms"])
        add("openapi.load.import_ms", fw.name, document["import_ms"])
        add("openapi.load.cpu_ms", fw.name, document["cpu_ms"] - empty["cpu_ms"])

    await bench._guard(fw, keys, body)


async def _load_once(bench: Bench, fw: Framework, variant: str, expected: int) -> dict[str, float]:
    """One process: spawn, imports, mark, (document,) serve; initialize and one tools/list."""
    mark = bench.log_dir / f"{fw.name}-openapi-{variant}-r{bench.round}.mark"
    mark.parent.mkdir(parents=True, exist_ok=True)
    mark.unlink(missing_ok=True)
    what = ["--empty"] if variant == "empty" else ["--document", str(GITHUB)]
    argv = _argv(fw, "--mark", str(mark), *what)
    process, spawned = await procs.start(argv, bench.envs[fw.name], bench._log(fw, f"openapi-{variant}"), stdio=True)
    try:
        session = Session(StdioTransport(process), "legacy")
        await session.open(bench.s.start_timeout)
        await session.list_tools(expected=0 if variant == "empty" else expected, timeout=bench.s.batch_timeout)
        answered = session.transport.received_at
        cpu = procs.cpu_seconds(process.pid)
        peak = _peak_rss_mib(process.pid)
    finally:
        await procs.stop(process)
    marked, cpu_marked = (float(value) for value in mark.read_text().split())
    return {
        "load_ms": (answered - marked) * 1e3,
        "total_ms": (answered - spawned) * 1e3,
        "import_ms": (marked - spawned) * 1e3,
        "cpu_ms": (cpu - cpu_marked) * 1e3,
        "peak_rss_mib": peak,
    }


# --- call ------------------------------------------------------------------------------------------


def _api_module() -> Any:
    """``bench/servers/openapi_api.py`` (standard library only), for its ``DOCUMENT``."""
    spec = importlib.util.spec_from_file_location("bench_openapi_api", API_SERVER)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def calls(bench: Bench, fw: Framework) -> None:
    """list_items through the generated tool and through the direct program, stdio, both eras."""
    every = [key for era in ERAS for variant in OPENAPI_CALL_VARIANTS for key in call_keys(era, variant)]
    reason = await _unsupported(bench, fw)
    if reason is not None:
        bench.collector.unsupported(every, fw.name, reason)
        return
    variants = ["tool", "direct"] if fw.kind == "toolkit" else ["tool"]
    if "direct" not in variants:
        direct_keys = [key for era in ERAS for key in call_keys(era, "direct")]
        bench.collector.unsupported(direct_keys, fw.name, "measured in the toolkit column (the same program)")
    document = bench.log_dir / "openapi-items.json"
    document.parent.mkdir(parents=True, exist_ok=True)
    document.write_text(json.dumps(_api_module().DOCUMENT))
    port = procs.free_port()
    argv = [str(TOOLKIT_PYTHON), str(API_SERVER), "--port", str(port)]
    api: asyncio.subprocess.Process | None = None

    async def start() -> None:
        nonlocal api
        api, _ = await procs.start(argv, bench.envs[fw.name], bench._log(fw, "openapi-api"), stdio=False)
        await procs.wait_for_port(api, port, bench.s.start_timeout)

    try:
        await bench._guard(fw, every, start)
        if api is None or api.returncode is not None:
            return
        order = variants if bench.round % 2 else variants[::-1]
        for era in ERAS:
            for variant in order:
                await _call_batch(bench, fw, era, variant, document, port, api.pid)
    finally:
        if api is not None:
            await procs.stop(api)


async def _call_batch(
    bench: Bench, fw: Framework, era: Era, variant: str, document: Path, port: int, api_pid: int
) -> None:
    base_url = f"http://127.0.0.1:{port}"
    if variant == "direct":
        argv = [str(TOOLKIT_PYTHON), str(DIRECT), "--base-url", base_url]
    elif fw.kind == "toolkit":  # as a user serves it; python -m toolkit, so a --baseline column's PYTHONPATH counts
        argv = [str(fw.python), "-m", "toolkit", "run", "--openapi", str(document), "--base-url", base_url]
    else:
        argv = _argv(fw, "--document", str(document), "--base-url", base_url)
    calls, warmup = call_counts(bench, fw) if variant == "tool" else (bench.s.calls, bench.s.warmup)

    async def body() -> None:
        env = bench.envs[fw.name]
        process, _ = await procs.start(argv, env, bench._log(fw, f"openapi-{variant}-{era}"), stdio=True)
        try:
            session = Session(StdioTransport(process), era).use_tool(TOOL, ARGUMENTS, check_items_result)
            await session.open(bench.s.start_timeout)
            prefix = f"openapi.call.{era}.{variant}"
            used = await bench._batch(
                fw, prefix, process.pid, [session], calls, warmup, ("cpu_us", "p50_us"), also={"api": api_pid}
            )
            bench.collector.add(
                f"{prefix}.api_cpu_us", fw.name, used["api"] / calls * 1e6, {"cpu_s": used["api"], "calls": calls}
            )
        finally:
            await procs.stop(process)

    await bench._guard(fw, call_keys(era, variant), body, era)


# --- the lines under the table -----------------------------------------------------------------------


def note(results: dict[str, Any]) -> list[str]:
    """The openapi targets spelled out: toolkit / fastmcp for the load, tool / direct for the call."""
    metrics = results["metrics"]
    if not any(key.startswith("openapi.") for key in metrics):
        return []

    def median(key: str, fw: str = "toolkit") -> float | None:
        value = metrics.get(key, {}).get("median", {}).get(fw)
        return float(value) if isinstance(value, int | float) else None

    def verdict(value: float, bound: Any) -> str:
        return "✓" if value <= bound else "✗"

    lines = [
        "",
        "openapi, load: GitHub's REST API document (@octokit/openapi, 1,223 operations), fresh process: "
        "import, json.load, from_openapi, served over stdio until one tools/list is answered; time and peak RSS "
        "minus an empty server's (same imports, served); target toolkit / fastmcp "
        f"≤ {float(OPENAPI_LOAD_TARGET):g}x",
    ]
    for metric, label, unit in (
        ("load_ms", "time, after imports -> tools/list answered, net", "ms"),
        ("rss_mib", "peak RSS, net of the empty server's", "MiB"),
        ("cpu_ms", "CPU, after imports -> answered, net", "ms"),
        ("total_ms", "time, spawn -> answered (imports included)", "ms"),
        ("peak_rss_mib", "peak RSS (gross)", "MiB"),
    ):
        toolkit, fastmcp = median(f"openapi.load.{metric}"), median(f"openapi.load.{metric}", "fastmcp")
        text = f"toolkit {toolkit:,.1f} {unit}" if toolkit is not None else "toolkit -"
        if fastmcp is not None:
            text += f", fastmcp {fastmcp:,.1f} {unit}"
            if toolkit is not None:
                ratio = toolkit / fastmcp
                checked = metric in ("load_ms", "rss_mib")
                text += f": {ratio:.3f}x" + (f" {verdict(ratio, OPENAPI_LOAD_TARGET)}" if checked else "")
        lines.append(f"  {label}: {text}")
    lines += [
        "",
        "openapi, call: list_items(limit=10) over stdio against a local HTTP API (GET /items); the serving "
        "process's CPU/call, the generated tool (toolkit run --openapi) / the direct httpx program, "
        f"target ≤ {float(OPENAPI_CALL_TARGET):g}x",
    ]
    for era in ERAS:
        tool, direct = median(f"openapi.call.{era}.tool.cpu_us"), median(f"openapi.call.{era}.direct.cpu_us")
        ratio = median(f"openapi.call.{era}.cpu_ratio")
        if tool is None or direct is None or ratio is None:
            lines.append(f"  {era}: - (no toolkit figure)")
            continue
        text = f"toolkit {tool:,.0f} µs, direct {direct:,.0f} µs: {ratio:.3f}x {verdict(ratio, OPENAPI_CALL_TARGET)}"
        fastmcp = median(f"openapi.call.{era}.tool.cpu_us", "fastmcp")
        if fastmcp is not None:
            text += f"; fastmcp's generated tool {fastmcp:,.0f} µs ({fastmcp / direct:.2f}x direct)"
        lines.append(f"  {era}: {text}")
    return lines
