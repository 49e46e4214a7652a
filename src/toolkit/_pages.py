"""The list methods (``tools/list`` and the others): who sees what, cursors, and a cache of encoded pages.

A page is built once per kind, shape (the protocol version), offset and what the caller may
see, and kept as encoded JSON until that kind changes. Cursors carry the kind's generation, so
a cursor issued before a change is refused instead of skipping or repeating entries.

A caller sees what its token's scopes grant (pages are shared by callers with the same grants)
and, when the server has a visibility function (``server.set_visibility``), what that function
shows it: asked per item on each list request, its pages shared by the callers it hides the same
items from. Without one, a list costs a cache lookup.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any, Final

import pydantic_core

from . import _compat
from ._errors import INVALID_PARAMS, McpError
from ._inbound import Caller, InboundRequest
from ._jsonrpc import Raw
from ._registry import Kind, Registry
from ._settings import Settings

LIST_FIELDS: Final[dict[Kind, str]] = {
    "tools": "tools",
    "prompts": "prompts",
    "resources": "resources",
    "templates": "resourceTemplates",
}
"""The field of each list result that holds its entries."""

Visibility = Callable[[Any, Caller], bool]
"""``fn(component, caller)``: whether ``caller`` sees (and may use) ``component``."""

_MAX_PAGES: Final = 1024
"""Encoded pages kept at most; past it the cache starts again (a visibility function may split callers finely)."""

PageKey = tuple[Kind, str, int, frozenset[str] | None, tuple[int, ...]]
"""(kind, shape, offset, the scopes that matter, the positions a visibility function hid)."""


class Pages:
    """Encoded list pages per (kind, shape, offset, visible scopes, hidden items), dropped when the kind changes."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self._cache: dict[PageKey, Raw] = {}
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
        shown: Callable[[Any], bool] | None = None,
    ) -> Raw:
        """The page at ``cursor``: ``build`` turns registry items into entries, ``envelop`` adds the envelope.

        With ``visible`` (the caller's scopes), only the items whose scopes it holds are listed;
        with ``shown``, only those it accepts.
        """
        items = self._items(kind, visible)
        hidden: tuple[int, ...] = ()
        if shown is not None:
            hidden = tuple(index for index, item in enumerate(items) if not shown(item))
            if hidden:
                left_out = set(hidden)
                items = [item for index, item in enumerate(items) if index not in left_out]
        generation = self.registry.generation[kind]
        offset = _decode_cursor(cursor, kind, generation, len(items))
        key = (kind, shape, offset, visible, hidden)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        result: dict[str, Any] = {LIST_FIELDS[kind]: build(items[offset : offset + page_size])}
        if offset + page_size < len(items):
            result["nextCursor"] = _encode_cursor(kind, generation, offset + page_size)
        raw = Raw(pydantic_core.to_json(envelop(result)))
        if len(self._cache) >= _MAX_PAGES:
            self._cache.clear()
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


class Lists:
    """The handlers of ``tools/list``, ``resources/list``, ``resources/templates/list`` and ``prompts/list``."""

    def __init__(
        self,
        registry: Registry,
        settings: Settings,
        shapes: _compat.ToolShapes,
        envelop: Callable[[dict[str, Any], InboundRequest], dict[str, Any]],
    ) -> None:
        self.registry = registry
        self.settings = settings
        self.shapes = shapes
        self.envelop = envelop
        self.pages = Pages(registry)
        self.visibility: Visibility | None = None
        """The server's visibility function; ``None``: everyone sees everything their scopes grant."""

    async def tools(self, inbound: InboundRequest) -> Raw:
        version = inbound.version
        shapes = self.shapes
        return self._page("tools", inbound, lambda tools: [shapes.get(tool, version).advertised for tool in tools])

    async def resources(self, inbound: InboundRequest) -> Raw:
        return self._listing("resources", "Resource", inbound)

    async def templates(self, inbound: InboundRequest) -> Raw:
        return self._listing("templates", "ResourceTemplate", inbound)

    async def prompts(self, inbound: InboundRequest) -> Raw:
        return self._listing("prompts", "Prompt", inbound)

    def _listing(self, kind: Kind, entry_type: str, inbound: InboundRequest) -> Raw:
        version = inbound.version
        return self._page(
            kind, inbound, lambda items: [_compat.listing(entry_type, item.listing(), version) for item in items]
        )

    def _page(self, kind: Kind, inbound: InboundRequest, build: Callable[[list[Any]], list[dict[str, Any]]]) -> Raw:
        # A caller with a token sees what its scopes grant; pages are cached per set of the
        # scopes that matter here, so callers with the same grants share them.
        protected = self.registry.scopes[kind]
        token = inbound.access_token
        visible = token.scopes & protected if token is not None and protected else None
        visibility = self.visibility
        shown: Callable[[Any], bool] | None = None
        if visibility is not None:
            caller = Caller(inbound)

            def shown(item: Any) -> bool:
                return visibility(item, caller)

        def envelop(result: dict[str, Any]) -> dict[str, Any]:
            audience = "public" if visible is None and visibility is None else "private"
            _compat.cacheable(result, inbound.version, self.settings.list_ttl_ms, audience)
            return self.envelop(result, inbound)

        cursor = inbound.params.get("cursor")
        return self.pages.page(kind, inbound.version, cursor, self.settings.page_size, build, envelop, visible, shown)


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
