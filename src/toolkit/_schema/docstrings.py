"""Descriptions from docstrings: the summary, and per-parameter text (Google or NumPy style)."""

from __future__ import annotations

import inspect
import re
from typing import Final

# Section headers are whole lines, told apart with set lookups rather than regular expressions
# (compiled at import, those would cost every server's start-up): Google's "Args:", NumPy's
# "Parameters" over a "----------" rule, and the other sections, which end the summary.
_GOOGLE_HEADERS: Final = frozenset({"Args", "Arguments", "Parameters", "Params"})
_NUMPY_HEADERS: Final = frozenset({"Parameters", "Params", "Arguments"})
_SECTIONS: Final = frozenset(
    {"Return", "Returns", "Yield", "Yields", "Raise", "Raises", "Example", "Examples", "Note", "Notes", "See Also"}
    | {"Warning", "Warnings", "References", "Attributes", "Other Parameters"}
)
# Item patterns, compiled on first use (``re`` keeps them): only a parameter section needs them.
_GOOGLE_ITEM: Final = r"^(\*{0,2}\w+)\s*(\([^)]*\))?\s*:\s*(.*)$"
_NUMPY_ITEM: Final = r"^(\*{0,2}\w+)\s*(:.*)?$"


def _google_header(stripped: str) -> bool:
    """``Args:`` (space before the colon allowed); ``stripped`` is a line without its outer whitespace."""
    return stripped.endswith(":") and stripped[:-1].rstrip() in _GOOGLE_HEADERS


def _section(stripped: str) -> bool:
    """``Returns``, ``Raises:``...: a section that is not about the parameters."""
    return stripped.removesuffix(":").rstrip() in _SECTIONS


def _numpy_rule(stripped: str) -> bool:
    """The ``----------`` under a NumPy section header (three dashes at least)."""
    return len(stripped) >= 3 and not stripped.strip("-")


class Docstring:
    """A parsed docstring: ``summary`` (its first paragraph) and ``params`` by name."""

    __slots__ = ("params", "summary")

    def __init__(self, summary: str | None, params: dict[str, str]) -> None:
        self.summary = summary
        self.params = params


def parse_docstring(doc: str | None) -> Docstring:
    if not doc:
        return Docstring(None, {})
    lines = inspect.cleandoc(doc).splitlines()
    summary_lines: list[str] = []
    for line in lines:
        stripped = line.strip()
        if not stripped or _is_section_start(lines, line):
            break
        summary_lines.append(stripped)
    summary = " ".join(summary_lines) or None
    return Docstring(summary, _google_params(lines) or _numpy_params(lines))


def _is_section_start(lines: list[str], line: str) -> bool:
    stripped = line.strip()
    return _google_header(stripped) or _section(stripped)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _google_params(lines: list[str]) -> dict[str, str]:
    params: dict[str, str] = {}
    index = 0
    while index < len(lines):
        if _google_header(lines[index].strip()):
            header_indent = _indent(lines[index])
            index += 1
            item_indent: int | None = None
            current: str | None = None
            while index < len(lines):
                line = lines[index]
                if line.strip() and _indent(line) <= header_indent:
                    break
                if line.strip():
                    if item_indent is None:
                        item_indent = _indent(line)
                    match = re.match(_GOOGLE_ITEM, line.strip())
                    if _indent(line) == item_indent and match:
                        current = match.group(1).lstrip("*")
                        params[current] = match.group(3).strip()
                    elif current is not None:
                        params[current] = f"{params[current]} {line.strip()}".strip()
                index += 1
            continue
        index += 1
    return params


def _numpy_params(lines: list[str]) -> dict[str, str]:
    params: dict[str, str] = {}
    for index in range(len(lines) - 1):
        if lines[index].strip() in _NUMPY_HEADERS and _numpy_rule(lines[index + 1].strip()):
            base = _indent(lines[index])
            current: str | None = None
            cursor = index + 2
            while cursor < len(lines):
                line = lines[cursor]
                stripped = line.strip()
                if cursor + 1 < len(lines) and _numpy_rule(lines[cursor + 1].strip()) and stripped:
                    break  # the next section's header
                if stripped and _indent(line) == base:
                    match = re.match(_NUMPY_ITEM, stripped)
                    current = match.group(1).lstrip("*") if match else None
                    if current is not None:
                        params[current] = ""
                elif stripped and current is not None:
                    params[current] = f"{params[current]} {stripped}".strip()
                cursor += 1
            break
    return params
