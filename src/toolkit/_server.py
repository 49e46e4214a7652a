"""``Server``: the registry of tools, resources and prompts, and the way to run it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal, TypeVar, overload

from . import _compat
from ._completions import Completer, choices
from ._context import Context
from ._engine import Engine
from ._errors import McpError, RegistrationError, ResourceError, ToolError
from ._jsonrpc import INTERNAL_ERROR, INVALID_PARAMS
from ._mrtr import InputRequired, StateSigner
from ._prompts import Prompt
from ._resources import Resource, ResourceTemplate
from ._session import RequestScope
from ._tools import Tool

if TYPE_CHECKING:
    from ._events import EventStore
    from ._http import McpApp

F = TypeVar("F", bound=Callable[..., Any])
Lifespan = Callable[["Server"], contextlib.AbstractAsyncContextManager[Any]]


class Server:
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
            stream with ``Last-Event-ID`` (``toolkit.EventStore()`` keeps them in memory).
        max_concurrent_requests: requests one client may have in flight at once (per stdio
            process, per legacy HTTP session; for stateless HTTP, per endpoint); beyond it a
            request is refused at once with an error saying so.
        max_argument_depth: deepest JSON nesting accepted in tool arguments; deeper arguments
            get an ``isError`` result without reaching validation.
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
        max_concurrent_requests: int = 100,
        max_argument_depth: int = 64,
    ) -> None:
        if page_size < 1:
            raise ValueError("page_size must be at least 1")
        self.name = name
        self.version = version
        self.instructions = instructions
        self.title = title
        self.website_url = website_url
        self.icons = icons
        self._server_info: dict[str, dict[str, Any]] = {}
        self.lifespan = lifespan
        self.lifespan_state: Any = None
        """What ``lifespan`` yielded, while the server runs (``ctx.lifespan`` in handlers)."""
        self.mask_errors = mask_errors
        self.page_size = page_size
        self.list_ttl_ms = list_ttl_ms
        self.read_ttl_ms = read_ttl_ms
        self.read_cache_scope = read_cache_scope
        self.state_signer = StateSigner(state_secret, ttl_seconds=state_ttl_seconds)
        self.client_request_timeout = client_request_timeout
        self.tool_timeout = tool_timeout
        self.event_store = event_store
        self.max_concurrent_requests = max_concurrent_requests
        self.max_argument_depth = max_argument_depth
        self._tools: dict[str, Tool] = {}
        self._resources: dict[str, Resource] = {}
        self._templates: dict[str, ResourceTemplate] = {}
        self._prompts: dict[str, Prompt] = {}
        self._completers: dict[tuple[str, str, str], Completer] = {}
        self._generation = {"tools": 0, "resources": 0, "templates": 0, "prompts": 0}
        self._background: set[asyncio.Task[Any]] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self.engine = Engine(self)

    def __repr__(self) -> str:
        return f"Server({self.name!r}, tools={len(self._tools)})"

    # --- tools --------------------------------------------------------------------------------

    @overload
    def tool(self, fn: F, /) -> F: ...

    @overload
    def tool(
        self,
        fn: None = None,
        /,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        annotations: Mapping[str, Any] | None = None,
        meta: Mapping[str, Any] | None = None,
        icons: list[dict[str, Any]] | None = None,
        input_schema: Mapping[str, Any] | None = None,
        output_schema: Mapping[str, Any] | None = None,
        structured_output: bool | None = None,
        root_param: str | None = None,
        timeout: float | None = None,
    ) -> Callable[[F], F]: ...

    def tool(self, fn: Callable[..., Any] | None = None, /, **options: Any) -> Any:
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
        """
        if fn is not None:
            self.add_tool(fn)
            return fn

        def decorator(function: F) -> F:
            self.add_tool(function, **options)
            return function

        return decorator

    def add_tool(self, fn: Callable[..., Any], **options: Any) -> Tool:
        """Register ``fn`` as a tool (the non-decorator form of ``@server.tool``)."""
        options.setdefault("timeout", self.tool_timeout)
        tool = Tool(
            fn,
            context_type=Context,
            mask_errors=self.mask_errors,
            max_argument_depth=self.max_argument_depth,
            **options,
        )
        if tool.name in self._tools:
            raise RegistrationError(
                f"a tool named {tool.name!r} is already registered; pass name=... to register another"
            )
        self._tools[tool.name] = tool
        self._changed("tools")
        return tool

    def remove_tool(self, name: str) -> None:
        """Unregister a tool; connected clients are told the list changed."""
        if self._tools.pop(name, None) is None:
            raise KeyError(f"no tool named {name!r}")
        self._changed("tools")

    @property
    def tools(self) -> Mapping[str, Tool]:
        """The registered tools by name, in registration order."""
        return dict(self._tools)

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
    ) -> Callable[[F], F]:
        """Register a resource at ``uri``; a URI with ``{variables}`` registers a template.

        The function returns ``str`` (text), ``bytes`` (a blob), ``ResourceContents``, or any
        JSON-serializable value (sent as ``application/json`` text).
        """
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
        }

        def decorator(function: F) -> F:
            if "{" in uri:
                if uri in self._templates:
                    raise RegistrationError(f"a resource template {uri!r} is already registered")
                self._templates[uri] = ResourceTemplate(uri, function, **options)
                self._changed("templates")
            else:
                if uri in self._resources:
                    raise RegistrationError(f"a resource {uri!r} is already registered")
                self._resources[uri] = Resource(uri, function, **options)
                self._changed("resources")
            return function

        return decorator

    def remove_resource(self, uri: str) -> None:
        """Unregister a resource or template by its URI (template)."""
        if self._resources.pop(uri, None) is not None:
            self._changed("resources")
        elif self._templates.pop(uri, None) is not None:
            self._changed("templates")
        else:
            raise KeyError(f"no resource or template {uri!r}")

    async def notify_resource_updated(self, uri: str) -> None:
        """Tell clients subscribed to ``uri`` that its contents changed."""
        await self.engine.resource_updated(uri)

    async def _read(self, uri: str, context: Context, scope: RequestScope) -> tuple[list[dict[str, Any]], Any]:
        resource = self._resources.get(uri)
        variables: dict[str, str] = {}
        target: Resource | ResourceTemplate | None = resource
        if target is None:
            for template in self._templates.values():
                matched = template.match(uri)
                if matched is not None:
                    target, variables = template, matched
                    break
        if target is None:
            code, message = _compat.resource_not_found(scope.version)
            raise McpError(code, f"{message}: {uri}", {"uri": uri})
        try:
            contents = await target.read(uri, variables, context)
        except (InputRequired, McpError):
            raise
        except (ResourceError, ToolError) as exc:
            raise McpError(INTERNAL_ERROR, str(exc), {"uri": uri}) from None
        except ValueError as exc:
            raise McpError(INVALID_PARAMS, f"Invalid params: {exc}", {"uri": uri}) from None
        except Exception:
            import logging

            logging.getLogger("toolkit").exception("resource %r raised", uri)
            raise McpError(INTERNAL_ERROR, f"Error reading resource {uri}", {"uri": uri}) from None
        return contents, target

    async def _read_resource_contents(self, uri: str, scope: RequestScope) -> list[dict[str, Any]]:
        contents, _ = await self._read(uri, Context(scope, self), scope)
        return contents

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
    ) -> Callable[[F], F]: ...

    def prompt(self, fn: Callable[..., Any] | None = None, /, **options: Any) -> Any:
        """Register a prompt. It returns a str, a ``Message``, content blocks, or a list of those."""

        def register(function: F) -> F:
            prompt = Prompt(function, context_type=Context, **options)
            if prompt.name in self._prompts:
                raise RegistrationError(f"a prompt named {prompt.name!r} is already registered")
            self._prompts[prompt.name] = prompt
            self._changed("prompts")
            return function

        return register(fn) if fn is not None else register

    def remove_prompt(self, name: str) -> None:
        if self._prompts.pop(name, None) is None:
            raise KeyError(f"no prompt named {name!r}")
        self._changed("prompts")

    def completion(self, *, argument: str, prompt: str | None = None, resource: str | None = None) -> Callable[[F], F]:
        """Register a completion function for one prompt argument or template variable.

        The function takes the partial value (and optionally a dict of the other arguments
        already filled in) and returns a list of suggestions.
        """
        if (prompt is None) == (resource is None):
            raise RegistrationError("completion() takes exactly one of prompt= or resource=")
        key = ("ref/prompt", str(prompt), argument) if prompt is not None else ("ref/resource", str(resource), argument)

        def decorator(function: F) -> F:
            self._completers[key] = Completer(function, context_type=Context)
            return function

        return decorator

    async def _complete(
        self, ref: dict[str, Any], argument: str, value: str, arguments: dict[str, str], context: Context
    ) -> list[str]:
        kind = ref.get("type")
        if kind == "ref/prompt":
            target = str(ref.get("name"))
            prompt = self._prompts.get(target)
            if prompt is None:
                raise McpError(INVALID_PARAMS, f"Unknown prompt: {target!r}", {"name": target})
            params = {param.name: param.annotation for param in prompt.info.params}
        elif kind == "ref/resource":
            target = str(ref.get("uri"))
            template = self._templates.get(target)
            if template is None and target not in self._resources:
                raise McpError(INVALID_PARAMS, f"Unknown resource template: {target!r}", {"uri": target})
            params = {param.name: param.annotation for param in template.info.params} if template else {}
        else:
            raise McpError(
                INVALID_PARAMS, f'Invalid params: unknown ref type {kind!r}; use "ref/prompt" or "ref/resource"'
            )
        completer = self._completers.get((kind, target, argument))
        if completer is not None:
            return await completer.values(value, arguments, context)
        options = choices(params.get(argument))
        return [option for option in options or [] if option.startswith(value)]

    # --- change tracking ----------------------------------------------------------------------

    def _registry(self, kind: str) -> Mapping[str, Any]:
        registries: dict[str, Mapping[str, Any]] = {
            "tools": self._tools,
            "resources": self._resources,
            "templates": self._templates,
            "prompts": self._prompts,
        }
        return registries[kind]

    def _changed(self, kind: str) -> None:
        self._generation[kind] += 1
        self.engine.invalidate(kind)
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            # Not on an event loop: at import time (nobody to tell), or in a sync tool's worker
            # thread (hand the notification to the loop that serves the clients).
            if self._loop is not None and not self._loop.is_closed():
                self._loop.call_soon_threadsafe(self._notify_changed, kind)
            return
        self._notify_changed(kind)

    def _notify_changed(self, kind: str) -> None:
        deliveries = self.engine.list_changed("resources" if kind == "templates" else kind)
        if deliveries:
            task = asyncio.get_running_loop().create_task(_deliver(deliveries))
            self._background.add(task)
            task.add_done_callback(self._background.discard)

    def server_info(self, version: str) -> dict[str, Any]:
        """``serverInfo`` as ``version`` defines it; built once per version (every modern result carries it)."""
        info = self._server_info.get(version)
        if info is None:
            info = self._server_info[version] = _compat.server_info(
                version,
                name=self.name,
                version_string=self.version,
                title=self.title,
                website_url=self.website_url,
                icons=self.icons,
            )
        return info

    # --- running ------------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[Server]:
        """Enter the lifespan for as long as a transport serves this server."""
        self._loop = asyncio.get_running_loop()
        if self.lifespan is None:
            yield self
            return
        async with self.lifespan(self) as state:
            self.lifespan_state = state
            try:
                yield self
            finally:
                self.lifespan_state = None

    def run(self, transport: Literal["stdio", "http"] = "stdio", **options: Any) -> None:
        """Serve until the client goes away (stdio) or the process is stopped (http).

        ``transport="http"`` takes ``host`` (default 127.0.0.1), ``port`` (8000), ``path``
        ("/mcp") and the options of ``http_app``.
        """
        if transport == "stdio":
            from ._stdio import run_stdio

            run_stdio(self, **options)
        elif transport == "http":
            from ._http import run_http

            run_http(self, **options)
        else:
            raise ValueError(f"unknown transport {transport!r}; use 'stdio' or 'http'")

    def http_app(self, path: str = "/mcp", **options: Any) -> McpApp:
        """A Starlette app serving this server over Streamable HTTP at ``path``.

        Options: ``json_response`` (never SSE), ``stateless`` (legacy traffic without
        sessions), ``allowed_hosts``/``allowed_origins`` (beyond localhost),
        ``dns_rebinding_protection``, ``max_body_bytes``, ``max_sessions``,
        ``session_idle_timeout``, ``event_store``, ``retry_ms``, ``sse_ping_seconds``.
        Mounted in another app, give that app ``lifespan=app.lifespan``.
        """
        from ._http import create_app

        return create_app(self, path=path, **options)


async def _deliver(deliveries: list[Awaitable[None]]) -> None:
    for delivery in deliveries:
        await delivery
