"""Malformed input on every transport, and a property-based fuzz of the stdio transport.

One message in, one answer out (ARCHITECTURE §1, §6): whatever a client sends, a frame that
is not a notification or a response gets exactly one well-formed JSON-RPC error or result,
carrying the request's id whenever the id can be read (2026-07-28 basic/index, "Error
Responses"), and the server keeps serving. Over stdio nothing but JSON-RPC reaches stdout
(basic/transports/stdio); over HTTP the status is 400 for a body that is not a valid
JSON-RPC message and 202 for a notification or response (2025-11-25 basic/transports,
"Sending Messages to the Server"; 2026-07-28 basic/transports/streamable-http, same section).

``tests/test_stdio.py`` covers the basic bad frames on stdio; this file adds wrong member
types, NaN literals, deep nesting and the rest, on all three transports, and fuzzes.
"""

from __future__ import annotations

import asyncio
import collections
import json
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.http_support import LEGACY, MODERN, Legacy, McpHttp, Modern, Reply, ServeHttp
from tests.support.apps import load_module
from tests.support.memory import modern_meta
from tests.support.memory_stdio import MemoryStdio
from tests.support.processes import TOOLKIT
from tests.support.stdio import StdioClient
from tests.wire import assert_valid

from toolkit import Server

APP = '''
"""The app the fuzz tests talk to: fast tools of several shapes, a resource and a prompt."""

import asyncio
from typing import Annotated, Any

from pydantic import Field

from toolkit import Server, ToolError

server = Server("fuzz", version="1.0.0")
executed: list[str] = []


@server.tool
def echo(value: Any = None) -> Any:
    """Return the value."""
    return value


@server.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool
async def pause(ms: Annotated[int, Field(ge=0, le=20)] = 1) -> str:
    """Sleep a few milliseconds."""
    await asyncio.sleep(ms / 1000)
    return "ok"


@server.tool
def fail(message: str = "boom") -> str:
    """Raise an unexpected exception."""
    raise ValueError(message)


@server.tool
def refuse() -> str:
    """Raise a ToolError."""
    raise ToolError("refused")


@server.tool
def record(tag: str) -> str:
    """Remember that this ran."""
    executed.append(tag)
    return tag


@server.resource("fuzz://note", mime_type="text/plain")
def note() -> str:
    return "note"


@server.prompt
def greet(name: str) -> str:
    """Greet someone."""
    return f"Say hello to {name}."
'''

ERA_VERSIONS = {"modern": MODERN, "legacy": LEGACY}


@pytest.fixture(scope="module")
def app_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("fuzz") / "fuzz_app.py"
    path.write_text(textwrap.dedent(APP))
    return path


def fresh_app(path: Path) -> ModuleType:
    return load_module(path)


# --- the expected answer to any frame (JSON-RPC 2.0 + MCP basic/index, not toolkit's code) -------


@dataclass(frozen=True)
class Expect:
    """What a frame must get: ``"none"``, ``"noid"`` (one error without id) or ``"id"`` (one answer)."""

    kind: str
    id: Any = None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _has_lone_surrogate(value: Any) -> bool:
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            if any("\ud800" <= character <= "\udfff" for character in node):
                return True
        elif isinstance(node, dict):
            stack.extend(node.keys())
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False


def _valid_id(value: Any) -> bool:
    return isinstance(value, str | int) and not isinstance(value, bool)


def expectation(frame: bytes, max_bytes: int) -> Expect:
    """The answer ``frame`` (one line, without its newline) must get."""
    if len(frame) > max_bytes:
        return Expect("noid")
    if frame.endswith(b"\r"):
        frame = frame[:-1]
    try:
        payload = json.loads(frame.decode("utf-8"), parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return Expect("noid")
    if _has_lone_surrogate(payload):
        return Expect("noid")  # RFC 8259 §8.2: not Unicode text; a parser may refuse it
    if not isinstance(payload, dict):
        return Expect("noid")
    raw_id = payload.get("id")
    readable = Expect("id", raw_id) if _valid_id(raw_id) else Expect("noid")
    if payload.get("jsonrpc") != "2.0":
        return readable
    if "method" not in payload:
        error = payload.get("error")
        is_response = ("result" in payload) != ("error" in payload) and _valid_id(raw_id)
        if is_response and (error is None or isinstance(error, dict)):
            return Expect("none")
        return readable
    if not isinstance(payload["method"], str):
        return readable
    if "params" in payload and not isinstance(payload["params"], dict | None):
        return readable
    if "id" not in payload:
        return Expect("none")
    return readable


def _id_key(value: Any) -> tuple[str, Any]:
    return (type(value).__name__, value)


def check_answers(
    frames: list[Frame], messages: list[dict[str, Any]], max_bytes: int, *, marker: Any
) -> dict[str, int]:
    """Every frame got exactly the answers ``expectation`` says; every answer is well-formed."""
    wanted: collections.Counter[tuple[str, Any]] = collections.Counter()
    wanted_noid = 0
    for frame in frames:
        expect = expectation(frame.raw, max_bytes)
        if expect.kind == "id":
            wanted[_id_key(expect.id)] += 1
        elif expect.kind == "noid":
            wanted_noid += 1
    wanted[_id_key(marker)] += 1
    responses = [m for m in messages if "result" in m or "error" in m]
    got = collections.Counter(_id_key(m["id"]) for m in responses if "id" in m)
    got_noid = sum(1 for m in responses if "id" not in m)
    missing = {key: count - got[key] for key, count in wanted.items() if got[key] < count}
    extra = {key: count - wanted[key] for key, count in got.items() if count > wanted[key]}
    assert not missing, f"requests without their answer: {missing}"
    assert not extra, f"answers nobody asked for, or duplicated: {extra}"
    assert got_noid == wanted_noid, f"{got_noid} errors without an id, expected {wanted_noid}"
    by_id = {_id_key(f.id): f for f in frames if f.id is not None and f.pristine}
    for message in messages:
        if "error" in message:
            assert_valid(message, MODERN)
            assert_valid(message, LEGACY)
            assert isinstance(message["error"].get("message"), str) and message["error"]["message"]
        elif "result" in message:
            frame = by_id.get(_id_key(message["id"]))
            if frame is not None and frame.method is not None and frame.version is not None:
                assert_valid(message, frame.version, method=frame.method)
            else:
                assert_valid(message, MODERN if "resultType" in message["result"] else LEGACY)
        else:
            assert "id" not in message, f"the server sent a request over stdio to this client: {message}"
            assert_valid(message, MODERN if "_meta" in message.get("params", {}) else LEGACY)
    return {"answers": len(responses), "noid": got_noid}


# --- generated frames -------------------------------------------------------------------------


@dataclass(frozen=True)
class Frame:
    raw: bytes
    origin: str
    id: Any = None
    method: str | None = None
    version: str | None = None
    pristine: bool = False
    """A valid request as generated (not mutated): its result is validated for its method."""


json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=10,
)
json_objects = st.dictionaries(st.text(max_size=6), json_values, max_size=4)
small_text = st.text(max_size=16)


def _encode(message: Any) -> bytes:
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode()


@st.composite
def call_params(draw: st.DrawFn) -> dict[str, Any]:
    name = draw(st.sampled_from(["echo", "add", "pause", "fail", "refuse", "missing", "record"]))
    arguments: Any
    if name == "echo":
        arguments = {"value": draw(json_values)}
    elif name == "add":
        arguments = draw(
            st.fixed_dictionaries({"a": st.integers(-1000, 1000), "b": st.integers(-1000, 1000)}) | json_objects
        )
    elif name == "pause":
        arguments = {"ms": draw(st.integers(0, 20))}
    elif name == "record":
        arguments = {"tag": "fuzz"}
    else:
        arguments = draw(json_objects)
    return {"name": name, "arguments": arguments}


@st.composite
def request_params(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    method = draw(
        st.sampled_from(
            [
                "tools/list",
                "tools/call",
                "tools/call",
                "tools/call",
                "resources/list",
                "resources/read",
                "prompts/list",
                "prompts/get",
                "completion/complete",
                "ping",
                "server/discover",
                "logging/setLevel",
                "no/such/method",
            ]
        )
    )
    if method == "tools/call":
        return method, draw(call_params())
    if method == "resources/read":
        return method, {"uri": draw(st.sampled_from(["fuzz://note", "fuzz://missing"]) | small_text)}
    if method == "prompts/get":
        return method, {"name": draw(st.sampled_from(["greet", "nope"])), "arguments": {"name": draw(small_text)}}
    if method == "completion/complete":
        return method, {"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "name", "value": "a"}}
    if method == "logging/setLevel":
        return method, {"level": draw(st.sampled_from(["debug", "info", "error", "loud"]))}
    if method == "no/such/method":
        return draw(small_text | st.just(method)), draw(json_objects)
    return method, {}


def _request(draw: st.DrawFn, request_id: Any) -> tuple[dict[str, Any], str, str]:
    method, params = draw(request_params())
    era = draw(st.sampled_from(["modern", "legacy"]))
    if era == "modern":
        params = {**params, "_meta": modern_meta()}
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params or draw(st.booleans()):
        message["params"] = params
    return message, method, ERA_VERSIONS[era]


def _mutate_bytes(draw: st.DrawFn, raw: bytes) -> bytes:
    operation = draw(st.sampled_from(["delete", "insert", "replace", "truncate", "duplicate"]))
    position = draw(st.integers(0, max(0, len(raw) - 1)))
    byte = bytes([draw(st.integers(0, 255).filter(lambda b: b != 0x0A))])
    if operation == "delete":
        return raw[:position] + raw[position + 1 :]
    if operation == "insert":
        return raw[:position] + byte + raw[position:]
    if operation == "replace":
        return raw[:position] + byte + raw[position + 1 :]
    if operation == "truncate":
        return raw[:position]
    end = draw(st.integers(position, len(raw)))
    return raw[:end] + raw[position:end] + raw[end:]


def _mutate_structure(draw: st.DrawFn, message: dict[str, Any]) -> dict[str, Any]:
    mutated = dict(message)
    key = draw(st.sampled_from(["jsonrpc", "id", "method", "params", "result", "error"]))
    if draw(st.booleans()) and key in mutated:
        del mutated[key]
    else:
        mutated[key] = draw(json_values)
    return mutated


NASTY = [
    b"",
    b"   ",
    b"[]",
    b"[1,2]",
    b"null",
    b"NaN",
    b'{"jsonrpc":"2.0","id":NaN,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":-Infinity,"method":"ping"}',
    b"\xef\xbb\xbf{}",
    b"\xff\xfe\x00",
    b'{"jsonrpc":"2.0","id":"s","method":"ping","params":{"a":"\\ud800"}}',
    b"[" * 150 + b"]" * 150,
    b'{"jsonrpc":"2.0","method":"notifications/progress","params":' + b"[" * 100 + b"]" * 100 + b"}",
    b'{"jsonrpc":"2.0","id":1.0,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":true,"method":"ping"}',
    b'{"jsonrpc":"2.0","result":{}}',
    b'{"jsonrpc":"2.0","id":"x","error":[]}',
    b'{"jsonrpc":"2.0","method":"tools/list","params":[]}',
    b'{"jsonrpc":"2.0","id":"a"}{"jsonrpc":"2.0","id":"b"}',
    b'{"jsonrpc":"2.0"}\r',
]


@st.composite
def frame_lists(draw: st.DrawFn, *, min_size: int = 1, max_size: int = 24, long_text: int = 3000) -> list[Frame]:
    count = draw(st.integers(min_size, max_size))
    frames: list[Frame] = []
    for index in range(count):
        request_id: Any = 10_000 + index if draw(st.booleans()) else f"fz-{index:04d}"
        kind = draw(
            st.sampled_from(
                ["request"] * 4 + ["bytes", "structure", "garbage", "nasty", "notification", "response", "long"]
            )
        )
        if kind in ("request", "bytes", "structure", "long"):
            message, method, version = _request(draw, request_id)
            if kind == "long":
                message = {
                    **message,
                    "params": {**message.get("params", {}), "pad": "x" * draw(st.integers(0, long_text))},
                }
            raw = _encode(message)
            if kind == "request":
                frames.append(Frame(raw, kind, request_id, method, version, pristine=True))
                continue
            if kind == "bytes":
                raw = _mutate_bytes(draw, raw)
            elif kind == "structure":
                raw = _encode(_mutate_structure(draw, message))
            frames.append(Frame(raw, kind, request_id))
        elif kind == "garbage":
            frames.append(Frame(draw(st.binary(max_size=48)).replace(b"\n", b""), kind))
        elif kind == "nasty":
            frames.append(Frame(draw(st.sampled_from(NASTY)), kind))
        elif kind == "notification":
            method = draw(
                st.sampled_from(
                    ["notifications/initialized", "notifications/progress", "notifications/roots/list_changed", "x/y"]
                )
            )
            message = {"jsonrpc": "2.0", "method": method}
            if draw(st.booleans()):
                message["params"] = draw(json_objects)
            frames.append(Frame(_encode(message), kind))
        else:
            outcome = (
                {"result": draw(json_objects)}
                if draw(st.booleans())
                else {"error": {"code": -1, "message": draw(small_text)}}
            )
            frames.append(Frame(_encode({"jsonrpc": "2.0", "id": f"resp-{index}", **outcome}), kind))
    return frames


def _stream(frames: list[Frame], marker: Any) -> bytes:
    final = _encode({"jsonrpc": "2.0", "id": marker, "method": "server/discover", "params": {"_meta": modern_meta()}})
    return b"".join(frame.raw + b"\n" for frame in frames) + final + b"\n"


def _chunks(data: bytes, sizes: list[int]) -> Iterator[bytes]:
    position = 0
    turn = 0
    while position < len(data):
        size = sizes[turn % len(sizes)]
        yield data[position : position + size]
        position += size
        turn += 1


# --- the property, in process ----------------------------------------------------------------

FUZZ_LIMIT = 2048
MARKER = "final-marker"


@pytest.fixture(scope="module")
def fuzz_module(app_file: Path) -> ModuleType:
    return fresh_app(app_file)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    frames=frame_lists(),
    sizes=st.lists(st.integers(1, 400) | st.just(65536), min_size=1, max_size=6),
)
def test_fuzzed_frames_each_get_exactly_their_answers(
    fuzz_module: ModuleType, frames: list[Frame], sizes: list[int]
) -> None:
    server: Server = fuzz_module.server

    async def scenario() -> list[dict[str, Any]]:
        async with MemoryStdio(server, max_message_bytes=FUZZ_LIMIT, shutdown_grace=5.0) as stdio:
            await stdio.initialize(LEGACY)
            mark = len(stdio.messages)
            for chunk in _chunks(_stream(frames, MARKER), sizes):
                stdio.send_raw(chunk)
            stdio.end_input()
            await stdio.finished()
            assert stdio.invalid_lines == [], f"non-JSON-RPC lines written: {stdio.invalid_lines[:3]}"
            return stdio.messages[mark:]

    messages = asyncio.run(scenario())
    check_answers(frames, messages, FUZZ_LIMIT, marker=MARKER)
    marker = next(m for m in messages if m.get("id") == MARKER)
    assert "result" in marker, "the server still serves after the fuzzed frames"
    fuzz_module.executed.clear()


def test_the_oracle_agrees_with_the_spec_on_known_frames() -> None:
    cases = {
        b'{"jsonrpc":"2.0","id":1,"method":"ping"}': Expect("id", 1),
        b'{"jsonrpc":"2.0","id":"a","method":"ping","params":null}': Expect("id", "a"),
        b'{"jsonrpc":"2.0","method":"ping"}': Expect("none"),
        b'{"jsonrpc":"2.0","id":1,"result":{}}': Expect("none"),
        b'{"jsonrpc":"2.0","id":1,"result":{},"error":{}}': Expect("id", 1),
        b'{"jsonrpc":"2.0","id":null,"method":"ping"}': Expect("noid"),
        b'{"jsonrpc":"1.0","id":"v","method":"ping"}': Expect("id", "v"),
        b'{"jsonrpc":"2.0","id":"p","method":"ping","params":[]}': Expect("id", "p"),
        b"[]": Expect("noid"),
        b"NaN": Expect("noid"),
        b"": Expect("noid"),
        b"x" * 5000: Expect("noid"),
    }
    assert {frame: expectation(frame, 4096) for frame in cases} == cases


# --- the property, against a real `toolkit run` subprocess -------------------------------------


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(frames=frame_lists(min_size=40, max_size=90))
def test_fuzzed_frames_against_a_real_stdio_subprocess(app_file: Path, frames: list[Frame]) -> None:
    limit = 4 * 1024 * 1024
    with StdioClient([TOOLKIT, "run", str(app_file)]) as client:
        client.send_raw(
            _encode(
                {
                    "jsonrpc": "2.0",
                    "id": "init",
                    "method": "initialize",
                    "params": {
                        "protocolVersion": LEGACY,
                        "capabilities": {},
                        "clientInfo": {"name": "fuzz", "version": "1"},
                    },
                }
            )
            + b"\n"
        )
        assert "result" in client.response("init")
        client.notify("notifications/initialized")
        mark = client.snapshot()
        client.send_raw(_stream(frames, MARKER))
        assert client.close(timeout=30) == 0, client.stderr[-2000:]
        assert client.invalid_lines == [], f"non-JSON-RPC output on stdout: {client.invalid_lines[:3]}"
        messages = client.since(mark)
    check_answers(frames, messages, limit, marker=MARKER)


# --- a table of malformed frames, on stdio and on both HTTP eras -------------------------------


@dataclass(frozen=True)
class Bad:
    name: str
    frame: bytes
    code: int
    id: Any = None


DEEP = 5000


def _deep_call(after_arguments: bytes = b"") -> bytes:
    """A tools/call whose argument is nested DEEP levels, with ``after_arguments`` inside params."""
    deep = b"[" * DEEP + b"]" * DEEP
    head = b'{"jsonrpc":"2.0","id":"deep","method":"tools/call","params":{"name":"record","arguments":{"tag":'
    return head + deep + b"}" + after_arguments + b"}}"


BAD: list[Bad] = [
    Bad("empty", b"", -32700),
    Bad("whitespace", b" \t ", -32700),
    Bad("invalid-json", b"{bad json", -32700),
    Bad("truncated", b'{"jsonrpc":"2.0","id":"t","method":"ping"', -32700),
    Bad("invalid-utf8", b'{"jsonrpc":"2.0","id":"u","method":"\xff\xfe"}', -32700),
    Bad("overlong-utf8", b'{"jsonrpc":"2.0","id":"\xc0\xaf","method":"ping"}', -32700),
    Bad("utf8-bom", b'\xef\xbb\xbf{"jsonrpc":"2.0","id":"bom","method":"ping"}', -32700),
    Bad("lone-surrogate", b'{"jsonrpc":"2.0","id":"\\ud800","method":"ping"}', -32700),
    Bad("control-char", b'{"jsonrpc":"2.0","id":"a\x01b","method":"ping"}', -32700),
    Bad("nan-in-params", b'{"jsonrpc":"2.0","id":"n1","method":"tools/list","params":{"x":NaN}}', -32700),
    Bad("nan-id", b'{"jsonrpc":"2.0","id":NaN,"method":"ping"}', -32700),
    Bad("infinity", b'{"jsonrpc":"2.0","id":"i1","method":"ping","params":{"x":Infinity}}', -32700),
    Bad("minus-infinity", b'{"jsonrpc":"2.0","id":-Infinity,"method":"ping"}', -32700),
    Bad(
        "two-objects", b'{"jsonrpc":"2.0","id":"o1","method":"ping"}{"jsonrpc":"2.0","id":"o2","method":"ping"}', -32700
    ),
    Bad("trailing-garbage", b'{"jsonrpc":"2.0","id":"g1","method":"ping"} x', -32700),
    Bad("single-quotes", b"{'jsonrpc':'2.0','id':'q','method':'ping'}", -32700),
    Bad("trailing-comma", b'{"jsonrpc":"2.0","id":"c","method":"ping",}', -32700),
    Bad("nested-arrays", b"[" * DEEP + b"]" * DEEP, -32700),
    # Valid JSON, only deeper than the parser goes: the server still reads the envelope
    # (so a deep tools/call keeps its id) and sees that this object is no request.
    Bad("nested-objects", b'{"a":' * DEEP + b"1" + b"}" * DEEP, -32600),
    # Too deep *and* malformed after the deep part (where the parser stops looking): reading the
    # envelope anyway must not make a request of broken JSON.
    Bad("deep-then-bad-literal", _deep_call(b',"x":tru'), -32700),
    Bad("deep-then-missing-colon", _deep_call(b',"x" 1'), -32700),
    Bad("deep-then-missing-comma", _deep_call(b' "x":1'), -32700),
    Bad("deep-then-trailing-garbage", _deep_call() + b" x", -32700),
    Bad("number", b"42", -32600),
    Bad("string", b'"ping"', -32600),
    Bad("null", b"null", -32600),
    Bad("boolean", b"true", -32600),
    Bad("empty-object", b"{}", -32600),
    Bad("empty-batch", b"[]", -32600),
    Bad(
        "batch",
        b'[{"jsonrpc":"2.0","id":"in-batch","method":"tools/call","params":{"name":"record","arguments":{"tag":"batch"}}}]',
        -32600,
    ),
    Bad("batch-of-numbers", b"[1,2,3]", -32600),
    Bad("jsonrpc-number", b'{"jsonrpc":2.0,"id":"v2","method":"ping"}', -32600, "v2"),
    Bad("jsonrpc-null", b'{"jsonrpc":null,"id":"v3","method":"ping"}', -32600, "v3"),
    Bad("jsonrpc-1.0", b'{"jsonrpc":"1.0","id":4,"method":"ping"}', -32600, 4),
    Bad("jsonrpc-missing", b'{"id":"v5","method":"ping"}', -32600, "v5"),
    Bad("method-missing", b'{"jsonrpc":"2.0","id":"m1"}', -32600, "m1"),
    Bad("method-null", b'{"jsonrpc":"2.0","id":"m2","method":null}', -32600, "m2"),
    Bad("method-number", b'{"jsonrpc":"2.0","id":"m3","method":5}', -32600, "m3"),
    Bad("method-array", b'{"jsonrpc":"2.0","id":"m4","method":["ping"]}', -32600, "m4"),
    Bad("method-object", b'{"jsonrpc":"2.0","id":"m5","method":{"name":"ping"}}', -32600, "m5"),
    Bad("params-array", b'{"jsonrpc":"2.0","id":"p1","method":"tools/list","params":[]}', -32600, "p1"),
    Bad("params-string", b'{"jsonrpc":"2.0","id":"p2","method":"tools/list","params":"x"}', -32600, "p2"),
    Bad("params-number", b'{"jsonrpc":"2.0","id":"p3","method":"tools/list","params":1}', -32600, "p3"),
    Bad("params-boolean", b'{"jsonrpc":"2.0","id":"p4","method":"tools/list","params":false}', -32600, "p4"),
    Bad("id-null", b'{"jsonrpc":"2.0","id":null,"method":"ping"}', -32600),
    Bad("id-array", b'{"jsonrpc":"2.0","id":[1],"method":"ping"}', -32600),
    Bad("id-object", b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', -32600),
    Bad("id-fraction", b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', -32600),
    Bad("id-boolean", b'{"jsonrpc":"2.0","id":false,"method":"ping"}', -32600),
    Bad("result-and-error", b'{"jsonrpc":"2.0","id":"r1","result":{},"error":{"code":1,"message":"x"}}', -32600, "r1"),
    Bad("error-not-object", b'{"jsonrpc":"2.0","id":"r2","error":"no"}', -32600, "r2"),
    Bad("response-without-id", b'{"jsonrpc":"2.0","result":{}}', -32600),
]


def _bad_ids() -> list[str]:
    return [bad.name for bad in BAD]


@pytest.fixture(scope="module")
def fuzz_stdio(app_file: Path) -> Iterator[StdioClient]:
    with StdioClient([TOOLKIT, "run", str(app_file)]) as client:
        client.use_modern()
        yield client


@pytest.mark.parametrize("bad", BAD, ids=_bad_ids())
def test_stdio_bad_frame_gets_one_error(fuzz_stdio: StdioClient, bad: Bad) -> None:
    mark = fuzz_stdio.snapshot()
    fuzz_stdio.send_raw(bad.frame + b"\n")
    marker = fuzz_stdio.start_request("server/discover")
    assert "result" in fuzz_stdio.response(marker), "the server keeps serving after a bad frame"
    before = [m for m in fuzz_stdio.since(mark) if m.get("id") != marker]
    assert len(before) == 1, f"exactly one answer to {bad.frame[:80]!r}, got {before}"
    error = before[0]
    assert error["error"]["code"] == bad.code, error
    assert error.get("id") == bad.id, error
    assert_valid(error, MODERN)
    assert_valid(error, LEGACY)
    assert fuzz_stdio.invalid_lines == []


def test_stdio_batch_was_never_executed(fuzz_stdio: StdioClient) -> None:
    fuzz_stdio.send_raw(next(bad.frame for bad in BAD if bad.name == "batch") + b"\n")
    result = fuzz_stdio.call_tool("record", {"tag": "after"})
    assert result["content"] == [{"type": "text", "text": "after"}]
    assert fuzz_stdio.responses_to("in-batch") == []
    assert fuzz_stdio.invalid_lines == []


MCP_ERRORS: list[tuple[str, str, dict[str, Any], int]] = [
    ("unknown-method", "no/such/method", {}, -32601),
    ("unknown-tool", "tools/call", {"name": "nope", "arguments": {}}, -32602),
    ("arguments-array", "tools/call", {"name": "echo", "arguments": [1]}, -32602),
    ("arguments-string", "tools/call", {"name": "echo", "arguments": "x"}, -32602),
    ("name-number", "tools/call", {"name": 7, "arguments": {}}, -32602),
    ("name-missing", "tools/call", {"arguments": {}}, -32602),
    ("bad-cursor", "tools/list", {"cursor": "not-a-cursor"}, -32602),
    ("cursor-object", "tools/list", {"cursor": {"a": 1}}, -32602),
    ("uri-number", "resources/read", {"uri": 5}, -32602),
    ("prompt-arguments-array", "prompts/get", {"name": "greet", "arguments": ["x"]}, -32602),
    ("complete-without-ref", "completion/complete", {"argument": {"name": "name"}}, -32602),
]


@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_stdio_wrong_param_types_get_one_error_each(app_file: Path, era: str) -> None:
    module = fresh_app(app_file)
    huge = "h" * 3_000_000
    cases = [*MCP_ERRORS, ("huge-string-param", "no/such/method", {"blob": huge}, -32601)]
    async with MemoryStdio(module.server) as stdio:
        if era == "legacy":
            await stdio.initialize(LEGACY)
        for name, method, params, code in cases:
            request_id = f"{era}-{name}"
            stdio.request(method, params, request_id=request_id, modern=era == "modern")
            response = await stdio.response(request_id)
            assert response.get("error", {}).get("code") == code, (name, response)
            assert_valid(response, ERA_VERSIONS[era])
            assert len(stdio.responses_to(request_id)) == 1
        marker = stdio.request("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}}, modern=era == "modern")
        result = await stdio.result(marker)
        assert result["structuredContent"] == (3 if era == "modern" else {"result": 3})
        assert stdio.invalid_lines == []


async def _http_bad_frames(http: McpHttp, era: str, headers: dict[str, str], keep_serving: Any) -> list[str]:
    problems: list[str] = []
    version = ERA_VERSIONS[era]
    for bad in BAD:
        reply: Reply = await http.send(version=version, content=bad.frame, headers=headers)
        messages = reply.messages
        if reply.status != 400:
            problems.append(f"{bad.name}: HTTP {reply.status}, expected 400")
        if reply.content_type != "application/json" or len(messages) != 1:
            problems.append(f"{bad.name}: expected one JSON-RPC error body, got {reply.content_type} {messages}")
            continue
        error = messages[0]
        if error.get("error", {}).get("code") != bad.code or error.get("id") != bad.id:
            problems.append(f"{bad.name}: expected code {bad.code} id {bad.id!r}, got {error}")
        assert_valid(error, LEGACY)
        assert_valid(error, MODERN)
        if not await keep_serving():
            problems.append(f"{bad.name}: the server stopped serving")
    return problems


async def test_http_legacy_bad_bodies_get_400_and_one_error(mcp_http: ServeHttp, app_file: Path) -> None:
    module = fresh_app(app_file)
    http = await mcp_http(module.server)
    session = await Legacy(http).open()
    headers = {key: value for key, value in session.headers().items() if value is not None}

    async def keep_serving() -> bool:
        return (await session.request("ping")).status == 200

    problems = await _http_bad_frames(http, "legacy", headers, keep_serving)
    assert problems == []
    assert module.executed == [], "a rejected batch must not be executed"


async def test_http_modern_bad_bodies_get_400_and_one_error(mcp_http: ServeHttp, app_file: Path) -> None:
    module = fresh_app(app_file)
    http = await mcp_http(module.server)
    modern = Modern(http)
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "ping"}

    async def keep_serving() -> bool:
        return (await modern.request("server/discover")).status == 200

    problems = await _http_bad_frames(http, "modern", headers, keep_serving)
    assert problems == []
    assert module.executed == [], "a rejected batch must not be executed"


@pytest.mark.parametrize(
    "body",
    [
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "method": "notifications/unknown", "params": {"x": [1, {"y": None}]}},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "never-sent"}},
        {"jsonrpc": "2.0", "id": "not-asked", "result": {}},
        {"jsonrpc": "2.0", "id": "not-asked-either", "error": {"code": -1, "message": "no"}},
    ],
    ids=["initialized", "unknown-notification", "cancel-unknown", "response", "error-response"],
)
async def test_http_legacy_notifications_and_responses_are_202(mcp_http: ServeHttp, body: dict[str, Any]) -> None:
    # 2025-11-25 basic/transports, "Sending Messages to the Server" 4: 202 Accepted, no body.
    module_server = Server("fuzz-202")
    module_server.tool(lambda: 1, name="one")
    http = await mcp_http(module_server)
    session = await Legacy(http).open()
    reply = await http.send(version=LEGACY, body=body, headers=session.headers())
    assert reply.status == 202
    assert reply.messages == [] and reply.body_text == ""
    assert (await session.request("ping")).status == 200


async def test_http_modern_response_bodies_are_not_answered_with_a_message(mcp_http: ServeHttp) -> None:
    # 2026-07-28 streamable-http, "Sending Messages" 4: the client MUST NOT send responses; the
    # server answers no JSON-RPC message to one (202, or an HTTP error status), and keeps serving.
    server = Server("fuzz-modern-response")
    server.tool(lambda: 1, name="one")
    http = await mcp_http(server)
    for body in (
        {"jsonrpc": "2.0", "id": "r", "result": {}},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
    ):
        reply = await http.send(version=MODERN, body=body, headers={"MCP-Protocol-Version": MODERN})
        assert reply.status == 202 or 400 <= reply.status < 500, reply.status
        assert all("result" not in message for message in reply.messages)
    assert (await Modern(http).request("server/discover")).status == 200


@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_http_wrong_param_types_get_one_error_each(mcp_http: ServeHttp, app_file: Path, era: str) -> None:
    module = fresh_app(app_file)
    http = await mcp_http(module.server)
    client: Modern | Legacy = Modern(http) if era == "modern" else await Legacy(http).open()
    problems = []
    cases = [
        case
        for case in MCP_ERRORS
        if not (era == "modern" and case[0] in ("name-number", "name-missing", "uri-number"))
    ]
    cases.append(("huge-string-param", "no/such/method", {"blob": "h" * 3_000_000}, -32601))
    for name, method, params, code in cases:
        reply = await client.request(method, params)
        if len(reply.messages) != 1 or reply.message.get("error", {}).get("code") != code:
            problems.append(f"{name}: expected one error {code}, got HTTP {reply.status} {reply.messages}")
            continue
        if era == "modern":
            expected_status = 404 if code == -32601 else 200
            if reply.status != expected_status:
                problems.append(f"{name}: HTTP {reply.status}, expected {expected_status}")
        elif reply.status not in (200, 400) and not (code == -32601 and reply.status == 404):
            problems.append(f"{name}: HTTP {reply.status}")
    assert (await client.call_tool("add", {"a": 2, "b": 2})).status == 200
    assert problems == []


def test_arguments_nested_deeper_than_any_limit_get_an_is_error_result(fuzz_stdio: StdioClient) -> None:
    # Server(max_argument_depth=...) (64 by default) documents: "deeper arguments get an isError
    # result without reaching validation". That must hold at any depth: the request is valid
    # JSON-RPC whose id sits at depth 1, and 2026-07-28 basic/index "Error Responses" lets an
    # answer omit the id only when it "could not be read due a malformed request". An id-less
    # parse error leaves the client waiting for this id forever.
    for depth in (100, 300, 3000):
        value = "[" * depth + "]" * depth
        meta = json.dumps(modern_meta())
        frame = (
            f'{{"jsonrpc":"2.0","id":"deep-{depth}","method":"tools/call",'
            f'"params":{{"name":"echo","arguments":{{"value":{value}}},"_meta":{meta}}}}}'
        ).encode()
        mark = fuzz_stdio.snapshot()
        fuzz_stdio.send_raw(frame + b"\n")
        marker = fuzz_stdio.start_request("server/discover")
        fuzz_stdio.response(marker)
        answers = [m for m in fuzz_stdio.since(mark) if m.get("id") != marker]
        assert len(answers) == 1, answers
        answer = answers[0]
        assert answer.get("id") == f"deep-{depth}", f"arguments nested {depth} deep: no answer to the request: {answer}"
        assert answer["result"]["isError"] is True, answer
        assert "nested deeper than 64" in answer["result"]["content"][0]["text"]


def test_prompt_arguments_nested_beyond_the_parser_are_invalid_params(fuzz_stdio: StdioClient) -> None:
    # A prompt's bad arguments are a JSON-RPC error (-32602), with the request's id, not -32603.
    value = "[" * 3000 + "]" * 3000
    meta = json.dumps(modern_meta())
    frame = (
        f'{{"jsonrpc":"2.0","id":"deep-prompt","method":"prompts/get",'
        f'"params":{{"name":"greet","arguments":{{"name":{value}}},"_meta":{meta}}}}}'
    ).encode()
    mark = fuzz_stdio.snapshot()
    fuzz_stdio.send_raw(frame + b"\n")
    marker = fuzz_stdio.start_request("server/discover")
    fuzz_stdio.response(marker)
    (answer,) = [m for m in fuzz_stdio.since(mark) if m.get("id") != marker]
    assert answer.get("id") == "deep-prompt", answer
    assert answer["error"]["code"] == -32602, answer
    assert "nested too deeply" in answer["error"]["message"]


@pytest.mark.parametrize("version", ["2025-03-26", "2025-06-18", "2025-11-25"])
async def test_http_legacy_unknown_method_is_not_answered_404(
    mcp_http: ServeHttp, app_file: Path, version: str
) -> None:
    # Legacy Streamable HTTP gives 404 one meaning: the session is gone, and the client "MUST
    # start a new session by sending a new InitializeRequest" (2025-11-25 basic/transports,
    # "Session Management" 3-4; the same in 2025-03-26 and 2025-06-18). A -32601 for one
    # unknown method must not tell a client to throw its live session away. (The modern era's
    # 404 for -32601 is a different rule: 2026-07-28 streamable-http, "Protocol Version Header".)
    module = fresh_app(app_file)
    http = await mcp_http(module.server)
    session = await Legacy(http, version).open()
    reply = await session.request("no/such/method")
    assert reply.message["error"]["code"] == -32601
    assert reply.status != 404, "HTTP 404 on a live legacy session means 'session terminated'"
    assert (await session.request("tools/list")).status == 200
