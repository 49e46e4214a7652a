"""The ``compose`` scenario: what mounting a server and putting a gateway in front of one cost per call.

**Mount.** ``get_items`` on the server itself (``direct``: the bench server as the ``calls`` group
runs it) and the same tool in a child server mounted in the served one under the namespace
``shop`` (``mounted``: ``--mount shop``, the tool is then ``shop_get_items``), in the framework's
own bench server (``bench/servers/<framework>_server.py``). The same batches as ``call.stdio``
and ``call.http_seq`` (warm-up, then the measured calls; the server process's CPU per call, p50),
both eras: per round, for each era one stdio process per variant, then one HTTP process per
variant serving both eras; the variants take turns, first one then the other by round.
``compose.mount.<stdio|http_seq>.<era>.cpu_ratio`` is mounted / direct, round by round; the
target bounds toolkit's own ratio (``MOUNT_TARGET``).

**Gateway.** The same upstream for every column: toolkit's bench server from toolkit's ``.venv``
and the current tree (``bench/servers/toolkit_server.py``, no ``PYTHONPATH``, as the ``client``
scenario's server). Per column and round, one upstream process serving HTTP, and:

- ``direct``: the driver calls it over HTTP, one sequential client per era (its CPU per call and
  p50: ``compose.gateway.direct.<era>``);
- ``http``: a gateway served over HTTP in front of that upstream's URL;
- ``stdio``: a gateway served over HTTP that starts the upstream itself over stdio (the same
  server file, ``--transport stdio``) as its child process.

The gateway is toolkit's ``Server.proxy(upstream)`` (``bench/servers/toolkit_gateway.py``, served
by ``python -m toolkit run ... --transport http``, its defaults kept) or fastmcp's
``create_proxy(upstream, mode="legacy")`` (``bench/servers/fastmcp_gateway.py``, which says why
the era is pinned). Through it, the same batch as ``direct``: the gateway process's own CPU per call
(its CPU clock: the stdio upstream, a child process, is not in it), the upstream's CPU per call
meanwhile, and the p50. ``added_p50_us`` is the gateway's p50 minus the direct call's, from the
same column and round; ``cpu_ratio`` is the gateway's CPU per call over the direct call's server
CPU (``GATEWAY_TARGET``, on toolkit's own ratio); and the gateway rows' ratio toolkit / fastmcp is
checked against ``PROXY_TARGET``. The three steps run in turn, in reverse order every other round.
fastmcp's gateway makes a tenth of the calls (``gateway_counts``): it opens an upstream session for
every request, tens of milliseconds each.

The floor column's gateway is ``bench/servers/floor_gateway.py``: the least a Python gateway does
per call (uvicorn, one kept-alive upstream connection, both JSONs parsed, nothing checked or
shaped), 2026-07-28 callers over an HTTP upstream only, in front of the same upstream: what any
gateway in Python pays beside a direct call on this machine. mcp 2.3.0's ``MCPServer`` can neither
mount nor proxy (``n/a``), nor does the floor mount; a ``--baseline`` column older than toolkit's
mount or proxy says it predates it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench import procs
from bench.driver import Era, HttpTransport, Session, StdioTransport, check_items_result
from bench.metrics import (
    COMPOSE_METRICS,
    ERAS,
    FLOOR,
    FLOOR_UNSUPPORTED,
    GATEWAY_TARGET,
    GATEWAY_UPSTREAMS,
    MOUNT_MODES,
    MOUNT_TARGET,
    MOUNT_VARIANTS,
    PROXY_TARGET,
)

if TYPE_CHECKING:
    from bench.run import Bench, Framework

ROOT = Path(__file__).resolve().parent.parent
SERVERS = ROOT / "bench" / "servers"
TOOLKIT_PYTHON = ROOT / ".venv" / "bin" / "python"
UPSTREAM = SERVERS / "toolkit_server.py"
GATEWAYS = {
    "toolkit": SERVERS / "toolkit_gateway.py",
    "fastmcp": SERVERS / "fastmcp_gateway.py",
    FLOOR: SERVERS / "floor_gateway.py",
}
FLOOR_GATEWAY_ONLY = (
    "the floor's gateway (bench/servers/floor_gateway.py) relays 2026-07-28 calls over one HTTP upstream "
    "connection: no sessions (legacy), no stdio upstream"
)
NAMESPACE = "shop"
MOUNTED_TOOL = f"{NAMESPACE}_get_items"  # both frameworks' naming rule: namespace_tool
NEITHER = "mcp 2.3.0's MCPServer can neither mount a server nor proxy one"
# What each part needs of a toolkit column (a --baseline commit may predate it).
NEEDS = {"mount": "toolkit._sources.mounted", "proxy": "toolkit._sources.proxy"}
GATEWAY_STEPS = ("direct", *GATEWAY_UPSTREAMS)


def gateway_counts(bench: Bench, fw: Framework) -> tuple[int, int]:
    """Measured and warm-up calls through ``fw``'s gateway: the batches' own, or a tenth of them for
    fastmcp's (a fresh upstream session per request: ~3 ms of its CPU a call over stdio, ~40 ms over
    HTTP, where 2,000 calls would take minutes; a few hundred give a steady mean)."""
    if fw.kind == "fastmcp":
        return max(20, bench.s.calls // 10), max(5, bench.s.warmup // 10)
    return bench.s.calls, bench.s.warmup


def mount_keys(mode: str, era: Era, variant: str) -> list[str]:
    return [f"compose.mount.{mode}.{era}.{variant}.{m}" for m in COMPOSE_METRICS]


def gateway_keys(step: str, era: Era) -> list[str]:
    if step == "direct":
        return [f"compose.gateway.direct.{era}.{m}" for m in COMPOSE_METRICS]
    return [f"compose.gateway.{step}.{era}.{m}" for m in ("cpu_us", "upstream_cpu_us", "p50_us", "added_p50_us")]


async def _unsupported(bench: Bench, fw: Framework, part: str) -> str | None:
    """Why ``fw`` cannot run ``part`` (mount, proxy), or ``None`` (asked once per column and part)."""
    if fw.kind == FLOOR:
        return FLOOR_UNSUPPORTED
    if fw.kind == "mcp":
        return NEITHER
    if fw.kind != "toolkit":
        return None
    answers = bench._compose_support.setdefault(part, {})
    return await bench._lacks(fw, NEEDS[part], answers, "", f"it predates {part}")


def _skipped(bench: Bench, fw: Framework, part: str, keys: list[str], reason: str | None) -> bool:
    if reason is None:
        return False
    bench.collector.unsupported(keys, fw.name, reason)
    if fw.kind == "toolkit":
        print(f"    {fw.name}: compose {part} unsupported ({reason})", flush=True)
    return True


# --- mount -----------------------------------------------------------------------------------------


async def mount_calls(bench: Bench, fw: Framework) -> None:
    """get_items on the server itself and mounted under a namespace, stdio and HTTP, both eras."""
    every = [key for mode in MOUNT_MODES for era in ERAS for v in MOUNT_VARIANTS for key in mount_keys(mode, era, v)]
    if _skipped(bench, fw, "mount", every, await _unsupported(bench, fw, "mount")):
        return
    variants = list(MOUNT_VARIANTS)
    order = variants if bench.round % 2 else variants[::-1]  # a drift within a round favours neither
    for era in ERAS:
        for variant in order:
            await _mount_stdio(bench, fw, era, variant)
    for variant in order:
        await _mount_http(bench, fw, variant)


def _mount_env(bench: Bench, fw: Framework, variant: str) -> dict[str, str]:
    env = bench.envs[fw.name]
    return {**env, "BENCH_MOUNT": NAMESPACE} if variant == "mounted" else env


def _mount_session(session: Session, variant: str) -> Session:
    return session.use_tool(MOUNTED_TOOL, {}, check_items_result) if variant == "mounted" else session


async def _mount_stdio(bench: Bench, fw: Framework, era: Era, variant: str) -> None:
    """One stdio process, the same batch as ``call.stdio.<era>``."""

    async def body() -> None:
        env = _mount_env(bench, fw, variant)
        process, _ = await bench._spawn_stdio(fw, "items", f"compose-{variant}-stdio-{era}", env)
        try:
            session = _mount_session(Session(StdioTransport(process), era), variant)
            await session.open(bench.s.start_timeout)
            prefix = f"compose.mount.stdio.{era}.{variant}"
            await bench._batch(fw, prefix, process.pid, [session], bench.s.calls, bench.s.warmup, COMPOSE_METRICS)
        finally:
            await procs.stop(process)

    await bench._guard(fw, mount_keys("stdio", era, variant), body, era)


async def _mount_http(bench: Bench, fw: Framework, variant: str) -> None:
    """One HTTP process, the same batch as ``call.http_seq.<era>`` in each era."""

    async def batch(era: Era, port: int, pid: int) -> None:
        session = _mount_session(Session(HttpTransport("127.0.0.1", port), era), variant)
        try:
            await session.open(bench.s.start_timeout)
            prefix = f"compose.mount.http_seq.{era}.{variant}"
            await bench._batch(fw, prefix, pid, [session], bench.s.calls, bench.s.warmup, COMPOSE_METRICS)
        finally:
            await session.transport.close()

    keys = {era: mount_keys("http_seq", era, variant) for era in ERAS}
    await bench._http_server(fw, _mount_env(bench, fw, variant), f"compose-{variant}-http", keys, batch)


# --- gateway ---------------------------------------------------------------------------------------


async def gateway_calls(bench: Bench, fw: Framework) -> None:
    """get_items from toolkit's server called directly, and through the column's gateway in front
    of it (HTTP upstream, stdio upstream), both eras; see the module's docstring."""
    every = [key for step in GATEWAY_STEPS for era in ERAS for key in gateway_keys(step, era)]
    steps: tuple[str, ...] = GATEWAY_STEPS
    eras: tuple[Era, ...] = ERAS
    if fw.kind == FLOOR:  # the least a Python gateway does: HTTP upstream, 2026-07-28 callers
        steps, eras = ("direct", "http"), ("modern",)
        measured = {key for step in steps for era in eras for key in gateway_keys(step, era)}
        bench.collector.unsupported([key for key in every if key not in measured], fw.name, FLOOR_GATEWAY_ONLY)
    elif _skipped(bench, fw, "proxy", every, await _unsupported(bench, fw, "proxy")):
        return
    from bench.run import server_env  # here: bench.run imports this module

    port = procs.free_port()
    argv = [str(TOOLKIT_PYTHON), str(UPSTREAM), "--workload", "items", "--transport", "http", "--port", str(port)]
    upstream: asyncio.subprocess.Process | None = None

    async def start() -> None:
        nonlocal upstream
        # The current tree's server in every column (no PYTHONPATH): one upstream for all gateways.
        upstream, _ = await procs.start(argv, server_env(), bench._log(fw, "compose-upstream"), stdio=False)
        await procs.wait_for_port(upstream, port, bench.s.start_timeout)

    try:
        await bench._guard(fw, every, start)
        if upstream is None or upstream.returncode is not None:
            return
        order = steps if bench.round % 2 else steps[::-1]
        for step in order:
            if step == "direct":
                await _direct(bench, fw, port, upstream.pid, eras)
            else:
                await _through_gateway(bench, fw, step, port, upstream.pid, eras)
        for step in steps[1:]:
            for era in eras:
                via = _this_round(bench, fw, f"compose.gateway.{step}.{era}.p50_us")
                direct = _this_round(bench, fw, f"compose.gateway.direct.{era}.p50_us")
                if via is not None and direct is not None:
                    key = f"compose.gateway.{step}.{era}.added_p50_us"
                    bench.collector.add(key, fw.name, via - direct, {"via_p50_us": via, "direct_p50_us": direct})
    finally:
        if upstream is not None:
            await procs.stop(upstream)


def _this_round(bench: Bench, fw: Framework, key: str) -> float | None:
    cell = bench.collector.cells[key].get(fw.name)
    if cell is None or cell.errors:
        return None
    found = [value for value, round_no in zip(cell.samples, cell.rounds, strict=True) if round_no == bench.round]
    return found[-1] if found else None


async def _direct(bench: Bench, fw: Framework, port: int, pid: int, eras: tuple[Era, ...]) -> None:
    for era in eras:

        async def body(era: Era = era) -> None:
            session = Session(HttpTransport("127.0.0.1", port), era)
            try:
                await session.open(bench.s.start_timeout)
                prefix = f"compose.gateway.direct.{era}"
                await bench._batch(fw, prefix, pid, [session], bench.s.calls, bench.s.warmup, COMPOSE_METRICS)
            finally:
                await session.transport.close()

        await bench._guard(fw, gateway_keys("direct", era), body, era)


async def _through_gateway(
    bench: Bench, fw: Framework, step: str, upstream_port: int, upstream_pid: int, eras: tuple[Era, ...]
) -> None:
    """One gateway process in front of the upstream (``step``: http, stdio), a batch in each of ``eras``."""
    port = procs.free_port()
    gateway = GATEWAYS[fw.kind if fw.kind in ("fastmcp", FLOOR) else "toolkit"]
    if fw.kind == FLOOR:
        argv = [str(fw.python), str(gateway), "--port", str(port)]
    elif fw.kind == "fastmcp":
        argv = [str(fw.python), str(gateway), "--transport", "http", "--port", str(port)]
    else:  # as a user serves it; python -m toolkit, so a --baseline column's PYTHONPATH picks its package
        argv = [str(fw.python), "-m", "toolkit", "run", str(gateway), "--transport", "http"]
        argv += ["--host", "127.0.0.1", "--port", str(port)]
    target: str = f"http://127.0.0.1:{upstream_port}/mcp"
    if step == "stdio":
        target = json.dumps([str(TOOLKIT_PYTHON), str(UPSTREAM), "--workload", "items", "--transport", "stdio"])
    env = {**bench.envs[fw.name], "BENCH_UPSTREAM": target}
    keys = {era: gateway_keys(step, era) for era in eras}
    calls, warmup = gateway_counts(bench, fw)
    process: asyncio.subprocess.Process | None = None
    children: set[int] = set()  # the stdio upstreams the gateway started, stopped after it if still there

    async def start() -> None:
        nonlocal process
        process, _ = await procs.start(argv, env, bench._log(fw, f"compose-gateway-{step}"), stdio=False)
        await procs.wait_for_port(process, port, bench.s.start_timeout)

    try:
        await bench._guard(fw, [key for era in eras for key in keys[era]], start)
        if process is None or process.returncode is not None:
            return
        for era in eras:

            async def body(era: Era = era) -> None:
                assert process is not None
                session = Session(HttpTransport("127.0.0.1", port), era)
                try:
                    await session.open(bench.s.start_timeout)
                    await session.call()  # a gateway may start its stdio upstream on first use
                    pid = upstream_pid
                    if step == "stdio":
                        pid = _only_child(process.pid)
                        children.add(pid)
                    prefix = f"compose.gateway.{step}.{era}"
                    used = await bench._batch(
                        fw, prefix, process.pid, [session], calls, warmup, COMPOSE_METRICS, also={"upstream": pid}
                    )
                    if step == "stdio" and _only_child(process.pid) != pid:
                        raise RuntimeError("the gateway replaced its stdio upstream during the batch")
                    bench.collector.add(
                        f"{prefix}.upstream_cpu_us",
                        fw.name,
                        used["upstream"] / calls * 1e6,
                        {"cpu_s": used["upstream"], "calls": calls, "pid": pid},
                    )
                finally:
                    await session.transport.close()

            await bench._guard(fw, keys[era], body, era)
    finally:
        if process is not None:
            await procs.stop(process)
        for pid in children:
            _stop_upstream(pid)


def _children(pid: int) -> list[int]:
    """The processes ``pid`` started that are still running (every thread's children)."""
    found: list[int] = []
    with contextlib.suppress(FileNotFoundError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(FileNotFoundError), open(f"/proc/{pid}/task/{task}/children") as f:
                found += [int(child) for child in f.read().split()]
    return found


def _only_child(pid: int) -> int:
    found = _children(pid)
    if len(found) != 1:
        raise RuntimeError(f"the gateway (pid {pid}) should have one child, its stdio upstream: it has {found}")
    return found[0]


def _stop_upstream(pid: int) -> None:
    """A stdio upstream its gateway left running (it is stopped with it otherwise): SIGKILL, by its id,
    if it is still the bench server."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            if str(UPSTREAM).encode() not in f.read():
                return
    except FileNotFoundError:
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


# --- the lines under the table -----------------------------------------------------------------------


def note(results: dict[str, Any]) -> list[str]:
    """The compose targets spelled out: mounted / direct, gateway / direct, toolkit / fastmcp, p50 added."""
    metrics = results["metrics"]
    if not any(key.startswith("compose.") for key in metrics):
        return []

    def median(key: str, fw: str = "toolkit") -> float | None:
        value = metrics.get(key, {}).get("median", {}).get(fw)
        return float(value) if isinstance(value, int | float) else None

    def verdict(value: float, bound: Any) -> str:
        return "✓" if value <= bound else "✗"

    lines = [
        "",
        f"compose, mount: get_items in a child server mounted under the namespace {NAMESPACE!r} ({MOUNTED_TOOL}), "
        f"server CPU/call / the same tool on the server itself; target ≤ {float(MOUNT_TARGET):g}x",
    ]
    for mode, label in MOUNT_MODES.items():
        parts = []
        for era in ERAS:
            ratio = median(f"compose.mount.{mode}.{era}.cpu_ratio")
            text = f"{ratio:.3f}x {verdict(ratio, MOUNT_TARGET)}" if ratio is not None else "-"
            fastmcp = median(f"compose.mount.{mode}.{era}.cpu_ratio", "fastmcp")
            parts.append(f"{era} {text}" + (f" (fastmcp {fastmcp:.3f}x)" if fastmcp is not None else ""))
        lines.append(f"  {label}: " + ", ".join(parts))
    lines += [
        "",
        "compose, gateway: get_items through a gateway served over HTTP in front of toolkit's bench server "
        f"(toolkit: Server.proxy under toolkit run; fastmcp: create_proxy); gateway process CPU/call / a direct "
        f"call's server CPU, target ≤ {float(GATEWAY_TARGET):g}x; toolkit's gateway / fastmcp's, target ≤ "
        f"{float(PROXY_TARGET):g}x; p50 added = via the gateway - called directly",
    ]
    for step, label in GATEWAY_UPSTREAMS.items():
        for era in ERAS:
            prefix = f"compose.gateway.{step}.{era}"
            cpu, ratio, added = (median(f"{prefix}.{m}") for m in ("cpu_us", "cpu_ratio", "added_p50_us"))
            if cpu is None or ratio is None:
                lines.append(f"  {label}, {era}: - (no toolkit figure)")
                continue
            text = f"toolkit {cpu:,.0f} µs = {ratio:.2f}x direct {verdict(ratio, GATEWAY_TARGET)}"
            if added is not None:
                text += f", p50 {added:+,.0f} µs"
            floor = median(f"{prefix}.cpu_ratio", FLOOR)
            if floor is not None:
                text += f"; the floor's gateway {floor:.2f}x direct"
            fastmcp = median(f"{prefix}.cpu_us", "fastmcp")
            if fastmcp:
                by = cpu / fastmcp
                text += f"; fastmcp {fastmcp:,.0f} µs: toolkit/fastmcp {by:.3f} {verdict(by, PROXY_TARGET)}"
                fastmcp_added = median(f"{prefix}.added_p50_us", "fastmcp")
                if fastmcp_added is not None:
                    text += f" (its p50 {fastmcp_added:+,.0f} µs)"
            lines.append(f"  {label}, {era}: {text}")
    return lines
