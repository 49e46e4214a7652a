"""Protocol versions and the two eras they belong to.

Versions are compared by their position in ``KNOWN_VERSIONS``, never as strings
(ARCHITECTURE §2).
"""

from __future__ import annotations

from typing import Any, Final

from ._errors import UNSUPPORTED_VERSION, McpError
from ._methods import MODERN_ONLY
from ._types import CLIENT_CAPABILITIES_KEY, PROTOCOL_VERSION_KEY

LEGACY_VERSIONS: Final = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
"""Versions that open with an ``initialize`` handshake and keep a session."""

MODERN_VERSIONS: Final = ("2026-07-28",)
"""Stateless versions: every request carries its version and capabilities in ``_meta``."""

KNOWN_VERSIONS: Final = LEGACY_VERSIONS + MODERN_VERSIONS
"""Every version toolkit speaks, oldest first."""

LATEST_LEGACY_VERSION: Final = LEGACY_VERSIONS[-1]
LATEST_VERSION: Final = MODERN_VERSIONS[-1]

# First versions with a given feature, by position.
STRUCTURED_OUTPUT_SINCE: Final = "2025-06-18"
"""``outputSchema`` and ``structuredContent`` exist from this version on."""

ASSUMED_WITHOUT_HEADER: Final = "2025-03-26"
"""The version of a sessionless legacy HTTP request without ``MCP-Protocol-Version`` (the header
came with 2025-06-18; 2025-06-18 transports, "Protocol Version Header": assume 2025-03-26)."""

BEFORE_INITIALIZE: Final = LEGACY_VERSIONS[0]
"""The rules a legacy ``ping`` sent before ``initialize`` is answered under (none negotiated yet)."""

_POSITION: Final = {version: index for index, version in enumerate(KNOWN_VERSIONS)}


def sessionless_legacy_version(header: str | None) -> str:
    """The version a legacy request without a session is served under: its ``MCP-Protocol-Version``."""
    return header if header is not None and header in LEGACY_VERSIONS else ASSUMED_WITHOUT_HEADER


def is_known(version: str) -> bool:
    return version in _POSITION


def is_modern(version: str) -> bool:
    return version in MODERN_VERSIONS


def at_least(version: str, reference: str) -> bool:
    """Whether ``version`` is ``reference`` or newer. Both must be known versions."""
    return _POSITION[version] >= _POSITION[reference]


def negotiate_legacy(requested: object) -> str:
    """The version a legacy ``initialize`` settles on.

    The spec (2025-11-25 lifecycle): answer with the requested version if we support it,
    otherwise with the latest version we support in that era.
    """
    if isinstance(requested, str) and requested in LEGACY_VERSIONS:
        return requested
    return LATEST_LEGACY_VERSION


def is_modern_request(method: str, params: dict[str, Any]) -> bool:
    """Whether a request uses the modern era's per-request ``_meta`` (or a modern-only method).

    Era per request (2026-07-28 basic/versioning, "Backward Compatibility"). Either required
    per-request field marks it: a request with client capabilities but no protocol version is
    a malformed modern request (-32602), not a legacy one.
    """
    meta = params.get("_meta")
    if isinstance(meta, dict) and (PROTOCOL_VERSION_KEY in meta or CLIENT_CAPABILITIES_KEY in meta):
        return True
    return method in MODERN_ONLY


def unsupported_version(requested: Any) -> McpError:
    """-32022 (HTTP 400) for a protocol version this server does not speak, listing what it does."""
    return McpError(
        UNSUPPORTED_VERSION,
        f"Unsupported protocol version {requested!r}; this server speaks {', '.join(MODERN_VERSIONS)} per request "
        f"(and {', '.join(LEGACY_VERSIONS)} after initialize)",
        {"supported": list(MODERN_VERSIONS), "requested": requested if isinstance(requested, str) else str(requested)},
        http_status=400,
    )
