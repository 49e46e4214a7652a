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

from bench.metrics import HOP_METRICS, HOP_MODES, HOP_VARIANTS
from bench.variants import Variants

if TYPE_CHECKING:
    from bench.run import Bench, Framework

HOP = Variants(
    group="hop",
    tool="get_items_hop",
    env="BENCH_HOP",
    variants=HOP_VARIANTS,
    modes=HOP_MODES,
    metrics=HOP_METRICS,
    needs="toolkit._functions",
    not_toolkit="the def hop batches measure toolkit's worker threads",
    too_old="no toolkit._functions",
)


async def hop_calls(bench: Bench, fw: Framework) -> None:
    """get_items_hop as an async def and as a plain def, stdio and HTTP sequential, both eras; see the
    module's docstring."""
    await HOP.run(bench, fw)
