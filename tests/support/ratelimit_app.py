"""The server the rate-limit tests run as real processes (``tests/test_ratelimit.py``).

Configured from the environment, so one app serves every case:

- ``RATELIMIT_LIMIT``: the limit (default ``10/minute``);
- ``RATELIMIT_PER``: the key parts, comma-separated (default ``caller,tool``);
- ``RATELIMIT_STORAGE``: ``memory://`` (default) or a ``redis://`` URL shared by replicas.

``search`` and ``lookup`` are limited separately (per tool); ``whoami`` says who called.
"""

from __future__ import annotations

import os

from toolkit import Context, Server
from toolkit.middleware import RateLimit

server = Server("ratelimited", version="1.0.0")
server.add_middleware(
    RateLimit(
        os.environ.get("RATELIMIT_LIMIT", "10/minute"),
        per=tuple(os.environ.get("RATELIMIT_PER", "caller,tool").split(",")),
        storage=os.environ.get("RATELIMIT_STORAGE", "memory://"),
    )
)


@server.tool
def search(query: str) -> str:
    """Search for ``query`` (this process's id in the answer, to see which replica ran it)."""
    return f"{query} from {os.getpid()}"


@server.tool
def lookup(key: str) -> str:
    """Look ``key`` up."""
    return key.upper()


@server.tool
def whoami(ctx: Context) -> str | None:
    """The access token's subject, if the call carried one."""
    return ctx.access_token.subject if ctx.access_token is not None else None
