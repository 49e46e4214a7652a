"""Shared plumbing for the Python interop drivers (stdlib only; imported by each driver).

Every driver takes the same command line and prints (or writes) one JSON document:

    {"client": ..., "library": ..., "library_version": ..., "mode": ...,
     "negotiated_protocol_version": str | null,
     "connect": {"ok": bool, "error"?: {...}},
     "list_tools": {"ok": bool, "tools"?: [{"name", "inputSchema", "outputSchema"?}], "error"?: {...}},
     "calls": [{"tool", "arguments", "ok": bool,
                "result"?: {"content", "structuredContent"?, "structuredContentPresent", "isError"},
                "error"?: {"type", "message", "code"?}}]}

"result" is what the client library handed to its user (serialised back to JSON);
"error" is the exception the library raised instead.

With --phase tasks (only drivers of libraries with a task API) "calls" is replaced by "tasks":

    {"api": str, "capabilities_tasks": ..., "build"|"purge"|"cancel": {
        "ok": bool, "task_id", "created": {task}, "statuses": [str, ...],   # every status seen
        "result"?: {... as above, "meta"?: {...}},                         # build / purge
        "elicitations"?: [{"message", "requestedSchema", "meta"}],          # purge
        "cancel_result"?: {task}, "final"?: {task},                         # cancel
        "error"?: {...}},
     "list": {"ok": bool, "task_ids": [...]}}

ts_client2.mjs (@modelcontextprotocol/ext-tasks) adds "form" ("2025-11-25" | "2026-07-28"),
"capabilities_extension" (the server's capabilities.extensions["io.modelcontextprotocol/tasks"]),
"session_capabilities", "input_requests" (what reached the package's onInputRequest, with its
context), "raw_requests" (2026-07-28: the methods its rawDispatch carried) and per scenario
"kind" ("task" | "immediate"), "outcome" (the package's completed / failed / cancelled),
"cancel_acked" (its cancel() returns no task) and "polled_after_cancel"; a scenario (or "list")
the library cannot run is {"ok": null, "skipped": reason} and becomes an N/A row.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from typing import Any


def parse_args(modes: list[str], default_mode: str) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--transport", choices=["stdio", "http"], required=True)
    ap.add_argument("--command", help="stdio: server command line as a JSON list of strings")
    ap.add_argument("--cwd", default=None, help="stdio: working directory of the server")
    ap.add_argument("--server-env", action="append", default=[], metavar="K=V", help="stdio: extra server env")
    ap.add_argument("--url", help="http: Streamable HTTP endpoint URL")
    ap.add_argument("--mode", choices=modes, default=default_mode)
    ap.add_argument("--plan", required=True, help="JSON file: list of {tool, arguments, ...} (phase tasks: see below)")
    ap.add_argument(
        "--phase",
        choices=["plan", "tasks"],
        default="plan",
        help="plan: list_tools + one call per plan entry; tasks: the task scenarios of a tasks plan "
        '({"build": step, "purge": step, "cancel": step}) through the library\'s own task API',
    )
    ap.add_argument("--timeout", type=float, default=20.0, help="per-request timeout, seconds")
    ap.add_argument("--out", default=None, help="write the JSON document here instead of stdout")
    a = ap.parse_args()
    if a.transport == "stdio" and not a.command:
        ap.error("--command is required for stdio")
    if a.transport == "http" and not a.url:
        ap.error("--url is required for http")
    return a


def server_command(a: argparse.Namespace) -> tuple[str, list[str], dict[str, str]]:
    argv = json.loads(a.command)
    env = dict(os.environ)
    for kv in a.server_env:
        k, _, v = kv.partition("=")
        env[k] = v
    return argv[0], argv[1:], env


def load_plan(path: str) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def new_tasks_doc(api: str) -> dict[str, Any]:
    return {
        "api": api,
        "build": {"ok": False, "statuses": []},
        "purge": {"ok": False, "statuses": [], "elicitations": []},
        "cancel": {"ok": False, "statuses": []},
        "list": {"ok": False},
    }


def err(e: BaseException) -> dict[str, Any]:
    # Unwrap exception groups (anyio task groups) down to the first leaf for a readable reason.
    leaf = e
    while isinstance(leaf, BaseExceptionGroup) and leaf.exceptions:
        leaf = leaf.exceptions[0]
    out: dict[str, Any] = {"type": type(leaf).__name__, "message": (str(leaf) or repr(leaf))[:2000]}
    code = getattr(getattr(leaf, "error", None), "code", None)
    if code is None:
        code = getattr(leaf, "code", None)
    if isinstance(code, int):
        out["code"] = code
    if leaf is not e:
        out["outer"] = type(e).__name__
    out["traceback"] = "".join(traceback.format_exception(leaf))[-3000:]
    return out


def emit(doc: dict[str, Any], out: str | None) -> None:
    text = json.dumps(doc, indent=1, default=repr)
    if out:  # atomically: the runner may read (or kill us) at any moment
        with open(out + ".tmp", "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(out + ".tmp", out)
    else:
        sys.stdout.write(text + "\n")
