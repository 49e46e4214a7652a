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
import selectors
import signal
import stat
import sys
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Final

from .._errors import INVALID_REQUEST
from .._framing import FrameSplitter
from .._jsonrpc import Notification, Reply, Request, Response, encode, error_reply, parse
from .._session import Connection
from .base import EngineFacing, Lifecycle, Running, settle_allocator

logger = logging.getLogger("toolkit")

DEFAULT_MAX_MESSAGE_BYTES: Final = 4 * 1024 * 1024
DEFAULT_SHUTDOWN_GRACE: Final = 10.0
_CHUNK: Final = 256 * 1024

Write = Callable[[bytes | memoryview], Awaitable[None]]
_WRITE_CHUNK: Final = 1024 * 1024  # bytes handed to the stdout pipe's transport at a time


class StdioServer:
    """Serves one client over a pair of byte streams."""

    def __init__(
        self,
        engine: EngineFacing,
        write: Write,
        *,
        running: Running,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        max_concurrent_requests: int = 100,
        shutdown_grace: float = DEFAULT_SHUTDOWN_GRACE,
    ) -> None:
        self.engine = engine
        self._write = write
        self._running = running
        self.max_message_bytes = max_message_bytes
        self.connection = Connection()
        self._streaming = asyncio.Lock()
        self.lifecycle = Lifecycle(
            engine, max_concurrent_requests=max_concurrent_requests, shutdown_grace=shutdown_grace
        )

    async def send(self, message: dict[str, Any]) -> None:
        line = encode(message) + b"\n"
        if len(line) <= _WRITE_CHUNK and not self._streaming.locked():
            await self._write(line)  # handed to the pipe's transport whole, before any await
            return
        await self._write_apart(self._write_line(line))

    async def _write_line(self, line: bytes) -> None:
        async with self._streaming:  # after the big reply or message being written, if any
            await self._write(line)

    async def serve(self, read: Callable[[int], Awaitable[bytes]], stop: asyncio.Event | None = None) -> None:
        """Serve until ``read`` returns ``b""`` (end of input) or ``stop`` is set."""
        async with self._running():  # nothing is read before the lifespan (and what is mounted) is up
            await self._serve(self._read_loop(read), stop)

    async def serve_pipe(self, fd: int, stop: asyncio.Event | None = None) -> None:
        """Serve frames read from a pipe or socket, straight from the event loop's callbacks."""
        async with self._running():  # nothing is read before the lifespan (and what is mounted) is up
            loop = asyncio.get_running_loop()
            finished: asyncio.Future[None] = loop.create_future()
            file = os.fdopen(os.dup(fd), "rb", buffering=0)
            transport, _ = await loop.connect_read_pipe(lambda: _FrameProtocol(self, finished), file)
            try:
                await self._serve(finished, stop)
            finally:
                transport.close()

    async def _serve(self, reading: Awaitable[None], stop: asyncio.Event | None) -> None:
        reader = asyncio.ensure_future(reading)
        waiters: set[asyncio.Future[Any]] = {reader}
        if stop is not None:
            waiters.add(asyncio.ensure_future(stop.wait()))
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
        splitter = FrameSplitter(self.max_message_bytes)
        while chunk := await read(_CHUNK):
            for frame in splitter.feed(chunk):
                self.dispatch(frame)
            await asyncio.sleep(0)  # let the requests just started run before reading on
        for frame in splitter.finish():
            self.dispatch(frame)

    def dispatch(self, frame: bytes | None) -> None:
        """Handle one frame: start a request, act on a notification, or answer an invalid frame."""
        if frame is None:
            self._reply_soon(
                error_reply(
                    None, INVALID_REQUEST, f"Invalid Request: message longer than {self.max_message_bytes} bytes"
                )
            )
            return
        message = parse(frame)
        if isinstance(message, Request):
            busy = self.lifecycle.busy(message.id, len(self.connection.inflight))
            if busy is not None:
                self._reply_soon(busy)
                return
            self.lifecycle.start(message, self.connection, self.send, self._finish)
        elif isinstance(message, Notification):
            self.engine.handle_notification(message, self.connection)
        elif isinstance(message, Response):
            self.engine.handle_response(message, self.connection)
        else:
            self._reply_soon(message.reply)

    async def _finish(self, reply: Reply | None) -> None:
        if reply is None:  # cancelled by the client, and the spec says no response
            return
        if not reply.streamed and not self._streaming.locked() and len(reply.body) < _WRITE_CHUNK:
            await self._write(reply.body + b"\n")  # handed to the pipe's transport whole, before any await
            return
        await self._write_apart(self._write_reply(reply))

    async def _write_apart(self, writing: Coroutine[Any, Any, None]) -> None:
        """Write in a task of its own, and wait for it: a line written in awaits (in pieces, or after
        another) must not be cut by a cancellation of its sender (its client's, or the drain's), or
        every message after it is garbage. The drain waits for the task."""
        task = asyncio.get_running_loop().create_task(writing)
        self.lifecycle.track(task)
        await asyncio.shield(task)

    async def _write_reply(self, reply: Reply) -> None:
        """A big reply, piece by piece (each written while the next is made), nothing else between them;
        or a whole body, after the big reply being written."""
        async with self._streaming:
            if not reply.streamed:  # a whole body (with its newline: measured lower than two writes)
                await self._write(reply.body + b"\n")
                return
            written = False
            try:
                for piece in reply.pieces():
                    await self._write(piece)
                    written = True
            except (ValueError, TypeError):  # not JSON after all: what an exception in the engine gets
                logger.exception("could not encode a result")
                if written:
                    await self._write(b"\n")  # the broken line ends here; the client cannot parse it
                await self._write(reply.failure() + b"\n")
                return
            await self._write(b"\n")

    def _reply_soon(self, message: dict[str, Any]) -> None:
        self.lifecycle.track(asyncio.get_running_loop().create_task(self.send(message)))

    async def _drain(self) -> None:
        self.engine.close_listeners()
        await self.lifecycle.drain()
        await self.engine.stop_tasks()
        self.engine.forget(self.connection.session)


class _FrameProtocol(asyncio.Protocol):
    """Reads a pipe and dispatches each frame as its bytes arrive (no reader coroutine in between)."""

    def __init__(self, server: StdioServer, finished: asyncio.Future[None]) -> None:
        self.server = server
        self.splitter = FrameSplitter(server.max_message_bytes)
        self.finished = finished

    def data_received(self, data: bytes) -> None:
        for frame in self.splitter.feed(data):
            self.server.dispatch(frame)

    def eof_received(self) -> bool:
        for frame in self.splitter.finish():
            self.server.dispatch(frame)
        if not self.finished.done():
            self.finished.set_result(None)
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.finished.done():
            self.finished.set_result(None)


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


def _pollable(fd: int) -> bool:
    """Whether the event loop can watch ``fd`` (not so for ``/dev/null`` and some other devices: EPERM)."""
    with selectors.DefaultSelector() as probe:
        try:
            probe.register(fd, selectors.EVENT_READ)
        except (OSError, ValueError):
            return False
    return True


def _file_reader(fd: int) -> Callable[[int], Awaitable[bytes]]:
    """Reads for stdin the event loop cannot watch (a regular file, ``/dev/null``): a worker thread."""
    file = os.fdopen(os.dup(fd), "rb", buffering=0)

    async def read(size: int) -> bytes:
        return await asyncio.to_thread(file.read, size)

    return read


def _nothing() -> None:
    return None


async def _pipe_writer(fd: int) -> tuple[Write, Callable[[], None]]:
    """How to write to ``fd`` (a pipe, a socket, a file), and how to close what that opened."""
    loop = asyncio.get_running_loop()
    try:
        transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, os.fdopen(os.dup(fd), "wb", buffering=0)
        )
        writer = asyncio.StreamWriter(transport, protocol, None, loop)
        # A message larger than the pipe is handed to the transport in chunks, waiting for each to
        # drain: given whole, the transport would copy all it could not write at once into its
        # buffer (a 10 MB result: 20 MB more at its peak). The lock keeps another message from
        # landing between two chunks; while no big message is being written, none is taken.
        big = asyncio.Lock()

        async def write(data: bytes | memoryview) -> None:
            if len(data) <= _WRITE_CHUNK and not big.locked():
                writer.write(data)
                await writer.drain()
                return
            async with big:
                view = memoryview(data)
                for start in range(0, len(view), _WRITE_CHUNK):
                    writer.write(view[start : start + _WRITE_CHUNK])
                    await writer.drain()

        return write, transport.close
    except (ValueError, OSError):  # a regular file: plain blocking writes are fine

        async def write_blocking(data: bytes | memoryview) -> None:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]

        return write_blocking, _nothing


async def serve_stdio(
    engine: EngineFacing,
    *,
    running: Running,
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    max_concurrent_requests: int = 100,
    shutdown_grace: float = DEFAULT_SHUTDOWN_GRACE,
) -> None:
    """Serve ``engine`` on this process's stdin/stdout until EOF or SIGTERM."""
    with _protocol_stdout() as out_fd:
        write, close = await _pipe_writer(out_fd)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(signum, stop.set)
        server = StdioServer(
            engine,
            write,
            running=running,
            max_message_bytes=max_message_bytes,
            max_concurrent_requests=max_concurrent_requests,
            shutdown_grace=shutdown_grace,
        )
        stdin = sys.stdin.fileno()
        try:
            if stat.S_ISREG(os.fstat(stdin).st_mode) or not _pollable(stdin):
                await server.serve(_file_reader(stdin), stop)
            else:
                await server.serve_pipe(stdin, stop)
        finally:
            close()  # the pipe's transport: closed once what it still holds is written


def run_stdio(engine: EngineFacing, **options: Any) -> None:
    settle_allocator()
    if sys.stdin.isatty():  # a person at a terminal, not a host: say why nothing happens
        print(
            "toolkit: serving MCP over stdio, waiting for a client's JSON-RPC messages on stdin. An MCP host "
            "(Claude Desktop, VS Code, ...) starts this command itself; to try the server yourself, run "
            "`toolkit dev APP` (a page in the browser) or `toolkit call APP TOOL`. Ctrl-D or Ctrl-C to stop.",
            file=sys.stderr,
            flush=True,
        )
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve_stdio(engine, **options))
