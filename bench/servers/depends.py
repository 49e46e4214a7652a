"""The ``depends`` scenario's tool: what ``BENCH_DEPENDS`` adds to the toolkit bench server.

``get_items_for``: the ten items of ``get_items``, for a user of a tenant, in one of two variants
(``toolkit_server.py`` imports this module only when ``BENCH_DEPENDS`` is set):

- ``plain``: the client sends both values, ``{"user": "alice", "tenant": "acme"}``;
- ``injected``: the same tool, whose ``user`` and ``tenant`` come from two ``async def`` providers
  (``toolkit.Depends``); the client sends ``{}``.

The injected variant's CPU per call over the plain one's is what two dependencies cost (the
issue's target: at most 1.15x).
"""

from typing import Annotated, Any

from workloads import ITEMS, Item

VARIANTS = ("plain", "injected")
TOOL = "get_items_for"
ARGUMENTS = {"plain": {"user": "alice", "tenant": "acme"}, "injected": {}}


async def current_user() -> str:
    return "alice"


async def current_tenant() -> str:
    return "acme"


async def get_items_for(user: str, tenant: str) -> list[Item]:
    """Return ten small items (for a user of a tenant)."""
    return ITEMS


def install(server: Any, variant: str) -> None:
    """Register ``get_items_for`` on ``server`` as ``variant`` says."""
    if variant == "plain":
        server.add_tool(get_items_for, name=TOOL)
        return
    if variant != "injected":
        raise SystemExit(f"BENCH_DEPENDS={variant!r}: use one of {', '.join(VARIANTS)}")
    from toolkit import Depends

    async def injected(
        user: Annotated[str, Depends(current_user)], tenant: Annotated[str, Depends(current_tenant)]
    ) -> list[Item]:
        """Return ten small items (for a user of a tenant)."""
        return ITEMS

    server.add_tool(injected, name=TOOL)
