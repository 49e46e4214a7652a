"""The ``big`` scenario: a tool returning 1 MB and 10 MB of structured data, per call.

Every column's bench server started with ``--workload big`` over stdio (``bench/servers/
workloads.py``: ``get_models_1mb() -> list[Model]``, 5,000 pydantic models, ~0.99 MB of compact
JSON, and ``get_models_10mb()``, 50,000 models, ~10.1 MB; the models are built at start-up, so
a call measures what the framework does with the value: serialize it, check it, build the
``CallToolResult`` with its text fallback, encode and write it). The floor
(``floor_server.py --workload big``) does the same serialization with nothing else.

Per column, round, size and era: one fresh process; the session opens (legacy ``initialize``, or
``server/discover``) and the process's peak RSS is reset (``5`` written to ``/proc/PID/clear_refs``:
``VmHWM`` becomes the current RSS, the "before" figure); then ``WARMUP[size]`` calls, unmeasured,
and ``CALLS[size]`` calls made back to back, every answer checked (every model, bare or under
``{"result": ...}``). Figures, under ``big.<1mb|10mb>.<era>.``:

- ``cpu_ms``: the server process's CPU time per call (user + system, its CPU clock); the floor
  target (the issue's 1.5x) bounds toolkit / floor for 10 MB;
- ``p50_ms``: the median latency seen by the driver (request written -> response complete);
- ``peak_rss_mib``: ``VmHWM`` after the calls minus ``VmRSS`` before the first one (the memory
  serving the result needs on top of a server that holds the models: what a first call of a
  fresh server makes it grow by, the allocator's pools included, not only what a warm one reuses);
- ``peak_x``: that peak over the result's size (``result_mib``, the compact JSON of the model
  list: the ``structuredContent`` value alone); the target (3x, the issue's) bounds toolkit's own;
- ``result_mib``: that size.

The Node columns do not serve the workload (``n/a``); a ``--baseline`` column runs it too.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from bench import procs
from bench.driver import Era, ProtocolError, Session, StdioTransport
from bench.metrics import BIG_METRICS, BIG_SIZES, ERAS

if TYPE_CHECKING:
    from bench.run import Bench, Framework

# size -> (tool, number of models): the same as workloads.BIG_COUNTS (the driver does not import it).
TOOLS = {"1mb": ("get_models_1mb", 5_000), "10mb": ("get_models_10mb", 50_000)}
WARMUP = {"1mb": 3, "10mb": 2}
CALLS = {"1mb": 20, "10mb": 5}
QUICK_CALLS = {"1mb": 3, "10mb": 1}
MIB = 1024 * 1024


def expected_models(count: int) -> list[dict[str, Any]]:
    """What ``workloads.make_model(i)`` dumps to, for the first ``count`` models, as parsed JSON."""
    return [
        {
            "id": i,
            "name": f"model-{i}",
            "price": 1.25 * i,
            "tags": ["bench", f"t{i % 7}", "big"],
            "description": f"Model {i} of the big-results workload: " + "x" * 66,
        }
        for i in range(count)
    ]


_expected: dict[str, list[dict[str, Any]]] = {}


def _check(size: str) -> Any:
    tool, count = TOOLS[size]
    if size not in _expected:
        _expected[size] = expected_models(count)
    expected = _expected[size]

    def check(result: dict[str, Any]) -> None:
        if result.get("isError"):
            raise ProtocolError(f"tools/call {tool} returned isError: {json.dumps(result)[:500]}")
        structured = result.get("structuredContent")
        value = structured.get("result") if isinstance(structured, dict) else structured
        if value != expected:
            got = len(value) if isinstance(value, list) else type(value).__name__
            raise ProtocolError(f"tools/call {tool}: structuredContent is not the {count} models (got {got})")
        content = result.get("content")
        if not isinstance(content, list) or not content:
            raise ProtocolError(f"tools/call {tool} has no content blocks")

    return check


def result_mib(size: str) -> float:
    """The size of the result: the compact JSON of its model list."""
    return len(json.dumps(expected_models(TOOLS[size][1]), separators=(",", ":")).encode()) / MIB


def _status_kib(pid: int, field: str) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} for pid {pid}")


def _reset_peak(pid: int) -> None:
    """Make the process's VmHWM its current RSS (Linux: ``echo 5 > /proc/PID/clear_refs``)."""
    with open(f"/proc/{pid}/clear_refs", "w") as f:
        f.write("5")


def keys(size: str, era: Era) -> list[str]:
    return [f"big.{size}.{era}.{m}" for m in BIG_METRICS]


async def big_calls(bench: Bench, fw: Framework) -> None:
    """Both sizes, both eras, a fresh stdio process each; see the module's docstring."""
    for size in BIG_SIZES:
        for era in ERAS:
            await _one(bench, fw, size, era)


async def _one(bench: Bench, fw: Framework, size: str, era: Era) -> None:
    tool, _ = TOOLS[size]
    calls = QUICK_CALLS[size] if bench.s.warmup < 100 else CALLS[size]  # --quick: warmup is 20
    warmup = 1 if bench.s.warmup < 100 else WARMUP[size]

    async def body() -> None:
        process, _ = await bench._spawn_stdio(fw, "big", f"big-{size}-{era}")
        try:
            session = Session(StdioTransport(process), era).use_tool(tool, {}, _check(size))
            await session.open(bench.s.start_timeout)
            _reset_peak(process.pid)
            before = _status_kib(process.pid, "VmRSS")
            for _ in range(warmup):
                await session.call(timeout=bench.s.batch_timeout)
            latencies = []
            cpu0 = procs.cpu_seconds(process.pid)
            for _ in range(calls):
                await session.call(timeout=bench.s.batch_timeout)
                latencies.append(session.last_latency * 1e3)
            cpu = procs.cpu_seconds(process.pid) - cpu0
            peak = _status_kib(process.pid, "VmHWM")
        finally:
            await procs.stop(process)
        latencies.sort()
        size_mib = result_mib(size)
        added = (peak - before) / 1024
        prefix = f"big.{size}.{era}"
        collector = bench.collector
        collector.add(f"{prefix}.cpu_ms", fw.name, cpu / calls * 1e3, {"cpu_s": cpu, "calls": calls})
        collector.add(f"{prefix}.p50_ms", fw.name, latencies[len(latencies) // 2], latencies)
        raw = {"before_kib": before, "peak_kib": peak}
        collector.add(f"{prefix}.peak_rss_mib", fw.name, added, raw)
        collector.add(f"{prefix}.peak_x", fw.name, added / size_mib, {**raw, "result_mib": size_mib})
        collector.add(f"{prefix}.result_mib", fw.name, size_mib)

    await bench._guard(fw, keys(size, era), body, era)
