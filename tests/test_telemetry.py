"""OpenTelemetry tracing (``toolkit._telemetry``), as the semantic conventions for MCP describe it.

In this process the SDK's real in-memory exporter and reader record what toolkit reports: one
``TracerProvider`` and ``MeterProvider`` are installed for this module and removed after it,
so the other test modules run without an SDK, as a server without one does. Subprocesses
(``toolkit run tests/support/traced_app.py``, over stdio and Streamable HTTP) set up the SDK
themselves and write their spans to a file, which the tests read back.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from opentelemetry import baggage, metrics, trace
from opentelemetry.metrics import _internal as metrics_globals
from opentelemetry.sdk.metrics import Histogram, MeterProvider
from opentelemetry.sdk.metrics.export import AggregationTemporality, HistogramDataPoint, InMemoryMetricReader, Metric
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode
from opentelemetry.util._once import Once
from tests.http_support import Legacy, McpHttp, Modern, connect
from tests.http_support import _Uvicorn as QuietUvicorn
from tests.support.apps import EXAMPLES, load_module
from tests.support.processes import PYTHON, REPO, TOOLKIT, http_server
from tests.support.stdio import StdioClient

from toolkit import McpError, Server, ToolError
from toolkit._telemetry import DURATION_BUCKETS, DURATION_METRIC
from toolkit.middleware import CallNext, McpRequest, Middleware
from toolkit.testing import Client

LEGACY = "2025-11-25"
MODERN = "2026-07-28"
TRACED_APP = Path(__file__).parent / "support" / "traced_app.py"
SPANS_FILE = "TOOLKIT_TEST_SPANS"
PHASES = ("validate_arguments", "run_tool", "serialize_result")

CLIENT_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
CLIENT_SPAN = "00f067aa0ba902b7"
CLIENT_TRACEPARENT = f"00-{CLIENT_TRACE}-{CLIENT_SPAN}-01"
HTTP_TRACE = "0af7651916cd43dd8448eb211c80319c"
HTTP_SPAN = "b7ad6b7169203331"
HTTP_TRACEPARENT = f"00-{HTTP_TRACE}-{HTTP_SPAN}-01"


# --- one SDK for this module ----------------------------------------------------------------------


def _forget_global_providers() -> None:
    """Back to a process that never set a provider.

    The API lets a process set its global providers once; this is what opentelemetry-python's
    own tests do between cases (``opentelemetry.test.globals_test.reset_trace_globals`` and
    ``reset_metrics_globals``), so that the modules after this one see no SDK.
    """
    trace._TRACER_PROVIDER_SET_ONCE = Once()
    trace._TRACER_PROVIDER = None
    trace._PROXY_TRACER_PROVIDER = trace.ProxyTracerProvider()
    metrics_globals._METER_PROVIDER_SET_ONCE = Once()
    metrics_globals._METER_PROVIDER = None
    metrics_globals._PROXY_METER_PROVIDER = metrics_globals._ProxyMeterProvider()


@dataclass
class Recorded:
    """What this process's SDK recorded."""

    exporter: InMemorySpanExporter
    reader: InMemoryMetricReader

    def spans(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def server_spans(self) -> list[ReadableSpan]:
        """The request spans, in the order the requests ended."""
        return [span for span in self.spans() if span.kind is SpanKind.SERVER]

    def children(self, parent: ReadableSpan) -> list[ReadableSpan]:
        assert parent.context is not None
        return [
            span for span in self.spans() if span.parent is not None and span.parent.span_id == parent.context.span_id
        ]

    def durations(self) -> Metric | None:
        """The ``mcp.server.operation.duration`` histogram since the last look (delta temporality)."""
        data = self.reader.get_metrics_data()
        found = [
            metric
            for resource_metrics in (data.resource_metrics if data is not None else [])
            for scope_metrics in resource_metrics.scope_metrics
            for metric in scope_metrics.metrics
            if metric.name == DURATION_METRIC
        ]
        assert len(found) <= 1, found
        return found[0] if found else None

    def duration_counts(self) -> dict[frozenset[tuple[str, Any]], int]:
        """How many requests each series of the histogram counted since the last look."""
        return {frozenset((point.attributes or {}).items()): point.count for point in points_of(self.durations())}


def points_of(metric: Metric | None) -> list[HistogramDataPoint]:
    points = list(metric.data.data_points) if metric is not None else []
    assert all(isinstance(point, HistogramDataPoint) for point in points)
    return points  # type: ignore[return-value]


@pytest.fixture(scope="module")
def sdk() -> Iterator[Recorded]:
    _forget_global_providers()
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider(shutdown_on_exit=False)
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader(preferred_temporality={Histogram: AggregationTemporality.DELTA})
    meter_provider = MeterProvider(metric_readers=[reader], shutdown_on_exit=False)
    trace.set_tracer_provider(tracer_provider)
    metrics.set_meter_provider(meter_provider)
    try:
        yield Recorded(exporter, reader)
    finally:
        tracer_provider.shutdown()
        meter_provider.shutdown()
        _forget_global_providers()


@pytest.fixture
def otel(sdk: Recorded) -> Recorded:
    """The module's SDK, with nothing recorded yet."""
    sdk.exporter.clear()
    sdk.reader.get_metrics_data()  # delta temporality: what earlier tests measured is gone
    return sdk


@pytest.fixture
def conformance() -> Server:
    server = load_module(EXAMPLES / "conformance_server.py").server
    assert isinstance(server, Server)
    return server


# --- a conformance-like run: every method, both eras ------------------------------------------------


@dataclass
class Call:
    """One request of the run, and the span it must make."""

    method: str
    params: dict[str, Any] | None = None
    attributes: dict[str, Any] = field(default_factory=dict)
    """Beyond those every request has."""
    error: int | str | None = None
    """A JSON-RPC error code, ``"tool_error"`` (an ``isError`` result), or None."""
    phases: int = 0
    """How many child spans (validate, run, serialize) a ``tools/call`` has."""

    @property
    def span_name(self) -> str:
        target = self.attributes.get("gen_ai.tool.name") or self.attributes.get("gen_ai.prompt.name")
        return f"{self.method} {target}" if target else self.method


def tool(
    name: str, arguments: dict[str, Any] | None = None, *, error: int | str | None = None, phases: int = 3
) -> Call:
    params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
    attributes = {"gen_ai.tool.name": name, "gen_ai.operation.name": "execute_tool"}
    return Call("tools/call", params, attributes, error, phases)


def prompt_call(method: str, name: str, params: dict[str, Any]) -> Call:
    return Call(method, params, {"gen_ai.prompt.name": name})


def resource_call(method: str, uri: str, *, error: int | None = None) -> Call:
    return Call(method, {"uri": uri}, {"mcp.resource.uri": uri}, error)


PROMPT = "test_prompt_with_arguments"
COMMON_CALLS = [
    Call("tools/list"),
    tool("test_simple_text"),
    tool("greet", {"name": "Ada"}),
    tool("test_image_content"),
    tool("sep_2106_array_output_tool"),
    tool("json_schema_2020_12_tool", {"name": "Ada", "email": "ada@example.com"}),
    tool("test_error_handling", error="tool_error", phases=2),  # the tool raises ToolError
    tool("greet", {}, error="tool_error", phases=1),  # invalid arguments
    tool("no_such_tool", error=-32602, phases=0),
    Call("resources/list"),
    Call("resources/templates/list"),
    resource_call("resources/read", "test://static-text"),
    resource_call("resources/read", "test://template/7/data"),
    Call("prompts/list"),
    prompt_call("prompts/get", PROMPT, {"name": PROMPT, "arguments": {"arg1": "a", "arg2": "b"}}),
    prompt_call("prompts/get", "test_simple_prompt", {"name": "test_simple_prompt"}),
    prompt_call(
        "completion/complete",
        PROMPT,
        {"ref": {"type": "ref/prompt", "name": PROMPT}, "argument": {"name": "arg1", "value": "te"}},
    ),
    Call("no/such/method", error=-32601),
]
LEGACY_CALLS = [
    Call("ping"),
    Call("logging/setLevel", {"level": "info"}),
    *COMMON_CALLS,
    resource_call("resources/read", "test://no-such-resource", error=-32002),
    resource_call("resources/subscribe", "test://watched-resource"),
    resource_call("resources/unsubscribe", "test://watched-resource"),
]
MODERN_CALLS = [
    Call("server/discover"),
    *COMMON_CALLS,
    resource_call("resources/read", "test://no-such-resource", error=-32602),  # -32002 is gone in 2026-07-28
    # An input_required result: the tool's run ends without error, waiting for an answer.
    tool("test_input_required_result_elicitation", phases=2),
    Call("ping", error=-32601),  # a legacy-only method
]


def answer(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "decline"}


@pytest.mark.parametrize(
    ("version", "calls"), [(LEGACY, LEGACY_CALLS), (MODERN, MODERN_CALLS)], ids=["legacy", "modern"]
)
async def test_every_request_has_one_server_span(
    otel: Recorded, conformance: Server, version: str, calls: list[Call]
) -> None:
    responses = []
    async with Client(conformance, protocol_version=version, elicitation=answer) as client:
        for call in calls:
            responses.append(await client.request(call.method, call.params))

    expected = ([Call("initialize")] if version == LEGACY else []) + calls
    spans = otel.server_spans()
    assert [span.name for span in spans] == [call.span_name for call in expected]
    if version == LEGACY:
        responses.insert(0, {"id": 1, "result": client.initialize_result})
    for span, call, response in zip(spans, expected, responses, strict=True):
        where = f"{version} {call.span_name}"
        error = call.error
        attributes = {
            "mcp.method.name": call.method,
            "jsonrpc.request.id": str(response["id"]),
            "network.transport": "pipe",
            "mcp.protocol.version": version,
            **call.attributes,
        }
        if isinstance(error, int):
            assert response["error"]["code"] == error, where
            attributes["error.type"] = attributes["rpc.response.status_code"] = str(error)
            message = response["error"]["message"]
            assert (span.status.status_code, span.status.description) == (StatusCode.ERROR, message), where
        elif error == "tool_error":
            assert response["result"]["isError"] is True, where
            attributes["error.type"] = "tool_error"
            first_text = response["result"]["content"][0]["text"]
            assert (span.status.status_code, span.status.description) == (StatusCode.ERROR, first_text), where
        else:
            assert "result" in response and not response["result"].get("isError"), where
            assert span.status.status_code is StatusCode.UNSET, where
        assert dict(span.attributes or {}) == attributes, where
        assert span.parent is None, where

        children = otel.children(span)
        tool_name = (call.params or {}).get("name")
        assert [child.name for child in children] == [f"{phase} {tool_name}" for phase in PHASES[: call.phases]], where
        for child in children:
            failed = error == "tool_error" and child is children[-1]
            assert child.kind is SpanKind.INTERNAL
            assert child.status.status_code is (StatusCode.ERROR if failed else StatusCode.UNSET), where
            phase_attributes = {"gen_ai.tool.name": tool_name, **({"error.type": "tool_error"} if failed else {})}
            assert dict(child.attributes or {}) == phase_attributes, where


def duration_key(version: str, method: str, **attributes: str) -> frozenset[tuple[str, Any]]:
    """A data point's attributes; keyword names stand for the dotted ones (``error_type``: ``error.type``)."""
    dotted = {DOTTED.get(name, name): value for name, value in attributes.items()}
    return frozenset(
        {"mcp.method.name": method, "network.transport": "pipe", "mcp.protocol.version": version, **dotted}.items()
    )


DOTTED = {
    "tool": "gen_ai.tool.name",
    "prompt": "gen_ai.prompt.name",
    "operation": "gen_ai.operation.name",
    "error_type": "error.type",
    "status_code": "rpc.response.status_code",
}


async def test_the_duration_histogram_counts_requests_by_method_and_error(otel: Recorded, conformance: Server) -> None:
    async with Client(conformance, protocol_version=LEGACY) as client:
        for _ in range(3):
            await client.call_tool("test_simple_text")
        await client.call_tool("test_error_handling")
        await client.request("tools/call", {"name": "no_such_tool"})
        await client.request("no/such/method")
        await client.read_resource("test://static-text")
        await client.read_resource("test://template/1/data")
        await client.get_prompt("test_simple_prompt")
    metric = otel.durations()
    assert metric is not None and metric.unit == "s"
    points = points_of(metric)
    assert all(tuple(point.explicit_bounds) == DURATION_BUCKETS for point in points)
    assert all(0 <= point.min <= point.max < 5 for point in points)
    counts = {frozenset((point.attributes or {}).items()): point.count for point in points}
    call = {"operation": "execute_tool"}
    assert counts == {
        duration_key(LEGACY, "initialize"): 1,
        duration_key(LEGACY, "tools/call", tool="test_simple_text", **call): 3,
        duration_key(LEGACY, "tools/call", tool="test_error_handling", error_type="tool_error", **call): 1,
        duration_key(LEGACY, "tools/call", tool="no_such_tool", error_type="-32602", status_code="-32602", **call): 1,
        duration_key(LEGACY, "no/such/method", error_type="-32601", status_code="-32601"): 1,
        # One series for both reads: the URI (like the request id) is the span's, not the metric's.
        duration_key(LEGACY, "resources/read"): 2,
        duration_key(LEGACY, "prompts/get", prompt="test_simple_prompt"): 1,
    }


# --- context propagation, in this process -------------------------------------------------------------


def traced_server(**options: Any) -> Server:
    """Tools that start spans of the application's own and read the baggage."""
    server = Server("traced-in-process", **options)
    app_tracer = trace.get_tracer("tests.app")

    @server.tool
    async def tenant() -> str:
        """The baggage's tenant, looked up in a span of the application's."""
        with app_tracer.start_as_current_span("look up tenant"):
            return str(baggage.get_baggage("tenant"))

    @server.tool
    def tenant_sync() -> str:
        """The same, in a worker thread."""
        with app_tracer.start_as_current_span("look up tenant in a thread"):
            return str(baggage.get_baggage("tenant"))

    @server.tool
    async def backend() -> str:
        """Fails with a JSON-RPC error of its own."""
        raise McpError(-32010, "the backend refused")

    @server.resource("test://broken")
    def broken() -> str:
        """A resource with a bug."""
        raise RuntimeError("the disk is gone")

    return server


def the_span(recorded: Recorded, name: str) -> ReadableSpan:
    (found,) = [span for span in recorded.spans() if span.name == name]
    return found


def span_id(span: ReadableSpan) -> int:
    assert span.context is not None
    return int(span.context.span_id)


async def test_the_meta_context_is_the_parent_and_its_baggage_reaches_the_tool(otel: Recorded) -> None:
    meta = {"traceparent": CLIENT_TRACEPARENT, "tracestate": "rojo=00f067aa0ba902b7", "baggage": "tenant=acme"}
    for version in (MODERN, LEGACY):
        otel.exporter.clear()
        async with Client(traced_server(), protocol_version=version) as client:
            result = await client.call_tool("tenant", meta=meta)
            assert result["content"][0]["text"] == "acme"
            result = await client.call_tool("tenant_sync", meta=meta)
            assert result["content"][0]["text"] == "acme"
        for name in ("tenant", "tenant_sync"):
            span = the_span(otel, f"tools/call {name}")
            assert span.context is not None and span.parent is not None
            assert f"{span.context.trace_id:032x}" == CLIENT_TRACE
            assert f"{span.parent.span_id:016x}" == CLIENT_SPAN and span.parent.is_remote
            assert span.context.trace_state.get("rojo") == "00f067aa0ba902b7"
            assert not span.links
        # The application's own spans nest under the tool's body, in a worker thread too.
        for user, run in (
            ("look up tenant", "run_tool tenant"),
            ("look up tenant in a thread", "run_tool tenant_sync"),
        ):
            parent = the_span(otel, user).parent
            assert parent is not None and parent.span_id == span_id(the_span(otel, run))


async def test_the_ambient_span_is_the_parent_or_a_link(otel: Recorded) -> None:
    agent_tracer = trace.get_tracer("tests.agent")
    async with Client(traced_server()) as client:
        with agent_tracer.start_as_current_span("invoke_agent") as agent:
            await client.call_tool("tenant")
            await client.call_tool("tenant", meta={"traceparent": CLIENT_TRACEPARENT})
    plain, propagated = otel.server_spans()
    agent_id = agent.get_span_context().span_id
    assert plain.parent is not None and plain.parent.span_id == agent_id and not plain.links
    assert propagated.parent is not None and f"{propagated.parent.span_id:016x}" == CLIENT_SPAN
    assert [link.context.span_id for link in propagated.links] == [agent_id]


async def test_a_request_sampled_out_is_measured_but_has_no_spans(otel: Recorded) -> None:
    not_sampled = f"00-{CLIENT_TRACE}-{CLIENT_SPAN}-00"  # the client's sampler dropped it: so does ours
    async with Client(traced_server()) as client:
        result = await client.call_tool("tenant", meta={"traceparent": not_sampled, "baggage": "tenant=acme"})
    assert result["content"][0]["text"] == "acme"
    assert otel.spans() == []
    call_attributes = {"operation": "execute_tool", "tool": "tenant"}
    assert otel.duration_counts() == {duration_key(MODERN, "tools/call", **call_attributes): 1}


@pytest.mark.parametrize(
    "meta",
    [
        {"traceparent": 42},
        {"traceparent": "not a traceparent"},
        {"traceparent": [CLIENT_TRACEPARENT]},
        {"traceparent": {"trace": CLIENT_TRACE}, "baggage": {"tenant": "acme"}},
        {"traceparent": f"00-{'0' * 32}-{CLIENT_SPAN}-01"},  # an invalid (all-zero) trace id
    ],
    ids=["number", "garbage", "list", "objects", "zero-trace"],
)
async def test_a_malformed_meta_context_is_ignored(otel: Recorded, meta: dict[str, Any]) -> None:
    async with Client(traced_server()) as client:
        result = await client.call_tool("tenant", meta=meta)
    assert result["content"][0]["text"] == "None"
    (span,) = otel.server_spans()
    assert span.parent is None and not span.links
    assert span.status.status_code is StatusCode.UNSET


# --- off, errors, middleware, cancellation, tasks ------------------------------------------------------


async def test_tracing_false_records_nothing_and_can_be_switched(otel: Recorded) -> None:
    server = traced_server(tracing=False)
    async with Client(server) as client:
        await client.call_tool("tenant")
        # The application's own span is still there; toolkit's are not, nor any measurement.
        assert [(span.name, span.parent) for span in otel.spans()] == [("look up tenant", None)]
        assert otel.durations() is None
        server.tracing = True
        await client.call_tool("tenant")
        assert [span.name for span in otel.server_spans()] == ["tools/call tenant"]
        assert otel.durations() is not None
        server.tracing = False
        await client.request("tools/list")
        assert [span.name for span in otel.server_spans()] == ["tools/call tenant"]
        assert otel.durations() is None


class Gate(Middleware):
    """Refuses some requests before they reach their handlers."""

    async def on_request(self, request: McpRequest, call_next: CallNext[dict[str, Any]]) -> dict[str, Any]:
        if request.method == "prompts/list":
            raise McpError(-32003, "prompts are closed today")
        if request.method == "resources/list":
            raise RuntimeError("a bug in the middleware")
        if request.method == "tools/list":
            return {"tools": []}  # its own answer: no error
        return await call_next(request)

    async def on_call_tool(self, request: McpRequest, call_next: CallNext[Any]) -> Any:
        if request.name == "tenant":
            raise McpError(-32003, "tenant needs an approval")
        if request.name == "tenant_sync":
            raise ToolError("not today")
        return await call_next(request)


async def test_errors_from_middleware_and_tools_mark_the_span(otel: Recorded) -> None:
    server = traced_server()
    server.add_middleware(Gate())
    async with Client(server, protocol_version=LEGACY) as client:
        await client.request("tools/list")
        await client.request("tools/call", {"name": "tenant"})
        await client.request("tools/call", {"name": "tenant_sync"})
        await client.request("tools/call", {"name": "backend"})
        await client.request("prompts/list")
        await client.request("resources/list")
        await client.request("resources/read", {"uri": "test://broken"})
    spans = {span.name: span for span in otel.server_spans()}
    expected = {
        "initialize": None,
        "tools/list": None,
        "tools/call tenant": ("-32003", "tenant needs an approval"),
        "tools/call tenant_sync": ("tool_error", "not today"),
        "tools/call backend": ("-32010", "the backend refused"),
        "prompts/list": ("-32003", "prompts are closed today"),
        "resources/list": ("-32603", "Internal error"),
        "resources/read": ("-32603", "Error reading resource test://broken"),
    }
    assert list(spans) == list(expected)
    for name, error in expected.items():
        span = spans[name]
        if error is None:
            assert span.status.status_code is StatusCode.UNSET and "error.type" not in (span.attributes or {})
        else:
            assert (span.attributes or {})["error.type"] == error[0], name
            assert (span.status.status_code, span.status.description) == (StatusCode.ERROR, error[1]), name
    # A middleware refuses a call before validation: no phase ran.
    assert otel.children(spans["tools/call tenant"]) == otel.children(spans["tools/call tenant_sync"]) == []
    # The tool's own JSON-RPC error is its run's error too.
    (_, run) = otel.children(spans["tools/call backend"])
    assert (run.name, (run.attributes or {})["error.type"], run.status.description) == (
        "run_tool backend",
        "-32010",
        "the backend refused",
    )
    # A bug is an internal error, its exception kept with the span; a protocol error is not an exception.
    for name, message in (("resources/list", "a bug in the middleware"), ("resources/read", "the disk is gone")):
        (event,) = spans[name].events
        assert event.name == "exception", name
        assert (event.attributes or {})["exception.type"] == "RuntimeError", name
        assert (event.attributes or {})["exception.message"] == message, name
    assert not spans["tools/call backend"].events


async def test_a_cancelled_request_ends_its_span_with_the_error_type(otel: Recorded) -> None:
    server = Server("slow")
    started = asyncio.Event()

    @server.tool
    async def wait_forever() -> str:
        """Never answers."""
        started.set()
        await asyncio.Event().wait()
        return "never"

    async with Client(server) as client:
        call = asyncio.create_task(client.call_tool("wait_forever"))
        await asyncio.wait_for(started.wait(), 5)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
    (span,) = otel.server_spans()
    assert (span.attributes or {})["error.type"] == "CancelledError"
    assert span.status.status_code is StatusCode.ERROR
    call_attributes = {"operation": "execute_tool", "tool": "wait_forever", "error_type": "CancelledError"}
    assert otel.duration_counts() == {duration_key(MODERN, "tools/call", **call_attributes): 1}


@pytest.mark.parametrize("version", [MODERN, LEGACY])
async def test_a_task_runs_its_phases_under_the_call_that_started_it(otel: Recorded, version: str) -> None:
    server = Server("tasks")

    @server.tool(task="required")
    async def job() -> str:
        """A short job."""
        await asyncio.sleep(0.01)
        return "done"

    async with Client(server, protocol_version=version) as client:
        result = await client.call_task("job")
    assert result["content"][0]["text"] == "done"
    call = the_span(otel, "tools/call job")
    assert [child.name for child in otel.children(call)] == [f"{phase} job" for phase in PHASES]
    polls = [span.name for span in otel.server_spans() if span.name.startswith("tasks/")]
    assert polls and set(polls) <= {"tasks/get", "tasks/result"}


# --- the wire: subprocesses that set up the SDK themselves -----------------------------------------------


def exported(path: Path) -> list[dict[str, Any]]:
    """The spans a ``traced_app`` process wrote (the SDK's ``to_json``, one a line)."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def by_name(spans: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return [span for span in spans if span["name"] == name]


def hex_id(value: str) -> str:
    return value.removeprefix("0x")


async def test_over_http_the_header_context_is_the_parent_unless_meta_has_one(tmp_path: Path) -> None:
    spans_file = tmp_path / "spans.jsonl"
    env = {**os.environ, SPANS_FILE: str(spans_file)}
    with http_server(f"{TRACED_APP}:server", env=env) as running:
        async with connect(running.url) as http:
            modern = Modern(http)
            header = {"traceparent": HTTP_TRACEPARENT}
            greeted = await modern.call_tool("greet", {"name": "Ada"}, headers=header, id="greet-1")
            meta = {"traceparent": CLIENT_TRACEPARENT}
            greeted_again = await modern.call_tool("greet", {"name": "Bo"}, headers=header, meta=meta)
            refused = await modern.call_tool("refuse")
            legacy = await Legacy(http).open()
            listed = await legacy.request("tools/list")
    assert greeted.result["content"] and greeted_again.result["content"] and listed.result["tools"]
    assert refused.result["isError"] is True
    spans = exported(spans_file)

    from_header, from_meta = by_name(spans, "tools/call greet")
    assert (hex_id(from_header["context"]["trace_id"]), hex_id(from_header["parent_id"])) == (HTTP_TRACE, HTTP_SPAN)
    assert from_header["links"] == []
    assert (hex_id(from_meta["context"]["trace_id"]), hex_id(from_meta["parent_id"])) == (CLIENT_TRACE, CLIENT_SPAN)
    assert [
        (hex_id(link["context"]["trace_id"]), hex_id(link["context"]["span_id"])) for link in from_meta["links"]
    ] == [(HTTP_TRACE, HTTP_SPAN)]
    attributes = from_header["attributes"]
    assert attributes.pop("client.port") > 0
    assert attributes == {
        "mcp.method.name": "tools/call",
        "jsonrpc.request.id": "greet-1",
        "gen_ai.tool.name": "greet",
        "gen_ai.operation.name": "execute_tool",
        "network.transport": "tcp",
        "network.protocol.name": "http",
        "network.protocol.version": "1.1",
        "client.address": "127.0.0.1",
        "mcp.protocol.version": MODERN,
    }
    (refusal,) = by_name(spans, "tools/call refuse")
    assert refusal["parent_id"] is None and refusal["attributes"]["error.type"] == "tool_error"
    assert refusal["status"] == {"status_code": "ERROR", "description": "refused"}
    # The application's span in the (sync) tool nests under its run.
    runs = {span["context"]["span_id"] for span in by_name(spans, "run_tool greet")}
    assert {span["parent_id"] for span in by_name(spans, "compose greeting")} == runs
    # A legacy session's requests carry its id, initialize's included.
    for name in ("initialize", "tools/list"):
        (span,) = by_name(spans, name)
        assert span["attributes"]["mcp.session.id"] == legacy.session_id, name
        assert span["attributes"]["mcp.protocol.version"] == LEGACY, name


async def test_over_a_unix_socket_the_transport_is_unix(otel: Recorded, tmp_path: Path) -> None:
    socket_path = str(tmp_path / "mcp.sock")
    config = uvicorn.Config(traced_server().http_app(), uds=socket_path, log_level="warning", lifespan="on")
    web = QuietUvicorn(config)
    serving = asyncio.create_task(web.serve())
    try:
        async with asyncio.timeout(10):
            while not web.started:
                await asyncio.sleep(0.01)
        transport = httpx.AsyncHTTPTransport(uds=socket_path)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as http:
            reply = await Modern(McpHttp("http://localhost/mcp", http)).call_tool("tenant", id="unix-1")
        assert reply.result["content"][0]["text"] == "None"
    finally:
        web.should_exit = True
        await serving
    (span,) = otel.server_spans()
    assert dict(span.attributes or {}) == {
        "mcp.method.name": "tools/call",
        "jsonrpc.request.id": "unix-1",
        "gen_ai.tool.name": "tenant",
        "gen_ai.operation.name": "execute_tool",
        "network.transport": "unix",
        "network.protocol.name": "http",
        "network.protocol.version": "1.1",
        "mcp.protocol.version": MODERN,
    }


def test_over_stdio_the_meta_context_is_the_parent(tmp_path: Path) -> None:
    spans_file = tmp_path / "spans.jsonl"
    env = {**os.environ, SPANS_FILE: str(spans_file)}
    with StdioClient.toolkit(f"{TRACED_APP}:server", env=env) as client:
        client.initialize(LEGACY)
        params = {"name": "greet", "arguments": {"name": "Ada"}, "_meta": {"traceparent": CLIENT_TRACEPARENT}}
        assert client.result("tools/call", params, request_id="call-1")["content"]
    spans = exported(spans_file)
    (initialize,) = by_name(spans, "initialize")
    assert initialize["attributes"] == {
        "mcp.method.name": "initialize",
        "jsonrpc.request.id": "req-1",
        "network.transport": "pipe",
        "mcp.protocol.version": LEGACY,
    }
    (call,) = by_name(spans, "tools/call greet")
    assert (hex_id(call["context"]["trace_id"]), hex_id(call["parent_id"])) == (CLIENT_TRACE, CLIENT_SPAN)
    assert call["kind"] == "SpanKind.SERVER"
    assert call["attributes"]["network.transport"] == "pipe"
    assert call["attributes"]["jsonrpc.request.id"] == "call-1"


# --- without an SDK, and the docs --------------------------------------------------------------------------

WITHOUT_SDK = """
import asyncio, sys
from toolkit import Server
from toolkit._jsonrpc import Request
from toolkit.testing import Client

server = Server("plain")

@server.tool
def add(a: int, b: int) -> int:
    return a + b

async def main():
    async with Client(server) as client:
        assert (await client.call_tool("add", {"a": 1, "b": 2}))["structuredContent"] == 3
    loaded = sorted(name for name in sys.modules if name.startswith("opentelemetry"))
    assert not loaded, loaded  # toolkit never imports OpenTelemetry
    import opentelemetry.metrics, opentelemetry.trace  # the API alone: its no-op providers
    assert server.engine._telemetry.start(Request(1, "tools/list", {}), None) is None
    async with Client(server) as client:
        assert (await client.call_tool("add", {"a": 1, "b": 2}))["structuredContent"] == 3
    print("ok")

asyncio.run(main())
"""


def test_without_an_sdk_nothing_is_imported_or_recorded() -> None:
    run = subprocess.run([str(PYTHON), "-c", WITHOUT_SDK], capture_output=True, text=True, timeout=60, check=False)
    assert run.returncode == 0 and run.stdout == "ok\n", run.stderr


def test_the_docs_example_reports_to_the_sdk_it_sets_up(tmp_path: Path) -> None:
    page = (REPO / "docs" / "observability.md").read_text()
    (source,) = re.findall(r'```python title="server.py"\n(.*?)```', page, re.DOTALL)
    command = "toolkit call server.py add a=2 b=3"
    assert command in page
    (tmp_path / "server.py").write_text(source)
    run = subprocess.run(
        [str(TOOLKIT), *command.split()[1:]], cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False
    )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["structuredContent"] == 5
    for name in ("tools/call add", "validate_arguments add", "run_tool add", "serialize_result add", DURATION_METRIC):
        assert f'"name": "{name}"' in run.stderr, name


async def test_a_mounted_tools_call_is_one_request_span_of_the_parent(otel: Recorded) -> None:
    gateway = Server("gateway")
    gateway.mount(traced_server(), "child")
    async with Client(gateway, protocol_version=MODERN) as client:
        result = await client.call_tool("child_tenant", meta={"baggage": "tenant=acme"})
    assert result["content"][0]["text"] == "acme"
    (request,) = otel.server_spans()
    assert request.name == "tools/call child_tenant"
    # The child's function ran inside the parent's span: the application's span nests under it.
    user = the_span(otel, "look up tenant")
    assert user.context is not None and request.context is not None
    assert user.context.trace_id == request.context.trace_id
