"""Two variants of one tool in toolkit's bench server, side by side: the batches the ``depends`` and
``hop`` groups share.

toolkit's bench server (``bench/servers/toolkit_server.py``) started with an environment variable
naming the variant serves the group's tool. The same batches as ``call.stdio`` and
``call.http_seq`` (warm-up, then the measured calls; the server process's CPU per call, p50), both
eras: per round, for each era one stdio process per variant, then one HTTP process per variant
serving both eras; the variants take turns, first one then the other by round, so a drift within
a round favours neither. Each answer is checked as ``get_items``'s is (the ten items, bare or
wrapped). toolkit only: another column, or a toolkit too old for the feature, says why not.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bench import procs
from bench.driver import Era, HttpTransport, Session, StdioTransport, check_items_result
from bench.metrics import ERAS

if TYPE_CHECKING:
    from bench.run import Bench, Framework


@dataclass(frozen=True)
class Variants:
    group: str
    """The metric keys' first part (``depends.stdio.<era>.<variant>.cpu_us``) and the logs' prefix."""
    tool: str
    env: str
    """The variable that picks the variant in toolkit's bench server."""
    variants: Collection[str]
    modes: Collection[str]
    metrics: Collection[str]
    needs: str
    """The module a toolkit column must have (a ``--baseline`` commit may predate it)."""
    not_toolkit: str
    too_old: str
    arguments: Mapping[str, dict[str, Any]] = field(default_factory=dict)
    """A variant's tool arguments (none by default)."""
    support: dict[str, str | None] = field(default_factory=dict)
    """Framework -> why it cannot run the group (None: it can), asked once per column."""

    def keys(self, mode: str, era: Era, variant: str) -> list[str]:
        return [f"{self.group}.{mode}.{era}.{variant}.{m}" for m in self.metrics]

    async def run(self, bench: Bench, fw: Framework) -> None:
        """Every variant in every mode and era (see the module's docstring)."""
        every = [key for mode in self.modes for era in ERAS for v in self.variants for key in self.keys(mode, era, v)]
        reason = await bench._lacks(fw, self.needs, self.support, self.not_toolkit, self.too_old)
        if reason is not None:
            bench.collector.unsupported(every, fw.name, reason)
            if fw.kind == "toolkit":
                print(f"    {fw.name}: {self.group} unsupported ({reason})", flush=True)
            return
        order = list(self.variants) if bench.round % 2 else list(self.variants)[::-1]
        for era in ERAS:
            for variant in order:
                await self._stdio(bench, fw, era, variant)
        for variant in order:
            await self._http(bench, fw, variant)

    def _session(self, session: Session, variant: str) -> Session:
        return session.use_tool(self.tool, self.arguments.get(variant, {}), check_items_result)

    async def _stdio(self, bench: Bench, fw: Framework, era: Era, variant: str) -> None:
        """One stdio process, the same batch as ``call.stdio.<era>``."""

        async def body() -> None:
            env = {**bench.envs[fw.name], self.env: variant}
            process, _ = await bench._spawn_stdio(fw, "items", f"{self.group}-{variant}-stdio-{era}", env)
            try:
                session = self._session(Session(StdioTransport(process), era), variant)
                await session.open(bench.s.start_timeout)
                prefix = f"{self.group}.stdio.{era}.{variant}"
                await bench._batch(fw, prefix, process.pid, [session], bench.s.calls, bench.s.warmup, self.metrics)
            finally:
                await procs.stop(process)

        await bench._guard(fw, self.keys("stdio", era, variant), body, era)

    async def _http(self, bench: Bench, fw: Framework, variant: str) -> None:
        """One HTTP process, the same batch as ``call.http_seq.<era>`` in each era."""

        async def batch(era: Era, port: int, pid: int) -> None:
            session = self._session(Session(HttpTransport("127.0.0.1", port), era), variant)
            try:
                await session.open(bench.s.start_timeout)
                prefix = f"{self.group}.http_seq.{era}.{variant}"
                await bench._batch(fw, prefix, pid, [session], bench.s.calls, bench.s.warmup, self.metrics)
            finally:
                await session.transport.close()

        env = {**bench.envs[fw.name], self.env: variant}
        by_era = {era: self.keys("http_seq", era, variant) for era in ERAS}
        await bench._http_server(fw, env, f"{self.group}-{variant}-http", by_era, batch)
