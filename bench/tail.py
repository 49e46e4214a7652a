"""Tail latency over HTTP: many sequential calls from concurrent clients, fresh servers, worst cases.

    scripts/loadtest --tail                       10 runs x 8,000 calls at 8 and 16 clients, both eras
    scripts/loadtest --tail --quick               a smoke run (2 runs x 800 calls)
    scripts/loadtest --tail --client httpx-shared the same through one shared httpx.AsyncClient
    scripts/loadtest --tail --help

Each run starts a fresh ``toolkit run bench/servers/toolkit_server.py`` (the benchmark's ``get_items``:
ten pydantic items) and a fresh frameworkless floor (``bench/servers/floor_server.py``: the same
work as a bare ASGI callable under the same uvicorn), then, for each client count and era, sends
``--calls`` ``tools/call``s split over that many concurrent clients, each sequential on its own
keep-alive connection (a legacy client first opens its own session). Every answer is checked.

Printed per server, client count and era, over all runs: p50, p99, p99.9 and max, and each run's
max. The regression check: toolkit's worst call in every configuration stays under ``--max-ms``
(250) or the floor's worst in the same runs, whichever is larger; the exit status is 1 when it
does not, or when any answer was wrong (2 for a usage error).

``--client httpx-shared`` drives the calls through one ``httpx.AsyncClient`` with as many
connections as clients, as a load test written with httpx would. httpcore 1.0.9's pool can hand
several waiting requests the same idle connection: the ones that lose retry, and now and then
keep losing for seconds while other requests are served (encode/httpcore#822). Both servers
then show multi-second stalls that are the client's, so no regression check is made;
``bench/httpx_pool_stall.py`` counts the retries.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import statistics
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

from bench.load import Http, _free_port, _toolkit, wait_listening

ROOT = Path(__file__).resolve().parent.parent
SERVERS = ROOT / "bench" / "servers"
MODERN = "2026-07-28"
LEGACY = "2025-11-25"
META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
ERAS = {"modern": MODERN, "legacy": LEGACY}

Post = Callable[[bytes, dict[str, str]], Awaitable[tuple[int, dict[str, str], list[dict[str, Any]]]]]


def server_command(kind: str, port: int) -> list[str]:
    if kind == "toolkit":
        app = str(SERVERS / "toolkit_server.py")
        return [_toolkit(), "run", f"{app}:server", "--transport", "http", "--port", str(port)]
    return [sys.executable, str(SERVERS / "floor_server.py"), "--port", str(port)]


@contextlib.asynccontextmanager
async def fresh_server(kind: str, log_dir: Path) -> AsyncIterator[int]:
    """A new server process on a free port, listening; always stopped."""
    port = _free_port()
    log = (log_dir / f"tail-{kind}-{port}.log").open("wb")
    process = await asyncio.create_subprocess_exec(
        *server_command(kind, port), stdout=log, stderr=log, env={**os.environ, "BENCH_WORKLOAD": "items"}
    )
    try:
        await wait_listening(port, [process], f"the {kind} server did not start; see {log.name}")
        yield port
    finally:
        if process.returncode is None:
            process.terminate()
            try:
                await asyncio.wait_for(process.wait(), 10)
            except TimeoutError:
                process.kill()
                await process.wait()
        log.close()


class Check:
    """Latencies of correct answers; anything else is a problem."""

    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.problems: list[str] = []

    def answer(self, request_id: int, status: int, messages: list[dict[str, Any]], modern: bool) -> bool:
        message = messages[-1] if messages else {}
        structured = message.get("result", {}).get("structuredContent")
        items = structured if modern else (structured or {}).get("result")
        if status != 200 or message.get("id") != request_id or not isinstance(items, list) or len(items) != 10:
            self.problems.append(f"call {request_id}: HTTP {status} {json.dumps(message)[:200]}")
            return False
        return True


def call_body(request_id: int, era: str) -> bytes:
    params: dict[str, Any] = {"name": "get_items", "arguments": {}}
    if era == "modern":
        params["_meta"] = META
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}).encode()


def call_headers(era: str, session: str | None) -> dict[str, str]:
    if era == "modern":
        return {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "get_items"}
    return {"MCP-Protocol-Version": LEGACY, "Mcp-Session-Id": session or ""}


async def open_session(post: Post, ids: itertools.count[int]) -> str:
    """``initialize`` and ``notifications/initialized``: a legacy session's id."""
    params = {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "tail", "version": "1"}}
    body = json.dumps({"jsonrpc": "2.0", "id": next(ids), "method": "initialize", "params": params}).encode()
    status, headers, _ = await post(body, {})
    session = headers.get("mcp-session-id")
    if status != 200 or session is None:
        raise RuntimeError(f"initialize failed: HTTP {status}")
    note = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()
    await post(note, {"MCP-Protocol-Version": LEGACY, "Mcp-Session-Id": session})
    return session


async def batch(port: int, clients: int, calls: int, era: str, client_kind: str, check: Check) -> None:
    """``calls`` tools/calls over ``clients`` concurrent sequential clients."""
    ids = itertools.count(1)
    posts: list[Post] = []
    closers: list[Callable[[], Awaitable[None]]] = []
    if client_kind == "raw":
        for _ in range(clients):
            http = Http(port)
            posts.append(http.post)
            closers.append(http.close)
    else:
        post, close = _httpx_shared(port, clients)
        posts = [post] * clients
        closers.append(close)
    try:
        sessions = [await open_session(post, ids) if era == "legacy" else None for post in posts]

        async def worker(index: int) -> None:
            post, session = posts[index], sessions[index]
            headers = call_headers(era, session)
            for _ in range(index, calls, clients):
                request_id = next(ids)
                body = call_body(request_id, era)
                started = time.perf_counter()
                status, _, messages = await post(body, headers)
                elapsed = time.perf_counter() - started
                if check.answer(request_id, status, messages, era == "modern"):
                    check.latencies.append(elapsed)

        await asyncio.gather(*(worker(index) for index in range(clients)))
    finally:
        for close in closers:
            await close()


def _httpx_shared(port: int, clients: int) -> tuple[Post, Callable[[], Awaitable[None]]]:
    import httpx

    client = httpx.AsyncClient(timeout=30, limits=httpx.Limits(max_connections=clients))
    url = f"http://127.0.0.1:{port}/mcp"

    async def post(body: bytes, headers: dict[str, str]) -> tuple[int, dict[str, str], list[dict[str, Any]]]:
        full = {"content-type": "application/json", "accept": "application/json, text/event-stream", **headers}
        response = await client.post(url, content=body, headers=full)
        messages = [response.json()] if response.content.strip() else []
        return response.status_code, dict(response.headers), messages

    return post, client.aclose


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))]


async def main_async(args: argparse.Namespace) -> int:
    log_dir = Path(args.log_dir)
    log_dir.mkdir(parents=True, exist_ok=True)
    configurations = [(clients, era) for clients in args.clients for era in args.eras]
    results: dict[tuple[str, int, str], list[Check]] = {}
    started = time.monotonic()
    for run in range(1, args.runs + 1):
        for kind in args.servers:
            async with fresh_server(kind, log_dir) as port:
                for clients, era in configurations:
                    check = Check()
                    await batch(port, clients, args.calls, era, args.client, check)
                    results.setdefault((kind, clients, era), []).append(check)
        worst = max(max(checks[-1].latencies, default=0) for checks in results.values())
        print(f"run {run}/{args.runs}: worst call so far {worst * 1e3:.0f} ms", flush=True)
    return report(args, results, time.monotonic() - started)


def report(args: argparse.Namespace, results: dict[tuple[str, int, str], list[Check]], seconds: float) -> int:
    print(
        f"\n{args.runs} fresh-server runs x {args.calls} calls per configuration, client: {args.client} "
        f"({seconds:.0f} s)"
    )
    columns = f"{'p50 ms':>7} {'p99 ms':>7} {'p99.9':>7} {'max ms':>7}"
    print(f"{'server':<8} {'clients':>7} {'era':<7} {columns}  per-run max ms")
    problems: list[str] = []
    for (kind, clients, era), checks in sorted(results.items(), key=lambda item: (item[0][1], item[0][2], item[0][0])):
        latencies = [value for check in checks for value in check.latencies]
        problems += [problem for check in checks for problem in check.problems]
        if not latencies:
            continue
        per_run = " ".join(f"{max(check.latencies, default=0) * 1e3:.0f}" for check in checks)
        print(
            f"{kind:<8} {clients:>7} {era:<7} {statistics.median(latencies) * 1e3:>7.1f} "
            f"{percentile(latencies, 0.99) * 1e3:>7.1f} {percentile(latencies, 0.999) * 1e3:>7.1f} "
            f"{max(latencies) * 1e3:>7.0f}  {per_run}"
        )
    failed = False
    if args.client != "raw":
        print("\nno regression check: through a shared httpx pool the client stalls by itself (see above)")
    elif "toolkit" in args.servers:
        print(
            f"\nregression check: toolkit's worst call <= max({args.max_ms:g} ms, the floor's worst in the same runs)"
        )
        for clients in args.clients:
            for era in args.eras:
                mine = max((max(c.latencies, default=0) for c in results.get(("toolkit", clients, era), [])), default=0)
                floor = max((max(c.latencies, default=0) for c in results.get(("floor", clients, era), [])), default=0)
                bound = max(args.max_ms / 1e3, floor)
                verdict = "ok" if mine <= bound else "FAIL"
                failed |= mine > bound
                print(f"  {clients:>2} clients, {era:<6}: {mine * 1e3:6.0f} ms (bound {bound * 1e3:.0f} ms) {verdict}")
    for problem in problems[:20]:
        print(f"  wrong answer: {problem}")
    return 1 if failed or problems else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="loadtest --tail", description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=10, help="fresh-server runs (default 10)")
    parser.add_argument("--calls", type=int, default=8000, help="calls per configuration and run (default 8000)")
    parser.add_argument("--clients", default="8,16", help="concurrent client counts (default 8,16)")
    parser.add_argument("--eras", default="modern,legacy", help="modern, legacy or both (default both)")
    parser.add_argument("--servers", default="toolkit,floor", help="toolkit, floor or both (default both)")
    parser.add_argument("--client", choices=("raw", "httpx-shared"), default="raw", help="how calls are sent")
    parser.add_argument("--max-ms", type=float, default=250.0, help="the regression bound (default 250 ms)")
    parser.add_argument("--log-dir", default="/tmp", help="server logs go here")
    parser.add_argument("--quick", action="store_true", help="smoke run: 2 runs x 800 calls")
    args = parser.parse_args(argv)
    if args.quick:
        args.runs, args.calls = 2, 800
    try:
        args.clients = [int(count) for count in args.clients.split(",")]
    except ValueError:
        parser.error("--clients takes numbers separated by commas")
    args.eras = args.eras.split(",")
    args.servers = args.servers.split(",")
    if not set(args.eras) <= set(ERAS) or not set(args.servers) <= {"toolkit", "floor"} or min(args.clients) < 1:
        parser.error("--eras takes modern,legacy; --servers takes toolkit,floor; --clients positive numbers")
    return asyncio.run(main_async(args))


if __name__ == "__main__":
    sys.exit(main())
