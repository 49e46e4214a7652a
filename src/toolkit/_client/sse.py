"""Server-Sent Events, read incrementally: the event stream format of the WHATWG HTML standard (§9.2.6).

A Streamable HTTP server answers a request with an SSE stream, and a legacy client reads its
session's GET stream the same way. ``SseParser`` turns the bytes as they arrive into events:
lines end with CRLF, LF or CR (a CR at the end of one chunk and an LF at the start of the next
are one line end); ``event``, ``data`` (several lines join with LF), ``id`` and ``retry`` are the
fields; a line starting with a colon is a comment (a keep-alive); an event is dispatched at a
blank line, and an unfinished one at the end of the stream is dropped. ``last_event_id`` and
``retry`` keep the last values the server sent, for a client that reconnects with
``Last-Event-ID`` after ``retry`` milliseconds (2025-11-25 transports, "Resumability").

A server is untrusted: a line or an event's data longer than ``max_bytes`` raises
``EventTooLarge`` as soon as it is seen, and its bytes are not kept.
"""

from __future__ import annotations

from typing import Final

_BOM: Final = b"\xef\xbb\xbf"
_LINE_OVERHEAD: Final = 64
"""Room on a line for its field name and whatever else a line carries beside the data."""


class EventTooLarge(ValueError):
    """An SSE line or event over the size limit (the message says which limit)."""


class SseEvent:
    """One dispatched event: its type (``"message"`` when the server named none), its data, its id."""

    __slots__ = ("data", "event", "id")

    def __init__(self, event: str, data: bytes, id: str | None) -> None:
        self.event = event
        self.data = data
        self.id = id

    def __repr__(self) -> str:
        return f"SseEvent(event={self.event!r}, data={self.data[:80]!r}, id={self.id!r})"


class SseParser:
    """Cuts an SSE byte stream into events; ``feed`` each chunk as it arrives."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.last_event_id: str | None = None
        """The last ``id`` the server sent (None until it sent one): what ``Last-Event-ID`` resumes from."""
        self.retry: int | None = None
        """The last ``retry`` the server sent, in milliseconds: how long to wait before reconnecting."""
        self._pending: list[bytes] = []
        self._pending_size = 0
        self._started = False
        self._after_cr = False
        self._event = ""
        self._data: list[bytes] = []
        self._size = 0

    def feed(self, chunk: bytes) -> list[SseEvent]:
        """The events ``chunk`` completes (an event whose data is empty is not dispatched: it carries no message)."""
        if not self._started:
            head = b"".join(self._pending) + chunk
            if len(head) < len(_BOM) and _BOM.startswith(head):
                self._pending = [head]
                return []
            self._started = True
            self._pending, self._pending_size = [], 0
            chunk = head.removeprefix(_BOM)
        if self._after_cr:
            self._after_cr = False
            chunk = chunk.removeprefix(b"\n")  # the LF of a CRLF split across two chunks
        if b"\n" not in chunk and b"\r" not in chunk:  # the middle of a line: keep it, joined once it ends
            self._pending_size += len(chunk)
            if self._pending_size > self.max_bytes + _LINE_OVERHEAD:
                self._pending, self._pending_size = [], 0
                raise EventTooLarge(f"an SSE line over {self.max_bytes} bytes")
            if chunk:
                self._pending.append(chunk)
            return []
        if self._pending:
            chunk = b"".join(self._pending) + chunk
            self._pending, self._pending_size = [], 0
        lines = chunk.splitlines(keepends=True)
        last = lines[-1]
        if last.endswith((b"\n", b"\r")):
            self._after_cr = last.endswith(b"\r")
        else:
            lines.pop()
            self._pending, self._pending_size = [last], len(last)
        events: list[SseEvent] = []
        for line in lines:
            event = self._line(line.rstrip(b"\r\n"))
            if event is not None:
                events.append(event)
        if self._pending_size > self.max_bytes + _LINE_OVERHEAD:
            self._pending, self._pending_size = [], 0
            raise EventTooLarge(f"an SSE line over {self.max_bytes} bytes")
        return events

    def _line(self, line: bytes) -> SseEvent | None:
        if not line:
            return self._dispatch()
        if line.startswith(b":"):
            return None  # a comment: a keep-alive
        name, colon, value = line.partition(b":")
        if colon and value.startswith(b" "):
            value = value[1:]
        if name == b"data":
            self._size += len(value) + 1
            if self._size > self.max_bytes:
                self._reset()
                raise EventTooLarge(f"an SSE event over {self.max_bytes} bytes")
            self._data.append(value)
        elif name == b"event":
            self._event = value.decode("utf-8", "replace")
        elif name == b"id":
            if b"\0" not in value:  # the standard ignores an id with NUL
                self.last_event_id = value.decode("utf-8", "replace")
        elif name == b"retry" and value.isdigit():
            self.retry = int(value)
        return None

    def _dispatch(self) -> SseEvent | None:
        data = b"\n".join(self._data)
        if not data:
            self._reset()
            return None
        event = SseEvent(self._event or "message", data, self.last_event_id)
        self._reset()
        return event

    def _reset(self) -> None:
        self._event = ""
        self._data = []
        self._size = 0
