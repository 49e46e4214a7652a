"""Resumable SSE streams for legacy Streamable HTTP sessions (2025-03-26 … 2025-11-25).

With an event store, every message sent on a request's SSE stream gets an event id and is
kept, so a client whose connection dropped (or was closed by the server to make it poll)
can ``GET`` with ``Last-Event-ID`` and receive the rest, the response included. The
modern era has no resumability (spec 2026-07-28: "Resumable SSE streams via
Last-Event-ID are not supported").

``EventStore`` keeps the events in this process's memory; ``toolkit.stores.RedisStore``
provides one on Redis Streams that every replica reads.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict, deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Final

from ._types import RequestId

SEPARATOR: Final = "_"


@dataclass(slots=True)
class StoredStream:
    session_id: str
    request_id: RequestId
    events: deque[tuple[int, str, bytes]] = field(default_factory=deque)
    """(sequence number, event id, data), oldest first; the oldest go first when it is full."""
    next_seq: int = 0
    finished: bool = False
    touched: float = field(default_factory=time.monotonic)
    changed: asyncio.Event = field(default_factory=asyncio.Event)


class EventStore:
    """Keeps the events of recent SSE streams in memory so they can be replayed.

    Streams are forgotten ``ttl_seconds`` after their last event, and at most
    ``max_streams`` are kept, oldest dropped first. A store of your own implements ``open``,
    ``append``, ``finish``, ``owner`` and ``follow``; ``owner`` must answer ``None`` for an
    event id it never issued (clients send them in ``Last-Event-ID``).
    """

    def __init__(self, *, max_streams: int = 1000, max_events_per_stream: int = 1000, ttl_seconds: float = 300.0):
        self.max_streams = max_streams
        self.max_events_per_stream = max_events_per_stream
        self.ttl_seconds = ttl_seconds
        self._streams: OrderedDict[str, StoredStream] = OrderedDict()

    def _expire(self) -> None:
        horizon = time.monotonic() - self.ttl_seconds
        for stream_id in [key for key, stream in self._streams.items() if stream.touched < horizon]:
            del self._streams[stream_id]

    def _stream(self, stream_id: str) -> StoredStream:
        stream = self._streams.get(stream_id)
        if stream is None:
            raise KeyError(f"no open event stream {stream_id!r}: call open() first")
        return stream

    async def open(self, stream_id: str, *, session_id: str, request_id: RequestId) -> str:
        """Start a stream for one request of ``session_id``; the id of its first (priming, empty) event."""
        self._expire()
        self._streams[stream_id] = StoredStream(session_id, request_id)
        while len(self._streams) > self.max_streams:
            self._streams.popitem(last=False)
        return await self.append(stream_id, b"")

    async def append(self, stream_id: str, data: bytes) -> str:
        """Store one event (``data`` is the JSON of a message); its id.

        A stream longer than ``max_events_per_stream`` forgets its oldest events, never its
        newest: the last one is the response the client is waiting for.
        """
        stream = self._stream(stream_id)
        seq = stream.next_seq
        stream.next_seq += 1
        event_id = f"{stream_id}{SEPARATOR}{seq}"
        stream.events.append((seq, event_id, data))
        while len(stream.events) > self.max_events_per_stream:
            stream.events.popleft()
        stream.touched = time.monotonic()
        stream.changed.set()
        stream.changed = asyncio.Event()
        return event_id

    async def finish(self, stream_id: str, data: bytes | None = None) -> str | None:
        """Store the stream's last event (the response; ``None`` when there is none) and end it; its id."""
        event_id = await self.append(stream_id, data) if data is not None else None
        stream = self._stream(stream_id)
        stream.finished = True
        stream.changed.set()
        return event_id

    @staticmethod
    def stream_of(event_id: str) -> str | None:
        stream_id, separator, _ = event_id.rpartition(SEPARATOR)
        return stream_id if separator else None

    async def owner(self, event_id: str) -> str | None:
        """The session whose stream ``event_id`` belongs to; ``None`` if the store does not know the event."""
        stream_id, _, seq_text = event_id.rpartition(SEPARATOR)
        stream = self._streams.get(stream_id)
        if stream is None or not seq_text.isdigit() or int(seq_text) >= stream.next_seq:
            return None
        return stream.session_id

    async def follow(self, event_id: str) -> AsyncIterator[tuple[str, bytes]]:
        """Every event after ``event_id`` on its stream, then new ones as they come, until the stream finishes.

        After an event the store has since forgotten, everything it still has comes back.
        """
        stream_id, _, seq_text = event_id.rpartition(SEPARATOR)
        seq = int(seq_text) if seq_text.isdigit() else -1
        while True:
            stream = self._streams.get(stream_id)
            if stream is None:
                return
            later = [(number, known, data) for number, known, data in stream.events if number > seq]
            for number, known, data in later:
                seq = number
                yield known, data
            if stream.finished and not later:
                return
            if not later:
                await stream.changed.wait()
