"""``Settings``: the server-wide options the engine reads while it serves.

``Server`` takes them as constructor arguments and exposes each as an attribute of its own
(``server.page_size = 4`` takes effect on the next request); the engine and every ``Context``
read this one object, so nothing below the facade ever holds the ``Server``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ._mrtr import StateSigner


@dataclass(slots=True)
class Settings:
    name: str
    version: str
    instructions: str | None
    title: str | None
    website_url: str | None
    icons: list[dict[str, Any]] | None
    mask_errors: bool
    page_size: int
    list_ttl_ms: int
    read_ttl_ms: int
    read_cache_scope: Literal["public", "private"]
    state_signer: StateSigner
    client_request_timeout: float
    tool_timeout: float | None
    max_concurrent_requests: int
    max_argument_depth: int
