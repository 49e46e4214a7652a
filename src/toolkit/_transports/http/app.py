"""Streamable HTTP: one ASGI endpoint that serves both protocol eras.

Per request, the era is decided as the spec's backward-compatibility sections say: a POST
whose body carries modern ``_meta`` (or whose ``MCP-Protocol-Version`` is a modern version)
is served statelessly under 2026-07-28 rules; anything else belongs to a legacy session
that ``initialize`` opened (``Mcp-Session-Id``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Final

from starlette.applications import Starlette
from starlette.routing import Route

from ..._auth.resource import WELL_KNOWN, ResourceServer
from ..._auth.tokens import AccessToken
from ..._errors import HEADER_MISMATCH, INTERNAL_ERROR, INVALID_REQUEST, StoreUnavailable
from ..._events import EventStore
from ..._jsonrpc import Invalid, Notification, Request, Response, encode, error_reply, parse
from ..._session import Connection
from ..._store.base import MemoryStore, Store
from ..._versions import (
    KNOWN_VERSIONS,
    MODERN_VERSIONS,
    is_modern_request,
    sessionless_legacy_version,
    unsupported_version,
)
from ..base import EngineFacing, Lifecycle, Running
from .asgi import BodyTooLarge, RequestInfo, header_map, read_body, respond, respond_error
from .auth import BearerGate, ResourceMetadata
from .events import can_resume, resume_stream, standalone_stream
from .security import HostGuard, ToolHeaders, header_problem
from .sessions import HttpSession, SessionTable
from .sse import WRITE_TIMEOUT
from .streams import Responder

if TYPE_CHECKING:
    from starlette.types import Receive, Scope, Send

    from .docs import PageOptions

logger = logging.getLogger("toolkit")

DEFAULT_MAX_BODY_BYTES: Final = 4 * 1024 * 1024


class McpEndpoint:
    """The ASGI app behind the MCP endpoint path."""

    def __init__(
        self,
        engine: EngineFacing,
        *,
        running: Running,
        tool_headers: ToolHeaders,
        lifespan_required: bool = False,
        max_concurrent_requests: int = 100,
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
        sse_write_timeout: float = WRITE_TIMEOUT,
        shutdown_grace: float = 10.0,
        auth: ResourceServer | None = None,
        store: Store | None = None,
    ) -> None:
        self.engine = engine
        self._running = running
        self.tool_headers = tool_headers
        self.store = store if store is not None else MemoryStore()
        # A shared store is started by the lifespan (its bus, its lease): without it, replicas
        # could not tell each other anything, so a request is refused as for the user's lifespan.
        self.lifespan_required = lifespan_required or self.store.shared
        self.stateless = stateless
        self.page_path: str | None = None
        """The tools page's path when the app serves it: where a browser opening the endpoint is sent."""
        self.guard = HostGuard(
            allowed_hosts=allowed_hosts, allowed_origins=allowed_origins, enabled=dns_rebinding_protection
        )
        self.gate = BearerGate(auth, self.guard) if auth is not None else None
        self.max_body_bytes = max_body_bytes
        self.event_store = event_store if event_store is not None else self.store.events()
        self.sse_ping_seconds = sse_ping_seconds
        self.sse_write_timeout = sse_write_timeout
        self.lifecycle = Lifecycle(
            engine, max_concurrent_requests=max_concurrent_requests, shutdown_grace=shutdown_grace
        )
        self.sessions = SessionTable(engine, self.store, max_sessions=max_sessions, idle_timeout=session_idle_timeout)
        self.responder = Responder(
            self.lifecycle,
            json_response=json_response,
            event_store=self.event_store,
            retry_ms=retry_ms,
            sse_ping_seconds=sse_ping_seconds,
            sse_write_timeout=sse_write_timeout,
            max_listeners=max_sessions,
        )
        self._started = False

    @property
    def shutdown_grace(self) -> float:
        return self.lifecycle.shutdown_grace

    @shutdown_grace.setter
    def shutdown_grace(self, seconds: float) -> None:
        self.lifecycle.shutdown_grace = seconds

    # --- lifecycle --------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def lifespan(self, app: Any = None) -> AsyncIterator[None]:
        async with self._running():
            await self.store.start(self._on_bus_message)
            await self.engine.attach_store(self.store)
            self._started = True
            self.sessions.start_reaper()
            try:
                yield
            finally:
                self.sessions.stop_reaper()
                await self.shutdown()
                await self.engine.stop_tasks()
                self.engine.detach_store()
                await self.store.close()
                self._started = False

    def _on_bus_message(self, message: dict[str, Any]) -> None:
        """What another replica (or this one) published: about a session held here, or a change to announce."""
        if not self.sessions.on_message(message):
            self.engine.handle_broadcast(message)

    def begin_shutdown(self) -> None:
        """Stop the long-lived streams (subscriptions, GET streams) so their connections can close."""
        self.engine.close_listeners()
        self.sessions.end_streams()

    async def expire_requests(self, grace: float | None = None) -> None:
        """Give in-flight requests ``grace`` seconds, then cancel them with a "shutting down" error."""
        await self.lifecycle.drain(grace)

    async def shutdown(self, grace: float | None = None) -> None:
        """End subscriptions gracefully, let in-flight requests finish, then close sessions.

        Requests still running after ``grace`` seconds (``shutdown_grace``) are cancelled and
        answered with a JSON-RPC error saying the server is stopping.
        """
        self.begin_shutdown()
        await self.expire_requests(grace)
        self.sessions.end_all()
        if self.gate is not None:
            await self.gate.resource_server.close()

    async def reap_idle(self) -> None:
        """End the sessions idle for longer than ``session_idle_timeout``."""
        await self.sessions.reap_idle()

    # --- ASGI -------------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":  # served on its own: run our lifespan
            await self._asgi_lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        if not self._started and self.lifespan_required:
            # Mounted in a host app that did not run our lifespan: the user's lifespan never
            # started, so handlers would see ctx.lifespan as None. Say so instead.
            await respond_error(
                send,
                500,
                INTERNAL_ERROR,
                "Internal error: the MCP server's lifespan has not started. When mounting server.http_app() "
                "in another app, give that app the MCP app's lifespan: lifespan=mcp_app.lifespan",
            )
            logger.error("request refused: the server's lifespan has not started (see the message sent)")
            return
        self.sessions.start_reaper()  # served without our lifespan: clean up idle sessions anyway
        headers = header_map(scope)
        rejected = self.guard.check(headers)
        if rejected is not None:
            await respond_error(send, rejected[0], INVALID_REQUEST, rejected[1])
            return
        method = scope["method"]
        token = None
        if self.gate is not None and method in ("POST", "GET", "DELETE"):  # every MCP request, either era
            token = await self.gate.admit(scope, headers, send)
            if token is None:
                return
        started = _Started(send)
        try:
            if method == "POST":
                await self._post(scope, receive, started, headers, token)
            elif method == "GET":
                await self._get(scope, receive, started, headers, token)
            elif method == "DELETE":
                await self._delete(started, headers, token)
            else:
                await respond(send, 405, headers=[("allow", "GET, POST, DELETE")])
        except StoreUnavailable as exc:
            logger.warning("%s", exc.message)
            if not started.started:
                await respond_error(send, 503, INTERNAL_ERROR, exc.message, headers=[("retry-after", "1")])

    async def _asgi_lifespan(self, receive: Receive, send: Send) -> None:
        message = await receive()
        assert message["type"] == "lifespan.startup"
        async with self.lifespan():
            await send({"type": "lifespan.startup.complete"})
            await receive()
        await send({"type": "lifespan.shutdown.complete"})

    # --- POST -------------------------------------------------------------------------------

    async def _read_body(self, receive: Receive, headers: dict[str, str], send: Send) -> bytes | None:
        too_large = f"Payload Too Large: the limit is {self.max_body_bytes} bytes"
        declared = headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_body_bytes:
            await respond_error(send, 413, INVALID_REQUEST, too_large)
            return None
        try:
            return await read_body(receive, self.max_body_bytes)
        except BodyTooLarge:
            await respond_error(send, 413, INVALID_REQUEST, too_large)
            return None

    async def _post(
        self, scope: Scope, receive: Receive, send: Send, headers: dict[str, str], token: AccessToken | None
    ) -> None:
        content_type = headers.get("content-type", "")
        if content_type.split(";", 1)[0].strip().lower() != "application/json":
            await respond_error(
                send, 415, INVALID_REQUEST, "Unsupported Media Type: send Content-Type: application/json"
            )
            return
        accept = headers.get("accept", "*/*").lower()
        accepts_json = "application/json" in accept or "*/*" in accept or "application/*" in accept
        accepts_sse = "text/event-stream" in accept or "*/*" in accept
        if not accepts_json and not accepts_sse:
            await respond_error(
                send, 406, INVALID_REQUEST, "Not Acceptable: Accept must list application/json and text/event-stream"
            )
            return
        body = await self._read_body(receive, headers, send)
        if body is None:
            return
        message = parse(body)
        if isinstance(message, Invalid):
            await respond(send, 400, encode(message.reply))
            return
        if (
            token is not None
            and isinstance(message, Request)
            and not await self._scopes_granted(message, token, scope, send)
        ):
            return
        header_version = headers.get("mcp-protocol-version")
        modern_header = header_version in MODERN_VERSIONS
        if isinstance(message, Request) and (modern_header or is_modern_request(message.method, message.params)):
            await self._post_modern(message, scope, receive, send, headers, accepts_sse, token)
        elif modern_header:
            await respond(send, 202)  # the modern era defines no client notifications over HTTP
        else:
            await self._post_legacy(message, scope, receive, send, headers, accepts_sse, token)

    async def _scopes_granted(self, request: Request, token: AccessToken, scope: Scope, send: Send) -> bool:
        """Whether the token grants what the request's tool, resource or prompt requires; if not, 403 is sent."""
        needed = self.engine.required_scopes(request.method, request.params)
        if not needed:
            return True
        assert self.gate is not None
        refusal = self.gate.resource_server.require(token, needed)
        if refusal is None:
            return True
        await self.gate.refuse(scope, send, refusal, request.id)
        return False

    async def _post_modern(
        self,
        request: Request,
        scope: Scope,
        receive: Receive,
        send: Send,
        headers: dict[str, str],
        sse: bool,
        token: AccessToken | None,
    ) -> None:
        problem = header_problem(request, headers, self.tool_headers, self.engine.named_field)
        if problem is not None:
            await respond_error(send, 400, HEADER_MISMATCH, f"Header mismatch: {problem}", request.id)
            return
        await self.responder.answer(
            request, None, scope, receive, send, sse, resumable=False, modern=True, access_token=token
        )

    async def _post_legacy(
        self,
        message: Request | Notification | Response,
        scope: Scope,
        receive: Receive,
        send: Send,
        headers: dict[str, str],
        sse: bool,
        token: AccessToken | None,
    ) -> None:
        header_version = headers.get("mcp-protocol-version")
        request_id = getattr(message, "id", None)
        initializing = isinstance(message, Request) and message.method == "initialize"
        if header_version is not None and header_version not in KNOWN_VERSIONS and not initializing:
            error = unsupported_version(header_version)
            await respond(send, 400, encode(error_reply(request_id, error.code, error.message, error.data)))
            return
        if self.stateless:
            await self._post_stateless_legacy(message, scope, receive, send, header_version, sse, token)
            return
        if initializing:
            assert isinstance(message, Request)
            await self._initialize(message, scope, send, token)
            return
        session = await self._session_for_post(headers, send, request_id, token)
        if session is None:
            return
        session.connection.session.last_active = asyncio.get_running_loop().time()
        if isinstance(message, Notification):
            self.engine.handle_notification(message, session.connection)
            if message.method == "notifications/cancelled":
                await self.sessions.route_cancel(session, message.params.get("requestId"))
            elif message.method == "notifications/initialized":
                await self.sessions.initialized(session)
            await respond(send, 202)
        elif isinstance(message, Response):
            if not self.engine.handle_response(message, session.connection):
                await self.sessions.route_response(session, message)
            await respond(send, 202)
        else:
            resumable = self.event_store is not None
            await self.responder.answer(
                message, session, scope, receive, send, sse, resumable=resumable, access_token=token
            )

    async def _session_for_post(
        self, headers: dict[str, str], send: Send, request_id: Any, token: AccessToken | None
    ) -> HttpSession | None:
        """The legacy session a POST names, or None once an error has been sent."""
        session_id = headers.get("mcp-session-id")
        if session_id is None:
            message = "Bad Request: missing Mcp-Session-Id header; send initialize first"
            await respond_error(send, 400, INVALID_REQUEST, message, request_id)
            return None
        session = await self.sessions.get(session_id, token.caller if token is not None else None)
        if session is None:
            await respond_error(send, 404, INVALID_REQUEST, "Not Found: unknown or terminated session", request_id)
        return session

    async def _initialize(self, request: Request, scope: Scope, send: Send, token: AccessToken | None) -> None:
        session = self.sessions.new(token.caller if token is not None else None)
        info = RequestInfo(scope, _nothing_to_close)
        reply = await self.engine.handle_request(
            request, session.connection, _drop, request_info=info, access_token=token
        )
        if reply.is_error:
            self.engine.forget(session.connection.session)
        elif not await self.sessions.add(session):
            limit = self.sessions.max_sessions
            message = f"Service Unavailable: the server's limit of {limit} sessions is reached"
            await respond_error(send, 503, INVALID_REQUEST, message, request.id)
            return
        headers = list(reply.headers.items()) if reply.headers else []
        if not reply.is_error:
            headers.append(("mcp-session-id", session.id))
        await respond(send, reply.status, reply.body, headers)

    async def _post_stateless_legacy(
        self,
        message: Request | Notification | Response,
        scope: Scope,
        receive: Receive,
        send: Send,
        header_version: str | None,
        sse: bool,
        token: AccessToken | None,
    ) -> None:
        if not isinstance(message, Request):
            await respond(send, 202)
            return
        connection = Connection()
        if message.method != "initialize":
            connection.session.version = sessionless_legacy_version(header_version)
        await self.responder.answer(
            message, None, scope, receive, send, sse, resumable=False, connection=connection, access_token=token
        )

    # --- GET: the standalone stream, or resuming one ----------------------------------------

    async def _get(
        self, scope: Scope, receive: Receive, send: Send, headers: dict[str, str], token: AccessToken | None
    ) -> None:
        accept = headers.get("accept", "*/*")
        if "text/html" in accept and "text/event-stream" not in accept and "mcp-session-id" not in headers:
            await self._browser(scope, send)
            return
        if "text/event-stream" not in accept and "*/*" not in accept:
            await respond_error(send, 406, INVALID_REQUEST, "Not Acceptable: GET needs Accept: text/event-stream")
            return
        session = await self._session_for_stream(headers, send, token)
        if session is None:
            return
        last_event_id = headers.get("last-event-id")
        if await can_resume(self.event_store, session, last_event_id):
            assert self.event_store is not None
            assert last_event_id is not None
            await resume_stream(
                self.event_store, last_event_id, scope, receive, send, self.sse_ping_seconds, self.sse_write_timeout
            )
            return
        if not await self.sessions.claim_stream(session):
            await respond_error(send, 409, INVALID_REQUEST, "Conflict: this session already has an open GET stream")
            return
        await standalone_stream(session, scope, receive, send, self.sse_ping_seconds, self.sse_write_timeout)

    async def _browser(self, scope: Scope, send: Send) -> None:
        """A browser opened the endpoint: to the tools page when it is served, else say what the endpoint is.

        It was told "missing Mcp-Session-Id header", which says nothing to a person.
        """
        if self.page_path is not None:
            await respond(send, 303, headers=[("location", scope.get("root_path", "") + self.page_path)])
            return
        message = (
            "Bad Request: this is an MCP endpoint, for MCP clients (they POST JSON-RPC messages here), with nothing "
            "for a browser to show. `toolkit dev APP` or `toolkit run APP --transport http --docs` serves the tools "
            "page, a browser's view of the server"
        )
        await respond_error(send, 400, INVALID_REQUEST, message)

    # --- DELETE -----------------------------------------------------------------------------

    async def _delete(self, send: Send, headers: dict[str, str], token: AccessToken | None) -> None:
        session = await self._session_for_stream(headers, send, token)
        if session is not None:
            await self.sessions.end(session)
            await respond(send, 204)

    async def _session_for_stream(
        self, headers: dict[str, str], send: Send, token: AccessToken | None
    ) -> HttpSession | None:
        """The legacy session a GET or DELETE names, or None once an error has been sent.

        These methods exist only for legacy sessions: modern or stateless traffic gets 405
        (spec 2026-07-28, streamable-http "Backward Compatibility").
        """
        if headers.get("mcp-protocol-version") in MODERN_VERSIONS or self.stateless:
            await respond(send, 405, headers=[("allow", "POST")])
            return None
        session_id = headers.get("mcp-session-id")
        if session_id is None:
            await respond_error(send, 400, INVALID_REQUEST, "Bad Request: missing Mcp-Session-Id header")
            return None
        session = await self.sessions.get(session_id, token.caller if token is not None else None)
        if session is None:
            await respond_error(send, 404, INVALID_REQUEST, "Not Found: unknown or terminated session")
        return session


async def _drop(message: dict[str, Any]) -> None:
    """``initialize`` sends nothing before its response."""


async def _nothing_to_close() -> None:
    """``initialize`` is answered with plain JSON: there is no stream for a handler to close."""


class _Started:
    """An ASGI ``send`` that remembers whether the response has started (then no error response can follow)."""

    __slots__ = ("send", "started")

    def __init__(self, send: Send) -> None:
        self.send = send
        self.started = False

    async def __call__(self, message: Any) -> None:
        if message["type"] == "http.response.start":
            self.started = True
        await self.send(message)


def create_app(
    endpoint: McpEndpoint,
    *,
    path: str = "/mcp",
    docs: PageOptions | None = None,
    custom: Sequence[tuple[str, Callable[..., Any], list[str], str | None]] = (),
) -> McpApp:
    """A Starlette app serving ``endpoint`` at ``path``; its lifespan runs the server's.

    An authenticated endpoint also gets its protected resource metadata, at
    ``/.well-known/oauth-protected-resource`` + ``path`` and at the bare well-known path.
    With ``docs``, the tools page is served at its path. ``custom``: the server's plain HTTP
    endpoints (``Server.custom_route``), as ``(path, endpoint, methods, name)``.
    """
    routes = [Route(path, endpoint=endpoint, methods=["GET", "POST", "DELETE"])]
    if docs is not None:
        from .docs import ToolsPage  # noqa: PLC0415 (the page is off by default: not imported unless on)

        page = ToolsPage(endpoint.guard, docs, mcp_path=path, auth=endpoint.gate is not None)
        endpoint.page_path = docs.path
        # Every method reaches the page, which answers 405 itself, with its security headers.
        routes.append(Route(docs.path, endpoint=page, methods=None))
        routes.append(Route(docs.path + "/{name}", endpoint=page, methods=None))
    if endpoint.gate is not None:
        metadata = ResourceMetadata(endpoint.gate, endpoint.guard, path)
        methods = ["GET", "HEAD", "OPTIONS"]
        routes.append(Route(WELL_KNOWN + path.rstrip("/"), endpoint=metadata, methods=methods))
        routes.append(Route(WELL_KNOWN, endpoint=metadata, methods=methods))
        issuer = endpoint.gate.resource_server.verifier
        if getattr(issuer, "issues_tokens", False):  # an OAuthProxy: toolkit is the authorization server too
            from .authserver import authorization_routes  # noqa: PLC0415 - only for an authorization server

            routes += authorization_routes(issuer, endpoint.guard, endpoint.store, endpoint.gate.resource_server)
    routes += [Route(where, endpoint=function, methods=verbs, name=name) for where, function, verbs, name in custom]
    app = McpApp(routes=routes, lifespan=endpoint.lifespan, path=path)
    app.state.mcp = endpoint
    app.state.mcp_path = path
    app.state.docs_path = docs.path if docs is not None else None
    return app


class McpApp(Starlette):
    """The Starlette app ``server.http_app()`` returns.

    Mounted inside another app, its lifespan does not run by itself (Starlette runs only the
    outermost app's): give the host app ``lifespan=mcp_app.lifespan``, or enter it from the
    host's own lifespan with ``async with mcp_app.lifespan(app): ...``.
    """

    def __init__(self, *args: Any, path: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._path = path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # The MCP endpoint's own requests skip Starlette's router and its default middleware
        # (neither does anything for them: the endpoint answers every method and error itself),
        # unless the app was given middleware of its own or is mounted (a root path).
        if (
            scope["type"] == "http"
            and scope["path"] == self._path
            and not scope.get("root_path")
            and not self.user_middleware
        ):
            scope["app"] = self
            await self.state.mcp(scope, receive, send)
            return
        await super().__call__(scope, receive, send)

    @property
    def endpoint(self) -> McpEndpoint:
        """The ASGI endpoint itself, to add as a route of another app."""
        endpoint: McpEndpoint = self.state.mcp
        return endpoint

    @property
    def resource_metadata(self) -> ResourceMetadata | None:
        """The protected resource metadata endpoint (``None`` without ``auth=``), to route in a host app."""
        for route in self.routes:
            endpoint = getattr(route, "endpoint", None)
            if isinstance(endpoint, ResourceMetadata):
                return endpoint
        return None

    def lifespan(self, app: Any = None) -> contextlib.AbstractAsyncContextManager[None]:
        """The server's lifespan, as an app lifespan (``FastAPI(lifespan=mcp_app.lifespan)``)."""
        return self.endpoint.lifespan(app)
