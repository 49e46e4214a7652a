"""Interop driver for the Python SDK `mcp==1.30.0` (run with .interop/py-mcp130/bin/python).

The last pre-SEP-2106 release: a legacy-only client (initialize handshake, always offers
2025-11-25) whose `CallToolResult.structuredContent` is typed `dict[str, Any] | None` and whose
`ClientSession.call_tool()` validates structuredContent against the listed outputSchema.
Uses `stdio_client` / `streamable_http_client` + `ClientSession` the way a user would.

--phase tasks: the 2025-11-25 experimental tasks through the library's own API,
`session.experimental` (mcp/client/experimental/tasks.py: `call_tool_as_task`, `poll_task`,
`get_task`, `get_task_result`, `list_tasks`, `cancel_task`), with the session's
`elicitation_callback` answering the questions a task asks (they arrive as `elicitation/create`
requests carrying the related-task `_meta`, on the `tasks/result` stream or the GET stream).
"""

from __future__ import annotations

import os
import sys
from contextlib import AsyncExitStack
from datetime import timedelta

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import warnings

import anyio
import mcp.types as types
from _common import emit, err, load_plan, new_tasks_doc, parse_args, server_command
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
    meta = r.model_dump(by_alias=True, mode="json", exclude_none=True).get("_meta")
    if meta is not None:
        d["meta"] = meta
    return d


def dump_task(t) -> dict:
    return t.model_dump(by_alias=True, mode="json", exclude_none=True)


class Elicitations:
    """The session's elicitation_callback: records every question and answers it from the plan."""

    def __init__(self) -> None:
        self.answer: dict | None = None
        self.seen: list[dict] = []

    async def __call__(self, context, params: types.ElicitRequestParams):
        self.seen.append(params.model_dump(by_alias=True, mode="json", exclude_none=True))
        if self.answer is None:
            return types.ElicitResult(action="decline")
        return types.ElicitResult(action="accept", content=self.answer)


async def run_tasks(session: ClientSession, plan: dict, tasks: dict, elicit: Elicitations, a, doc) -> None:
    """The task scenarios, through session.experimental only (no hand-written JSON-RPC)."""
    with warnings.catch_warnings():  # 1.30.0 marks the experimental tasks API deprecated
        warnings.simplefilter("ignore", DeprecationWarning)
        exp = session.experimental
    caps = session.get_server_capabilities()
    tasks["capabilities_tasks"] = (
        caps.tasks.model_dump(by_alias=True, mode="json", exclude_none=True)
        if (caps is not None and caps.tasks is not None)
        else None
    )

    async def scenario(name: str, body) -> None:
        rec = tasks[name]
        try:
            with anyio.fail_after(a.timeout):
                await body(rec)
            rec["ok"] = True
        except Exception as e:
            rec["ok"] = False
            rec["error"] = err(e)
        if a.out:
            emit(doc, a.out)

    async def build(rec: dict) -> None:
        step = plan["build"]
        created = await exp.call_tool_as_task(step["tool"], step["arguments"], ttl=60000)
        rec["task_id"] = created.task.taskId
        rec["created"] = dump_task(created.task)
        async for st in exp.poll_task(created.task.taskId):  # tasks/get until terminal
            rec["statuses"].append(st.status)
        r = await exp.get_task_result(created.task.taskId, types.CallToolResult)  # tasks/result
        rec["result"] = dump_result(r)

    async def purge(rec: dict) -> None:
        step = plan["purge"]
        elicit.answer = step["answer"]
        created = await exp.call_tool_as_task(step["tool"], step["arguments"], ttl=60000)
        rec["task_id"] = created.task.taskId
        rec["created"] = dump_task(created.task)
        async for st in exp.poll_task(created.task.taskId):
            rec["statuses"].append(st.status)
            if st.status == "input_required":  # the documented move: call tasks/result, which
                break  # carries the question to elicitation_callback and blocks until the end
        r = await exp.get_task_result(created.task.taskId, types.CallToolResult)
        rec["result"] = dump_result(r)
        rec["final"] = dump_task(await exp.get_task(created.task.taskId))
        rec["elicitations"] = list(elicit.seen)

    async def cancel(rec: dict) -> None:
        step = plan["cancel"]
        created = await exp.call_tool_as_task(step["tool"], step["arguments"], ttl=60000)
        rec["task_id"] = created.task.taskId
        rec["created"] = dump_task(created.task)
        rec["statuses"].append((await exp.get_task(created.task.taskId)).status)
        rec["cancel_result"] = dump_task(await exp.cancel_task(created.task.taskId))
        rec["final"] = dump_task(await exp.get_task(created.task.taskId))
        try:  # a task in a terminal status: tasks/cancel MUST be rejected with -32602
            rec["recancel"] = {"ok": True, "result": dump_task(await exp.cancel_task(created.task.taskId))}
        except Exception as e:
            rec["recancel"] = {"ok": False, "error": err(e)}

    async def listing(rec: dict) -> None:
        ids, cursor = [], None
        for _ in range(20):
            page = await exp.list_tasks(cursor)
            ids += [t.taskId for t in page.tasks]
            cursor = page.nextCursor
            if not cursor:
                break
        rec["task_ids"] = ids

    await scenario("build", build)
    await scenario("purge", purge)
    await scenario("cancel", cancel)
    await scenario("list", listing)


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
        "phase": a.phase,
    }
    if a.phase == "tasks":
        doc["tasks"] = new_tasks_doc("ClientSession.experimental (call_tool_as_task, poll_task, get_task_result, ...)")
    else:
        doc["calls"] = []
    elicit = Elicitations()
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
                ClientSession(
                    read,
                    write,
                    read_timeout_seconds=timedelta(seconds=a.timeout),
                    # only the tasks phase declares elicitation (the plan phase stays as before)
                    elicitation_callback=elicit if a.phase == "tasks" else None,
                )
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
        if a.phase == "tasks":
            await run_tasks(session, plan, doc["tasks"], elicit, a, doc)
            emit(doc, a.out)
            return
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
