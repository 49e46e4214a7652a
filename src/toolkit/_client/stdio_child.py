"""The child process of the stdio transport as the event loop reports it: its three pipes and its exit.

``ChildProtocol`` is the ``asyncio.SubprocessProtocol`` of a server started by ``StdioTransport``
(spec: transports/stdio: the server reads JSON-RPC messages from its stdin and writes them to
its stdout, one per line; it MAY write anything to its stderr, its logs).

- stdout: on POSIX a pipe of the transport's own (``stdout_protocol``), read from the loop's
  callback itself (through the subprocess transport, every read would come a loop pass later:
  asyncio hands a subprocess's pipe callbacks on with ``call_soon``). Split into lines by
  ``_framing.FrameSplitter`` as the bytes arrive; while the transport's reader waits with nothing
  queued, the responses at the head go to the session from there (``direct``), and the rest is
  queued for the reader (``frames``, ``more()``). A line that grows past ``max_frame_bytes`` without
  a newline is cut off at once (a ``None`` in ``frames``) and nothing more is kept. While more
  than ``PAUSE_AT_BYTES`` wait to be delivered, the pipe is not read: the child's writes block,
  so a flooding server is held back instead of filling this process's memory.
- stdin: ``drain()`` waits while the pipe to the child is full (bounded), and says whether it broke.
- stderr: cut into lines (a line without a break is passed on in pieces of
  ``STDERR_LINE_CHARS``), each handed to ``on_stderr_line``.
- The exit is seen through ``process_exited`` rather than ``Process.wait()``, which also waits
  for every pipe to close: a grandchild holding stdout open (``npx``, ``uvx``) would make an
  exited server look alive.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
from collections.abc import Callable
from typing import Final, cast

from .._framing import FrameSplitter

STDERR_LINE_CHARS: Final = 4096
"""The longest piece of the child's stderr passed on as one line."""
PAUSE_AT_BYTES: Final = 4 * 1024 * 1024
"""Stop reading the child's stdout while this much waits to be delivered (its writes then block)."""


class ChildProtocol(asyncio.SubprocessProtocol):
    """The child's pipes as the event loop reports them: frames to deliver, stderr lines, the exit."""

    def __init__(
        self, loop: asyncio.AbstractEventLoop, max_frame_bytes: int, on_stderr_line: Callable[[str], None]
    ) -> None:
        self.loop = loop
        self.max_frame_bytes = max_frame_bytes
        self.on_stderr_line = on_stderr_line
        """Called with each line of the child's stderr, without its line break."""
        self.splitter = FrameSplitter(max_frame_bytes)
        self.frames: collections.deque[bytes | None] = collections.deque()
        """Lines read and not yet delivered; ``None``: a line over the limit (the connection ends there)."""
        self.queued_bytes = 0
        self.partial = 0
        """Bytes of the line being read, to stop as soon as it outgrows the limit."""
        self.stdout_ended = False
        self.discarding = False
        self.paused = False
        self.returncode: int | None = None
        self.process: asyncio.SubprocessTransport | None = None
        self.stdout_transport: asyncio.ReadTransport | None = None
        """The child's stdout when it is a pipe of ours (``stdout_protocol``); else the subprocess transport's."""
        self.stdin: asyncio.WriteTransport | None = None
        self._stdin_lost = False
        self._stdin_error: Exception | None = None
        self._stderr = bytearray()
        self._stderr_ended = False
        self._wakeup: asyncio.Future[None] | None = None
        self.direct: Callable[[bytes], bool] | None = None
        """Takes a line that is a response, from the pipe's callback (``True``: taken, not queued)."""
        self._writable: asyncio.Future[None] | None = None
        self._exited = loop.create_future()
        self._stderr_closed = loop.create_future()

    # --- the event loop's calls ---------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # A cast, not an isinstance check: uvloop's transports are not registered with asyncio's ABCs.
        process = self.process = cast(asyncio.SubprocessTransport, transport)
        self.stdin = cast(asyncio.WriteTransport, process.get_pipe_transport(0))
        if process.get_pipe_transport(2) is None:
            self._stderr_ended = True
            self._stderr_closed.set_result(None)

    def stdout_protocol(self) -> asyncio.Protocol:
        """The protocol of the child's stdout when it is a pipe of ours rather than the subprocess
        transport's (``StdioTransport.open``): its bytes come here at once, not a loop pass later."""
        return _StdoutPipe(self)

    def close_stdout(self) -> None:
        """Close our end of the child's stdout, if it is ours (nothing more is read)."""
        if self.stdout_transport is not None:
            self.stdout_transport.close()

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        if fd == 1:
            self.stdout_received(data)
        else:
            self._stderr_received(data)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd == 0:
            self._stdin_lost = True
            self._stdin_error = exc
            self._writable_again()
        elif fd == 1:
            if not self.discarding:
                self._queue(self.splitter.finish())
            self.stdout_ended = True
            self._wake()
        else:
            self._stderr_flush()
            self._stderr_ended = True
            if not self._stderr_closed.done():
                self._stderr_closed.set_result(None)

    def process_exited(self) -> None:
        assert self.process is not None
        self.returncode = self.process.get_returncode()
        if not self._exited.done():
            self._exited.set_result(None)

    def pause_writing(self) -> None:
        if self._writable is None:
            self._writable = self.loop.create_future()

    def resume_writing(self) -> None:
        self._writable_again()

    # --- stdout ------------------------------------------------------------------------------------

    def stdout_received(self, data: bytes) -> None:
        if self.discarding:
            return
        newline = data.rfind(b"\n")
        self.partial = self.partial + len(data) if newline < 0 else len(data) - newline - 1
        frames = self.splitter.feed(data)
        if self.partial > self.max_frame_bytes:
            frames.append(None)  # no newline yet, and already too long: stop here
            self.discarding = True
        direct = self.direct
        if direct is not None and frames and self._wakeup is not None and not self.frames:
            # The reader waits with nothing queued: responses at the head go to the session now,
            # in order, and the reader is woken only for what follows them.
            taken = 0
            for frame in frames:
                if frame is None or not direct(frame):
                    break
                taken += 1
            del frames[:taken]
        self._queue(frames)
        if self.queued_bytes > PAUSE_AT_BYTES and not self.paused:
            self._stdout_pipe().pause_reading()
            self.paused = True

    def _queue(self, frames: list[bytes | None]) -> None:
        if not frames:
            return
        self.frames.extend(frames)
        self.queued_bytes += sum(len(frame) for frame in frames if frame is not None)
        self._wake()

    def _stdout_pipe(self) -> asyncio.ReadTransport:
        if self.stdout_transport is not None:
            return self.stdout_transport
        assert self.process is not None
        return cast(asyncio.ReadTransport, self.process.get_pipe_transport(1))

    def resume_if_drained(self) -> None:
        if self.paused and self.queued_bytes <= PAUSE_AT_BYTES // 2:
            self.paused = False
            with contextlib.suppress(RuntimeError, AttributeError):  # the pipe closed meanwhile
                self._stdout_pipe().resume_reading()

    def discard(self) -> None:
        """Read on and drop what comes (a child blocked writing could not see its stdin close)."""
        self.discarding = True
        self.frames.clear()
        self.queued_bytes = 0
        self.resume_if_drained()

    def _wake(self) -> None:
        wakeup, self._wakeup = self._wakeup, None
        if wakeup is not None and not wakeup.done():
            wakeup.set_result(None)

    async def more(self) -> None:
        """Wait for more frames (or the end of stdout)."""
        self._wakeup = self.loop.create_future()
        await self._wakeup

    async def wait_ended(self, timeout: float) -> None:
        """After stdout ended: wait (bounded) for the exit code and the last of stderr, to say why."""
        await asyncio.wait((self._exited, self._stderr_closed), timeout=timeout)

    async def wait_exited(self, timeout: float) -> bool:
        if not self._exited.done():
            await asyncio.wait((self._exited,), timeout=timeout)
        return self._exited.done()

    # --- stdin -------------------------------------------------------------------------------------

    def stdin_lost_reason(self) -> str:
        detail = f" ({self._stdin_error})" if self._stdin_error is not None else ""
        return f"the server process closed its stdin{detail}"

    def _writable_again(self) -> None:
        writable, self._writable = self._writable, None
        if writable is not None and not writable.done():
            writable.set_result(None)

    async def drain(self, timeout: float | None = None) -> bool:
        """Wait while the pipe to the child is full; ``False`` if it broke meanwhile. ``TimeoutError``
        when it is still full after ``timeout`` seconds (a child that reads no more)."""
        writable = self._writable
        if writable is not None:
            try:
                async with asyncio.timeout(timeout):
                    await asyncio.shield(writable)
            except TimeoutError:
                raise TimeoutError(f"the server did not read what was written to it within {timeout:g} s") from None
            return not self._stdin_lost
        return True

    # --- stderr ------------------------------------------------------------------------------------

    def _stderr_received(self, data: bytes) -> None:
        self._stderr += data
        *lines, rest = self._stderr.split(b"\n")
        if len(rest) > STDERR_LINE_CHARS:  # a stderr without line breaks is still shown, in pieces
            lines.append(rest)
            rest = bytearray()
        self._stderr = bytearray(rest)
        for line in lines:
            self._stderr_line(bytes(line))

    def _stderr_flush(self) -> None:
        if self._stderr:
            line, self._stderr = bytes(self._stderr), bytearray()
            self._stderr_line(line)

    def _stderr_line(self, raw: bytes) -> None:
        self.on_stderr_line(raw.rstrip(b"\r").decode("utf-8", "replace"))


class _StdoutPipe(asyncio.Protocol):
    """The child's stdout as a pipe of ours: what it reads goes to the ``ChildProtocol`` as fd 1's."""

    def __init__(self, child: ChildProtocol) -> None:
        self.child = child

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.child.stdout_transport = cast(asyncio.ReadTransport, transport)  # uvloop's: see ChildProtocol

    def data_received(self, data: bytes) -> None:
        self.child.stdout_received(data)

    def eof_received(self) -> bool:
        return False  # the transport closes: connection_lost follows

    def connection_lost(self, exc: Exception | None) -> None:
        self.child.pipe_connection_lost(1, exc)
