"""Resumable SSE streams for legacy Streamable HTTP sessions (2025-03-26 … 2025-11-25).

With an event store, every message sent on a request's SSE stream gets an event id and is
kept, so a client whose connection dropped (or was closed by the server to make it poll)
can ``GET`` with ``Last-Event-ID`` and receive the rest, the response included. The
modern era has no resumability (spec 2026-07-28: "Resumable SSE streams via
Last-Event-ID are not supported").
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from typing import Any, Final

_SEPARATOR: Final = "_"


@dataclass(slots=True)
class StoredStream:
    events: deque[tuple[int, str, bytes]] = field(default_factory=deque)
    """(sequence number, event id, data), oldest first; the oldest go first when it is full."""
    next_seq: int = 0
    finished: bool = False
    touched: float = field(default_factory=time.monotonic)
    changed: asyncio.Event = field(default_factory=asyncio.Event)


class EventStore:
    """Keeps the events of recent SSE streams in memory so they can be replayed.

    Subclass and override ``append``/``finish``/``stream_of``/``events_after`` to keep them
    elsewhere. Streams are forgotten ``ttl_seconds`` after their last event, and at most
    ``max_streams`` are kept, oldest dropped first.
    """

    def __init__(self, *, max_streams: int = 1000, max_events_per_stream: int = 1000, ttl_seconds: float = 300.0):
        self.max_streams = max_streams
        self.max_events_per_stream = max_events_per_stream
        self.ttl_seconds = ttl_seconds
        self._streams: OrderedDict[str, StoredStream] = OrderedDict()

    def _stream(self, stream_id: str) -> StoredStream:
        stream = self._streams.get(stream_id)
        if stream is None:
            self._expire()
            stream = self._streams[stream_id] = StoredStream()
            while len(self._streams) > self.max_streams:
                self._streams.popitem(last=False)
        return stream

    def _expire(self) -> None:
        horizon = time.monotonic() - self.ttl_seconds
        for stream_id in [key for key, stream in self._streams.items() if stream.touched < horizon]:
            del self._streams[stream_id]

    async def append(self, stream_id: str, data: bytes) -> str:
        """Store one event (``data`` is the JSON of a message, empty for a priming event); its id.

        A stream longer than ``max_events_per_stream`` forgets its oldest events, never its
        newest: the last one is the response the client is waiting for.
        """
        stream = self._stream(stream_id)
        seq = stream.next_seq
        stream.next_seq += 1
        event_id = f"{stream_id}{_SEPARATOR}{seq}"
        stream.events.append((seq, event_id, data))
        while len(stream.events) > self.max_events_per_stream:
            stream.events.popleft()
        stream.touched = time.monotonic()
        stream.changed.set()
        stream.changed = asyncio.Event()
        return event_id

    async def finish(self, stream_id: str) -> None:
        """The stream's last event (the response) has been stored."""
        stream = self._stream(stream_id)
        stream.finished = True
        stream.changed.set()

    @staticmethod
    def stream_of(event_id: str) -> str | None:
        stream_id, separator, _ = event_id.rpartition(_SEPARATOR)
        return stream_id if separator else None

    async def events_after(self, event_id: str) -> tuple[list[tuple[str, bytes]], bool, Any] | None:
        """Events after ``event_id`` on its stream, whether the stream is finished, and a waiter.

        ``None`` if the event id is unknown. The waiter (an ``asyncio.Event``) is set when
        more events arrive. After an event the store has since forgotten, everything it still
        has comes back.
        """
        stream_id, _, seq_text = event_id.rpartition(_SEPARATOR)
        stream = self._streams.get(stream_id)
        if stream is None or not seq_text.isdigit() or int(seq_text) >= stream.next_seq:
            return None
        seq = int(seq_text)
        later = [(known, data) for number, known, data in stream.events if number > seq]
        return later, stream.finished, stream.changed
