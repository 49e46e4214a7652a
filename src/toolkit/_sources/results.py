"""What a proxied tool's result becomes on its way to the caller, beyond ``_compat.natural_outcome``.

- Sent on as it came (``as_sent``, ``AsSent``): a 2026-07-28 upstream's result for a caller of the
  same version, its members spliced into the response as the upstream wrote them, when nothing
  but the encoder reads the outcome; made natural only once something does.
- Unwrapped (``is_json_of``, ``without_wrap_mark``): an upstream's declared ``{"result": x}``
  wrapper (fastmcp, the ``mcp`` SDK) undone, with its text and its mark.
"""

from __future__ import annotations

from typing import Any, Final

import pydantic_core

from .._compat.blocks import wire_blocks
from .._compat.tools import natural_outcome
from .._content import NO_STRUCTURED, CallOutcome, ContentBlock
from .._json_pieces import STREAM_ABOVE
from .._types import SERVER_INFO_KEY
from .._versions import is_modern

_CONTENT: Final[Any] = CallOutcome.__dict__["content"]  # the slots, under AsSent's properties
_FALLBACK_TEXT: Final[Any] = CallOutcome.__dict__["fallback_text"]


class AsSent(CallOutcome):
    """A proxied result of the caller's version, sent on as it came (``wire``) when nothing else
    reads it; its content, made natural (``natural_outcome``), only once something does."""

    __slots__ = ("_result", "_schema", "_version")

    def __init__(self, result: dict[str, Any], version: str, schema: dict[str, Any] | None, members: bytes) -> None:
        self._result: dict[str, Any] | None = result
        self._schema = schema
        self._version = version
        self.structured = result.get("structuredContent", NO_STRUCTURED)
        self.is_error = result.get("isError") is True
        self.meta = None  # as_sent: its _meta holds the envelope's server info alone
        self.wire = (version, members)

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


_RESPONSE_START: Final = b'{"jsonrpc":"2.0","id":'
_RESULT_START: Final = b',"result":{'
_ENVELOPE_START: Final = b',"resultType":"complete","_meta":{' + pydantic_core.to_json(SERVER_INFO_KEY) + b":"
_MEMBERS: Final = (
    ("content", "resultType", "_meta"),
    ("content", "structuredContent", "resultType", "_meta"),
    ("content", "isError", "resultType", "_meta"),
    ("content", "structuredContent", "isError", "resultType", "_meta"),
)
"""What a 2026-07-28 ``CallToolResult`` holds, in the order toolkit writes it (the envelope last)."""


def as_sent(body: bytes | None, result: dict[str, Any], version: str) -> bytes | None:
    """``result``'s members as the upstream wrote them in ``body`` (its response), without the era's
    envelope: ``{`` and the members, no closing brace; ``None`` unless they can be told apart exactly.

    Only a 2026-07-28 result written compactly in toolkit's order (``content``, ``structuredContent``,
    ``isError``, then the envelope: ``resultType`` and ``_meta`` holding the server's info alone), whose
    content blocks shape for every version; ``body`` is strict JSON (the transport keeps no other:
    no ``NaN``, which the encoder would write ``null``), and no longer than ``STREAM_ABOVE`` (a big
    result is written in pieces, as the engine writes any). Then sending the members on gives the
    caller the bytes that making the result natural and shaping it again would (a member name a
    server wrote twice stays twice, its last value the one both sides read).
    """
    if body is None or len(body) > STREAM_ABOVE or not is_modern(version) or not body.startswith(_RESPONSE_START):
        return None  # a big one is written in pieces, as the engine writes any (never whole, twice)
    if body[-2:] != b"}}":
        return None
    if tuple(result) not in _MEMBERS or result["resultType"] != "complete" or result.get("isError", True) is not True:
        return None
    meta = result["_meta"]
    if not isinstance(meta, dict) or len(meta) != 1 or SERVER_INFO_KEY not in meta:
        return None
    start = body.find(_RESULT_START, len(_RESPONSE_START))
    if start < 0 or not body[len(_RESPONSE_START) : start].isdigit():
        return None
    envelope = _ENVELOPE_START + pydantic_core.to_json(meta[SERVER_INFO_KEY]) + b"}}"
    end = len(body) - 1 - len(envelope)
    if body[end : len(body) - 1] != envelope:
        return None
    members = body[start + len(_RESULT_START) - 1 : end]
    if not members.startswith(b'{"content":['):
        return None
    content = result["content"]
    for block in content if type(content) is list else ():
        if (
            type(block) is not dict
            or len(block) != 2
            or block.get("type") != "text"
            or type(block.get("text")) is not str
        ):
            break  # not a plain text block, which every version carries as it is
    else:
        return members
    try:
        wire_blocks(content)  # what natural_outcome checks: a block that shapes for no version fails there
    except ValueError:
        return None
    return members


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
