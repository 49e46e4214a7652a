"""Exact behaviour of ``_schema/checks`` where mutation testing found the other tests lenient.

Each test pins a detail that a changed line in ``src/toolkit/_schema/checks.py`` altered without
any other fast test failing (``scripts/mutate src/toolkit/_schema/checks.py``; docs/contributing.md):
the JSON Pointer escaping of names with "/" and "~", and the argument errors a client reads.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import jsonschema_rs
import pytest
from tests.support.canary import Canary, serve_canary
from tests.support.memory import called

from toolkit import SchemaError, Server
from toolkit._schema.checks import MAX_DOCUMENT_DEPTH, MAX_ERROR_TEXT, check_schema, compile_validator, describe_errors
from toolkit.testing import Client

# A property name holding both characters RFC 6901 escapes: "/" is "~1", "~" is "~0".
AWKWARD = "unit/day~week"
ESCAPED = "unit~1day~0week"


def probe(**arguments: Any) -> Any:
    return arguments


def test_a_pointer_to_a_name_with_slash_and_tilde_resolves() -> None:
    schema = {
        "type": "object",
        "properties": {AWKWARD: {"type": "integer"}, "copy": {"$ref": f"#/properties/{ESCAPED}"}},
    }
    server = Server("pointers")
    tool = server.add_tool(probe, name="probe", description="d", input_schema=schema)
    assert tool.input_schema == schema


@pytest.mark.parametrize("reference", ["#/properties/unit/day~week", "#/properties/unit~1day~1week"])
def test_a_pointer_with_the_names_characters_unescaped_points_at_nothing(reference: str) -> None:
    schema = {"type": "object", "properties": {AWKWARD: {"type": "integer"}, "copy": {"$ref": reference}}}
    with pytest.raises(SchemaError) as error:
        Server("pointers").add_tool(probe, name="probe", description="d", input_schema=schema)
    assert error.value.pointer == "/properties/copy"
    assert str(error.value).startswith(
        f"tool 'probe': input schema has a {reference!r} reference at '/properties/copy' that points at nothing"
    )


def test_the_error_pointer_escapes_slash_and_tilde() -> None:
    schema = {"type": "object", "properties": {AWKWARD: {"$ref": "https://example.com/unit.json"}}}
    with pytest.raises(SchemaError) as error:
        Server("pointers").add_tool(probe, name="probe", description="d", input_schema=schema)
    assert error.value.pointer == f"/properties/{ESCAPED}"
    assert f"at '/properties/{ESCAPED}'" in str(error.value)


# --- the argument errors a client reads ----------------------------------------------------------


def words_server() -> Server:
    server = Server("errors")

    @server.tool
    def count(total: int, words: list[str]) -> int:
        return total + len(words)

    return server


async def error_text(arguments: dict[str, Any]) -> str:
    async with Client(words_server(), protocol_version="2025-11-25") as client:
        result = await called(client, "count", arguments)
    assert result["isError"] is True
    (block,) = result["content"]
    assert block["type"] == "text"
    text: str = block["text"]
    return text


async def test_every_problem_is_named_by_where_it_is_in_the_arguments() -> None:
    assert await error_text({"total": "x", "words": [1, "y", 2]}) == (
        "Invalid arguments for tool 'count': "
        'arguments/total: "x" is not of type "integer"; '
        'arguments/words/0: 1 is not of type "string"; '
        'arguments/words/2: 2 is not of type "string"'
    )


async def test_five_problems_are_described_then_the_rest_is_omitted() -> None:
    assert await error_text({"total": 0, "words": [1, 2, 3, 4, 5, 6]}) == (
        "Invalid arguments for tool 'count': "
        + "; ".join(f'arguments/words/{index}: {index + 1} is not of type "string"' for index in range(5))
        + "; (more errors omitted)"
    )


async def test_four_problems_are_all_described() -> None:
    assert await error_text({"total": 0, "words": [1, 2, 3, 4]}) == (
        "Invalid arguments for tool 'count': "
        + "; ".join(f'arguments/words/{index}: {index + 1} is not of type "string"' for index in range(4))
    )


async def test_huge_arguments_get_only_their_first_problem_described() -> None:
    assert await error_text({"total": 0, "words": list(range(20_000))}) == (
        "Invalid arguments for tool 'count': arguments/words/0: 0 is not of type \"string\"; (more errors omitted)"
    )


def not_an_integer(length: int) -> str:
    """A string value whose "is not of type" message is ``length`` characters long."""
    return "v" * (length - len('"" is not of type "integer"'))


@pytest.mark.parametrize("length", [MAX_ERROR_TEXT, MAX_ERROR_TEXT + 1, 2_000])
async def test_a_long_message_keeps_its_start_and_its_reason(length: int) -> None:
    value = not_an_integer(length)
    message = f'"{value}" is not of type "integer"'
    assert len(message) == length
    if length > MAX_ERROR_TEXT:  # 100 characters of the value, then the last 200 with the reason
        message = message[:100] + "…" + message[-200:]
    assert await error_text({"total": value, "words": []}) == (
        f"Invalid arguments for tool 'count': arguments/total: {message}"
    )


class Recording:
    """A validator that records which of its two ways of reporting errors was used."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self.validator = compile_validator(schema)
        self.calls: list[tuple[str, Any]] = []

    def validate(self, instance: Any) -> None:
        self.calls.append(("validate", instance))
        self.validator.validate(instance)

    def iter_errors(self, instance: Any) -> Any:
        self.calls.append(("iter_errors", instance))
        return self.validator.iter_errors(instance)


@pytest.mark.parametrize(("limit", "method"), [(1, "validate"), (2, "iter_errors"), (5, "iter_errors")])
def test_one_problem_is_found_without_computing_them_all(limit: int, method: str) -> None:
    # iter_errors computes every error before yielding the first: on huge arguments, seconds.
    validator = Recording({"type": "array", "items": {"type": "string"}})
    instance = [1, 2, 3]
    messages = describe_errors(validator, instance, root="r", limit=limit)  # type: ignore[arg-type]
    assert validator.calls == [(method, instance)]
    described = [f'r/{index}: {index + 1} is not of type "string"' for index in range(min(limit, 3))]
    assert messages == described + (["(more errors omitted)"] if limit < 3 else [])


@pytest.mark.parametrize("limit", [1, 5])
def test_a_valid_instance_has_no_problems(limit: int) -> None:
    validator = compile_validator({"type": "integer"})
    assert describe_errors(validator, 1, root="r", limit=limit) == []


def test_output_problems_are_described_five_at_most() -> None:
    validator = compile_validator({"type": "array", "items": {"type": "string"}})
    assert describe_errors(validator, [1, 2, 3, 4, 5, 6], root="result") == [
        *(f'result/{index}: {index + 1} is not of type "string"' for index in range(5)),
        "(more errors omitted)",
    ]


def test_the_validator_type_is_what_describe_errors_is_given() -> None:
    assert isinstance(compile_validator({"type": "integer"}), jsonschema_rs.Validator)


# --- the bounds ------------------------------------------------------------------------------------


def nested_list(levels: int) -> Any:
    value: Any = 0
    for _ in range(levels):
        value = [value]
    return value


def nested_dict(levels: int) -> Any:
    value: Any = 0
    for _ in range(levels):
        value = {"k": value}
    return value


def json_depth(value: Any) -> int:
    """Containers nested in ``value``, counting itself."""
    if isinstance(value, dict):
        return 1 + max((json_depth(child) for child in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((json_depth(child) for child in value), default=0)
    return 0


def with_data_at(shape: str, levels: int) -> dict[str, Any]:
    """A schema whose ``default`` holds ``levels`` nested lists, reached through ``shape``."""
    data = {"default": nested_list(levels)}
    if shape == "root":
        return data
    if shape == "items":  # one JSON level per subschema
        return {"items": {"items": data}}
    return {"properties": {"a": {"properties": {"b": data}}}}  # two JSON levels per subschema


def accepted(schema: dict[str, Any]) -> bool:
    try:
        check_schema(schema, what="schema")
    except SchemaError:
        return False
    return True


@pytest.mark.parametrize("shape", ["root", "items", "properties"])
def test_the_document_depth_bound_is_the_same_whichever_way_it_is_reached(shape: str) -> None:
    deepest = max(levels for levels in range(240, 262) if accepted(with_data_at(shape, levels)))
    assert json_depth(with_data_at(shape, deepest)) == MAX_DOCUMENT_DEPTH
    assert not accepted(with_data_at(shape, deepest + 1))


def deep_subschema(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "integer"}
    for _ in range(levels):
        schema = {"type": "array", "items": schema}
    return schema


@pytest.mark.parametrize(
    ("second", "message"),
    [
        (deep_subschema(70), "nests subschemas deeper than 64 levels at '/properties/deep"),
        ({"$ref": "https://example.com/remote.json"}, "has a non-local $ref 'https://example.com/remote.json'"),
        ({"anyOf": [{"$ref": "#string"}]}, "has a '#string' reference at '/properties/deep/anyOf/0' that points"),
    ],
)
def test_a_boolean_subschema_does_not_end_the_walk(second: dict[str, Any], message: str) -> None:
    # The walk is a stack: the boolean subschema after "deep" is looked at first.
    schema = {"type": "object", "properties": {"deep": second, "free": True}}
    with pytest.raises(SchemaError) as error:
        Server("walk").add_tool(probe, name="probe", description="d", input_schema=schema)
    assert message in str(error.value)


# --- what is accepted ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "schema",
    [
        pytest.param(
            {
                "$schema": "http://json-schema.org/draft-07/schema#",
                "type": "object",
                "dependencies": {"a": ["b"], "b": {"required": ["c"]}},
            },
            id="draft-07 dependencies: names and a subschema",
        ),
        pytest.param(
            {
                "type": "object",
                "properties": {"x": {"$ref": "#/$defs/inner/properties/a"}},
                "$defs": {
                    "inner": {
                        "$id": "https://example.com/inner.json",
                        "properties": {"a": {"$ref": "#/$defs/y"}},
                        "$defs": {"y": {"type": "integer"}},
                    }
                },
            },
            id="a reference inside a nested $id is relative to it",
        ),
        pytest.param(
            {
                "type": "array",
                "prefixItems": [{"type": "object", "properties": {"a": {}}}],
                "items": {"$ref": "#/prefixItems/0/properties/a"},
            },
            id="through a list index",
        ),
    ],
)
def test_valid_schemas_are_accepted(schema: dict[str, Any]) -> None:
    check_schema(schema, what="schema")


@pytest.mark.parametrize("index", ["1", "x", "01x"])
def test_a_list_index_past_the_end_or_not_a_number_points_at_nothing(index: str) -> None:
    schema = {"type": "array", "prefixItems": [{"type": "integer"}], "items": {"$ref": f"#/prefixItems/{index}"}}
    with pytest.raises(SchemaError, match="that points at nothing"):
        Server("indexes").add_tool(probe, name="probe", description="d", input_schema=schema)


def test_a_name_that_is_a_number_is_not_a_list_index() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "items": {"$ref": "#/properties/0"}}
    with pytest.raises(SchemaError, match="that points at nothing"):
        Server("indexes").add_tool(probe, name="probe", description="d", input_schema=schema)


# --- the validator ---------------------------------------------------------------------------------


async def test_argument_formats_are_asserted_and_output_formats_are_not() -> None:
    server = Server("formats")
    day = {"type": "object", "properties": {"day": {"type": "string", "format": "date"}}, "required": ["day"]}
    server.add_tool(lambda day: {"day": day}, name="echo", description="d", input_schema=day, output_schema=day)
    async with Client(server, protocol_version="2025-11-25") as client:
        refused = await called(client, "echo", {"day": "someday"})
        fine = await called(client, "echo", {"day": "2026-07-28"})
    assert refused["content"] == [
        {"type": "text", "text": 'Invalid arguments for tool \'echo\': arguments/day: "someday" is not a "date"'}
    ]
    assert fine["structuredContent"] == {"day": "2026-07-28"}
    assert compile_validator(day).is_valid({"day": "someday"})


async def test_output_formats_are_annotations() -> None:
    # A client validates structuredContent with 2020-12's default: "format" does not assert.
    server = Server("formats")
    day = {"type": "object", "properties": {"day": {"type": "string", "format": "date"}}, "required": ["day"]}
    server.add_tool(lambda: {"day": "someday"}, name="when", description="d", output_schema=day)
    async with Client(server, protocol_version="2025-11-25") as client:
        result = await called(client, "when")
    assert result["structuredContent"] == {"day": "someday"}


# Needs about 2^n backtracking steps before the second alternative matches.
EXPENSIVE = {"type": "string", "pattern": "^(?:(?:a|aa)+(?=b)b|a+)$"}


@pytest.mark.parametrize(("length", "valid"), [(16, True), (24, False)])
def test_a_pattern_gives_up_after_the_backtracking_limit(length: int, valid: bool) -> None:
    # Past REGEX_BACKTRACK_LIMIT the value does not match (ReDoS bound); the default limit is 10x ours.
    assert compile_validator(EXPENSIVE).is_valid("a" * length) is valid
    assert jsonschema_rs.validator_for(EXPENSIVE).is_valid("a" * length) is True


def test_the_validator_never_fetches(canary: Canary) -> None:
    with pytest.raises((jsonschema_rs.ReferencingError, ValueError)):
        compile_validator({"$ref": f"{canary.url}/remote.json"})
    assert canary.hits == []


@pytest.fixture
def canary() -> Iterator[Canary]:
    with serve_canary() as running:
        yield running


# --- what a developer is told ----------------------------------------------------------------------

REMOTE = "https://example.com/x.json"
ONLY_LOCAL = (
    "only same-document references ('#/$defs/...', '#anchor', or the '$id' of a schema in this document) are "
    "allowed, and toolkit never fetches schemas. "
    "Copy the referenced schema into '$defs'"
)


@pytest.mark.parametrize(
    ("schema", "message", "pointer"),
    [
        (5, "schema must be a JSON object (a dict), not int", ""),
        (
            {"properties": {"a": 5}},
            "schema has a subschema at '/properties/a' that is neither an object nor a boolean",
            "/properties/a",
        ),
        ({"$ref": REMOTE}, f"schema has a non-local $ref {REMOTE!r} at '/'; {ONLY_LOCAL}", ""),
        # Checked whatever keyword comes before it in the same object.
        ({"properties": {"a": {}}, "$ref": REMOTE}, f"schema has a non-local $ref {REMOTE!r} at '/'; {ONLY_LOCAL}", ""),
        (
            {"$schema": "https://example.com/dialect"},
            "schema declares an unsupported dialect $schema='https://example.com/dialect' at '/'; "
            "use 'https://json-schema.org/draft/2020-12/schema' (the default) or a draft toolkit knows",
            "",
        ),
        ({"$ref": "#/nowhere"}, "schema has a '#/nowhere' reference at '/' that points at nothing in the schema", ""),
        ({"type": "string", "pattern": "("}, 'schema cannot be compiled: "(" is not a "regex"', ""),
        # Not JSON at all: the validator's own reason is passed on, whatever its exception.
        ({"type": "string", "default": b"m"}, "schema cannot be compiled: Unsupported type: 'bytes'", ""),
        ({"default": nested_list(300)}, "schema is nested deeper than 255 levels", ""),
        ({"properties": {"a": {"const": {"k": nested_list(300)}}}}, "schema is nested deeper than 255 levels", ""),
        ({"examples": [nested_dict(300)]}, "schema is nested deeper than 255 levels", ""),
        # Just past the bound: 257 levels counting the root, reached through subschemas or not.
        ({"default": nested_list(256)}, "schema is nested deeper than 255 levels", ""),
        ({"properties": {"a": {"default": nested_list(254)}}}, "schema is nested deeper than 255 levels", ""),
        # exactly one past the bound, where "properties" adds two levels (the map and the subschema)
        ({"properties": {"a": {"default": nested_list(253)}}}, "schema is nested deeper than 255 levels", ""),
        ({"items": {"default": nested_list(255)}}, "schema is nested deeper than 255 levels", ""),
    ],
)
def test_what_a_refused_schema_is_told(schema: Any, message: str, pointer: str) -> None:
    # Refused by toolkit's own walk, with its own words: not left to the validator's backstop.
    with pytest.raises(SchemaError) as error:
        check_schema(schema, what="schema")
    assert str(error.value) == message
    assert error.value.pointer == pointer


def test_deep_data_within_the_bound_is_accepted() -> None:
    check_schema({"default": nested_dict(200), "examples": [nested_list(200)]}, what="schema")
    check_schema({"default": innermost_empty(MAX_DOCUMENT_DEPTH - 1)}, what="schema")  # the deepest that compiles


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ({"enum": {"a"}}, "schema cannot be compiled: Unsupported type: 'set'"),
        ({"$schema": []}, "schema declares an unsupported dialect $schema=[] at '/'"),
        ({"$schema": {"a": 1}}, "schema declares an unsupported dialect $schema={'a': 1} at '/'"),
    ],
)
def test_what_is_not_json_is_refused_in_toolkits_words(schema: dict[str, Any], message: str) -> None:
    with pytest.raises(SchemaError) as error:
        check_schema(schema, what="schema")
    assert str(error.value).startswith(message)


def innermost_empty(levels: int) -> list[Any]:
    """``levels`` nested lists, the innermost one empty."""
    value: list[Any] = []
    for _ in range(levels - 1):
        value = [value]
    return value


# jsonschema-rs compiles at most 255 nested containers (counting the root); toolkit's walk used to
# let through 256 (257 when the innermost was empty: a scalar counted as a level), which then met
# the validator's "Recursion limit reached" instead of toolkit's own refusal.
@pytest.mark.parametrize(
    "data",
    [
        pytest.param(nested_list(255), id="256 levels, a number innermost"),
        pytest.param(innermost_empty(255), id="256 levels, the innermost empty"),
        pytest.param(innermost_empty(256), id="257 levels, the innermost empty"),
    ],
)
def test_a_schema_too_deep_for_the_validator_is_refused_in_toolkits_own_words(data: Any) -> None:
    # Not "schema cannot be compiled: Recursion limit reached".
    with pytest.raises(SchemaError) as error:
        check_schema({"default": data}, what="schema")
    assert str(error.value).startswith("schema is nested deeper than ")
