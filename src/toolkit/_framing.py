"""Newline-delimited JSON-RPC framing (spec: transports/stdio), for both sides of a stdio pipe.

The server's stdio transport reads its client's frames with it, and a client reads its server
child's frames with the same splitter: one rule for where a message ends and how long it may be.
"""

from __future__ import annotations


class FrameSplitter:
    """Cuts a byte stream into newline-delimited frames.

    ``feed`` returns the complete frames in a chunk (without their newline or a trailing
    ``\r``); a frame longer than ``max_bytes`` comes out as ``None`` once its newline
    arrives, and its bytes are not kept meanwhile.
    """

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._buffer = bytearray()
        self._discarding = False

    def feed(self, chunk: bytes) -> list[bytes | None]:
        if not self._buffer and not self._discarding:
            newline = chunk.find(b"\n")
            if newline >= 0 and newline == len(chunk) - 1:  # one whole line, the common case: no copy into the buffer
                if newline > self.max_bytes:
                    return [None]
                return [chunk[: newline - 1] if chunk.endswith(b"\r\n") else chunk[:newline]]
        frames: list[bytes | None] = []
        start = 0
        while True:
            newline = chunk.find(b"\n", start)
            if newline < 0:
                if not self._discarding:
                    self._buffer += chunk[start:]
                    if len(self._buffer) > self.max_bytes:
                        self._buffer.clear()
                        self._discarding = True
                return frames
            if self._discarding:
                self._discarding = False
                frames.append(None)
            else:
                self._buffer += chunk[start:newline]
                if len(self._buffer) > self.max_bytes:
                    frames.append(None)
                else:
                    frames.append(bytes(self._buffer[:-1] if self._buffer.endswith(b"\r") else self._buffer))
            self._buffer.clear()
            start = newline + 1

    def finish(self) -> list[bytes | None]:
        """The last frame, when the stream ends without a newline."""
        if self._discarding:
            self._discarding = False
            return [None]
        if self._buffer:
            frame = bytes(self._buffer)
            self._buffer.clear()
            return [frame]
        return []
