"""Content blocks as each protocol version carries them.

A block type a version lacks (``_BLOCK_SINCE``) becomes a text stand-in, so nothing is silently
lost; a block's ``_meta`` goes only to versions that define it. Blocks another server sent
(``WireBlock``) are kept as they came and shaped by the same rules when sent on.
"""

from __future__ import annotations

from typing import Any, Final

from .._content import ContentBlock
from .._versions import KNOWN_VERSIONS, at_least
from .envelope import has_field

# Content block types by the first version that has them.
_BLOCK_SINCE: Final = {"audio": "2025-03-26", "resource_link": "2025-06-18"}


def content_blocks(blocks: list[ContentBlock], version: str) -> list[dict[str, Any]]:
    """Wire form of content blocks, with blocks ``version`` lacks turned into text."""
    return [block_for(block.to_wire(), version) for block in blocks]


def block_for(item: dict[str, Any], version: str) -> dict[str, Any]:
    """One wire content block as ``version`` carries it (``item`` is the caller's to change)."""
    if "_meta" in item and not has_field("ContentBlock", "_meta", version):
        item.pop("_meta")
    since = _BLOCK_SINCE.get(item["type"])
    if since is not None and not at_least(version, since):
        item = _as_text(item)
    return item


def _as_text(item: dict[str, Any]) -> dict[str, Any]:
    """A text stand-in for a block the client's version cannot carry, so nothing is silently lost."""
    if item["type"] == "resource_link":
        label = item.get("title") or item["name"]
        return {"type": "text", "text": f"Resource: {label} <{item['uri']}>"}
    # Only audio gets here (before 2025-03-26), and an audio block always has its mimeType.
    return {"type": "text", "text": f"[{item['type']} content ({item['mimeType']}) omitted]"}


class WireBlock(ContentBlock):
    """A content block as another server sent it, sent on unchanged (a type toolkit has no class for included).

    Shaped for a client's version like any block: a type that version lacks becomes text there.
    """

    __slots__ = ("wire",)

    def __init__(self, wire: dict[str, Any]) -> None:
        super().__init__(wire.get("annotations"), wire.get("_meta"))
        self.wire: Final = wire

    def to_wire(self) -> dict[str, Any]:
        return dict(self.wire)  # a copy the caller may change (block_for drops _meta from it)


def wire_blocks(content: Any) -> list[ContentBlock]:
    """``content`` of a received result as blocks, each checked to shape for every known version.

    Raises ``ValueError`` when ``content`` is not a list of blocks, or a block lacks what its
    text stand-in needs (an audio block's ``mimeType``, a resource link's ``uri`` and ``name``).
    """
    if not isinstance(content, list):
        raise ValueError("result.content must be a list of content blocks")
    blocks: list[ContentBlock] = []
    for block in content:
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            raise ValueError("result.content must be a list of content blocks (objects with a string type)")
        try:
            block_for(dict(block), KNOWN_VERSIONS[0])  # the oldest version turns the most blocks into text
        except (KeyError, TypeError) as exc:
            raise ValueError(f"result.content holds a malformed {block['type']!r} block ({exc})") from None
        blocks.append(WireBlock(block))
    return blocks
