"""A server for the client's stdio transport tests (``tests/test_client_stdio.py``), run as a child process.

``python tests/support/client_stdio_app.py`` serves it over stdio, as a user's server script would.
"""

from __future__ import annotations

import os
import sys

from pydantic import BaseModel

from toolkit import Context, Server

server = Server("client-stdio-test", version="1.0.0")


class Name(BaseModel):
    name: str


@server.tool
def add(a: int, b: int) -> int:
    """The sum of two numbers."""
    return a + b


@server.tool
async def greet(ctx: Context) -> str:
    """Asks the user's name, then a model for a greeting."""
    answer = await ctx.elicit("Your name?", Name)
    name = answer.data.name if answer.accepted and answer.data else "nobody"
    sampled = await ctx.sample("Say hi", max_tokens=5)
    return f"{sampled.text} {name}"


@server.tool
async def chatty(ctx: Context) -> str:
    """Logs a warning, then answers."""
    await ctx.warning("careful")
    return "ok"


@server.tool
def die(code: int = 3) -> str:
    """Exits the server process in the middle of the call, after a line on stderr."""
    sys.stderr.write(f"dying with code {code} on purpose\n")
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    server.run()
