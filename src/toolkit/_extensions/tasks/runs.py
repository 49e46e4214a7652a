"""Tasks: a tool call that answers at once with a task handle, runs on, and is polled.

Both forms of the protocol go through here (the wire shapes of each are ``_compat``'s):

- 2026-07-28, the ``io.modelcontextprotocol/tasks`` extension: a request that declares the
  extension may get a task for a tool registered with ``task="optional"``/``"required"``;
  ``tasks/get`` polls, ``tasks/update`` brings the client's answers to the task's
  ``inputRequests``, ``tasks/cancel`` cancels.
- 2025-11-25, experimental tasks: a session asks with ``params.task``; ``tasks/get``,
  ``tasks/result`` (waits for the end), ``tasks/list``, ``tasks/cancel``. A question the tool
  asks is a request to the client carrying the task's id, sent on the ``tasks/result`` stream
  the client opens (or the session's ``GET`` stream, or kept until one opens).

The replica that accepts a task runs it as an asyncio task here; the record lives in a
``TaskStore`` (in this process, or in Redis so that any replica answers for it). Answers and
cancellations reaching another replica travel over the store's bus; a task whose replica
stopped is failed by whoever next looks at it, once that replica's lease has run out.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import uuid
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any, Final

from ... import _compat
from ..._errors import INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, ClientRequestError, McpError, ToolError
from ..._inbound import BEGIN_TASK, RUNS_AS
from ..._types import Send, log_digest

if TYPE_CHECKING:
    from ..._components import ToolBase
    from ..._inbound import InboundRequest
    from ..._registry import Registry
    from ..._settings import Settings
    from ..._store.base import Store
    from ..._store.tasks import TaskRecord, TaskStore

logger = logging.getLogger("toolkit")

Body = Callable[["InboundRequest"], Awaitable[dict[str, Any]]]
"""Runs the call a task stands for and returns its finished result (shaped for the inbound's version)."""

ANSWER_RECHECK_SECONDS: Final = 5.0
"""How often a task waiting for input looks in the store itself (in case a bus message was lost)."""
END_RECHECK_SECONDS: Final = 1.0
"""How often ``tasks/result`` looks in the store while the task runs on another replica."""
STOP_WAIT_SECONDS: Final = 1.0
"""How long ``tasks/cancel`` waits for a task running here to unwind before it answers."""
SHUTDOWN_WAIT_SECONDS: Final = 5.0
"""How long a stopping server waits for the tasks running in it to unwind."""


def _not_found(task_id: Any) -> McpError:
    # One answer for unknown, expired and someone else's: nothing tells them apart.
    return McpError(
        INVALID_PARAMS,
        f"Failed to retrieve task: Task not found ({task_id!r} is unknown, has expired, or is not yours)",
        {"taskId": task_id},
    )


def owner_of(inbound: InboundRequest) -> str | None:
    """Whom a task belongs to: the token's subject, else the legacy session, else whoever holds its id."""
    if inbound.caller is not None:
        return f"caller:{inbound.caller}"
    if inbound.session is not None and inbound.session.id is not None:
        return f"session:{inbound.session.id}"
    return None


class TaskRun:
    """A task running in this replica: its asyncio task, its questions to the client, its output."""

    def __init__(self, tasks: Tasks, record: TaskRecord, inbound: InboundRequest) -> None:
        self.tasks = tasks
        self.id = record.id
        self.owner = record.owner
        self.modern = record.modern
        self.inbound = inbound
        self.runner: asyncio.Task[None] | None = None
        self.cancelled_by_client = False
        self.done = asyncio.Event()
        self._waiting: dict[str, asyncio.Future[Any]] = {}
        self._used: set[str] = set()
        self._result_streams: list[Send] = []
        self._outbox: list[dict[str, Any]] = []

    # --- what the tool's Context calls ---------------------------------------------------------

    async def ask(self, key: str, method: str, params: dict[str, Any], valid: Callable[[Any], bool]) -> Any:
        """Ask the client and wait for its answer: ``inputRequests`` (2026-07-28) or a request (2025-11-25)."""
        if not self.modern:
            return await self._ask_session(method, params)
        while True:
            key = self._fresh(key)
            future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
            self._waiting[key] = future
            try:
                await self.tasks.store.ask(self.id, key, {"method": method, "params": params})
                answer = await self._answer(future)
            finally:
                self._waiting.pop(key, None)
            if valid(answer):
                return answer
            # An answer that is not one (a malformed result): ask again, under a new key (a key
            # is never reused once answered, spec "Task Update Requests").

    def _fresh(self, key: str) -> str:
        candidate, n = key, 1
        while candidate in self._used:
            n += 1
            candidate = f"{key}-{n}"
        self._used.add(candidate)
        return candidate

    async def _answer(self, future: asyncio.Future[Any]) -> Any:
        while True:
            try:
                return await asyncio.wait_for(asyncio.shield(future), ANSWER_RECHECK_SECONDS)
            except TimeoutError:
                await self.take_answers()

    async def take_answers(self) -> None:
        """Collect the answers the store holds for this task and hand them to the questions waiting."""
        answers = await self.tasks.store.take_answers(self.id)
        for key, answer in answers.items():
            future = self._waiting.get(key)
            if future is not None and not future.done():
                future.set_result(answer)

    async def _ask_session(self, method: str, params: dict[str, Any]) -> Any:
        inbound = self.inbound
        assert inbound.session is not None
        params = _compat.related_task(dict(params), self.id)
        await self._save(status="input_required", status_message=f"Waiting for the client: {method}")
        try:
            timeout = self.tasks.settings.client_request_timeout
            return await inbound.session.request(method, params, self.send, timeout)
        except ClientRequestError as exc:
            raise ToolError(f"{method} failed: {exc}") from None
        finally:
            await self._save(status="working", status_message=None)

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        """Progress shows as the task's status message (``tasks/get`` carries it)."""
        text = message if message else (f"{progress:g}/{total:g}" if total is not None else f"{progress:g}")
        await self._save(status_message=text)

    async def send(self, message: dict[str, Any]) -> None:
        """A 2025-11-25 task's message to the client: on a ``tasks/result`` stream if one is open.

        A request the stream can no longer carry (its client left) is handled as if there were
        none. Otherwise a notification goes to the session (stdout, or the ``GET`` stream if open);
        a request goes there only if that reaches the client now (stdio; the ``GET`` stream open
        on this replica), else it waits for the client's ``tasks/result`` (spec: the client
        calls it on ``input_required``).
        """
        if "id" not in message:  # requests already carry the task's id in _meta
            params = message.get("params")
            message = {**message, "params": _compat.related_task(dict(params) if params else {}, self.id)}
        if self._result_streams:
            stream = self._result_streams[-1]
            try:
                await stream(message)
                return
            except ClientRequestError:
                # That tasks/result's client left without a way to resume (a proxy cut a long
                # wait, say): the question waits for the next tasks/result instead of failing.
                self.stop_streaming_to(stream)
        session = self.inbound.session
        if session is not None and session.notify is not None and ("id" not in message or session.notify_delivers()):
            await session.notify(message)
            return
        if "id" in message:
            self._outbox.append(message)

    async def stream_to(self, send: Send) -> None:
        """A ``tasks/result`` request is open: what the task sends goes there (what waited goes first)."""
        self._result_streams.append(send)
        waiting, self._outbox = self._outbox, []
        for message in waiting:
            await send(message)

    def stop_streaming_to(self, send: Send) -> None:
        with contextlib.suppress(ValueError):
            self._result_streams.remove(send)

    async def _save(self, **changes: Any) -> None:
        await self.tasks.store.update_task(self.id, **changes)


class Tasks:
    """The tasks of one server: creating, running, looking up and steering them."""

    def __init__(self, settings: Settings, registry: Registry) -> None:
        self.settings = settings
        self.registry = registry
        self._store: TaskStore | None = None
        self._shared: Store | None = None
        self.replica = "local"
        self._bus: Store | None = None
        self._runs: dict[str, TaskRun] = {}
        self._ended: dict[str, asyncio.Event] = {}

    @property
    def store(self) -> TaskStore:
        """Where the tasks are kept: the attached store's, or this process's (made on first use,
        so that a server with no task tools never loads the task store)."""
        if self._store is None:
            if self._shared is not None:
                self._store = self._shared.tasks()
            else:
                from ..._store.tasks import MemoryTaskStore  # noqa: PLC0415 - on first use

                self._store = MemoryTaskStore()
        return self._store

    # --- replicas ---------------------------------------------------------------------------------

    def attach(self, store: Store) -> None:
        """Keep tasks in a shared store, so that every replica answers for them."""
        self._shared = store
        self._store = None
        self.replica = store.replica
        self._bus = store

    def detach(self) -> None:
        self._bus = None

    def on_bus(self, message: dict[str, Any]) -> None:
        """A replica said something about a task (``{"t": "task", "a": action, "i": id}``)."""
        task_id, action = message.get("i"), message.get("a")
        if not isinstance(task_id, str):
            return
        if action == "ended":
            event = self._ended.get(task_id)
            if event is not None:
                event.set()
            return
        run = self._runs.get(task_id)
        if run is None:
            return
        if action == "input":
            self._spawn(run.take_answers())
        elif action == "cancel" and run.runner is not None:
            run.cancelled_by_client = True
            run.runner.cancel()

    async def _tell(self, action: str, task_id: str) -> None:
        if self._bus is not None:
            await self._bus.publish({"t": "task", "a": action, "i": task_id})

    # --- creating and running ------------------------------------------------------------------------

    def available(self, inbound: InboundRequest) -> Tasks:
        """These tasks, if ``scope``'s version has tasks and some tool may run as one (else not found / -32021)."""
        form = _compat.task_form(inbound.version)
        if form is None or not self.registry.has_tasks:
            raise _compat.method_not_found(inbound.method, inbound.version)
        if form == "extension" and not _compat.wants_extension(inbound.client_capabilities):
            raise _compat.extension_missing(inbound.method)
        return self

    def ttl_for(self, inbound: InboundRequest, tool: ToolBase) -> int | None:
        """The TTL of the task a ``tools/call`` becomes, or ``None``: it runs as an ordinary call."""
        form = _compat.task_form(inbound.version)
        if form == "extension":  # the server decides: a task whenever the request can take one
            if tool.task == "forbidden":
                return None
            if _compat.wants_extension(inbound.client_capabilities):
                return self.settings.task_ttl_ms
        elif form == "experimental" and self.registry.has_tasks:  # the client decides, with params.task
            requested = inbound.params.get("task")
            if requested is not None:
                if not isinstance(requested, dict):
                    raise McpError(INVALID_PARAMS, 'Invalid params: "task" must be an object ({"ttl": ms} or {})')
                if tool.task == "forbidden":
                    raise _compat.task_not_allowed(tool.name, inbound.version)
                return self.ttl_ms(requested.get("ttl"))
        else:  # a version without tasks, or a server that declared none: an ordinary call
            return None
        if tool.task == "required":
            raise _compat.task_required(tool.name, inbound.version)
        return None

    def ttl_ms(self, requested: Any) -> int:
        """The TTL a new task gets: the one asked for (2025-11-25 ``task.ttl``), capped; the default otherwise."""
        settings = self.settings
        if requested is None:
            return settings.task_ttl_ms
        if isinstance(requested, bool) or not isinstance(requested, (int, float)) or not math.isfinite(requested):
            raise McpError(INVALID_PARAMS, 'Invalid params: "task.ttl" must be a number of milliseconds')
        if requested < 1:
            raise McpError(INVALID_PARAMS, f'Invalid params: "task.ttl" must be at least 1 ms, not {requested!r}')
        return int(min(requested, settings.max_task_ttl_ms))  # spec: the receiver may override the TTL

    async def start(
        self,
        inbound: InboundRequest,
        tool: str,
        ttl_ms: int,
        call: Callable[[], Coroutine[Any, Any, dict[str, Any]]],
        *,
        later: bool,
    ) -> TaskRecord | dict[str, Any]:
        """Make ``call`` a task: at once, or (``later``) when it awaits ``ctx.begin_task()``.

        A ``later`` call that ends first is an ordinary call: its result is returned (and its
        ``InputRequired`` raised) instead of a task.
        """
        if not later:
            return await self.create(inbound, tool, ttl_ms, lambda _: call())
        loop = asyncio.get_running_loop()
        inbound.extras[BEGIN_TASK] = asked, ready = loop.create_future(), asyncio.Event()
        running: asyncio.Task[dict[str, Any]] = loop.create_task(call())
        try:
            await asyncio.wait((running, asked), return_when=asyncio.FIRST_COMPLETED)
            if not asked.done():
                del inbound.extras[BEGIN_TASK]
                return running.result()
            record = await self.create(inbound, tool, ttl_ms, lambda _: running)
        except BaseException:
            running.cancel()
            raise
        runner = self._runs[record.id].runner
        assert runner is not None
        # A runner cancelled before its first step never awaits the call it stands for: stop it then too.
        runner.add_done_callback(lambda _: running.cancel())
        ready.set()
        return record

    async def create(self, inbound: InboundRequest, tool: str, ttl_ms: int, body: Body) -> TaskRecord:
        """Store a new task (durably: ``tasks/get`` finds it once this returns) and start running it."""
        owner = owner_of(inbound)
        limit = self.settings.max_running_tasks
        if sum(1 for run in self._runs.values() if run.owner == owner) >= limit:
            raise McpError(
                INVALID_REQUEST,
                f"Invalid Request: {limit} tasks of this caller are running already (max_running_tasks); "
                "wait for one to end, or cancel one",
            )
        from ..._store.tasks import TaskRecord  # noqa: PLC0415 - on first use (see store)

        record = TaskRecord(
            id=str(uuid.uuid4()),
            owner=owner,
            modern=inbound.modern,
            version=inbound.version,
            tool=tool,
            ttl_ms=ttl_ms,
            poll_interval_ms=self.settings.task_poll_interval_ms,
            replica=self.replica,
        )
        await self.store.create_task(record)
        # The request's own inbound becomes the task's (a call that began as an ordinary one keeps
        # running with it): questions now go through the task, and its notifications where the
        # version says (``_compat.task_notifies``).
        run = TaskRun(self, record, inbound)
        inbound.extras[RUNS_AS] = run
        if _compat.task_notifies(inbound.version):
            inbound.send = run.send
        else:
            inbound.send, inbound.progress_token = _drop, None
        self._runs[record.id] = run
        run.runner = asyncio.get_running_loop().create_task(self._run(run, body, ttl_ms / 1000))
        return record

    async def _run(self, run: TaskRun, body: Body, lifetime: float) -> None:
        changes: dict[str, Any]
        try:
            async with asyncio.timeout(lifetime):
                result = await body(run.inbound)
            changes = {"status": _compat.finished_status(result, run.inbound.version), "result": result}
            if changes["status"] == "failed":
                changes["status_message"] = "The tool reported an error (isError); tasks/result has it"
        except asyncio.CancelledError:
            if run.cancelled_by_client:
                changes = {"status": "cancelled", "status_message": "Cancelled by the client"}
            else:
                changes = _failed(INTERNAL_ERROR, "The server stopped before the task finished")
        except TimeoutError:
            changes = _failed(INTERNAL_ERROR, f"The task ran past its TTL ({lifetime:g} s) and was stopped")
        except McpError as exc:
            changes = _failed(exc.code, exc.message, exc.data)
        except Exception:
            logger.exception("task %s (tool %r) failed", log_digest(run.id), run.inbound.params.get("name"))
            changes = _failed(INTERNAL_ERROR, "Internal error")
        try:
            await self.store.update_task(run.id, **changes)
        except Exception:  # the store is out of reach: the lease will fail the task for us
            logger.exception("could not record the end of task %s", log_digest(run.id))
        finally:
            self._runs.pop(run.id, None)
            run.done.set()
            self._wake(run.id)
            with contextlib.suppress(Exception):
                await self._tell("ended", run.id)

    def _wake(self, task_id: str) -> None:
        event = self._ended.get(task_id)
        if event is not None:
            event.set()

    def _spawn(self, work: Awaitable[None]) -> None:
        async def run() -> None:
            try:
                await work
            except Exception:
                logger.exception("task bookkeeping failed")

        asyncio.get_running_loop().create_task(run())

    async def shutdown(self) -> None:
        """Stop the tasks running here (each ends ``failed``, saying the server stopped).

        A tool that ignores its cancellation is left behind after ``SHUTDOWN_WAIT_SECONDS``: with
        a shared store its task is failed once this replica's lease runs out.
        """
        runners = [run.runner for run in self._runs.values() if run.runner is not None]
        for runner in runners:
            runner.cancel()
        if runners:
            await asyncio.wait(runners, timeout=SHUTDOWN_WAIT_SECONDS)

    # --- looking up --------------------------------------------------------------------------------

    async def find(self, inbound: InboundRequest) -> TaskRecord:
        """The task ``params.taskId`` names, if the caller may see it; a dead replica's task is failed first."""
        task_id = inbound.params.get("taskId")
        if not isinstance(task_id, str):
            problem = "is missing" if task_id is None else f"must be a string, not {type(task_id).__name__}"
            raise McpError(INVALID_PARAMS, f'Invalid params: "taskId" {problem}', {"param": "taskId"})
        record = await self.store.get_task(task_id)
        if record is None or record.owner != owner_of(inbound) or record.modern != inbound.modern:
            raise _not_found(task_id)
        if not record.terminal and record.id not in self._runs:
            record = await self.find_again(record)
        return record

    def view(self, record: TaskRecord, version: str, *, detailed: bool) -> dict[str, Any]:
        return _compat.task_view(record.to_json(), version, detailed=detailed)

    # --- the methods -----------------------------------------------------------------------------------

    async def get(self, inbound: InboundRequest) -> dict[str, Any]:
        """``tasks/get``: the task as the version shows it (2026-07-28: with its result, error or questions)."""
        return self.view(await self.find(inbound), inbound.version, detailed=True)

    async def update(self, inbound: InboundRequest) -> dict[str, Any]:
        """``tasks/update`` (2026-07-28): answers to the task's ``inputRequests``; an empty acknowledgement."""
        responses = inbound.params.get("inputResponses")
        if not isinstance(responses, dict):
            raise McpError(
                INVALID_PARAMS, 'Invalid params: "inputResponses" must be an object of answers by request key'
            )
        record = await self.find(inbound)
        if not record.terminal:  # answers for a task that is not asking are ignored (spec)
            await self.answer(record, responses)
        return {}

    async def cancel(self, inbound: InboundRequest) -> dict[str, Any]:
        """``tasks/cancel``: 2026-07-28 acknowledges; 2025-11-25 returns the cancelled task, refuses an ended one."""
        record = await self.find(inbound)
        if not record.terminal:
            record = await self.stop(record)
        elif not _compat.cancel_ended_acknowledged(inbound.version):
            raise McpError(INVALID_PARAMS, f"Cannot cancel task: already in terminal status {record.status!r}")
        return _compat.cancel_result(self.view(record, inbound.version, detailed=False), inbound.version)

    async def result(self, inbound: InboundRequest) -> dict[str, Any]:
        """``tasks/result`` (2025-11-25): wait for the end, then what the call itself would have answered."""
        record = await self.wait_end(await self.find(inbound), inbound.send)
        if record.result is not None:
            return _compat.related_task(dict(record.result), record.id)
        error = record.error or {"code": INTERNAL_ERROR, "message": "The task was cancelled before it finished"}
        raise McpError(error["code"], error["message"], error.get("data"))

    async def list(self, inbound: InboundRequest) -> dict[str, Any]:
        """``tasks/list`` (2025-11-25): the caller's tasks, a page at a time."""
        records = await self.store.list_tasks(owner_of(inbound))
        cursor = inbound.params.get("cursor")
        start = 0
        if cursor is not None:
            if not isinstance(cursor, str) or not cursor.isdigit() or int(cursor) > len(records):
                raise McpError(INVALID_PARAMS, f"Invalid params: unknown cursor {cursor!r}", {"cursor": cursor})
            start = int(cursor)
        end = start + self.settings.page_size
        result: dict[str, Any] = {
            "tasks": [self.view(record, inbound.version, detailed=False) for record in records[start:end]]
        }
        if end < len(records):
            result["nextCursor"] = str(end)
        return result

    # --- steering ------------------------------------------------------------------------------------

    async def answer(self, record: TaskRecord, responses: dict[str, Any]) -> None:
        """Answers for the task's questions (keys not outstanding are ignored, as the spec says)."""
        await self.store.answer_task(record.id, responses)
        run = self._runs.get(record.id)
        if run is not None:
            await run.take_answers()
        else:
            await self._tell("input", record.id)

    async def stop(self, record: TaskRecord) -> TaskRecord:
        """Cancel the task (it is ``cancelled`` when this returns, unless it had ended) and stop its tool."""
        updated = await self.store.update_task(record.id, status="cancelled", status_message="Cancelled by the client")
        run = self._runs.get(record.id)
        if run is not None and run.runner is not None:
            run.cancelled_by_client = True
            run.runner.cancel()
            # Give the tool a moment to unwind (its finally blocks run) before answering; one
            # that ignores the cancellation does not hold the answer up.
            await asyncio.wait((run.runner,), timeout=STOP_WAIT_SECONDS)
            if run.runner.done() and not run.done.is_set():  # cancelled before its first step: _run never ran
                self._runs.pop(record.id, None)
                run.done.set()
                self._wake(record.id)
        else:
            await self._tell("cancel", record.id)
        return updated or record

    async def wait_end(self, record: TaskRecord, send: Send) -> TaskRecord:
        """Wait until the task ends (2025-11-25 ``tasks/result``); meanwhile its messages go to ``send``."""
        run = self._runs.get(record.id)
        if run is not None:
            await run.stream_to(send)
            try:
                await run.done.wait()
            finally:
                run.stop_streaming_to(send)
        event = self._ended.setdefault(record.id, asyncio.Event())
        try:
            while True:
                current = await self.store.get_task(record.id)
                if current is None:
                    raise _not_found(record.id)
                if current.terminal:
                    return current
                current = await self.find_again(current)
                if current.terminal:
                    return current
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(event.wait(), END_RECHECK_SECONDS)
                event.clear()
        finally:
            self._ended.pop(record.id, None)

    async def find_again(self, record: TaskRecord) -> TaskRecord:
        """``record`` again, failed if its replica stopped (see ``find``)."""
        if record.replica == self.replica or self._bus is None or await self._bus.replica_alive(record.replica):
            return record
        message = "The server replica running this task stopped before it finished; start it again"
        updated = await self.store.update_task(record.id, **_failed(INTERNAL_ERROR, message))
        return updated or record


def _failed(code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"status": "failed", "status_message": message, "error": error}


async def _drop(message: dict[str, Any]) -> None:
    """Where a 2026-07-28 task's progress and log notifications go: nowhere (not supported on tasks)."""
