"""Newline-delimited framing (``_framing.FrameSplitter``), the same however the bytes are cut.

A chunk that is exactly one whole line takes a path of its own (no copy into the buffer); every
other chunking goes through the buffer. Both must give the same frames: these feed one stream
line by line, byte by byte and in uneven pieces, and compare with the frames the stream holds.
"""

from __future__ import annotations

import random

import pytest

from toolkit._framing import FrameSplitter

MAX = 16


def expected(stream: bytes, max_bytes: int) -> list[bytes | None]:
    """The frames of ``stream`` by the rule: cut at each newline, a trailing ``\\r`` dropped, a line
    longer than ``max_bytes`` (its ``\\r`` counted) as ``None``; a last line without a newline is
    left to ``finish``."""
    frames: list[bytes | None] = []
    for line in stream.split(b"\n")[:-1]:
        frames.append(None if len(line) > max_bytes else line.removesuffix(b"\r"))
    return frames


def fed(chunks: list[bytes], max_bytes: int = MAX) -> list[bytes | None]:
    splitter = FrameSplitter(max_bytes)
    frames: list[bytes | None] = []
    for chunk in chunks:
        got = splitter.feed(chunk)
        assert all(frame is None or type(frame) is bytes for frame in got)
        frames.extend(got)
    return frames


LINES = [
    b'{"jsonrpc":"2.0","id":1}\n',
    b"\n",
    b"\r\n",
    b"x" * MAX + b"\n",  # as long as allowed
    b"y" * (MAX + 1) + b"\n",  # one over: None
    b"z" * (MAX - 1) + b"\r\n",  # with its \r, as long as allowed
    b"w" * MAX + b"\r\n",  # with its \r, one over: None
    b"abc\r\n",
    b"a\rb\n",  # a \r inside a line stays
]


@pytest.mark.parametrize("line", LINES)
def test_a_whole_line_alone_gives_what_the_buffer_gives(line: bytes) -> None:
    assert fed([line]) == fed([line[i : i + 1] for i in range(len(line))]) == expected(line, MAX)


def test_a_stream_gives_the_same_frames_however_it_is_cut() -> None:
    rng = random.Random(7)
    for _ in range(300):
        lines = [rng.choice(LINES) for _ in range(rng.randrange(1, 8))]
        stream = b"".join(lines)
        want = expected(stream, MAX)
        assert fed(lines) == want  # a line per chunk: the whole-line path each time
        assert fed([stream[i : i + 1] for i in range(len(stream))]) == want
        cuts = sorted(rng.sample(range(1, len(stream)), min(3, len(stream) - 1)))
        pieces = [stream[a:b] for a, b in zip([0, *cuts], [*cuts, len(stream)], strict=True)]
        assert fed(pieces) == want


def test_a_whole_line_after_a_partial_one_ends_the_partial_one() -> None:
    # The buffer holds the start of a line: the next chunk's newline ends that line, not a new one.
    assert fed([b'{"a":', b"1}\n"]) == [b'{"a":1}']
    assert fed([b"x" * MAX, b"x\n", b"ok\n"]) == [None, b"ok"]


def test_an_empty_chunk_gives_no_frame() -> None:
    assert fed([b""]) == []
    splitter = FrameSplitter(MAX)
    assert splitter.feed(b"") == []
    assert splitter.feed(b"last") == []
    assert splitter.finish() == [b"last"]


def test_a_line_too_long_is_not_kept_while_it_arrives() -> None:
    splitter = FrameSplitter(MAX)
    assert splitter.feed(b"x" * (MAX + 5)) == []
    assert splitter.feed(b"x" * 100) == []
    assert splitter.feed(b"\n") == [None]
    assert splitter.feed(b"next\n") == [b"next"]
