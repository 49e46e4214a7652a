"""Serving an app with uvicorn: one process with a graceful shutdown, or several workers."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import os
import secrets
import signal
import socket
import threading
from collections.abc import Iterator
from typing import Any, Final

import uvicorn
from starlette.applications import Starlette
from starlette.types import ASGIApp

from ..._mrtr import STATE_SECRET_ENV
from ..base import settle_allocator
from .app import McpEndpoint

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
            app, host=host, port=port, log_level=log_level, lifespan="on", timeout_graceful_shutdown=grace
        )
        settle_allocator()
        return GracefulServer(config, None)
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
    )
    settle_allocator()
    return GracefulServer(config, endpoint)


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
    uvicorn.run(WORKER_FACTORY, factory=True, host=host, port=port, workers=workers, log_level=log_level)


class GracefulServer(uvicorn.Server):
    """uvicorn's server, ending long-lived streams first on shutdown and exiting 0 after a signal.

    uvicorn re-raises SIGTERM/SIGINT once it has shut down, so the process would end "killed
    by signal"; a server that drained its requests as asked has succeeded and exits 0.
    """

    def __init__(self, config: uvicorn.Config, endpoint: McpEndpoint | None) -> None:
        super().__init__(config)
        self.endpoint = endpoint

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
