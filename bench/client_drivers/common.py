"""What every client driver shares: its arguments, the measured loop, the check, the JSON it prints.

Standard library only: each driver runs in its own client's environment (toolkit's ``.venv``, or
the anchors' venv for ``mcp`` and ``fastmcp``) and imports this file from its own directory.

A driver connects its client to the bench server (``bench/servers/toolkit_server.py``, the
``items`` workload: ``get_items`` returns ten small items), over stdio (the client starts the
server as its child process, as a stdio client does) or Streamable HTTP (a server the harness
started), in one era; then it calls ``get_items`` sequentially: ``--warmup`` calls, then
``--calls`` measured calls in ``--batches`` equal batches. Around each batch it reads
``time.process_time()`` (this process's user + system CPU, every thread, children excluded: the
stdio server's CPU is not in it) and ``time.perf_counter()``; each call's wall time is kept too.
Every result is checked, the measured ones after their batch (so the check is not measured):
the natural value the client hands its user must be the ten items.

It prints one JSON line: ``{"cpu_s": [...], "wall_s": [...], "calls": [...], "latencies_us": [...],
"client": ..., "version": ...}``. Exit code 3 with ``{"unsupported": "why"}``: the client cannot do
this (a toolkit that predates its client, or a transport it lacks), not an error.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

LEGACY_VERSION = "2025-11-25"
MODERN_VERSION = "2026-07-28"
TOOL = "get_items"
EXPECTED = [{"id": i, "name": f"item-{i}", "price": 1.5 * i, "tags": ["bench", f"t{i % 3}"]} for i in range(10)]
UNSUPPORTED = 3  # the exit code of a client that cannot run this cell


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Measure one MCP client's CPU per tools/call.")
    parser.add_argument("--transport", choices=["stdio", "http"], required=True)
    parser.add_argument("--era", choices=["legacy", "modern"], required=True)
    parser.add_argument("--url", help="http: the server's Streamable HTTP endpoint")
    parser.add_argument("--server", nargs=argparse.REMAINDER, help="stdio: the server's command (last)")
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--warmup", type=int, default=100)
    parser.add_argument("--batches", type=int, default=5)
    args = parser.parse_args(argv)
    if args.transport == "http" and not args.url:
        parser.error("--transport http needs --url")
    if args.transport == "stdio" and not args.server:
        parser.error("--transport stdio needs --server COMMAND ...")
    return args


def unsupported(reason: str) -> None:
    print(json.dumps({"unsupported": reason}), flush=True)
    sys.exit(UNSUPPORTED)


def check_items(value: Any, where: str) -> None:
    """The natural value of a get_items result: the ten items (bare, or under ``{"result": ...}``
    when a client hands over the legacy wrapper as it came)."""
    items = value.get("result") if isinstance(value, dict) else value
    if items != EXPECTED:
        raise AssertionError(f"{where}: not the ten items: {str(value)[:400]}")


async def measure(
    call: Callable[[], Awaitable[Any]], check: Callable[[Any], None], args: argparse.Namespace
) -> dict[str, Any]:
    """Warm up, then the measured batches; every result checked (the measured ones after their batch)."""
    for _ in range(args.warmup):
        check(await call())
    batches = max(1, args.batches)
    sizes = [args.calls // batches + (1 if i < args.calls % batches else 0) for i in range(batches)]
    cpu, wall, latencies = [], [], []
    clock, process_time = time.perf_counter, time.process_time
    for size in sizes:
        results = []
        keep = results.append
        c0, w0 = process_time(), clock()
        last = w0
        for _ in range(size):
            keep(await call())
            now = clock()
            latencies.append(now - last)
            last = now
        wall.append(clock() - w0)
        cpu.append(process_time() - c0)
        for result in results:
            check(result)
    return {
        "cpu_s": cpu,
        "wall_s": wall,
        "calls": sizes,
        "latencies_us": [round(v * 1e6, 1) for v in latencies],
    }


def report(figures: dict[str, Any], client: str, version: str) -> None:
    print(json.dumps({**figures, "client": client, "version": version}), flush=True)
