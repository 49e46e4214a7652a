"""One ``send()`` per HTTP response: the response head held for the body written after it.

``toolkit._transports.http.onewrite`` wraps the transport uvicorn writes to. Unit tests drive it
with a transport that records writes; the wire tests start ``toolkit run --transport http``
and read its responses with a plain socket.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Callable
from typing import Any

from tests.support.processes import RunningServer

from toolkit._transports.http.onewrite import OneWriteProtocol, OneWriteTransport

HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n"


class Recording(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.events: list[Any] = []

    def write(self, data: Any) -> None:
        self.events.append(bytes(data))

    def writelines(self, list_of_data: Any) -> None:
        self.events.append(("lines", [bytes(d) for d in list_of_data]))

    def write_eof(self) -> None:
        self.events.append("eof")

    def close(self) -> None:
        self.events.append("close")

    def abort(self) -> None:
        self.events.append("abort")

    def is_closing(self) -> bool:
        return False

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return ("extra", name)


def test_a_head_announcing_its_length_and_the_body_after_it_are_one_write() -> None:
    recording = Recording()
    transport = OneWriteTransport(recording)
    transport.write(HEAD)
    assert recording.events == []
    transport.write(b"{}")
    assert recording.events == [HEAD + b"{}"]
    transport.write(b"HTTP/1.1 204 No Content\r\ncontent-length: 0\r\n\r\n")
    transport.write(b"")  # uvicorn writes an empty body too
    assert recording.events == [HEAD + b"{}", b"HTTP/1.1 204 No Content\r\ncontent-length: 0\r\n\r\n"]


def test_a_head_of_unknown_length_goes_out_at_once() -> None:
    """A streamed response (SSE, chunked) whose first event comes later: its head is not held for it."""
    recording = Recording()
    transport = OneWriteTransport(recording)
    stream_head = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
    transport.write(stream_head)
    assert recording.events == [stream_head]
    transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")
    assert recording.events == [stream_head, b"HTTP/1.1 100 Continue\r\n\r\n"]


def test_writes_that_are_not_heads_pass_through_in_order() -> None:
    recording = Recording()
    transport = OneWriteTransport(recording)
    transport.write(b"5\r\nhello\r\n")
    transport.write(b"HTTP/1.1 in a body, content-length: not ending a head")
    assert recording.events == [b"5\r\nhello\r\n", b"HTTP/1.1 in a body, content-length: not ending a head"]


def test_a_held_head_is_written_before_the_connection_ends() -> None:
    for end, expected in (("close", [HEAD, "close"]), ("write_eof", [HEAD, "eof"]), ("abort", ["abort"])):
        recording = Recording()
        transport = OneWriteTransport(recording)
        transport.write(HEAD)
        getattr(transport, end)()
        assert recording.events == expected, end
    recording = Recording()
    transport = OneWriteTransport(recording)
    transport.write(HEAD)
    transport.writelines([b"a", b"b"])
    assert recording.events == [HEAD, ("lines", [b"a", b"b"])]
    recording = Recording()
    transport = OneWriteTransport(recording)
    transport.write(HEAD)
    transport.flush()
    assert recording.events == [HEAD]


def test_everything_else_is_the_transports_own() -> None:
    transport = OneWriteTransport(Recording())
    assert transport.get_extra_info("peername") == ("extra", "peername")
    assert transport.is_closing() is False


def test_toolkit_run_serves_with_the_one_write_protocol() -> None:
    from toolkit import Server
    from toolkit._transports.http.runner import graceful_server

    server = Server("onewrite")
    assert graceful_server(server.http_app()).config.http is OneWriteProtocol
    assert graceful_server(lambda scope, receive, send: None).config.http is OneWriteProtocol  # type: ignore[arg-type,return-value]


def _post(port: int, body: dict[str, Any]) -> bytes:
    payload = json.dumps(body).encode()
    request = (
        b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
        b"accept: application/json, text/event-stream\r\ncontent-length: %d\r\n\r\n" % len(payload)
    ) + payload
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        sock.sendall(request)
        return sock.recv(1 << 20)  # what the first segment brought


def _head(sock: socket.socket) -> bytes:
    """What came up to the end of a response head (the socket's timeout is the hang guard)."""
    got = b""
    while b"\r\n\r\n" not in got:
        chunk = sock.recv(65536)
        assert chunk, got
        got += chunk
    return got


def test_a_json_response_arrives_in_one_segment(http_server: Callable[..., RunningServer]) -> None:
    """Head and body in one send(): the client's first read has the whole response. With two
    sends (uvicorn's own), a read that wakes between them gets the head alone."""
    running = http_server("examples/weather.py")
    for n in range(20):
        first = _post(
            running.port,
            {
                "jsonrpc": "2.0",
                "id": n,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "1"},
                },
            },
        )
        head, _, body = first.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200"), first
        length = next(
            int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")
        )
        assert len(body) == length, (n, first)
        assert json.loads(body)["result"]["protocolVersion"] == "2025-06-18"


def test_a_stream_with_no_event_yet_has_its_head_at_once(http_server: Callable[..., RunningServer]) -> None:
    """A legacy session's GET stream sends nothing but its head until an event comes."""
    running = http_server("examples/weather.py")
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
    }
    head = _post(running.port, init).partition(b"\r\n\r\n")[0]
    session = next(
        line.split(b":", 1)[1].strip() for line in head.split(b"\r\n") if line.lower().startswith(b"mcp-session-id:")
    )
    with socket.create_connection(("127.0.0.1", running.port), timeout=60) as sock:
        sock.sendall(
            b"GET /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\naccept: text/event-stream\r\n"
            b"mcp-protocol-version: 2025-06-18\r\nmcp-session-id: " + session + b"\r\n\r\n"
        )
        got = _head(sock)
        assert got.startswith(b"HTTP/1.1 200"), got
        assert b"text/event-stream" in got.partition(b"\r\n\r\n")[0]


def test_a_head_request_gets_its_head_though_no_body_follows(http_server: Callable[..., RunningServer]) -> None:
    """uvicorn writes no body for HEAD: the held head goes out when the response is complete."""
    running = http_server("examples/weather.py")
    with socket.create_connection(("127.0.0.1", running.port), timeout=60) as sock:
        for _ in range(2):  # and the connection, kept alive, answers the next one
            sock.sendall(b"HEAD /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
            got = _head(sock)
            assert got.startswith(b"HTTP/1.1 "), got
            assert b"content-length:" in got.lower(), got
            assert got.endswith(b"\r\n\r\n"), got  # the head alone
