"""A server whose middleware writes down every hook it runs, for the wire tests of middleware.

Two recorders, ``outer`` then ``inner``, override every hook; the tool ``hooks`` hands back what
they wrote (and starts a new record), so a test over stdio or HTTP sees exactly which hooks ran,
in which order, for which requests. ``Policy`` short-circuits, transforms and fails on purpose.
"""

from __future__ import annotations

from typing import Any

from toolkit import McpError, Server, Text, ToolError, ToolResult
from toolkit.middleware import CallNext, McpRequest, Middleware

server = Server("middleware-app")
record: list[list[str]] = []


class Recorder(Middleware):
    def __init__(self, tag: str) -> None:
        self.tag = tag

    def _note(self, hook: str, request: McpRequest) -> None:
        record.append([self.tag, hook, request.method, request.protocol_version, request.transport])

    async def on_request(self, request: McpRequest, call_next: CallNext[dict[str, Any]]) -> dict[str, Any]:
        self._note("on_request", request)
        return await call_next(request)

    async def on_call_tool(self, request: McpRequest, call_next: CallNext[ToolResult]) -> ToolResult:
        self._note("on_call_tool", request)
        return await call_next(request)

    async def on_list(self, request: McpRequest, call_next: CallNext[dict[str, Any]]) -> dict[str, Any]:
        self._note("on_list", request)
        return await call_next(request)

    async def on_read_resource(self, request: McpRequest, call_next: CallNext[dict[str, Any]]) -> dict[str, Any]:
        self._note("on_read_resource", request)
        return await call_next(request)

    async def on_get_prompt(self, request: McpRequest, call_next: CallNext[dict[str, Any]]) -> dict[str, Any]:
        self._note("on_get_prompt", request)
        return await call_next(request)


class Policy(Middleware):
    async def on_call_tool(self, request: McpRequest, call_next: CallNext[ToolResult]) -> ToolResult:
        if request.name == "add" and request.arguments.get("a") == 13:
            raise ToolError("13 is not allowed here")  # short-circuit with an isError result
        if request.name == "add" and request.arguments.get("a") == 666:
            raise RuntimeError("a bug in the middleware")  # an internal error, for this request only
        if request.name == "add" and request.arguments.get("a") == 0:
            return ToolResult("answered by the middleware", structured_content=-1)  # short-circuit
        result = await call_next(request)
        if request.name == "echo" and not result.is_error and result.content:  # transform the natural result
            block = result.content[0]
            return ToolResult(block.text.upper() if isinstance(block, Text) else block)
        return result

    async def on_request(self, request: McpRequest, call_next: CallNext[dict[str, Any]]) -> dict[str, Any]:
        if request.method == "tools/call" and request.name == "forbidden":
            raise McpError(-32001, "Forbidden by policy", {"tool": "forbidden"})
        return await call_next(request)


server.add_middleware(Recorder("outer"))
server.add_middleware(Recorder("inner"))
server.add_middleware(Policy())


@server.tool
def add(a: int, b: int) -> int:
    return a + b


@server.tool
def echo(text: str) -> str:
    return text


@server.tool
def hooks() -> list[list[str]]:
    """What the recorders wrote since the last call (this call's own hooks included)."""
    written = list(record)
    record.clear()
    return written


@server.resource("mw://greeting")
def greeting() -> str:
    return "hello"


@server.prompt
def greet(name: str) -> str:
    return f"Say hello to {name}"
