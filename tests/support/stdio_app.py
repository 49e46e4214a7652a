"""A small app for transport and CLI tests: slow, noisy and echoing tools, several servers.

``toolkit run tests/support/stdio_app.py`` serves ``server``; ``...:other`` another server;
``...:make_server`` is a factory; ``...:not_a_server`` is not a server.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from typing import Any

from toolkit import Context, Server

server = Server("stdio-test", version="1.0.0", instructions="Tools for transport tests.")
other = Server("stdio-test-other", version="2.0.0")
not_a_server = 42


def make_server() -> Server:
    factory_server = Server("stdio-test-factory", version="3.0.0")

    @factory_server.tool
    def made() -> int:
        """A tool only the factory's server has."""
        return 3

    return factory_server


@server.tool
async def slow(seconds: float, label: str = "done") -> str:
    """Sleep, then answer with ``label``."""
    await asyncio.sleep(seconds)
    return label


@server.tool
def noisy() -> int:
    """Write to stdout in every way a careless tool might; return 7."""
    print("print() from a tool")
    sys.stdout.write("sys.stdout.write from a tool\n")
    sys.stdout.flush()
    os.write(1, b"os.write(1) from a tool\n")
    subprocess.run([sys.executable, "-c", "print('a child process printing')"], check=True)
    return 7


@server.tool
def echo(value: Any) -> Any:
    """Return ``value`` unchanged."""
    return value


@server.tool
async def log_and_progress(ctx: Context, steps: int = 3) -> int:
    """Log one message and report progress for each step."""
    for step in range(steps):
        await ctx.info(f"step {step}")
        await ctx.report_progress(step + 1, steps)
    return steps


@other.tool
def only_other() -> str:
    """A tool only the other server has."""
    return "other"
