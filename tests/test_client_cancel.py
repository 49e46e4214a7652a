"""A call ``toolkit.Client`` gives up on is cancelled on the server: by its timeout or by the caller.

Real servers (``toolkit run``) over stdio and Streamable HTTP, in both eras: over stdio, and in the
legacy era, the client sends ``notifications/cancelled``; over HTTP in 2026-07-28 it closes the
request's stream (2026-07-28 basic/patterns/cancellation). The server's tool writes a mark when
it is cancelled; the connection keeps serving afterwards.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import pytest
from tests.http_support import cli_server
from tests.support.processes import REPO

from toolkit._client import http_legacy_session
from toolkit._client import session as client_session
from toolkit.client import Client

pytestmark = pytest.mark.timeout(180)

APP = REPO / "tests" / "support" / "client_cancel_app.py"
PATIENT = 60.0
"""How long a mark may take to appear: far longer than it takes, so a missing one fails the test."""


async def appears(path: Path) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + PATIENT
    while not path.exists():
        assert loop.time() < deadline, f"{path.name} never appeared"
        await asyncio.sleep(0.02)


@pytest.fixture
def marks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CANCEL_MARKS", str(tmp_path))
    return tmp_path


async def check_cancellation(target: object, version: str, marks: Path) -> None:
    async with Client(target, protocol_version=version, env={"CANCEL_MARKS": str(marks)}) as client:
        # By the caller: the task awaiting the call is cancelled once the tool has started.
        call = asyncio.ensure_future(client.call_tool("wait", {"mark": "by-caller"}, timeout=PATIENT))
        await appears(marks / "by-caller.started")
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        await appears(marks / "by-caller.cancelled")
        # By the timeout: TimeoutError here, cancelled there. The timeout is short, so the call
        # may time out before the tool starts: then the server cancels a call not begun yet.
        with pytest.raises(TimeoutError, match=r"did not answer tools/call within 0\.5 s"):
            await client.call_tool("wait", {"mark": "by-timeout"}, timeout=0.5)
        if (marks / "by-timeout.started").exists():
            await appears(marks / "by-timeout.cancelled")
        assert (await client.call_tool("quick")).data == 1  # the connection serves on


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
async def test_over_stdio(version: str, marks: Path) -> None:
    await check_cancellation([sys.executable, "-m", "toolkit", "run", str(APP)], version, marks)


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
async def test_over_http(version: str, marks: Path) -> None:
    assert os.environ["CANCEL_MARKS"] == str(marks)  # the server process inherits it
    with cli_server(APP) as server:
        await check_cancellation(server.url, version, marks)


async def test_closing_does_not_wait_long_for_a_cancellation_a_hung_server_never_takes(
    marks: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The server stops answering (SIGSTOP: the kernel still takes connections). The call times out
    # and its notifications/cancelled is POSTed, then the session's DELETE, and nothing answers
    # either: close() waited for each for the HTTP transport's own timeout (30 s). It now gives
    # them CLOSE_GRACE (here 0.2 s).
    monkeypatch.setattr(client_session, "CLOSE_GRACE", 0.2)
    monkeypatch.setattr(http_legacy_session, "CLOSE_GRACE", 0.2)
    with cli_server(APP) as server:
        client = Client(server.url, protocol_version="2025-11-25")
        await client.__aenter__()
        await client.list_tools()  # known: the call asks only for itself
        os.kill(server.process.pid, signal.SIGSTOP)
        try:
            with pytest.raises(TimeoutError, match=r"within 0\.5 s"):
                await client.call_tool("quick", timeout=0.5)
            async with asyncio.timeout(20):  # between the grace and the transport's 30 s: a hang guard
                await client.__aexit__(None, None, None)
        finally:
            os.kill(server.process.pid, signal.SIGCONT)
