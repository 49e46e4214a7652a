"""SEP-2106 on the wire: what a client of each protocol version sees (ARCHITECTURE §3).

Every row of the compatibility matrix, for every known version, through the in-memory
client; every response is also validated against that version's official schema.
"""

from __future__ import annotations

import dataclasses
import enum
import json
from typing import Annotated, Any, Literal

import jsonschema_rs
import pytest
from pydantic import BaseModel, Field
from tests.support.memory import ALL_VERSIONS, MODERN, STRUCTURED, UNSTRUCTURED, called, listed_tools
from tests.support.spec import definitions
from tests.wire import assert_valid
from typing_extensions import TypedDict

from toolkit import Audio, ContentBlock, EmbeddedResource, Image, ResourceLink, Server, Text, ToolError, ToolResult
from toolkit.testing import Client

WRAPPER_KEYS = ("$defs", "$schema")


# --- the shapes a tool can return ------------------------------------------------------------


class Forecast(BaseModel):
    hour: str
    temp: float


class Point(TypedDict):
    x: int
    y: int


@dataclasses.dataclass
class Pair:
    left: str
    right: str


class Region(BaseModel):
    name: str
    subregions: list[Region] = []


class Cat(BaseModel):
    kind: Literal["cat"] = "cat"
    lives: int


class Dog(BaseModel):
    kind: Literal["dog"] = "dog"
    good: bool


class ById(BaseModel):
    id: str


class ByIdAndName(BaseModel):
    id: str
    name: str = ""


class Sky(enum.Enum):
    CLEAR = "clear"
    CLOUDY = "cloudy"


FORECASTS = [Forecast(hour="09:00", temp=68.0), Forecast(hour="10:00", temp=70.5)]
TREE = Region(name="USA", subregions=[Region(name="Washington", subregions=[Region(name="Seattle")])])


def build_server() -> Server:
    server = Server("compat", version="1.0.0")

    @server.tool
    def model() -> Forecast:
        return FORECASTS[0]

    @server.tool
    def typed_dict() -> Point:
        return {"x": 1, "y": 2}

    @server.tool
    def dataclass_() -> Pair:
        return Pair("a", "b")

    @server.tool
    def mapping() -> dict[str, int]:
        return {"Seattle": 755_078, "Denver": 715_522}

    @server.tool
    def recursive() -> Region:
        return TREE

    @server.tool
    def discriminated() -> Annotated[Cat | Dog, Field(discriminator="kind")]:
        return Dog(good=True)

    @server.tool
    def tagged() -> Cat | Dog:
        return Cat(lives=9)

    @server.tool
    def overlapping() -> ById | ByIdAndName:
        return ByIdAndName(id="u1", name="Alice")

    @server.tool
    def models() -> list[Forecast]:
        return FORECASTS

    @server.tool
    def ints() -> list[int]:
        return [61, 63, 66]

    @server.tool
    def empty_list() -> list[int]:
        return []

    @server.tool
    def integer() -> int:
        return 42

    @server.tool
    def number() -> float:
        return 0.42

    @server.tool
    def boolean() -> bool:
        return True

    @server.tool
    def literal() -> Literal["green", "yellow", "red"]:
        return "yellow"

    @server.tool
    def sky() -> Sky:
        return Sky.CLOUDY

    @server.tool
    def optional_model(present: bool = True) -> Forecast | None:
        return FORECASTS[1] if present else None

    @server.tool
    def int_or_str() -> int | str:
        return "seven"

    @server.tool
    def nothing() -> None:
        return None

    @server.tool
    def optional_int() -> int | None:
        return None

    return server


@dataclasses.dataclass(frozen=True)
class Case:
    tool: str
    value: Any
    arguments: dict[str, Any] = dataclasses.field(default_factory=dict)

    def __str__(self) -> str:
        return self.tool if not self.arguments else f"{self.tool}{self.arguments}"


FORECAST_JSON = [{"hour": "09:00", "temp": 68.0}, {"hour": "10:00", "temp": 70.5}]
TREE_JSON = {
    "name": "USA",
    "subregions": [{"name": "Washington", "subregions": [{"name": "Seattle", "subregions": []}]}],
}

OBJECTS = [
    Case("model", FORECAST_JSON[0]),
    Case("typed_dict", {"x": 1, "y": 2}),
    Case("dataclass_", {"left": "a", "right": "b"}),
    Case("mapping", {"Seattle": 755_078, "Denver": 715_522}),
]
OBJECT_UNIONS = [
    Case("discriminated", {"kind": "dog", "good": True}),
    Case("tagged", {"kind": "cat", "lives": 9}),
    Case("overlapping", {"id": "u1", "name": "Alice"}),
]
WRAPPED = [
    Case("models", FORECAST_JSON),
    Case("ints", [61, 63, 66]),
    Case("empty_list", []),
    Case("integer", 42),
    Case("number", 0.42),
    Case("boolean", True),
    Case("literal", "yellow"),
    Case("sky", "cloudy"),
    Case("optional_model", FORECAST_JSON[1]),
    Case("optional_model", None, {"present": False}),
    Case("int_or_str", "seven"),
    Case("nothing", None),
    Case("optional_int", None),
]
RECURSIVE = Case("recursive", TREE_JSON)
EVERY_CASE = [*OBJECTS, *OBJECT_UNIONS, RECURSIVE, *WRAPPED]


def validator(schema: Any) -> jsonschema_rs.Validator:
    """A real JSON Schema 2020-12 validator that never fetches anything."""
    return jsonschema_rs.Draft202012Validator(schema, offline=True)


def natural(server: Server, name: str) -> dict[str, Any]:
    schema = server.tools[name].output_schema
    assert schema is not None, f"{name} has no output schema"
    return schema


def wrapper_of(natural_schema: dict[str, Any]) -> dict[str, Any]:
    """ARCHITECTURE §3's wrapper for a natural schema whose only pointers are ``#/$defs/...``."""
    wrapper: dict[str, Any] = {key: natural_schema[key] for key in ("$schema",) if key in natural_schema}
    inner = {key: value for key, value in natural_schema.items() if key not in WRAPPER_KEYS}
    wrapper |= {"type": "object", "properties": {"result": inner}, "required": ["result"]}
    if "$defs" in natural_schema:
        wrapper["$defs"] = natural_schema["$defs"]
    return wrapper


async def tool_and_result(
    version: str, case: Case, server: Server | None = None
) -> tuple[dict[str, Any], dict[str, Any]]:
    server = server or build_server()
    async with Client(server, protocol_version=version) as client:
        tools = await listed_tools(client)
        result = await called(client, case.tool, case.arguments)
    return tools[case.tool], result


def assert_no_structured_fields(tool: dict[str, Any], result: dict[str, Any]) -> None:
    assert "outputSchema" not in tool, tool
    assert "structuredContent" not in result, result


# --- objects ---------------------------------------------------------------------------------


@pytest.mark.parametrize("case", OBJECTS, ids=str)
@pytest.mark.parametrize("version", ALL_VERSIONS)
async def test_object_outputs(version: str, case: Case) -> None:
    server = build_server()
    tool, result = await tool_and_result(version, case, server)
    schema = natural(server, case.tool)
    assert schema["type"] == "object"
    if version in UNSTRUCTURED:
        assert_no_structured_fields(tool, result)
        return
    assert tool["outputSchema"] == schema
    assert result["structuredContent"] == case.value
    assert validator(tool["outputSchema"]).is_valid(result["structuredContent"])


@pytest.mark.parametrize("version", ALL_VERSIONS)
async def test_recursive_model_with_a_root_ref(version: str) -> None:
    server = build_server()
    tool, result = await tool_and_result(version, RECURSIVE, server)
    schema = natural(server, "recursive")
    assert schema.get("$ref", "").startswith("#/$defs/"), "the natural schema of a recursive model is a root $ref"
    bad_tree = {"name": "USA", "subregions": [{"subregions": []}]}
    if version in UNSTRUCTURED:
        assert_no_structured_fields(tool, result)
        return
    advertised = tool["outputSchema"]
    if version == MODERN:
        assert advertised == schema
        assert result["structuredContent"] == TREE_JSON
    else:
        definition = schema["$defs"][schema["$ref"].removeprefix("#/$defs/")]
        assert "$ref" not in advertised, "the root $ref must be inlined for 2025-x"
        assert advertised["type"] == "object"
        assert advertised["properties"] == definition["properties"]
        assert advertised.get("required") == definition.get("required")
        assert result["structuredContent"] == TREE_JSON, "an object travels unwrapped"
    checker = validator(advertised)
    assert checker.is_valid(TREE_JSON)
    assert not checker.is_valid(bad_tree), "the recursion must still be enforced through $defs"


ROOT_REF_WITH_SIBLINGS: dict[str, Any] = {
    "$ref": "#/$defs/Pair",
    "required": ["b"],
    "$defs": {
        "Pair": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a"],
        }
    },
}


@pytest.mark.parametrize("version", STRUCTURED)
@pytest.mark.parametrize("value", [{"a": 1, "b": 2}, {"b": 2}, {"a": 1}, {"a": "x", "b": 2}, {}], ids=json.dumps)
async def test_inlined_root_ref_means_what_the_natural_schema_means(version: str, value: dict[str, Any]) -> None:
    # In 2020-12 a $ref applies alongside its sibling keywords: both "required" lists hold.
    async with Client(composite_server(ROOT_REF_WITH_SIBLINGS), protocol_version=version) as client:
        advertised = (await listed_tools(client))["echo"]["outputSchema"]
    assert advertised["type"] == "object"
    assert "$ref" not in advertised
    assert validator(advertised).is_valid(value) == validator(ROOT_REF_WITH_SIBLINGS).is_valid(value)


@pytest.mark.parametrize("case", OBJECT_UNIONS, ids=str)
@pytest.mark.parametrize("version", ALL_VERSIONS)
async def test_unions_of_objects(version: str, case: Case) -> None:
    server = build_server()
    tool, result = await tool_and_result(version, case, server)
    schema = natural(server, case.tool)
    assert "oneOf" in schema or "anyOf" in schema
    if version in UNSTRUCTURED:
        assert_no_structured_fields(tool, result)
        return
    advertised = tool["outputSchema"]
    if version == MODERN:
        assert advertised == schema
    else:
        assert advertised == {**schema, "type": "object"}
    assert result["structuredContent"] == case.value
    assert validator(advertised).is_valid(case.value)


# --- everything else: wrapped for 2025-x -----------------------------------------------------


@pytest.mark.parametrize("case", WRAPPED, ids=str)
@pytest.mark.parametrize("version", ALL_VERSIONS)
async def test_other_outputs_are_natural_or_wrapped(version: str, case: Case) -> None:
    server = build_server()
    tool, result = await tool_and_result(version, case, server)
    schema = natural(server, case.tool)
    if version in UNSTRUCTURED:
        assert_no_structured_fields(tool, result)
        return
    advertised = tool["outputSchema"]
    if version == MODERN:
        assert advertised == schema
        assert "structuredContent" in result
        assert result["structuredContent"] == case.value
        assert validator(advertised).is_valid(case.value)
    else:
        assert advertised == wrapper_of(schema)
        assert result["structuredContent"] == {"result": case.value}
        assert validator(advertised).is_valid({"result": case.value})
        assert not validator(advertised).is_valid(case.value if isinstance(case.value, dict) else {})


@pytest.mark.parametrize(
    ("tool", "natural_type"),
    [("models", "array"), ("ints", "array"), ("integer", "integer"), ("number", "number"), ("boolean", "boolean")],
)
async def test_modern_schemas_are_the_natural_json_type(tool: str, natural_type: str) -> None:
    async with Client(build_server()) as client:
        tools = await listed_tools(client)
    assert tools[tool]["outputSchema"]["type"] == natural_type


@pytest.mark.parametrize("case", EVERY_CASE, ids=str)
@pytest.mark.parametrize("version", ALL_VERSIONS)
async def test_text_fallback_is_one_block_with_the_natural_json(version: str, case: Case) -> None:
    _, result = await tool_and_result(version, case)
    assert len(result["content"]) == 1, "one TextContent, not one per list item"
    block = result["content"][0]
    assert block["type"] == "text"
    assert json.loads(block["text"]) == case.value
    if case.value is None:
        assert block["text"] == "null"


@pytest.mark.parametrize("version", ALL_VERSIONS)
async def test_none_is_sent_explicitly(version: str) -> None:
    _, result = await tool_and_result(version, Case("nothing", None))
    if version in UNSTRUCTURED:
        assert "structuredContent" not in result
    elif version == MODERN:
        assert "structuredContent" in result, "an absent field means 'no structured result'"
        assert result["structuredContent"] is None
    else:
        assert result["structuredContent"] == {"result": None}
    assert result.get("isError", False) is False


@pytest.mark.parametrize("version", ALL_VERSIONS)
async def test_own_content_blocks_replace_the_fallback(version: str) -> None:
    server = Server("own-content")

    @server.tool
    def rated() -> ToolResult:
        return ToolResult([Text("three stars"), Text("out of five")], structured_content={"stars": 3})

    @server.tool(output_schema={"type": "array", "items": {"type": "integer"}})
    def scores() -> ToolResult:
        return ToolResult("the scores", structured_content=[1, 2])

    async with Client(server, protocol_version=version) as client:
        rated_result = await called(client, "rated")
        scores_result = await called(client, "scores")
    assert rated_result["content"] == [{"type": "text", "text": "three stars"}, {"type": "text", "text": "out of five"}]
    assert scores_result["content"] == [{"type": "text", "text": "the scores"}]
    if version == MODERN:
        assert scores_result["structuredContent"] == [1, 2]
    elif version in STRUCTURED:
        assert scores_result["structuredContent"] == {"result": [1, 2]}
    else:
        assert "structuredContent" not in scores_result


# A ToolResult's own structured_content, on a tool with no output schema: one of each JSON type.
NO_SCHEMA_VALUES: list[Any] = [[1, 2], 7, 0.5, "seven", True, None, {"a": 1}, {}]


@pytest.mark.parametrize("value", NO_SCHEMA_VALUES, ids=json.dumps)
@pytest.mark.parametrize("version", ALL_VERSIONS)
async def test_structured_content_without_an_output_schema_in_each_era(version: str, value: Any) -> None:
    """No ``outputSchema`` in any version; the value is sent all the same, in each era's shape.

    2024-11-05/2025-03-26 have no ``structuredContent``: the text is all they get.
    2025-06-18/2025-11-25 define it as an object, so a non-object goes as ``{"result": v}``
    (an object as it is); 2026-07-28 takes any JSON value (SEP-2106), so ``v`` itself.
    """
    server = Server("no-output-schema")

    @server.tool
    def spelled_out() -> ToolResult:
        return ToolResult(structured_content=value)

    async with Client(server, protocol_version=version) as client:
        tool = (await listed_tools(client))["spelled_out"]
        response = await client.request("tools/call", {"name": "spelled_out", "arguments": {}})
    result = response["result"]
    assert "outputSchema" not in tool
    assert result["content"] == [{"type": "text", "text": json.dumps(value, separators=(",", ":"))}]
    if version in UNSTRUCTURED:
        assert "structuredContent" not in result
    elif version in STRUCTURED:
        expected = value if isinstance(value, dict) else {"result": value}
        assert isinstance(result["structuredContent"], dict), "2025-06-18/2025-11-25 allow only an object"
        assert json.dumps(result["structuredContent"]) == json.dumps(expected)
    else:
        assert version == MODERN
        assert "structuredContent" in result, "an absent field would mean 'no structured result'"
        assert json.dumps(result["structuredContent"]) == json.dumps(value)
    assert_valid(response, version, method="tools/call")


@pytest.mark.parametrize("version", STRUCTURED)
def test_the_official_schema_refuses_a_bare_structured_value_before_2026(version: str) -> None:
    """The check above has teeth: 2025-06-18/2025-11-25's ``CallToolResult`` refuses ``[1, 2]``."""
    bare = {"jsonrpc": "2.0", "id": 1, "result": {"content": [], "structuredContent": [1, 2]}}
    with pytest.raises(AssertionError, match="structuredContent"):
        assert_valid(bare, version, method="tools/call")


@pytest.mark.parametrize("version", ALL_VERSIONS)
async def test_plain_text_tools_have_no_output_schema(version: str) -> None:
    server = Server("text")

    @server.tool
    def summary(city: str) -> str:
        return f"{city}: sunny"

    async with Client(server, protocol_version=version) as client:
        tool = (await listed_tools(client))["summary"]
        result = await called(client, "summary", {"city": "Seattle"})
    assert_no_structured_fields(tool, result)
    assert result["content"] == [{"type": "text", "text": "Seattle: sunny"}]


# --- hand-written schemas with pointers into the root ----------------------------------------

COMPOSITE: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$defs": {
        "Count": {"type": "integer", "minimum": 0},
        "Nested": {"type": "array", "items": {"$ref": "#"}, "maxItems": 3},
    },
    "type": ["object", "array", "integer"],
    "properties": {
        "label": {"type": "string", "minLength": 1},
        "alias": {"$ref": "#/properties/label"},
        "child": {"$ref": "#"},
        "children": {"$ref": "#/$defs/Nested"},
    },
    "additionalProperties": False,
    "items": {"$ref": "#"},
    "if": {"type": "integer"},
    "then": {"$ref": "#/$defs/Count"},
}
COMPOSITE_WRAPPED: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {
        "result": {
            "type": ["object", "array", "integer"],
            "properties": {
                "label": {"type": "string", "minLength": 1},
                "alias": {"$ref": "#/properties/result/properties/label"},
                "child": {"$ref": "#/properties/result"},
                "children": {"$ref": "#/$defs/Nested"},
            },
            "additionalProperties": False,
            "items": {"$ref": "#/properties/result"},
            "if": {"type": "integer"},
            "then": {"$ref": "#/$defs/Count"},
        }
    },
    "required": ["result"],
    "$defs": {
        "Count": {"type": "integer", "minimum": 0},
        "Nested": {"type": "array", "items": {"$ref": "#/properties/result"}, "maxItems": 3},
    },
}
COMPOSITE_VALID: list[Any] = [
    0,
    7,
    [],
    [1, [2, [3]]],
    {},
    {"label": "a"},
    {"label": "a", "alias": "b", "child": 3, "children": [[1], {"label": "x"}]},
    {"child": {"child": [{"alias": "deep"}]}},
]
COMPOSITE_INVALID: list[Any] = [
    -1,
    [-1],
    [[{"label": ""}]],
    {"alias": ""},
    {"child": -2},
    {"child": {"alias": ""}},
    {"children": [-3]},
    {"children": [1, 2, 3, 4]},
    {"extra": 1},
    "text",
    1.5,
    None,
    True,
]


def composite_server(schema: dict[str, Any]) -> Server:
    server = Server("composite")
    server.add_tool(
        lambda value: value,
        name="echo",
        description="Return the value.",
        input_schema={"type": "object", "properties": {"value": {}}, "required": ["value"]},
        output_schema=schema,
    )
    return server


def test_composite_schema_fixture_is_meaningful() -> None:
    checker = validator(COMPOSITE)
    assert all(checker.is_valid(value) for value in COMPOSITE_VALID)
    assert not any(checker.is_valid(value) for value in COMPOSITE_INVALID)


@pytest.mark.parametrize("version", ALL_VERSIONS)
async def test_hand_written_schema_with_defs_and_root_pointers(version: str) -> None:
    server = composite_server(COMPOSITE)
    async with Client(server, protocol_version=version) as client:
        tool = (await listed_tools(client))["echo"]
        good = [await called(client, "echo", {"value": value}) for value in COMPOSITE_VALID]
        bad = [await called(client, "echo", {"value": value}) for value in COMPOSITE_INVALID]
    for value, result in zip(COMPOSITE_INVALID, bad, strict=True):
        assert result.get("isError") is True, f"{value!r} violates the output schema: {result}"
        assert "structuredContent" not in result
    if version in UNSTRUCTURED:
        assert "outputSchema" not in tool
        assert all("structuredContent" not in result for result in good)
        return
    advertised = tool["outputSchema"]
    if version == MODERN:
        assert advertised == COMPOSITE
        assert [result["structuredContent"] for result in good] == COMPOSITE_VALID
        return
    assert advertised == COMPOSITE_WRAPPED
    assert [result["structuredContent"] for result in good] == [{"result": value} for value in COMPOSITE_VALID]
    assert jsonschema_rs.meta.is_valid(advertised)
    checker = validator(advertised)
    for value in COMPOSITE_VALID:
        assert checker.is_valid({"result": value}), f"the wrapped schema rejects the valid value {value!r}"
    for value in COMPOSITE_INVALID:
        assert not checker.is_valid({"result": value}), f"the wrapped schema accepts the invalid value {value!r}"


@pytest.mark.parametrize("version", STRUCTURED)
async def test_wrapped_schema_keeps_percent_encoded_defs_pointers_working(version: str) -> None:
    # RFC 6901 §6: "#/%24defs/Count" is the URI-fragment spelling of "#/$defs/Count".
    schema = {
        "$defs": {"Count": {"type": "integer", "minimum": 0}},
        "type": "array",
        "items": {"$ref": "#/%24defs/Count"},
    }
    assert validator(schema).is_valid([1]) and not validator(schema).is_valid([-1])
    async with Client(composite_server(schema), protocol_version=version) as client:
        advertised = (await listed_tools(client))["echo"]["outputSchema"]
    checker = validator(advertised)
    assert checker.is_valid({"result": [1, 2]})
    assert not checker.is_valid({"result": [-1]})


# --- errors, input schemas, content blocks, tool fields --------------------------------------


@pytest.mark.parametrize("version", ALL_VERSIONS)
async def test_error_results_carry_no_structured_content(version: str) -> None:
    server = Server("errors")

    @server.tool
    def refuses(city: str) -> list[int]:
        raise ToolError(f"no data for {city}")

    @server.tool
    def crashes() -> int:
        raise RuntimeError("boom")

    @server.tool
    def explicit() -> ToolResult:
        return ToolResult("partial failure", structured_content={"done": 1}, is_error=True)

    @server.tool(output_schema={"type": "array", "items": {"type": "integer"}})
    def invalid_output() -> Any:
        return ["not", "ints"]

    async with Client(server, protocol_version=version) as client:
        results = [
            await called(client, "refuses", {"city": "Atlantis"}),
            await called(client, "refuses", {"city": 5}),
            await called(client, "crashes"),
            await called(client, "explicit"),
            await called(client, "invalid_output"),
        ]
    for result in results:
        assert result["isError"] is True
        assert "structuredContent" not in result, result
        assert result["content"] and all(block["type"] == "text" for block in result["content"])
    assert results[0]["content"][0]["text"] == "no data for Atlantis"


BOOLEAN_PROPERTIES: dict[str, Any] = {
    "type": "object",
    "properties": {"anything": True, "never": False, "count": {"type": "integer"}},
    "additionalProperties": False,
}


@pytest.mark.parametrize("version", ALL_VERSIONS)
async def test_boolean_property_subschemas(version: str) -> None:
    server = Server("booleans")
    server.add_tool(
        lambda **arguments: len(arguments), name="count_args", description="d", input_schema=BOOLEAN_PROPERTIES
    )
    server.add_tool(
        lambda: {"anything": [1]},
        name="boolean_output",
        description="d",
        output_schema=BOOLEAN_PROPERTIES,
    )
    async with Client(server, protocol_version=version) as client:
        tools = await listed_tools(client)
    input_schema = tools["count_args"]["inputSchema"]
    assert input_schema["type"] == "object"
    if version == MODERN:
        assert input_schema == BOOLEAN_PROPERTIES
        assert tools["boolean_output"]["outputSchema"] == BOOLEAN_PROPERTIES
        return
    legacy = {**BOOLEAN_PROPERTIES, "properties": {"anything": {}, "never": {"not": {}}, "count": {"type": "integer"}}}
    assert input_schema == legacy
    if version in STRUCTURED:
        assert tools["boolean_output"]["outputSchema"] == legacy
    checker = validator(input_schema)
    assert checker.is_valid({"anything": {"x": [1]}, "count": 1})
    assert not checker.is_valid({"never": 1})


def media_blocks() -> list[ContentBlock]:
    return [
        Text("intro"),
        Image(b"\x89PNG\r\n", mime_type="image/png"),
        Audio(b"RIFF....WAVE", mime_type="audio/wav"),
        ResourceLink("file:///data/report.csv", "report", title="Quarterly report", mime_type="text/csv"),
        EmbeddedResource("test://embedded", text="inline text", mime_type="text/plain"),
        Text("with meta", meta={"example.com/k": 1}),
    ]


BLOCK_SINCE = {"audio": "2025-03-26", "resource_link": "2025-06-18"}


@pytest.mark.parametrize("version", ALL_VERSIONS)
async def test_content_blocks_a_version_lacks_become_text(version: str) -> None:
    server = Server("media")

    @server.tool
    def media() -> list[ContentBlock]:
        return media_blocks()

    async with Client(server, protocol_version=version) as client:
        result = await called(client, "media")
    expected = [block.to_wire() for block in media_blocks()]
    content = result["content"]
    assert len(content) == len(expected), "no block may be dropped"
    position = ALL_VERSIONS.index(version)
    for sent, original in zip(content, expected, strict=True):
        since = BLOCK_SINCE.get(original["type"])
        if since is not None and position < ALL_VERSIONS.index(since):
            assert sent["type"] == "text", f"{original['type']} does not exist in {version}"
            assert sent["text"]
            if original["type"] == "resource_link":
                assert original["uri"] in sent["text"]
        else:
            assert sent["type"] == original["type"]
        allowed = definitions(version)[_BLOCK_DEFINITIONS[sent["type"]]]["properties"]
        assert set(sent) <= set(allowed), f"{version} {sent['type']} has no {set(sent) - set(allowed)}"
    if position >= ALL_VERSIONS.index("2025-06-18"):
        assert content[-1]["_meta"] == {"example.com/k": 1}


_BLOCK_DEFINITIONS = {
    "text": "TextContent",
    "image": "ImageContent",
    "audio": "AudioContent",
    "resource_link": "ResourceLink",
    "resource": "EmbeddedResource",
}


ICONS = [{"src": "https://example.com/icon.png", "mimeType": "image/png"}]


@pytest.mark.parametrize("version", ALL_VERSIONS)
async def test_tool_fields_a_version_lacks_are_not_sent(version: str) -> None:
    server = Server("fields")

    @server.tool(
        title="Fancy tool",
        annotations={"readOnlyHint": True},
        meta={"example.com/owner": "team"},
        icons=ICONS,
    )
    def fancy() -> int:
        """Does fancy things."""
        return 1

    async with Client(server, protocol_version=version) as client:
        tool = (await listed_tools(client))["fancy"]
    defined = set(definitions(version)["Tool"]["properties"])
    assert set(tool) <= defined, f"{version} has no Tool field {set(tool) - defined}"
    values = {
        "title": "Fancy tool",
        "annotations": {"readOnlyHint": True},
        "_meta": {"example.com/owner": "team"},
        "icons": ICONS,
        "description": "Does fancy things.",
        "name": "fancy",
    }
    for field, value in values.items():
        if field in defined:
            assert tool.get(field) == value, f"{version} defines Tool.{field}; it must be sent"


def fields_server() -> Server:
    server = build_server()

    @server.tool(title="Fancy", annotations={"readOnlyHint": True}, meta={"example.com/owner": "team"}, icons=ICONS)
    def fancy() -> list[int]:
        """Does fancy things."""
        return [1]

    return server


@pytest.mark.parametrize("order", ["oldest-first", "newest-first"])
async def test_one_server_shows_each_version_its_own_shapes(order: str) -> None:
    # Caches are per class of versions; a client of one version must never see another's shapes.
    versions = ALL_VERSIONS if order == "oldest-first" else tuple(reversed(ALL_VERSIONS))
    shared = fields_server()
    for version in versions:
        async with Client(shared, protocol_version=version) as client:
            seen = await listed_tools(client)
            called_fancy = await called(client, "fancy")
        async with Client(fields_server(), protocol_version=version) as client:
            fresh = await listed_tools(client)
            fresh_called = await called(client, "fancy")
        earlier = versions[: versions.index(version)]
        assert seen["fancy"] == fresh["fancy"], f"{version} after {earlier}: {seen['fancy']} != {fresh['fancy']}"
        assert seen == fresh, f"{version} after {earlier}"
        assert called_fancy == fresh_called
