"""A server that says which event loop it runs on (tests/test_uvloop.py).

``toolkit run tests/support/loops_app.py`` serves ``loop`` (``"asyncio"`` or ``"uvloop"``: the
package of the running loop's class) and ``primes`` (a list: natural output, wrapped for legacy
clients).
"""

from __future__ import annotations

import asyncio

from toolkit import Server

server = Server("loops")


@server.tool
async def loop() -> str:
    """The package of the event loop this server runs on: ``asyncio`` or ``uvloop``."""
    return type(asyncio.get_running_loop()).__module__.partition(".")[0]


@server.tool
def primes(n: int) -> list[int]:
    """The first ``n`` primes (at most six)."""
    return [2, 3, 5, 7, 11, 13][:n]
