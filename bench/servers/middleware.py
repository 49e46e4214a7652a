"""The ``middleware`` scenario's variants: what ``BENCH_MIDDLEWARE`` adds to the toolkit bench server.

``toolkit_server.py`` imports this module only for a variant other than ``none``, so the plain
server imports neither ``toolkit.middleware`` nor OpenTelemetry. Each variant imports only what it
uses:

- ``passthrough``: one ``toolkit.middleware.Middleware`` subclass whose ``on_request`` and
  ``on_call_tool`` each just ``return await call_next(request)``: the cost of the machinery.
- ``logging``: ``toolkit.middleware.RequestLogging()``, its logger (``toolkit.requests``) at INFO
  with a ``logging.NullHandler`` as its only handler and ``propagate`` off: one log record built
  and handled per request, written nowhere.
- ``otel``: the OpenTelemetry SDK, configured as an application would, and no middleware: a global
  ``TracerProvider`` with ``SimpleSpanProcessor(InMemorySpanExporter())`` and a global
  ``MeterProvider`` with an ``InMemoryMetricReader``. toolkit then traces every request (a SERVER
  span, child spans for the tool call's phases, a ``mcp.server.operation.duration`` record).
  The exporter is cleared every ``KEEP_SPANS`` spans, as a real exporter lets go of the spans it
  has shipped: kept forever, the spans (4 per call, tens of thousands per batch) make every full
  garbage collection slower and slower, and the figure would grow with the batch's length and
  with the calls the process served before.
"""

import logging
import sys
from typing import Any

VARIANTS = ("none", "passthrough", "logging", "otel")
REQUEST_LOGGER = "toolkit.requests"  # RequestLogging's default logger
KEEP_SPANS = 1000  # the otel variant's exporter holds at most this many finished spans

# The otel variant's in-memory exporter and reader (for tests; the benchmark never reads them).
exporter: Any = None
reader: Any = None


def install(server: Any, variant: str) -> None:
    """Set ``variant`` up on ``server`` (and, for ``otel``, in the process)."""
    if variant == "passthrough":
        from toolkit.middleware import Middleware

        class Passthrough(Middleware):
            async def on_request(self, request: Any, call_next: Any) -> Any:
                return await call_next(request)

            async def on_call_tool(self, request: Any, call_next: Any) -> Any:
                return await call_next(request)

        server.add_middleware(Passthrough())
    elif variant == "logging":
        from toolkit.middleware import RequestLogging

        logger = logging.getLogger(REQUEST_LOGGER)
        logger.handlers[:] = [logging.NullHandler()]
        logger.propagate = False
        logger.setLevel(logging.INFO)
        server.add_middleware(RequestLogging(logger))
    elif variant == "otel":
        _configure_opentelemetry()
    elif variant != "none":
        raise SystemExit(f"BENCH_MIDDLEWARE={variant!r}: expected one of {', '.join(VARIANTS)}")
    print(f"bench middleware: {variant}", file=sys.stderr, flush=True)


def _configure_opentelemetry() -> None:
    global exporter, reader
    from opentelemetry import metrics, trace
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    class Bounded(InMemorySpanExporter):
        """``InMemorySpanExporter``, cleared each time it has taken ``KEEP_SPANS`` spans."""

        kept = 0

        def export(self, spans: Any) -> Any:
            self.kept += len(spans)
            if self.kept > KEEP_SPANS:
                self.clear()
                self.kept = len(spans)
            return super().export(spans)

    exporter = Bounded()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(tracer_provider)
    reader = InMemoryMetricReader()
    metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
