"""The task store contract (``toolkit._store.tasks``), run against every implementation.

``MemoryStore().tasks()`` (one process) and ``RedisStore(url).tasks()`` (a REAL ``redis-server``,
no mocks) must behave alike: a created task is found at once (by another replica too), a
terminal task never changes again, answers are kept only for outstanding questions and taken
once, a task is gone after its TTL, ``list_tasks`` shows one owner's 2025-11-25 tasks.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from tests.support.redis_rig import RedisServer, redis_server, replica_stores

from toolkit._store.tasks import TaskRecord, TaskStore

pytestmark = pytest.mark.timeout(15)


@pytest.fixture(scope="module")
def redis() -> Iterator[RedisServer]:
    with redis_server() as server:
        yield server


@pytest.fixture(params=["memory", "redis"])
async def stores(request: pytest.FixtureRequest) -> AsyncIterator[tuple[TaskStore, TaskStore]]:
    """Two replicas' task stores of one deployment (a memory store is its only replica)."""
    async with replica_stores(request) as (one, other):
        yield one.tasks(), other.tasks()


def record(task_id: str = "t1", *, owner: str | None = "caller:ada", modern: bool = False, **fields: Any) -> TaskRecord:
    values: dict[str, Any] = {
        "id": task_id,
        "owner": owner,
        "modern": modern,
        "version": "2026-07-28" if modern else "2025-11-25",
        "tool": "report",
        "ttl_ms": 60_000,
        "poll_interval_ms": 500,
        "replica": "r1",
    }
    values.update(fields)
    return TaskRecord(**values)


QUESTION = {"method": "elicitation/create", "params": {"message": "Name?", "requestedSchema": {"type": "object"}}}


async def test_a_created_task_is_found_by_every_replica_as_it_was_made(stores: tuple[TaskStore, TaskStore]) -> None:
    one, two = stores
    made = record(created_at=1_700_000_000.25)
    await one.create_task(made)
    found = await two.get_task("t1")
    assert found == made
    assert found is not made
    assert await two.get_task("unknown") is None


async def test_updates_apply_until_the_task_ends_then_nothing_changes_it(stores: tuple[TaskStore, TaskStore]) -> None:
    one, two = stores
    await one.create_task(record())
    working = await one.update_task("t1", status_message="1/2", poll_interval_ms=700)
    assert working is not None
    assert (working.status, working.status_message, working.poll_interval_ms) == ("working", "1/2", 700)
    assert working.updated_at >= working.created_at
    result = {"content": [], "structuredContent": {"x": 0.1 + 0.2, "big": 2**53 + 1}, "isError": False}
    done = await two.update_task("t1", status="completed", result=result, status_message=None)
    assert done is not None
    assert done.status == "completed"
    assert done.result == result, "a result comes back exactly (no number rounded, an empty list stays a list)"
    late = await one.update_task("t1", status="cancelled", status_message="too late")
    assert late is not None
    assert (late.status, late.status_message, late.result) == ("completed", None, result)
    assert await one.update_task("unknown", status="failed") is None


async def test_update_refuses_what_a_task_does_not_have(stores: tuple[TaskStore, TaskStore]) -> None:
    one, _ = stores
    await one.create_task(record())
    with pytest.raises(ValueError, match="cannot change"):
        await one.update_task("t1", owner="mallory")
    with pytest.raises(ValueError, match="cannot change"):
        await one.update_task("t1", input_requests={})
    with pytest.raises(ValueError, match="unknown status"):
        await one.update_task("t1", status="paused")


async def test_a_question_waits_until_answered_and_the_answer_is_taken_once(
    stores: tuple[TaskStore, TaskStore],
) -> None:
    one, two = stores
    await one.create_task(record())
    unasked = await two.answer_task("t1", {"q": {"action": "accept"}})
    assert unasked is not None
    assert unasked.status == "working"
    assert await one.take_answers("t1") == {}, "no question was outstanding: the answer is ignored"
    await one.ask("t1", "q", QUESTION)
    asking = await one.ask("t1", "r", QUESTION)
    assert asking is not None
    assert (asking.status, asking.input_requests) == ("input_required", {"q": QUESTION, "r": QUESTION})
    partly = await two.answer_task("t1", {"q": {"action": "accept", "content": {"n": 1.5}}, "other": {"action": "x"}})
    assert partly is not None
    assert (partly.status, partly.input_requests) == ("input_required", {"r": QUESTION}), "q is answered at once"
    assert partly.answers == {"q": {"action": "accept", "content": {"n": 1.5}}}
    again = await two.answer_task("t1", {"q": {"action": "decline"}})  # answered already: ignored
    assert again is not None
    assert again.answers == {"q": {"action": "accept", "content": {"n": 1.5}}}
    assert await one.take_answers("t1") == {"q": {"action": "accept", "content": {"n": 1.5}}}
    assert await one.take_answers("t1") == {}
    answered = await two.answer_task("t1", {"r": {"action": "cancel"}})
    assert answered is not None
    assert (answered.status, answered.status_message, answered.input_requests) == ("working", None, {})
    assert await one.take_answers("t1") == {"r": {"action": "cancel"}}
    assert await two.answer_task("unknown", {"q": {}}) is None
    assert await two.ask("unknown", "q", QUESTION) is None
    assert await two.take_answers("unknown") == {}


async def test_an_ended_task_takes_no_question_and_keeps_none(stores: tuple[TaskStore, TaskStore]) -> None:
    one, two = stores
    await one.create_task(record())
    await one.ask("t1", "q", QUESTION)
    await two.answer_task("t1", {"q": {"action": "accept"}})
    await one.ask("t1", "r", QUESTION)
    cancelled = await two.update_task("t1", status="cancelled")
    assert cancelled is not None
    assert (cancelled.status, cancelled.input_requests, cancelled.answers) == ("cancelled", {}, {})
    after = await one.ask("t1", "s", QUESTION)
    assert after is not None
    assert (after.status, after.input_requests) == ("cancelled", {})
    await two.answer_task("t1", {"s": {"action": "accept"}})
    assert await one.take_answers("t1") == {}


async def test_a_task_is_gone_after_its_ttl(stores: tuple[TaskStore, TaskStore]) -> None:
    one, two = stores
    started = time.monotonic()
    await one.create_task(record(ttl_ms=1000))
    await one.create_task(record("t2", ttl_ms=60_000))
    found = await two.get_task("t1")
    assert found is not None or time.monotonic() - started > 1.0, "kept for its TTL"
    await asyncio.sleep(1.2)
    assert await two.get_task("t1") is None
    assert await two.update_task("t1", status="completed") is None
    assert [task.id for task in await two.list_tasks("caller:ada")] == ["t2"]


async def test_list_shows_one_owners_2025_tasks_oldest_first(stores: tuple[TaskStore, TaskStore]) -> None:
    one, two = stores
    now = time.time()
    await one.create_task(record("b", created_at=now + 1))
    await one.create_task(record("a", created_at=now))
    await one.create_task(record("other", owner="caller:bob"))
    await one.create_task(record("modern", modern=True))
    await one.create_task(record("anyone", owner=None))
    assert [task.id for task in await two.list_tasks("caller:ada")] == ["a", "b"]
    assert [task.id for task in await two.list_tasks("caller:bob")] == ["other"]
    assert [task.id for task in await two.list_tasks(None)] == ["anyone"]
    assert await two.list_tasks("caller:nobody") == []
