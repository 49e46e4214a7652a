"""Descriptions from docstrings: the summary, and per-parameter text (Google or NumPy style)."""

from __future__ import annotations

import inspect
import re
from typing import Final

_GOOGLE_HEADERS: Final = re.compile(r"^(Args|Arguments|Parameters|Params)\s*:\s*$")
_NUMPY_HEADER: Final = re.compile(r"^(Parameters|Params|Arguments)\s*$")
_NUMPY_RULE: Final = re.compile(r"^-{3,}\s*$")
_SECTION: Final = re.compile(
    r"^(Returns?|Yields?|Raises?|Examples?|Notes?|See Also|Warnings?|References|Attributes|Other Parameters)\s*:?\s*$"
)
_GOOGLE_ITEM: Final = re.compile(r"^(\*{0,2}\w+)\s*(\([^)]*\))?\s*:\s*(.*)$")
_NUMPY_ITEM: Final = re.compile(r"^(\*{0,2}\w+)\s*(:.*)?$")


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
    return bool(_GOOGLE_HEADERS.match(stripped) or _SECTION.match(stripped))


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _google_params(lines: list[str]) -> dict[str, str]:
    params: dict[str, str] = {}
    index = 0
    while index < len(lines):
        if _GOOGLE_HEADERS.match(lines[index].strip()):
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
                    match = _GOOGLE_ITEM.match(line.strip())
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
        if _NUMPY_HEADER.match(lines[index].strip()) and _NUMPY_RULE.match(lines[index + 1].strip()):
            base = _indent(lines[index])
            current: str | None = None
            cursor = index + 2
            while cursor < len(lines):
                line = lines[cursor]
                stripped = line.strip()
                if cursor + 1 < len(lines) and _NUMPY_RULE.match(lines[cursor + 1].strip()) and stripped:
                    break  # the next section's header
                if stripped and _indent(line) == base:
                    match = _NUMPY_ITEM.match(stripped)
                    current = match.group(1).lstrip("*") if match else None
                    if current is not None:
                        params[current] = ""
                elif stripped and current is not None:
                    params[current] = f"{params[current]} {stripped}".strip()
                cursor += 1
            break
    return params
