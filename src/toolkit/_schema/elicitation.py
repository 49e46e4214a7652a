"""The ``requestedSchema`` of an elicitation: a flat object whose properties are primitives.

The spec restricts form elicitation to strings, numbers, integers, booleans and enums
(single or multi select), with no references, so a pydantic model is flattened here:
``$ref`` to an Enum is inlined, ``T | None`` becomes an optional ``T``.
"""

from __future__ import annotations

import functools
from typing import Any, Final

from pydantic import BaseModel

from .._errors import ElicitationSchemaError
from .._types import REF_PREFIX
from . import hints

_PRIMITIVES: Final = frozenset({"string", "number", "integer", "boolean"})


def elicitation_schema(schema: type[BaseModel] | dict[str, Any]) -> dict[str, Any]:
    if isinstance(schema, dict):
        if schema.get("type") != "object" or not isinstance(schema.get("properties"), dict):
            raise ElicitationSchemaError(
                'an elicitation schema must be {"type": "object", "properties": {...}} with primitive properties'
            )
        return schema
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return _from_model(schema)
    raise ElicitationSchemaError(f"elicit() takes a pydantic model class or a JSON Schema dict, not {schema!r}")


@functools.lru_cache(maxsize=256)
def _from_model(model: type[BaseModel]) -> dict[str, Any]:
    generated = hints.type_schema(model, "validation")
    defs = generated.get("$defs", {})
    root = hints.inline_root_ref(generated)
    required = set(root.get("required", []))
    properties: dict[str, Any] = {}
    for name, prop in root.get("properties", {}).items():
        flat, nullable = _flatten(prop, defs, f"{model.__name__}.{name}")
        properties[name] = flat
        if nullable:
            required.discard(name)
    result: dict[str, Any] = {"type": "object", "properties": properties}
    ordered = [name for name in properties if name in required]
    if ordered:
        result["required"] = ordered
    return result


def _flatten(prop: dict[str, Any], defs: dict[str, Any], where: str) -> tuple[dict[str, Any], bool]:
    nullable = False
    for keyword in ("anyOf", "oneOf"):
        branches = prop.get(keyword)
        if isinstance(branches, list):
            others = [branch for branch in branches if branch != {"type": "null"}]
            if len(others) == 1 and len(others) < len(branches):
                nullable = True
                merged = {key: value for key, value in prop.items() if key != keyword}
                prop = {**_resolve(others[0], defs), **merged}
    prop = _resolve(prop, defs)
    if prop.get("default", 0) is None:
        prop = {key: value for key, value in prop.items() if key != "default"}
    kind = prop.get("type")
    if kind == "array":
        items = _resolve(prop.get("items", {}), defs)
        if "enum" not in items:
            raise ElicitationSchemaError(f"{where}: elicitation lists must be lists of enum values (multi-select)")
        prop = {**prop, "items": items}
    elif kind not in _PRIMITIVES:
        raise ElicitationSchemaError(
            f"{where}: elicitation fields must be str, int, float, bool, an Enum/Literal, or a list of those; "
            f"got schema {prop}"
        )
    return prop, nullable


def _resolve(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    reference = schema.get("$ref")
    if isinstance(reference, str) and reference.startswith(REF_PREFIX):
        target = defs.get(reference[len(REF_PREFIX) :], {})
        rest = {key: value for key, value in schema.items() if key != "$ref"}
        return {**target, **rest}
    return schema
