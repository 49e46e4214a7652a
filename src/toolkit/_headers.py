"""The modern era's routing headers: ``Mcp-Method``, ``Mcp-Name`` and ``Mcp-Param-*``, both ways.

A 2026-07-28 client mirrors parts of a request body in HTTP headers, and the server checks that
they say exactly what the body says (2026-07-28 streamable-http, "Standard Headers", "Custom
Headers from Tool Parameters", "Value Encoding"). The client builds them with ``for_request``,
the server decodes with ``decode_value``, and both use the one encoding written here.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any, Final

from ._methods import named_field

PROTOCOL_VERSION: Final = "MCP-Protocol-Version"
METHOD: Final = "Mcp-Method"
NAME: Final = "Mcp-Name"
PARAM_PREFIX: Final = "Mcp-Param-"

_SENTINEL_START: Final = "=?base64?"
_SENTINEL_END: Final = "?="

ParamPaths = Mapping[str, tuple[str, ...]]
"""A tool's ``x-mcp-header`` parameters: header name (after ``Mcp-Param-``) → argument path."""


def encode_value(value: str) -> str:
    """``value`` as a header carries it: as it is when it is plain visible ASCII, else Base64 in the sentinel.

    Plain means visible ASCII, spaces and tabs, no leading or trailing whitespace, and not itself
    looking like the sentinel (``=?base64?...?=``), which would be ambiguous.
    """
    plain = (
        value.isascii()
        and value.replace("\t", " ").isprintable()
        and value == value.strip(" \t")
        and not (value.startswith(_SENTINEL_START) and value.endswith(_SENTINEL_END))
    )
    if plain:
        return value
    return f"{_SENTINEL_START}{base64.b64encode(value.encode('utf-8')).decode('ascii')}{_SENTINEL_END}"


def decode_value(value: str) -> str | None:
    """A header value, Base64-decoded when it uses the sentinel; ``None`` if it is not a valid one."""
    if value.startswith(_SENTINEL_START) and value.endswith(_SENTINEL_END) and len(value) >= 11:
        encoded = value[len(_SENTINEL_START) : -len(_SENTINEL_END)]
        try:
            return base64.b64decode(encoded, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return None
    # Visible ASCII, spaces and tabs only (the tab is the one control character allowed).
    if not (value.isascii() and value.replace("\t", " ").isprintable()):
        return None
    return value


def argument_at(arguments: Any, path: tuple[str, ...]) -> Any:
    """The argument at ``path`` (``None`` when absent): what an ``Mcp-Param-*`` header mirrors."""
    value = arguments
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def param_text(value: Any) -> str | None:
    """A parameter's header text before encoding: strings as they are, booleans lowercase, numbers in decimal."""
    if value is None:
        return None  # absent or null: no header
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def param_matches(header: str, value: Any) -> bool:
    """Whether a decoded ``Mcp-Param-*`` header says what the argument says (``1.0`` and ``1`` agree)."""
    if isinstance(value, bool):
        return header == ("true" if value else "false")
    if isinstance(value, int | float):
        try:
            return float(header) == float(value)
        except ValueError:
            return False
    return header == str(value)


def for_request(
    method: str, params: Mapping[str, Any], version: str, param_paths: ParamPaths | None = None
) -> dict[str, str]:
    """The headers a modern client sends with a request: version, method, name, and a tool's parameters."""
    headers = {PROTOCOL_VERSION: version, METHOD: method}
    field = named_field(method)
    if field is not None and params.get(field) is not None:
        headers[NAME] = encode_value(str(params[field]))
    if param_paths:
        arguments = params.get("arguments")
        for header, path in param_paths.items():
            text = param_text(argument_at(arguments, path))
            if text is not None:
                headers[PARAM_PREFIX + header] = encode_value(text)
    return headers


HEADER_KEYWORD: Final = "x-mcp-header"
"""The input-schema annotation that asks for a parameter to be mirrored in an ``Mcp-Param-*`` header."""
