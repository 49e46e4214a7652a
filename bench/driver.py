"""A raw JSON-RPC client for MCP servers: stdio and Streamable HTTP, legacy and modern eras.

No MCP client library: the benchmark must not measure (or depend on) one framework's client.
Standard library only, so it runs on any Python 3.11, and as little client CPU as possible per
call: request bytes are pre-encoded templates, HTTP/1.1 is spoken directly on asyncio streams
with keep-alive, and responses are parsed with the C-accelerated ``json`` module.

Every response is checked (right id, no error, expected shape); anything else raises
``ProtocolError`` so a misbehaving framework never gets a time. Latency is taken from just before
the request is written to the moment its response's bytes are complete, so the client's JSON
parsing and checking (tens of ms for a 500-tool ``tools/list``) is not charged to the server.
A server that does not speak an era at all raises ``Unsupported`` from ``Session.open``.
"""

import asyncio
import contextlib
import json
import time
from collections.abc import Callable
from typing import Any, Literal

LEGACY_VERSION = "2025-11-25"
MODERN_VERSION = "2026-07-28"
CLIENT_INFO = {"name": "toolkit-bench", "version": "1.0.0"}
CAPABILITIES_META = "io.modelcontextprotocol/clientCapabilities"
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
    CAPABILITIES_META: {},
}
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"  # 2026-07-28's tasks, declared per request
# Whose Mcp-Name header is params.taskId on 2026-07-28 HTTP (the tasks extension's routing headers).
TASK_METHODS = frozenset({"tasks/get", "tasks/update", "tasks/cancel"})
TERMINAL_STATUSES = frozenset({"completed", "failed", "cancelled"})
READ_LIMIT = 256 * 1024 * 1024  # one stdio line can be a whole 500-tool tools/list
STREAM_DRAIN_TIMEOUT = 2.0  # seconds to wait for an SSE stream to end after its response

Era = Literal["legacy", "modern"]
Json = dict[str, Any]


class ProtocolError(Exception):
    """The server answered wrongly: an error response, a wrong id, or an unexpected shape."""


class Unsupported(Exception):
    """The server does not serve the requested protocol era."""


class _Request:
    """A pre-encoded request body; only the id changes between sends."""

    __slots__ = ("_head", "_tail", "method", "name")

    def __init__(self, method: str, params: Json | None, name: str | None = None) -> None:
        self.method = method
        self.name = name
        self._head = '{"jsonrpc":"2.0","id":'
        tail = f',"method":{json.dumps(method)}'
        if params is not None:
            tail += f',"params":{json.dumps(params, separators=(",", ":"))}'
        self._tail = tail + "}"

    def encode(self, request_id: int) -> bytes:
        return f"{self._head}{request_id}{self._tail}".encode()


def _check_envelope(message: Any, request_id: int, what: str) -> Json:
    if not isinstance(message, dict):
        raise ProtocolError(f"{what}: response is not a JSON object: {str(message)[:300]}")
    if message.get("id") != request_id:
        raise ProtocolError(f"{what}: expected id {request_id}, got {str(message)[:300]}")
    if "error" in message:
        raise ProtocolError(f"{what}: error response {json.dumps(message['error'])[:500]}")
    result = message.get("result")
    if not isinstance(result, dict):
        raise ProtocolError(f"{what}: result is not an object: {str(message)[:300]}")
    return result


# --- shape checks -------------------------------------------------------------------------------


def expected_items() -> list[Json]:
    """What ``get_items`` returns, as JSON (mirrors ``bench/servers/workloads.py``)."""
    return [{"id": i, "name": f"item-{i}", "price": 1.5 * i, "tags": ["bench", f"t{i % 3}"]} for i in range(10)]


_EXPECTED_ITEMS = expected_items()


def check_items_result(result: Json) -> None:
    """A ``tools/call get_items`` result: the ten items, bare (natural) or under ``{"result": ...}``."""
    if result.get("isError"):
        raise ProtocolError(f"tools/call returned isError: {json.dumps(result)[:500]}")
    structured = result.get("structuredContent")
    items = structured.get("result") if isinstance(structured, dict) else structured
    if items != _EXPECTED_ITEMS:
        raise ProtocolError(f"tools/call structuredContent is not the ten items: {json.dumps(structured)[:500]}")
    content = result.get("content")
    if not isinstance(content, list) or not content:
        raise ProtocolError(f"tools/call has no content blocks: {json.dumps(result)[:500]}")


def expected_forecast(hours: int) -> list[Json]:
    """What ``examples/weather.py``'s ``get_weather_forecast`` returns for ``hours``, as JSON."""
    conditions = ["sunny", "partly cloudy", "cloudy"]
    return [{"hour": f"{9 + i:02d}:00", "temp": 68.0 + 2 * i, "conditions": conditions[i % 3]} for i in range(hours)]


def structured_check(expected: Any, tool: str, unwrap: bool = True) -> Callable[[Json], None]:
    """A ``tools/call`` check like ``check_items_result``'s for another tool's ``expected`` result.

    ``unwrap``: an object ``structuredContent`` is compared by its ``"result"`` member (how the
    anchors wrap a list); ``False`` compares the whole ``structuredContent`` (a tool that returns
    an object, such as ``examples/long_running.py``'s report).
    """

    def check(result: Json) -> None:
        if result.get("isError"):
            raise ProtocolError(f"tools/call {tool} returned isError: {json.dumps(result)[:500]}")
        structured = result.get("structuredContent")
        value = structured.get("result") if unwrap and isinstance(structured, dict) else structured
        if value != expected:
            raise ProtocolError(f"tools/call {tool}: unexpected structuredContent {json.dumps(structured)[:500]}")
        content = result.get("content")
        if not isinstance(content, list) or not content:
            raise ProtocolError(f"tools/call {tool} has no content blocks: {json.dumps(result)[:500]}")

    return check


def check_initialize_result(result: Json) -> None:
    for key in ("protocolVersion", "capabilities", "serverInfo"):
        if key not in result:
            raise ProtocolError(f"initialize result lacks {key!r}: {json.dumps(result)[:500]}")


def check_discover_result(result: Json) -> None:
    versions = result.get("supportedVersions")
    if not isinstance(versions, list) or MODERN_VERSION not in versions:
        raise ProtocolError(f"server/discover does not list {MODERN_VERSION}: {json.dumps(result)[:500]}")
    if not isinstance(result.get("capabilities"), dict):
        raise ProtocolError(f"server/discover lacks capabilities: {json.dumps(result)[:500]}")


def check_created_task(result: Json, era: Era) -> str:
    """A ``tools/call`` answered with a task (2026-07-28 ``resultType: "task"``, 2025-11-25 ``task``); its id."""
    task = result if era == "modern" else result.get("task")
    if era == "modern" and result.get("resultType") != "task":
        raise ProtocolError(f"tools/call was not answered with a task: {json.dumps(result)[:500]}")
    if not isinstance(task, dict) or not isinstance(task.get("taskId"), str) or not task.get("status"):
        raise ProtocolError(f"tools/call: no task (taskId, status) in {json.dumps(result)[:500]}")
    return str(task["taskId"])


def check_task(result: Json) -> Json:
    """A 2026-07-28 ``tasks/get`` result: the task, with its ``result`` once completed."""
    status = result.get("status")
    if not isinstance(status, str) or not isinstance(result.get("taskId"), str):
        raise ProtocolError(f"tasks/get: no taskId or status in {json.dumps(result)[:500]}")
    if status in TERMINAL_STATUSES and status != "completed":
        raise ProtocolError(f"tasks/get: the task ended {status}: {json.dumps(result)[:500]}")
    if status == "completed" and not isinstance(result.get("result"), dict):
        raise ProtocolError(f"tasks/get: a completed task without a result: {json.dumps(result)[:500]}")
    return result


def check_tools_page(result: Json) -> list[Json]:
    tools = result.get("tools")
    if not isinstance(tools, list):
        raise ProtocolError(f"tools/list result has no tools array: {json.dumps(result)[:300]}")
    for tool in tools:
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            raise ProtocolError(f"tools/list entry without a name: {str(tool)[:300]}")
        schema = tool.get("inputSchema")
        if not isinstance(schema, dict) or schema.get("type") != "object":
            raise ProtocolError(f"tool {tool.get('name')!r}: inputSchema is not an object schema: {str(schema)[:300]}")
    return tools


# --- transports ---------------------------------------------------------------------------------


class _Transport:
    sent_at = 0.0  # perf_counter() before the last request was written
    received_at = 0.0  # perf_counter() once its response's bytes were complete (before parsing)

    async def exchange(self, request: _Request, request_id: int, timeout: float) -> Any:
        """Send one request and return the parsed response message with ``request_id``."""
        raise NotImplementedError

    async def notify(self, body: bytes, method: str) -> None:
        raise NotImplementedError

    def use_version(self, version: str) -> None:
        """The protocol version the session speaks from now on (HTTP sends it as a header)."""

    async def close(self) -> None:
        pass


class StdioTransport(_Transport):
    """Newline-delimited JSON over a subprocess's stdin/stdout."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdin is not None
        assert process.stdout is not None
        self._stdin = process.stdin
        self._stdout = process.stdout

    async def exchange(self, request: _Request, request_id: int, timeout: float) -> Any:
        body = request.encode(request_id) + b"\n"
        self.sent_at = time.perf_counter()
        self._stdin.write(body)
        await self._stdin.drain()
        async with asyncio.timeout(timeout):
            while True:
                line = await self._stdout.readline()
                self.received_at = time.perf_counter()
                if not line:
                    raise ProtocolError(f"{request.method}: server closed stdout")
                if not line.strip():
                    continue
                try:
                    message = json.loads(line)
                except ValueError as exc:
                    raise ProtocolError(f"{request.method}: unparseable line on stdout: {line[:300]!r}") from exc
                # Skip notifications and server-to-client requests (logging, progress, ...).
                if isinstance(message, dict) and "id" in message and "method" not in message:
                    return message

    async def notify(self, body: bytes, method: str) -> None:
        self._stdin.write(body + b"\n")
        await self._stdin.drain()


class HttpResponse:
    __slots__ = ("headers", "message", "received_at", "sent_at", "status")

    def __init__(self, status: int, headers: dict[str, str], message: Any, sent_at: float, received_at: float) -> None:
        self.status = status
        self.headers = headers
        self.message = message
        self.sent_at = sent_at
        self.received_at = received_at


ACCEPT_BOTH = "application/json, text/event-stream"  # what real clients send


class HttpConnection:
    """One keep-alive HTTP/1.1 connection that POSTs JSON and reads JSON or SSE answers."""

    def __init__(self, host: str, port: int, path: str, accept: str = ACCEPT_BOTH) -> None:
        self.host, self.port, self.path = host, port, path
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._fixed = (
            f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\nAccept: {accept}\r\n"
        )
        self.reconnects = 0

    async def _connect(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        if self._reader is None or self._writer is None:
            self._reader, self._writer = await asyncio.open_connection(self.host, self.port, limit=READ_LIMIT)
        return self._reader, self._writer

    async def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            with contextlib.suppress(OSError):
                await self._writer.wait_closed()
        self._reader = self._writer = None

    async def post(self, body: bytes, headers: str, want_id: int | None, timeout: float) -> HttpResponse:
        """POST ``body``; ``headers`` is pre-rendered ``Name: value\\r\\n`` lines.

        ``want_id`` is the JSON-RPC id to pick out of an SSE stream (``None`` for notifications).
        """
        reader, writer = await self._connect()
        data = f"{self._fixed}{headers}Content-Length: {len(body)}\r\n\r\n".encode() + body
        sent_at = time.perf_counter()
        writer.write(data)
        async with asyncio.timeout(timeout):
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            status = int(lines[0].split(" ", 2)[1])
            response_headers: dict[str, str] = {}
            for line in lines[1:]:
                if line:
                    name, _, value = line.partition(":")
                    response_headers[name.strip().lower()] = value.strip()
            content_type = response_headers.get("content-type", "")
            keep_alive = response_headers.get("connection", "").lower() != "close"
            if content_type.startswith("text/event-stream"):
                message, received_at, ended = await self._read_sse(reader, response_headers, want_id)
                keep_alive = keep_alive and ended
            else:
                raw = await self._read_body(reader, response_headers)
                received_at = time.perf_counter()
                message = json.loads(raw) if raw.strip() else None
        if not keep_alive:
            self.reconnects += 1
            await self.close()
        return HttpResponse(status, response_headers, message, sent_at, received_at)

    @staticmethod
    async def _read_body(reader: asyncio.StreamReader, headers: dict[str, str]) -> bytes:
        if "content-length" in headers:
            return await reader.readexactly(int(headers["content-length"]))
        if headers.get("transfer-encoding", "").lower() == "chunked":
            parts: list[bytes] = []
            while True:
                chunk = await HttpConnection._read_chunk(reader)
                if chunk is None:
                    return b"".join(parts)
                parts.append(chunk)
        return await reader.read()

    @staticmethod
    async def _read_chunk(reader: asyncio.StreamReader) -> bytes | None:
        """One chunk of a chunked body, or ``None`` after the last (zero-length) chunk."""
        size_line = await reader.readuntil(b"\r\n")
        size = int(size_line.split(b";", 1)[0], 16)
        if size == 0:
            while (await reader.readuntil(b"\r\n")) != b"\r\n":  # trailers, then the blank line
                pass
            return None
        data = await reader.readexactly(size + 2)
        return data[:-2]

    async def _read_sse(
        self, reader: asyncio.StreamReader, headers: dict[str, str], want_id: int | None
    ) -> tuple[Any, float, bool]:
        """Read SSE events until the response with ``want_id``; then let the stream end.

        Returns the response, when its event was complete, and whether the stream ended cleanly
        (so the connection can be reused). A server that keeps the stream open after its response gets the connection
        closed under it after ``STREAM_DRAIN_TIMEOUT``.
        """
        if "content-length" in headers:  # the whole stream in one body
            body = await reader.readexactly(int(headers["content-length"]))
            received_at = time.perf_counter()
            found = _sse_response(body.replace(b"\r\n", b"\n") + b"\n\n", want_id)[0]
            if found is None:
                raise ProtocolError(f"SSE body holds no response to id {want_id}")
            return found, received_at, True
        chunked = headers.get("transfer-encoding", "").lower() == "chunked"
        buffer = b""
        found = None
        received_at = 0.0
        while True:
            if found is not None:
                try:
                    async with asyncio.timeout(STREAM_DRAIN_TIMEOUT):
                        chunk = await self._read_chunk(reader) if chunked else await reader.read(65536)
                except TimeoutError:
                    return found, received_at, False
            else:
                chunk = await self._read_chunk(reader) if chunked else await reader.read(65536)
            if not chunk:  # end of stream (None for chunked, b"" for close-delimited)
                if found is None:
                    raise ProtocolError(f"SSE stream ended without a response to id {want_id}")
                return found, received_at, chunked
            chunk_at = time.perf_counter()
            buffer += chunk.replace(b"\r\n", b"\n")
            message, buffer = _sse_response(buffer, want_id)
            if message is not None:
                found, received_at = message, chunk_at


def _sse_response(buffer: bytes, want_id: int | None) -> tuple[Any, bytes]:
    """The response with ``want_id`` among the complete SSE events in ``buffer``, and the rest."""
    found = None
    while b"\n\n" in buffer:
        event, buffer = buffer.split(b"\n\n", 1)
        data = b"\n".join(line[5:].lstrip(b" ") for line in event.split(b"\n") if line.startswith(b"data:"))
        if not data.strip():
            continue  # priming / keep-alive events carry no data
        message = json.loads(data)
        if isinstance(message, dict) and message.get("id") == want_id and "method" not in message:
            found = message
    return found, buffer


class HttpTransport(_Transport):
    """Streamable HTTP: every message is a POST to one endpoint.

    ``bearer``, when given, is called once per message (requests and notifications alike) for the
    access token to send as ``Authorization: Bearer <token>``: a constant for one reusable token,
    or a supply of fresh ones (``TokenSupply``) so that every request carries a token the server
    has never seen. ``accept`` is the ``Accept`` header (default: JSON and SSE, as real clients
    send). ``sse_responses`` counts the requests answered with an SSE stream rather than JSON, and
    ``last_headers`` are the last response's headers (lower-cased names).
    """

    def __init__(
        self,
        host: str,
        port: int,
        path: str = "/mcp",
        bearer: Callable[[], str] | None = None,
        accept: str = ACCEPT_BOTH,
    ) -> None:
        self.connection = HttpConnection(host, port, path, accept)
        self.session_id: str | None = None
        self.protocol_header = ""
        self.modern = False
        self.bearer = bearer
        self.sse_responses = 0
        self.last_headers: dict[str, str] = {}

    def use_version(self, version: str) -> None:
        self.protocol_header = f"MCP-Protocol-Version: {version}\r\n"
        self.modern = version == MODERN_VERSION

    def _headers(self, request: _Request | None, method: str) -> str:
        lines = self.protocol_header
        if self.session_id:
            lines += f"Mcp-Session-Id: {self.session_id}\r\n"
        if self.modern:
            lines += f"Mcp-Method: {method}\r\n"
            if request is not None and request.name is not None:
                lines += f"Mcp-Name: {request.name}\r\n"
        if self.bearer is not None:
            lines += f"Authorization: Bearer {self.bearer()}\r\n"
        return lines

    async def exchange(self, request: _Request, request_id: int, timeout: float) -> Any:
        response = await self.connection.post(
            request.encode(request_id), self._headers(request, request.method), request_id, timeout
        )
        self.sent_at, self.received_at = response.sent_at, response.received_at
        self.last_headers = response.headers
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            self.sse_responses += 1
        if request.method == "initialize" and "mcp-session-id" in response.headers:
            self.session_id = response.headers["mcp-session-id"]
        if response.status != 200:
            raise _HttpStatusError(response.status, response.message)
        return response.message

    async def notify(self, body: bytes, method: str) -> None:
        response = await self.connection.post(body, self._headers(None, method), None, 30.0)
        if response.status not in (200, 202):
            raise ProtocolError(f"{method}: HTTP {response.status} {str(response.message)[:300]}")

    async def close(self) -> None:
        await self.connection.close()


class TokenSupply:
    """Hands out each of ``tokens`` once, in order: ``bearer=`` for an every-call-a-new-token batch."""

    def __init__(self, tokens: list[str]) -> None:
        self._tokens = tokens
        self.used = 0

    def __call__(self) -> str:
        if self.used >= len(self._tokens):
            raise ProtocolError(f"ran out of fresh tokens after {self.used}: generate more")
        self.used += 1
        return self._tokens[self.used - 1]


class _HttpStatusError(ProtocolError):
    def __init__(self, status: int, message: Any) -> None:
        super().__init__(f"HTTP {status}: {json.dumps(message)[:500] if message is not None else '(no body)'}")
        self.status = status


# --- sessions -----------------------------------------------------------------------------------


class Session:
    """A client of one server in one era: ``open`` (handshake or discover), then requests.

    ``capabilities``: the modern era's per-request ``clientCapabilities`` (default ``{}``), e.g.
    ``{"extensions": {TASKS_EXTENSION: {}}}`` for a client that can take a task.
    """

    def __init__(self, transport: _Transport, era: Era, capabilities: Json | None = None) -> None:
        self.transport = transport
        self.era = era
        self._next_id = 0
        self.last_latency = 0.0  # seconds: the last call(), first request written -> last response complete
        self.last_requests = 1  # requests the last call() sent (a task operation sends more than one)
        self._meta = None
        if era == "modern":
            self._meta = MODERN_META if capabilities is None else {**MODERN_META, CAPABILITIES_META: capabilities}
        self._call_items = self.request_template("tools/call", {"name": "get_items", "arguments": {}})
        self._call = self._call_items  # what call() sends, and how its result is checked
        self._check_call: Callable[[Json], None] = check_items_result
        self._task = False  # call() is a task operation (use_task)
        self._list_tools: dict[str | None, _Request] = {}

    def use_tool(self, name: str, arguments: Json, check: Callable[[Json], None]) -> "Session":
        """Make ``call()`` send ``tools/call`` of ``name`` with ``arguments`` (default: ``get_items``)."""
        self._call = self.request_template("tools/call", {"name": name, "arguments": arguments})
        self._check_call = check
        self._task = False
        return self

    def use_task(self, name: str, arguments: Json, check: Callable[[Json], None]) -> "Session":
        """Make ``call()`` a task operation of ``name``: the ``tools/call`` asks for a task, then
        (modern) ``tasks/get`` is sent back to back, no pause, until the task ends, or (legacy)
        one ``tasks/result`` waits for it; ``check`` checks the tool's final result.

        Modern: the session must declare ``TASKS_EXTENSION`` in its ``capabilities`` (the server
        decides; a plain result is an error here). Legacy: the call carries ``"task": {}``.
        """
        params: Json = {"name": name, "arguments": arguments}
        if self.era == "legacy":
            params["task"] = {}
        self._call = self.request_template("tools/call", params)
        self._check_call = check
        self._task = True
        return self

    def request_template(self, method: str, params: Json | None) -> _Request:
        if self._meta is not None:
            params = {**(params or {}), "_meta": self._meta}
        name = None
        if params and method in ("tools/call", "prompts/get"):
            name = params.get("name")
        elif params and method in TASK_METHODS:
            name = params.get("taskId")
        return _Request(method, params, name)

    async def request(self, template: _Request, check: Callable[[Json], Any], timeout: float = 60.0) -> Any:
        self._next_id += 1
        request_id = self._next_id
        message = await self.transport.exchange(template, request_id, timeout)
        self.last_latency = self.transport.received_at - self.transport.sent_at
        return check(_check_envelope(message, request_id, template.method))

    async def open(self, timeout: float = 60.0) -> None:
        """Legacy: ``initialize`` + ``notifications/initialized``. Modern: ``server/discover``."""
        if self.era == "legacy":
            init = self.request_template(
                "initialize", {"protocolVersion": LEGACY_VERSION, "capabilities": {}, "clientInfo": CLIENT_INFO}
            )
            await self.request(init, check_initialize_result, timeout)
            self.transport.use_version(LEGACY_VERSION)
            await self.transport.notify(
                b'{"jsonrpc":"2.0","method":"notifications/initialized"}', "notifications/initialized"
            )
            return
        self.transport.use_version(MODERN_VERSION)
        discover = self.request_template("server/discover", {})
        try:
            await self.request(discover, check_discover_result, timeout)
        except (ProtocolError, TimeoutError) as exc:
            raise Unsupported(f"server/discover failed: {exc or type(exc).__name__}") from exc

    async def call_items(self, timeout: float = 60.0) -> None:
        await self.request(self._call_items, check_items_result, timeout)

    async def call(self, timeout: float = 60.0) -> None:
        """The session's tool call: ``get_items`` unless ``use_tool`` chose another, or a task
        operation (``use_task``)."""
        if self._task:
            await self._call_task(timeout)
            return
        await self.request(self._call, self._check_call, timeout)
        self.last_requests = 1

    async def _call_task(self, timeout: float) -> None:
        """Create a task, then wait for its end (see ``use_task``); ``timeout`` bounds the whole."""
        async with asyncio.timeout(timeout):
            task_id = await self.request(self._call, lambda r: check_created_task(r, self.era), timeout)
            started, requests = self.transport.sent_at, 1
            if self.era == "modern":
                poll = self.request_template("tasks/get", {"taskId": task_id})
                while True:
                    task = await self.request(poll, check_task, timeout)
                    requests += 1
                    if task["status"] == "completed":
                        result: Json = task["result"]
                        break
            else:
                wait = self.request_template("tasks/result", {"taskId": task_id})
                result = await self.request(wait, lambda r: r, timeout)
                requests += 1
        self._check_call(result)
        self.last_latency = self.transport.received_at - started
        self.last_requests = requests

    async def list_tools(self, expected: int | None = None, timeout: float = 120.0) -> float:
        """All pages of ``tools/list``, checked (count against ``expected``); returns their latency."""
        cursor: str | None = None
        names: set[str] = set()
        pages = 0
        latency = 0.0
        while True:
            template = self._list_tools.get(cursor)
            if template is None:
                template = self.request_template("tools/list", {"cursor": cursor} if cursor else {})
                self._list_tools[cursor] = template
            result = await self.request(template, lambda r: r, timeout)
            latency += self.last_latency
            for tool in check_tools_page(result):
                names.add(tool["name"])
            pages += 1
            cursor = result.get("nextCursor")
            if not cursor:
                break
            if pages > 1000:
                raise ProtocolError("tools/list: more than 1000 pages")
        if expected is not None and len(names) != expected:
            raise ProtocolError(f"tools/list returned {len(names)} distinct tools, expected {expected}")
        return latency
