"""The ``hop`` batches' tool: what ``BENCH_HOP`` adds to the toolkit bench server.

``get_items_hop``: the ten items of ``get_items``, in one of two variants (``toolkit_server.py``
imports this module only when ``BENCH_HOP`` is set):

- ``async``: ``async def``, run on the event loop (``get_items`` itself, under another name);
- ``def``: a plain ``def``, which toolkit runs in a worker thread (the default for a plain function).

The ``def`` variant's CPU per call less the ``async`` one's is what the hop to a worker thread costs.
"""

from typing import Any

from workloads import ITEMS, Item

VARIANTS = ("async", "def")
TOOL = "get_items_hop"


async def get_items_async() -> list[Item]:
    """Return ten small items."""
    return ITEMS


def get_items_def() -> list[Item]:
    """Return ten small items."""
    return ITEMS


def install(server: Any, variant: str) -> None:
    """Register ``get_items_hop`` on ``server`` as ``variant`` says."""
    if variant not in VARIANTS:
        raise SystemExit(f"BENCH_HOP={variant!r}: use one of {', '.join(VARIANTS)}")
    server.add_tool(get_items_async if variant == "async" else get_items_def, name=TOOL)
