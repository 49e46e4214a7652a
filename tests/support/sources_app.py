"""A server with a second source beside its decorators (``toolkit run tests/support/sources_app.py``).

``Catalog`` is the smallest source there is: a snapshot of tools per kind and the listeners it
tells when that snapshot changes. The ``restock`` tool (a decorator tool) adds a tool to it, so a
client sees a source's change announced like a decorator's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from toolkit import Server
from toolkit._components import CallContext, ToolBase
from toolkit._content import CallOutcome


class Price(ToolBase):
    def __init__(self, item: str, price: float) -> None:
        super().__init__(
            f"price_{item}",
            description=f"The price of {item}.",
            input_schema={"type": "object", "properties": {}, "additionalProperties": False},
            output_schema={"type": "number"},
        )
        self.price = price

    async def call(self, arguments: dict[str, Any], context: CallContext) -> CallOutcome:
        return self.finish(self.price)


class Catalog:
    label = "the catalog"

    def __init__(self, tools: list[ToolBase]) -> None:
        self.tools = {tool.name: tool for tool in tools}
        self.listeners: list[Callable[[str], None]] = []

    def items(self, kind: str) -> Mapping[str, Any]:
        return self.tools if kind == "tools" else {}

    def on_change(self, listener: Callable[[Any], None]) -> None:
        self.listeners.append(listener)

    def add(self, tool: ToolBase) -> None:
        self.tools[tool.name] = tool
        for listener in self.listeners:
            listener("tools")


catalog = Catalog([Price("tea", 3.5), Price("jam", 4.25)])
server = Server("shop")


@server.tool
def restock(item: str, price: float) -> str:
    """Add a price tool for ``item`` to the catalog."""
    catalog.add(Price(item, price))
    return f"price_{item} added"


server.registry.add_source(catalog)
