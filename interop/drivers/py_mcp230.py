"""Interop driver for the Python SDK `mcp==2.3.0` (run with .interop/py-mcp230/bin/python).

Uses the public high-level `mcp.Client` exactly as a user would: `list_tools()` then
`call_tool()` for each plan entry, so the library's own result parsing and output-schema
validation (`ClientSession.validate_tool_result`) run.

--mode auto      the library default: probe `server/discover`, fall back to `initialize`
                 (against a dual-era server this must select 2026-07-28, the modern era)
--mode legacy    force the `initialize` handshake; mcp 2.3.0 always offers
                 LATEST_HANDSHAKE_VERSION = 2025-11-25 there
--mode 2026-07-28  adopt the modern version directly, no probe
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import anyio
import mcp
from _common import emit, err, load_plan, parse_args, server_command
from mcp import Client
from mcp.client.stdio import StdioServerParameters


def dump_result(r) -> dict:
    content = [c.model_dump(by_alias=True, mode="json", exclude_none=True) for c in r.content]
    d = {
        "content": content,
        "structuredContentPresent": "structured_content" in r.model_fields_set,
        "isError": bool(r.is_error),
    }
    if d["structuredContentPresent"]:
        d["structuredContent"] = r.structured_content
    return d


async def main() -> None:
    a = parse_args(["auto", "legacy", "2026-07-28"], "auto")
    if a.phase != "plan":  # see interop/README.md, "Tasks"
        sys.exit("py_mcp230: mcp 2.3.0 has no task API (neither 2025-11-25 tasks nor the tasks extension)")
    plan = load_plan(a.plan)
    from importlib.metadata import version

    doc: dict = {
        "client": "py-mcp230",
        "library": "mcp (python)",
        "library_version": version("mcp"),
        "mode": a.mode,
        "transport": a.transport,
        "negotiated_protocol_version": None,
        "connect": {"ok": False},
        "list_tools": {"ok": False},
        "calls": [],
    }
    if a.transport == "stdio":
        cmd, args, env = server_command(a)
        target = StdioServerParameters(command=cmd, args=args, env=env, cwd=a.cwd)
    else:
        target = a.url
    try:
        # No anyio.fail_after here: __aenter__ opens task groups, which must not straddle a cancel
        # scope. read_timeout_seconds bounds discover/initialize; the runner bounds the process.
        client = Client(target, mode=a.mode, read_timeout_seconds=a.timeout)
        await client.__aenter__()
    except BaseException as e:
        doc["connect"] = {"ok": False, "error": err(e)}
        emit(doc, a.out)
        return
    doc["connect"] = {"ok": True}
    try:
        doc["negotiated_protocol_version"] = client.protocol_version
        try:
            with anyio.fail_after(a.timeout):
                listed = await client.list_tools()
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
                    r = await client.call_tool(step["tool"], step.get("arguments", {}))
                entry.update(ok=True, result=dump_result(r))
            except Exception as e:
                entry.update(ok=False, error=err(e))
            doc["calls"].append(entry)
            if a.out:  # keep a partial document on disk in case the runner has to kill us
                emit(doc, a.out)
    finally:
        try:
            await client.__aexit__(None, None, None)
        except BaseException as e:
            doc["close_error"] = err(e)
        emit(doc, a.out)


if __name__ == "__main__":
    assert mcp is not None
    anyio.run(main)
