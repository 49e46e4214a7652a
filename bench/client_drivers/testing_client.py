"""``toolkit.testing.Client`` per ``call_tool``, in process (see ``common.py`` for the loop).

Run from toolkit's ``.venv``; the ``--baseline`` column sets ``PYTHONPATH`` to an older tree's
``src/``, so the same loop measures that toolkit's ``testing.Client``. The server is the bench
server (``bench/servers/toolkit_server.py``'s ``server``, the ``items`` workload), in this process:
the CPU per call is the client's and the server's together, the whole cost of a test's call.
Era: ``protocol_version="2025-11-25"`` or ``"2026-07-28"``. Every result (the raw
``CallToolResult``, which both old and new ``testing.Client`` return) must carry the ten items.
"""

import asyncio
import os
import sys
from pathlib import Path

import common

SERVERS = Path(__file__).resolve().parent.parent / "servers"


async def main() -> None:
    args = common.parse_args([*sys.argv[1:], "--transport", "stdio", "--server", "-"])
    os.environ["BENCH_WORKLOAD"] = "items"
    sys.path.insert(0, str(SERVERS))
    import toolkit_server

    import toolkit
    from toolkit.testing import Client

    version = common.LEGACY_VERSION if args.era == "legacy" else common.MODERN_VERSION
    async with Client(toolkit_server.server, protocol_version=version) as client:

        async def call():
            return await client.call_tool(common.TOOL)

        def check(result):
            if result.get("isError") or not result.get("content"):
                raise AssertionError(f"isError or no content: {str(result)[:400]}")
            common.check_items(result.get("structuredContent"), "toolkit.testing.Client")

        figures = await common.measure(call, check, args)
    common.report(figures, "toolkit.testing", getattr(toolkit, "__version__", "?"))


if __name__ == "__main__":
    asyncio.run(main())
    sys.exit(0)
