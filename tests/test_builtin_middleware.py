"""The built-in middlewares (``toolkit.middleware``): ``RequestLogging``, ``Timing``, ``ResponseSizeLimit``.

Each in both eras through ``toolkit.testing.Client``, then over a real stdio subprocess and real
HTTP (``toolkit run``), where the request log is read off the server's stderr.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.http_support import CliServer, Legacy, Modern, connect
from tests.support.builtin_middleware_app import LIMIT, register
from tests.support.stdio import StdioClient
from tests.wire import assert_valid

from toolkit import KNOWN_VERSIONS, McpError, Server
from toolkit.auth import AccessToken
from toolkit.middleware import CallNext, McpRequest, Middleware, RequestLogging, ResponseSizeLimit, Timing
from toolkit.testing import Client

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
ERAS = pytest.mark.parametrize("version", [MODERN, LEGACY])
REQUESTS = "toolkit.requests"
APP = Path(__file__).parent / "support" / "builtin_middleware_app.py"
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603


class Failing(Middleware):
    """An inner layer that fails: an internal error for ``explode``, a JSON-RPC error for ``refuse``."""

    async def on_request(self, request: McpRequest, call_next: CallNext[dict[str, Any]]) -> dict[str, Any]:
        if request.name == "explode":
            raise RuntimeError("boom")
        if request.name == "refuse":
            raise McpError(INVALID_REQUEST, "refused")
        return await call_next(request)


def make_server(*middleware: Middleware) -> Server:
    server = Server("builtin-middleware-tests", middleware=middleware)
    register(server)
    return server


def request_records(caplog: pytest.LogCaptureFixture, name: str = REQUESTS) -> list[logging.LogRecord]:
    return [record for record in caplog.records if record.name == name]


def shape(message: str) -> str:
    """The line with its duration (the one part that varies) replaced by ``<t>``."""
    return re.sub(r" \d+\.\d\d ms (\w+(?: -\d+)?)$", r" <t> ms \1", message)


def without_initialize(records: list[logging.LogRecord], version: str) -> list[logging.LogRecord]:
    if version == LEGACY:
        assert records[0].mcp_method == "initialize"  # type: ignore[attr-defined]
        assert records[0].mcp_protocol_version == LEGACY  # type: ignore[attr-defined]
        return records[1:]
    return records


# --- RequestLogging --------------------------------------------------------------------------------


@ERAS
async def test_request_logging_writes_one_line_per_request_with_its_outcome(
    version: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=REQUESTS)
    server = make_server(RequestLogging(), Failing())
    async with Client(server, protocol_version=version) as client:
        first = 2 if version == LEGACY else 1
        await client.call_tool("add", {"a": 1, "b": 2})
        await client.call_tool("fail")
        await client.request("tools/call", {"name": "nope"})
        await client.request("tools/call", {"name": "refuse"})
        await client.request("tools/call", {"name": "explode"})
        await client.read_resource("data://items/3")
        await client.get_prompt("greet", {"name": "Ada"})
        await client.result("tools/list")
    records = without_initialize(request_records(caplog), version)
    v = f"v={version} stdio"
    assert [shape(record.getMessage()) for record in records] == [
        f"tools/call add {v} id={first} <t> ms ok",
        f"tools/call fail {v} id={first + 1} <t> ms tool_error",
        f"tools/call nope {v} id={first + 2} <t> ms error -32602",
        f"tools/call refuse {v} id={first + 3} <t> ms error -32600",
        f"tools/call explode {v} id={first + 4} <t> ms internal_error",
        f"resources/read data://items/3 {v} id={first + 5} <t> ms ok",
        f"prompts/get greet {v} id={first + 6} <t> ms ok",
        f"tools/list {v} id={first + 7} <t> ms ok",
    ]
    assert all(record.levelno == logging.INFO for record in records)
    assert [(r.mcp_method, r.mcp_target, r.mcp_outcome, r.mcp_error_code) for r in records] == [  # type: ignore[attr-defined]
        ("tools/call", "add", "ok", None),
        ("tools/call", "fail", "tool_error", None),
        ("tools/call", "nope", "error", INVALID_PARAMS),
        ("tools/call", "refuse", "error", INVALID_REQUEST),
        ("tools/call", "explode", "internal_error", None),
        ("resources/read", "data://items/3", "ok", None),
        ("prompts/get", "greet", "ok", None),
        ("tools/list", None, "ok", None),
    ]


@ERAS
async def test_every_record_carries_the_fields_as_mcp_attributes(
    version: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=REQUESTS)
    token = AccessToken(subject="alice", client_id="app", scopes=frozenset(), expires_at=None)
    async with Client(make_server(RequestLogging()), protocol_version=version, access_token=token) as client:
        await client.call_tool("add", {"a": 1, "b": 2})
    [record] = without_initialize(request_records(caplog), version)
    attributes = {key: value for key, value in vars(record).items() if key.startswith("mcp_")}
    duration = attributes.pop("mcp_duration_ms")
    assert isinstance(duration, float)
    assert duration >= 0
    assert attributes == {
        "mcp_method": "tools/call",
        "mcp_target": "add",
        "mcp_protocol_version": version,
        "mcp_transport": "stdio",
        "mcp_caller": "sub:alice",
        "mcp_session_id": None,
        "mcp_request_id": 2 if version == LEGACY else 1,
        "mcp_outcome": "ok",
        "mcp_error_code": None,
    }
    request_id = attributes["mcp_request_id"]
    assert shape(record.getMessage()) == f"tools/call add v={version} stdio caller=sub:alice id={request_id} <t> ms ok"


@ERAS
async def test_json_lines_parse_with_stable_keys_and_arguments_when_asked(
    version: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=REQUESTS)
    server = make_server(RequestLogging(json=True, arguments=True))
    async with Client(server, protocol_version=version) as client:
        await client.call_tool("add", {"a": 1, "b": 2})
        await client.request("tools/call", {"name": "nope", "arguments": {"secret": "s3cr3t"}})
        await client.read_resource("data://items/2")
    records = without_initialize(request_records(caplog), version)
    lines = [json.loads(record.getMessage()) for record in records]
    for line, record in zip(lines, records, strict=True):
        assert isinstance(line.pop("duration_ms"), float)
        assert {f"mcp_{key}": value for key, value in line.items()}.items() <= vars(record).items()
    first = 2 if version == LEGACY else 1
    common = {"protocol_version": version, "transport": "stdio", "caller": None, "session_id": None}
    assert lines == [
        {
            "method": "tools/call",
            "target": "add",
            **common,
            "request_id": first,
            "outcome": "ok",
            "arguments": {"a": 1, "b": 2},
        },
        {
            "method": "tools/call",
            "target": "nope",
            **common,
            "request_id": first + 1,
            "outcome": "error",
            "error_code": INVALID_PARAMS,
            "arguments": {"secret": "s3cr3t"},
        },
        {
            "method": "resources/read",
            "target": "data://items/2",
            **common,
            "request_id": first + 2,
            "outcome": "ok",
            "arguments": {},
        },
    ]
    keys = list(json.loads(records[1].getMessage()))
    assert keys == [
        "method",
        "target",
        "protocol_version",
        "transport",
        "caller",
        "session_id",
        "request_id",
        "duration_ms",
        "outcome",
        "error_code",
        "arguments",
    ]


async def test_arguments_are_left_out_unless_asked_for(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=REQUESTS)
    async with Client(make_server(RequestLogging(json=True))) as client:
        await client.call_tool("add", {"a": 1, "b": 2})
    async with Client(make_server(RequestLogging(arguments=True))) as client:
        await client.call_tool("add", {"a": 1, "b": 2})
    quiet, plain = request_records(caplog)
    assert "arguments" not in json.loads(quiet.getMessage())
    assert not hasattr(quiet, "mcp_arguments")
    assert shape(plain.getMessage()) == f'tools/call add v={MODERN} stdio id=1 arguments={{"a":1,"b":2}} <t> ms ok'
    assert plain.mcp_arguments == {"a": 1, "b": 2}  # type: ignore[attr-defined]


async def test_a_client_cannot_break_or_fake_a_line(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=REQUESTS)
    async with Client(make_server(RequestLogging())) as client:
        await client.request("tools/call", {"name": "x 1.00 ms ok\n2026-01-01 INFO toolkit.requests: forged"})
        await client.request("no such\u2028method")
    first, second = (record.getMessage() for record in request_records(caplog))
    assert "\n" not in first
    forged = '"x 1.00 ms ok\\n2026-01-01 INFO toolkit.requests: forged"'
    assert shape(first) == f"tools/call {forged} v={MODERN} stdio id=1 <t> ms error -32602"
    assert shape(second) == f'"no such\\u2028method" v={MODERN} stdio id=2 <t> ms error -32601'


async def test_logger_and_level_are_the_callers_and_a_disabled_level_logs_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    audit = logging.getLogger("tests.audit")
    caplog.set_level(logging.WARNING, logger="tests.audit")
    caplog.set_level(logging.WARNING, logger=REQUESTS)
    server = make_server(RequestLogging(audit, level=logging.WARNING), RequestLogging())
    async with Client(server) as client:
        await client.call_tool("add", {"a": 1, "b": 2})
    assert request_records(caplog) == []
    [record] = request_records(caplog, "tests.audit")
    assert record.levelno == logging.WARNING
    assert shape(record.getMessage()) == f"tools/call add v={MODERN} stdio id=1 <t> ms ok"
    with pytest.raises(TypeError, match=r"logger name or a logging\.Logger"):
        RequestLogging(42)  # type: ignore[arg-type]


async def test_a_cancelled_request_is_logged_and_timed_and_stays_cancelled(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=REQUESTS)
    ended: list[str] = []
    timing = Timing(callback=lambda request, seconds, outcome: ended.append(outcome))
    server = make_server(RequestLogging(json=True), timing)
    started = asyncio.Event()

    @server.tool
    async def wait() -> str:
        """Wait until cancelled."""
        started.set()
        await asyncio.sleep(60)
        return "too late"

    async with Client(server) as client:
        call = asyncio.create_task(client.call_tool("wait"))
        await started.wait()
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
    [record] = request_records(caplog)
    assert json.loads(record.getMessage())["outcome"] == "cancelled"
    assert ended == ["cancelled"]
    assert {key: (stat["count"], stat["errors"]) for key, stat in timing.stats().items()} == {"tools/call wait": (1, 0)}


# --- Timing ----------------------------------------------------------------------------------------


@ERAS
async def test_timing_counts_a_known_sequence_exactly(version: str) -> None:
    timing = Timing()
    async with Client(make_server(timing, Failing()), protocol_version=version) as client:
        for a in range(3):
            await client.call_tool("add", {"a": a, "b": 1})
        await client.call_tool("fail")
        await client.request("tools/call", {"name": "nope"})
        await client.request("tools/call", {"name": "explode"})
        await client.request("tools/call", {"name": "refuse"})
        await client.result("tools/list")
        await client.result("tools/list")
        await client.read_resource("data://items/1")
        await client.read_resource("data://items/2")
        await client.request("resources/read", {"uri": "data://nowhere"})
        await client.get_prompt("greet", {"name": "Ada"})
    stats = timing.stats()
    expected = {
        **({"initialize": (1, 0)} if version == LEGACY else {}),
        "tools/call add": (3, 0),
        "tools/call fail": (1, 1),
        "tools/call nope": (1, 1),
        "tools/call explode": (1, 1),
        "tools/call refuse": (1, 1),
        "tools/list": (2, 0),
        "resources/read": (3, 1),  # URIs are not part of a key
        "prompts/get greet": (1, 0),
    }
    assert {key: (stat["count"], stat["errors"]) for key, stat in stats.items()} == expected
    assert list(stats) == list(expected)  # first-seen order
    for stat in stats.values():
        assert set(stat) == {"count", "errors", "total_seconds", "mean_seconds", "max_seconds"}
        assert 0 < stat["max_seconds"] <= stat["total_seconds"]
        assert stat["mean_seconds"] == pytest.approx(stat["total_seconds"] / stat["count"])
    timing.reset()
    assert timing.stats() == {}


async def test_timing_leaves_the_duration_for_outer_middleware_and_calls_back() -> None:
    seen: list[tuple[str, float]] = []
    called: list[tuple[str | None, float, str]] = []

    class Outer(Middleware):
        async def on_request(self, request: McpRequest, call_next: CallNext[dict[str, Any]]) -> dict[str, Any]:
            try:
                return await call_next(request)
            finally:
                seen.append((request.method, request.state["duration_seconds"]))

    def callback(request: McpRequest, seconds: float, outcome: str) -> None:
        called.append((request.name, seconds, outcome))

    started = time.perf_counter()
    async with Client(make_server(Outer(), Timing(callback), Failing())) as client:
        await client.call_tool("add", {"a": 1, "b": 2})
        await client.call_tool("fail")
        await client.request("tools/call", {"name": "nope"})
        await client.request("tools/call", {"name": "explode"})
    elapsed = time.perf_counter() - started
    assert [(name, outcome) for name, _, outcome in called] == [
        ("add", "ok"),
        ("fail", "tool_error"),
        ("nope", "error"),
        ("explode", "internal_error"),
    ]
    assert [seconds for _, seconds in seen] == [seconds for _, seconds, _ in called]
    assert all(0 < seconds < elapsed for _, seconds in seen)


async def test_a_failing_timing_callback_is_logged_and_the_request_goes_on(caplog: pytest.LogCaptureFixture) -> None:
    def callback(request: McpRequest, seconds: float, outcome: str) -> None:
        raise ValueError("callback bug")

    timing = Timing(callback)
    async with Client(make_server(timing)) as client:
        result = await client.call_tool("add", {"a": 1, "b": 2})
    assert result["structuredContent"] == 3
    assert timing.stats()["tools/call add"]["count"] == 1
    [failure] = [record for record in caplog.records if "Timing callback" in record.getMessage()]
    assert failure.levelno == logging.ERROR
    assert failure.exc_info is not None
    with pytest.raises(TypeError, match="takes a function"):
        Timing(callback=42)  # type: ignore[arg-type]


async def test_timing_memory_is_bounded_whatever_names_clients_send() -> None:
    timing = Timing()
    async with Client(make_server(timing)) as client:
        for number in range(1005):
            await client.request("tools/call", {"name": f"made-up-{number}"})
    stats = timing.stats()
    assert len(stats) == 1001
    assert stats["tools/call made-up-999"]["count"] == 1
    assert stats["(other)"] == {**stats["(other)"], "count": 5, "errors": 5}


# --- ResponseSizeLimit -----------------------------------------------------------------------------


@pytest.mark.parametrize("version", KNOWN_VERSIONS)
async def test_a_tool_result_over_the_limit_becomes_an_is_error_result(
    version: str, caplog: pytest.LogCaptureFixture
) -> None:
    async with Client(make_server(ResponseSizeLimit(1000)), protocol_version=version) as client:
        small = await client.call_tool("big", {"size": 10})
        response = await client.request("tools/call", {"name": "big", "arguments": {"size": 5000}})
    assert small["content"] == [{"type": "text", "text": "x" * 10}]
    assert "isError" not in small
    assert_valid(response, version, method="tools/call")
    result = response["result"]
    assert result["isError"] is True
    [content] = result["content"]
    found = re.fullmatch(
        r"The result of tool 'big' is (\d+) bytes, over this server's limit of 1000 bytes", content["text"]
    )
    assert found is not None, content
    size = int(found[1])
    assert size > 5000
    assert ("resultType" in result) is (version == MODERN)
    [warning] = [record for record in caplog.records if record.levelno == logging.WARNING]
    assert warning.getMessage() == (
        f"the result of tools/call 'big' is {size} bytes, over the ResponseSizeLimit of 1000 bytes: "
        "sent an error instead"
    )


@ERAS
async def test_any_other_result_over_the_limit_is_a_json_rpc_error(version: str) -> None:
    async with Client(make_server(ResponseSizeLimit(400)), protocol_version=version) as client:
        read = await client.request("resources/read", {"uri": "data://items/5000"})
        listed = await client.request("tools/list")
        fine = await client.read_resource("data://items/10")
    assert fine["contents"][0]["text"] == "x" * 10
    for response, what in ((read, "resources/read 'data://items/5000'"), (listed, "tools/list")):
        assert_valid(response, version)
        error = response["error"]
        assert error["code"] == INTERNAL_ERROR
        assert error["message"] == (
            f"Response too large: the result of {what} is {error['data']['size']} bytes, "
            "over this server's limit of 400 bytes"
        )
        assert error["data"]["maxBytes"] == 400
        assert error["data"]["size"] > 400


@ERAS
async def test_request_logging_outside_the_limit_logs_what_the_client_got(
    version: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=REQUESTS)
    async with Client(make_server(RequestLogging(), ResponseSizeLimit(1000)), protocol_version=version) as client:
        await client.call_tool("big", {"size": 5000})
        await client.request("resources/read", {"uri": "data://items/5000"})
    records = without_initialize(request_records(caplog), version)
    assert [(r.mcp_outcome, r.mcp_error_code) for r in records] == [("tool_error", None), ("error", INTERNAL_ERROR)]  # type: ignore[attr-defined]


def test_the_limit_must_be_a_positive_int() -> None:
    for bad in (0, -1):
        with pytest.raises(ValueError, match="at least 1 byte"):
            ResponseSizeLimit(bad)
    for wrong in ("1000", 1000.0, True):
        with pytest.raises(TypeError, match="takes an int"):
            ResponseSizeLimit(wrong)  # type: ignore[arg-type]
    assert ResponseSizeLimit(1).max_bytes == 1


# --- over real transports --------------------------------------------------------------------------


def logged_lines(output: str) -> list[str]:
    """The request log lines in a server's stderr, without the ``toolkit run`` prefix."""
    return [line.split(f" {REQUESTS}: ", 1)[1] for line in output.splitlines() if f" {REQUESTS}: " in line]


def wait_until(condition: Callable[[], bool], what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def test_a_stdio_server_logs_every_request_on_stderr(stdio_client: Callable[..., StdioClient]) -> None:
    client = stdio_client(APP)
    client.initialize(LEGACY)
    assert client.call_tool("add", {"a": 2, "b": 3})["structuredContent"] == {"result": 5}
    assert client.call_tool("fail")["isError"] is True
    capped = client.call_tool("big", {"size": 3 * LIMIT})
    assert capped["isError"] is True
    assert capped["content"][0]["text"].startswith("The result of tool 'big' is ")
    assert client.request("tools/call", {"name": "nope", "arguments": {}})["error"]["code"] == INVALID_PARAMS
    slow = client.start_request("tools/call", {"name": "slow", "arguments": {"seconds": 30}})
    client.result("ping")  # answered after the slow call started (requests start in order)
    client.notify("notifications/cancelled", {"requestId": slow, "reason": "test"})
    wait_until(lambda: "tools/call slow" in client.stderr, "the cancelled call's line")
    client.use_modern()
    assert client.call_tool("add", {"a": 1, "b": 1})["structuredContent"] == 2
    client.assert_all_valid(LEGACY, client.messages[:-1])
    client.assert_all_valid(MODERN, client.messages[-1:])
    assert client.close() == 0
    legacy = f"v={LEGACY} stdio"
    assert [shape(line) for line in logged_lines(client.stderr)] == [
        f"initialize {legacy} id=req-1 <t> ms ok",
        f"tools/call add {legacy} id=req-2 <t> ms ok",
        f"tools/call fail {legacy} id=req-3 <t> ms tool_error",
        f"tools/call big {legacy} id=req-4 <t> ms tool_error",
        f"tools/call nope {legacy} id=req-5 <t> ms error -32602",
        f"ping {legacy} id=req-7 <t> ms ok",
        f"tools/call slow {legacy} id=req-6 <t> ms cancelled",
        f"tools/call add v={MODERN} stdio id=req-8 <t> ms ok",
    ]
    assert " WARNING toolkit: the result of tools/call 'big' is " in client.stderr


async def test_an_http_server_logs_json_lines_on_stderr(mcp_cli: Callable[..., CliServer]) -> None:
    running = mcp_cli(f"{APP}:json_server")
    async with connect(running.url) as http:
        legacy = await Legacy(http).open()
        added = await legacy.call_tool("add", {"a": 2, "b": 3}, id="legacy-add")
        modern = Modern(http)
        capped = await modern.call_tool("big", {"size": 3 * LIMIT}, id=7)
        unknown = await modern.call_tool("nope", id=8)
    assert added.result["structuredContent"] == {"result": 5}
    assert capped.result["isError"] is True
    assert unknown.error["code"] == INVALID_PARAMS
    lines = [json.loads(line) for line in logged_lines(running.output())]
    for line in lines:
        assert isinstance(line.pop("duration_ms"), float)
    assert legacy.session_id is not None
    assert legacy.session_id not in running.output(), "a session id is a secret: logged as a digest"
    session = hashlib.sha256(legacy.session_id.encode()).hexdigest()[:12]
    http_legacy = {"protocol_version": LEGACY, "transport": "http", "caller": None}
    http_modern = {"protocol_version": MODERN, "transport": "http", "caller": None, "session_id": None}
    initialize_id = lines[0].pop("request_id")
    assert initialize_id == legacy.initialize_reply.message["id"]  # type: ignore[union-attr]
    assert lines == [
        {"method": "initialize", "target": None, **http_legacy, "session_id": session, "outcome": "ok"},
        {
            "method": "tools/call",
            "target": "add",
            **http_legacy,
            "session_id": session,
            "request_id": "legacy-add",
            "outcome": "ok",
        },
        {"method": "tools/call", "target": "big", **http_modern, "request_id": 7, "outcome": "tool_error"},
        {
            "method": "tools/call",
            "target": "nope",
            **http_modern,
            "request_id": 8,
            "outcome": "error",
            "error_code": INVALID_PARAMS,
        },
    ]
    assert "WARNING toolkit: the result of tools/call 'big' is " in running.output()
