"""Test tools that never finish on their own."""

from __future__ import annotations

import asyncio
from typing import NoReturn


async def hang_until_cancelled(cancelled: asyncio.Event) -> NoReturn:
    """Wait forever; when the wait is cancelled, set ``cancelled`` and let the cancellation through."""
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        cancelled.set()
        raise
    raise AssertionError("an Event nobody sets was set")
