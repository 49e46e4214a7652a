"""``Server``: the facade users write against — decorators that register, ``run`` and ``http_app``.

It builds the pieces and wires them: a ``Registry`` of what was decorated, the ``Settings`` the
constructor took, the ``Engine`` that reads both, and (when asked to run) a transport handed the
engine, its limits and the callables it needs. Nothing below it imports it.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeVar, Unpack, overload

from . import _compat
from ._completions import Completer
from ._components import ToolBase
from ._compose import ComposeMixin, SharedRun
from ._context import Context
from ._depends import DependencyOverrides
from ._engine import Engine
from ._errors import RegistrationError, RunAtImport
from ._extensions.base import Extension
from ._extensions.tasks.extension import TasksExtension
from ._functions import declared_scopes, explained
from ._middleware.base import Middleware, MiddlewareFunction, as_middleware
from ._mrtr import StateSealer
from ._openapi import OpenAPIMixin
from ._prompts import Prompt
from ._registry import Registry
from ._resources import Resource, ResourceTemplate
from ._routes import CustomRoute, CustomRoutes
from ._script import made_by_script, say_if_never_served
from ._server_shaping import ShapingMixin
from ._settings import Setting, Settings
from ._sources.namespace import outer_uri
from ._store.base import Store
from ._store.urls import open_store
from ._tools import Tool, ToolOptions
from ._transports.stdio import run_stdio

if TYPE_CHECKING:
    from ._auth.resource import ResourceServer
    from ._auth.tokens import TokenVerifier
    from ._client.memory import MemoryTransport
    from ._events import EventStore
    from ._transports.http.app import McpApp
    from ._transports.http.docs import PageOptions

logger = logging.getLogger("toolkit")

F = TypeVar("F", bound=Callable[..., Any])


ToolBaseT = TypeVar("ToolBaseT", bound=ToolBase)
Lifespan = Callable[["Server"], contextlib.AbstractAsyncContextManager[Any]]


class Server(ComposeMixin, ShapingMixin, OpenAPIMixin):
    """An MCP server: register tools, resources and prompts with decorators, then run it.

    >>> server = Server("weather", version="1.0.0")
    >>> @server.tool
    ... def get_count() -> int:
    ...     return 42

    Args:
        name: The server's name, sent to clients as ``serverInfo.name``.
        version: The server's version, sent as ``serverInfo.version``.
        instructions: Guidance for the model on how to use this server.
        title: A display name (``serverInfo.title``).
        lifespan: An async context manager factory called with the server when it starts;
            what it yields is ``ctx.lifespan`` in every handler.
        mask_errors: Hide the text of unexpected exceptions from clients (default). A
            ``ToolError`` message is always shown.
        page_size: Items per page of ``tools/list`` and the other lists.
        list_ttl_ms: ``ttlMs`` on list and discover results (2026-07-28).
        read_ttl_ms: default ``ttlMs`` on ``resources/read`` results (2026-07-28).
        read_cache_scope: default ``cacheScope`` on ``resources/read`` results.
        state_secret: key that signs multi round-trip ``requestState``; default
            ``$TOOLKIT_STATE_SECRET`` or a random per-process key. Replicas must share it.
        state_ttl_seconds: how long a ``requestState`` stays valid (the user's time to answer).
        client_request_timeout: seconds to wait for a legacy client's answer to an
            elicitation, sampling or roots request.
        tool_timeout: default time limit, in seconds, for every tool call (``None``: none).
        event_store: keeps legacy Streamable HTTP SSE events so a client can resume a dropped
            stream with ``Last-Event-ID`` (``toolkit.EventStore()`` keeps them in memory; a
            Redis store keeps them on Redis Streams unless given one here).
        store: where legacy sessions and everything else that crosses requests live:
            in this process (default), or ``"redis://HOST:PORT/DB"`` (or a
            ``toolkit.stores.RedisStore``) so that any replica serves any request. Default:
            ``$TOOLKIT_STORE`` when the CLI runs the server.
        max_concurrent_requests: requests one client may have in flight at once (per stdio
            process, per legacy HTTP session; for stateless HTTP, per endpoint); beyond it a
            request is refused at once with an error saying so.
        max_argument_depth: deepest JSON nesting accepted in tool arguments; deeper arguments
            get an ``isError`` result without reaching validation.
        task_ttl_ms: how long a task and its result are kept, from its creation (default one
            hour); a 2025-11-25 client may ask for another TTL, up to ``max_task_ttl_ms``.
        max_task_ttl_ms: the longest TTL a client may ask for (default 24 hours).
        task_poll_interval_ms: the polling interval suggested to clients of tasks.
        max_running_tasks: tasks one caller may have running at once in this process; one
            more is refused with an error saying so.
        auth: a token verifier (``toolkit.auth.JWTVerifier``, ``IntrospectionVerifier``, or
            your own): every HTTP request must then carry a bearer token it accepts. stdio is
            unaffected (the spec: stdio takes its credentials from the environment).
        authorization_servers: the issuer URLs clients get tokens from (required with ``auth``;
            published in the protected resource metadata).
        resource_url: this server's canonical URL (``https://mcp.example.com/mcp``), the
            ``resource`` of its metadata. Default: taken from each request, whose Host is held
            to the allowed hosts. Set it behind a proxy.
        required_scopes: scopes every request needs, server-wide (per tool: ``scopes=``).
        scopes_supported: the metadata's ``scopes_supported``; default every scope the server
            requires somewhere.
        implied_scopes: broader scopes and the narrower ones each implies
            (``{"forecast:admin": ["forecast:read"]}``).
        tracing: report each request to the application's OpenTelemetry SDK, once one is set
            up (a span and a duration per request; docs/observability.md). Without an SDK it
            costs nothing; ``False`` turns it off even with one.
        middleware: middlewares to add now, outermost first (see ``add_middleware``).
    """

    def __init__(
        self,
        name: str,
        version: str = "0.1.0",
        *,
        instructions: str | None = None,
        title: str | None = None,
        website_url: str | None = None,
        icons: list[dict[str, Any]] | None = None,
        lifespan: Lifespan | None = None,
        mask_errors: bool = True,
        page_size: int = 1000,
        list_ttl_ms: int = 60_000,
        read_ttl_ms: int = 0,
        read_cache_scope: Literal["public", "private"] = "private",
        state_secret: str | bytes | None = None,
        state_ttl_seconds: float = 600.0,
        client_request_timeout: float = 60.0,
        tool_timeout: float | None = None,
        event_store: EventStore | None = None,
        store: Store | str | None = None,
        max_concurrent_requests: int = 100,
        max_argument_depth: int = 64,
        task_ttl_ms: int = 3_600_000,
        max_task_ttl_ms: int = 86_400_000,
        task_poll_interval_ms: int = 1000,
        max_running_tasks: int = 100,
        auth: TokenVerifier | None = None,
        authorization_servers: Sequence[str] = (),
        resource_url: str | None = None,
        required_scopes: Iterable[str] = (),
        scopes_supported: Iterable[str] | None = None,
        implied_scopes: Mapping[str, Iterable[str]] | None = None,
        tracing: bool = True,
        middleware: Iterable[Middleware | MiddlewareFunction] = (),
    ) -> None:
        if page_size < 1:
            raise ValueError("page_size must be at least 1")
        if not 1 <= task_ttl_ms <= max_task_ttl_ms:
            raise ValueError(
                f"task_ttl_ms must be at least 1 and at most max_task_ttl_ms ({max_task_ttl_ms}), not {task_ttl_ms}"
            )
        if task_poll_interval_ms < 1:
            raise ValueError(f"task_poll_interval_ms must be at least 1, not {task_poll_interval_ms}")
        self.settings = Settings(
            name=name,
            version=version,
            instructions=instructions,
            title=title,
            website_url=website_url,
            icons=icons,
            mask_errors=mask_errors,
            page_size=page_size,
            list_ttl_ms=list_ttl_ms,
            read_ttl_ms=read_ttl_ms,
            read_cache_scope=read_cache_scope,
            state_sealer=StateSealer(state_secret, ttl_seconds=state_ttl_seconds),
            client_request_timeout=client_request_timeout,
            tool_timeout=tool_timeout,
            max_concurrent_requests=max_concurrent_requests,
            max_argument_depth=max_argument_depth,
            task_ttl_ms=task_ttl_ms,
            max_task_ttl_ms=max_task_ttl_ms,
            task_poll_interval_ms=task_poll_interval_ms,
            max_running_tasks=max_running_tasks,
            tracing=tracing,
        )
        self.served = False  # run, served or entered: a script's server never served says so at exit (_script)
        if made_by_script(1):
            say_if_never_served(self)
        self.lifespan = lifespan
        self.lifespan_state: Any = None
        """What ``lifespan`` yielded, while the server runs (``ctx.lifespan`` in handlers)."""
        self.event_store = event_store
        self.store = store
        self.registry = Registry()
        self.dependency_overrides = DependencyOverrides()
        """Providers replaced, for tests: ``server.dependency_overrides[get_db] = fake`` (this server's only)."""
        self.mounted: list[tuple[Any, Any]] = []
        """What ``mount`` added: (the child server or client, its source), in order."""
        self.parents: list[tuple[Server, str | None]] = []
        """The servers this one is mounted in, with its namespace there."""
        self._runs = SharedRun()
        self.engine = Engine(self.registry, self.settings, owner=self, lifespan_state=lambda: self.lifespan_state)
        self.engine.add_extension(TasksExtension())
        self._middleware: list[Middleware] = []
        self._routes = CustomRoutes()
        for each in middleware:
            self.add_middleware(each)
        self.resource_server: ResourceServer | None = None
        """The OAuth resource server checking HTTP requests, when ``auth`` is set."""
        if auth is not None:
            self.set_auth(
                auth,
                authorization_servers=authorization_servers,
                resource_url=resource_url,
                required_scopes=required_scopes,
                scopes_supported=scopes_supported,
                implied_scopes=implied_scopes,
            )
        elif authorization_servers or resource_url is not None or required_scopes:
            raise ValueError(
                "authorization_servers=, resource_url= and required_scopes= take effect with auth=: "
                "pass a token verifier too (auth=toolkit.auth.JWTVerifier(...))"
            )

    @property
    def store(self) -> Store | None:
        """The store HTTP serving uses (``None``: one in this process's memory)."""
        return self._store

    @store.setter
    def store(self, value: Store | str | None) -> None:
        self._store = open_store(value) if isinstance(value, str) else value

    name: Setting[str] = Setting()
    version: Setting[str] = Setting()
    instructions: Setting[str | None] = Setting()
    title: Setting[str | None] = Setting()
    website_url: Setting[str | None] = Setting()
    icons: Setting[list[dict[str, Any]] | None] = Setting()
    mask_errors: Setting[bool] = Setting()
    page_size: Setting[int] = Setting()
    list_ttl_ms: Setting[int] = Setting()
    read_ttl_ms: Setting[int] = Setting()
    read_cache_scope: Setting[Literal["public", "private"]] = Setting()
    state_sealer: Setting[StateSealer] = Setting()
    client_request_timeout: Setting[float] = Setting()
    tool_timeout: Setting[float | None] = Setting()
    max_concurrent_requests: Setting[int] = Setting()
    max_argument_depth: Setting[int] = Setting()
    task_ttl_ms: Setting[int] = Setting()
    max_task_ttl_ms: Setting[int] = Setting()
    task_poll_interval_ms: Setting[int] = Setting()
    max_running_tasks: Setting[int] = Setting()
    tracing: Setting[bool] = Setting()

    importing_app: ClassVar[bool] = False
    """True while the CLI imports an APP: ``run()`` there would serve before the CLI could (``_loader``)."""

    def __repr__(self) -> str:
        return f"Server({self.name!r}, tools={len(self.registry.tools)})"

    def set_auth(
        self,
        auth: TokenVerifier,
        *,
        authorization_servers: Sequence[str],
        resource_url: str | None = None,
        required_scopes: Iterable[str] = (),
        scopes_supported: Iterable[str] | None = None,
        implied_scopes: Mapping[str, Iterable[str]] | None = None,
    ) -> None:
        """Protect the HTTP endpoint with bearer tokens (the constructor's ``auth=`` and its companions).

        Takes effect for apps made after the call (``http_app``, ``run("http")``).
        """
        from ._auth.resource import ResourceServer  # noqa: PLC0415 - a server without auth never loads it

        self.resource_server = ResourceServer(
            auth,  # an OAuthProxy (toolkit._auth.server) names itself and its resource:
            authorization_servers=authorization_servers or getattr(auth, "authorization_servers", ()),
            resource_url=resource_url or getattr(auth, "resource_url", None),
            required_scopes=declared_scopes(required_scopes, "required_scopes"),
            scopes_supported=scopes_supported,
            implied_scopes=implied_scopes,
            resource_name=self.title or self.name,
            scopes_in_use=self.registry.scopes_in_use,
        )

    # --- tools --------------------------------------------------------------------------------

    @overload
    def tool(self, fn: F, /, **options: Unpack[ToolOptions]) -> F: ...

    @overload
    def tool(self, fn: None = None, /, **options: Unpack[ToolOptions]) -> Callable[[F], F]: ...

    def tool(self, fn: Callable[..., Any] | None = None, /, **options: Unpack[ToolOptions]) -> Any:
        """Register a function as a tool; usable bare (``@server.tool``) or with options.

        Args:
            name: Tool name (default: the function's name).
            title: Display name.
            description: Default: the docstring's first paragraph.
            annotations: Behaviour hints (``{"readOnlyHint": True}``, ...).
            meta: ``_meta`` on the tool definition.
            input_schema: A hand-written JSON Schema for the arguments, used as is; the
                function then receives the JSON values by keyword.
            output_schema: A hand-written JSON Schema for the result; every result is
                validated against it.
            structured_output: ``False`` to send only content blocks; ``True`` to require a
                structured result. Default: structured when the return hint is a data type.
            root_param: Name of the tool's only parameter, a model or a union of models,
                whose JSON is the whole argument object (a root-level ``oneOf``).
            timeout: Seconds before the call is cancelled and an error returned.
            scopes: OAuth scopes a caller's token must grant to see and call the tool
                (HTTP with ``auth=``); others get 403 ``insufficient_scope`` naming them.
            tags: Labels for ``disable``/``enable``, mounts and visibility rules (never sent).
            task: ``"optional"``: the call becomes a task (answered at once with a task
                handle, polled with ``tasks/get``) when the client can take one;
                ``"required"``: always a task, clients that cannot are refused;
                ``"forbidden"`` (default): never. See docs/tasks.md.
            task_start: ``"call"`` (default): a task from the start; ``"begin_task"``: an
                ordinary call (which may ask multi round-trip questions) until the function
                awaits ``ctx.begin_task()``.
            blocking: For a plain ``def`` function only. ``True`` (default): it runs in a
                worker thread, so a blocking call in it holds up no other request.
                ``False``: it never blocks (no I/O, no sleeping, quick), so it is called on
                the event loop, which saves the thread hand-over (25-40 µs per call);
                its ``timeout`` cannot interrupt it there.
            app: The MCP App the tool shows (``toolkit.App``, or a ``ui://`` URI), served and linked;
                ``app.visible_to("app")``: a tool only the app calls (docs/apps.md).
        """
        if isinstance(fn, str):
            raise RegistrationError(
                f"@server.tool({fn!r}): the tool's name is a keyword argument; use @server.tool(name={fn!r})"
            )
        if fn is not None:  # server.tool(fn) or server.tool(fn, name=...): the options count too
            self.add_tool(fn, **options)
            return fn

        def decorator(function: F) -> F:
            self.add_tool(function, **options)
            return function

        return decorator

    @overload
    def add_tool(self, fn: ToolBaseT, /) -> ToolBaseT: ...

    @overload
    def add_tool(self, fn: Callable[..., Any], /, **options: Unpack[ToolOptions]) -> Tool: ...

    def add_tool(self, fn: Any, /, **options: Any) -> ToolBase:
        """Register ``fn`` as a tool (the non-decorator form of ``@server.tool``).

        ``fn`` may also be a ``ToolBase`` built elsewhere (a tool that is not a function): it is
        registered as it is, and takes no options.
        """
        if isinstance(fn, ToolBase):
            if options:
                raise TypeError(f"add_tool({fn!r}): a ToolBase carries its own options; got {sorted(options)}")
            self.registry.add_tool(fn)
            return fn
        options.setdefault("timeout", self.tool_timeout)
        if (app := options.pop("app", None)) is not None:  # MCP Apps: loaded only by servers with an app
            from ._extensions.apps import link  # noqa: PLC0415

            options["meta"] = {
                **(options.get("meta") or {}),
                "ui": link(self.engine.extensions, self.engine.add_extension, app),
            }
        with explained(fn, "tool", Context):
            tool = Tool(
                fn,
                context_type=Context,
                mask_errors=lambda: self.settings.mask_errors,
                max_argument_depth=self.max_argument_depth,
                **options,
            )
            self.registry.add_tool(tool)
            return tool

    def remove_tool(self, name: str) -> None:
        """Unregister a tool; connected clients are told the list changed."""
        self.registry.remove_tool(name)

    @property
    def tools(self) -> Mapping[str, ToolBase]:
        """The registered tools by name, in registration order."""
        return dict(self.registry.tools)

    # --- resources ----------------------------------------------------------------------------

    def resource(
        self,
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        annotations: Mapping[str, Any] | None = None,
        icons: list[dict[str, Any]] | None = None,
        meta: Mapping[str, Any] | None = None,
        ttl_ms: int | None = None,
        cache_scope: Literal["public", "private"] | None = None,
        scopes: Iterable[str] | None = None,
        tags: Iterable[str] | None = None,
        allow_traversal: bool = False,
    ) -> Callable[[F], F]:
        """Register a resource at ``uri``; a URI with ``{variables}`` registers a template.

        The function returns ``str`` (text), ``bytes`` (a blob), ``ResourceContents``, or any
        JSON-serializable value (sent as ``application/json`` text). ``scopes``: OAuth scopes
        a caller's token must grant to see and read it (HTTP with ``auth=``); ``tags``: labels for
        ``disable``/``enable`` and visibility rules (never sent). A template's values
        are percent-decoded once and refused when they could leave a directory (``..``, ``/`` in a
        one-segment variable, an absolute path); ``allow_traversal=True`` turns that off.
        """
        if not isinstance(uri, str):
            raise RegistrationError(
                f'@server.resource takes the resource\'s URI first: @server.resource("data://{{name}}"), not {uri!r}'
            )
        options: dict[str, Any] = {
            "context_type": Context,
            "name": name,
            "title": title,
            "description": description,
            "mime_type": mime_type,
            "annotations": annotations,
            "icons": icons,
            "meta": meta,
            "ttl_ms": ttl_ms,
            "cache_scope": cache_scope,
            "scopes": scopes,
            "tags": tags,
        }

        def decorator(function: F) -> F:
            with explained(function, "resource", Context):
                if "{" in uri or "}" in uri:
                    template = ResourceTemplate(uri, function, allow_traversal=allow_traversal, **options)
                    self.registry.add_template(template)
                elif allow_traversal:
                    raise RegistrationError(f"resource {uri!r}: allow_traversal= is for templates, and it has no {{}}")
                else:
                    self.registry.add_resource(Resource(uri, function, **options))
            return function

        return decorator

    def remove_resource(self, uri: str) -> None:
        """Unregister a resource or template by its URI (template)."""
        self.registry.remove_resource(uri)

    async def notify_resource_updated(self, uri: str) -> None:
        """Tell clients subscribed to ``uri`` that its contents changed (those of servers it is mounted in too)."""
        await self.engine.resource_updated(uri)
        for parent, namespace in self.parents:
            await parent.notify_resource_updated(outer_uri(namespace, uri))

    # --- prompts and completions --------------------------------------------------------------

    @overload
    def prompt(self, fn: F, /) -> F: ...

    @overload
    def prompt(
        self,
        fn: None = None,
        /,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        icons: list[dict[str, Any]] | None = None,
        meta: Mapping[str, Any] | None = None,
        scopes: Iterable[str] | None = None,
        tags: Iterable[str] | None = None,
    ) -> Callable[[F], F]: ...

    def prompt(self, fn: Callable[..., Any] | None = None, /, **options: Any) -> Any:
        """Register a prompt. It returns a str, a ``Message``, content blocks, or a list of those.

        ``scopes``: OAuth scopes a caller's token must grant to see and get it (HTTP with ``auth=``);
        ``tags``: labels for ``disable``/``enable`` and visibility rules (never sent).
        """

        if isinstance(fn, str):
            raise RegistrationError(
                f"@server.prompt({fn!r}): the prompt's name is a keyword argument; use @server.prompt(name={fn!r})"
            )

        def register(function: F) -> F:
            with explained(function, "prompt", Context):
                self.registry.add_prompt(Prompt(function, context_type=Context, **options))
            return function

        return register(fn) if fn is not None else register

    def remove_prompt(self, name: str) -> None:
        """Unregister a prompt; connected clients are told the list changed."""
        self.registry.remove_prompt(name)

    # --- plain HTTP routes ---------------------------------------------------------------------------

    def custom_route(
        self, path: str, methods: Sequence[str] = ("GET",), *, name: str | None = None
    ) -> Callable[[F], F]:
        """Serve a plain HTTP endpoint at ``path`` beside the MCP endpoint: a health check, a webhook.

        The function is a Starlette endpoint: it takes a ``starlette.requests.Request`` and returns a
        ``Response``. Served by ``toolkit run --transport http``, ``toolkit dev`` and every app
        ``http_app()`` makes; not over stdio. Neither ``auth=`` nor the Host/Origin checks apply to
        it: it is public, so check what it needs itself.
        """
        self._routes.check(path, methods)

        def decorator(function: F) -> F:
            self._routes.add(path, function, methods, name)
            return function

        return decorator

    @property
    def custom_routes(self) -> tuple[CustomRoute, ...]:
        """The plain HTTP routes added with ``custom_route``, in order."""
        return tuple(self._routes.routes)

    # --- middleware ---------------------------------------------------------------------------------

    def add_extension(self, extension: Extension) -> None:
        """Serve what ``extension`` adds: capabilities, methods, a ``tools/call`` hook, list entries, sources.

        See ``toolkit.extensions``. The tasks extension is always there; an extension id may be
        added once.
        """
        self.engine.add_extension(extension)

    def add_middleware(self, middleware: Middleware | MiddlewareFunction) -> None:
        """Run every request through ``middleware``, inside the ones added before it.

        ``middleware`` is a ``toolkit.middleware.Middleware`` (override ``on_request``,
        ``on_call_tool``, ``on_list``, ``on_read_resource``, ``on_get_prompt``) or an
        ``async def (request, call_next)`` function, which wraps every request.
        """
        self._middleware.append(as_middleware(middleware))
        self.engine.use(self._middleware)

    def middleware(self, fn: MiddlewareFunction, /) -> MiddlewareFunction:
        """Decorator: ``fn(request, call_next)`` wraps every request (see ``add_middleware``)."""
        self.add_middleware(fn)
        return fn

    @property
    def middlewares(self) -> tuple[Middleware, ...]:
        """The middleware, outermost first."""
        return tuple(self._middleware)

    def completion(self, *, argument: str, prompt: str | None = None, resource: str | None = None) -> Callable[[F], F]:
        """Register a completion function for one prompt argument or template variable.

        The function takes the partial value (and optionally a dict of the other arguments
        already filled in) and returns a list of suggestions.
        """
        if (prompt is None) == (resource is None):
            raise RegistrationError("completion() takes exactly one of prompt= or resource=")
        key = ("ref/prompt", str(prompt), argument) if prompt is not None else ("ref/resource", str(resource), argument)

        def decorator(function: F) -> F:
            self.registry.add_completer(key, Completer(function, context_type=Context))
            return function

        return decorator

    def server_info(self, version: str) -> dict[str, Any]:
        """``serverInfo`` as a client of ``version`` receives it."""
        return self.engine.server_info(version)

    # --- running ------------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def in_memory(self) -> AsyncIterator[MemoryTransport]:
        """A client's connection to this server in this process, for as long as the lifespan runs.

        What ``toolkit.Client(server)`` connects through: no framing, no socket, every message
        through JSON as on a wire. The server's lifespan runs around it.
        """
        from ._client.memory import MemoryTransport  # noqa: PLC0415  (the client wing: only when used)
        from ._session import Connection  # noqa: PLC0415

        async with self.running():
            connection = Connection()
            try:
                yield MemoryTransport(self.engine, connection)
            finally:
                self.engine.forget(connection.session)

    def run(self, transport: Literal["stdio", "http"] = "stdio", **options: Any) -> None:
        """Serve until the client goes away (stdio) or the process is stopped (http).

        ``transport="stdio"`` takes ``max_message_bytes`` and ``shutdown_grace``.
        ``transport="http"`` takes ``host`` (default 127.0.0.1), ``port`` (8000), ``path``
        ("/mcp"), ``log_level``, ``shutdown_grace``, ``workers`` (with ``app_spec``, the CLI's
        APP) and the options of ``http_app``.
        """
        if Server.importing_app:
            raise RunAtImport(self.name)
        self.served = True
        if transport == "stdio":
            run_stdio(
                self.engine, running=self.running, max_concurrent_requests=self.max_concurrent_requests, **options
            )
        elif transport == "http":
            self._run_http(**options)
        else:
            raise ValueError(f"unknown transport {transport!r}; use 'stdio' or 'http'")

    def _run_http(
        self,
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
        # The HTTP stack (starlette, uvicorn) is imported only when HTTP is served.
        from ._transports.http import runner  # noqa: PLC0415

        if workers > 1:
            runner.run_workers(
                app_spec,
                workers=workers,
                host=host,
                port=port,
                log_level=log_level,
                path=path,
                options=options,
                shared_store=self.store is not None and self.store.shared,
            )
            return
        app = self.http_app(path, shutdown_grace=shutdown_grace, **options)
        runner.serve_app(app, host=host, port=port, log_level=log_level, shutdown_grace=shutdown_grace)

    def http_app(self, path: str = "/mcp", **options: Any) -> McpApp:
        """A Starlette app serving this server over Streamable HTTP at ``path``.

        Options: ``json_response`` (never SSE), ``stateless`` (legacy traffic without
        sessions), ``allowed_hosts``/``allowed_origins`` (beyond localhost),
        ``dns_rebinding_protection``, ``max_body_bytes``, ``max_sessions``,
        ``session_idle_timeout``, ``event_store``, ``retry_ms``, ``sse_ping_seconds``,
        ``sse_write_timeout``, ``shutdown_grace``, and ``docs``: the tools page, off by default; ``True`` serves it at
        ``/docs``, a string at that path. Mounted in another app, give that app
        ``lifespan=app.lifespan``.
        """
        from ._transports.http.app import McpEndpoint, create_app  # noqa: PLC0415 (as in _run_http)

        self.served = True  # to be served by whoever takes the app (uvicorn, a host app)

        docs: PageOptions | None = None
        wanted = options.pop("docs", None)
        if wanted is not None and wanted is not False:  # the tools page: not even imported when off
            from ._transports.http.docs import PageOptions, docs_path  # noqa: PLC0415

            docs = PageOptions(docs_path(wanted, path), shape=_compat.era_results, versions=_compat.era_shapes())

        if options.get("event_store") is None:
            options["event_store"] = self.event_store
        options.setdefault("auth", self.resource_server)
        options.setdefault("store", self.store)
        if options["auth"] is None and self.registry.scopes_in_use():
            logger.warning(
                "%s: tools, resources or prompts declare scopes=, but the server has no auth=; "
                "over HTTP everyone may call them",
                self.name,
            )
        endpoint = McpEndpoint(
            self.engine,
            running=self.running,
            tool_headers=self._tool_headers,
            lifespan_required=self.lifespan is not None or bool(self.mounted),
            max_concurrent_requests=self.max_concurrent_requests,
            **options,
        )
        routes = self._routes.served_beside(path, docs.path if docs else None)
        app = create_app(endpoint, path=path, docs=docs, custom=routes)
        app.state.server = self
        return app

    def _tool_headers(self, name: str) -> Mapping[str, tuple[str, ...]] | None:
        tool = self.registry.tools.get(name)
        return tool.header_params if tool is not None else None
