"""The protocol engine: one parsed message (plus its era) in, one reply out.

Transport-free. Transports parse frames, run each request in its own task, and hand the
engine a ``Connection`` (the legacy session and the in-flight requests of one stdio process
or one HTTP session) and a ``send`` for messages that belong on the request's stream.

Era per request (spec: basic/versioning, "Backward Compatibility"): a request whose
``_meta`` carries ``io.modelcontextprotocol/protocolVersion`` is modern and served
statelessly; anything else belongs to the legacy session opened by ``initialize``.
"""

from __future__ import annotations

import asyncio
import base64
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import pydantic_core

from . import _compat
from ._context import Context
from ._errors import McpError, PromptError, ToolError
from ._jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    UNSUPPORTED_VERSION,
    Notification,
    Raw,
    Request,
    RequestId,
    Response,
    TooDeep,
    encode,
    encode_result,
    error_reply,
)
from ._mrtr import InputRequired
from ._session import LOG_RANK, RequestScope, Send, Session
from ._tools import CallOutcome
from ._versions import KNOWN_VERSIONS, MODERN_VERSIONS, is_modern, negotiate_legacy

if TYPE_CHECKING:
    from ._server import Server

logger = logging.getLogger("toolkit")

PROTOCOL_VERSION_KEY: Final = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_KEY: Final = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_KEY: Final = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL_KEY: Final = "io.modelcontextprotocol/logLevel"
SUBSCRIPTION_ID_KEY: Final = "io.modelcontextprotocol/subscriptionId"

MODERN_ONLY: Final = frozenset({"server/discover", "subscriptions/listen"})
"""Methods that exist only in the modern era: a request for one is modern even without ``_meta``."""

INPUT_METHODS: Final = frozenset({"tools/call", "prompts/get", "resources/read"})
"""Methods that may answer ``input_required`` (spec: basic/patterns/mrtr, "Supported Requests")."""


@dataclass(slots=True)
class Reply:
    """An encoded JSON-RPC response and the HTTP status the Streamable HTTP transport should use."""

    body: bytes
    status: int = 200
    is_error: bool = False


@dataclass(slots=True)
class Connection:
    """What a transport keeps per stdio process or per legacy HTTP session."""

    session: Session = field(default_factory=Session)
    inflight: dict[RequestId, asyncio.Task[Any]] = field(default_factory=dict)

    def cancel(self, request_id: Any) -> None:
        task = self.inflight.get(request_id)
        if task is not None:
            task.cancel()


@dataclass(slots=True, eq=False)
class _Listener:
    """An open ``subscriptions/listen`` request (modern era)."""

    subscription_id: RequestId
    filter: dict[str, Any]
    send: Send
    closed: asyncio.Event = field(default_factory=asyncio.Event)


def _error(request_id: RequestId | None, exc: McpError) -> Reply:
    return Reply(encode(error_reply(request_id, exc.code, exc.message, exc.data)), exc.http_status, True)


def is_modern_request(request: Request) -> bool:
    """Whether a request uses the modern era's per-request ``_meta`` (or a modern-only method).

    Either required per-request field marks it: a request with client capabilities but no
    protocol version is a malformed modern request (-32602), not a legacy one.
    """
    meta = request.params.get("_meta")
    if isinstance(meta, dict) and (PROTOCOL_VERSION_KEY in meta or CLIENT_CAPABILITIES_KEY in meta):
        return True
    return request.method in MODERN_ONLY


class Engine:
    """Dispatches requests for one ``Server`` in both eras."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self._list_cache: dict[tuple[str, str, int], Raw] = {}
        self._listeners: set[_Listener] = set()
        self._sessions: set[Session] = set()
        self._handlers: dict[str, Callable[[RequestScope], Awaitable[dict[str, Any] | Raw]]] = {
            "tools/list": self._tools_list,
            "tools/call": self._tools_call,
            "resources/list": self._resources_list,
            "resources/templates/list": self._templates_list,
            "resources/read": self._resources_read,
            "prompts/list": self._prompts_list,
            "prompts/get": self._prompts_get,
            "completion/complete": self._complete,
        }
        self._legacy_only: dict[str, Callable[[RequestScope], Awaitable[dict[str, Any] | Raw]]] = {
            "ping": self._ping,
            "logging/setLevel": self._set_level,
            "resources/subscribe": self._subscribe,
            "resources/unsubscribe": self._unsubscribe,
        }
        self._modern_only: dict[str, Callable[[RequestScope], Awaitable[dict[str, Any] | Raw]]] = {
            "server/discover": self._discover,
            "subscriptions/listen": self._listen,
        }

    # --- entry points ---------------------------------------------------------------------------

    async def handle_request(
        self,
        request: Request,
        connection: Connection | None,
        send: Send,
        *,
        request_info: Any = None,
        modern: bool | None = None,
    ) -> Reply:
        """Answer one request.

        ``connection`` is ``None`` for stateless HTTP traffic. ``modern`` forces the era (the
        HTTP transport decides it from headers too); by default it is read off ``_meta``.
        """
        try:
            if modern if modern is not None else is_modern_request(request):
                scope: RequestScope | None = self._modern_scope(request, send)
            else:
                scope = self._legacy_scope(request, connection, send)
            if scope is None:  # initialize
                assert connection is not None
                return self._initialize(request, connection, send)
            scope.request_info = request_info
            handler = self._handler_for(scope)
            result = await handler(scope)
        except McpError as exc:
            return _error(request.id, exc)
        except Exception:
            logger.exception("internal error while handling %s", request.method)
            return _error(request.id, McpError(INTERNAL_ERROR, "Internal error", http_status=500))
        return Reply(encode_result(request.id, result))

    def handle_notification(self, notification: Notification, connection: Connection | None) -> None:
        method = notification.method
        if connection is None:
            return  # stateless traffic: nothing in flight to cancel, no session to mark
        if method == "notifications/cancelled":
            connection.cancel(notification.params.get("requestId"))
        elif method == "notifications/initialized":
            connection.session.initialized = True
        # Anything else (roots/list_changed, progress, unknown) needs no answer and no action.

    def handle_response(self, response: Response, connection: Connection | None) -> None:
        if connection is None or not connection.session.resolve(response):
            logger.debug("ignoring a response to unknown request id %r", response.id)

    # --- era handling ---------------------------------------------------------------------------

    def _modern_scope(self, request: Request, send: Send) -> RequestScope:
        params = request.params
        meta = params.get("_meta")
        if not isinstance(meta, dict):
            raise McpError(
                INVALID_PARAMS,
                'Invalid params: a modern request needs "_meta" with '
                f'"{PROTOCOL_VERSION_KEY}" and "{CLIENT_CAPABILITIES_KEY}"',
                http_status=400,
            )
        version = meta.get(PROTOCOL_VERSION_KEY)
        if not isinstance(version, str):
            raise McpError(INVALID_PARAMS, f'Invalid params: "_meta" lacks "{PROTOCOL_VERSION_KEY}"', http_status=400)
        capabilities = meta.get(CLIENT_CAPABILITIES_KEY)
        if not isinstance(capabilities, dict):
            raise McpError(
                INVALID_PARAMS, f'Invalid params: "_meta" lacks "{CLIENT_CAPABILITIES_KEY}"', http_status=400
            )
        if version not in MODERN_VERSIONS:
            raise unsupported_version(version)
        log_level = meta.get(LOG_LEVEL_KEY)
        if log_level is not None and log_level not in LOG_RANK:
            raise McpError(
                INVALID_PARAMS, f"Invalid params: unknown log level {log_level!r}; use one of {list(LOG_RANK)}"
            )
        client_info = meta.get(CLIENT_INFO_KEY)
        return RequestScope(
            request_id=request.id,
            method=request.method,
            params=params,
            version=version,
            modern=True,
            client_capabilities=capabilities,
            client_info=client_info if isinstance(client_info, dict) else None,
            send=send,
            log_level=log_level,
            progress_token=_progress_token(meta),
        )

    def _legacy_scope(self, request: Request, connection: Connection | None, send: Send) -> RequestScope | None:
        if request.method == "initialize":
            if connection is None:
                raise McpError(INVALID_REQUEST, "Invalid Request: initialize is not available here")
            return None
        session = connection.session if connection is not None else None
        if session is None or not session.ready:
            if request.method == "ping":  # allowed before initialize
                session = session or Session()
            else:
                raise McpError(
                    INVALID_REQUEST,
                    "Invalid Request: the session is not initialized. Send 'initialize' first, or use protocol "
                    f'version {MODERN_VERSIONS[-1]} by putting "{PROTOCOL_VERSION_KEY}" and '
                    f'"{CLIENT_CAPABILITIES_KEY}" in the request\'s "_meta"',
                )
        session.last_active = asyncio.get_running_loop().time()
        meta = request.params.get("_meta")
        return RequestScope(
            request_id=request.id,
            method=request.method,
            params=request.params,
            version=session.version or KNOWN_VERSIONS[0],
            modern=False,
            client_capabilities=session.client_capabilities,
            client_info=session.client_info or None,
            send=send,
            session=session,
            log_level=session.log_level,
            progress_token=_progress_token(meta) if isinstance(meta, dict) else None,
        )

    def _handler_for(self, scope: RequestScope) -> Callable[[RequestScope], Awaitable[dict[str, Any] | Raw]]:
        method = scope.method
        handler = self._handlers.get(method)
        if handler is None:
            handler = (self._modern_only if scope.modern else self._legacy_only).get(method)
        if handler is None or not self._capable(method):
            era = f"protocol version {scope.version}"
            # HTTP 404 for an unknown method is the modern era's rule (streamable-http, "Protocol
            # Version Header"); to a legacy session a 404 means "your session is gone".
            raise McpError(
                METHOD_NOT_FOUND,
                f"Method not found: {method!r} is not available in {era}",
                http_status=404 if scope.modern else 200,
            )
        return handler

    def _capable(self, method: str) -> bool:
        """Methods of a feature the server has nothing for are not found (capability not declared)."""
        kind = method.split("/", 1)[0]
        if kind == "prompts":
            return bool(self.server._prompts)
        if kind == "resources":
            return bool(self.server._resources or self.server._templates)
        return True

    # --- legacy-only methods ----------------------------------------------------------------------

    def _initialize(self, request: Request, connection: Connection, send: Send) -> Reply:
        params = request.params
        requested = params.get("protocolVersion")
        if not isinstance(requested, str):
            return _error(request.id, McpError(INVALID_PARAMS, 'Invalid params: initialize needs "protocolVersion"'))
        session = connection.session
        version = negotiate_legacy(requested)
        session.version = version
        capabilities = params.get("capabilities")
        session.client_capabilities = capabilities if isinstance(capabilities, dict) else {}
        client_info = params.get("clientInfo")
        session.client_info = client_info if isinstance(client_info, dict) else {}
        session.notify = session.notify or send
        self._sessions.add(session)
        result: dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": self.capabilities(version),
            "serverInfo": self.server.server_info(version),
        }
        if self.server.instructions:
            result["instructions"] = self.server.instructions
        return Reply(encode_result(request.id, result))

    async def _ping(self, scope: RequestScope) -> dict[str, Any]:
        return {}

    async def _set_level(self, scope: RequestScope) -> dict[str, Any]:
        level = scope.params.get("level")
        if level not in LOG_RANK:
            raise McpError(INVALID_PARAMS, f"Invalid params: unknown log level {level!r}; use one of {list(LOG_RANK)}")
        assert scope.session is not None
        scope.session.log_level = level
        return {}

    async def _subscribe(self, scope: RequestScope) -> dict[str, Any]:
        assert scope.session is not None
        scope.session.subscriptions.add(_required_str(scope.params, "uri"))
        return {}

    async def _unsubscribe(self, scope: RequestScope) -> dict[str, Any]:
        assert scope.session is not None
        scope.session.subscriptions.discard(_required_str(scope.params, "uri"))
        return {}

    # --- modern-only methods ----------------------------------------------------------------------

    async def _discover(self, scope: RequestScope) -> dict[str, Any]:
        result: dict[str, Any] = {
            "supportedVersions": list(reversed(KNOWN_VERSIONS)),
            "capabilities": self.capabilities(scope.version),
        }
        if self.server.instructions:
            result["instructions"] = self.server.instructions
        _compat.cacheable(result, scope.version, self.server.list_ttl_ms, "public")
        return self._finish(result, scope)

    async def _listen(self, scope: RequestScope) -> dict[str, Any]:
        requested = scope.params.get("notifications")
        if not isinstance(requested, dict):
            raise McpError(INVALID_PARAMS, 'Invalid params: subscriptions/listen needs a "notifications" filter')
        honoured: dict[str, Any] = {}
        for key, available in (
            ("toolsListChanged", True),
            ("promptsListChanged", bool(self.server._prompts)),
            ("resourcesListChanged", bool(self.server._resources or self.server._templates)),
        ):
            if requested.get(key) is True and available:
                honoured[key] = True
        uris = requested.get("resourceSubscriptions")
        if isinstance(uris, list) and (self.server._resources or self.server._templates):
            honoured["resourceSubscriptions"] = [uri for uri in uris if isinstance(uri, str)]
        listener = _Listener(scope.request_id, honoured, scope.send)
        tag = {SUBSCRIPTION_ID_KEY: scope.request_id}
        await scope.send(
            {
                "jsonrpc": "2.0",
                "method": "notifications/subscriptions/acknowledged",
                "params": {"_meta": tag, "notifications": honoured},
            }
        )
        self._listeners.add(listener)
        try:
            await listener.closed.wait()
        finally:
            self._listeners.discard(listener)
        return self._finish({"_meta": dict(tag)}, scope)

    # --- shared methods ---------------------------------------------------------------------------

    def capabilities(self, version: str) -> dict[str, Any]:
        server = self.server
        capabilities: dict[str, Any] = {"tools": {"listChanged": True}}
        if server._resources or server._templates:
            capabilities["resources"] = {"subscribe": True, "listChanged": True}
        if server._prompts:
            capabilities["prompts"] = {"listChanged": True}
        capabilities["logging"] = {}
        if server._prompts or server._templates:
            capabilities["completions"] = {}
        return _compat.fields_for("ServerCapabilities", capabilities, version)

    def _finish(self, result: dict[str, Any], scope: RequestScope) -> dict[str, Any]:
        return _compat.finish(result, scope.version, self.server.server_info(scope.version))

    def _page(
        self, kind: str, shape: str, scope: RequestScope, build: Callable[[list[Any]], list[dict[str, Any]]]
    ) -> Raw:
        """A cached page of a list result; ``build`` turns registry items into wire entries."""
        items = list(self.server._registry(kind).values())
        page_size = self.server.page_size
        offset = _decode_cursor(scope.params.get("cursor"), kind, self.server._generation[kind], len(items))
        key = (kind, shape, offset)
        cached = self._list_cache.get(key)
        if cached is not None:
            return cached
        field_name = {
            "tools": "tools",
            "prompts": "prompts",
            "resources": "resources",
            "templates": "resourceTemplates",
        }[kind]
        result: dict[str, Any] = {field_name: build(items[offset : offset + page_size])}
        if offset + page_size < len(items):
            result["nextCursor"] = _encode_cursor(kind, self.server._generation[kind], offset + page_size)
        _compat.cacheable(result, scope.version, self.server.list_ttl_ms, "public")
        raw = Raw(pydantic_core.to_json(self._finish(result, scope)))
        self._list_cache[key] = raw
        return raw

    def invalidate(self, kind: str) -> None:
        """Drop cached list pages of ``kind`` ("tools", "prompts", "resources", "templates")."""
        self._list_cache = {key: value for key, value in self._list_cache.items() if key[0] != kind}

    async def _tools_list(self, scope: RequestScope) -> Raw:
        version = scope.version
        return self._page(
            "tools",
            version,
            scope,
            lambda tools: [_compat.shape_for(tool, version).advertised for tool in tools],
        )

    async def _tools_call(self, scope: RequestScope) -> dict[str, Any]:
        params = scope.params
        name = _required_str(params, "name")
        tool = self.server._tools.get(name)
        if tool is None:
            raise McpError(INVALID_PARAMS, f"Unknown tool: {name!r}", {"name": name})
        try:
            arguments = _arguments(params)
        except _ArgumentsTooDeep:  # for a tool, bad arguments are an isError result
            return self._finish(_compat.call_result(tool.too_deep(), None, scope.version), scope)
        context = self._prepare(scope, name, arguments)
        try:
            outcome = await tool.call(arguments, context)
        except InputRequired:
            return self._input_required(scope, name, arguments)
        except ToolError as exc:  # raised outside the tool body (a missing legacy capability)
            outcome = CallOutcome.error(str(exc))
        result = _compat.call_result(outcome, _compat.shape_for(tool, scope.version), scope.version)
        return self._finish(result, scope)

    async def _resources_list(self, scope: RequestScope) -> Raw:
        return self._listing_page("resources", "Resource", scope)

    async def _templates_list(self, scope: RequestScope) -> Raw:
        return self._listing_page("templates", "ResourceTemplate", scope)

    def _listing_page(self, kind: str, entry_type: str, scope: RequestScope) -> Raw:
        version = scope.version
        return self._page(
            kind, version, scope, lambda items: [_compat.listing(entry_type, item.listing(), version) for item in items]
        )

    async def _resources_read(self, scope: RequestScope) -> dict[str, Any]:
        uri = _required_str(scope.params, "uri")
        context = self._prepare(scope, uri, {})
        try:
            contents, resource = await self.server._read(uri, context, scope)
        except InputRequired:
            return self._input_required(scope, uri, {})
        result: dict[str, Any] = {"contents": contents}
        ttl = resource.ttl_ms if resource.ttl_ms is not None else self.server.read_ttl_ms
        _compat.cacheable(result, scope.version, ttl, resource.cache_scope or self.server.read_cache_scope)
        return self._finish(result, scope)

    async def _prompts_list(self, scope: RequestScope) -> Raw:
        return self._listing_page("prompts", "Prompt", scope)

    async def _prompts_get(self, scope: RequestScope) -> dict[str, Any]:
        name = _required_str(scope.params, "name")
        prompt = self.server._prompts.get(name)
        if prompt is None:
            raise McpError(INVALID_PARAMS, f"Unknown prompt: {name!r}", {"name": name})
        arguments = _arguments(scope.params)
        context = self._prepare(scope, name, arguments)
        try:
            result = await prompt.render(arguments, context)
        except InputRequired:
            return self._input_required(scope, name, arguments)
        except (PromptError, ToolError) as exc:
            raise McpError(INVALID_PARAMS, str(exc)) from None
        except McpError:
            raise
        except Exception:
            logger.exception("prompt %r raised", name)
            raise McpError(INTERNAL_ERROR, f"Error rendering prompt {name!r}") from None
        return self._finish(result, scope)

    async def _complete(self, scope: RequestScope) -> dict[str, Any]:
        params = scope.params
        ref = params.get("ref")
        argument = params.get("argument")
        if not isinstance(ref, dict) or not isinstance(argument, dict) or not isinstance(argument.get("name"), str):
            raise McpError(INVALID_PARAMS, 'Invalid params: completion/complete needs "ref" and "argument.name"')
        context_args = (params.get("context") or {}).get("arguments") or {}
        value = argument.get("value", "")
        context = Context(scope, self.server)
        try:
            values = await self.server._complete(ref, argument["name"], str(value), context_args, context)
        except McpError:
            raise
        except Exception:
            logger.exception("completion for %r raised", ref)
            raise McpError(INTERNAL_ERROR, "Error computing completions") from None
        from ._completions import completion_result

        return self._finish(completion_result(values), scope)

    # --- multi round-trip input -------------------------------------------------------------------

    def _prepare(self, scope: RequestScope, name: str, arguments: dict[str, Any]) -> Context:
        """The handler's ``Context``; in the modern era, load the answers of earlier rounds."""
        if scope.modern:
            answers: dict[str, Any] = {}
            state = scope.params.get("requestState")
            if state is not None:
                answers.update(
                    self.server.state_signer.verify(state, method=scope.method, name=name, arguments=arguments)
                )
            responses = scope.params.get("inputResponses")
            if isinstance(responses, dict):
                answers.update({key: value for key, value in responses.items() if isinstance(value, dict)})
            scope.answers = answers
        return Context(scope, self.server)

    def _input_required(self, scope: RequestScope, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        if not scope.modern or not scope.pending_inputs:  # pragma: no cover - legacy never raises it
            raise McpError(INTERNAL_ERROR, "Internal error: input requested outside the modern era")
        state = self.server.state_signer.sign(
            method=scope.method, name=name, arguments=arguments, answers=scope.answers
        )
        result = {"inputRequests": dict(scope.pending_inputs), "requestState": state}
        info = self.server.server_info(scope.version)
        return _compat.finish(result, scope.version, info, result_type="input_required")

    # --- change notifications ---------------------------------------------------------------------

    def list_changed(self, kind: str) -> list[Awaitable[None]]:
        """Deliveries telling legacy sessions and modern listeners that a list changed.

        The recipients are the sessions and subscriptions open now, when the change happens;
        the caller awaits (or schedules) the returned deliveries.
        """
        method = f"notifications/{kind}/list_changed"
        flag = f"{kind}ListChanged"
        deliveries: list[Awaitable[None]] = []
        for session in list(self._sessions):
            if session.closed:
                self._sessions.discard(session)
            elif session.ready and session.notify is not None:
                deliveries.append(_quietly(session.notify({"jsonrpc": "2.0", "method": method})))
        for listener in list(self._listeners):
            if listener.filter.get(flag):
                message = {"jsonrpc": "2.0", "method": method, "params": {"_meta": _tag(listener)}}
                deliveries.append(_quietly(listener.send(message)))
        return deliveries

    async def resource_updated(self, uri: str) -> None:
        """Tell the subscribers of ``uri`` that it changed."""
        for session in list(self._sessions):
            if session.ready and session.notify is not None and uri in session.subscriptions:
                message = {"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": uri}}
                await _quietly(session.notify(message))
        for listener in list(self._listeners):
            if uri in listener.filter.get("resourceSubscriptions", ()):
                params = {"_meta": _tag(listener), "uri": uri}
                await _quietly(
                    listener.send({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": params})
                )

    def close_listeners(self) -> None:
        """End every open subscription gracefully (each gets its result response)."""
        for listener in list(self._listeners):
            listener.closed.set()

    def forget(self, session: Session) -> None:
        session.close()
        self._sessions.discard(session)


def _tag(listener: _Listener) -> dict[str, Any]:
    return {SUBSCRIPTION_ID_KEY: listener.subscription_id}


async def drain(tasks: set[asyncio.Task[Any]], grace: float, stopping: Callable[[], None]) -> None:
    """Give in-flight ``tasks`` ``grace`` seconds; then call ``stopping`` and cancel the rest.

    ``stopping`` lets the transport tell a shutdown's cancellations from a client's: those
    requests are owed a "shutting down" error, where a client-cancelled request gets nothing.
    """
    if not tasks:
        return
    _, pending = await asyncio.wait(set(tasks), timeout=grace)
    stopping()
    if not pending:
        return
    logger.warning("%d request(s) still running after the %g s shutdown grace period: cancelled", len(pending), grace)
    for task in pending:
        task.cancel()
    await asyncio.wait(pending, timeout=1.0)


async def _quietly(sending: Awaitable[None]) -> None:
    try:
        await sending
    except Exception:  # a closed stream must not stop the others from hearing about it
        logger.debug("could not deliver a notification", exc_info=True)


def _progress_token(meta: dict[str, Any]) -> str | int | None:
    token = meta.get("progressToken")
    if isinstance(token, bool):
        return None
    return token if isinstance(token, (str, int)) else None


class _ArgumentsTooDeep(McpError):
    """Arguments nested beyond the JSON parser's limit (a prompt's -32602; a tool's isError result)."""

    def __init__(self) -> None:
        problem = "is nested too deeply"
        super().__init__(
            INVALID_PARAMS, f'Invalid params: "arguments" {problem}', {"param": "arguments", "problem": problem}
        )


def _required_str(params: dict[str, Any], name: str) -> str:
    value = params.get(name)
    if not isinstance(value, str):
        problem = "is missing" if value is None else f"must be a string, not {type(value).__name__}"
        raise McpError(INVALID_PARAMS, f'Invalid params: "{name}" {problem}', {"param": name, "problem": problem})
    return value


def _arguments(params: dict[str, Any]) -> dict[str, Any]:
    arguments = params.get("arguments")
    if arguments is None:
        return {}
    if isinstance(arguments, TooDeep):
        raise _ArgumentsTooDeep
    if not isinstance(arguments, dict):
        problem = f"must be an object, not {type(arguments).__name__}"
        raise McpError(
            INVALID_PARAMS, f'Invalid params: "arguments" {problem}', {"param": "arguments", "problem": problem}
        )
    return arguments


def unsupported_version(requested: Any) -> McpError:
    return McpError(
        UNSUPPORTED_VERSION,
        f"Unsupported protocol version {requested!r}; this server speaks {', '.join(MODERN_VERSIONS)} per request "
        f"(and {', '.join(v for v in KNOWN_VERSIONS if not is_modern(v))} after initialize)",
        {"supported": list(MODERN_VERSIONS), "requested": requested if isinstance(requested, str) else str(requested)},
        http_status=400,
    )


def _encode_cursor(kind: str, generation: int, offset: int) -> str:
    return base64.urlsafe_b64encode(f"{kind}:{generation}:{offset}".encode()).decode("ascii")


def _decode_cursor(cursor: Any, kind: str, generation: int, total: int) -> int:
    if cursor is None:
        return 0
    try:
        decoded = base64.urlsafe_b64decode(str(cursor).encode("ascii")).decode()
        cursor_kind, cursor_generation, offset_text = decoded.split(":")
        offset = int(offset_text)
    except (ValueError, UnicodeError):
        raise McpError(INVALID_PARAMS, "Invalid params: the cursor is not one this server issued") from None
    if cursor_kind != kind or int(cursor_generation) != generation or not 0 <= offset <= total:
        raise McpError(
            INVALID_PARAMS, "Invalid params: the cursor is stale (the list changed); list again from the start"
        )
    return offset
