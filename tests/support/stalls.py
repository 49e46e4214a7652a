"""Middleware that makes a server stall where a test needs it to."""

from __future__ import annotations

import asyncio
from typing import Any

from toolkit.middleware import Middleware


class NeverListens(Middleware):
    """A server that takes a ``subscriptions/listen`` and never acknowledges it (nor answers it)."""

    async def on_request(self, request: Any, call_next: Any) -> Any:
        if request.method == "subscriptions/listen":
            await asyncio.Event().wait()
        return await call_next(request)
