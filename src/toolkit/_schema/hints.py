"""From Python type hints to natural JSON Schema 2020-12 (ARCHITECTURE §4).

pydantic generates; toolkit post-processes:
- no automatic ``title`` noise (titles the user wrote stay);
- no OpenAPI ``discriminator`` keyword (its mapping points into ``$defs`` and is not 2020-12);
- ``oneOf`` exactly where a union's branches can never both match, ``anyOf`` elsewhere.

Schemas are generated once per (type, mode) and cached: generation is pure Python and
costs around a millisecond for a model, while a server usually repeats its types.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Collection, Iterable
from typing import Annotated, Any, Final, get_args, get_origin

import annotated_types
import pydantic_core
from pydantic import TypeAdapter
from pydantic.fields import FieldInfo
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

from .._errors import Unsupported
from .._types import REF_PREFIX, JsonSchema, Mode
from . import corejson, cores, unions
from .keywords import DATA_KEYWORDS, NAME_MAPS, REFERENCE_KEYWORDS, children

_REF_TEMPLATE: Final = REF_PREFIX + "{model}"


_TAG_MARK: Final = corejson.TAG_MARK


class _Generator(GenerateJsonSchema):
    """pydantic's generator, minus the automatic titles and key sorting, plus two rules.

    - Serialization mode marks fields with defaults as required: toolkit serializes
      without ``exclude_defaults``/``exclude_unset``, so those fields are always present.
    - A discriminated union's tag property is marked so ``tidy`` can make it required in
      every branch: pydantic's validator rejects a value without its tag.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._enum_names: set[str] = set()

    def generate(self, schema: core_schema.CoreSchema, mode: Any = "validation") -> JsonSchemaValue:
        result = super().generate(schema, mode)
        if self._enum_names:
            _drop_enum_titles(result, self._enum_names)
        return result

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def sort(self, value: JsonSchemaValue, parent_key: str | None = None) -> JsonSchemaValue:
        return value

    def field_is_required(self, field: Any, total: bool) -> bool:
        if (
            self.mode == "serialization"
            and field["type"] != "typed-dict-field"
            and field.get("serialization_exclude_if") is None
        ):
            return True
        return super().field_is_required(field, total)

    @staticmethod
    def _drop_class_title(json_schema: JsonSchemaValue, cls: Any, config: Any) -> JsonSchemaValue:
        user_title = config.get("title") if isinstance(config, dict) else None
        if user_title is None and json_schema.get("title") == getattr(cls, "__name__", None):
            del json_schema["title"]
        return json_schema

    def model_schema(self, schema: core_schema.ModelSchema) -> JsonSchemaValue:
        cls = schema["cls"]
        return self._drop_class_title(super().model_schema(schema), cls, getattr(cls, "model_config", None))

    def dataclass_schema(self, schema: core_schema.DataclassSchema) -> JsonSchemaValue:
        cls = schema["cls"]
        config = getattr(cls, "__pydantic_config__", None)
        return self._drop_class_title(super().dataclass_schema(schema), cls, config)

    def typed_dict_schema(self, schema: core_schema.TypedDictSchema) -> JsonSchemaValue:
        cls = schema.get("cls")
        config = getattr(cls, "__pydantic_config__", None)
        return self._drop_class_title(super().typed_dict_schema(schema), cls, config)

    def enum_schema(self, schema: core_schema.EnumSchema) -> JsonSchemaValue:
        # pydantic adds the enum's title through a metadata hook after this method;
        # remember the name and strip it in ``generate``.
        self._enum_names.add(schema["cls"].__name__)
        return super().enum_schema(schema)

    # RFC 3339 "date-time" and "time" require a UTC offset, which a naive value serialized by
    # pydantic does not have ("2026-01-02T09:30:00"); clients that check formats (the
    # TypeScript SDKs do) would reject such a result. An output schema claims the format only
    # when the hint guarantees an aware value (``AwareDatetime``). Input schemas keep it
    # (toolkit asserts formats on arguments, so a plain ``datetime`` argument needs an
    # offset), except for ``NaiveDatetime``/naive times, which can never satisfy it.
    def datetime_schema(self, schema: core_schema.DatetimeSchema) -> JsonSchemaValue:
        return self._offset_format(super().datetime_schema(schema), schema)

    def time_schema(self, schema: core_schema.TimeSchema) -> JsonSchemaValue:
        return self._offset_format(super().time_schema(schema), schema)

    def _offset_format(self, result: JsonSchemaValue, schema: Any) -> JsonSchemaValue:
        constraint = schema.get("tz_constraint")
        if (self.mode == "serialization" and constraint != "aware") or constraint == "naive":
            result.pop("format", None)
        return result

    def dict_schema(self, schema: core_schema.DictSchema) -> JsonSchemaValue:
        # JSON object keys are strings; pydantic parses them into the key type. Say so for
        # integer keys, so the schema does not accept keys the tool would refuse.
        result = super().dict_schema(schema)
        keys = schema.get("keys_schema") or {}
        if self.mode == "validation" and keys.get("type") == "int" and "propertyNames" not in result:
            result["propertyNames"] = {"pattern": "^-?[0-9]+$"}
        return result

    def tagged_union_schema(self, schema: core_schema.TaggedUnionSchema) -> JsonSchemaValue:
        result = super().tagged_union_schema(schema)
        discriminator = result.get("discriminator")
        if isinstance(discriminator, dict) and isinstance(discriminator.get("propertyName"), str):
            result[_TAG_MARK] = discriminator["propertyName"]
        return result


def _drop_enum_titles(node: Any, names: set[str]) -> None:
    if isinstance(node, list):
        for item in node:
            _drop_enum_titles(item, names)
    elif isinstance(node, dict):
        if "enum" in node and node.get("title") in names:
            del node["title"]
        for child in children(node):
            _drop_enum_titles(child, names)


def _spelled(annotation: Any) -> Any:
    """How ``annotation`` is written, in order: ``typing`` counts ``Union[A, B]`` equal to
    ``Union[B, A]`` (same hash), and ``Literal[1, 2]`` equal to ``Literal[2, 1]``, and pydantic
    keeps the order, so a cache keyed on the hint alone would serve whichever came first for both.

    The arguments in order, all the way down, each leaf with its type (``True == 1``); what the
    hint's own equality already tells apart (``list`` or ``set``, ``Annotated``'s metadata) need
    not be in it. (``repr`` would do, at several times the cost: a ``Field`` prints every option.)
    """
    args = None if isinstance(annotation, type) else getattr(annotation, "__args__", None)
    if type(args) is not tuple:
        return type(annotation)
    return tuple(_spelled(arg) if _has_args(arg) else (arg, type(arg)) for arg in args)


def _has_args(hint: Any) -> bool:
    # A class never has: asking a pydantic model's metaclass costs an AttributeError raised and caught.
    return not isinstance(hint, type) and type(getattr(hint, "__args__", None)) is tuple


@functools.lru_cache(maxsize=4096)
def _adapter(annotation: Any, spelled: Any) -> TypeAdapter[Any]:
    return TypeAdapter(annotation)


def adapter_for(annotation: Any) -> TypeAdapter[Any]:
    """A ``TypeAdapter`` for ``annotation``, shared by every tool that uses the same hint.

    A ``Field`` that only describes (``description``, ``title``, ``examples``) changes no
    validation, so ``Annotated[list[X], Field(description=...)]`` shares ``list[X]``'s adapter.
    """
    annotation = peel(annotation)[0]
    try:
        return _adapter(annotation, _spelled(annotation))
    except TypeError:  # unhashable annotation: build one of its own
        return TypeAdapter(annotation)


@functools.lru_cache(maxsize=4096)
def _cached_schema(annotation: Any, spelled: Any, mode: Mode) -> JsonSchema:
    return _generate(annotation, mode)


def _generate(annotation: Any, mode: Mode) -> JsonSchema:
    # A common hint's core schema is assembled from its parts (a model's own, list, dict, ...):
    # no TypeAdapter at registration; the tool builds one when it is first called.
    core = cores.core_schema(annotation)
    if core is not None:
        translator = corejson.Translator(mode)
        try:
            schema = translator.translate(core)
        except Unsupported:
            pass
        else:
            root_done, done = translator.tidy_skips()
            tidy(schema, root_done=root_done, done=done)
            translator.tidied()
            return schema
    return generate_with_adapter(annotation, mode)


def generate_with_adapter(annotation: Any, mode: Mode) -> JsonSchema:
    """The schema through ``annotation``'s (shared) ``TypeAdapter``: what ``_generate`` falls back to."""
    return adapter_schema(adapter_for(annotation), mode)


def adapter_schema(adapter: TypeAdapter[Any], mode: Mode) -> JsonSchema:
    """The schema from a ``TypeAdapter``'s core schema (``corejson``, else pydantic's generator)."""
    try:
        schema = corejson.translate(adapter.core_schema, mode)
    except Unsupported:
        schema = pydantic_schema(adapter, mode)
    return tidy(schema)


def pydantic_schema(adapter: TypeAdapter[Any], mode: Mode) -> JsonSchema:
    """pydantic's own generation with toolkit's rules (the reference the fast path matches)."""
    return adapter.json_schema(mode=mode, by_alias=True, ref_template=_REF_TEMPLATE, schema_generator=_Generator)


def type_schema(annotation: Any, mode: Mode) -> JsonSchema:
    """The natural 2020-12 schema of ``annotation``, ``$defs`` at the root.

    Cached and shared: the top-level dict is a fresh copy callers may add keys to, but the
    subschemas inside are shared by every tool using the same hint and must not be changed.
    """
    simple = primitive(annotation)
    if simple is not None:
        return simple[1]
    inner, said = peel(annotation)
    if said:
        schema = type_schema(inner, mode)
        if "$ref" not in schema:  # what the Field says goes on top of the (shared) schema of the type
            return {**schema, **said}
    try:
        cached = _cached_schema(annotation, _spelled(annotation), mode)
    except TypeError:  # unhashable annotation
        return _generate(annotation, mode)
    return dict(cached)


_DESCRIPTIVE: Final = frozenset({"description", "title", "examples"})


def peel(annotation: Any) -> tuple[Any, JsonSchema]:
    """``Annotated[X, Field(description=...)]`` → ``(X, {"description": ...})``.

    Only for ``Field``s that describe and nothing else, around a type that is not a class
    (whose schema could sit in ``$defs``, where pydantic would put the description).
    Otherwise ``(annotation, {})``.
    """
    if get_origin(annotation) is not Annotated:
        return annotation, {}
    base, *extras = get_args(annotation)
    if isinstance(base, type) or not extras:
        return annotation, {}
    said: JsonSchema = {}
    for extra in extras:
        if not isinstance(extra, FieldInfo) or extra.metadata or not set(extra._attributes_set) <= _DESCRIPTIVE:
            return annotation, {}
        said.update(_described(extra))
    return base, said


def _described(field: FieldInfo) -> JsonSchema:
    """What a ``Field`` says about its value: its title, description and examples."""
    said = {"title": field.title, "description": field.description, "examples": field.examples}
    return {name: value for name, value in said.items() if value is not None}


# --- constrained primitives: no pydantic needed -------------------------------------------------

_PRIMITIVES: Final[dict[Any, str]] = {str: "string", int: "integer", float: "number", bool: "boolean"}
_NUMERIC_CONSTRAINTS: Final = {
    annotated_types.Ge: ("ge", "minimum"),
    annotated_types.Gt: ("gt", "exclusiveMinimum"),
    annotated_types.Le: ("le", "maximum"),
    annotated_types.Lt: ("lt", "exclusiveMaximum"),
    annotated_types.MultipleOf: ("multiple_of", "multipleOf"),
}
_LENGTH_CONSTRAINTS: Final = {
    annotated_types.MinLen: ("min_length", "minLength"),
    annotated_types.MaxLen: ("max_length", "maxLength"),
}
# What a ``Field(...)`` on a primitive may say for the shortcut (anything else: pydantic).
_PLAIN_FIELD: Final = frozenset(
    {
        "description",
        "title",
        "examples",
        "ge",
        "gt",
        "le",
        "lt",
        "multiple_of",
        "min_length",
        "max_length",
        "pattern",
        "strict",
    }
)


def primitive(annotation: Any) -> tuple[type, JsonSchema] | None:
    """``(str|int|float|bool, schema)`` for a primitive hint with plain constraints, else ``None``.

    ``Annotated[int, Field(ge=1, le=9, description=...)]`` is the most common parameter hint.
    Its schema says everything pydantic would check, so arguments need no pydantic
    conversion and the schema needs no pydantic generation (the result equals pydantic's:
    tests compare them).
    """
    base: Any = annotation
    extras: list[Any] = []
    if get_origin(annotation) is Annotated:
        base, *extras = get_args(annotation)
    kind = _PRIMITIVES.get(base)
    if kind is None:
        return None
    schema: JsonSchema = {"type": kind}
    updates: JsonSchema = {}
    for extra in extras:
        items: Iterable[Any]
        if isinstance(extra, FieldInfo):
            if not set(extra._attributes_set) <= _PLAIN_FIELD:
                return None
            updates.update(_described(extra))
            items = extra.metadata
        else:
            items = (extra,)
        for item in items:
            if not _constrain(schema, kind, item):
                return None
    schema.update(updates)
    return base, schema


def _constrain(schema: JsonSchema, kind: str, item: Any) -> bool:
    if isinstance(item, annotated_types.BaseMetadata) and type(item).__name__ == "Strict":
        return True
    numeric = _NUMERIC_CONSTRAINTS.get(type(item))
    if numeric is not None and kind in ("integer", "number"):
        value = getattr(item, numeric[0])
        if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
            schema[numeric[1]] = value
            return True
        return False
    length = _LENGTH_CONSTRAINTS.get(type(item))
    if length is not None and kind == "string":
        schema[length[1]] = getattr(item, length[0])
        return True
    pattern = getattr(item, "pattern", None) if kind == "string" else None
    if pattern is not None and type(item).__name__ == "_PydanticGeneralMetadata" and len(vars(item)) == 1:
        schema["pattern"] = pattern.pattern if isinstance(pattern, re.Pattern) else pattern
        return True
    return False


# --- post-processing ---------------------------------------------------------------------------


def tidy(schema: JsonSchema, *, root_done: bool = False, done: Collection[str] = ()) -> JsonSchema:
    """Drop the OpenAPI ``discriminator`` keyword and choose ``oneOf``/``anyOf`` per union.

    ``corejson`` tells what needs none of it: ``root_done``, the document but its ``$defs``;
    ``done``, the names of definitions (a class's definition, shared by every document holding it,
    is tidied by the first one; tidying it again changes nothing).
    """
    defs = schema.get("$defs", {})
    if not root_done:
        _tidy_node(schema, defs)
    for name, definition in defs.items():
        if name not in done:
            _tidy_node(definition, defs)
    return schema


# Besides data: "$defs", whose definitions ``tidy`` visits itself (the root's, with them in hand).
_NOT_TIDIED: Final = DATA_KEYWORDS | {"$defs"}


def _tidy_node(node: Any, defs: dict[str, Any]) -> None:
    if isinstance(node, list):
        for item in node:
            _tidy_node(item, defs)
        return
    if not isinstance(node, dict):
        return
    node.pop("discriminator", None)
    tag = node.pop(_TAG_MARK, None)
    if isinstance(tag, str):
        _require_tag(node, tag, defs)
    for child in children(node, skip=_NOT_TIDIED):
        _tidy_node(child, defs)
    for keyword in ("anyOf", "oneOf"):
        branches = node.get(keyword)
        if isinstance(branches, list):
            chosen = "oneOf" if unions.branches_disjoint(branches, defs) else "anyOf"
            if chosen != keyword:
                node[chosen] = node.pop(keyword)


def _require_tag(node: dict[str, Any], tag: str, defs: dict[str, Any]) -> None:
    for keyword in ("oneOf", "anyOf"):
        for branch in node.get(keyword) or ():
            if isinstance(branch, dict) and tag not in unions.required(unions.resolve(branch, defs)):
                branch["required"] = [*branch.get("required", ()), tag]


# --- disjointness: when may a union be advertised as oneOf? ------------------------------------


def split_defs(schema: JsonSchema) -> tuple[JsonSchema, dict[str, Any]]:
    """``(schema without $defs, $defs)``; ``schema`` itself is left as it is."""
    defs = schema.get("$defs", {})
    return {key: value for key, value in schema.items() if key != "$defs"}, defs


def json_default(annotation: Any, value: Any) -> tuple[bool, Any]:
    """``(True, json)`` when a parameter default can be shown in a schema, else ``(False, None)``."""
    if value is None or isinstance(value, str | bool | int) or (isinstance(value, float) and math.isfinite(value)):
        return True, value
    try:
        return True, adapter_for(annotation).dump_python(value, mode="json", warnings="error")
    except Exception:
        try:
            return True, pydantic_core.to_jsonable_python(value)
        except Exception:
            return False, None


# "$recursiveRef" (2019-09) is defined only for the value "#" (2019-09 Core §8.2.4.2), so it
# cannot be re-aimed at another location: ``walk_refs`` leaves it as it is.
_REWRITTEN_REFS: Final = REFERENCE_KEYWORDS - {"$recursiveRef"}


def walk_refs(node: Any, rewrite: Callable[[str], str]) -> Any:
    """A copy of the schema ``node`` with every ``$ref``/``$dynamicRef`` string passed through ``rewrite``.

    Values of the data keywords (``keywords.DATA_KEYWORDS``) are data, not schemas, and are
    copied unchanged; names in ``properties``, ``$defs``, ... are names, not keywords.
    """
    if isinstance(node, list):
        return [walk_refs(item, rewrite) for item in node]
    if not isinstance(node, dict):
        return node
    result: dict[str, Any] = {}
    for key, value in node.items():
        if key in _REWRITTEN_REFS and isinstance(value, str):
            result[key] = rewrite(value)
        elif key in DATA_KEYWORDS:
            result[key] = value
        elif key in NAME_MAPS and isinstance(value, dict):
            result[key] = {name: walk_refs(child, rewrite) for name, child in value.items()}
        else:
            result[key] = walk_refs(value, rewrite)
    return result


def _mentions(node: Any, reference: str) -> bool:
    """Whether a reference keyword anywhere in the schema ``node`` has the value ``reference``."""
    if isinstance(node, dict):
        return any(node.get(keyword) == reference for keyword in REFERENCE_KEYWORDS) or any(
            _mentions(child, reference) for child in children(node)
        )
    if isinstance(node, list):
        return any(_mentions(item, reference) for item in node)
    return False


def inline_root_ref(schema: JsonSchema) -> JsonSchema:
    """Replace a root ``{"$ref": "#/$defs/X"}`` by X itself (kept in ``$defs`` if still referenced).

    Legacy clients need ``type: "object"`` at the root, which a bare ``$ref`` does not have.
    """
    reference = schema.get("$ref")
    defs = schema.get("$defs")
    if not (isinstance(reference, str) and reference.startswith(REF_PREFIX) and isinstance(defs, dict)):
        return schema
    name = reference[len(REF_PREFIX) :]
    target = defs.get(name)
    if not isinstance(target, dict):
        return schema
    siblings = {key: value for key, value in schema.items() if key not in ("$ref", "$defs")}
    remaining = dict(defs)
    if not _mentions(target, reference) and not any(
        _mentions(definition, reference) for key, definition in defs.items() if key != name
    ):
        del remaining[name]
    if set(siblings) & set(target):
        # In 2020-12 "$ref" and its siblings both apply; where they share a keyword, a merge
        # would let one replace the other, so the target goes under "allOf" instead.
        inlined: JsonSchema = {**siblings, "allOf": [*siblings.get("allOf", []), target]}
        if target.get("type") == "object":
            inlined.setdefault("type", "object")
    else:
        inlined = {**target, **siblings}
    if remaining:
        inlined["$defs"] = remaining
    return inlined


class Header:
    """Mirror a tool parameter into an HTTP header: ``region: Annotated[str, Header("Region")]``.

    Adds ``"x-mcp-header": "Region"`` to the parameter's schema; 2026-07-28 clients then send
    ``Mcp-Param-Region`` with the value, so load balancers can route on it without parsing
    the body, and the server checks the header matches the argument.
    """

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __get_pydantic_json_schema__(self, core: Any, handler: Any) -> JsonSchemaValue:
        json_schema: JsonSchemaValue = handler(core)
        json_schema["x-mcp-header"] = self.name
        return json_schema

    def __hash__(self) -> int:
        return hash(("Header", self.name))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Header) and other.name == self.name
