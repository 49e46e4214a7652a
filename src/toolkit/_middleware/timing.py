"""``Timing``: how long each kind of request takes, kept in-process; and how a request ended.

```python
timing = Timing()
server.add_middleware(timing)
...
timing.stats()["tools/call add"]  # {"count": 3, "errors": 1, "total_seconds": ..., ...}
```

``measure`` is the one place that decides how a request ended (``ok``, ``tool_error``, ``error``,
``internal_error``, ``cancelled``); ``RequestLogging`` uses it too.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any, Literal

from .._errors import McpError
from .base import CallNext, McpRequest, Middleware

logger = logging.getLogger("toolkit")

Outcome = Literal["ok", "tool_error", "error", "internal_error", "cancelled"]
"""``"ok"``, ``"tool_error"`` (an ``isError`` tool result), ``"error"`` (a JSON-RPC error),
``"internal_error"`` (an unexpected exception) or ``"cancelled"``."""
Finished = Callable[[float, Outcome, int | None], None]
"""Told how a request ended: (seconds, outcome, the JSON-RPC error code of an ``"error"``)."""
FAILED: frozenset[Outcome] = frozenset({"tool_error", "error", "internal_error"})

MAX_KEYS = 1000
OTHER = "(other)"
"""Where requests count once ``MAX_KEYS`` keys exist: method and tool names come from clients."""


async def measure(request: McpRequest, call_next: CallNext[dict[str, Any]], finished: Finished) -> dict[str, Any]:
    """``call_next(request)``, then ``finished(seconds, outcome, error_code)``, whatever happened.

    Every exception propagates unchanged (``asyncio.CancelledError`` included).
    """
    started = time.perf_counter()
    outcome: Outcome = "internal_error"
    code: int | None = None
    try:
        result = await call_next(request)
        failed = request.method == "tools/call" and isinstance(result, dict) and result.get("isError") is True
        outcome = "tool_error" if failed else "ok"
        return result
    except McpError as exc:
        outcome, code = "error", exc.code
        raise
    except asyncio.CancelledError:
        outcome = "cancelled"
        raise
    finally:
        finished(time.perf_counter() - started, outcome, code)


class _Stat:
    __slots__ = ("count", "errors", "max", "total")

    def __init__(self) -> None:
        self.count = 0
        self.errors = 0
        self.total = 0.0
        self.max = 0.0


class Timing(Middleware):
    """Count and time every request, per method and tool or prompt name.

    ``stats()`` gives, per key (``"tools/call add"``, ``"prompts/get greet"``, ``"tools/list"``,
    ``"resources/read"`` …), the ``count`` of requests, how many ended in ``errors`` (an
    ``isError`` tool result, a JSON-RPC error, an internal error; a cancelled request is
    counted but is no error), and ``total_seconds``, ``mean_seconds``, ``max_seconds``.
    Resource URIs are not part of a key (there is no end to them), and after 1000 keys
    further ones count under ``"(other)"``, so the memory stays bounded.

    Each request's duration is left in ``request.state["duration_seconds"]`` for the
    middlewares added before this one. ``callback(request, seconds, outcome)`` is called after
    each request; ``outcome`` is ``"ok"``, ``"tool_error"``, ``"error"``, ``"internal_error"``
    or ``"cancelled"`` (an exception it raises is logged, and the request goes on).
    """

    __slots__ = ("_stats", "callback")

    def __init__(self, callback: Callable[[McpRequest, float, str], None] | None = None) -> None:
        if callback is not None and not callable(callback):
            raise TypeError(f"Timing(callback=...) takes a function (request, seconds, outcome), not {callback!r}")
        self.callback = callback
        self._stats: dict[str, _Stat] = {}

    async def on_request(self, request: McpRequest, call_next: CallNext[dict[str, Any]]) -> dict[str, Any]:
        def finished(seconds: float, outcome: Outcome, code: int | None) -> None:
            self._record(request, seconds, outcome)

        return await measure(request, call_next, finished)

    def _record(self, request: McpRequest, seconds: float, outcome: Outcome) -> None:
        request.state["duration_seconds"] = seconds
        stat = self._stat(f"{request.method} {request.name}" if request.name is not None else request.method)
        stat.count += 1
        if outcome in FAILED:
            stat.errors += 1
        stat.total += seconds
        stat.max = max(stat.max, seconds)
        if self.callback is not None:
            try:
                self.callback(request, seconds, outcome)
            except Exception:
                logger.exception("the Timing callback %r failed for %r", self.callback, request)

    def _stat(self, key: str) -> _Stat:
        stat = self._stats.get(key)
        if stat is None:
            if len(self._stats) >= MAX_KEYS:
                key = OTHER
                stat = self._stats.get(key)
            if stat is None:
                stat = self._stats[key] = _Stat()
        return stat

    def stats(self) -> dict[str, dict[str, Any]]:
        """Per key, in first-seen order: ``count``, ``errors``, ``total_seconds``, ``mean_seconds``, ``max_seconds``."""
        return {
            key: {
                "count": stat.count,
                "errors": stat.errors,
                "total_seconds": stat.total,
                "mean_seconds": stat.total / stat.count if stat.count else 0.0,
                "max_seconds": stat.max,
            }
            for key, stat in self._stats.items()
        }

    def reset(self) -> None:
        """Forget every statistic so far."""
        self._stats.clear()

    def __repr__(self) -> str:
        return f"Timing({len(self._stats)} keys)"
