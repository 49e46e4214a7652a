"""toolkit's own SSE response (``_transports/http/sse.py``) over the real wire: uvicorn on 127.0.0.1,
raw sockets reading the bytes a client gets.

What an open stream must do with one coroutine and one watcher: the event-stream format (ids,
``event: message``, the priming event's ``retry``), pings while idle, resumption with
``Last-Event-ID``, and everything it held freed once its client leaves (tasks, the GET stream's
claim, a listener's subscription). No test here times anything: a wait is for a condition, with
a deadline far past what a busy machine needs.
"""

from __future__ import annotations

import asyncio
import json
import logging
import signal
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from tests.http_support import LEGACY, MODERN, Running, free_port, serve

from toolkit import Context, EventStore, Server
from toolkit._transports.http.sse import EventStream, frame

URI = "test://counter"
DEADLINE = 30.0
PADDING = "p" * 1000
INIT = {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
}


def make_server(release: asyncio.Event | None = None) -> Server:
    server = Server("sse-test", version="1.0.0")

    @server.resource(URI, mime_type="text/plain")
    def counter() -> str:
        return "0"

    @server.tool()
    async def touch() -> str:
        await server.notify_resource_updated(URI)
        return "touched"

    @server.tool()
    async def slow(ctx: Context) -> str:
        await ctx.report_progress(1, 2)
        assert release is not None
        await release.wait()
        return "done"

    @server.tool()
    async def chatty(ctx: Context, count: int) -> str:
        for n in range(1, count + 1):
            await ctx.report_progress(n, count, PADDING)
        return "said it all"

    return server


# --- a raw HTTP/1.1 client: what the bytes are ------------------------------------------------


class Raw:
    """One connection; ``request`` writes a request, ``head`` reads a response's status and headers."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.buffer = b""

    @classmethod
    async def open(cls, running: Running, *, receive_buffer: int | None = None) -> Raw:
        """A connection; ``receive_buffer`` fixes the socket's (no autotuning: a small one makes the server wait)."""
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if receive_buffer is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
        sock.setblocking(False)
        await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", running.port))
        reader, writer = await asyncio.open_connection(sock=sock)
        return cls(reader, writer)

    def request(self, method: str, headers: dict[str, str], body: Any = None) -> None:
        data = json.dumps(body).encode() if body is not None else b""
        lines = [f"{method} /mcp HTTP/1.1", "Host: 127.0.0.1", *(f"{k}: {v}" for k, v in headers.items())]
        if body is not None:
            lines += ["Content-Type: application/json", f"Content-Length: {len(data)}"]
        self.writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + data)

    async def head(self) -> tuple[int, dict[str, str]]:
        async with asyncio.timeout(DEADLINE):
            raw = await self.reader.readuntil(b"\r\n\r\n")
        lines = raw.decode("latin-1").split("\r\n")
        headers = {}
        for line in lines[1:]:
            if line:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
        return int(lines[0].split(" ", 2)[1]), headers

    async def until(self, needle: bytes) -> bytes:
        """The body's bytes (chunk framing included) up to and including ``needle``; the rest kept."""
        async with asyncio.timeout(DEADLINE):
            while needle not in self.buffer:
                data = await self.reader.read(65536)
                if not data:
                    raise AssertionError(f"the stream ended before {needle!r}: {self.buffer[-300:]!r}")
                self.buffer += data
        cut = self.buffer.index(needle) + len(needle)
        seen, self.buffer = self.buffer[:cut], self.buffer[cut:]
        return seen

    async def close(self) -> None:
        self.writer.close()
        await self.writer.wait_closed()


def legacy_headers(session_id: str | None = None) -> dict[str, str]:
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": LEGACY}
    if session_id is not None:
        headers["Mcp-Session-Id"] = session_id
    return headers


async def body_of(raw: Raw, headers: dict[str, str]) -> bytes:
    if "content-length" in headers:
        return await raw.reader.readexactly(int(headers["content-length"]))
    return await raw.until(b"0\r\n\r\n")


async def open_session(running: Running, *, subscribe: bool = True, uri: str = URI) -> str:
    raw = await Raw.open(running)
    try:
        raw.request("POST", legacy_headers(), {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT})
        status, headers = await raw.head()
        await body_of(raw, headers)
        assert status == 200
        session_id = headers["mcp-session-id"]
        raw.request("POST", legacy_headers(session_id), {"jsonrpc": "2.0", "method": "notifications/initialized"})
        status, headers = await raw.head()
        await body_of(raw, headers)
        assert status == 202
        if subscribe:
            body = {"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe", "params": {"uri": uri}}
            raw.request("POST", legacy_headers(session_id), body)
            status, headers = await raw.head()
            await body_of(raw, headers)
            assert status == 200
        return session_id
    finally:
        await raw.close()


async def open_get(
    running: Running, session_id: str, extra: dict[str, str] | None = None, *, receive_buffer: int | None = None
) -> tuple[Raw, int]:
    raw = await Raw.open(running, receive_buffer=receive_buffer)
    headers = {"Accept": "text/event-stream", "MCP-Protocol-Version": LEGACY, "Mcp-Session-Id": session_id}
    raw.request("GET", {**headers, **(extra or {})})
    status, _ = await raw.head()
    return raw, status


async def open_listen(running: Running, request_id: Any, *, uri: str = URI, receive_buffer: int | None = None) -> Raw:
    raw = await Raw.open(running, receive_buffer=receive_buffer)
    params = {"notifications": {"resourceSubscriptions": [uri]}, "_meta": META}
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "subscriptions/listen",
    }
    raw.request(
        "POST", headers, {"jsonrpc": "2.0", "id": request_id, "method": "subscriptions/listen", "params": params}
    )
    status, response_headers = await raw.head()
    assert status == 200
    assert response_headers["content-type"].startswith("text/event-stream")
    await raw.until(b"notifications/subscriptions/acknowledged")
    await raw.until(b"\r\n\r\n")
    return raw


def tool_call(raw: Raw, name: str, arguments: dict[str, Any], request_id: int = 9) -> None:
    params = {"name": name, "arguments": arguments, "_meta": {**META, "progressToken": "t"}}
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "tools/call",
        "Mcp-Name": name,
    }
    raw.request("POST", headers, {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params})


async def call_tool(running: Running, name: str, arguments: dict[str, Any] | None = None) -> None:
    raw = await Raw.open(running)
    try:
        params = {"name": name, "arguments": arguments or {}, "_meta": META}
        headers = {
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": MODERN,
            "Mcp-Method": "tools/call",
            "Mcp-Name": name,
        }
        raw.request("POST", headers, {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": params})
        status, headers = await raw.head()
        assert status == 200, await body_of(raw, headers)
        await body_of(raw, headers)
    finally:
        await raw.close()


def messages(data: bytes) -> list[dict[str, Any]]:
    """The JSON-RPC messages in the ``data:`` lines of a stretch of the stream."""
    return [json.loads(line[6:]) for line in data.split(b"\r\n") if line.startswith(b"data: {")]


async def until_true(check: Any, what: str) -> None:
    async with asyncio.timeout(DEADLINE):
        while not check():
            await asyncio.sleep(0.02)
    assert check(), what


@asynccontextmanager
async def serving(server: Server, **options: Any) -> AsyncIterator[Running]:
    async with serve(server, **options) as running:
        yield running


# --- the tests ----------------------------------------------------------------------------------


def test_an_event_is_framed_as_the_event_stream_format_says() -> None:
    assert frame(b'{"a":1}') == b'event: message\r\ndata: {"a":1}\r\n\r\n'
    assert frame(b"{}", "s_1") == b"id: s_1\r\nevent: message\r\ndata: {}\r\n\r\n"
    assert frame(b"", "s_0", retry=1500, message=False) == b"id: s_0\r\ndata: \r\nretry: 1500\r\n\r\n"
    # A line break in the data (never in compact JSON) starts another data line, whichever break it is.
    assert frame(b"a\nb\r\nc\rd") == b"event: message\r\ndata: a\r\ndata: b\r\ndata: c\r\ndata: d\r\n\r\n"


async def test_a_get_stream_has_the_sse_headers_pings_while_idle_and_carries_notifications() -> None:
    async with serving(make_server(), sse_ping_seconds=0.05) as running:
        session_id = await open_session(running)
        raw, status = await open_get(running, session_id)
        try:
            assert status == 200
            await raw.until(b": ping\r\n\r\n")
            await raw.until(b": ping\r\n\r\n")  # the timer is armed again after each ping
            await call_tool(running, "touch")
            seen = await raw.until(b"}\r\n\r\n")
            assert b"event: message\r\ndata: " in seen
            assert messages(seen) == [
                {"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": URI}}
            ]
        finally:
            await raw.close()


async def test_the_sse_response_headers() -> None:
    async with serving(make_server()) as running:
        session_id = await open_session(running)
        raw = await Raw.open(running)
        try:
            raw.request("GET", {"Accept": "text/event-stream", **legacy_headers(session_id)})
            status, headers = await raw.head()
            assert status == 200
            assert headers["content-type"] == "text/event-stream; charset=utf-8"
            assert headers["cache-control"] == "no-cache, no-transform"
            assert headers["x-accel-buffering"] == "no"
            assert headers["transfer-encoding"] == "chunked"
        finally:
            await raw.close()


async def test_clients_leaving_their_streams_free_everything_the_streams_held() -> None:
    """Twenty GET streams and twenty listen streams, dropped by their clients mid-stream: the
    tasks, the GET claims, the listeners and their subscriptions all go."""
    server = make_server()
    async with serving(server) as running:
        session_ids = [await open_session(running) for _ in range(20)]
        before = len(asyncio.all_tasks())
        gets = [await open_get(running, session_id) for session_id in session_ids]
        assert all(status == 200 for _, status in gets)
        listens = [await open_listen(running, n) for n in range(20)]
        listeners = server.engine.subscribers._listeners
        assert len(listeners) == 20
        assert len(asyncio.all_tasks()) > before
        for raw, _ in gets:
            await raw.close()
        for raw in listens:
            await raw.close()
        await until_true(lambda: not listeners, "a listener outlived its client")
        await until_true(lambda: len(asyncio.all_tasks()) <= before, "a stream's task outlived its client")
        # The GET claim is released: the session may open its GET stream again.
        again, status = await open_get(running, session_ids[0])
        try:
            assert status == 200
        finally:
            await again.close()


async def test_each_listener_hears_a_fan_out_tagged_with_its_own_subscription() -> None:
    async with serving(make_server()) as running:
        ids: list[Any] = [7, "seven", 'quote"d', 2**40]
        listens = [await open_listen(running, request_id) for request_id in ids]
        try:
            await call_tool(running, "touch")
            for request_id, raw in zip(ids, listens, strict=True):
                seen = await raw.until(b"}\r\n\r\n")
                assert messages(seen) == [
                    {
                        "jsonrpc": "2.0",
                        "method": "notifications/resources/updated",
                        "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": request_id}, "uri": URI},
                    }
                ]
        finally:
            for raw in listens:
                await raw.close()


async def test_a_dropped_request_stream_resumes_with_last_event_id_from_its_bytes() -> None:
    release = asyncio.Event()
    async with serving(make_server(release), event_store=EventStore(), retry_ms=1500) as running:
        session_id = await open_session(running, subscribe=False)
        raw = await Raw.open(running)
        params = {"name": "slow", "arguments": {}, "_meta": {"progressToken": "p"}}
        raw.request(
            "POST", legacy_headers(session_id), {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": params}
        )
        status, headers = await raw.head()
        assert status == 200
        assert headers["content-type"] == "text/event-stream; charset=utf-8"
        priming = await raw.until(b"\r\n\r\n")
        assert b"data: \r\nretry: 1500\r\n\r\n" in priming
        progress = await raw.until(b"}\r\n\r\n")
        assert messages(progress)[0]["method"] == "notifications/progress"
        last_id = next(line[4:] for line in progress.split(b"\r\n") if line.startswith(b"id: ")).decode()
        await raw.close()  # the connection drops; the request runs on
        release.set()
        resumed, status = await open_get(running, session_id, {"Last-Event-ID": last_id})
        try:
            assert status == 200
            rest = await resumed.until(b"0\r\n\r\n")  # the stream ends after the response
            replayed = messages(rest)
            assert [m.get("id") for m in replayed] == [5]
            assert replayed[0]["result"]["content"][0]["text"] == "done"
        finally:
            await resumed.close()


def test_the_http_transport_loads_no_sse_library() -> None:
    """The streams are toolkit's own: the HTTP transport does not import sse-starlette (no longer a dependency)."""
    code = (
        "import sys, toolkit._transports.http.app, toolkit._transports.http.events;"
        "sys.exit(3 if 'sse_starlette' in sys.modules else 0)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=DEADLINE, check=False)
    assert done.returncode == 0, done.stderr.decode()[-2000:] or "sse_starlette was imported"


PLAIN_UVICORN_APP = """
from toolkit import Server

server = Server("plain", version="1.0.0")


@server.resource("test://counter", mime_type="text/plain")
def counter() -> str:
    return "0"


app = server.http_app(shutdown_grace=1.0)
"""


async def test_a_plain_uvicorn_stops_on_sigterm_with_streams_open(tmp_path: Path) -> None:
    """``uvicorn app:app`` (not toolkit's runner) waits for open responses before it shuts the app
    down: the streams notice the server exiting and end (a GET stream at once, a request's stream
    after ``shutdown_grace``), so SIGTERM stops the server instead of hanging on its streams."""
    (tmp_path / "plain_app.py").write_text(PLAIN_UVICORN_APP)
    port = free_port()
    argv = [sys.executable, "-m", "uvicorn", "plain_app:app", "--host", "127.0.0.1", "--port", str(port)]
    argv += ["--log-level", "warning"]
    process = subprocess.Popen(argv, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    streams: list[Raw] = []
    try:
        running = Running(f"http://127.0.0.1:{port}", "/mcp", None)  # type: ignore[arg-type]
        async with asyncio.timeout(DEADLINE):
            while True:
                try:
                    _, writer = await asyncio.open_connection("127.0.0.1", port)
                except OSError:
                    assert process.poll() is None, process.stdout.read().decode() if process.stdout else ""
                    await asyncio.sleep(0.05)
                    continue
                writer.close()
                await writer.wait_closed()
                break
        session_id = await open_session(running)
        get, status = await open_get(running, session_id)
        streams.append(get)
        assert status == 200
        streams.append(await open_listen(running, 1))
        process.send_signal(signal.SIGTERM)
        exited = await asyncio.to_thread(_exits_within, process, DEADLINE)
        assert exited, f"uvicorn still ran {DEADLINE:g} s after SIGTERM with SSE streams open"
        for stream in streams:  # each stream was ended by the server, its last chunk sent
            await stream.until(b"0\r\n\r\n")
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()
        for stream in streams:
            await stream.close()


def _exits_within(process: subprocess.Popen[bytes], seconds: float) -> bool:
    try:
        process.wait(seconds)
    except subprocess.TimeoutExpired:
        return False
    return True


async def test_a_client_reading_late_gets_every_event_in_order() -> None:
    """3,000 progress messages of ~1 KB (3 MB, far past the socket buffers: the client's is fixed
    at 4 KiB) to a client that reads nothing until the request has had time to fill them: when a
    write has to wait for the client, the next ones (and the pings, when they come every 20 ms)
    wait behind it, none lost, none reordered, the response last."""
    async with serving(make_server(), sse_ping_seconds=0.02) as running:
        raw = await Raw.open(running, receive_buffer=4096)
        try:
            tool_call(raw, "chatty", {"count": 3000})
            await asyncio.sleep(0.5)  # not a measure: however far the server got, nothing may be lost
            status, headers = await raw.head()
            assert status == 200
            assert headers["content-type"] == "text/event-stream; charset=utf-8"
            received = messages(await raw.until(b"0\r\n\r\n"))
        finally:
            await raw.close()
        progress = [m["params"]["progress"] for m in received if m.get("method") == "notifications/progress"]
        assert progress == list(range(1, 3001))
        assert received[-1]["result"]["content"][0]["text"] == "said it all"


LONG_URI = "test://long/" + "x" * 30_000
"""Each of its update notifications is ~30 KB: a few hundred fill every buffer between a server and
a client that does not read (the client's 4 KiB, the server socket's up to 4 MiB, uvicorn's 64 KiB)."""


def flooding_server() -> Server:
    server = make_server()

    @server.resource(LONG_URI, mime_type="text/plain")
    def long() -> str:
        return "long"

    @server.tool()
    async def flood(count: int) -> str:
        for _ in range(count):
            await server.notify_resource_updated(LONG_URI)
        return "flooded"

    return server


def server_sessions(running: Running) -> dict[str, Any]:
    """The legacy sessions the served app holds, by id."""
    sessions: dict[str, Any] = running.server.config.app.endpoint.sessions.local
    return sessions


async def read_notifications(raw: Raw, count: int) -> None:
    """Read ``raw``'s stream until ``count`` update notifications have come."""
    seen = 0
    async with asyncio.timeout(DEADLINE):
        while seen < count:
            data = await raw.reader.read(1 << 20)
            if not data:
                raise AssertionError(f"the stream ended after {seen} of {count} notifications")
            raw.buffer += data
            seen = raw.buffer.count(b"notifications/resources/updated")


async def read_to_the_end(raw: Raw) -> bytes:
    async with asyncio.timeout(DEADLINE):
        while data := await raw.reader.read(1 << 20):
            raw.buffer += data
    return raw.buffer


@pytest.mark.parametrize("era", ["legacy GET stream", "subscriptions/listen"])
async def test_a_client_that_stops_reading_holds_up_no_one_and_its_stream_is_given_up(
    era: str, caplog: pytest.LogCaptureFixture
) -> None:
    """400 updates of ~30 KB (12 MB) fanned out to a client that reads nothing and one that reads:
    the reading one hears every one while the other is stuck (the fan-out waits for no one), and
    the stuck one's stream is given up after ``sse_write_timeout`` without a byte accepted: its
    subscription ends, and when it reads again it finds its response cut, not completed."""
    server = flooding_server()
    count = 400
    async with serving(server, sse_write_timeout=3.0) as running:
        if era == "legacy GET stream":
            stuck_session = await open_session(running, uri=LONG_URI)
            stuck, status = await open_get(running, stuck_session, receive_buffer=4096)
            good, good_status = await open_get(running, await open_session(running, uri=LONG_URI))
            assert status == good_status == 200
            sessions = server_sessions(running)

            def stuck_stream_open() -> bool:
                return sessions[stuck_session].standalone is not None
        else:
            stuck = await open_listen(running, "stuck", uri=LONG_URI, receive_buffer=4096)
            good = await open_listen(running, "good", uri=LONG_URI)
            listeners = server.engine.subscribers._listeners

            def stuck_stream_open() -> bool:
                return any(listener.subscription_id == "stuck" for listener in listeners)

        try:
            assert stuck_stream_open()
            with caplog.at_level(logging.WARNING, logger="toolkit"):
                await call_tool(running, "flood", {"count": count})
                await read_notifications(good, count)
                await until_true(lambda: not stuck_stream_open(), "the stuck client's stream was never given up")
            assert "accepted nothing for 3 s: the stream is given up" in caplog.text
            received = await read_to_the_end(stuck)
            assert 0 < received.count(b"notifications/resources/updated") < count
            assert not received.endswith(b"0\r\n\r\n")  # cut: the chunked response never ended
        finally:
            await stuck.close()
            await good.close()


async def test_a_direct_write_that_fails_leaves_the_stream_writable() -> None:
    """An ASGI ``send`` raising (not the client leaving) on a fan-out's direct write: the sender
    hears of it, and the stream's later events are still written, directly or by its writer."""
    written: list[bytes] = []
    failing = [True]

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body" and failing[0]:
            failing[0] = False
            raise RuntimeError("the server refused this one")
        written.append(message.get("body", b""))

    async def receive() -> dict[str, Any]:
        await asyncio.Event().wait()  # the client never leaves
        return {"type": "http.disconnect"}

    stream = EventStream(receive, send, 0)
    await stream.open()
    writer = asyncio.create_task(stream.idle())
    await asyncio.sleep(0)  # the writer waits with nothing to do
    try:
        with pytest.raises(RuntimeError, match="refused"):
            stream.send_now(frame(b"{}"))
        assert stream.send_now(frame(b'{"n":2}')) is True  # written from here: not left "writing"
        assert written[-1] == frame(b'{"n":2}')
    finally:
        writer.cancel()
        await asyncio.gather(writer, return_exceptions=True)
        await stream.close()
