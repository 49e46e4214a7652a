"""The process ``toolkit dev`` serves an app in, on the socket its supervisor bound (see ``_dev``).

When the app loads, it is served as ``toolkit run --transport http --docs`` serves it (the same
uvicorn server, graceful shutdown and signal handling). When it does not (a syntax error, an
exception at import, a registration error), the error is printed as ``toolkit run`` prints it and
the socket serves it instead until the next change restarts the process: the page paths answer a
500 HTML page showing it, and the MCP endpoint a 503 JSON-RPC error naming the file and line, so
a client or a browser left open says what is wrong rather than "connection refused".
"""

from __future__ import annotations

import asyncio
import html
import json
import logging
import os
import signal
import socket
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from ._dev_watchdog import LoopWatchdog
from ._errors import INTERNAL_ERROR
from ._loader import (
    HostApp,
    Target,
    auth_from_environment,
    deployment_settings,
    load_target,
    mounted_app,
    server_of,
    store_from_environment,
)
from ._server import Server
from ._transports.http.docs import ToolsPage
from ._transports.http.runner import graceful_server
from ._transports.http.security import HostGuard

DEV_SHUTDOWN_GRACE: Final = 2.0
"""Seconds in-flight requests get when the app restarts (``toolkit run`` gives 10): a restart should be quick."""
MAX_PEEKED_BODY: Final = 1 << 20
"""The largest request body the load-error endpoint reads to answer with the request's id."""


@dataclass(frozen=True)
class LoadFailure:
    """Why the app did not load, as ``toolkit run`` would say it."""

    text: str
    """The whole message (``toolkit run``'s: the user's frames, or toolkit's registration error)."""
    where: str | None
    """``app.py:12``, the user's line it points at, when there is one."""
    headline: str
    """One line: ``SyntaxError: invalid syntax (app.py, line 12)``."""


def serve_child(
    app_spec: str,
    fd: int,
    *,
    path: str,
    docs: str,
    log_level: str,
    describe: Callable[[Exception], LoadFailure],
) -> None:
    """The child's whole life: serve ``app_spec`` on socket ``fd``, or why it failed to load."""
    sock = socket.socket(fileno=fd)
    _follow_supervisor()
    prepared = prepare(app_spec, path=path, docs=docs, describe=describe)
    if isinstance(prepared, LoadFailure):
        serve_failure(prepared, sock, app_spec=app_spec, path=path, docs=docs, log_level=log_level)
    else:
        serve(prepared, sock, log_level=log_level)


def prepare(
    app_spec: str, *, path: str, docs: str, describe: Callable[[Exception], LoadFailure]
) -> ASGIApp | LoadFailure:
    """The app to serve, loaded and configured as ``toolkit run --transport http`` does; or why not."""
    try:
        target = load_target(app_spec)
    except Exception as exc:
        return describe(exc)
    try:
        auth_from_environment(target, path=path)
        store_from_environment(target)
        deployment_settings(target)
        return app_for(target, app_spec=app_spec, path=path, docs=docs)
    except (ValueError, ImportError) as exc:
        return LoadFailure(f"toolkit: {exc}", None, str(exc))


def app_for(target: Target, *, app_spec: str, path: str, docs: str) -> ASGIApp:
    """The app to serve: a ``Server``'s with the tools page, or one built in code as it was built.

    A tool's exception reaches the client in full (``mask_errors=False``): in development the
    client is the person who wrote the tool, and "Error executing tool" tells them nothing.
    """
    mounted = target.mounted if isinstance(target, HostApp) else target
    if mounted is not None:
        server_of(mounted).mask_errors = False
    if isinstance(target, Server):
        return target.http_app(path, docs=docs, shutdown_grace=DEV_SHUTDOWN_GRACE)
    ignored = [flag for flag, given in (("--path", path != "/mcp"), ("--docs-path", docs != "/docs")) if given]
    made = "an ASGI app of its own" if isinstance(target, HostApp) else "an app made by server.http_app()"
    if ignored:
        raise ValueError(f"{app_spec} is {made}; set {', '.join(ignored)} there, in code")
    if isinstance(target, HostApp):
        return target.app
    endpoint = target.state.mcp
    for route in target.routes:
        own_path = getattr(route, "path", path)
        if getattr(route, "endpoint", None) is endpoint and own_path != path:
            print(f"toolkit dev: {app_spec} serves MCP at its own path, {own_path}", file=sys.stderr)
    if not any(isinstance(getattr(route, "endpoint", None), ToolsPage) for route in target.routes):
        print(
            f"toolkit dev: {app_spec} was made by server.http_app() without docs=, so it has no tools page "
            "(give it docs=True)",
            file=sys.stderr,
        )
    return target


def serve(app: ASGIApp, sock: socket.socket, *, log_level: str) -> None:
    """Serve ``app`` on ``sock`` until SIGTERM/SIGINT, as ``runner.serve_app`` serves on a port."""
    mounted = mounted_app(app)
    endpoint = mounted.state.mcp if mounted is not None else None
    watchdog = LoopWatchdog(server_of(mounted) if mounted is not None else None)

    async def watched(scope: Scope, receive: Receive, send: Send) -> None:
        if not watchdog.started:  # the lifespan's scope comes first, on the loop that serves
            watchdog.start(asyncio.get_running_loop())
        await app(scope, receive, send)

    server = graceful_server(watched, endpoint=endpoint, log_level=log_level, shutdown_grace=DEV_SHUTDOWN_GRACE)
    _quiet_restarts(log_level)
    try:
        server.run(sockets=[sock])
    finally:
        watchdog.stop()


def _quiet_restarts(log_level: str) -> None:
    """At ``info``, keep uvicorn's access log but not its eight start and stop lines per restart."""
    # uvicorn.Config() has just configured its loggers; "uvicorn.error" is its lifecycle log.
    if log_level.lower() == "info":
        logging.getLogger("uvicorn.error").setLevel(logging.WARNING)


def serve_failure(
    failure: LoadFailure, sock: socket.socket, *, app_spec: str, path: str, docs: str, log_level: str
) -> None:
    """Say why the app failed to load, and serve that on ``sock`` until SIGTERM."""
    print(failure.text, file=sys.stderr)
    print("toolkit dev: fix it and save; the app restarts on the next change", file=sys.stderr)
    config = uvicorn.Config(
        failure_app(failure, app_spec=app_spec, path=path, docs=docs),
        log_level=log_level,
        lifespan="off",
        timeout_graceful_shutdown=1,
    )
    _quiet_restarts(log_level)
    uvicorn.Server(config).run(sockets=[sock])


def _follow_supervisor() -> None:
    """Stop this process (as SIGTERM does) when the supervisor is gone: its end of our stdin closes."""

    def wait() -> None:
        try:
            while os.read(0, 4096):
                pass
        except OSError:
            return
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=wait, name="toolkit-dev-supervisor", daemon=True).start()


def failure_app(failure: LoadFailure, *, app_spec: str, path: str, docs: str) -> Starlette:
    """What the socket serves while the app cannot load: the error, as a page and as a JSON-RPC error."""
    guard = HostGuard(allowed_hosts=None, allowed_origins=None)
    at = f" ({failure.where})" if failure.where else ""
    message = (
        f"The app {app_spec} failed to load{at}: {failure.headline}. "
        "Fix it and save: toolkit dev restarts the app on the next change."
    )
    page = _failure_page(failure, app_spec)

    async def show(request: Request) -> Response:
        refused = guard.check(request.headers)
        if refused is not None:
            return PlainTextResponse(refused[1], status_code=refused[0])
        return HTMLResponse(page, status_code=500, headers=_PAGE_HEADERS)

    async def unavailable(request: Request) -> Response:
        refused = guard.check(request.headers)
        if refused is not None:
            return PlainTextResponse(refused[1], status_code=refused[0])
        request_id = await _request_id(request) if request.method == "POST" else None
        error = {"code": INTERNAL_ERROR, "message": message, "data": {"where": failure.where, "detail": failure.text}}
        return JSONResponse({"jsonrpc": "2.0", "id": request_id, "error": error}, status_code=503)

    routes = [Route(path, unavailable, methods=["GET", "POST", "DELETE"])]
    routes += [Route(page_path, show, methods=["GET", "HEAD"]) for page_path in dict.fromkeys((docs, "/"))]
    return Starlette(routes=routes)


_PAGE_HEADERS: Final = {
    "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'",
    "x-content-type-options": "nosniff",
    "cache-control": "no-store",
}


def _failure_page(failure: LoadFailure, app_spec: str) -> str:
    name = html.escape(app_spec)
    at = f" at <code>{html.escape(failure.where)}</code>" if failure.where else ""
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{name} failed to load</title>
<style>
body {{ font: 16px/1.5 system-ui, sans-serif; margin: 2rem auto; max-width: 60rem; padding: 0 1rem; }}
h1 {{ font-size: 1.4rem; color: #b00020; }}
pre {{ background: #f6f6f6; border: 1px solid #ddd; padding: 1rem; overflow: auto; }}
</style>
</head>
<body>
<h1>{name} failed to load{at}</h1>
<pre>{html.escape(failure.text)}</pre>
<p>Fix it and save: <code>toolkit dev</code> restarts the app; then reload this page.</p>
</body>
</html>
"""


async def _request_id(request: Request) -> Any:
    """The JSON-RPC id of the request, to answer it in kind; None if there is none to read."""
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_PEEKED_BODY:
            return None
    try:
        message = json.loads(body)
    except ValueError:
        return None
    request_id = message.get("id") if isinstance(message, dict) else None
    return request_id if isinstance(request_id, str | int) and not isinstance(request_id, bool) else None
