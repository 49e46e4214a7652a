"""The ``toolkit`` command: ``toolkit run|dev|tools|call|install|proxy|version``."""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import logging
import os
import sys
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from . import __version__
from ._cli_auth import auth_options, export_auth_flags
from ._cli_calls import CallArguments, call_arguments, call_on
from ._cli_openapi import add_options as add_openapi_options
from ._cli_openapi import server_of as openapi_server
from ._environment import load_env_file
from ._errors import AppNotFound, ToolkitError
from ._loader import (
    STORE_ENVIRONMENT,
    HostApp,
    Target,
    auth_from_environment,
    deployment_settings,
    load_target,
    server_of,
    store_from_environment,
    unreachable_store,
)
from ._server import Server
from ._versions import KNOWN_VERSIONS, LATEST_VERSION
from .testing import Client

if TYPE_CHECKING:
    from ._dev_server import LoadFailure
    from ._transports.http.app import McpApp

APP_HELP = "path/to/app.py[:server] or package.module[:server]"
TARGET_HELP = (
    f"{APP_HELP}; or any MCP server: a URL (Streamable HTTP) or a quoted command (stdio), "
    "e.g. 'npx -y @modelcontextprotocol/server-everything'"
)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="toolkit", description="Run and inspect toolkit MCP servers.")
    commands = parser.add_subparsers(dest="command", required=True)

    run = commands.add_parser("run", help="serve an app (or an OpenAPI document) over stdio (default) or HTTP")
    run.add_argument("app", nargs="?", help=f"{APP_HELP} (or --openapi FILE_OR_URL)")
    run.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    run.add_argument("--host", default="127.0.0.1", help="HTTP: interface to bind (default 127.0.0.1)")
    run.add_argument("--port", type=int, default=8000, help="HTTP: port (default 8000)")
    run.add_argument("--path", default="/mcp", help="HTTP: endpoint path (default /mcp)")
    run.add_argument("--workers", type=int, default=1, help="HTTP: worker processes (default 1)")
    run.add_argument("--docs", action="store_true", help="HTTP: serve the tools page (at --docs-path)")
    run.add_argument("--docs-path", metavar="PATH", help="HTTP: the tools page's path (default /docs); implies --docs")
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
    run.add_argument(
        "--log-level",
        default=None,
        help="server-side log level on stderr (default warning; an APP that configures logging itself keeps its "
        "handlers and level, and --log-level then sets only the level)",
    )
    run.add_argument("--traceback", action="store_true", help="show the full traceback of an error loading APP")
    run.add_argument(
        "--env-file",
        metavar="PATH",
        help="KEY=VALUE lines to add to the environment first (default: ./.env when there); variables already "
        "set win; TOOLKIT_* variables set the server's settings (docs/cli.md)",
    )
    auth_options(run)
    add_openapi_options(run)

    tools = commands.add_parser("tools", help="print the tools as a client of a given protocol version sees them")
    tools.add_argument("app", metavar="TARGET", help=TARGET_HELP)
    _client_options(tools)

    dev = commands.add_parser(
        "dev", help="serve over HTTP with the tools page, restarting when the source changes (development)"
    )
    dev.add_argument("app", help=APP_HELP)
    dev.add_argument("--host", default="127.0.0.1", help="interface to bind (default 127.0.0.1)")
    dev.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 picks a free one)")
    dev.add_argument("--path", default="/mcp", help="the MCP endpoint's path (default /mcp)")
    dev.add_argument("--docs-path", metavar="PATH", default="/docs", help="the tools page's path (default /docs)")
    dev.add_argument("--no-reload", action="store_true", help="serve in this process; do not watch for changes")
    dev.add_argument("--log-level", default="info", help="server-side log level on stderr (default info)")
    # The supervisor starts each child as `toolkit dev APP ... --serve-fd N`: serve on that socket.
    dev.add_argument("--serve-fd", type=int, help=argparse.SUPPRESS)

    call = commands.add_parser(
        "call", help="call one tool and print the result a client of a given protocol version gets"
    )
    call.add_argument("app", metavar="TARGET", help=TARGET_HELP)
    call.add_argument("tool", help="the tool's name")
    call.add_argument(
        "arguments",
        nargs="*",
        metavar="KEY=VALUE",
        help="one argument each; VALUE is JSON unless the tool's schema takes only a string there",
    )
    call.add_argument("--json", metavar="ARGS", help="the arguments as one JSON object (KEY=VALUE overrides)")
    _client_options(call)

    install = commands.add_parser("install", help="add APP to an MCP host's config (or print the entry: mcp-json)")
    install.add_argument("host", choices=("claude-desktop", "claude-code", "cursor", "vscode", "mcp-json"))
    install.add_argument("app", help=APP_HELP)
    install.add_argument("--name", help="the entry's name (default: the server's name)")
    install.add_argument(
        "--env", metavar="KEY=VALUE", action="append", default=[], help="a variable the host sets (repeatable)"
    )
    install.add_argument("--env-file", metavar="PATH", help="KEY=VALUE lines the server reads at start (toolkit run)")
    install.add_argument("--force", action="store_true", help="replace an entry of the same name")
    install.add_argument("--traceback", action="store_true", help="show the full traceback of an error loading APP")

    # Its own parser, in _cli_proxy (imported only for it: it loads the client); listed here for --help.
    commands.add_parser("proxy", help="serve any MCP server, or the servers of an mcpServers file, as one gateway")
    commands.add_parser("version", help="print toolkit's version")
    return parser


def _client_options(command: argparse.ArgumentParser) -> None:
    """``tools`` and ``call``: the version of the client they act as, how to reach a remote one, ``--traceback``."""
    command.add_argument(
        "--protocol-version",
        choices=(*KNOWN_VERSIONS, "auto"),
        help=f"default {LATEST_VERSION} for an app; 'auto' for a URL or a command (the newest the server speaks)",
    )
    command.add_argument("--traceback", action="store_true", help="show the full traceback of an error loading APP")
    remote = command.add_argument_group("a server at a URL or started by a command")
    remote.add_argument(
        "--header", metavar="NAME:VALUE", action="append", default=[], help="HTTP header sent with every request"
    )
    remote.add_argument("--token", metavar="TOKEN", help="HTTP: a bearer token ($TOOLKIT_TOKEN)")
    remote.add_argument(
        "--oauth",
        action="store_true",
        help="HTTP: sign in with OAuth in the browser when the server asks (tokens kept in ~/.toolkit/oauth.json)",
    )
    remote.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for each answer (default 60)")


def main(argv: list[str] | None = None) -> None:
    try:
        _main(argv)
    except BrokenPipeError:  # `toolkit tools app.py | head`: the reader went away, not an error
        sys.stderr.close()
        raise SystemExit(0) from None


def _main(argv: list[str] | None) -> None:
    given = sys.argv[1:] if argv is None else argv
    if given[:1] == ["proxy"]:
        from ._cli_proxy import proxy  # noqa: PLC0415  (the client: only for this command)

        raise SystemExit(proxy(given[1:], auth_options=auth_options))
    parser = _parser()
    args, unknown = parser.parse_known_args(argv)
    if args.command == "call":
        # argparse stops filling KEY=VALUE at the first option: take the ones after it too.
        args.arguments += [given for given in unknown if not given.startswith("-")]
        unknown = [given for given in unknown if given.startswith("-")]
    if unknown:
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    if args.command == "version":
        print(__version__)
        return
    if args.command == "install":
        from ._install import install  # noqa: PLC0415  (only this command writes host configs)

        server = _server_of(args.app, _load(args.app, show_traceback=args.traceback))  # it must load to be installed
        name = args.name or server.name
        raise SystemExit(install(args.host, args.app, name, env=args.env, env_file=args.env_file, force=args.force))
    if args.command == "dev":
        _configure_logging(args)
        _dev(args)
        return
    if args.command == "run":
        _environment_of(args)
    docs = _docs_option(args) if args.command == "run" else None
    call = call_arguments(args) if args.command == "call" else None
    if args.command in ("tools", "call") and _is_remote(args.app):
        from ._cli_remote import run_remote  # noqa: PLC0415  (the client: only for a remote target)

        _configure_logging(args)
        raise SystemExit(asyncio.run(run_remote(args, call)))
    if args.command in ("tools", "call"):
        args.protocol_version = args.protocol_version or LATEST_VERSION
        if args.protocol_version == "auto":
            _usage_of(args.command, "--protocol-version auto is for a URL or a command; an app is asked in process")
    if args.command == "run" and args.openapi is not None:
        _configure_logging(args)
        target: Target = openapi_server(args)
    elif args.app is None:
        _usage_of(
            args.command, "give APP (path/to/app.py[:server] or package.module[:server]), or --openapi FILE_OR_URL"
        )
    else:
        target = _load(args.app, show_traceback=args.traceback)
        _configure_logging(args)
    if args.command == "run":
        try:
            deployment_settings(target)
        except ValueError as exc:
            print(f"toolkit: {exc}", file=sys.stderr)
            raise SystemExit(2) from None
    if args.command == "run" and args.transport == "http":
        _configure_http(args, target)
        if not isinstance(target, Server):
            _serve_built(args, target, docs)
            return
    server = _server_of(args.app, target)
    if args.command == "tools":
        print(json.dumps(asyncio.run(_list_tools(server, args.protocol_version)), indent=2))
        return
    if call is not None:
        raise SystemExit(asyncio.run(_call(server, args.app, args.tool, call, args.protocol_version)))
    if args.transport == "stdio":
        server.run("stdio")
        return
    options: dict[str, Any] = {"host": args.host, "port": args.port, "path": args.path, "workers": args.workers}
    if docs is not None:
        _check_docs_path(docs, args.path)
        options["docs"] = docs
    if args.allowed_host:
        options["allowed_hosts"] = args.allowed_host
    if args.allowed_origin:
        options["allowed_origins"] = args.allowed_origin
    if args.workers > 1:
        options["app_spec"] = args.app
    server.run("http", **options)


RUN_ENVIRONMENT: Final = {
    "transport": "TOOLKIT_TRANSPORT",
    "host": "TOOLKIT_HOST",
    "port": "TOOLKIT_PORT",
    "path": "TOOLKIT_PATH",
    "workers": "TOOLKIT_WORKERS",
    "log_level": "TOOLKIT_LOG_LEVEL",
}
"""``toolkit run``'s flags a variable sets when the flag is not given."""


def _environment_of(args: argparse.Namespace) -> None:
    """``toolkit run``: the env file into the environment, then the flags not given from it."""
    given = args.env_file
    path = Path(given or ".env")
    if given is not None and not path.is_file():
        _usage_of("run", f"--env-file {given}: no such file")
    if path.is_file():
        try:
            load_env_file(path)
        except (ValueError, OSError, UnicodeDecodeError) as exc:
            _usage_of("run", f"--env-file: {exc}")
    for flag, variable in RUN_ENVIRONMENT.items():
        value = os.environ.get(variable)
        if not value or getattr(args, flag) != RUN_DEFAULTS[flag]:
            continue
        if flag in ("port", "workers"):
            if not value.isdigit():
                _usage_of("run", f"${variable}={value!r}: --{flag} takes a whole number")
            setattr(args, flag, int(value))
        elif flag == "transport" and value not in ("stdio", "http"):
            _usage_of("run", f"${variable}={value!r}: --transport takes stdio or http")
        else:
            setattr(args, flag, value)


RUN_DEFAULTS: Final[dict[str, Any]] = {
    "transport": "stdio",
    "host": "127.0.0.1",
    "port": 8000,
    "path": "/mcp",
    "workers": 1,
    "log_level": None,
}


def _configure_http(args: argparse.Namespace, target: Target) -> None:
    """``toolkit run --transport http``: authorization and the store from the flags and the environment."""
    export_auth_flags(args)
    if args.store:
        os.environ[STORE_ENVIRONMENT] = args.store
    try:
        auth_from_environment(target, path=args.path)
        store_from_environment(target)
    except (ValueError, ImportError) as exc:
        print(f"toolkit: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    if not isinstance(target, HostApp) or target.mounted is not None:
        _check_authorization_server(args, server_of(target))
        _check_store(server_of(target))


def _check_authorization_server(args: argparse.Namespace, server: Server) -> None:
    """An ``OAuthProxy`` across processes: its grants in a shared store, its keys the same in each."""
    proxy: Any = getattr(server.resource_server, "verifier", None)
    if not getattr(proxy, "issues_tokens", False):
        return
    shared = _shared(server)
    if args.workers > 1 and not shared:
        _usage_of(
            "run",
            f"--workers {args.workers} with toolkit as the authorization server needs --store redis://HOST:PORT/DB: "
            "a login that starts in one worker finishes in another, so they keep the logins in one store",
        )
    generated = [
        what
        for what, made in (
            (
                "a signing key ($TOOLKIT_OAUTH_PROXY_SIGNING_KEY or --oauth-proxy-signing-key-file)",
                proxy.keys_generated,
            ),
            (
                "an encryption key ($TOOLKIT_OAUTH_PROXY_ENCRYPTION_KEY or --oauth-proxy-encryption-key-file)",
                proxy.sealer_generated,
            ),
        )
        if made
    ]
    if (args.workers > 1 or shared) and generated:
        _usage_of(
            "run",
            f"toolkit as the authorization server in several processes needs {' and '.join(generated)}, the same "
            "in every one: a key made at start is one process's alone, and its tokens fail in the others",
        )


def _serve_built(args: argparse.Namespace, target: McpApp | HostApp, docs: str | None) -> None:
    """Serve an app built in code (``server.http_app()``, or an ASGI app of the user's) as it was built."""
    # Its path and options are set in code: say so rather than silently ignoring flags that would change them.
    ignored = [
        flag
        for flag, given in (
            ("--path", args.path != "/mcp"),
            ("--docs-path" if args.docs_path else "--docs", docs is not None),
            ("--allowed-host", args.allowed_host),
            ("--allowed-origin", args.allowed_origin),
        )
        if given
    ]
    if ignored:
        made = "an ASGI app of its own" if isinstance(target, HostApp) else "an app made by server.http_app()"
        print(f"toolkit: {args.app} is {made}; set {', '.join(ignored)} there, in code", file=sys.stderr)
        raise SystemExit(2)
    # The HTTP stack is imported only when HTTP is served: a stdio start stays fast.
    from ._transports.http import runner  # noqa: PLC0415

    mounted = target.mounted if isinstance(target, HostApp) else target
    shared = mounted is not None and _shared(server_of(mounted))
    if args.workers > 1:
        runner.run_workers(args.app, workers=args.workers, host=args.host, port=args.port, shared_store=shared)
    elif isinstance(target, HostApp):  # served as it is: its lifespan runs (and through it, the server's)
        endpoint = mounted.state.mcp if mounted is not None else None
        runner.serve_asgi(target.app, endpoint, host=args.host, port=args.port, log_level=args.log_level or "warning")
    else:
        runner.serve_app(target, host=args.host, port=args.port)


def _server_of(app: str, target: Target) -> Server:
    """The server APP names or mounts; the process ends with status 2 when an ASGI app mounts none."""
    try:
        return server_of(target)
    except AppNotFound as exc:
        print(f"toolkit: {app}: {exc}; serve it over HTTP (--transport http)", file=sys.stderr)
        raise SystemExit(2) from None


def _configure_logging(args: argparse.Namespace) -> None:
    """Log to stderr at ``--log-level``, once APP is loaded, unless APP configured logging itself.

    Configured before loading, the CLI's handler made an APP's own ``logging.basicConfig(level=INFO)``
    a silent no-op (basicConfig does nothing once the root logger has a handler). An APP that set
    up handlers keeps them; an explicit ``--log-level`` then sets the root logger's level only.
    """
    given: str | None = getattr(args, "log_level", None)
    root = logging.getLogger()
    if root.handlers:
        if given is not None:
            root.setLevel(given.upper())
        return
    logging.basicConfig(
        stream=sys.stderr,
        level=(given or "warning").upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )


def _is_remote(target: str) -> bool:
    """A URL, or a command (a target with a space in it that names no file), not an app to load."""
    if target.startswith(("http://", "https://")):
        return True
    path = target.rsplit(":", 1)[0] if ":" in target else target
    return any(char.isspace() for char in target.strip()) and not os.path.exists(path)


def _usage_of(command: str, message: str) -> Any:
    print(f"toolkit {command}: {message}", file=sys.stderr)
    raise SystemExit(2)


def _load(app: str, *, show_traceback: bool) -> Target:
    """APP loaded, or the process ended with status 2 and the reason on stderr."""
    try:
        return load_target(app)
    except AppNotFound as exc:
        print(f"toolkit: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    except Exception as exc:
        if show_traceback:
            raise
        print(_load_failure(app, exc), file=sys.stderr)
        raise SystemExit(2) from None


def _docs_option(args: argparse.Namespace) -> str | None:
    """``toolkit run``: the tools page's path, or None; the page is HTTP only."""
    docs: str | None = args.docs_path or ("/docs" if args.docs else None)
    if docs is not None and args.transport != "http":
        flag = "--docs-path" if args.docs_path else "--docs"
        print(
            f"toolkit: {flag}: the tools page is served over HTTP; add --transport http "
            "(or try the app with `toolkit dev APP`)",
            file=sys.stderr,
        )
        raise SystemExit(2)
    return docs


def _check_docs_path(docs: str, path: str) -> None:
    from ._transports.http.docs import docs_path  # noqa: PLC0415 (HTTP only)

    try:
        docs_path(docs, path)
    except ValueError as exc:
        print(f"toolkit: --docs-path: {exc}", file=sys.stderr)
        raise SystemExit(2) from None


# --- toolkit dev ------------------------------------------------------------------------------------


def _dev(args: argparse.Namespace) -> None:
    """``toolkit dev``: the supervisor, the child it runs (``--serve-fd``), or ``--no-reload``."""
    # Imported here: neither the dev server nor the HTTP stack belongs in a stdio start.
    from . import _dev, _dev_server  # noqa: PLC0415

    describe = functools.partial(_describe_failure, args.app)
    if args.serve_fd is not None:
        _dev_server.serve_child(
            args.app,
            args.serve_fd,
            path=args.path,
            docs=args.docs_path,
            log_level=args.log_level,
            describe=describe,
        )
        return
    _check_docs_path(args.docs_path, args.path)
    if not args.no_reload:
        _dev.supervise(
            args.app, host=args.host, port=args.port, path=args.path, docs=args.docs_path, log_level=args.log_level
        )
        return
    prepared = _dev_server.prepare(args.app, path=args.path, docs=args.docs_path, describe=describe)
    if isinstance(prepared, _dev_server.LoadFailure):
        print(prepared.text, file=sys.stderr)
        raise SystemExit(2)
    with _dev.listening(args.host, args.port) as sock:
        _dev.announce(args.app, sock, host=args.host, path=args.path, docs=args.docs_path, watching=None)
        _dev_server.serve(prepared, sock, log_level=args.log_level)


def _describe_failure(app: str, exc: Exception) -> LoadFailure:
    """What ``toolkit dev`` shows when APP fails to load: ``toolkit run``'s message and where."""
    from ._dev_server import LoadFailure  # noqa: PLC0415 (only toolkit dev gets here)

    if isinstance(exc, AppNotFound):
        return LoadFailure(f"toolkit: {exc}", None, str(exc))
    headline = "".join(traceback.format_exception_only(exc)).strip().splitlines()[-1]
    return LoadFailure(_load_failure(app, exc), _failure_location(exc), headline)


def _shared(server: Server) -> bool:
    return server.store is not None and server.store.shared


def _check_store(server: Server) -> None:
    """Fail at once, naming the store, when a shared store cannot be reached."""
    reason = unreachable_store(server)
    if reason is not None:
        print(f"toolkit: {reason}\nStart it, or fix --store (${STORE_ENVIRONMENT}).", file=sys.stderr)
        raise SystemExit(1)


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
        where = _failure_location(exc)
        return f"toolkit: cannot load {app}: {exc} (at {where})\n(--traceback shows where toolkit raised it)"
    if raised_by_toolkit:
        return "toolkit: an internal error while loading the app (please report it):\n" + "".join(
            traceback.format_exception(exc)
        )
    shown = "".join(traceback.format_list(ours)) + "".join(traceback.format_exception_only(exc))
    return f"toolkit: {app} raised an exception while loading:\nTraceback (most recent call last):\n{shown}"


def _failure_location(exc: BaseException) -> str | None:
    """``app.py:12``: the line of the user's code an exception loading APP points at, if any."""
    if isinstance(exc, SyntaxError) and exc.filename and exc.lineno:
        return f"{os.path.basename(exc.filename)}:{exc.lineno}"
    package = os.path.dirname(os.path.abspath(__file__))
    ours = [frame for frame in traceback.extract_tb(exc.__traceback__) if not _machinery(frame.filename, package)]
    return f"{os.path.basename(ours[-1].filename)}:{ours[-1].lineno}" if ours else None


def _machinery(filename: str, package: str) -> bool:
    """Frames of toolkit and of the import system, between the CLI and the user's code."""
    return filename.startswith("<frozen ") or os.path.abspath(filename).startswith(package + os.sep)


async def _list_tools(server: Server, version: str) -> list[dict[str, Any]]:
    async with Client(server, protocol_version=version) as client:
        return await client.list_tools()


# --- toolkit call -----------------------------------------------------------------------------------


async def _call(server: Server, app: str, tool: str, arguments: CallArguments, version: str) -> int:
    """Call ``tool`` as a client of ``version``; print its result; the exit status."""
    # The person at the keyboard wrote the tool: show them the exception, not "Error executing tool".
    server.mask_errors = False
    async with Client(server, protocol_version=version) as client:
        return await call_on(client, app, tool, arguments)
