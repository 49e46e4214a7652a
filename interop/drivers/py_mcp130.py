"""Interop driver for the Python SDK `mcp==1.30.0` (run with .interop/py-mcp130/bin/python).

The last pre-SEP-2106 release: a legacy-only client (initialize handshake, always offers
2025-11-25) whose `CallToolResult.structuredContent` is typed `dict[str, Any] | None` and whose
`ClientSession.call_tool()` validates structuredContent against the listed outputSchema.
Uses `stdio_client` / `streamable_http_client` + `ClientSession` the way a user would.
"""

from __future__ import annotations

import os
import sys
from contextlib import AsyncExitStack
from datetime import timedelta

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import anyio
from _common import emit, err, load_plan, parse_args, server_command
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client


def dump_result(r) -> dict:
    content = [c.model_dump(by_alias=True, mode="json", exclude_none=True) for c in r.content]
    d = {
        "content": content,
        "structuredContentPresent": "structuredContent" in r.model_fields_set,
        "isError": bool(r.isError),
    }
    if d["structuredContentPresent"]:
        d["structuredContent"] = r.structuredContent
    return d


async def main() -> None:
    a = parse_args(["legacy"], "legacy")
    plan = load_plan(a.plan)
    from importlib.metadata import version

    doc: dict = {
        "client": "py-mcp130",
        "library": "mcp (python)",
        "library_version": version("mcp"),
        "mode": a.mode,
        "transport": a.transport,
        "negotiated_protocol_version": None,
        "connect": {"ok": False},
        "list_tools": {"ok": False},
        "calls": [],
    }
    async with AsyncExitStack() as stack:
        try:
            # read_timeout_seconds bounds initialize; the runner bounds the whole process.
            # (No anyio.fail_after around the entries: their task groups must not straddle it.)
            if a.transport == "stdio":
                cmd, args, env = server_command(a)
                params = StdioServerParameters(command=cmd, args=args, env=env, cwd=a.cwd)
                read, write = await stack.enter_async_context(stdio_client(params))
            else:
                read, write, _ = await stack.enter_async_context(streamable_http_client(a.url))
            session = await stack.enter_async_context(
                ClientSession(read, write, read_timeout_seconds=timedelta(seconds=a.timeout))
            )
            init = await session.initialize()
            doc["negotiated_protocol_version"] = init.protocolVersion
            doc["connect"] = {"ok": True}
        except BaseException as e:
            doc["connect"] = {"ok": False, "error": err(e)}
            emit(doc, a.out)
            return
        try:
            with anyio.fail_after(a.timeout):
                listed = await session.list_tools()
            doc["list_tools"] = {
                "ok": True,
                "tools": [t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in listed.tools],
            }
        except Exception as e:
            doc["list_tools"] = {"ok": False, "error": err(e)}
        if a.out:
            emit(doc, a.out)
        for step in plan:
            entry: dict = {"tool": step["tool"], "arguments": step.get("arguments", {})}
            try:
                with anyio.fail_after(a.timeout):
                    r = await session.call_tool(step["tool"], step.get("arguments", {}))
                entry.update(ok=True, result=dump_result(r))
            except Exception as e:
                entry.update(ok=False, error=err(e))
            doc["calls"].append(entry)
            if a.out:  # keep a partial document on disk in case the runner has to kill us
                emit(doc, a.out)
        emit(doc, a.out)


if __name__ == "__main__":
    try:
        anyio.run(main)
    except BaseException as e:
        sys.stderr.write(f"driver teardown error: {e!r}\n")
