"""Server subprocesses for tests: free ports, ``toolkit run`` over HTTP, always stopped.

    with http_server(WEATHER) as running:
        httpx.post(running.url, ...)

The server binds 127.0.0.1 on a free port; on exit it gets SIGTERM, then SIGKILL if it hangs.
"""

from __future__ import annotations

import contextlib
import functools
import os
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

REPO = Path(__file__).resolve().parents[2]
VENV_BIN = REPO / ".venv" / "bin"
TOOLKIT = VENV_BIN / "toolkit"
PYTHON = VENV_BIN / "python"
LOCALHOST = "127.0.0.1"


LANES = 16
"""Test processes that may pick ports at once: xdist's workers, for each event loop's pass."""


def _ephemeral_low() -> int:
    """Where the kernel's range for outgoing connections and ``bind(0)`` begins (Linux: 32768)."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


@functools.cache
def _lane() -> range | None:
    """This test process's ports: its xdist worker's lane (``gw3``: the fourth), the uvloop pass's
    lanes apart (it runs beside other suites, scripts/test); ``None`` without room for lanes."""
    low, high = 10000, _ephemeral_low()
    size = (high - low) // LANES
    if size < 64:
        return None
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    index = int(worker[2:]) if worker.startswith("gw") and worker[2:].isdigit() else 0
    shift = LANES // 2 if os.environ.get("TOOLKIT_TEST_LOOP") == "uvloop" else 0
    begin = low + ((index % (LANES // 2)) + shift) * size
    return range(begin, begin + size)


_turn = os.getpid()
"""Where this process is in its lane: from its pid, so a restarted worker does not begin where the last one did."""


def free_port(host: str = LOCALHOST) -> int:
    """A TCP port nothing listens on right now, from this test process's own lane of ports.

    A port the kernel hands out (``bind(0)``) may be handed to a test running at the same time in
    another worker before the server meant for it binds it: the cluster rig's balancer once sent
    a replica's requests to another test's gateway. So each worker takes its ports from a range of
    its own, below the kernel's range (which no ``bind(0)`` or outgoing connection uses), in turn,
    skipping any port in use; without room below the kernel's range, ``bind(0)`` as before.
    """
    global _turn
    ports = _lane()
    if ports is None:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind((host, 0))
            chosen: int = sock.getsockname()[1]
            return chosen
    for _ in ports:
        port = ports[_turn % len(ports)]
        _turn += 1
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind((host, port))
            except OSError:
                continue
        return port
    raise RuntimeError(f"no free port in {ports.start}-{ports.stop - 1}")


def wait_for_port(
    port: int, *, host: str = LOCALHOST, timeout: float = 20.0, process: subprocess.Popen[bytes] | None = None
) -> None:
    """Block until something accepts connections on ``host:port``."""
    deadline = time.monotonic() + timeout
    while True:
        if process is not None and process.poll() is not None:
            raise AssertionError(f"the server exited with code {process.returncode} before listening on {port}")
        with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=0.5):
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"nothing listened on {host}:{port} after {timeout:g} s")
        time.sleep(0.05)


def stop(process: subprocess.Popen[bytes], timeout: float = 10.0) -> int:
    """SIGTERM, then SIGKILL if the process is still there after ``timeout``; the exit code."""
    if process.poll() is None:
        process.terminate()
        try:
            return process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
    return process.wait()


@dataclass
class RunningServer:
    process: subprocess.Popen[bytes]
    host: str
    port: int
    path: str
    _stderr: IO[bytes]

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def url(self) -> str:
        return self.base_url + self.path

    @property
    def stderr(self) -> str:
        self._stderr.flush()
        return Path(self._stderr.name).read_text("utf-8", "replace")


@contextlib.contextmanager
def http_server(
    app: str | os.PathLike[str],
    *args: str,
    path: str = "/mcp",
    cwd: Path = REPO,
    env: dict[str, str] | None = None,
    timeout: float = 20.0,
    port: int | None = None,
) -> Iterator[RunningServer]:
    """``toolkit run APP --transport http`` on a free 127.0.0.1 port (or ``port``), for the ``with`` block."""
    port = port or free_port()
    argv: Sequence[str] = [
        str(TOOLKIT),
        "run",
        str(app),
        "--transport",
        "http",
        "--host",
        LOCALHOST,
        "--port",
        str(port),
        "--path",
        path,
        *args,
    ]
    with tempfile.NamedTemporaryFile(prefix="toolkit-server-", suffix=".stderr") as stderr:
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=stderr, stderr=stderr, cwd=cwd, env=env)
        try:
            wait_for_port(port, timeout=timeout, process=process)
            yield RunningServer(process, LOCALHOST, port, path, stderr)
        finally:
            stop(process)
