"""A server that sets up the OpenTelemetry SDK itself, as an application would, for tracing tests.

``toolkit run tests/support/traced_app.py`` (stdio, or ``--transport http``) serves ``server``.
Every span is written as it ends, one JSON object a line (the SDK's own ``span.to_json``
format), to the file ``$TOOLKIT_TEST_SPANS`` names: the test reads what the server process
exported, parents and links included.
"""

from __future__ import annotations

import os

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor

from toolkit import Server, ToolError

SPANS_FILE = "TOOLKIT_TEST_SPANS"


def _one_line(span: ReadableSpan) -> str:
    line: str = span.to_json(indent=None)
    return line + "\n"


provider = TracerProvider()
spans = open(os.environ[SPANS_FILE], "a", encoding="utf-8")  # noqa: SIM115 - open for the life of the process
provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=spans, formatter=_one_line)))
trace.set_tracer_provider(provider)

server = Server("traced", version="1.0.0")
app_tracer = trace.get_tracer("traced-app")


@server.tool
def greet(name: str) -> str:
    """Greets someone, in a span of the application's own."""
    with app_tracer.start_as_current_span("compose greeting"):
        return f"Hello, {name}!"


@server.tool
def refuse() -> str:
    """Always fails with a tool error."""
    raise ToolError("refused")
