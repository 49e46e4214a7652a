"""The ``depends`` scenario: what two dependencies (``toolkit.Depends``) cost a tool per call.

toolkit's bench server (``bench/servers/toolkit_server.py``) started with ``BENCH_DEPENDS`` set to
``plain`` or ``injected`` (``bench/servers/depends.py``) serves ``get_items_for``: the ten items of
``get_items``, for a user and a tenant that the client sends as arguments (``plain``), or that two
``async def`` providers give (``injected``: the client sends ``{}``). The same batches as
``call.stdio`` and ``call.http_seq`` (warm-up, then the measured calls; the server process's CPU per
call, p50), both eras: per round, for each era one stdio process per variant, then one HTTP process
per variant serving both eras; the variants take turns, first one then the other by round.
``depends.<stdio|http_seq>.<era>.cpu_ratio`` is injected / plain, round by round; the target bounds
toolkit's own ratio (``DEPENDS_TARGET``, the issue's 1.15x).

toolkit only: the anchors' and the floor's columns say ``n/a (unsupported)``, and so does a
``--baseline`` commit without ``toolkit._injection``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bench import procs
from bench.driver import Era, HttpTransport, Session, StdioTransport, check_items_result
from bench.metrics import DEPENDS_METRICS, DEPENDS_MODES, DEPENDS_VARIANTS, ERAS

if TYPE_CHECKING:
    from bench.run import Bench, Framework

TOOL = "get_items_for"
ARGUMENTS = {"plain": {"user": "alice", "tenant": "acme"}, "injected": {}}
NEEDS = "toolkit._injection"
_support: dict[str, str | None] = {}  # framework -> why it cannot run the scenario (None: it can)


def keys(mode: str, era: Era, variant: str) -> list[str]:
    return [f"depends.{mode}.{era}.{variant}.{m}" for m in DEPENDS_METRICS]


async def depends_calls(bench: Bench, fw: Framework) -> None:
    """get_items_for with its user and tenant as arguments and from two dependencies, stdio and
    HTTP sequential, both eras; see the module's docstring."""
    every = [key for mode in DEPENDS_MODES for era in ERAS for v in DEPENDS_VARIANTS for key in keys(mode, era, v)]
    reason = await bench._lacks(fw, NEEDS, _support, "the depends scenario measures toolkit's Depends", "no Depends")
    if reason is not None:
        bench.collector.unsupported(every, fw.name, reason)
        if fw.kind == "toolkit":
            print(f"    {fw.name}: depends unsupported ({reason})", flush=True)
        return
    variants = list(DEPENDS_VARIANTS)
    order = variants if bench.round % 2 else variants[::-1]  # a drift within a round favours neither
    for era in ERAS:
        for variant in order:
            await _stdio(bench, fw, era, variant)
    for variant in order:
        await _http(bench, fw, variant)


def _session(session: Session, variant: str) -> Session:
    """Calls of get_items_for, checked as get_items's are (the ten items, bare or wrapped)."""
    return session.use_tool(TOOL, ARGUMENTS[variant], check_items_result)


async def _stdio(bench: Bench, fw: Framework, era: Era, variant: str) -> None:
    """One stdio process, the same batch as ``call.stdio.<era>``."""

    async def body() -> None:
        env = {**bench.envs[fw.name], "BENCH_DEPENDS": variant}
        process, _ = await bench._spawn_stdio(fw, "items", f"depends-{variant}-stdio-{era}", env)
        try:
            session = _session(Session(StdioTransport(process), era), variant)
            await session.open(bench.s.start_timeout)
            prefix = f"depends.stdio.{era}.{variant}"
            await bench._batch(fw, prefix, process.pid, [session], bench.s.calls, bench.s.warmup, DEPENDS_METRICS)
        finally:
            await procs.stop(process)

    await bench._guard(fw, keys("stdio", era, variant), body, era)


async def _http(bench: Bench, fw: Framework, variant: str) -> None:
    """One HTTP process, the same batch as ``call.http_seq.<era>`` in each era."""

    async def batch(era: Era, port: int, pid: int) -> None:
        session = _session(Session(HttpTransport("127.0.0.1", port), era), variant)
        try:
            await session.open(bench.s.start_timeout)
            prefix = f"depends.http_seq.{era}.{variant}"
            await bench._batch(fw, prefix, pid, [session], bench.s.calls, bench.s.warmup, DEPENDS_METRICS)
        finally:
            await session.transport.close()

    env = {**bench.envs[fw.name], "BENCH_DEPENDS": variant}
    by_era = {era: keys("http_seq", era, variant) for era in ERAS}
    await bench._http_server(fw, env, f"depends-{variant}-http", by_era, batch)
