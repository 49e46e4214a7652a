"""``toolkit tools`` and ``toolkit call`` against any MCP server: a URL or a command, through ``toolkit.Client``.

Imported only for a remote target, so a local app's commands never load the client's transports.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from pathlib import Path
from urllib.parse import urlsplit

from ._cli_calls import CallArguments, call_on
from ._errors import ClientError, ToolkitError
from .client import Client

TOKEN_ENVIRONMENT = "TOOLKIT_TOKEN"
OAUTH_FILE_ENVIRONMENT = "TOOLKIT_OAUTH_FILE"


def oauth_file() -> Path:
    """Where ``--oauth`` keeps tokens and client registrations (``$TOOLKIT_OAUTH_FILE`` overrides)."""
    return Path(os.environ.get(OAUTH_FILE_ENVIRONMENT) or Path.home() / ".toolkit" / "oauth.json")


def headers_of(given: list[str]) -> dict[str, str]:
    """``--header NAME:VALUE`` (repeatable) as a dict; a malformed one exits 2 naming it."""
    headers: dict[str, str] = {}
    for text in given:
        name, colon, value = text.partition(":")
        if not colon or not name.strip():
            print(f"toolkit: --header {text!r}: give NAME:VALUE, e.g. --header 'X-Api-Key: secret'", file=sys.stderr)
            raise SystemExit(2)
        headers[name.strip()] = value.strip()
    return headers


async def run_remote(args: argparse.Namespace, call: CallArguments | None) -> int:
    """Run ``tools`` or ``call`` against the server ``args.app`` names; the exit status."""
    url = args.app.startswith(("http://", "https://"))
    target = args.app if url else shlex.split(args.app)
    token = args.token or os.environ.get(TOKEN_ENVIRONMENT)
    headers = headers_of(args.header)
    if not url and (token or headers or args.oauth):
        print("toolkit: --token, --header and --oauth are for a server at a URL, not a command", file=sys.stderr)
        return 2
    if token and args.oauth:
        print("toolkit: give --token or --oauth, not both", file=sys.stderr)
        return 2
    auth: object = token
    if args.oauth:
        from ._auth.oauth import is_loopback  # noqa: PLC0415
        from .client import FileTokenStorage, OAuth  # noqa: PLC0415  (httpx; only to sign in)

        # A server on this machine over plain http (a local authorization server beside it) may
        # sign in over loopback http too; anything else must be https (the flow checks every URL).
        local = urlsplit(args.app).scheme == "http" and is_loopback(urlsplit(args.app).hostname)
        auth = OAuth(storage=FileTokenStorage(oauth_file()), client_name="toolkit CLI", allow_http_loopback=local)
    client = Client(
        target,
        protocol_version=args.protocol_version or "auto",
        headers=headers or None,
        auth=auth,
        timeout=args.timeout,
        probe_timeout=min(args.timeout, 10.0),
    )
    try:
        async with client:
            if call is None:
                print(json.dumps(await client.list_tools(), indent=2))
                return 0
            return await call_on(client.session, args.app, args.tool, call)
    except ClientError as exc:
        print(f"toolkit {args.command}: {args.app}: JSON-RPC error {exc}", file=sys.stderr)
    except (ToolkitError, ConnectionError, OSError, TimeoutError) as exc:
        print(f"toolkit {args.command}: {args.app}: {exc}", file=sys.stderr)
    return 1
