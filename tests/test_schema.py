"""Type hints → JSON Schema 2020-12 (ARCHITECTURE §4), as a client reads them off the wire.

Every schema is checked three ways: it is exactly the schema we expect, it is valid against
the 2020-12 metaschema, and a 2020-12 validator accepts the values the tool really sends and
rejects values it must not.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import importlib.util
import math
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any, Literal

import jsonschema_rs
import pytest
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, NaiveDatetime, TypeAdapter, computed_field
from tests.support.hints import ById, ByName, Cat, Color, Dog, Forecast, Node, Point, Point2D, Point3D, Priority, Span
from tests.wire import assert_valid

from toolkit import Context, Image, RegistrationError, Server, Text, ToolResult
from toolkit.testing import Client

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
DIALECT = "https://json-schema.org/draft/2020-12/schema"
REPO = Path(__file__).resolve().parent.parent


# --- the types every row uses ----------------------------------------------------------------


class Shade(enum.Enum):
    DARK = "dark"
    LIGHT = "light"


class Profile(BaseModel):
    display_name: str = Field(serialization_alias="displayName", validation_alias="name")

    @computed_field  # type: ignore[prop-decorator]
    @property
    def initials(self) -> str:
        return self.display_name[:1]


class Report(BaseModel):
    model_config = ConfigDict(title="Weather report")

    color: Color
    count: Annotated[int, Field(title="How many")] = 0


class OpenById(BaseModel):
    id: int


class OpenByName(BaseModel):
    name: str


class TaggedCat(BaseModel):
    kind: Literal["cat"] = "cat"
    lives: int = 9


class TaggedDog(BaseModel):
    kind: Literal["dog"] = "dog"
    good: bool = True


FORECAST = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "temp": {"type": "number"}},
    "required": ["city", "temp"],
}
NODE = {
    "type": "object",
    "properties": {
        "value": {"type": "integer"},
        "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}, "default": []},
    },
    "required": ["value", "children"],
}
POINT_2D = {
    "type": "object",
    "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
    "required": ["x", "y"],
}
POINT_3D = {
    "type": "object",
    "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}, "z": {"type": "integer"}},
    "required": ["x", "y", "z"],
}
CAT = {
    "type": "object",
    "properties": {"kind": {"const": "cat", "type": "string"}, "lives": {"type": "integer"}},
    "required": ["kind", "lives"],
}
DOG = {
    "type": "object",
    "properties": {"kind": {"const": "dog", "type": "string"}, "good": {"type": "boolean"}},
    "required": ["kind", "good"],
}


# --- helpers ---------------------------------------------------------------------------------


def assert_metaschema_valid(schema: dict[str, Any]) -> None:
    """Valid against the 2020-12 metaschema (the dialect MCP assumes when ``$schema`` is absent)."""
    jsonschema_rs.meta.validate({"$schema": DIALECT, **schema} if "$schema" not in schema else schema)


def validator(schema: dict[str, Any]) -> jsonschema_rs.Validator:
    return jsonschema_rs.Draft202012Validator(schema, offline=True)


def returning(hint: Any, value: Any = None) -> Callable[[], Any]:
    def tool() -> Any:
        return value

    tool.__annotations__ = {"return": hint}
    return tool


def taking(hint: Any) -> Callable[..., Any]:
    def tool(x: Any) -> None:
        return None

    tool.__annotations__ = {"x": hint, "return": type(None)}
    return tool


async def list_tools(client: Client) -> dict[str, dict[str, Any]]:
    response = await client.request("tools/list")
    assert_valid(response, client.protocol_version, method="tools/list")
    return {tool["name"]: tool for tool in response["result"]["tools"]}


async def call(client: Client, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    response = await client.request("tools/call", {"name": name, "arguments": arguments or {}})
    assert_valid(response, client.protocol_version, method="tools/call")
    result: dict[str, Any] = response["result"]
    return result


async def advertised(server: Server, version: str = MODERN) -> dict[str, dict[str, Any]]:
    async with Client(server, protocol_version=version) as client:
        return await list_tools(client)


def walk(node: Any, path: str = "") -> Iterator[tuple[str, str, Any]]:
    """Every ``(pointer, key, value)`` of a schema document, skipping data (const/enum/default/examples)."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield path, key, value
            if key not in ("const", "enum", "default", "examples"):
                yield from walk(value, f"{path}/{key}")
    elif isinstance(node, list):
        for index, item in enumerate(node):
            yield from walk(item, f"{path}/{index}")


def is_invalid_arguments(result: dict[str, Any]) -> bool:
    return bool(result.get("isError")) and result["content"][0]["text"].startswith("Invalid arguments")


# --- output schemas: every row of §4, natural at the root ------------------------------------


@dataclasses.dataclass(frozen=True)
class Row:
    id: str
    hint: Any
    schema: dict[str, Any]
    samples: list[tuple[Any, Any]]
    """(what the function returns, the JSON that must arrive as structuredContent)."""
    invalid: list[Any]
    """JSON values the schema must reject."""


ROWS = [
    Row("int", int, {"type": "integer"}, [(42, 42), (-1, -1)], ["42", 4.2, True, None]),
    Row("float", float, {"type": "number"}, [(2.5, 2.5), (3, 3.0)], ["2.5", None, [2.5]]),
    Row("bool", bool, {"type": "boolean"}, [(True, True)], [1, "true", None]),
    Row("None", None, {"type": "null"}, [(None, None)], [0, "", {}, []]),
    # RFC 3339 date-time/time need a UTC offset; a naive value has none, so only a hint that
    # guarantees an aware value claims the format (format-checking clients reject the rest).
    Row(
        "datetime",
        datetime.datetime,
        {"type": "string"},
        [
            (datetime.datetime(2026, 6, 21, 5, 11), "2026-06-21T05:11:00"),
            (datetime.datetime(2026, 6, 21, 5, 11, tzinfo=datetime.UTC), "2026-06-21T05:11:00Z"),
        ],
        [1, None],
    ),
    Row(
        "AwareDatetime",
        AwareDatetime,
        {"type": "string", "format": "date-time"},
        [(datetime.datetime(2026, 6, 21, 5, 11, tzinfo=datetime.UTC), "2026-06-21T05:11:00Z")],
        [1, None],
    ),
    Row("time", datetime.time, {"type": "string"}, [(datetime.time(5, 11), "05:11:00")], [1, None]),
    Row(
        "list[Forecast]",
        list[Forecast],
        {"type": "array", "items": {"$ref": "#/$defs/Forecast"}, "$defs": {"Forecast": FORECAST}},
        [([Forecast(city="Paris", temp=21.5)], [{"city": "Paris", "temp": 21.5}]), ([], [])],
        [{"city": "Paris", "temp": 1}, [{"city": "Paris"}], [1], None],
    ),
    Row("Forecast", Forecast, FORECAST, [(Forecast(city="Oslo", temp=-3), {"city": "Oslo", "temp": -3.0})], [[], {}]),
    Row(
        "Forecast | None",
        Forecast | None,
        {"oneOf": [{"$ref": "#/$defs/Forecast"}, {"type": "null"}], "$defs": {"Forecast": FORECAST}},
        [(None, None), (Forecast(city="Rome", temp=30), {"city": "Rome", "temp": 30.0})],
        [{}, [], 0],
    ),
    Row(
        "Literal (several)",
        Literal["celsius", "fahrenheit"],
        {"enum": ["celsius", "fahrenheit"], "type": "string"},
        [("celsius", "celsius")],
        ["kelvin", 1, None],
    ),
    Row("Literal (one)", Literal["ok"], {"const": "ok", "type": "string"}, [("ok", "ok")], ["OK", None]),
    Row("Literal (ints)", Literal[1, 2, 3], {"enum": [1, 2, 3], "type": "integer"}, [(2, 2)], [4, "1", True]),
    Row("Enum", Color, {"enum": ["red", "green"], "type": "string"}, [(Color.RED, "red")], ["RED", "blue", None]),
    Row("IntEnum", Priority, {"enum": [1, 2], "type": "integer"}, [(Priority.HIGH, 2)], [3, "2"]),
    Row(
        "tuple[int, str]",
        tuple[int, str],
        {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}], "minItems": 2, "maxItems": 2},
        [((1, "a"), [1, "a"])],
        [[1], [1, "a", 2], ["a", 1], {}],
    ),
    Row(
        "tuple[int, ...]",
        tuple[int, ...],
        {"type": "array", "items": {"type": "integer"}},
        [((1, 2, 3), [1, 2, 3]), ((), [])],
        [["1"], 1],
    ),
    Row(
        "dict[str, float]",
        dict[str, float],
        {"type": "object", "additionalProperties": {"type": "number"}},
        [({"a": 1.5}, {"a": 1.5}), ({}, {})],
        [{"a": "x"}, [], None],
    ),
    Row(
        "TypedDict",
        Point,
        {
            "type": "object",
            "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}, "label": {"type": "string"}},
            "required": ["x", "y"],
        },
        [({"x": 1, "y": 2}, {"x": 1, "y": 2}), ({"x": 1, "y": 2, "label": "a"}, {"x": 1, "y": 2, "label": "a"})],
        [{"x": 1}, {"x": 1, "y": 2, "label": 3}],
    ),
    Row(
        "dataclass",
        Span,
        {
            "type": "object",
            "properties": {"start": {"type": "integer"}, "end": {"type": "integer", "default": 0}},
            # Serialization always sends a field with a default, so the output schema requires it.
            "required": ["start", "end"],
        },
        [(Span(1), {"start": 1, "end": 0})],
        [{"start": 1}, {"start": "1", "end": 0}],
    ),
    Row(
        "recursive model",
        Node,
        {"$ref": "#/$defs/Node", "$defs": {"Node": NODE}},
        [
            (
                Node(value=1, children=[Node(value=2, children=[Node(value=3)])]),
                {"value": 1, "children": [{"value": 2, "children": [{"value": 3, "children": []}]}]},
            )
        ],
        [{"value": 1, "children": [{"value": 2, "children": [{"value": "x", "children": []}]}]}],
    ),
    Row(
        "union of models sharing required fields",
        Point2D | Point3D,
        {
            "anyOf": [{"$ref": "#/$defs/Point2D"}, {"$ref": "#/$defs/Point3D"}],
            "$defs": {"Point2D": POINT_2D, "Point3D": POINT_3D},
        },
        # {"x", "y", "z"} is a valid Point2D (extra keys allowed) *and* a Point3D: oneOf would reject it.
        [(Point3D(x=1, y=2, z=3), {"x": 1, "y": 2, "z": 3}), (Point2D(x=1, y=2), {"x": 1, "y": 2})],
        [{"x": 1}, {"y": 2, "z": 3}],
    ),
    Row(
        "union of models with Literal tags",
        Cat | Dog,
        {"oneOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}], "$defs": {"Cat": CAT, "Dog": DOG}},
        [(Cat(kind="cat", lives=9), {"kind": "cat", "lives": 9})],
        [{"kind": "cat", "good": True}, {"kind": "cow"}],
    ),
    Row(
        "discriminated union",
        Annotated[Cat | Dog, Field(discriminator="kind")],
        {"oneOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}], "$defs": {"Cat": CAT, "Dog": DOG}},
        [(Dog(kind="dog", good=True), {"kind": "dog", "good": True})],
        [{"kind": "dog", "lives": 1}, {"good": True}],
    ),
    Row(
        "int | str", int | str, {"oneOf": [{"type": "integer"}, {"type": "string"}]}, [(1, 1), ("a", "a")], [1.5, None]
    ),
    Row(
        "int | float",
        int | float,
        {"anyOf": [{"type": "integer"}, {"type": "number"}]},
        # 1.0 is an integer *and* a number in JSON Schema: oneOf would reject it.
        [(1.0, 1.0), (1, 1), (1.5, 1.5)],
        ["1", None],
    ),
    Row(
        "list[int] | list[str]",
        list[int] | list[str],
        {"anyOf": [{"type": "array", "items": {"type": "integer"}}, {"type": "array", "items": {"type": "string"}}]},
        # [] is a list[int] *and* a list[str]: oneOf would reject it.
        [([], []), ([1], [1]), (["a"], ["a"])],
        [[1, "a"], {}],
    ),
    Row(
        "serialization alias and computed field",
        Profile,
        {
            "type": "object",
            "properties": {"displayName": {"type": "string"}, "initials": {"type": "string", "readOnly": True}},
            "required": ["displayName", "initials"],
        },
        [(Profile(name="Ada"), {"displayName": "Ada", "initials": "A"})],
        [{"display_name": "Ada", "initials": "A"}, {"displayName": "Ada"}],
    ),
    Row(
        "list[str] is data",
        list[str],
        {"type": "array", "items": {"type": "string"}},
        [(["a", "b"], ["a", "b"])],
        [[1], "a"],
    ),
    Row(
        "titles the user wrote",
        Report,
        {
            "type": "object",
            "properties": {
                "color": {"$ref": "#/$defs/Color"},
                "count": {"type": "integer", "default": 0, "title": "How many"},
            },
            "required": ["color", "count"],
            "title": "Weather report",
            "$defs": {"Color": {"enum": ["red", "green"], "type": "string"}},
        },
        [(Report(color=Color.GREEN), {"color": "green", "count": 0})],
        [{"color": "blue", "count": 0}],
    ),
]


ROW = {row.id: row for row in ROWS}


@pytest.mark.parametrize("row", ROWS, ids=[row.id for row in ROWS])
async def test_output_schema_is_natural(row: Row) -> None:
    server = Server("schemas")
    for index, (value, _) in enumerate(row.samples):
        server.add_tool(returning(row.hint, value), name=f"sample{index}")
    async with Client(server) as client:
        tools = await list_tools(client)
        schemas = {name: tool["outputSchema"] for name, tool in tools.items()}
        assert schemas == dict.fromkeys(schemas, row.schema)
        assert_metaschema_valid(row.schema)
        check = validator(row.schema)
        for index, (_, sent) in enumerate(row.samples):
            result = await call(client, f"sample{index}")
            assert "isError" not in result
            assert result["structuredContent"] == sent
            assert type(result["structuredContent"]) is type(sent)
            assert check.is_valid(sent), f"{row.id}: the schema rejects the value the tool sends: {sent!r}"
        for value in row.invalid:
            assert not check.is_valid(value), f"{row.id}: the schema accepts {value!r}"


@pytest.mark.parametrize(
    ("hint", "natural", "legacy", "wrapped"),
    [
        pytest.param(Forecast, FORECAST, FORECAST, False, id="model: natural"),
        pytest.param(
            Node,
            {"$ref": "#/$defs/Node", "$defs": {"Node": NODE}},
            {**NODE, "$defs": {"Node": NODE}},
            False,
            id="recursive model: root $ref inlined",
        ),
        pytest.param(
            Cat | Dog,
            {"oneOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}], "$defs": {"Cat": CAT, "Dog": DOG}},
            {
                "type": "object",
                "oneOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}],
                "$defs": {"Cat": CAT, "Dog": DOG},
            },
            False,
            id="union of models: root type object",
        ),
        pytest.param(
            list[Forecast],
            {"type": "array", "items": {"$ref": "#/$defs/Forecast"}, "$defs": {"Forecast": FORECAST}},
            {
                "type": "object",
                "properties": {"result": {"type": "array", "items": {"$ref": "#/$defs/Forecast"}}},
                "required": ["result"],
                "$defs": {"Forecast": FORECAST},
            },
            True,
            id="array: wrapped, $defs hoisted",
        ),
        pytest.param(
            Forecast | None,
            {"oneOf": [{"$ref": "#/$defs/Forecast"}, {"type": "null"}], "$defs": {"Forecast": FORECAST}},
            {
                "type": "object",
                "properties": {"result": {"oneOf": [{"$ref": "#/$defs/Forecast"}, {"type": "null"}]}},
                "required": ["result"],
                "$defs": {"Forecast": FORECAST},
            },
            True,
            id="T | None: wrapped",
        ),
        pytest.param(
            int,
            {"type": "integer"},
            {"type": "object", "properties": {"result": {"type": "integer"}}, "required": ["result"]},
            True,
            id="primitive: wrapped",
        ),
    ],
)
async def test_what_a_2025_11_25_client_sees(hint: Any, natural: Any, legacy: Any, wrapped: bool) -> None:
    server = Server("schemas")
    server.add_tool(returning(hint), name="tool")
    assert (await advertised(server, MODERN))["tool"]["outputSchema"] == natural
    assert (await advertised(server, LEGACY))["tool"]["outputSchema"] == legacy
    assert_metaschema_valid(legacy)


# --- no pydantic noise -----------------------------------------------------------------------


async def test_no_automatic_titles_and_no_openapi_discriminator() -> None:
    server = Server("schemas")

    @server.tool
    def everything(
        forecast: Forecast,
        pet: Annotated[Cat | Dog, Field(discriminator="kind")],
        node: Node,
        color: Color = Color.RED,
        point: Point | None = None,
        span: Span | None = None,
    ) -> list[Annotated[TaggedCat | TaggedDog, Field(discriminator="kind")]]:
        return []

    tool = (await advertised(server))["everything"]
    for schema in (tool["inputSchema"], tool["outputSchema"]):
        assert_metaschema_valid(schema)
        keys = {(pointer, key) for pointer, key, _ in walk(schema)}
        titles = [pointer for pointer, key in keys if key == "title" and not pointer.endswith("/properties")]
        assert titles == [], f"automatic titles at {titles}"
        assert not [pointer for pointer, key in keys if key == "discriminator"]


async def test_titles_the_user_wrote_stay_in_input_schemas_too() -> None:
    server = Server("schemas")

    @server.tool
    def summarize(report: Report) -> None:
        return None

    schema = (await advertised(server))["summarize"]["inputSchema"]
    report = schema["properties"]["report"]
    assert report["title"] == "Weather report"
    assert report["properties"]["count"]["title"] == "How many"
    assert "title" not in schema["$defs"]["Color"]


async def test_refs_are_same_document_and_defs_at_the_root() -> None:
    server = Server("schemas")

    @server.tool
    def grow(tree: Node, pets: list[Cat | Dog]) -> dict[str, Node]:
        return {"root": tree}

    tool = (await advertised(server))["grow"]
    for schema in (tool["inputSchema"], tool["outputSchema"]):
        refs = [value for _, key, value in walk(schema) if key == "$ref"]
        assert refs
        assert all(ref.startswith("#/$defs/") and ref.removeprefix("#/$defs/") in schema["$defs"] for ref in refs)
        nested_defs = [pointer for pointer, key, _ in walk(schema) if key == "$defs" and pointer]
        assert nested_defs == []


# --- output schemas are absent for content results --------------------------------------------


def no_annotation():  # type: ignore[no-untyped-def]
    return {"a": 1}


def gives_str() -> str:
    return "plain"


def gives_text() -> Text:
    return Text("block")


def gives_blocks() -> list[Text | Image]:
    return [Text("a"), Image(b"\x89PNG", mime_type="image/png")]


def gives_result() -> ToolResult:
    return ToolResult("done")


@pytest.mark.parametrize("fn", [no_annotation, gives_str, gives_text, gives_blocks, gives_result])
async def test_content_results_have_no_output_schema(fn: Callable[[], Any]) -> None:
    server = Server("schemas")
    server.add_tool(fn)
    for version in (MODERN, LEGACY):
        async with Client(server, protocol_version=version) as client:
            tool = (await list_tools(client))[fn.__name__]
            assert "outputSchema" not in tool
            result = await call(client, fn.__name__)
            assert "structuredContent" not in result
            assert "isError" not in result


# --- input schemas ---------------------------------------------------------------------------


async def test_input_schema_is_an_object_and_context_is_not_advertised() -> None:
    server = Server("schemas")

    @server.tool
    def get_forecast(city: str, ctx: Context, days: int = 3, units: Color | None = None) -> list[Forecast]:
        return []

    @server.tool
    def ping(ctx: Context | None = None) -> None:
        return None

    tools = await advertised(server)
    assert tools["get_forecast"]["inputSchema"] == {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "days": {"type": "integer", "default": 3},
            "units": {"oneOf": [{"$ref": "#/$defs/Color"}, {"type": "null"}], "default": None},
        },
        "required": ["city"],
        "additionalProperties": False,
        "$defs": {"Color": {"enum": ["red", "green"], "type": "string"}},
    }
    assert tools["ping"]["inputSchema"] == {"type": "object", "properties": {}, "additionalProperties": False}
    for tool in tools.values():
        assert_metaschema_valid(tool["inputSchema"])
    for version in (LEGACY, "2024-11-05"):
        assert (await advertised(server, version))["ping"]["inputSchema"]["type"] == "object"


@pytest.mark.parametrize(
    ("hint", "fragment"),
    [
        pytest.param(int, {"type": "integer"}, id="int"),
        pytest.param(Literal["a", "b"], {"enum": ["a", "b"], "type": "string"}, id="Literal"),
        pytest.param(Color, {"enum": ["red", "green"], "type": "string"}, id="Enum"),
        pytest.param(tuple[int, str], ROW["tuple[int, str]"].schema, id="tuple"),
        pytest.param(dict[str, int], {"type": "object", "additionalProperties": {"type": "integer"}}, id="dict"),
        pytest.param(
            Point,
            {
                "type": "object",
                "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}, "label": {"type": "string"}},
                "required": ["x", "y"],
            },
            id="TypedDict",
        ),
        pytest.param(
            Span,
            # Validation mode: a field with a default may be left out.
            {
                "type": "object",
                "properties": {"start": {"type": "integer"}, "end": {"type": "integer", "default": 0}},
                "required": ["start"],
            },
            id="dataclass",
        ),
        pytest.param(Node, {"$ref": "#/$defs/Node"}, id="recursive"),
        pytest.param(Forecast | None, {"oneOf": [{"$ref": "#/$defs/Forecast"}, {"type": "null"}]}, id="T | None"),
        pytest.param(int | str, {"oneOf": [{"type": "integer"}, {"type": "string"}]}, id="disjoint types"),
        pytest.param(
            Color | Shade, {"oneOf": [{"$ref": "#/$defs/Color"}, {"$ref": "#/$defs/Shade"}]}, id="disjoint enums"
        ),
        pytest.param(int | float, {"anyOf": [{"type": "integer"}, {"type": "number"}]}, id="int | float"),
        pytest.param(
            list[int] | list[str],
            {
                "anyOf": [
                    {"type": "array", "items": {"type": "integer"}},
                    {"type": "array", "items": {"type": "string"}},
                ]
            },
            id="list[int] | list[str]",
        ),
        pytest.param(
            Point2D | Point3D,
            {"anyOf": [{"$ref": "#/$defs/Point2D"}, {"$ref": "#/$defs/Point3D"}]},
            id="shared required",
        ),
        pytest.param(Cat | Dog, {"oneOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}]}, id="Literal tags"),
        # Arguments: the format stays (and is asserted), except where the hint wants naive values.
        pytest.param(datetime.datetime, {"type": "string", "format": "date-time"}, id="datetime"),
        pytest.param(NaiveDatetime, {"type": "string"}, id="NaiveDatetime"),
    ],
)
async def test_parameter_schema(hint: Any, fragment: dict[str, Any]) -> None:
    server = Server("schemas")
    server.add_tool(taking(hint), name="tool")
    schema = (await advertised(server))["tool"]["inputSchema"]
    assert schema["type"] == "object"
    assert schema["properties"] == {"x": fragment}
    assert schema["required"] == ["x"]
    assert_metaschema_valid(schema)


@pytest.mark.parametrize(
    ("hint", "value"),
    [
        pytest.param(int | float, 1.0, id="int | float with 1.0"),
        pytest.param(int | float, 1, id="int | float with 1"),
        pytest.param(list[int] | list[str], [], id="list[int] | list[str] with []"),
        pytest.param(Point2D | Point3D, {"x": 1, "y": 2, "z": 3}, id="shared required fields, both match"),
        pytest.param(OpenById | OpenByName, {"id": 1, "name": "a"}, id="open models, both match"),
    ],
)
async def test_overlapping_unions_stay_anyof_and_accept_values_matching_several_branches(hint: Any, value: Any) -> None:
    server = Server("schemas")
    server.add_tool(taking(hint), name="tool")
    async with Client(server) as client:
        schema = (await list_tools(client))["tool"]["inputSchema"]
        assert "anyOf" in schema["properties"]["x"]
        assert validator(schema).is_valid({"x": value})
        result = await call(client, "tool", {"x": value})
        assert "isError" not in result, result


async def test_discriminated_union_requires_the_tag_in_every_branch() -> None:
    # The tags have defaults, yet pydantic's discriminated validator insists on them: the
    # advertised schema must say so, or a client sends {"lives": 3} and gets an error.
    server = Server("schemas")

    @server.tool
    def adopt(pet: Annotated[TaggedCat | TaggedDog, Field(discriminator="kind")]) -> str:
        return type(pet).__name__

    async with Client(server) as client:
        schema = (await list_tools(client))["adopt"]["inputSchema"]
        assert_metaschema_valid(schema)
        union = schema["properties"]["pet"]
        assert "oneOf" in union
        check = validator(schema)
        for branch in union["oneOf"]:
            assert "kind" in branch.get("required", []) or "kind" in schema["$defs"][branch["$ref"].split("/")[-1]].get(
                "required", []
            )
        assert not check.is_valid({"pet": {"lives": 3}})
        assert is_invalid_arguments(await call(client, "adopt", {"pet": {"lives": 3}}))
        assert check.is_valid({"pet": {"kind": "dog"}})
        assert (await call(client, "adopt", {"pet": {"kind": "dog"}}))["content"][0]["text"] == "TaggedDog"


async def test_validation_aliases_in_input_schemas_serialization_aliases_in_output() -> None:
    server = Server("schemas")

    @server.tool
    def greet(profile: Profile) -> Profile:
        return profile

    async with Client(server) as client:
        tool = (await list_tools(client))["greet"]
        profile_in = tool["inputSchema"]["properties"]["profile"]
        assert profile_in == {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
        assert tool["outputSchema"] == ROW["serialization alias and computed field"].schema
        result = await call(client, "greet", {"profile": {"name": "Grace"}})
        assert result["structuredContent"] == {"displayName": "Grace", "initials": "G"}
        assert validator(tool["outputSchema"]).is_valid(result["structuredContent"])
        assert is_invalid_arguments(await call(client, "greet", {"profile": {"displayName": "Grace"}}))


# --- the opt-in root-level union (root_param) -------------------------------------------------


async def test_root_param_union_of_closed_models_is_a_root_oneof() -> None:
    server = Server("schemas")

    @server.tool(root_param="query")
    def find(query: ById | ByName) -> str:
        return repr(query)

    async with Client(server) as client:
        schema = (await list_tools(client))["find"]["inputSchema"]
        assert schema == {
            "type": "object",
            "oneOf": [{"$ref": "#/$defs/ById"}, {"$ref": "#/$defs/ByName"}],
            "$defs": {
                "ById": {
                    "type": "object",
                    "properties": {"id": {"type": "integer"}},
                    "required": ["id"],
                    "additionalProperties": False,
                },
                "ByName": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}},
                    "required": ["name"],
                    "additionalProperties": False,
                },
            },
        }
        assert_metaschema_valid(schema)
        assert (await call(client, "find", {"id": 7}))["content"][0]["text"] == "ById(id=7)"
        assert (await call(client, "find", {"name": "x"}))["content"][0]["text"] == "ByName(name='x')"
        assert is_invalid_arguments(await call(client, "find", {"id": 7, "name": "x"}))
        assert is_invalid_arguments(await call(client, "find", {}))
    assert (await advertised(server, LEGACY))["find"]["inputSchema"] == schema


async def test_root_param_union_of_open_models_is_a_root_anyof() -> None:
    server = Server("schemas")

    @server.tool(root_param="query")
    def find(query: OpenById | OpenByName) -> str:
        return type(query).__name__

    async with Client(server) as client:
        schema = (await list_tools(client))["find"]["inputSchema"]
        assert schema["type"] == "object"
        assert schema["anyOf"] == [{"$ref": "#/$defs/OpenById"}, {"$ref": "#/$defs/OpenByName"}]
        assert "oneOf" not in schema
        assert_metaschema_valid(schema)
        result = await call(client, "find", {"id": 7, "name": "x"})
        assert "isError" not in result


async def test_a_parameter_union_stays_under_its_property_by_default() -> None:
    server = Server("schemas")

    @server.tool
    def find(query: ById | ByName) -> None:
        return None

    schema = (await advertised(server))["find"]["inputSchema"]
    assert "oneOf" not in schema and "anyOf" not in schema
    assert schema["properties"]["query"] == {"oneOf": [{"$ref": "#/$defs/ById"}, {"$ref": "#/$defs/ByName"}]}


def test_root_param_must_be_the_only_parameter_and_an_object() -> None:
    server = Server("schemas")

    def two(query: ById | ByName, limit: int) -> None:
        return None

    def scalar(query: int) -> None:
        return None

    def unknown(query: ById) -> None:
        return None

    with pytest.raises(RegistrationError, match=r"'two'.*root_param"):
        server.tool(root_param="query")(two)
    with pytest.raises(RegistrationError, match=r"'scalar'.*root_param"):
        server.tool(root_param="query")(scalar)
    with pytest.raises(RegistrationError, match=r"'unknown'.*root_param"):
        server.tool(root_param="q")(unknown)
    assert server.tools == {}


# --- descriptions and defaults ----------------------------------------------------------------


async def test_descriptions_from_docstrings_and_fields() -> None:
    server = Server("schemas")

    @server.tool
    def google(
        city: str,
        days: int = 3,
        units: Annotated[str, Field(description="From the Field.")] = "metric",
        when: str | None = None,
    ) -> None:
        """Get the forecast
        for a city.

        Longer text that is not the summary.

        Args:
            city (str): The city
                to look up.
            days: How many days.
            units: Overridden by the Field.

        Returns:
            Nothing.
        """

    @server.tool
    def numpy(city: str, days: int = 3) -> None:
        """Numpy style.

        Parameters
        ----------
        city : str
            The city
            to look up.
        days : int, optional
            How many days.

        Returns
        -------
        None
        """

    @server.tool(description="Explicit wins.")
    def explicit(city: str) -> None:
        """Docstring loses."""

    tools = await advertised(server)
    assert tools["google"]["description"] == "Get the forecast for a city."
    assert tools["google"]["inputSchema"]["properties"] == {
        "city": {"type": "string", "description": "The city to look up."},
        "days": {"type": "integer", "description": "How many days.", "default": 3},
        "units": {"type": "string", "description": "From the Field.", "default": "metric"},
        "when": {"oneOf": [{"type": "string"}, {"type": "null"}], "default": None},
    }
    assert tools["numpy"]["description"] == "Numpy style."
    assert tools["numpy"]["inputSchema"]["properties"] == {
        "city": {"type": "string", "description": "The city to look up."},
        "days": {"type": "integer", "description": "How many days.", "default": 3},
    }
    assert tools["explicit"]["description"] == "Explicit wins."
    for tool in tools.values():
        assert_metaschema_valid(tool["inputSchema"])


async def test_defaults_are_shown_as_json() -> None:
    server = Server("schemas")

    @server.tool
    def configure(
        color: Color = Color.GREEN,
        span: Span = Span(1, 2),  # noqa: B008
        tags: tuple[str, ...] = ("a", "b"),
        ratio: float = 0.5,
    ) -> None:
        return None

    schema = (await advertised(server))["configure"]["inputSchema"]
    defaults = {name: fragment["default"] for name, fragment in schema["properties"].items()}
    assert defaults == {"color": "green", "span": {"start": 1, "end": 2}, "tags": ["a", "b"], "ratio": 0.5}
    check = validator(schema)
    assert check.is_valid(defaults)
    assert "required" not in schema


# --- hand-written schemas --------------------------------------------------------------------

HAND_INPUT: dict[str, Any] = {
    "$schema": DIALECT,
    "type": "object",
    "properties": {
        "kind": {"enum": ["a", "b"]},
        "pair": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}], "items": False},
        "tree": {"$ref": "#/$defs/tree"},
    },
    "required": ["kind"],
    "dependentRequired": {"kind": ["pair"]},
    "if": {"properties": {"kind": {"const": "b"}}},
    "then": {"required": ["tree"]},
    "unevaluatedProperties": False,
    "$defs": {
        "tree": {
            "$dynamicAnchor": "node",
            "type": "object",
            "properties": {"kids": {"type": "array", "items": {"$dynamicRef": "#node"}}},
        }
    },
}
HAND_OUTPUT: dict[str, Any] = {
    "type": "array",
    "items": {"type": "integer", "minimum": 0},
    "minItems": 1,
    "uniqueItems": True,
}


async def test_hand_written_schemas_are_advertised_as_is_and_enforced() -> None:
    server = Server("schemas")
    seen: list[dict[str, Any]] = []

    @server.tool(input_schema=HAND_INPUT, output_schema=HAND_OUTPUT)
    def shaped(**arguments: Any) -> Any:
        seen.append(arguments)
        return arguments.get("pair", [0])[:1] if arguments.get("kind") == "a" else [1, 1]

    for version in (MODERN, LEGACY):
        tool = (await advertised(server, version))["shaped"]
        assert tool["inputSchema"] == HAND_INPUT
    assert (await advertised(server))["shaped"]["outputSchema"] == HAND_OUTPUT

    async with Client(server) as client:
        ok = await call(client, "shaped", {"kind": "a", "pair": [3, "x"]})
        assert ok["structuredContent"] == [3]
        assert seen == [{"kind": "a", "pair": [3, "x"]}]
        rejected = [
            {"kind": "a"},  # dependentRequired
            {"kind": "a", "pair": [1, "x", 3]},  # prefixItems + items: false
            {"kind": "b", "pair": [1, "x"]},  # if/then
            {"kind": "a", "pair": [1, "x"], "extra": 1},  # unevaluatedProperties
            {"kind": "b", "pair": [1, "x"], "tree": {"kids": [{"kids": [1]}]}},  # $dynamicRef
        ]
        for arguments in rejected:
            result = await call(client, "shaped", arguments)
            assert is_invalid_arguments(result), arguments
            assert "structuredContent" not in result
        assert len(seen) == 1
        violates = await call(client, "shaped", {"kind": "a", "pair": [-1, "x"]})
        assert violates["isError"] is True
        assert "structuredContent" not in violates
        not_unique = await call(client, "shaped", {"kind": "b", "pair": [1, "x"], "tree": {"kids": []}})
        assert not_unique["isError"] is True


# --- every value sent matches the advertised output schema ------------------------------------


@pytest.mark.parametrize(
    ("hint", "value"),
    [
        pytest.param(Literal["a"], "b", id="Literal returning another string"),
        pytest.param(Annotated[int, Field(ge=0)], -1, id="constrained int returning -1"),
        pytest.param(int, None, id="int returning None"),
        pytest.param(list[int], [1, None], id="list[int] holding None"),
        pytest.param(float, math.nan, id="float returning NaN"),
        pytest.param(float, math.inf, id="float returning Infinity"),
        pytest.param(Forecast, Forecast.model_construct(city="x", temp=math.nan), id="model holding NaN"),
    ],
)
async def test_a_result_that_violates_the_generated_output_schema_is_an_error(hint: Any, value: Any) -> None:
    # ARCHITECTURE §6: "the return value violates the output schema → isError". A client
    # validates structuredContent against outputSchema; it must never receive a value that fails.
    server = Server("schemas")
    server.add_tool(returning(hint, value), name="tool")
    async with Client(server) as client:
        schema = (await list_tools(client))["tool"]["outputSchema"]
        result = await call(client, "tool")
    assert result.get("isError") is True, f"sent {result.get('structuredContent')!r}, which fails {schema}"
    assert "structuredContent" not in result
    assert not validator(schema).is_valid(TypeAdapter(hint).dump_python(value, mode="json", warnings=False))


# --- the generated table in docs/tools-and-schemas.md ----------------------------------------


def load_table_generator() -> Any:
    path = REPO / "scripts" / "gen_schema_table.py"
    spec = importlib.util.spec_from_file_location("gen_schema_table", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_docs_schema_table_matches_a_fresh_generation() -> None:
    generator = load_table_generator()
    page = (REPO / "docs" / "tools-and-schemas.md").read_text()
    assert generator.render_page(page) == page, (
        "docs/tools-and-schemas.md is stale: run `.venv/bin/python scripts/gen_schema_table.py`"
    )


def test_docs_schema_table_rows_agree_with_the_wire() -> None:
    generator = load_table_generator()
    rows = generator.collect_rows()
    assert len(rows) >= 20
    for row in rows:
        if row.natural is not None:
            assert_metaschema_valid(row.natural)
            assert validator(row.natural).is_valid(row.modern_value)
        if row.legacy is not None:
            assert_metaschema_valid(row.legacy)
            assert row.legacy["type"] == "object"
            assert validator(row.legacy).is_valid(row.legacy_value)


def test_docs_examples_run() -> None:
    page = (REPO / "docs" / "tools-and-schemas.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", page, flags=re.DOTALL)
    servers = load_table_generator()._page_servers(page)
    assert len(blocks) >= 6
    assert {tool for server in servers for tool in server.tools} >= {"get_forecast", "find", "expand", "withdraw"}
