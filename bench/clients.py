"""The ``client`` scenario: what each framework's MCP *client* costs per ``tools/call``.

The other groups measure servers. Here the server is always the same, the current tree's
toolkit bench server (``bench/servers/toolkit_server.py``, the ``items`` workload, from toolkit's
``.venv``), and the columns are clients, each in its own process and its own environment:

- ``toolkit``: ``toolkit.Client`` (``bench/client_drivers/toolkit_client.py``, toolkit's ``.venv``);
- ``mcp``: ``mcp.Client`` of mcp 2.3.0, ``fastmcp``: ``fastmcp.Client`` of fastmcp 4.1.6
  (``mcp_client.py``, ``fastmcp_client.py``, the anchors' venv);
- a ``--baseline`` column runs ``toolkit_client.py`` with that tree's ``src/`` (``n/a`` when it
  predates ``toolkit.Client``); the floor is a server, not a client (``n/a``).

Per framework, round, transport (stdio, HTTP) and era (legacy ``2025-11-25`` with ``initialize``;
modern ``2026-07-28``), one cell: over HTTP the harness starts a fresh server and hands the
driver its URL; over stdio the driver's client starts the server itself, as stdio clients do
(``python -E``: the server ignores a baseline column's ``PYTHONPATH``, so it is the same server in
every column). The driver calls ``get_items`` sequentially, warm-up first, then the measured calls
in equal batches, reading its own ``time.process_time()`` around each batch (client CPU only: a
stdio server is a child process, not counted) and checking every result (see
``client_drivers/common.py``).

Metrics: ``client.<stdio|http>.<era>.cpu_us``, the client's CPU per call: the lowest of the
cell's batches (the quietest stretch of a shared machine); the table shows the median over rounds
and a note under it the minimum over rounds. Target: toolkit / best anchor ≤ 3/10, i.e. toolkit's
client at most 0.3x of each anchor's. ``client.<transport>.<era>.p50_us``: the median wall time per
call as the client saw it. ``client.testing.<era>.cpu_us``: ``toolkit.testing.Client`` in process
(client and server in one process: the whole cost of a test's call), toolkit columns only; with
``--baseline`` the ratio column says whether it regressed. Each toolkit column is also checked
once per run: ``import toolkit`` must load no module of the client (``toolkit.client``,
``toolkit._client``), else the run records an error.
"""

from __future__ import annotations

import asyncio
import json
import statistics
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench import procs
from bench.driver import Era
from bench.metrics import CLIENT_METRICS, CLIENT_TARGET, CLIENT_TRANSPORTS, ERAS, FLOOR

if TYPE_CHECKING:
    from bench.run import Bench, Framework

ROOT = Path(__file__).resolve().parent.parent
DRIVERS = ROOT / "bench" / "client_drivers"
SERVER = ROOT / "bench" / "servers" / "toolkit_server.py"
TOOLKIT_PYTHON = ROOT / ".venv" / "bin" / "python"
UNSUPPORTED_EXIT = 3  # client_drivers/common.py: this client cannot run this cell
BATCHES = 5
FLOOR_NOT_A_CLIENT = "the floor is a server; the client scenario measures clients"
TESTING_ONLY = "toolkit.testing.Client is toolkit's own in-process test client"
IMPORT_CHECK = (
    "import json, sys, toolkit\n"
    "print(json.dumps(sorted(m for m in sys.modules if m == 'toolkit.client' or m.startswith('toolkit._client'))))\n"
)


def counts(bench: Bench) -> tuple[int, int]:
    """Measured calls and warm-up calls per cell: a quarter and half of the server batches' counts
    (an anchor's client spends ~1-2 ms of CPU per call; 500 calls are enough for a steady figure)."""
    return max(20, bench.s.calls // 4), max(10, bench.s.warmup // 2)


def keys(transport: str, era: Era) -> list[str]:
    return [f"client.{transport}.{era}.{m}" for m in CLIENT_METRICS]


async def client_calls(bench: Bench, fw: Framework) -> None:
    """Every cell of one client framework, in one round: stdio then HTTP, legacy then modern."""
    every = [key for transport in CLIENT_TRANSPORTS for era in ERAS for key in keys(transport, era)]
    if fw.kind == FLOOR:
        bench.collector.unsupported(every, fw.name, FLOOR_NOT_A_CLIENT)
        return
    for transport in CLIENT_TRANSPORTS:
        for era in ERAS:
            await _cell(bench, fw, transport, era)


async def _cell(bench: Bench, fw: Framework, transport: str, era: Era) -> None:
    cell_keys = keys(transport, era)
    reason = bench._client_support.get((fw.name, transport))
    if reason is not None:  # asked before in this run: the driver said it cannot
        bench.collector.unsupported(cell_keys, fw.name, reason)
        return
    calls, warmup = counts(bench)
    argv = [str(fw.python), str(DRIVERS / f"{fw.kind}_client.py"), "--transport", transport, "--era", era]
    argv += ["--calls", str(calls), "--warmup", str(warmup), "--batches", str(BATCHES)]
    server: asyncio.subprocess.Process | None = None

    async def body() -> None:
        nonlocal server
        if transport == "http":
            port = procs.free_port()
            server_argv = [str(TOOLKIT_PYTHON), str(SERVER), "--workload", "items", "--transport", "http"]
            server_argv += ["--port", str(port)]
            log = bench._log(fw, f"client-http-{era}-server")
            # The same server for every column: toolkit's .venv, the current tree (no PYTHONPATH).
            server, _ = await procs.start(server_argv, _server_env(), log, stdio=False)
            await procs.wait_for_port(server, port, bench.s.start_timeout)
            argv.extend(["--url", f"http://127.0.0.1:{port}/mcp"])
        else:
            argv.extend(["--server", str(TOOLKIT_PYTHON), "-E", str(SERVER), "--workload", "items"])
            argv.extend(["--transport", "stdio"])
        out = await run_driver(argv, bench.envs[fw.name], bench._log(fw, f"client-{transport}-{era}"), bench)
        if "unsupported" in out:
            bench._client_support[(fw.name, transport)] = out["unsupported"]
            bench.collector.unsupported(cell_keys, fw.name, out["unsupported"])
            print(f"    {fw.name}: client over {transport} unsupported ({out['unsupported']})", flush=True)
            return
        record(bench, fw, f"client.{transport}.{era}", out)

    try:
        await bench._guard(fw, cell_keys, body, era)
    finally:
        if server is not None:
            await procs.stop(server)


def _server_env() -> dict[str, str]:
    from bench.run import server_env

    return server_env()


def record(bench: Bench, fw: Framework, prefix: str, out: dict[str, Any]) -> None:
    """One cell's figures: CPU per call (the lowest batch; every batch in the raw record) and p50."""
    per_batch = [cpu / n * 1e6 for cpu, n in zip(out["cpu_s"], out["calls"], strict=True) if n]
    if not per_batch:
        raise RuntimeError(f"the driver measured no calls: {out}")
    raw = {
        "cpu_s": out["cpu_s"],
        "wall_s": out["wall_s"],
        "calls": out["calls"],
        "per_batch_us": [round(v, 2) for v in per_batch],
        "all_batches_us": sum(out["cpu_s"]) / sum(out["calls"]) * 1e6,
        "client_version": out.get("version"),
    }
    bench.collector.add(f"{prefix}.cpu_us", fw.name, min(per_batch), raw)
    if f"{prefix}.p50_us" in bench.collector.cells:
        latencies = out.get("latencies_us") or []
        if latencies:
            bench.collector.add(f"{prefix}.p50_us", fw.name, statistics.median(latencies), latencies)


async def testing_calls(bench: Bench, fw: Framework) -> None:
    """``toolkit.testing.Client`` in process, both eras (toolkit columns only); and, once per
    toolkit column, that ``import toolkit`` loads none of the client."""
    every = [f"client.testing.{era}.cpu_us" for era in ERAS]
    if fw.kind != "toolkit":
        bench.collector.unsupported(every, fw.name, FLOOR_NOT_A_CLIENT if fw.kind == FLOOR else TESTING_ONLY)
        return
    if fw.name not in bench._client_import_checked:
        bench._client_import_checked.add(fw.name)

        async def check_import() -> None:
            loaded = json.loads(await _output([str(fw.python), "-c", IMPORT_CHECK], bench.envs[fw.name], bench))
            if loaded:
                raise RuntimeError(f"import toolkit loaded the client: {', '.join(loaded)}")
            print(f"    {fw.name}: import toolkit loads no client module", flush=True)

        await bench._guard(fw, [], check_import)
    calls, warmup = bench.s.calls, bench.s.warmup  # in process: ~30-40 µs a call, the full counts
    for era in ERAS:
        key = f"client.testing.{era}.cpu_us"

        async def body(era: Era = era, key: str = key) -> None:
            argv = [str(fw.python), str(DRIVERS / "testing_client.py"), "--era", era]
            argv += ["--calls", str(calls), "--warmup", str(warmup), "--batches", str(BATCHES)]
            out = await run_driver(argv, bench.envs[fw.name], bench._log(fw, f"client-testing-{era}"), bench)
            if "unsupported" in out:
                bench.collector.unsupported([key], fw.name, out["unsupported"])
                return
            record(bench, fw, f"client.testing.{era}", out)

        await bench._guard(fw, [key], body, era)


async def run_driver(argv: list[str], env: dict[str, str], log: Path, bench: Bench) -> dict[str, Any]:
    """Run a client driver to its end; its JSON line (``{"unsupported": ...}`` on exit code 3)."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as stderr:
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr,
            env=env,
            cwd=ROOT,
            start_new_session=True,  # its own group: the stdio server it starts is stopped with it
        )
    procs.register(process)
    try:
        out, _ = await asyncio.wait_for(process.communicate(), bench.s.batch_timeout)
    finally:
        await procs.stop(process)
    lines = out.decode().strip().splitlines()
    if process.returncode == UNSUPPORTED_EXIT and lines:
        return dict(json.loads(lines[-1]))
    if process.returncode != 0 or not lines:
        tail = log.read_text(errors="replace")[-800:] if log.exists() else ""
        raise RuntimeError(f"{Path(argv[1]).name} exited {process.returncode}: {tail}")
    return dict(json.loads(lines[-1]))


async def _output(argv: list[str], env: dict[str, str], bench: Bench) -> str:
    process = await asyncio.create_subprocess_exec(
        *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env, cwd=ROOT,
        start_new_session=True,
    )  # fmt: skip
    procs.register(process)
    try:
        out, err = await asyncio.wait_for(process.communicate(), 120.0)
    finally:
        await procs.stop(process)
    if process.returncode != 0:
        raise RuntimeError(f"{argv[-1][:60]!r} exited {process.returncode}: {err.decode()[-600:]}")
    return out.decode()


def note(results: dict[str, Any]) -> list[str]:
    """Lines under the table: per cell, each client's lowest round and toolkit's ratio to each anchor
    (medians are in the table), and the testing.Client figures against the baseline if any."""
    metrics = results["metrics"]
    if not any(key.startswith("client.") for key in metrics):
        return []
    lines = [
        "",
        f"client: each framework's client calling get_items on the same toolkit server (its own process's "
        f"CPU per call, the lowest of {BATCHES} batches per cell); target: toolkit.Client ≤ "
        f"{float(CLIENT_TARGET):g}x each anchor's Client. Lowest over rounds, and toolkit / each anchor:",
    ]
    for transport, label in CLIENT_TRANSPORTS.items():
        for era in ERAS:
            summary = metrics.get(f"client.{transport}.{era}.cpu_us")
            if summary is None:
                continue
            lows = {
                fw: min(cell["samples"])
                for fw, cell in summary["frameworks"].items()
                if cell["samples"] and not cell["errors"] and not cell["unsupported"]
            }
            parts = [f"{fw} {value:,.0f} µs" for fw, value in lows.items()]
            toolkit = lows.get("toolkit")
            for anchor in ("mcp", "fastmcp"):
                if toolkit is not None and lows.get(anchor):
                    ratio = toolkit / lows[anchor]
                    verdict = "✓" if ratio <= CLIENT_TARGET else "✗"
                    parts.append(f"toolkit/{anchor} {ratio:.3f} {verdict}")
            lines.append(f"  {label}, {era}: " + ", ".join(parts))
    baseline = (results.get("baseline") or {}).get("column")
    for era in ERAS:
        summary = metrics.get(f"client.testing.{era}.cpu_us")
        if summary is None or summary["median"].get("toolkit") is None:
            continue
        line = f"  toolkit.testing.Client, {era}: {summary['median']['toolkit']:,.1f} µs/call (median)"
        ratio = summary.get("ratio_toolkit_baseline")
        if baseline and ratio is not None:
            line += f", {summary['median'][baseline]:,.1f} µs at {baseline}: {ratio:.3f}x"
        lines.append(line)
    return lines
