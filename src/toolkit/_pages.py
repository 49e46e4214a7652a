"""Paged list results (``tools/list`` and the other lists): cursors, and a cache of encoded pages.

A page is built once per kind, shape (the protocol version) and offset, and kept as encoded
JSON until that kind changes. Cursors carry the kind's generation, so a cursor issued before
a change is refused instead of skipping or repeating entries.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any, Final

import pydantic_core

from ._errors import INVALID_PARAMS, McpError
from ._jsonrpc import Raw
from ._registry import Kind, Registry

LIST_FIELDS: Final[dict[Kind, str]] = {
    "tools": "tools",
    "prompts": "prompts",
    "resources": "resources",
    "templates": "resourceTemplates",
}
"""The field of each list result that holds its entries."""


class Pages:
    """Encoded list pages per (kind, shape, offset, visible scopes), dropped when the kind changes."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self._cache: dict[tuple[Kind, str, int, frozenset[str] | None], Raw] = {}
        self._visible: dict[tuple[Kind, frozenset[str]], list[Any]] = {}

    def page(
        self,
        kind: Kind,
        shape: str,
        cursor: Any,
        page_size: int,
        build: Callable[[list[Any]], list[dict[str, Any]]],
        envelop: Callable[[dict[str, Any]], dict[str, Any]],
        visible: frozenset[str] | None = None,
    ) -> Raw:
        """The page at ``cursor``: ``build`` turns registry items into entries, ``envelop`` adds the envelope.

        With ``visible`` (the caller's scopes), only the items whose scopes it holds are listed.
        """
        items = self._items(kind, visible)
        generation = self.registry.generation[kind]
        offset = _decode_cursor(cursor, kind, generation, len(items))
        key = (kind, shape, offset, visible)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        result: dict[str, Any] = {LIST_FIELDS[kind]: build(items[offset : offset + page_size])}
        if offset + page_size < len(items):
            result["nextCursor"] = _encode_cursor(kind, generation, offset + page_size)
        raw = Raw(pydantic_core.to_json(envelop(result)))
        self._cache[key] = raw
        return raw

    def _items(self, kind: Kind, visible: frozenset[str] | None) -> list[Any]:
        if visible is None:
            return list(self.registry.items(kind).values())
        items = self._visible.get((kind, visible))
        if items is None:
            items = [item for item in self.registry.items(kind).values() if item.scopes <= visible]
            self._visible[kind, visible] = items
        return items

    def invalidate(self, kind: Kind) -> None:
        self._cache = {key: value for key, value in self._cache.items() if key[0] != kind}
        self._visible = {key: value for key, value in self._visible.items() if key[0] != kind}


def _encode_cursor(kind: str, generation: int, offset: int) -> str:
    return base64.urlsafe_b64encode(f"{kind}:{generation}:{offset}".encode()).decode("ascii")


def _decode_cursor(cursor: Any, kind: str, generation: int, total: int) -> int:
    if cursor is None:
        return 0
    try:
        decoded = base64.urlsafe_b64decode(str(cursor).encode("ascii")).decode()
        cursor_kind, cursor_generation, offset_text = decoded.split(":")
        offset = int(offset_text)
    except (ValueError, UnicodeError):
        raise McpError(INVALID_PARAMS, "Invalid params: the cursor is not one this server issued") from None
    if cursor_kind != kind or int(cursor_generation) != generation or not 0 <= offset <= total:
        raise McpError(
            INVALID_PARAMS, "Invalid params: the cursor is stale (the list changed); list again from the start"
        )
    return offset
