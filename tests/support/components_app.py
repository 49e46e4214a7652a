"""Tools that are not Python functions, served like any other (``toolkit run tests/support/components_app.py``).

``Multiply`` returns a number (wrapped as ``{"result": ...}`` for 2025-06-18/2025-11-25 clients);
``Inventory`` returns an array and checks its own arguments (``validate_arguments = False``).
"""

from __future__ import annotations

from typing import Any

from toolkit import Server
from toolkit._components import CallContext, ToolBase
from toolkit._content import CallOutcome


class Multiply(ToolBase):
    def __init__(self) -> None:
        super().__init__(
            "multiply",
            description="Multiply two numbers.",
            input_schema={
                "type": "object",
                "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                "required": ["a", "b"],
                "additionalProperties": False,
            },
            output_schema={"type": "number"},
            annotations={"readOnlyHint": True},
        )

    async def call(self, arguments: dict[str, Any], context: CallContext) -> CallOutcome:
        await context.report_progress(1, 1, "multiplied")
        return self.finish(arguments["a"] * arguments["b"])


class Inventory(ToolBase):
    validate_arguments = False

    def __init__(self) -> None:
        super().__init__(
            "inventory",
            input_schema={"type": "object", "properties": {"shelf": {"type": "string"}}},
            output_schema={"type": "array", "items": {"type": "string"}},
        )

    async def call(self, arguments: dict[str, Any], context: CallContext) -> CallOutcome:
        shelf = arguments.get("shelf", "top")
        if shelf not in ("top", "bottom"):
            return CallOutcome.error(f"no shelf {shelf!r}; the shelves are top and bottom")
        return self.finish(["tea", "jam"] if shelf == "top" else [])


server = Server("components")
server.add_tool(Multiply())
server.add_tool(Inventory())


@server.tool
def add(a: int, b: int) -> int:
    """A function tool beside them."""
    return a + b
