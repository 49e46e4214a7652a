"""``toolkit dev``: say when something holds the event loop, and which tool.

An ``async def`` tool that blocks (``time.sleep``, ``requests.get``, a long computation) holds the
event loop: every other request, however quick, waits until it returns. Nothing fails, so nothing
said why. A heartbeat on the loop marks each time the loop gets a turn; a thread watches the
marks, and when the loop has not had one for ``HELD_SECONDS`` it looks at what the loop's thread
is running (its stack) and says which tool, at which line of it, and what to do.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import time
from types import CodeType, FrameType
from typing import Final

from ._server import Server

HELD_SECONDS: Final = 0.5
"""How long the loop may go without a turn before it is reported as held."""
BEAT_SECONDS: Final = 0.1
"""How often the loop marks that it had a turn, and the watcher looks at the mark."""
ADVICE: Final = (
    "every other request waits meanwhile. An async def tool must not block: await asyncio.sleep() and async "
    "libraries (httpx.AsyncClient, asyncpg, aiofiles) there, or make it a plain def, which toolkit runs in a "
    "worker thread"
)


class LoopWatchdog:
    """Watches the event loop ``start`` is called on, reporting on stderr each time it is held."""

    def __init__(self, server: Server | None) -> None:
        self.server = server
        self.last_turn = time.monotonic()
        self.started = False
        self._stop = threading.Event()

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        """Mark the loop's turns from now on, and watch them from a thread (a daemon: it dies with the process)."""
        self.started = True
        self.last_turn = time.monotonic()
        loop_thread = threading.get_ident()

        def beat() -> None:
            self.last_turn = time.monotonic()
            if not self._stop.is_set():
                loop.call_later(BEAT_SECONDS, beat)

        loop.call_soon(beat)
        threading.Thread(target=self._watch, args=(loop_thread,), name="toolkit-dev-watchdog", daemon=True).start()

    def stop(self) -> None:
        self._stop.set()

    def _watch(self, loop_thread: int) -> None:
        held_since: float | None = None
        while not self._stop.wait(BEAT_SECONDS):
            idle = time.monotonic() - self.last_turn
            if idle < HELD_SECONDS:
                if held_since is not None:
                    say(f"the event loop is free again, after {time.monotonic() - held_since:.1f} s")
                    held_since = None
                continue
            if held_since is None:
                held_since = self.last_turn
                frame = sys._current_frames().get(loop_thread)  # the one way to see another thread's stack
                say(self.describe(frame, idle))

    def describe(self, frame: FrameType | None, idle: float) -> str:
        """What holds the loop: the tool on the loop thread's stack and its line, or the innermost line of user code."""
        tools = self._tools()
        innermost: FrameType | None = None
        while frame is not None:
            name = tools.get(frame.f_code)
            if name is not None:
                where = f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno}"
                return f"tool {name!r} has held the event loop for {idle:.1f} s, at {where}: {ADVICE}"
            if innermost is None and _is_users(frame.f_code.co_filename):
                innermost = frame
            frame = frame.f_back
        where = f", at {os.path.basename(innermost.f_code.co_filename)}:{innermost.f_lineno}" if innermost else ""
        return f"the event loop has been held for {idle:.1f} s{where}: no other request is served meanwhile"

    def _tools(self) -> dict[CodeType, str]:
        if self.server is None:
            return {}
        found: dict[CodeType, str] = {}
        for name, tool in self.server.registry.tools.items():
            code = getattr(getattr(tool, "fn", None), "__code__", None)
            if isinstance(code, CodeType):
                found[code] = name
        return found


def _is_users(filename: str) -> bool:
    """Not toolkit's, not the standard library's, not an installed package's: the user's own code."""
    package = os.path.dirname(os.path.abspath(__file__))
    path = os.path.abspath(filename)
    return not (
        filename.startswith("<")
        or path.startswith((package + os.sep, os.path.dirname(os.__file__)))
        or "site-packages" in path
    )


def say(line: str) -> None:
    print(f"toolkit dev: {line}", file=sys.stderr, flush=True)
