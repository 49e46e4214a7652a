"""Real-HTTP helpers for the Streamable HTTP tests: run a toolkit server, talk raw MCP to it.

- ``serve(server_or_app, **http_app_options)``: uvicorn in this event loop on 127.0.0.1, a free
  port, started and always stopped (an async context manager).
- ``cli_server(app, *args)``: ``toolkit run APP --transport http --port P`` in a subprocess,
  waited for and always stopped (a context manager).
- ``McpHttp``: a small raw client on httpx. It reads ``application/json`` and
  ``text/event-stream`` answers, and validates every JSON-RPC message it receives with
  ``tests.wire.assert_valid`` for the version the caller says is in force.
- ``Legacy`` (an ``initialize``-d session) and ``Modern`` (stateless ``_meta`` requests) build
  the right headers and bodies for each era.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from tests.support import processes
from tests.wire import assert_valid

from toolkit import Server

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
ACCEPT_BOTH = "application/json, text/event-stream"
PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"
SUBSCRIPTION_ID_KEY = "io.modelcontextprotocol/subscriptionId"
NAMED = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}
TOOLKIT = Path(sys.executable).with_name("toolkit")
TIMEOUT = 10.0

ServeHttp = Callable[..., Awaitable["McpHttp"]]
"""The ``mcp_http`` fixture: ``await mcp_http(server, **http_app_options)`` gives a client of it."""


def merge_headers(base: Mapping[str, str | None], extra: Mapping[str, str | None] | None) -> dict[str, str | None]:
    """``base`` with ``extra`` on top; names compare case-insensitively, a None value removes the header."""
    merged = dict(base)
    for name, value in (extra or {}).items():
        for known in [key for key in merged if key.lower() == name.lower()]:
            del merged[known]
        merged[name] = value
    return merged


def free_port() -> int:
    return processes.free_port()


def header_value(value: str) -> str:
    """A value as a client must put it in ``Mcp-Name`` / ``Mcp-Param-*`` (spec 2026-07-28, Value Encoding)."""
    safe = all(0x20 <= ord(c) <= 0x7E or c == "\t" for c in value) and value == value.strip()
    if safe and not (value.startswith("=?base64?") and value.endswith("?=")):
        return value
    return base64_sentinel(value)


def base64_sentinel(value: str) -> str:
    return f"=?base64?{base64.b64encode(value.encode()).decode()}?="


# --- running servers --------------------------------------------------------------------------


class _Uvicorn(uvicorn.Server):
    """uvicorn without signal handlers: a test process keeps its own."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


@dataclass
class Running:
    base: str
    path: str
    server: uvicorn.Server

    @property
    def port(self) -> int:
        return int(self.base.rsplit(":", 1)[1])

    @property
    def url(self) -> str:
        return self.base + self.path


@contextlib.asynccontextmanager
async def serve(target: Server | Any, *, path: str = "/mcp", port: int = 0, **options: Any) -> AsyncIterator[Running]:
    """Serve ``target`` (a ``Server``, whose ``http_app`` gets ``options``, or any ASGI app) on 127.0.0.1.

    ``port`` 0 takes a free one; a test that must know the URL before the server exists (a
    token's audience) picks one with ``free_port()`` and passes it.
    """
    app = target.http_app(path=path, **options) if isinstance(target, Server) else target
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        app, lifespan="on", log_level="warning", ws="none", timeout_graceful_shutdown=3, access_log=False
    )
    server = _Uvicorn(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        async with asyncio.timeout(TIMEOUT):
            while not server.started:
                if task.done():
                    task.result()
                    raise RuntimeError("uvicorn stopped before it started")
                await asyncio.sleep(0.005)
        yield Running(f"http://127.0.0.1:{port}", path, server)
    finally:
        server.should_exit = True
        try:
            async with asyncio.timeout(TIMEOUT):
                await asyncio.shield(task)
        except TimeoutError:
            server.force_exit = True
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        finally:
            sock.close()


@dataclass
class CliServer:
    process: subprocess.Popen[bytes]
    port: int
    path: str
    log: Path

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        return self.base + self.path

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self, timeout: float = TIMEOUT) -> float | None:
        """SIGTERM, then wait; the seconds it took, or None if it had to be killed."""
        if self.process.poll() is not None:
            return 0.0
        started = time.monotonic()
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            return None
        return time.monotonic() - started


@contextlib.contextmanager
def cli_server(app: str | Path, *args: str, path: str = "/mcp", port: int | None = None) -> Iterator[CliServer]:
    """``toolkit run APP --transport http --port P [args]``, ready to serve; always stopped.

    ``port`` None picks a free one (retrying if it is taken meanwhile); a test that must know the
    URL before the server starts (a token's audience) picks one with ``free_port()`` and passes it.
    """
    chosen = port
    for _attempt in range(3 if chosen is None else 1):
        port = free_port() if chosen is None else chosen
        handle, log_name = tempfile.mkstemp(prefix="toolkit-cli-", suffix=".log")
        log = Path(log_name)
        command = [str(TOOLKIT), "run", str(app), "--transport", "http", "--port", str(port), *args]
        with os.fdopen(handle, "wb") as sink:
            process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        running = CliServer(process, port, path, log)
        try:
            if _wait_listening(running):
                yield running
                return
            if "address already in use" not in running.output().lower():
                raise RuntimeError(f"`{' '.join(command)}` did not start:\n{running.output()}")
        finally:
            running.stop()
            log.unlink(missing_ok=True)
    raise RuntimeError("could not find a free port for the CLI server")


def _wait_listening(running: CliServer) -> bool:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if running.process.poll() is not None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", running.port), timeout=0.5):
                pass
        except OSError:
            time.sleep(0.05)
            continue
        try:
            httpx.get(running.base + "/", timeout=2)
        except httpx.HTTPError:
            time.sleep(0.05)
            continue
        return True
    raise RuntimeError(f"the CLI server did not start within 30 s:\n{running.output()}")


# --- a raw MCP client -------------------------------------------------------------------------


@dataclass(frozen=True)
class SseEvent:
    data: str
    id: str | None = None
    event: str | None = None
    retry: int | None = None


class _SseParser:
    def __init__(self) -> None:
        self._fields: dict[str, Any] = {}
        self._data: list[str] = []
        self.comments = 0

    def line(self, line: str) -> SseEvent | None:
        if line == "":
            if not self._fields and not self._data:
                return None
            event = SseEvent(
                data="\n".join(self._data),
                id=self._fields.get("id"),
                event=self._fields.get("event"),
                retry=self._fields.get("retry"),
            )
            self._fields, self._data = {}, []
            return event
        if line.startswith(":"):
            self.comments += 1
            return None
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            self._data.append(value)
        elif name == "retry":
            self._fields["retry"] = int(value) if value.isdigit() else None
        elif name in ("id", "event"):
            self._fields[name] = value
        return None


def _check(message: Any, version: str, methods: Mapping[Any, str]) -> dict[str, Any]:
    assert isinstance(message, dict), f"not a JSON-RPC object: {message!r}"
    is_response = "result" in message or "error" in message
    method = methods.get(message.get("id")) if is_response else None
    assert_valid(message, version, method=method)
    return message


class Stream:
    """An HTTP answer being read: JSON, or SSE events as they arrive."""

    def __init__(self, response: httpx.Response, version: str, methods: Mapping[Any, str]) -> None:
        self.response = response
        self.version = version
        self.methods = methods
        self.events: list[SseEvent] = []
        self.messages: list[dict[str, Any]] = []
        self._lines: AsyncIterator[str] | None = None
        self._parser = _SseParser()
        self.ended = False

    @property
    def status(self) -> int:
        return self.response.status_code

    @property
    def headers(self) -> httpx.Headers:
        return self.response.headers

    @property
    def content_type(self) -> str:
        content_type: str = self.response.headers.get("content-type", "")
        return content_type.split(";", 1)[0].strip().lower()

    @property
    def is_sse(self) -> bool:
        return self.content_type == "text/event-stream"

    async def next_event(self, timeout: float = TIMEOUT) -> SseEvent | None:
        """The next SSE event (None when the stream ended)."""
        assert self.is_sse, f"not an SSE stream: {self.status} {self.content_type}"
        if self._lines is None:
            self._lines = self.response.aiter_lines()
        async with asyncio.timeout(timeout):
            while True:
                try:
                    line = await anext(self._lines)
                except StopAsyncIteration:
                    self.ended = True
                    return None
                event = self._parser.line(line)
                if event is not None:
                    self.events.append(event)
                    if event.data:
                        self.messages.append(_check(json.loads(event.data), self.version, self.methods))
                    return event

    async def next_message(self, timeout: float = TIMEOUT) -> dict[str, Any] | None:
        """The next JSON-RPC message (None when the stream ended)."""
        if not self.is_sse:
            if self.ended:
                return None
            await self.read()
            return self.messages[-1] if self.messages else None
        while True:
            event = await self.next_event(timeout)
            if event is None:
                return None
            if event.data:
                return self.messages[-1]

    async def within(self, seconds: float) -> dict[str, Any] | None:
        """The next JSON-RPC message if one arrives within ``seconds``; None if none does (or the stream ends)."""
        try:
            return await self.next_message(seconds)
        except TimeoutError:
            return None

    async def read(self, timeout: float = TIMEOUT) -> list[dict[str, Any]]:
        """Everything until the answer ends; all JSON-RPC messages received."""
        if self.is_sse:
            while await self.next_event(timeout) is not None:
                pass
            return self.messages
        if not self.ended:
            async with asyncio.timeout(timeout):
                body = await self.response.aread()
            self.ended = True
            if body:
                assert self.content_type == "application/json", f"a body of type {self.content_type!r}: {body[:200]!r}"
                self.messages.append(_check(json.loads(body), self.version, self.methods))
        return self.messages


@dataclass
class Reply:
    """A fully read HTTP answer."""

    status: int
    headers: httpx.Headers
    content_type: str
    messages: list[dict[str, Any]]
    events: list[SseEvent]
    body_text: str = ""

    @property
    def message(self) -> dict[str, Any]:
        """The one JSON-RPC message of a JSON answer, or the response at the end of an SSE stream."""
        assert self.messages, f"no JSON-RPC message in the answer (HTTP {self.status}, {self.content_type!r})"
        return self.messages[-1]

    @property
    def result(self) -> dict[str, Any]:
        message = self.message
        assert "result" in message, f"expected a result, got {message}"
        result: dict[str, Any] = message["result"]
        return result

    @property
    def error(self) -> dict[str, Any]:
        message = self.message
        assert "error" in message, f"expected an error, got {message}"
        error: dict[str, Any] = message["error"]
        return error

    @property
    def notifications(self) -> list[dict[str, Any]]:
        return [m for m in self.messages if "method" in m and "id" not in m]


@dataclass
class McpHttp:
    """A raw MCP-over-HTTP client for one endpoint URL."""

    url: str
    http: httpx.AsyncClient
    methods: dict[Any, str] = field(default_factory=dict)
    """Request id → method of every request sent, to validate the results that answer them."""

    @contextlib.asynccontextmanager
    async def open(
        self,
        http_method: str,
        *,
        version: str,
        body: Any = None,
        content: bytes | None = None,
        headers: Mapping[str, str | None] | None = None,
    ) -> AsyncIterator[Stream]:
        """Send one HTTP request and read its answer as it streams; leaving the block disconnects."""
        defaults: dict[str, str | None] = {"accept": ACCEPT_BOTH}
        if body is not None or content is not None:
            defaults["content-type"] = "application/json"
        merged = {name: value for name, value in merge_headers(defaults, headers).items() if value is not None}
        if body is not None:
            content = json.dumps(body).encode()
            if isinstance(body, dict) and "method" in body and "id" in body:
                self.methods[body["id"]] = body["method"]
        request = self.http.build_request(http_method, self.url, content=content, headers=merged)
        response = await self.http.send(request, stream=True)
        try:
            yield Stream(response, version, self.methods)
        finally:
            await response.aclose()

    async def send(
        self,
        http_method: str = "POST",
        *,
        version: str,
        body: Any = None,
        content: bytes | None = None,
        headers: Mapping[str, str | None] | None = None,
        timeout: float = TIMEOUT,
    ) -> Reply:
        """Send one HTTP request and read the whole answer."""
        async with self.open(http_method, version=version, body=body, content=content, headers=headers) as stream:
            if stream.is_sse or stream.content_type == "application/json":
                await stream.read(timeout)
                text = ""
            else:
                text = (await stream.response.aread()).decode(errors="replace")
            return Reply(stream.status, stream.headers, stream.content_type, stream.messages, stream.events, text)


_ids = itertools.count(1)


def next_id() -> int:
    return next(_ids)


class Modern:
    """Stateless 2026-07-28 requests: ``_meta`` in the body, the mirrored headers on the POST."""

    version = MODERN

    def __init__(
        self, http: McpHttp, *, capabilities: dict[str, Any] | None = None, log_level: str | None = None
    ) -> None:
        self.http = http
        self.capabilities = capabilities if capabilities is not None else {}
        self.log_level = log_level

    def body(
        self, method: str, params: dict[str, Any] | None = None, *, id: Any = None, meta: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        full_meta: dict[str, Any] = {
            PROTOCOL_VERSION_KEY: self.version,
            CLIENT_CAPABILITIES_KEY: self.capabilities,
            CLIENT_INFO_KEY: {"name": "http-tests", "version": "1.0"},
        }
        if self.log_level is not None:
            full_meta[LOG_LEVEL_KEY] = self.log_level
        full_meta.update(meta or {})
        return {
            "jsonrpc": "2.0",
            "id": next_id() if id is None else id,
            "method": method,
            "params": {**(params or {}), "_meta": full_meta},
        }

    def headers_for(self, body: dict[str, Any]) -> dict[str, str]:
        headers = {"MCP-Protocol-Version": self.version, "Mcp-Method": body["method"]}
        field_name = NAMED.get(body["method"])
        if field_name is not None:
            headers["Mcp-Name"] = header_value(str(body["params"][field_name]))
        return headers

    async def post(self, body: dict[str, Any], headers: Mapping[str, str | None] | None = None) -> Reply:
        """POST ``body`` with the headers it needs, ``headers`` on top (None removes one)."""
        return await self.http.send(
            version=self.version, body=body, headers=merge_headers(self.headers_for(body), headers)
        )

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        meta: dict[str, Any] | None = None,
        headers: Mapping[str, str | None] | None = None,
        id: Any = None,
    ) -> Reply:
        return await self.post(self.body(method, params, id=id, meta=meta), headers)

    @contextlib.asynccontextmanager
    async def stream(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        meta: dict[str, Any] | None = None,
        headers: Mapping[str, str | None] | None = None,
        id: Any = None,
    ) -> AsyncIterator[Stream]:
        body = self.body(method, params, id=id, meta=meta)
        merged = merge_headers(self.headers_for(body), headers)
        async with self.http.open("POST", version=self.version, body=body, headers=merged) as stream:
            yield stream

    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None, **options: Any) -> Reply:
        return await self.request("tools/call", {"name": name, "arguments": arguments or {}}, **options)


class Legacy:
    """A legacy Streamable HTTP session: ``initialize``, then ``Mcp-Session-Id`` on every request."""

    def __init__(self, http: McpHttp, version: str = LEGACY, *, capabilities: dict[str, Any] | None = None) -> None:
        self.http = http
        self.version = version
        self.capabilities = capabilities if capabilities is not None else {}
        self.session_id: str | None = None
        self.initialize_reply: Reply | None = None

    async def initialize(self, *, headers: Mapping[str, str | None] | None = None) -> Reply:
        body = {
            "jsonrpc": "2.0",
            "id": next_id(),
            "method": "initialize",
            "params": {
                "protocolVersion": self.version,
                "capabilities": self.capabilities,
                "clientInfo": {"name": "http-tests", "version": "1.0"},
            },
        }
        reply = await self.http.send(version=self.version, body=body, headers=headers)
        self.initialize_reply = reply
        assert reply.status == 200, f"initialize failed: HTTP {reply.status} {reply.messages or reply.body_text}"
        assert reply.result["protocolVersion"] == self.version
        self.session_id = reply.headers.get("mcp-session-id")
        return reply

    async def open(self, *, headers: Mapping[str, str | None] | None = None) -> Legacy:
        """``initialize`` and ``notifications/initialized``: a session ready for requests."""
        await self.initialize(headers=headers)
        accepted = await self.notify("notifications/initialized")
        assert accepted.status == 202, f"notifications/initialized: HTTP {accepted.status}"
        return self

    def headers(self, extra: Mapping[str, str | None] | None = None) -> dict[str, str | None]:
        headers: dict[str, str | None] = {}
        if self.session_id is not None:
            headers["Mcp-Session-Id"] = self.session_id
        if self.version not in ("2024-11-05", "2025-03-26"):
            headers["MCP-Protocol-Version"] = self.version
        return merge_headers(headers, extra)

    def body(self, method: str, params: dict[str, Any] | None = None, *, id: Any = None) -> dict[str, Any]:
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": next_id() if id is None else id, "method": method}
        if params is not None:
            body["params"] = params
        return body

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        headers: Mapping[str, str | None] | None = None,
        id: Any = None,
    ) -> Reply:
        body = self.body(method, params, id=id)
        return await self.http.send(version=self.version, body=body, headers=self.headers(headers))

    @contextlib.asynccontextmanager
    async def stream(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        headers: Mapping[str, str | None] | None = None,
        id: Any = None,
    ) -> AsyncIterator[Stream]:
        body = self.body(method, params, id=id)
        async with self.http.open("POST", version=self.version, body=body, headers=self.headers(headers)) as stream:
            yield stream

    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None, **options: Any) -> Reply:
        return await self.request("tools/call", {"name": name, "arguments": arguments or {}}, **options)

    async def notify(
        self, method: str, params: dict[str, Any] | None = None, *, headers: Mapping[str, str | None] | None = None
    ) -> Reply:
        body: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            body["params"] = params
        return await self.http.send(version=self.version, body=body, headers=self.headers(headers))

    async def respond(self, request_id: Any, result: dict[str, Any]) -> Reply:
        """Answer a server-to-client request with a POST of a JSON-RPC response."""
        body = {"jsonrpc": "2.0", "id": request_id, "result": result}
        return await self.http.send(version=self.version, body=body, headers=self.headers())

    @contextlib.asynccontextmanager
    async def listen(self, *, headers: Mapping[str, str | None] | None = None) -> AsyncIterator[Stream]:
        """The standalone ``GET`` SSE stream."""
        merged = self.headers({"accept": "text/event-stream", **(headers or {})})
        async with self.http.open("GET", version=self.version, headers=merged) as stream:
            yield stream

    async def delete(self, *, headers: Mapping[str, str | None] | None = None) -> Reply:
        return await self.http.send("DELETE", version=self.version, headers=self.headers(headers))


@contextlib.asynccontextmanager
async def connect(url: str) -> AsyncIterator[McpHttp]:
    """An httpx client for ``url``; closing it disconnects every stream still open."""
    timeout = httpx.Timeout(TIMEOUT)
    async with httpx.AsyncClient(timeout=timeout, limits=httpx.Limits(max_keepalive_connections=0)) as client:
        yield McpHttp(url, client)


@contextlib.asynccontextmanager
async def serving(target: Server | Any, *, path: str = "/mcp", **options: Any) -> AsyncIterator[McpHttp]:
    """``serve`` plus ``connect``: a client of a freshly started in-process server."""
    async with serve(target, path=path, **options) as running, connect(running.url) as client:
        yield client


async def raw_post(
    port: int, path: str, headers: list[tuple[str, str]], body: bytes, *, timeout: float = TIMEOUT
) -> tuple[int, dict[str, str], bytes]:
    """A POST written byte for byte (for header values an HTTP library would refuse to send)."""
    lines = [f"POST {path} HTTP/1.1", f"Host: 127.0.0.1:{port}", "Connection: close"]
    lines += [f"{name}: {value}" for name, value in headers]
    lines.append(f"Content-Length: {len(body)}")
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    async with asyncio.timeout(timeout):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            writer.write(head + body)
            await writer.drain()
            raw = await reader.read()
        finally:
            writer.close()
            await writer.wait_closed()
    head_bytes, _, payload = raw.partition(b"\r\n\r\n")
    status_line, *header_lines = head_bytes.decode("latin-1").split("\r\n")
    response_headers = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        response_headers[name.strip().lower()] = value.strip()
    return int(status_line.split()[1]), response_headers, payload


async def era_client(http: McpHttp, version: str) -> Modern | Legacy:
    """A client of ``http`` speaking ``version``: stateless 2026-07-28, or an ``initialize``-d session."""
    if version == MODERN:
        return Modern(http)
    return await Legacy(http, version).open()
