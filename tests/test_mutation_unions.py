"""Exact decisions of ``_schema/unions`` where mutation testing found the other tests lenient.

``schemas_disjoint`` decides whether a union is advertised as ``oneOf`` (no value matches two
branches) or ``anyOf``; ``is_object_schema`` whether a legacy client gets a schema as it is or
wrapped in ``{"result": ...}``. A wrong "disjoint" makes a client reject valid values; a wrong
"object" sends legacy clients a schema they refuse. Each case below is one that a changed line
in ``src/toolkit/_schema/unions.py`` decided the other way without any other fast test failing
(``scripts/mutate src/toolkit/_schema/unions.py``; docs/contributing.md).
"""

from __future__ import annotations

from typing import Any

import pytest

from toolkit._schema.unions import is_object_schema, schemas_disjoint

OBJECT_WITH_A = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}


def tagged(tag: str | dict[str, Any]) -> dict[str, Any]:
    """An object requiring ``kind``: the constant ``tag``, or the subschema ``tag``."""
    kind = {"const": tag} if isinstance(tag, str) else tag
    return {"type": "object", "properties": {"kind": kind}, "required": ["kind"]}


@pytest.mark.parametrize(
    ("left", "right", "disjoint"),
    [
        # Values: JSON Schema compares numbers by value and objects by content, not key order.
        pytest.param({"const": 1}, {"const": 1.0}, False, id="1 equals 1.0"),
        pytest.param({"const": 1.5}, {"const": 2.5}, True, id="different numbers"),
        pytest.param({"enum": [{"a": 1, "b": 2}]}, {"enum": [{"b": 2, "a": 1}]}, False, id="same object"),
        pytest.param({"enum": [[1]]}, {"enum": [[2]]}, True, id="different arrays"),
        pytest.param({"const": "a"}, {"const": "b"}, True, id="different strings"),
        pytest.param({"enum": ["a", None]}, {"const": None}, False, id="both allow null"),
        # The JSON type of a listed value, against a declared type.
        pytest.param({"type": "null"}, {"const": None}, False, id="null"),
        pytest.param({"type": "boolean"}, {"const": True}, False, id="boolean"),
        pytest.param({"type": "integer"}, {"const": 2}, False, id="integer"),
        pytest.param({"type": "integer"}, {"const": 2.0}, False, id="2.0 is an integer"),
        pytest.param({"type": "integer"}, {"const": 2.5}, True, id="2.5 is not an integer"),
        pytest.param({"type": "number"}, {"const": 3}, False, id="a number type accepts integers"),
        pytest.param({"type": "number"}, {"const": 2.5}, False, id="a number type accepts 2.5"),
        pytest.param({"type": "number"}, {"type": "string"}, True, id="number and string"),
        pytest.param({"type": ["string", "integer"]}, {"type": "boolean"}, True, id="a list of types"),
        pytest.param({"type": ["string", "integer"]}, {"type": "number"}, False, id="a list of types that meets"),
        pytest.param({"type": "string"}, {"const": "s"}, False, id="string"),
        pytest.param({"type": "array"}, {"const": [1]}, False, id="array"),
        pytest.param({"type": "object"}, {"const": {"k": 1}}, False, id="object"),
        pytest.param({"type": "string", "enum": ["a", 1]}, {"type": "integer"}, True, id="type narrows enum"),
        # Objects: a property one side requires and the other forbids.
        pytest.param(OBJECT_WITH_A, {"type": "object", "properties": {"a": False}}, True, id="property false"),
        pytest.param(OBJECT_WITH_A, {"type": "object", "properties": {"a": True}}, False, id="property true"),
        pytest.param(
            OBJECT_WITH_A,
            {"type": "object", "properties": {"b": {}}, "additionalProperties": False},
            True,
            id="additionalProperties false",
        ),
        pytest.param(
            OBJECT_WITH_A,
            {"type": "object", "patternProperties": {"^a": {}}, "additionalProperties": False},
            False,
            id="patternProperties may allow it",
        ),
        pytest.param(
            {"type": "object", "required": ["a"]}, {"type": "object", "required": ["a"]}, False, id="no properties"
        ),
        # A property both require, with values or types that never meet (a discriminator).
        pytest.param(tagged("cat"), tagged("dog"), True, id="discriminator"),
        pytest.param(tagged("cat"), {**tagged("dog"), "required": []}, False, id="a tag the other may leave out"),
        pytest.param(tagged("cat"), tagged({"type": "string"}), False, id="a tag against any string"),
        pytest.param(tagged({"type": "integer"}), tagged({"type": "string"}), True, id="tags of different types"),
        pytest.param(tagged({"type": "string"}), tagged({"type": "string"}), False, id="tags of one type"),
        # Booleans: false matches nothing, true everything.
        pytest.param(False, {}, True, id="false against anything"),
        pytest.param(True, {"type": "string"}, False, id="true against a string"),
        # Only two object schemas are compared property by property: "required" alone allows non-objects.
        pytest.param({"required": ["a"]}, {"type": "object", "properties": {"a": False}}, False, id="required alone"),
    ],
)
def test_disjoint(left: Any, right: Any, disjoint: bool) -> None:
    assert schemas_disjoint(left, right, {}) is disjoint
    assert schemas_disjoint(right, left, {}) is disjoint


def test_references_are_followed_inside_unions_and_properties() -> None:
    defs = {"Cat": {"const": "cat"}, "Dog": {"const": "dog"}, "Text": {"type": "string"}, "Count": {"type": "integer"}}
    assert schemas_disjoint({"anyOf": [{"$ref": "#/$defs/Text"}]}, {"type": "integer"}, defs) is True
    assert schemas_disjoint({"type": "integer"}, {"anyOf": [{"$ref": "#/$defs/Text"}]}, defs) is True
    assert schemas_disjoint(tagged({"$ref": "#/$defs/Cat"}), tagged({"$ref": "#/$defs/Dog"}), defs) is True
    assert schemas_disjoint(tagged({"$ref": "#/$defs/Text"}), tagged({"$ref": "#/$defs/Count"}), defs) is True
    assert schemas_disjoint(tagged({"$ref": "#/$defs/Cat"}), tagged({"$ref": "#/$defs/Text"}), defs) is False


def test_a_reference_to_false_matches_nothing() -> None:
    assert schemas_disjoint({"$ref": "#/$defs/never"}, {"type": "string"}, {"never": False}) is True


def test_required_next_to_a_reference_adds_to_the_targets() -> None:
    defs = {"A": {"type": "object", "properties": {"a": {}}, "required": ["a"]}}
    left = {"$ref": "#/$defs/A", "required": ["b"]}
    assert schemas_disjoint(left, {"type": "object", "properties": {"a": False}}, defs) is True
    assert schemas_disjoint(left, {"type": "object", "properties": {"b": False}}, defs) is True
    assert schemas_disjoint(left, {"type": "object", "properties": {"c": False}}, defs) is False


def chain(length: int) -> dict[str, Any]:
    """A root ``$ref`` through ``length`` definitions, the last an object."""
    defs: dict[str, Any] = {f"d{index}": {"$ref": f"#/$defs/d{index + 1}"} for index in range(1, length)}
    defs[f"d{length}"] = {"type": "object"}
    return {"$ref": "#/$defs/d1", "$defs": defs}


def nested(levels: int) -> dict[str, Any]:
    """An object schema inside ``levels`` single-branch ``anyOf``s."""
    schema: dict[str, Any] = {"type": "object"}
    for _ in range(levels):
        schema = {"anyOf": [schema]}
    return schema


@pytest.mark.parametrize(
    ("schema", "is_object"),
    [
        pytest.param(True, False, id="true"),
        pytest.param(False, False, id="false"),
        pytest.param({"anyOf": [False, {"type": "object"}]}, True, id="a false branch adds no type"),
        pytest.param({"anyOf": [True, {"type": "object"}]}, False, id="a true branch allows every type"),
        pytest.param({"anyOf": [{"type": "string"}, {"type": "object"}]}, False, id="every branch counts"),
        pytest.param(
            {"type": "object", "anyOf": [{"type": "object"}, {"type": "string"}]}, True, id="type and anyOf both hold"
        ),
        pytest.param({"type": ["object", "null"], "enum": [{"a": 1}]}, True, id="enum narrows the types"),
        pytest.param({"type": ["object", "null"], "const": {"a": 1}}, True, id="const narrows the types"),
        pytest.param({"const": {"a": 1}}, True, id="const alone"),
        pytest.param({"enum": [{"a": 1}, None]}, False, id="enum with null"),
        # Bounds: 32 references followed, 16 levels of anyOf/oneOf looked into.
        pytest.param(chain(32), True, id="32 references"),
        pytest.param(chain(33), False, id="33 references"),
        pytest.param({"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/a"}}}, False, id="a reference loop"),
        pytest.param(nested(16), True, id="16 levels"),
        pytest.param(nested(17), False, id="17 levels"),
    ],
)
def test_is_object_schema(schema: Any, is_object: bool) -> None:
    assert is_object_schema(schema) is is_object
