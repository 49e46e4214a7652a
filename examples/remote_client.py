"""List and call the tools of any MCP server: a URL, or a command that starts one.

    python examples/remote_client.py                                  # starts examples/weather.py over stdio
    python examples/remote_client.py http://127.0.0.1:8000/mcp        # a server over Streamable HTTP
    python examples/remote_client.py "npx -y @modelcontextprotocol/server-everything"

It prints each tool with its description, then calls ``get_temperatures`` if the server has it
(examples/weather.py does) and prints the natural value, whatever protocol version the server
speaks (``Client`` probes for the newest one).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import toolkit

WEATHER = Path(__file__).with_name("weather.py")


async def main(target: str) -> None:
    async with toolkit.Client(target) as client:
        print(f"connected to {client.server_info} over protocol version {client.negotiated_version}")
        tools = await client.list_tools()
        for tool in tools:
            print(f"- {tool['name']}: {tool.get('description', '')}")
        if any(tool["name"] == "get_temperatures" for tool in tools):
            result = await client.call_tool("get_temperatures", {"city": "Paris"})
            print(f"get_temperatures(city='Paris') -> {result.data}")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else f"{sys.executable} -m toolkit run {WEATHER}"))
