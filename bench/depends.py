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

from bench.metrics import DEPENDS_METRICS, DEPENDS_MODES, DEPENDS_VARIANTS
from bench.variants import Variants

if TYPE_CHECKING:
    from bench.run import Bench, Framework

DEPENDS = Variants(
    group="depends",
    tool="get_items_for",
    env="BENCH_DEPENDS",
    variants=DEPENDS_VARIANTS,
    modes=DEPENDS_MODES,
    metrics=DEPENDS_METRICS,
    needs="toolkit._injection",
    not_toolkit="the depends scenario measures toolkit's Depends",
    too_old="no Depends",
    arguments={"plain": {"user": "alice", "tenant": "acme"}, "injected": {}},
)


async def depends_calls(bench: Bench, fw: Framework) -> None:
    """get_items_for with its user and tenant as arguments and from two dependencies, stdio and
    HTTP sequential, both eras; see the module's docstring."""
    await DEPENDS.run(bench, fw)
