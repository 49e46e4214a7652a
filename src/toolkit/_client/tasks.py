"""A tool call run as a task, followed to its end in the two forms the protocol has had.

- 2025-11-25 (experimental tasks): the call carries ``params.task`` (``ttl``); the server answers
  ``{"task": {...}}`` and ``tasks/result`` waits for the end. The task's questions arrive meanwhile
  as requests over the session, which its handlers answer like any other.
- 2026-07-28 (the ``io.modelcontextprotocol/tasks`` extension): the call declares the extension
  in its client capabilities; a ``resultType: "task"`` result is polled with ``tasks/get`` (every
  ``pollIntervalMs`` the server asks for, unless the caller says otherwise), and the questions a
  task lists (``inputRequests``) are answered once each with ``tasks/update``.

Either way a call the server answers without a task returns that result, and a failed or
cancelled task raises ``ClientError`` with its error.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Final

from .. import _compat
from .._errors import INTERNAL_ERROR, ClientError
from .._types import CLIENT_CAPABILITIES_KEY, TASKS_EXTENSION
from .._versions import MODERN_VERSIONS

if TYPE_CHECKING:
    from .session import ClientSession

MIN_POLL_SECONDS: Final = 0.01
"""The shortest wait between two ``tasks/get`` a server's ``pollIntervalMs`` can ask for."""
POLL_SECONDS_WITHOUT_HINT: Final = 1.0


def extension_meta(session: ClientSession) -> dict[str, Any]:
    """The ``_meta`` of a 2026-07-28 request that declares the tasks extension besides the session's capabilities."""
    extensions = {**session.capabilities.get("extensions", {}), TASKS_EXTENSION: {}}
    return {CLIENT_CAPABILITIES_KEY: {**session.capabilities, "extensions": extensions}}


class TaskHandle:
    """A tool call running as a task on the server: ask its status, wait for its result, cancel it.

    ``task`` is what the server last said of it (``taskId``, ``status``, ...). Its questions
    are answered with the session's handlers: in 2025-11-25 they arrive as requests over the
    session; in 2026-07-28 ``wait`` answers those a ``tasks/get`` lists, once each.
    """

    def __init__(
        self, session: ClientSession, name: str, form: str, task: dict[str, Any], meta: dict[str, Any]
    ) -> None:
        self.session = session
        self.name = name
        self.form = form
        self.task = task
        self.task_id: str = task["taskId"]
        self._meta = meta
        self._answered: set[str] = set()

    @property
    def status(self) -> str:
        """The status the server last gave (``working``, ``input_required``, ``completed``, ...)."""
        status: str = self.task.get("status", "working")
        return status

    async def refresh(self) -> dict[str, Any]:
        """Ask the server for the task now (``tasks/get``); what it said."""
        task = await self.session.result("tasks/get", {"taskId": self.task_id}, meta=self._meta)
        self.task = task.get("task", task) if self.form == "experimental" else task
        return self.task

    async def cancel(self) -> dict[str, Any]:
        """Ask the server to cancel the task (``tasks/cancel``); what it said."""
        task = await self.session.result("tasks/cancel", {"taskId": self.task_id}, meta=self._meta)
        self.task = task.get("task", task) if self.form == "experimental" else task
        return self.task

    async def wait(self, timeout: float = 300.0, poll_interval: float | None = None) -> dict[str, Any]:
        """The ``CallToolResult`` the task ends with; ``ClientError`` if it failed or was cancelled.

        ``timeout``: how long to wait before ``TimeoutError``; ``poll_interval``: seconds between
        two ``tasks/get`` in 2026-07-28 (default: what the server asks for).
        """
        if self.form == "experimental":
            return await self.session.result("tasks/result", {"taskId": self.task_id}, timeout=timeout)
        return await self._poll(timeout, poll_interval)

    async def _poll(self, timeout: float, poll_interval: float | None) -> dict[str, Any]:
        """``tasks/get`` a 2026-07-28 task until it ends, answering each question it lists once."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        task = self.task
        while True:
            status: str = task["status"]
            if status == "completed":
                result: dict[str, Any] = task["result"]
                return result
            if status in ("failed", "cancelled"):
                raise ClientError(task.get("error") or {"code": INTERNAL_ERROR, "message": f"the task was {status}"})
            asked = {
                key: value for key, value in (task.get("inputRequests") or {}).items() if key not in self._answered
            }
            if asked:
                responses = {key: await self.session.answer(question) for key, question in asked.items()}
                self._answered.update(responses)
                await self.session.result(
                    "tasks/update", {"taskId": self.task_id, "inputResponses": responses}, meta=self._meta
                )
            elif loop.time() > deadline:
                raise TimeoutError(f"task {self.task_id} of {self.name!r} still {status} after {timeout:g} s")
            else:
                await asyncio.sleep(
                    poll_interval if poll_interval is not None else _interval(task.get("pollIntervalMs"))
                )
            task = await self.refresh()


async def start_task(
    session: ClientSession, name: str, arguments: dict[str, Any] | None = None, *, ttl_ms: int | None = None
) -> TaskHandle | dict[str, Any]:
    """Call tool ``name`` as a task: its handle, or the result when the server answered without a task."""
    version = session.protocol_version
    form = _compat.task_form(version) if version is not None else None
    if form is None:
        raise ValueError(
            f"protocol version {version} has no tasks "
            f"({_compat.EXPERIMENTAL_TASKS_VERSION} and {', '.join(MODERN_VERSIONS)} do)"
        )
    arguments = arguments or {}
    if form == "experimental":
        augmentation = {} if ttl_ms is None else {"ttl": ttl_ms}
        created = await session.result("tools/call", {"name": name, "arguments": arguments, "task": augmentation})
        if "task" not in created:
            return created
        return TaskHandle(session, name, form, created["task"], {})
    meta = extension_meta(session)
    created = await session.call_tool(name, arguments, meta=meta)
    if created.get("resultType") != "task":
        return created
    return TaskHandle(session, name, form, created, meta)


async def call_task(
    session: ClientSession,
    name: str,
    arguments: dict[str, Any] | None = None,
    *,
    ttl_ms: int | None = None,
    timeout: float = 30.0,
    poll_interval: float | None = None,
) -> dict[str, Any]:
    """Call tool ``name`` as a task and follow it; the ``CallToolResult`` it ends with.

    ``ttl_ms``: how long the server keeps the task (2025-11-25 ``ttl``; the extension's server
    decides). ``timeout``: how long to follow the task before ``TimeoutError``.
    ``poll_interval``: seconds between two ``tasks/get`` (default: what the server asks for).
    """
    started = await start_task(session, name, arguments, ttl_ms=ttl_ms)
    if isinstance(started, dict):
        return started
    return await started.wait(timeout, poll_interval)


def _interval(poll_interval_ms: Any) -> float:
    if isinstance(poll_interval_ms, int | float) and not isinstance(poll_interval_ms, bool):
        return max(poll_interval_ms / 1000, MIN_POLL_SECONDS)
    return POLL_SECONDS_WITHOUT_HINT
