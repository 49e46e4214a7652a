"""One keyword table for every schema walker (``toolkit._schema.keywords``).

JSON Schema 2020-12 keeps instance data under ``const``/``enum``/``default``/``examples``:
whatever it looks like (a ``{"$ref": ...}``, an ``x-mcp-header``, a ``discriminator``), it is
never a reference or a subschema, so it is advertised exactly as written. And a *property*
called ``default`` is a subschema like any other: inside ``properties``/``$defs`` the keys
are names, not keywords.
"""

from __future__ import annotations

from typing import Annotated, Any

import jsonschema_rs
import pytest
from pydantic import BaseModel, Field
from tests.support.memory import called, listed_tools

from toolkit import SchemaError, Server
from toolkit._schema import keywords
from toolkit.testing import Client

MODERN = "2026-07-28"
LEGACY = "2025-11-25"  # structured output, object-only: non-object schemas are wrapped
DIALECT = "https://json-schema.org/draft/2020-12/schema"


def checker(schema: dict[str, Any]) -> jsonschema_rs.Validator:
    """A 2020-12 validator that never fetches: raises if a reference points at nothing."""
    return jsonschema_rs.validator_for(schema, offline=True)


async def tools_seen_by(server: Server, version: str) -> dict[str, dict[str, Any]]:
    async with Client(server, protocol_version=version) as client:
        return await listed_tools(client)


# --- the table itself --------------------------------------------------------------------------


def test_the_tables_say_what_2020_12_says() -> None:
    assert {"const", "enum", "default", "examples"} == keywords.DATA_KEYWORDS
    assert {"$ref", "$dynamicRef", "$recursiveRef"} == keywords.REFERENCE_KEYWORDS
    assert not keywords.DATA_KEYWORDS & keywords.SCHEMA_KEYWORDS
    assert not keywords.REFERENCE_KEYWORDS & keywords.SCHEMA_KEYWORDS
    shapes = [
        keywords.SUBSCHEMA,
        keywords.SUBSCHEMA_LIST,
        keywords.SUBSCHEMA_MAP,
        keywords.SUBSCHEMA_OR_LIST,
        keywords.SUBSCHEMA_MAP_OR_NAMES,
    ]
    assert sum(len(shape) for shape in shapes) == len(keywords.SCHEMA_KEYWORDS)  # each keyword has one shape
    assert {"properties", "$defs", "patternProperties"} <= keywords.NAME_MAPS <= keywords.SCHEMA_KEYWORDS


def test_children_skips_data_and_opens_name_maps() -> None:
    leaf = {"type": "integer"}
    node = {
        "default": {"$ref": "#/x"},
        "examples": [{"$ref": "#/x"}],
        "const": {"$ref": "#/x"},
        "enum": [{"$ref": "#/x"}],
        "properties": {"default": leaf, "examples": leaf},
        "items": leaf,
    }
    assert list(keywords.children(node)) == [leaf, leaf, leaf]


# --- hand-written schemas: data that looks like schema is advertised as written ----------------

REF_LIKE = {"$ref": "#/$defs/Missing"}
HEADER_LIKE = {"type": "string", "x-mcp-header": "Elsewhere"}

HAND_INPUT: dict[str, Any] = {
    "$schema": DIALECT,
    "type": "object",
    "properties": {
        "region": {
            "type": "string",
            "x-mcp-header": "Region",
            "default": "eu",
            "examples": ["eu", "#/$defs/Missing"],
        },
        "link": {
            "type": "object",
            "properties": {"$ref": {"type": "string"}},
            "default": REF_LIKE,
            "examples": [REF_LIKE, HEADER_LIKE],
            "enum": [REF_LIKE, HEADER_LIKE],
        },
        "pinned": {"const": HEADER_LIKE},
    },
    "required": ["region"],
}


@pytest.mark.parametrize("version", [MODERN, LEGACY])
async def test_input_data_that_looks_like_refs_or_headers_is_advertised_unchanged(version: str) -> None:
    server = Server("keywords")
    server.add_tool(lambda **arguments: sorted(arguments), name="echo", description="d", input_schema=HAND_INPUT)
    # The x-mcp-header scan finds the real annotation and nothing inside the data.
    assert server.tools["echo"].header_params == {"Region": ("region",)}
    tool = (await tools_seen_by(server, version))["echo"]
    assert tool["inputSchema"] == HAND_INPUT


def test_a_header_inside_a_definition_named_like_a_data_keyword_is_still_found() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/default"}},
        "$defs": {"default": {"type": "object", "properties": {"b": {"type": "string", "x-mcp-header": "B"}}}},
    }
    with pytest.raises(SchemaError, match="not reachable through 'properties' alone"):
        Server("keywords").add_tool(lambda **arguments: 0, name="hidden", description="d", input_schema=schema)


# Registration accepts data that would be a dangling or remote reference if it were one. The
# natural output is an array, so a 2025-11-25 client gets it wrapped in {"result": ...}, and the
# one real pointer outside $defs ("contains") must be re-aimed inside "result". The data, JSON
# Reference objects a tool might return, stays exactly as written.
HAND_OUTPUT: dict[str, Any] = {
    "type": "array",
    "items": {"anyOf": [{"type": "integer"}, {"$ref": "#/$defs/Link"}]},
    "contains": {"$ref": "#/items/anyOf/0"},
    "default": [1, {"$ref": "#/$defs/Missing"}],
    "examples": [[1, {"$ref": "#/items/anyOf/0"}], [{"$ref": "https://example.com/schema.json"}]],
    "$defs": {
        "Link": {
            "type": "object",
            "properties": {"$ref": {"type": "string"}},
            "required": ["$ref"],
            "examples": [{"$ref": "#/contains"}],
            "not": {"const": {"$ref": "#/items"}},
        }
    },
}
VALUE = [1, {"$ref": "#/somewhere"}]


@pytest.mark.parametrize("version", [MODERN, LEGACY])
async def test_output_data_that_looks_like_refs_is_never_rewritten(version: str) -> None:
    server = Server("keywords")
    server.add_tool(lambda: VALUE, name="links", description="d", output_schema=HAND_OUTPUT)
    async with Client(server, protocol_version=version) as client:
        tool = (await listed_tools(client))["links"]
        result = await called(client, "links")
    advertised = tool["outputSchema"]
    if version == MODERN:
        assert advertised == HAND_OUTPUT
        assert result["structuredContent"] == VALUE
        return
    inner = {key: value for key, value in HAND_OUTPUT.items() if key != "$defs"}
    assert advertised == {
        "type": "object",
        "properties": {"result": {**inner, "contains": {"$ref": "#/properties/result/items/anyOf/0"}}},
        "required": ["result"],
        "$defs": HAND_OUTPUT["$defs"],
    }
    assert result["structuredContent"] == {"result": VALUE}
    validator = checker(advertised)
    assert validator.is_valid({"result": VALUE})
    assert not validator.is_valid({"result": [{"$ref": "#/items"}]})  # the "not"/"const" still applies


# Properties named like data keywords hold real subschemas, with real pointers to re-aim.
NAMED_LIKE_DATA: dict[str, Any] = {
    "type": "array",
    "prefixItems": [
        {
            "type": "object",
            "properties": {name: {"$ref": "#/prefixItems/1"} for name in ("default", "examples", "const", "enum")},
        },
        {"type": "integer", "minimum": 0},
    ],
}


async def test_properties_named_like_data_keywords_are_walked_when_wrapping() -> None:
    server = Server("keywords")
    value = [{"default": 1, "examples": 2, "const": 3, "enum": 4}, 5]
    server.add_tool(lambda: value, name="named", description="d", output_schema=NAMED_LIKE_DATA)
    tool = (await tools_seen_by(server, LEGACY))["named"]
    result_schema = tool["outputSchema"]["properties"]["result"]
    for name in ("default", "examples", "const", "enum"):
        assert result_schema["prefixItems"][0]["properties"][name] == {"$ref": "#/properties/result/prefixItems/1"}
    validator = checker(tool["outputSchema"])
    assert validator.is_valid({"result": value})
    assert not validator.is_valid({"result": [{"enum": -1}, 5]})


# --- root $ref inlining for legacy clients: what counts as a mention of the definition --------


async def test_a_ref_inside_examples_does_not_keep_an_inlined_definition() -> None:
    node = {
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "examples": [{"name": "a", "next": {"$ref": "#/$defs/Node"}}],
    }
    server = Server("keywords")
    schema = {"$ref": "#/$defs/Node", "$defs": {"Node": node}}
    server.add_tool(lambda: {"name": "a"}, name="node", description="d", output_schema=schema)
    tool = (await tools_seen_by(server, LEGACY))["node"]
    assert tool["outputSchema"] == node  # inlined at the root; no definition left behind for data


async def test_a_dynamic_ref_to_an_inlined_definition_keeps_it() -> None:
    node = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "next": {"$dynamicRef": "#/$defs/Node"}},
    }
    server = Server("keywords")
    schema = {"$ref": "#/$defs/Node", "$defs": {"Node": node}}
    value = {"name": "a", "next": {"name": "b"}}
    server.add_tool(lambda: value, name="node", description="d", output_schema=schema)
    advertised = (await tools_seen_by(server, LEGACY))["node"]["outputSchema"]
    assert advertised == {**node, "$defs": {"Node": node}}
    validator = checker(advertised)  # the reference still resolves
    assert validator.is_valid(value)
    assert not validator.is_valid({"name": "a", "next": {"name": 1}})


# --- generated schemas -------------------------------------------------------------------------


class Inner(BaseModel):
    x: int


class NamedLikeData(BaseModel):
    default: Inner
    examples: Inner
    const: Inner
    enum: Inner


async def test_fields_named_like_data_keywords_keep_their_definitions() -> None:
    server = Server("keywords")

    @server.tool
    def echo(value: NamedLikeData) -> NamedLikeData:
        return value

    argument = {name: {"x": index} for index, name in enumerate(("default", "examples", "const", "enum"))}
    async with Client(server, protocol_version=MODERN) as client:
        tool = (await listed_tools(client))["echo"]
        result = await called(client, "echo", {"value": argument})
    assert tool["inputSchema"]["$defs"]["Inner"] == {
        "type": "object",
        "properties": {"x": {"type": "integer"}},
        "required": ["x"],
    }
    assert tool["outputSchema"]["$defs"]["Inner"] == tool["inputSchema"]["$defs"]["Inner"]
    assert result["structuredContent"] == argument


# Keywords the post-processing of generated schemas acts on, inside a field's default and examples.
TRICKY: dict[str, Any] = {"discriminator": {"propertyName": "kind"}, "anyOf": [{"$ref": "#/$defs/Nowhere"}]}


class Settings(BaseModel):
    options: Annotated[dict[str, Any], Field(examples=[TRICKY])] = TRICKY


async def test_generated_defaults_and_examples_are_copied_not_tidied() -> None:
    server = Server("keywords")

    @server.tool
    def configure(settings: Settings) -> int:
        return len(settings.options)

    tool = (await tools_seen_by(server, MODERN))["configure"]
    options = tool["inputSchema"]["properties"]["settings"]["properties"]["options"]
    assert options["default"] == TRICKY
    assert options["examples"] == [TRICKY]
