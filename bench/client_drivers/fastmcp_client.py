"""fastmcp's client, ``fastmcp.Client`` (fastmcp 4.1.6), per ``tools/call`` (see ``common.py``).

Run from the anchors' venv. ``mode="legacy"`` (the ``initialize`` handshake, ``2025-11-25``) or
``mode="2026-07-28"``; everything else its defaults: ``call_tool`` parses the structured result
into ``result.data`` with types built from the tool's ``outputSchema`` (it lists the tools before
the first call). ``StreamableHttpTransport`` for the URL, ``StdioTransport`` for the command.
The checked value is ``result.structured_content`` (``data`` holds fastmcp's own objects), and
``data`` must be there.
"""

import asyncio
import importlib.metadata
import os
import sys

os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")  # never reach the network

import common
from fastmcp import Client
from fastmcp.client.transports import StdioTransport, StreamableHttpTransport


async def main() -> None:
    args = common.parse_args()
    mode = "legacy" if args.era == "legacy" else common.MODERN_VERSION
    if args.transport == "http":
        transport = StreamableHttpTransport(args.url)
    else:
        command, *rest = args.server
        transport = StdioTransport(command=command, args=rest)
    async with Client(transport, mode=mode) as client:
        expected = common.LEGACY_VERSION if args.era == "legacy" else common.MODERN_VERSION
        if client.protocol_version != expected:
            raise AssertionError(f"fastmcp.Client speaks {client.protocol_version}, not {expected}")

        async def call():
            return await client.call_tool(common.TOOL)

        def check(result):
            if result.is_error or result.data is None:
                raise AssertionError(f"isError or no data: {result}")
            common.check_items(result.structured_content, "fastmcp.Client")

        figures = await common.measure(call, check, args)
    common.report(figures, "fastmcp", importlib.metadata.version("fastmcp"))


if __name__ == "__main__":
    asyncio.run(main())
    sys.exit(0)
