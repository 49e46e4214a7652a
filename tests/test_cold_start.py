"""Registration without pydantic's generator: the same schemas, the same errors, a correct first call.

A server of hundreds of tools starts fast because a common hint's schema comes from a core schema
assembled from its parts (``_schema/cores.py``: a model's own core schema, list, dict, ``X | None``,
``Literal``, constraints) rather than from a ``TypeAdapter``, and because a tool builds its
pydantic validators and serializer on its first call. These tests hold the two promises that
makes: every schema is byte for byte what the ``TypeAdapter`` path gives (over every hint the tests,
the examples and the benchmark use, and over generated combinations), and a tool's first call
behaves exactly as every later one.
"""

from __future__ import annotations

import datetime
import enum
import importlib.util
import inspect
import json
import sys
import typing
import uuid
from pathlib import Path
from typing import Annotated, Any, Literal, Optional

import pydantic
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field

from test_corejson import CORPUS, FALLBACK, ROOT, bench_hints
from toolkit import SchemaError, Server
from toolkit._schema import cores, hints, translated
from toolkit._schema.checks import check_schema, check_uncompiled
from toolkit.testing import Client

EXAMPLES = sorted(
    str(path.relative_to(ROOT))
    for path in (ROOT / "examples").glob("*.py")
    if "server" in path.read_text() and "Server(" in path.read_text()
)


def both_paths(hint: Any, mode: Any) -> tuple[str, str]:
    """The schema's JSON through the assembled core schema (the start path) and through a TypeAdapter.

    As ``type_schema`` does first, a ``Field`` that only describes is peeled off (it goes on top
    of the type's shared schema, the same way on both paths).

    The assembled path runs with whatever translations ``corejson`` kept from earlier hints (a
    warm ``_schema/translated.py``), the TypeAdapter path with none kept: a replayed definition
    must be the very bytes of a fresh translation.
    """
    hint = hints.peel(hint)[0]
    assembled = json.dumps(hints._generate(hint, mode))
    warm = dict(translated._STORE)
    translated.forget()
    # A TypeAdapter of its own: the shared ones are cached by hint, and typing counts
    # ``Union[bool, int]`` equal to ``Union[int, bool]`` (same hash), whose order pydantic keeps.
    adapted = json.dumps(hints.adapter_schema(pydantic.TypeAdapter(hint), mode))
    translated._STORE.update(warm)  # warm again for the next hint
    return assembled, adapted


@pytest.mark.parametrize("mode", ["validation", "serialization"])
@pytest.mark.parametrize("label", [*CORPUS, *FALLBACK])
def test_the_corpus_gets_the_same_bytes_both_ways(label: str, mode: Any) -> None:
    hint = {**CORPUS, **FALLBACK}[label]
    assembled, adapted = both_paths(hint, mode)
    assert assembled == adapted


def hints_in(path: Path) -> dict[str, Any]:
    """Every hint of every function an example defines (its tools, resources, prompts, mounted
    servers' tools), and its model, TypedDict, dataclass and enum classes."""
    spec = importlib.util.spec_from_file_location(f"cold_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(path.parent))
    found: dict[str, Any] = {}
    for name, value in vars(module).items():
        if getattr(value, "__module__", None) != module.__name__:
            continue
        if inspect.isfunction(value):
            try:
                annotations = typing.get_type_hints(value, include_extras=True)
            except NameError:
                continue
            for parameter, hint in annotations.items():
                found[f"{path.stem}.{name}.{parameter}"] = hint
        elif isinstance(value, type):
            found[f"{path.stem}.{name}"] = value
    usable = {}
    for label, hint in found.items():
        try:
            pydantic.TypeAdapter(hint)
        except (pydantic.PydanticSchemaGenerationError, TypeError, NameError):
            continue  # a Context, a content block, a class that is no data: part of no schema
        usable[label] = hint
    return usable


@pytest.mark.parametrize("source", EXAMPLES)
def test_the_examples_get_the_same_bytes_both_ways(source: str) -> None:
    found = hints_in(ROOT / source)
    assert found, f"{source}: no hints found"
    for label, hint in found.items():
        for mode in ("validation", "serialization"):
            assembled, adapted = both_paths(hint, mode)
            assert assembled == adapted, label


def test_the_benchmark_tools_get_the_same_bytes_and_never_need_an_adapter() -> None:
    taken = 0
    for label, hint in bench_hints().items():
        if hints.primitive(hint) is not None:
            continue
        inner = hints.peel(hint)[0]
        assert cores.core_schema(inner) is not None, f"{label}: {hint!r} is not assembled"
        taken += 1
        for mode in ("validation", "serialization"):
            assembled, adapted = both_paths(hint, mode)
            assert assembled == adapted, label
    assert taken > 500


# --- generated combinations ----------------------------------------------------------------


class Shade(enum.Enum):
    """A shade."""

    LIGHT = "light"
    DARK = "dark"


class Size(enum.IntEnum):
    S = 1
    L = 2


class Leaf(BaseModel):
    """A leaf."""

    name: Annotated[str, Field(min_length=1, description="Its name")]
    weight: float = 0.5


class Branch(BaseModel):
    leaves: list[Leaf] = []
    best: Leaf | None = None
    shade: Shade = Shade.LIGHT


LEAVES: list[Any] = [
    int,
    str,
    float,
    bool,
    None,
    Any,
    datetime.date,
    datetime.datetime,
    uuid.UUID,
    Literal["a", "b"],
    Literal[1, 2],
    Literal[True],
    Shade,
    Size,
    Leaf,
    Branch,
    Annotated[int, Field(ge=0, le=10)],
    Annotated[float, Field(gt=0, description="Positive")],
    Annotated[str, Field(max_length=5, title="Short")],
    Annotated[str, Field(pattern="^x")],
]


def _wrap(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        inner.map(lambda hint: list[hint]),  # type: ignore[valid-type]
        inner.map(lambda hint: tuple[hint, ...]),  # type: ignore[valid-type]
        inner.map(lambda hint: set[hint]),  # type: ignore[valid-type]
        inner.map(lambda hint: dict[str, hint]),  # type: ignore[valid-type]
        inner.map(lambda hint: Optional[hint]),  # noqa: UP045
        st.tuples(inner, inner).map(lambda pair: typing.Union[pair[0], pair[1]]),  # noqa: UP007
        st.tuples(inner, inner).map(lambda pair: tuple[pair[0], pair[1]]),
        inner.map(lambda hint: Annotated[list[hint], Field(min_length=1, description="Some")]),  # type: ignore[valid-type]
        inner.map(lambda hint: Annotated[dict[str, hint], Field(max_length=3)]),  # type: ignore[valid-type]
    )


HINTS = st.recursive(st.sampled_from(LEAVES), _wrap, max_leaves=4)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hint=HINTS, mode=st.sampled_from(["validation", "serialization"]))
def test_generated_hints_get_the_same_bytes_both_ways(hint: Any, mode: Any) -> None:
    try:
        pydantic.TypeAdapter(hint)
    except (pydantic.PydanticSchemaGenerationError, TypeError):
        return  # not a type pydantic takes: nothing to compare
    assembled, adapted = both_paths(hint, mode)
    assert assembled == adapted, repr(hint)


# --- the first call ---------------------------------------------------------------------------


class Item(BaseModel):
    id: Annotated[int, Field(ge=1)]
    tags: list[str] = []


def test_registration_builds_no_adapter_for_common_hints() -> None:
    server = Server("cold")

    @server.tool
    async def pick(items: list[Item], best: Item | None = None, mode: Literal["a", "b"] = "a") -> list[Item]:
        return items

    tool = server.tools["pick"]
    assert tool._converters is None  # type: ignore[attr-defined]


async def test_the_first_call_converts_validates_and_serializes() -> None:
    server = Server("cold")

    @server.tool
    async def pick(items: list[Item], best: Item | None = None, limit: Annotated[int, Field(ge=1)] = 2) -> list[Item]:
        assert all(isinstance(item, Item) for item in items)
        assert best is None or isinstance(best, Item)
        return [*items[:limit], *([best] if best else [])]

    async with Client(server) as client:
        refused = await client.call_tool("pick", {"items": [{"id": 0}]})
        assert refused["isError"]
        assert "arguments/items/0/id" in refused["content"][0]["text"]
        result = await client.call_tool("pick", {"items": [{"id": 1, "tags": ["x"]}], "best": {"id": 2}})
        assert not result.get("isError")
        assert result["structuredContent"] == [{"id": 1, "tags": ["x"]}, {"id": 2, "tags": []}]
        again = await client.call_tool("pick", {"items": [{"id": 3}]})
        assert again["structuredContent"] == [{"id": 3, "tags": []}]


async def test_a_first_result_in_the_wrong_shape_is_converted_through_the_hint() -> None:
    server = Server("cold")

    @server.tool
    async def one() -> Item:
        return {"id": "5"}  # type: ignore[return-value]

    async with Client(server) as client:
        result = await client.call_tool("one", {})
        assert not result.get("isError"), result
        assert result["structuredContent"] == {"id": 5, "tags": []}


# --- checked at registration, compiled by the first call ------------------------------------------


def refusal_tables() -> list[tuple[Any, str]]:
    """Every schema ``tests/test_mutation_checks.py`` shows refused, with what ``check_schema`` says."""
    import test_mutation_checks as checks

    cases: list[tuple[Any, str]] = []
    for test in (checks.test_what_a_refused_schema_is_told, checks.test_what_is_not_json_is_refused_in_toolkits_words):
        for mark in test.pytestmark:  # type: ignore[attr-defined]
            if mark.name == "parametrize":
                cases.extend((case[0], case[1]) for case in mark.args[1])
    return cases


@pytest.mark.parametrize(("schema", "message"), refusal_tables())
def test_a_schema_checked_uncompiled_is_refused_in_the_same_words(schema: Any, message: str) -> None:
    with pytest.raises(SchemaError) as compiled_now:
        check_schema(schema, what="schema")
    with pytest.raises(SchemaError) as compiled_later:
        check_uncompiled(schema, what="schema")
    assert str(compiled_later.value) == str(compiled_now.value)
    assert str(compiled_later.value).startswith(message)
    assert compiled_later.value.pointer == compiled_now.value.pointer


class OddPattern(BaseModel):
    value: Annotated[str, Field(json_schema_extra={"pattern": "("})]


class OddKeys(BaseModel):
    value: Annotated[dict[str, int], Field(json_schema_extra={"patternProperties": {"(": {"type": "integer"}}})]


def test_a_regex_only_the_validator_refuses_still_fails_the_decoration() -> None:
    server = Server("cold")
    refused = 'tool {!r}: input schema cannot be compiled: "(" is not a "regex"'

    async def take_pattern(odd: OddPattern) -> int:
        return 1

    async def take_keys(odd: OddKeys) -> int:
        return 1

    for fn in (take_pattern, take_keys):
        with pytest.raises(SchemaError) as error:
            server.add_tool(fn)
        assert str(error.value).startswith(refused.format(fn.__name__) + f" [tool {fn.__name__}() in ")


def test_a_value_that_is_not_json_still_fails_the_decoration() -> None:
    server = Server("cold")

    async def odd_example(n: Annotated[int, Field(examples=[b"x"])]) -> int:
        return n

    with pytest.raises(SchemaError) as error:
        server.add_tool(odd_example)
    assert str(error.value).startswith(
        "tool 'odd_example': input schema cannot be compiled: Unsupported type: 'bytes' [tool odd_example() in "
    )


async def test_the_validators_are_compiled_by_the_first_call_and_kept() -> None:
    server = Server("cold")

    @server.tool
    async def pick(items: list[Item]) -> list[Item]:
        return items

    tool = server.tools["pick"]
    assert "_input_validator" not in vars(tool)
    assert "_output_validator" not in vars(tool)
    async with Client(server) as client:
        result = await client.call_tool("pick", {"items": [{"id": 4}]})
        assert result["structuredContent"] == [{"id": 4, "tags": []}]
        validator = vars(tool)["_input_validator"]
        assert vars(tool)["_output_validator"] is not None
        refused = await client.call_tool("pick", {"items": "no"})
        assert refused["isError"]
        assert vars(tool)["_input_validator"] is validator


def test_a_hand_written_schema_is_compiled_at_registration() -> None:
    server = Server("cold")

    @server.tool(input_schema={"type": "object", "properties": {"a": {"type": "integer"}}})
    async def given(a: int) -> int:
        return a

    assert "_input_validator" in vars(server.tools["given"])


def test_a_union_keeps_its_own_order_whatever_came_first() -> None:
    """``typing`` counts ``Union[A, B]`` equal to ``Union[B, A]`` (same hash); two tools spelling one
    each way get each its own order (``oneOf`` and ``$defs``), not the first one's."""
    first = hints.type_schema(typing.Union[Shade, Leaf], "validation")  # noqa: UP007
    second = hints.type_schema(typing.Union[Leaf, Shade], "validation")  # noqa: UP007
    assert list(first["$defs"]) == ["Shade", "Leaf"]
    assert list(second["$defs"]) == ["Leaf", "Shade"]
    assert [branch["$ref"] for branch in second["oneOf"]] == ["#/$defs/Leaf", "#/$defs/Shade"]
    assert hints.adapter_for(typing.Union[Leaf, Shade]).validate_python("dark") is Shade.DARK  # noqa: UP007


def test_a_literal_keeps_its_own_order_and_its_own_values() -> None:
    """``Literal[1, 2] == Literal[2, 1]``, and ``Literal[1, True]`` holds ``1 == True``: each spelling
    gets its own ``enum`` order, and a ``True`` is never served a ``1``'s schema."""
    assert hints.type_schema(list[Literal["a", "b"]], "validation")["items"]["enum"] == ["a", "b"]
    assert hints.type_schema(list[Literal["b", "a"]], "validation")["items"]["enum"] == ["b", "a"]
    assert hints.type_schema(Literal[1, True], "validation")["enum"] == [1, True]
    assert hints.type_schema(Literal[True, 1], "validation")["enum"] == [True, 1]
    assert hints.type_schema(dict[str, Literal[1, 2]], "serialization") != hints.type_schema(
        dict[str, Literal[2, 1]], "serialization"
    )


# --- shared definitions: tidied once, checked once -------------------------------------------------


class Cat(BaseModel):
    kind: Literal["cat"] = "cat"
    lives: int = 9


class Dog(BaseModel):
    kind: Literal["dog"] = "dog"
    good: bool = True


class Kennel(BaseModel):
    """A tagged union and an optional model inside a shared class: what ``tidy`` has work in."""

    pets: list[Annotated[Cat | Dog, Field(discriminator="kind")]] = []
    best: Leaf | None = None


class Noted(BaseModel):
    """Keywords of the user's own, which ``tidy`` must see."""

    distance: Annotated[float, Field(json_schema_extra={"x-unit": "m"})] = 0.0
    old: Annotated[int, Field(deprecated=True)] = 0
    either: Annotated[int | str, Field(json_schema_extra={"anyOf": [{"type": "integer"}, {"type": "string"}]})] = 0


@pytest.mark.parametrize("hint", [Kennel, list[Kennel], Kennel | None, Noted, dict[str, Noted], Optional[list[Noted]]])  # noqa: UP045
@pytest.mark.parametrize("mode", ["validation", "serialization"])
def test_a_shared_definition_tidied_by_an_earlier_document_gives_the_same_bytes(hint: Any, mode: Any) -> None:
    translated.forget()
    hints._cached_schema.cache_clear()
    for first in (Kennel, Noted, list[Kennel | Noted]):  # the definitions kept, and tidied, by other documents
        hints._generate(first, mode)
    assembled, adapted = both_paths(hint, mode)
    assert assembled == adapted
    assert all(entry.tidied for entry in translated._STORE.values())  # tidied once, for every later document


def documents() -> list[dict[str, Any]]:
    """Generated documents with ``$defs`` (what ``check_uncompiled`` checks part by part)."""
    found = []
    for hint in (Kennel, list[Kennel], Branch | None, dict[str, Noted], list[Leaf]):
        for mode in ("validation", "serialization"):
            schema = hints.type_schema(hint, mode)
            assert "$defs" in schema
            found.append(schema)
    return found


def _checked_whole(schema: Any) -> str | None:
    try:
        check_schema(schema, what="schema")
    except SchemaError as exc:
        return f"{exc} @{exc.pointer}"
    return None


def _checked_by_parts(schema: Any) -> str | None:
    try:
        check_uncompiled(schema, what="schema")
    except SchemaError as exc:
        return f"{exc} @{exc.pointer}"
    return None


@pytest.mark.parametrize(("schema", "message"), refusal_tables())
def test_a_refused_definition_is_refused_in_the_same_words_in_a_document(schema: Any, message: str) -> None:
    for known in documents():  # their definitions checked and remembered first
        check_uncompiled(known, what="schema")
    for document in (
        {"type": "object", "properties": {"a": {"$ref": "#/$defs/Bad"}}, "$defs": {"Bad": schema}},
        # beside definitions remembered as passing, in another order
        {**documents()[0], "$defs": {**documents()[0]["$defs"], "Bad": schema}},
        {"$ref": "#/$defs/Bad", "$defs": {"Bad": schema, **documents()[2]["$defs"]}},
    ):
        # (an unreferenced definition the compiler never compiles may pass both ways: "(" as a pattern)
        assert _checked_by_parts(document) == _checked_whole(document)
    referenced = {"type": "object", "properties": {"a": {"$ref": "#/$defs/Bad"}}, "$defs": {"Bad": schema}}
    assert _checked_whole(referenced) is not None


def test_what_only_the_document_decides_is_checked_in_each_document() -> None:
    """A definition remembered as passing still has its references, and the document its subschema
    count, checked where it is used again."""
    from toolkit._schema import checks

    pointing = {"type": "object", "properties": {"next": {"$ref": "#/$defs/Target"}}}
    target = {"type": "integer"}
    fine = {"$ref": "#/$defs/Pointing", "$defs": {"Pointing": pointing, "Target": target}}
    assert _checked_by_parts(fine) is None
    assert checks._by_parts(fine, "schema")
    alone = {"$ref": "#/$defs/Pointing", "$defs": {"Pointing": pointing}}  # Target is not in this one
    assert _checked_by_parts(alone) == _checked_whole(alone) is not None
    many = {"type": "object", "properties": {f"p{i}": {"type": "integer"} for i in range(3000)}}
    crowded = {
        "$defs": {"A": many, "B": {**many, "title": "B"}, "C": {**many, "title": "C"}, "D": {**many, "title": "D"}}
    }
    assert _checked_by_parts(crowded) == _checked_whole(crowded) is not None
    assert "more than 10000 subschemas" in str(_checked_whole(crowded))


def test_a_definition_that_depends_on_its_document_is_checked_with_it() -> None:
    """An ``$id``, an anchor or a dialect changes how the rest of a document is read: such a
    definition is never remembered apart from its document."""
    from toolkit._schema import checks

    anchored = {"$anchor": "here", "type": "string"}
    document = {"type": "object", "properties": {"a": {"$ref": "#here"}}, "$defs": {"Anchored": anchored}}
    assert _checked_by_parts(document) is None
    assert not checks._by_parts(document, "schema")
    elsewhere = {"type": "object", "properties": {"a": {"$ref": "#here"}}, "$defs": {"Other": {"type": "string"}}}
    assert _checked_by_parts(elsewhere) == _checked_whole(elsewhere) is not None


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hint=HINTS, mode=st.sampled_from(["validation", "serialization"]))
def test_generated_documents_pass_by_parts_exactly_when_they_pass_whole(hint: Any, mode: Any) -> None:
    from toolkit._schema import checks

    try:
        pydantic.TypeAdapter(hint)
    except (pydantic.PydanticSchemaGenerationError, TypeError):
        return
    schema = hints.type_schema(hint, mode)
    document = {"type": "object", "properties": {"value": hints.split_defs(schema)[0]}}
    if "$defs" in schema:
        document["$defs"] = schema["$defs"]
    passed = _checked_whole(document)
    assert _checked_by_parts(document) == passed
    if passed is None and "$defs" in document:
        assert checks._by_parts(document, "schema")  # the shortcut taken, not merely agreed with


# Values a schema may hold where JSON belongs: plain JSON, and what only looks like it.
ODD_SCALARS = st.one_of(
    st.text(max_size=4),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.none(),
    st.binary(max_size=3),
    st.sampled_from(["\ud800", "é", Shade.LIGHT, Size.S, 2**70]),
)
ODD_VALUES = st.recursive(
    ODD_SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(st.one_of(st.text(max_size=3), st.integers(0, 3)), inner, max_size=3),
    ),
    max_leaves=6,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=ODD_VALUES, keyword=st.sampled_from(["default", "examples", "const", "x-note", "title"]))
def test_a_schema_holding_any_value_is_checked_the_same_by_parts_and_whole(value: Any, keyword: str) -> None:
    from toolkit._schema import checks

    for document in (
        {"type": "object", keyword: value},
        {
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/D"}},
            "$defs": {"D": {"type": "string", keyword: value}},
        },
    ):
        assert _checked_by_parts(document) == _checked_whole(document)
        plain = checks._walk(document, checks._Resources(None), what="schema", regexes=[], start=(None, 0, 0))[1]
        if plain:  # the walk's shortcut never calls plain what does not read back as itself
            assert checks._plain_json(document)


# --- a function's parameters read off its code object ----------------------------------------------


def _signature_of(fn: Any) -> list[tuple[str, Any, Any]]:
    return [(each.name, each.kind, each.default) for each in inspect.signature(fn).parameters.values()]


@settings(max_examples=200, deadline=None)
@given(
    only=st.integers(0, 2),
    plain=st.integers(0, 3),
    star=st.booleans(),
    keyword=st.integers(0, 3),
    kwargs=st.booleans(),
    defaults=st.integers(0, 5),
    keyword_defaults=st.sets(st.integers(0, 2)),
    is_async=st.booleans(),
)
def test_a_plain_functions_parameters_are_what_inspect_says(
    only: int,
    plain: int,
    star: bool,
    keyword: int,
    kwargs: bool,
    defaults: int,
    keyword_defaults: set[int],
    is_async: bool,
) -> None:
    from toolkit._functions import _parameters

    positional = [f"p{i}" for i in range(only + plain)]
    defaults = min(defaults, len(positional))
    written = [name + (f"={i}" if i >= len(positional) - defaults else "") for i, name in enumerate(positional)]
    if only:
        written.insert(only, "/")
    if star:
        written.append("*rest")
    elif keyword:
        written.append("*")
    written += [f"k{i}" + ("=None" if i in keyword_defaults else "") for i in range(keyword)]
    if kwargs:
        written.append("**extra")
    namespace: dict[str, Any] = {}
    exec(f"{'async ' if is_async else ''}def fn({', '.join(written)}): pass", namespace)
    fn = namespace["fn"]
    assert _parameters(fn) == _signature_of(fn)


def test_what_is_no_plain_function_goes_through_inspect() -> None:
    from functools import partial, wraps

    from toolkit._functions import _parameters

    def base(a: int, b: str = "x") -> int:
        return a

    @wraps(base)
    def wrapped(*args: Any, **kwargs: Any) -> int:
        return base(*args, **kwargs)

    class Callable_:
        def __call__(self, c: int) -> int:
            return c

        def method(self, d: int) -> int:
            return d

    for fn in (wrapped, partial(base, 1), Callable_(), Callable_().method, base):
        assert _parameters(fn) == _signature_of(fn)
    assert [name for name, _, _ in _parameters(wrapped)] == ["a", "b"]  # followed __wrapped__, as inspect does


def test_the_benchmark_functions_parameters_are_what_inspect_says() -> None:
    from toolkit._functions import _parameters

    sys.path.insert(0, str(ROOT / "bench" / "servers"))
    try:
        import generated  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(ROOT / "bench" / "servers"))
    for fn in generated.build_tools(60):
        assert _parameters(fn) == _signature_of(fn)


Later = int  # a name the string annotations below evaluate to


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hint=HINTS)
def test_a_functions_hints_are_what_typing_says(hint: Any) -> None:
    from toolkit._functions import _type_hints

    def fn() -> None:
        pass

    # Annotations as objects (this module has ``from __future__ import annotations``): the hint, and
    # strings where typing evaluates them (whole, in a builtin generic, in Optional) or not (a Literal).
    fn.__annotations__ = {
        "value": hint,
        "other": "Later",
        "late": list["Later"],
        "maybe": Optional["Later"],
        "word": Literal["Later"],
        "none": None,
        "return": list["Later"],
    }
    assert _type_hints(fn) == typing.get_type_hints(fn, include_extras=True)
    for name in ("other", "late", "maybe", "return"):
        fn.__annotations__.pop(name)
        assert _type_hints(fn) == typing.get_type_hints(fn, include_extras=True)
