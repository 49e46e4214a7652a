"""Scale-out rig: N ``toolkit run`` HTTP replicas behind a real HAProxy, round-robin per request.

    with cluster(WEATHER, replicas=3, store_url=redis.url) as running:
        reply = httpx.post(running.url, ...)
        reply.headers["X-Served-By"]        # "r0", "r1", ... : which replica answered
        running.replicas.kill("r1")         # SIGKILL; the balancer retries its requests elsewhere

The balancer has no stickiness and no health checks (unless asked): every request picks the next
replica, also on a kept-alive client connection, and a request whose connection to a dead replica
is refused is dispatched to another one. Responses stream through unbuffered (SSE), and idle
timeouts are 10 minutes. ``scripts/cluster --install-only`` installs ``haproxy`` and
``redis-server``; without them the test skips, or fails under ``TOOLKIT_TESTS_STRICT=1``.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import signal
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

# One configuration for the tests, the docs and the benchmark (which turns its log off).
from bench.cluster import SERVED_BY, haproxy_config
from tests.support.processes import LOCALHOST, REPO, TOOLKIT, free_port, stop, wait_for_port
from tests.support.redis_rig import log_tail, require, scratch_dir

__all__ = ["SERVED_BY", "Balancer", "Cluster", "Replicas", "Served", "cluster", "haproxy_config"]

# An ``option httplog`` line: ... <frontend> <backend>/<server> <timers> <status> ... "<method> <uri> <version>"
_LOG_LINE = re.compile(r' \S+ [^ /]+/(?P<server>\S+) \S+ (?P<status>\d{3}) .*"(?P<method>[A-Z]+) (?P<uri>\S+) [^"]*"$')


@dataclass(frozen=True)
class Served:
    """One request as the balancer logged it: which replica answered it, and how."""

    server: str
    status: int
    method: str
    path: str
    query: str


class Balancer:
    """``haproxy -db`` on ``127.0.0.1:port`` in HTTP mode over ``backends`` ((name, port) pairs)."""

    def __init__(
        self,
        backends: Sequence[tuple[str, int]],
        *,
        port: int | None = None,
        health_checks: bool = False,
        timeout: float = 10.0,
    ) -> None:
        self.backends = list(backends)
        self._port = port or free_port()
        self.health_checks = health_checks
        self.timeout = timeout
        self._dir = scratch_dir("toolkit-haproxy-", self)
        self.config_path = self._dir / "haproxy.cfg"
        self._log = self._dir / "haproxy.log"
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def port(self) -> int:
        return self._port

    def url(self, path: str = "/mcp") -> str:
        return f"http://{LOCALHOST}:{self._port}{path}"

    @property
    def config(self) -> str:
        return haproxy_config(self._port, self.backends, health_checks=self.health_checks)

    @property
    def log(self) -> str:
        return log_tail(self._log, size=1_000_000)

    def served(self) -> list[Served]:
        """Every request logged so far, in order (HAProxy writes a request's line once it is answered)."""
        requests = []
        for line in self.log.splitlines():
            found = _LOG_LINE.search(line)
            if found is not None:
                path, _, query = found["uri"].partition("?")
                requests.append(Served(found["server"], int(found["status"]), found["method"], path, query))
        return requests

    def __enter__(self) -> Balancer:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.stop()

    def start(self) -> None:
        """Write the configuration, run haproxy in the foreground, wait for its port."""
        if self._process is not None and self._process.poll() is None:
            raise AssertionError(f"haproxy is already running on port {self._port}")
        haproxy = require("haproxy")
        self.config_path.write_text(self.config, encoding="utf-8")
        with self._log.open("ab") as log:
            self._process = subprocess.Popen(
                [haproxy, "-f", str(self.config_path), "-db"], stdin=subprocess.DEVNULL, stdout=log, stderr=log
            )
        try:
            wait_for_port(self._port, timeout=self.timeout, process=self._process)
        except AssertionError as error:
            self.stop()
            raise AssertionError(f"haproxy did not start: {error}\n{log_tail(self._log)}") from None

    def stop(self, timeout: float = 5.0) -> None:
        """SIGTERM (haproxy's hard stop), then SIGKILL after ``timeout``."""
        if self._process is not None:
            stop(self._process, timeout)
            self._process = None


class Replicas:
    """``toolkit run APP --transport http`` replicas ``r0``, ``r1``, ... on free 127.0.0.1 ports.

    ``command="proxy"`` makes them ``toolkit proxy TARGET --transport http`` (APP is the TARGET).
    ``store_url`` adds ``--store URL``; ``extra_args`` go after the standard options. Every
    replica gets the environment of the tests plus ``TOOLKIT_STATE_SECRET`` (one random value
    shared by all), then ``env`` on top. A replica keeps its port across :meth:`restart`.
    """

    def __init__(
        self,
        app: str | os.PathLike[str],
        count: int = 3,
        *,
        store_url: str | None = None,
        extra_args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        cwd: Path = REPO,
        timeout: float = 20.0,
        command: str = "run",
    ) -> None:
        if count < 1:
            raise ValueError("at least one replica")
        self.app = str(app)
        self.command = command
        self.names = [f"r{index}" for index in range(count)]
        self._ports = {name: free_port() for name in self.names}
        self.store_url = store_url
        self.extra_args = list(extra_args)
        self.env = {**os.environ, "TOOLKIT_STATE_SECRET": secrets.token_urlsafe(32), **(env or {})}
        self.cwd = cwd
        self.timeout = timeout
        self._dir = scratch_dir("toolkit-replicas-", self)
        self._processes: dict[str, subprocess.Popen[bytes]] = {}

    @property
    def ports(self) -> list[int]:
        return [self._ports[name] for name in self.names]

    @property
    def backends(self) -> list[tuple[str, int]]:
        """``(name, port)`` pairs, for :class:`Balancer`."""
        return [(name, self._ports[name]) for name in self.names]

    def port(self, name: str) -> int:
        return self._ports[self._known(name)]

    def argv(self, name: str) -> list[str]:
        argv = [
            str(TOOLKIT),
            self.command,
            self.app,
            "--transport",
            "http",
            "--host",
            LOCALHOST,
            "--port",
            str(self.port(name)),
        ]
        if self.store_url is not None:
            argv += ["--store", self.store_url]
        return [*argv, *self.extra_args]

    def pid(self, name: str) -> int:
        """The process id of running replica ``name`` (a tool can say which replica ran it)."""
        process = self._processes.get(self._known(name))
        if process is None or process.poll() is not None:
            raise AssertionError(f"replica {name} is not running")
        return process.pid

    def running(self, name: str) -> bool:
        process = self._processes.get(self._known(name))
        return process is not None and process.poll() is None

    def stderr(self, name: str) -> str:
        """What replica ``name`` wrote on stdout and stderr, across restarts."""
        return log_tail(self._stderr_path(self._known(name)), size=1_000_000)

    def __enter__(self) -> Replicas:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.stop()

    def start(self, *names: str) -> None:
        """Start the named replicas (all by default) together, then wait until each one listens."""
        names = names or tuple(self.names)
        for name in names:
            if self.running(name):
                raise AssertionError(f"replica {name} is already running")
        try:
            for name in names:
                with self._stderr_path(name).open("ab") as log:
                    self._processes[name] = subprocess.Popen(
                        self.argv(name), stdin=subprocess.DEVNULL, stdout=log, stderr=log, cwd=self.cwd, env=self.env
                    )
            for name in names:
                try:
                    wait_for_port(self._ports[name], timeout=self.timeout, process=self._processes[name])
                except AssertionError as error:
                    raise AssertionError(f"replica {name}: {error}\n{self.stderr(name)[-3000:]}") from None
        except BaseException:
            self.stop(*names)
            raise

    def stop(self, *names: str, timeout: float = 10.0) -> None:
        """SIGTERM the named replicas (all by default), SIGKILL any still there after ``timeout``."""
        names = names or tuple(self._processes)
        for name in names:  # all get SIGTERM first: they shut down in parallel
            process = self._processes.get(name)
            if process is not None and process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for name in names:
            process = self._processes.pop(name, None)
            if process is not None:
                stop(process, timeout)

    def kill(self, name: str) -> None:
        """SIGKILL replica ``name`` and reap it: it vanishes mid-flight, as in a crash."""
        process = self._processes.pop(self._known(name), None)
        if process is not None:
            process.kill()
            process.wait()

    def restart(self, name: str) -> None:
        """Stop replica ``name`` (if it runs) and start it again on its port."""
        self.stop(self._known(name))
        self.start(name)

    def _known(self, name: str) -> str:
        if name not in self._ports:
            raise KeyError(f"no replica {name!r}; there are {self.names}")
        return name

    def _stderr_path(self, name: str) -> Path:
        return self._dir / f"{name}.stderr"


@dataclass
class Cluster:
    balancer: Balancer
    replicas: Replicas

    @property
    def url(self) -> str:
        """The balancer's ``/mcp`` endpoint."""
        return self.balancer.url()


@contextlib.contextmanager
def cluster(
    app: str | os.PathLike[str],
    replicas: int = 3,
    store_url: str | None = None,
    extra_args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    *,
    health_checks: bool = False,
    balancer_port: int | None = None,
    command: str = "run",
) -> Iterator[Cluster]:
    """``replicas`` replicas of ``app`` behind a :class:`Balancer`; everything is stopped at the end
    (the balancer first), whatever happens. ``balancer_port``: the balancer's port, when the replicas
    must know their public URL before they start (an ``OAuthProxy``'s ``base_url``). ``command``: see
    :class:`Replicas`."""
    require("haproxy")
    group = Replicas(app, replicas, store_url=store_url, extra_args=extra_args, env=env, command=command)
    balancer = Balancer(group.backends, port=balancer_port, health_checks=health_checks)
    try:
        group.start()
        balancer.start()
        yield Cluster(balancer, group)
    finally:
        try:
            balancer.stop()
        finally:
            group.stop()
