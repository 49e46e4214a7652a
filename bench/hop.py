"""The plain ``def`` batches of the ``calls`` group: what the hop to a worker thread costs a tool per call.

toolkit's bench server (``bench/servers/toolkit_server.py``) started with ``BENCH_HOP`` set to
``async`` or ``def`` (``bench/servers/hop.py``) serves ``get_items_hop``: the ten items of
``get_items``, from an ``async def`` (run on the event loop) or a plain ``def`` (run in a worker
thread). The same batches as ``call.stdio`` and ``call.http_seq`` (warm-up, then the measured calls;
the server process's CPU per call, p50), both eras: per round, for each era one stdio process per
variant, then one HTTP process per variant serving both eras; the variants take turns, first one
then the other by round. ``hop.<stdio|http_seq>.<era>.cpu_ratio`` is def / async, round by round;
the hop itself is ``def``'s ``cpu_us`` less ``async``'s. No target on the ratio (the issue's target
is on the hop: at least halved, read against a ``--baseline`` column).

toolkit only: the anchors' and the floor's columns say ``n/a (unsupported)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bench import procs
from bench.driver import Era, HttpTransport, Session, StdioTransport, check_items_result
from bench.metrics import ERAS, HOP_METRICS, HOP_MODES, HOP_VARIANTS

if TYPE_CHECKING:
    from bench.run import Bench, Framework

TOOL = "get_items_hop"
NEEDS = "toolkit._functions"
_support: dict[str, str | None] = {}  # framework -> why it cannot run the scenario (None: it can)


def keys(mode: str, era: Era, variant: str) -> list[str]:
    return [f"hop.{mode}.{era}.{variant}.{m}" for m in HOP_METRICS]


async def hop_calls(bench: Bench, fw: Framework) -> None:
    """get_items_hop as an async def and as a plain def, stdio and HTTP sequential, both eras; see the
    module's docstring."""
    every = [key for mode in HOP_MODES for era in ERAS for v in HOP_VARIANTS for key in keys(mode, era, v)]
    reason = await bench._lacks(
        fw, NEEDS, _support, "the def hop batches measure toolkit's worker threads", "no toolkit._functions"
    )
    if reason is not None:
        bench.collector.unsupported(every, fw.name, reason)
        if fw.kind == "toolkit":
            print(f"    {fw.name}: hop unsupported ({reason})", flush=True)
        return
    variants = list(HOP_VARIANTS)
    order = variants if bench.round % 2 else variants[::-1]  # a drift within a round favours neither
    for era in ERAS:
        for variant in order:
            await _stdio(bench, fw, era, variant)
    for variant in order:
        await _http(bench, fw, variant)


def _session(session: Session) -> Session:
    """Calls of get_items_hop, checked as get_items's are (the ten items, bare or wrapped)."""
    return session.use_tool(TOOL, {}, check_items_result)


async def _stdio(bench: Bench, fw: Framework, era: Era, variant: str) -> None:
    """One stdio process, the same batch as ``call.stdio.<era>``."""

    async def body() -> None:
        env = {**bench.envs[fw.name], "BENCH_HOP": variant}
        process, _ = await bench._spawn_stdio(fw, "items", f"hop-{variant}-stdio-{era}", env)
        try:
            session = _session(Session(StdioTransport(process), era))
            await session.open(bench.s.start_timeout)
            prefix = f"hop.stdio.{era}.{variant}"
            await bench._batch(fw, prefix, process.pid, [session], bench.s.calls, bench.s.warmup, HOP_METRICS)
        finally:
            await procs.stop(process)

    await bench._guard(fw, keys("stdio", era, variant), body, era)


async def _http(bench: Bench, fw: Framework, variant: str) -> None:
    """One HTTP process, the same batch as ``call.http_seq.<era>`` in each era."""

    async def batch(era: Era, port: int, pid: int) -> None:
        session = _session(Session(HttpTransport("127.0.0.1", port), era))
        try:
            await session.open(bench.s.start_timeout)
            prefix = f"hop.http_seq.{era}.{variant}"
            await bench._batch(fw, prefix, pid, [session], bench.s.calls, bench.s.warmup, HOP_METRICS)
        finally:
            await session.transport.close()

    env = {**bench.envs[fw.name], "BENCH_HOP": variant}
    by_era = {era: keys("http_seq", era, variant) for era in ERAS}
    await bench._http_server(fw, env, f"hop-{variant}-http", by_era, batch)
