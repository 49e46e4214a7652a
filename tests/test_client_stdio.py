"""``StdioTransport``: ``ClientSession`` driving real server processes over stdio, in both eras, and bad servers.

The good server is ``tests/support/client_stdio_app.py`` run as a script (``server.run()``) and
``toolkit run``; the bad ones are small ``python -c`` programs: one that exits at once, one that
dies mid-request, one that writes lines that are no message, one that writes a giant line, and
ones that ignore the end of their stdin (and SIGTERM). Nothing waits on a clock: a hang fails by
the test's timeout, every wait is generous for a busy two-core machine.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shlex
import signal
import sys
import textwrap
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from tests.support.processes import REPO
from tests.wire import assert_valid

from toolkit._client.session import ClientSession
from toolkit._client.stdio import DEFAULT_INHERITED_ENV, StdioTransport, default_environment
from toolkit._client.transport import TransportClosed

pytestmark = [
    pytest.mark.timeout(90),
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and process groups"),
]

APP = Path(__file__).with_name("support") / "client_stdio_app.py"
STDIO_APP = Path(__file__).with_name("support") / "stdio_app.py"
MODERN = "2026-07-28"
LEGACY = "2025-11-25"
PATIENT = 60.0
"""A request's timeout: far longer than anything here takes, so a hang fails the test instead."""


async def elicit(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {"name": "Ada"}}


async def sample(params: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m", "stopReason": "endTurn"}


HANDLERS = {"elicitation/create": elicit, "sampling/createMessage": sample}


def script(source: str, *args: str, **options: Any) -> StdioTransport:
    """A transport running ``python -c source``, stderr kept (not forwarded)."""
    options.setdefault("stderr", "capture")
    return StdioTransport([sys.executable, "-c", textwrap.dedent(source), *args], cwd=REPO, **options)


@contextlib.asynccontextmanager
async def session_to(transport: StdioTransport, **options: Any) -> AsyncIterator[ClientSession]:
    session = ClientSession(transport, timeout=PATIENT, **options)
    try:
        yield session
    finally:
        await session.close()
    assert transport.returncode is not None, "close() returned before the child was reaped"


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for its parent counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


async def wait_until(condition: Callable[[], bool], what: str, timeout: float = PATIENT) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.02)


# --- a real server, both eras -----------------------------------------------------------------------


@pytest.mark.parametrize("version", [LEGACY, MODERN, "auto"])
async def test_a_server_script_in_each_era(version: str) -> None:
    seen: list[dict[str, Any]] = []
    transport = StdioTransport([sys.executable, str(APP)], cwd=REPO, stderr="capture")
    async with session_to(
        transport, protocol_version=version, handlers=HANDLERS, on_message=seen.append, log_level="info"
    ) as session:
        await session.open()
        assert session.protocol_version == (MODERN if version == "auto" else version)
        assert [tool["name"] for tool in await session.list_tools()] == ["add", "greet", "chatty", "die"]
        added = await session.call_tool("add", {"a": 2, "b": 3})
        assert added["content"] == [{"type": "text", "text": "5"}]
        greeted = await session.call_tool("greet")
        assert greeted["content"][0]["text"] == "hi Ada"
        chatted = await session.call_tool("chatty")
        assert chatted["content"][0]["text"] == "ok"
        assert transport.pid is not None and transport.returncode is None
    assert transport.returncode == 0  # it exited on its own when its stdin closed
    for message in seen:
        assert_valid(message, session.protocol_version)
    logged = [message["params"] for message in seen if message.get("method") == "notifications/message"]
    assert [entry["level"] for entry in logged] == ["warning"]
    asked = [message["method"] for message in seen if "id" in message]
    if session.modern:  # the questions came in input_required results
        assert asked == []
    else:  # as requests of the server, answered by the handlers
        assert asked == ["elicitation/create", "sampling/createMessage"]


async def test_toolkit_run_from_a_command_string() -> None:
    command = f"{shlex.quote(sys.executable)} -m toolkit run {shlex.quote(str(STDIO_APP))}"
    transport = StdioTransport(command, cwd=REPO, stderr="capture")
    assert transport.argv == [sys.executable, "-m", "toolkit", "run", str(STDIO_APP)]
    async with session_to(transport, protocol_version=MODERN) as session:
        await session.open()
        echoed = await session.call_tool("echo", {"value": {"a": [1, "two", None]}})
        assert echoed["structuredContent"] == {"a": [1, "two", None]}
    assert transport.returncode == 0


# --- servers that cannot start, or stop ---------------------------------------------------------


async def test_a_command_that_does_not_exist_names_the_command() -> None:
    transport = StdioTransport(["toolkit-no-such-server-command", "--flag"])
    session = ClientSession(transport)
    with pytest.raises(FileNotFoundError) as raised:
        await session.open()
    message = str(raised.value)
    assert "could not start the server command ['toolkit-no-such-server-command', '--flag']" in message
    assert transport.pid is None
    await session.close()
    with pytest.raises(TransportClosed):
        await transport.send({"jsonrpc": "2.0", "method": "notifications/initialized"})


@pytest.mark.parametrize("version", [LEGACY, "auto"])
async def test_a_server_that_exits_at_once_fails_the_handshake_with_its_code_and_stderr(version: str) -> None:
    transport = script("import sys; sys.stderr.write('no configuration found\\n'); sys.exit(3)")
    async with session_to(transport, protocol_version=version) as session:
        with pytest.raises(TransportClosed) as raised:
            await session.open()
    message = str(raised.value)
    assert "the server process exited with code 3" in message
    assert "no configuration found" in message
    assert transport.close_reason is not None and "exited with code 3" in transport.close_reason
    assert transport.returncode == 3


@pytest.mark.parametrize("version", [LEGACY, MODERN])
async def test_a_server_that_dies_mid_request_fails_it_and_every_later_one(version: str) -> None:
    transport = StdioTransport([sys.executable, str(APP)], cwd=REPO, stderr="capture")
    async with session_to(transport, protocol_version=version) as session:
        await session.open()
        with pytest.raises(TransportClosed) as raised:
            await session.call_tool("die", {"code": 4})
        assert "tools/call got no response: the server process exited with code 4" in str(raised.value)
        assert "dying with code 4 on purpose" in str(raised.value)
        with pytest.raises(TransportClosed, match="exited with code 4"):
            await session.call_tool("add", {"a": 1, "b": 1})
    assert transport.returncode == 4


async def test_a_server_killed_by_a_signal_says_so() -> None:
    transport = script("import os, signal; os.kill(os.getpid(), signal.SIGKILL)")
    async with session_to(transport, protocol_version=LEGACY) as session:
        with pytest.raises(TransportClosed, match="the server process was killed by SIGKILL"):
            await session.open()
    assert transport.returncode == -signal.SIGKILL


# --- what a server writes -----------------------------------------------------------------------

ANSWERS_AFTER_NOISE = """
    import json, sys
    for line in sys.stdin:
        message = json.loads(line)
        if "method" in message and "id" in message:
            sys.stdout.write("this is not JSON\\n[1, 2]\\n\\n")
            answer = {"jsonrpc": "2.0", "id": message["id"], "result": {"method": message["method"]}}
            sys.stdout.write(json.dumps(answer) + "\\r\\n")
            sys.stdout.flush()
"""


async def test_lines_that_are_no_message_are_skipped_and_the_answer_still_arrives(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="toolkit.client")
    transport = script(ANSWERS_AFTER_NOISE)
    async with session_to(transport, protocol_version=MODERN) as session:
        assert await session.result("ping") == {"method": "ping"}
        assert await session.result("tools/list") == {"method": "tools/list"}
    warnings = [record.getMessage() for record in caplog.records if record.name == "toolkit.client"]
    assert any("not JSON" in warning and "this is not JSON" in warning for warning in warnings)
    assert any("not a JSON-RPC message" in warning and "[1, 2]" in warning for warning in warnings)


GIANT_LINE = """
    import json, sys
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}) + "\\n")
    sys.stdout.flush()
    line = sys.stdin.readline()
    answer = {"jsonrpc": "2.0", "id": json.loads(line)["id"], "result": {"padding": "x" * int(sys.argv[1])}}
    sys.stdout.write(json.dumps(answer) + sys.argv[2])
    sys.stdout.flush()
    sys.stdin.read()  # until the client closes our stdin
"""


@pytest.mark.parametrize(
    ("limit", "padding", "end"),
    [(64 * 1024, 200_000, "\n"), (64 * 1024, 200_000, ""), (100, 150, "\n")],
    ids=["in-pieces", "never-ending", "in-one-read"],
)
async def test_a_line_over_max_frame_bytes_ends_the_connection(limit: int, padding: int, end: str) -> None:
    seen: list[dict[str, Any]] = []
    transport = script(GIANT_LINE, str(padding), end, max_frame_bytes=limit)
    async with session_to(transport, protocol_version=MODERN, on_message=seen.append) as session:
        with pytest.raises(TransportClosed, match=rf"a line longer than {limit} bytes \(max_frame_bytes\)"):
            await session.result("ping")
        with pytest.raises(TransportClosed, match=f"longer than {limit} bytes"):
            await session.notify("notifications/initialized")
    assert [message["method"] for message in seen] == ["notifications/tools/list_changed"]  # what came before
    assert transport.returncode == 0  # it still saw its stdin close


FLOOD = """
    import json, sys
    padding = "x" * 1000
    for number in range(int(sys.argv[1])):
        message = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"n": number, "data": padding}}
        sys.stdout.write(json.dumps(message) + "\\n")
    sys.stdout.flush()
    sys.stderr.write("all written\\n")
    sys.stderr.flush()
    sys.stdin.read()
"""


async def test_a_flood_is_delivered_in_order_while_reading_waits_for_delivery() -> None:
    count = 20_000  # about 20 MB: several times what is read ahead before the child is made to wait
    received: list[int] = []
    release = asyncio.Event()

    async def slow(message: dict[str, Any]) -> None:
        await release.wait()
        received.append(message["params"]["n"])

    transport = script(FLOOD, str(count))
    await transport.open(slow)
    try:
        protocol = transport._protocol  # what the reader holds, to see it stop reading
        assert protocol is not None
        await wait_until(lambda: protocol.paused, "reading to pause")
        assert "all written" not in transport.stderr_lines  # the child waits on its full pipe
        release.set()
        await wait_until(lambda: len(received) == count, "every message")
        assert received == list(range(count))
        await wait_until(lambda: "all written" in transport.stderr_lines, "the child to finish writing")
    finally:
        await transport.close()
    assert transport.returncode == 0


ECHO = """
import json, sys
for line in sys.stdin:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": json.loads(line)["id"], "result": {}}) + "\\n")
    sys.stdout.flush()
"""


@pytest.mark.asyncio_loop  # counts asyncio's own loop passes (uvloop's run in C)
async def test_a_response_is_taken_in_the_loop_pass_that_reads_it() -> None:
    """The child's stdout is read by the transport itself: a response resolves its request from the
    read's own callback, so a request costs two loop passes (the read, the caller resumed), not three
    (asyncio's subprocess transport hands each read on with ``call_soon``)."""
    loop = asyncio.get_running_loop()
    waiting: asyncio.Future[dict[str, Any]] = loop.create_future()

    def resolve(message: dict[str, Any]) -> bool:
        waiting.set_result(message)
        return True

    async def deliver(message: dict[str, Any]) -> None:  # what comes before the reader first waits
        resolve(message)

    transport = script(ECHO)
    await transport.open(deliver)
    transport.resolve_responses_with(resolve)
    passes = 0
    run_once = loop._run_once  # type: ignore[attr-defined]

    def counted() -> None:
        nonlocal passes
        passes += 1
        run_once()

    requests = 40
    try:
        loop._run_once = counted  # type: ignore[attr-defined]
        for number in range(requests):
            waiting = loop.create_future()
            await transport.send({"jsonrpc": "2.0", "id": number, "method": "ping"})
            assert (await waiting)["id"] == number
    finally:
        del loop._run_once  # type: ignore[attr-defined]
        await transport.close()
    assert passes <= 2 * requests + 10, f"{passes} loop passes for {requests} requests"


HOLDER = """
import subprocess, sys
holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True)
sys.stderr.write(f"holder {holder.pid}\\n")
sys.stderr.flush()
sys.stdin.read()
"""


async def test_close_lets_go_of_stdout_that_a_process_of_another_session_still_holds() -> None:
    """A process the server started in a session of its own outlives the shutdown's signals and
    holds the stdout pipe open: ``close`` still ends, and our end of the pipe is closed."""
    transport = script(HOLDER)
    await transport.open(_ignore)
    holder = 0
    try:
        await wait_until(lambda: any(line.startswith("holder ") for line in transport.stderr_lines), "the holder")
        holder = int(next(line for line in transport.stderr_lines if line.startswith("holder ")).split()[1])
        protocol = transport._protocol
        assert protocol is not None and protocol.stdout_transport is not None
        await transport.close()
        assert transport.returncode == 0
        assert alive(holder)  # the pipe's other end is still open over there
        assert protocol.stdout_transport.is_closing()
    finally:
        if holder:
            os.kill(holder, signal.SIGKILL)


async def _ignore(message: dict[str, Any]) -> None:
    pass


async def test_a_send_blocked_on_a_full_pipe_fails_when_the_child_goes() -> None:
    transport = script("import time; time.sleep(600)", shutdown_timeout=0.5)
    await transport.open(_ignore)
    big = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "x" * 4_000_000}}
    sending = asyncio.create_task(transport.send(big))
    await transport.close()
    with pytest.raises(TransportClosed, match="the transport was closed"):
        await sending
    assert transport.returncode == -signal.SIGTERM


async def test_a_send_to_a_child_that_reads_nothing_fails_after_write_timeout() -> None:
    # It waited for room in the pipe for good: a request with a timeout hung, since its timeout
    # counts from the moment it is sent.
    transport = script("import time; time.sleep(600)", shutdown_timeout=0.5, write_timeout=0.5)
    await transport.open(_ignore)
    big = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "x" * 4_000_000}}
    try:
        with pytest.raises(TimeoutError, match=r"did not read what was written to it within 0\.5 s"):
            async with asyncio.timeout(PATIENT):  # a hang guard (its TimeoutError has no such message)
                await transport.send(big)
    finally:
        await transport.close()


# --- closing --------------------------------------------------------------------------------------

STUBBORN = """
    import os, signal, subprocess, sys, time
    if sys.argv[1] == "ignore-sigterm":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    sys.stderr.write(f"ready {grandchild.pid}\\n")
    sys.stderr.flush()
    time.sleep(600)  # never reads its stdin
"""


async def stubborn(behaviour: str) -> tuple[StdioTransport, int]:
    """A started ``STUBBORN`` child, its signal handling in place; and its grandchild's pid."""
    ready = asyncio.Event()
    lines: list[str] = []

    def on_stderr(line: str) -> None:
        lines.append(line)
        if line.startswith("ready"):
            ready.set()

    transport = script(STUBBORN, behaviour, stderr=on_stderr, shutdown_timeout=0.5)
    await transport.open(_ignore)
    async with asyncio.timeout(PATIENT):
        await ready.wait()
    return transport, int(lines[0].split()[1])


@pytest.mark.parametrize(
    ("behaviour", "ended_by"), [("honour-sigterm", signal.SIGTERM), ("ignore-sigterm", signal.SIGKILL)]
)
async def test_close_terminates_then_kills_a_server_that_ignores_its_stdin_closing(
    behaviour: str, ended_by: signal.Signals
) -> None:
    transport, grandchild = await stubborn(behaviour)
    pid = transport.pid
    assert pid is not None and alive(pid) and alive(grandchild)
    await transport.close()
    assert transport.returncode == -ended_by
    assert not alive(pid)  # reaped, not a zombie
    await wait_until(lambda: not alive(grandchild), "the grandchild to die")  # the signals reach its group
    await transport.close()  # idempotent
    with pytest.raises(TransportClosed, match="the transport was closed"):
        await transport.send({"jsonrpc": "2.0", "method": "notifications/initialized"})


async def test_a_cancelled_close_still_shuts_the_child_down() -> None:
    transport, grandchild = await stubborn("ignore-sigterm")
    closing = asyncio.create_task(transport.close())
    await asyncio.sleep(0)  # the shutdown has begun
    closing.cancel()
    with pytest.raises(asyncio.CancelledError):
        await closing
    await transport.close()  # waits for the same shutdown, which went on
    assert transport.returncode == -signal.SIGKILL
    await wait_until(lambda: not alive(grandchild), "the grandchild to die")


async def test_close_is_idempotent_and_concurrent_closes_wait_for_the_same_shutdown() -> None:
    reasons: list[str] = []
    transport = StdioTransport([sys.executable, str(APP)], cwd=REPO, stderr="capture")
    await transport.open(_ignore, on_close=reasons.append)
    await asyncio.gather(transport.close(), transport.close(), transport.close())
    assert transport.returncode == 0
    assert reasons == ["the transport was closed"]  # told once
    with pytest.raises(TransportClosed, match="was closed"):
        await transport.open(_ignore)


async def _ignore(message: dict[str, Any]) -> None:
    pass


# --- options ----------------------------------------------------------------------------------------

PRINTS_ITS_ENVIRONMENT = """
    import os, sys
    for key in sorted(os.environ):
        sys.stderr.write(f"{key}={os.environ[key]}\\n")
"""


async def test_the_child_gets_the_safe_environment_and_what_is_passed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLKIT_TEST_SECRET", "do not pass on")
    transport = script(PRINTS_ITS_ENVIRONMENT, env={"TOOLKIT_TEST_GIVEN": "given", "HOME": "/nowhere"})
    closed = asyncio.Event()
    await transport.open(_ignore, on_close=lambda reason: closed.set())
    async with asyncio.timeout(PATIENT):
        await closed.wait()
    await transport.close()
    environment = dict(line.split("=", 1) for line in transport.stderr_lines if "=" in line)
    assert environment["TOOLKIT_TEST_GIVEN"] == "given"
    assert environment["HOME"] == "/nowhere"  # what is passed wins
    assert environment["PATH"] == os.environ["PATH"]
    assert "TOOLKIT_TEST_SECRET" not in environment
    assert set(default_environment()) <= set(DEFAULT_INHERITED_ENV)


async def test_stderr_is_forwarded_by_default_and_can_go_to_a_callable(capsys: pytest.CaptureFixture[str]) -> None:
    source = "import sys; sys.stderr.write('first\\nsecond without a newline')"
    forwarded = script(source, stderr="forward")
    got: list[str] = []
    called = script(source, stderr=got.append)
    for transport in (forwarded, called):
        closed = asyncio.Event()
        await transport.open(_ignore, on_close=lambda reason, closed=closed: closed.set())
        async with asyncio.timeout(PATIENT):
            await closed.wait()
        await transport.close()
        assert list(transport.stderr_lines) == ["first", "second without a newline"]
        assert "code 0; the last lines of its stderr:\n  first\n  second without a newline" in str(
            transport.close_reason
        )
    assert capsys.readouterr().err == "first\nsecond without a newline\n"
    assert got == ["first", "second without a newline"]


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="empty"):
        StdioTransport("")
    with pytest.raises(ValueError, match="stderr must be"):
        StdioTransport(["server"], stderr="nowhere")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_frame_bytes"):
        StdioTransport(["server"], max_frame_bytes=0)
