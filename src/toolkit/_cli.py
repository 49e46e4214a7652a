"""The ``toolkit`` command: ``toolkit run APP`` and ``toolkit tools APP``."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
import traceback
from typing import Any

from . import __version__
from ._errors import AppNotFound, StoreUnavailable, ToolkitError
from ._loader import (
    STORE_ENVIRONMENT,
    auth_from_environment,
    is_http_app,
    load_target,
    server_of,
    store_from_environment,
)
from ._server import Server
from ._store.urls import open_store
from ._versions import KNOWN_VERSIONS, LATEST_VERSION
from .testing import Client


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="toolkit", description="Run and inspect toolkit MCP servers.")
    commands = parser.add_subparsers(dest="command", required=True)

    run = commands.add_parser("run", help="serve an app over stdio (default) or Streamable HTTP")
    run.add_argument("app", help="path/to/app.py[:server] or package.module[:server]")
    run.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    run.add_argument("--host", default="127.0.0.1", help="HTTP: interface to bind (default 127.0.0.1)")
    run.add_argument("--port", type=int, default=8000, help="HTTP: port (default 8000)")
    run.add_argument("--path", default="/mcp", help="HTTP: endpoint path (default /mcp)")
    run.add_argument("--workers", type=int, default=1, help="HTTP: worker processes (default 1)")
    run.add_argument(
        "--allowed-host",
        action="append",
        default=None,
        help="HTTP: extra Host header value to accept (repeatable); needed when binding beyond localhost",
    )
    run.add_argument(
        "--allowed-origin", action="append", default=None, help="HTTP: extra Origin to accept (repeatable)"
    )
    run.add_argument(
        "--store",
        metavar="URL",
        help="HTTP: keep sessions and streams in Redis (redis://HOST:PORT/DB) so any replica or worker "
        "serves any request ($TOOLKIT_STORE)",
    )
    run.add_argument("--log-level", default="warning", help="server-side log level on stderr (default warning)")
    run.add_argument("--traceback", action="store_true", help="show the full traceback of an error loading APP")
    auth = run.add_argument_group(
        "authorization (HTTP)", "Require JWT bearer tokens; each flag also reads its environment variable."
    )
    auth.add_argument("--auth-jwks-uri", metavar="URL", help="the authorization server's JWKS ($TOOLKIT_AUTH_JWKS_URI)")
    auth.add_argument("--auth-issuer", metavar="URL", help="the tokens' expected iss ($TOOLKIT_AUTH_ISSUER)")
    auth.add_argument(
        "--auth-audience",
        metavar="URL",
        help="the tokens' expected aud; default --resource-url ($TOOLKIT_AUTH_AUDIENCE)",
    )
    auth.add_argument(
        "--authorization-server",
        metavar="URL",
        action="append",
        help="issuer clients get tokens from, repeatable; default --auth-issuer ($TOOLKIT_AUTH_AUTHORIZATION_SERVERS)",
    )
    auth.add_argument("--resource-url", metavar="URL", help="this server's canonical URL ($TOOLKIT_RESOURCE_URL)")
    auth.add_argument(
        "--required-scope", metavar="SCOPE", action="append", help="scope every request needs, repeatable"
    )

    tools = commands.add_parser("tools", help="print the tools as a client of a given protocol version sees them")
    tools.add_argument("app", help="path/to/app.py[:server] or package.module[:server]")
    tools.add_argument(
        "--protocol-version", default=LATEST_VERSION, choices=KNOWN_VERSIONS, help=f"default {LATEST_VERSION}"
    )
    tools.add_argument("--traceback", action="store_true", help="show the full traceback of an error loading APP")

    commands.add_parser("version", help="print toolkit's version")
    return parser


def main(argv: list[str] | None = None) -> None:
    try:
        _main(argv)
    except BrokenPipeError:  # `toolkit tools app.py | head`: the reader went away, not an error
        sys.stderr.close()
        raise SystemExit(0) from None


def _main(argv: list[str] | None) -> None:
    args = _parser().parse_args(argv)
    if args.command == "version":
        print(__version__)
        return
    logging.basicConfig(
        stream=sys.stderr,
        level=getattr(args, "log_level", "warning").upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    try:
        target = load_target(args.app)
    except AppNotFound as exc:
        print(f"toolkit: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    except Exception as exc:
        if args.traceback:
            raise
        print(_load_failure(args.app, exc), file=sys.stderr)
        raise SystemExit(2) from None
    server = server_of(target)
    if args.command == "run" and args.transport == "http":
        _export_auth_flags(args)
        if args.store:
            os.environ[STORE_ENVIRONMENT] = args.store
        try:
            auth_from_environment(target)
            store_from_environment(target)
        except (ValueError, ImportError) as exc:
            print(f"toolkit: {exc}", file=sys.stderr)
            raise SystemExit(2) from None
        _check_store(server)
    if args.command == "tools":
        print(json.dumps(asyncio.run(_list_tools(server, args.protocol_version)), indent=2))
        return
    if args.transport == "stdio":
        server.run("stdio")
        return
    if is_http_app(target):
        # The app was built in code with its own path and options: say so rather than
        # silently ignoring flags that would change them.
        ignored = [
            flag
            for flag, given in (
                ("--path", args.path != "/mcp"),
                ("--allowed-host", args.allowed_host),
                ("--allowed-origin", args.allowed_origin),
            )
            if given
        ]
        if ignored:
            print(
                f"toolkit: {args.app} is an app made by server.http_app(); set {', '.join(ignored)} there, in code",
                file=sys.stderr,
            )
            raise SystemExit(2)
        # The HTTP stack is imported only when HTTP is served: a stdio start stays fast.
        from ._transports.http import runner  # noqa: PLC0415

        if args.workers > 1:
            runner.run_workers(
                args.app, workers=args.workers, host=args.host, port=args.port, shared_store=_shared(server)
            )
        else:
            runner.serve_app(target, host=args.host, port=args.port)
        return
    options: dict[str, Any] = {"host": args.host, "port": args.port, "path": args.path, "workers": args.workers}
    if args.allowed_host:
        options["allowed_hosts"] = args.allowed_host
    if args.allowed_origin:
        options["allowed_origins"] = args.allowed_origin
    if args.workers > 1:
        options["app_spec"] = args.app
    server.run("http", **options)


def _shared(server: Server) -> bool:
    return server.store is not None and server.store.shared


def _check_store(server: Server) -> None:
    """Fail at once, naming the store, when a shared store cannot be reached."""
    store = server.store
    if store is None or not store.shared:
        return
    url = getattr(store, "url", None)
    if not isinstance(url, str):
        return  # a store of the user's own: it is started (and checked) with the server
    probe = open_store(url)

    async def reach() -> None:
        try:
            await probe.start()
        finally:
            await probe.close()

    try:
        asyncio.run(reach())
    except StoreUnavailable as exc:
        reason = exc.message.removeprefix("Service Unavailable: ").removesuffix("; retry shortly")
        print(f"toolkit: {reason}\nStart it, or fix --store (${STORE_ENVIRONMENT}).", file=sys.stderr)
        raise SystemExit(1) from None


def _load_failure(app: str, exc: Exception) -> str:
    """What went wrong loading APP, for the user: one block, their own code's frames only.

    A registration error (``ToolkitError``), or a ``ValueError``/``TypeError``/``LookupError`` toolkit raises
    about an argument, is toolkit telling the user what to change: its message (and the line of
    the user's call) is enough. Any other exception raised by the user's module shows the
    traceback of their code alone. Anything else raised inside toolkit is a toolkit bug: its
    whole traceback.
    """
    frames = traceback.extract_tb(exc.__traceback__)
    package = os.path.dirname(os.path.abspath(__file__))
    ours = [frame for frame in frames if not _machinery(frame.filename, package)]
    if isinstance(exc, ToolkitError):
        return f"toolkit: cannot load {app}: {exc}\n(--traceback shows where toolkit raised it)"
    raised_by_toolkit = bool(frames) and os.path.abspath(frames[-1].filename).startswith(package + os.sep)
    if raised_by_toolkit and isinstance(exc, ValueError | TypeError | LookupError) and ours:
        # toolkit refusing an argument (Server(page_size=0), remove_tool of an unknown name): the user's call
        where = f"{os.path.basename(ours[-1].filename)}:{ours[-1].lineno}"
        return f"toolkit: cannot load {app}: {exc} (at {where})\n(--traceback shows where toolkit raised it)"
    if raised_by_toolkit:
        return "toolkit: an internal error while loading the app (please report it):\n" + "".join(
            traceback.format_exception(exc)
        )
    shown = "".join(traceback.format_list(ours)) + "".join(traceback.format_exception_only(exc))
    return f"toolkit: {app} raised an exception while loading:\nTraceback (most recent call last):\n{shown}"


def _machinery(filename: str, package: str) -> bool:
    """Frames of toolkit and of the import system, between the CLI and the user's code."""
    return filename.startswith("<frozen ") or os.path.abspath(filename).startswith(package + os.sep)


def _export_auth_flags(args: argparse.Namespace) -> None:
    """Put the authorization flags in the environment, where workers find them too."""
    for name, value in (
        ("TOOLKIT_AUTH_JWKS_URI", args.auth_jwks_uri),
        ("TOOLKIT_AUTH_ISSUER", args.auth_issuer),
        ("TOOLKIT_AUTH_AUDIENCE", args.auth_audience),
        ("TOOLKIT_AUTH_AUTHORIZATION_SERVERS", " ".join(args.authorization_server or ())),
        ("TOOLKIT_RESOURCE_URL", args.resource_url),
        ("TOOLKIT_AUTH_REQUIRED_SCOPES", " ".join(args.required_scope or ())),
    ):
        if value:
            os.environ[name] = value


async def _list_tools(server: Server, version: str) -> list[dict[str, Any]]:
    async with Client(server, protocol_version=version) as client:
        return await client.list_tools()
