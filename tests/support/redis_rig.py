"""A real ``redis-server`` for tests: 127.0.0.1, a free port, no persistence, always stopped.

    with redis_server() as redis:
        run_replicas(store_url=redis.url)
        redis.restart()          # the same port: take the store away and bring it back
        assert redis.keys_count() == 0

``scripts/cluster --install-only`` installs ``redis-server`` (and ``haproxy``) from apt. Without
it the test skips, or fails under ``TOOLKIT_TESTS_STRICT=1`` (``scripts/test`` installs it first).
The server keeps nothing on disk (``--save "" --appendonly no``): a restart starts empty.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
import weakref
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, NoReturn

import pytest
from tests.support.processes import LOCALHOST, free_port, stop

if TYPE_CHECKING:
    from toolkit.stores import Store

INSTALL_HINT = "run scripts/cluster --install-only"


def missing(what: str) -> NoReturn:
    """Skip the test, or fail it under ``TOOLKIT_TESTS_STRICT`` (where every rig is installed first)."""
    if os.environ.get("TOOLKIT_TESTS_STRICT"):  # scripts/test installs every rig first
        pytest.fail(what)
    pytest.skip(what)


def require(program: str) -> str:
    """The path of ``program`` (``redis-server``, ``haproxy``); skips or fails the test without it."""
    path = shutil.which(program)
    if path is None:
        missing(f"{program} is not installed: {INSTALL_HINT}")
    return path


def scratch_dir(prefix: str, owner: object) -> Path:
    """A new temporary directory, removed when ``owner`` is garbage-collected (or at exit), so its
    logs can still be read after the process stopped."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    weakref.finalize(owner, shutil.rmtree, path, ignore_errors=True)
    return path


def log_tail(path: Path, size: int = 2000) -> str:
    try:
        return path.read_text("utf-8", "replace")[-size:]
    except OSError:
        return ""


class RedisServer:
    """``redis-server`` on ``127.0.0.1:port``; the port survives ``restart()``."""

    def __init__(self, *, port: int | None = None, timeout: float = 10.0) -> None:
        self._port = port or free_port()
        self.timeout = timeout
        self._dir = scratch_dir("toolkit-redis-", self)
        self._log = self._dir / "redis.log"
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def port(self) -> int:
        return self._port

    @property
    def url(self) -> str:
        return f"redis://{LOCALHOST}:{self._port}/0"

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    @property
    def log(self) -> str:
        """Everything the server logged, across restarts."""
        return log_tail(self._log, size=1_000_000)

    def __enter__(self) -> RedisServer:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.stop()

    def start(self) -> None:
        """Start it and wait until it answers PING with +PONG (AssertionError with the log tail if not)."""
        if self.running:
            raise AssertionError(f"redis-server is already running on port {self._port}")
        argv = [
            require("redis-server"),
            "--port",
            str(self._port),
            "--bind",
            LOCALHOST,
            "--save",
            "",
            "--appendonly",
            "no",
            "--daemonize",
            "no",
            "--protected-mode",
            "yes",
            "--logfile",
            "",  # stdout, which goes to the log file
            "--dir",
            str(self._dir),
        ]
        with self._log.open("ab") as log:
            self._process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        deadline = time.monotonic() + self.timeout
        while not self._pong():
            if self._process.poll() is not None:
                code = self._process.returncode
                raise AssertionError(f"redis-server exited with {code} on port {self._port}:\n{log_tail(self._log)}")
            if time.monotonic() > deadline:
                self.stop()
                raise AssertionError(
                    f"redis-server did not answer PING on port {self._port} within {self.timeout:g} s:\n"
                    + log_tail(self._log)
                )
            time.sleep(0.05)

    def _pong(self) -> bool:
        with contextlib.suppress(OSError), socket.create_connection((LOCALHOST, self._port), timeout=0.5) as sock:
            sock.sendall(b"*1\r\n$4\r\nPING\r\n")
            reply = b""
            while not reply.endswith(b"\r\n"):
                chunk = sock.recv(64)
                if not chunk:
                    break
                reply += chunk
            return reply == b"+PONG\r\n"  # -LOADING ... while it starts: not yet
        return False

    def stop(self, timeout: float = 5.0) -> None:
        """SIGTERM, then SIGKILL after ``timeout``; nothing if it is not running."""
        if self._process is not None:
            stop(self._process, timeout)
            self._process = None

    def kill(self) -> None:
        """SIGKILL: the store vanishes mid-flight, as in a crash."""
        if self._process is not None:
            self._process.kill()
            self._process.wait()
            self._process = None

    def restart(self) -> None:
        """Stop it, then start it again on the same port (empty: nothing is persisted)."""
        self.stop()
        self.start()

    def command(self, *args: Any) -> Any:
        """One command with the ``redis`` package's client (replies decoded to ``str``)."""
        import redis  # here: only the tests that start a server need the package

        client = redis.Redis(host=LOCALHOST, port=self._port, db=0, decode_responses=True, socket_timeout=5)
        try:
            return client.execute_command(*args)
        finally:
            client.close()

    def keys_count(self) -> int:
        """How many keys database 0 holds (DBSIZE)."""
        return int(self.command("DBSIZE"))

    def flushall(self) -> None:
        self.command("FLUSHALL")


@contextlib.contextmanager
def redis_server(*, port: int | None = None, timeout: float = 10.0) -> Iterator[RedisServer]:
    """A started :class:`RedisServer` for the ``with`` block; stopped at the end, whatever happens."""
    server = RedisServer(port=port, timeout=timeout)
    try:
        server.start()
        yield server
    finally:
        server.stop()


@contextlib.asynccontextmanager
async def replica_stores(request: pytest.FixtureRequest) -> AsyncIterator[tuple[Store, Store]]:
    """Two replicas' stores of one deployment, started, for a contract test parametrized
    ``["memory", "redis"]``: one ``MemoryStore`` twice (a memory store is its only replica), or two
    ``RedisStore``s on the module's ``redis`` fixture (started if needed, flushed); closed after."""
    from toolkit.stores import MemoryStore, RedisStore

    made: list[Store] = []
    if request.param == "memory":
        made.append(MemoryStore())
    else:
        redis: RedisServer = request.getfixturevalue("redis")
        if not redis.running:
            redis.start()
        redis.flushall()
        made += [RedisStore(redis.url), RedisStore(redis.url)]
    try:
        for store in made:
            await store.start()
        yield made[0], made[-1]
    finally:
        for store in made:
            await store.close()
