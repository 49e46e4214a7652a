"""``toolkit run --openapi FILE_OR_URL --base-url URL``: an HTTP API served as an MCP server.

The document is read once, at start (a URL fetched with a timeout and a size bound), and every
schema checked before the transport opens: a document toolkit refuses is one message and exit
status 2. Credentials come from flags or, better (a command line is visible to every user of the
machine), from ``$TOOLKIT_API_TOKEN``.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Final

from ._server import Server

API_TOKEN_ENVIRONMENT: Final = "TOOLKIT_API_TOKEN"


def add_options(run: argparse.ArgumentParser) -> None:
    """``toolkit run``'s flags for serving an OpenAPI document instead of an app."""
    api = run.add_argument_group(
        "an HTTP API as the server (instead of APP)",
        "Serve the operations of an OpenAPI 3.0/3.1 document as tools (docs/openapi.md).",
    )
    api.add_argument("--openapi", metavar="FILE_OR_URL", help="the OpenAPI document: a JSON or YAML file, or a URL")
    api.add_argument("--base-url", metavar="URL", help="where the API's calls go, e.g. https://api.example.com/v1")
    api.add_argument(
        "--use-servers", action="store_true", help="send calls to the document's first servers URL (no --base-url)"
    )
    api.add_argument("--name", help="the server's name (default: the document's info.title)")
    api.add_argument(
        "--api-token", metavar="TOKEN", help=f"a bearer token sent with every call (${API_TOKEN_ENVIRONMENT})"
    )
    api.add_argument(
        "--api-header", metavar="NAME:VALUE", action="append", default=[], help="a header sent with every call"
    )
    api.add_argument(
        "--forward-header",
        metavar="NAME",
        action="append",
        default=[],
        help="a header of the caller's own HTTP request to send on (repeatable; none by default)",
    )
    api.add_argument("--api-timeout", metavar="SECONDS", type=float, default=30.0, help="per call (default 30)")
    api.add_argument("--include-deprecated", action="store_true", help="offer operations marked deprecated too")


def server_of(args: argparse.Namespace) -> Server:
    """The server ``toolkit run --openapi`` serves; the process ends with status 2 if it cannot be made."""
    from ._sources.openapi.credentials import APIKey, Bearer, Credential  # noqa: PLC0415 - only with --openapi

    if args.app is not None:
        _usage(f"give APP or --openapi, not both ({args.app!r} and --openapi {args.openapi!r})")
    if args.workers > 1:
        _usage("--workers: an --openapi server runs in one process (each worker would read the document again)")
    credentials: list[Credential] = []
    token = args.api_token or os.environ.get(API_TOKEN_ENVIRONMENT)
    try:
        if token:
            credentials.append(Bearer(token))
        for given in args.api_header:
            name, colon, value = given.partition(":")
            if not colon or not name.strip():
                _usage(f"--api-header {given!r}: write NAME:VALUE, e.g. --api-header 'X-API-Key: abc'")
            credentials.append(APIKey(name.strip(), value.strip()))
        options: dict[str, Any] = {
            "base_url": args.base_url,
            "use_servers": args.use_servers,
            "auth": credentials or None,
            "forward_headers": args.forward_header,
            "timeout": args.api_timeout,
            "include_deprecated": args.include_deprecated,
        }
        return Server.from_openapi(args.openapi, name=args.name, **options)
    except (ValueError, TypeError) as exc:  # the document, its schemas, the options: toolkit's own message
        print(f"toolkit: --openapi {args.openapi}: {exc}", file=sys.stderr)
        raise SystemExit(2) from None


def _usage(message: str) -> Any:
    print(f"toolkit run: {message}", file=sys.stderr)
    raise SystemExit(2)
