"""The few names every layer shares, so signatures read the same everywhere.

Nothing here imports from the rest of the package.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from typing import Any, Final, Literal, get_args

RequestId = str | int
"""A JSON-RPC request id (MCP forbids ``null``)."""

Send = Callable[[dict[str, Any]], Awaitable[None]]
"""Deliver one JSON-RPC message to the client on the right stream."""

JsonSchema = dict[str, Any]
Mode = Literal["validation", "serialization"]
"""Which side of a type a schema describes: what is accepted, or what is sent."""


def log_digest(secret: str) -> str:
    """What a log line shows of a session id or a task id: 12 hex digits of its SHA-256.

    Enough to follow one id through the lines about it; nothing of the id itself, so a reader of
    the logs cannot present it (or narrow a guess of it) to take over the session or the task.
    """
    return hashlib.sha256(secret.encode()).hexdigest()[:12]


REF_PREFIX: Final = "#/$defs/"
"""Where generated schemas keep their named subschemas (same-document refs only)."""

LogLevel = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
"""The syslog levels of ``notifications/message`` (spec: server/utilities/logging)."""

LOG_LEVELS: Final[tuple[str, ...]] = get_args(LogLevel)
LOG_RANK: Final = {level: rank for rank, level in enumerate(LOG_LEVELS)}

# The modern era's per-request ``_meta`` keys (spec 2026-07-28: basic/index, "_meta").
PROTOCOL_VERSION_KEY: Final = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_KEY: Final = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_KEY: Final = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL_KEY: Final = "io.modelcontextprotocol/logLevel"
SUBSCRIPTION_ID_KEY: Final = "io.modelcontextprotocol/subscriptionId"
SERVER_INFO_KEY: Final = "io.modelcontextprotocol/serverInfo"

TASKS_EXTENSION: Final = "io.modelcontextprotocol/tasks"
"""The tasks extension's identifier (ext-tasks; 2026-07-28 capabilities ``extensions``)."""
