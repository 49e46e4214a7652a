"""Faults behind a proxy: upstreams that die, hang, talk garbage or never stop talking, with real processes.

Every upstream is a real child process (``tests/support/proxy_faults/``): a toolkit server whose
tools exit mid-call, hang or hold (``upstream.py``), a raw stdio script that breaks the protocol
(``raw_stdio.py``), and a 2026-07-28 HTTP server whose answers break the wire (``http_upstream.py``).
The gateway runs in this process (``toolkit.Server.proxy`` with ``toolkit.Client(gateway)``), or as
``toolkit run gateway.py:server`` in a process of its own. Each upstream start leaves its pid in
``spawns``, so a test counts the processes a gateway started.

- An upstream that dies mid-call: the call gets an error naming it and its exit, at once; the next
  call starts a new upstream. One that is down: each call gets a clear error, and a burst of calls
  starts one process per backoff period, not one per call.
- A hung call ends at the upstream client's ``timeout`` and is cancelled upstream; a slow or stopped
  upstream holds up no other call, and a stopped process that resumes serves again.
- Garbage lines and broken SSE answers are errors of the call they belong to, never of the gateway;
  a result that is not an object is an error naming the method.
- A gateway stopped (SIGTERM), killed (SIGKILL) or closed leaves no upstream process behind,
  including those opened per legacy session (one per session, however many requests come at once).
  A stdio gateway answers the first messages a host pipes to it with the upstream's tools.
- An HTTP upstream restarted: calls fail clearly while it is away and work once it is back; the
  gateway listens to it again (after a backoff) and takes its lists again.
- An upstream that never stops sending notifications: the gateway's memory stays bounded, whether
  the caller keeps up or does not read at all (the relay drops past its limit; an HTTP stream holds
  its sender back).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from subprocess import PIPE
from typing import Any

import httpx
import pytest
from tests.support.processes import LOCALHOST, RunningServer, free_port, http_server, stop, wait_for_port
from tests.support.proxy_faults.marks import DIR_VARIABLE, DOWN, spawns

import toolkit
from toolkit._sources.upstream import FIRST_BACKOFF
from toolkit.client import ClientError

SUPPORT = Path(__file__).parent / "support" / "proxy_faults"
UPSTREAM = SUPPORT / "upstream.py"
RAW = SUPPORT / "raw_stdio.py"
HTTP_UPSTREAM = SUPPORT / "http_upstream.py"
GATEWAY = f"{SUPPORT / 'gateway.py'}:server"
HANG_GUARD = 60.0
"""The longest any wait here may take: a bound for a hang, never for speed."""
MODERN = "2026-07-28"

# The usual hang guard, plus room for the floods (a fixed number of notifications, however slow).
pytestmark = pytest.mark.timeout(300)


# --- helpers ---------------------------------------------------------------------------------------


def stdio_upstream(marks: Path, script: Path = UPSTREAM, *args: str, timeout: float = 60.0) -> toolkit.Client:
    """A client (not entered) of ``script`` run as a stdio child, leaving its marks in ``marks``."""
    return toolkit.Client([sys.executable, str(script), *args], env={DIR_VARIABLE: str(marks)}, timeout=timeout)


def text_of(result: Any) -> str:
    return "\n".join(block.get("text", "") for block in result.content or ())


async def eventually(condition: Callable[[], bool], what: str, within: float = HANG_GUARD) -> None:
    """Wait until ``condition()`` holds; ``AssertionError`` naming ``what`` if it never does (a hang)."""
    deadline = time.monotonic() + within
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {within:g} s: {what}")
        await asyncio.sleep(0.02)


def running(pid: int) -> bool:
    """Whether process ``pid`` still runs (a zombie waiting for its parent's wait does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def rss_bytes(pid: int) -> int:
    """The resident memory of process ``pid``."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmRSS for process {pid}")


def flooded(marks: Path) -> int:
    """How many notifications the flooding upstream has written so far."""
    try:
        return int((marks / "flooded").read_text())
    except FileNotFoundError:
        return 0


@dataclass
class HttpUpstream:
    process: subprocess.Popen[bytes]
    url: str

    def kill(self) -> None:
        """SIGKILL, and reap it: the upstream vanishes, as in a crash."""
        self.process.kill()
        self.process.wait()


@contextmanager
def http_upstream(marks: Path, port: int | None = None, *, toolkit_server: bool = False) -> Iterator[HttpUpstream]:
    """``http_upstream.py`` (or ``upstream.py --http``) on 127.0.0.1:``port`` (a free one by default).

    Killed at the end: a gateway's standing ``subscriptions/listen`` would hold up a graceful shutdown.
    """
    port = port or free_port()
    script = [str(UPSTREAM), "--http"] if toolkit_server else [str(HTTP_UPSTREAM)]
    env = {**os.environ, DIR_VARIABLE: str(marks)}
    upstream = HttpUpstream(
        subprocess.Popen([sys.executable, *script, str(port)], env=env, stdin=subprocess.DEVNULL),
        f"http://{LOCALHOST}:{port}/mcp",
    )
    try:
        wait_for_port(port, timeout=HANG_GUARD, process=upstream.process)
        yield upstream
    finally:
        upstream.kill()


@contextmanager
def gateway_process(marks: Path, target: Any, **settings: str) -> Iterator[RunningServer]:
    """``toolkit run gateway.py:server --transport http`` proxying ``target`` (see gateway.py for ``settings``)."""
    env = {**os.environ, DIR_VARIABLE: str(marks), "PROXY_FAULTS_TARGET": json.dumps(target)}
    env.update({f"PROXY_FAULTS_{key.upper()}": value for key, value in settings.items()})
    with http_server(GATEWAY, env=env, timeout=HANG_GUARD) as running_gateway:
        yield running_gateway


@asynccontextmanager
async def gateway_of(*upstreams: tuple[str | None, toolkit.Client], **client: Any) -> AsyncIterator[toolkit.Client]:
    """A gateway in this process mounting each ``(namespace, upstream)``, and a client of it."""
    gateway = toolkit.Server("gateway")
    for namespace, upstream in upstreams:
        gateway.mount(upstream, namespace=namespace)
    async with toolkit.Client(gateway, raise_on_error=False, **client) as downstream:
        yield downstream


# --- an upstream that dies, is down, comes back ------------------------------------------------------


async def test_an_upstream_that_dies_mid_call_is_a_clear_error_and_the_next_call_starts_a_new_one(
    tmp_path: Path,
) -> None:
    async with gateway_of((None, stdio_upstream(tmp_path))) as downstream:
        first = (await downstream.call_tool("pid")).data
        died = await asyncio.wait_for(downstream.call_tool("die"), HANG_GUARD)
        assert died.is_error
        message = text_of(died)
        assert "Tool 'die': proxied server" in message and str(UPSTREAM) in message, message
        assert "the server process exited with code 3" in message, message
        await eventually(lambda: not running(first), "the dead upstream is reaped")

        second = (await downstream.call_tool("pid")).data
        assert second != first, "a new upstream process"
        assert spawns(tmp_path) == [first, second]
        assert (await downstream.call_tool("pid")).data == second, "and it stays"


async def test_an_upstream_that_is_down_costs_one_start_per_backoff_not_one_per_call(tmp_path: Path) -> None:
    async with gateway_of((None, stdio_upstream(tmp_path))) as downstream:
        assert not (await downstream.call_tool("pid")).is_error
        (tmp_path / DOWN).touch()  # from now on, an upstream started exits at once with code 1
        assert (await downstream.call_tool("die")).is_error

        # A burst of calls while it is down: one attempt to start it, shared by all of them.
        failing_since = time.monotonic()  # before the first failure: the bound below errs on the lenient side
        burst = await asyncio.wait_for(asyncio.gather(*(downstream.call_tool("pid") for _ in range(50))), HANG_GUARD)
        assert len(spawns(tmp_path)) == 2, "one start for the whole burst"
        for result in burst:
            message = text_of(result)
            assert result.is_error, message
            assert "proxied server" in message and str(UPSTREAM) in message, message
            assert "exited with code 1" in message and "down for maintenance" in message, message

        # Calls one after another: each a quick error; a new start only once each backoff period is over.
        calls = 0
        while calls < 200:
            result = await asyncio.wait_for(downstream.call_tool("pid"), HANG_GUARD)
            assert result.is_error, text_of(result)
            calls += 1
        elapsed = time.monotonic() - failing_since
        attempts = len(spawns(tmp_path)) - 1
        # The backoff doubles from FIRST_BACKOFF: k attempts need FIRST_BACKOFF * (2**(k-1) - 1) s at least.
        allowed = 1 + math.floor(math.log2(elapsed / FIRST_BACKOFF + 1))
        assert attempts <= allowed, f"{attempts} starts in {elapsed:.2f} s of 201 failing calls (at most {allowed})"
        backing_off = text_of(result)
        assert "not tried again for another" in backing_off or "down for maintenance" in backing_off, backing_off

        # Back up: after the current backoff, a call starts it and works; the next calls share it.
        (tmp_path / DOWN).unlink()
        deadline = time.monotonic() + HANG_GUARD
        while (result := await downstream.call_tool("pid")).is_error:
            assert time.monotonic() < deadline, f"not back within {HANG_GUARD:g} s: {text_of(result)}"
            await asyncio.sleep(0.05)
        back = result.data
        assert back == spawns(tmp_path)[-1] and running(back)
        again = await asyncio.gather(*(downstream.call_tool("pid") for _ in range(20)))
        assert {result.data for result in again} == {back}, "no more starts once it is up"


async def test_an_http_upstream_that_goes_away_is_a_clear_error_until_it_is_back(tmp_path: Path) -> None:
    port = free_port()
    with http_upstream(tmp_path, port) as first_upstream:
        url = first_upstream.url
        async with gateway_of((None, toolkit.Client(url, timeout=HANG_GUARD))) as downstream:
            first = (await downstream.call_tool("pid")).data
            first_upstream.kill()
            for _ in range(3):
                result = await asyncio.wait_for(downstream.call_tool("pid"), HANG_GUARD)
                assert result.is_error
                message = text_of(result)
                assert f"proxied server '{url}' is unavailable" in message, message
                assert "cannot connect" in message, message
            with http_upstream(tmp_path, port):
                deadline = time.monotonic() + HANG_GUARD
                while (result := await downstream.call_tool("pid")).is_error:
                    assert time.monotonic() < deadline, text_of(result)
                    await asyncio.sleep(0.05)
                assert result.data not in (None, first), "served by the new process"


async def test_a_restarted_http_upstreams_tools_and_list_changes_reach_the_gateway_again(tmp_path: Path) -> None:
    port = free_port()
    with http_upstream(tmp_path, port, toolkit_server=True) as first_upstream:
        url = first_upstream.url
        async with gateway_of((None, toolkit.Client(url, timeout=HANG_GUARD))) as downstream:
            await downstream.call_tool("grow", {"name": "before"})
            await until_listed(downstream, "before")
            first_upstream.kill()
            with http_upstream(tmp_path, port, toolkit_server=True):
                deadline = time.monotonic() + HANG_GUARD
                while (result := await downstream.call_tool("grow", {"name": "after"})).is_error:
                    assert time.monotonic() < deadline, text_of(result)
                    await asyncio.sleep(0.05)
                await until_listed(downstream, "after")
                assert "before" not in await listed(downstream), "the old process's tool went with it"


async def listed(downstream: toolkit.Client) -> set[str]:
    return {tool["name"] for tool in await downstream.session.list_tools()}


async def until_listed(downstream: toolkit.Client, name: str) -> None:
    """Wait until the gateway lists the tool ``name`` (an ``AssertionError`` if it never does)."""
    deadline = time.monotonic() + HANG_GUARD
    while name not in await listed(downstream):
        assert time.monotonic() < deadline, f"{name!r} not listed within {HANG_GUARD:g} s"
        await asyncio.sleep(0.05)


# --- hung and slow upstreams -------------------------------------------------------------------------


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_hung_call_ends_at_the_upstream_timeout_and_is_cancelled_upstream(
    tmp_path: Path, transport: str
) -> None:
    with upstream_over(transport, tmp_path) as make_upstream:
        async with gateway_of((None, make_upstream(2.0))) as downstream:
            pid = (await downstream.call_tool("pid")).data
            result = await asyncio.wait_for(downstream.call_tool("hang", {"tag": "h"}), HANG_GUARD)
            assert result.is_error
            message = text_of(result)
            assert "Tool 'hang': proxied server" in message, message
            assert "did not answer in time" in message and "within 2 s" in message, message
            await eventually((tmp_path / "cancelled-h").exists, "the upstream is told to cancel")
            assert (await downstream.call_tool("pid")).data == pid, "the same upstream serves on"


@contextmanager
def upstream_over(transport: str, marks: Path) -> Iterator[Callable[[float], toolkit.Client]]:
    """A factory of upstream clients (given their timeout) over ``transport``, its server kept running."""
    if transport == "stdio":
        yield lambda timeout: stdio_upstream(marks, timeout=timeout)
        return
    with http_upstream(marks) as upstream:
        yield lambda timeout: toolkit.Client(upstream.url, timeout=timeout)


async def test_a_slow_call_does_not_hold_up_fast_ones_through_the_same_upstream(tmp_path: Path) -> None:
    async with gateway_of((None, stdio_upstream(tmp_path))) as downstream:
        slow = asyncio.ensure_future(downstream.call_tool("hold", {"tag": "slow"}))
        await eventually((tmp_path / "started-slow").exists, "the slow call runs upstream")
        fast = await asyncio.wait_for(asyncio.gather(*(downstream.call_tool("pid") for _ in range(10))), HANG_GUARD)
        assert all(not result.is_error for result in fast)
        assert not slow.done(), "the fast calls were answered while the slow one still ran"
        (tmp_path / "release-slow").touch()
        assert (await asyncio.wait_for(slow, HANG_GUARD)).data == fast[0].data


async def test_a_stopped_upstream_holds_up_no_other_and_serves_again_once_resumed(tmp_path: Path) -> None:
    stuck_marks, fine_marks = tmp_path / "stuck", tmp_path / "fine"
    stuck_marks.mkdir()
    fine_marks.mkdir()
    upstreams = (("stuck", stdio_upstream(stuck_marks, timeout=2.0)), ("fine", stdio_upstream(fine_marks)))
    async with gateway_of(*upstreams) as downstream:
        stuck = (await downstream.call_tool("stuck_pid")).data
        os.kill(stuck, signal.SIGSTOP)  # the process is there, and answers nothing
        try:
            pending = asyncio.ensure_future(downstream.call_tool("stuck_pid"))
            fine = await asyncio.wait_for(
                asyncio.gather(*(downstream.call_tool("fine_pid") for _ in range(10))), HANG_GUARD
            )
            assert {result.data for result in fine} == set(spawns(fine_marks))
            result = await asyncio.wait_for(pending, HANG_GUARD)
            assert result.is_error and "did not answer in time" in text_of(result), text_of(result)
        finally:
            os.kill(stuck, signal.SIGCONT)
        # Resumed, it answers again, in the same process (a timeout alone is no reason to restart it).
        deadline = time.monotonic() + HANG_GUARD
        while (result := await downstream.call_tool("stuck_pid")).is_error:
            assert time.monotonic() < deadline, text_of(result)
            await asyncio.sleep(0.05)
        assert result.data == stuck
        assert spawns(stuck_marks) == [stuck]


@pytest.mark.parametrize("full_pipe", [False, True])
async def test_a_hung_stdio_upstream_is_stopped_and_started_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, full_pipe: bool
) -> None:
    # Stopped for good (SIGSTOP, never resumed): alive, answering nothing. It used to stay so, every
    # call waiting out its timeout. A timed-out call is followed by a ping; unanswered too, the
    # process is stopped and a new one serves. full_pipe: calls big enough to fill its stdin pipe and
    # the write buffer behind it come first, so the ping's own write waits for room that never comes.
    async with gateway_of((None, stdio_upstream(tmp_path, timeout=2.0))) as downstream:
        hung = (await downstream.call_tool("pid")).data
        os.kill(hung, signal.SIGSTOP)
        try:
            stuck = [
                asyncio.ensure_future(downstream.call_tool("hang", {"tag": f"{n}" + "x" * 100_000}))
                for n in range(4 if full_pipe else 0)
            ]
            first = await asyncio.wait_for(downstream.call_tool("pid"), HANG_GUARD)
            # Behind the big ones, its own write waited for room: the end of the hung process ended it.
            why = "taken as hung" if full_pipe else "did not answer in time"
            assert first.is_error and why in text_of(first), text_of(first)
            deadline = time.monotonic() + HANG_GUARD
            while (result := await downstream.call_tool("pid")).is_error:
                assert time.monotonic() < deadline, text_of(result)
                await asyncio.sleep(0.05)
            assert result.data != hung and spawns(tmp_path) == [hung, result.data]
            await eventually(lambda: not running(hung), "the hung process is gone")
            for call in await asyncio.wait_for(asyncio.gather(*stuck), HANG_GUARD):  # ended with it
                said = text_of(call)
                assert call.is_error and ("did not answer in time" in said or "taken as hung" in said), said
        finally:
            if running(hung):
                os.kill(hung, signal.SIGKILL)
    assert any("answered neither a request nor a ping within 2 s" in r.getMessage() for r in caplog.records)


async def test_a_hung_http_upstream_is_reconnected_once_it_answers_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # The gateway cannot restart a server it did not start: it drops the connection, and callers get
    # "unavailable" (the backoff) instead of each waiting out a timeout, until the server answers again.
    with http_upstream(tmp_path, toolkit_server=True) as upstream:
        async with gateway_of((None, toolkit.Client(upstream.url, timeout=2.0, probe_timeout=2.0))) as downstream:
            pid = (await downstream.call_tool("pid")).data
            os.kill(upstream.process.pid, signal.SIGSTOP)
            try:
                first = await asyncio.wait_for(downstream.call_tool("pid"), HANG_GUARD)
                assert first.is_error and "did not answer in time" in text_of(first), text_of(first)
                await eventually(
                    lambda: any("taken as hung" in record.getMessage() for record in caplog.records),
                    "the gateway takes the upstream as hung",
                )
                deadline = time.monotonic() + HANG_GUARD
                while "unavailable" not in text_of(result := await downstream.call_tool("pid")):
                    assert time.monotonic() < deadline, text_of(result)
            finally:
                os.kill(upstream.process.pid, signal.SIGCONT)
            deadline = time.monotonic() + HANG_GUARD
            while (result := await downstream.call_tool("pid")).is_error:
                assert time.monotonic() < deadline, text_of(result)
                await asyncio.sleep(0.05)
            assert result.data == pid


async def test_a_server_not_required_that_connected_but_could_not_list_joins_once_it_lists(tmp_path: Path) -> None:
    # mount(required=False): connected at the start, but its first tools/list failed. It is retried
    # as an unreachable one is, and its tools join once it lists them.
    parent = toolkit.Server("parent")
    parent.mount(stdio_upstream(tmp_path, RAW, "list-fails-once"), "raw", required=False)
    async with toolkit.Client(parent, protocol_version=MODERN) as downstream:
        deadline = time.monotonic() + HANG_GUARD
        while "raw_echo" not in [tool["name"] for tool in await downstream.list_tools()]:
            assert time.monotonic() < deadline, "its tools never joined"
            await asyncio.sleep(0.05)
        assert text_of(await downstream.call_tool("raw_echo", {"text": "hi"})) == "hi"
    assert len(spawns(tmp_path)) == 1  # the same upstream process: only the list was taken again


# --- garbage ------------------------------------------------------------------------------------------


async def test_garbage_lines_from_a_stdio_upstream_are_skipped_and_the_call_answered(tmp_path: Path) -> None:
    async with gateway_of((None, stdio_upstream(tmp_path, RAW, "garbage"))) as downstream:
        for text in ("first", "second"):
            result = await asyncio.wait_for(downstream.call_tool("echo", {"text": text}), HANG_GUARD)
            assert not result.is_error and text_of(result) == text, text_of(result)
        # Its request of a method nobody knows was answered with an error, not left unanswered.
        answer = json.loads((tmp_path / "answer-raw-1").read_text())
        assert answer["error"]["code"] == -32601, answer
        assert len(spawns(tmp_path)) == 1, "the same upstream throughout: garbage is not a reason to restart"


async def test_a_result_that_is_not_one_is_a_clear_error(tmp_path: Path) -> None:
    async with gateway_of((None, stdio_upstream(tmp_path, RAW, "bad-result"))) as downstream:
        with pytest.raises(ClientError) as failure:
            await asyncio.wait_for(downstream.call_tool("echo", {"text": "x"}), HANG_GUARD)
        assert "tools/call" in str(failure.value) and "not an object" in str(failure.value), failure.value


async def test_broken_http_answers_are_errors_of_their_call_and_the_gateway_serves_on(tmp_path: Path) -> None:
    with http_upstream(tmp_path) as upstream:
        url = upstream.url
        async with gateway_of((None, toolkit.Client(url, timeout=2.0))) as downstream:
            pid = (await downstream.call_tool("pid")).data
            with pytest.raises(ClientError) as garbage:
                await asyncio.wait_for(downstream.call_tool("garbage"), HANG_GUARD)
            assert url in str(garbage.value) and "bad SSE stream" in str(garbage.value), garbage.value
            with pytest.raises(ClientError) as html:
                await asyncio.wait_for(downstream.call_tool("html"), HANG_GUARD)
            assert f"{url} is not an MCP endpoint" in str(html.value) and "text/html" in str(html.value), html.value

            # An SSE answer that never ends: the call ends at the timeout, and its stream is closed.
            endless = await asyncio.wait_for(downstream.call_tool("endless", {"tag": "e"}), HANG_GUARD)
            assert endless.is_error and "did not answer in time" in text_of(endless), text_of(endless)
            await eventually((tmp_path / "closed-e").exists, "the endless stream is closed")
            assert (await downstream.call_tool("pid")).data == pid


# --- stopping leaves nothing behind -------------------------------------------------------------------


async def test_closing_an_in_process_gateway_stops_its_upstreams(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    async with gateway_of(("a", stdio_upstream(first)), ("b", stdio_upstream(second))) as downstream:
        pids = [(await downstream.call_tool("a_pid")).data, (await downstream.call_tool("b_pid")).data]
        assert all(running(pid) for pid in pids)
    assert not any(running(pid) for pid in pids), "stopped with the gateway"


async def test_a_gateway_process_stopped_leaves_no_upstream_behind_with_one_per_legacy_session(
    tmp_path: Path,
) -> None:
    # The gateway stops while the legacy sessions are still open: their upstream processes end with
    # the gateway, not with the sessions (a session's end closes its own: test_proxy.py). The check
    # that they run used to come after the clients had left, racing that close.
    target = [sys.executable, str(UPSTREAM)]
    with contextlib.ExitStack() as serving:
        gateway = serving.enter_context(gateway_process(tmp_path, target, version="2025-06-18"))
        async with (
            toolkit.Client(gateway.url, protocol_version="2025-11-25") as one,
            toolkit.Client(gateway.url, protocol_version="2025-11-25") as other,
            toolkit.Client(gateway.url, protocol_version=MODERN) as modern,
        ):
            # Many first requests at once per legacy session: one upstream session (process) each.
            served = await asyncio.wait_for(
                asyncio.gather(*(client.call_tool("pid") for client in (one, other) for _ in range(8))), HANG_GUARD
            )
            by_session = [{result.data for result in served[:8]}, {result.data for result in served[8:]}]
            assert all(len(pids) == 1 for pids in by_session), by_session
            shared = (await modern.call_tool("pid")).data  # no session: the shared upstream session
            pids = spawns(tmp_path)
            assert sorted(pids) == sorted({shared, *by_session[0], *by_session[1]}), pids
            assert len(pids) == 3
            assert all(running(pid) for pid in pids)
            serving.close()  # SIGTERM to the gateway, the sessions still open
            assert gateway.process.returncode == 0, gateway.stderr
            assert not any(running(pid) for pid in pids), "no upstream outlives the gateway"


async def test_a_killed_stdio_gateway_leaves_no_upstream_behind(tmp_path: Path) -> None:
    env = {
        **os.environ,
        DIR_VARIABLE: str(tmp_path),
        "PROXY_FAULTS_TARGET": json.dumps([sys.executable, str(UPSTREAM)]),
    }
    argv = [Path(sys.executable).with_name("toolkit"), "run", GATEWAY]
    with subprocess.Popen(argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE) as gateway:
        try:
            await eventually(lambda: bool(spawns(tmp_path)), "the gateway starts its upstream")
            [upstream] = spawns(tmp_path)
            gateway.kill()  # no shutdown at all: the upstream sees its stdin end, and exits
            gateway.wait()
            await eventually(lambda: not running(upstream), "the orphaned upstream exits on its own")
        finally:
            stop(gateway)


async def test_a_stdio_gateway_answers_its_first_requests_with_the_upstreams_tools(tmp_path: Path) -> None:
    env = {
        **os.environ,
        DIR_VARIABLE: str(tmp_path),
        "PROXY_FAULTS_TARGET": json.dumps([sys.executable, str(UPSTREAM)]),
    }
    gateway = await asyncio.create_subprocess_exec(
        Path(sys.executable).with_name("toolkit"), "run", GATEWAY, env=env, stdin=PIPE, stdout=PIPE
    )
    assert gateway.stdin is not None and gateway.stdout is not None
    try:
        # Written before the gateway can have started its upstream: as a host pipes its first messages.
        hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "host", "version": "1"}}
        for message in (
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        ):
            gateway.stdin.write(json.dumps(message).encode() + b"\n")
        await gateway.stdin.drain()
        while (answer := json.loads(await asyncio.wait_for(gateway.stdout.readline(), HANG_GUARD))).get("id") != 2:
            pass
        assert "pid" in {tool["name"] for tool in answer["result"]["tools"]}, answer
    finally:
        gateway.stdin.close()
        await asyncio.wait_for(gateway.wait(), HANG_GUARD)


async def test_a_gateway_process_serves_on_after_its_upstream_died_mid_call(tmp_path: Path) -> None:
    with gateway_process(tmp_path, [sys.executable, str(UPSTREAM)]) as gateway:
        async with toolkit.Client(gateway.url, raise_on_error=False) as downstream:
            first = (await downstream.call_tool("pid")).data
            died = await asyncio.wait_for(downstream.call_tool("die"), HANG_GUARD)
            assert died.is_error and "exited with code 3" in text_of(died), text_of(died)
            second = (await downstream.call_tool("pid")).data
            assert spawns(tmp_path) == [first, second]


# --- notifications without end ------------------------------------------------------------------------

FLOOD_WARMUP = 50_000
FLOOD_MORE = 300_000
"""Notifications sent between the two measures (~70 MB of JSON): a gateway that kept each would grow
by hundreds of MB; one that keeps none stays within GROWTH_BOUND."""
GROWTH_BOUND = 48 * 1024 * 1024


async def test_notifications_without_end_outside_calls_keep_the_gateway_bounded_and_serving(tmp_path: Path) -> None:
    target = [sys.executable, str(RAW), "flood"]
    with gateway_process(tmp_path, target) as gateway:
        async with toolkit.Client(gateway.url, raise_on_error=False) as downstream:
            await eventually(lambda: flooded(tmp_path) >= FLOOD_WARMUP, "the flood is under way")
            before, since = rss_bytes(gateway.process.pid), flooded(tmp_path)
            answered = 0
            while flooded(tmp_path) < since + FLOOD_MORE:
                result = await asyncio.wait_for(downstream.call_tool("echo", {"text": "still here"}), HANG_GUARD)
                assert text_of(result) == "still here"
                answered += 1
                await asyncio.sleep(0.05)
            growth = rss_bytes(gateway.process.pid) - before
    assert answered > 0
    assert growth < GROWTH_BOUND, f"the gateway grew by {growth / 2**20:.0f} MB over {FLOOD_MORE} notifications"


@pytest.mark.timeout(900)  # hang guards: 350,000 relayed messages take minutes on a busy 2-core machine
async def test_notifications_without_end_during_a_call_reach_a_caller_that_keeps_up(tmp_path: Path) -> None:
    received = 0

    def on_log(params: dict[str, Any]) -> None:
        nonlocal received
        received += 1

    upstream = stdio_upstream(tmp_path, RAW, "flood", timeout=HANG_GUARD * 10)
    async with gateway_of((None, upstream), log_level="debug", on_log=on_log) as downstream:
        waiting = asyncio.ensure_future(downstream.call_tool("wait"))  # never answered: every line is its log
        await eventually(lambda: flooded(tmp_path) >= FLOOD_WARMUP and received > 0, "logs reach the caller")
        before, since, relayed = rss_bytes(os.getpid()), flooded(tmp_path), received
        await eventually(lambda: flooded(tmp_path) >= since + FLOOD_MORE, "the flood goes on", within=600)
        growth = rss_bytes(os.getpid()) - before
        assert received - relayed >= FLOOD_MORE // 2, "they were relayed, not dropped"
        assert not waiting.done()
        waiting.cancel()
        await asyncio.gather(waiting, return_exceptions=True)
        await eventually(
            lambda: any(path.name.startswith("cancelled-") for path in tmp_path.iterdir()), "cancelled upstream"
        )
    assert growth < GROWTH_BOUND, f"grew by {growth / 2**20:.0f} MB over {FLOOD_MORE} relayed notifications"


async def test_notifications_without_end_to_a_caller_that_does_not_read_keep_the_gateway_bounded(
    tmp_path: Path,
) -> None:
    target = [sys.executable, str(RAW), "flood"]
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/logLevel": "debug",
    }
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "wait", "arguments": {}, "_meta": meta},
    }
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "tools/call",
        "Mcp-Name": "wait",
    }
    with gateway_process(tmp_path, target, timeout=str(HANG_GUARD * 10)) as gateway:
        async with (
            httpx.AsyncClient(timeout=HANG_GUARD) as http,
            http.stream("POST", gateway.url, json=body, headers=headers) as stream,
        ):
            assert stream.status_code == 200  # and nothing of the stream is read from here on
            await eventually(lambda: flooded(tmp_path) >= FLOOD_WARMUP, "the flood is under way")
            before, since = rss_bytes(gateway.process.pid), flooded(tmp_path)
            await eventually(lambda: flooded(tmp_path) >= since + FLOOD_MORE, "the flood goes on")
            growth = rss_bytes(gateway.process.pid) - before
    assert growth < GROWTH_BOUND, f"the gateway grew by {growth / 2**20:.0f} MB for a caller that reads nothing"
