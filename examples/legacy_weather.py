"""An old MCP server, written with the ``mcp`` SDK 1.x (``FastMCP``), that nobody wants to touch.

It speaks the ``initialize`` era only, and, like every ``mcp`` 1.x server, sends a list or a number
as ``{"result": ...}`` under a ``<tool>Output`` schema. ``upgrade_old_server.py`` serves it, as it
is, to clients of every era over Streamable HTTP, with natural output for 2026-07-28 clients.

Run with an interpreter that has ``mcp`` 1.x (``pip install 'mcp>=1.10,<2'``; the tests use
``.interop/py-mcp130``): ``python legacy_weather.py`` serves it over stdio.
"""

from mcp.server.fastmcp import FastMCP

server = FastMCP("legacy-weather")


@server.tool()
def get_temperatures(city: str) -> list[int]:
    """The next six hours' temperatures in a city, in Fahrenheit."""
    return [61, 63, 66, 68, 70, 71]


@server.tool()
def get_conditions(city: str) -> dict[str, str]:
    """The sky and the wind in a city now."""
    return {"sky": "cloudy", "wind": "SW 12 mph"}


if __name__ == "__main__":
    server.run("stdio")
