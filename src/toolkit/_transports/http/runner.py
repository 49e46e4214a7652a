"""Serving an app with uvicorn: one process with a graceful shutdown, or several workers."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import logging
import math
import os
import secrets
import signal
import socket
import sys
import threading
from collections.abc import Iterator, Sequence
from typing import Any, Final

import uvicorn
from starlette.applications import Starlette
from starlette.types import ASGIApp

from ..._mrtr import STATE_SECRET_ENV
from ..base import settle_allocator
from .app import McpEndpoint
from .onewrite import OneWriteProtocol

logger = logging.getLogger("toolkit")

WORKER_FACTORY: Final = "toolkit._loader:worker_app"
"""What each worker process imports to build its app (it loads ``$TOOLKIT_APP`` again)."""


def serve_app(
    app: Starlette,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    log_level: str = "warning",
    shutdown_grace: float | None = None,
) -> None:
    """Serve an app made by ``server.http_app`` with uvicorn until SIGTERM/SIGINT."""
    graceful_server(app, host=host, port=port, log_level=log_level, shutdown_grace=shutdown_grace).run()


def serve_asgi(
    app: ASGIApp, endpoint: McpEndpoint | None, *, host: str = "127.0.0.1", port: int = 8000, log_level: str = "warning"
) -> None:
    """Serve an ASGI app of the user's (Starlette, FastAPI) as it is, its lifespan run, until SIGTERM/SIGINT.

    ``endpoint``: the toolkit endpoint it mounts, if known, whose long-lived streams are ended
    first on shutdown.
    """
    graceful_server(app, endpoint=endpoint, host=host, port=port, log_level=log_level).run()


def graceful_server(
    app: ASGIApp,
    *,
    endpoint: McpEndpoint | None = None,
    host: str = "127.0.0.1",
    port: int = 8000,
    log_level: str = "warning",
    shutdown_grace: float | None = None,
) -> GracefulServer:
    """The uvicorn server ``serve_app`` runs (``.run()``; ``.run(sockets=[...])`` on sockets of one's own).

    ``endpoint`` defaults to the one of an app made by ``server.http_app()``; an app without one
    (an ASGI app mounting none) gets uvicorn's own graceful shutdown.
    """
    if endpoint is None:
        endpoint = getattr(getattr(app, "state", None), "mcp", None)
    if endpoint is None:
        grace = math.ceil(10.0 if shutdown_grace is None else shutdown_grace)
        config = uvicorn.Config(
            app,
            host=host,
            port=port,
            log_level=log_level,
            lifespan="on",
            timeout_graceful_shutdown=grace,
            http=OneWriteProtocol,
        )
        settle_allocator()
        return GracefulServer(config, None, banner=("serving at {base}",))
    if shutdown_grace is not None:
        endpoint.shutdown_grace = shutdown_grace
    # uvicorn's own deadline comes a little after ours, so requests still running when the grace
    # period ends are answered by toolkit (a JSON-RPC error), not cut off by uvicorn (a text 500).
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        lifespan="on",
        timeout_graceful_shutdown=math.ceil(endpoint.shutdown_grace) + 2,
        http=OneWriteProtocol,
    )
    settle_allocator()
    return GracefulServer(config, endpoint, banner=_banner(app))


def _banner(app: ASGIApp) -> tuple[str, ...]:
    """What ``toolkit run --transport http`` (and ``server.run("http")``) says once it listens, as uvicorn does."""
    state = getattr(app, "state", None)
    path = getattr(state, "mcp_path", None)
    if path is None:  # an ASGI app of the user's, mounting toolkit somewhere in it
        return ("serving at {base}",)
    lines = [f"serving MCP over Streamable HTTP at {{base}}{path}"]
    docs = getattr(state, "docs_path", None)
    if docs is not None:
        lines.append(f"tools page at {{base}}{docs}")
    return (*lines,)


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` for uvicorn to listen on; a failure ends the process saying what to do.

    uvicorn's own bind failure is a bare ``[Errno 98] ... address already in use`` in its log.
    """
    try:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)  # asyncio sets TCP_NODELAY only then
    except OSError as exc:
        _cannot_listen(host, port, exc)
    try:
        if os.name == "posix":
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        _cannot_listen(host, port, exc)
    sock.set_inheritable(True)
    return sock


def _cannot_listen(host: str, port: int, exc: OSError) -> Any:
    reason = exc.strerror or str(exc)
    hint = "; another server listens there: stop it or choose another --port" if exc.errno == errno.EADDRINUSE else ""
    print(f"toolkit: cannot listen on {host}:{port}: {reason}{hint or '; check --host and --port'}", file=sys.stderr)
    raise SystemExit(1) from None


def run_workers(
    app_spec: str | None,
    *,
    workers: int,
    host: str = "127.0.0.1",
    port: int = 8000,
    log_level: str = "warning",
    path: str | None = None,
    options: dict[str, Any] | None = None,
    shared_store: bool = False,
) -> None:
    """Serve ``app_spec`` (the CLI's APP) in ``workers`` uvicorn worker processes.

    ``path`` and ``options`` are the ``http_app`` arguments each worker builds its app with
    when APP names a ``Server`` (an app built in code keeps its own).
    """
    if app_spec is None:
        raise ValueError("workers > 1 needs the app given as 'path.py:attr' (use `toolkit run ... --workers N`)")
    if not shared_store and options is not None:
        # Without a shared store, legacy sessions live in one process, and the kernel spreads
        # connections over the workers: a session's next request would reach a worker that
        # never saw it. Serve legacy clients without sessions instead, and say so.
        logger.warning(
            "with %d workers and no shared store, legacy (2025-11-25 and older) clients are served WITHOUT "
            "sessions (no subscriptions, no resumable streams, no server-to-client requests); "
            "give --store redis://HOST:PORT/DB to keep them",
            workers,
        )
        options = {**options, "stateless": True}
    elif not shared_store:
        # An app built in code keeps its own options: its sessions stay in the worker that opened them.
        logger.warning(
            "with %d workers and no shared store, each legacy (2025-11-25 and older) session lives in one worker "
            "and its requests reaching another get 404; give --store redis://HOST:PORT/DB, or build the app "
            "with server.http_app(stateless=True)",
            workers,
        )
    if options is not None:
        os.environ["TOOLKIT_HTTP_OPTIONS"] = json.dumps(options)
    if path is not None:
        os.environ["TOOLKIT_HTTP_PATH"] = path
    if not shared_store:
        # Every worker must seal and open requestState with the same key; with a shared store
        # they agree on one through it, as replicas on other machines do.
        os.environ.setdefault(STATE_SECRET_ENV, secrets.token_hex(32))
    os.environ["TOOLKIT_APP"] = app_spec
    listen(host, port).close()  # a port in use is said plainly, before the workers start
    print(f"toolkit: serving {app_spec} in {workers} workers at http://{host}:{port}; Ctrl-C to stop", file=sys.stderr)
    uvicorn.run(
        WORKER_FACTORY, factory=True, host=host, port=port, workers=workers, log_level=log_level, http=OneWriteProtocol
    )


class GracefulServer(uvicorn.Server):
    """uvicorn's server, ending long-lived streams first on shutdown and exiting 0 after a signal.

    uvicorn re-raises SIGTERM/SIGINT once it has shut down, so the process would end "killed
    by signal"; a server that drained its requests as asked has succeeded and exits 0.
    """

    def __init__(self, config: uvicorn.Config, endpoint: McpEndpoint | None, banner: Sequence[str] = ()) -> None:
        super().__init__(config)
        self.endpoint = endpoint
        self.banner = banner
        """Lines said on stderr once listening on a socket of its own, ``{base}`` the URL (``run()``)."""

    def run(self, sockets: list[socket.socket] | None = None) -> None:
        """Serve; without ``sockets``, on one bound here, saying where once listening (a failure to bind, plainly)."""
        if sockets is None and self.config.fd is None and self.config.uds is None:
            sockets = [listen(self.config.host, self.config.port)]
        else:
            self.banner = ()  # sockets of the caller's (toolkit dev): the caller says where
        super().run(sockets=sockets)

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.banner and sockets:
            host, port = sockets[0].getsockname()[:2]
            base = f"http://{f'[{host}]' if ':' in host else host}:{port}"
            for line in (*self.banner, "Ctrl-C to stop"):
                print(f"toolkit: {line.format(base=base)}", file=sys.stderr, flush=True)

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        originals = {sig: signal.signal(sig, self.handle_exit) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            for sig, handler in originals.items():
                signal.signal(sig, handler)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        if self.endpoint is None:
            await super().shutdown(sockets)
            return
        self.endpoint.begin_shutdown()
        expiring = asyncio.create_task(self.endpoint.expire_requests())
        try:
            await super().shutdown(sockets)
        finally:
            expiring.cancel()
