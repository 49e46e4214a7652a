"""Schemas are untrusted input too (ARCHITECTURE §5, SEP-2106 "Security Implications").

Every schema, generated or hand-written, input or output, is checked when the tool is
registered: valid against its dialect's metaschema, same-document references only, subschemas
at most 64 deep and at most 10,000 of them. A failure raises ``toolkit.SchemaError`` naming the
tool and the JSON Pointer of the offending place. Nothing is ever fetched: a canary HTTP server
on 127.0.0.1 counts every request toolkit might make and must count none.
"""

from __future__ import annotations

import re
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any

import jsonschema_rs
import pytest
from pydantic import WithJsonSchema
from tests.support.canary import Canary, serve_canary
from tests.wire import assert_valid

from toolkit import RegistrationError, SchemaError, Server
from toolkit._schema import keywords
from toolkit._schema.checks import check_schema
from toolkit._schema.uris import resolve
from toolkit.testing import Client

DIALECT = "https://json-schema.org/draft/2020-12/schema"


# --- the canary -------------------------------------------------------------------------------


@pytest.fixture
def canary() -> Iterator[Canary]:
    """An HTTP server on 127.0.0.1 that serves a schema to anyone who asks, and counts them."""
    with serve_canary() as running:
        yield running


def test_the_canary_counts_hits(canary: Canary) -> None:
    with urllib.request.urlopen(f"{canary.url}/probe.json", timeout=5) as response:
        assert response.read() == b'{"type": "string"}'
    assert canary.hits == ["GET /probe.json"]


# --- helpers ---------------------------------------------------------------------------------


def register(server: Server, *, name: str = "probe", **options: Any) -> Any:
    """Register a tool with hand-written schemas (``input_schema=`` and/or ``output_schema=``)."""

    def probe(**arguments: Any) -> Any:
        return arguments.get("value", [])

    def probe_output(value: Any = None) -> Any:
        return value

    return server.add_tool(probe if "input_schema" in options else probe_output, name=name, **options)


def annotated(fn: Callable[..., Any], **hints: Any) -> Callable[..., Any]:
    """``fn`` with these type hints (hints built at run time, which a string annotation cannot name)."""
    fn.__annotations__ = hints
    return fn


def input_schema(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


def nest(levels: int) -> dict[str, Any]:
    """A subschema with ``levels`` subschemas nested below it through ``items``."""
    schema: dict[str, Any] = {"type": "integer"}
    for _ in range(levels):
        schema = {"type": "array", "items": schema}
    return schema


def assert_schema_error(error: pytest.ExceptionInfo[SchemaError], tool: str, pointer: str | None) -> None:
    message = str(error.value)
    assert f"'{tool}'" in message, message
    if pointer is not None:
        assert error.value.pointer == pointer, message
        assert pointer in message, message


# --- metaschema validity ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("where", "schema", "pointer"),
    [
        pytest.param("input_schema", input_schema(x={"type": "strin"}), "/properties/x/type", id="input: bad type"),
        pytest.param(
            "input_schema", input_schema(x={"minLength": -1}), "/properties/x/minLength", id="input: minLength"
        ),
        pytest.param("input_schema", {"type": "object", "required": "x"}, "/required", id="input: required not a list"),
        pytest.param("output_schema", {"type": "array", "minItems": -1}, "/minItems", id="output: minItems"),
        pytest.param("output_schema", {"oneOf": {"type": "string"}}, "/oneOf", id="output: oneOf not a list"),
        pytest.param(
            "output_schema", {"$defs": {"a": {"pattern": 5}}}, "/$defs/a/pattern", id="output: pattern not a string"
        ),
    ],
)
def test_a_schema_invalid_against_the_2020_12_metaschema_is_refused(
    where: str, schema: dict[str, Any], pointer: str
) -> None:
    assert not jsonschema_rs.meta.is_valid({"$schema": DIALECT, **schema})
    server = Server("checks")
    with pytest.raises(SchemaError) as error:
        register(server, name="bad_tool", **{where: schema})
    assert_schema_error(error, "bad_tool", pointer)
    assert ("input schema" if where == "input_schema" else "output schema") in str(error.value)
    assert "bad_tool" not in server.tools


def test_a_generated_schema_is_checked_too() -> None:
    server = Server("checks")

    def typo(x: Annotated[int, WithJsonSchema({"type": "integr"})]) -> None:
        return None

    def typo_out() -> Annotated[int, WithJsonSchema({"type": "integr"})]:
        return 1

    with pytest.raises(SchemaError) as error:
        server.add_tool(typo)
    assert_schema_error(error, "typo", "/properties/x/type")
    with pytest.raises(SchemaError) as error:
        server.add_tool(typo_out)
    assert_schema_error(error, "typo_out", "/type")
    assert server.tools == {}


def test_an_older_draft_named_by_schema_is_checked_against_its_own_metaschema() -> None:
    server = Server("checks")
    draft7 = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"x": {"$ref": "#/definitions/x"}},
        "definitions": {"x": {"type": "string"}},
    }
    register(server, name="draft7", input_schema=draft7)
    with pytest.raises(SchemaError) as error:
        register(server, name="bad_draft7", input_schema={**draft7, "definitions": {"x": {"type": "strin"}}})
    assert_schema_error(error, "bad_draft7", "/definitions/x/type")


def test_an_input_schema_must_be_an_object_schema() -> None:
    server = Server("checks")
    for name, schema in [
        ("array", {"type": "array"}),
        ("untyped", {"properties": {}}),
        ("listed", {"type": ["object"]}),
    ]:
        with pytest.raises(SchemaError, match=rf"'{name}'.*\"type\": \"object\""):
            register(server, name=name, input_schema=schema)
    assert server.tools == {}


@pytest.mark.parametrize("schema", [True, False, [{"type": "object"}], "object"], ids=repr)
@pytest.mark.parametrize("where", ["input_schema", "output_schema"])
def test_a_schema_that_is_not_a_json_object_is_a_schema_error(where: str, schema: Any) -> None:
    # Boolean schemas are valid JSON Schema, but not as an MCP inputSchema/outputSchema (both
    # are objects in every version of the spec's schema.json).
    server = Server("checks")
    with pytest.raises(SchemaError, match=r"'not_an_object'"):
        register(server, name="not_an_object", **{where: schema})
    assert server.tools == {}


# --- references --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("keyword", "reference"),
    [
        pytest.param("$ref", "{canary}/x.json", id="http $ref"),
        pytest.param("$ref", "{canary}/x.json#/$defs/y", id="http $ref with pointer"),
        pytest.param("$ref", "other.json", id="relative $ref"),
        pytest.param("$ref", "other.json#/$defs/y", id="relative $ref with pointer"),
        pytest.param("$ref", "file:///etc/passwd", id="file $ref"),
        pytest.param("$ref", "urn:example:schema", id="urn $ref"),
        pytest.param("$dynamicRef", "{canary}/meta#node", id="http $dynamicRef"),
        pytest.param("$dynamicRef", "other.json#node", id="relative $dynamicRef"),
    ],
)
@pytest.mark.parametrize("where", ["input_schema", "output_schema"])
def test_only_same_document_references(canary: Canary, where: str, keyword: str, reference: str) -> None:
    reference = reference.format(canary=canary.url)
    schema = input_schema(x={keyword: reference}) if where == "input_schema" else {"items": {keyword: reference}}
    server = Server("checks")
    with pytest.raises(SchemaError) as error:
        register(server, name="remote", **{where: schema})
    assert_schema_error(error, "remote", "/properties/x" if where == "input_schema" else "/items")
    assert reference in str(error.value)
    assert canary.hits == []


# Every reference keyword, under a dialect that defines it. Written out here rather than read
# from toolkit's keyword table, so that a keyword dropped from the table fails a case instead of
# silently taking its case away with it.
REFERENCE_KEYWORDS_BY_DIALECT = [
    pytest.param(DIALECT, "$ref", id="2020-12 $ref"),
    pytest.param(DIALECT, "$dynamicRef", id="2020-12 $dynamicRef"),
    pytest.param("https://json-schema.org/draft/2019-09/schema", "$ref", id="2019-09 $ref"),
    pytest.param("https://json-schema.org/draft/2019-09/schema", "$recursiveRef", id="2019-09 $recursiveRef"),
    pytest.param("http://json-schema.org/draft-07/schema#", "$ref", id="draft-07 $ref"),
]


def test_every_reference_keyword_of_the_table_has_a_case() -> None:
    pinned = {param.values[1] for param in REFERENCE_KEYWORDS_BY_DIALECT}
    missing = keywords.REFERENCE_KEYWORDS - pinned
    assert not missing, f"reference keywords without a remote-reference case below: {sorted(missing)}"


@pytest.mark.parametrize(("dialect", "keyword"), REFERENCE_KEYWORDS_BY_DIALECT)
@pytest.mark.parametrize("where", ["input_schema", "output_schema"])
def test_a_remote_reference_is_refused_whatever_the_keyword(
    canary: Canary, where: str, dialect: str, keyword: str
) -> None:
    reference = f"{canary.url}/evil.json"
    if where == "input_schema":
        schema: dict[str, Any] = {"$schema": dialect, **input_schema(x={keyword: reference})}
    else:
        schema = {"$schema": dialect, "type": "array", "items": {keyword: reference}}
    server = Server("checks")
    with pytest.raises(SchemaError) as error:
        register(server, name="remote", **{where: schema})
    assert_schema_error(error, "remote", "/properties/x" if where == "input_schema" else "/items")
    assert f"non-local {keyword} {reference!r}" in str(error.value)
    assert "remote" not in server.tools, "a refused tool is never advertised"
    assert canary.hits == []


def test_references_hidden_in_defs_and_under_an_id_are_refused(canary: Canary) -> None:
    server = Server("checks")
    in_defs = {
        "type": "object",
        "properties": {"x": {"$ref": "#/$defs/a"}},
        "$defs": {"a": {"anyOf": [{"type": "string"}, {"$ref": f"{canary.url}/a.json"}]}},
    }
    with pytest.raises(SchemaError) as error:
        register(server, name="in_defs", input_schema=in_defs)
    assert_schema_error(error, "in_defs", "/$defs/a/anyOf/1")
    under_id = {"$id": f"{canary.url}/root.json", "type": "object", "properties": {"x": {"$ref": "sibling.json"}}}
    with pytest.raises(SchemaError) as error:
        register(server, name="under_id", input_schema=under_id)
    assert_schema_error(error, "under_id", "/properties/x")
    assert canary.hits == []


def test_a_generated_schema_with_a_remote_reference_is_refused(canary: Canary) -> None:
    server = Server("checks")

    def remote(x: str) -> None:
        return None

    hint = Annotated[str, WithJsonSchema({"$ref": f"{canary.url}/x.json"})]
    with pytest.raises(SchemaError) as error:
        server.add_tool(annotated(remote, x=hint))
    assert_schema_error(error, "remote", "/properties/x")
    assert canary.hits == []


@pytest.mark.parametrize("pointer", ["", "/properties/x"])
def test_an_unknown_dialect_is_refused_not_fetched(canary: Canary, pointer: str) -> None:
    dialect = f"{canary.url}/meta-schema"
    schema: dict[str, Any] = input_schema(x={"type": "string"})
    if pointer:
        schema["properties"]["x"]["$schema"] = dialect
    else:
        schema["$schema"] = dialect
    server = Server("checks")
    with pytest.raises(SchemaError) as error:
        register(server, name="dialect", input_schema=schema)
    assert_schema_error(error, "dialect", pointer)
    assert dialect in str(error.value)
    with pytest.raises(SchemaError):
        register(server, name="dialect_out", output_schema={"$schema": dialect, "type": "string"})
    assert canary.hits == []


def test_a_dangling_same_document_reference_is_refused_and_located(canary: Canary) -> None:
    # SEP-2106: a schema whose $ref cannot be resolved SHOULD be rejected, not treated as
    # permissive; the error names the place of the reference, like every other check.
    server = Server("checks")
    for name, reference in [("missing_pointer", "#/$defs/missing"), ("missing_anchor", "#nowhere")]:
        schema = {"$id": f"{canary.url}/root.json", **input_schema(x={"$ref": reference})}
        with pytest.raises(SchemaError) as error:
            register(server, name=name, input_schema=schema)
        assert_schema_error(error, name, "/properties/x")
    assert canary.hits == []


# --- references under a nested $id -----------------------------------------------------------------
# A "$ref" resolves against the base URI of the schema resource it sits in: the nearest "$id"
# around it, itself resolved against the ones above (RFC 3986 §5.2; 2020-12 Core §8.2.1, §8.2.3).
# Each must land on a schema of this document; nothing is fetched to find out.

ROOT_ID = "https://example.com/schemas/root.json"

# name: (schema, where the reference is, the reference)
REFUSED_UNDER_AN_ID: dict[str, tuple[dict[str, Any], str, str]] = {
    "a pointer dangling inside a nested resource, never referenced": (
        {
            "type": "object",
            "$defs": {"inner": {"$id": "https://example.com/inner.json", "items": {"$ref": "#/$defs/missing"}}},
        },
        "/$defs/inner/items",
        "#/$defs/missing",
    ),
    "a pointer that exists at the root but not in the nested resource it sits in": (
        {
            "$id": ROOT_ID,
            "$defs": {
                "shared": {"type": "integer"},
                "inner": {"$id": "inner.json", "items": {"$ref": "#/$defs/shared"}},
            },
        },
        "/$defs/inner/items",
        "#/$defs/shared",
    ),
    "an anchor of another resource": (
        {
            "$id": ROOT_ID,
            "$defs": {"leaf": {"$anchor": "leaf"}, "inner": {"$id": "inner.json", "items": {"$ref": "#leaf"}}},
        },
        "/$defs/inner/items",
        "#leaf",
    ),
    "a relative URI nothing declares": (
        {"$id": ROOT_ID, "$defs": {"inner": {"$id": "inner.json", "items": {"$ref": "other.json"}}}},
        "/$defs/inner/items",
        "other.json",
    ),
    "a relative URI that names a declared $id only when resolved against the wrong base": (
        {
            "$id": ROOT_ID,
            "$defs": {
                "a": {"$id": "a.json", "type": "integer"},
                "inner": {"$id": "nested/inner.json", "items": {"$ref": "a.json"}},  # nested/a.json
            },
        },
        "/$defs/inner/items",
        "a.json",
    ),
    "an absolute URI nothing declares": (
        {
            "$defs": {
                "inner": {"$id": "https://example.com/inner.json", "items": {"$ref": "https://example.com/x.json"}}
            }
        },
        "/$defs/inner/items",
        "https://example.com/x.json",
    ),
    "a URN nothing declares": (
        {"$id": "urn:example:root", "properties": {"x": {"$ref": "urn:example:missing"}}},
        "/properties/x",
        "urn:example:missing",
    ),
    "a pointer dangling in a declared resource named by URI": (
        {
            "$id": ROOT_ID,
            "properties": {"x": {"$ref": "inner.json#/$defs/missing"}},
            "$defs": {"i": {"$id": "inner.json"}},
        },
        "/properties/x",
        "inner.json#/$defs/missing",
    ),
    "an anchor missing from a declared resource named by URI": (
        {
            "$id": ROOT_ID,
            "properties": {"x": {"$ref": "inner.json#leaf"}},
            "$defs": {"leaf": {"$anchor": "leaf"}, "i": {"$id": "inner.json"}},
        },
        "/properties/x",
        "inner.json#leaf",
    ),
    "a $dynamicRef to an anchor of another resource": (
        {
            "$id": ROOT_ID,
            "$dynamicAnchor": "node",
            "$defs": {"inner": {"$id": "inner.json", "items": {"$dynamicRef": "#node"}}},
        },
        "/$defs/inner/items",
        "#node",
    ),
}


@pytest.mark.parametrize("where", ["input_schema", "output_schema"])
@pytest.mark.parametrize("case", list(REFUSED_UNDER_AN_ID))
def test_a_reference_under_a_nested_id_that_lands_nowhere_is_refused(canary: Canary, where: str, case: str) -> None:
    schema, pointer, reference = REFUSED_UNDER_AN_ID[case]
    if where == "input_schema":
        schema = {**schema, "type": "object"}
    with pytest.raises(SchemaError) as error:
        register(Server("checks"), name="nested", **{where: schema})
    assert_schema_error(error, "nested", pointer)
    assert repr(reference) in str(error.value)
    assert ("input schema" if where == "input_schema" else "output schema") in str(error.value)
    assert canary.hits == []


def test_an_id_declared_twice_is_refused() -> None:
    schema = {"$id": ROOT_ID, "$defs": {"a": {"$id": "a.json"}, "b": {"$id": "https://example.com/schemas/a.json"}}}
    with pytest.raises(SchemaError) as error:
        register(Server("checks"), name="twice", input_schema={**schema, "type": "object"})
    assert_schema_error(error, "twice", None)
    assert "'https://example.com/schemas/a.json'" in str(error.value)


# name: (schema, instances it accepts, instances it refuses): the validator toolkit compiles agrees
# with the resolution above on where each reference lands.
ACCEPTED_UNDER_AN_ID: dict[str, tuple[dict[str, Any], list[Any], list[Any]]] = {
    "a relative reference to a declared nested $id": (
        {"$id": ROOT_ID, "items": {"$ref": "item.json"}, "$defs": {"item": {"$id": "item.json", "type": "integer"}}},
        [[1, 2]],
        [["x"]],
    ),
    "an absolute reference to a declared nested $id": (
        {
            "$id": ROOT_ID,
            "items": {"$ref": "https://example.com/schemas/item.json"},
            "$defs": {"item": {"$id": "item.json", "type": "integer"}},
        },
        [[1]],
        [["x"]],
    ),
    "a nested $id resolved against a nested one, and '..'": (
        {
            "$id": ROOT_ID,
            "prefixItems": [{"$ref": "deep/er/item.json"}, {"$ref": "https://example.com/up.json"}],
            "$defs": {
                "dir": {
                    "$id": "deep/",
                    "$defs": {
                        "item": {"$id": "er/item.json", "type": "integer"},
                        "up": {"$id": "../../up.json", "type": "string"},
                    },
                }
            },
        },
        [[1, "a"]],
        [["a", "a"], [1, 1]],
    ),
    "without a root $id: a relative reference to a nested one": (
        {"items": {"$ref": "item.json"}, "$defs": {"item": {"$id": "item.json", "type": "integer"}}},
        [[1]],
        [["x"]],
    ),
    "a pointer inside the nested resource it sits in, not the root's": (
        {
            "$id": ROOT_ID,
            "items": {"$ref": "#/$defs/inner"},
            "$defs": {
                "shared": {"type": "string"},
                "inner": {"$id": "inner.json", "$ref": "#/$defs/shared", "$defs": {"shared": {"type": "integer"}}},
            },
        },
        [[1]],
        [["x"]],
    ),
    "a pointer into a nested resource, by its URI": (
        {
            "$id": ROOT_ID,
            "items": {"$ref": "inner.json#/$defs/small"},
            "$defs": {"inner": {"$id": "inner.json", "$defs": {"small": {"type": "integer", "maximum": 9}}}},
        },
        [[1]],
        [[10]],
    ),
    "a pointer from the root through a nested resource": (
        {
            "$id": ROOT_ID,
            "items": {"$ref": "#/$defs/inner/$defs/small"},
            "$defs": {"inner": {"$id": "inner.json", "$defs": {"small": {"type": "integer", "maximum": 9}}}},
        },
        [[1]],
        [[10]],
    ),
    "an anchor of a nested resource, from inside it and by its URI": (
        {
            "$id": ROOT_ID,
            "prefixItems": [{"$ref": "inner.json#small"}, {"$ref": "inner.json"}],
            "$defs": {
                "inner": {
                    "$id": "inner.json",
                    "items": {"$ref": "#small"},
                    "$defs": {"small": {"$anchor": "small", "type": "integer", "maximum": 9}},
                }
            },
        },
        [[1, [2, 3]]],
        [[10, []], [1, [10]]],
    ),
    "a $dynamicAnchor of a nested resource": (
        {
            "$id": ROOT_ID,
            "items": {"$ref": "tree.json"},
            "$defs": {
                "tree": {
                    "$id": "tree.json",
                    "$dynamicAnchor": "node",
                    "type": "object",
                    "properties": {"kids": {"type": "array", "items": {"$dynamicRef": "#node"}}},
                    "additionalProperties": False,
                }
            },
        },
        [[{"kids": [{"kids": []}]}]],
        [[{"kids": [{"leaves": 1}]}]],
    ),
    "a URN $id": (
        {
            "$id": "urn:example:root",
            "items": {"$ref": "urn:example:item"},
            "$defs": {"i": {"$id": "urn:example:item", "type": "integer"}},
        },
        [[1]],
        [["x"]],
    ),
}


@pytest.mark.parametrize("case", list(ACCEPTED_UNDER_AN_ID))
def test_a_reference_under_a_nested_id_that_lands_on_a_schema_is_accepted(canary: Canary, case: str) -> None:
    schema, valid, invalid = ACCEPTED_UNDER_AN_ID[case]
    validator = check_schema({"type": "array", **schema}, what="schema")
    for instance in valid:
        assert validator.is_valid(instance), instance
    for instance in invalid:
        assert not validator.is_valid(instance), instance
    register(Server("checks"), name="nested", output_schema={"type": "array", **schema})
    assert canary.hits == []


def test_a_refused_relative_reference_says_what_it_resolved_to() -> None:
    schema, _, _ = REFUSED_UNDER_AN_ID[
        "a relative URI that names a declared $id only when resolved against the wrong base"
    ]
    with pytest.raises(SchemaError) as error:
        register(Server("checks"), name="nested", output_schema=schema)
    assert (
        "non-local $ref 'a.json' (that is 'https://example.com/schemas/nested/a.json') at '/$defs/inner/items'"
        in str(error.value)
    )


# RFC 3986 §5.4: every example, normal and abnormal, against its base.
RFC_3986_BASE = "http://a/b/c/d;p?q"
RFC_3986_EXAMPLES = {
    "g:h": "g:h",
    "g": "http://a/b/c/g",
    "./g": "http://a/b/c/g",
    "g/": "http://a/b/c/g/",
    "/g": "http://a/g",
    "//g": "http://g",
    "?y": "http://a/b/c/d;p?y",
    "g?y": "http://a/b/c/g?y",
    "#s": "http://a/b/c/d;p?q#s",
    "g#s": "http://a/b/c/g#s",
    "g?y#s": "http://a/b/c/g?y#s",
    ";x": "http://a/b/c/;x",
    "g;x": "http://a/b/c/g;x",
    "g;x?y#s": "http://a/b/c/g;x?y#s",
    "": "http://a/b/c/d;p?q",
    ".": "http://a/b/c/",
    "./": "http://a/b/c/",
    "..": "http://a/b/",
    "../": "http://a/b/",
    "../g": "http://a/b/g",
    "../..": "http://a/",
    "../../": "http://a/",
    "../../g": "http://a/g",
    "../../../g": "http://a/g",
    "../../../../g": "http://a/g",
    "/./g": "http://a/g",
    "/../g": "http://a/g",
    "g.": "http://a/b/c/g.",
    ".g": "http://a/b/c/.g",
    "g..": "http://a/b/c/g..",
    "..g": "http://a/b/c/..g",
    "./../g": "http://a/b/g",
    "./g/.": "http://a/b/c/g/",
    "g/./h": "http://a/b/c/g/h",
    "g/../h": "http://a/b/c/h",
    "g;x=1/./y": "http://a/b/c/g;x=1/y",
    "g;x=1/../y": "http://a/b/c/y",
    "g?y/./x": "http://a/b/c/g?y/./x",
    "g?y/../x": "http://a/b/c/g?y/../x",
    "g#s/./x": "http://a/b/c/g#s/./x",
    "g#s/../x": "http://a/b/c/g#s/../x",
    "http:g": "http:g",
}


@pytest.mark.parametrize(("reference", "target"), RFC_3986_EXAMPLES.items())
def test_references_resolve_as_rfc_3986_says(reference: str, target: str) -> None:
    assert resolve(RFC_3986_BASE, reference) == target


async def test_nothing_is_fetched_while_registering_or_calling(canary: Canary, tmp_path: Path) -> None:
    (tmp_path / "x.json").write_text('{"type": "string"}')
    server = Server("checks")
    # Same-document references under an $id that names the canary: resolvable without fetching.
    under_id: dict[str, Any] = {
        "$schema": DIALECT,
        "$id": f"{canary.url}/schemas/root.json",
        "type": "object",
        "properties": {
            "tree": {"$ref": "#/$defs/tree"},
            "anchored": {"$ref": "#leaf"},
            "link": {"type": "string", "format": "uri"},
            "value": {},
        },
        "$defs": {
            "tree": {
                "$dynamicAnchor": "node",
                "type": "object",
                "properties": {"kids": {"type": "array", "items": {"$dynamicRef": "#node"}}},
                "additionalProperties": False,
            },
            "leaf": {"$anchor": "leaf", "type": "integer"},
        },
        "$vocabulary": {f"{canary.url}/vocab": False},
    }
    output: dict[str, Any] = {
        "$id": f"{canary.url}/schemas/out.json",
        "anyOf": [{"$ref": "#/$defs/any"}, {"type": "null"}],
        "$defs": {"any": {}},
    }
    register(server, name="under_id", input_schema=under_id, output_schema=output)

    @server.tool
    def echo(value: Any) -> Any:
        return value

    async with Client(server) as client:
        calls = [
            ("under_id", {"tree": {"kids": [{"kids": []}]}, "anchored": 1, "link": f"{canary.url}/link"}),
            ("under_id", {"tree": {"kids": [{"leaves": 1}]}}),
            ("under_id", {"anchored": "x"}),
            ("under_id", {"value": {"$ref": f"{canary.url}/in-arguments.json"}}),
            ("under_id", {"value": {"$schema": f"{canary.url}/meta", "$ref": f"file://{tmp_path}/x.json"}}),
            ("echo", {"value": {"$ref": f"{canary.url}/in-arguments.json", "$id": f"{canary.url}/id"}}),
        ]
        outcomes = []
        for name, arguments in calls:
            response = await client.request("tools/call", {"name": name, "arguments": arguments})
            assert_valid(response, client.protocol_version, method="tools/call")
            outcomes.append(bool(response["result"].get("isError")))
    assert outcomes == [False, True, True, False, False, False]
    assert canary.hits == []


async def test_unusual_references_are_refused_or_ignored_never_fetched(canary: Canary) -> None:
    server = Server("checks")
    unusual: dict[str, dict[str, Any]] = {
        # An absolute reference to a resource embedded in the same document.
        "embedded": {
            "$id": f"{canary.url}/schemas/root.json",
            "type": "object",
            "properties": {"x": {"$ref": f"{canary.url}/schemas/embedded.json"}},
            "$defs": {"embedded": {"$id": "embedded.json", "type": "boolean"}},
        },
        # A remote reference inside an unknown keyword: an annotation, never a schema to load.
        "annotation": {"type": "object", "x-see-also": {"$ref": f"{canary.url}/annotation.json"}},
        # A remote reference in data: const, enum, default and examples are values, not schemas.
        "data": {
            "type": "object",
            "properties": {
                "x": {
                    "const": {"$ref": f"{canary.url}/const.json"},
                    "default": {"$ref": f"{canary.url}/default.json"},
                    "examples": [{"$ref": f"{canary.url}/example.json"}],
                },
                "y": {"enum": [{"$ref": f"{canary.url}/enum.json"}]},
            },
        },
    }
    registered = []
    for name, schema in unusual.items():
        refused: SchemaError | None = None
        try:
            register(server, name=name, input_schema=schema)
        except SchemaError as error:
            refused = error
        if refused is None:
            registered.append(name)
        else:
            assert f"'{name}'" in str(refused)
    assert "data" in registered
    async with Client(server) as client:
        for name in registered:
            await client.call_tool(name, {"x": {"$ref": f"{canary.url}/const.json"}})
    assert canary.hits == []


# --- bounds: depth and size --------------------------------------------------------------------


@pytest.mark.parametrize("where", ["input_schema", "output_schema"])
def test_depth_64_is_accepted_and_65_refused(where: str) -> None:
    # Depth counts subschema edges from the root: in {"properties": {"x": S}}, S is at depth 1.
    def schema(levels_below_x: int) -> dict[str, Any]:
        return input_schema(x=nest(levels_below_x))

    server = Server("checks")
    register(server, name="deep_64", **{where: schema(63)})
    with pytest.raises(SchemaError) as error:
        register(server, name="deep_65", **{where: schema(64)})
    assert_schema_error(error, "deep_65", "/properties/x" + "/items" * 64)
    assert "64" in str(error.value)


APPLICATORS: list[Callable[[Any], Any]] = [
    lambda inner: {"anyOf": [inner]},
    lambda inner: {"allOf": [inner]},
    lambda inner: {"oneOf": [inner]},
    lambda inner: {"not": inner},
    lambda inner: {"if": inner},
    lambda inner: {"if": True, "then": inner},
    lambda inner: {"if": True, "else": inner},
    lambda inner: {"properties": {"a": inner}},
    lambda inner: {"additionalProperties": inner},
    lambda inner: {"patternProperties": {"^a": inner}},
    lambda inner: {"propertyNames": inner},
    lambda inner: {"dependentSchemas": {"a": inner}},
    lambda inner: {"unevaluatedProperties": inner},
    lambda inner: {"items": inner},
    lambda inner: {"prefixItems": [inner]},
    lambda inner: {"contains": inner},
    lambda inner: {"unevaluatedItems": inner},
    lambda inner: {"contentSchema": inner},
    lambda inner: {"$defs": {"a": inner}},
]


def chain(levels: int) -> Any:
    """``levels`` applicators, every kind in turn, around an innermost schema at depth ``levels``."""
    schema: Any = {"type": "string"}
    for index in range(levels):
        schema = APPLICATORS[index % len(APPLICATORS)](schema)
    return schema


def test_depth_counts_every_applicator() -> None:
    server = Server("checks")
    register(server, name="mixed_64", output_schema=chain(64))
    for shift in range(len(APPLICATORS)):
        rotated = APPLICATORS[shift:] + APPLICATORS[:shift]
        schema: Any = {"type": "string"}
        for index in range(65):
            schema = rotated[index % len(rotated)](schema)
        with pytest.raises(SchemaError) as error:
            register(server, name=f"mixed_65_{shift}", output_schema=schema)
        assert_schema_error(error, f"mixed_65_{shift}", None)
        assert error.value.pointer


def test_a_generated_schema_too_deep_is_refused() -> None:
    deep: Any = int
    for _ in range(70):
        deep = list[deep]
    server = Server("checks")

    def takes(x: Any) -> None:
        return None

    def gives() -> Any:
        return []

    with pytest.raises(SchemaError) as error:
        server.add_tool(annotated(takes, x=deep))
    assert_schema_error(error, "takes", "/properties/x" + "/items" * 64)
    with pytest.raises(SchemaError) as error:
        server.add_tool(annotated(gives, **{"return": deep}))
    assert_schema_error(error, "gives", "/items" * 65)


@pytest.mark.parametrize("where", ["input_schema", "output_schema"])
def test_10000_subschemas_are_accepted_and_10001_refused(where: str) -> None:
    # The root counts: root + 9,999 properties = 10,000 subschemas.
    def schema(properties: int) -> dict[str, Any]:
        return input_schema(**{f"p{index}": {"type": "string"} for index in range(properties)})

    server = Server("checks")
    register(server, name="big", **{where: schema(9_999)})
    with pytest.raises(SchemaError, match=r"'too_big'.*10000") as error:
        register(server, name="too_big", **{where: schema(10_000)})
    assert "too_big" in str(error.value)


def test_subschemas_are_counted_in_every_container() -> None:
    def schema(definitions: int) -> dict[str, Any]:
        return {
            "type": "object",
            "$defs": {f"d{index}": {"type": "string"} for index in range(definitions)},
            "anyOf": [{"type": "object"} for _ in range(2_500)],
            "patternProperties": {f"^p{index}$": True for index in range(2_500)},
            "properties": {f"q{index}": {"items": False} for index in range(1_250)},
        }

    server = Server("checks")
    register(server, name="counted", output_schema=schema(2_499))  # 1 + 2,499 + 2,500 + 2,500 + 2 * 1,250
    with pytest.raises(SchemaError, match=r"'too_many'.*10000"):
        register(server, name="too_many", output_schema=schema(2_500))


def test_a_generated_schema_too_big_is_refused() -> None:
    wide: Any = tuple[tuple([int] * 10_000)]  # type: ignore[misc]
    server = Server("checks")

    def takes(x: Any) -> None:
        return None

    with pytest.raises(SchemaError, match=r"'takes'.*10000"):
        server.add_tool(annotated(takes, x=wide))


def test_schema_error_is_a_registration_error() -> None:
    assert issubclass(SchemaError, RegistrationError)
    server = Server("checks")
    with pytest.raises(RegistrationError):
        register(server, output_schema={"type": 5})


# --- a schema checked once -----------------------------------------------------------------------


def test_an_equal_schema_gets_the_validator_already_compiled() -> None:
    """Tools often share an output schema: it is checked and compiled once, and remembered by its
    exact value (two equal documents, not one object), separately with formats asserted."""
    first = check_schema({"type": "string", "format": "date", "title": "remembered"}, what="first")
    again = check_schema({"type": "string", "format": "date", "title": "remembered"}, what="again")
    asserting = check_schema({"type": "string", "format": "date", "title": "remembered"}, what="x", assert_formats=True)
    assert again is first
    assert asserting is not first
    assert first.is_valid("not a date") and not asserting.is_valid("not a date")


def test_a_refused_schema_is_refused_every_time_in_the_words_of_each_caller() -> None:
    bad = {"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}}
    for what in ("tool 'one': input schema", "tool 'two': input schema"):
        with pytest.raises(SchemaError, match=f"^{re.escape(what)}"):
            check_schema(dict(bad), what=what)


def test_a_schema_equal_only_once_converted_to_json_is_not_taken_for_a_remembered_one() -> None:
    check_schema({"enum": [1, 2]}, what="a list")
    with pytest.raises(SchemaError, match=r"^a set"):
        check_schema({"enum": {1, 2}}, what="a set")
