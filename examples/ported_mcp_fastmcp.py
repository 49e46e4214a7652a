"""Release notes of a few packages, ported from an ``mcp.server.fastmcp`` server (the official SDK, v1).

Run it:  toolkit run examples/ported_mcp_fastmcp.py                                  (stdio)
         toolkit run examples/ported_mcp_fastmcp.py --transport http --port 8000      (http://127.0.0.1:8000/mcp)
         python examples/ported_mcp_fastmcp.py                                        (stdio, server.run())

What changed, line by line (``mcp.server.fastmcp`` on the left, this file on the right)::

    from mcp.server.fastmcp import Context, FastMCP     from toolkit import Context, Message, Server
    from mcp.server.fastmcp.prompts import base         (Message is toolkit's)
    mcp = FastMCP("changelog", instructions="...")      server = Server("changelog", instructions="...")
    @mcp.tool()                                         @server.tool()   (or bare: @server.tool)
    await ctx.report_progress(done, total, message)     the same
    await ctx.info("...")                               the same
    @mcp.resource("changelog://packages")               @server.resource("changelog://packages", mime_type=...)
    @mcp.resource("changelog://{package}/{version}")    the same
    @mcp.prompt()                                       @server.prompt()
    base.UserMessage("...")                             Message("...")
    base.AssistantMessage("...")                        Message("...", role="assistant")
    raise ValueError("...")  (a tool's error)           raise ToolError("...")  (the message reaches the client)
    mcp.run(transport="streamable-http")                server.run("http"), or toolkit run ... --transport http

A tool returning ``list[Release]`` gives a 2026-07-28 client the list itself as
``structuredContent`` and a 2025-11-25 client ``{"result": [...]}``, as the SDK does.
"""

from __future__ import annotations

import asyncio
import datetime
from typing import Annotated

from pydantic import BaseModel, Field

from toolkit import Context, Message, Server, ToolError

server = Server(
    "changelog",
    version="1.0.0",
    instructions="Release notes of a few Python packages: their versions, what changed, and how to upgrade.",
)


class Release(BaseModel):
    version: str
    date: datetime.date
    changes: list[str]


RELEASES: dict[str, list[Release]] = {
    "httpx": [
        Release(version="0.28.1", date=datetime.date(2024, 12, 6), changes=["Fix SSL context of verify=False"]),
        Release(version="0.28.0", date=datetime.date(2024, 11, 28), changes=["Drop the deprecated app= argument"]),
        Release(version="0.27.2", date=datetime.date(2024, 8, 27), changes=["Support zstd content decoding"]),
        Release(version="0.27.0", date=datetime.date(2024, 2, 21), changes=["Deprecate app= for transport="]),
    ],
    "pydantic": [
        Release(version="2.10.0", date=datetime.date(2024, 11, 20), changes=["Support Python 3.13", "Faster JSON"]),
        Release(version="2.9.0", date=datetime.date(2024, 9, 5), changes=["Complex numbers", "ZoneInfo support"]),
    ],
}


def releases_of(package: str) -> list[Release]:
    found = RELEASES.get(package)
    if found is None:
        raise ToolError(f"Unknown package {package!r}; known: {', '.join(sorted(RELEASES))}.")
    return found


@server.tool()
def latest_version(package: str) -> str:
    """The newest released version of a package."""
    return releases_of(package)[0].version


@server.tool()
async def release_history(
    package: str,
    ctx: Context,
    last: Annotated[int, Field(ge=1, le=10, description="How many releases, newest first")] = 3,
) -> list[Release]:
    """The last releases of a package with their changes, reporting progress as it reads them."""
    releases = releases_of(package)[:last]
    await ctx.info(f"reading {len(releases)} releases of {package}")
    for done, release in enumerate(releases, start=1):
        await asyncio.sleep(0)  # reading the release's notes
        await ctx.report_progress(done, len(releases), f"read {package} {release.version}")
    return releases


@server.resource("changelog://packages", mime_type="application/json")
def packages() -> list[str]:
    """The packages whose releases this server knows."""
    return sorted(RELEASES)


@server.resource("changelog://{package}/{version}", mime_type="text/markdown")
def release_notes(package: str, version: str) -> str:
    """One release's notes, as Markdown."""
    for release in releases_of(package):
        if release.version == version:
            changes = "\n".join(f"- {change}" for change in release.changes)
            return f"# {package} {version} ({release.date:%d %B %Y})\n\n{changes}\n"
    raise ValueError(f"{package} has no release {version}")


@server.prompt()
def upgrade_plan(package: str, from_version: str) -> list[Message]:
    """Ask the model for an upgrade plan from one version to the latest."""
    return [
        Message(f"I use {package} {from_version}. Read changelog://{package}/... and plan my upgrade to the latest."),
        Message(f"I will call release_history for {package} and list what breaks first.", role="assistant"),
    ]


if __name__ == "__main__":
    server.run()
