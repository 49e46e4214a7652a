"""Long-running tools as tasks: answered at once with a task handle, polled until done.

Run it:   toolkit run examples/long_running.py --transport http --port 8000

A client that can take a task (2026-07-28 with the ``io.modelcontextprotocol/tasks`` extension,
or a 2025-11-25 session calling with ``"task": {}``) gets a task handle at once and polls
``tasks/get``; any other client simply waits for the result, as for any tool.
docs/tasks.md explains every step.
"""

from __future__ import annotations

import asyncio

from pydantic import BaseModel

from toolkit import Context, Server

server = Server("reports", version="1.0.0", task_poll_interval_ms=500)


class Report(BaseModel):
    topic: str
    sections: list[str]


@server.tool(task="optional")
async def build_report(topic: str, ctx: Context, sections: int = 3, seconds_per_section: float = 0.5) -> Report:
    """Write a report on `topic`, one section at a time (a task when the client can take one)."""
    written = []
    for number in range(1, sections + 1):
        await ctx.report_progress(number - 1, sections, f"writing section {number} of {sections}")
        await asyncio.sleep(seconds_per_section)
        written.append(f"{topic}: section {number}")
    return Report(topic=topic, sections=written)


class Confirmation(BaseModel):
    confirm: bool


@server.tool(task="required")
async def purge_archive(archive: str, ctx: Context) -> str:
    """Delete an archive after the user confirms (always a task; the question comes through it)."""
    answer = await ctx.elicit(f"Really purge {archive!r}? This cannot be undone.", Confirmation)
    if not (answer.accepted and answer.data is not None and answer.data.confirm):
        return f"{archive} kept"
    await asyncio.sleep(0.2)  # the slow part
    return f"{archive} purged"
