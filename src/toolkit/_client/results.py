"""What a ``tools/call`` gives back, as a user reads it: the natural value, the blocks, the error flag.

A server speaks its version's shape (SEP-2106): 2026-07-28 sends any JSON value as
``structuredContent``; 2025-06-18 and 2025-11-25 allow only objects there, so a server with a
non-object result wraps it as ``{"result": value}`` and says so in the tool's ``outputSchema``;
2024-11-05 and 2025-03-26 have no structured content at all (the value is only text). The
client undoes the wrapping where the server declared it (``_compat.schemas.declares_wrapper``), and nowhere else:

- toolkit's own wrapper (``_compat.schemas.is_wrapper_schema``: one required ``result`` holding
  a non-object);
- fastmcp's, marked ``"x-fastmcp-wrap-result": true`` in the output schema;
- the official Python SDK's (``mcp``'s FastMCP): an object titled ``<tool name>Output`` whose one
  required property is ``result``.

fastmcp and ``mcp`` 2.x wrap in 2026-07-28 too; their two declarations count there, toolkit's
bare shape does not (a 2026-07-28 toolkit server sends every value as it is).

The value is checked against the tool's ``outputSchema`` as the server advertised it (spec
2025-06-18 on, server/tools "Output Schema": clients SHOULD validate): a mismatch raises
``OutputMismatch`` naming the tool, never a silent pass.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._compat.schemas import RESULT_KEY, declares_wrapper
from .._errors import ToolError, ToolkitError


class OutputMismatch(ToolkitError):
    """A tool's result breaks the ``outputSchema`` its server advertised (the message names the tool)."""


class ToolCallFailed(ToolError):
    """The tool reported a failure (an ``isError`` result); ``result`` is the whole ``CallToolResult``.

    A ``ToolError``: raised on inside a tool of a server (a proxy, say), the failure reaches that
    server's client as the same ``isError`` result.
    """

    def __init__(self, message: str, result: CallToolResult) -> None:
        super().__init__(message)
        self.result = result


class CallToolResult:
    """One tool call's result.

    - ``data``: the natural value (``structuredContent``, unwrapped where the server wrapped
      it), or what ``call_tool(..., into=T)`` parsed it into; ``None`` without structured content.
    - ``structured_content``: ``structuredContent`` exactly as it came (absent: ``None``).
    - ``content``: the content blocks as they came (wire dicts: ``{"type": "text", "text": ...}``).
    - ``is_error``: the tool reported a failure (``call_tool`` raises ``ToolError`` for it
      unless ``raise_on_error=False``).
    - ``meta``: the result's ``_meta``; ``raw``: the whole ``CallToolResult`` as it came.
    """

    __slots__ = ("content", "data", "is_error", "meta", "name", "raw", "structured_content")

    def __init__(self, name: str, raw: dict[str, Any], data: Any) -> None:
        self.name = name
        self.raw = raw
        self.data = data
        self.structured_content: Any = raw.get("structuredContent")
        content = raw.get("content")
        self.content: list[dict[str, Any]] = content if isinstance(content, list) else []
        self.is_error = raw.get("isError") is True
        self.meta: dict[str, Any] | None = raw.get("_meta")

    @property
    def text(self) -> str:
        """The text blocks, joined with newlines (what a 2024-11-05 server's value is)."""
        return "\n".join(block["text"] for block in self.content if block.get("type") == "text" and "text" in block)

    def __repr__(self) -> str:
        flag = ", is_error=True" if self.is_error else ""
        return f"CallToolResult({self.name!r}, data={self.data!r}{flag})"


class ToolView:
    """What the client keeps of one listed tool to read its results: the output check and the unwrapping.

    Built once per tool per listing; ``read`` is the per-call path (a dict lookup, a Rust
    validator, a key test).
    """

    __slots__ = ("_validator", "name", "schema", "wrapped")

    def __init__(self, tool: dict[str, Any], modern: bool) -> None:
        self.name: str = tool["name"]
        schema = tool.get("outputSchema")
        self.schema: dict[str, Any] | None = schema if isinstance(schema, dict) else None
        self.wrapped = declares_wrapper(self.name, self.schema, modern=modern)
        self._validator: Any = None
        if self.schema is not None:
            import jsonschema_rs  # noqa: PLC0415  (a Rust validator: cheap per call, built once per tool)

            try:
                self._validator = jsonschema_rs.Draft202012Validator(self.schema)
            except (ValueError, jsonschema_rs.ValidationError):  # a schema the validator cannot compile
                self._validator = None

    def check(self, raw: dict[str, Any]) -> None:
        """Raise ``OutputMismatch`` when a successful result breaks the advertised ``outputSchema``."""
        if self.schema is None or raw.get("isError") is True:
            return
        if "structuredContent" not in raw:
            raise OutputMismatch(
                f"tool {self.name!r} declares an outputSchema but its result has no structuredContent "
                "(server/tools, Output Schema: a server MUST provide structured results that conform)"
            )
        validator = self._validator
        if validator is None or validator.is_valid(raw["structuredContent"]):
            return  # the per-call path: one Rust call for a result that fits
        errors = list(validator.iter_errors(raw["structuredContent"]))
        if errors:
            first = errors[0]
            where = "/".join(str(part) for part in first.instance_path) or "(root)"
            raise OutputMismatch(
                f"tool {self.name!r} returned a result that does not match its outputSchema: "
                f"at {where}: {first.message}"
            )

    def natural(self, raw: dict[str, Any]) -> Any:
        """The natural value of ``raw``: its ``structuredContent``, unwrapped where the schema says so."""
        value = raw.get("structuredContent")
        if self.wrapped and isinstance(value, dict) and list(value) == [RESULT_KEY]:
            return value[RESULT_KEY]
        return value


def unlisted_natural(raw: dict[str, Any]) -> Any:
    """The value of a tool the client has no listing for: ``structuredContent`` as it came."""
    return raw.get("structuredContent")


Parser = Callable[[Any], Any]

_parsers: dict[Any, Parser] = {}


def parser_for(into: Any) -> Parser:
    """A function that parses a natural value into ``into`` (any type pydantic reads), built once per type."""
    parser = _parsers.get(into)
    if parser is None:
        import pydantic  # noqa: PLC0415

        parser = pydantic.TypeAdapter(into).validate_python
        _parsers[into] = parser
    return parser


def parse_into(name: str, value: Any, into: Any) -> Any:
    """``value`` parsed into ``into``; a ``ToolkitError`` naming the tool and the type when it does not fit."""
    import pydantic  # noqa: PLC0415

    try:
        return parser_for(into)(value)
    except pydantic.ValidationError as exc:
        label = getattr(into, "__name__", None) or repr(into)
        raise ToolkitError(f"the result of tool {name!r} does not parse into {label}: {exc}") from exc


def text_value(name: str, raw: dict[str, Any], into: Any) -> Any:
    """The value a result without ``structuredContent`` carries as its one text block of JSON.

    Only asked for by ``into=``: the caller says a value is there. Versions before 2025-06-18
    have no structured content, and a server sends the value as that text.
    """
    import pydantic_core  # noqa: PLC0415

    content = raw.get("content")
    texts = [block for block in content if block.get("type") == "text"] if isinstance(content, list) else []
    if len(texts) == 1 and isinstance(texts[0].get("text"), str):
        try:
            return pydantic_core.from_json(texts[0]["text"])
        except ValueError:
            pass
    raise ToolkitError(
        f"tool {name!r} returned no structured value (nor one block of JSON text) to parse into {into!r}"
    )


def tool_failed(result: CallToolResult) -> ToolCallFailed:
    """The exception for a result the tool marked ``isError``: its text, or a line naming the tool."""
    return ToolCallFailed(result.text or f"tool {result.name!r} reported an error with no text", result)
