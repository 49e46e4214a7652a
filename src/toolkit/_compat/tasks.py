"""Tool calls that run as tasks, in the two forms the protocol has had.

The experimental tasks of 2025-11-25 (a session asks with ``params.task``; ``ttl``,
``pollInterval``; ``tasks/result``, ``tasks/list``; a tool's ``execution.taskSupport``) and the
2026-07-28 extension (the client declares it per request; ``ttlMs``, ``pollIntervalMs``;
``resultType: "task"``; ``tasks/update`` carries input; no ``tasks/list``).
"""

from __future__ import annotations

import datetime
from typing import Any, Final

from .._errors import METHOD_NOT_FOUND, MISSING_CAPABILITY, McpError
from .._types import TASKS_EXTENSION
from .._versions import is_modern

RELATED_TASK_KEY: Final = "io.modelcontextprotocol/related-task"
EXPERIMENTAL_TASKS_VERSION: Final = "2025-11-25"
"""The only legacy version with tasks (they became an extension in 2026-07-28)."""


def task_form(version: str) -> str | None:
    """``"extension"`` (2026-07-28), ``"experimental"`` (2025-11-25), or ``None``: no tasks in ``version``."""
    if is_modern(version):
        return "extension"
    return "experimental" if version == EXPERIMENTAL_TASKS_VERSION else None


def wants_extension(client_capabilities: dict[str, Any]) -> bool:
    """Whether a modern request declares the tasks extension in its client capabilities."""
    extensions = client_capabilities.get("extensions")
    return isinstance(extensions, dict) and isinstance(extensions.get(TASKS_EXTENSION), dict)


def task_capabilities(capabilities: dict[str, Any], version: str) -> dict[str, Any]:
    """Add what a server with task-capable tools declares in ``version`` (nothing before 2025-11-25)."""
    form = task_form(version)
    if form == "extension":
        capabilities["extensions"] = {TASKS_EXTENSION: {}}
    elif form == "experimental":
        capabilities["tasks"] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
    return capabilities


def task_support(entry: dict[str, Any], support: str, version: str) -> dict[str, Any]:
    """A 2025-11-25 ``tools/list`` entry says whether the tool runs as a task (absent: ``forbidden``)."""
    if support != "forbidden" and task_form(version) == "experimental":
        entry["execution"] = {"taskSupport": support}
    return entry


def task_not_allowed(tool: str, version: str) -> McpError:
    """A 2025-11-25 ``tools/call`` with ``task`` for a tool whose ``taskSupport`` is ``forbidden`` (-32601)."""
    return McpError(
        METHOD_NOT_FOUND,
        f'Tool {tool!r} cannot run as a task (its execution.taskSupport is forbidden); call it without "task"',
    )


def task_required(tool: str, version: str) -> McpError:
    """A call without a task to a tool that runs only as one.

    2026-07-28: -32021 naming the extension (HTTP 400); 2025-11-25: -32601 (spec, tool-level negotiation).
    """
    if is_modern(version):
        return McpError(
            MISSING_CAPABILITY,
            f"Tool {tool!r} runs only as a task: declare the {TASKS_EXTENSION} extension in the request's "
            "_meta clientCapabilities",
            {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}},
            http_status=400,
        )
    return McpError(
        METHOD_NOT_FOUND,
        f'Tool {tool!r} runs only as a task (execution.taskSupport is required): call it with "task": {{}}',
    )


def extension_missing(method: str) -> McpError:
    """A modern ``tasks/*`` request (or a task subscription) from a client that did not declare the extension."""
    return McpError(
        MISSING_CAPABILITY,
        f"{method} needs the {TASKS_EXTENSION} extension: declare it in the request's _meta clientCapabilities",
        {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}},
        http_status=400,
    )


def _timestamp(seconds: float) -> str:
    moment = datetime.datetime.fromtimestamp(seconds, datetime.UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def task_view(task: dict[str, Any], version: str, *, detailed: bool) -> dict[str, Any]:
    """A task as ``version`` shows it; ``task`` holds a record's fields (``toolkit._store.tasks``).

    ``detailed``: with what its status carries (2026-07-28 ``tasks/get``: ``inputRequests``,
    ``result`` or ``error``); 2025-11-25 never inlines those (they come from ``tasks/result``).
    """
    modern = is_modern(version)
    view: dict[str, Any] = {"taskId": task["id"], "status": task["status"]}
    if task.get("status_message"):
        view["statusMessage"] = task["status_message"]
    view["createdAt"] = _timestamp(task["created_at"])
    view["lastUpdatedAt"] = _timestamp(task["updated_at"])
    view["ttlMs" if modern else "ttl"] = task["ttl_ms"]
    view["pollIntervalMs" if modern else "pollInterval"] = task["poll_interval_ms"]
    if detailed and modern:
        status = task["status"]
        if status == "input_required":
            view["inputRequests"] = task["input_requests"]
        elif status == "completed":
            view["result"] = task["result"]
        elif status == "failed":
            view["error"] = task["error"]
    return view


def created_task(view: dict[str, Any], version: str) -> dict[str, Any]:
    """The ``CreateTaskResult`` of a ``tools/call`` (2026-07-28: the task itself, with ``resultType: "task"``)."""
    return view if is_modern(version) else {"task": view}


def cancel_ended_acknowledged(version: str) -> bool:
    """``tasks/cancel`` of an ended task: 2026-07-28 acknowledges it (cancellation is cooperative);
    2025-11-25 MUST refuse it with -32602."""
    return is_modern(version)


def cancel_result(view: dict[str, Any], version: str) -> dict[str, Any]:
    """``tasks/cancel``'s result: an empty acknowledgement (2026-07-28) or the task (2025-11-25)."""
    return {} if is_modern(version) else view


def task_notifies(version: str) -> bool:
    """Whether a task's progress and log notifications go to the client: 2025-11-25 sends them
    with the task's id; 2026-07-28 sends none for tasks (ext-tasks, "Task Status Notifications")."""
    return not is_modern(version)


def finished_status(result: dict[str, Any], version: str) -> str:
    """The status a tool's result ends its task in: 2025-11-25 counts an ``isError`` result as failed;
    2026-07-28 keeps ``failed`` for JSON-RPC errors and completes with the ``isError`` result."""
    return "failed" if result.get("isError") is True and not is_modern(version) else "completed"


def related_task(result: dict[str, Any], task_id: str) -> dict[str, Any]:
    """A 2025-11-25 message about a task carries ``_meta["io.modelcontextprotocol/related-task"]``."""
    meta = result.get("_meta")
    related = {RELATED_TASK_KEY: {"taskId": task_id}}
    result["_meta"] = {**meta, **related} if isinstance(meta, dict) else related
    return result
