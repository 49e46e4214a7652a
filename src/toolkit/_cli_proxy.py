"""``toolkit proxy TARGET``: another MCP server, or every server of an ``mcpServers`` file, served as one gateway.

TARGET is a URL (Streamable HTTP), a quoted command (stdio), or a ``.json`` config file in the
format hosts use (``_proxy_config``): one server is proxied as it is (``Server.proxy``), a file's
servers each under its entry's name as namespace (``server.mount(toolkit.Client(...), name)``).
The gateway connects to its upstreams before it reads a request (``Gateway.connected``), so the
first request sees their tools and an upstream that cannot be reached stops the start with one
line saying why; of a file's several servers, one that cannot be reached is left out and joins
once it answers, and only none at all stops the start. The CLI imports this module only for this
command: it loads the client.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import shlex
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, Final

from ._cli_remote import headers_of
from ._environment import settings_from_environment
from ._errors import ToolkitError
from ._loader import AUTH_ENVIRONMENT, auth_from_environment, unreachable_store
from ._proxy_config import ConfigError, read_servers
from ._server import Server
from ._versions import KNOWN_VERSIONS
from .client import Client

UPSTREAM_TOKEN_ENVIRONMENT: Final = "TOOLKIT_UPSTREAM_TOKEN"
"""The bearer token for a URL TARGET when ``--upstream-token`` is not given (``$TOOLKIT_TOKEN`` is the CLI client's)."""

TARGET_HELP: Final = (
    "the server to proxy: a URL (Streamable HTTP), a quoted command (stdio), e.g. 'python server.py', or a "
    "JSON config file of servers in the mcpServers format hosts use (one namespace per server)"
)


class NotStarted(ToolkitError):
    """An upstream could not be reached (or its names clash) when the gateway started."""


class Gateway(Server):
    """``toolkit proxy``'s server: its upstreams are connected (``connected``) before a transport serves it,
    so an upstream that cannot be reached is one clear message and exit status 1, not a traceback
    from inside the transport. The transport's ``running()`` then shares the run already started.
    """

    @contextlib.asynccontextmanager
    async def connected(self) -> AsyncIterator[None]:
        """The upstreams connected and their lists taken, for the ``async with`` block; ``NotStarted`` if not."""
        stack = contextlib.AsyncExitStack()
        try:
            await stack.enter_async_context(self.running())
        except (OSError, TimeoutError, ToolkitError) as exc:
            raise NotStarted(str(exc) or type(exc).__name__) from exc
        async with stack:
            sources = [source for _, source in self.mounted]
            if sources and all(getattr(source, "unreachable", None) for source in sources):
                # A file's servers each join when they can (mount(required=False)); none at all is no gateway.
                raise NotStarted(
                    "none of its servers could be reached: "
                    + "; ".join(f"{source.label}: {source.unreachable}" for source in sources)
                )
            yield


def parser(auth_options: Callable[[argparse.ArgumentParser], None]) -> argparse.ArgumentParser:
    """``toolkit proxy``'s arguments; ``auth_options`` adds ``toolkit run``'s authorization flags."""
    command = argparse.ArgumentParser(
        prog="toolkit proxy",
        description="Serve another MCP server, or every server of an mcpServers config file, as one gateway.",
    )
    command.add_argument("target", metavar="TARGET", help=TARGET_HELP)
    command.add_argument(
        "--transport", choices=("stdio", "http"), default="stdio", help="how the gateway is served (default stdio)"
    )
    command.add_argument("--host", default="127.0.0.1", help="HTTP: interface to bind (default 127.0.0.1)")
    command.add_argument("--port", type=int, default=8000, help="HTTP: port (default 8000)")
    command.add_argument("--path", default="/mcp", help="HTTP: endpoint path (default /mcp)")
    command.add_argument("--name", default="proxy", help="the gateway's name, its serverInfo (default proxy)")
    command.add_argument(
        "--unwrap-results",
        action="store_true",
        help='give 2026-07-28 callers x for an upstream\'s declared {"result": x} wrapper (and its natural schema)',
    )
    command.add_argument(
        "--sessions",
        choices=("auto", "shared", "per_session"),
        default="auto",
        help="upstream sessions: auto (one per legacy caller session for a legacy upstream, else shared; default), "
        "shared, per_session",
    )
    command.add_argument(
        "--forward-token",
        action="store_true",
        help="HTTP with authorization: send each caller's own bearer token upstream (off: it never leaves the gateway)",
    )
    command.add_argument(
        "--allowed-host",
        metavar="HOST",
        action="append",
        default=None,
        help="HTTP: extra Host header value to accept (repeatable)",
    )
    command.add_argument(
        "--allowed-origin", metavar="ORIGIN", action="append", default=None, help="HTTP: extra Origin to accept"
    )
    command.add_argument(
        "--resumable",
        action="store_true",
        help="HTTP: keep each legacy SSE stream's events in memory, so a client that lost one resumes it with "
        "Last-Event-ID (SEP-1699)",
    )
    command.add_argument(
        "--store",
        metavar="URL",
        help="HTTP: keep the gateway's legacy sessions and what its replicas tell each other in Redis "
        "(redis://HOST:PORT/DB), so that any replica behind a load balancer serves any request",
    )
    command.add_argument(
        "--log-level", metavar="LEVEL", default="warning", help="toolkit's log level on stderr (default warning)"
    )
    upstream = command.add_argument_group("the upstream server(s)")
    upstream.add_argument(
        "--protocol-version",
        choices=(*KNOWN_VERSIONS, "auto"),
        metavar="VERSION",
        default="auto",
        help=f"the version to speak upstream: {', '.join(KNOWN_VERSIONS)}, or auto (the newest it speaks; default)",
    )
    upstream.add_argument(
        "--timeout",
        metavar="SECONDS",
        type=float,
        default=60.0,
        help="seconds to wait for each upstream answer (default 60)",
    )
    upstream.add_argument(
        "--header",
        metavar="NAME:VALUE",
        action="append",
        default=[],
        help="a URL TARGET: HTTP header sent upstream with every request (repeatable)",
    )
    upstream.add_argument(
        "--upstream-token",
        metavar="TOKEN",
        help=f"a URL TARGET: bearer token sent upstream (${UPSTREAM_TOKEN_ENVIRONMENT})",
    )
    auth_options(command)
    return command


def proxy(argv: list[str], *, auth_options: Callable[[argparse.ArgumentParser], None]) -> int:
    """Run ``toolkit proxy`` with ``argv`` (the arguments after ``proxy``); the exit status."""
    args = parser(auth_options).parse_args(argv)
    try:
        level = logging.getLevelName(args.log_level.upper())
        if not isinstance(level, int):
            raise ValueError(f"--log-level {args.log_level!r}: use debug, info, warning or error")
        logging.basicConfig(stream=sys.stderr, level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
        if args.store and args.transport != "http":
            raise ValueError("--store is for a gateway served over HTTP (--transport http): stdio has one client")
        gateway = build(args)
        settings_from_environment(gateway)  # TOOLKIT_PAGE_SIZE, TOOLKIT_MAX_CONCURRENT_REQUESTS, ... as toolkit run
        if args.transport == "http":
            _protect(args, gateway)
        if args.store:
            gateway.store = args.store
    except (ConfigError, ValueError, ImportError) as exc:
        print(f"toolkit proxy: {exc}", file=sys.stderr)
        return 2
    unreachable = unreachable_store(gateway)
    if unreachable is not None:
        print(f"toolkit proxy: {unreachable}\nStart it, or fix --store.", file=sys.stderr)
        return 1
    try:
        if args.transport == "http":
            _serve_http(gateway, args)
        else:
            _serve_stdio(gateway)
    except NotStarted as exc:
        print(f"toolkit proxy: {args.target}: the gateway did not start: {exc}", file=sys.stderr)
        return 1
    return 0


def build(args: argparse.Namespace) -> Gateway:
    """The gateway TARGET describes (``ValueError`` or ``ConfigError``, for the user, when it cannot be built)."""
    options: dict[str, Any] = {
        "unwrap_results": args.unwrap_results,
        "sessions": args.sessions,
        "forward_token": args.forward_token,
    }
    if args.transport != "http":
        given = [flag for flag in (*AUTH_ENVIRONMENT.values(), "--forward-token") if _flag(args, flag)]
        if given:
            raise ValueError(f"{given[0]} is for a gateway served over HTTP; add --transport http")
    target: str = args.target
    url = target.startswith(("http://", "https://"))
    token = args.upstream_token or (os.environ.get(UPSTREAM_TOKEN_ENVIRONMENT) if url else None)
    if not url and (token or args.header):
        raise ValueError("--header and --upstream-token are for a URL TARGET (a config file's servers have headers)")
    if not url and not any(char.isspace() for char in target.strip()) and target.endswith(".json"):
        gateway = Gateway(args.name, **_server_options(args))
        entries = read_servers(Path(target))
        for entry in entries:  # several: one that cannot be reached at the start joins when it can
            client = _client(args, entry.target, headers=entry.headers, env=entry.env, cwd=entry.cwd)
            gateway.mount(client, entry.name, **options, required=len(entries) == 1)
        return gateway
    upstream = target if url else shlex.split(target)
    if not upstream:
        raise ValueError("TARGET is empty: give a URL, a command or a config file")
    client = _client(args, upstream, headers=headers_of(args.header), token=token)
    built: Gateway = Gateway.proxy(client, name=args.name, **options, **_server_options(args))  # type: ignore[assignment]
    return built


def _server_options(args: argparse.Namespace) -> dict[str, Any]:
    """The gateway's own ``Server`` options: an in-memory ``EventStore`` with ``--resumable``
    (with ``--store``, the store keeps the events, for every replica)."""
    if not args.resumable or args.store:
        return {}
    from ._events import EventStore  # noqa: PLC0415 - only when asked for

    return {"event_store": EventStore()}


def _client(
    args: argparse.Namespace,
    target: str | list[str],
    *,
    headers: dict[str, str] | None = None,
    token: str | None = None,
    env: dict[str, str] | None = None,
    cwd: str | None = None,
) -> Client:
    return Client(
        target,
        protocol_version=args.protocol_version,
        timeout=args.timeout,
        probe_timeout=min(args.timeout, 10.0),
        headers=headers or None,
        auth=token,
        env=env or None,
        cwd=cwd,
    )


def _protect(args: argparse.Namespace, gateway: Gateway) -> None:
    """The gateway's own authorization, from ``toolkit run``'s flags and their variables (``_loader``)."""
    for variable, flag in AUTH_ENVIRONMENT.items():
        given = _flag(args, flag)
        if given:
            os.environ[variable] = " ".join(given) if isinstance(given, list) else given
    auth_from_environment(gateway, path=args.path)


def _flag(args: argparse.Namespace, flag: str) -> Any:
    """The value ``--some-flag`` was given."""
    return getattr(args, flag.removeprefix("--").replace("-", "_"))


def _serve_stdio(gateway: Gateway) -> None:
    # The transport is imported only for the transport served, as Server.run does.
    from ._transports.base import settle_allocator  # noqa: PLC0415
    from ._transports.stdio import serve_stdio  # noqa: PLC0415

    async def serve() -> None:
        async with gateway.connected():
            await serve_stdio(
                gateway.engine, running=gateway.running, max_concurrent_requests=gateway.max_concurrent_requests
            )

    settle_allocator()
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve())


def _serve_http(gateway: Gateway, args: argparse.Namespace) -> None:
    from ._transports.http import runner  # noqa: PLC0415  (the HTTP stack: only when HTTP is served)

    options: dict[str, Any] = {}
    if args.allowed_host:
        options["allowed_hosts"] = args.allowed_host
    if args.allowed_origin:
        options["allowed_origins"] = args.allowed_origin
    app = gateway.http_app(args.path, **options)
    sock = runner.listen(args.host, args.port)  # a port in use is said plainly, before any upstream starts
    server = runner.graceful_server(app, host=args.host, port=args.port)

    async def serve() -> None:
        async with gateway.connected():
            await server.serve(sockets=[sock])

    with contextlib.suppress(KeyboardInterrupt), asyncio.Runner(loop_factory=server.config.get_loop_factory()) as loop:
        loop.run(serve())
