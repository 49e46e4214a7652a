"""An ``mcp`` 2.3.0 server (``MCPServer``), as a user of the official Python SDK writes one.

Run from ``.interop/py-mcp230`` (``scripts/servers --install-only``):

    python interop/servers/mcp230_server.py                       # stdio
    python interop/servers/mcp230_server.py --http PORT           # Streamable HTTP on 127.0.0.1:PORT/mcp

Speaks both eras (``initialize`` and 2026-07-28). The tools cover every result shape
(``tests/test_client_servers.py`` holds the expected values): an object, a list and a scalar
(wrapped as ``{"result": ...}`` for a legacy client, with a ``<name>Output`` schema), a str,
a text-only tool (no output schema), an error; plus progress, elicitation and sampling (the
SDK's resolvers: standalone requests on legacy, ``input_required`` on 2026-07-28), and a tool
that waits until it is cancelled and says so in the file it is given.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import anyio
from mcp.server.mcpserver import Context, Elicit, MCPServer, Resolve, Sample
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CreateMessageResult, SamplingMessage, TextContent
from pydantic import BaseModel

server = MCPServer("mcp230-server", version="2.3.0")


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
    """A list (legacy: wrapped)."""
    return [2, 3, 5, 7, 11, 13][:n]


@server.tool()
def answer() -> int:
    """A scalar (legacy: wrapped)."""
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


def ask(ctx: Context) -> Elicit[Name]:
    return Elicit("What is your name?", Name)


@server.tool()
def ask_name(who: Annotated[Name, Resolve(ask)]) -> str:
    """Elicits a name."""
    return f"Hello, {who.name}!"


def draft(text: str) -> Sample:
    return Sample(
        [SamplingMessage(role="user", content=TextContent(type="text", text=f"Summarize: {text}"))], max_tokens=50
    )


@server.tool()
def summarize(text: str, sampled: Annotated[CreateMessageResult, Resolve(draft)]) -> str:
    """Samples the client's model."""
    content = sampled.content
    return content.text if isinstance(content, TextContent) else str(content)


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
    if sys.argv[1:2] == ["--http"]:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]), streamable_http_path="/mcp")
    else:
        server.run()
