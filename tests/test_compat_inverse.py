"""``natural_outcome``, the inverse of ``call_result``: a result any era's server sent, made natural again.

The property: ``natural_outcome(call_result(outcome, shape, v), v, advertised) == outcome``
wherever ``v`` can carry the outcome, for every version and every kind of natural value of the
matrix (ARCHITECTURE §3), with the shapes and results of real tools registered on a ``Server``.
What a version cannot carry is lost on the way out, and stays lost (``carried`` states it):

- 2024-11-05 and 2025-03-26 have no ``structuredContent``: the value survives only as its JSON
  text block, which is text (never parsed back into a value); blocks those versions lack arrive
  as their text stand-ins (audio before 2025-03-26, resource links before 2025-06-18), and a
  block's ``_meta`` is dropped before 2025-06-18.
- 2025-06-18 and 2025-11-25: a non-object value a tool without an output schema sent (a
  ``ToolResult``'s own ``structured_content``) travels as ``{"result": v}`` and nothing says it
  was wrapped, so it comes back as ``{"result": v}``.
- Every version: an ``isError`` result carries no ``structuredContent``.
"""

from __future__ import annotations

import json
from typing import Any

import pydantic_core
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel
from tests.support.hints import Cat, Dog, Forecast, Point
from tests.support.memory import ALL_VERSIONS, MODERN, STRUCTURED, UNSTRUCTURED, called, listed_tools
from tests.wire import assert_result_valid

from toolkit import (
    Audio,
    ContentBlock,
    EmbeddedResource,
    Image,
    ResourceLink,
    Server,
    Text,
    ToolError,
    ToolResult,
    _compat,
)
from toolkit._compat.blocks import WireBlock
from toolkit._compat.schemas import is_wrapper_schema, wrap_schema
from toolkit._content import NO_STRUCTURED, CallOutcome
from toolkit.testing import Client

SERVER_INFO = {"name": "inverse", "version": "1.0.0"}
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
RELATED_TASK_KEY = "io.modelcontextprotocol/related-task"
BOUNDED = settings(
    max_examples=15,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)


class Outcome(BaseModel):
    """A natural object that genuinely has a ``result`` field: never unwrapped."""

    result: list[int]


def every_block() -> list[ContentBlock]:
    return [
        Text("hello", annotations={"audience": ["user"], "priority": 0.5}, meta={"source": "test"}),
        Image(b"\x89PNG....", mime_type="image/png"),
        Audio(b"RIFF....WAVE", mime_type="audio/wav", meta={"length": 2}),
        ResourceLink("file:///data/report.csv", "report", title="Quarterly report", mime_type="text/csv", size=12),
        ResourceLink("file:///data/raw.csv", "raw"),
        EmbeddedResource("file:///notes.md", text="# Notes", mime_type="text/markdown", resource_meta={"rev": 3}),
        EmbeddedResource("file:///blob.bin", blob=b"\x00\x01", mime_type="application/octet-stream"),
    ]


def build_server() -> Server:
    server = Server("inverse", version="1.0.0")

    # Objects (a root type "object" in every era's schema).
    @server.tool
    def model() -> Forecast:
        return Forecast(city="Seattle", temp=61.5)

    @server.tool
    def typed_dict() -> Point:
        return {"x": 1, "y": 2}

    @server.tool
    def mapping() -> dict[str, int]:
        return {"Seattle": 755_078, "Denver": 715_522}

    @server.tool
    def genuine_result() -> Outcome:
        return Outcome(result=[1, 2])

    @server.tool
    def result_mapping() -> dict[str, int]:
        return {"result": 3}

    # A union whose every branch is an object.
    @server.tool
    def pet() -> Cat | Dog:
        return Dog(kind="dog", good=True)

    # Arrays, primitives, None, T | None, other unions: wrapped in 2025-06-18 and 2025-11-25.
    @server.tool
    def ints() -> list[int]:
        return [61, 63, 66]

    @server.tool
    def forecasts() -> list[Forecast]:
        return [Forecast(city="Seattle", temp=61.5), Forecast(city="Denver", temp=70.0)]

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
    def flag() -> bool:
        return False

    @server.tool
    def word() -> str:
        return '{"looks": "like JSON"}'

    @server.tool
    def nothing() -> None:
        return None

    @server.tool
    def maybe_none() -> int | None:
        return None

    @server.tool
    def maybe_some() -> int | None:
        return 7

    @server.tool
    def either() -> int | str:
        return "seven"

    # isError, with no structured value.
    @server.tool
    def fails() -> int:
        raise ToolError("the sensor is offline")

    server.add_tool(
        lambda: ToolResult(["not found", Text("try again", meta={"retry": True})], is_error=True, meta={"code": 7}),
        name="fails_with_blocks",
        description="d",
    )
    # Custom content blocks and _meta, beside a structured value and without one.
    server.add_tool(
        lambda: ToolResult(every_block(), structured_content=[1, 2], meta={"trace": "abc", "n": 1}),
        name="blocks_and_value",
        description="d",
        output_schema={"type": "array", "items": {"type": "integer"}},
    )
    server.add_tool(lambda: ToolResult(every_block(), meta={"trace": "abc"}), name="blocks_only", description="d")
    server.add_tool(lambda: "plain text", name="plain", description="d")
    # A ToolResult's own structured value on a tool without an output schema.
    server.add_tool(lambda: ToolResult(structured_content={"a": 1}), name="loose_object", description="d")
    server.add_tool(lambda: ToolResult(structured_content=[1, 2]), name="loose_list", description="d")
    return server


SERVER = build_server()
CASES = sorted(SERVER.tools)
LOOSE_NON_OBJECTS = {"loose_list"}


# --- what a version carries -------------------------------------------------------------------


def facts(outcome: CallOutcome) -> tuple[Any, ...]:
    """A ``CallOutcome`` as comparable data (blocks by their wire form)."""
    content = None if outcome.content is None else [block.to_wire() for block in outcome.content]
    structured = "<no structured content>" if outcome.structured is NO_STRUCTURED else outcome.structured
    return content, structured, outcome.is_error, outcome.meta or None


def _fallback(value: Any) -> dict[str, Any]:
    return {"type": "text", "text": pydantic_core.to_json(value, inf_nan_mode="null").decode()}


def _block_carried(block: dict[str, Any], version: str) -> dict[str, Any]:
    """The documented block losses: before 2025-06-18 no block ``_meta``, no resource links; audio since 2025-03-26."""
    if version in UNSTRUCTURED:
        block = {key: value for key, value in block.items() if key != "_meta"}
        if block["type"] == "resource_link":
            return {"type": "text", "text": f"Resource: {block.get('title') or block['name']} <{block['uri']}>"}
        if block["type"] == "audio" and version == "2024-11-05":
            return {"type": "text", "text": f"[audio content ({block['mimeType']}) omitted]"}
    return block


def carried(outcome: CallOutcome, version: str, *, loose: bool = False) -> tuple[Any, ...]:
    """What a client of ``version`` can recover of ``outcome`` (the losses in the module docstring).

    ``loose``: the structured value is a non-object of a tool without an output schema.
    """
    structured = outcome.structured
    if outcome.content is not None:
        content = [_block_carried(block.to_wire(), version) for block in outcome.content]
    else:  # what call_result sends in its place
        content = [] if structured is NO_STRUCTURED else [_fallback(structured)]
    if outcome.is_error or version in UNSTRUCTURED:
        structured = NO_STRUCTURED
    if loose and version in STRUCTURED and structured is not NO_STRUCTURED:
        structured = {"result": structured}
    if structured is not NO_STRUCTURED and content == [_fallback(structured)]:
        content = None  # the text fallback itself: call_result writes it again
    return (
        content,
        "<no structured content>" if structured is NO_STRUCTURED else structured,
        outcome.is_error,
        (outcome.meta or None),
    )


def on_the_wire(result: dict[str, Any], version: str) -> dict[str, Any]:
    """``result`` as a client of ``version`` decodes it: the envelope added, through JSON and back."""
    enveloped = _compat.envelop(dict(result), version, SERVER_INFO, result_type="complete")
    decoded: dict[str, Any] = json.loads(pydantic_core.to_json(enveloped))
    assert_result_valid(decoded, version, "tools/call")
    return decoded


# --- the round trip through a real server, every tool and version ------------------------------


@pytest.mark.parametrize("version", ALL_VERSIONS)
@pytest.mark.parametrize("name", CASES)
async def test_a_served_result_comes_back_natural(name: str, version: str) -> None:
    tool = SERVER.tools[name]
    outcome = await tool.call({}, None)
    async with Client(SERVER, protocol_version=version) as client:
        advertised = (await listed_tools(client))[name].get("outputSchema")
        result = await called(client, name)
    assert advertised == _compat.tool_shape(tool, version).advertised.get("outputSchema")
    recovered = _compat.natural_outcome(result, version, advertised)
    assert facts(recovered) == carried(outcome, version, loose=name in LOOSE_NON_OBJECTS)
    if version not in UNSTRUCTURED and not outcome.is_error and name not in LOOSE_NON_OBJECTS:
        assert facts(recovered) == carried(outcome, MODERN)  # nothing lost: the outcome itself


@pytest.mark.parametrize("source", [*STRUCTURED, MODERN])
@pytest.mark.parametrize("name", sorted(set(CASES) - LOOSE_NON_OBJECTS))
async def test_a_recovered_outcome_shapes_for_every_era_as_the_original_does(name: str, source: str) -> None:
    # What a proxy does: read the upstream's result in its era, send it on in the caller's.
    tool = SERVER.tools[name]
    outcome = await tool.call({}, None)
    shape = _compat.tool_shape(tool, source)
    wire = on_the_wire(_compat.call_result(outcome, shape, source), source)
    recovered = _compat.natural_outcome(wire, source, shape.advertised.get("outputSchema"))
    for target in ALL_VERSIONS:
        target_shape = _compat.tool_shape(tool, target)
        assert _compat.call_result(recovered, target_shape, target) == _compat.call_result(
            outcome, target_shape, target
        ), target


# --- the property over generated values --------------------------------------------------------

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=6),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3),
    max_leaves=8,
)
# Objects that look like the wrapper: {"result": ...} alone (often), or beside other keys.
OBJECTS = st.builds(lambda value: {"result": value}, JSON) | st.dictionaries(
    st.sampled_from(["result", "a", "b"]), JSON, max_size=3
)
META = st.none() | st.dictionaries(st.sampled_from(["trace", "n", SERVER_INFO_KEY]), JSON, max_size=2)
BLOCKS = st.lists(
    st.one_of(
        st.builds(
            Text,
            st.text(max_size=8),
            annotations=st.none() | st.just({"priority": 1}),
            meta=st.none() | st.just({"k": 1}),
        ),
        st.builds(Image, st.binary(min_size=1, max_size=4), mime_type=st.just("image/png")),
        st.builds(Audio, st.binary(min_size=1, max_size=4), mime_type=st.just("audio/wav"), meta=st.none() | META),
        st.builds(ResourceLink, st.just("file:///a"), st.text(min_size=1, max_size=4), title=st.none() | st.just("A")),
        st.builds(EmbeddedResource, st.just("file:///b"), text=st.text(max_size=4)),
    ),
    max_size=4,
)


def _echo_server() -> Server:
    server = Server("echo")

    @server.tool
    def anything(value: Any) -> Any:
        return value

    @server.tool
    def an_object(value: dict[str, Any]) -> dict[str, Any]:
        return value

    @server.tool
    def a_list(value: list[Any]) -> list[Any]:
        return value

    @server.tool
    def optional(value: int | None) -> int | None:
        return value

    @server.tool
    def pet(value: Cat | Dog) -> Cat | Dog:
        return value

    server.add_tool(lambda: None, name="loose", description="d")
    return server


ECHO = _echo_server()
VALUES = {
    "anything": OBJECTS | JSON,
    "an_object": OBJECTS,
    "a_list": st.lists(JSON, max_size=4),
    "optional": st.none() | st.integers(),
    "pet": st.builds(Cat, kind=st.just("cat"), lives=st.integers())
    | st.builds(Dog, kind=st.just("dog"), good=st.booleans()),
    "loose": OBJECTS | JSON,
}


@pytest.mark.parametrize("version", ALL_VERSIONS)
@pytest.mark.parametrize("name", sorted(VALUES))
@BOUNDED
@given(data=st.data(), blocks=st.none() | BLOCKS, is_error=st.booleans(), meta=META)
def test_every_generated_outcome_round_trips_as_far_as_its_version_carries_it(
    name: str, version: str, data: st.DataObject, blocks: list[ContentBlock] | None, is_error: bool, meta: Any
) -> None:
    tool = ECHO.tools[name]
    value = data.draw(VALUES[name])
    outcome = tool.finish(ToolResult(blocks, structured_content=value, is_error=is_error, meta=meta))
    assert outcome.structured is not NO_STRUCTURED, facts(outcome)
    shape = _compat.tool_shape(tool, version)
    wire = on_the_wire(_compat.call_result(outcome, shape, version), version)
    recovered = _compat.natural_outcome(wire, version, shape.advertised.get("outputSchema"))
    loose = name == "loose" and not isinstance(outcome.structured, dict)
    expected = carried(outcome, version, loose=loose)
    if version == MODERN and isinstance(meta, dict) and SERVER_INFO_KEY in meta:
        # The modern envelope's key: finish() replaced the tool's, and the inverse drops it.
        expected = (*expected[:3], {k: v for k, v in meta.items() if k != SERVER_INFO_KEY} or None)
    assert facts(recovered) == expected


# --- the rules, one at a time ------------------------------------------------------------------


@pytest.mark.parametrize("version", STRUCTURED)
async def test_a_natural_result_field_is_not_unwrapped(version: str) -> None:
    async with Client(SERVER, protocol_version=version) as client:
        tools = await listed_tools(client)
        for name, natural in (("genuine_result", {"result": [1, 2]}), ("result_mapping", {"result": 3})):
            schema = tools[name]["outputSchema"]
            assert not is_wrapper_schema(schema), schema
            result = await called(client, name)
            assert result["structuredContent"] == natural
            assert _compat.natural_outcome(result, version, schema).structured == natural


@pytest.mark.parametrize("version", STRUCTURED)
def test_a_wrapped_value_is_unwrapped_only_under_the_wrapper_schema(version: str) -> None:
    result = {"content": [], "structuredContent": {"result": [1, 2]}}
    wrapper = wrap_schema({"type": "array", "items": {"type": "integer"}})
    assert _compat.natural_outcome(result, version, wrapper).structured == [1, 2]
    # No schema advertised (a ToolResult's own structured_content): nothing says it was wrapped.
    assert _compat.natural_outcome(result, version, None).structured == {"result": [1, 2]}
    # The wrapper schema, but a value that is not exactly {"result": v}: taken as it is.
    odd = {"content": [], "structuredContent": {"result": 1, "extra": 2}}
    assert _compat.natural_outcome(odd, version, wrapper).structured == {"result": 1, "extra": 2}


def test_the_modern_era_never_unwraps() -> None:
    # In 2026-07-28 every schema is natural: one of the wrapper's form describes a real object.
    result = {"content": [], "structuredContent": {"result": 5}, "resultType": "complete"}
    schema = wrap_schema({"type": "integer"})
    assert _compat.natural_outcome(result, MODERN, schema).structured == {"result": 5}


@pytest.mark.parametrize("version", STRUCTURED)
async def test_a_natural_schema_of_exactly_the_wrapper_form_reads_as_wrapped(version: str) -> None:
    # The one ambiguity, documented on is_wrapper_schema: a hand-written natural object schema
    # that is exactly what wrapping "integer" gives. The advertised schemas are equal, so the
    # natural {"result": 5} cannot be told from a wrapped 5.
    natural = {"type": "object", "properties": {"result": {"type": "integer"}}, "required": ["result"]}
    server = Server("ambiguous")
    server.add_tool(lambda: {"result": 5}, name="ambiguous", description="d", output_schema=natural)
    async with Client(server, protocol_version=version) as client:
        advertised = (await listed_tools(client))["ambiguous"]["outputSchema"]
        result = await called(client, "ambiguous")
    assert advertised == wrap_schema({"type": "integer"})
    assert result["structuredContent"] == {"result": 5}
    assert _compat.natural_outcome(result, version, advertised).structured == 5


@pytest.mark.parametrize(
    ("schema", "wrapper"),
    [
        (wrap_schema({"type": "array", "items": {"type": "integer"}}), True),
        (wrap_schema({"type": "null"}), True),
        (wrap_schema({}), True),
        (
            wrap_schema(
                {
                    "$schema": "https://json-schema.org/draft/2020-12/schema",
                    "$id": "https://example.com/r.json",
                    "type": "array",
                    "items": {"$ref": "#/$defs/Item"},
                    "$defs": {"Item": {"type": "object"}},
                }
            ),
            True,
        ),
        (
            {
                "type": "object",
                "properties": {"result": {"$ref": "#/$defs/L"}},
                "required": ["result"],
                "$defs": {"L": {"type": "array"}},
            },
            True,
        ),
        # Anything beside the wrapper's keys is a natural schema.
        ({**wrap_schema({"type": "integer"}), "title": "R"}, False),
        ({**wrap_schema({"type": "integer"}), "additionalProperties": False}, False),
        ({**wrap_schema({"type": "integer"}), "x-fastmcp-wrap-result": True}, False),
        ({"type": "object", "properties": {"result": {"type": "integer"}, "b": {}}, "required": ["result"]}, False),
        ({"type": "object", "properties": {"result": {"type": "integer"}}}, False),
        ({"type": "object", "properties": {"result": {"type": "integer"}}, "required": ["result", "b"]}, False),
        ({"type": ["object"], "properties": {"result": {"type": "integer"}}, "required": ["result"]}, False),
        ({"type": "object", "properties": {"result": True}, "required": ["result"]}, False),
        # toolkit never wraps an object: a "result" that is one is a natural property.
        ({"type": "object", "properties": {"result": {"type": "object"}}, "required": ["result"]}, False),
        (
            {
                "type": "object",
                "properties": {"result": {"$ref": "#/$defs/M"}},
                "required": ["result"],
                "$defs": {"M": {"type": "object"}},
            },
            False,
        ),
        (None, False),
        ({"type": "integer"}, False),
    ],
)
def test_the_wrapper_schema_is_recognized_exactly(schema: Any, wrapper: bool) -> None:
    assert is_wrapper_schema(schema) is wrapper


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_a_json_text_block_stays_text(version: str) -> None:
    # No structuredContent: the text is not parsed, however much it looks like the value.
    result = {"content": [{"type": "text", "text": "[1,2]"}]}
    schema = wrap_schema({"type": "array"}) if version in STRUCTURED else {"type": "array"}
    recovered = _compat.natural_outcome(result, version, schema)
    assert facts(recovered) == ([{"type": "text", "text": "[1,2]"}], "<no structured content>", False, None)


@pytest.mark.parametrize("version", UNSTRUCTURED)
def test_the_versions_without_the_field_ignore_structured_content(version: str) -> None:
    result = {"content": [{"type": "text", "text": "1"}], "structuredContent": {"result": 1}}
    recovered = _compat.natural_outcome(result, version, None)
    assert recovered.structured is NO_STRUCTURED
    assert recovered.content == [WireBlock({"type": "text", "text": "1"})]


def test_modern_null_is_a_value_and_absence_is_none() -> None:
    null = _compat.natural_outcome(
        {"content": [{"type": "text", "text": "null"}], "structuredContent": None}, MODERN, None
    )
    assert facts(null) == (None, None, False, None)
    absent = _compat.natural_outcome({"content": []}, MODERN, {"type": "null"})
    assert facts(absent) == ([], "<no structured content>", False, None)


def test_a_text_block_is_the_fallback_only_when_it_is_exactly_the_json() -> None:
    # Another server's formatting, or a block with annotations, is the server's own content.
    for block in (
        {"type": "text", "text": "[1, 2]"},
        {"type": "text", "text": "[1,2]", "annotations": {"priority": 1}},
        {"type": "text", "text": "[1,2]", "_meta": {"k": 1}},
    ):
        recovered = _compat.natural_outcome({"content": [block], "structuredContent": [1, 2]}, MODERN, None)
        assert facts(recovered) == ([block], [1, 2], False, None)
    two = [{"type": "text", "text": "[1,2]"}, {"type": "text", "text": "[1,2]"}]
    assert _compat.natural_outcome({"content": two, "structuredContent": [1, 2]}, MODERN, None).content is not None


def test_blocks_pass_through_as_they_came() -> None:
    # Newer types (and ones toolkit has no class for) stay; fields toolkit does not model stay.
    content = [
        {"type": "resource_link", "uri": "file:///a", "name": "a", "icons": [{"src": "https://x/i.png"}]},
        {"type": "video", "uri": "https://x/v.mp4", "mimeType": "video/mp4"},
        {"type": "audio", "data": "AAAA", "mimeType": "audio/wav", "annotations": {}},
    ]
    recovered = _compat.natural_outcome({"content": content, "resultType": "complete"}, MODERN, None)
    assert recovered.content is not None
    assert [block.to_wire() for block in recovered.content] == content
    # Sent on to an older client, they are shaped like any block.
    old = _compat.call_result(recovered, None, "2024-11-05")["content"]
    assert old == [
        {"type": "text", "text": "Resource: a <file:///a>"},
        {"type": "video", "uri": "https://x/v.mp4", "mimeType": "video/mp4"},
        {"type": "text", "text": "[audio content (audio/wav) omitted]"},
    ]


def test_the_modern_envelope_is_not_part_of_the_outcome() -> None:
    result = {
        "content": [],
        "resultType": "complete",
        "_meta": {SERVER_INFO_KEY: SERVER_INFO, "trace": "abc"},
    }
    assert _compat.natural_outcome(result, MODERN, None).meta == {"trace": "abc"}
    only_envelope = {"content": [], "resultType": "complete", "_meta": {SERVER_INFO_KEY: SERVER_INFO}}
    assert _compat.natural_outcome(only_envelope, MODERN, None).meta is None
    # Before 2026-07-28 the key is no envelope: a tool's own _meta, kept.
    assert _compat.natural_outcome(result, "2025-11-25", None).meta == {SERVER_INFO_KEY: SERVER_INFO, "trace": "abc"}


def test_the_related_task_of_2025_11_25_is_not_part_of_the_outcome() -> None:
    result = _compat.related_task({"content": [], "_meta": {"trace": "abc"}}, "task-1")
    assert _compat.natural_outcome(result, "2025-11-25", None).meta == {"trace": "abc"}


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_is_error_is_read_as_a_boolean_true(version: str) -> None:
    assert _compat.natural_outcome({"content": [], "isError": True}, version, None).is_error is True
    assert _compat.natural_outcome({"content": [], "isError": "yes"}, version, None).is_error is False
    assert _compat.natural_outcome({"content": []}, version, None).is_error is False


@pytest.mark.parametrize("result_type", ["task", "input_required"])
def test_a_modern_result_that_is_not_complete_is_refused(result_type: str) -> None:
    with pytest.raises(ValueError, match=f"'{result_type}' result carries no tool outcome"):
        _compat.natural_outcome({"content": [], "resultType": result_type}, MODERN, None)


@pytest.mark.parametrize(
    ("result", "message"),
    [
        ({}, "must be a list of content blocks"),
        ({"content": "text"}, "must be a list of content blocks"),
        ({"content": [{"text": "no type"}]}, "objects with a string type"),
        ({"content": ["text"]}, "objects with a string type"),
        ({"content": [{"type": "audio", "data": "AAAA"}]}, "malformed 'audio' block"),
        ({"content": [{"type": "resource_link", "uri": "file:///a"}]}, "malformed 'resource_link' block"),
    ],
)
def test_a_malformed_result_is_refused(result: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        _compat.natural_outcome(result, MODERN, None)
