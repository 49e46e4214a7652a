"""The weather plan's tools (``old_weather.py``) on an ``mcp`` 1.30.0 ``FastMCP`` server.

Run with ``.interop/py-mcp130/bin/python`` (``scripts/interop --install-only``):

    python interop/servers/old_weather_mcp130.py                  # stdio
    python interop/servers/old_weather_mcp130.py --http PORT      # Streamable HTTP on 127.0.0.1:PORT/mcp

The ``initialize`` era only (2024-11-05 to 2025-11-25). As the SDK does for every version it
speaks: an object as it is, anything else wrapped as ``{"result": ...}`` under a
``<tool>Output`` schema; a list's text content one block per item, ``None``'s none.
"""

from __future__ import annotations

import sys

from mcp.server.fastmcp import FastMCP
from old_weather import TEXT_ONLY, TOOLS

port = int(sys.argv[2]) if sys.argv[1:2] == ["--http"] else 8000
server = FastMCP("old-weather-mcp130", host="127.0.0.1", port=port)
for function in TOOLS:
    server.add_tool(function, structured_output=False if function.__name__ in TEXT_ONLY else None)


if __name__ == "__main__":
    server.run("streamable-http" if sys.argv[1:2] == ["--http"] else "stdio")
