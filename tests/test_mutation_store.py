"""What the mutation run of ``toolkit/_store/base.py`` found unchecked (docs/contributing.md, "Mutation testing").

The store interface and the memory store (one replica, the default): what it hands out is a
copy, a touch keeps an idle session for the new ttl, its bus is quiet before start and after
close, each store names itself, a store URL is shown without its password, and the memory store
carries legacy sessions and tasks over the real HTTP wire. The store contract shared with Redis is
``tests/test_store.py``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import pytest
from tests.http_support import Legacy, Modern, serving

from toolkit import Context, Server
from toolkit._store.tasks import TaskRecord
from toolkit.stores import MemoryStore, RedisStore, SessionRecord

pytestmark = pytest.mark.timeout(20)

LONG = 60.0
"""A ttl (seconds) no test outlives."""
EXTENSION = "io.modelcontextprotocol/tasks"


async def test_a_record_given_or_handed_out_is_a_copy_down_to_its_subscriptions() -> None:
    store = MemoryStore()
    given = SessionRecord(id="s1", version="2025-11-25", subscriptions={"file:///a.txt"})
    assert await store.add_session(given, ttl=LONG, limit=10) is True
    given.subscriptions.add("file:///given-later.txt")

    loaded = await store.load_session("s1", ttl=LONG)
    assert loaded is not None
    assert loaded.subscriptions == {"file:///a.txt"}
    loaded.subscriptions.add("file:///changed-by-the-caller.txt")

    again = await store.load_session("s1", ttl=LONG)
    assert again is not None
    assert again.subscriptions == {"file:///a.txt"}, "the caller's change reached the stored session"
    # Only the store's methods change what it keeps.
    assert await store.subscribe("s1", "file:///b.txt", True) is True
    final = await store.load_session("s1", ttl=LONG)
    assert final is not None
    assert final.subscriptions == {"file:///a.txt", "file:///b.txt"}


async def test_a_touch_keeps_an_idle_session_for_the_ttl_it_gives() -> None:
    store = MemoryStore()
    assert await store.add_session(SessionRecord(id="busy", version="2025-11-25"), ttl=0.05, limit=10) is True
    assert await store.touch_session("busy", ttl=LONG) is True
    await asyncio.sleep(0.2)  # past the ttl it was added with
    assert await store.load_session("busy", ttl=LONG) is not None, "a touched session expired"
    assert await store.session_count() == 1


async def test_the_memory_bus_is_quiet_before_start_and_after_close(caplog: pytest.LogCaptureFixture) -> None:
    heard: list[dict[str, Any]] = []
    store = MemoryStore()
    with caplog.at_level(logging.DEBUG):
        await store.publish({"t": "before"})
        await store.start(heard.append)
        await store.publish({"t": "while"})
        await store.close()
        await store.publish({"t": "after"})
        for _ in range(3):  # what call_soon scheduled has run
            await asyncio.sleep(0)
    assert heard == [{"t": "while"}]
    assert [record.getMessage() for record in caplog.records if record.levelno >= logging.WARNING] == []


async def test_a_store_keeps_its_tasks_in_one_task_store_for_its_life() -> None:
    """``Store.tasks()`` (a store that keeps tasks in this process: the memory store, or a custom one)."""
    store = MemoryStore()
    tasks = store.tasks()
    assert tasks is store.tasks()
    record = TaskRecord(
        id="t1",
        owner="caller:ada",
        modern=True,
        version="2026-07-28",
        tool="report",
        ttl_ms=60_000,
        poll_interval_ms=500,
        replica=store.replica,
    )
    await tasks.create_task(record)
    found = await store.tasks().get_task("t1")
    assert found is not None
    assert (found.id, found.owner, found.tool, found.status) == ("t1", "caller:ada", "report", "working")


def test_each_store_names_itself_apart_from_every_other() -> None:
    stores = [MemoryStore(), MemoryStore(), RedisStore("redis://127.0.0.1:1/0"), RedisStore("redis://127.0.0.1:1/0")]
    names = [store.replica for store in stores]
    assert all(isinstance(name, str) and name for name in names)
    assert len(set(names)) == len(names)


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("redis://:s3cret@cache:6379/0", "redis://:***@cache:6379/0"),
        ("redis://ada:s3cret@cache:6379/0", "redis://ada:***@cache:6379/0"),
        ("rediss://ada:p@ss@cache:6380/1", "rediss://ada:***@cache:6380/1"),  # an "@" in the password
        ("redis://ada:@cache:6379/0", "redis://ada:***@cache:6379/0"),  # an empty password is one too
        ("redis://ada@cache:6379/0", "redis://ada@cache:6379/0"),  # a user without a password
        ("redis://cache:6379/0", "redis://cache:6379/0"),
        ("unix:///run/redis.sock?db=2", "unix:///run/redis.sock?db=2"),
    ],
)
def test_a_store_url_is_shown_without_its_password(url: str, shown: str) -> None:
    assert RedisStore(url).describe == f"Redis at {shown}"
    assert MemoryStore().describe == "memory"


def _server() -> Server:
    server = Server("memory-store")

    @server.tool
    def echo(text: str) -> str:
        """Says it back."""
        return text

    @server.tool(task="optional")
    async def double(n: int, ctx: Context) -> int:
        """Doubles, as a task when the client can take one."""
        return n * 2

    return server


async def test_the_default_memory_store_carries_legacy_sessions_and_tasks_over_http() -> None:
    async with serving(_server()) as http:
        legacy = await Legacy(http, "2025-11-25").open()
        reply = await legacy.call_tool("echo", {"text": "hi"})
        assert reply.result["content"] == [{"type": "text", "text": "hi"}]
        assert (await legacy.delete()).status == 204

        modern = Modern(http, capabilities={"extensions": {EXTENSION: {}}})
        created = (await modern.call_tool("double", {"n": 21})).result
        assert created["resultType"] == "task"
        task_id = created["taskId"]
        deadline = time.monotonic() + 10
        while True:
            task = (await modern.request("tasks/get", {"taskId": task_id})).result
            if task["status"] != "working":
                break
            assert time.monotonic() < deadline, f"the task did not end: {task}"
            await asyncio.sleep(0.02)
        assert task["status"] == "completed", task
        assert task["result"]["content"] == [{"type": "text", "text": "42"}]
