"""What the benchmark servers serve, and how they are told which workload and transport.

Selection comes from the environment (``BENCH_WORKLOAD``, ``BENCH_TRANSPORT``, ``BENCH_HOST``,
``BENCH_PORT``), so ``toolkit run bench/servers/toolkit_server.py:server`` works too, and is
overridden by command-line flags when a server file is run as a script::

    python bench/servers/mcp_server.py --workload items --transport http --port 8123

``--mount NAMESPACE`` (or ``BENCH_MOUNT``; the ``compose`` scenario): the workload's tools are
registered in a child server, mounted in the served one under ``NAMESPACE`` (``get_items`` is then
``NAMESPACE_get_items``), by the frameworks that can mount (toolkit, fastmcp). Unset, every server
is built exactly as without it.

Workloads:
- ``items``: one tool, ``get_items() -> list[Item]`` (workload A);
- ``gen500``: the 500 generated tools of ``generated.py`` (workload B);
- ``empty``: no tools at all (idle memory baseline);
- ``big``: two tools returning big structured results, ``get_models_1mb() -> list[Model]`` (5,000
  models, ~1 MB of JSON) and ``get_models_10mb()`` (50,000, ~10 MB), built at start-up (the
  ``big`` scenario, ``bench/bigresults.py``).

This module only uses pydantic and the standard library, so every framework's venv can import it.
``generated`` (the 500 tools, ~70 ms of import) is imported only for ``gen500``, so the spawn
figures of the ``items`` servers measure the server, not the generated surface.
"""

import argparse
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, cast

from pydantic import BaseModel

Workload = Literal["items", "gen500", "empty", "big"]
Transport = Literal["stdio", "http"]


class Item(BaseModel):
    id: int
    name: str
    price: float
    tags: list[str]


ITEMS = [Item(id=i, name=f"item-{i}", price=1.5 * i, tags=["bench", f"t{i % 3}"]) for i in range(10)]


async def get_items() -> list[Item]:
    """Return ten small items."""
    return ITEMS


class Model(BaseModel):
    id: int
    name: str
    price: float
    tags: list[str]
    description: str


# The big workload's sizes: tool name -> models (~200 bytes of JSON each).
BIG_COUNTS = {"get_models_1mb": 5_000, "get_models_10mb": 50_000}
MODELS: list[Model] = []  # the 50,000 models, built by tools("big") only


def make_model(i: int) -> Model:
    description = f"Model {i} of the big-results workload: " + "x" * 66
    return Model(id=i, name=f"model-{i}", price=1.25 * i, tags=["bench", f"t{i % 7}", "big"], description=description)


async def get_models_1mb() -> list[Model]:
    """Return 5,000 models (~1 MB of JSON)."""
    return MODELS[: BIG_COUNTS["get_models_1mb"]]


async def get_models_10mb() -> list[Model]:
    """Return 50,000 models (~10 MB of JSON)."""
    return MODELS


@dataclass(frozen=True)
class Config:
    workload: Workload = "items"
    transport: Transport = "stdio"
    host: str = "127.0.0.1"
    port: int = 8000
    mount: str | None = None  # the namespace the tools are mounted under, in a child server

    @classmethod
    def load(cls, argv: list[str] | None) -> "Config":
        """The environment's settings, overridden by ``argv`` when the file runs as a script."""
        env = os.environ
        parser = argparse.ArgumentParser(description="A benchmark MCP server.")
        parser.add_argument("--workload", choices=["items", "gen500", "empty", "big"])
        parser.add_argument("--transport", choices=["stdio", "http"])
        parser.add_argument("--host")
        parser.add_argument("--port", type=int)
        parser.add_argument("--mount", metavar="NAMESPACE")
        args = parser.parse_args(argv or [])
        return cls(
            workload=cast(Workload, args.workload or env.get("BENCH_WORKLOAD", "items")),
            transport=cast(Transport, args.transport or env.get("BENCH_TRANSPORT", "stdio")),
            host=args.host or env.get("BENCH_HOST", "127.0.0.1"),
            port=args.port or int(env.get("BENCH_PORT", "8000")),
            mount=args.mount or env.get("BENCH_MOUNT") or None,
        )


def tools(workload: Workload) -> list[Callable[..., Awaitable[Any]]]:
    """The functions a server registers for ``workload``."""
    if workload == "items":
        return [get_items]
    if workload == "gen500":
        import generated  # here, not at the top: only gen500 pays for its import

        return generated.build_tools(500)
    if workload == "big":
        if not MODELS:
            MODELS.extend(make_model(i) for i in range(max(BIG_COUNTS.values())))
        return [get_models_1mb, get_models_10mb]
    return []
