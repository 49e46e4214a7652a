"""Faults: a tool that raises, hangs, is cancelled or exits never takes other requests down, and
shutting down drains what is in flight.

- Concurrent calls next to a raising, a hanging and a cancelled call all get their answers,
  on stdio, on a legacy HTTP session and on modern HTTP.
- A tool that calls ``sys.exit()`` (argparse does, on bad input) is an error result, not the
  end of the server: "the tool raises anything else → isError, masked" (ARCHITECTURE §6).
- Cancelling frees the request's concurrency slot (modern: closing the stream, 2026-07-28
  basic/patterns/cancellation; legacy: ``notifications/cancelled``).
- SIGTERM to an HTTP server lets in-flight requests finish and exits 0; past the grace period
  a request still running is answered with an error and the process still exits. JSON-RPC
  2.0 §4 ("the Server MUST reply with a Response") — which MCP requires of every message
  (2026-07-28 basic/index, "Messages") — leaves no room for a request that is silently dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import signal
import socket
import subprocess
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.http_support import LEGACY, MODERN, CliServer, Legacy, Modern, ServeHttp, connect, free_port
from tests.support.memory_stdio import MemoryStdio
from tests.support.processes import PYTHON, REPO, TOOLKIT
from tests.support.stdio import StdioClient
from tests.support.waiting import hang_until_cancelled
from tests.wire import assert_valid

from toolkit import Context, EventStore, Server


class Probe:
    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.cancelled = asyncio.Event()
        self.hung = 0
        self.all_hung = asyncio.Event()
        self.expected = 1

    def expect(self, count: int) -> None:
        self.hung = 0
        self.expected = count
        self.all_hung.clear()


def make_server(probe: Probe, **options: Any) -> Server:
    server = Server("faults", version="1.0.0", **options)

    @server.tool
    async def work(n: int) -> int:
        """Take a moment, then answer n."""
        await asyncio.sleep(0.01 * (n % 5))
        return n

    @server.tool
    def explode() -> str:
        """Fail unexpectedly."""
        raise RuntimeError("the disk at /srv/data is on fire")

    @server.tool
    async def hang(ctx: Context) -> str:
        """Wait until cancelled (after one progress notification)."""
        await ctx.report_progress(1)
        probe.started.set()
        probe.hung += 1
        if probe.hung >= probe.expected:
            probe.all_hung.set()
        await hang_until_cancelled(probe.cancelled)

    return server


def tool_text(result: dict[str, Any]) -> str:
    return "".join(block.get("text", "") for block in result["content"])


def _assert_masked(result: dict[str, Any]) -> None:
    assert result["isError"] is True
    assert tool_text(result) == "Error executing tool 'explode'"


# --- raising, hanging and cancelled calls next to good ones -----------------------------------


@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_stdio_faulty_calls_do_not_disturb_the_others(era: str) -> None:
    probe = Probe()
    modern = era == "modern"
    async with MemoryStdio(make_server(probe)) as stdio:
        if not modern:
            await stdio.initialize(LEGACY)
        hung = stdio.call("hang", modern=modern)
        exploded = stdio.call("explode", modern=modern)
        good = {stdio.call("work", {"n": n}, modern=modern): n for n in range(30)}
        await asyncio.wait_for(probe.started.wait(), 5)
        stdio.notify("notifications/cancelled", {"requestId": hung, "reason": "changed my mind"})
        for request_id, n in good.items():
            result = await stdio.result(request_id)
            assert result["structuredContent"] == (n if modern else {"result": n})
        _assert_masked(await stdio.result(exploded))
        await asyncio.wait_for(probe.cancelled.wait(), 5)
        after = stdio.call("work", {"n": 99}, modern=modern)
        assert (await stdio.result(after))["structuredContent"] == (99 if modern else {"result": 99})
        await stdio.quiet(0.2)
        assert stdio.responses_to(hung) == [], "a cancelled request gets no response"
        for request_id in [exploded, *good]:
            assert len(stdio.responses_to(request_id)) == 1
        assert stdio.invalid_lines == []


async def test_legacy_http_faulty_calls_do_not_disturb_the_others(mcp_http: ServeHttp) -> None:
    probe = Probe()
    http = await mcp_http(make_server(probe))
    session = await Legacy(http).open()
    params = {"name": "hang", "arguments": {}, "_meta": {"progressToken": "h"}}
    async with session.stream("tools/call", params, id="hung") as hung:
        assert (await hung.next_message())["method"] == "notifications/progress"  # type: ignore[index]
        replies = await asyncio.gather(
            session.call_tool("explode"), *(session.call_tool("work", {"n": n}) for n in range(20))
        )
        _assert_masked(replies[0].result)
        assert [reply.result["structuredContent"] for reply in replies[1:]] == [{"result": n} for n in range(20)]
        cancelled = await session.notify("notifications/cancelled", {"requestId": "hung", "reason": "stop"})
        assert cancelled.status == 202
        await asyncio.wait_for(probe.cancelled.wait(), 5)
    assert (await session.call_tool("work", {"n": 7})).result["structuredContent"] == {"result": 7}


async def test_modern_http_faulty_calls_do_not_disturb_the_others(mcp_http: ServeHttp) -> None:
    probe = Probe()
    http = await mcp_http(make_server(probe))
    modern = Modern(http)
    async with modern.stream("tools/call", {"name": "hang", "arguments": {}}, meta={"progressToken": "h"}) as hung:
        assert (await hung.next_message())["method"] == "notifications/progress"  # type: ignore[index]
        replies = await asyncio.gather(
            modern.call_tool("explode"), *(modern.call_tool("work", {"n": n}) for n in range(20))
        )
        _assert_masked(replies[0].result)
        assert [reply.result["structuredContent"] for reply in replies[1:]] == list(range(20))
    await asyncio.wait_for(probe.cancelled.wait(), 5)
    assert (await modern.call_tool("work", {"n": 7})).result["structuredContent"] == 7


# --- cancellation frees the concurrency slot ---------------------------------------------------


async def test_modern_closed_streams_free_their_concurrency_slots(mcp_http: ServeHttp) -> None:
    probe = Probe()
    http = await mcp_http(make_server(probe, max_concurrent_requests=2))
    modern = Modern(http)
    probe.expect(2)
    async with contextlib.AsyncExitStack() as streams:
        for _ in range(2):
            stream = await streams.enter_async_context(
                modern.stream("tools/call", {"name": "hang", "arguments": {}}, meta={"progressToken": "h"})
            )
            assert (await stream.next_message())["method"] == "notifications/progress"  # type: ignore[index]
        await asyncio.wait_for(probe.all_hung.wait(), 5)
        assert (await modern.call_tool("work", {"n": 1})).status == 503
    await asyncio.wait_for(probe.cancelled.wait(), 5)
    for _attempt in range(50):
        reply = await modern.call_tool("work", {"n": 2})
        if reply.status == 200:
            break
        await asyncio.sleep(0.05)
    assert reply.status == 200 and reply.result["structuredContent"] == 2, "still refused after a second"


async def test_legacy_cancelled_requests_free_their_concurrency_slots(mcp_http: ServeHttp) -> None:
    probe = Probe()
    http = await mcp_http(make_server(probe, max_concurrent_requests=1))
    session = await Legacy(http).open()
    params = {"name": "hang", "arguments": {}, "_meta": {"progressToken": "h"}}
    async with session.stream("tools/call", params, id="slot") as stream:
        assert (await stream.next_message())["method"] == "notifications/progress"  # type: ignore[index]
        assert (await session.call_tool("work", {"n": 1})).status == 503
        await session.notify("notifications/cancelled", {"requestId": "slot"})
        await asyncio.wait_for(probe.cancelled.wait(), 5)
        reply = await session.call_tool("work", {"n": 3})
        assert reply.status == 200 and reply.result["structuredContent"] == {"result": 3}


# --- a resumable stream keeps its response ----------------------------------------------------


async def test_a_resumed_stream_delivers_the_response_even_past_the_event_limit(mcp_http: ServeHttp) -> None:
    # EventStore(max_events_per_stream=N) bounds memory; it must not cost the client its
    # response: "The SSE stream SHOULD eventually include a JSON-RPC response for the JSON-RPC
    # request sent in the POST body" (2025-11-25 basic/transports, "Sending Messages" 6).
    server = Server("resumable", version="1.0.0", event_store=EventStore(max_events_per_stream=4))
    release = asyncio.Event()

    @server.tool
    async def chatty(ctx: Context, steps: int) -> str:
        """Free the connection, then report many steps of progress."""
        await ctx.report_progress(0, steps)
        await ctx.close_stream()
        await release.wait()
        for step in range(1, steps + 1):
            await ctx.report_progress(step, steps)
        return "all done"

    http = await mcp_http(server)
    session = await Legacy(http).open()
    params = {"name": "chatty", "arguments": {"steps": 10}, "_meta": {"progressToken": "c"}}
    async with session.stream("tools/call", params) as stream:
        await stream.read()
    last_id = stream.events[-1].id
    assert last_id
    release.set()
    await asyncio.sleep(0.2)
    async with session.listen(headers={"Last-Event-ID": last_id}) as resumed:
        rest = await resumed.read(timeout=5)
    responses = [message for message in rest if "result" in message or "error" in message]
    assert len(responses) == 1, f"the resumed stream ended without the response ({len(rest)} messages)"
    assert tool_text(responses[0]["result"]) == "all done"


# --- a tool that exits ------------------------------------------------------------------------

EXIT_APP = '''
import argparse
import sys

from toolkit import Server

server = Server("exits", version="1.0.0")


@server.tool
def parse_flags(flags: str) -> str:
    """Parse command-line style flags (argparse exits on bad input)."""
    parser = argparse.ArgumentParser(prog="flags")
    parser.add_argument("--verbose", action="store_true")
    return str(parser.parse_args(flags.split()))


@server.tool
async def quit_now() -> str:
    """Call sys.exit()."""
    sys.exit(0)


@server.tool
def ok() -> int:
    """Answer 1."""
    return 1
'''

EXITS = [("parse_flags", {"flags": "--bogus"}), ("quit_now", {})]


@pytest.fixture(scope="module")
def exit_app(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("faults") / "exit_app.py"
    path.write_text(textwrap.dedent(EXIT_APP))
    return path


@pytest.mark.parametrize(("tool", "arguments"), EXITS, ids=[name for name, _ in EXITS])
def test_a_tool_calling_sys_exit_does_not_end_the_stdio_server(exit_app: Path, tool: str, arguments: Any) -> None:
    with StdioClient([TOOLKIT, "run", str(exit_app)]) as client:
        client.use_modern()
        request_id = client.start_request("tools/call", {"name": tool, "arguments": arguments})
        time.sleep(0.5)
        assert client.process.poll() is None, (
            f"the server exited (code {client.process.returncode}) because one tool called sys.exit()"
        )
        result = client.response(request_id, timeout=5)["result"]
        assert result["isError"] is True
        assert client.call_tool("ok")["structuredContent"] == 1


@pytest.mark.parametrize(("tool", "arguments"), EXITS, ids=[name for name, _ in EXITS])
async def test_a_tool_calling_sys_exit_does_not_end_the_http_server(
    exit_app: Path, mcp_cli: Callable[..., CliServer], tool: str, arguments: Any
) -> None:
    running = mcp_cli(exit_app)
    async with connect(running.url) as http:
        modern = Modern(http)
        try:
            reply = await modern.call_tool(tool, arguments)
        except httpx.HTTPError as exc:
            pytest.fail(f"the call broke the connection ({exc!r}); server output:\n{running.output()[-1500:]}")
        await asyncio.sleep(0.3)
        assert running.process.poll() is None, f"the server exited (code {running.process.returncode})"
        assert reply.status == 200 and reply.result["isError"] is True
        assert (await modern.call_tool("ok")).result["structuredContent"] == 1


# --- shutdown ---------------------------------------------------------------------------------

# A liveness bound, not a measurement: how long a step of a shutdown may take before the test
# calls the server stuck. What the server does is proven by the order of events (its log
# lines, the answers, the exit); this bound only tells "gets there" from "never does" (a thread
# blocked for an hour, a request nobody cancels), so it is many times what a loaded 2-core
# machine needs.
LIVENESS = 30.0

SLOW_APP = '''
import asyncio
import sys
import time
from pathlib import Path

from toolkit import Context, Server

server = Server("slow", version="1.0.0")


@server.tool
async def held(release: str, ctx: Context) -> str:
    """Report progress, then wait until the file ``release`` exists."""
    await ctx.report_progress(1, 2)
    print("held started", file=sys.stderr, flush=True)
    while not Path(release).exists():
        await asyncio.sleep(0.01)
    return "released"


@server.tool
async def hang() -> str:
    """Never finish on its own."""
    print("hang started", file=sys.stderr, flush=True)
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        print("hang was cancelled", file=sys.stderr, flush=True)
        raise
    return "never"


@server.tool
def block() -> str:
    """A plain function blocked for good (a read without a timeout, say)."""
    print("block started", file=sys.stderr, flush=True)
    time.sleep(3600)
    return "never"


if __name__ == "__main__":
    if sys.argv[1] == "stdio":
        server.run("stdio", shutdown_grace=float(sys.argv[2]))
    else:
        server.run("http", port=int(sys.argv[1]), shutdown_grace=float(sys.argv[2]))
'''


@pytest.fixture(scope="module")
def slow_app(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("faults") / "slow_app.py"
    path.write_text(textwrap.dedent(SLOW_APP))
    return path


def _port_open(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
        return True
    return False


async def _server_said(log: Path, text: str, process: subprocess.Popen[bytes], count: int = 1) -> None:
    """Wait until the server's output has ``text`` ``count`` times (an event, instead of a sleep)."""
    async with asyncio.timeout(LIVENESS):
        while log.read_text(errors="replace").count(text) < count:
            assert process.poll() is None, f"the server exited:\n{log.read_text()[-1500:]}"
            await asyncio.sleep(0.02)


@pytest.mark.parametrize("answer", ["json", "sse"])
async def test_sigterm_drains_in_flight_requests_of_both_eras(slow_app: Path, tmp_path: Path, answer: str) -> None:
    # An answer with progress notifications travels as an SSE stream; one without, as JSON.
    # The calls are held until the test releases them, so the order is certain: SIGTERM, the
    # listener closed while the server stays up, release, both answers, exit. The grace is an
    # hour, so a server that waited it out instead of exiting once drained fails LIVENESS.
    release = tmp_path / "release"
    meta = {"progressToken": "p"} if answer == "sse" else {}
    arguments = {"release": str(release)}
    with _scripted_http_server(slow_app, grace=3600) as (process, port, log):
        async with connect(f"http://127.0.0.1:{port}/mcp") as http:
            legacy = await Legacy(http).open()
            modern = Modern(http)
            calls = [
                asyncio.create_task(modern.call_tool("held", arguments, meta=meta)),
                asyncio.create_task(
                    legacy.request("tools/call", {"name": "held", "arguments": arguments, "_meta": meta})
                ),
            ]
            await _server_said(log, "held started", process, count=2)
            process.send_signal(signal.SIGTERM)
            try:
                async with asyncio.timeout(LIVENESS):
                    while _port_open(port):
                        await asyncio.sleep(0.02)
            except TimeoutError:
                pytest.fail("a draining server must stop accepting connections")
            # Deterministic: the calls cannot end before the release below.
            assert process.poll() is None, "the server exited with requests in flight"
            assert not any(call.done() for call in calls), "an in-flight request was ended at SIGTERM"
            release.touch()
            async with asyncio.timeout(LIVENESS):
                outcomes = await asyncio.gather(*calls, return_exceptions=True)
            code = await asyncio.to_thread(process.wait, LIVENESS)
    lost = {
        era: repr(outcome)
        for era, outcome in zip(["modern", "legacy"], outcomes, strict=True)
        if isinstance(outcome, BaseException)
    }
    assert not lost, f"in-flight {answer} answers lost at SIGTERM instead of drained: {lost}"
    for reply in outcomes:
        assert not isinstance(reply, BaseException)
        assert reply.status == 200, reply
        assert tool_text(reply.result) == "released"
        assert bool(reply.notifications) == (answer == "sse")
    assert code == 0, log.read_text()[-2000:]


@contextlib.contextmanager
def _scripted_http_server(app: Path, grace: float) -> Iterator[tuple[subprocess.Popen[bytes], int, Path]]:
    port = free_port()
    log = app.with_name(f"server-{port}.log")
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [str(PYTHON), str(app), str(port), str(grace)], stdout=sink, stderr=subprocess.STDOUT, cwd=REPO
        )
    try:
        deadline = time.monotonic() + 20
        while not _port_open(port):
            assert process.poll() is None, log.read_text()
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.05)
        yield process, port, log
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()


@pytest.mark.parametrize("tool", ["hang", "block"], ids=["async-tool", "blocked-thread"])
async def test_sigterm_with_a_hung_request_exits_within_the_grace_period(slow_app: Path, tool: str) -> None:
    grace = 1.0
    with _scripted_http_server(slow_app, grace) as (process, port, log):
        async with connect(f"http://127.0.0.1:{port}/mcp") as http:
            hung = asyncio.create_task(Modern(http).call_tool(tool))
            await _server_said(log, f"{tool} started", process)
            process.send_signal(signal.SIGTERM)
            try:
                code = await asyncio.to_thread(process.wait, LIVENESS)  # liveness only; see LIVENESS
            except subprocess.TimeoutExpired:
                code = None
            hung.cancel()
            with contextlib.suppress(BaseException):
                await hung
    output = log.read_text()
    assert code == 0, f"still running {LIVENESS:g} s after SIGTERM with shutdown_grace={grace}:\n{output[-1500:]}"
    # The order proves the grace was waited out with the request still running, then the request
    # was cancelled (the blocked thread cannot be, and does not hold the exit).
    grace_over = output.index("still running after the 1 s shutdown grace period")
    if tool == "hang":
        assert output.index("hang was cancelled") > grace_over


def test_stdio_eof_with_a_blocked_thread_exits_within_the_grace_period(slow_app: Path) -> None:
    """A plain tool blocked for good cannot hold the process: its worker thread does not block exit."""
    grace = 1.0
    process = subprocess.Popen(
        [str(PYTHON), str(slow_app), "stdio", str(grace)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=REPO,
    )
    try:
        call = {"jsonrpc": "2.0", "id": "blocked", "method": "tools/call", "params": {"name": "block", "arguments": {}}}
        call["params"]["_meta"] = {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientInfo": {"name": "faults", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        assert process.stdin is not None
        # The request comes before the EOF on the same pipe, so it is in flight when the drain starts.
        process.stdin.write(json.dumps(call).encode() + b"\n")
        process.stdin.close()  # EOF: drain, then exit
        process.wait(timeout=LIVENESS)  # liveness only; see LIVENESS
        assert process.stdout is not None and process.stderr is not None
        out, err = process.stdout.read(), process.stderr.read()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        for pipe in (process.stdout, process.stderr):
            if pipe is not None:
                pipe.close()
    assert process.returncode == 0, err.decode()[-1500:]
    assert b"still running after the 1 s shutdown grace period" in err, "the grace was not waited out"
    (answer,) = [json.loads(line) for line in out.splitlines()]
    assert answer["id"] == "blocked" and "shutting down" in answer["error"]["message"]
    assert_valid(answer, MODERN)


async def test_http_request_abandoned_at_shutdown_gets_a_json_rpc_error(slow_app: Path) -> None:
    grace = 1.0
    with _scripted_http_server(slow_app, grace) as (process, port, log):
        async with connect(f"http://127.0.0.1:{port}/mcp") as http:
            modern = Modern(http)
            hung = asyncio.create_task(modern.call_tool("hang", id="abandoned"))
            await _server_said(log, "hang started", process)
            process.send_signal(signal.SIGTERM)
            try:
                reply = await asyncio.wait_for(hung, LIVENESS)  # liveness only; see LIVENESS
            except (httpx.HTTPError, TimeoutError, AssertionError, json.JSONDecodeError) as exc:
                pytest.fail(f"no JSON-RPC answer for the abandoned request: {exc!r}")
    assert reply.content_type == "application/json", f"HTTP {reply.status} {reply.content_type}: {reply.body_text!r}"
    assert reply.message.get("id") == "abandoned"
    assert "error" in reply.message
    assert_valid(reply.message, MODERN)


async def test_stdio_request_abandoned_at_shutdown_gets_an_error(caplog: pytest.LogCaptureFixture) -> None:
    probe = Probe()
    grace = 0.3
    stdio = MemoryStdio(make_server(probe), shutdown_grace=grace)
    async with stdio:
        hung = stdio.call("hang")
        done = stdio.call("work", {"n": 4})
        await asyncio.wait_for(probe.started.wait(), 5)
        await stdio.result(done)
        stdio.stop.set()  # what SIGTERM does
        await stdio.finished(LIVENESS)  # liveness only; see LIVENESS
    assert "1 request(s) still running after the 0.3 s shutdown grace period: cancelled" in caplog.messages
    assert probe.cancelled.is_set(), "past the grace period the request is cancelled"
    answers = stdio.responses_to(hung)
    assert len(answers) == 1, "the server abandoned a request without answering it"
    assert "error" in answers[0]
    assert_valid(answers[0], MODERN)


async def test_stdio_eof_drains_before_exit_even_with_many_requests_in_flight() -> None:
    probe = Probe()
    stdio = MemoryStdio(make_server(probe), shutdown_grace=5)
    async with stdio:
        ids = {stdio.call("work", {"n": n}): n for n in range(100)}
        stdio.end_input()
        await stdio.finished()
    for request_id, n in ids.items():
        answers = stdio.responses_to(request_id)
        assert len(answers) == 1 and answers[0]["result"]["structuredContent"] == n


def loadtest(*args: str) -> subprocess.CompletedProcess[str]:
    command = [str(REPO / "scripts" / "loadtest"), *args]
    return subprocess.run(command, check=False, capture_output=True, text=True, timeout=110, cwd=REPO)


def test_the_load_test_runs_clean_in_quick_mode(tmp_path: Path) -> None:
    """``scripts/loadtest --quick``: a smoke run of bench/load.py (no timing is asserted)."""
    run = loadtest("--quick", "--log-dir", str(tmp_path))
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "0 problems" in run.stdout
    for row in ("HTTP legacy sessions", "HTTP modern stateless", "stdio legacy", "stdio modern"):
        assert row in run.stdout


def test_the_tail_load_test_runs_and_checks_every_answer(tmp_path: Path) -> None:
    """``scripts/loadtest --tail``: fresh toolkit and floor servers, every answer checked.

    No timing is asserted here: the bound is set out of reach, so the exit status speaks only
    of wrong answers; the real bound (250 ms) is the script's own check, run by hand and in
    docs/performance.md.
    """
    run = loadtest("--tail", "--runs", "1", "--calls", "200", "--max-ms", "1e9", "--log-dir", str(tmp_path))
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "wrong answer" not in run.stdout
    for server in ("toolkit", "floor"):
        for clients in (8, 16):
            for era in ("modern", "legacy"):
                assert re.search(
                    rf"^{server}\s+{clients}\s+{era}\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+\d+", run.stdout, re.M
                ), (
                    server,
                    clients,
                    era,
                    run.stdout,
                )
    assert run.stdout.count(" ok") == 4  # the regression check printed a verdict per configuration
