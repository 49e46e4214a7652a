"""A toolkit server with the same tools as the other frameworks' servers in this folder.

Run from the project's ``.venv``:

    python interop/servers/toolkit_server.py                      # stdio
    python interop/servers/toolkit_server.py --http PORT          # Streamable HTTP on 127.0.0.1:PORT/mcp

Speaks both eras. The tools (``tests/test_client_servers.py`` holds the expected values): an
object, a list and a scalar (wrapped as ``{"result": ...}`` for a 2025-06-18/2025-11-25 client),
a str, text only, an error, progress, elicitation, sampling (standalone requests on legacy,
``input_required`` rounds on 2026-07-28), a tool that waits until it is cancelled and says so in
the file it is given, and a task.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from pydantic import BaseModel

from toolkit import Context, Server, ToolError

server = Server("toolkit-server", version="1.0.0", task_poll_interval_ms=100)


class Weather(BaseModel):
    city: str
    temp: float
    sky: str


class Name(BaseModel):
    name: str


class Report(BaseModel):
    topic: str
    sections: list[str]


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


@server.tool(structured_output=False)
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
async def ask_name(ctx: Context) -> str:
    """Elicits a name."""
    result = await ctx.elicit("What is your name?", Name)
    if not (result.accepted and result.data is not None):
        raise ToolError("no name")
    return f"Hello, {result.data.name}!"


@server.tool
async def summarize(text: str, ctx: Context) -> str:
    """Samples the client's model."""
    sampled = await ctx.sample(f"Summarize: {text}", max_tokens=50)
    return sampled.text


@server.tool
async def wait_until_cancelled(mark: str) -> str:
    """Writes ``started`` to ``mark``, waits; on cancellation writes ``cancelled``."""
    Path(mark).write_text("started")
    try:
        await asyncio.sleep(600)
    except asyncio.CancelledError:
        Path(mark).write_text("cancelled")
        raise
    return "not cancelled"


@server.tool(task="optional")
async def build_report(topic: str, sections: int = 2) -> Report:
    """A task when the client can take one."""
    written = []
    for number in range(1, sections + 1):
        await asyncio.sleep(0.05)
        written.append(f"{topic}: section {number}")
    return Report(topic=topic, sections=written)


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
        server.run("http", host="127.0.0.1", port=int(sys.argv[2]), path="/mcp")
    else:
        server.run()
