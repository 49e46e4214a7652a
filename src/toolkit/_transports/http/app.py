"""Streamable HTTP: one ASGI endpoint that serves both protocol eras.

Per request, the era is decided as the spec's backward-compatibility sections say: a POST
whose body carries modern ``_meta`` (or whose ``MCP-Protocol-Version`` is a modern version)
is served statelessly under 2026-07-28 rules; anything else belongs to a legacy session
that ``initialize`` opened (``Mcp-Session-Id``).

A request is answered with plain JSON unless something has to be sent before the response
(progress, log messages, a legacy server-to-client request): then the answer becomes an
SSE stream carrying those messages and the response last.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import logging
import math
import secrets
import signal
import socket
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import uvicorn
from starlette.applications import Starlette

from ._engine import PROTOCOL_VERSION_KEY, Connection, Reply, drain, is_modern_request, unsupported_version
from ._events import EventStore
from ._jsonrpc import (
    HEADER_MISMATCH,
    INTERNAL_ERROR,
    INVALID_REQUEST,
    Invalid,
    Notification,
    Request,
    Response,
    busy_reply,
    encode,
    error_reply,
    parse,
)
from ._session import ClientRequestError
from ._versions import KNOWN_VERSIONS, LEGACY_VERSIONS, MODERN_VERSIONS

if TYPE_CHECKING:
    from starlette.types import Message, Receive, Scope, Send

    from ._server import Server

logger = logging.getLogger("toolkit")

DEFAULT_MAX_BODY_BYTES: Final = 4 * 1024 * 1024
LOCAL_HOSTS: Final = ("127.0.0.1", "localhost", "[::1]")
NAMED_METHODS: Final = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
SSE_HEADERS: Final = {"Cache-Control": "no-cache, no-transform", "X-Accel-Buffering": "no"}
_REPLY = object()
_CANCELLED = object()
"""Queued when the request was cancelled: its POST ends with no JSON-RPC response (spec)."""


# --- small ASGI helpers ----------------------------------------------------------------------


async def _respond(send: Send, status: int, body: bytes = b"", headers: Iterable[tuple[str, str]] = ()) -> None:
    raw_headers = [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in headers]
    if body:
        raw_headers.append((b"content-type", b"application/json"))
    raw_headers.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": raw_headers})
    await send({"type": "http.response.body", "body": body})


async def _respond_error(
    send: Send, status: int, code: int, message: str, request_id: Any = None, headers: Iterable[tuple[str, str]] = ()
) -> None:
    await _respond(send, status, encode(error_reply(request_id, code, message)), headers)


def _header_map(scope: Scope) -> dict[str, str]:
    headers: dict[str, str] = {}
    for name, value in scope["headers"]:
        key = name.decode("latin-1").lower()
        text = value.decode("latin-1").strip()
        headers[key] = f"{headers[key]}, {text}" if key in headers else text
    return headers


def decode_header_value(value: str) -> str | None:
    """A header value, Base64-decoded when it uses the spec's ``=?base64?…?=`` sentinel; None if invalid."""
    if value.startswith("=?base64?") and value.endswith("?=") and len(value) >= len("=?base64??="):
        encoded = value[len("=?base64?") : -2]
        try:
            return base64.b64decode(encoded, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return None
    if any((ord(character) < 0x20 and character != "\t") or ord(character) > 0x7E for character in value):
        return None
    return value


# --- sessions (legacy era) -------------------------------------------------------------------


@dataclass(eq=False)
class HttpSession:
    connection: Connection
    created: float = field(default_factory=time.monotonic)
    standalone: asyncio.Queue[bytes] | None = None
    """The open ``GET`` stream's queue, if any."""
    streams: dict[str, None] = field(default_factory=dict)
    """Ids of this session's recent resumable streams (oldest first): it may resume only its own."""

    def add_stream(self, stream_id: str, keep: int = 1000) -> None:
        self.streams[stream_id] = None
        if len(self.streams) > keep:
            del self.streams[next(iter(self.streams))]

    @property
    def id(self) -> str:
        assert self.connection.session.id is not None
        return self.connection.session.id


# --- the endpoint ----------------------------------------------------------------------------


class McpEndpoint:
    """The ASGI app behind the MCP endpoint path."""

    def __init__(
        self,
        server: Server,
        *,
        json_response: bool = False,
        stateless: bool = False,
        allowed_hosts: Iterable[str] | None = None,
        allowed_origins: Iterable[str] | None = None,
        dns_rebinding_protection: bool = True,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        max_sessions: int = 10_000,
        session_idle_timeout: float = 3600.0,
        event_store: EventStore | None = None,
        retry_ms: int = 1000,
        sse_ping_seconds: float = 15.0,
        shutdown_grace: float = 10.0,
    ) -> None:
        self.server = server
        self.engine = server.engine
        self.json_response = json_response
        self.stateless = stateless
        self.protect = dns_rebinding_protection
        self.allowed_hosts = {host.lower() for host in (*LOCAL_HOSTS, *(allowed_hosts or ()))}
        self.allowed_origins = {origin.lower().rstrip("/") for origin in allowed_origins or ()}
        self.max_body_bytes = max_body_bytes
        self.max_sessions = max_sessions
        self.session_idle_timeout = session_idle_timeout
        self.event_store = event_store if event_store is not None else server.event_store
        self.retry_ms = retry_ms
        self.sse_ping_seconds = sse_ping_seconds
        self.shutdown_grace = shutdown_grace
        self._shutting_down = False
        self.sessions: dict[str, HttpSession] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._stateless_inflight = 0
        self._reaper: asyncio.Task[None] | None = None
        self._started = False

    # --- lifecycle --------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def lifespan(self, app: Any = None) -> AsyncIterator[None]:
        async with self.server.running():
            self._started = True
            self._reaper = asyncio.create_task(self._reap_sessions())
            try:
                yield
            finally:
                self._reaper.cancel()
                self._reaper = None
                await self.shutdown()
                self._started = False

    def _stateless_done(self, task: asyncio.Task[Any]) -> None:
        self._stateless_inflight -= 1

    def begin_shutdown(self) -> None:
        """Stop the long-lived streams (subscriptions, GET streams) so their connections can close."""
        self.engine.close_listeners()
        for session in self.sessions.values():
            if session.standalone is not None:
                session.standalone.put_nowait(b"")

    async def expire_requests(self, grace: float | None = None) -> None:
        """Give in-flight requests ``grace`` seconds, then cancel them with a "shutting down" error."""
        await drain(self._tasks, self.shutdown_grace if grace is None else grace, self._stop)

    def _stop(self) -> None:
        self._shutting_down = True

    async def shutdown(self, grace: float | None = None) -> None:
        """End subscriptions gracefully, let in-flight requests finish, then close sessions.

        Requests still running after ``grace`` seconds (``shutdown_grace``) are cancelled and
        answered with a JSON-RPC error saying the server is stopping.
        """
        self.begin_shutdown()
        await self.expire_requests(grace)
        for session in list(self.sessions.values()):
            self._end_session(session)

    async def _reap_sessions(self) -> None:
        while True:
            await asyncio.sleep(max(1.0, min(60.0, self.session_idle_timeout / 4)))
            self.reap_idle()

    def reap_idle(self) -> None:
        now = asyncio.get_running_loop().time()
        for session in list(self.sessions.values()):
            busy = session.connection.inflight or session.standalone is not None
            if not busy and now - session.connection.session.last_active > self.session_idle_timeout:
                logger.info("ending idle session %s", session.id)
                self._end_session(session)

    def _end_session(self, session: HttpSession) -> None:
        self.sessions.pop(session.id, None)
        for task in list(session.connection.inflight.values()):
            task.cancel()
        if session.standalone is not None:
            session.standalone.put_nowait(b"")
        self.engine.forget(session.connection.session)

    # --- ASGI -------------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":  # served on its own: run our lifespan
            await self._asgi_lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        if not self._started and self.server.lifespan is not None:
            # Mounted in a host app that did not run our lifespan: the user's lifespan never
            # started, so handlers would see ctx.lifespan as None. Say so instead.
            await _respond_error(
                send,
                500,
                INTERNAL_ERROR,
                "Internal error: the MCP server's lifespan has not started. When mounting server.http_app() "
                "in another app, give that app the MCP app's lifespan: lifespan=mcp_app.lifespan",
            )
            logger.error("request refused: the server's lifespan has not started (see the message sent)")
            return
        if self._reaper is None:  # served without our lifespan: clean up idle sessions anyway
            self._reaper = asyncio.create_task(self._reap_sessions())
        headers = _header_map(scope)
        rejected = self._check_origin(headers)
        if rejected is not None:
            await _respond_error(send, rejected[0], INVALID_REQUEST, rejected[1])
            return
        method = scope["method"]
        if method == "POST":
            await self._post(scope, receive, send, headers)
        elif method == "GET":
            await self._get(scope, receive, send, headers)
        elif method == "DELETE":
            await self._delete(send, headers)
        else:
            await _respond(send, 405, headers=[("allow", "GET, POST, DELETE")])

    async def _asgi_lifespan(self, receive: Receive, send: Send) -> None:
        message = await receive()
        assert message["type"] == "lifespan.startup"
        async with self.lifespan():
            await send({"type": "lifespan.startup.complete"})
            await receive()
        await send({"type": "lifespan.shutdown.complete"})

    def _check_origin(self, headers: dict[str, str]) -> tuple[int, str] | None:
        """DNS-rebinding protection: a foreign Origin is 403, a foreign Host 421."""
        if not self.protect:
            return None
        origin = headers.get("origin")
        if origin is not None and origin.lower().rstrip("/") not in self.allowed_origins:
            scheme, _, rest = origin.partition("://")
            if scheme.lower() not in ("http", "https") or _host_only(rest) not in self.allowed_hosts:
                return 403, f"Forbidden: Origin {origin!r} is not allowed (DNS-rebinding protection)"
        host = headers.get("host")
        if host is not None and _host_only(host) not in self.allowed_hosts and "*" not in self.allowed_hosts:
            return 421, f"Misdirected Request: Host {host!r} is not allowed (DNS-rebinding protection)"
        return None

    # --- POST -------------------------------------------------------------------------------

    async def _read_body(self, receive: Receive, headers: dict[str, str], send: Send) -> bytes | None:
        declared = headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_body_bytes:
            await _respond_error(
                send, 413, INVALID_REQUEST, f"Payload Too Large: the limit is {self.max_body_bytes} bytes"
            )
            return None
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body_bytes:
                await _respond_error(
                    send, 413, INVALID_REQUEST, f"Payload Too Large: the limit is {self.max_body_bytes} bytes"
                )
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)

    async def _post(self, scope: Scope, receive: Receive, send: Send, headers: dict[str, str]) -> None:
        content_type = headers.get("content-type", "")
        if content_type.split(";", 1)[0].strip().lower() != "application/json":
            await _respond_error(
                send, 415, INVALID_REQUEST, "Unsupported Media Type: send Content-Type: application/json"
            )
            return
        accept = headers.get("accept", "*/*").lower()
        accepts_json = "application/json" in accept or "*/*" in accept or "application/*" in accept
        accepts_sse = "text/event-stream" in accept or "*/*" in accept
        if not accepts_json and not accepts_sse:
            await _respond_error(
                send, 406, INVALID_REQUEST, "Not Acceptable: Accept must list application/json and text/event-stream"
            )
            return
        body = await self._read_body(receive, headers, send)
        if body is None:
            return
        message = parse(body)
        if isinstance(message, Invalid):
            await _respond(send, 400, encode(message.reply))
            return
        header_version = headers.get("mcp-protocol-version")
        if isinstance(message, Request) and (is_modern_request(message) or header_version in MODERN_VERSIONS):
            await self._post_modern(message, scope, receive, send, headers, accepts_sse)
        elif header_version in MODERN_VERSIONS:
            await _respond(send, 202)  # the modern era defines no client notifications over HTTP
        else:
            await self._post_legacy(message, scope, receive, send, headers, accepts_sse)

    async def _post_modern(
        self, request: Request, scope: Scope, receive: Receive, send: Send, headers: dict[str, str], sse: bool
    ) -> None:
        problem = self._header_problem(request, headers)
        if problem is not None:
            await _respond_error(send, 400, HEADER_MISMATCH, f"Header mismatch: {problem}", request.id)
            return
        await self._serve(request, None, scope, receive, send, sse, resumable=False, modern=True)

    def _header_problem(self, request: Request, headers: dict[str, str]) -> str | None:
        """Spec 2026-07-28 "Server Validation": headers must mirror the body exactly."""
        version = headers.get("mcp-protocol-version")
        if version is None:
            return "the MCP-Protocol-Version header is missing"
        meta = request.params.get("_meta")
        body_version = meta.get(PROTOCOL_VERSION_KEY) if isinstance(meta, dict) else None
        if body_version is not None and version != body_version:
            return f"MCP-Protocol-Version header {version!r} does not match _meta protocolVersion {body_version!r}"
        method = headers.get("mcp-method")
        if method is None:
            return "the Mcp-Method header is missing"
        if method != request.method:
            return f"Mcp-Method header {method!r} does not match body method {request.method!r}"
        field_name = NAMED_METHODS.get(request.method)
        if field_name is not None:
            raw = headers.get("mcp-name")
            if raw is None:
                return f"the Mcp-Name header is missing (required for {request.method})"
            name = decode_header_value(raw)
            if name is None:
                return "the Mcp-Name header has invalid characters or invalid Base64"
            if name != request.params.get(field_name):
                return f"Mcp-Name header {name!r} does not match body {field_name} {request.params.get(field_name)!r}"
        if request.method == "tools/call":
            return self._param_header_problem(request, headers)
        return None

    def _param_header_problem(self, request: Request, headers: dict[str, str]) -> str | None:
        tool = self.server._tools.get(str(request.params.get("name")))
        if tool is None or not tool.header_params:
            return None
        arguments = request.params.get("arguments")
        arguments = arguments if isinstance(arguments, dict) else {}
        for header_name, path in tool.header_params.items():
            value: Any = arguments
            for key in path:
                value = value.get(key) if isinstance(value, dict) else None
            raw = headers.get(f"mcp-param-{header_name.lower()}")
            if value is None:
                continue  # absent or null: the client omits the header, the server expects none
            if raw is None:
                return f"the Mcp-Param-{header_name} header is missing for argument {'.'.join(path)}"
            decoded = decode_header_value(raw)
            if decoded is None:
                return f"the Mcp-Param-{header_name} header has invalid characters or invalid Base64"
            if not _header_matches(decoded, value):
                return f"Mcp-Param-{header_name} header {decoded!r} does not match argument {'.'.join(path)}"
        return None

    async def _post_legacy(
        self,
        message: Request | Notification | Response,
        scope: Scope,
        receive: Receive,
        send: Send,
        headers: dict[str, str],
        sse: bool,
    ) -> None:
        header_version = headers.get("mcp-protocol-version")
        initializing = isinstance(message, Request) and message.method == "initialize"
        if header_version is not None and header_version not in KNOWN_VERSIONS and not initializing:
            error = unsupported_version(header_version)
            await _respond(
                send, 400, encode(error_reply(getattr(message, "id", None), error.code, error.message, error.data))
            )
            return
        if self.stateless:
            await self._post_stateless_legacy(message, scope, receive, send, header_version, sse)
            return
        if initializing:
            assert isinstance(message, Request)
            await self._initialize(message, scope, receive, send, sse)
            return
        session_id = headers.get("mcp-session-id")
        request_id = getattr(message, "id", None)
        if session_id is None:
            await _respond_error(
                send,
                400,
                INVALID_REQUEST,
                "Bad Request: missing Mcp-Session-Id header; send initialize first",
                request_id,
            )
            return
        session = self.sessions.get(session_id)
        if session is None:
            await _respond_error(send, 404, INVALID_REQUEST, "Not Found: unknown or terminated session", request_id)
            return
        session.connection.session.last_active = asyncio.get_running_loop().time()
        if isinstance(message, Notification):
            self.engine.handle_notification(message, session.connection)
            await _respond(send, 202)
        elif isinstance(message, Response):
            self.engine.handle_response(message, session.connection)
            await _respond(send, 202)
        else:
            await self._serve(message, session, scope, receive, send, sse, resumable=self.event_store is not None)

    async def _initialize(self, request: Request, scope: Scope, receive: Receive, send: Send, sse: bool) -> None:
        if len(self.sessions) >= self.max_sessions:
            self.reap_idle()
        if len(self.sessions) >= self.max_sessions:
            await _respond_error(
                send,
                503,
                INVALID_REQUEST,
                f"Service Unavailable: the server's limit of {self.max_sessions} sessions is reached",
                request.id,
            )
            return
        session_id = secrets.token_urlsafe(32)
        connection = Connection()
        connection.session.id = session_id
        session = HttpSession(connection)
        connection.session.notify = lambda message: self._notify(session, message)
        reply = await self.engine.handle_request(request, connection, self._drop)
        if not reply.is_error:
            self.sessions[session_id] = session
        headers = [] if reply.is_error else [("mcp-session-id", session_id)]
        await _respond(send, reply.status, reply.body, headers)

    async def _post_stateless_legacy(
        self,
        message: Request | Notification | Response,
        scope: Scope,
        receive: Receive,
        send: Send,
        header_version: str | None,
        sse: bool,
    ) -> None:
        if not isinstance(message, Request):
            await _respond(send, 202)
            return
        connection = Connection()
        if message.method != "initialize":
            connection.session.version = header_version if header_version in LEGACY_VERSIONS else "2025-03-26"
        await self._serve(message, None, scope, receive, send, sse, resumable=False, connection=connection)

    async def _notify(self, session: HttpSession, message: dict[str, Any]) -> None:
        """Unsolicited messages for a legacy session go to its GET stream, if one is open."""
        if session.standalone is not None:
            session.standalone.put_nowait(encode(message))

    @staticmethod
    async def _drop(message: dict[str, Any]) -> None:
        return None

    # --- answering a request: JSON or SSE ---------------------------------------------------

    async def _serve(
        self,
        request: Request,
        session: HttpSession | None,
        scope: Scope,
        receive: Receive,
        send: Send,
        sse: bool,
        *,
        resumable: bool,
        connection: Connection | None = None,
        modern: bool | None = None,
    ) -> None:
        connection = connection if connection is not None else (session.connection if session is not None else None)
        limit = self.server.max_concurrent_requests
        inflight = (
            len(connection.inflight) if session is not None and connection is not None else self._stateless_inflight
        )
        if inflight >= limit:
            await _respond(send, 503, encode(busy_reply(request.id, limit)), [("retry-after", "1")])
            return
        listening = request.method == "subscriptions/listen"
        if listening and not sse:
            await _respond_error(
                send,
                406,
                INVALID_REQUEST,
                "Not Acceptable: subscriptions/listen answers with an SSE stream",
                request.id,
            )
            return
        queue: asyncio.Queue[Any] = asyncio.Queue()
        # A listen request is a stream by nature, even in JSON-response mode.
        streaming = listening or (sse and not self.json_response)
        stream_id = secrets.token_hex(8) if resumable and streaming else None
        if stream_id is not None and session is not None:
            session.add_stream(stream_id)
        closer = _StreamCloser()
        arrived: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        unheard: list[bool] = []  # set once a legacy client left with no way to resume

        def put(item: Any) -> None:
            if unheard:
                return
            queue.put_nowait(item)
            if not arrived.done():
                arrived.set_result(None)

        async def deliver(message: dict[str, Any]) -> None:
            if unheard and streaming and "id" in message:  # a question nobody can answer: fail it now
                raise ClientRequestError("the client disconnected from this request's stream")
            if streaming:
                put(encode(message))
            elif session is not None:  # JSON-only mode: route to the GET stream if there is one
                await self._notify(session, message)

        async def run() -> None:
            try:
                reply = await self.engine.handle_request(
                    request, connection, deliver, request_info=_RequestInfo(scope, closer.close), modern=modern
                )
            except asyncio.CancelledError:
                if self._shutting_down:  # not the client's cancellation: it is owed an answer
                    put((_REPLY, _stopping_reply(request.id)))
                else:
                    put(_CANCELLED)
                raise
            except Exception:
                logger.exception("internal error while handling %s", request.method)
                reply = Reply(encode(error_reply(request.id, -32603, "Internal error")), 500, True)
            put((_REPLY, reply))

        task = asyncio.create_task(run())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        if session is None:
            self._stateless_inflight += 1
            task.add_done_callback(self._stateless_done)
        if connection is not None:
            connection.inflight[request.id] = task
            task.add_done_callback(lambda _: _forget_inflight(connection, request.id, task))
        if stream_id is not None:
            # Resumable: open the stream now with a priming event the client can resume from.
            await self._stream(
                scope, queue, send, receive, task, request, stream_id, first=None, closer=closer, modern=modern is True
            )
            return
        first = await self._first(queue, arrived, receive, task, cancel=modern is True)
        if first is None:
            unheard.append(True)
            return  # the client went away: the request was cancelled (modern) or runs on unheard
        if first is _CANCELLED:  # cancelled by notifications/cancelled: nothing to answer
            await _respond(send, 204)
            return
        if isinstance(first, tuple):
            reply: Reply = first[1]
            await _respond(send, reply.status, reply.body)
            return
        await self._stream(
            scope, queue, send, receive, task, request, None, first=first, closer=closer, modern=modern is True
        )
        if not task.done() and modern is not True:
            unheard.append(True)

    async def _first(
        self,
        queue: asyncio.Queue[Any],
        arrived: asyncio.Future[None],
        receive: Receive,
        task: asyncio.Task[Any],
        *,
        cancel: bool,
    ) -> Any:
        """The first thing the request produces, or None if the client disconnected first.

        On a disconnect the request is cancelled when ``cancel`` (2026-07-28: a disconnect
        MUST be treated as cancellation); otherwise it runs to its end unheard (2025-11-25:
        disconnection SHOULD NOT be taken as cancellation). Watching for a disconnect costs a
        task per request; most requests finish within milliseconds, so the watch starts only
        once a request has taken ``_WATCH_AFTER``.
        """
        if queue.empty():
            loop = asyncio.get_running_loop()
            watchers: list[asyncio.Task[None]] = []
            timer = loop.call_later(
                _WATCH_AFTER, lambda: watchers.append(loop.create_task(_settle_on_disconnect(receive, arrived)))
            )
            try:
                await arrived
            finally:
                timer.cancel()
                for watcher in watchers:
                    watcher.cancel()
            if queue.empty():  # the client went away first
                if cancel:
                    task.cancel()
                return None
        return queue.get_nowait()

    async def _stream(
        self,
        scope: Scope,
        queue: asyncio.Queue[Any],
        send: Send,
        receive: Receive,
        task: asyncio.Task[Any],
        request: Request,
        stream_id: str | None,
        *,
        first: Any,
        closer: _StreamCloser,
        modern: bool,
    ) -> None:
        from sse_starlette import EventSourceResponse, ServerSentEvent

        store = self.event_store if stream_id is not None else None

        async def events() -> AsyncIterator[ServerSentEvent]:
            finished = False
            try:
                if store is not None and stream_id is not None:
                    priming = await store.append(stream_id, b"")
                    yield ServerSentEvent(data="", id=priming, retry=self.retry_ms)
                item = first
                while True:
                    if item is None:
                        item = await _next_or_close(queue, closer)
                        if item is _CLOSE:
                            return  # the handler asked the client to reconnect; the request goes on
                    if item is _CANCELLED:
                        finished = True
                        if store is not None and stream_id is not None:
                            await store.finish(stream_id)
                        return
                    if isinstance(item, tuple):
                        body = item[1].body
                        event_id = await store.append(stream_id, body) if store is not None and stream_id else None
                        if store is not None and stream_id is not None:
                            await store.finish(stream_id)
                        finished = True
                        yield ServerSentEvent(data=body.decode(), id=event_id, event="message")
                        return
                    event_id = await store.append(stream_id, item) if store is not None and stream_id else None
                    yield ServerSentEvent(data=item.decode(), id=event_id, event="message")
                    item = None
            finally:
                if not finished:
                    if store is not None:
                        self._keep_storing(queue, task, store, stream_id)
                    elif modern:
                        task.cancel()  # 2026-07-28: a disconnect is the request's cancellation
                    # else (2025-11-25): a disconnect SHOULD NOT cancel; the request runs on and
                    # what it still sends has no reader (the queue is dropped with the stream)

        # At shutdown sse-starlette would end the stream at once; a request's stream ends by
        # itself with its response, so it gets the grace period to get there.
        response = EventSourceResponse(
            events(), headers=SSE_HEADERS, ping=self.sse_ping_seconds, shutdown_grace_period=self.shutdown_grace
        )
        await response(scope, receive, send)

    def _keep_storing(
        self, queue: asyncio.Queue[Any], task: asyncio.Task[Any], store: EventStore, stream_id: str | None
    ) -> None:
        """After a resumable stream's connection ended, keep the request's messages for a GET to replay."""
        assert stream_id is not None

        async def drain() -> None:
            while True:
                item = await queue.get()
                if item is _CANCELLED:
                    await store.finish(stream_id)
                    return
                if isinstance(item, tuple):
                    await store.append(stream_id, item[1].body)
                    await store.finish(stream_id)
                    return
                await store.append(stream_id, item)

        drainer = asyncio.create_task(drain())
        self._tasks.add(drainer)
        drainer.add_done_callback(self._tasks.discard)

    # --- GET: the standalone stream, or resuming one ----------------------------------------

    async def _get(self, scope: Scope, receive: Receive, send: Send, headers: dict[str, str]) -> None:
        from sse_starlette import EventSourceResponse, ServerSentEvent

        if "text/event-stream" not in headers.get("accept", "*/*") and "*/*" not in headers.get("accept", "*/*"):
            await _respond_error(send, 406, INVALID_REQUEST, "Not Acceptable: GET needs Accept: text/event-stream")
            return
        session = await self._session_for_stream(headers, send)
        if session is None:
            return
        last_event_id = headers.get("last-event-id")
        if last_event_id is not None and self.event_store is not None:
            stream_id = self.event_store.stream_of(last_event_id)
            # Replay only this session's streams; an unknown or foreign id is not an error
            # (replay is optional, and a 404 would tell the client its session is gone):
            # the client gets a plain GET stream instead.
            if stream_id in session.streams and await self.event_store.events_after(last_event_id) is not None:
                await self._resume(scope, last_event_id, receive, send)
                return
        if session.standalone is not None:
            await _respond_error(send, 409, INVALID_REQUEST, "Conflict: this session already has an open GET stream")
            return
        queue: asyncio.Queue[bytes] = asyncio.Queue()
        session.standalone = queue

        async def events() -> AsyncIterator[ServerSentEvent]:
            try:
                while True:
                    data = await queue.get()
                    if not data:
                        return
                    yield ServerSentEvent(data=data.decode(), event="message")
            finally:
                if session.standalone is queue:
                    session.standalone = None

        response = EventSourceResponse(events(), headers=SSE_HEADERS, ping=self.sse_ping_seconds)
        await response(scope, receive, send)

    async def _resume(self, scope: Scope, last_event_id: str, receive: Receive, send: Send) -> None:
        from sse_starlette import EventSourceResponse, ServerSentEvent

        store = self.event_store
        assert store is not None

        async def events() -> AsyncIterator[ServerSentEvent]:
            cursor = last_event_id
            while True:
                batch = await store.events_after(cursor)
                if batch is None:
                    return
                pending, finished, changed = batch
                for event_id, data in pending:
                    cursor = event_id
                    if data:
                        yield ServerSentEvent(data=data.decode(), id=event_id, event="message")
                if finished and not pending:
                    return
                if not pending:
                    await changed.wait()

        response = EventSourceResponse(events(), headers=SSE_HEADERS, ping=self.sse_ping_seconds)
        await response(scope, receive, send)

    # --- DELETE -----------------------------------------------------------------------------

    async def _delete(self, send: Send, headers: dict[str, str]) -> None:
        session = await self._session_for_stream(headers, send)
        if session is not None:
            self._end_session(session)
            await _respond(send, 204)

    async def _session_for_stream(self, headers: dict[str, str], send: Send) -> HttpSession | None:
        """The legacy session a GET or DELETE names, or None once an error has been sent.

        These methods exist only for legacy sessions: modern or stateless traffic gets 405
        (spec 2026-07-28, streamable-http "Backward Compatibility").
        """
        if headers.get("mcp-protocol-version") in MODERN_VERSIONS or self.stateless:
            await _respond(send, 405, headers=[("allow", "POST")])
            return None
        session_id = headers.get("mcp-session-id")
        if session_id is None:
            await _respond_error(send, 400, INVALID_REQUEST, "Bad Request: missing Mcp-Session-Id header")
            return None
        session = self.sessions.get(session_id)
        if session is None:
            await _respond_error(send, 404, INVALID_REQUEST, "Not Found: unknown or terminated session")
        return session


_CLOSE = object()


def _stopping_reply(request_id: Any) -> Reply:
    body = encode(error_reply(request_id, INTERNAL_ERROR, "Internal error: the server is shutting down; retry later"))
    return Reply(body, 503, True)


class _StreamCloser:
    """Lets a handler end its SSE connection early (legacy, resumable): the client reconnects."""

    def __init__(self) -> None:
        self.requested = asyncio.Event()

    async def close(self) -> None:
        self.requested.set()


async def _next_or_close(queue: asyncio.Queue[Any], closer: _StreamCloser) -> Any:
    if not queue.empty():
        return queue.get_nowait()
    getting = asyncio.ensure_future(queue.get())
    closing = asyncio.ensure_future(closer.requested.wait())
    try:
        done, _ = await asyncio.wait({getting, closing}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        # Also when the stream itself is cancelled (client gone): a pending get left behind
        # would swallow the next message before anyone else reads the queue.
        closing.cancel()
        if not getting.done():
            getting.cancel()
    if getting in done:
        return getting.result()
    return _CLOSE


class _RequestInfo:
    """What ``ctx.request`` exposes over HTTP: the ASGI scope, headers, and the stream closer."""

    def __init__(self, scope: Scope, close_stream: Callable[[], Awaitable[None]]) -> None:
        self.scope = scope
        self.close_stream = close_stream

    @property
    def headers(self) -> dict[str, str]:
        return _header_map(self.scope)

    @property
    def client(self) -> tuple[str, int] | None:
        client = self.scope.get("client")
        return (str(client[0]), int(client[1])) if client else None


def _forget_inflight(connection: Connection, request_id: Any, task: asyncio.Task[Any]) -> None:
    if connection.inflight.get(request_id) is task:
        del connection.inflight[request_id]


_WATCH_AFTER: Final = 0.05
"""Seconds a request runs before toolkit starts watching for its client to disconnect."""


async def _settle_on_disconnect(receive: Receive, arrived: asyncio.Future[None]) -> None:
    await _wait_disconnect(receive)
    if not arrived.done():
        arrived.set_result(None)


async def _wait_disconnect(receive: Receive) -> None:
    while True:
        message: Message = await receive()
        if message["type"] == "http.disconnect":
            return


def _host_only(host: str) -> str:
    host = host.strip().lower()
    if host.startswith("["):
        return host[: host.find("]") + 1]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _header_matches(header: str, value: Any) -> bool:
    if isinstance(value, bool):
        return header == ("true" if value else "false")
    if isinstance(value, int | float):
        try:
            return float(header) == float(value)
        except ValueError:
            return False
    return header == str(value)


def create_app(server: Server, *, path: str = "/mcp", **options: Any) -> McpApp:
    """A Starlette app serving ``server`` at ``path``; its lifespan runs the server's."""
    from starlette.routing import Route

    endpoint = McpEndpoint(server, **options)
    app = McpApp(routes=[Route(path, endpoint=endpoint, methods=["GET", "POST", "DELETE"])], lifespan=endpoint.lifespan)
    app.state.mcp = endpoint
    return app


class McpApp(Starlette):
    """The Starlette app ``server.http_app()`` returns.

    Mounted inside another app, its lifespan does not run by itself (Starlette runs only the
    outermost app's): give the host app ``lifespan=mcp_app.lifespan``, or enter it from the
    host's own lifespan with ``async with mcp_app.lifespan(app): ...``.
    """

    @property
    def endpoint(self) -> McpEndpoint:
        """The ASGI endpoint itself, to add as a route of another app."""
        endpoint: McpEndpoint = self.state.mcp
        return endpoint

    def lifespan(self, app: Any = None) -> contextlib.AbstractAsyncContextManager[None]:
        """The server's lifespan, as an app lifespan (``FastAPI(lifespan=mcp_app.lifespan)``)."""
        return self.endpoint.lifespan(app)


def run_http(
    server: Server,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    path: str = "/mcp",
    workers: int = 1,
    app_spec: str | None = None,
    log_level: str = "warning",
    shutdown_grace: float = 10.0,
    **options: Any,
) -> None:
    """Serve over Streamable HTTP with uvicorn (``workers`` > 1 needs ``app_spec``, the CLI's APP)."""
    import os

    if workers > 1:
        if app_spec is None:
            raise ValueError("workers > 1 needs the app given as 'path.py:attr' (use `toolkit run ... --workers N`)")
        import json

        from ._mrtr import STATE_SECRET_ENV

        if not options.get("stateless"):
            # Legacy sessions live in one process, and the kernel spreads connections over the
            # workers: a session's next request would reach a worker that never saw it.
            logger.warning(
                "with %d workers, legacy (2025-11-25 and older) clients are served without sessions; "
                "run one worker per process behind sticky routing to keep them",
                workers,
            )
            options["stateless"] = True
        # Every worker must sign and verify requestState with the same key.
        os.environ.setdefault(STATE_SECRET_ENV, secrets.token_hex(32))
        os.environ["TOOLKIT_APP"] = app_spec
        os.environ["TOOLKIT_HTTP_PATH"] = path
        os.environ["TOOLKIT_HTTP_OPTIONS"] = json.dumps(options)
        uvicorn.run(
            "toolkit._http:worker_app", factory=True, host=host, port=port, workers=workers, log_level=log_level
        )
        return
    options.setdefault("shutdown_grace", shutdown_grace)
    serve_app(
        create_app(server, path=path, **options),
        host=host,
        port=port,
        log_level=log_level,
        shutdown_grace=shutdown_grace,
    )


def serve_app(
    app: Starlette,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    log_level: str = "warning",
    shutdown_grace: float | None = None,
    workers: int = 1,
    app_spec: str | None = None,
) -> None:
    """Serve an app made by ``create_app``/``server.http_app`` with uvicorn until SIGTERM/SIGINT."""
    if workers > 1:
        import os

        if app_spec is None:
            raise ValueError("workers > 1 needs the app given as 'path.py:attr' (use `toolkit run ... --workers N`)")
        from ._mrtr import STATE_SECRET_ENV

        os.environ.setdefault(STATE_SECRET_ENV, secrets.token_hex(32))
        os.environ["TOOLKIT_APP"] = app_spec
        uvicorn.run(
            "toolkit._http:worker_app", factory=True, host=host, port=port, workers=workers, log_level=log_level
        )
        return
    endpoint: McpEndpoint = app.state.mcp
    if shutdown_grace is not None:
        endpoint.shutdown_grace = shutdown_grace
    # uvicorn's own deadline comes a little after ours, so requests still running when the grace
    # period ends are answered by toolkit (a JSON-RPC error), not cut off by uvicorn (a text 500).
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        lifespan="on",
        timeout_graceful_shutdown=math.ceil(endpoint.shutdown_grace) + 2,
    )
    GracefulServer(config, endpoint).run()


class GracefulServer(uvicorn.Server):
    """uvicorn's server, ending long-lived streams first on shutdown and exiting 0 after a signal.

    uvicorn re-raises SIGTERM/SIGINT once it has shut down, so the process would end "killed
    by signal"; a server that drained its requests as asked has succeeded and exits 0.
    """

    def __init__(self, config: uvicorn.Config, endpoint: McpEndpoint) -> None:
        super().__init__(config)
        self.endpoint = endpoint

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        originals = {sig: signal.signal(sig, self.handle_exit) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            for sig, handler in originals.items():
                signal.signal(sig, handler)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self.endpoint.begin_shutdown()
        expiring = asyncio.create_task(self.endpoint.expire_requests())
        try:
            await super().shutdown(sockets)
        finally:
            expiring.cancel()


def worker_app() -> Starlette:
    """The app each uvicorn worker builds (``toolkit run --workers N``)."""
    import json
    import os

    from ._cli import load_target

    target = load_target(os.environ["TOOLKIT_APP"])
    if hasattr(target, "state"):
        app: Starlette = target
        return app
    options = json.loads(os.environ.get("TOOLKIT_HTTP_OPTIONS", "{}"))
    return create_app(target, path=os.environ.get("TOOLKIT_HTTP_PATH", "/mcp"), **options)
