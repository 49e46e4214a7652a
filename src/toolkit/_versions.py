"""Protocol versions and the two eras they belong to.

Versions are compared by their position in ``KNOWN_VERSIONS``, never as strings
(ARCHITECTURE §2).
"""

from __future__ import annotations

from typing import Final

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

_POSITION: Final = {version: index for index, version in enumerate(KNOWN_VERSIONS)}


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
