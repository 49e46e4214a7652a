"""``toolkit dev``: serve an app while you edit it, restarting it when its source changes.

The supervisor (this module) binds the listening socket once and runs the app in a child
process, ``toolkit dev APP ... --serve-fd N``, that serves on the inherited socket
(``_dev_server``). So the port never changes across restarts (``--port 0`` too), and a request
made while the child restarts waits in the socket's backlog instead of being refused. The
source is watched with ``watchfiles`` (what ``uvicorn --reload`` uses); a change stops the child
gracefully and starts a new one. An app that fails to load does not make a crash loop: its
child serves a page saying why until the next change.

The child runs in a process group of its own, so a Ctrl-C in the terminal reaches only the
supervisor, which stops the child with one SIGTERM (a second signal would make uvicorn skip its
graceful shutdown). Its stdin is a pipe from the supervisor: if the supervisor dies without
stopping it (SIGKILL), the pipe closes and the child stops itself rather than hold the port.

What ``toolkit dev`` says goes to stderr, each line starting ``toolkit dev:``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from types import FrameType, ModuleType
from typing import Final

STOP_SECONDS: Final = 5.0
"""How long a child gets to stop after SIGTERM before it is killed."""
POLL_MS: Final = 500
"""How often, with no change to report, the supervisor looks whether its child ended by itself."""
BACKLOG: Final = 2048
"""The listening socket's backlog (uvicorn's default): requests made during a restart wait there."""


def supervise(app: str, *, host: str, port: int, path: str, docs: str, log_level: str) -> None:
    """Serve ``app`` in a child process on one socket, restarting it on each change, until SIGINT/SIGTERM."""
    watchfiles = _import_watchfiles()
    if os.name != "posix":
        print(
            "toolkit dev: reloading needs a POSIX system (the socket is handed to each child by descriptor); "
            "run with --no-reload",
            file=sys.stderr,
        )
        raise SystemExit(2)
    root = watch_root(app)
    logging.getLogger("watchfiles").setLevel(logging.WARNING)  # it logs each change at info: we say it once
    stopping = threading.Event()
    with _stop_on_signals(stopping), listening(host, port) as sock:
        announce(app, sock, host=host, path=path, docs=docs, watching=root)
        # Each child is this command, told to serve on the inherited socket instead of binding one.
        command = [sys.executable, "-m", "toolkit", "dev", app, "--path", path, "--docs-path", docs]
        command += ["--log-level", log_level, "--serve-fd", str(sock.fileno())]
        child = _Child(command, sock.fileno())
        child.start()
        try:
            for changes in watchfiles.watch(
                root,
                watch_filter=watchfiles.PythonFilter(),
                stop_event=stopping,
                rust_timeout=POLL_MS,
                yield_on_timeout=True,
                raise_interrupt=False,
            ):
                if not changes:
                    child.report_if_ended()
                    continue
                changed = sorted({os.path.relpath(changed_path, root) for _, changed_path in changes})
                print(f"toolkit dev: {', '.join(changed)} changed; restarting", file=sys.stderr)
                child.stop()
                child.start()
        finally:
            child.stop()
    print("toolkit dev: stopped", file=sys.stderr)


def _import_watchfiles() -> ModuleType:
    try:
        import watchfiles  # noqa: PLC0415 (the reload extra: only toolkit dev needs it)
    except ImportError:
        print(
            "toolkit dev: reloading on changes needs watchfiles: pip install 'toolkit-mcp[reload]' "
            "(or run with --no-reload)",
            file=sys.stderr,
        )
        raise SystemExit(2) from None
    return watchfiles


def watch_root(app: str) -> Path:
    """The directory to watch: the app file's, or the current one for ``package.module``."""
    from ._loader import is_plain_directory, not_a_file  # noqa: PLC0415 (the loader imports the server)

    target = app.partition(":")[0]
    if not (target.endswith(".py") or os.sep in target or "/" in target or is_plain_directory(target)):
        return Path.cwd()
    path = Path(target).resolve()
    if not path.is_file():
        print(f"toolkit: {not_a_file(target, path) if path.is_dir() else f'no such file: {target}'}", file=sys.stderr)
        raise SystemExit(2)
    return path.parent


@contextlib.contextmanager
def listening(host: str, port: int) -> Iterator[socket.socket]:
    """A socket listening on ``host:port``, closed at the end; a failure to bind ends the process."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        sock = socket.socket(family, kind, proto)
    except OSError as exc:
        print(f"toolkit dev: cannot listen on {host}:{port}: {exc}", file=sys.stderr)
        raise SystemExit(1) from None
    try:
        if os.name == "posix":
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(BACKLOG)
    except OSError as exc:
        sock.close()
        reason = exc.strerror or str(exc)
        print(f"toolkit dev: cannot listen on {host}:{port}: {reason}; choose another --port", file=sys.stderr)
        raise SystemExit(1) from None
    with sock:
        yield sock


def announce(app: str, sock: socket.socket, *, host: str, path: str, docs: str, watching: Path | None) -> None:
    """Say where the app is served (with the real port) and whether changes are watched."""
    shown = f"[{host}]" if ":" in host else host
    base = f"http://{shown}:{sock.getsockname()[1]}"
    print(f"toolkit dev: serving {app} at {base}{path}", file=sys.stderr)
    print(f"toolkit dev: tools page at {base}{docs}", file=sys.stderr)
    if watching is None:
        print("toolkit dev: not watching for changes (--no-reload); Ctrl-C to stop", file=sys.stderr)
    else:
        print(f"toolkit dev: watching {watching} for changes to .py files; Ctrl-C to stop", file=sys.stderr)


@contextlib.contextmanager
def _stop_on_signals(stopping: threading.Event) -> Iterator[None]:
    """SIGINT and SIGTERM set ``stopping`` (the watcher checks it) instead of raising."""

    def handle(signum: int, frame: FrameType | None) -> None:
        stopping.set()

    originals = {sig: signal.signal(sig, handle) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, original in originals.items():
            signal.signal(sig, original)


class _Child:
    """The process serving the app on the supervisor's socket; started and stopped again on each change."""

    def __init__(self, command: list[str], fd: int) -> None:
        self.command = command
        self.fd = fd
        self.process: subprocess.Popen[bytes] | None = None
        self.reported = False

    def start(self) -> None:
        self.process = subprocess.Popen(self.command, pass_fds=(self.fd,), stdin=subprocess.PIPE, process_group=0)
        self.reported = False

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after ``STOP_SECONDS``."""
        process, self.process = self.process, None
        if process is None:
            return
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(STOP_SECONDS)
            except subprocess.TimeoutExpired:
                print(f"toolkit dev: the app did not stop within {STOP_SECONDS:g} s; killing it", file=sys.stderr)
                process.kill()
                process.wait()
        if process.stdin is not None:
            process.stdin.close()

    def report_if_ended(self) -> None:
        """Say once that the child ended by itself; it is started again on the next change, not now."""
        if self.process is None or self.reported or self.process.poll() is None:
            return
        self.reported = True
        code = self.process.returncode
        how = f"was killed by signal {-code}" if code < 0 else f"exited with status {code}"
        print(f"toolkit dev: the app's process {how}; save a change to start it again", file=sys.stderr)
