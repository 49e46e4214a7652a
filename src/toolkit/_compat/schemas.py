"""Output and input schemas as the legacy structured versions (2025-06-18, 2025-11-25) require them.

Those versions define ``outputSchema`` and ``structuredContent`` as objects: a natural object
schema keeps its shape (root ``type: "object"``, a root ``$ref`` inlined); anything else is
wrapped as ``{"result": natural}`` (``wrap_schema``). Their input and output schemas also
allow no boolean subschema under ``properties``.
"""

from __future__ import annotations

import re
import urllib.parse
from typing import Any, Final

import pydantic_core

from .._schema import hints, unions

RESULT_KEY: Final = "result"


def _rewrite_into_result(reference: str) -> str:
    """A pointer into the natural root, re-aimed at ``#/properties/result`` of the wrapper."""
    if reference == "#":
        return f"#/properties/{RESULT_KEY}"
    # The fragment is a URI fragment: "%24defs" is "$defs" (RFC 6901 §6).
    if reference.startswith("#/") and not urllib.parse.unquote(reference).startswith("#/$defs/"):
        return f"#/properties/{RESULT_KEY}{reference[1:]}"
    return reference  # "#/$defs/..." (hoisted with the defs) and "#anchor" names stay valid


# A "$ref"/"$dynamicRef" whose value is not a "#/$defs/..." pointer: the only kind the
# wrapper has to rewrite. Matched on the serialized schema, so a data value that merely looks
# like one (inside "const", say) only costs the slower, exact walk. Compiled on first use (``re``
# keeps it), not at import: a server that never wraps a schema never needs it.
_REWRITABLE_REF: Final = rb'"\$(?:ref|dynamicRef)":"(?!#/(?:\$|%24)defs/)'


def wrap_schema(natural: dict[str, Any]) -> dict[str, Any]:
    """``{"type": "object", "properties": {"result": natural}, "required": ["result"]}``.

    ``$defs``, ``$schema`` and ``$id`` move to the wrapper's root so every ``#/$defs/...``
    pointer still resolves; other ``#/...`` pointers are rewritten to point inside ``result``.
    Schemas are never mutated once built, so when no pointer needs rewriting (pydantic's only
    point into ``$defs``) the wrapper shares the natural schema's parts instead of copying them.
    """
    inner = {key: value for key, value in natural.items() if key not in ("$defs", "$schema", "$id")}
    rewrite = re.search(_REWRITABLE_REF, pydantic_core.to_json(natural)) is not None
    wrapper: dict[str, Any] = {}
    for key in ("$schema", "$id"):
        if key in natural:
            wrapper[key] = natural[key]
    wrapper["type"] = "object"
    wrapper["properties"] = {RESULT_KEY: hints.walk_refs(inner, _rewrite_into_result) if rewrite else inner}
    wrapper["required"] = [RESULT_KEY]
    if "$defs" in natural:
        defs = natural["$defs"]
        # Walked one definition at a time: a definition's name ("default", say) is not a keyword.
        wrapper["$defs"] = (
            {name: hints.walk_refs(definition, _rewrite_into_result) for name, definition in defs.items()}
            if rewrite
            else defs
        )
    return wrapper


def _rewrite_out_of_result(reference: str) -> str:
    """The inverse of :func:`_rewrite_into_result`: a pointer into the wrapper's ``result``, re-aimed at the root."""
    inside = f"#/properties/{RESULT_KEY}"
    if reference == inside:
        return "#"
    if reference.startswith(inside + "/"):
        return "#" + reference[len(inside) :]
    return reference


def unwrap_schema(wrapper: dict[str, Any]) -> dict[str, Any]:
    """The natural schema inside a ``{"result": natural}`` wrapper (toolkit's, fastmcp's or the ``mcp`` SDK's).

    The inverse of :func:`wrap_schema`: ``$defs``, ``$schema`` and ``$id`` go back beside the
    natural schema, and pointers into ``#/properties/result`` point at the root again. A wrapper
    without a schema for ``result`` gives ``{}`` (any value).
    """
    properties = wrapper.get("properties")
    inner = properties.get(RESULT_KEY) if isinstance(properties, dict) else None
    natural: dict[str, Any] = dict(inner) if isinstance(inner, dict) else {}
    for key in ("$schema", "$id", "$defs"):
        if key in wrapper and key not in natural:
            natural[key] = wrapper[key]
    if re.search(rb'"\$(?:ref|dynamicRef)":"#/properties/result', pydantic_core.to_json(natural)):
        natural = hints.walk_refs(natural, _rewrite_out_of_result)
    return natural


def legacy_properties(schema: dict[str, Any]) -> dict[str, Any]:
    """Legacy schemas require every root ``properties`` value to be an object, not a boolean."""
    properties = schema.get("properties")
    if isinstance(properties, dict) and any(isinstance(value, bool) for value in properties.values()):
        fixed = {
            name: ({} if value is True else {"not": {}}) if isinstance(value, bool) else value
            for name, value in properties.items()
        }
        schema = {**schema, "properties": fixed}
    return schema


def legacy_output_schema(natural: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """The output schema a 2025-06-18/2025-11-25 client gets, and whether values are wrapped."""
    if unions.is_object_schema(natural):
        shaped = hints.inline_root_ref(natural)
        if shaped.get("type") != "object":
            shaped = {"type": "object", **{key: value for key, value in shaped.items() if key != "type"}}
        return legacy_properties(shaped), False
    return wrap_schema(natural), True


# What wrap_schema may put beside "type", "properties" and "required" at the wrapper's root.
_HOISTED: Final = frozenset({"$defs", "$schema", "$id"})
_WRAPPER_KEYS: Final = frozenset({"type", "properties", "required"})


def is_wrapper_schema(schema: Any) -> bool:
    """Whether ``schema`` is one :func:`legacy_output_schema` wraps a value under (the inverse's test).

    Exactly ``wrap_schema``'s form: ``type: "object"``, one property ``result``, ``required:
    ["result"]``, nothing else beside the hoisted ``$defs``/``$schema``/``$id`` (so a model
    with a ``result`` field, whose schema has a ``title``, is not one); and a ``result`` that is
    not an object schema, since toolkit never wraps an object. A hand-written natural object
    schema of exactly that form (``{"result": <integer>}``, say) is what wrapping ``integer``
    gives too: the two cannot be told apart, and it reads as wrapped.
    """
    if not isinstance(schema, dict) or set(schema) - _HOISTED != _WRAPPER_KEYS:
        return False
    properties = schema["properties"]
    if schema["type"] != "object" or schema["required"] != [RESULT_KEY]:
        return False
    if not isinstance(properties, dict) or list(properties) != [RESULT_KEY]:
        return False
    inner = properties[RESULT_KEY]
    defs = schema.get("$defs")
    return isinstance(inner, dict) and not unions.is_object_schema(inner, defs if isinstance(defs, dict) else {})


FASTMCP_WRAP_MARK: Final = "x-fastmcp-wrap-result"
"""fastmcp's mark on an output schema whose value travels as ``{"result": value}``."""


def declares_wrapper(tool_name: str, schema: Any, *, modern: bool = False) -> bool:
    """Whether ``schema`` (an advertised ``outputSchema``) says the value travels as ``{"result": value}``.

    ``modern``: the server speaks 2026-07-28, where any value may travel as it is. Some servers
    (``mcp`` 2.x, fastmcp) wrap there too and say so; only their explicit declarations count,
    not the bare shape, which a natural ``{"result": 5}`` object has as well.
    """
    if not isinstance(schema, dict):
        return False
    if schema.get(FASTMCP_WRAP_MARK) is True:
        return True
    if not modern and is_wrapper_schema(schema):
        return True
    properties = schema.get("properties")
    return (
        schema.get("title") == f"{tool_name}Output"
        and schema.get("required") == [RESULT_KEY]
        and isinstance(properties, dict)
        and list(properties) == [RESULT_KEY]
    )
