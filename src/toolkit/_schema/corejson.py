"""A fast path from pydantic core schemas to JSON Schema, for the common types.

pydantic's JSON Schema generator is general and slow: a millisecond or more per model,
mostly spent in machinery (handler chains, de-duplication, definition renaming) that
ordinary tools never need. Registering hundreds of tools would spend most of its time
there. This module walks a core schema directly and produces the same JSON Schema that
``_schema._Generator`` (pydantic plus toolkit's rules) produces — tests compare the two
over a large corpus — for the node types it knows exactly. Anything else (custom
serializers, ``__get_pydantic_json_schema__`` overrides, config that changes schemas, name
collisions, unknown node types) raises ``Unsupported`` and the caller uses pydantic.
"""

from __future__ import annotations

import collections.abc
import contextlib
import functools
import inspect
import math
import re
from collections.abc import Callable
from enum import Enum
from typing import Any, Final

import pydantic_core
from pydantic import BaseModel

from .._errors import Unsupported
from .._types import REF_PREFIX, JsonSchema, Mode
from . import translated
from .keywords import references

TAG_MARK: Final = "x-toolkit-tag"

_NUMERIC: Final = {
    "multiple_of": "multipleOf",
    "le": "maximum",
    "ge": "minimum",
    "lt": "exclusiveMaximum",
    "gt": "exclusiveMinimum",
}
_STRING: Final = {"min_length": "minLength", "max_length": "maxLength", "pattern": "pattern"}
_ARRAY: Final = {"min_length": "minItems", "max_length": "maxItems"}
_OBJECT: Final = {"min_length": "minProperties", "max_length": "maxProperties"}

# Model/dataclass config keys that do not change a JSON Schema (others: use pydantic).
_NEUTRAL_CONFIG: Final = frozenset(
    {
        "title",
        "extra",
        "frozen",
        "validate_assignment",
        "arbitrary_types_allowed",
        "from_attributes",
        "populate_by_name",
        "validate_by_name",
        "validate_by_alias",
        "serialize_by_alias",
        "str_strip_whitespace",
        "str_to_lower",
        "str_to_upper",
        "strict",
        "revalidate_instances",
        "validate_default",
        "validate_return",
        "use_attribute_docstrings",
        "defer_build",
        "protected_namespaces",
        "hide_input_in_errors",
        "loc_by_alias",
        "cache_strings",
        "coerce_numbers_to_str",
        "regex_engine",
        "allow_inf_nan",
    }
)
_DEFAULT_MODEL_HOOK: Final = BaseModel.__get_pydantic_json_schema__.__func__  # type: ignore[attr-defined]
_ENUM_HOOK: Final = "GenerateSchema._enum_schema.<locals>.get_json_schema"


def _normalize(name: str) -> str:
    return re.sub(r"[^a-zA-Z0-9.\-_]", "_", name).replace(".", "__")


@functools.lru_cache(maxsize=4096)
def _short_name(core_ref: str) -> str:
    components = re.split(r"([\][,])", core_ref)
    components = [part.rsplit(":", 1)[0] for part in components]
    components = [re.sub(r"(?:[^.[\]]+\.)+((?:[^.[\]]+))", r"\1", part) for part in components]
    return _normalize("".join(components))


def _with_validations(json_schema: JsonSchema, core: dict[str, Any], mapping: dict[str, str]) -> JsonSchema:
    for core_key, json_key in mapping.items():
        if core_key in core:
            value = core[core_key]
            json_schema[json_key] = value.pattern if isinstance(value, re.Pattern) else value
    return json_schema


def _json_type(values: list[Any]) -> str | None:
    kinds = {type(value) for value in values}
    for kind, name in ((str, "string"), (int, "integer"), (float, "number"), (bool, "boolean"), (list, "array")):
        if kinds == {kind}:
            return name
    if kinds == {type(None)}:
        return "null"
    return None


def _config_ok(config: Any) -> None:
    if config and not set(config) <= _NEUTRAL_CONFIG:
        raise Unsupported


class Translator:
    """One core schema to one JSON Schema document, in one mode."""

    def __init__(self, mode: Mode) -> None:
        self.mode = mode
        self.defs: dict[str, JsonSchema] = {}
        self._names: dict[str, str] = {}  # core ref -> definition name
        self._refs_by_name: dict[str, str] = {}
        self._kept: dict[str, translated.Translated] = {}  # definition name -> its kept translation
        self._tidy: set[str] = set()  # the definitions hints.tidy has something to do in
        self._tidy_root = False  # ... and whether it has in the rest of the document

    # --- document ---------------------------------------------------------------------------

    def document(self, core: dict[str, Any]) -> JsonSchema:
        root = self.node(core)
        reference = root.get("$ref")
        inlined = None
        if isinstance(reference, str) and len(root) == 1 and self._count(reference) == 1:
            inlined = reference[len(REF_PREFIX) :]
            root = dict(self.defs[inlined])  # inline the root: referenced once
            self._tidy_root = inlined in self._tidy
        if inlined is None:
            pending: list[str] = []
            references(root, pending)
        else:
            pending = list(self._references(inlined))
        reachable: set[str] = set()
        while pending:
            name = pending.pop()[len(REF_PREFIX) :]
            if name not in reachable and name in self.defs:
                reachable.add(name)
                pending.extend(self._references(name))
        defs = {name: schema for name, schema in self.defs.items() if name in reachable}
        if defs:
            root["$defs"] = defs
        return root

    def _references(self, name: str) -> tuple[str, ...] | list[str]:
        """Every reference in the definition ``name``: a kept one's are found once for every document."""
        kept = self._kept.get(name)
        if kept is not None:
            return kept.references(references)
        found: list[str] = []
        references(self.defs[name], found)
        return found

    def _count(self, reference: str) -> int:
        """How often ``reference`` is used: by the root (once) and in every definition."""
        return 1 + sum(self._references(name).count(reference) for name in self.defs)

    def tidy_skips(self) -> tuple[bool, frozenset[str]]:
        """What ``hints.tidy`` may leave out of the last document: its root part (``True``: there is
        nothing to do there) and the definitions with nothing to do in them."""
        return not self._tidy_root, frozenset(name for name in self.defs if name not in self._tidy)

    def tidied(self) -> None:
        """The last document was tidied: its kept definitions have nothing more to tidy, in any document."""
        for kept in self._kept.values():
            kept.tidied = True

    def _untidy(self) -> None:
        """The node being made holds something for ``hints.tidy`` (a union, a tag mark, a keyword of the user's)."""
        frames = self._frames
        if frames:
            frames[-1].untidy = True
        else:
            self._tidy_root = True

    def _name(self, core_ref: str) -> str:
        name = self._names.get(core_ref)
        if name is None:
            name = _short_name(core_ref)
            other = self._refs_by_name.get(name)
            if other is not None and other != core_ref:
                raise Unsupported  # two types share a name: pydantic picks longer names
            self._names[core_ref] = name
            self._refs_by_name[name] = core_ref
        return name

    # --- nodes ------------------------------------------------------------------------------

    def node(self, core: dict[str, Any]) -> JsonSchema:
        core_ref = core.get("ref")
        if core_ref is None:
            return self._annotated(core)
        name = self._name(core_ref)
        reference = {"$ref": REF_PREFIX + name}
        frames = self._frames
        if frames:
            frames[-1].children.append((core_ref, core))
        if name in self.defs:
            return reference
        if core_ref in self._in_progress:
            self._depends_on(core_ref)
            return reference
        cls = core.get("cls")
        kept = translated.find(core_ref, self.mode, cls) if cls is not None else None
        frame = _Frame(core_ref)
        frames.append(frame)
        self._in_progress.add(core_ref)
        try:
            if kept is not None and self._replay(core_ref, kept):
                self.defs[name] = kept.body  # shared: see _schema/translated.py
                self._kept[name] = kept
                if not kept.tidied:
                    self._tidy.add(name)
                return reference
            frame.children = []
            body = self.defs[name] = self._annotated(core)
            if frame.untidy:
                self._tidy.add(name)
            if not frame.tainted and cls is not None:
                entry = translated.Translated(body, frame.children, cls, tidied=not frame.untidy)
                translated.keep(core_ref, self.mode, entry)
                self._kept[name] = entry
        finally:
            self._in_progress.discard(core_ref)
            frames.pop()
        return reference

    def _replay(self, core_ref: str, kept: translated.Translated) -> bool:
        """Meet the classes a kept definition refers to, in its order, as translating it would.

        ``False`` when one is being translated further up this document (the kept body was made
        without that): the definition is then translated afresh.
        """
        for child_ref, child in kept.children:
            if child_ref == core_ref or self._name(child_ref) in self.defs:
                self._frames[-1].children.append((child_ref, child))
                continue
            if child_ref in self._in_progress:
                return False
            self.node(child)
        return True

    def _depends_on(self, core_ref: str) -> None:
        """A reference to ``core_ref``, still being translated: the definitions begun after it are not
        complete in themselves, so they are not kept."""
        for frame in reversed(self._frames):
            if frame.core_ref == core_ref:
                break
            frame.tainted = True

    _in_progress: set[str]
    _frames: list[_Frame]

    def translate(self, core: dict[str, Any]) -> JsonSchema:
        self._in_progress = set()
        self._frames = []
        return self.document(core)

    def _annotated(self, core: dict[str, Any]) -> JsonSchema:
        """A node's own schema with its metadata (descriptions, examples, extras) applied."""
        if self.mode == "serialization" and "serialization" in core:
            raise Unsupported
        metadata = core.get("metadata") or {}
        if metadata.get("pydantic_js_annotation_functions"):
            raise Unsupported
        for function in metadata.get("pydantic_js_functions", ()):
            if getattr(function, "__func__", None) is _DEFAULT_MODEL_HOOK:
                continue  # BaseModel's default hook changes nothing
            if getattr(function, "__qualname__", "") == _ENUM_HOOK and core.get("type") == "enum":
                continue  # title and description: handled by the enum body
            raise Unsupported
        body = self._body(core)
        updates = metadata.get("pydantic_js_updates")
        if updates:
            self._said(updates)
            body = {**body, **updates}
        extra = metadata.get("pydantic_js_extra")
        if extra:
            if not isinstance(extra, dict):
                raise Unsupported
            self._untidy()
            body.update(pydantic_core.to_jsonable_python(extra))
        return body

    def _said(self, updates: dict[str, Any]) -> None:
        """What a ``Field`` says on top of a schema: a title, a description, examples leave ``tidy``
        nothing to do; anything else might."""
        if not updates.keys() <= _SAID_ONLY:
            self._untidy()

    def _body(self, core: dict[str, Any]) -> JsonSchema:
        kind = core.get("type")
        method = _METHODS.get(kind)
        if method is None:
            method = _METHODS[kind] = getattr(Translator, "_" + str(kind).replace("-", "_"), _unsupported)
        result: JsonSchema = method(self, core)
        return result

    # --- scalars ----------------------------------------------------------------------------

    def _any(self, core: dict[str, Any]) -> JsonSchema:
        return {}

    def _none(self, core: dict[str, Any]) -> JsonSchema:
        return {"type": "null"}

    def _bool(self, core: dict[str, Any]) -> JsonSchema:
        return {"type": "boolean"}

    def _int(self, core: dict[str, Any]) -> JsonSchema:
        schema = _with_validations({"type": "integer"}, core, _NUMERIC)
        return {key: value for key, value in schema.items() if value not in (math.inf, -math.inf)}

    def _float(self, core: dict[str, Any]) -> JsonSchema:
        schema = _with_validations({"type": "number"}, core, _NUMERIC)
        return {key: value for key, value in schema.items() if value not in (math.inf, -math.inf)}

    def _str(self, core: dict[str, Any]) -> JsonSchema:
        return _with_validations({"type": "string"}, core, _STRING)

    def _date(self, core: dict[str, Any]) -> JsonSchema:
        return {"type": "string", "format": "date"}

    def _datetime(self, core: dict[str, Any]) -> JsonSchema:
        return self._temporal(core, "date-time")

    def _time(self, core: dict[str, Any]) -> JsonSchema:
        return self._temporal(core, "time")

    def _temporal(self, core: dict[str, Any], form: str) -> JsonSchema:
        # toolkit's rule (see _schema._Generator._offset_format): claim the RFC 3339 format only
        # where a value is sure to have an offset.
        constraint = core.get("tz_constraint")
        if (self.mode == "serialization" and constraint != "aware") or constraint == "naive":
            return {"type": "string"}
        return {"type": "string", "format": form}

    def _uuid(self, core: dict[str, Any]) -> JsonSchema:
        return {"type": "string", "format": "uuid"}

    def _literal(self, core: dict[str, Any]) -> JsonSchema:
        expected = [pydantic_core.to_jsonable_python(v.value if isinstance(v, Enum) else v) for v in core["expected"]]
        result: JsonSchema = {"const": expected[0]} if len(expected) == 1 else {"enum": expected}
        kind = _json_type(expected)
        if kind is not None:
            result["type"] = kind
        return result

    def _enum(self, core: dict[str, Any]) -> JsonSchema:
        cls = core["cls"]
        doc = inspect.cleandoc(cls.__doc__) if cls.__doc__ else None
        result: JsonSchema = {}
        if doc and doc != "An enumeration.":
            result["description"] = doc
        values = [pydantic_core.to_jsonable_python(member.value) for member in core["members"]]
        result["enum"] = values
        kind = _json_type(values)
        if kind in ("string", "integer", "number", "boolean", "array"):
            result["type"] = kind
        return result

    # --- containers -------------------------------------------------------------------------

    def _list(self, core: dict[str, Any]) -> JsonSchema:
        items = self.node(core["items_schema"]) if "items_schema" in core else {}
        return _with_validations({"type": "array", "items": items}, core, _ARRAY)

    def _set(self, core: dict[str, Any]) -> JsonSchema:
        items = self.node(core["items_schema"]) if "items_schema" in core else {}
        return _with_validations({"type": "array", "uniqueItems": True, "items": items}, core, _ARRAY)

    _frozenset = _set

    def _tuple(self, core: dict[str, Any]) -> JsonSchema:
        schema: JsonSchema = {"type": "array"}
        items = core["items_schema"]
        variadic = core.get("variadic_item_index")
        if variadic is not None:
            if variadic > 0:
                schema["minItems"] = variadic
                schema["prefixItems"] = [self.node(item) for item in items[:variadic]]
            schema["items"] = self.node(items[variadic]) if variadic + 1 == len(items) else True
        else:
            prefix = [self.node(item) for item in items]
            if prefix:
                schema["prefixItems"] = prefix
            schema["minItems"] = len(prefix)
            schema["maxItems"] = len(prefix)
        return _with_validations(schema, core, _ARRAY)

    def _dict(self, core: dict[str, Any]) -> JsonSchema:
        schema: JsonSchema = {"type": "object"}
        keys = dict(self.node(core["keys_schema"])) if "keys_schema" in core else {}
        if "$ref" in keys:
            raise Unsupported
        keys_pattern = keys.pop("pattern", None)
        keys.pop("title", None)
        values = dict(self.node(core["values_schema"])) if "values_schema" in core else {}
        values.pop("title", None)
        if values or keys_pattern is not None:
            if keys_pattern is None:
                schema["additionalProperties"] = values
            else:
                schema["patternProperties"] = {keys_pattern: values}
        else:
            schema["additionalProperties"] = True
        if keys.get("type") == "string" and len(keys) > 1:
            keys.pop("type", None)
            schema["propertyNames"] = keys
        _with_validations(schema, core, _OBJECT)
        # toolkit's rule (see _schema._Generator.dict_schema): say what integer keys look like.
        key_core = core.get("keys_schema") or {}
        if self.mode == "validation" and key_core.get("type") == "int" and "propertyNames" not in schema:
            schema["propertyNames"] = {"pattern": "^-?[0-9]+$"}
        return schema

    # --- wrappers ---------------------------------------------------------------------------

    def _default(self, core: dict[str, Any]) -> JsonSchema:
        schema = dict(self.node(core["schema"]))
        if "default" not in core:
            return schema  # a default factory is not shown
        default = core["default"]
        if isinstance(default, collections.abc.Set) and len(default) > 1:
            with contextlib.suppress(TypeError):  # unorderable members: keep the set's order
                default = sorted(default)
        try:
            schema["default"] = pydantic_core.to_jsonable_python(default, by_alias=True)
        except Exception:
            raise Unsupported from None  # pydantic would warn and leave it out
        return schema

    def _nullable(self, core: dict[str, Any]) -> JsonSchema:
        inner = self.node(core["schema"])
        null = {"type": "null"}
        if inner == null:
            return null
        return self._any_of([inner, null])

    def _union(self, core: dict[str, Any]) -> JsonSchema:
        choices = [choice[0] if isinstance(choice, tuple) else choice for choice in core["choices"]]
        generated = [self.node(choice) for choice in choices]
        if len(generated) == 1:
            return generated[0]
        return self._any_of(generated)

    def _any_of(self, schemas: list[JsonSchema]) -> JsonSchema:
        union = _flat_any_of(schemas)
        if "anyOf" in union:
            self._untidy()  # oneOf where the branches are disjoint
        return union

    def _tagged_union(self, core: dict[str, Any]) -> JsonSchema:
        discriminator = core.get("discriminator")
        if not isinstance(discriminator, str):
            raise Unsupported
        branches: list[JsonSchema] = []
        for choice in core["choices"].values():
            branch = self.node(choice)
            if branch not in branches:
                branches.append(branch)
        self._untidy()
        return {"oneOf": branches, TAG_MARK: discriminator}

    def _function_after(self, core: dict[str, Any]) -> JsonSchema:
        return self.node(core["schema"])

    def _function_before(self, core: dict[str, Any]) -> JsonSchema:
        if self.mode == "validation" and "json_schema_input_schema" in core:
            return self.node(core["json_schema_input_schema"])
        return self.node(core["schema"])

    _function_wrap = _function_before

    def _custom_error(self, core: dict[str, Any]) -> JsonSchema:
        return self.node(core["schema"])

    def _definitions(self, core: dict[str, Any]) -> JsonSchema:
        for definition in core["definitions"]:
            self.node(definition)
        return self.node(core["schema"])

    def _definition_ref(self, core: dict[str, Any]) -> JsonSchema:
        for frame in self._frames:  # a definition met elsewhere in this core schema: keep none of these
            frame.tainted = True
        return {"$ref": REF_PREFIX + self._name(core["schema_ref"])}

    # --- classes ----------------------------------------------------------------------------

    def _model(self, core: dict[str, Any]) -> JsonSchema:
        cls = core["cls"]
        if getattr(cls, "__pydantic_root_model__", False) or _deprecated(cls):
            raise Unsupported
        config = getattr(cls, "model_config", {})
        _config_ok(config)
        schema = dict(self.node(core["schema"]))
        return self._class(schema, cls, config, cls.__doc__)

    def _dataclass(self, core: dict[str, Any]) -> JsonSchema:
        cls = core["cls"]
        config = getattr(cls, "__pydantic_config__", None) or {}
        _config_ok(config)
        schema = dict(self.node(core["schema"]))
        class_config = dict(config)
        extra = (core.get("config") or {}).get("extra_fields_behavior")
        if "extra" not in class_config and extra is not None:
            class_config["extra"] = extra
        doc = cls.__doc__
        if "__pydantic_fields__" not in cls.__dict__ and doc is not None and doc.startswith(f"{cls.__name__}("):
            doc = None  # the signature stdlib dataclasses use as __doc__
        return self._class(schema, cls, class_config, doc)

    def _class(self, schema: JsonSchema, cls: type, config: Any, doc: str | None) -> JsonSchema:
        title = config.get("title")
        if title is not None:
            schema.setdefault("title", title)  # a title the user wrote; automatic ones are left out
        if doc:
            schema.setdefault("description", inspect.cleandoc(doc))
        if "additionalProperties" not in schema:
            if config.get("extra") == "allow":
                schema["additionalProperties"] = True
            elif config.get("extra") == "forbid":
                schema["additionalProperties"] = False
        return schema

    def _model_fields(self, core: dict[str, Any]) -> JsonSchema:
        fields = [(name, field) for name, field in core["fields"].items() if self._present(field)]
        schema = self._fields([(name, self._required(field, True), field) for name, field in fields], core)
        extras = core.get("extras_schema")
        if extras is not None:
            schema["additionalProperties"] = self.node(extras)
        return schema

    def _dataclass_args(self, core: dict[str, Any]) -> JsonSchema:
        fields = [field for field in core["fields"] if self._present(field)]
        return self._fields([(field["name"], self._required(field, True), field) for field in fields], core)

    def _typed_dict(self, core: dict[str, Any]) -> JsonSchema:
        total = core.get("total", True)
        cls = core.get("cls")
        config = getattr(cls, "__pydantic_config__", None) or {}
        _config_ok(config)
        fields = [(name, field) for name, field in core["fields"].items() if self._present(field)]
        schema = self._fields([(name, self._required(field, total), field) for name, field in fields], core)
        extras = core.get("extras_schema")
        additional: Any = self.node(extras) if extras is not None and extras != {"type": "any"} else True
        if core.get("extra_behavior") == "forbid":
            schema["additionalProperties"] = False
        elif core.get("extra_behavior") == "allow":
            schema["additionalProperties"] = additional
        if cls is not None:
            return self._class(schema, cls, config, cls.__doc__)
        extra = (core.get("config") or {}).get("extra_fields_behavior")
        if "additionalProperties" not in schema:
            if extra == "forbid":
                schema["additionalProperties"] = False
            elif extra == "allow":
                schema["additionalProperties"] = additional
        return schema

    def _present(self, field: dict[str, Any]) -> bool:
        return self.mode == "validation" or not field.get("serialization_exclude")

    def _required(self, field: dict[str, Any], total: bool) -> bool:
        if field["type"] == "typed-dict-field":
            required = bool(field.get("required", total))
            # toolkit serializes with every field present, except a TypedDict's optional keys
            return required and (self.mode == "validation" or field.get("serialization_exclude_if") is None)
        if self.mode == "serialization":
            return field.get("serialization_exclude_if") is None
        return bool(field["schema"]["type"] != "default")

    def _fields(self, fields: list[tuple[str, bool, dict[str, Any]]], core: dict[str, Any]) -> JsonSchema:
        if self.mode == "serialization":
            for computed in core.get("computed_fields", ()):
                fields.append((computed["property_name"], computed.get("serialization_exclude_if") is None, computed))
        properties: JsonSchema = {}
        required: list[str] = []
        for name, is_required, field in fields:
            key = self._alias(field, name)
            properties[key] = self._field(field)
            if is_required:
                required.append(key)
        schema: JsonSchema = {"type": "object", "properties": properties}
        if required:
            schema["required"] = required
        return schema

    def _field(self, field: dict[str, Any]) -> JsonSchema:
        inner = field["return_schema"] if field["type"] == "computed-field" else field["schema"]
        schema = dict(self.node(inner))
        metadata = field.get("metadata") or {}
        if metadata.get("pydantic_js_annotation_functions") or metadata.get("pydantic_js_functions"):
            raise Unsupported
        updates = metadata.get("pydantic_js_updates")
        if updates:
            self._said(updates)
            schema = {**schema, **updates}
        extra = metadata.get("pydantic_js_extra")
        if extra:
            if not isinstance(extra, dict):
                raise Unsupported
            self._untidy()
            schema.update(pydantic_core.to_jsonable_python(extra))
        reference = schema.get("$ref")
        if isinstance(reference, str) and len(schema) > 1:
            target = self.defs.get(reference[len(REF_PREFIX) :])
            if target is not None:  # pydantic drops siblings that repeat the definition
                schema = {k: v for k, v in schema.items() if k == "$ref" or target.get(k, _MISSING) != v}
        return schema

    def _alias(self, field: dict[str, Any], name: str) -> str:
        if field["type"] == "computed-field":
            alias: Any = field.get("alias", name)
        elif self.mode == "validation":
            alias = field.get("validation_alias", name)
        else:
            alias = field.get("serialization_alias", name)
        if isinstance(alias, str):
            return alias
        if isinstance(alias, list):
            for path in alias:
                if isinstance(path, list) and len(path) == 1 and isinstance(path[0], str):
                    return path[0]
            return name
        raise Unsupported


_MISSING: Final = object()


def _deprecated(cls: type) -> Any:
    """``getattr(cls, "__deprecated__", None)``, read from the classes' own dicts: a pydantic model's
    metaclass answers a missing attribute by raising (and catching) an ``AttributeError``."""
    for klass in cls.__mro__:
        if "__deprecated__" in vars(klass):
            return vars(klass)["__deprecated__"]
    return None


def _unsupported(translator: Translator, core: dict[str, Any]) -> JsonSchema:
    raise Unsupported


# A core schema type -> the Translator method for it (``_unsupported`` when it has none).
_METHODS: dict[Any, Callable[[Translator, dict[str, Any]], JsonSchema]] = {}


class _Frame:
    """A class definition being translated: the class references met inside it, whether it may be kept,
    whether ``hints.tidy`` has anything to do in it."""

    __slots__ = ("children", "core_ref", "tainted", "untidy")

    def __init__(self, core_ref: str) -> None:
        self.core_ref = core_ref
        self.children: list[tuple[str, dict[str, Any]]] = []
        self.tainted = False
        self.untidy = False


# What a Field may say on top of a schema that leaves hints.tidy nothing to do.
_SAID_ONLY: Final = frozenset({"title", "description", "examples", "deprecated"})


def _flat_any_of(schemas: list[JsonSchema]) -> JsonSchema:
    members: list[JsonSchema] = []
    for schema in schemas:
        if list(schema) == ["anyOf"]:
            members.extend(schema["anyOf"])
        else:
            members.append(schema)
    unique: list[JsonSchema] = []
    for member in members:
        if member not in unique:
            unique.append(member)
    if len(unique) == 1:
        return unique[0]
    return {"anyOf": unique}


def translate(core: collections.abc.Mapping[str, Any], mode: Mode) -> JsonSchema:
    """The JSON Schema of a core schema; ``Unsupported`` when pydantic must do it."""
    return Translator(mode).translate(dict(core))
