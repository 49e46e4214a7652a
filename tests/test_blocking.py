"""``blocking=``: where a plain ``def`` tool runs.

By default a plain function runs in a worker thread, so a blocking call in it holds up no other
request; ``blocking=False`` says it never blocks, and it is called on the event loop instead (no
thread hand-over). In-process through ``toolkit.testing.Client`` and over real HTTP.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time

import pytest
from tests.http_support import Legacy, Modern, ServeHttp

from toolkit import Server, ToolError
from toolkit.testing import Client


def make_server(seen: dict[str, int]) -> Server:
    server = Server("blocking-tests", version="1.0.0")

    @server.tool
    def in_thread() -> int:
        """Record the thread it ran in."""
        seen["in_thread"] = threading.get_ident()
        return 1

    @server.tool(blocking=False)
    def on_loop(n: int) -> list[int]:
        """Record the thread it ran in; return 0..n-1."""
        seen["on_loop"] = threading.get_ident()
        return list(range(n))

    @server.tool(blocking=False)
    def refuses() -> str:
        """Fail as a tool."""
        raise ToolError("no, thanks")

    @server.tool
    def sleeps(seconds: float) -> str:
        """Block its thread."""
        time.sleep(seconds)
        return "slept"

    return server


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
async def test_a_non_blocking_def_runs_on_the_event_loop_and_a_default_one_in_a_thread(version: str) -> None:
    seen: dict[str, int] = {}
    async with Client(make_server(seen), protocol_version=version) as client:
        loop_thread = threading.get_ident()
        on_loop = await client.call_tool("on_loop", {"n": 3})
        in_thread = await client.call_tool("in_thread", {})
        arguments_wrong = await client.call_tool("on_loop", {"n": "three"})
        refused = await client.call_tool("refuses", {})
    assert seen["on_loop"] == loop_thread
    assert seen["in_thread"] != loop_thread
    structured = on_loop["structuredContent"]
    assert structured == ([0, 1, 2] if version == "2026-07-28" else {"result": [0, 1, 2]})
    assert in_thread["content"][0]["text"] == "1"
    # Arguments are validated and errors answered exactly as for any tool.
    assert arguments_wrong["isError"] is True
    assert "n" in arguments_wrong["content"][0]["text"]
    assert refused["isError"] is True
    assert refused["content"][0]["text"] == "no, thanks"


def test_blocking_is_refused_for_an_async_function_naming_it() -> None:
    server = Server("blocking-tests")

    async def already_async() -> int:
        return 1

    with pytest.raises(ValueError, match=r"tool 'already_async': blocking= is for a plain def function"):
        server.add_tool(already_async, blocking=False)


async def test_a_default_def_still_does_not_hold_up_other_requests(mcp_http: ServeHttp) -> None:
    seen: dict[str, int] = {}
    http = await mcp_http(make_server(seen))
    modern = Modern(http)
    slow = asyncio.create_task(modern.call_tool("sleeps", {"seconds": 1.0}))
    await asyncio.sleep(0.1)
    quick = await modern.call_tool("on_loop", {"n": 2})
    # Proved by order: the quick call was answered while the blocking one still ran.
    assert not slow.done(), "a call waited for a blocking tool in another request"
    assert quick.result["structuredContent"] == [0, 1]
    assert (await slow).result["content"][0]["text"] == "slept"


async def test_a_non_blocking_def_over_http_in_both_eras(mcp_http: ServeHttp) -> None:
    seen: dict[str, int] = {}
    http = await mcp_http(make_server(seen))
    modern = await Modern(http).call_tool("on_loop", {"n": 2})
    legacy = await (await Legacy(http).open()).call_tool("on_loop", {"n": 2})
    assert modern.content_type == "application/json"
    assert modern.result["structuredContent"] == [0, 1]
    assert legacy.result["structuredContent"] == {"result": [0, 1]}


async def test_blocked_defs_hold_up_none_of_many_concurrent_calls(mcp_http: ServeHttp) -> None:
    """Under load: while some plain ``def`` calls block their threads, a crowd of other plain ``def``
    calls (each its own thread hop) and on-loop calls, all at once, are answered; then the blocked
    ones finish with their own results."""
    gate = threading.Event()
    server = Server("blocking-load")
    inside = threading.Semaphore(0)

    @server.tool
    def held(tag: int) -> int:
        """Block until the test opens the gate."""
        inside.release()
        if not gate.wait(60):
            raise RuntimeError("the gate was never opened")
        return tag

    @server.tool
    def echo(n: int) -> int:
        """Answer at once, in a worker thread."""
        return n * 2

    @server.tool(blocking=False)
    def on_loop(n: int) -> int:
        """Answer at once, on the event loop."""
        return n + 1

    http = await mcp_http(server)
    modern = Modern(http)
    blocked = [asyncio.create_task(modern.call_tool("held", {"tag": tag})) for tag in range(4)]
    try:
        for _ in range(4):  # every blocked call holds a worker thread before the crowd comes
            while not inside.acquire(blocking=False):
                await asyncio.sleep(0.01)
        quick = await asyncio.gather(
            *(modern.call_tool("echo", {"n": n}) for n in range(60)),
            *(modern.call_tool("on_loop", {"n": n}) for n in range(30)),
        )  # 94 requests in flight at once: under the server's 100 per client
        # Proved by order: all 90 were answered while the four still blocked their threads.
        assert not any(task.done() for task in blocked), "a call waited for a blocked def in another request"
        assert [reply.result["content"][0]["text"] for reply in quick] == [
            *(str(n * 2) for n in range(60)),
            *(str(n + 1) for n in range(30)),
        ]
    finally:
        gate.set()
    finished = await asyncio.gather(*blocked)
    assert [reply.result["content"][0]["text"] for reply in finished] == [str(tag) for tag in range(4)]


async def test_the_hop_keeps_context_exceptions_and_cancellation() -> None:
    """What a plain function in a worker thread sees and gives back (``in_worker_thread``, as
    ``invoke`` does it): the caller's context variables, its own exception with its traceback;
    cancelled while it runs, it runs to its end and its outcome is dropped; cancelled before a
    worker took it (every worker busy), it never runs."""
    from toolkit._functions import MAX_WORKER_THREADS, in_worker_thread

    var: contextvars.ContextVar[str] = contextvars.ContextVar("var", default="unset")
    var.set("the caller's")
    assert await in_worker_thread(var.get, {}) == "the caller's"

    class Failure(Exception):
        pass

    def fails() -> None:
        raise Failure("from the thread")

    with pytest.raises(Failure, match="from the thread") as failed:
        await in_worker_thread(fails, {})
    assert failed.traceback[-1].name == "fails"

    release, started, finished = threading.Event(), threading.Semaphore(0), threading.Event()

    def hold(then: threading.Event | None = None) -> str:
        started.release()
        if not release.wait(60):
            raise RuntimeError("never released")
        if then is not None:
            then.set()
        return "done"

    running = asyncio.create_task(in_worker_thread(hold, {"then": finished}))
    holders = [asyncio.create_task(in_worker_thread(hold, {})) for _ in range(MAX_WORKER_THREADS - 1)]
    for _ in range(MAX_WORKER_THREADS):  # every worker is inside hold()
        while not started.acquire(blocking=False):
            await asyncio.sleep(0.01)
    ran: list[str] = []

    def record() -> None:
        ran.append("ran")

    queued = asyncio.create_task(in_worker_thread(record, {}))
    await asyncio.sleep(0)
    running.cancel()
    queued.cancel()
    await asyncio.sleep(0)  # run_in_executor's way passed a cancellation on one loop iteration later
    release.set()
    assert await asyncio.gather(*holders) == ["done"] * (MAX_WORKER_THREADS - 1)
    with pytest.raises(asyncio.CancelledError):
        await running
    with pytest.raises(asyncio.CancelledError):
        await queued
    assert await in_worker_thread(lambda: "after", {}) == "after"  # queued after it: it was taken
    while not finished.is_set():  # the cancelled call runs to its end in its thread
        await asyncio.sleep(0.01)
    assert ran == []  # the one cancelled in the queue never ran
