"""A weather server whose tools return arrays, primitives, models, unions — natural JSON.

Run it:  toolkit run examples/weather.py            (stdio)
         toolkit run examples/weather.py --transport http --port 8000

A 2026-07-28 client sees ``get_weather_forecast`` with ``outputSchema: {"type": "array", ...}``
and gets the list itself as ``structuredContent``; an older client gets the same data
wrapped as ``{"result": [...]}``.
"""

from __future__ import annotations

from datetime import datetime
from enum import Enum
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from toolkit import Server, ToolError

server = Server(
    "weather",
    version="1.0.0",
    instructions="Weather forecasts and station data. All temperatures are in degrees Fahrenheit.",
)


class HourlyForecast(BaseModel):
    hour: str
    temp: float
    conditions: str


class CurrentConditions(BaseModel):
    city: str
    temp: float
    humidity: float
    wind_mph: float


class Station(BaseModel):
    code: str
    name: str
    elevation_m: int


class Sky(Enum):
    """How the sky looks."""

    CLEAR = "clear"
    CLOUDY = "cloudy"
    OVERCAST = "overcast"


class Reading(BaseModel):
    """A single instrument reading."""

    instrument: str
    value: float


class Report(BaseModel):
    """A human observer's report."""

    observer: str
    text: str


class Rain(BaseModel):
    kind: Literal["rain"] = "rain"
    millimetres: float


class Snow(BaseModel):
    kind: Literal["snow"] = "snow"
    centimetres: float


Precipitation = Annotated[Rain | Snow, Field(discriminator="kind")]


class Region(BaseModel):
    """A region and the regions inside it."""

    name: str
    subregions: list[Region] = []


class Celsius(BaseModel):
    model_config = ConfigDict(extra="forbid")
    celsius: float


class Fahrenheit(BaseModel):
    model_config = ConfigDict(extra="forbid")
    fahrenheit: float


class ById(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str = Field(description="The user's id, e.g. 'u1'")


class ByName(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, description="The user's display name")


class User(BaseModel):
    id: str
    name: str
    home_city: str


_STATIONS = {"SEA": Station(code="SEA", name="Seattle-Tacoma", elevation_m=131)}
_USERS = [User(id="u1", name="Alice", home_city="Seattle"), User(id="u2", name="Bob", home_city="Denver")]


@server.tool
def get_weather_forecast(city: str, hours: Annotated[int, Field(ge=1, le=24)] = 3) -> list[HourlyForecast]:
    """Hourly forecast for a city.

    Args:
        city: City name, e.g. "Seattle".
        hours: How many hours ahead (1-24).
    """
    conditions = ["sunny", "partly cloudy", "cloudy"]
    return [
        HourlyForecast(hour=f"{9 + i:02d}:00", temp=68.0 + 2 * i, conditions=conditions[i % 3]) for i in range(hours)
    ]


@server.tool
def get_current_conditions(city: str) -> CurrentConditions:
    """Current conditions in a city."""
    return CurrentConditions(city=city, temp=71.5, humidity=0.42, wind_mph=8.0)


@server.tool
def get_count() -> int:
    """How many cities have forecasts."""
    return 42


@server.tool
def get_temperatures(city: str) -> list[int]:
    """The next six hourly temperatures for a city."""
    return [61, 63, 66, 70, 72, 71]


@server.tool
def get_summary(city: str) -> str:
    """A one-line summary of today's weather (plain text, no output schema)."""
    return f"{city}: sunny, high of 72°F."


@server.tool
def is_raining(city: str) -> bool:
    """Whether it is raining in a city right now."""
    return city.lower() == "seattle"


@server.tool
def get_humidity(city: str) -> float:
    """Relative humidity in a city, from 0 to 1."""
    return 0.42


@server.tool
def clear_cache() -> None:
    """Drop cached forecasts. Returns nothing."""


@server.tool
def find_station(code: str) -> Station | None:
    """The weather station with this code, or null if there is none."""
    return _STATIONS.get(code.upper())


@server.tool
def get_alert_level(city: str) -> Literal["green", "yellow", "red"]:
    """Today's weather alert level."""
    return "yellow"


@server.tool
def get_sky(city: str) -> Sky:
    """How the sky looks in a city."""
    return Sky.CLOUDY


@server.tool
def get_observation(city: str, source: Literal["instrument", "observer"] = "instrument") -> Reading | Report:
    """The latest observation: an instrument reading or an observer's report."""
    if source == "instrument":
        return Reading(instrument="barometer", value=1013.2)
    return Report(observer="Dana", text="Light breeze, clear skies.")


@server.tool
def get_precipitation(city: str) -> Precipitation:
    """Today's precipitation, rain or snow (a discriminated union on "kind")."""
    if city.lower() == "denver":
        return Snow(centimetres=4.5)
    return Rain(millimetres=12.0)


@server.tool
def get_sunrise(city: str) -> datetime:
    """Local sunrise time on the summer solstice (a naive local time: no UTC offset)."""
    return datetime(2026, 6, 21, 5, 11)


@server.tool
def get_city_populations() -> dict[str, int]:
    """Population of each city with a forecast."""
    return {"Seattle": 755_078, "Denver": 715_522}


@server.tool
def get_region_tree() -> Region:
    """The regions covered, as a tree (a recursive model)."""
    return Region(name="USA", subregions=[Region(name="Washington", subregions=[Region(name="Seattle")])])


@server.tool
def convert_temperature(value: Celsius | Fahrenheit) -> float:
    """Convert a temperature: give {"celsius": x} to get Fahrenheit, or {"fahrenheit": x} to get Celsius."""
    if isinstance(value, Celsius):
        return round(value.celsius * 9 / 5 + 32, 2)
    return round((value.fahrenheit - 32) * 5 / 9, 2)


@server.tool(root_param="query")
def find_user(query: ById | ByName) -> User:
    """Find a user by id OR by name (the argument object is one or the other)."""
    for user in _USERS:
        if (isinstance(query, ById) and user.id == query.id) or (isinstance(query, ByName) and user.name == query.name):
            return user
    raise ToolError("No such user. Known ids: u1, u2.")


# What each tool returns for given arguments, as JSON: the interop suite drives real MCP
# clients through this plan and checks every client hands its user exactly this value.
INTEROP_PLAN: list[dict[str, object]] = [
    {
        "tool": "get_weather_forecast",
        "arguments": {"city": "Seattle", "hours": 2},
        "expected": [
            {"hour": "09:00", "temp": 68.0, "conditions": "sunny"},
            {"hour": "10:00", "temp": 70.0, "conditions": "partly cloudy"},
        ],
        "error": False,
    },
    {
        "tool": "get_current_conditions",
        "arguments": {"city": "Seattle"},
        "expected": {"city": "Seattle", "temp": 71.5, "humidity": 0.42, "wind_mph": 8.0},
        "error": False,
    },
    {"tool": "get_count", "arguments": {}, "expected": 42, "error": False},
    {
        "tool": "get_temperatures",
        "arguments": {"city": "Seattle"},
        "expected": [61, 63, 66, 70, 72, 71],
        "error": False,
    },
    {
        "tool": "get_summary",
        "arguments": {"city": "Seattle"},
        "expected": "Seattle: sunny, high of 72°F.",
        "error": False,
    },
    {"tool": "is_raining", "arguments": {"city": "Seattle"}, "expected": True, "error": False},
    {"tool": "get_humidity", "arguments": {"city": "Seattle"}, "expected": 0.42, "error": False},
    {"tool": "clear_cache", "arguments": {}, "expected": None, "error": False},
    {
        "tool": "find_station",
        "arguments": {"code": "sea"},
        "expected": {"code": "SEA", "name": "Seattle-Tacoma", "elevation_m": 131},
        "error": False,
    },
    {"tool": "find_station", "arguments": {"code": "XYZ"}, "expected": None, "error": False},
    {"tool": "get_alert_level", "arguments": {"city": "Seattle"}, "expected": "yellow", "error": False},
    {"tool": "get_sky", "arguments": {"city": "Seattle"}, "expected": "cloudy", "error": False},
    {
        "tool": "get_observation",
        "arguments": {"city": "Seattle"},
        "expected": {"instrument": "barometer", "value": 1013.2},
        "error": False,
    },
    {
        "tool": "get_observation",
        "arguments": {"city": "Seattle", "source": "observer"},
        "expected": {"observer": "Dana", "text": "Light breeze, clear skies."},
        "error": False,
    },
    {
        "tool": "get_precipitation",
        "arguments": {"city": "Denver"},
        "expected": {"kind": "snow", "centimetres": 4.5},
        "error": False,
    },
    {"tool": "get_sunrise", "arguments": {"city": "Seattle"}, "expected": "2026-06-21T05:11:00", "error": False},
    {
        "tool": "get_city_populations",
        "arguments": {},
        "expected": {"Seattle": 755078, "Denver": 715522},
        "error": False,
    },
    {
        "tool": "get_region_tree",
        "arguments": {},
        "expected": {
            "name": "USA",
            "subregions": [{"name": "Washington", "subregions": [{"name": "Seattle", "subregions": []}]}],
        },
        "error": False,
    },
    {"tool": "convert_temperature", "arguments": {"value": {"celsius": 100}}, "expected": 212.0, "error": False},
    {
        "tool": "find_user",
        "arguments": {"name": "Bob"},
        "expected": {"id": "u2", "name": "Bob", "home_city": "Denver"},
        "error": False,
    },
    {
        "tool": "find_user",
        "arguments": {"id": "u1"},
        "expected": {"id": "u1", "name": "Alice", "home_city": "Seattle"},
        "error": False,
    },
    # Argument validation failures come back as isError results.
    {"tool": "get_weather_forecast", "arguments": {"city": "Seattle", "hours": 99}, "expected": None, "error": True},
    {"tool": "find_user", "arguments": {"id": "u1", "name": "Alice"}, "expected": None, "error": True},
]
