"""The server the scale-out tests run as several replicas behind a balancer.

Each tool says which replica ran it (its process id), so a test can prove where a request
landed; ``$SCALEOUT_MARKS`` is a directory where tools leave marks another process can see
(a cancellation that reached the replica running the tool).
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from pydantic import BaseModel

from toolkit import Context, Server

server = Server("scaleout", version="1.0.0")


class Answer(BaseModel):
    colour: str


def _mark(name: str) -> None:
    """Leave the mark ``name`` holding this process id, whole: the test reads it as soon as it exists."""
    marks = os.environ.get("SCALEOUT_MARKS")
    if marks:
        partial = Path(marks) / f".{name}.partial"
        partial.write_text(str(os.getpid()))
        partial.replace(Path(marks) / name)  # atomic: never seen created but not yet written


@server.tool
def whoami() -> int:
    """The process id of the replica that ran this call."""
    return os.getpid()


@server.tool
async def chatter(ctx: Context) -> int:
    """Log at info and at error; the session's log level decides what the client gets."""
    await ctx.info("chatter at info")
    await ctx.error("chatter at error")
    return os.getpid()


@server.tool
async def ask(ctx: Context) -> dict[str, object]:
    """Ask the user for a colour; say which replica asked."""
    answer = await ctx.elicit("Pick a colour", Answer)
    return {"pid": os.getpid(), "action": answer.action, "colour": answer.data.colour if answer.data else None}


@server.tool
async def steps(count: int, ctx: Context, pause: float = 0.2) -> dict[str, int]:
    """Report progress ``count`` times, ``pause`` seconds apart, then answer."""
    for step in range(1, count + 1):
        await ctx.report_progress(step, count, f"step {step}")
        await asyncio.sleep(pause)
    return {"pid": os.getpid(), "steps": count}


@server.tool
async def wait(tag: str) -> str:
    """Wait until cancelled; leave the mark ``cancelled-TAG`` when that happens."""
    _mark(f"started-{tag}")
    try:
        await asyncio.sleep(120)
    except asyncio.CancelledError:
        _mark(f"cancelled-{tag}")
        raise
    return "not cancelled"


@server.tool
async def touch(uri: str) -> int:
    """Tell the subscribers of ``uri`` it changed (from whichever replica runs this)."""
    await server.notify_resource_updated(uri)
    return os.getpid()


def spare() -> str:
    """A tool that comes and goes."""
    return "spare"


@server.tool
def flip() -> bool:
    """Add the tool ``spare`` if it is missing, remove it if it is there (on this replica); whether it is there now."""
    if "spare" in server.registry.tools:
        server.remove_tool("spare")
        return False
    server.add_tool(spare)
    return True


@server.tool
async def roots(ctx: Context) -> list[str]:
    """The client's roots, asked from whichever replica runs this."""
    return [root.uri for root in await ctx.list_roots()]


@server.resource("note://{name}", mime_type="text/plain")
def note(name: str) -> str:
    """A note; subscribe to hear when ``touch`` changes it."""
    return f"note {name}"


# --- tasks: run on the replica that accepted them, steered through any -------------------------


@server.tool(task="optional")
async def job(tag: str, ctx: Context, seconds: float = 120.0, ask: bool = False) -> dict[str, object]:
    """A task: leaves ``started-TAG``, may ask a colour, works ``seconds``; ``cancelled-TAG`` if cancelled."""
    _mark(f"started-{tag}")
    colour = None
    if ask:
        answer = await ctx.elicit("Pick a colour", Answer)
        colour = answer.data.colour if answer.data else None
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        _mark(f"cancelled-{tag}")
        raise
    return {"pid": os.getpid(), "colour": colour}
