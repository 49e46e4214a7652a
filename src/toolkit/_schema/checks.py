"""JSON Schema 2020-12: the registration-time checks, and the validator.

Every schema toolkit advertises, generated or hand-written, passes ``check_schema`` once
at registration (ARCHITECTURE §5). Validation uses jsonschema-rs with retrieval switched
off (``offline=True``), so no code path can fetch a ``$ref``; our own walk runs first and
rejects anything non-local, because even the metaschema check would try to fetch an
unknown ``$schema`` URL.
"""

from __future__ import annotations

import functools
import marshal
import math
import urllib.parse
from collections.abc import Iterable, Iterator
from typing import Any, Final, Protocol

import jsonschema_rs
import pydantic_core

from .._errors import SchemaError
from . import translated
from .keywords import (
    REFERENCE_KEYWORDS,
    SUBSCHEMA,
    SUBSCHEMA_LIST,
    SUBSCHEMA_MAP,
    SUBSCHEMA_MAP_OR_NAMES,
    SUBSCHEMA_OR_LIST,
)
from .uris import DEFAULT_BASE, resolve

MAX_DEPTH: Final = 64
"""Deepest subschema nesting accepted (SEP-2106: bound composition-keyword cost)."""

MAX_SUBSCHEMAS: Final = 10_000
"""Most subschemas accepted in one schema document."""

MAX_DOCUMENT_DEPTH: Final = 255
"""Most objects and arrays nested anywhere in a schema document, counting the root, keyword or not
(jsonschema-rs compiles no deeper: past it, toolkit refuses the schema in its own words)."""

REGEX_BACKTRACK_LIMIT: Final = 100_000
"""Bound on regex backtracking in ``pattern``/``patternProperties`` (ReDoS)."""

DIALECT_2020_12: Final = "https://json-schema.org/draft/2020-12/schema"

# Dialects whose metaschemas jsonschema-rs carries; anything else would be fetched.
SUPPORTED_DIALECTS: Final = frozenset(
    {
        DIALECT_2020_12,
        DIALECT_2020_12 + "#",
        "https://json-schema.org/draft/2019-09/schema",
        "https://json-schema.org/draft/2019-09/schema#",
        "http://json-schema.org/draft-07/schema",
        "http://json-schema.org/draft-07/schema#",
        "http://json-schema.org/draft-06/schema",
        "http://json-schema.org/draft-06/schema#",
        "http://json-schema.org/draft-04/schema",
        "http://json-schema.org/draft-04/schema#",
    }
)


# Before 2019-09, "$ref" overrides every keyword beside it, "$id" included; draft-04 spells "$id" "id".
_REF_HIDES_SIBLINGS: Final = frozenset(
    dialect for dialect in SUPPORTED_DIALECTS if dialect.startswith("http://json-schema.org/draft-0")
)
_DRAFT_04: Final = frozenset({"http://json-schema.org/draft-04/schema", "http://json-schema.org/draft-04/schema#"})


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


_Trail = tuple[Any, Any] | None
"""Where a subschema sits: ``(parent trail, token)`` (a keyword, a name, a list index); pointers are
built only for messages."""


def _pointer(trail: _Trail) -> str:
    tokens: list[str] = []
    while trail is not None:
        trail, token = trail
        tokens.append(str(token))
    return "".join(f"/{_escape(token)}" for token in reversed(tokens))


_ONE, _LIST, _ONE_OR_LIST, _MAP, _MAP_OR_NAMES = range(5)
# What a keyword holding subschemas holds: one, a list, either, a name map, a name map of either
# a subschema or names.
_KIND: Final[dict[str, int]] = {
    **dict.fromkeys(SUBSCHEMA, _ONE),
    **dict.fromkeys(SUBSCHEMA_LIST, _LIST),
    **dict.fromkeys(SUBSCHEMA_OR_LIST, _ONE_OR_LIST),
    **dict.fromkeys(SUBSCHEMA_MAP, _MAP),
    **dict.fromkeys(SUBSCHEMA_MAP_OR_NAMES, _MAP_OR_NAMES),
}


def _data(value: dict[str, Any] | list[Any], allowed: int) -> tuple[bool, bool]:
    """Whether data (a default, an enum list, an unknown keyword's value) nests at most ``allowed``
    objects and arrays, counting itself (scalars are not a level); and whether it is certainly
    plain JSON (``_certainly_plain``), found in the same walk."""
    plain = True
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > allowed:
            return False, False
        if type(node) is dict:
            children = node.values()
            plain = plain and all(type(key) is str and key.isascii() for key in node)
        else:
            children = node
            plain = plain and type(node) is list
        for child in children:
            if isinstance(child, dict | list):
                stack.append((child, depth + 1))
            elif plain:
                plain = _certainly_plain(child)
    return True, plain


def _certainly_plain(value: Any) -> bool:
    """Whether a scalar is one whose JSON reads back as itself: a ``str`` (ASCII: no lone surrogate
    to trip the encoder), an ``int``, a ``bool``, ``None``, a finite ``float``, of these very types.
    ``False`` says "not certainly": ``_plain_json`` decides."""
    kind = type(value)
    if kind is str:
        return bool(value.isascii())
    if kind is float:
        return math.isfinite(value)
    return kind is int or kind is bool or value is None


def check_schema(
    schema: Any, *, what: str, assert_formats: bool = False, remember: bool = True
) -> jsonschema_rs.Validator:
    """Raise ``SchemaError`` unless ``schema`` is safe to advertise and to validate with.

    ``what`` names the schema in the message (for example ``"tool 'x': output schema"``).
    Checks, in one walk: subschema depth and count, JSON nesting, ``$schema`` dialects,
    same-document references; then validity against the dialect's metaschema. Returns the
    schema's compiled validator (see ``compile_validator``).

    A schema that passed is remembered by its exact value (``marshal``: types, key order and
    all), with its validator: many tools share an output schema (``list[Item]``), checked and
    compiled once. A refused schema, or one ``marshal`` cannot write, is not remembered; nor is
    one checked with ``remember=False`` (a component that keeps no compiled validator until it is
    used: an OpenAPI document's thousand schemas would otherwise stay compiled here).
    """
    key = _key(schema, assert_formats) if remember else None
    if key is not None and (validator := _CHECKED.get(key)) is not None:
        return validator
    validator = _check_schema(schema, what=what, assert_formats=assert_formats)
    assert validator is not None
    if key is not None:
        if len(_CHECKED) >= _CHECKED_MAX:
            _CHECKED.clear()
        _CHECKED[key] = validator
    return validator


# Schemas that passed check_schema, by marshal.dumps((schema, assert_formats)): their validators.
_CHECKED: dict[bytes, jsonschema_rs.Validator] = {}
_CHECKED_MAX: Final = 1024
# Schemas that passed check_uncompiled (same keys), not compiled yet.
_PASSED: set[bytes] = set()


def _key(schema: Any, assert_formats: bool) -> bytes | None:
    try:
        return marshal.dumps((schema, assert_formats))
    except ValueError:  # not plain data (a custom class somewhere): checked every time
        return None


def check_uncompiled(schema: Any, *, what: str, assert_formats: bool = False) -> None:
    """``check_schema``'s checks and refusals, in the same words, without compiling the validator.

    For schemas toolkit generated from type hints, whose validator only a call needs (``compiled``
    makes it then): a server of hundreds of tools starts without compiling them. What only the
    compiler would refuse that the checks let through is a regular expression (a ``pattern``, a
    ``patternProperties`` name), compiled here alone (once per process), or a value that is not
    JSON (bytes, a set, an ``int`` key: ``_plain_json``); either has the whole schema compiled, so
    the refusal is ``check_schema``'s, word for word.

    Generated schemas share their definitions: ``list[Customer]`` and ``Customer | None`` carry
    the same ``$defs`` entry, in fifty tools. Each definition is checked once (``_by_parts``);
    only what is the document's own (its root, its references, the totals) is checked each time.
    A document checked whole is remembered by its value, as ``check_schema`` remembers (a document
    with ``$defs`` costs less to check by parts than to write out whole for the lookup).
    """
    if _by_parts(schema, what):
        return
    key = _key(schema, assert_formats)
    if key is not None and (key in _PASSED or key in _CHECKED):
        return
    _check_schema(schema, what=what, assert_formats=assert_formats, regexes=[])
    if key is not None:
        if len(_PASSED) >= _CHECKED_MAX:
            _PASSED.clear()
        _PASSED.add(key)


# A document whose root says any of these (its dialect, its base URI) is checked whole.
_WHOLE_ONLY: Final = ("$schema", "$id", "id")
# Definitions mentioning any of these anywhere (a dialect, a resource, an anchor) are checked with
# their document: how they are read depends on the document around them.
_RESOURCE_KEYWORDS: Final = (b"$schema", b"$id", b"$anchor", b"$dynamicAnchor")


class _Definition:
    """What a checked ``$defs`` entry adds to any document holding it: its subschemas, its references."""

    __slots__ = ("count", "references")

    def __init__(self, count: int, references: tuple[tuple[str, str], ...]) -> None:
        self.count = count
        self.references = references


# Definitions that passed every check at their place in a document ("/$defs/NAME": subschema depth
# 1, JSON depth 2), by marshal.dumps of their value.
_DEFINITIONS: dict[bytes, _Definition] = {}


def _by_parts(schema: Any, what: str) -> bool:
    """Whether ``schema`` passes every check of ``check_uncompiled``, its ``$defs`` entries checked
    once per process. ``False`` says "check it whole" (it may well pass): it has no ``$defs``, a
    part is of a kind checked with its document only, or something failed, whose refusal the
    whole check then words exactly as always.

    The same checks, split: a definition sits at the same place in every document (``/$defs/NAME``),
    so its depths are the same; the metaschema validates each ``$defs`` entry against itself, as
    ``meta.validate`` does a definition alone; plain JSON is so part by part. What depends on the
    document (the subschema count, whether every reference lands) is checked per document.
    """
    defs = schema.get("$defs") if isinstance(schema, dict) else None
    if not isinstance(defs, dict) or not defs or any(keyword in schema for keyword in _WHOLE_ONLY):
        return False
    parts: list[_Definition] = []
    for name, definition in defs.items():
        part = _definition(definition, what) if type(name) is str and name.isascii() else None
        if part is None:
            return False
        parts.append(part)
    root = {keyword: value for keyword, value in schema.items() if keyword != "$defs"}
    regexes: list[Any] = []
    resources = _Resources(None)
    try:
        count, plain = _walk(schema, resources, what=what, regexes=regexes, start=(None, 0, 0), skip_defs=True)
        for part in parts:
            count += part.count
            resources.references.extend((keyword, value, DEFAULT_BASE, None) for keyword, value in part.references)
        if count > MAX_SUBSCHEMAS:
            return False
        resources.check_references(what)
        jsonschema_rs.meta.validate(root)
    except (SchemaError, jsonschema_rs.ValidationError, jsonschema_rs.ReferencingError, ValueError, TypeError):
        return False
    return (plain or _plain_json(root)) and all(_regex_compiles(regex) for regex in regexes)


def _definition(definition: Any, what: str) -> _Definition | None:
    """A ``$defs`` entry checked at its place (once per value), or ``None``: check the document whole.

    A class's definition ``corejson`` keeps is the very same object in every document holding it,
    and never changes once tidied (which it is before anything checks it): known by its identity
    first, without writing it out again.
    """
    shared = translated.kept(definition)
    if shared:
        by_identity = _KEPT_DEFINITIONS.get(id(definition))
        if by_identity is not None and by_identity[0] is definition:
            return by_identity[1]
    try:
        key = marshal.dumps(definition)
    except ValueError:
        return None
    known = _DEFINITIONS.get(key)
    if known is not None:
        if shared:
            _remember_kept(definition, known)
        return known
    if not isinstance(definition, dict) or any(keyword in key for keyword in _RESOURCE_KEYWORDS):
        return None
    regexes: list[Any] = []
    resources = _Resources(None)
    try:
        count, plain = _walk(definition, resources, what=what, regexes=regexes, start=((None, "$defs"), 1, 2))
        jsonschema_rs.meta.validate(definition)
    except (SchemaError, jsonschema_rs.ValidationError, jsonschema_rs.ReferencingError, ValueError, TypeError):
        return None
    if resources.by_uri or resources.anchors or not (plain or _plain_json(definition)):
        return None
    if not all(_regex_compiles(regex) for regex in regexes):
        return None
    known = _Definition(count, tuple((keyword, value) for keyword, value, _, _ in resources.references))
    if len(_DEFINITIONS) >= _DEFINITIONS_MAX:
        _DEFINITIONS.clear()
    _DEFINITIONS[key] = known
    if shared:
        _remember_kept(definition, known)
    return known


_DEFINITIONS_MAX: Final = 4096
# Kept definitions (``translated.kept``) that passed, by id(): (the definition itself, what it adds).
_KEPT_DEFINITIONS: dict[int, tuple[Any, _Definition]] = {}


def _remember_kept(definition: Any, known: _Definition) -> None:
    if len(_KEPT_DEFINITIONS) >= _DEFINITIONS_MAX:
        _KEPT_DEFINITIONS.clear()
    _KEPT_DEFINITIONS[id(definition)] = (definition, known)


def compiled(schema: Any, *, assert_formats: bool = False) -> jsonschema_rs.Validator:
    """The validator of a schema that passed ``check_uncompiled``: compiled once, shared by equal schemas."""
    key = _key(schema, assert_formats)
    validator = _CHECKED.get(key) if key is not None else None
    if validator is None:
        validator = compile_validator(schema, assert_formats=assert_formats)
        if key is not None:
            if len(_CHECKED) >= _CHECKED_MAX:
                _CHECKED.clear()
            _CHECKED[key] = validator
    return validator


def _plain_json(schema: Any) -> bool:
    """Whether ``schema`` is made of JSON values only (str keys, no bytes, sets, tuples, NaN, objects):
    what the compiler refuses besides a bad regex. It comes back equal from its JSON only then."""
    try:
        return bool(pydantic_core.from_json(pydantic_core.to_json(schema)) == schema)
    except (pydantic_core.PydanticSerializationError, ValueError, TypeError, RecursionError):
        return False


def _regex_compiles(regex: Any) -> bool:
    return isinstance(regex, str) and _compiles(regex)


@functools.lru_cache(maxsize=1024)
def _compiles(regex: str) -> bool:
    try:
        compile_validator({"pattern": regex})
    except (jsonschema_rs.ValidationError, ValueError, TypeError):
        return False
    return True


def _check_schema(
    schema: Any, *, what: str, assert_formats: bool, regexes: list[Any] | None = None
) -> jsonschema_rs.Validator | None:
    """The checks, then the compiled validator; with ``regexes`` (a list), the regular expressions
    collected into it and compiled alone, the schema compiled only if one fails (and ``None``)."""
    if not isinstance(schema, dict):
        raise SchemaError(f"{what} must be a JSON object (a dict), not {type(schema).__name__}")
    resources = _Resources(schema.get("$schema"))
    plain = _walk(schema, resources, what=what, regexes=regexes, start=(None, 0, 0))[1]
    resources.check_references(what)

    # Anything but a ValidationError from either step (a set or bytes where JSON belongs, ...) is
    # still the schema's fault: refused in toolkit's words, never a raw exception at registration.
    unusable = (jsonschema_rs.ReferencingError, ValueError, TypeError)
    try:
        jsonschema_rs.meta.validate(schema)
    except jsonschema_rs.ValidationError as exc:
        pointer = "/" + "/".join(_escape(str(part)) for part in exc.instance_path)
        raise SchemaError(f"{what} is not a valid JSON Schema at '{pointer}': {exc.message}", pointer=pointer) from None
    except unusable as exc:
        raise SchemaError(f"{what} cannot be compiled: {exc}") from None
    if regexes is not None and (plain or _plain_json(schema)) and all(_regex_compiles(regex) for regex in regexes):
        return None
    try:
        return compile_validator(schema, assert_formats=assert_formats)
    except (jsonschema_rs.ValidationError, *unusable) as exc:
        raise SchemaError(f"{what} cannot be compiled: {getattr(exc, 'message', exc)}") from None


def _walk(
    schema: Any,
    resources: _Resources,
    *,
    what: str,
    regexes: list[Any] | None,
    start: tuple[_Trail, int, int],
    skip_defs: bool = False,
) -> tuple[int, bool]:
    """The walk of the checks: subschema depth and count, JSON nesting, dialects, the references and
    resources (into ``resources``), the regular expressions (into ``regexes``). ``start``: where
    ``schema`` sits (its trail, subschema depth, JSON depth); ``skip_defs``: leave the root's
    ``$defs`` entries out (checked on their own). The number of subschemas walked, and whether every
    key and value walked is certainly plain JSON (``_certainly_plain``; else ``_plain_json`` decides).

    One pass over each subschema's keywords: the checks of its own values, then its subschemas
    pushed (in the order of its keywords), as ``_children`` yields them. It runs over every
    schema a server registers, so it is written for speed.
    """
    count = 0
    plain = True  # every key and value certainly plain JSON (``_certainly_plain``) so far
    id_keyword = resources.id_keyword
    references = resources.references
    trail, depth, json_depth = start
    # (subschema, where it sits, subschema depth, JSON depth, base URI of the resource around it)
    stack: list[tuple[Any, _Trail, int, int, str]] = [(schema, trail, depth, json_depth, DEFAULT_BASE)]
    push = stack.append
    while stack:
        node, trail, depth, json_depth, base = stack.pop()
        count += 1
        if count > MAX_SUBSCHEMAS:
            raise SchemaError(f"{what} has more than {MAX_SUBSCHEMAS} subschemas; split it or simplify it")
        # (64 subschemas are at most 128 JSON levels: within MAX_DOCUMENT_DEPTH, checked on data below)
        if depth > MAX_DEPTH:
            pointer = _pointer(trail)
            raise SchemaError(f"{what} nests subschemas deeper than {MAX_DEPTH} levels at '{pointer}'", pointer=pointer)
        if node is True or node is False:
            continue
        if not isinstance(node, dict):
            pointer = _pointer(trail)
            raise SchemaError(
                f"{what} has a subschema at '{pointer}' that is neither an object nor a boolean", pointer=pointer
            )
        if trail is None or id_keyword in node:
            base = resources.enter(node, trail, base, what)
        skip = skip_defs and node is schema
        deeper = depth + 1
        plain = plain and type(node) is dict
        for keyword, value in node.items():
            plain = plain and type(keyword) is str and keyword.isascii()
            kind = _KIND.get(keyword)
            if kind is not None:  # subschemas: pushed, walked in turn
                here = (trail, keyword)
                if kind == _ONE or (kind == _ONE_OR_LIST and not isinstance(value, list)):
                    push((value, here, deeper, json_depth + 1, base))  # one JSON level down ("items": {...})
                elif kind in (_LIST, _ONE_OR_LIST):
                    plain = plain and type(value) is list
                    if isinstance(value, list):
                        for index, item in enumerate(value):
                            push((item, (here, index), deeper, json_depth + 2, base))
                elif skip and keyword == "$defs":
                    pass  # checked on their own
                elif isinstance(value, dict):  # a name map: two levels
                    plain = plain and type(value) is dict
                    if kind == _MAP:
                        if keyword == "patternProperties" and regexes is not None:
                            regexes.extend(value)
                        for name, item in value.items():
                            plain = plain and type(name) is str and name.isascii()
                            push((item, (here, name), deeper, json_depth + 2, base))
                    else:  # draft-07 "dependencies": a subschema, or a list of names (data)
                        plain = False  # rare: left to _plain_json
                        for name, item in value.items():
                            if isinstance(item, dict | bool):
                                push((item, (here, name), deeper, json_depth + 2, base))
                else:
                    plain = False
                continue
            if plain and not isinstance(value, dict | list):
                plain = _certainly_plain(value)
            if keyword == "pattern" and regexes is not None:
                regexes.append(value)
            if keyword in REFERENCE_KEYWORDS:
                if not isinstance(value, str):
                    raise _elsewhere(what, keyword, value, trail, None)
                references.append((keyword, value, base, trail))
            elif keyword == "$schema" and (not isinstance(value, str) or value not in SUPPORTED_DIALECTS):
                pointer = _pointer(trail)
                raise SchemaError(
                    f"{what} declares an unsupported dialect $schema={value!r} at '{pointer or '/'}'; "
                    f"use {DIALECT_2020_12!r} (the default) or a draft toolkit knows",
                    pointer=pointer,
                )
            elif keyword in ("$anchor", "$dynamicAnchor") and isinstance(value, str):
                resources.anchors.add((base, value))
            # Deliberately inside data: the values of DATA_KEYWORDS (and of unknown keywords) are
            # never walked as schemas, but the JSON nesting bound is on the whole document. This
            # node is container number json_depth + 1; its value would be the next one.
            elif isinstance(value, dict | list):
                deep_enough, plain_data = _data(value, MAX_DOCUMENT_DEPTH - json_depth - 1)
                if not deep_enough:
                    raise SchemaError(f"{what} is nested deeper than {MAX_DOCUMENT_DEPTH} levels")
                plain = plain and plain_data
    return count, plain


class _Resources:
    """The schema resources of one document, by absolute URI; their anchors; the references to check.

    A reference resolves against the base URI of the resource it sits in (the nearest ``$id``
    around it, resolved against those above: 2020-12 Core §8.2.1, §8.2.3) and must land on a
    schema of this document: a declared resource, a JSON Pointer within one, or one of its anchors.
    """

    __slots__ = ("anchors", "by_uri", "id_keyword", "ref_hides_siblings", "references")

    def __init__(self, dialect: Any) -> None:
        # (the walk refuses a $schema that is not a known dialect; it may not even be a string)
        self.id_keyword = "id" if isinstance(dialect, str) and dialect in _DRAFT_04 else "$id"
        self.ref_hides_siblings = isinstance(dialect, str) and dialect in _REF_HIDES_SIBLINGS
        self.by_uri: dict[str, tuple[Any, _Trail]] = {}
        """Each resource's root subschema and where it sits, by its absolute URI (no fragment)."""
        self.anchors: set[tuple[str, str]] = set()
        """(a resource's URI, an anchor name in it): ``$anchor``, ``$dynamicAnchor``, draft-07's ``$id: "#name"``."""
        self.references: list[tuple[str, str, str, _Trail]] = []
        """(keyword, reference, the base URI it resolves against, where it sits)."""

    def enter(self, node: dict[str, Any], trail: _Trail, base: str, what: str) -> str:
        """The base URI of the resource ``node`` belongs to: ``base``, unless ``node`` declares one."""
        identifier = node.get(self.id_keyword)
        if not isinstance(identifier, str) or (self.ref_hides_siblings and "$ref" in node):
            if trail is None:
                self.by_uri[base] = (node, trail)
            return base
        uri, _, fragment = identifier.partition("#")
        if uri or trail is None:
            base = resolve(base, uri)
            seen = self.by_uri.get(base)
            if seen is not None:
                pointer = _pointer(trail)
                raise SchemaError(
                    f"{what} declares the schema {base!r} twice, at '{_pointer(seen[1]) or '/'}' and "
                    f"'{pointer or '/'}'; give each its own {self.id_keyword}",
                    pointer=pointer,
                )
            self.by_uri[base] = (node, trail)
        if fragment and not fragment.startswith("/"):  # draft-07 and earlier: "$id": "#name" is an anchor
            self.anchors.add((base, urllib.parse.unquote(fragment)))
        return base

    def check_references(self, what: str) -> None:
        for keyword, reference, base, trail in self.references:
            uri, fragment = (
                (base, reference[1:]) if reference.startswith("#") else _defragment(resolve(base, reference))
            )
            resource = self.by_uri.get(uri)
            if resource is None:
                raise _elsewhere(what, keyword, reference, trail, uri)
            if not self._lands(resource[0], uri, urllib.parse.unquote(fragment)):
                pointer = _pointer(trail)
                raise SchemaError(
                    f"{what} has a {reference!r} reference at '{pointer or '/'}' that points at nothing in the schema",
                    pointer=pointer,
                )

    def _lands(self, resource: Any, uri: str, fragment: str) -> bool:
        """Whether ``fragment`` ("", "/json/pointer" or an anchor name) names a schema in the resource ``uri``."""
        if not fragment:
            return True
        if not fragment.startswith("/"):
            return (uri, fragment) in self.anchors
        node = resource
        for raw in fragment[1:].split("/"):
            token = raw.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and token in node:
                node = node[token]
            elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
                node = node[int(token)]
            else:
                return False
        return isinstance(node, dict | bool)


def _defragment(uri: str) -> tuple[str, str]:
    without, _, fragment = uri.partition("#")
    return without, fragment


def _elsewhere(what: str, keyword: str, reference: Any, trail: _Trail, uri: str | None) -> SchemaError:
    """The error for a reference to no schema of this document (toolkit never fetches one)."""
    pointer = _pointer(trail)
    resolved = (
        f" (that is {uri!r})"
        if uri is not None and uri != reference.partition("#")[0] and not uri.startswith(DEFAULT_BASE)
        else ""
    )
    return SchemaError(
        f"{what} has a non-local {keyword} {reference!r}{resolved} at '{pointer or '/'}'; only same-document "
        "references ('#/$defs/...', '#anchor', or the '$id' of a schema in this document) are allowed, and "
        "toolkit never fetches schemas. Copy the referenced schema into '$defs'",
        pointer=pointer,
    )


def compile_validator(schema: dict[str, Any] | bool, *, assert_formats: bool = False) -> jsonschema_rs.Validator:
    """A validator for ``schema`` that can never fetch anything.

    ``assert_formats`` makes ``format`` ("date-time", "uuid", ...) an assertion rather than an
    annotation, as 2020-12 allows: toolkit checks tool arguments this way, so an argument the
    advertised schema calls a "date" really is one.
    """
    return jsonschema_rs.validator_for(
        schema,
        offline=True,
        validate_formats=assert_formats,
        pattern_options=jsonschema_rs.FancyRegexOptions(backtrack_limit=REGEX_BACKTRACK_LIMIT),
    )


class Validates(Protocol):
    """What toolkit asks of a validator: a compiled ``jsonschema_rs.Validator``, or a ``LazyValidator``."""

    def is_valid(self, instance: Any) -> bool: ...

    def validate(self, instance: Any) -> None: ...

    def iter_errors(self, instance: Any) -> Iterator[jsonschema_rs.ValidationError]: ...


class LazyValidator:
    """A checked schema's validator, compiled on first use and kept from then on.

    For components that come by the thousand (an OpenAPI document's operations): each schema is
    still checked, and compiled once, when it is loaded (``check_schema``), but the compiled
    validator, tens of kilobytes of native memory for a schema with large ``$defs``, is kept only
    for the components that are used.
    """

    __slots__ = ("_assert_formats", "_compiled", "_schema")

    def __init__(self, schema: dict[str, Any], *, assert_formats: bool = False) -> None:
        self._schema = schema
        self._assert_formats = assert_formats
        self._compiled: jsonschema_rs.Validator | None = None

    def _validator(self) -> jsonschema_rs.Validator:
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = compile_validator(self._schema, assert_formats=self._assert_formats)
        return compiled

    def is_valid(self, instance: Any) -> bool:
        return self._validator().is_valid(instance)

    def validate(self, instance: Any) -> None:
        self._validator().validate(instance)

    def iter_errors(self, instance: Any) -> Iterator[jsonschema_rs.ValidationError]:
        return self._validator().iter_errors(instance)


MAX_ERROR_TEXT: Final = 300
"""Longest text kept of one validation message (they quote the offending value)."""


def describe_errors(validator: Validates, instance: Any, *, root: str, limit: int = 5) -> list[str]:
    """Human-readable validation errors, each prefixed by where in ``instance`` it is."""
    messages: list[str] = []
    errors: Iterable[jsonschema_rs.ValidationError]
    if limit == 1:  # iter_errors computes every error before yielding one; validate() stops at the first
        try:
            validator.validate(instance)
            errors = ()
        except jsonschema_rs.ValidationError as first:
            errors = (first,)
    else:
        errors = validator.iter_errors(instance)
    for error in errors:
        path = "/".join(str(part) for part in error.instance_path)
        where = f"{root}/{path}" if path else root
        text = error.message
        if len(text) > MAX_ERROR_TEXT:  # the quoted value comes first, the reason last: keep both ends
            text = f"{text[: MAX_ERROR_TEXT // 3]}…{text[-(MAX_ERROR_TEXT * 2 // 3) :]}"
        messages.append(f"{where[:MAX_ERROR_TEXT]}: {text}")
        if len(messages) >= limit:
            messages.append("(more errors omitted)")
            break
    return messages
