"""Big results, encoded in pieces: a response whose text would be megabytes is written a piece at
a time and never made whole (``Streamed``), and its JSON text fallback written from the value
(``JsonText``). ``_jsonrpc.encode_result`` decides which responses go this way.

A tool returning 10 MB of structured data sends it twice: as ``structuredContent`` and as the
JSON text of the fallback block. Encoded whole, the response is ~2x the value's JSON, built by
pydantic-core in a buffer that grows by doubling and then copied into ``bytes``, and copied once
more to add the stdio newline: ~4x the JSON at once, on top of the value and its text. In
pieces, a transport writes each while the next is made, and the response never exists whole.
The bytes are the same: pydantic-core's compact JSON of an array (an object, a string) is the
JSON of its parts with the commas, colons and quotes between them, and the escaping of a string
is per character. Below the threshold, the one ``to_json`` call is cheaper.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any, Final

import pydantic_core

STREAM_ABOVE: Final = 256 * 1024
"""A result is encoded in pieces when the text of its content blocks is longer than this (characters)."""

PIECE_BYTES: Final = 256 * 1024
"""About how much one piece of a streamed response holds."""

_FEW: Final = 16  # a container with no more members is encoded member by member


def text_length(result: dict[str, Any]) -> int:
    """The length of the text a ``CallToolResult``'s (``ReadResourceResult``'s) blocks carry
    (a ``JsonText`` counts as long: it is there because its value is big)."""
    blocks = result.get("content")
    if blocks is None:
        blocks = result.get("contents")
    if type(blocks) is not list:
        return 0
    length = 0
    for block in blocks:
        if type(block) is dict:
            text = block.get("text")
            if text is None:
                text = block.get("blob")
            if type(text) is str:
                length += len(text)
            elif type(text) is JsonText:
                return STREAM_ABOVE + 1
    return length


class JsonText:
    """Stands for the string ``to_json(value).decode()`` in a result only the encoder will see.

    The text fallback of a big structured value (``_compat.call_result(..., unseen=True)``): in
    pieces, it is written escaped a piece of ``value``'s JSON at a time, and never made whole.
    Only ``encode_result`` may be handed a result holding one (a middleware or an extension that
    reads the result gets the text itself).
    """

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def text(self) -> str:
        return _dump(self.value).decode()


class Streamed:
    """A response to encode in pieces (``Reply.pieces``), or whole when its ``body`` is asked for."""

    __slots__ = ("message",)

    def __init__(self, message: dict[str, Any]) -> None:
        self.message = message

    def encode(self) -> bytes:
        return pydantic_core.to_json(_texts_made(self.message), inf_nan_mode="null")

    def pieces(self) -> Iterator[bytes | memoryview]:
        return _coalesced(json_pieces(self.message))


def _texts_made(message: dict[str, Any]) -> dict[str, Any]:
    """``message`` with the ``JsonText`` of its result's blocks made into strings (copies, as needed)."""
    result = message["result"]
    blocks = result.get("content")
    if type(blocks) is not list or not any(
        type(block) is dict and type(block.get("text")) is JsonText for block in blocks
    ):
        return message
    made = [
        {**block, "text": block["text"].text()}
        if type(block) is dict and type(block.get("text")) is JsonText
        else block
        for block in blocks
    ]
    return {**message, "result": {**result, "content": made}}


def _dump(value: Any) -> bytes:
    return pydantic_core.to_json(value, inf_nan_mode="null")


def json_pieces(value: Any) -> Iterator[bytes | memoryview]:
    """Pieces whose concatenation is ``pydantic_core.to_json(value, inf_nan_mode="null")``.

    A long string is escaped a slice at a time; an array or object is encoded a run of members
    at a time, the run sized from the last one so that a piece holds about ``PIECE_BYTES`` (one
    member at a time, looked into, while members are bigger than that).
    """
    kind = type(value)
    if kind is str:
        if len(value) <= PIECE_BYTES:
            yield _dump(value)
            return
        yield b'"'
        for start in range(0, len(value), PIECE_BYTES):
            yield memoryview(_dump(value[start : start + PIECE_BYTES]))[1:-1]
        yield b'"'
    elif kind is list or kind is tuple:
        yield from _array_pieces(value)
    elif kind is dict:
        yield from _object_pieces(value)
    elif kind is JsonText:
        yield b'"'
        for piece in _coalesced(json_pieces(value.value)):  # each whole characters: valid UTF-8
            yield memoryview(_dump(str(piece, "utf-8")))[1:-1]
        yield b'"'
    else:
        yield _dump(value)


def _run_length(size: int, members: int) -> int:
    """How many members the next run takes, after a run of ``members`` made ``size`` bytes: as many
    as fit in a piece at that rate, at most twice as many (members may differ in size)."""
    return max(1, min(2 * members, PIECE_BYTES * members // max(size, 1)))


def _array_pieces(items: list[Any] | tuple[Any, ...]) -> Iterator[bytes | memoryview]:
    yield b"["
    count = len(items)
    index = 0
    run = 1 if count > _FEW else 0  # 0: member by member, looked into
    while index < count:
        if index:
            yield b","
        if run <= 1:
            size = 0
            for piece in json_pieces(items[index]):
                size += len(piece)
                yield piece
            index += 1
            if run:
                run = _run_length(size, 1)
        else:
            chunk = _dump(items[index : index + run])
            taken = min(run, count - index)
            index += taken
            yield memoryview(chunk)[1:-1]
            run = _run_length(len(chunk), taken)
    yield b"]"


def _object_pieces(members: dict[Any, Any]) -> Iterator[bytes | memoryview]:
    yield b"{"
    count = len(members)
    entries = iter(members.items())
    index = 0
    run = 1 if count > _FEW else 0
    while index < count:
        if index:
            yield b","
        if run <= 1:
            key, value = next(entries)
            size = 0
            if type(key) is str:
                yield _dump(key) + b":"
                for piece in json_pieces(value):
                    size += len(piece)
                    yield piece
            else:  # pydantic-core's own rule for a key that is not a string (1 -> "1")
                piece = memoryview(_dump({key: value}))[1:-1]
                size = len(piece)
                yield piece
            index += 1
            if run:
                run = _run_length(size, 1)
        else:
            part = dict(itertools.islice(entries, run))
            chunk = _dump(part)
            index += len(part)
            yield memoryview(chunk)[1:-1]
            run = _run_length(len(chunk), len(part))
    yield b"}"


def _coalesced(pieces: Iterator[bytes | memoryview]) -> Iterator[bytes | memoryview]:
    """``pieces`` with the small ones joined, so that a writer is handed few, each about ``PIECE_BYTES``."""
    pending = bytearray()
    for piece in pieces:
        if len(piece) >= PIECE_BYTES // 2:
            if pending:
                yield bytes(pending)
                pending.clear()
            yield piece
            continue
        pending += piece
        if len(pending) >= PIECE_BYTES:
            yield bytes(pending)
            pending.clear()
    if pending:
        yield bytes(pending)
