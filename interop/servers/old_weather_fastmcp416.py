"""The weather plan's tools (``old_weather.py``) on a ``fastmcp`` 4.1.6 server.

Run with ``.interop/servers/py-fastmcp416/bin/python`` (``scripts/servers --install-only``):

    python interop/servers/old_weather_fastmcp416.py              # stdio
    python interop/servers/old_weather_fastmcp416.py --http PORT  # Streamable HTTP on 127.0.0.1:PORT/mcp

Speaks both eras and wraps a non-object value as ``{"result": ...}`` in both, under a schema
marked ``x-fastmcp-wrap-result``.
"""

from __future__ import annotations

import sys

from fastmcp import FastMCP
from old_weather import TEXT_ONLY, TOOLS

server = FastMCP("old-weather-fastmcp416", version="4.1.6")
for function in TOOLS:
    if function.__name__ in TEXT_ONLY:
        server.tool(function, output_schema=None)
    else:
        server.tool(function)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--http"]:
        server.run("http", show_banner=False, host="127.0.0.1", port=int(sys.argv[2]), path="/mcp")
    else:
        server.run(show_banner=False)
