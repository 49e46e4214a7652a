"""``RequestLogging``: one log line per request, when it ends.

```python
server.add_middleware(RequestLogging())
# toolkit.requests: tools/call add v=2026-07-28 http caller=sub:alice id=7 1.82 ms ok
```
"""

from __future__ import annotations

import json
import logging
from typing import Any

from .._types import log_digest
from .base import CallNext, McpRequest, Middleware
from .timing import Outcome, measure


class RequestLogging(Middleware):
    """Log one line per request when it ends: what was asked, by whom, how long it took, how it ended.

    The line holds the method, its target (the tool or prompt name, or the resource URI), the
    protocol version, the transport, the caller and session (when there are; a session as 12 hex
    digits of its id's SHA-256, never the id, which would let a log reader take it over), the
    request id, the duration in milliseconds and the outcome: ``ok``, ``tool_error`` (a
    ``tools/call`` whose result has ``isError``), ``error <code>`` (a JSON-RPC error),
    ``internal_error`` (an unexpected exception) or ``cancelled``. Errors are re-raised unchanged
    after the line.

    ``logger``: a name or a ``logging.Logger`` (default ``"toolkit.requests"``). ``level``: the
    level of every line. ``json=True``: the message is one JSON object instead, with the keys
    ``method``, ``target``, ``protocol_version``, ``transport``, ``caller``, ``session_id``,
    ``request_id``, ``duration_ms``, ``outcome`` (``"error"`` for a JSON-RPC error), plus
    ``error_code`` for an error and ``arguments`` when asked for. Either way each record
    carries those fields as attributes prefixed ``mcp_`` (``record.mcp_method``,
    ``record.mcp_error_code`` is None without an error) for structured log handlers.

    ``arguments=True`` adds the arguments of ``tools/call`` and ``prompts/get``. Beware: they
    may hold personal data, secrets or tokens a client sent, which then end up in your logs.

    Add it first so that it is outermost and its duration covers the other middlewares.
    """

    __slots__ = ("arguments", "json", "level", "logger")

    def __init__(
        self,
        logger: str | logging.Logger = "toolkit.requests",
        *,
        level: int = logging.INFO,
        arguments: bool = False,
        json: bool = False,
    ) -> None:
        if not isinstance(logger, str | logging.Logger):
            raise TypeError(f"RequestLogging(logger=...) takes a logger name or a logging.Logger, not {logger!r}")
        self.logger = logging.getLogger(logger) if isinstance(logger, str) else logger
        if isinstance(logger, str) and self.logger.level == logging.NOTSET:
            # Logging is what it is added for: its lines pass whatever the root logger's level
            # (WARNING by default, and under `toolkit run`), unless its logger is set otherwise.
            self.logger.setLevel(level)
        self.level = level
        self.arguments = arguments
        self.json = json

    async def on_request(self, request: McpRequest, call_next: CallNext[dict[str, Any]]) -> dict[str, Any]:
        if not self.logger.isEnabledFor(self.level):
            return await call_next(request)

        def finished(seconds: float, outcome: Outcome, code: int | None) -> None:
            self._log(request, seconds, outcome, code)

        return await measure(request, call_next, finished)

    def _log(self, request: McpRequest, seconds: float, outcome: Outcome, code: int | None) -> None:
        fields: dict[str, Any] = {
            "method": request.method,
            "target": request.name if request.name is not None else request.uri,
            "protocol_version": request.protocol_version,
            "transport": request.transport,
            "caller": request.caller,
            "session_id": log_digest(request.session_id) if request.session_id is not None else None,
            "request_id": request.request_id,
            "duration_ms": round(seconds * 1000, 3),
            "outcome": outcome,
        }
        if code is not None:
            fields["error_code"] = code
        if self.arguments:
            fields["arguments"] = request.arguments
        extra = {f"mcp_{key}": value for key, value in fields.items()}
        extra.setdefault("mcp_error_code", None)
        message = _json(fields) if self.json else _plain(fields)
        self.logger.log(self.level, message, extra=extra)

    def __repr__(self) -> str:
        return f"RequestLogging({self.logger.name!r})"


def _plain(fields: dict[str, Any]) -> str:
    """``tools/call add v=2026-07-28 http caller=sub:alice id=7 1.82 ms ok``."""
    parts = [_word(fields["method"])]
    if fields["target"] is not None:
        parts.append(_word(fields["target"]))
    parts += [f"v={_word(fields['protocol_version'])}", fields["transport"]]
    if fields["caller"] is not None:
        parts.append(f"caller={_word(fields['caller'])}")
    if fields["session_id"] is not None:
        parts.append(f"session={_word(fields['session_id'])}")
    parts.append(f"id={_word(str(fields['request_id']))}")
    if "arguments" in fields:
        parts.append(f"arguments={_json(fields['arguments'])}")
    parts.append(f"{fields['duration_ms']:.2f} ms")
    parts.append(f"{fields['outcome']} {fields['error_code']}" if "error_code" in fields else fields["outcome"])
    return " ".join(parts)


def _word(value: str) -> str:
    """``value`` as one word of the line: quoted and escaped (JSON) when a client could break the line with it."""
    if value and value.isprintable() and " " not in value and '"' not in value:
        return value
    return _json(value)


def _json(value: Any) -> str:
    """Compact ASCII JSON (no character in it can end or fake a line); what is not JSON, as its repr."""
    return json.dumps(value, separators=(",", ":"), default=repr)
