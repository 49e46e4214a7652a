"""``Correlator``: a request this side sends waits for the response with its id (both sides of the wire use it)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from toolkit._jsonrpc import Correlator, Response


class Failed(Exception):
    pass


def failure(kind: str, method: str, detail: Any) -> Exception:
    return Failed(kind, method, detail)


async def test_each_response_reaches_the_request_with_its_id() -> None:
    sent: list[dict[str, Any]] = []
    correlator = Correlator(failure, first_id=10)

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    first = asyncio.create_task(correlator.request("roots/list", None, send, 5))
    second = asyncio.create_task(correlator.request("sampling/createMessage", {"x": 1}, send, 5))
    while len(sent) < 2:
        await asyncio.sleep(0)
    assert [(m["id"], m["method"], m.get("params")) for m in sent] == [
        (10, "roots/list", None),
        (11, "sampling/createMessage", {"x": 1}),
    ]
    assert "params" not in sent[0]
    assert correlator.resolve(Response(11, {"two": 2}, None))
    assert correlator.resolve(Response(10, None, {"code": -1, "message": "no"}))
    assert await second == {"two": 2}
    with pytest.raises(Failed) as raised:
        await first
    assert raised.value.args == ("error", "roots/list", {"code": -1, "message": "no"})
    assert not correlator.resolve(Response(10, {}, None)), "answered already: nothing waits"
    assert not correlator.resolve(Response("unknown", {}, None))
    assert len(correlator) == 0


async def test_a_request_times_out_and_close_fails_the_rest() -> None:
    correlator = Correlator(failure)

    async def send(message: dict[str, Any]) -> None:
        pass

    with pytest.raises(Failed) as raised:
        await correlator.request("ping", None, send, 0.01)
    assert raised.value.args == ("timeout", "ping", 0.01)
    waiting = asyncio.create_task(correlator.request("ping", None, send, 60))
    while not len(correlator):
        await asyncio.sleep(0)
    correlator.close("the session ended")
    with pytest.raises(Failed) as raised:
        await waiting
    assert raised.value.args == ("closed", "ping", "the session ended")


async def test_a_response_delivered_while_sending_returns_at_once() -> None:
    """An in-process server answers inside ``send``: the result comes back (the fast path; its speed is benchmarked)."""
    correlator = Correlator(failure)

    async def send(message: dict[str, Any]) -> None:
        assert correlator.resolve(Response(message["id"], {"echo": message["method"]}, None))

    assert await correlator.request("ping", None, send, 0.0001) == {"echo": "ping"}
    assert len(correlator) == 0


async def test_a_request_given_up_on_is_reported_abandoned_and_an_answered_one_is_not() -> None:
    abandoned: list[tuple[Any, str]] = []
    correlator = Correlator(failure)

    async def send(message: dict[str, Any]) -> None:
        pass

    def report(request_id: Any, why: str) -> None:
        abandoned.append((request_id, why))

    with pytest.raises(Failed):
        await correlator.request("tools/call", {}, send, 0.01, report)
    waiting = asyncio.create_task(correlator.request("tools/call", {}, send, 5, report))
    await asyncio.sleep(0)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    answered = asyncio.create_task(correlator.request("ping", None, send, 5, report))
    await asyncio.sleep(0)
    assert correlator.resolve(Response(3, {}, None))
    assert await answered == {}
    assert abandoned == [(1, "no response within 0.01 s"), (2, "cancelled")]


async def test_a_correlator_that_never_waited_with_a_timeout_holds_no_deadline_queue() -> None:
    """A legacy session holds a correlator whether or not the server asks its client anything: its
    deadline queue (a deque: 600 bytes before the first entry) is made by the first timed request,
    and a close before that has nothing to clear."""
    correlator = Correlator(failure)

    async def answer_at_once(message: dict[str, Any]) -> None:
        correlator.resolve(Response(message["id"], {"ok": True}, None))

    assert correlator._deadlines is None
    assert await correlator.request("ping", None, answer_at_once, None) == {"ok": True}
    assert correlator._deadlines is None
    correlator.close("the session ended")

    async def answer_soon(message: dict[str, Any]) -> None:
        asyncio.get_running_loop().call_soon(correlator.resolve, Response(message["id"], {"late": 1}, None))

    assert await correlator.request("ping", None, answer_soon, 60) == {"late": 1}
    assert correlator._deadlines is not None and not correlator._deadlines


async def test_requests_answered_behind_a_slow_one_are_not_kept_until_it_ends() -> None:
    """The deadline queue is in the order sent: answered requests behind one still waiting (a slow
    call, a subscription given a timeout) were kept there, their results with them, until it ended."""
    correlator = Correlator(failure)

    async def send(message: dict[str, Any]) -> None:
        pass

    async def answer_soon(message: dict[str, Any]) -> None:
        asyncio.get_running_loop().call_soon(correlator.resolve, Response(message["id"], ["big"] * 100, None))

    slow = asyncio.create_task(correlator.request("tools/call", {}, send, 300))
    while not len(correlator):
        await asyncio.sleep(0)
    for _ in range(1000):
        assert await correlator.request("ping", None, answer_soon, 300) == ["big"] * 100
        assert correlator._deadlines is not None and len(correlator._deadlines) <= 2 * len(correlator) + 17
    assert not slow.done()
    assert correlator.resolve(Response(1, {"slow": True}, None))
    assert await slow == {"slow": True}
    waiting_ones = [entry for entry in correlator._deadlines if not entry[1].done()]
    assert waiting_ones == []
