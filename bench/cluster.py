"""The scale-out parts the ``store`` and ``scaleout`` scenarios start: redis-server and HAProxy.

The same approach as the test rig (``tests/support/redis.py``, ``tests/support/cluster.py``), on
the benchmark's own process handling (``bench/procs.py``: asyncio, registered, own process group,
always stopped) and without pytest, so the driver stays standard-library only:

- ``redis-server`` on 127.0.0.1 and a free port, nothing on disk (``--save "" --appendonly no``),
  ready once it answers ``PING`` with ``+PONG``;
- ``haproxy -f CFG -db`` in HTTP mode on a free port: ``balance roundrobin`` with no stickiness,
  ``option http-server-close`` (every request, even on a kept-alive client connection, is balanced
  on its own), ``option http-no-delay`` (SSE events pass at once), ``X-Served-By`` naming the
  replica that answered. Unlike the test rig it logs no line per request: that would be
  HAProxy CPU spent on the benchmark's behalf.

``redis-server`` and ``haproxy`` come from Debian's packages (``scripts/cluster --install-only``).
"""

import asyncio
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

from bench import procs

LOCALHOST = "127.0.0.1"
SERVED_BY = "X-Served-By"
INSTALL_HINT = "run scripts/cluster --install-only"


class Missing(RuntimeError):
    """redis-server or haproxy is not installed."""


def require(program: str) -> str:
    path = shutil.which(program)
    if path is None:
        raise Missing(f"{program} is not installed: {INSTALL_HINT}")
    return path


class RedisServer:
    """``redis-server`` on ``127.0.0.1:port``, no persistence; ``start`` waits for ``+PONG``."""

    def __init__(self, log: Path) -> None:
        self.port = procs.free_port()
        self.log = log
        self.process: asyncio.subprocess.Process | None = None
        self._dir = Path(tempfile.mkdtemp(prefix="bench-redis-"))

    @property
    def url(self) -> str:
        return f"redis://{LOCALHOST}:{self.port}/0"

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    async def start(self, timeout: float = 10.0) -> None:
        argv = [
            require("redis-server"),
            "--port",
            str(self.port),
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
            "",  # stdout: the log file
            "--dir",
            str(self._dir),
        ]
        self.process, _ = await procs.start(argv, {}, self.log, stdio=False)
        deadline = asyncio.get_running_loop().time() + timeout
        while not await self.command_ok(b"*1\r\n$4\r\nPING\r\n", b"+PONG\r\n"):
            if self.process.returncode is not None:
                raise RuntimeError(f"redis-server exited with {self.process.returncode} (log: {self.log})")
            if asyncio.get_running_loop().time() > deadline:
                raise TimeoutError(f"redis-server did not answer PING within {timeout:g}s (log: {self.log})")
            await asyncio.sleep(0.05)

    async def command_ok(self, request: bytes, reply: bytes) -> bool:
        """Send one RESP command; whether the reply is exactly ``reply``."""
        try:
            reader, writer = await asyncio.open_connection(LOCALHOST, self.port)
        except OSError:
            return False
        try:
            writer.write(request)
            async with asyncio.timeout(2.0):
                return await reader.readuntil(b"\r\n") == reply
        except (OSError, TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            return False
        finally:
            writer.close()

    async def stop(self) -> None:
        try:
            if self.process is not None:
                await procs.stop(self.process)
                self.process = None
        finally:
            shutil.rmtree(self._dir, ignore_errors=True)


def haproxy_config(
    port: int, backends: Sequence[tuple[str, int]], *, health_checks: bool = False, log: bool = True
) -> str:
    """The HAProxy configuration the tests run (``tests/support/cluster.py``), docs/deployment.md
    shows, and the benchmark uses without the per-request log (HAProxy CPU spent on its behalf)."""
    check = " check inter 500ms fall 1 rise 1" if health_checks else ""
    servers = "".join(f"    server {name} {LOCALHOST}:{backend_port}{check}\n" for name, backend_port in backends)
    logging = (
        "    # One line per request on stderr (Balancer.log): the server, retries, timings, termination.\n"
        if log
        else ""
    )
    logging += "    log stderr format raw local0\n" if log else ""
    log_defaults = "    log global\n    option httplog\n" if log else ""
    return f"""\
global
    maxconn 4096
{logging}
defaults
    mode http
{log_defaults}    # Close the server side after every response: each request, even on a kept-alive client
    # connection, is load-balanced on its own, and no idle connection to a replica outlives it.
    option http-server-close
    # Send every chunk at once: without it HAProxy holds small writes back (MSG_MORE) and an SSE
    # stream's first event reaches the client ~200 ms late.
    option http-no-delay
    # A refused connect (a killed replica) is retried twice; each retry goes to another server.
    retries 2
    option redispatch
    timeout connect 2s
    # SSE streams and long tool calls stay open for minutes.
    timeout client 10m
    timeout server 10m
    timeout http-keep-alive 10m
    timeout http-request 10s

frontend mcp
    bind {LOCALHOST}:{port}
    default_backend replicas

backend replicas
    balance roundrobin
    http-response set-header {SERVED_BY} %s
{servers}"""


class Balancer:
    """``haproxy -f CFG -db`` (foreground) on a free 127.0.0.1 port over ``backends``."""

    def __init__(self, backends: list[tuple[str, int]], log: Path) -> None:
        self.port = procs.free_port()
        self.backends = backends
        self.log = log
        self.process: asyncio.subprocess.Process | None = None
        self._dir = Path(tempfile.mkdtemp(prefix="bench-haproxy-"))

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    async def start(self, timeout: float = 10.0) -> None:
        config = self._dir / "haproxy.cfg"
        config.write_text(haproxy_config(self.port, self.backends, log=False), encoding="utf-8")
        argv = [require("haproxy"), "-f", str(config), "-db"]
        self.process, _ = await procs.start(argv, {}, self.log, stdio=False)
        await procs.wait_for_port(self.process, self.port, timeout)

    async def stop(self) -> None:
        try:
            if self.process is not None:
                await procs.stop(self.process)
                self.process = None
        finally:
            shutil.rmtree(self._dir, ignore_errors=True)
