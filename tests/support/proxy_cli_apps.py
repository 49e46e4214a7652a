"""Two small upstream servers for ``toolkit proxy`` (tests/test_cli_proxy.py).

``toolkit run tests/support/proxy_cli_apps.py:numbers`` serves ``primes`` (a list), ``era`` (the
protocol version it was called in) and ``header`` (an HTTP request header it received);
``...:words`` serves ``greet`` and ``where`` (its working directory and ``$GREETING``).
"""

from __future__ import annotations

import os

from toolkit import Context, Server

numbers = Server("numbers")
words = Server("words")


@numbers.tool
def primes(n: int) -> list[int]:
    """The first ``n`` primes (at most six)."""
    return [2, 3, 5, 7, 11, 13][:n]


@numbers.tool
def era(ctx: Context) -> str:
    """The protocol version this server was called in."""
    return ctx.protocol_version


@numbers.tool
def header(name: str, ctx: Context) -> str:
    """The HTTP request header ``name`` as this server received it (``<none>`` without one, or over stdio)."""
    request = ctx.request
    return "<none>" if request is None else str(request.headers.get(name.lower(), "<none>"))


@words.tool
def greet(name: str) -> str:
    """A greeting."""
    return f"Hello, {name}!"


@words.tool
def where() -> dict[str, str]:
    """This server's working directory and ``$GREETING``."""
    return {"cwd": os.getcwd(), "greeting": os.environ.get("GREETING", "<unset>")}
