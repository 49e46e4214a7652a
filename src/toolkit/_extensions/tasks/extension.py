"""``TasksExtension``: tasks as an extension of the server, with no special path in the engine.

Every wire shape stays ``_compat``'s (``_compat/tasks.py``); the bookkeeping is ``runs.py``'s.
What this module adds is the wiring: which ``tools/call`` becomes a task (``wants_call``, then
``Tasks.ttl_for``), the ``tasks/*`` methods in each era, the capability, ``execution.taskSupport``
in ``tools/list``, and the task store shared by replicas.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ... import _compat
from ..._errors import InputRequired
from ..._methods import METHODS, Method
from ..._types import CLIENT_CAPABILITIES_KEY, TASKS_EXTENSION
from ..base import CallNext, Extension, ExtensionHost, Handler, ToolCall

if TYPE_CHECKING:
    from ..._components import ToolBase
    from ..._inbound import InboundRequest
    from ..._store.base import Store
    from .runs import Tasks

_METHODS = ("get", "cancel", "result", "list", "update")


class TasksExtension(Extension):
    """Tool calls that answer at once with a task handle, run on, and are polled (docs/tasks.md)."""

    id = TASKS_EXTENSION

    def bind(self, host: ExtensionHost) -> None:
        self.host = host
        self._tasks: Tasks | None = None

    @property
    def tasks(self) -> Tasks:
        """The bookkeeping, made (and ``runs.py`` imported) on first use: most servers never run a task."""
        if self._tasks is None:
            from .runs import Tasks  # noqa: PLC0415

            self._tasks = Tasks(self.host.settings, self.host.registry)
        return self._tasks

    def capabilities(self, capabilities: dict[str, Any], version: str) -> None:
        if self.host.registry.has_tasks:
            _compat.task_capabilities(capabilities, version)

    def methods(self) -> Iterable[tuple[Method, Handler]]:
        return [(METHODS[f"tasks/{name}"], self._handler(name)) for name in _METHODS]

    def _handler(self, name: str) -> Handler:
        """``tasks/<name>``, each era's own (``Tasks.available`` refuses it where there are no tasks)."""

        async def handler(inbound: InboundRequest) -> dict[str, Any]:
            result: dict[str, Any] = await getattr(self.tasks.available(inbound), name)(inbound)
            return self.host.envelop(result, inbound)

        return handler

    def wants_call(self, tool: ToolBase, params: Mapping[str, Any]) -> bool:
        """Whether the call may become a task or be refused as one (``Tasks.ttl_for``); otherwise
        ``around_call`` would only call on, and the call takes the plain path (a proxied tool,
        ``"optional"``, called by a client that takes no tasks)."""
        if "task" in params or tool.task == "required":
            return True
        if tool.task == "forbidden":
            return False
        meta = params.get("_meta")  # a 2026-07-28 request declares the extension per request
        capabilities = meta.get(CLIENT_CAPABILITIES_KEY) if isinstance(meta, dict) else None
        return isinstance(capabilities, dict) and _compat.wants_extension(capabilities)

    async def around_call(self, call: ToolCall, call_next: CallNext) -> dict[str, Any]:
        ttl_ms = self.tasks.ttl_for(call.inbound, call.tool)
        if ttl_ms is None:
            return await call_next()
        return await self._start(call, ttl_ms)

    async def _start(self, call: ToolCall, ttl_ms: int) -> dict[str, Any]:
        """A task handle; the tool runs on (``task_start="begin_task"``: once it awaits ``ctx.begin_task()``)."""
        inbound, tool = call.inbound, call.tool
        later = tool.task_start == "begin_task"
        context = call.context(with_answers=later)

        async def run() -> dict[str, Any]:
            return await call.run(context)

        try:
            record = await self.tasks.start(inbound, tool.name, ttl_ms, run, later=later)
        except InputRequired:  # questions asked before the task began: multi round-trip input
            return call.input_required()
        if isinstance(record, dict):  # it ended before it began a task: an ordinary result
            return record
        view = self.tasks.view(record, inbound.version, detailed=False)
        return self.host.envelop(_compat.created_task(view, inbound.version), inbound, result_type="task")

    def tools_list_entry(self, entry: dict[str, Any], tool: ToolBase, version: str) -> dict[str, Any]:
        return _compat.task_support(entry, tool.task, version)

    async def attach_store(self, store: Store) -> None:
        self.tasks.attach(store)

    def detach_store(self) -> None:
        if self._tasks is not None:
            self._tasks.detach()

    async def shutdown(self) -> None:
        if self._tasks is not None:
            await self._tasks.shutdown()

    def on_bus(self, message: dict[str, Any]) -> bool:
        if message.get("t") != "task":
            return False
        self.tasks.on_bus(message)
        return True
