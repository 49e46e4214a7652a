"""A server whose tool waits until it is cancelled and says so in a file (``tests/test_client_cancel.py``).

``toolkit run tests/support/client_cancel_app.py [--transport http]``; ``$CANCEL_MARKS`` is the folder
where ``wait(mark)`` writes ``<mark>.started`` when it starts and ``<mark>.cancelled`` when the
server cancels it.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from toolkit import Server

server = Server("client-cancel-test")


def _write(name: str) -> None:
    folder = Path(os.environ["CANCEL_MARKS"])
    temporary = folder / f".{name}.tmp"
    temporary.write_text(str(os.getpid()))
    temporary.replace(folder / name)  # whole, or not there


@server.tool
async def wait(mark: str) -> str:
    """Waits an hour, unless cancelled."""
    _write(f"{mark}.started")
    try:
        await asyncio.sleep(3600)
    except asyncio.CancelledError:
        _write(f"{mark}.cancelled")
        raise
    return "waited"


@server.tool
def quick() -> int:
    return 1
