"""Content blocks a tool or prompt can return, and ``ToolResult`` for full control.

Each block knows its wire form (``to_wire``). Which blocks a given protocol version can
carry is decided by the compatibility module, not here.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

Annotations = dict[str, Any]
"""Content annotations: ``{"audience": ["user"], "priority": 0.5, "lastModified": "..."}``."""


def _b64(data: bytes | str) -> str:
    return data if isinstance(data, str) else base64.b64encode(data).decode("ascii")


def _guess_mime(path: Path, fallback: str) -> str:
    import mimetypes  # noqa: PLC0415 - only a block made from a file needs it: no start-up cost

    guessed, _ = mimetypes.guess_type(path.name)
    return guessed or fallback


class ContentBlock:
    """Base class of the blocks that can appear in ``content``."""

    __slots__ = ("annotations", "meta")

    def __init__(self, annotations: Annotations | None, meta: dict[str, Any] | None) -> None:
        self.annotations = annotations
        self.meta = meta

    def _wire(self) -> dict[str, Any]:  # pragma: no cover - abstract
        raise NotImplementedError

    def to_wire(self) -> dict[str, Any]:
        wire = self._wire()
        if self.annotations:
            wire["annotations"] = self.annotations
        if self.meta:
            wire["_meta"] = self.meta
        return wire

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ContentBlock) and type(other) is type(self) and self.to_wire() == other.to_wire()

    def __hash__(self) -> int:
        return hash(repr(self.to_wire()))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.to_wire()!r})"


class Text(ContentBlock):
    """A text block: ``{"type": "text", "text": ...}``."""

    __slots__ = ("text",)

    def __init__(self, text: str, *, annotations: Annotations | None = None, meta: dict[str, Any] | None = None):
        super().__init__(annotations, meta)
        self.text = text

    def _wire(self) -> dict[str, Any]:
        return {"type": "text", "text": self.text}


class _Media(ContentBlock):
    __slots__ = ("data", "mime_type")
    _kind: str = ""
    _default_mime: str = "application/octet-stream"

    def __init__(
        self,
        data: bytes | str | None = None,
        *,
        path: str | Path | None = None,
        mime_type: str | None = None,
        annotations: Annotations | None = None,
        meta: dict[str, Any] | None = None,
        **unknown: Any,
    ) -> None:
        super().__init__(annotations, meta)
        if "format" in unknown:  # FastMCP's Image(data=..., format="png")
            given = unknown["format"]
            raise TypeError(
                f"{type(self).__name__}(format={given!r}): toolkit takes the MIME type, "
                f"mime_type='{self._kind}/{str(given).lower().lstrip('.')}'"
            )
        if unknown:
            raise TypeError(f"{type(self).__name__}() got an unexpected keyword argument {next(iter(unknown))!r}")
        if (data is None) == (path is None):
            raise TypeError(f"{type(self).__name__}() takes exactly one of data= (bytes or base64 text) or path=")
        if path is not None:
            file = Path(path)
            data = file.read_bytes()
            mime_type = mime_type or _guess_mime(file, self._default_mime)
        if mime_type is None:
            raise TypeError(f"{type(self).__name__}(data=...) needs mime_type=, for example 'image/png'")
        assert data is not None
        self.data = _b64(data)
        self.mime_type = mime_type

    def _wire(self) -> dict[str, Any]:
        return {"type": self._kind, "data": self.data, "mimeType": self.mime_type}


class Image(_Media):
    """An image: raw ``bytes`` (encoded for you), base64 text, or ``path=`` to a file."""

    __slots__ = ()
    _kind = "image"
    _default_mime = "image/png"


class Audio(_Media):
    """Audio: raw ``bytes`` (encoded for you), base64 text, or ``path=`` to a file."""

    __slots__ = ()
    _kind = "audio"
    _default_mime = "audio/wav"


class ResourceLink(ContentBlock):
    """A link to a resource the client can read: ``{"type": "resource_link", "uri", "name"}``."""

    __slots__ = ("description", "mime_type", "name", "size", "title", "uri")

    def __init__(
        self,
        uri: str,
        name: str,
        *,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        size: int | None = None,
        annotations: Annotations | None = None,
        meta: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(annotations, meta)
        self.uri, self.name, self.title = uri, name, title
        self.description, self.mime_type, self.size = description, mime_type, size

    def _wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {"type": "resource_link", "uri": self.uri, "name": self.name}
        for key, value in (
            ("title", self.title),
            ("description", self.description),
            ("mimeType", self.mime_type),
            ("size", self.size),
        ):
            if value is not None:
                wire[key] = value
        return wire


class EmbeddedResource(ContentBlock):
    """A resource's contents carried inline: give ``text=`` or ``blob=`` (bytes or base64)."""

    __slots__ = ("blob", "mime_type", "resource_meta", "text", "uri")

    def __init__(
        self,
        uri: str,
        *,
        text: str | None = None,
        blob: bytes | str | None = None,
        mime_type: str | None = None,
        annotations: Annotations | None = None,
        meta: dict[str, Any] | None = None,
        resource_meta: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(annotations, meta)
        if (text is None) == (blob is None):
            raise TypeError("EmbeddedResource() takes exactly one of text= or blob=")
        self.uri, self.text, self.mime_type = uri, text, mime_type
        self.blob = None if blob is None else _b64(blob)
        self.resource_meta = resource_meta

    def _wire(self) -> dict[str, Any]:
        resource: dict[str, Any] = {"uri": self.uri}
        if self.mime_type is not None:
            resource["mimeType"] = self.mime_type
        if self.text is not None:
            resource["text"] = self.text
        else:
            resource["blob"] = self.blob
        if self.resource_meta:
            resource["_meta"] = self.resource_meta
        return {"type": "resource", "resource": resource}


CONTENT_TYPES: Final = (Text, Image, Audio, ResourceLink, EmbeddedResource)

_MISSING: Final = object()


class ToolResult:
    """A tool result spelled out: the content blocks and the structured value, separately.

    Return it when the text shown to the model should differ from the JSON fallback, or to
    set ``is_error``/``meta`` yourself. ``structured_content`` is any JSON value (or a value
    the tool's return type can serialize); leave it out for an unstructured result.
    """

    __slots__ = ("content", "is_error", "meta", "structured_content")

    def __init__(
        self,
        content: str | ContentBlock | Sequence[str | ContentBlock] | None = None,
        *,
        structured_content: Any = _MISSING,
        is_error: bool = False,
        meta: dict[str, Any] | None = None,
    ) -> None:
        self.content = None if content is None else to_blocks(content)
        self.structured_content = structured_content
        self.is_error = is_error
        self.meta = meta

    @property
    def has_structured_content(self) -> bool:
        return self.structured_content is not _MISSING

    def __repr__(self) -> str:
        structured = self.structured_content if self.has_structured_content else "<none>"
        return f"ToolResult(content={self.content!r}, structured_content={structured!r}, is_error={self.is_error})"


def is_content(value: Any) -> bool:
    """Whether ``value`` is a block, a string, or a non-empty list made only of those."""
    if isinstance(value, (str, ContentBlock)):
        return True
    return (
        isinstance(value, (list, tuple))
        and bool(value)
        and all(isinstance(item, (str, ContentBlock)) for item in value)
    )


def to_blocks(value: str | ContentBlock | Sequence[str | ContentBlock]) -> list[ContentBlock]:
    if isinstance(value, str):
        return [Text(value)]
    if isinstance(value, ContentBlock):
        return [value]
    blocks: list[ContentBlock] = []
    for item in value:
        if isinstance(item, str):
            blocks.append(Text(item))
        elif isinstance(item, ContentBlock):
            blocks.append(item)
        else:
            raise TypeError(f"a content list may hold only str and content blocks, not {type(item).__name__}")
    return blocks


NO_STRUCTURED: Final = object()
"""``CallOutcome.structured`` when the result has no structured content."""


class CallOutcome:
    """A tool call's result before any protocol version shapes it.

    ``content`` is ``None`` when the tool gave no blocks of its own: the compatibility
    layer then sends one text block with the JSON of ``structured`` (``fallback_text`` when it
    is known already: a proxied result's, as its server wrote it; whoever replaces
    ``structured`` sets it back to ``None``).

    ``wire``: ``(version, text, plain)`` when the outcome is a result a server of ``version``
    sent, as it sent it: the JSON text of its members without the era's envelope, ``{``
    included, the closing ``}`` not (a proxied call's), and whether its content is text blocks
    only. Sent on as it came (``_compat.members_for``: as a caller of another version receives
    it) when nothing but the encoder reads the outcome; whoever changes the outcome sets it to
    ``None``.
    """

    # A plain class: a dataclass compiles its generated methods when this module is imported.
    __slots__ = ("content", "fallback_text", "is_error", "meta", "structured", "wire")

    def __init__(
        self,
        content: list[ContentBlock] | None,
        structured: Any = NO_STRUCTURED,
        is_error: bool = False,
        meta: dict[str, Any] | None = None,
    ) -> None:
        self.content = content
        self.structured = structured
        self.is_error = is_error
        self.meta = meta
        self.fallback_text: str | None = None
        self.wire: tuple[str, bytes, bool] | None = None

    @classmethod
    def error(cls, message: str) -> CallOutcome:
        return cls([Text(message)], is_error=True)
