"""An ``mcp`` 1.30.0 ``FastMCP`` server, as a user of the official Python SDK 1.x writes one.

Run from ``.interop/py-mcp130`` (``scripts/servers --install-only``):

    python interop/servers/mcp130_server.py                       # stdio
    python interop/servers/mcp130_server.py --http PORT           # Streamable HTTP on 127.0.0.1:PORT/mcp

The ``initialize`` era only. Same tools as ``mcp230_server.py`` (``tests/test_client_servers.py``
holds the expected values): an object, a list and a scalar (wrapped as ``{"result": ...}`` under a
``<name>Output`` schema), a str, text only, an error, progress, elicitation (``ctx.elicit``),
sampling (``ctx.session.create_message``), and a tool that waits until it is cancelled and says so
in the file it is given.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
from mcp.server.fastmcp import Context, FastMCP
from mcp.server.fastmcp.exceptions import ToolError
from mcp.types import SamplingMessage, TextContent
from pydantic import BaseModel

port = int(sys.argv[2]) if sys.argv[1:2] == ["--http"] else 8000
server = FastMCP("mcp130-server", host="127.0.0.1", port=port)


class Weather(BaseModel):
    city: str
    temp: float
    sky: str


class Name(BaseModel):
    name: str


@server.tool()
def weather(city: str) -> Weather:
    """An object."""
    return Weather(city=city, temp=21.5, sky="sunny")


@server.tool()
def primes(n: int) -> list[int]:
    """A list (wrapped)."""
    return [2, 3, 5, 7, 11, 13][:n]


@server.tool()
def answer() -> int:
    """A scalar (wrapped)."""
    return 42


@server.tool()
def greet(name: str) -> str:
    """A str, with the framework's default output schema."""
    return f"Hello, {name}!"


@server.tool(structured_output=False)
def shout(text: str) -> str:
    """Text only: no output schema, no structured content."""
    return text.upper()


@server.tool()
def fail(reason: str) -> str:
    """Always an error result."""
    raise ToolError(f"failed: {reason}")


@server.tool()
async def count(steps: int, ctx: Context) -> str:
    """Reports progress ``1..steps`` of ``steps``."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step}")
    return f"counted {steps}"


@server.tool()
async def ask_name(ctx: Context) -> str:
    """Elicits a name."""
    result = await ctx.elicit("What is your name?", Name)
    if result.action != "accept":
        raise ToolError(f"no name: {result.action}")
    return f"Hello, {result.data.name}!"


@server.tool()
async def summarize(text: str, ctx: Context) -> str:
    """Samples the client's model."""
    result = await ctx.session.create_message(
        [SamplingMessage(role="user", content=TextContent(type="text", text=f"Summarize: {text}"))], max_tokens=50
    )
    return result.content.text if isinstance(result.content, TextContent) else str(result.content)


@server.tool()
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


@server.prompt()
def review(code: str) -> str:
    return f"Please review:\n{code}"


if __name__ == "__main__":
    server.run("streamable-http" if sys.argv[1:2] == ["--http"] else "stdio")
