"""How each protocol version sees a tool: its ``tools/list`` entry and its ``CallToolResult``.

A tool holds a natural output schema and produces natural values (SEP-2106); ``tool_shape``
and ``call_result`` derive, deterministically, what a client of a given version receives
(the matrix is in this wing's ``__init__``). ``natural_outcome`` goes the other way: from the
result a server of some version sent back to the natural outcome, to be shaped for another era;
``as_sent`` tells when a 2026-07-28 result may instead be sent on to a 2026-07-28 caller as its
server wrote it (the envelope replaced by this server's).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

import pydantic_core

from .._content import NO_STRUCTURED, CallOutcome, ContentBlock
from .._json_pieces import STREAM_ABOVE, JsonText
from .._types import SERVER_INFO_KEY
from .._versions import KNOWN_VERSIONS, LATEST_VERSION, STRUCTURED_OUTPUT_SINCE, at_least, is_modern
from .blocks import content_blocks, wire_blocks
from .envelope import has_field
from .schemas import (
    RESULT_KEY,
    declares_wrapper,
    is_wrapper_schema,
    legacy_output_schema,
    legacy_properties,
    unwrap_schema,
)
from .tasks import RELATED_TASK_KEY, task_form

if TYPE_CHECKING:
    from .._components import ToolBase


def _structured_era(version: str) -> bool:
    return at_least(version, STRUCTURED_OUTPUT_SINCE)


class ToolShape:
    """How one tool looks to one class of versions: its ``tools/list`` entry and value wrapping."""

    # A plain class: a dataclass compiles its generated methods when this module is imported.
    __slots__ = ("advertised", "wrapped")

    def __init__(self, advertised: dict[str, Any], wrapped: bool) -> None:
        self.advertised: Final = advertised
        self.wrapped: Final = wrapped
        """Whether structured values travel as ``{"result": value}``."""


class ToolShapes:
    """``tool_shape`` computed once per tool and version (a tool never changes once registered)."""

    __slots__ = ("_shapes", "entry_hooks")

    def __init__(self) -> None:
        self._shapes: dict[ToolBase, dict[str, ToolShape]] = {}
        self.entry_hooks: list[Callable[[dict[str, Any], ToolBase, str], dict[str, Any]]] = []
        """Extensions' edits of each ``tools/list`` entry (``Extension.tools_list_entry``), in order."""

    def get(self, tool: ToolBase, version: str) -> ToolShape:
        per_version = self._shapes.get(tool)
        if per_version is None:
            per_version = self._shapes[tool] = {}
        shape = per_version.get(version)
        if shape is None:
            shape = tool_shape(tool, version)
            for hook in self.entry_hooks:
                hook(shape.advertised, tool, version)
            per_version[version] = shape
        return shape

    def clear(self) -> None:
        """Forget every shape (a tool was removed: do not keep it alive)."""
        self._shapes.clear()


def tool_shape(tool: ToolBase, version: str) -> ToolShape:
    entry: dict[str, Any] = {"name": tool.name}
    if tool.title is not None and has_field("Tool", "title", version):
        entry["title"] = tool.title
    if tool.description:
        entry["description"] = tool.description
    modern = is_modern(version)
    entry["inputSchema"] = tool.input_schema if modern else legacy_properties(tool.input_schema)
    structured = _structured_era(version)
    wrapped = False
    if tool.output_schema is not None and structured:
        if modern:
            entry["outputSchema"] = tool.output_schema
        else:
            entry["outputSchema"], wrapped = legacy_output_schema(tool.output_schema)
    for field, value in (("annotations", tool.annotations), ("icons", tool.icons), ("_meta", tool.meta)):
        if value and has_field("Tool", field, version):
            entry[field] = value
    return ToolShape(entry, wrapped)


# --- results -------------------------------------------------------------------------------


def json_text(value: Any) -> str:
    """The text fallback: compact JSON of the natural value (``null`` for ``None``)."""
    return pydantic_core.to_json(value, inf_nan_mode="null").decode()


def call_result(outcome: CallOutcome, shape: ToolShape | None, version: str, *, unseen: bool = False) -> dict[str, Any]:
    """The ``CallToolResult`` a client of ``version`` receives for ``outcome``.

    ``unseen``: nothing but ``encode_result`` will read this result (no middleware, no extension
    around the call). The text fallback of a big value is then a ``JsonText``, written from the
    value as the response is encoded: the whole text never exists beside the value.
    """
    has_structured = outcome.structured is not NO_STRUCTURED
    if outcome.content is not None:
        content = content_blocks(outcome.content, version)
    elif has_structured:
        structured = outcome.structured
        if outcome.fallback_text is not None:  # known already: not encoded again
            content = [{"type": "text", "text": outcome.fallback_text}]
        elif unseen and _might_be_big(structured):
            content = [{"type": "text", "text": JsonText(structured)}]
        else:
            content = [_fallback(structured)]
    else:
        content = []
    result: dict[str, Any] = {"content": content}
    if has_structured and not outcome.is_error and _structured_era(version):
        result["structuredContent"] = _structured_for(outcome.structured, shape is not None and shape.wrapped, version)
    if outcome.is_error:
        result["isError"] = True
    if outcome.meta:
        result["_meta"] = dict(outcome.meta)
    return result


def _structured_for(value: Any, wrapped: bool, version: str) -> Any:
    """``structuredContent`` for ``version`` (one that has the field) of the natural ``value``."""
    if is_modern(version):
        return value
    if wrapped or not isinstance(value, dict):
        # Wrapped by the advertised schema, or, with no output schema (a ToolResult's own
        # structured_content), because 2025-06-18/2025-11-25 define structuredContent as
        # an object: wrapped rather than dropped or sent invalid.
        return {RESULT_KEY: value}
    return value


def natural_outcome(result: dict[str, Any], version: str, output_schema: dict[str, Any] | None) -> CallOutcome:
    """The natural outcome behind a ``CallToolResult`` a server of ``version`` sent: the inverse of :func:`call_result`.

    ``output_schema`` is the tool's ``outputSchema`` as that server advertised it in ``version``
    (``None`` if it advertised none). Shaping the outcome again with :func:`call_result` gives
    any era's client what a server of that era would have sent, wherever ``version`` carried it:

    - ``structuredContent`` is read where ``version`` defines it (2025-06-18 on). In
      2025-06-18/2025-11-25 it is unwrapped only when ``output_schema`` is toolkit's wrapper
      (:func:`~toolkit._compat.schemas.is_wrapper_schema`) and the value is exactly
      ``{"result": v}``; a non-object value a tool without an output schema sent comes back
      still wrapped, since nothing says it was. In 2026-07-28 it is the value, ``null`` included.
    - Without ``structuredContent`` there is no structured value: a text block holding JSON is
      text (2024-11-05/2025-03-26 carry a value only as that text), never parsed into a value.
    - Content blocks are kept as they came (newer types too); a lone text block that is exactly
      the JSON fallback of the structured value is the fallback (``content`` is ``None``), which
      :func:`call_result` writes again identically (from ``fallback_text``: not encoded again).
    - ``_meta`` loses only what the era's envelope added: ``serverInfo`` (2026-07-28) and the
      related task (2025-11-25).

    Raises ``ValueError`` if ``result`` is not a ``CallToolResult`` (or is a modern task or
    input-required result, which carry no outcome yet).
    """
    if is_modern(version) and result.get("resultType", "complete") != "complete":
        raise ValueError(f"a {result['resultType']!r} result carries no tool outcome yet")
    content: list[ContentBlock] | None = wire_blocks(result.get("content"))
    structured: Any = NO_STRUCTURED
    text: str | None = None
    if "structuredContent" in result and _structured_era(version):
        structured = result["structuredContent"]
        if (
            not is_modern(version)
            and is_wrapper_schema(output_schema)
            and isinstance(structured, dict)
            and list(structured) == [RESULT_KEY]
        ):
            structured = structured[RESULT_KEY]
        text = _lone_text(result["content"])
        if text is not None and text == json_text(structured):
            content = None  # the fallback: its text is kept (fallback_text), not encoded again
    meta = result.get("_meta")
    own: dict[str, Any] | None = None
    if isinstance(meta, dict):
        envelope = {SERVER_INFO_KEY} if is_modern(version) else set()
        if task_form(version) == "experimental":
            envelope.add(RELATED_TASK_KEY)
        own = {key: value for key, value in meta.items() if key not in envelope} or None
    outcome = CallOutcome(content, structured, result.get("isError") is True, own)
    if content is None:
        outcome.fallback_text = text
    return outcome


def _lone_text(content: list[Any]) -> str | None:
    """The text of ``content`` when it is one text block and nothing else (what a fallback is)."""
    if len(content) != 1:
        return None
    block = content[0]
    if len(block) != 2 or block.get("type") != "text":
        return None
    text = block.get("text")
    return text if type(text) is str else None


def natural_output_schema(
    tool_name: str, advertised: Any, version: str, *, unwrap_declared: bool
) -> tuple[dict[str, Any] | None, bool]:
    """The natural output schema behind a tool's ``outputSchema`` as a server of ``version`` advertised
    it, and whether :func:`natural_outcome`'s structured value is still wrapped (``{"result": x}``).

    Before 2025-06-18 there is no structured output: whatever a server advertises (the ``mcp`` SDK
    sends one in every version), :func:`natural_outcome` carries no structured value, so there is
    no output schema either. Toolkit's own legacy wrapper is undone (``natural_outcome`` undoes its
    value); another framework's declared wrapper (fastmcp's, the ``mcp`` SDK's) only with
    ``unwrap_declared``, and then the value is still wrapped when ``natural_outcome`` returns it.
    """
    if not isinstance(advertised, dict) or not _structured_era(version):
        return None, False
    modern = is_modern(version)
    if not modern and is_wrapper_schema(advertised):
        return unwrap_schema(advertised), False
    if unwrap_declared and declares_wrapper(tool_name, advertised, modern=modern):
        return unwrap_schema(advertised), True
    return advertised, False


_MANY: Final = 1024  # members
_FEW: Final = 16


def _might_be_big(value: Any) -> bool:
    """Whether ``value``'s JSON may be long enough to be worth a ``JsonText``: a long string, an
    array or object of many members, or an object of a few members one of which is that (a model
    holding the list). Cheap, and wrong only in cost: a short text made late, or a long one early."""
    kind = type(value)
    if kind is str:
        return len(value) > STREAM_ABOVE
    if kind is list or kind is tuple:
        return len(value) >= _MANY
    if kind is not dict:
        return False
    if len(value) >= _MANY:
        return True
    if len(value) > _FEW:
        return False
    for member in value.values():
        kind = type(member)
        if (kind is list or kind is tuple or kind is dict) and len(member) >= _MANY:
            return True
    return False


def _fallback(value: Any) -> dict[str, Any]:
    return {"type": "text", "text": json_text(value)}


def result_shape(version: str) -> str:
    """How ``version`` sees a tool's natural value: ``natural``, ``wrapped`` (if not an object) or ``text``."""
    if is_modern(version):
        return "natural"
    return "wrapped" if _structured_era(version) else "text"


def era_shapes() -> list[dict[str, str]]:
    """Every known version, newest first, with how it sees a natural value (the tools page's switcher)."""
    return [{"version": version, "shape": result_shape(version)} for version in reversed(KNOWN_VERSIONS)]


def era_results(result: dict[str, Any], output_schema: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    """:func:`reshape_result` for every known version, newest first."""
    return {version: reshape_result(result, output_schema, version) for version in reversed(KNOWN_VERSIONS)}


_WRAPPED: Final = ToolShape({}, wrapped=True)
"""All :func:`reshape_result` needs of a shape: that a legacy client's value is wrapped."""


def reshape_result(result: dict[str, Any], output_schema: dict[str, Any] | None, version: str) -> dict[str, Any]:
    """The ``CallToolResult`` a client of ``version`` receives for the call a 2026-07-28 client saw as ``result``.

    ``output_schema`` is the tool's natural output schema (from a 2026-07-28 ``tools/list``), or
    ``None``. :func:`natural_outcome` then :func:`call_result`: the tools page shows every era
    one call's outcome without calling the tool once per era. Raises ``ValueError`` if
    ``result`` is not a ``CallToolResult``.
    """
    outcome = natural_outcome(result, LATEST_VERSION, output_schema)
    if is_modern(version):
        return dict(result)  # what the modern client saw, its envelope (resultType, server info) included
    wrapped = output_schema is not None and legacy_output_schema(output_schema)[1]
    return call_result(outcome, _WRAPPED if wrapped else None, version)


# --- a result sent on as it came ------------------------------------------------------------------

_RESPONSE_START: Final = b'{"jsonrpc":"2.0","id":'
_RESULT_START: Final = b',"result":{'
_ENVELOPE_START: Final = b',"resultType":"complete","_meta":{' + pydantic_core.to_json(SERVER_INFO_KEY) + b":"
_MEMBERS: Final = (
    ("content", "resultType", "_meta"),
    ("content", "structuredContent", "resultType", "_meta"),
    ("content", "isError", "resultType", "_meta"),
)
"""What a 2026-07-28 ``CallToolResult`` holds, in the order toolkit writes it (the envelope last). An
error's ``structuredContent`` is not sent on: ``call_result`` gives an error none, in every version."""
_STRUCTURED_MEMBER: Final = b',"structuredContent":'
_WRAPPER_START: Final = _STRUCTURED_MEMBER + b"{" + pydantic_core.to_json(RESULT_KEY) + b":"


def as_sent(body: bytes | None, result: dict[str, Any], version: str) -> tuple[bytes, bool] | None:
    """``result``'s members as the upstream wrote them in ``body`` (its response), without the era's
    envelope: ``{`` and the members, no closing brace; ``None`` unless they can be told apart exactly.
    With them, whether the content is text blocks alone (``plain_text_only``).

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
    envelope = _envelope(meta[SERVER_INFO_KEY])
    end = len(body) - 1 - len(envelope)
    if body[end : len(body) - 1] != envelope:
        return None
    members = body[start + len(_RESULT_START) - 1 : end]
    if not members.startswith(b'{"content":['):
        return None
    content = result["content"]
    if plain_text_only(content):  # what every version carries as it is
        return members, True
    try:
        wire_blocks(content)  # what natural_outcome checks: a block that shapes for no version fails there
    except ValueError:
        return None
    return members, False


_LAST_ENVELOPE: list[tuple[Any, bytes]] = [(None, b"")]
"""The last server info's envelope (an upstream sends the same one every time)."""


def _envelope(server_info: Any) -> bytes:
    """The end of a 2026-07-28 result holding ``server_info`` alone in its ``_meta``, as toolkit writes it."""
    last = _LAST_ENVELOPE[0]
    if last[0] == server_info and type(server_info) is dict:
        return last[1]
    envelope = _ENVELOPE_START + pydantic_core.to_json(server_info) + b"}}"
    _LAST_ENVELOPE[0] = (server_info, envelope)
    return envelope


def plain_text_only(content: Any) -> bool:
    """Whether ``content`` (a result's, as sent) is text blocks and nothing else: what every version
    carries as it is."""
    if type(content) is not list:
        return False
    for block in content:
        if (
            type(block) is not dict
            or len(block) != 2
            or block.get("type") != "text"
            or type(block.get("text")) is not str
        ):
            return False
    return True


def members_for(members: bytes, plain: bool, version: str, shape: ToolShape | None) -> bytes | None:
    """:func:`as_sent`'s ``members`` of a 2026-07-28 result as a caller of ``version`` receives them:
    what making the result natural and :func:`call_result` give, from the bytes as they came.

    ``plain``: its content is text blocks only (:func:`plain_text_only`), which every version
    carries as they are, and which cannot hold ``,"structuredContent":`` outside a JSON string
    (where a quote is escaped): the first one is the member. ``shape``: the tool's for
    ``version``, as :func:`call_result` takes it (its output wrapped or not). A legacy
    ``structuredContent`` is an object: any other value is wrapped in ``{"result": ...}``; before
    2025-06-18 there is none. ``None`` where the bytes do not tell (a block of another type, a
    value written with leading space).
    """
    if is_modern(version):
        return members
    if not plain:
        return None
    at = members.find(_STRUCTURED_MEMBER)
    if at < 0:
        return members  # content (and isError) alone: the same in every version
    if not _structured_era(version):
        return members[:at]
    value = members[at + len(_STRUCTURED_MEMBER) :]
    first = value[:1]
    if first in (b" ", b"\t", b"\n", b"\r"):
        return None
    if (shape is not None and shape.wrapped) or first != b"{":
        return members[:at] + _WRAPPER_START + value + b"}"
    return members
