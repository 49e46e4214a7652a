"""An app for the built-in middleware tests over real transports (``toolkit run``).

``server`` logs plain lines, ``json_server`` JSON ones; both cap results at ``LIMIT`` bytes.
``register`` puts the same tools, resource and prompt on the in-process servers of the tests.
The request log goes to stderr through the handler ``toolkit run`` sets up.
"""

from __future__ import annotations

import asyncio
import logging

from toolkit import Server, ToolError
from toolkit.middleware import RequestLogging, ResponseSizeLimit, Timing

LIMIT = 2000

# `toolkit run` configures logging before it loads the app, with its --log-level (warning by
# default) on the root logger: let the request log through anyway.
logging.getLogger("toolkit.requests").setLevel(logging.INFO)


def build(name: str, *, json: bool) -> Server:
    app = Server(name, middleware=[RequestLogging(json=json), Timing(), ResponseSizeLimit(LIMIT)])
    register(app)
    return app


def register(app: Server) -> None:
    """The tools, resource template and prompt the tests call, on ``app``."""

    @app.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @app.tool
    def fail() -> str:
        """Always fail with a tool error."""
        raise ToolError("this tool always fails")

    @app.tool
    def big(size: int) -> str:
        """``size`` bytes of text."""
        return "x" * size

    @app.tool
    async def slow(seconds: float) -> str:
        """Sleep ``seconds``."""
        await asyncio.sleep(seconds)
        return "done"

    @app.resource("data://items/{size}")
    def item(size: int) -> str:
        """``size`` bytes of text."""
        return "x" * size

    @app.prompt
    def greet(name: str) -> str:
        """Greet someone."""
        return f"Hello, {name}!"


server = build("builtin-middleware", json=False)
json_server = build("builtin-middleware-json", json=True)
