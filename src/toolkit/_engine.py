"""The protocol engine: one parsed message (plus its era) in, one reply out.

Transport-free. Transports parse frames, run each request in its own task, and hand the
engine a ``Connection`` (the legacy session and the in-flight requests of one stdio process
or one HTTP session) and a ``send`` for messages that belong on the request's stream.

The engine reads what the server offers from a ``Registry`` and its options from
``Settings``; it never sees the ``Server`` facade. Every era rule it applies comes from
``_compat`` (shapes, envelopes, era-specific errors) or ``_versions`` (which era a request is).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final

from . import _compat
from ._calls import Calls, required_str
from ._components import ResourceBase
from ._errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    McpError,
)
from ._extensions.base import Extension
from ._inbound import Caller, InboundRequest, initialize_inbound, legacy_inbound, modern_inbound
from ._jsonrpc import (
    Notification,
    Raw,
    Reply,
    Request,
    Response,
    encode,
    encode_result,
    error_reply,
)
from ._methods import METHODS, Era, named_field
from ._middleware.base import Middleware, Pipeline, serve
from ._notifications import Announcer, Listener, Subscribers
from ._pages import Lists, Visibility
from ._registry import KINDS, Kind, Registry
from ._session import Connection, Session
from ._settings import Settings
from ._store.base import Store
from ._telemetry import RequestTrace, Telemetry
from ._types import (
    LOG_RANK,
    RequestId,
    Send,
)
from ._versions import (
    KNOWN_VERSIONS,
    is_modern_request,
)

if TYPE_CHECKING:
    from ._auth.tokens import AccessToken

logger = logging.getLogger("toolkit")

Handler = Callable[[InboundRequest], Awaitable[dict[str, Any] | Raw]]


_USES: Final = frozenset({"tools/call", "resources/read", "prompts/get", "completion/complete"})
"""The requests that use a tool, resource or prompt: a visibility function is asked before each."""


def _unknown(method: str, inbound: InboundRequest) -> McpError:
    """The error ``_calls`` gives for a target that does not exist (a hidden one must look the same)."""
    params = inbound.params
    if method == "resources/read":
        return _compat.resource_not_found(params["uri"], inbound.version)
    if method == "completion/complete":
        ref = params["ref"]
        if ref.get("type") != "ref/prompt":
            return McpError(INVALID_PARAMS, f"Unknown resource template: {ref['uri']!r}", {"uri": ref["uri"]})
        params = ref
    noun = "tool" if method == "tools/call" else "prompt"
    return McpError(INVALID_PARAMS, f"Unknown {noun}: {params['name']!r}", {"name": params["name"]})


def _error(request_id: RequestId | None, exc: McpError) -> Reply:
    reply = encode(error_reply(request_id, exc.code, exc.message, exc.data))
    return Reply(reply, exc.http_status, True, exc.http_headers or None)


class Engine:
    """Dispatches requests in both eras for what ``registry`` holds.

    ``owner`` is what handlers get as ``ctx.server`` and ``lifespan_state`` what they get as
    ``ctx.lifespan``; the engine only passes them on.
    """

    def __init__(
        self,
        registry: Registry,
        settings: Settings,
        *,
        owner: Any = None,
        lifespan_state: Callable[[], Any] = lambda: None,
    ) -> None:
        self.registry = registry
        self.settings = settings
        self.subscribers = Subscribers()
        self._shapes = _compat.ToolShapes()
        self.lists = Lists(registry, settings, self._shapes, self.envelop)
        self.visibility: Visibility | None = None
        """``fn(component, caller)``: what each caller sees and may use (``set_visibility``); ``None``: no check."""
        self._server_info: dict[str, dict[str, Any]] = {}
        self.announcer = Announcer(self.subscribers)
        self.extensions: list[Extension] = []
        self.pipeline: Pipeline | None = None
        """The middleware every request runs through; ``None``: none (the fast path)."""
        self.calls = Calls(registry, settings, self._shapes, self.envelop, owner=owner, lifespan_state=lifespan_state)
        self._telemetry = Telemetry()
        registry.on_change(self._changed)
        self._named: dict[str, str] = {}
        """Extension methods' ``Mcp-Name`` fields, beside the method table's."""
        self._methods: dict[str, tuple[Handler, bool, bool]] = {}
        """Method name → (handler, served to legacy requests, served to modern requests)."""
        for name, handler in (
            ("initialize", self._initialize),
            ("ping", self._ping),
            ("logging/setLevel", self._set_level),
            ("resources/subscribe", self._subscribe),
            ("resources/unsubscribe", self._unsubscribe),
            ("server/discover", self._discover),
            ("subscriptions/listen", self._listen),
            ("tools/list", self.lists.tools),
            ("tools/call", self.calls.tools_call),
            ("resources/list", self.lists.resources),
            ("resources/templates/list", self.lists.templates),
            ("resources/read", self.calls.resources_read),
            ("prompts/list", self.lists.prompts),
            ("prompts/get", self.calls.prompts_get),
            ("completion/complete", self.calls.complete),
        ):
            self.add_method(name, handler)

    def add_method(self, name: str, handler: Handler, eras: frozenset[Era] | None = None) -> None:
        """Serve ``name`` with ``handler`` in ``eras`` (default: the eras the method table gives it)."""
        if eras is None:
            known = METHODS.get(name)
            if known is None:
                raise ValueError(f"{name!r} is not in the method table: give its eras")
            eras = known.eras
        self._methods[name] = (handler, "legacy" in eras, "modern" in eras)

    def add_extension(self, extension: Extension) -> None:
        """Serve what ``extension`` adds (``_extensions.base``); it gets this engine as its host."""
        if any(known.id == extension.id for known in self.extensions if extension.id):
            raise ValueError(f"the extension {extension.id!r} is already added")
        extension.bind(self)
        self.extensions.append(extension)
        for method, handler in extension.methods():
            self.add_method(method.name, handler, method.eras)
            if method.target is not None and "modern" in method.eras:
                self._named[method.name] = method.target
        kind = type(extension)
        if kind.around_call is not Extension.around_call:
            self.calls.call_hooks.append(extension)
        if kind.tools_list_entry is not Extension.tools_list_entry:
            self._shapes.entry_hooks.append(extension.tools_list_entry)
            self._shapes.clear()
        for source in extension.sources():
            self.registry.add_source(source)

    def named_field(self, method: str) -> str | None:
        """The ``params`` field a modern request's ``Mcp-Name`` mirrors, extensions' methods included."""
        return self._named.get(method) if method in self._named else named_field(method)

    # --- entry points ---------------------------------------------------------------------------

    async def handle_request(
        self,
        request: Request,
        connection: Connection | None,
        send: Send,
        *,
        request_info: Any = None,
        modern: bool | None = None,
        access_token: AccessToken | None = None,
    ) -> Reply:
        """Answer one request.

        ``connection`` is ``None`` for stateless HTTP traffic. ``modern`` forces the era (the
        HTTP transport decides it from headers too); by default it is read off ``_meta``.
        ``access_token`` is the caller's verified token (HTTP with ``auth=``): the request
        sees only what its scopes grant. Without one, nothing is hidden (stdio is trusted).
        """
        trace = self._telemetry.start(request, request_info) if self.settings.tracing else None
        if trace is None:
            return await self._answer(request, connection, send, request_info, modern, access_token, None)
        with trace:
            return await self._answer(request, connection, send, request_info, modern, access_token, trace)

    async def _answer(
        self,
        request: Request,
        connection: Connection | None,
        send: Send,
        request_info: Any,
        modern: bool | None,
        access_token: AccessToken | None,
        trace: RequestTrace | None,
    ) -> Reply:
        try:
            if modern if modern is not None else is_modern_request(request.method, request.params):
                inbound: InboundRequest | None = modern_inbound(request, send)
            else:
                inbound = legacy_inbound(request, connection, send)
            if inbound is None:  # initialize
                assert connection is not None
                inbound = initialize_inbound(request, connection, send)
            inbound.request_info = request_info
            inbound.access_token = access_token
            if trace is not None:
                inbound.trace = trace
                session = inbound.session
                trace.served(inbound.version, session.id if session is not None else None)
            pipeline = self.pipeline
            if pipeline is None:
                if access_token is not None:
                    self._authorize(inbound.method, inbound.params, access_token)
                if self.visibility is not None:
                    self._check_visible(inbound, self.visibility)
                result = await self._handler_for(inbound)(inbound)
            else:
                result = served = await serve(pipeline, inbound, self._dispatch)
                if inbound.modern and "resultType" not in served:  # a middleware's own result
                    result = self.envelop(served, inbound)
        except McpError as exc:
            if trace is not None:
                trace.failed(exc.code, exc.message)
            return _error(request.id, exc)
        except Exception:
            logger.exception("internal error while handling %s", request.method)
            if trace is not None:
                trace.failed(INTERNAL_ERROR, "Internal error")
            return _error(request.id, McpError(INTERNAL_ERROR, "Internal error", http_status=500))
        return Reply(encode_result(request.id, result))

    async def _dispatch(self, inbound: InboundRequest) -> dict[str, Any] | Raw:
        if inbound.access_token is not None:
            self._authorize(inbound.method, inbound.params, inbound.access_token)
        if self.visibility is not None:
            self._check_visible(inbound, self.visibility)
        return await self._handler_for(inbound)(inbound)

    def use(self, middlewares: list[Middleware]) -> None:
        """Serve every request through ``middlewares`` (outermost first); none: the plain path."""
        self.pipeline = self.calls.pipeline = Pipeline(middlewares) if middlewares else None

    def handle_notification(self, notification: Notification, connection: Connection | None) -> None:
        method = notification.method
        if connection is None:
            return  # stateless traffic: nothing in flight to cancel, no session to mark
        if method == "notifications/cancelled":
            connection.cancel(notification.params.get("requestId"))
        elif method == "notifications/initialized":
            connection.session.initialized = True
        # Anything else (roots/list_changed, progress, unknown) needs no answer and no action.

    def handle_response(self, response: Response, connection: Connection | None) -> bool:
        """Hand a client's answer to the request of ours waiting for it; False if none waits here."""
        if connection is None or not connection.session.resolve(response):
            logger.debug("no request waits here for the response to id %r", response.id)
            return False
        return True

    def required_scopes(self, method: str, params: dict[str, Any]) -> frozenset[str]:
        """The scopes the tool, resource or prompt a request targets requires (none for other requests)."""
        return self.registry.required_scopes(method, params)

    def _authorize(self, method: str, params: dict[str, Any], access_token: AccessToken) -> None:
        """Refuse a request for something the token's scopes do not grant (HTTP checks first, with a challenge)."""
        needed = self.required_scopes(method, params)
        if needed and not needed <= access_token.scopes:
            scopes = " ".join(sorted(needed))
            raise McpError(
                INVALID_REQUEST,
                f"Forbidden: this request needs the scope(s) {scopes}",
                {"requiredScopes": sorted(needed)},
                http_status=403,
            )

    def set_visibility(self, visibility: Visibility | None) -> None:
        """Ask ``visibility(component, caller)`` before every list entry and every use; ``None``: stop asking."""
        self.visibility = self.lists.visibility = visibility
        self.registry.touch(*(kind for kind in KINDS if self.registry.items(kind)))

    def _check_visible(self, inbound: InboundRequest, visibility: Visibility) -> None:
        """Answer a call, read, get or completion of something hidden from this caller as if it did not exist."""
        method = inbound.method
        if method not in _USES:
            return
        target = self.registry.target(method, inbound.params)
        if target is not None and not visibility(target, Caller(inbound)):
            raise _unknown(method, inbound)

    def close_listeners(self) -> None:
        """End every open subscription gracefully (each gets its result response)."""
        self.subscribers.close_listeners()

    def forget(self, session: Session) -> None:
        """The session ended (or this replica let it go): fail what waits on it, stop telling it about
        changes, and let the sources drop what they hold for it (a proxy's upstream session)."""
        self.subscribers.forget(session)
        if session.id is not None:
            self.registry.session_ended(session.id)

    def remember(self, session: Session) -> None:
        """A session opened elsewhere is now served here too: tell it about changes."""
        self.subscribers.add_session(session)

    # --- replicas ---------------------------------------------------------------------------------

    async def attach_store(self, store: Store) -> None:
        """Serve with a started store: changes go to every replica, and replicas share one state key and tasks."""
        if not store.shared:
            return
        self.announcer.bus = store
        for extension in self.extensions:
            await extension.attach_store(store)
        sealer = self.settings.state_sealer
        if sealer.generated:  # no secret configured: agree on one with the other replicas
            secret = await store.shared_secret()
            if secret is not None:
                sealer.adopt(secret)

    def detach_store(self) -> None:
        self.announcer.bus = None
        for extension in self.extensions:
            extension.detach_store()

    async def stop_tasks(self) -> None:
        """The server stops: the extensions end what runs here (tasks: each ``failed``, saying so)."""
        for extension in self.extensions:
            await extension.shutdown()

    def handle_broadcast(self, message: dict[str, Any]) -> None:
        """A change announced by some replica (this one included): tell the listeners connected here."""
        if not any(extension.on_bus(message) for extension in self.extensions):
            self.announcer.on_broadcast(message)

    # --- era handling ---------------------------------------------------------------------------

    def _handler_for(self, inbound: InboundRequest) -> Handler:
        method = inbound.method
        entry = self._methods.get(method)
        if entry is None or not (entry[2] if inbound.modern else entry[1]) or not self._capable(method):
            raise _compat.method_not_found(method, inbound.version)
        return entry[0]

    def _capable(self, method: str) -> bool:
        """Methods of a feature the server has nothing for are not found (capability not declared)."""
        known = METHODS.get(method)
        kind = known.kind if known is not None else None
        if kind == "prompts":
            return self.registry.has_prompts
        if kind == "resources":
            return self.registry.has_resources
        return True

    def capabilities(self, version: str) -> dict[str, Any]:
        registry = self.registry
        capabilities: dict[str, Any] = {"tools": {"listChanged": True}}
        if registry.has_resources:
            capabilities["resources"] = {"subscribe": True, "listChanged": True}
        if registry.has_prompts:
            capabilities["prompts"] = {"listChanged": True}
        capabilities["logging"] = {}
        if registry.prompts or registry.templates:
            capabilities["completions"] = {}
        for extension in self.extensions:
            extension.capabilities(capabilities, version)
        return _compat.fields_for("ServerCapabilities", capabilities, version)

    def server_info(self, version: str) -> dict[str, Any]:
        """``serverInfo`` as ``version`` defines it; built once per version (every modern result carries it)."""
        info = self._server_info.get(version)
        if info is None:
            settings = self.settings
            info = self._server_info[version] = _compat.server_info(
                version,
                name=settings.name,
                version_string=settings.version,
                title=settings.title,
                website_url=settings.website_url,
                icons=settings.icons,
            )
        return info

    def envelop(
        self, result: dict[str, Any], inbound: InboundRequest, *, result_type: str = "complete"
    ) -> dict[str, Any]:
        return _compat.envelop(result, inbound.version, self.server_info(inbound.version), result_type=result_type)

    # --- legacy-only methods ----------------------------------------------------------------------

    async def _initialize(self, inbound: InboundRequest) -> dict[str, Any]:
        session = inbound.session
        assert session is not None
        version = session.version = inbound.version
        session.client_capabilities = inbound.client_capabilities
        session.client_info = inbound.client_info or {}
        session.notify = session.notify or inbound.send
        self.subscribers.add_session(session)
        result: dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": self.capabilities(version),
            "serverInfo": self.server_info(version),
        }
        if self.settings.instructions:
            result["instructions"] = self.settings.instructions
        return result

    async def _ping(self, inbound: InboundRequest) -> dict[str, Any]:
        return {}

    async def _set_level(self, inbound: InboundRequest) -> dict[str, Any]:
        level = inbound.params.get("level")
        if level not in LOG_RANK:
            raise McpError(INVALID_PARAMS, f"Invalid params: unknown log level {level!r}; use one of {list(LOG_RANK)}")
        assert inbound.session is not None
        inbound.session.log_level = level
        await inbound.session.changed("log_level", level)
        return {}

    async def _subscribe(self, inbound: InboundRequest) -> dict[str, Any]:
        assert inbound.session is not None
        uri = required_str(inbound.params, "uri")
        if uri not in inbound.session.subscriptions:
            await self._watch([uri], watching=True)
        inbound.session.subscriptions.add(uri)
        await inbound.session.changed("subscribe", uri)
        return {}

    async def _unsubscribe(self, inbound: InboundRequest) -> dict[str, Any]:
        assert inbound.session is not None
        uri = required_str(inbound.params, "uri")
        if uri in inbound.session.subscriptions:
            inbound.session.subscriptions.discard(uri)
            await self._watch([uri], watching=False)
        await inbound.session.changed("unsubscribe", uri)
        return {}

    async def _watch(self, uris: list[str], *, watching: bool) -> None:
        """Tell the resources behind ``uris`` a subscription began (or ended): a proxied one listens upstream."""
        for uri in uris:
            target = self.registry.target("resources/read", {"uri": uri})
            if not isinstance(target, ResourceBase):
                continue
            try:
                await (target.watch(uri) if watching else target.unwatch(uri))
            except Exception:
                logger.exception("resource %r could not %s its changes", uri, "watch" if watching else "stop watching")

    # --- modern-only methods ----------------------------------------------------------------------

    async def _discover(self, inbound: InboundRequest) -> dict[str, Any]:
        result: dict[str, Any] = {
            "supportedVersions": list(reversed(KNOWN_VERSIONS)),
            "capabilities": self.capabilities(inbound.version),
        }
        if self.settings.instructions:
            result["instructions"] = self.settings.instructions
        _compat.cacheable(result, inbound.version, self.settings.list_ttl_ms, "public")
        return self.envelop(result, inbound)

    async def _listen(self, inbound: InboundRequest) -> dict[str, Any]:
        requested = inbound.params.get("notifications")
        if not isinstance(requested, dict):
            raise McpError(INVALID_PARAMS, 'Invalid params: subscriptions/listen needs a "notifications" filter')
        honoured: dict[str, Any] = {}
        for key, available in (
            ("toolsListChanged", True),
            ("promptsListChanged", self.registry.has_prompts),
            ("resourcesListChanged", self.registry.has_resources),
        ):
            if requested.get(key) is True and available:
                honoured[key] = True
        uris = requested.get("resourceSubscriptions")
        if isinstance(uris, list) and self.registry.has_resources:
            honoured["resourceSubscriptions"] = [
                uri for uri in uris if isinstance(uri, str) and self._may_read(uri, inbound)
            ]
        listener = Listener(inbound.request_id, honoured, inbound.send)
        watched = honoured.get("resourceSubscriptions") or []
        await self._watch(watched, watching=True)  # first: what the acknowledgement says is then in force
        try:
            await inbound.send(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/subscriptions/acknowledged",
                    "params": {"_meta": listener.tag, "notifications": honoured},
                }
            )
            await self.subscribers.listen(listener)
        finally:
            await self._watch(watched, watching=False)
        return self.envelop({"_meta": listener.tag}, inbound)

    def _may_read(self, uri: str, inbound: InboundRequest) -> bool:
        token = inbound.access_token
        if token is not None and not self.required_scopes("resources/read", {"uri": uri}) <= token.scopes:
            return False
        if self.visibility is None:
            return True
        target = self.registry.target("resources/read", {"uri": uri})
        return target is None or self.visibility(target, Caller(inbound))

    # --- change notifications ---------------------------------------------------------------------

    def bind_loop(self, loop: asyncio.AbstractEventLoop) -> None:
        """The loop serving clients: changes made from worker threads are announced there."""
        self.announcer.loop = loop

    def _changed(self, kind: Kind) -> None:
        self.lists.pages.invalidate(kind)
        if kind == "tools":
            self._shapes.clear()
        self.announcer.changed("resources" if kind == "templates" else kind)

    async def resource_updated(self, uri: str) -> None:
        """Tell the subscribers of ``uri`` that it changed (on every replica, with a shared store)."""
        await self.announcer.resource_updated(uri)
