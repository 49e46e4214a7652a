"""How each protocol version sees a tool: its ``tools/list`` entry and its ``CallToolResult``.

A tool holds a natural output schema and produces natural values (SEP-2106); ``tool_shape``
and ``call_result`` derive, deterministically, what a client of a given version receives
(the matrix is in this wing's ``__init__``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import pydantic_core

from .._content import NO_STRUCTURED, CallOutcome
from .._types import SERVER_INFO_KEY
from .._versions import KNOWN_VERSIONS, STRUCTURED_OUTPUT_SINCE, at_least, is_modern
from .blocks import block_for, content_blocks
from .envelope import has_field
from .schemas import RESULT_KEY, legacy_output_schema, legacy_properties
from .tasks import task_support

if TYPE_CHECKING:
    from .._tools import Tool


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

    __slots__ = ("_shapes",)

    def __init__(self) -> None:
        self._shapes: dict[Tool, dict[str, ToolShape]] = {}

    def get(self, tool: Tool, version: str) -> ToolShape:
        per_version = self._shapes.get(tool)
        if per_version is None:
            per_version = self._shapes[tool] = {}
        shape = per_version.get(version)
        if shape is None:
            shape = per_version[version] = tool_shape(tool, version)
        return shape

    def clear(self) -> None:
        """Forget every shape (a tool was removed: do not keep it alive)."""
        self._shapes.clear()


def tool_shape(tool: Tool, version: str) -> ToolShape:
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
    task_support(entry, tool.task, version)
    return ToolShape(entry, wrapped)


# --- results -------------------------------------------------------------------------------


def json_text(value: Any) -> str:
    """The text fallback: compact JSON of the natural value (``null`` for ``None``)."""
    return pydantic_core.to_json(value, inf_nan_mode="null").decode()


def call_result(outcome: CallOutcome, shape: ToolShape | None, version: str) -> dict[str, Any]:
    """The ``CallToolResult`` a client of ``version`` receives for ``outcome``."""
    has_structured = outcome.structured is not NO_STRUCTURED
    if outcome.content is not None:
        content = content_blocks(outcome.content, version)
    elif has_structured:
        content = [{"type": "text", "text": json_text(outcome.structured)}]
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


def reshape_result(result: dict[str, Any], output_schema: dict[str, Any] | None, version: str) -> dict[str, Any]:
    """The ``CallToolResult`` a client of ``version`` receives for the call a 2026-07-28 client saw as ``result``.

    ``output_schema`` is the tool's natural output schema (from a 2026-07-28 ``tools/list``), or
    ``None``. The same rules as :func:`call_result`: the tools page shows every era one call's
    outcome without calling the tool once per era. Raises ``ValueError`` if ``result`` is not a
    ``CallToolResult``.
    """
    content = result.get("content")
    if not isinstance(content, list) or not all(isinstance(block, dict) and "type" in block for block in content):
        raise ValueError("result.content must be a list of content blocks")
    try:
        shaped: dict[str, Any] = {"content": [block_for(dict(block), version) for block in content]}
    except (KeyError, TypeError) as exc:
        raise ValueError(f"result.content holds a malformed block ({exc})") from None
    if is_modern(version):
        return dict(result)  # what the modern client saw, its envelope (resultType, server info) included
    is_error = result.get("isError") is True
    if "structuredContent" in result and not is_error and _structured_era(version):
        wrapped = output_schema is not None and legacy_output_schema(output_schema)[1]
        shaped["structuredContent"] = _structured_for(result["structuredContent"], wrapped, version)
    if is_error:
        shaped["isError"] = True
    meta = result.get("_meta")
    if isinstance(meta, dict):
        meta = {key: value for key, value in meta.items() if key != SERVER_INFO_KEY}
        if meta:
            shaped["_meta"] = meta
    return shaped
