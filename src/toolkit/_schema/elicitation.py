"""The ``requestedSchema`` of an elicitation: a flat object whose properties are primitives.

The spec restricts form elicitation to strings, numbers, integers, booleans and enums
(single or multi select), with no references, so a pydantic model is flattened here:
``$ref`` to an Enum is inlined, ``T | None`` becomes an optional ``T``.

The scalar and choice forms FastMCP users write (``str``, ``int``, ``float``, ``bool``, a
``Literal`` or ``Enum``, a list of choices, ``[[choices]]`` for several, ``None`` to confirm)
become an object with one required property, ``value``, whose answer is unwrapped again
(``ElicitForm.read``); ``None`` asks for no data at all.
"""

from __future__ import annotations

import enum
import functools
import typing
from collections.abc import Callable
from typing import Any, Final

import pydantic
from pydantic import BaseModel

from .._errors import ElicitationSchemaError
from .._types import REF_PREFIX
from . import hints

_PRIMITIVES: Final = frozenset({"string", "number", "integer", "boolean"})


_SCALARS: Final = (str, int, float, bool)
VALUE: Final = "value"
"""The property a scalar or choice question's answer travels in (FastMCP's name for it)."""


class ElicitForm:
    """What to send (``schema``) and how to read the accepted ``content`` back (``read``)."""

    __slots__ = ("read", "schema")

    def __init__(self, schema: dict[str, Any], read: Callable[[dict[str, Any]], Any]) -> None:
        self.schema = schema
        self.read = read


def elicitation_form(schema: Any) -> ElicitForm | None:
    """The scalar, choice or confirmation form of ``schema``; ``None`` for a model or a JSON Schema dict."""
    if schema is None or schema is type(None):
        return ElicitForm({"type": "object", "properties": {}}, lambda content: None)
    if isinstance(schema, list | tuple):
        return _choices(list(schema))
    if isinstance(schema, dict) or (isinstance(schema, type) and issubclass(schema, BaseModel)):
        return None
    is_choice = typing.get_origin(schema) is typing.Literal or (
        isinstance(schema, type) and issubclass(schema, enum.Enum)
    )
    if schema not in _SCALARS and not is_choice:
        return None
    flat, _ = _flatten(hints.type_schema(schema, "validation"), {}, "elicit()")
    return _wrapped(flat, pydantic.TypeAdapter(schema))


def _choices(choices: list[Any]) -> ElicitForm:
    many = len(choices) == 1 and isinstance(choices[0], list | tuple)
    options = list(choices[0]) if many else choices
    if not options or not all(isinstance(option, str) for option in options):
        raise ElicitationSchemaError(
            "elicit() takes a list of choices as strings (['low', 'high']), or [['a', 'b']] to pick several; "
            f"got {choices!r}"
        )
    one = {"type": "string", "enum": options}
    prop = {"type": "array", "items": one} if many else one
    choice: Any = typing.Literal.__getitem__(tuple(options))  # Literal["low", "high"], made at run time
    return _wrapped(prop, pydantic.TypeAdapter(list[choice] if many else choice))


def _wrapped(prop: dict[str, Any], adapter: pydantic.TypeAdapter[Any]) -> ElicitForm:
    def read(content: dict[str, Any]) -> Any:
        if VALUE not in content:
            raise ValueError(f"the answer has no {VALUE!r}")
        return adapter.validate_python(content[VALUE])

    return ElicitForm({"type": "object", "properties": {VALUE: prop}, "required": [VALUE]}, read)


def elicitation_schema(schema: type[BaseModel] | dict[str, Any]) -> dict[str, Any]:
    if isinstance(schema, dict):
        if schema.get("type") != "object" or not isinstance(schema.get("properties"), dict):
            raise ElicitationSchemaError(
                'an elicitation schema must be {"type": "object", "properties": {...}} with primitive properties'
            )
        return schema
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return _from_model(schema)
    raise ElicitationSchemaError(
        "elicit() takes a pydantic model class, a JSON Schema dict, str, int, float, bool, a Literal or Enum, "
        f"a list of choices, or None (just confirm); not {schema!r}"
    )


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
