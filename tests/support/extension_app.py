"""An extension written against ``toolkit.extensions`` alone (``toolkit run tests/support/extension_app.py``).

``Audit`` declares itself in the capabilities, adds the ``audit/log`` method (both eras; its
``Mcp-Name`` mirrors ``tool``), wraps calls of tools whose ``_meta`` says ``audited``, marks them
in ``tools/list``, offers a tool of its own through a source, and logs its shutdown.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from toolkit import Server
from toolkit._components import CallContext, ToolBase
from toolkit._content import CallOutcome
from toolkit.extensions import BOTH, CallNext, Extension, ExtensionHost, Handler, Method, ToolCall

AUDIT = "com.example/audit"
logger = logging.getLogger("audit")


class Status(ToolBase):
    def __init__(self, audit: Audit) -> None:
        super().__init__("audit_status", input_schema={"type": "object"}, output_schema={"type": "integer"})
        self.audit = audit

    async def call(self, arguments: dict[str, Any], context: CallContext) -> CallOutcome:
        return self.finish(len(self.audit.calls))


class StatusSource:
    label = "the audit extension"

    def __init__(self, tool: ToolBase) -> None:
        self.tool = tool

    def items(self, kind: str) -> Mapping[str, Any]:
        return {self.tool.name: self.tool} if kind == "tools" else {}

    def on_change(self, listener: Callable[[Any], None]) -> None:
        pass


class Audit(Extension):
    id = AUDIT

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def bind(self, host: ExtensionHost) -> None:
        self.host = host

    def capabilities(self, capabilities: dict[str, Any], version: str) -> None:
        self.declare(capabilities, {"version": 1})

    def methods(self) -> Iterable[tuple[Method, Handler]]:
        async def log(inbound: Any) -> dict[str, Any]:
            tool = inbound.params.get("tool")
            entries = [call for call in self.calls if tool is None or call["tool"] == tool]
            return self.host.envelop({"entries": entries}, inbound)

        return [(Method("audit/log", BOTH, target="tool"), log)]

    def wants_call(self, tool: ToolBase, params: Mapping[str, Any]) -> bool:
        return bool(tool.meta and tool.meta.get("audited"))

    async def around_call(self, call: ToolCall, call_next: CallNext) -> dict[str, Any]:
        if call.arguments.get("text") == "forbidden":
            result = {"content": [{"type": "text", "text": "refused by the audit"}], "isError": True}
            return self.host.envelop(result, call.inbound)
        self.calls.append({"tool": call.tool.name, "arguments": call.arguments})
        return await call_next()

    def tools_list_entry(self, entry: dict[str, Any], tool: ToolBase, version: str) -> dict[str, Any]:
        if tool.meta and tool.meta.get("audited"):
            entry["description"] = entry.get("description", "") + " (audited)"
        return entry

    def sources(self) -> Iterable[Any]:
        return [StatusSource(Status(self))]

    async def shutdown(self) -> None:
        logger.warning("audit: %d calls audited, shutting down", len(self.calls))


server = Server("audited")
server.add_extension(Audit())


@server.tool(meta={"audited": True})
def echo(text: str) -> str:
    """Say it back."""
    return text


@server.tool
def plain(text: str) -> str:
    """Not audited."""
    return text
