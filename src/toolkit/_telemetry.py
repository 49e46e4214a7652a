"""OpenTelemetry: a span and a duration measurement for every request, once the application sets up an SDK.

Follows OpenTelemetry's semantic conventions for MCP (``docs/gen-ai/mcp.md`` in
open-telemetry/semantic-conventions-genai): a ``SERVER`` span named ``{mcp.method.name} {target}``
(the tool or prompt name, when there is one) with ``mcp.*``, ``jsonrpc.request.id``, ``gen_ai.*``,
``network.transport`` and ``error.type``; the histogram ``mcp.server.operation.duration``.

The parent is the trace context in the request's ``params._meta`` (``traceparent``, ``tracestate``,
``baggage``), as the conventions say; a request without one takes the HTTP request's ``traceparent``
header instead. When both are present the HTTP context becomes a link of the span.

Nothing here imports OpenTelemetry. An application that configures an SDK has imported
``opentelemetry.trace``/``opentelemetry.metrics``; until it has, or while only the API's no-op
providers are installed, ``Telemetry.start`` returns ``None`` after one dictionary lookup, and the
request runs exactly as it would without this module.
"""

from __future__ import annotations

import sys
import time
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from opentelemetry.metrics import Histogram
    from opentelemetry.trace import Span, Tracer

    from ._content import CallOutcome
    from ._jsonrpc import Request
    from ._scope import RequestScope
    from ._tools import Tool

INSTRUMENTATION = "toolkit"
DURATION_METRIC = "mcp.server.operation.duration"
# The buckets the conventions advise for MCP operation durations (seconds).
DURATION_BUCKETS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300)
_NO_SDK_PROVIDERS = ("ProxyTracerProvider", "NoOpTracerProvider", "_ProxyMeterProvider", "NoOpMeterProvider")


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
            active = type(provider).__name__ not in _NO_SDK_PROVIDERS
            self._tracer = provider.get_tracer(INSTRUMENTATION) if active else None
        return self._tracer

    def _current_histogram(self, metrics: Any) -> Histogram | None:
        provider = metrics.get_meter_provider()
        if provider is not self._meter_provider:
            self._meter_provider = provider
            self._histogram = None
            if type(provider).__name__ not in _NO_SDK_PROVIDERS:
                meter = provider.get_meter(INSTRUMENTATION)
                self._histogram = meter.create_histogram(
                    DURATION_METRIC,
                    unit="s",
                    description="Duration of the MCP request as observed on the server",
                    explicit_bucket_boundaries_advisory=list(DURATION_BUCKETS),
                )
        return self._histogram


class RequestTrace:
    """One request's span (current while it is served) and its duration measurement."""

    __slots__ = ("_attributes", "_histogram", "_scope_manager", "_started", "_tracer", "span")

    def __init__(self, tracer: Tracer | None, histogram: Histogram | None, request: Request, request_info: Any) -> None:
        self._tracer = tracer
        self._histogram = histogram
        self.span: Span | None = None
        self._scope_manager: AbstractContextManager[Any] | None = None
        method = request.method
        params = request.params
        attributes: dict[str, Any] = {
            "mcp.method.name": method,
            "network.transport": "pipe" if request_info is None else "tcp",
        }
        if request_info is not None:
            attributes["network.protocol.name"] = "http"
        if request.id is not None:
            attributes["jsonrpc.request.id"] = str(request.id)
        target = None
        name = params.get("name")
        if method == "tools/call" and isinstance(name, str):
            attributes["gen_ai.tool.name"] = target = name
            attributes["gen_ai.operation.name"] = "execute_tool"
        elif method == "prompts/get" and isinstance(name, str):
            attributes["gen_ai.prompt.name"] = target = name
        elif method.startswith("resources/") and isinstance(params.get("uri"), str):
            attributes["mcp.resource.uri"] = params["uri"]
        self._attributes = attributes
        if tracer is not None:
            parent, links = _parents(params, request_info)
            from opentelemetry.trace import SpanKind  # noqa: PLC0415 - already imported by the SDK

            self._scope_manager = tracer.start_as_current_span(
                f"{method} {target}" if target else method,
                context=parent,
                kind=SpanKind.SERVER,
                attributes=attributes,
                links=links,
                record_exception=False,
                set_status_on_exception=False,
            )
        self._started = time.perf_counter()

    def __enter__(self) -> RequestTrace:
        if self._scope_manager is not None:
            self.span = self._scope_manager.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._histogram is not None:
            self._histogram.record(time.perf_counter() - self._started, self._attributes)
        if self._scope_manager is not None:
            self._scope_manager.__exit__(*exc)

    def _set(self, key: str, value: Any) -> None:
        self._attributes[key] = value
        if self.span is not None:
            self.span.set_attribute(key, value)

    def served(self, scope: RequestScope) -> None:
        """The request's era is known: record its protocol version and session."""
        self._set("mcp.protocol.version", scope.version)
        session = scope.session
        if session is not None and session.id is not None:
            self._set("mcp.session.id", session.id)

    def failed(self, code: int, message: str) -> None:
        """The request ends in a JSON-RPC error."""
        self._set("error.type", str(code))
        self._set("rpc.response.status_code", str(code))
        self._error_status(message)

    def tool_error(self, outcome: CallOutcome) -> None:
        """A ``tools/call`` result with ``isError: true``."""
        self._set("error.type", "tool_error")
        self._error_status(_first_text(outcome))

    def _error_status(self, message: str | None) -> None:
        if self.span is not None:
            from opentelemetry.trace import Status, StatusCode  # noqa: PLC0415

            self.span.set_status(Status(StatusCode.ERROR, message))

    async def call_tool(self, tool: Tool, arguments: dict[str, Any] | None, context: Any) -> CallOutcome:
        """``tool.call`` with a child span for each phase: argument validation, the body, serialization."""
        tracer = self._tracer
        if tracer is None:
            return await tool.call(arguments, context)
        name = tool.name
        attributes = {"gen_ai.tool.name": name}
        with tracer.start_as_current_span(f"validate_arguments {name}", attributes=attributes) as span:
            prepared = await tool.prepare(arguments, context)
            if not isinstance(prepared, dict):
                _mark_error(span, prepared)
                return prepared
        with tracer.start_as_current_span(f"run_tool {name}", attributes=attributes) as span:
            value = await tool.run(prepared)
            if tool.failed(value):
                _mark_error(span, value)
                return value  # type: ignore[no-any-return]
        with tracer.start_as_current_span(f"serialize_result {name}", attributes=attributes) as span:
            outcome = tool.finish(value)
            if outcome.is_error:
                _mark_error(span, outcome)
            return outcome


def _parents(params: dict[str, Any], request_info: Any) -> tuple[Any, list[Any]]:
    """The span's parent context (``_meta`` first, then the HTTP header) and links."""
    from opentelemetry import propagate, trace  # noqa: PLC0415

    meta = params.get("_meta")
    headers = getattr(request_info, "headers", None) if request_info is not None else None
    from_meta = propagate.extract(meta) if isinstance(meta, dict) and "traceparent" in meta else None
    from_http = propagate.extract(headers) if headers and "traceparent" in headers else None
    if from_meta is None:
        return from_http, []
    links = []
    if from_http is not None:
        http_context = trace.get_current_span(from_http).get_span_context()
        if http_context.is_valid:
            links.append(trace.Link(http_context))
    return from_meta, links


def _first_text(outcome: CallOutcome) -> str | None:
    for block in outcome.content or ():
        text = getattr(block, "text", None)
        if isinstance(text, str):
            return text
    return None


def _mark_error(span: Span, outcome: CallOutcome) -> None:
    from opentelemetry.trace import Status, StatusCode  # noqa: PLC0415

    span.set_attribute("error.type", "tool_error")
    span.set_status(Status(StatusCode.ERROR, _first_text(outcome)))
