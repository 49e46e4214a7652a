"""What a proxied tool's result becomes on its way to the caller, beyond ``_compat.natural_outcome``.

- Sent on as it came (``AsSent``): a 2026-07-28 upstream's result, its members
  (``_compat.as_sent``) spliced into the response as the upstream wrote them (for a legacy
  caller, as ``_compat.members_for`` shapes them), when nothing but the encoder reads the
  outcome; made natural only once something does.
- Unwrapped (``is_json_of``, ``without_wrap_mark``): an upstream's declared ``{"result": x}``
  wrapper (fastmcp, the ``mcp`` SDK) undone, with its text and its mark.
"""

from __future__ import annotations

from typing import Any, Final

import pydantic_core

from .._compat.tools import natural_outcome
from .._content import NO_STRUCTURED, CallOutcome, ContentBlock

_CONTENT: Final[Any] = CallOutcome.__dict__["content"]  # the slots, under AsSent's properties
_FALLBACK_TEXT: Final[Any] = CallOutcome.__dict__["fallback_text"]


class AsSent(CallOutcome):
    """A proxied 2026-07-28 result, sent on as it came (``wire``) when nothing else
    reads it; its content, made natural (``natural_outcome``), only once something does."""

    __slots__ = ("_result", "_schema", "_version")

    def __init__(
        self, result: dict[str, Any], version: str, schema: dict[str, Any] | None, members: bytes, plain: bool
    ) -> None:
        self._result: dict[str, Any] | None = result
        self._schema = schema
        self._version = version
        self.structured = result.get("structuredContent", NO_STRUCTURED)
        self.is_error = result.get("isError") is True
        self.meta = None  # as_sent: its _meta holds the envelope's server info alone
        self.wire = (version, members, plain)  # plain: text blocks alone (as_sent)

    def _natural(self) -> None:
        result, self._result = self._result, None
        if result is not None:
            outcome = natural_outcome(result, self._version, self._schema)
            _CONTENT.__set__(self, outcome.content)
            _FALLBACK_TEXT.__set__(self, outcome.fallback_text)

    @property
    def content(self) -> list[ContentBlock] | None:
        self._natural()
        value: list[ContentBlock] | None = _CONTENT.__get__(self)
        return value

    @content.setter
    def content(self, value: list[ContentBlock] | None) -> None:
        self._natural()
        _CONTENT.__set__(self, value)
        self.wire = None

    @property
    def fallback_text(self) -> str | None:
        self._natural()
        value: str | None = _FALLBACK_TEXT.__get__(self)
        return value

    @fallback_text.setter
    def fallback_text(self, value: str | None) -> None:
        self._natural()
        _FALLBACK_TEXT.__set__(self, value)


def is_json_of(content: list[Any] | None, *values: Any) -> bool:
    """Whether ``content`` is one text block holding the JSON of one of ``values`` (however it was spaced)."""
    if content is None or len(content) != 1:
        return False
    block = content[0].to_wire()
    if block.get("type") != "text" or not isinstance(block.get("text"), str):
        return False
    try:
        parsed = pydantic_core.from_json(block["text"])
    except ValueError:
        return False
    return any(parsed == value for value in values)


def without_wrap_mark(meta: dict[str, Any] | None) -> dict[str, Any] | None:
    """``meta`` without fastmcp's ``{"fastmcp": {"wrap_result": true}}``: the value is no longer wrapped."""
    mark = meta.get("fastmcp") if meta is not None else None
    if meta is None or not isinstance(mark, dict) or "wrap_result" not in mark:
        return meta
    kept = {key: value for key, value in meta.items() if key != "fastmcp"}
    rest = {key: value for key, value in mark.items() if key != "wrap_result"}
    if rest:
        kept["fastmcp"] = rest
    return kept or None
