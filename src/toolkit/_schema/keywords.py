"""The JSON Schema keyword tables, written once for every walker in the wing.

A walker (the registration checks, the ``$ref`` rewriters and counters, the post-processing
of generated schemas, the ``x-mcp-header`` scan) has to know three things about a keyword:
whether its value holds subschemas (and in what shape), whether it is a reference, and
whether it is instance data that must never be read as a schema. Those answers live here
and nowhere else, so the walkers cannot disagree.

Inside a schema object the keys are keywords; inside the object value of a "name map"
(``properties``, ``$defs``, ...) the keys are names chosen by the schema's author. A
property called ``"default"`` is a subschema like any other: walkers open name maps with
``children`` (or ``NAME_MAPS``) so a name is never mistaken for a keyword.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final

DATA_KEYWORDS: Final = frozenset({"const", "enum", "default", "examples"})
"""Keywords whose values are instances (JSON data), never schemas.

JSON Schema 2020-12 Validation: ``enum``/``const`` (§6.1.2, §6.1.3) hold values an instance
is compared with, and ``default``/``examples`` (meta-data, §9.2, §9.5) hold example or
default instances. Their contents are plain JSON: a ``{"$ref": "#/$defs/X"}`` inside them is
a value, not a reference, and is neither followed, counted, rewritten nor tidied. Core
§9.4.2 ("References to Possible Non-Schemas") makes a reference into such a value undefined
behaviour, so no walker has to treat one as a schema either.
"""

REFERENCE_KEYWORDS: Final = frozenset({"$ref", "$dynamicRef", "$recursiveRef"})
"""Keywords whose string value is a URI reference to another schema.

``$ref`` and ``$dynamicRef`` are 2020-12 (Core §8.2.3); ``$recursiveRef`` is 2019-09, still
accepted under that draft's ``$schema``.
"""

SUBSCHEMA: Final = frozenset(
    {
        "additionalProperties",
        "additionalItems",
        "contains",
        "contentSchema",
        "else",
        "if",
        "not",
        "propertyNames",
        "then",
        "unevaluatedItems",
        "unevaluatedProperties",
    }
)
"""Keywords whose value is one subschema."""

SUBSCHEMA_LIST: Final = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
"""Keywords whose value is a list of subschemas."""

SUBSCHEMA_MAP: Final = frozenset({"$defs", "definitions", "dependentSchemas", "patternProperties", "properties"})
"""Keywords whose value is an object of name → subschema."""

SUBSCHEMA_OR_LIST: Final = frozenset({"items"})
"""One subschema (2020-12), or a list of them (draft 2019-09 and earlier: tuple validation)."""

SUBSCHEMA_MAP_OR_NAMES: Final = frozenset({"dependencies"})
"""Draft-07 and earlier: name → a subschema, or → a list of property names (data)."""

SCHEMA_KEYWORDS: Final = SUBSCHEMA | SUBSCHEMA_LIST | SUBSCHEMA_MAP | SUBSCHEMA_OR_LIST | SUBSCHEMA_MAP_OR_NAMES
"""Every keyword whose value holds subschemas."""

NAME_MAPS: Final = SUBSCHEMA_MAP | SUBSCHEMA_MAP_OR_NAMES
"""Keywords whose object value is keyed by names, not keywords."""


def children(node: Mapping[str, Any], *, skip: frozenset[str] = DATA_KEYWORDS) -> Iterator[Any]:
    """The values under the schema object ``node`` that a walker looking for schemas visits.

    Every keyword's value except those in ``skip`` (the data keywords unless told otherwise),
    with name maps opened: ``{"properties": {"default": S}}`` yields ``S``, never a map whose
    ``"default"`` key would look like the keyword. Other values come as they are (a subschema,
    a list, or an unknown keyword's value), for the walker to descend into in its own way.
    """
    for keyword, value in node.items():
        if keyword in skip:
            continue
        if keyword in NAME_MAPS and isinstance(value, dict):
            yield from value.values()
        else:
            yield value


def references(node: Any, found: list[str]) -> None:
    """Append every reference in the schema ``node`` to ``found`` (none in data, whatever it looks like)."""
    if isinstance(node, dict):
        for keyword in REFERENCE_KEYWORDS:
            value = node.get(keyword)
            if isinstance(value, str):
                found.append(value)
        for child in children(node):
            references(child, found)
    elif isinstance(node, list):
        for item in node:
            references(item, found)
