"""The stdio transport: a server run as a child process, newline-delimited JSON-RPC on its stdin/stdout.

- Framing is the server side's (``_framing.FrameSplitter``, spec: transports/stdio): one message
  per line, written as ``_jsonrpc.encode`` writes it, so the client sends exactly what a toolkit
  server reads. A line that is not a JSON object is logged and skipped (nothing could be
  correlated with it); a line longer than ``max_frame_bytes`` ends the connection, as soon as
  that many bytes arrived without a newline (no more is ever held).
- The child's exit (end of its stdout) ends the connection: ``on_close`` hears why ("the server
  process exited with code 3", and the last lines of its stderr), so the session fails every
  request still waiting instead of leaving it to its timeout; ``send`` raises ``TransportClosed``
  with the same reason from then on.
- ``close`` follows the spec's shutdown (transports/stdio, lifecycle "Shutdown"): close the
  child's stdin, wait; SIGTERM, wait; SIGKILL. The child runs in a session of its own on POSIX,
  so the signals reach what it started too (``npx`` and ``uvx`` run the server as a grandchild),
  and a Ctrl-C in the terminal reaches only the client, which then shuts the server down.
- The child's pipes and its exit, as the event loop reports them (reading paused while too much
  waits to be delivered, stderr cut into lines, the exit seen even while a grandchild holds
  stdout open): ``stdio_child.ChildProtocol``.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import functools
import logging
import os
import shlex
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, Literal

import pydantic_core

from .._jsonrpc import encode
from .stdio_child import STDERR_LINE_CHARS, ChildProtocol
from .transport import Deliver, OnClose, TransportClosed, parse_response

logger = logging.getLogger("toolkit.client")

DEFAULT_MAX_FRAME_BYTES: Final = 64 * 1024 * 1024
"""The longest line read from a server (a result with a large resource in it fits; a runaway does not)."""

DEFAULT_WRITE_TIMEOUT: Final = 30.0
"""How long a message may wait for the child to read what is before it in the pipe (as the HTTP
transport's ``timeout`` bounds a request's sending)."""

DEFAULT_SHUTDOWN_TIMEOUT: Final = 5.0
"""How long ``close`` waits at each step (after closing stdin, after SIGTERM, after SIGKILL)."""

DEFAULT_INHERITED_ENV: Final = (
    (
        "APPDATA",
        "HOMEDRIVE",
        "HOMEPATH",
        "LOCALAPPDATA",
        "PATH",
        "PATHEXT",
        "PROCESSOR_ARCHITECTURE",
        "SYSTEMDRIVE",
        "SYSTEMROOT",
        "TEMP",
        "USERNAME",
        "USERPROFILE",
    )
    if sys.platform == "win32"
    else ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")
)
"""What a server child inherits from this process's environment by default (as in the official SDKs)."""

STDERR_TAIL_LINES: Final = 20
"""How many of the child's last stderr lines are kept for the message that says why it ended."""

Stderr = Literal["forward", "capture", "inherit"] | Callable[[str], object]
"""What becomes of the child's stderr: see ``StdioTransport``."""


def default_environment() -> dict[str, str]:
    """The variables of this process's environment a server child gets without asking (``DEFAULT_INHERITED_ENV``)."""
    return {
        key: value
        for key in DEFAULT_INHERITED_ENV
        if (value := os.environ.get(key)) is not None and not value.startswith("()")  # a shell function
    }


class StdioTransport:
    """Runs ``command`` and speaks MCP over its stdin and stdout.

    ``command``: the argv (``[sys.executable, "server.py"]``), or one string split like a POSIX
    shell would (``shlex.split``; no shell runs it). ``env``: the child's environment is
    ``default_environment()`` (``PATH``, ``HOME``, ``USER``... as the official SDKs and fastmcp
    do, so no secret of this process leaks into a server by default) updated with ``env``; pass
    ``env=os.environ`` to hand on everything. ``cwd``: the child's working directory.

    ``stderr``, what becomes of the child's stderr (its logs):

    - ``"forward"`` (the default): written line by line to this process's ``sys.stderr``, where a
      user sees it as if the child shared it (also where ``sys.stderr`` is not file descriptor 2:
      a notebook, pytest's capture);
    - ``"capture"``: kept only for the error that says why the server ended;
    - ``"inherit"``: the child writes to this process's file descriptor 2 itself (nothing is kept);
    - a callable: called with each line, without its line break.

    Except with ``"inherit"``, the last ``STDERR_TAIL_LINES`` lines are kept (``stderr_lines``) and
    quoted when the child exits. ``max_frame_bytes``: the longest line accepted from the child.
    ``shutdown_timeout``: how long ``close`` waits for the child at each step. ``write_timeout``:
    how long a message waits for room in a pipe the child does not read (``TimeoutError`` then;
    ``None``: as long as it takes).
    """

    sends_headers: Final = False
    """A pipe carries the message alone: the session makes no HTTP headers for it."""

    def __init__(
        self,
        command: str | Sequence[str | os.PathLike[str]],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        stderr: Stderr = "forward",
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
        shutdown_timeout: float = DEFAULT_SHUTDOWN_TIMEOUT,
        write_timeout: float | None = DEFAULT_WRITE_TIMEOUT,
    ) -> None:
        argv = shlex.split(command) if isinstance(command, str) else [os.fspath(part) for part in command]
        if not argv:
            raise ValueError("the server command is empty")
        if not (stderr in ("forward", "capture", "inherit") or callable(stderr)):
            raise ValueError(f"stderr must be 'forward', 'capture', 'inherit' or a callable, not {stderr!r}")
        if max_frame_bytes < 1:
            raise ValueError("max_frame_bytes must be positive")
        self.argv: list[str] = argv
        self.env = {**default_environment(), **(env or {})}
        self.cwd = cwd
        self.stderr = stderr
        self.max_frame_bytes = max_frame_bytes
        self.shutdown_timeout = shutdown_timeout
        self.write_timeout = write_timeout
        self.stderr_lines: collections.deque[str] = collections.deque(maxlen=STDERR_TAIL_LINES)
        """The child's last stderr lines (none with ``stderr="inherit"``)."""
        self.close_reason: str | None = None
        """Why the connection ended (``None`` while it is open)."""
        self._process: asyncio.SubprocessTransport | None = None
        self._protocol: ChildProtocol | None = None
        self._reader: asyncio.Task[None] | None = None
        self._on_close: OnClose | None = None
        self._closing: asyncio.Task[None] | None = None
        self._ended_event = asyncio.Event()

    def __repr__(self) -> str:
        return f"StdioTransport({self.argv!r})"

    @property
    def pid(self) -> int | None:
        """The child's process id, once started."""
        return self._process.get_pid() if self._process is not None else None

    @property
    def returncode(self) -> int | None:
        """The child's exit code once it exited (``-N``: killed by signal ``N``)."""
        return self._protocol.returncode if self._protocol is not None else None

    async def open(self, deliver: Deliver, *, on_close: OnClose | None = None) -> None:
        """Start the child; deliver every message it writes, in order; ``on_close(reason)`` once it ends.

        ``on_close`` is called once, whatever ends the connection: the child exiting or closing its
        stdout, a line over ``max_frame_bytes``, or ``close()``. A command that cannot be started
        raises the ``OSError`` of the attempt (``FileNotFoundError`` for a missing program), its
        message naming the command.
        """
        if self._closing is not None:
            raise TransportClosed(f"{self!r} was closed")
        if self._process is not None:
            raise RuntimeError(f"{self!r} is already open")
        loop = asyncio.get_running_loop()
        protocol = ChildProtocol(loop, self.max_frame_bytes, self._stderr_line)
        # POSIX: the child's stdout is a pipe of our own, read by ``ChildProtocol`` from the loop's
        # callback itself. Through the subprocess transport, each read would reach it one loop pass
        # later (asyncio defers every pipe callback of a subprocess with ``call_soon``).
        own = sys.platform != "win32"
        ours, theirs = os.pipe() if own else (-1, subprocess.PIPE)
        try:
            process, _ = await loop.subprocess_exec(
                lambda: protocol,
                *self.argv,
                stdin=subprocess.PIPE,
                stdout=theirs,
                stderr=None if self.stderr == "inherit" else subprocess.PIPE,
                env=self.env,
                cwd=self.cwd,
                start_new_session=sys.platform != "win32",
            )
        except OSError as exc:
            if own:
                os.close(ours)
            message = f"could not start the server command {self.argv!r}: {exc.strerror or exc}"
            if exc.errno is None:
                raise type(exc)(message) from exc
            raise type(exc)(exc.errno, message) from exc
        except BaseException:
            if own:
                os.close(ours)
            raise
        finally:
            if own:
                os.close(theirs)  # the child has its copy: its end (and its children's) is the pipe's end
        if own:
            pipe = os.fdopen(ours, "rb", buffering=0)  # the transport closes it
            try:
                await loop.connect_read_pipe(protocol.stdout_protocol, pipe)
            except BaseException:
                pipe.close()
                process.close()
                raise
        self._process = process
        self._protocol = protocol
        self._on_close = on_close
        self._reader = loop.create_task(self._read(deliver, protocol))

    def resolve_responses_with(self, resolve: Callable[[dict[str, Any]], bool]) -> None:
        """Hand a line that is a response straight to ``resolve`` (the session's), from the pipe, without a task.

        Only while nothing else waits to be delivered, so messages still reach the session in the
        order the server wrote them; ``resolve(message)`` is ``False`` for what is not a response.
        """
        if self._protocol is not None:
            self._protocol.direct = functools.partial(_take_response, resolve)

    async def send(self, message: dict[str, Any], *, headers: Mapping[str, str] | None = None) -> None:
        """Write ``message`` as one line; ``TransportClosed`` (saying why) once the connection ended,
        ``TimeoutError`` when the child does not read it within ``write_timeout``."""
        protocol = self._protocol
        if protocol is None:
            raise TransportClosed(f"{self!r} is not open")
        if self.close_reason is not None:
            raise TransportClosed(self.close_reason)
        stdin = protocol.stdin
        if stdin is None or stdin.is_closing():
            raise await self._gone(protocol)
        stdin.write(encode(message) + b"\n")
        if not await protocol.drain(self.write_timeout):
            raise await self._gone(protocol)

    async def _gone(self, protocol: ChildProtocol) -> TransportClosed:
        """The error for a send the child's stdin refused, saying why the connection ended.

        A dead child's stdin breaks (EPIPE on a write) before its stdout's end is read: wait,
        bounded, for the reader to find out how it ended, so the error carries the exit code.
        """
        if self.close_reason is None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._ended_event.wait(), self.shutdown_timeout)
        return TransportClosed(self.close_reason or protocol.stdin_lost_reason())

    async def close(self) -> None:
        """Shut the child down (stdin closed, then SIGTERM, then SIGKILL) and reap it; idempotent.

        The shutdown runs to its end even when the caller is cancelled (every wait in it is
        bounded), so a cancelled ``async with`` leaves no server running; every caller of
        ``close`` waits for the same shutdown.
        """
        if self._closing is None:
            self._ended("the transport was closed")
            self._closing = asyncio.get_running_loop().create_task(self._stop())
        await asyncio.shield(self._closing)

    # --- reading ------------------------------------------------------------------------------------

    async def _read(self, deliver: Deliver, protocol: ChildProtocol) -> None:
        """Deliver the child's messages in order; when its stdout ends, end the connection saying why."""
        while True:
            frames = protocol.frames
            while frames:
                frame = frames.popleft()
                protocol.queued_bytes -= len(frame) if frame is not None else 0
                if frame is None:
                    self._ended(
                        f"the server sent a line longer than {self.max_frame_bytes} bytes "
                        "(max_frame_bytes); the connection was closed"
                    )
                    protocol.discard()
                    return
                message = _parse(frame)
                if message is not None:
                    try:
                        await deliver(message)
                    except Exception:
                        logger.exception("delivering a message from %r failed", self)
                protocol.resume_if_drained()
            if protocol.stdout_ended:
                break
            await protocol.more()
        await protocol.wait_ended(self.shutdown_timeout)
        self._ended(self._exit_reason(protocol))

    def _exit_reason(self, protocol: ChildProtocol) -> str:
        code = protocol.returncode
        if code is None:
            reason = "the server process closed its stdout"
        elif code < 0 and sys.platform != "win32":
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            reason = f"the server process was killed by {name}"
        else:
            reason = f"the server process exited with code {code}"
        if self.stderr_lines:
            tail = "\n".join(f"  {line}" for line in self.stderr_lines)
            reason += f"; the last lines of its stderr:\n{tail}"
        elif self.stderr != "inherit":
            reason += " (it wrote nothing to stderr)"
        return reason

    def _ended(self, reason: str) -> None:
        """The connection is over: record why (once), and tell whoever waits on it."""
        if self.close_reason is not None:
            return
        self.close_reason = reason
        self._ended_event.set()
        on_close, self._on_close = self._on_close, None
        if on_close is not None:
            try:
                on_close(reason)
            except Exception:
                logger.exception("the on_close callback of %r failed", self)

    def _stderr_line(self, line: str) -> None:
        """A line of the child's stderr: kept for the exit reason, and passed on as ``stderr`` says."""
        self.stderr_lines.append(line[:STDERR_LINE_CHARS])
        sink = self.stderr
        try:
            if sink == "forward":
                if sys.stderr is not None:
                    sys.stderr.write(line + "\n")
                    sys.stderr.flush()
            elif callable(sink):
                sink(line)
        except Exception:
            logger.exception("passing on the stderr of %r failed", self)

    # --- shutting down ------------------------------------------------------------------------------

    async def _stop(self) -> None:
        """Close stdin, wait; SIGTERM, wait; SIGKILL, wait (each ``shutdown_timeout``); release everything."""
        process, protocol = self._process, self._protocol
        if process is None or protocol is None:
            return
        try:
            stdin = protocol.stdin
            if stdin is not None and not stdin.is_closing():
                stdin.close()
            for signum in (None, signal.SIGTERM, signal.SIGKILL if sys.platform != "win32" else None):
                if protocol.returncode is not None:
                    break
                if signum is not None:
                    self._signal(process, signum)
                if await protocol.wait_exited(self.shutdown_timeout):
                    break
            else:
                logger.warning("the server process %s of %r outlived SIGKILL; abandoning it", process.get_pid(), self)
        finally:
            process.close()  # the pipes (and a kill, should the child still run)
            protocol.close_stdout()  # ours: a grandchild may still hold its other end
            reader = self._reader
            if reader is not None:
                reader.cancel()
                await asyncio.wait((reader,))
            await asyncio.sleep(0)  # the pipes' connection_lost callbacks run now, not after the loop closed

    def _signal(self, process: asyncio.SubprocessTransport, signum: int) -> None:
        """Signal the child's process group (what it started too), else the child alone."""
        logger.debug("sending %s to the server process %s", signal.Signals(signum).name, process.get_pid())
        pid = process.get_pid()
        if sys.platform != "win32":
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signum)  # the child leads its own session: its group id is its pid
                return
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signum)


def _take_response(resolve: Callable[[dict[str, Any]], bool], frame: bytes) -> bool:
    """Whether ``resolve`` took the line ``frame`` (a response); anything else is left to the reader."""
    try:
        message = parse_response(frame)
    except ValueError:
        return False
    return isinstance(message, dict) and resolve(message)


def _parse(frame: bytes) -> dict[str, Any] | None:
    """The JSON object a line holds, or ``None`` (logged) when it holds none."""
    if not frame or frame.isspace():  # a blank line carries nothing (and is no error worth a warning)
        return None
    try:
        message = pydantic_core.from_json(frame)
    except ValueError as exc:
        logger.warning("the server wrote a line that is not JSON (%s): %r", exc, frame[:200])
        return None
    if not isinstance(message, dict):
        logger.warning("the server wrote a line that is not a JSON-RPC message: %r", frame[:200])
        return None
    return message
