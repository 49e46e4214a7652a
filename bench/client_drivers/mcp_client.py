"""The official SDK's client, ``mcp.Client`` (mcp 2.3.0), per ``tools/call`` (see ``common.py``).

Run from the anchors' venv. ``mode="legacy"`` (the ``initialize`` handshake, which offers
``2025-11-25``, the newest handshake version) or ``mode="2026-07-28"`` (adopted directly, no
probe); everything else its defaults (its output-schema check on: it lists the tools before the
first call). A URL target is Streamable HTTP, a ``StdioServerParameters`` a child process. The
measured value is ``result.structured_content`` (the legacy one still wrapped in ``{"result": ...}``).
"""

import asyncio
import importlib.metadata
import sys

import common
from mcp import Client
from mcp.client.stdio import StdioServerParameters


async def main() -> None:
    args = common.parse_args()
    mode = "legacy" if args.era == "legacy" else common.MODERN_VERSION
    if args.transport == "http":
        target = args.url
    else:
        command, *rest = args.server
        target = StdioServerParameters(command=command, args=rest)
    async with Client(target, mode=mode) as client:
        expected = common.LEGACY_VERSION if args.era == "legacy" else common.MODERN_VERSION
        if client.session.protocol_version != expected:
            raise AssertionError(f"mcp.Client speaks {client.session.protocol_version}, not {expected}")

        async def call():
            return await client.call_tool(common.TOOL)

        def check(result):
            if result.is_error:
                raise AssertionError(f"isError: {result}")
            common.check_items(result.structured_content, "mcp.Client")

        figures = await common.measure(call, check, args)
    common.report(figures, "mcp", importlib.metadata.version("mcp"))


if __name__ == "__main__":
    asyncio.run(main())
    sys.exit(0)
