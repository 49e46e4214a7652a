"""The fast core-schema → JSON Schema path gives exactly what pydantic (plus toolkit's rules) gives.

toolkit generates schemas with ``_corejson`` for the types it knows and falls back to pydantic
for the rest; registration speed depends on the first, correctness on both being the same.
Every hint below is generated both ways, in both modes, and compared.
"""

from __future__ import annotations

import dataclasses
import datetime
import importlib.util
import sys
import typing
import uuid
from decimal import Decimal
from enum import Enum, IntEnum
from pathlib import Path
from typing import Annotated, Any, Generic, Literal, NotRequired, Optional, TypeVar, Union

import pydantic
import pytest
from pydantic import AliasChoices, AwareDatetime, BaseModel, ConfigDict, Field, NaiveDatetime, computed_field
from typing_extensions import TypedDict

from toolkit._schema import corejson as _corejson
from toolkit._schema import hints as _schema

ROOT = Path(__file__).parent.parent
T = TypeVar("T")


class Color(Enum):
    """A color."""

    RED = "red"
    BLUE = "blue"


class Level(IntEnum):
    LOW = 1
    HIGH = 2


class Mixed(Enum):
    ONE = 1
    TWO = "two"


class Address(BaseModel):
    """A postal address."""

    street: str
    city: str = "Paris"
    zip: Annotated[str, Field(pattern=r"^\d{5}$", description="Five digits")] | None = None


class Person(BaseModel):
    model_config = ConfigDict(title="A person", extra="forbid")

    name: Annotated[str, Field(min_length=1, max_length=50, examples=["Ada"])]
    age: Annotated[int, Field(ge=0, le=150)] = 0
    address: Address | None = None
    home: Address = Field(default_factory=lambda: Address(street="x"), description="Home address")
    color: Color = Color.RED
    level: Level = Level.LOW
    tags: set[str] = {"b", "a"}
    nick: str = Field("", validation_alias="nickName", serialization_alias="nick_name")
    other: str = Field("", alias="otherName")
    choice: str = Field("", validation_alias=AliasChoices("c", "choice"))
    extra_info: dict[str, Any] = Field(default_factory=dict, json_schema_extra={"x-note": "free form"})

    @computed_field  # type: ignore[prop-decorator]
    @property
    def shout(self) -> str:
        return self.name.upper()


class Node(BaseModel):
    value: int
    children: list[Node] = []


class Page(BaseModel, Generic[T]):
    items: list[T]
    total: int


class Cat(BaseModel):
    kind: Literal["cat"] = "cat"
    lives: int


class Dog(BaseModel):
    kind: Literal["dog"] = "dog"
    good: bool


class Open(BaseModel):
    model_config = ConfigDict(extra="allow")
    x: int


class Movie(TypedDict):
    title: str
    year: NotRequired[int]


class Partial(TypedDict, total=False):
    a: int
    b: str


@dataclasses.dataclass
class Point:
    x: float
    y: float = 0.0


@pydantic.dataclasses.dataclass
class Box:
    """A box."""

    width: int
    label: str = "box"


CORPUS: dict[str, Any] = {
    "int": int,
    "float": float,
    "str": str,
    "bool": bool,
    "None": None,
    "Any": Any,
    "date": datetime.date,
    "datetime": datetime.datetime,
    "AwareDatetime": AwareDatetime,
    "NaiveDatetime": NaiveDatetime,
    "time": datetime.time,
    "UUID": uuid.UUID,
    "constrained int": Annotated[int, Field(ge=1, le=9, multiple_of=2, description="d")],
    "constrained float": Annotated[float, Field(gt=0, lt=1)],
    "constrained str": Annotated[str, Field(min_length=2, max_length=5, pattern="^[a-z]+$")],
    "constrained list": Annotated[list[int], Field(min_length=1, max_length=3)],
    "Optional[int]": Optional[int],  # noqa: UP045
    "int | None": int | None,
    "int | str": int | str,
    "Union[int, str, None]": Union[int, str, None],  # noqa: UP007
    "int | float": int | float,
    "Literal str": Literal["a", "b"],
    "Literal one": Literal["only"],
    "Literal int": Literal[1, 2, 3],
    "Literal mixed": Literal[1, "a", True, None],
    "Literal enum": Literal[Color.RED],
    "Enum": Color,
    "IntEnum": Level,
    "mixed Enum": Mixed,
    "list[int]": list[int],
    "list[Address]": list[Address],
    "set[int]": set[int],
    "frozenset[str]": frozenset[str],
    "tuple fixed": tuple[int, str],
    "tuple variadic": tuple[int, ...],
    "tuple empty": tuple[()],
    "dict[str, int]": dict[str, int],
    "dict[str, Address]": dict[str, Address],
    "dict[int, str]": dict[int, str],
    "dict[str, Any]": dict[str, Any],
    "dict with key pattern": dict[Annotated[str, Field(pattern="^k")], int],
    "Address": Address,
    "Person": Person,
    "Node": Node,
    "list[Node]": list[Node],
    "Page[int]": Page[int],
    "Page[Address]": Page[Address],
    "Cat | Dog": Cat | Dog,
    "discriminated": Annotated[Cat | Dog, Field(discriminator="kind")],
    "Open": Open,
    "Movie": Movie,
    "Partial": Partial,
    "Point": Point,
    "Box": Box,
    "list[Movie]": list[Movie],
    "Address | None": Address | None,
    "described Address": Annotated[Address, Field(description="Where")],
}

# Hints the fast path must take itself (no fallback): the common cases registration relies on.
FAST = [label for label in CORPUS if label not in ("described Address",)]

FALLBACK: dict[str, Any] = {
    "Decimal": Decimal,
    "bytes": bytes,
    "custom serializer": Annotated[int, pydantic.PlainSerializer(str)],
    "json_schema_extra callable": Annotated[int, Field(json_schema_extra=lambda schema: schema.update(x=1))],
}


def hints_of_module(path: Path) -> dict[str, Any]:
    spec = importlib.util.spec_from_file_location(f"corpus_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(path.parent))
    found: dict[str, Any] = {}
    for tool in module.server.tools.values():
        for name, hint in typing.get_type_hints(tool.fn, include_extras=True).items():
            try:
                pydantic.TypeAdapter(hint)
            except pydantic.PydanticSchemaGenerationError:
                continue  # a Context or a content block: not part of any schema
            found[f"{path.stem}.{tool.name}.{name}"] = hint
    return found


def bench_hints() -> dict[str, Any]:
    sys.path.insert(0, str(ROOT / "bench" / "servers"))
    try:
        import generated  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(ROOT / "bench" / "servers"))
    found: dict[str, Any] = {}
    for index, fn in enumerate(generated.build_tools(500)):
        for name, hint in typing.get_type_hints(fn, include_extras=True).items():
            found[f"bench.{index}.{name}"] = hint
    return found


def reference(hint: Any, mode: Any) -> dict[str, Any]:
    return _schema.tidy(_schema.pydantic_schema(pydantic.TypeAdapter(hint), mode))


def fast(hint: Any, mode: Any) -> dict[str, Any]:
    return _schema.tidy(_corejson.translate(pydantic.TypeAdapter(hint).core_schema, mode))


@pytest.mark.parametrize("mode", ["validation", "serialization"])
@pytest.mark.parametrize("label", list(CORPUS))
def test_fast_path_matches_pydantic(label: str, mode: Any) -> None:
    hint = CORPUS[label]
    try:
        produced = fast(hint, mode)
    except _corejson.Unsupported:
        assert label not in FAST, f"{label}: the fast path should handle it"
        return
    assert produced == reference(hint, mode)


@pytest.mark.parametrize("label", list(FALLBACK))
def test_what_the_fast_path_cannot_do_falls_back(label: str) -> None:
    hint = FALLBACK[label]
    with pytest.raises(_corejson.Unsupported):
        fast(hint, "serialization")
    # and the public path still produces pydantic's schema
    assert _schema.type_schema(hint, "serialization") == reference(hint, "serialization")


@pytest.mark.parametrize(
    "source", ["examples/weather.py", "examples/notes.py", "examples/conformance_server.py"], ids=lambda p: p
)
def test_fast_path_matches_pydantic_for_the_examples(source: str) -> None:
    checked = 0
    for label, hint in hints_of_module(ROOT / source).items():
        if label.endswith(".ctx"):
            continue
        for mode in ("validation", "serialization"):
            try:
                produced = fast(hint, mode)
            except _corejson.Unsupported:
                continue
            assert produced == reference(hint, mode), label
            checked += 1
    assert checked > 0


@pytest.mark.timeout(600)  # a hang guard: every bench tool's hints through both paths, minutes when busy
def test_fast_path_matches_pydantic_for_the_benchmark_tools() -> None:
    hints = bench_hints()
    fallbacks = []
    for label, hint in hints.items():
        for mode in ("validation", "serialization"):
            try:
                produced = fast(hint, mode)
            except _corejson.Unsupported:
                fallbacks.append(label)
                continue
            assert produced == reference(hint, mode), label
    assert not fallbacks, f"the fast path fell back for {fallbacks[:5]}"
