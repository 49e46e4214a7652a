"""Types the schema tests share: one of each kind of hint toolkit turns into a schema."""

from __future__ import annotations

import dataclasses
import enum
from typing import Literal, NotRequired

from pydantic import BaseModel, ConfigDict
from typing_extensions import TypedDict


class Forecast(BaseModel):
    city: str
    temp: float


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Priority(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Point(TypedDict):
    x: int
    y: int
    label: NotRequired[str]


@dataclasses.dataclass
class Span:
    start: int
    end: int = 0


class Node(BaseModel):
    value: int
    children: list[Node] = []


class Point2D(BaseModel):
    x: int
    y: int


class Point3D(BaseModel):
    x: int
    y: int
    z: int


class Cat(BaseModel):
    kind: Literal["cat"]
    lives: int


class Dog(BaseModel):
    kind: Literal["dog"]
    good: bool


class ById(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: int


class ByName(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
