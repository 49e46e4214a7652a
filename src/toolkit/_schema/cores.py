"""The pydantic core schema of a common hint, assembled from its parts without pydantic's generator.

Building a ``TypeAdapter`` runs pydantic's schema generator (and compiles a validator): around a
millisecond for ``list[Model]`` or ``Model | None``, most of the cost of registering a tool. Yet a
model class already carries its core schema (``__pydantic_core_schema__``, built when the class
was), and the wrappers a tool's hints put around models and primitives (``list``, ``dict``,
``X | None``, ``Literal``, constraints) are one small node each. ``core_schema`` assembles those
nodes into what ``TypeAdapter(hint).core_schema`` would describe, for ``corejson`` to translate
into the same JSON Schema (``tests/test_cold_start.py`` compares the two paths over every hint the
tests, the examples and the benchmark use, and over generated combinations). It is only ever
translated: validators and serializers are pydantic's, built when a tool is first called.

Anything else (a TypedDict, a stdlib dataclass, a type with its own pydantic hooks, a ``Field``
that says more than constraints) gives ``None``, and the caller builds a ``TypeAdapter``.
"""

from __future__ import annotations

import datetime
import enum
import math
import types
import uuid
from typing import Annotated, Any, Final, Literal, Union, get_args, get_origin

import annotated_types
from pydantic import BaseModel
from pydantic.fields import FieldInfo

_SCALARS: Final[dict[Any, str]] = {
    int: "int",
    str: "str",
    float: "float",
    bool: "bool",
    type(None): "none",
    None: "none",
    datetime.date: "date",
    datetime.datetime: "datetime",
    datetime.time: "time",
    uuid.UUID: "uuid",
}
_NUMERIC: Final[dict[type, str]] = {
    annotated_types.Ge: "ge",
    annotated_types.Gt: "gt",
    annotated_types.Le: "le",
    annotated_types.Lt: "lt",
    annotated_types.MultipleOf: "multiple_of",
}
_LENGTH: Final[dict[type, str]] = {annotated_types.MinLen: "min_length", annotated_types.MaxLen: "max_length"}
# Which constraints each kind of node takes, by their annotated_types class (others: pydantic).
_ALLOWED: Final[dict[str, dict[type, str]]] = {
    "int": _NUMERIC,
    "float": _NUMERIC,
    "str": _LENGTH,
    "list": _LENGTH,
    "set": _LENGTH,
    "frozenset": _LENGTH,
    "dict": _LENGTH,
}
# What a Field(...) may set for the assembly: constraints, and what only describes.
_FIELD_OPTIONS: Final = frozenset(
    {"ge", "gt", "le", "lt", "multiple_of", "min_length", "max_length", "title", "description", "examples"}
)
_LITERAL_VALUES: Final = (str, int, bool)


def core_schema(annotation: Any) -> dict[str, Any] | None:
    """What ``TypeAdapter(annotation).core_schema`` would say, as far as its JSON Schema goes; or ``None``."""
    try:
        core = _core(annotation)
    except TypeError:  # an unhashable or odd hint: pydantic decides
        return None
    if core is not None and _classes(core) > 1:
        # Two classes in one hint (``A | B``) may share a nested class: pydantic then hoists the
        # shared definitions in an order of its own, which only its generator reproduces.
        return None
    return core


def _classes(node: dict[str, Any]) -> int:
    """How many class schemas (nodes with a ``ref``) the assembled wrappers hold, not looking inside them."""
    if "ref" in node:
        return 1
    count = 0
    for key in ("items_schema", "values_schema", "schema", "choices"):
        child = node.get(key)
        if isinstance(child, dict):
            count += _classes(child)
        elif isinstance(child, list):
            count += sum(_classes(item) for item in child)
    return count


def _core(annotation: Any) -> dict[str, Any] | None:
    kind = _SCALARS.get(annotation) if _hashable(annotation) else None
    if kind is not None:
        return {"type": kind}
    if annotation is Any:
        return {"type": "any"}
    origin = get_origin(annotation)
    if origin is None:
        return _class(annotation)
    args = get_args(annotation)
    if origin is Annotated:
        return _constrained(args[0], args[1:])
    if origin is Union or origin is types.UnionType:
        return _union(args)
    if origin is Literal:
        return _literal(args)
    if origin is list or origin is set or origin is frozenset:
        if len(args) != 1:
            return None
        items = _core(args[0])
        return None if items is None else {"type": origin.__name__, "items_schema": items}
    if origin is dict:
        return _dict(args)
    if origin is tuple:
        return _tuple(args)
    return None


def _hashable(annotation: Any) -> bool:
    try:
        hash(annotation)
    except TypeError:
        return False
    return True


def _class(annotation: Any) -> dict[str, Any] | None:
    if not isinstance(annotation, type):
        return None
    if issubclass(annotation, BaseModel):
        if not annotation.__pydantic_complete__ or "__pydantic_core_schema__" not in annotation.__dict__:
            return None  # not built yet (forward references): pydantic says why
        core = annotation.__pydantic_core_schema__
        return core if isinstance(core, dict) else None
    if issubclass(annotation, enum.Enum) and type(annotation) is enum.EnumType:
        if "__get_pydantic_core_schema__" in vars(annotation) or "__get_pydantic_json_schema__" in vars(annotation):
            return None
        members = list(annotation.__members__.values())
        if not members:
            return None
        ref = f"{annotation.__module__}.{annotation.__qualname__}:{id(annotation)}"
        return {"type": "enum", "cls": annotation, "members": members, "ref": ref}
    return None


def _constrained(base: Any, extras: tuple[Any, ...]) -> dict[str, Any] | None:
    """``Annotated[X, Field(ge=..., description=...)]`` on a number, a string or a container: X's node
    with the constraints on it, and what the ``Field`` says as pydantic's ``pydantic_js_updates``."""
    inner = _core(base)
    if inner is None or "ref" in inner or inner.get("metadata"):
        return None  # a class's schema sits in $defs, where a description would go elsewhere
    allowed = _ALLOWED.get(inner["type"])
    if allowed is None:
        return None
    node = dict(inner)
    said: dict[str, Any] | None = None
    for extra in extras:
        items: tuple[Any, ...]
        if isinstance(extra, FieldInfo):
            if said is not None or not set(extra._attributes_set) <= _FIELD_OPTIONS:
                return None
            said = _said(extra)
            items = tuple(extra.metadata)
        else:
            items = (extra,)
        for item in items:
            key = allowed.get(type(item))
            if key is None:
                return None
            value = getattr(item, key)
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                return None
            node[key] = value
    if said:
        node["metadata"] = {"pydantic_js_updates": said}
    return node


def _said(field: FieldInfo) -> dict[str, Any] | None:
    """What pydantic puts in ``pydantic_js_updates`` for a ``Field`` (its order: title, description, examples)."""
    if field.examples is not None and not _plain_json(field.examples):
        raise TypeError  # pydantic makes it JSON its own way: let it
    said = {"title": field.title, "description": field.description, "examples": field.examples}
    return {key: value for key, value in said.items() if value is not None} or None


def _plain_json(value: Any) -> bool:
    if value is None or type(value) in (str, int, float, bool):
        return True
    if type(value) is list:
        return all(_plain_json(item) for item in value)
    if type(value) is dict:
        return all(type(key) is str and _plain_json(item) for key, item in value.items())
    return False


def _union(args: tuple[Any, ...]) -> dict[str, Any] | None:
    others = [arg for arg in args if arg is not type(None) and arg is not None]
    choices = [_core(arg) for arg in others]
    if not choices or any(choice is None for choice in choices):
        return None
    inner: dict[str, Any] | None = choices[0] if len(choices) == 1 else {"type": "union", "choices": choices}
    if len(others) == len(args):
        return inner
    return {"type": "nullable", "schema": inner}


def _literal(args: tuple[Any, ...]) -> dict[str, Any] | None:
    if not args or not all(type(arg) in _LITERAL_VALUES for arg in args) or len(set(args)) != len(args):
        return None
    if len({type(arg) for arg in args}) != 1:
        return None  # 1 == True: pydantic's own rules for mixed literals
    return {"type": "literal", "expected": list(args)}


def _dict(args: tuple[Any, ...]) -> dict[str, Any] | None:
    if len(args) != 2 or args[0] not in (str, int):
        return None
    values = _core(args[1])
    if values is None:
        return None
    return {"type": "dict", "keys_schema": {"type": _SCALARS[args[0]]}, "values_schema": values}


def _tuple(args: tuple[Any, ...]) -> dict[str, Any] | None:
    if len(args) == 2 and args[1] is Ellipsis:
        item = _core(args[0])
        return None if item is None else {"type": "tuple", "items_schema": [item], "variadic_item_index": 0}
    if args == ((),) or not args or Ellipsis in args:
        return None
    items = [_core(arg) for arg in args]
    if any(item is None for item in items):
        return None
    return {"type": "tuple", "items_schema": items}
