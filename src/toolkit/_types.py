"""The few names every layer shares, so signatures read the same everywhere.

Nothing here imports from the rest of the package.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Final, Literal, get_args

RequestId = str | int
"""A JSON-RPC request id (MCP forbids ``null``)."""

Send = Callable[[dict[str, Any]], Awaitable[None]]
"""Deliver one JSON-RPC message to the client on the right stream."""

JsonSchema = dict[str, Any]
Mode = Literal["validation", "serialization"]
"""Which side of a type a schema describes: what is accepted, or what is sent."""

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
