"""The stdio transport: newline-delimited JSON-RPC on stdin/stdout (spec: transports/stdio).

- Only MCP messages reach stdout. While serving, file descriptor 1 and ``sys.stdout`` point
  at stderr, so a stray ``print()`` in a tool (or a subprocess's output) cannot corrupt
  the protocol stream; messages go to a private duplicate of the original stdout.
- Every frame gets an answer: unparseable → -32700, not a request → -32600, too long → -32600.
- Each request runs in its own task; ``notifications/cancelled`` cancels it (no response).
- EOF on stdin or SIGTERM: stop reading, let in-flight requests finish (up to
  ``shutdown_grace`` seconds), end open subscriptions gracefully, exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final

from ._engine import Connection
from ._jsonrpc import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    Invalid,
    Notification,
    Request,
    Response,
    busy_reply,
    encode,
    error_reply,
    parse,
)

if TYPE_CHECKING:
    from ._server import Server

logger = logging.getLogger("toolkit")

DEFAULT_MAX_MESSAGE_BYTES: Final = 4 * 1024 * 1024
DEFAULT_SHUTDOWN_GRACE: Final = 10.0
_CHUNK: Final = 256 * 1024

Write = Callable[[bytes], Awaitable[None]]


async def read_frames(read: Callable[[int], Awaitable[bytes]], max_bytes: int) -> AsyncIterator[bytes | None]:
    """Yield each line (without its newline); ``None`` for a line longer than ``max_bytes``."""
    buffer = bytearray()
    discarding = False
    while True:
        chunk = await read(_CHUNK)
        if not chunk:
            if buffer and not discarding:
                yield bytes(buffer)
            return
        start = 0
        while True:
            newline = chunk.find(b"\n", start)
            if newline < 0:
                if not discarding:
                    buffer += chunk[start:]
                    if len(buffer) > max_bytes:
                        buffer.clear()
                        discarding = True
                break
            if discarding:
                discarding = False
                yield None
            else:
                buffer += chunk[start:newline]
                if len(buffer) > max_bytes:
                    yield None
                else:
                    yield bytes(buffer[:-1] if buffer.endswith(b"\r") else buffer)
            buffer.clear()
            start = newline + 1


class StdioSession:
    """Serves one client over a pair of byte streams."""

    def __init__(self, server: Server, write: Write, *, max_message_bytes: int, shutdown_grace: float) -> None:
        self.server = server
        self.engine = server.engine
        self._write = write
        self.max_message_bytes = max_message_bytes
        self.shutdown_grace = shutdown_grace
        self.connection = Connection()
        self._tasks: set[asyncio.Task[Any]] = set()

    async def send(self, message: dict[str, Any]) -> None:
        await self._write(encode(message) + b"\n")

    async def serve(self, read: Callable[[int], Awaitable[bytes]], stop: asyncio.Event | None = None) -> None:
        async with self.server.running():
            reader = asyncio.create_task(self._read_loop(read))
            waiters: set[asyncio.Task[Any]] = {reader}
            if stop is not None:
                waiters.add(asyncio.create_task(stop.wait()))
            try:
                await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for waiter in waiters:
                    waiter.cancel()
                await asyncio.gather(*waiters, return_exceptions=True)
                await self._drain()
            if not reader.cancelled() and reader.exception() is not None:
                raise reader.exception()  # type: ignore[misc]

    async def _read_loop(self, read: Callable[[int], Awaitable[bytes]]) -> None:
        async for frame in read_frames(read, self.max_message_bytes):
            await self._dispatch(frame)

    async def _dispatch(self, frame: bytes | None) -> None:
        if frame is None:
            reply = error_reply(
                None, INVALID_REQUEST, f"Invalid Request: message longer than {self.max_message_bytes} bytes"
            )
            await self.send(reply)
            return
        message = parse(frame)
        if isinstance(message, Request):
            limit = self.server.max_concurrent_requests
            if len(self.connection.inflight) >= limit:
                await self.send(busy_reply(message.id, limit))
                return
            task = asyncio.create_task(self._run(message))
            self.connection.inflight[message.id] = task
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        elif isinstance(message, Notification):
            await self.engine.handle_notification(message, self.connection)
        elif isinstance(message, Response):
            self.engine.handle_response(message, self.connection)
        elif isinstance(message, Invalid):
            await self.send(message.reply)

    async def _run(self, request: Request) -> None:
        try:
            reply = await self.engine.handle_request(request, self.connection, self.send)
            await self._write(reply.body + b"\n")
        except asyncio.CancelledError:
            pass  # cancelled by the client: the spec says no response
        except Exception:
            logger.exception("internal error while handling %s", request.method)
            await self.send(error_reply(request.id, INTERNAL_ERROR, "Internal error"))
        finally:
            if self.connection.inflight.get(request.id) is asyncio.current_task():
                del self.connection.inflight[request.id]

    async def _drain(self) -> None:
        self.engine.close_listeners()
        if self._tasks:
            _, pending = await asyncio.wait(set(self._tasks), timeout=self.shutdown_grace)
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.wait(pending, timeout=1.0)
        self.engine.forget(self.connection.session)


@contextlib.contextmanager
def _protocol_stdout() -> Any:
    """Keep fd 1 for protocol messages only: hand out a private duplicate, point fd 1 at stderr."""
    sys.stdout.flush()
    private = os.dup(1)
    os.dup2(2, 1)
    original = sys.stdout
    sys.stdout = sys.stderr
    try:
        yield private
    finally:
        sys.stdout = original
        os.dup2(private, 1)
        os.close(private)


async def _pipe_reader(fd: int) -> Callable[[int], Awaitable[bytes]]:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=_CHUNK)
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(fd, "rb", buffering=0))
        return reader.read
    except (ValueError, OSError):  # a regular file: read it in a worker thread
        file = os.fdopen(os.dup(fd), "rb", buffering=0)

        async def read(size: int) -> bytes:
            return await asyncio.to_thread(file.read, size)

        return read


async def _pipe_writer(fd: int) -> Write:
    loop = asyncio.get_running_loop()
    try:
        transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, os.fdopen(os.dup(fd), "wb", buffering=0)
        )
        writer = asyncio.StreamWriter(transport, protocol, None, loop)

        async def write(data: bytes) -> None:
            writer.write(data)
            await writer.drain()

        return write
    except (ValueError, OSError):  # a regular file: plain blocking writes are fine

        async def write_blocking(data: bytes) -> None:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]

        return write_blocking


async def serve_stdio(
    server: Server,
    *,
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    shutdown_grace: float = DEFAULT_SHUTDOWN_GRACE,
) -> None:
    """Serve ``server`` on this process's stdin/stdout until EOF or SIGTERM."""
    with _protocol_stdout() as out_fd:
        write = await _pipe_writer(out_fd)
        read = await _pipe_reader(sys.stdin.fileno())
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(signum, stop.set)
        session = StdioSession(server, write, max_message_bytes=max_message_bytes, shutdown_grace=shutdown_grace)
        await session.serve(read, stop)


def run_stdio(server: Server, **options: Any) -> None:
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve_stdio(server, **options))
