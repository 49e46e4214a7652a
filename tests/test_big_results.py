"""Big results encoded in pieces (issue #38): the same bytes as one ``to_json``, never held whole.

A result whose content blocks carry more than ``STREAM_ABOVE`` characters of text is encoded a
piece at a time (``_json_pieces.Streamed``): the stdio transport writes each piece while the next is
made; HTTP reads ``Reply.body``, the whole encoding. Every test compares bytes with what one
``pydantic_core.to_json`` of the whole message gives (the encoding before pieces), in both eras.
"""

from __future__ import annotations

import asyncio
import math
import os
from typing import Any

import pydantic_core
import pytest
from pydantic import BaseModel
from tests.support.memory_stdio import MemoryStdio

from toolkit import Context, Server
from toolkit._compat import call_result
from toolkit._compat.tools import ToolShape
from toolkit._content import CallOutcome
from toolkit._json_pieces import PIECE_BYTES, STREAM_ABOVE, Streamed, json_pieces
from toolkit._jsonrpc import Reply, encode_result
from toolkit._transports.stdio import _WRITE_CHUNK, StdioServer, _pipe_writer
from toolkit.middleware import CallNext, McpRequest, Middleware

MODERN = "2026-07-28"
LEGACY_ERAS = ["2025-11-25", "2025-06-18", "2024-11-05"]


class Model(BaseModel):
    id: int
    name: str
    price: float
    tags: list[str]
    description: str


def models(count: int) -> list[Model]:
    return [
        Model(id=i, name=f'model-{i} "é" \\ 漢', price=1.25 * i, tags=["a", f"t{i % 7}"], description="x" * 90)
        for i in range(count)
    ]


BIG = 4_000  # ~600 KB of JSON: over STREAM_ABOVE
SMALL = 3


def whole(value: Any) -> bytes:
    """The encoding before pieces: one ``to_json`` of the whole value."""
    return pydantic_core.to_json(value, inf_nan_mode="null")


def joined(reply: Reply) -> bytes:
    return b"".join(bytes(piece) for piece in reply.pieces())


# --- the pieces --------------------------------------------------------------------------------

VALUES: list[Any] = [
    None,
    0,
    "",
    [],
    {},
    (),
    {"k": {}},
    [[[]]],
    "x" * (3 * PIECE_BYTES + 17),
    'a"b\\c\n\x01\x7f\u2028é漢😀</script>' * 40_000,
    [float("nan"), float("inf"), -0.0, 1e300, True, None, "s"] * 20_000,
    {str(i): [i, f"v{i}"] for i in range(50_000)},
    {1: "one", 2.5: "two and a half", None: "none", "s": "str"} | {f"k{i}": i for i in range(40)},
    tuple(range(70_000)),
    [1, "x" * 600_000, {"deep": [["y" * 300_000]]}, 2] * 3,
    [{"id": i, "tags": ["a"] * (i % 50), "text": "é" * (i % 3000)} for i in range(3_000)],
]


@pytest.mark.parametrize("value", VALUES, ids=range(len(VALUES)))
def test_the_pieces_of_a_value_are_its_whole_encoding(value: Any) -> None:
    assert b"".join(bytes(piece) for piece in json_pieces(value)) == whole(value)
    streamed = Reply(Streamed({"jsonrpc": "2.0", "id": 1, "result": {"v": value}}))
    assert joined(streamed) == whole({"jsonrpc": "2.0", "id": 1, "result": {"v": value}})


def test_no_piece_holds_much_of_a_big_response() -> None:
    value = [model.model_dump(mode="json") for model in models(20_000)]
    result = {"content": [{"type": "text", "text": whole(value).decode()}], "structuredContent": value}
    message = {"jsonrpc": "2.0", "id": 1, "result": result}
    reply = Reply(Streamed(message))
    sizes = [len(piece) for piece in reply.pieces()]
    assert sum(sizes) == len(whole(message))
    assert max(sizes) <= 2 * PIECE_BYTES < sum(sizes) // 8


def test_a_string_is_escaped_a_slice_at_a_time() -> None:
    text = '\n"é' * PIECE_BYTES
    pieces = [bytes(piece) for piece in json_pieces(text)]
    assert len(pieces) > 3
    assert b"".join(pieces) == whole(text)


# --- which results stream ----------------------------------------------------------------------


def outcome_result(value: Any, version: str, *, wrapped: bool = True) -> dict[str, Any]:
    """The ``CallToolResult`` the engine builds for a tool returning ``value`` (its natural JSON)."""
    result = call_result(CallOutcome(None, value), ToolShape({}, wrapped=wrapped), version)
    if version == MODERN:
        result["resultType"] = "complete"
        result["_meta"] = {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}
    return result


@pytest.mark.parametrize("version", [MODERN, *LEGACY_ERAS])
@pytest.mark.parametrize("count", [SMALL, BIG])
def test_the_reply_has_the_bytes_one_to_json_gives(version: str, count: int) -> None:
    value = [model.model_dump(mode="json") for model in models(count)]
    result = outcome_result(value, version)
    old = whole({"jsonrpc": "2.0", "id": "r-1", "result": result})
    encoded = encode_result("r-1", result)
    if count == BIG:
        assert isinstance(encoded, Streamed)
        assert len(result["content"][0]["text"]) > STREAM_ABOVE
        assert joined(Reply(encoded)) == old
        assert Reply(encoded).body == old  # HTTP, or anyone reading the body
    else:
        assert encoded == old, "a small result is encoded as before, in one call"
        assert joined(Reply(encoded)) == old


def test_a_small_result_is_not_streamed() -> None:
    reply = Reply(encode_result(1, outcome_result([1, 2, 3], MODERN)))
    assert not reply.streamed
    assert list(reply.pieces()) == [reply.body]


def test_reading_the_body_of_a_streamed_reply_encodes_it_once() -> None:
    value = [model.model_dump(mode="json") for model in models(BIG)]
    reply = Reply(encode_result(9, outcome_result(value, MODERN)))
    assert reply.streamed
    body = reply.body
    assert not reply.streamed and reply.body is body
    assert joined(reply) == body


def test_a_big_text_block_streams_without_structured_content() -> None:
    result = {"content": [{"type": "text", "text": "line\n" * 100_000}], "isError": False}
    encoded = encode_result(3, result)
    assert isinstance(encoded, Streamed)
    assert joined(Reply(encoded)) == whole({"jsonrpc": "2.0", "id": 3, "result": result})


# --- on the wire: stdio --------------------------------------------------------------------------


def big_server() -> Server:
    server = Server("big")
    big, small = models(BIG), models(SMALL)

    @server.tool
    def get_big() -> list[Model]:
        return big

    @server.tool
    def get_small() -> list[Model]:
        return small

    @server.tool
    def get_one() -> Model:
        return big[0]

    return server


def expected_line(line: bytes) -> bytes:
    """What one ``to_json`` of the message on ``line`` gives (floats and strings round-trip exactly)."""
    return whole(pydantic_core.from_json(line))


@pytest.mark.parametrize("version", [MODERN, *LEGACY_ERAS])
async def test_stdio_writes_big_and_small_results_as_one_to_json_would(version: str) -> None:
    server = big_server()
    async with MemoryStdio(server, max_message_bytes=1024 * 1024) as stdio:
        modern = version == MODERN
        if not modern:
            await stdio.initialize(version)
        ids = [stdio.call(name, modern=modern) for name in ("get_big", "get_small", "get_one")]
        results = [await stdio.result(request_id) for request_id in ids]
    lines = {message.get("id"): line for message, line in zip(stdio.messages, stdio.lines, strict=True)}
    assert stdio.invalid_lines == []
    for request_id, result, count in zip(ids, results, (BIG, SMALL, 1), strict=True):
        line = lines[request_id]
        assert line == expected_line(line)
        value = pydantic_core.from_json(result["content"][0]["text"])
        assert len(value) == count if count > 1 else value["id"] == 0
        if version in ("2025-11-25", "2025-06-18"):
            assert result["structuredContent"] == ({"result": value} if count > 1 else value)
        elif modern:
            assert result["structuredContent"] == value
        else:
            assert "structuredContent" not in result
    big_line = lines[ids[0]]
    assert len(big_line) > 2 * STREAM_ABOVE


@pytest.mark.parametrize("version", [MODERN, "2025-11-25"])
async def test_stdio_bytes_are_those_the_engine_encodes_whole(version: str) -> None:
    """The line written in pieces is byte for byte ``Reply.body`` of the same call (the old encoding)."""
    server = big_server()
    async with MemoryStdio(server, max_message_bytes=1024 * 1024) as stdio:
        modern = version == MODERN
        if not modern:
            await stdio.initialize(version)
        first = stdio.call("get_big", modern=modern, request_id="same")
        await stdio.response(first)
    (line,) = [line for line in stdio.lines if line.startswith(b'{"jsonrpc":"2.0","id":"same"')]
    value = [model.model_dump(mode="json") for model in models(BIG)]
    result = pydantic_core.from_json(line)["result"]
    rebuilt = outcome_result(value, version)
    if modern:
        rebuilt["_meta"] = result["_meta"]
    assert rebuilt == result
    assert Reply(encode_result("same", rebuilt)).body == line


class SlowPipe:
    """A write that yields to the loop before taking each piece, as a full pipe makes it."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.writes = 0

    async def write(self, data: bytes | memoryview) -> None:
        await asyncio.sleep(0)
        self.writes += 1
        self.data += data


async def test_nothing_lands_between_two_pieces_of_a_big_reply() -> None:
    server = big_server()

    @server.tool
    async def chatty(ctx: Context) -> str:
        for step in range(20):
            await ctx.report_progress(step, 20)
            await asyncio.sleep(0)
        return "done"

    pipe = SlowPipe()
    stdio = StdioServer(server.engine, pipe.write, running=server.running)
    chunks: asyncio.Queue[bytes] = asyncio.Queue()

    async def read(size: int) -> bytes:
        return await chunks.get()

    serving = asyncio.create_task(stdio.serve(read))
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
    frames = [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "get_big", "_meta": meta}},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "chatty", "_meta": {**meta, "progressToken": "p"}},
        },
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "get_small", "_meta": meta}},
    ]
    chunks.put_nowait(b"".join(whole(frame) + b"\n" for frame in frames))
    chunks.put_nowait(b"")
    await asyncio.wait_for(serving, 30)
    lines = bytes(pipe.data).split(b"\n")
    assert lines[-1] == b""
    messages = [pydantic_core.from_json(line) for line in lines[:-1]]
    assert {message.get("id") for message in messages} >= {1, 2, 3}
    assert pipe.writes > len(messages), "the big reply went out in pieces"
    big = next(line for line in lines if line.startswith(b'{"jsonrpc":"2.0","id":1,'))
    assert big == expected_line(big)


async def _lines_from(read_fd: int, count: int) -> list[bytes]:
    """The first ``count`` lines written to the pipe ``read_fd``, read as they come."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=16 * 1024 * 1024)
    transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(read_fd, "rb", buffering=0)
    )
    try:
        return [(await reader.readline()).rstrip(b"\n") for _ in range(count)]
    finally:
        transport.close()


@pytest.mark.parametrize("size", [3 * _WRITE_CHUNK, _WRITE_CHUNK, _WRITE_CHUNK - 1])
@pytest.mark.parametrize("how", ["notification", "reply"])
async def test_a_message_written_in_pieces_is_written_whole_though_its_sender_is_cancelled(how: str, size: int) -> None:
    # Nobody reads the pipe at first: it fills, and the sender waits on a piece's drain. Cancelled
    # there (its request was), the rest of its line must still go out, or every message after it
    # is garbage. A message of _WRITE_CHUNK bytes is two pieces with its newline (the second the
    # newline alone); one byte less, one piece.
    server = big_server()
    read_fd, write_fd = os.pipe()
    try:
        write, close = await _pipe_writer(write_fd)
    finally:
        os.close(write_fd)  # the writer holds a duplicate
    stdio = StdioServer(server.engine, write, running=server.running)
    data = "x" * (size - len(message("")))
    if how == "notification":
        sending = asyncio.create_task(stdio.send(pydantic_core.from_json(message(data))))
    else:
        sending = asyncio.create_task(stdio._finish(Reply(message(data))))
    try:
        for _ in range(10):  # to its first drain: the pipe holds 64 KiB
            await asyncio.sleep(0)
        assert not sending.done()
        sending.cancel()
        with pytest.raises(asyncio.CancelledError):
            await sending
        reading = asyncio.create_task(_lines_from(read_fd, 2))
        await stdio.send(pydantic_core.from_json(message("after")))
        await stdio.send(pydantic_core.from_json(message("after")))  # a line cut short runs into this one
        first, second = await reading
    finally:
        close()
    assert len(first) == size
    assert first == message(data)
    assert second == message("after")


def message(data: str) -> bytes:
    """A log notification carrying ``data``, as the stdio transport writes it (without its newline)."""
    return b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"%s"}}' % (data.encode())


async def test_a_result_that_fails_to_encode_part_way_gets_an_internal_error() -> None:
    server = big_server()
    pipe = SlowPipe()
    stdio = StdioServer(server.engine, pipe.write, running=server.running)
    result = {"content": [{"type": "text", "text": "x" * (2 * STREAM_ABOVE)}], "structuredContent": [object()]}
    encoded = encode_result(5, result)
    assert isinstance(encoded, Streamed)
    await stdio._finish(Reply(encoded))
    broken, error, end = bytes(pipe.data).split(b"\n")
    assert broken.startswith(b'{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"xxx')
    assert pydantic_core.from_json(error) == {
        "jsonrpc": "2.0",
        "id": 5,
        "error": {"code": -32603, "message": "Internal error"},
    }
    assert end == b""


def test_nan_in_a_streamed_result_is_null_as_before() -> None:
    value = [{"x": math.nan, "y": math.inf, "i": i} for i in range(30_000)]
    result = outcome_result(value, MODERN)
    encoded = encode_result(1, result)
    assert isinstance(encoded, Streamed)
    assert joined(Reply(encoded)) == whole({"jsonrpc": "2.0", "id": 1, "result": result})


# --- a text fallback nobody but the encoder reads (``call_result(..., unseen=True)``) -------------


class Page(BaseModel):
    total: int
    items: list[Model]


def natural(value: Any) -> Any:
    return [m.model_dump(mode="json") for m in value] if isinstance(value, list) else value.model_dump(mode="json")


@pytest.mark.parametrize("version", [MODERN, *LEGACY_ERAS])
@pytest.mark.parametrize("shape", ["list", "page", "str"])
def test_an_unseen_text_is_written_from_the_value_with_the_same_bytes(version: str, shape: str) -> None:
    value: Any = {
        "list": natural(models(BIG)),
        "page": {"total": BIG, "items": natural(models(BIG))},
        "str": 'é"\\\n' * STREAM_ABOVE,
    }[shape]
    seen = outcome_result(value, version, wrapped=shape != "page")
    unseen = call_result(CallOutcome(None, value), ToolShape({}, wrapped=shape != "page"), version, unseen=True)
    if version == MODERN:
        unseen["resultType"] = "complete"
        unseen["_meta"] = seen["_meta"]
    assert type(unseen["content"][0]["text"]).__name__ == "JsonText", "the text is not made"
    old = whole({"jsonrpc": "2.0", "id": 4, "result": seen})
    encoded = encode_result(4, unseen)
    assert isinstance(encoded, Streamed)
    assert joined(Reply(encoded)) == old
    assert Reply(encode_result(4, unseen)).body == old, "HTTP (the body) gets the text made"
    assert unseen["content"][0]["text"].text() == seen["content"][0]["text"]


@pytest.mark.parametrize("value", [[1, 2, 3], {"a": 1}, "short", 42, None, {"items": list(range(100))}])
def test_an_unseen_small_value_gets_its_text_at_once(value: Any) -> None:
    shape = ToolShape({}, wrapped=True)
    unseen = call_result(CallOutcome(None, value), shape, MODERN, unseen=True)
    assert unseen == call_result(CallOutcome(None, value), shape, MODERN)
    assert type(unseen["content"][0]["text"]) is str


def test_a_seen_result_always_carries_its_text() -> None:
    value = natural(models(BIG))
    result = call_result(CallOutcome(None, value), ToolShape({}, wrapped=True), MODERN)
    assert type(result["content"][0]["text"]) is str
    assert result["content"][0]["text"] == whole(value).decode()


class TextReader(Middleware):
    """Reads every ``tools/call`` result's text as a middleware may (what it sees must be the text)."""

    def __init__(self) -> None:
        self.texts: list[Any] = []

    async def on_request(self, request: McpRequest, call_next: CallNext[dict[str, Any]]) -> dict[str, Any]:
        result = await call_next(request)
        if request.method == "tools/call":
            self.texts.append(result["content"][0]["text"])
        return result


@pytest.mark.parametrize("version", [MODERN, "2025-11-25"])
async def test_a_middleware_reads_a_big_results_text_and_the_bytes_stay_the_same(version: str) -> None:
    server = big_server()
    reader = TextReader()
    server.add_middleware(reader)
    async with MemoryStdio(server, max_message_bytes=1024 * 1024) as stdio:
        modern = version == MODERN
        if not modern:
            await stdio.initialize(version)
        request_id = stdio.call("get_big", modern=modern)
        result = await stdio.result(request_id)
    (text,) = reader.texts
    assert type(text) is str and text == result["content"][0]["text"]
    assert pydantic_core.from_json(text) == natural(models(BIG))
    (line,) = [
        line for message, line in zip(stdio.messages, stdio.lines, strict=True) if message.get("id") == request_id
    ]
    assert line == expected_line(line)


async def test_a_cancellation_while_a_big_reply_is_written_does_not_cut_its_line() -> None:
    server = big_server()
    pipe = SlowPipe()
    stdio = StdioServer(server.engine, pipe.write, running=server.running)
    result = outcome_result(natural(models(BIG)), MODERN)
    finishing = asyncio.create_task(stdio._finish(Reply(encode_result(7, result))))
    async with asyncio.timeout(10):  # a hang guard only
        while pipe.writes < 2:
            await asyncio.sleep(0)
    finishing.cancel()  # the client's notifications/cancelled, arriving as the answer goes out
    with pytest.raises(asyncio.CancelledError):
        await finishing
    await stdio._finish(Reply(encode_result(8, outcome_result([1], MODERN))))  # waits for the big one
    await stdio.lifecycle.drain()
    big, small, end = bytes(pipe.data).split(b"\n")
    assert big == whole({"jsonrpc": "2.0", "id": 7, "result": result})
    assert pydantic_core.from_json(small)["id"] == 8
    assert end == b""


@pytest.mark.parametrize("middleware", [False, True])
async def test_without_middleware_a_big_values_text_is_never_made_whole(
    middleware: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The engine's plain path (no middleware, no extension around the call) leaves a big value's
    text fallback to the encoder; with a middleware, which may read it, it is one ``str`` as before."""
    from toolkit._compat import tools as compat_tools

    made: list[int] = []
    original = compat_tools.json_text

    def counting(value: Any) -> str:
        text = original(value)
        made.append(len(text))
        return text

    monkeypatch.setattr(compat_tools, "json_text", counting)
    server = big_server()
    if middleware:
        server.add_middleware(TextReader())
    async with MemoryStdio(server, max_message_bytes=1024 * 1024) as stdio:
        result = await stdio.result(stdio.call("get_big", modern=True))
    assert pydantic_core.from_json(result["content"][0]["text"]) == natural(models(BIG))
    big_texts = [size for size in made if size > STREAM_ABOVE]
    assert big_texts == ([len(result["content"][0]["text"])] if middleware else [])
