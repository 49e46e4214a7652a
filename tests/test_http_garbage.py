"""A request answered over HTTP leaves nothing for the cycle collector, on the server or in the client.

Every object a request makes is freed by reference counting when it is answered; a reference
cycle among them (the exchange and its stream held each other) would leave the lot, uvicorn's
request cycle, the task and the scope with it, to the garbage collector, whose passes cost every
request they interrupt.
"""

from __future__ import annotations

import gc

import pytest
from tests.http_support import serve

from toolkit import Client, Context, Server


def _server() -> Server:
    server = Server("garbage")

    @server.tool
    def items(n: int) -> list[dict[str, int]]:
        return [{"i": i} for i in range(n)]

    @server.tool
    async def counted(n: int, ctx: Context) -> int:
        for i in range(n):
            await ctx.report_progress(i + 1, n)
        return n

    return server


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
async def test_an_answered_request_leaves_no_cycle_of_toolkits(version: str) -> None:
    async with serve(_server()) as running, Client(running.url, protocol_version=version) as client:
        assert (await client.call_tool("items", {"n": 3})).data == [{"i": 0}, {"i": 1}, {"i": 2}]
        gc.collect()
        gc.set_debug(gc.DEBUG_SAVEALL)
        try:
            for _ in range(20):
                assert len((await client.call_tool("items", {"n": 3})).data) == 3
            gc.collect()
            left = sorted({f"{type(o).__module__}.{type(o).__qualname__}" for o in gc.garbage})
        finally:
            gc.set_debug(0)
            gc.garbage.clear()
    assert [name for name in left if name.startswith("toolkit.")] == []


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
async def test_a_request_answered_on_an_sse_stream_leaves_no_cycle_of_toolkits(version: str) -> None:
    """Progress first: the answer is a stream, carried by a task of the exchange's."""
    heard: list[float] = []

    def progress(done: float, total: float | None, message: str | None) -> None:
        heard.append(done)

    async with serve(_server()) as running, Client(running.url, protocol_version=version) as client:
        assert (await client.call_tool("counted", {"n": 2}, progress=progress)).data == 2
        gc.collect()
        gc.set_debug(gc.DEBUG_SAVEALL)
        try:
            for _ in range(10):
                assert (await client.call_tool("counted", {"n": 2}, progress=progress)).data == 2
            gc.collect()
            left = sorted({f"{type(o).__module__}.{type(o).__qualname__}" for o in gc.garbage})
        finally:
            gc.set_debug(0)
            gc.garbage.clear()
    assert heard == [1, 2] * 11
    assert [name for name in left if name.startswith("toolkit.")] == []
