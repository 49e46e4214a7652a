"""Which unions may be ``oneOf``: disjointness of JSON Schemas, decided conservatively.

``oneOf`` is used only where no value can match two branches (ARCHITECTURE §4): a discriminator
(a const tag required in every branch), disjoint JSON types, disjoint enums, ``T | None`` with
``T`` rejecting null. Anything this module cannot prove disjoint stays ``anyOf``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from .._types import REF_PREFIX


def resolve(schema: Any, defs: dict[str, Any], depth: int = 0) -> Any:
    while isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and depth < 32:
        reference: str = schema["$ref"]
        if not reference.startswith(REF_PREFIX):
            return schema
        target = defs.get(reference[len(REF_PREFIX) :])
        if not isinstance(target, dict):
            return target if isinstance(target, bool) else schema
        extra = {key: value for key, value in schema.items() if key != "$ref"}
        if extra:
            merged = {**target, **extra}
            if isinstance(target, dict) and "required" in target and "required" in extra:
                merged["required"] = [*target["required"], *extra["required"]]
            schema = merged
        else:
            schema = target
        depth += 1
    return schema


def _value_key(value: Any) -> tuple[str, Any]:
    """A key equal for values JSON Schema considers equal (``1`` and ``1.0``; not ``true`` and ``1``)."""
    if value is None:
        return ("null", None)
    if isinstance(value, bool):
        return ("boolean", value)
    if isinstance(value, (int, float)):
        return ("number", float(value) if math.isfinite(value) else repr(value))
    if isinstance(value, str):
        return ("string", value)
    import json  # noqa: PLC0415 - only an array or object const/enum needs it: no start-up cost

    return ("json", json.dumps(value, sort_keys=True, separators=(",", ":")))


def _json_type_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _finite_values(schema: Any) -> set[tuple[str, Any]] | None:
    """The exact set of values ``schema`` allows, when it is a ``const`` or an ``enum``."""
    if not isinstance(schema, dict):
        return None
    if "const" in schema:
        return {_value_key(schema["const"])}
    if isinstance(schema.get("enum"), list):
        return {_value_key(value) for value in schema["enum"]}
    return None


def _types(schema: Any, defs: dict[str, Any], depth: int = 0) -> frozenset[str] | None:
    """The JSON types ``schema`` can accept; ``None`` when that cannot be told."""
    schema = resolve(schema, defs)
    if schema is False:
        return frozenset()
    if not isinstance(schema, dict) or depth > 16:
        return None
    found: frozenset[str] | None = None
    declared = schema.get("type")
    if isinstance(declared, str):
        found = frozenset({declared})
    elif isinstance(declared, list):
        found = frozenset(declared)
    if found is not None and "number" in found:
        found = found | {"integer"}
    # Instance types: "integer" is an integral number, "number" any other number, so a
    # schema of type "number" accepts both and one of type "integer" only the first.
    listed = [schema["const"]] if "const" in schema else schema.get("enum")
    if isinstance(listed, list):
        value_types = frozenset(_json_type_of(value) for value in listed)
        found = value_types if found is None else found & value_types
    for keyword in ("anyOf", "oneOf"):
        branches = schema.get(keyword)
        if isinstance(branches, list):
            union: set[str] = set()
            for branch in branches:
                branch_types = _types(branch, defs, depth + 1)
                if branch_types is None:
                    return found
                union |= branch_types
            found = frozenset(union) if found is None else found & union
    return found


def required(schema: dict[str, Any]) -> set[str]:
    required = schema.get("required")
    return set(required) if isinstance(required, list) else set()


def _forbids(schema: dict[str, Any], name: str) -> bool:
    """Whether an object valid for ``schema`` can never have the property ``name``."""
    properties = schema.get("properties")
    if isinstance(properties, dict) and name in properties:
        return properties[name] is False
    if schema.get("patternProperties"):
        return False
    return schema.get("additionalProperties") is False


def _objects_disjoint(left: dict[str, Any], right: dict[str, Any], defs: dict[str, Any]) -> bool:
    left_properties = left.get("properties")
    right_properties = right.get("properties")
    if not isinstance(left_properties, dict):
        left_properties = {}
    if not isinstance(right_properties, dict):
        right_properties = {}
    left_required, right_required = required(left), required(right)
    # A discriminator: a property both require whose allowed values never meet.
    for name in left_required & right_required:
        left_values = _finite_values(resolve(left_properties.get(name), defs))
        right_values = _finite_values(resolve(right_properties.get(name), defs))
        if left_values is not None and right_values is not None and not left_values & right_values:
            return True
        left_types = _types(left_properties.get(name), defs)
        right_types = _types(right_properties.get(name), defs)
        if left_types is not None and right_types is not None and not left_types & right_types:
            return True
    # One side requires a property the other side forbids.
    if any(_forbids(right, name) for name in left_required):
        return True
    return any(_forbids(left, name) for name in right_required)


def schemas_disjoint(left: Any, right: Any, defs: dict[str, Any]) -> bool:
    """True only when no JSON value can be valid against both schemas."""
    left, right = resolve(left, defs), resolve(right, defs)
    if left is False or right is False:
        return True
    left_types, right_types = _types(left, defs), _types(right, defs)
    if left_types is not None and right_types is not None and not left_types & right_types:
        return True
    left_values, right_values = _finite_values(left), _finite_values(right)
    if left_values is not None and right_values is not None and not left_values & right_values:
        return True
    if (
        isinstance(left, dict)
        and isinstance(right, dict)
        and left_types == frozenset({"object"})
        and right_types == frozenset({"object"})
    ):
        return _objects_disjoint(left, right, defs)
    return False


def branches_disjoint(branches: Iterable[Any], defs: dict[str, Any]) -> bool:
    """Whether every pair of union branches is disjoint, so ``oneOf`` means the same as ``anyOf``."""
    items = list(branches)
    return all(schemas_disjoint(items[i], items[j], defs) for i in range(len(items)) for j in range(i + 1, len(items)))


# --- shapes used by the compatibility layer and the tool model --------------------------------


def is_object_schema(schema: Any, defs: dict[str, Any] | None = None) -> bool:
    """Whether every value valid for ``schema`` is a JSON object (so a legacy client accepts it)."""
    if defs is None:
        defs = schema.get("$defs", {}) if isinstance(schema, dict) else {}
    return _types(schema, defs) == frozenset({"object"})
