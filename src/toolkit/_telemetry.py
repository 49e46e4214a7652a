"""OpenTelemetry: a span and a duration measurement for every request, once the application sets up an SDK.

Follows OpenTelemetry's semantic conventions for MCP (``docs/gen-ai/mcp.md`` in
open-telemetry/semantic-conventions-genai): a ``SERVER`` span named ``{mcp.method.name} {target}``
(the tool or prompt name, when there is one) with ``mcp.*``, ``jsonrpc.request.id``, ``gen_ai.*``,
``network.*``, ``client.*`` and ``error.type``; the histogram ``mcp.server.operation.duration``
with only the attributes the conventions list for it (no request id, session id or URI: one
time series per request would make the metric useless).

The parent is the trace context in the request's ``params._meta`` (``traceparent``, ``tracestate``,
``baggage``), as the conventions say; the ambient context (an HTTP server span of the
application's own ASGI instrumentation) or, without one, the HTTP request's ``traceparent``
header becomes a link of the span. A request without ``_meta`` context is a child of that
ambient or HTTP context instead.

Nothing here imports OpenTelemetry. An application that configures an SDK has imported
``opentelemetry.trace``/``opentelemetry.metrics``; until it has, or while only the API's no-op
providers are installed, ``Telemetry.start`` returns ``None`` after one dictionary lookup, and the
request runs exactly as it would without this module.
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Any

from ._errors import INTERNAL_ERROR, McpError
from ._methods import METHODS, target
from ._tools import Tool

if TYPE_CHECKING:
    from contextvars import Token

    from opentelemetry.context import Context as TraceContext
    from opentelemetry.metrics import Histogram
    from opentelemetry.trace import Link, Span, Tracer

    from ._components import ToolBase
    from ._content import CallOutcome
    from ._jsonrpc import Request

INSTRUMENTATION = "toolkit"
DURATION_METRIC = "mcp.server.operation.duration"
# The buckets the conventions advise for MCP operation durations (seconds).
DURATION_BUCKETS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300)
# The attributes of ``mcp.server.operation.duration``; the span's others are per request.
METRIC_ATTRIBUTES = frozenset(
    {
        "mcp.method.name",
        "error.type",
        "gen_ai.tool.name",
        "gen_ai.prompt.name",
        "gen_ai.operation.name",
        "rpc.response.status_code",
        "mcp.protocol.version",
        "network.transport",
        "network.protocol.name",
        "network.protocol.version",
    }
)
# The W3C Trace Context and Baggage keys, unprefixed in ``_meta`` (SEP-414).
PROPAGATION_KEYS = ("traceparent", "tracestate", "baggage")


class Telemetry:
    """Finds the application's tracer and meter; ``start`` opens one request's span and measurement."""

    __slots__ = ("_histogram", "_meter_provider", "_tracer", "_tracer_provider")

    def __init__(self) -> None:
        self._tracer_provider: Any = None
        self._tracer: Tracer | None = None
        self._meter_provider: Any = None
        self._histogram: Histogram | None = None

    def start(self, request: Request, request_info: Any) -> RequestTrace | None:
        """This request's record, or ``None`` when no SDK is configured (the usual, free case)."""
        modules = sys.modules
        trace = modules.get("opentelemetry.trace")
        if trace is None:
            return None
        tracer = self._current_tracer(trace)
        metrics = modules.get("opentelemetry.metrics")
        histogram = self._current_histogram(metrics) if metrics is not None else None
        if tracer is None and histogram is None:
            return None
        return RequestTrace(tracer, histogram, request, request_info)

    def _current_tracer(self, trace: Any) -> Tracer | None:
        provider = trace.get_tracer_provider()
        if provider is not self._tracer_provider:
            self._tracer_provider = provider
            # The API's own providers (the proxy before an SDK is set, the no-op ones) make
            # spans that go nowhere: no tracing, and no cost for it.
            inert = isinstance(provider, (trace.ProxyTracerProvider, trace.NoOpTracerProvider))
            self._tracer = None if inert else provider.get_tracer(INSTRUMENTATION)
        return self._tracer

    def _current_histogram(self, metrics: Any) -> Histogram | None:
        provider = metrics.get_meter_provider()
        if provider is not self._meter_provider:
            self._meter_provider = provider
            self._histogram = None
            inert = isinstance(provider, metrics.NoOpMeterProvider) or type(provider).__name__ == "_ProxyMeterProvider"
            if not inert:
                meter = provider.get_meter(INSTRUMENTATION)
                self._histogram = meter.create_histogram(
                    DURATION_METRIC,
                    unit="s",
                    description="MCP request duration as observed on the receiver",
                    explicit_bucket_boundaries_advisory=list(DURATION_BUCKETS),
                )
        return self._histogram


class RequestTrace:
    """One request's span (current while it is served) and its duration measurement."""

    __slots__ = ("_attributes", "_context", "_histogram", "_started", "_token", "_tracer", "span")

    def __init__(self, tracer: Tracer | None, histogram: Histogram | None, request: Request, request_info: Any) -> None:
        self._tracer = tracer
        self._histogram = histogram
        self.span: Span | None = None
        self._context: TraceContext | None = None
        """What is current while the request is served: its span, in the parent's context (baggage included)."""
        self._token: Token[TraceContext] | None = None
        method = request.method
        params = request.params
        attributes: dict[str, Any] = {"mcp.method.name": method}
        if request.id is not None:
            attributes["jsonrpc.request.id"] = str(request.id)
        target = _target(method, params, attributes)
        if request_info is None:
            attributes["network.transport"] = "pipe"  # stdio (and in-process test clients)
        else:
            _http_attributes(request_info, attributes)
        self._attributes = attributes
        if tracer is not None:
            from opentelemetry.trace import SpanKind, set_span_in_context  # noqa: PLC0415 - imported by the SDK

            parent, links = _parent(params, request_info)
            self.span = tracer.start_span(
                f"{method} {target}" if target else method,
                context=parent,
                kind=SpanKind.SERVER,
                attributes=attributes,
                links=links,
            )
            self._context = set_span_in_context(self.span, parent)
        self._started = time.perf_counter()

    def __enter__(self) -> RequestTrace:
        if self._context is not None:
            from opentelemetry.context import attach  # noqa: PLC0415

            self._token = attach(self._context)
        return self

    def __exit__(self, exc_type: Any, exc: BaseException | None, traceback: Any) -> None:
        if exc is not None and "error.type" not in self._attributes:
            # No response at all: cancelled (by the client, a disconnect, the shutdown) or worse.
            self._set("error.type", type(exc).__qualname__)
            self._error_status(str(exc) or None)
        if self._histogram is not None:
            attributes = self._attributes
            self._histogram.record(
                time.perf_counter() - self._started,
                {key: value for key, value in attributes.items() if key in METRIC_ATTRIBUTES},
            )
        if self.span is not None:
            if self._token is not None:
                from opentelemetry.context import detach  # noqa: PLC0415

                detach(self._token)
            self.span.end()

    def _set(self, key: str, value: Any) -> None:
        self._attributes[key] = value
        if self.span is not None:
            self.span.set_attribute(key, value)

    def served(self, version: str, session_id: str | None) -> None:
        """The request's era is known: record its protocol version and session."""
        self._set("mcp.protocol.version", version)
        if session_id is not None:
            self._set("mcp.session.id", session_id)

    def failed(self, code: int, message: str) -> None:
        """The request ends in a JSON-RPC error."""
        self._set("error.type", str(code))
        self._set("rpc.response.status_code", str(code))
        self._error_status(message)
        # Called where the engine catches the error. An internal error comes from a bug (in
        # toolkit, a middleware, or a resource or prompt, whose exception toolkit re-raises as
        # ``McpError(-32603, ...) from None``): its traceback belongs with the span.
        exc = sys.exc_info()[1]
        if isinstance(exc, McpError) and code == INTERNAL_ERROR:
            exc = exc.__context__
        if isinstance(exc, Exception) and not isinstance(exc, McpError) and self.span is not None:
            self.span.record_exception(exc)

    def tool_error(self, outcome: CallOutcome) -> None:
        """A ``tools/call`` result with ``isError: true``."""
        self._set("error.type", "tool_error")
        self._error_status(_first_text(outcome))

    def _error_status(self, message: str | None) -> None:
        if self.span is not None:
            from opentelemetry.trace import Status, StatusCode  # noqa: PLC0415

            self.span.set_status(Status(StatusCode.ERROR, message))

    async def call_tool(self, tool: ToolBase, arguments: dict[str, Any], context: Any) -> CallOutcome:
        """``tool.call`` with a child span for each phase: argument validation, the body, serialization.

        Spans the tool body starts are children of ``run_tool <name>`` (a sync tool's worker
        thread runs in a copy of this context). A tool that is not a function has one phase.
        """
        tracer = self._tracer
        request_span = self.span
        if tracer is None or request_span is None or not request_span.get_span_context().trace_flags.sampled:
            return await tool.call(arguments, context)  # a request sampled out: so are its phases
        name = tool.name
        attributes = {"gen_ai.tool.name": name}
        if not isinstance(tool, Tool):
            with tracer.start_as_current_span(
                f"run_tool {name}", attributes=attributes, set_status_on_exception=False
            ) as span:
                try:
                    outcome = await tool.call(arguments, context)
                except McpError as exc:
                    _mark_error(span, str(exc.code), exc.message)
                    raise
                if outcome.is_error:
                    _mark_error(span, "tool_error", _first_text(outcome))
                return outcome
        with tracer.start_as_current_span(f"validate_arguments {name}", attributes=attributes) as span:
            prepared = await tool.prepare(arguments, context)
            if not isinstance(prepared, dict):
                _mark_error(span, "tool_error", _first_text(prepared))
                return prepared
        # The status is ours to set: an McpError from the tool is a JSON-RPC error, not a crash.
        with tracer.start_as_current_span(
            f"run_tool {name}", attributes=attributes, set_status_on_exception=False
        ) as span:
            try:
                value = await tool.run(prepared)
            except McpError as exc:
                _mark_error(span, str(exc.code), exc.message)
                raise
            if tool.failed(value):
                _mark_error(span, "tool_error", _first_text(value))
                return value  # type: ignore[no-any-return]
        with tracer.start_as_current_span(f"serialize_result {name}", attributes=attributes) as span:
            outcome = tool.finish(value)
            if outcome.is_error:
                _mark_error(span, "tool_error", _first_text(outcome))
            return outcome


def _target(method: str, params: dict[str, Any], attributes: dict[str, Any]) -> str | None:
    """Record what the request names; the span name's target (a tool or prompt name), if any."""
    named = target(method, params)
    kind = METHODS[method].kind if method in METHODS else None
    if named is not None and kind == "tools":
        attributes["gen_ai.tool.name"] = named
        attributes["gen_ai.operation.name"] = "execute_tool"
        return named
    if named is not None and kind == "prompts":
        attributes["gen_ai.prompt.name"] = named
        return named
    if named is not None and kind == "resources":  # read, subscribe, unsubscribe
        attributes["mcp.resource.uri"] = named  # not in the span name: a URI is not low-cardinality
    elif method == "completion/complete":  # completing a prompt's argument is about that prompt
        ref = params.get("ref")
        if isinstance(ref, dict) and ref.get("type") == "ref/prompt" and isinstance(ref.get("name"), str):
            attributes["gen_ai.prompt.name"] = ref["name"]
            return str(ref["name"])
    return None


def _http_attributes(request_info: Any, attributes: dict[str, Any]) -> None:
    """Streamable HTTP: over TCP (or a Unix socket), its version, the client's address (the ASGI scope)."""
    scope = getattr(request_info, "scope", None)
    if not isinstance(scope, dict):
        scope = {}
    server = scope.get("server")
    # ASGI: a server on a Unix socket is (path, None).
    unix = isinstance(server, (list, tuple)) and len(server) == 2 and server[1] is None
    attributes["network.transport"] = "unix" if unix else "tcp"
    attributes["network.protocol.name"] = "http"
    version = scope.get("http_version")
    if isinstance(version, str):
        attributes["network.protocol.version"] = version
    client = scope.get("client")
    if isinstance(client, (list, tuple)) and len(client) == 2 and isinstance(client[0], str):
        attributes["client.address"] = client[0]
        if isinstance(client[1], int):
            attributes["client.port"] = client[1]


def _parent(params: dict[str, Any], request_info: Any) -> tuple[TraceContext, list[Link]]:
    """The span's parent and links (semantic conventions for MCP, "Context propagation").

    The parent is the context in ``_meta``; the transport's context (the ambient span, such as
    an HTTP server span of the application's ASGI instrumentation, or else the request's
    ``traceparent`` header) becomes a link. Without ``_meta`` context, the transport's context
    is the parent.
    """
    from opentelemetry import context, propagate, trace  # noqa: PLC0415 - already imported by the SDK

    parent = context.get_current()
    outer = trace.get_current_span(parent).get_span_context()
    if not outer.is_valid and request_info is not None:
        headers = getattr(request_info, "headers", None)
        if headers and "traceparent" in headers:
            parent = propagate.extract(headers, context=parent)
            outer = trace.get_current_span(parent).get_span_context()
    meta = params.get("_meta")
    if not isinstance(meta, dict):
        return parent, []
    # Only strings: any JSON may come in _meta, and a propagator expects header values.
    carrier = {key: value for key in PROPAGATION_KEYS if isinstance(value := meta.get(key), str)}
    if not carrier:
        return parent, []
    parent = propagate.extract(carrier, context=parent)
    inner = trace.get_current_span(parent).get_span_context()
    if outer.is_valid and inner != outer:
        return parent, [trace.Link(outer)]
    return parent, []


def _first_text(outcome: CallOutcome) -> str | None:
    for block in outcome.content or ():
        text = getattr(block, "text", None)
        if isinstance(text, str):
            return text
    return None


def _mark_error(span: Span, error_type: str, message: str | None) -> None:
    from opentelemetry.trace import Status, StatusCode  # noqa: PLC0415

    span.set_attribute("error.type", error_type)
    span.set_status(Status(StatusCode.ERROR, message))
