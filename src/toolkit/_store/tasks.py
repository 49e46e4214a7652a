"""Where tasks live: the ``TaskStore`` interface and its in-memory implementation.

A task (the tasks extension of 2026-07-28, and the experimental tasks of 2025-11-25) is a
record every replica can read: its status and status message, its creator, its outstanding
input requests, the answers a client sent for them, and, once it ends, its result or error.
The replica that accepted the task runs it and writes its transitions; any replica answers
``tasks/get``, takes a ``tasks/update`` or a ``tasks/cancel`` and tells the running replica
over the bus. A record lives ``ttl_ms`` from its creation, then it is gone.

A record in a terminal status (``completed``, ``failed``, ``cancelled``) never changes again:
``update_task`` leaves it as it is, so a cancellation and a late result cannot both win.

Questions to the client (2026-07-28 ``inputRequests``) are added one at a time by the running
replica (``ask``); an answer (``tasks/update``, any replica) moves its question out of the
record at once, so the next ``tasks/get`` no longer shows it, and the task is ``working``
again as soon as nothing is outstanding. The running replica then takes the answers.
"""

from __future__ import annotations

import dataclasses
import heapq
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Final

TERMINAL: Final = frozenset({"completed", "failed", "cancelled"})
STATUSES: Final = ("working", "input_required", "completed", "failed", "cancelled")
CHANGEABLE: Final = frozenset({"status", "status_message", "result", "error", "poll_interval_ms"})


@dataclass(slots=True)
class TaskRecord:
    """One task as every replica sees it."""

    id: str
    owner: str | None
    """Who may see and steer it (the caller's token subject, else the legacy session); ``None``: whoever has the id."""
    modern: bool
    """Created by a 2026-07-28 request (the extension) or by a 2025-11-25 session (experimental tasks)."""
    version: str
    tool: str
    ttl_ms: int
    poll_interval_ms: int
    replica: str
    """The replica running it (its lease says whether it still runs)."""
    created_at: float = field(default_factory=time.time)
    """Wall-clock seconds (sent as ISO 8601)."""
    updated_at: float = 0.0
    status: str = "working"
    status_message: str | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Outstanding requests to the client, by key (status ``input_required``)."""
    answers: dict[str, Any] = field(default_factory=dict)
    """Answers a client sent for outstanding requests that the running replica has not taken yet."""

    def __post_init__(self) -> None:
        if not self.updated_at:
            self.updated_at = self.created_at

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    def to_json(self) -> dict[str, Any]:
        """The fields as a dict (sharing the nested values: read them, do not change them)."""
        return {name: getattr(self, name) for name in _FIELD_NAMES}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TaskRecord:
        return cls(**{name: data[name] for name in cls.__dataclass_fields__ if name in data})


_FIELD_NAMES: Final = tuple(field.name for field in dataclasses.fields(TaskRecord))


class TaskStore(ABC):
    """The tasks of a deployment. Every method may raise ``toolkit.StoreUnavailable``.

    A record handed out is the caller's, but the values it holds (a result, an error, a
    question) may be shared with the store: read them, never change them in place. Values
    handed in are kept as they are: do not change them afterwards either.
    """

    @abstractmethod
    async def create_task(self, record: TaskRecord) -> None:
        """Keep a new task for ``record.ttl_ms``; when this returns, ``get_task`` finds it on every replica."""

    @abstractmethod
    async def get_task(self, task_id: str) -> TaskRecord | None:
        """The task, or ``None`` if unknown or past its TTL."""

    @abstractmethod
    async def update_task(self, task_id: str, **changes: Any) -> TaskRecord | None:
        """Apply ``changes`` (fields in ``CHANGEABLE``) unless the task is terminal; the record as it now is.

        ``None`` if the task is gone. A terminal task is returned unchanged: compare its status.
        Ending a task drops its outstanding questions and untaken answers.
        """

    @abstractmethod
    async def ask(self, task_id: str, key: str, request: dict[str, Any]) -> TaskRecord | None:
        """Add a question for the client under ``key``; the task is ``input_required`` (unless it ended)."""

    @abstractmethod
    async def answer_task(self, task_id: str, responses: dict[str, Any]) -> TaskRecord | None:
        """Keep the answers to outstanding questions, which stop being outstanding (others are ignored).

        A task left with no question outstanding is ``working`` again. ``None`` if the task is gone.
        """

    @abstractmethod
    async def take_answers(self, task_id: str) -> dict[str, Any]:
        """The answers kept for the task, removed from it (the running replica takes them)."""

    @abstractmethod
    async def list_tasks(self, owner: str | None) -> list[TaskRecord]:
        """The live tasks of ``owner`` created through 2025-11-25 sessions, oldest first (``tasks/list``)."""


def check_changes(changes: dict[str, Any]) -> None:
    unknown = sorted(set(changes) - CHANGEABLE)
    if unknown:
        raise ValueError(f"update_task: cannot change {unknown}; the fields are {sorted(CHANGEABLE)}")
    status = changes.get("status")
    if status is not None and status not in STATUSES:
        raise ValueError(f"update_task: unknown status {status!r}; use one of {STATUSES}")


def apply_answers(record: TaskRecord, responses: dict[str, Any]) -> None:
    """Keep the answers for questions outstanding (spec: ignore the others), which are then answered."""
    if record.terminal:
        return
    for key, answer in responses.items():
        if key in record.input_requests:
            del record.input_requests[key]
            record.answers[key] = answer
    if record.status == "input_required" and not record.input_requests:
        record.status, record.status_message = "working", None
    record.updated_at = time.time()


class MemoryTaskStore(TaskStore):
    """Tasks in this process (one replica)."""

    def __init__(self) -> None:
        self._tasks: dict[str, tuple[TaskRecord, float]] = {}
        self._expiries: list[tuple[float, str]] = []
        """A heap of (expiry, id): the sweep looks only at what has expired."""

    def _live(self, task_id: str) -> TaskRecord | None:
        held = self._tasks.get(task_id)
        if held is None:
            return None
        if held[1] <= time.monotonic():
            del self._tasks[task_id]
            return None
        return held[0]

    def _purge(self) -> None:
        now, expiries = time.monotonic(), self._expiries
        while expiries and expiries[0][0] <= now:
            _, task_id = heapq.heappop(expiries)
            held = self._tasks.get(task_id)
            if held is not None and held[1] <= now:
                del self._tasks[task_id]

    async def create_task(self, record: TaskRecord) -> None:
        self._purge()
        expires = time.monotonic() + record.ttl_ms / 1000
        self._tasks[record.id] = (_snapshot(record), expires)
        heapq.heappush(self._expiries, (expires, record.id))

    async def get_task(self, task_id: str) -> TaskRecord | None:
        record = self._live(task_id)
        return _snapshot(record) if record is not None else None

    async def update_task(self, task_id: str, **changes: Any) -> TaskRecord | None:
        check_changes(changes)
        record = self._live(task_id)
        if record is None:
            return None
        if not record.terminal:
            for name, value in changes.items():
                setattr(record, name, value)
            record.updated_at = time.time()
            if record.terminal:
                record.input_requests, record.answers = {}, {}
        return _snapshot(record)

    async def ask(self, task_id: str, key: str, request: dict[str, Any]) -> TaskRecord | None:
        record = self._live(task_id)
        if record is None:
            return None
        if not record.terminal:
            record.input_requests[key] = request
            record.status = "input_required"
            record.updated_at = time.time()
        return _snapshot(record)

    async def answer_task(self, task_id: str, responses: dict[str, Any]) -> TaskRecord | None:
        record = self._live(task_id)
        if record is None:
            return None
        apply_answers(record, responses)
        return _snapshot(record)

    async def take_answers(self, task_id: str) -> dict[str, Any]:
        record = self._live(task_id)
        if record is None:
            return {}
        answers, record.answers = record.answers, {}
        return answers

    async def list_tasks(self, owner: str | None) -> list[TaskRecord]:
        self._purge()
        found = [record for record, _ in self._tasks.values() if not record.modern and record.owner == owner]
        return [_snapshot(record) for record in sorted(found, key=lambda record: record.created_at)]


def _snapshot(record: TaskRecord) -> TaskRecord:
    """A copy whose own dicts can change without changing ``record`` (the values in them are shared)."""
    return dataclasses.replace(record, input_requests=dict(record.input_requests), answers=dict(record.answers))
