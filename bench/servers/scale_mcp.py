"""The ``scale`` scenario's server on the official SDK (``mcp`` 2.3.0, ``MCPServer``; ``bench/scale.py``).

``python bench/servers/scale_mcp.py --port PORT`` from the anchors' venv: Streamable HTTP on
127.0.0.1 at ``/mcp``, the resource ``bench://counter`` and the tool ``touch``, which bumps it and
publishes ``ctx.notify_resource_updated``. That reaches 2026-07-28 ``subscriptions/listen``
streams only: ``MCPServer`` has no ``resources/subscribe`` (the low-level server's
``on_subscribe_resource``), so the legacy fan-out is unsupported on this column. Framework
defaults otherwise.
"""

import argparse

from mcp.server.mcpserver import Context, MCPServer

URI = "bench://counter"
server = MCPServer("bench-scale", version="1.0.0")
counter = [0]


@server.resource(URI, mime_type="text/plain")
def read_counter() -> str:
    """The counter that ``touch`` bumps."""
    return str(counter[0])


@server.tool()
async def touch(ctx: Context) -> int:
    """Bump the counter and tell its subscribers."""
    counter[0] += 1
    await ctx.notify_resource_updated(URI)
    return counter[0]


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    server.run("streamable-http", host="127.0.0.1", port=args.port, streamable_http_path="/mcp")
