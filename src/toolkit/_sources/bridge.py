"""One request relayed to an upstream server, and what the upstream sends about it relayed back.

- Progress and log messages about the request go to the caller's ``Context`` (in order, before
  the result). A modern upstream is asked at the caller's own level, per request (none when the
  caller takes none, so nothing is logged for nobody); a legacy upstream's session for every level,
  and the caller's own level filters.
- A modern upstream is told the caller's own capabilities for questions (``_meta``
  ``clientCapabilities``: elicitation, sampling, roots as the caller declared them), so it asks
  only what the caller can answer, and refuses (``-32021``) what needs a capability it lacks.
- The upstream's questions (elicitation, sampling, roots) go to the caller:
  - a caller that can wait for an answer (a legacy session, or a call running as a task) is
    asked at once, whatever the upstream's era (a modern upstream's rounds are followed here);
  - a modern caller outside a task answers in rounds: a modern upstream's ``inputRequests``
    become this round's questions, and its ``requestState`` rides inside toolkit's own sealed
    state (``Context.end_round``); answers a caller sends without a round of ours (no state)
    go upstream as they came;
  - a legacy upstream asking mid-call cannot wait for a round (its request is still open): the
    call becomes a task if it may (then the question goes out through the task), else it is
    answered with a decline (elicitation) or an error (sampling, roots) — the one case that
    cannot be bridged directly (ARCHITECTURE §7).
- A tool the upstream runs only as a task (``taskSupport: "required"``) is called upstream as a
  task (2026-07-28: the extension declared in ``_meta``; 2025-11-25: ``params.task``); questions
  the upstream asks before its task begins are relayed as above, and once it answers with a task
  the call becomes a task here too (``Context.begin_task``) and follows the upstream's to its end:
  its questions asked of the caller through ours (each answer sent on with ``tasks/update`` as it
  comes), its result or error made ours; cancelling ours cancels it.
- A caller cancelling cancels the upstream request (the client session does it).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
from collections.abc import Iterator, Mapping
from typing import Any, Final, NoReturn, Protocol

from .. import _compat
from .._client.questions import QUESTIONS, NoHandler
from .._client.session import CallScope, ClientSession
from .._client.transport import TransportClosed
from .._errors import INTERNAL_ERROR, ClientError, McpError, ToolError
from .._types import CLIENT_CAPABILITIES_KEY, LOG_LEVEL_KEY, LOG_RANK, TASKS_EXTENSION

logger = logging.getLogger("toolkit.proxy")

_QUESTION_METHODS: Final = frozenset(QUESTIONS.values())
MAX_PENDING: Final = 1000
"""Progress reports and log messages held for a caller slower than its upstream, at most."""
MIN_POLL_SECONDS: Final = 0.01
POLL_SECONDS_WITHOUT_HINT: Final = 1.0
"""How often an upstream task is polled when it does not say (``pollIntervalMs``)."""
_CANCELLING: set[asyncio.Task[Any]] = set()
"""``tasks/cancel`` sent upstream for a task of ours that was cancelled: held until sent."""


class RelayContext(Protocol):
    """What a relayed request needs of the caller's ``Context``."""

    @property
    def asks_in_rounds(self) -> bool: ...

    @property
    def round_answers(self) -> Mapping[str, Any]: ...

    @property
    def kept(self) -> Any: ...

    @property
    def protocol_version(self) -> str: ...

    @property
    def client_capabilities(self) -> dict[str, Any]: ...

    @property
    def log_level(self) -> Any: ...

    @property
    def runs_as_task(self) -> bool: ...

    async def begin_task(self) -> None: ...

    async def ask(self, method: str, params: dict[str, Any], *, key: str | None = None) -> Any: ...

    def end_round(self, questions: Mapping[str, dict[str, Any]], keep: dict[str, Any] | None = None) -> NoReturn: ...

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None: ...

    async def log(self, level: Any, data: Any, *, logger: str | None = None) -> None: ...


class Relay:
    """Forwards to ``context`` what the upstream sends about one request, in order."""

    def __init__(self, context: RelayContext, what: str) -> None:
        self.context = context
        self.what = what
        self._pending: collections.deque[Any] | None = None
        """What waits to be relayed, in order; made by the first (most calls relay nothing)."""
        self._pump: asyncio.Task[None] | None = None
        self.dropped = 0
        self.scope = CallScope(_Askers(self), self._notified)

    def _asker(self, method: str) -> Any:
        async def ask(params: dict[str, Any]) -> Any:
            await self.flush()
            context = self.context
            if context.asks_in_rounds:
                await context.begin_task()  # a call that may become a task waits for the answer as one
            if context.asks_in_rounds:
                return self._refuse(method)
            return await context.ask(method, _unrelated(params))

        return ask

    def _refuse(self, method: str) -> Any:
        logger.info(
            "%s asked the caller %s mid-call, which a 2026-07-28 caller outside a task cannot answer: %s",
            self.what,
            method,
            "declined" if method == "elicitation/create" else "refused",
        )
        if method == "elicitation/create":
            return {"action": "decline"}
        raise ToolError(
            f"{method} cannot be relayed to a 2026-07-28 caller in the middle of a call; run the call as a task"
        )

    def _then(self, make: Any) -> None:
        """Run ``make()`` after what was relayed before it (a progress report, a log message).

        At most ``MAX_PENDING`` wait for a caller slower than its upstream; past that, what comes
        is dropped (counted, and logged when the call ends) rather than held without bound.
        """
        if self._pending is None:
            self._pending = collections.deque()
        if len(self._pending) >= MAX_PENDING:
            self.dropped += 1
            return
        self._pending.append(make)
        if self._pump is None or self._pump.done():
            self._pump = asyncio.ensure_future(self._relay_pending())

    async def _relay_pending(self) -> None:
        pending = self._pending
        while pending:
            make = pending.popleft()
            try:
                await make()
            except Exception as exc:  # the caller went away: nothing to relay to
                logger.debug("relaying to the caller failed: %s", exc)

    def progress(self, progress: float, total: float | None, message: str | None) -> None:
        self._then(lambda: self.context.report_progress(progress, total, message))

    def _notified(self, message: dict[str, Any]) -> bool:
        if message.get("method") != "notifications/message":
            return False
        params = message.get("params")
        if isinstance(params, dict) and params.get("level") in LOG_RANK:
            name = params.get("logger")
            self._then(
                lambda: self.context.log(
                    params["level"], params.get("data"), logger=name if isinstance(name, str) else None
                )
            )
        return True

    def release(self) -> None:
        """The request is over: nothing more comes for it. Its scope lets go of this relay, so the
        two are freed at once rather than by the cycle collector (and the response's text with them)."""
        self.scope.handlers = {}
        self.scope.on_message = None

    @property
    def quiet(self) -> bool:
        """Nothing was relayed (nor dropped): ``flush`` has nothing to wait for."""
        return self._pump is None and not self.dropped

    async def flush(self) -> None:
        """Wait until everything relayed so far has gone out."""
        if self._pump is not None:
            await self._pump
        if self.dropped:
            logger.warning(
                "%s: %d progress or log messages the caller did not take in time were dropped", self.what, self.dropped
            )
            self.dropped = 0


class _Askers(Mapping[str, Any]):
    """A relay's answers to the upstream's questions, each made when a question comes (most calls
    never see one: no closures per call)."""

    __slots__ = ("_relay",)

    def __init__(self, relay: Relay) -> None:
        self._relay = relay

    def __getitem__(self, method: str) -> Any:
        if method not in _QUESTION_METHODS:
            raise KeyError(method)
        return self._relay._asker(method)

    def __iter__(self) -> Iterator[str]:
        return iter(_QUESTION_METHODS)

    def __len__(self) -> int:
        return len(_QUESTION_METHODS)


class TaskQuestions:
    """The questions a 2025-11-25 upstream's tasks ask, each routed to the call following that task.

    They carry the task's id (``_meta`` ``related-task``) and may come on any stream: the
    ``tasks/result`` request's, the session's ``GET`` stream, or (over stdio) before the task's
    handle has even reached us. ``handlers`` are the upstream session's own; a question waits
    (up to ``patience`` seconds) for the call that follows its task to say it follows it.
    """

    def __init__(self, patience: float) -> None:
        self.patience = patience
        self._relays: dict[str, asyncio.Future[Relay]] = {}
        self.handlers = {method: self._handler(method) for method in _QUESTION_METHODS}

    def _slot(self, task_id: str) -> asyncio.Future[Relay]:
        slot = self._relays.get(task_id)
        if slot is None:
            slot = self._relays[task_id] = asyncio.get_running_loop().create_future()
        return slot

    def follow(self, task_id: str, relay: Relay) -> None:
        slot = self._slot(task_id)
        if not slot.done():
            slot.set_result(relay)

    def forget(self, task_id: str) -> None:
        self._relays.pop(task_id, None)

    def _handler(self, method: str) -> Any:
        async def ask(params: dict[str, Any]) -> Any:
            meta = params.get("_meta")
            related = meta.get(_compat.RELATED_TASK_KEY) if isinstance(meta, dict) else None
            task_id = related.get("taskId") if isinstance(related, dict) else None
            if not isinstance(task_id, str):
                raise NoHandler(f"{method} outside of any request or task: no caller to ask")
            slot = self._slot(task_id)
            try:
                relay = await asyncio.wait_for(asyncio.shield(slot), self.patience)
            except TimeoutError:
                if self._relays.get(task_id) is slot:
                    del self._relays[task_id]
                raise NoHandler(f"{method} for task {task_id}, which no call here follows") from None
            return await relay.scope.handlers[method](params)

        return ask


def _unrelated(params: dict[str, Any]) -> dict[str, Any]:
    """A question's params without the upstream's ``related-task`` (the caller knows only our task)."""
    meta = params.get("_meta")
    if not isinstance(meta, dict) or _compat.RELATED_TASK_KEY not in meta:
        return params
    rest = {key: value for key, value in meta.items() if key != _compat.RELATED_TASK_KEY}
    return {key: value for key, value in params.items() if key != "_meta"} | ({"_meta": rest} if rest else {})


def may_wait(context: RelayContext) -> bool:
    """Whether the call may run as a task here, so a tool the upstream runs as one can be followed."""
    return context.runs_as_task


def caller_capabilities(context: RelayContext, *, task: bool = False) -> dict[str, Any]:
    """What a modern upstream is told the client can do: the caller's questions (and tasks, for ``task``)."""
    declared = context.client_capabilities
    capabilities = (
        {name: declared[name] for name in QUESTIONS if isinstance(declared.get(name), dict)} if declared else {}
    )
    if task:
        capabilities["extensions"] = {TASKS_EXTENSION: {}}
    return capabilities


async def relayed(
    session: ClientSession,
    method: str,
    params: dict[str, Any],
    context: RelayContext,
    what: str,
    *,
    progress: bool,
    task: bool = False,
    questions: TaskQuestions | None = None,
    relay: Relay | None = None,
) -> dict[str, Any]:
    """The upstream's complete ``result`` for ``method`` (rounds and questions relayed as above).

    ``task``: call the tool upstream as a task and follow it (the call becomes a task here too).
    ``relay``: the caller's own, to read the last response's text after (``relay.scope.body``).
    A JSON-RPC error from upstream is raised as an ``McpError`` with its code, message and data;
    an upstream that cannot be reached raises ``ConnectionError`` or ``TimeoutError``.
    """
    relay = relay if relay is not None else Relay(context, what)
    try:
        return await _relayed(session, method, params, context, what, relay, progress, task, questions)
    finally:
        relay.release()


async def _relayed(
    session: ClientSession,
    method: str,
    params: dict[str, Any],
    context: RelayContext,
    what: str,
    relay: Relay,
    progress: bool,
    task: bool,
    questions: TaskQuestions | None,
) -> dict[str, Any]:
    form = _compat.task_form(session.protocol_version or "") if task else None
    rounds = session.modern and context.asks_in_rounds
    target = params.get("name") or params.get("uri")
    if rounds:
        kept = context.kept
        answers = context.round_answers
        if isinstance(kept, dict) and kept.get("method") == method and kept.get("target") == target:
            params = {**params, "inputResponses": {key: answers[key] for key in kept.get("keys", ()) if key in answers}}
            if "state" in kept:
                params["requestState"] = kept["state"]
        elif kept is None and answers:  # answers sent without a round of ours: the upstream judges them
            params = {**params, "inputResponses": dict(answers)}
    meta: dict[str, Any] | None = None
    if session.modern:
        meta = {CLIENT_CAPABILITIES_KEY: caller_capabilities(context, task=form == "extension")}
        level = context.log_level
        if level is not None:  # the caller's level: an upstream logs only what someone reads
            meta[LOG_LEVEL_KEY] = level
    if form == "experimental":
        params = {**params, "task": {}}
    try:
        result = await session.follow_input(
            method,
            params,
            meta=meta,
            follow=not rounds,
            progress=relay.progress if progress else None,
            scope=relay.scope,
        )
    except ClientError as exc:
        await relay.flush()
        raise _upstream_error(exc, context) from None
    task_id = _task_of(result, form)
    if task_id is None:
        if not relay.quiet:
            await relay.flush()
        if rounds and result.get("resultType") == "input_required":
            asked = result.get("inputRequests")
            if not isinstance(asked, dict) or not asked:
                raise McpError(INTERNAL_ERROR, f"{what} asked for input without saying what")
            keep: dict[str, Any] = {"method": method, "target": target, "keys": list(asked)}
            if "requestState" in result:
                keep["state"] = result["requestState"]
            context.end_round(asked, keep)
        return result
    if form == "experimental" and questions is not None:
        questions.follow(task_id, relay)  # before any await: its questions may be on their way already
    try:
        await relay.flush()
        await context.begin_task()
        if form == "experimental":
            return await _result_of(session, task_id, relay)
        return await _followed(session, result, relay, meta, what)
    except asyncio.CancelledError:
        _cancel_upstream(session, task_id, meta)
        raise
    finally:
        if form == "experimental" and questions is not None:
            questions.forget(task_id)


def _task_of(result: dict[str, Any], form: str | None) -> str | None:
    """The id of the task the upstream answered with (``form``: how we asked for one), or ``None``."""
    if form == "extension" and result.get("resultType") == "task":
        task_id = result.get("taskId")
    elif form == "experimental" and isinstance(result.get("task"), dict):
        task_id = result["task"].get("taskId")
    else:
        return None
    return task_id if isinstance(task_id, str) else None


def _upstream_error(exc: ClientError, context: RelayContext) -> McpError:
    """The upstream's JSON-RPC error as ours; over HTTP, a 2026-07-28 caller gets its spec status too."""
    error = exc.error
    code = error.get("code")
    code = code if isinstance(code, int) else INTERNAL_ERROR
    status = _compat.error_http_status(code, context.protocol_version)
    return McpError(
        code, str(error.get("message", "the upstream server failed")), error.get("data"), http_status=status
    )


async def _followed(
    session: ClientSession, task: dict[str, Any], relay: Relay, meta: dict[str, Any] | None, what: str
) -> dict[str, Any]:
    """A 2026-07-28 upstream task followed to its end (``tasks/get``): its ``CallToolResult``.

    The questions it lists are asked of the caller (through our own task, each under the
    upstream's key) all at once, and each answer goes upstream with ``tasks/update`` as soon as it
    is given, so a caller answering some of them lets the upstream go on with those.
    """
    task_id: str = task["taskId"]
    changed = asyncio.Event()
    asking: dict[str, asyncio.Task[None]] = {}

    async def answer(key: str, question: dict[str, Any]) -> None:
        given = await relay.context.ask(str(question.get("method")), question.get("params") or {}, key=key)
        await session.result("tasks/update", {"taskId": task_id, "inputResponses": {key: given}}, meta=meta)
        changed.set()

    try:
        while True:
            status = task.get("status")
            if status == "completed" and isinstance(task.get("result"), dict):
                result: dict[str, Any] = task["result"]
                return result
            if status in ("failed", "cancelled"):
                error = task.get("error")
                if isinstance(error, dict):
                    raise _upstream_error(ClientError(error), relay.context)
                raise McpError(INTERNAL_ERROR, f"{what}: the task was {status}: {task.get('statusMessage', '')}")
            for ended in [key for key, running in asking.items() if running.done()]:
                asking[ended].result()  # an answer that could not be sent fails the task
            requests = task.get("inputRequests") if status == "input_required" else None
            for key, question in (requests or {}).items():
                if key not in asking and isinstance(question, dict):
                    asking[key] = asyncio.ensure_future(answer(key, question))
                    asking[key].add_done_callback(lambda _: changed.set())
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(changed.wait(), _interval(task.get("pollIntervalMs")))
            changed.clear()
            task = await session.result("tasks/get", {"taskId": task_id}, meta=meta)
    except ClientError as exc:
        raise _upstream_error(exc, relay.context) from None
    finally:
        for running in asking.values():
            running.cancel()


async def _result_of(session: ClientSession, task_id: str, relay: Relay) -> dict[str, Any]:
    """A 2025-11-25 upstream task's result (``tasks/result`` waits for it; its questions come meanwhile)."""
    response = await session.request("tasks/result", {"taskId": task_id}, timeout=None, scope=relay.scope)
    await relay.flush()
    if "error" in response:
        raise _upstream_error(ClientError(response["error"]), relay.context)
    result: dict[str, Any] = response["result"]
    return result


def _cancel_upstream(session: ClientSession, task_id: Any, meta: dict[str, Any] | None) -> None:
    """Our task was cancelled: cancel the upstream's (held until sent; nobody waits for the answer)."""

    async def cancel() -> None:
        try:
            await session.result("tasks/cancel", {"taskId": task_id}, meta=meta)
        except Exception as exc:  # ended or gone already: nothing left to cancel
            logger.debug("cancelling upstream task %s: %s", task_id, exc)

    running = asyncio.ensure_future(cancel())
    _CANCELLING.add(running)
    running.add_done_callback(_CANCELLING.discard)


def _interval(poll_interval_ms: Any) -> float:
    if isinstance(poll_interval_ms, int | float) and not isinstance(poll_interval_ms, bool):
        return max(poll_interval_ms / 1000, MIN_POLL_SECONDS)
    return POLL_SECONDS_WITHOUT_HINT


def unreachable(what: str, exc: BaseException) -> str:
    """What a caller is told when the upstream could not answer."""
    if isinstance(exc, TimeoutError):
        return f"{what} did not answer in time ({exc})"
    if isinstance(exc, TransportClosed):
        return f"{what} closed the connection: {exc}"
    return f"{what} is unavailable: {exc}"
