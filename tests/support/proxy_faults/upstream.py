"""A well-behaved toolkit server whose tools misbehave on request: the upstream the gateway proxies.

    python upstream.py                    # stdio
    python upstream.py --http PORT        # Streamable HTTP on 127.0.0.1:PORT

Every start is recorded in ``$PROXY_FAULTS_DIR/spawns``; while ``$PROXY_FAULTS_DIR/down``
exists, a start exits at once with code 1 (``marks.spawned``).
"""

from __future__ import annotations

import asyncio
import os
import sys

from marks import mark, marks_dir, spawned

from toolkit import Context, Server

server = Server("upstream", version="1.0.0")


@server.tool
def pid() -> int:
    """The process id of the upstream that ran this call."""
    return os.getpid()


@server.tool
def die() -> str:
    """Exit in the middle of the call, as a crash would: no answer is ever written."""
    os._exit(3)


@server.tool
async def hang(tag: str) -> str:
    """Never answer; leave ``started-TAG`` at once and ``cancelled-TAG`` when the call is cancelled."""
    mark(f"started-{tag}")
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        mark(f"cancelled-{tag}")
        raise
    return "not reached"


@server.tool
async def hold(tag: str) -> int:
    """A slow call: leave ``started-TAG``, then answer (the pid) once ``release-TAG`` exists."""
    mark(f"started-{tag}")
    where = marks_dir()
    assert where is not None, "hold needs $PROXY_FAULTS_DIR"
    release = where / f"release-{tag}"
    while not release.exists():
        await asyncio.sleep(0.02)
    return os.getpid()


@server.tool
def session(ctx: Context) -> dict[str, object]:
    """Which upstream process and which upstream session (legacy HTTP: its id) served the call."""
    return {"pid": os.getpid(), "session": ctx.session_id}


@server.tool
async def chatter(count: int, ctx: Context) -> int:
    """Log ``count`` messages at info during the call, then answer ``count``."""
    for index in range(count):
        await ctx.info(f"line {index}")
    return count


@server.tool
def grow(name: str) -> str:
    """Add the tool ``NAME`` (answering ``NAME``): the tools list changed."""

    def grown() -> str:
        return name

    server.add_tool(grown, name=name)
    return name


def main() -> None:
    spawned()
    if sys.argv[1:2] == ["--http"]:
        server.run("http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()


if __name__ == "__main__":
    main()
