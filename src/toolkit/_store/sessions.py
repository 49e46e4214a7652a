"""``SessionRecord``: a legacy session as every replica sees it, in whichever store keeps it.

Only legacy Streamable HTTP keeps sessions in a store, so this module is imported on first
use (``toolkit._store.base`` hands it out lazily): creating a dataclass compiles its generated
methods, start-up time a stdio server would pay for nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class SessionRecord:
    """A legacy session as every replica sees it."""

    id: str
    version: str
    client_capabilities: dict[str, Any] = field(default_factory=dict)
    client_info: dict[str, Any] = field(default_factory=dict)
    log_level: str = "debug"
    initialized: bool = False
    subscriptions: set[str] = field(default_factory=set)
    caller: str | None = None
    """Who opened the session (the access token's subject); only they may use it."""
