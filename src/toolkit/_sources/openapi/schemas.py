"""OpenAPI 3.0/3.1 Schema Objects → self-contained JSON Schema 2020-12 that toolkit's checks accept.

A document is untrusted input (ARCHITECTURE §5): everything it says is translated once, bounded, and
checked here, so a schema toolkit would refuse at registration is refused at load, naming the place
in the document (a JSON pointer such as ``#/components/schemas/Pet/properties/tag``).

The rules (the docs' translation table says the same):

- ``#/components/schemas/X`` becomes ``#/$defs/X``; a reference to any other schema in the document
  (``#/paths/~1pets/get/parameters/0/schema``, ``#/components/schemas/X/properties/y``) becomes a
  definition of its own, named ``@`` and the pointer. A name outside OpenAPI's component-name
  alphabet ``[A-Za-z0-9._-]`` is spelled with ``:`` and two hex digits per UTF-8 byte instead, so
  the spelling is a function of the name and two names never share one. A reference outside the
  document (``other.json#/X``, ``https://...``) is refused (SEP-2106: toolkit never fetches).
- Each definition is translated once per mode (once in all when no property in it is ``readOnly``
  or ``writeOnly``) and checked once, so a document's cost stays linear in its size.
- 3.0: ``nullable: true`` adds ``"null"`` to ``type`` (and ``null`` to an ``enum``); beside ``$ref``
  or ``allOf``/``anyOf``/``oneOf``/``not``/``const``/``if``, which would still refuse null, the
  schema becomes ``anyOf: [schema, {"type": "null"}]``. Boolean ``exclusiveMinimum`` and
  ``exclusiveMaximum`` become the numeric forms; ``example`` joins ``examples``; ``type: file``
  becomes a binary string. A ``$ref``'s siblings are ignored by 3.0 (§4.7.24), except the
  annotations and ``nullable``, which authors mean and which only widen. The same rules apply to a
  3.1 document that still uses these 3.0 spellings; in 3.1 a ``$ref``'s siblings apply, as in
  2020-12.
- Only JSON Schema 2020-12 keywords are kept: ``x-*`` extensions, ``discriminator`` (its mapping
  names OpenAPI components, not ``$defs``), ``xml``, ``externalDocs`` and unknown keywords are
  dropped. None of them constrains an instance in 2020-12, so dropping them changes nothing that
  validates. ``format`` is kept (unknown formats are annotations).
- ``$schema`` naming OpenAPI's dialect or 2020-12 is dropped, any other is refused; ``$id`` and
  ``$dynamicRef`` are refused (they would make references resolve elsewhere than in this document);
  ``$anchor``/``$dynamicAnchor`` are dropped; nested ``$defs`` are dropped (a reference into them is
  a pointer into the document like any other).
- ``mode="input"`` drops ``readOnly`` properties, ``mode="output"`` drops ``writeOnly`` ones
  (the property's own flag, or that of the component it references), and removes them from
  ``required`` beside them.
- A definition that reaches itself without descending into a property or an item (``A → B → A``
  with nothing but references, or through ``allOf``/``anyOf``/...) is refused: validating it would
  never end. Recursion through properties and items works.
- Bounds: toolkit's (``_schema.checks``: depth, subschema count, JSON nesting, regex limits), plus
  at most ``MAX_ENUM_VALUES`` values in one ``enum``.

The schemas returned are shared between results (a definition is one object wherever it is used):
treat them as read-only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from ..._errors import SchemaError
from ..._schema.checks import DIALECT_2020_12, MAX_DEPTH, MAX_SUBSCHEMAS, check_schema
from ..._schema.keywords import SUBSCHEMA, SUBSCHEMA_LIST
from .pointers import (
    OpenAPIDocumentError,
    References,
    Trail,
    def_name,
    escape_token,
    pointer,
    refuse_cycles,
    render,
)

__all__ = [
    "MAX_ENUM_VALUES",
    "Mode",
    "OpenAPIDocumentError",
    "SchemaTranslator",
    "Translated",
    "def_name",
    "escape_token",
    "with_defs",
]
"""What other modules import from here: ``OpenAPIDocumentError``, ``def_name`` and ``escape_token`` live in
``pointers.py`` and stay importable from here."""

Mode = Literal["input", "output"]

MAX_ENUM_VALUES: Final = 10_000
"""Most values one ``enum`` may list (every ``tools/list`` carries them to every client)."""

DEF_PREFIX: Final = "#/$defs/"

_ANNOTATIONS: Final = frozenset(
    {"title", "description", "default", "deprecated", "readOnly", "writeOnly", "examples", "$comment"}
)
"""Keywords that describe rather than constrain: kept beside a 3.0 ``$ref``, lifted above a null wrapper."""

# JSON Schema 2020-12 keywords copied as they are: validation, format, content, meta-data.
_KEPT: Final = (
    frozenset({"type", "enum", "const", "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum"})
    | frozenset({"maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems", "maxContains"})
    | frozenset({"minContains", "maxProperties", "minProperties", "required", "dependentRequired"})
    | frozenset({"format", "contentEncoding", "contentMediaType"})
    | _ANNOTATIONS
)
_REF_SIBLINGS_30: Final = _ANNOTATIONS | {"$ref", "example", "nullable"}
_REFUSED: Final = {
    "$id": "declares '$id', which would make the references in it resolve against another document",
    "$dynamicRef": "uses '$dynamicRef', which toolkit cannot keep within one document",
    "$recursiveRef": "uses '$recursiveRef', which toolkit cannot keep within one document",
}
# Keywords whose subschemas apply to the instance itself rather than to a part of it: a reference
# cycle through these alone never ends.
_IN_PLACE: Final = frozenset({"allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas"})
# Besides "type"/"enum", the keywords that can refuse null: beside them, nullable wraps the schema.
_NULL_REFUSING: Final = frozenset({"$ref", "allOf", "anyOf", "oneOf", "not", "const", "if"})
_DIALECTS: Final = frozenset({DIALECT_2020_12, DIALECT_2020_12 + "#"})
_OAS_DIALECT_PREFIX: Final = "https://spec.openapis.org/oas/3.1/dialect/"
_VERSION: Final = re.compile(r"3\.([01])(?:\.\d+)?(?:-[0-9A-Za-z.-]+)?")


@dataclass(frozen=True)
class Translated:
    """One translated schema, and the definitions it needs."""

    schema: dict[str, Any]
    """JSON Schema 2020-12; references to components are ``"#/$defs/<Name>"``."""
    defs: dict[str, dict[str, Any]]
    """Every definition ``schema`` reaches, transitively, translated the same way."""


def with_defs(schema: dict[str, Any], defs: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    """The self-contained document: ``schema`` plus ``"$defs"`` when there are any.

    A root ``"$ref"`` with ``"$defs"`` beside it is fine in 2020-12 (the two both apply).
    """
    return {**schema, "$defs": dict(defs)} if defs else schema


@dataclass(frozen=True, slots=True)
class _Definition:
    schema: dict[str, Any]
    refs: tuple[str, ...]
    """The definitions it refers to, in the order they appear (so ``defs`` come out in a stable order)."""
    in_place: tuple[str, ...]
    """Definitions referenced where the instance itself is evaluated (for the cycle check)."""
    count: int
    """Subschemas in ``schema``, itself included (as ``check_schema`` counts them)."""


class _Unit:
    """What translating one schema (a definition or a caller's root) found."""

    __slots__ = ("count", "in_place", "mode", "mode_sensitive", "refs")

    def __init__(self, mode: Mode) -> None:
        self.mode = mode
        self.count = 0
        self.refs: dict[str, None] = {}  # (ordered sets)
        self.in_place: dict[str, None] = {}
        self.mode_sensitive = False


class SchemaTranslator:
    """Translates the schemas of one OpenAPI document, caching each component's translation."""

    def __init__(self, document: Mapping[str, Any]) -> None:
        if not isinstance(document, Mapping):
            raise OpenAPIDocumentError(
                f"an OpenAPI document must be a JSON object, not {type(document).__name__}", pointer="#"
            )
        self._version = self._read_version(document)
        components = document.get("components", {})
        schemas = components.get("schemas", {}) if isinstance(components, Mapping) else None
        if not isinstance(schemas, Mapping):
            raise OpenAPIDocumentError(
                "'#/components/schemas' must be an object of named schemas", pointer="#/components/schemas"
            )
        self._references = References(document, self._version)
        self._definitions: dict[tuple[str, Mode], _Definition | OpenAPIDocumentError] = {}
        self._acyclic: dict[Mode, set[str]] = {"input": set(), "output": set()}
        """Per mode, the definitions known to reach no cycle of references alone."""
        self._checked: set[str] = set()
        """Root schemas (as JSON) that passed the checks: operations repeat their parameters' schemas."""

    @staticmethod
    def _read_version(document: Mapping[str, Any]) -> Literal["3.0", "3.1"]:
        declared = document.get("openapi")
        if declared is None and "swagger" in document:
            raise OpenAPIDocumentError(
                f"this is a Swagger {document.get('swagger')!r} document; toolkit reads OpenAPI 3.0 and 3.1: "
                "convert it first (for example with swagger2openapi)",
                pointer="#/swagger",
            )
        match = _VERSION.fullmatch(declared) if isinstance(declared, str) else None
        if match is None:
            raise OpenAPIDocumentError(
                f"'#/openapi' is {declared!r}; toolkit reads OpenAPI 3.0.x and 3.1.x documents", pointer="#/openapi"
            )
        version: Literal["3.0", "3.1"] = "3.0" if match.group(1) == "0" else "3.1"
        dialect = document.get("jsonSchemaDialect")
        if version == "3.1" and dialect is not None and not _known_dialect(dialect):
            raise OpenAPIDocumentError(
                f"'#/jsonSchemaDialect' is {dialect!r}; toolkit translates OpenAPI 3.1's own dialect "
                f"({_OAS_DIALECT_PREFIX}base) and JSON Schema 2020-12 only",
                pointer="#/jsonSchemaDialect",
            )
        return version

    @property
    def version(self) -> Literal["3.0", "3.1"]:
        """The document's OpenAPI version: ``"3.0"`` or ``"3.1"``."""
        return self._version

    def translate(self, schema: Any, *, where: str, mode: Mode, depth: int = 0) -> Translated:
        """The JSON Schema 2020-12 of the Schema Object ``schema`` found at ``where`` in the document.

        ``mode="input"`` drops ``readOnly`` properties (what a caller sends), ``"output"`` drops
        ``writeOnly`` ones (what the API answers). ``depth`` is how many subschemas deep the caller
        will place the result (a parameter's schema under ``properties``: 1), so toolkit's depth
        bound is checked where it will apply. Raises ``OpenAPIDocumentError`` naming the place.
        """
        unit = _Unit(mode)
        root = self._node(schema, where, depth, True, unit)
        out: dict[str, Any] = root if isinstance(root, dict) else ({} if root else {"not": {}})
        defs: dict[str, dict[str, Any]] = {}
        total = unit.count
        pending = list(unit.refs)
        try:
            for name in pending:  # breadth first: the root's references first, in the document's order
                if name in defs:
                    continue
                definition = self._definition(name, mode)
                defs[name] = definition.schema
                total += definition.count
                if total > MAX_SUBSCHEMAS:
                    break  # refused below, without walking the rest
                pending.extend(definition.refs)
            for name in defs:
                self._refuse_cycles(name, mode)
        except OpenAPIDocumentError as error:
            raise OpenAPIDocumentError(f"{error} (reached from '{where}')", pointer=error.pointer) from None
        if total > MAX_SUBSCHEMAS:
            raise OpenAPIDocumentError(
                f"'{where}': its schema and the definitions it reaches have more than {MAX_SUBSCHEMAS} subschemas, "
                "toolkit's bound; leave the operation out or simplify its schemas",
                pointer=where,
            )
        if set(out) != {"$ref"}:  # a bare reference has nothing of its own to check
            try:
                key: str | None = json.dumps(out, sort_keys=True, allow_nan=False)
            except (TypeError, ValueError):
                key = None  # not JSON: the check says why
            if key not in self._checked:
                self._check(out, unit.refs, where, name=None)
                if key is not None:
                    self._checked.add(key)
        return Translated(out, defs)

    def resolve(self, node: Any, *, where: str) -> Any:
        """``node`` itself, or, when it is a Reference Object, the component it refers to.

        For the non-schema components: parameters, request bodies, responses, headers, examples,
        ... Chains of references are followed; a 3.1 reference's ``summary`` and ``description``
        replace the target's (OpenAPI 3.1 §4.8.23). External references and cycles are refused.
        """
        return self.locate(node, where=where)[0]

    def locate(self, node: Any, *, where: str) -> tuple[Any, str]:
        """``resolve``, and where the node it returns sits in the document (``where`` without a ``$ref``):
        the place to name in messages about it, and the ``where`` of the schemas inside it."""
        return self._references.locate(node, where=where)

    # -- definitions

    def _definition(self, name: str, mode: Mode) -> _Definition:
        done = self._definitions.get((name, mode))
        if done is None:
            tokens = self._references.target(name)
            where = pointer(tokens)
            unit = _Unit(mode)
            try:
                schema = self._node(self._references.lookup(tokens, where, where), where, 1, True, unit)
                translated = schema if isinstance(schema, dict) else ({} if schema else {"not": {}})
                self._check(translated, unit.refs, where, name=name)
                done = _Definition(translated, tuple(unit.refs), tuple(unit.in_place), unit.count)
            except OpenAPIDocumentError as error:
                done = error
            # Without a readOnly or writeOnly property, both modes translate alike: once for both.
            same = isinstance(done, _Definition) and not unit.mode_sensitive
            for each in ("input", "output") if same else (mode,):
                self._definitions.setdefault((name, each), done)
        if isinstance(done, OpenAPIDocumentError):
            raise done
        return done

    def _refuse_cycles(self, start: str, mode: Mode) -> None:
        """Refuse a definition that reaches itself through references and in-place keywords alone."""
        refuse_cycles(
            start,
            lambda name: self._definition(name, mode).in_place,
            self._references.place,
            self._acyclic[mode],
        )

    def _check(self, schema: dict[str, Any], refs: Iterable[str], where: str, *, name: str | None) -> None:
        """toolkit's own registration checks, on ``schema`` alone, with its references stubbed.

        A definition is checked where it will sit (under ``$defs``), so depth and nesting count
        as in every document it joins; a caller's root is checked at the root.
        """
        stubs: dict[str, Any] = dict.fromkeys(refs, True)
        if name is None:
            document: dict[str, Any] = with_defs(schema, stubs)
            prefix = ""
        else:
            document = {"$ref": DEF_PREFIX + escape_token(name), "$defs": {**stubs, name: schema}}
            prefix = "/$defs/" + escape_token(name)
        try:
            check_schema(document, what="its JSON Schema translation", remember=False)
        except SchemaError as error:
            inner = error.pointer.removeprefix(prefix) if error.pointer.startswith(prefix) else error.pointer
            place = where + inner
            message = str(error).replace(f"'{error.pointer}'", f"'{place}'") if error.pointer else str(error)
            raise OpenAPIDocumentError(f"'{where}': {message}", pointer=place) from None

    # -- one schema node

    def _node(self, node: Any, trail: Trail, depth: int, in_place: bool, unit: _Unit) -> dict[str, Any] | bool:
        unit.count += 1
        if unit.count > MAX_SUBSCHEMAS:
            raise self._error(trail, f"has more than {MAX_SUBSCHEMAS} subschemas, toolkit's bound; simplify it")
        if depth > MAX_DEPTH:
            raise self._error(trail, f"nests schemas deeper than {MAX_DEPTH} levels, toolkit's bound; flatten it")
        if isinstance(node, bool):
            return node
        if not isinstance(node, Mapping):
            raise self._error(trail, f"must be a Schema Object (a JSON object), not {type(node).__name__}")
        if "$ref" in node and self._version == "3.0":
            node = {key: value for key, value in node.items() if key in _REF_SIBLINGS_30}
        wrap = node.get("nullable") is True and any(key in node for key in _NULL_REFUSING)
        inner = depth + 1 if wrap else depth  # the schema goes under anyOf/0
        if inner > MAX_DEPTH:
            raise self._error(trail, f"nests schemas deeper than {MAX_DEPTH} levels, toolkit's bound; flatten it")
        out: dict[str, Any] = {}
        dropped: set[str] = set()
        for key, value in node.items():
            if key in _KEPT:
                out[key] = value
            elif key == "$ref":
                name = self._references.schema_name(value, trail)
                unit.refs[name] = None
                if in_place:
                    unit.in_place[name] = None
                out["$ref"] = DEF_PREFIX + escape_token(name)
            elif key == "properties":
                out[key] = self._properties(value, (trail, key), inner, unit, dropped)
            elif key == "additionalItems":
                pass  # before 2020-12 it went with a list of "items"; below
            elif key in SUBSCHEMA or (key == "items" and not isinstance(value, list)):
                out[key] = self._node(value, (trail, key), inner + 1, in_place and key in _IN_PLACE, unit)
            elif key in SUBSCHEMA_LIST or key == "items":
                out["prefixItems" if key == "items" else key] = self._list(value, (trail, key), inner, in_place, unit)
            elif key in ("patternProperties", "dependentSchemas"):
                out[key] = self._map(value, (trail, key), inner, in_place and key in _IN_PLACE, unit)
            elif key == "$schema":
                if not _known_dialect(value):
                    raise self._error(
                        (trail, key),
                        f"declares the dialect {value!r}; toolkit translates OpenAPI's own dialect and JSON "
                        "Schema 2020-12 only: remove '$schema' or rewrite the schema in 2020-12",
                    )
            elif key in _REFUSED:
                raise self._error((trail, key), f"{_REFUSED[key]}; remove it")
            # nullable and example: below; x-*, discriminator, xml, externalDocs, nested $defs, ...: dropped
        if "items" in node and isinstance(node["items"], list) and "additionalItems" in node:
            out["items"] = self._node(node["additionalItems"], (trail, "additionalItems"), inner + 1, False, unit)
        self._older_spellings(node, out, trail)
        if dropped and isinstance(out.get("required"), list):
            required = [name for name in out["required"] if name not in dropped]
            if required:
                out["required"] = required
            else:
                del out["required"]
        if node.get("nullable") is True:
            return self._nullable(out, wrap, unit)
        return out

    def _older_spellings(self, node: Mapping[str, Any], out: dict[str, Any], trail: Trail) -> None:
        """3.0's ``type: file``, boolean exclusive bounds and ``example``, in 2020-12's words; the bound on ``enum``."""
        kind = out.get("type")
        if kind == "file" or (isinstance(kind, list) and "file" in kind):
            out["type"] = "string" if kind == "file" else ["string" if each == "file" else each for each in kind]
            out.setdefault("format", "binary")
        for exclusive, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
            flag = out.get(exclusive)
            if isinstance(flag, bool):
                del out[exclusive]
                if flag and bound in out:
                    out[exclusive] = out.pop(bound)
        if self._version == "3.0" and not isinstance(out.get("examples", []), list):
            del out["examples"]  # not a 3.0 keyword: a map here is the media type's examples, misplaced
        if "example" in node:
            examples = out.get("examples")
            if not isinstance(examples, list):
                out["examples"] = [node["example"]]
            elif node["example"] not in examples:
                out["examples"] = [*examples, node["example"]]
        values = out.get("enum")
        if isinstance(values, list) and len(values) > MAX_ENUM_VALUES:
            raise self._error(
                (trail, "enum"),
                f"lists {len(values)} values, more than toolkit's bound of {MAX_ENUM_VALUES}: describe the value "
                'without the list (a type, a pattern), or leave the operation out with RouteMap(..., kind="exclude")',
            )

    @staticmethod
    def _nullable(out: dict[str, Any], wrap: bool, unit: _Unit) -> dict[str, Any]:
        """3.0's ``nullable: true``: null joins ``type`` and ``enum``, or the schema becomes one branch of two."""
        if wrap:
            lifted = {key: out.pop(key) for key in list(out) if key in _ANNOTATIONS}
            only = out.get("allOf")
            if len(out) == 1 and isinstance(only, list) and len(only) == 1:
                branch = only[0]  # {"allOf": [X]} is X
                unit.count += 1
            else:
                branch = out
                unit.count += 2
            return {**lifted, "anyOf": [branch, {"type": "null"}]}
        kind = out.get("type")
        if isinstance(kind, str) and kind != "null":
            out["type"] = [kind, "null"]
        elif isinstance(kind, list) and "null" not in kind:
            out["type"] = [*kind, "null"]
        values = out.get("enum")
        if isinstance(values, list) and None not in values:
            out["enum"] = [*values, None]
        return out

    def _properties(self, value: Any, trail: Trail, depth: int, unit: _Unit, dropped: set[str]) -> dict[str, Any] | Any:
        if not isinstance(value, Mapping):
            return value  # the metaschema check names it
        out: dict[str, Any] = {}
        for name, schema in value.items():
            read_only, write_only = self._marked(schema, "readOnly"), self._marked(schema, "writeOnly")
            if read_only or write_only:
                unit.mode_sensitive = True
                if read_only if unit.mode == "input" else write_only:
                    dropped.add(name)
                    continue
            out[name] = self._node(schema, (trail, name), depth + 1, False, unit)
        return out

    def _marked(self, schema: Any, flag: str) -> bool:
        """Whether a property's schema, or the component schema it refers to, says ``flag: true``."""
        if not isinstance(schema, Mapping):
            return False
        if schema.get(flag) is True:
            return True
        reference = schema.get("$ref")
        if not isinstance(reference, str) or not reference.startswith("#"):
            return False
        try:
            target = self._references.lookup(self._references.parse(reference, ""), "", reference)
        except OpenAPIDocumentError:
            return False  # the reference itself is refused, with its place, when it is translated
        return isinstance(target, Mapping) and target.get(flag) is True

    def _list(self, value: Any, trail: Trail, depth: int, in_place: bool, unit: _Unit) -> list[Any] | Any:
        if not isinstance(value, list):
            return value  # the metaschema check names it
        keyword = trail[1] if isinstance(trail, tuple) else ""
        applies_here = in_place and keyword in _IN_PLACE
        return [
            self._node(item, (trail, str(index)), depth + 1, applies_here, unit) for index, item in enumerate(value)
        ]

    def _map(self, value: Any, trail: Trail, depth: int, in_place: bool, unit: _Unit) -> dict[str, Any] | Any:
        if not isinstance(value, Mapping):
            return value  # the metaschema check names it
        return {name: self._node(item, (trail, name), depth + 1, in_place, unit) for name, item in value.items()}

    @staticmethod
    def _error(trail: Trail, what: str) -> OpenAPIDocumentError:
        where = render(trail)
        return OpenAPIDocumentError(f"'{where}' {what}", pointer=where)


def _known_dialect(value: Any) -> bool:
    return isinstance(value, str) and (value in _DIALECTS or value.startswith(_OAS_DIALECT_PREFIX))
