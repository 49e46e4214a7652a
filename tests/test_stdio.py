"""The stdio transport over a real subprocess, driven by a raw JSON-RPC client (no MCP library).

Spec: 2026-07-28 basic/transports/stdio (framing, stdout discipline, cancellation, shutdown),
basic/index (JSON-RPC messages), 2025-11-25 basic/lifecycle; ARCHITECTURE §1, §3, §6.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support.apps import STDIO_APP, WEATHER, weather_module
from tests.support.memory import MODERN, modern_meta
from tests.support.processes import PYTHON
from tests.support.stdio import StdioClient
from tests.wire import assert_valid

from toolkit.testing import Client

Start = Callable[..., StdioClient]


# --- SEP-2106 over stdio, per version ----------------------------------------------------------


def test_modern_client_gets_natural_schemas_and_values(stdio_client: Start) -> None:
    client = stdio_client(WEATHER)
    client.use_modern()
    discover = client.result("server/discover")
    assert MODERN in discover["supportedVersions"]
    tools = {tool["name"]: tool for tool in client.result("tools/list")["tools"]}
    forecast_schema = tools["get_weather_forecast"]["outputSchema"]
    assert forecast_schema["type"] == "array"
    assert tools["get_count"]["outputSchema"] == {"type": "integer"}

    forecast = client.call_tool("get_weather_forecast", {"city": "Seattle", "hours": 2})
    assert isinstance(forecast["structuredContent"], list)
    assert forecast["structuredContent"] == [
        {"hour": "09:00", "temp": 68.0, "conditions": "sunny"},
        {"hour": "10:00", "temp": 70.0, "conditions": "partly cloudy"},
    ]
    assert len(forecast["content"]) == 1
    assert json.loads(forecast["content"][0]["text"]) == forecast["structuredContent"]

    count_id = client.start_request("tools/call", {"name": "get_count", "arguments": {}})
    count = client.response(count_id)["result"]
    assert count["structuredContent"] == 42
    assert type(count["structuredContent"]) is int
    raw = next(line for line in client.lines if json.loads(line).get("id") == count_id)
    assert b'"structuredContent":42' in raw.replace(b" ", b""), "a bare number on the wire"
    assert count["resultType"] == "complete"
    assert client.invalid_lines == []
    client.assert_all_valid(MODERN)


@pytest.mark.parametrize("version", ["2025-11-25", "2025-06-18"])
def test_structured_legacy_client_gets_wrapped_schemas_and_values(stdio_client: Start, version: str) -> None:
    client = stdio_client(WEATHER)
    assert client.initialize(version)["result"]["protocolVersion"] == version
    tools = {tool["name"]: tool for tool in client.result("tools/list")["tools"]}
    forecast_schema = tools["get_weather_forecast"]["outputSchema"]
    assert forecast_schema["type"] == "object"
    assert forecast_schema["required"] == ["result"]
    assert forecast_schema["properties"]["result"]["type"] == "array"
    assert tools["get_count"]["outputSchema"] == {
        "type": "object",
        "properties": {"result": {"type": "integer"}},
        "required": ["result"],
    }
    assert tools["get_current_conditions"]["outputSchema"]["properties"].keys() == {
        "city",
        "temp",
        "humidity",
        "wind_mph",
    }

    forecast = client.call_tool("get_weather_forecast", {"city": "Seattle", "hours": 1})
    assert forecast["structuredContent"] == {"result": [{"hour": "09:00", "temp": 68.0, "conditions": "sunny"}]}
    assert client.call_tool("get_count")["structuredContent"] == {"result": 42}
    assert client.call_tool("clear_cache")["structuredContent"] == {"result": None}
    conditions = client.call_tool("get_current_conditions", {"city": "Seattle"})
    assert conditions["structuredContent"]["city"] == "Seattle", "objects travel unwrapped"
    assert "resultType" not in forecast
    assert client.invalid_lines == []
    client.assert_all_valid(version)


def test_2025_03_26_client_gets_no_structured_fields(stdio_client: Start) -> None:
    client = stdio_client(WEATHER)
    client.initialize("2025-03-26")
    tools = client.result("tools/list")["tools"]
    assert tools and all("outputSchema" not in tool for tool in tools)
    for name, arguments in [
        ("get_weather_forecast", {"city": "Seattle"}),
        ("get_count", {}),
        ("find_station", {"code": "x"}),
    ]:
        result = client.call_tool(name, arguments)
        assert "structuredContent" not in result
        assert len(result["content"]) == 1 and result["content"][0]["type"] == "text"
    assert json.loads(client.call_tool("get_count")["content"][0]["text"]) == 42
    client.assert_all_valid("2025-03-26")


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", MODERN])
async def test_stdio_answers_exactly_what_the_engine_answers(stdio_client: Start, version: str) -> None:
    plan = weather_module().INTEROP_PLAN
    client = stdio_client(WEATHER)
    if version == MODERN:
        client.use_modern()
    else:
        client.initialize(version)
    over_stdio = [client.call_tool(str(step["tool"]), step["arguments"]) for step in plan]  # type: ignore[arg-type]
    async with Client(weather_module().server, protocol_version=version) as memory:
        in_memory = [await memory.call_tool(str(step["tool"]), step["arguments"]) for step in plan]  # type: ignore[arg-type]
    assert over_stdio == in_memory
    client.assert_all_valid(version)


# --- framing: every frame gets exactly one answer, and the server keeps serving ----------------


@pytest.fixture(scope="module")
def shared_server() -> Iterator[StdioClient]:
    with StdioClient.toolkit(WEATHER) as client:
        client.use_modern()
        yield client


BAD_FRAMES: list[tuple[str, bytes, int, Any]] = [
    ("invalid-json", b"{bad json", -32700, None),
    ("truncated", b'{"jsonrpc":"2.0","id":"t","method":"ping"', -32700, None),
    ("empty-line", b"", -32700, None),
    ("whitespace-line", b"   \t ", -32700, None),
    ("invalid-utf8", b'{"jsonrpc":"2.0","id":"u","method":"\xff\xfe"}', -32700, None),
    ("binary", b"\x00\x01\x02\xff", -32700, None),
    ("number", b"42", -32600, None),
    ("string", b'"ping"', -32600, None),
    ("null", b"null", -32600, None),
    ("empty-batch", b"[]", -32600, None),
    ("batch", b'[{"jsonrpc":"2.0","id":"in-batch","method":"server/discover"}]', -32600, None),
    ("wrong-version", b'{"jsonrpc":"1.0","id":"v1","method":"ping"}', -32600, "v1"),
    ("no-jsonrpc", b'{"id":"j1","method":"ping"}', -32600, "j1"),
    ("no-method", b'{"jsonrpc":"2.0","id":"m1"}', -32600, "m1"),
    ("method-not-string", b'{"jsonrpc":"2.0","id":"m2","method":5}', -32600, "m2"),
    ("null-id", b'{"jsonrpc":"2.0","id":null,"method":"ping"}', -32600, None),
    ("object-id", b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', -32600, None),
    ("fractional-id", b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', -32600, None),
    ("boolean-id", b'{"jsonrpc":"2.0","id":true,"method":"ping"}', -32600, None),
]


def _answers_to(client: StdioClient, frame: bytes) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Send ``frame`` then a marker request; the messages that came before the marker's answer."""
    mark = client.snapshot()
    client.send_raw(frame + b"\n")
    marker = client.start_request("server/discover")
    client.response(marker)
    before = [message for message in client.since(mark) if message.get("id") != marker]
    return before, client.response(marker)


@pytest.mark.parametrize(
    ("frame", "code", "request_id"), [case[1:] for case in BAD_FRAMES], ids=[c[0] for c in BAD_FRAMES]
)
def test_each_bad_frame_gets_exactly_one_error_and_the_server_keeps_serving(
    shared_server: StdioClient, frame: bytes, code: int, request_id: Any
) -> None:
    before, marker = _answers_to(shared_server, frame)
    assert len(before) == 1, f"exactly one response to {frame!r}, got {before}"
    error = before[0]
    assert error["error"]["code"] == code, error
    assert error["error"]["message"]
    assert error.get("id") == request_id
    assert "result" in marker, "the server keeps serving after a bad frame"
    assert shared_server.responses_to("in-batch") == [], "a rejected batch must not be executed"
    assert shared_server.invalid_lines == []


@pytest.mark.parametrize(
    "frame",
    [b"{bad json", b"[]", b'{"jsonrpc":"2.0","id":null,"method":"ping"}', b"42"],
    ids=["parse-error", "batch", "null-id", "not-an-object"],
)
def test_errors_for_unreadable_ids_are_schema_valid(shared_server: StdioClient, frame: bytes) -> None:
    # 2026-07-28 basic/index "Error Responses": `id?: string | number`, omitted when the ID
    # could not be read; JSONRPCErrorResponse.id is a RequestId (string or integer, never null).
    before, _ = _answers_to(shared_server, frame)
    assert len(before) == 1
    assert_valid(before[0], MODERN)
    assert_valid(before[0], "2025-11-25")


@pytest.mark.parametrize(
    "frame",
    [
        b'{"jsonrpc":"2.0","id":"r1","result":{}}',
        b'{"jsonrpc":"2.0","id":"r2","error":{"code":-1,"message":"no"}}',
        b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
        b'{"jsonrpc":"2.0","method":"notifications/unknown","params":{"x":1}}',
        b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"never-sent"}}',
    ],
    ids=["response", "error-response", "initialized", "unknown-notification", "cancel-unknown"],
)
def test_notifications_and_client_responses_get_no_answer(shared_server: StdioClient, frame: bytes) -> None:
    before, marker = _answers_to(shared_server, frame)
    assert before == [], f"nothing answers {frame!r}"
    assert "result" in marker


def test_oversized_frame_gets_one_error_and_the_server_keeps_serving(shared_server: StdioClient) -> None:
    payload = {"jsonrpc": "2.0", "id": "huge", "method": "tools/call", "params": {"name": "echo", "x": "a" * 5_000_000}}
    before, marker = _answers_to(shared_server, json.dumps(payload).encode())
    assert len(before) == 1
    assert before[0]["error"]["code"] == -32600
    assert "result" in marker


def test_crlf_frames_are_accepted(shared_server: StdioClient) -> None:
    request = {"jsonrpc": "2.0", "id": "crlf", "method": "server/discover", "params": {"_meta": modern_meta()}}
    shared_server.send_raw(json.dumps(request).encode() + b"\r\n")
    assert "result" in shared_server.response("crlf")


@pytest.mark.parametrize("request_id", [0, -3, 2**53, "", "abc", "ünïcode ✓", "1"])
def test_response_ids_echo_the_request_id_exactly(shared_server: StdioClient, request_id: Any) -> None:
    response = shared_server.request("server/discover", request_id=request_id)
    assert response["id"] == request_id and type(response["id"]) is type(request_id)
    assert "result" in response


@pytest.mark.parametrize(
    ("params", "code"),
    [
        ({"_meta": "2026-07-28"}, -32602),
        ({"_meta": []}, -32602),
        ({"_meta": {"io.modelcontextprotocol/protocolVersion": MODERN}}, -32602),
        ({"_meta": modern_meta("1900-01-01")}, -32022),
    ],
    ids=["meta-string", "meta-list", "no-capabilities", "unsupported-version"],
)
def test_modern_meta_errors_over_stdio(shared_server: StdioClient, params: dict[str, Any], code: int) -> None:
    response = shared_server.request("server/discover", params, meta=False)
    assert response["error"]["code"] == code
    assert_valid(response, MODERN)


# --- stdout discipline, concurrency, cancellation, shutdown ------------------------------------


def test_only_json_rpc_reaches_stdout_even_when_a_tool_prints(stdio_client: Start) -> None:
    client = stdio_client(STDIO_APP)
    client.use_modern()
    result = client.call_tool("noisy")
    assert result["structuredContent"] == 7
    assert client.result("server/discover")["resultType"] == "complete"
    assert client.close() == 0
    assert client.invalid_lines == [], f"non-JSON-RPC output on stdout: {client.invalid_lines}"
    for needle in ("print() from a tool", "sys.stdout.write from a tool", "os.write(1) from a tool", "a child process"):
        assert needle in client.stderr, f"{needle!r} should have gone to stderr"


def test_requests_run_concurrently(stdio_client: Start) -> None:
    client = stdio_client(STDIO_APP)
    client.use_modern()
    slow = client.start_request("tools/call", {"name": "slow", "arguments": {"seconds": 30, "label": "slow"}})
    quick = [client.start_request("tools/call", {"name": "echo", "arguments": {"value": n}}) for n in range(20)]
    for n, request_id in enumerate(quick):
        assert client.response(request_id)["result"]["structuredContent"] == n
        assert len(client.responses_to(request_id)) == 1
    assert client.responses_to(slow) == [], "the quick calls must not wait for the slow one"
    client.notify("notifications/cancelled", {"requestId": slow})
    assert client.close() == 0
    assert client.responses_to(slow) == []
    client.assert_all_valid(MODERN)


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_cancelled_requests_get_no_response(stdio_client: Start, era: str) -> None:
    client = stdio_client(STDIO_APP)
    version = MODERN
    if era == "modern":
        client.use_modern()
    else:
        version = client.initialize("2025-11-25")["result"]["protocolVersion"]
    doomed = client.start_request("tools/call", {"name": "slow", "arguments": {"seconds": 2, "label": "late"}})
    kept = client.start_request("tools/call", {"name": "slow", "arguments": {"seconds": 0.3, "label": "kept"}})
    client.notify("notifications/cancelled", {"requestId": doomed, "reason": "user gave up"})
    client.notify("notifications/cancelled", {"requestId": "never-sent"})
    assert client.response(kept)["result"]["content"] == [{"type": "text", "text": "kept"}]
    echoed = client.request("tools/call", {"name": "echo", "arguments": {"value": 1}})["result"]
    assert echoed["structuredContent"] == (1 if era == "modern" else {"result": 1})
    assert client.close() == 0
    assert client.responses_to(doomed) == [], "a cancelled request gets no response"
    assert client.invalid_lines == []
    client.assert_all_valid(version)


# A liveness bound, not a measurement: how long the server may take to exit before the test calls
# it stuck. The order of messages proves what it does; this only tells "exits" from "never does",
# with a margin many times what a loaded 2-core machine needs.
LIVENESS = 30.0

# A tool held until the test releases it, served with an hour of shutdown grace: what happens at
# EOF depends on the order of events, never on how long a sleep lasted.
HELD_APP = '''
import asyncio
from pathlib import Path

from toolkit import Context, Server

server = Server("held", version="1.0.0")


@server.tool
async def held(release: str, ctx: Context) -> str:
    """Report progress, then wait until the file ``release`` exists."""
    await ctx.report_progress(1)
    while not Path(release).exists():
        await asyncio.sleep(0.01)
    return "released"


if __name__ == "__main__":
    server.run("stdio", shutdown_grace=3600)
'''


@pytest.fixture
def held_app(tmp_path: Path) -> Path:
    path = tmp_path / "held_app.py"
    path.write_text(HELD_APP)
    return path


def test_eof_exits_cleanly_after_in_flight_requests_finish(held_app: Path, tmp_path: Path) -> None:
    release = tmp_path / "release"
    with StdioClient([PYTHON, held_app]) as client:
        client.use_modern()
        listen = client.start_request("subscriptions/listen", {"notifications": {"toolsListChanged": True}})
        client.wait_for(lambda m: m.get("method") == "notifications/subscriptions/acknowledged")
        params = {"name": "held", "arguments": {"release": str(release)}, "_meta": {"progressToken": "h"}}
        pending = client.start_request("tools/call", params)
        client.wait_for(lambda m: m.get("method") == "notifications/progress")  # the call is running
        client.close_stdin()
        # The server ends open subscriptions when it starts draining: the EOF has been read, and
        # the held call, which cannot end before the release, is still in flight.
        ended = client.response(listen)
        assert client.responses_to(pending) == [], "the in-flight call was ended at EOF"
        assert client.process.poll() is None, "the server exited with a request in flight"
        release.touch()
        assert client.wait(LIVENESS) == 0  # liveness only; see LIVENESS
        answer = client.response(pending)
        assert "result" in answer, f"the in-flight call was not let finish: {answer}"
        assert answer["result"]["content"] == [{"type": "text", "text": "released"}]
        assert client.messages.index(ended) < client.messages.index(answer)
        assert client.invalid_lines == []
        client.assert_all_valid(MODERN)


def test_sigterm_exits_cleanly_after_in_flight_requests_finish(stdio_client: Start) -> None:
    client = stdio_client(STDIO_APP)
    client.use_modern()
    pending = client.start_request("tools/call", {"name": "slow", "arguments": {"seconds": 0.8, "label": "finished"}})
    client.request("server/discover")
    client.terminate()
    assert client.wait(15) == 0
    assert client.response(pending, timeout=1)["result"]["content"] == [{"type": "text", "text": "finished"}]
    assert client.invalid_lines == []


def test_eof_with_nothing_in_flight_exits_at_once(held_app: Path) -> None:
    # A liveness bound with a wide margin both ways: with nothing to drain the server exits as
    # soon as it reads the EOF, while one that waited out its grace would take an hour.
    with StdioClient([PYTHON, held_app]) as client:
        client.use_modern()
        client.request("server/discover")
        client.close_stdin()
        assert client.wait(LIVENESS) == 0


def test_notifications_come_before_the_response_on_stdout(stdio_client: Start) -> None:
    client = stdio_client(STDIO_APP)
    client.use_modern(log_level="info")
    request_id = client.start_request(
        "tools/call", {"name": "log_and_progress", "arguments": {"steps": 3}, "_meta": {"progressToken": 99}}
    )
    response = client.response(request_id)
    assert response["result"]["structuredContent"] == 3
    notes = client.notifications
    assert [n["method"] for n in notes] == ["notifications/message", "notifications/progress"] * 3
    assert [n["params"]["progress"] for n in notes if n["method"] == "notifications/progress"] == [1, 2, 3]
    assert all(n["params"]["progressToken"] == 99 for n in notes if n["method"] == "notifications/progress")
    assert client.messages.index(response) == len(notes)
    client.assert_all_valid(MODERN)


def test_both_eras_in_one_process(stdio_client: Start) -> None:
    client = stdio_client(WEATHER)
    client.initialize("2025-06-18")
    legacy = client.call_tool("get_count")
    modern_id = client.start_request("tools/call", {"name": "get_count", "arguments": {}, "_meta": modern_meta()})
    modern = client.response(modern_id)["result"]
    assert legacy["structuredContent"] == {"result": 42}
    assert modern["structuredContent"] == 42
    assert modern["resultType"] == "complete"
    assert client.call_tool("get_count")["structuredContent"] == {"result": 42}, "the session is still legacy"


def test_python_dash_m_toolkit_runs_too() -> None:
    with StdioClient([PYTHON, "-m", "toolkit", "run", WEATHER]) as client:
        client.use_modern()
        assert client.result("server/discover")["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "weather"
        assert len(client.result("tools/list")["tools"]) == len(weather_module().server.tools)
        assert client.close() == 0
        assert client.invalid_lines == []


@pytest.mark.parametrize("source", ["/dev/null", "file"])
def test_stdin_the_event_loop_cannot_watch_is_read_to_its_end(source: str, tmp_path: Path) -> None:
    """``toolkit run app.py < requests.jsonl`` (a regular file) and ``< /dev/null`` (epoll refuses it: EPERM)
    are read by a thread instead; the server answers what there is and exits, rather than hanging."""
    requests = tmp_path / "requests.jsonl"
    call = {"name": "get_count", "arguments": {}, "_meta": modern_meta()}
    requests.write_text(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}) + "\n")
    with open(requests if source == "file" else "/dev/null", "rb") as stdin:
        done = subprocess.run(
            [PYTHON, "-m", "toolkit", "run", str(WEATHER)], stdin=stdin, capture_output=True, timeout=30, check=False
        )
    assert done.returncode == 0, done.stderr
    assert b"Traceback" not in done.stderr
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    if source == "/dev/null":
        assert replies == []
    else:
        assert [(reply["id"], reply["result"]["structuredContent"]) for reply in replies] == [(1, 42)]


BIG_APP = """
from toolkit import Server

server = Server("big")


@server.tool
def big(size: int) -> str:
    return "x" * size


@server.tool
def small() -> str:
    return "small"


if __name__ == "__main__":
    server.run()
"""


def test_a_result_bigger_than_the_pipe_is_one_line_others_wait_their_turn(tmp_path: Path) -> None:
    """A 3 MB answer goes out in chunks, waiting for the pipe to drain, while the client reads
    nothing yet: the answer that is ready meanwhile is written after it, never between two chunks."""
    app = tmp_path / "big_app.py"
    app.write_text(BIG_APP)
    size = 3 * 1024 * 1024
    meta = {"_meta": modern_meta()}
    requests = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "big", "arguments": {"size": size}, **meta},
        },
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "small", "arguments": {}, **meta}},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "big", "arguments": {"size": size}, **meta},
        },
    ]
    with subprocess.Popen([PYTHON, str(app)], stdin=subprocess.PIPE, stdout=subprocess.PIPE) as process:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(b"".join(json.dumps(request).encode() + b"\n" for request in requests))
        process.stdin.flush()
        replies = [json.loads(process.stdout.readline()) for _ in requests]  # each line is one whole message
        process.stdin.close()
        assert process.wait(timeout=60) == 0
    by_id = {reply["id"]: reply["result"] for reply in replies}
    assert sorted(by_id) == [1, 2, 3]
    assert by_id[1]["content"] == [{"type": "text", "text": "x" * size}]
    assert by_id[3]["content"] == [{"type": "text", "text": "x" * size}]
    assert by_id[2]["content"] == [{"type": "text", "text": "small"}]
