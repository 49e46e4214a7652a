"""Middleware: code that runs around the requests a server answers, in both eras and on every transport.

A middleware is an object with any of five hooks, each ``async (request, call_next) -> result``:

- ``on_request``: every request (``initialize`` included); the result is the JSON-RPC ``result``
  object exactly as this request's protocol version receives it;
- ``on_call_tool``: ``tools/call``; the result is the tool's natural ``ToolResult``, before any
  protocol version shapes it;
- ``on_list``: ``tools/list``, ``resources/list``, ``resources/templates/list``, ``prompts/list``;
- ``on_read_resource``: ``resources/read``;
- ``on_get_prompt``: ``prompts/get``.

Every ``on_request`` runs first, outermost, in the order the middlewares were added; inside them
the method's own hooks, in the same order; inside those the handler. A hook that does not call
``call_next`` short-circuits (return a result, or raise ``McpError``/``ToolError``).

Middleware runs *before* argument validation: a refused call costs no validation, and arguments a
middleware rewrites are still checked against the tool's input schema.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any, Final, Generic, TypeVar

import pydantic_core

from .._content import NO_STRUCTURED, CallOutcome, ToolResult
from .._errors import OutputInvalid, ToolError
from .._inbound import InboundRequest
from .._jsonrpc import Raw
from .._methods import METHODS, target

if TYPE_CHECKING:
    from .._auth.tokens import AccessToken
    from .._components import ToolBase

logger = logging.getLogger("toolkit")

T = TypeVar("T")
CallNext = Callable[["McpRequest"], Awaitable[T]]
"""What a hook calls to pass the request on: the next hook, or the handler itself."""

HOOKS = ("on_request", "on_call_tool", "on_list", "on_read_resource", "on_get_prompt")
LIST_METHODS = frozenset({"tools/list", "resources/list", "resources/templates/list", "prompts/list"})


VIEW: Final = "middleware_view"
"""``InboundRequest.extras`` key: the ``McpRequest`` middleware saw, so ``on_call_tool`` sees the same one."""


class McpRequest:
    """One request, as middleware sees it.

    ``state`` is a dict for the middlewares of this one request to share (it starts empty).
    ``arguments`` may be replaced: the tool or prompt gets the new ones, validated as usual.
    """

    __slots__ = ("_inbound", "state")

    def __init__(self, inbound: InboundRequest) -> None:
        self._inbound = inbound
        self.state: dict[str, Any] = {}

    @property
    def method(self) -> str:
        """The JSON-RPC method (``"tools/call"``, ``"tools/list"``, ``"initialize"`` …)."""
        return self._inbound.method

    @property
    def params(self) -> dict[str, Any]:
        """The request's ``params`` as the client sent them (``{}`` when it sent none)."""
        return self._inbound.params

    @property
    def request_id(self) -> str | int:
        return self._inbound.request_id

    @property
    def protocol_version(self) -> str:
        """The protocol version this request is served in (``"2025-06-18"``, ``"2026-07-28"`` …)."""
        return self._inbound.version

    @property
    def modern(self) -> bool:
        """True for a stateless 2026-07-28 request; False for one in a legacy ``initialize`` session."""
        return self._inbound.modern

    @property
    def session_id(self) -> str | None:
        """The legacy HTTP session's id; ``None`` on stdio and in the stateless modern era."""
        session = self._inbound.session
        return session.id if session is not None else None

    @property
    def access_token(self) -> AccessToken | None:
        """The caller's verified access token (HTTP with ``auth=``); ``None`` otherwise."""
        return self._inbound.access_token

    @property
    def caller(self) -> str | None:
        """Who is calling: the access token's subject (or client id); ``None`` without authorization."""
        return self._inbound.caller

    @property
    def http(self) -> Any:
        """Over HTTP: the request's ``headers`` (lower-case), ``client`` (host, port) and ASGI ``scope``.

        ``None`` on stdio and in-process.
        """
        return self._inbound.request_info

    @property
    def transport(self) -> str:
        """``"http"`` or ``"stdio"`` (in-process test clients count as stdio)."""
        return "stdio" if self._inbound.request_info is None else "http"

    @property
    def name(self) -> str | None:
        """The tool (``tools/call``) or prompt (``prompts/get``) the request names."""
        return self._target("name")

    @property
    def uri(self) -> str | None:
        """The resource ``resources/read``, ``resources/subscribe`` or ``resources/unsubscribe`` names."""
        return self._target("uri")

    def _target(self, field: str) -> str | None:
        method = METHODS.get(self._inbound.method)
        return target(method.name, self._inbound.params) if method is not None and method.target == field else None

    @property
    def arguments(self) -> dict[str, Any]:
        """The arguments of a ``tools/call`` or ``prompts/get`` as sent (``{}`` when none)."""
        arguments = self._inbound.params.get("arguments")
        return arguments if isinstance(arguments, dict) else {}

    @arguments.setter
    def arguments(self, value: dict[str, Any]) -> None:
        if not isinstance(value, dict):
            raise TypeError(f"request.arguments must be a dict, not {type(value).__name__}")
        self._inbound.params = {**self._inbound.params, "arguments": value}

    def __repr__(self) -> str:
        target = self.name or self.uri
        return f"McpRequest({self.method!r}{f', {target!r}' if target else ''}, version={self.protocol_version!r})"


class Middleware:
    """Subclass and override the hooks you need; each defaults to passing the request on.

    ```python
    class Audit(Middleware):
        async def on_call_tool(self, request, call_next):
            result = await call_next(request)
            audit.info("%s called %s", request.caller, request.name)
            return result
    ```
    """

    async def on_request(self, request: McpRequest, call_next: CallNext[dict[str, Any]]) -> dict[str, Any]:
        return await call_next(request)

    async def on_call_tool(self, request: McpRequest, call_next: CallNext[ToolResult]) -> ToolResult:
        return await call_next(request)

    async def on_list(self, request: McpRequest, call_next: CallNext[dict[str, Any]]) -> dict[str, Any]:
        return await call_next(request)

    async def on_read_resource(self, request: McpRequest, call_next: CallNext[dict[str, Any]]) -> dict[str, Any]:
        return await call_next(request)

    async def on_get_prompt(self, request: McpRequest, call_next: CallNext[dict[str, Any]]) -> dict[str, Any]:
        return await call_next(request)


Hook = Callable[[McpRequest, CallNext[Any]], Awaitable[Any]]
MiddlewareFunction = Callable[[McpRequest, CallNext[dict[str, Any]]], Awaitable[dict[str, Any]]]
"""``@server.middleware``: an ``on_request`` hook on its own."""


class _FunctionMiddleware(Middleware):
    """``@server.middleware`` on a function: it is that middleware's ``on_request``."""

    def __init__(self, function: MiddlewareFunction) -> None:
        self.function = function
        self.on_request = function  # type: ignore[assignment, method-assign]

    def __repr__(self) -> str:
        return f"middleware {getattr(self.function, '__qualname__', self.function)!r}"


def as_middleware(value: Any) -> Middleware:
    """``value`` as a ``Middleware``, or a ``TypeError`` that says what to pass instead."""
    if isinstance(value, type):
        raise TypeError(
            f"add_middleware() takes an instance, not the class {value.__name__}: "
            f"write add_middleware({value.__name__}(...))"
        )
    if isinstance(value, Middleware):
        middleware = value
    elif callable(value):
        if not inspect.iscoroutinefunction(value):
            raise TypeError(
                f"middleware {getattr(value, '__qualname__', value)!r} must be an async def function "
                "taking (request, call_next), or a toolkit.middleware.Middleware instance"
            )
        middleware = _FunctionMiddleware(value)
    else:
        raise TypeError(
            f"add_middleware() takes a toolkit.middleware.Middleware instance or an async function "
            f"(request, call_next), not {type(value).__name__}"
        )
    for hook in HOOKS:
        function = getattr(middleware, hook)
        if not inspect.iscoroutinefunction(function):
            raise TypeError(f"{type(middleware).__name__}.{hook} must be an async def method")
    return middleware


class Chain(Generic[T]):
    """The hooks of one kind, outermost first, and how to run a request through them."""

    __slots__ = ("hooks",)

    def __init__(self, hooks: tuple[Hook, ...]) -> None:
        self.hooks = hooks

    async def run(self, request: McpRequest, handler: CallNext[T]) -> T:
        call_next = handler
        for hook in reversed(self.hooks):
            call_next = _link(hook, call_next)
        return await call_next(request)


def _link(hook: Hook, call_next: CallNext[Any]) -> CallNext[Any]:
    async def call(request: McpRequest) -> Any:
        return await hook(request, call_next)

    return call


class Pipeline:
    """The middlewares a server runs, compiled into one chain per hook (a hook nobody overrides costs nothing)."""

    __slots__ = ("by_method", "call_tool", "middlewares", "request")

    def __init__(self, middlewares: Iterable[Middleware]) -> None:
        self.middlewares = tuple(middlewares)
        self.request: Chain[dict[str, Any]] | None = self._chain("on_request")
        self.call_tool: Chain[ToolResult] | None = self._chain("on_call_tool")
        listing = self._chain("on_list")
        self.by_method: dict[str, Chain[dict[str, Any]]] = {method: listing for method in LIST_METHODS if listing}
        if read := self._chain("on_read_resource"):
            self.by_method["resources/read"] = read
        if get := self._chain("on_get_prompt"):
            self.by_method["prompts/get"] = get

    def _chain(self, hook: str) -> Chain[Any] | None:
        default = getattr(Middleware, hook)
        hooks = tuple(
            getattr(middleware, hook)
            for middleware in self.middlewares
            if getattr(type(middleware), hook, default) is not default or hook in vars(middleware)
        )
        return Chain(hooks) if hooks else None


# --- running a request through the pipeline ---------------------------------------------------------

Dispatch = Callable[[InboundRequest], Awaitable[dict[str, Any] | Raw]]


async def serve(pipeline: Pipeline, inbound: InboundRequest, dispatch: Dispatch) -> dict[str, Any]:
    """The request's result through every ``on_request``, then its method's hooks, then ``dispatch``."""
    view = inbound.extras[VIEW] = McpRequest(inbound)
    by_method = pipeline.by_method.get(inbound.method)

    async def handler(request: McpRequest) -> dict[str, Any]:
        return _as_dict(await dispatch(request._inbound))

    async def method_hooks(request: McpRequest) -> dict[str, Any]:
        assert by_method is not None
        return _checked(await by_method.run(request, handler), dict, "a dict (the JSON-RPC result)")

    inner = handler if by_method is None else method_hooks
    chain = pipeline.request
    if chain is None:
        return await inner(view)
    return _checked(await chain.run(view, inner), dict, "a dict (the JSON-RPC result)")


async def call_tool(
    chain: Chain[ToolResult],
    inbound: InboundRequest,
    tool: ToolBase,
    run: Callable[[dict[str, Any]], Awaitable[CallOutcome]],
) -> CallOutcome:
    """A tool call through every ``on_call_tool``: they see and return the natural ``ToolResult``."""
    view = inbound.extras.get(VIEW) or McpRequest(inbound)
    produced: list[tuple[ToolResult, CallOutcome]] = []

    async def handler(request: McpRequest) -> ToolResult:
        outcome = await run(request.arguments)
        result = tool_result(outcome)
        produced.append((result, outcome))
        return result

    try:
        result = _checked(await chain.run(view, handler), ToolResult, "a toolkit.ToolResult")
    except ToolError as exc:  # a middleware refusing the call: an isError result, like a tool's own
        return CallOutcome.error(str(exc))
    for made, outcome in produced:
        if result is made and _as_made(made, outcome):  # passed on untouched: serialized and checked already
            return outcome
    try:
        return tool.outcome(result)
    except OutputInvalid as exc:
        logger.error("a middleware's on_call_tool result for tool %r violates its output schema: %s", tool.name, exc)
        return CallOutcome.error(f"Tool {tool.name!r} produced a result that does not match its output schema")


def tool_result(outcome: CallOutcome) -> ToolResult:
    """What ``on_call_tool`` sees of a tool's outcome. Its content list is the outcome's own, so
    that ``_as_made`` can tell a result passed on untouched from one whose fields were replaced."""
    structured = outcome.structured
    if structured is NO_STRUCTURED:
        result = ToolResult(is_error=outcome.is_error, meta=outcome.meta)
    else:
        result = ToolResult(structured_content=structured, is_error=outcome.is_error, meta=outcome.meta)
    result.content = outcome.content
    return result


def _as_made(result: ToolResult, outcome: CallOutcome) -> bool:
    """Whether every field of ``result`` is still the very object ``tool_result`` put there."""
    structured = result.structured_content if result.has_structured_content else NO_STRUCTURED
    return (
        result.content is outcome.content
        and structured is outcome.structured
        and result.is_error is outcome.is_error
        and result.meta is outcome.meta
    )


def _as_dict(result: dict[str, Any] | Raw) -> dict[str, Any]:
    """A cached, pre-encoded result (a ``tools/list`` page) decoded for middleware to read."""
    if isinstance(result, Raw):
        decoded: dict[str, Any] = pydantic_core.from_json(result.data)
        return decoded
    return result


def _checked(result: Any, wanted: type[T], what: str) -> T:
    """A hook's return value, or a ``TypeError`` (an internal error for this request) that says what to return."""
    if not isinstance(result, wanted):
        raise TypeError(f"a middleware returned {type(result).__name__}, not {what}; return what call_next returned")
    return result
