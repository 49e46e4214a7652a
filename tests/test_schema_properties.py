"""The advertised input schema and the tool's own validation agree, both ways (ARCHITECTURE §4).

For every supported hint: values generated from the type are accepted by both; mutations of
them (and arbitrary JSON) are accepted by the advertised schema, checked with jsonschema-rs,
exactly when the tool accepts them, called through the in-memory client. And every value a
tool sends validates against its advertised output schema.
"""

from __future__ import annotations

import datetime
import math
import uuid
from typing import Annotated, Any, Literal

import jsonschema_rs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field, TypeAdapter
from tests.support.hints import ById, ByName, Cat, Color, Dog, Forecast, Node, Point, Point2D, Point3D, Priority, Span
from tests.wire import assert_valid

from toolkit import Server
from toolkit.testing import Client

BOUNDED = settings(
    max_examples=15,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


class Profile(BaseModel):
    display_name: str = Field(validation_alias="name")


HINTS: dict[str, Any] = {
    "int": int,
    "float": float,
    "str": str,
    "bool": bool,
    "None": None,
    "Literal[str]": Literal["a", "b"],
    "Literal[int]": Literal[1, 2],
    "Enum": Color,
    "IntEnum": Priority,
    "tuple[int, str]": tuple[int, str],
    "tuple[int, ...]": tuple[int, ...],
    "list[int]": list[int],
    "dict[str, int]": dict[str, int],
    "TypedDict": Point,
    "dataclass": Span,
    "model": Forecast,
    "model | None": Forecast | None,
    "recursive model": Node,
    "models sharing required fields": Point2D | Point3D,
    "models with Literal tags": Cat | Dog,
    "discriminated union": Annotated[Cat | Dog, Field(discriminator="kind")],
    "closed models": ById | ByName,
    "int | str": int | str,
    "int | float": int | float,
    "list[int] | list[str]": list[int] | list[str],
    "validation alias": Profile,
}

KEYS = st.sampled_from(
    ["x", "y", "z", "id", "name", "kind", "lives", "good", "city", "temp", "value", "children", "label", "start", "end"]
)
EDGES = st.sampled_from([0, 1, -1, 2, 1.0, 1.5, -0.0, 1e20, 2**63, 10**400, "", "a", "b", "cat", "dog", "red", "1"])
LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=4),
    EDGES,
)
JSON = st.recursive(
    LEAVES,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(KEYS | st.text(max_size=3), children, max_size=3),
    max_leaves=10,
)


NODES = st.recursive(
    st.builds(lambda value: {"value": value}, st.integers()),
    lambda children: st.builds(
        lambda value, kids: {"value": value, "children": kids}, st.integers(), st.lists(children, max_size=3)
    ),
    max_leaves=8,
)


def tool_name(label: str) -> str:
    return "t_" + "".join(character if character.isalnum() else "_" for character in label)


def build_server() -> Server:
    server = Server("properties")
    for label, hint in HINTS.items():

        def takes(x: Any) -> None:
            return None

        takes.__annotations__ = {"x": hint, "return": type(None)}
        server.add_tool(takes, name=tool_name(label))

        def echo(x: Any) -> Any:
            return x

        echo.__annotations__ = {"x": hint, "return": hint}
        server.add_tool(echo, name="echo_" + tool_name(label))
    return server


SERVER = build_server()
# toolkit asserts "format" when it checks arguments (2020-12 allows format as an assertion; see
# docs/tools-and-schemas.md), so "what the advertised schema accepts" is judged the same way.
INPUT_VALIDATORS = {
    label: jsonschema_rs.Draft202012Validator(
        SERVER.tools[tool_name(label)].input_schema, offline=True, validate_formats=True
    )
    for label in HINTS
}


def finite(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(finite(item) for item in value)
    if isinstance(value, dict):
        return all(finite(item) for item in value.values())
    return True


def valid_json(hint: Any) -> st.SearchStrategy[Any]:
    """JSON for values of ``hint``, generated from the type (input form: validation aliases)."""
    if hint is None:
        return st.none()
    if hint is Profile:
        return st.builds(lambda name: {"name": name}, st.text(max_size=5))
    if hint is Node:  # from_type builds needlessly deep trees; this keeps each example small
        return NODES
    adapter = TypeAdapter(hint)
    return st.from_type(hint).map(lambda value: adapter.dump_python(value, mode="json")).filter(finite)


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found.extend(paths(item, (*prefix, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found.extend(paths(item, (*prefix, index)))
    return found


def replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, *rest = path
    if isinstance(value, dict):
        return {**value, head: replace(value[head], tuple(rest), new)}
    copy = list(value)
    copy[head] = replace(value[head], tuple(rest), new)
    return copy


@st.composite
def mutated(draw: st.DrawFn, hint: Any) -> Any:
    """A valid value with one thing changed: a part replaced, a key added or dropped, an item added."""
    value = draw(valid_json(hint))
    path = draw(st.sampled_from(paths(value)))
    target = value
    for step in path:
        target = target[step]
    operations = ["replace"]
    if isinstance(target, dict):
        operations += ["add key", "drop key"] if target else ["add key"]
    if isinstance(target, list):
        operations += ["append", "drop item"] if target else ["append"]
    operation = draw(st.sampled_from(operations))
    if operation == "replace":
        changed = draw(JSON)
    elif operation == "add key":
        changed = {**target, draw(KEYS): draw(JSON)}
    elif operation == "drop key":
        key = draw(st.sampled_from(sorted(target)))
        changed = {name: item for name, item in target.items() if name != key}
    elif operation == "append":
        changed = [*target, draw(JSON)]
    else:
        index = draw(st.integers(0, len(target) - 1))
        changed = target[:index] + target[index + 1 :]
    return replace(value, path, changed)


async def tool_accepts(name: str, arguments: dict[str, Any]) -> bool:
    async with Client(SERVER) as client:
        response = await client.request("tools/call", {"name": name, "arguments": arguments})
    assert_valid(response, client.protocol_version, method="tools/call")
    result = response["result"]
    if not result.get("isError"):
        return True
    text = result["content"][0]["text"]
    assert text.startswith(f"Invalid arguments for tool {name!r}"), text
    return False


async def agree(label: str, value: Any) -> None:
    arguments = {"x": value}
    schema_says = INPUT_VALIDATORS[label].is_valid(arguments)
    tool_says = await tool_accepts(tool_name(label), arguments)
    assert schema_says == tool_says, (
        f"{label}: the advertised schema {'accepts' if schema_says else 'rejects'} {value!r}, "
        f"the tool {'accepts' if tool_says else 'rejects'} it; schema: {SERVER.tools[tool_name(label)].input_schema}"
    )


@pytest.mark.parametrize("label", list(HINTS))
@BOUNDED
@given(data=st.data())
async def test_values_of_the_type_are_accepted_by_both(label: str, data: st.DataObject) -> None:
    value = data.draw(valid_json(HINTS[label]), label="value")
    assert INPUT_VALIDATORS[label].is_valid({"x": value}), f"{label}: the schema rejects {value!r}"
    assert await tool_accepts(tool_name(label), {"x": value}), f"{label}: the tool rejects {value!r}"


@pytest.mark.parametrize("label", list(HINTS))
@BOUNDED
@given(data=st.data())
async def test_mutated_values_are_judged_alike(label: str, data: st.DataObject) -> None:
    await agree(label, data.draw(mutated(HINTS[label]), label="mutated"))


@pytest.mark.parametrize("label", list(HINTS))
@BOUNDED
@given(value=JSON)
async def test_arbitrary_json_is_judged_alike(label: str, value: Any) -> None:
    await agree(label, value)


@pytest.mark.parametrize("label", [label for label in HINTS if label != "str"])  # str is content: no schema
@BOUNDED
@given(data=st.data())
async def test_every_value_sent_validates_against_the_output_schema(label: str, data: st.DataObject) -> None:
    value = data.draw(valid_json(HINTS[label]), label="value")
    name = "echo_" + tool_name(label)
    schema = SERVER.tools[name].output_schema
    assert schema is not None
    async with Client(SERVER) as client:
        response = await client.request("tools/call", {"name": name, "arguments": {"x": value}})
    assert_valid(response, client.protocol_version, method="tools/call")
    result = response["result"]
    assert "isError" not in result, result
    assert jsonschema_rs.Draft202012Validator(schema, offline=True).is_valid(result["structuredContent"])


# --- edge values, pinned (the property tests find these too, less predictably) -------------------


@pytest.mark.parametrize(
    ("label", "value"),
    [
        pytest.param("list[int]", [1e20], id="list[int] given 1e20 (an integer in JSON Schema)"),
        pytest.param("TypedDict", {"x": 1e20, "y": 1}, id="TypedDict int field given 1e20"),
        pytest.param("recursive model", {"value": 9.223372036854776e18}, id="model int field given 2.0**63"),
        pytest.param("int", 1e20, id="int given 1e20"),
        pytest.param("int", 2**70, id="int given 2**70"),
        pytest.param("int | float", 1.0, id="int | float given 1.0"),
        pytest.param("list[int] | list[str]", [], id="list[int] | list[str] given []"),
        pytest.param("models sharing required fields", {"x": 1, "y": 2, "z": 3}, id="both models match"),
        pytest.param("closed models", {"id": 1, "name": "a"}, id="closed models, neither matches"),
        pytest.param("Literal[int]", 1.0, id="Literal[1, 2] given 1.0"),
        pytest.param("IntEnum", 2.0, id="IntEnum given 2.0"),
        pytest.param("bool", 1, id="bool given 1"),
        pytest.param("str", 1, id="str given 1"),
        pytest.param("None", 0, id="None given 0"),
    ],
)
async def test_edge_values_are_judged_alike(label: str, value: Any) -> None:
    await agree(label, value)


# A documented limit, not an agreement: JSON Schema's "number" is unbounded, but a Python float
# (IEEE-754 double) is not. A number beyond its range for a float argument is refused with a
# clear error naming the argument; the same integer for an int argument is accepted.
@pytest.mark.parametrize(
    ("label", "value", "where"),
    [
        pytest.param("float", 10**400, "arguments/x", id="float given an integer beyond double range"),
        pytest.param("model", {"city": "x", "temp": 10**400}, "arguments/x/temp", id="model float field given 10**400"),
    ],
)
async def test_numbers_beyond_double_range_are_refused_clearly_for_floats(label: str, value: Any, where: str) -> None:
    async with Client(SERVER) as client:
        response = await client.request("tools/call", {"name": tool_name(label), "arguments": {"x": value}})
    assert_valid(response, client.protocol_version, method="tools/call")
    result = response["result"]
    assert result.get("isError") is True
    assert where in result["content"][0]["text"]
    assert await tool_accepts(tool_name("int"), {"x": 10**400})


# Hints outside ARCHITECTURE §4's list whose pydantic schema says less than pydantic checks.
OUTSIDE: dict[str, Any] = {
    "dict[int, str]": dict[int, str],
    "datetime": datetime.datetime,
    "date": datetime.date,
    "UUID": uuid.UUID,
}
OUTSIDE_SERVER = Server("outside")
for _label, _hint in OUTSIDE.items():

    def _takes(x: Any) -> None:
        return None

    _takes.__annotations__ = {"x": _hint, "return": type(None)}
    OUTSIDE_SERVER.add_tool(_takes, name=tool_name(_label))


@pytest.mark.parametrize(
    ("label", "value"),
    [
        pytest.param("dict[int, str]", {"not-a-number": "x"}, id="dict[int, str] with a non-integer key"),
        pytest.param("datetime", "yesterday", id="datetime given a non-date string"),
        pytest.param("datetime", "2026-05-01T10:00:00", id="datetime without a UTC offset (not RFC 3339)"),
        pytest.param("datetime", "2026-05-01T10:00:00+02:00", id="datetime with an offset"),
        pytest.param("date", "2024-13-45", id="date given an impossible date"),
        pytest.param("UUID", "not-a-uuid", id="UUID given a non-UUID string"),
    ],
)
async def test_hints_beyond_section_4_advertise_what_they_check(label: str, value: Any) -> None:
    tool = OUTSIDE_SERVER.tools[tool_name(label)]
    schema_says = jsonschema_rs.Draft202012Validator(tool.input_schema, offline=True, validate_formats=True).is_valid(
        {"x": value}
    )
    async with Client(OUTSIDE_SERVER) as client:
        response = await client.request("tools/call", {"name": tool.name, "arguments": {"x": value}})
    assert_valid(response, client.protocol_version, method="tools/call")
    tool_says = not response["result"].get("isError")
    assert schema_says == tool_says, (
        f"{label}: the advertised schema {tool.input_schema['properties']['x']} "
        f"{'accepts' if schema_says else 'rejects'} {value!r}; the tool {'accepts' if tool_says else 'rejects'} it"
    )
