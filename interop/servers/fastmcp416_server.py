"""A ``fastmcp`` 4.1.6 server, as a fastmcp user writes one.

Run from ``.interop/servers/py-fastmcp416`` (``scripts/servers --install-only``):

    python interop/servers/fastmcp416_server.py                   # stdio
    python interop/servers/fastmcp416_server.py --http PORT       # Streamable HTTP on 127.0.0.1:PORT/mcp

Speaks both eras. Same tools as ``mcp230_server.py`` (``tests/test_client_servers.py`` holds the
expected values): an object, a list and a scalar (wrapped as ``{"result": ...}`` under a schema
marked ``x-fastmcp-wrap-result``), a str, text only (``output_schema=None``), an error, progress,
and a tool that waits until it is cancelled and says so in the file it is given. Elicitation and
sampling: on a legacy connection ``ctx.elicit`` and ``ctx.session.create_message`` (standalone
requests); on 2026-07-28, where fastmcp refuses those, the guard pattern fastmcp documents (return
an ``InputRequiredResult``, read ``ctx.input_responses`` on the next round). No tasks: fastmcp's
need its ``tasks`` extra (pydocket), which the pinned environment does not have.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
from fastmcp import Context, FastMCP
from fastmcp.exceptions import ToolError
from mcp_types import (
    CreateMessageRequest,
    CreateMessageRequestParams,
    ElicitRequest,
    ElicitRequestFormParams,
    InputRequiredResult,
    SamplingMessage,
    TextContent,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel

server = FastMCP("fastmcp416-server", version="4.1.6")

NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


class Weather(BaseModel):
    city: str
    temp: float
    sky: str


class Name(BaseModel):
    name: str


def modern(ctx: Context) -> bool:
    return ctx.request_context.protocol_version in MODERN_PROTOCOL_VERSIONS


def field(answer: Any, name: str) -> Any:
    return answer.get(name) if isinstance(answer, dict) else getattr(answer, name, None)


@server.tool
def weather(city: str) -> Weather:
    """An object."""
    return Weather(city=city, temp=21.5, sky="sunny")


@server.tool
def primes(n: int) -> list[int]:
    """A list (legacy: wrapped)."""
    return [2, 3, 5, 7, 11, 13][:n]


@server.tool
def answer() -> int:
    """A scalar (legacy: wrapped)."""
    return 42


@server.tool
def greet(name: str) -> str:
    """A str, with the framework's default output schema."""
    return f"Hello, {name}!"


@server.tool(output_schema=None)
def shout(text: str) -> str:
    """Text only: no output schema, no structured content."""
    return text.upper()


@server.tool
def fail(reason: str) -> str:
    """Always an error result."""
    raise ToolError(f"failed: {reason}")


@server.tool
async def count(steps: int, ctx: Context) -> str:
    """Reports progress ``1..steps`` of ``steps``."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step}")
    return f"counted {steps}"


@server.tool
async def ask_name(ctx: Context) -> str | InputRequiredResult:
    """Elicits a name."""
    if not modern(ctx):
        result = await ctx.elicit("What is your name?", Name)
        if result.action != "accept":
            raise ToolError(f"no name: {result.action}")
        return f"Hello, {result.data.name}!"
    answers = ctx.input_responses
    if not answers or "name" not in answers:
        request = ElicitRequest(
            params=ElicitRequestFormParams(message="What is your name?", requested_schema=NAME_SCHEMA)
        )
        return InputRequiredResult(input_requests={"name": request})
    reply = answers["name"]
    if field(reply, "action") != "accept":
        raise ToolError(f"no name: {field(reply, 'action')}")
    return f"Hello, {field(reply, 'content')['name']}!"


@server.tool
async def summarize(text: str, ctx: Context) -> str | InputRequiredResult:
    """Samples the client's model."""
    messages = [SamplingMessage(role="user", content=TextContent(type="text", text=f"Summarize: {text}"))]
    if not modern(ctx):
        result = await ctx.session.create_message(messages, max_tokens=50)
        return result.content.text if isinstance(result.content, TextContent) else str(result.content)
    answers = ctx.input_responses
    if not answers or "draft" not in answers:
        request = CreateMessageRequest(params=CreateMessageRequestParams(messages=messages, max_tokens=50))
        return InputRequiredResult(input_requests={"draft": request})
    content = field(answers["draft"], "content")
    return str(field(content, "text"))


@server.tool
async def wait_until_cancelled(mark: str) -> str:
    """Writes ``started`` to ``mark``, waits; on cancellation writes ``cancelled``."""
    Path(mark).write_text("started")
    try:
        await anyio.sleep(600)
    except anyio.get_cancelled_exc_class():
        Path(mark).write_text("cancelled")
        raise
    return "not cancelled"


@server.resource("config://app", mime_type="application/json")
def config() -> str:
    return '{"debug": false}'


@server.resource("greeting://{name}")
def greeting(name: str) -> str:
    return f"Hello, {name}!"


@server.prompt
def review(code: str) -> str:
    return f"Please review:\n{code}"


if __name__ == "__main__":
    if sys.argv[1:2] == ["--http"]:
        server.run("http", show_banner=False, host="127.0.0.1", port=int(sys.argv[2]), path="/mcp")
    else:
        server.run(show_banner=False)
