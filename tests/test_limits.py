"""Limits: every one refuses with a clear error, at the edge it names, and the server serves on.

- HTTP body size (``http_app(max_body_bytes=...)``, default 4 MiB): 413 in both eras.
- stdio message size (``serve_stdio(max_message_bytes=...)``, default 4 MiB): one -32600.
- ``Server(max_concurrent_requests=N)``: the request beyond N is refused at once (-32603 with
  ``data.reason == "busy"``; HTTP 503), and served again once a slot frees.
- ``@server.tool(timeout=...)`` / ``Server(tool_timeout=...)``: the tool is cancelled and the
  client gets an ``isError`` result.
- ``http_app(max_sessions=..., session_idle_timeout=...)``: 503 on ``initialize`` at the cap;
  an expired session answers 404 (2025-11-25 basic/transports, "Session Management" 3).
- ``Server(max_argument_depth=...)`` and argument schemas: pathological arguments get a clear,
  bounded ``isError`` result, and they never stall the requests of other clients.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import textwrap
import threading
from pathlib import Path
from typing import Annotated, Any

import httpx
import pytest
from pydantic import Field
from tests.http_support import ACCEPT_BOTH, LEGACY, MODERN, Legacy, Modern, Reply, ServeHttp, serve
from tests.support.memory_stdio import MemoryStdio
from tests.support.processes import PYTHON, REPO
from tests.support.waiting import hang_until_cancelled
from tests.wire import assert_valid

from toolkit import Server


class Probe:
    def __init__(self) -> None:
        self.started = 0
        self.all_started = asyncio.Event()
        self.expected = 0
        self.release = asyncio.Event()
        self.cancelled = asyncio.Event()
        self.thread_release = threading.Event()
        self.thread_done = threading.Event()

    def expect(self, count: int) -> None:
        self.started = 0
        self.expected = count
        self.all_started.clear()
        self.release.clear()


def make_server(probe: Probe, **options: Any) -> Server:
    server = Server("limits", version="1.0.0", **options)

    @server.tool
    async def gate() -> str:
        """Wait until the test releases it."""
        probe.started += 1
        if probe.started >= probe.expected:
            probe.all_started.set()
        await probe.release.wait()
        return "released"

    @server.tool
    def quick() -> str:
        """Answer at once."""
        return "quick"

    @server.tool(timeout=0.3)
    async def stuck() -> str:
        """Never finish on its own (0.3 s timeout)."""
        await hang_until_cancelled(probe.cancelled)

    @server.tool
    async def stuck_default() -> str:
        """Never finish on its own (the server's default timeout applies)."""
        await hang_until_cancelled(probe.cancelled)

    @server.tool(timeout=5)
    async def patient(seconds: float) -> str:
        """Sleep, within its own 5 s timeout."""
        await asyncio.sleep(seconds)
        return "patient"

    @server.tool(timeout=0.3)
    def stuck_sync() -> str:
        """Block a worker thread until the test releases it (0.3 s timeout)."""
        probe.thread_release.wait(30)
        probe.thread_done.set()
        return "late"

    @server.tool
    def short(text: Annotated[str, Field(max_length=10)]) -> int:
        """At most 10 characters."""
        return len(text)

    @server.tool
    def few(values: Annotated[list[int], Field(max_length=10)]) -> int:
        """At most 10 integers."""
        return len(values)

    @server.tool
    def ints(values: list[int]) -> int:
        """Any number of integers."""
        return sum(values)

    @server.tool
    def anything(value: Any = None) -> str:
        """Any JSON value."""
        return "accepted"

    # The stall tests' tools run on the event loop: with no worker thread to wait for, which call
    # is answered first depends only on how the server schedules its work, never on timing.

    @server.tool
    async def quick_async() -> str:
        """Answer at once, on the event loop."""
        return "quick"

    @server.tool
    async def ints_async(values: list[int]) -> int:
        """Any number of integers, on the event loop."""
        return sum(values)

    @server.tool
    async def anything_async(value: Any = None) -> str:
        """Any JSON value, on the event loop."""
        return "accepted"

    return server


def tool_text(result: dict[str, Any]) -> str:
    return "".join(block.get("text", "") for block in result["content"])


def nest(levels: int) -> Any:
    value: Any = 0
    for _ in range(levels):
        value = [value]
    return value


def arguments_of_depth(depth: int) -> dict[str, Any]:
    """An arguments object whose JSON nests exactly ``depth`` containers deep (itself included)."""
    return {"value": nest(depth - 1)}


# --- HTTP body size --------------------------------------------------------------------------


async def test_legacy_body_limit_is_413_and_the_session_survives(mcp_http: ServeHttp) -> None:
    limit = 4096
    http = await mcp_http(make_server(Probe()), max_body_bytes=limit)
    session = await Legacy(http).open()
    body = session.body("tools/call", {"name": "short", "arguments": {"text": "x"}}, id="big")
    encoded = json.dumps(body).encode()
    headers = {key: value for key, value in session.headers().items() if value is not None}

    exact = encoded + b" " * (limit - len(encoded))
    fits = await http.send(version=LEGACY, content=exact, headers=headers)
    assert fits.status == 200 and fits.result["structuredContent"] == {"result": 1}

    declared = await http.send(version=LEGACY, content=exact + b" ", headers=headers)
    assert declared.status == 413
    assert declared.message["error"]["code"] == -32600
    assert str(limit) in declared.message["error"]["message"]

    async def chunks() -> Any:
        for _ in range(10):
            yield b" " * 512
        yield encoded

    chunked = await http.http.post(
        http.url, content=chunks(), headers={**headers, "Content-Type": "application/json", "Accept": ACCEPT_BOTH}
    )
    assert "content-length" not in chunked.request.headers
    assert chunked.status_code == 413
    assert_valid(chunked.json(), LEGACY)
    assert (await session.request("ping")).status == 200, "a refused body does not end the session"


@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_default_body_limit_is_4_mib(mcp_http: ServeHttp, era: str) -> None:
    http = await mcp_http(make_server(Probe()))
    client: Modern | Legacy = Modern(http) if era == "modern" else await Legacy(http).open()
    limit = 4 * 1024 * 1024
    body = client.body("tools/call", {"name": "anything", "arguments": {"value": "x"}}, id="default-limit")
    encoded = json.dumps(body).encode()
    headers = client.headers_for(body) if isinstance(client, Modern) else client.headers()
    version = MODERN if era == "modern" else LEGACY
    fits = await http.send(version=version, content=encoded + b" " * (limit - len(encoded)), headers=headers)
    assert fits.status == 200, fits.messages
    too_big = await http.send(version=version, content=encoded + b" " * (limit + 1 - len(encoded)), headers=headers)
    assert too_big.status == 413
    assert too_big.message["error"]["code"] == -32600


# --- stdio message size ----------------------------------------------------------------------


def _frame(request_id: str, pad: int = 0) -> bytes:
    message = {"jsonrpc": "2.0", "id": request_id, "method": "ping", "params": {"pad": "p" * pad}}
    return json.dumps(message, separators=(",", ":")).encode()


def _frame_of_size(request_id: str, size: int) -> bytes:
    base = len(_frame(request_id))
    frame = _frame(request_id, size - base)
    assert len(frame) == size
    return frame


async def test_stdio_over_long_line_gets_one_error_and_the_next_line_is_served() -> None:
    limit = 1024
    async with MemoryStdio(make_server(Probe()), max_message_bytes=limit) as stdio:
        stdio.send_raw(_frame_of_size("at-limit", limit) + b"\n")
        assert await stdio.result("at-limit") == {}
        stdio.send_raw(_frame_of_size("over", limit + 1) + b"\n" + _frame("next") + b"\n")
        assert await stdio.result("next") == {}
        errors = [m for m in stdio.messages if "error" in m]
        assert len(errors) == 1
        assert errors[0]["error"]["code"] == -32600
        assert str(limit) in errors[0]["error"]["message"]
        assert_valid(errors[0], MODERN)
        assert stdio.responses_to("over") == []


async def test_stdio_over_long_line_in_small_chunks_gets_one_error() -> None:
    limit = 1024
    async with MemoryStdio(make_server(Probe()), max_message_bytes=limit) as stdio:
        huge = _frame_of_size("huge", 200_000)
        for start in range(0, len(huge), 333):
            stdio.send_raw(huge[start : start + 333])
        stdio.send_raw(b"\n" + _frame("after") + b"\n")
        assert await stdio.result("after") == {}
        assert [m["error"]["code"] for m in stdio.messages if "error" in m] == [-32600]


async def test_stdio_over_long_lines_interleaved_with_good_ones_keep_their_order() -> None:
    limit = 512
    async with MemoryStdio(make_server(Probe()), max_message_bytes=limit) as stdio:
        frames = [_frame("a"), _frame_of_size("x1", 600), _frame("b"), _frame_of_size("x2", 5000), _frame("c")]
        stdio.send_raw(b"\n".join(frames) + b"\n")
        for request_id in ("a", "b", "c"):
            await stdio.result(request_id)
        kinds = ["error" if "error" in m else m["id"] for m in stdio.messages]
        assert kinds.count("error") == 2
        assert sorted(kinds) == sorted(["a", "error", "b", "error", "c"])


async def test_stdio_over_long_last_line_without_newline_gets_an_error() -> None:
    limit = 256
    stdio = MemoryStdio(make_server(Probe()), max_message_bytes=limit)
    async with stdio:
        stdio.send_raw(_frame("first") + b"\n" + _frame_of_size("tail", 2000))
    assert [m.get("id") for m in stdio.messages if "result" in m] == ["first"]
    assert [m["error"]["code"] for m in stdio.messages if "error" in m] == [-32600]


STDIO_LIMIT_APP = """
import sys

from toolkit import Server

server = Server("stdio-limit")

if __name__ == "__main__":
    server.run("stdio", max_message_bytes=int(sys.argv[1]))
"""


def test_server_run_stdio_honours_max_message_bytes(tmp_path: Path) -> None:
    app = tmp_path / "stdio_limit.py"
    app.write_text(textwrap.dedent(STDIO_LIMIT_APP))
    limit = 2000
    frames = [_frame_of_size("fits", limit), _frame_of_size("too-long", limit + 1), _frame("after")]
    completed = subprocess.run(
        [str(PYTHON), str(app), str(limit)],
        input=b"\n".join(frames) + b"\n",
        capture_output=True,
        timeout=30,
        cwd=REPO,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr.decode()[-2000:]
    messages = [json.loads(line) for line in completed.stdout.splitlines()]
    assert [m.get("id") for m in messages if "result" in m] == ["fits", "after"]
    errors = [m for m in messages if "error" in m]
    assert len(errors) == 1 and errors[0]["error"]["code"] == -32600 and "id" not in errors[0]


# --- concurrency limit -----------------------------------------------------------------------


def _assert_busy(message: dict[str, Any], request_id: Any, limit: int) -> None:
    error = message["error"]
    assert message["id"] == request_id
    assert error["code"] == -32603
    assert error["data"] == {"reason": "busy", "limit": limit}
    assert "busy" in error["message"].lower()


@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_stdio_concurrency_limit(era: str) -> None:
    probe = Probe()
    limit = 3
    async with MemoryStdio(make_server(probe, max_concurrent_requests=limit)) as stdio:
        modern = era == "modern"
        if not modern:
            await stdio.initialize(LEGACY)
        probe.expect(limit)
        gates = [stdio.call("gate", modern=modern) for _ in range(limit)]
        await asyncio.wait_for(probe.all_started.wait(), 5)
        refused = stdio.call("quick", modern=modern)
        # "At once", proved by order, not by a clock: the gates are released only after the
        # refusal has arrived, so it cannot have waited for a slot to free.
        busy = await stdio.response(refused)
        assert [stdio.responses_to(request_id) for request_id in gates] == [[]] * limit
        _assert_busy(busy, refused, limit)
        assert_valid(busy, MODERN if modern else LEGACY)
        probe.release.set()
        for request_id in gates:
            assert tool_text(await stdio.result(request_id)) == "released"
        again = stdio.call("quick", modern=modern)
        assert tool_text(await stdio.result(again)) == "quick", "served again once the slots free"


async def _hold(coroutines: list[Any], probe: Probe, count: int) -> list[asyncio.Task[Reply]]:
    probe.expect(count)
    tasks = [asyncio.create_task(coroutine) for coroutine in coroutines]
    await asyncio.wait_for(probe.all_started.wait(), 5)
    return tasks


async def test_legacy_session_concurrency_limit_is_503_per_session(mcp_http: ServeHttp) -> None:
    probe = Probe()
    limit = 2
    http = await mcp_http(make_server(probe, max_concurrent_requests=limit))
    busy_session = await Legacy(http).open()
    other_session = await Legacy(http).open()
    held = await _hold([busy_session.call_tool("gate") for _ in range(limit)], probe, limit)
    # "At once", proved by order: the held calls are released only after the refusal arrived.
    refused = await busy_session.call_tool("quick", id="over-the-limit")
    assert not any(task.done() for task in held), "the held calls are still in flight"
    assert refused.status == 503
    _assert_busy(refused.message, "over-the-limit", limit)
    other = await other_session.call_tool("quick")
    assert other.status == 200 and tool_text(other.result) == "quick", "the limit is per session"
    probe.release.set()
    for task in held:
        assert tool_text((await task).result) == "released"
    assert (await busy_session.call_tool("quick")).status == 200


async def test_modern_concurrency_limit_is_503_with_retry_after(mcp_http: ServeHttp) -> None:
    probe = Probe()
    limit = 2
    http = await mcp_http(make_server(probe, max_concurrent_requests=limit))
    modern = Modern(http)
    held = await _hold([modern.call_tool("gate") for _ in range(limit)], probe, limit)
    # "At once", proved by order: the held calls are released only after the refusal arrived.
    refused = await modern.call_tool("quick", id="modern-over")
    assert not any(task.done() for task in held), "the held calls are still in flight"
    assert refused.status == 503
    assert refused.headers.get("retry-after") is not None
    _assert_busy(refused.message, "modern-over", limit)
    probe.release.set()
    for task in held:
        assert tool_text((await task).result) == "released"
    assert (await modern.call_tool("quick")).status == 200


async def test_open_listen_streams_do_not_count_as_requests_in_flight() -> None:
    """A 2026-07-28 subscriptions/listen is a stream held open (like a legacy GET stream): more
    listeners than max_concurrent_requests are served, and a call still answers beside them; the
    listeners are bounded by max_sessions, the bound of the legacy era's held-open streams."""
    limit = 2
    server = Server("listened", max_concurrent_requests=limit)
    listeners = limit + 2

    @server.tool
    def quick() -> str:
        return "quick"

    headers = {
        "content-type": "application/json",
        "accept": ACCEPT_BOTH,
        "mcp-protocol-version": MODERN,
        "mcp-method": "subscriptions/listen",
    }
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
    async with (
        serve(server, max_sessions=listeners) as running,
        httpx.AsyncClient(timeout=30) as http,
        contextlib.AsyncExitStack() as held,
    ):
        readers: list[Any] = []
        for number in range(listeners + 1):
            body = {
                "jsonrpc": "2.0",
                "id": number,
                "method": "subscriptions/listen",
                "params": {"_meta": meta, "notifications": {"toolsListChanged": True}},
            }
            stream = await held.enter_async_context(http.stream("POST", running.url, json=body, headers=headers))
            if number == listeners:  # one past max_sessions
                assert stream.status_code == 503 and stream.headers.get("retry-after") is not None
                _assert_busy(json.loads(await stream.aread()), number, listeners)
                break
            assert stream.status_code == 200, number
            lines = stream.aiter_lines()
            readers.append(lines)  # kept: a reader collected would close its stream
            async for line in lines:  # the acknowledgement: the listener is open
                if line.startswith("data:"):
                    assert json.loads(line[5:])["method"] == "notifications/subscriptions/acknowledged"
                    break
        call = {"jsonrpc": "2.0", "id": "call", "method": "tools/call", "params": {"name": "quick", "_meta": meta}}
        answer = await http.post(
            running.url, json=call, headers={**headers, "mcp-method": "tools/call", "mcp-name": "quick"}
        )
        assert answer.status_code == 200, answer.text
        assert answer.json()["result"]["content"] == [{"type": "text", "text": "quick"}]


# --- tool timeouts ---------------------------------------------------------------------------


def _assert_timed_out(result: dict[str, Any], tool: str, seconds: float) -> None:
    assert result["isError"] is True
    assert "structuredContent" not in result
    assert tool_text(result) == f"Tool {tool!r} timed out after {seconds:g} s"


@pytest.mark.parametrize("transport", ["stdio", "legacy", "modern"])
async def test_tool_timeout_cancels_the_tool_and_answers_is_error(mcp_http: ServeHttp, transport: str) -> None:
    # Ordering against the server's own clock, not a wall-clock bound: `stuck` (0.3 s timeout) is
    # answered while `patient`, a 2 s sleep sent right after it, is still sleeping; so its answer
    # came from its own timeout, not from a longer one (or from none: then it never comes).
    probe = Probe()
    server = make_server(probe)
    late = "the 0.3 s timeout answered only after a 2 s sleep that started after it"
    if transport == "stdio":
        async with MemoryStdio(server) as stdio:
            stuck, patient = stdio.call("stuck"), stdio.call("patient", {"seconds": 2})
            result = await stdio.result(stuck)
            assert stdio.responses_to(patient) == [], late
            assert tool_text(await stdio.result(patient)) == "patient"
    else:
        http = await mcp_http(server)
        client: Modern | Legacy = Modern(http) if transport == "modern" else await Legacy(http).open()
        stuck_call = asyncio.create_task(client.call_tool("stuck"))
        patient_call = asyncio.create_task(client.call_tool("patient", {"seconds": 2}))
        result = (await stuck_call).result
        assert not patient_call.done(), late
        assert tool_text((await patient_call).result) == "patient"
    _assert_timed_out(result, "stuck", 0.3)
    assert probe.cancelled.is_set(), "the timeout must cancel the tool, not merely stop waiting for it"


async def test_server_tool_timeout_is_the_default_and_a_tool_may_override_it() -> None:
    probe = Probe()
    server = make_server(probe, tool_timeout=0.3)
    async with MemoryStdio(server) as stdio:
        stuck = stdio.call("stuck_default")
        patient = stdio.call("patient", {"seconds": 0.6})
        _assert_timed_out(await stdio.result(stuck), "stuck_default", 0.3)
        assert probe.cancelled.is_set()
        assert tool_text(await stdio.result(patient)) == "patient", "timeout=5 overrides tool_timeout=0.3"


async def test_sync_tool_timeout_answers_without_waiting_for_the_thread() -> None:
    probe = Probe()
    try:
        async with MemoryStdio(make_server(probe)) as stdio:
            # Proved by order, not by a clock: the thread is released only after the answer
            # (and the next call's) arrived, so neither waited for it.
            result = await stdio.result(stdio.call("stuck_sync"))
            _assert_timed_out(result, "stuck_sync", 0.3)
            assert tool_text(await stdio.result(stdio.call("quick"))) == "quick"
            assert not probe.thread_done.is_set(), "the thread is still blocked"
    finally:
        probe.thread_release.set()


async def test_a_timed_out_call_frees_its_concurrency_slot() -> None:
    probe = Probe()
    async with MemoryStdio(make_server(probe, max_concurrent_requests=1)) as stdio:
        _assert_timed_out(await stdio.result(stdio.call("stuck")), "stuck", 0.3)
        assert tool_text(await stdio.result(stdio.call("quick"))) == "quick"


# --- legacy sessions: cap and idle expiry ----------------------------------------------------


async def test_session_cap_is_503_on_initialize_and_frees_on_delete(mcp_http: ServeHttp) -> None:
    http = await mcp_http(make_server(Probe()), max_sessions=2)
    first = await Legacy(http).open()
    await Legacy(http).open()
    third = Legacy(http)
    body = third.body(
        "initialize",
        {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
        id="third",
    )
    refused = await http.send(version=LEGACY, body=body)
    assert refused.status == 503
    assert "mcp-session-id" not in refused.headers
    assert refused.message["id"] == "third"
    assert "2 sessions" in refused.message["error"]["message"]
    assert (await first.request("ping")).status == 200, "existing sessions keep working"
    assert (await first.delete()).status == 204
    await Legacy(http).open()


async def test_idle_sessions_expire_and_then_answer_404(mcp_http: ServeHttp) -> None:
    app = make_server(Probe()).http_app(session_idle_timeout=2.0)
    http = await mcp_http(app)
    idle = await Legacy(http).open()
    active = await Legacy(http).open()
    # 2.4 s: the idle session passes its timeout; the active one, used every 0.3 s (a busy
    # machine's late wake-up stays far inside 2 s), never does
    for _ in range(8):
        await asyncio.sleep(0.3)
        assert (await active.request("ping")).status == 200
    await app.state.mcp.reap_idle()
    assert (await idle.request("ping")).status == 404
    assert (await idle.notify("notifications/roots/list_changed")).status == 404
    async with idle.listen() as stream:
        assert stream.status == 404
    assert (await idle.delete()).status == 404
    assert (await active.request("ping")).status == 200, "a session used within the timeout lives on"


async def test_a_session_with_a_request_in_flight_is_not_reaped(mcp_http: ServeHttp) -> None:
    probe = Probe()
    app = make_server(probe).http_app(session_idle_timeout=0.2)
    http = await mcp_http(app)
    session = await Legacy(http).open()
    held = await _hold([session.call_tool("gate")], probe, 1)
    await asyncio.sleep(0.4)
    await app.state.mcp.reap_idle()
    probe.release.set()
    assert tool_text((await held[0]).result) == "released", "reaping must not cancel a request in flight"


async def test_the_background_reaper_expires_idle_sessions(mcp_http: ServeHttp) -> None:
    http = await mcp_http(make_server(Probe()), session_idle_timeout=0.2)
    session = await Legacy(http).open()
    await asyncio.sleep(2.2)  # the reaper looks every max(1 s, timeout / 4)
    assert (await session.request("ping")).status == 404


async def test_at_the_cap_an_expired_session_makes_room(mcp_http: ServeHttp) -> None:
    http = await mcp_http(make_server(Probe()), max_sessions=1, session_idle_timeout=0.2)
    old = await Legacy(http).open()
    await asyncio.sleep(0.4)
    await Legacy(http).open()
    assert (await old.request("ping")).status == 404


# --- pathological arguments ------------------------------------------------------------------


@pytest.mark.parametrize(("limit", "options"), [(64, {}), (8, {"max_argument_depth": 8})])
async def test_argument_depth_limit_is_exact_and_clear(limit: int, options: dict[str, Any]) -> None:
    async with MemoryStdio(make_server(Probe(), **options)) as stdio:
        accepted = await stdio.result(stdio.call("anything", arguments_of_depth(limit)))
        assert accepted.get("isError") is not True and tool_text(accepted) == "accepted"
        refused = await stdio.result(stdio.call("anything", arguments_of_depth(limit + 1)))
        assert refused["isError"] is True
        assert tool_text(refused) == f"Invalid arguments for tool 'anything': nested deeper than {limit} levels"


@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_argument_depth_limit_over_http(mcp_http: ServeHttp, era: str) -> None:
    http = await mcp_http(make_server(Probe(), max_argument_depth=10))
    client: Modern | Legacy = Modern(http) if era == "modern" else await Legacy(http).open()
    refused = await client.call_tool("anything", arguments_of_depth(11))
    assert refused.status == 200
    assert refused.result["isError"] is True
    assert "nested deeper than 10 levels" in tool_text(refused.result)
    assert (await client.call_tool("anything", arguments_of_depth(10))).result.get("isError") is not True


BOUNDED = 10_000
"""Characters an error result may take to say what is wrong with one argument."""


@pytest.mark.parametrize(
    ("tool", "arguments", "says"),
    [
        ("short", {"text": "x" * 3_000_000}, "10"),
        ("few", {"values": list(range(300_000))}, "10"),
    ],
    ids=["megabyte-string-over-max-length", "huge-array-over-max-items"],
)
async def test_oversized_arguments_get_a_clear_bounded_error(tool: str, arguments: dict[str, Any], says: str) -> None:
    async with MemoryStdio(make_server(Probe())) as stdio:
        result = await stdio.result(stdio.call(tool, arguments))
        assert result["isError"] is True
        text = tool_text(result)
        assert text.startswith(f"Invalid arguments for tool {tool!r}")
        assert says in text
        assert len(text) < BOUNDED, (
            f"the error repeats the {len(json.dumps(arguments))}-byte argument back ({len(text)} characters): "
            "an error result should say what is wrong, not echo megabytes into the model's context"
        )


async def test_huge_valid_arrays_are_accepted() -> None:
    async with MemoryStdio(make_server(Probe())) as stdio:
        values = list(range(200_000))
        result = await stdio.result(stdio.call("ints", {"values": values}))
        assert result["structuredContent"] == sum(values)


PATHOLOGICAL = {
    "300k-invalid-items": ("ints_async", {"values": ["x"] * 300_000}),
    "wide-and-deep-value": ("anything_async", {"value": [[[[0]]]] * 300_000}),
}


# "Does not stall" is proved by order, not by a time bound a loaded machine would break: a trivial
# call that is in the server when a pathological one arrives is answered first. A server that
# checked the pathological arguments in one go would answer them first.


@pytest.mark.parametrize("case", list(PATHOLOGICAL), ids=list(PATHOLOGICAL))
async def test_a_pathological_call_does_not_stall_a_fast_one_on_stdio(case: str) -> None:
    tool, arguments = PATHOLOGICAL[case]
    async with MemoryStdio(make_server(Probe())) as stdio:
        slow = stdio.call(tool, arguments)
        fast = stdio.call("quick_async")
        answer = await stdio.result(fast, timeout=60)
        await stdio.result(slow, timeout=60)
    assert tool_text(answer) == "quick"
    answered = [message["id"] for message in stdio.messages if message.get("id") in (slow, fast)]
    assert answered == [fast, slow], f"a trivial call was answered after one client's {case} call, behind it"


class HeldUntilBigBody:
    """An ASGI app around ``app``: small requests wait until it has read a big request's whole body.

    So a small request is in the server, ready to run, when the big one's arguments start being
    checked. ``answered`` lists "big" and "small" in the order the responses start.
    """

    def __init__(self, app: Any, over: int = 1024 * 1024) -> None:
        self.app = app
        self.over = over
        self.holding = asyncio.Event()  # a small request is waiting
        self.big_read = asyncio.Event()
        self.answered: list[str] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        length = int(dict(scope["headers"]).get(b"content-length", b"0"))
        kind = "big" if length > self.over else "small"
        if kind == "small" and scope["method"] == "POST":
            self.holding.set()
            await self.big_read.wait()

        async def receiving() -> dict[str, Any]:
            message: dict[str, Any] = await receive()
            if kind == "big" and message["type"] == "http.request" and not message.get("more_body"):
                self.big_read.set()
            return message

        async def sending(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                self.answered.append(kind)
            await send(message)

        return await self.app(scope, receiving, sending)


@pytest.mark.parametrize("case", list(PATHOLOGICAL), ids=list(PATHOLOGICAL))
async def test_a_pathological_call_does_not_stall_other_clients_over_http(mcp_http: ServeHttp, case: str) -> None:
    tool, arguments = PATHOLOGICAL[case]
    app = HeldUntilBigBody(make_server(Probe()).http_app(path="/mcp"))
    http = await mcp_http(app)
    attacker, bystander = Modern(http), Modern(http)
    body = attacker.body("tools/call", {"name": tool, "arguments": arguments})
    encoded = json.dumps(body).encode()
    assert len(encoded) > app.over
    trivial = asyncio.create_task(bystander.call_tool("quick_async"))
    async with asyncio.timeout(60):  # a deadline, not a delay
        await app.holding.wait()
    reply = await http.send(version=MODERN, content=encoded, headers=attacker.headers_for(body), timeout=60)
    answer = await trivial
    assert reply.status == 200
    assert tool_text(answer.result) == "quick"
    assert app.answered == ["small", "big"], f"another client's trivial call was answered after a {case} call"
