"""The weather plan's tools as plain functions, for servers of other frameworks, and what they return.

``old_weather_mcp130.py`` (``mcp`` 1.30.0 ``FastMCP``) and ``old_weather_fastmcp416.py``
(``fastmcp`` 4.1.6) serve these functions as their users would; both wrap a non-object value as
``{"result": ...}`` in every era. ``scripts/interop --gateway`` puts ``interop/servers/gateway.py``
(``toolkit.Server.proxy(..., unwrap_results=True)``) in front of them and drives the real client
libraries through it with ``INTEROP_PLAN``: a 2026-07-28 client must get each value as it is (a
list stays a list), a legacy client the legacy shape.

Only pydantic and the standard library here: the runner imports the plan with the project's
interpreter, the servers import the functions with their own pinned ones. The functions raise
``ValueError`` for a tool error: both frameworks turn an exception into an ``isError`` result.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field


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


_STATIONS = {"SEA": Station(code="SEA", name="Seattle-Tacoma", elevation_m=131)}


def get_weather_forecast(city: str, hours: Annotated[int, Field(ge=1, le=24)] = 3) -> list[HourlyForecast]:
    """Hourly forecast for a city (a list of objects)."""
    conditions = ["sunny", "partly cloudy", "cloudy"]
    return [
        HourlyForecast(hour=f"{9 + i:02d}:00", temp=68.0 + 2 * i, conditions=conditions[i % 3]) for i in range(hours)
    ]


def get_current_conditions(city: str) -> CurrentConditions:
    """Current conditions in a city (an object)."""
    return CurrentConditions(city=city, temp=71.5, humidity=0.42, wind_mph=8.0)


def get_count() -> int:
    """How many cities have forecasts."""
    return 42


def get_temperatures(city: str) -> list[int]:
    """The next six hourly temperatures for a city."""
    return [61, 63, 66, 70, 72, 71]


def get_summary(city: str) -> str:
    """A one-line summary, with the framework's default output schema for a str."""
    return f"{city}: sunny, high of 72°F."


def get_headline(city: str) -> str:
    """A headline: text only (served without an output schema)."""
    return f"Sunny skies over {city}"


def is_raining(city: str) -> bool:
    """Whether it is raining in a city right now."""
    return city.lower() == "seattle"


def get_humidity(city: str) -> float:
    """Relative humidity in a city, from 0 to 1."""
    return 0.42


def clear_cache() -> None:
    """Drop cached forecasts. Returns nothing."""


def find_station(code: str) -> Station | None:
    """The weather station with this code, or null if there is none."""
    return _STATIONS.get(code.upper())


def get_alert_level(city: str) -> Literal["green", "yellow", "red"]:
    """Today's weather alert level."""
    return "yellow"


def get_sky(city: str) -> Sky:
    """How the sky looks in a city."""
    return Sky.CLOUDY


def get_observation(city: str, source: Literal["instrument", "observer"] = "instrument") -> Reading | Report:
    """The latest observation: an instrument reading or an observer's report."""
    if source == "instrument":
        return Reading(instrument="barometer", value=1013.2)
    return Report(observer="Dana", text="Light breeze, clear skies.")


def get_precipitation(city: str) -> Precipitation:
    """Today's precipitation, rain or snow (a discriminated union on "kind")."""
    if city.lower() == "denver":
        return Snow(centimetres=4.5)
    return Rain(millimetres=12.0)


def get_city_populations() -> dict[str, int]:
    """Population of each city with a forecast."""
    return {"Seattle": 755_078, "Denver": 715_522}


def get_region_tree() -> Region:
    """The regions covered, as a tree (a recursive model)."""
    return Region(name="USA", subregions=[Region(name="Washington", subregions=[Region(name="Seattle")])])


def convert_temperature(value: Celsius | Fahrenheit) -> float:
    """Convert a temperature: give {"celsius": x} to get Fahrenheit, or {"fahrenheit": x} to get Celsius."""
    if isinstance(value, Celsius):
        return round(value.celsius * 9 / 5 + 32, 2)
    return round((value.fahrenheit - 32) * 5 / 9, 2)


def get_alerts(city: str) -> list[str]:
    """Active alerts; there is no alert feed for any city (always an error result)."""
    raise ValueError(f"no alert feed for {city}")


TOOLS: list[Callable[..., Any]] = [
    get_weather_forecast,
    get_current_conditions,
    get_count,
    get_temperatures,
    get_summary,
    get_headline,
    is_raining,
    get_humidity,
    clear_cache,
    find_station,
    get_alert_level,
    get_sky,
    get_observation,
    get_precipitation,
    get_city_populations,
    get_region_tree,
    convert_temperature,
    get_alerts,
]
TEXT_ONLY = {"get_headline"}
"""Served without an output schema (mcp 1.x ``structured_output=False``, fastmcp ``output_schema=None``)."""


# What each call returns, as JSON: every client must hand its user exactly this value (the runner's
# rules per era: interop/README.md). "content" (where given) is the text blocks the upstream itself
# writes for the value, kept as they came through the gateway: mcp 1.x FastMCP writes a list as one
# block per item and None as no block at all (``_convert_to_content``); fastmcp one block (str: the
# text; anything else: its JSON).
INTEROP_PLAN: list[dict[str, Any]] = [
    {
        "tool": "get_weather_forecast",
        "arguments": {"city": "Seattle", "hours": 2},
        "expected": [
            {"hour": "09:00", "temp": 68.0, "conditions": "sunny"},
            {"hour": "10:00", "temp": 70.0, "conditions": "partly cloudy"},
        ],
    },
    {
        "tool": "get_current_conditions",
        "arguments": {"city": "Seattle"},
        "expected": {"city": "Seattle", "temp": 71.5, "humidity": 0.42, "wind_mph": 8.0},
    },
    {"tool": "get_count", "arguments": {}, "expected": 42},
    {"tool": "get_temperatures", "arguments": {"city": "Seattle"}, "expected": [61, 63, 66, 70, 72, 71]},
    {"tool": "get_summary", "arguments": {"city": "Seattle"}, "expected": "Seattle: sunny, high of 72°F."},
    {"tool": "get_headline", "arguments": {"city": "Seattle"}, "expected": "Sunny skies over Seattle"},
    {"tool": "is_raining", "arguments": {"city": "Seattle"}, "expected": True},
    {"tool": "get_humidity", "arguments": {"city": "Seattle"}, "expected": 0.42},
    {"tool": "clear_cache", "arguments": {}, "expected": None},
    {
        "tool": "find_station",
        "arguments": {"code": "sea"},
        "expected": {"code": "SEA", "name": "Seattle-Tacoma", "elevation_m": 131},
    },
    {"tool": "find_station", "arguments": {"code": "XYZ"}, "expected": None},
    {"tool": "get_alert_level", "arguments": {"city": "Seattle"}, "expected": "yellow"},
    {"tool": "get_sky", "arguments": {"city": "Seattle"}, "expected": "cloudy"},
    {
        "tool": "get_observation",
        "arguments": {"city": "Seattle"},
        "expected": {"instrument": "barometer", "value": 1013.2},
    },
    {
        "tool": "get_observation",
        "arguments": {"city": "Seattle", "source": "observer"},
        "expected": {"observer": "Dana", "text": "Light breeze, clear skies."},
    },
    {"tool": "get_precipitation", "arguments": {"city": "Denver"}, "expected": {"kind": "snow", "centimetres": 4.5}},
    {"tool": "get_city_populations", "arguments": {}, "expected": {"Seattle": 755078, "Denver": 715522}},
    {
        "tool": "get_region_tree",
        "arguments": {},
        "expected": {
            "name": "USA",
            "subregions": [{"name": "Washington", "subregions": [{"name": "Seattle", "subregions": []}]}],
        },
    },
    {"tool": "convert_temperature", "arguments": {"value": {"celsius": 100}}, "expected": 212.0},
    {"tool": "get_alerts", "arguments": {"city": "Seattle"}, "expected": None, "error": True},
    # Argument validation failures (checked by the upstream) come back as isError results.
    {"tool": "get_weather_forecast", "arguments": {"city": "Seattle", "hours": 99}, "expected": None, "error": True},
]
