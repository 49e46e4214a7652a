"""The ``toolkit`` command: ``toolkit run APP`` and ``toolkit tools APP``."""

from __future__ import annotations

import argparse
import asyncio
import importlib
import importlib.util
import json
import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._versions import KNOWN_VERSIONS, LATEST_VERSION

if TYPE_CHECKING:
    from ._server import Server


class AppNotFound(Exception):
    pass


def load_server(spec: str) -> Server:
    """The ``Server`` that ``load_target(spec)`` names (directly or behind its HTTP app)."""
    return _server_of(load_target(spec))


def _server_of(target: Any) -> Server:
    """The ``Server`` itself, or the one behind an app made by ``server.http_app()``."""
    return target if _is_server(target) else target.state.mcp.server  # type: ignore[no-any-return]


def _is_server(value: Any) -> bool:
    from ._server import Server

    return isinstance(value, Server)


def _is_http_app(value: Any) -> bool:
    return _is_server(getattr(getattr(getattr(value, "state", None), "mcp", None), "server", None))


def load_target(spec: str) -> Any:
    """Load ``path/to/app.py:attr`` or ``package.module:attr`` (``attr`` defaults to ``server``).

    ``attr`` may name a ``Server``, an app made by ``server.http_app(...)`` (to serve it with
    the HTTP options it was built with), or a function returning either.
    """
    from ._server import Server

    target, _, attr = spec.partition(":")
    attr = attr or "server"
    if target.endswith(".py") or os.sep in target or "/" in target:
        path = Path(target).resolve()
        if not path.is_file():
            raise AppNotFound(f"no such file: {target}")
        sys.path.insert(0, str(path.parent))
        module_name = path.stem
        module_spec = importlib.util.spec_from_file_location(module_name, path)
        if module_spec is None or module_spec.loader is None:
            raise AppNotFound(f"cannot import {target}")
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[module_name] = module
        module_spec.loader.exec_module(module)
    else:
        sys.path.insert(0, os.getcwd())
        try:
            module = importlib.import_module(target)
        except ModuleNotFoundError as exc:
            raise AppNotFound(f"cannot import module {target!r}: {exc}") from None
    try:
        obj = getattr(module, attr)
    except AttributeError:
        found = [name for name, value in vars(module).items() if isinstance(value, Server)]
        hint = f"; it has {', '.join(found)}" if found else ""
        raise AppNotFound(f"{target} has no attribute {attr!r}{hint}. Use {target}:NAME") from None
    if not isinstance(obj, Server) and not _is_http_app(obj) and callable(obj):
        obj = obj()
    if not isinstance(obj, Server) and not _is_http_app(obj):
        raise AppNotFound(f"{spec} is a {type(obj).__name__}, not a toolkit Server (or server.http_app())")
    return obj


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
    run.add_argument("--log-level", default="warning", help="server-side log level on stderr (default warning)")

    tools = commands.add_parser("tools", help="print the tools as a client of a given protocol version sees them")
    tools.add_argument("app", help="path/to/app.py[:server] or package.module[:server]")
    tools.add_argument(
        "--protocol-version", default=LATEST_VERSION, choices=KNOWN_VERSIONS, help=f"default {LATEST_VERSION}"
    )

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
        from . import __version__

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
    server = _server_of(target)
    if args.command == "tools":
        print(json.dumps(asyncio.run(_list_tools(server, args.protocol_version)), indent=2))
        return
    if args.transport == "stdio":
        server.run("stdio")
        return
    if _is_http_app(target):
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
        from ._http import serve_app

        serve_app(target, host=args.host, port=args.port, workers=args.workers, app_spec=args.app)
        return
    options: dict[str, Any] = {"host": args.host, "port": args.port, "path": args.path, "workers": args.workers}
    if args.allowed_host:
        options["allowed_hosts"] = args.allowed_host
    if args.allowed_origin:
        options["allowed_origins"] = args.allowed_origin
    if args.workers > 1:
        options["app_spec"] = args.app
    server.run("http", **options)


async def _list_tools(server: Server, version: str) -> list[dict[str, Any]]:
    from .testing import Client

    async with Client(server, protocol_version=version) as client:
        return await client.list_tools()
