"""Time the registration of the 500 generated tools in one framework, in a fresh interpreter.

Run with the framework's own Python: ``python bench/servers/register.py {toolkit,mcp,fastmcp}``.
Generating the functions and creating the (empty) server are not timed; only the loop of
``add_tool`` calls is. Prints one JSON object: ``{"framework": ..., "tools": 500, "seconds": ...}``.
"""

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import generated


def make_server(framework: str) -> Callable[[Callable[..., Any]], Any]:
    """A fresh server of ``framework``, returned as its ``add_tool`` method."""
    server: Any
    if framework == "toolkit":
        from toolkit import Server

        server = Server("bench", version="1.0.0")
    elif framework == "mcp":
        from mcp.server.mcpserver import MCPServer

        server = MCPServer("bench", version="1.0.0")
    elif framework == "fastmcp":
        from fastmcp import FastMCP

        server = FastMCP("bench", version="1.0.0")
    else:
        raise SystemExit(f"unknown framework {framework!r}")
    add_tool: Callable[[Callable[..., Any]], Any] = server.add_tool
    return add_tool


def main() -> None:
    framework = sys.argv[1]
    tools = generated.build_tools(500)
    add_tool = make_server(framework)
    start = time.perf_counter()
    for fn in tools:
        add_tool(fn)
    seconds = time.perf_counter() - start
    print(json.dumps({"framework": framework, "tools": len(tools), "seconds": seconds}))


if __name__ == "__main__":
    main()
