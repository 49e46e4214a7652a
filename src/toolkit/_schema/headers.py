"""``x-mcp-header``: the input-schema annotation a modern HTTP client mirrors into ``Mcp-Param-*`` headers.

2026-07-28 streamable-http, "Custom Headers from Tool Parameters": the annotation sits on a
primitive property (string, integer, boolean) reachable from the root through ``properties``
alone, its value is an HTTP field-name token, unique regardless of case. A server refuses to
register a tool that breaks a rule; a client over HTTP drops such a tool from ``tools/list``.
Both read the annotations with ``header_params``.
"""

from __future__ import annotations

import marshal
import re
from collections.abc import Mapping
from typing import Any, Final

from .._errors import SchemaError
from .._headers import HEADER_KEYWORD
from .keywords import DATA_KEYWORDS, NAME_MAPS

_TOKEN: Final = r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"  # compiled on first use: few tools have headers
_HEADER_TYPES: Final = frozenset({"string", "integer", "boolean"})
_HEADER_KEY: Final = HEADER_KEYWORD


def header_params(schema: Mapping[str, Any], what: str) -> dict[str, tuple[str, ...]]:
    """The ``x-mcp-header`` annotations of an input schema, checked (spec 2026-07-28, tools).

    An annotation must sit on a primitive property reachable from the root through
    ``properties`` alone, with a token-syntax name unique regardless of case.
    """
    if not _may_hold(schema):
        return {}
    # Besides data: the annotation's own value, a header name (checked where read, never a schema).
    not_walked = DATA_KEYWORDS | {_HEADER_KEY}
    found: dict[str, tuple[str, ...]] = {}

    def visit(node: Any, path: tuple[str, ...], reachable: bool) -> None:
        if isinstance(node, list):
            for item in node:
                visit(item, path, False)
            return
        if not isinstance(node, dict):
            return
        name = node.get(_HEADER_KEY)
        if name is not None:
            where = ".".join(path) or "(root)"
            if not reachable or not path:
                raise SchemaError(f"{what}: x-mcp-header on {where} is not reachable through 'properties' alone")
            if not isinstance(name, str) or not re.fullmatch(_TOKEN, name):
                raise SchemaError(f"{what}: x-mcp-header {name!r} on {where} is not a valid HTTP header name token")
            if node.get("type") not in _HEADER_TYPES:
                raise SchemaError(f"{what}: x-mcp-header on {where} needs a string, integer or boolean property")
            if name.lower() in (known.lower() for known in found):
                raise SchemaError(f"{what}: x-mcp-header {name!r} is used twice")
            found[name] = path
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                for child_name, child in value.items():
                    visit(child, (*path, child_name), reachable)
            elif key in NAME_MAPS and isinstance(value, dict):  # names, not keywords
                for child in value.values():
                    visit(child, path, False)
            elif key not in not_walked:
                visit(value, path, False)

    visit(schema, (), True)
    return found


_HEADER_BYTES: Final = _HEADER_KEY.encode()


def _may_hold(schema: Any) -> bool:
    """Whether the annotation's name is anywhere in ``schema`` (as a key, or as any string at all).

    Few tools have header parameters, and most input schemas are plain data: ``marshal`` writes
    every string of one out (the first time it meets that string object, at least), so a schema
    whose bytes lack the name holds no annotation, found without walking it. Anything ``marshal``
    refuses (a custom mapping, a ``str`` subclass) is walked.
    """
    try:
        return _HEADER_BYTES in marshal.dumps(schema)
    except ValueError:
        return True
