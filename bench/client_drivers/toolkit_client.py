"""toolkit's client, ``toolkit.Client``, per ``tools/call`` (see ``common.py``).

Run from toolkit's ``.venv``: the version pinned (``2025-11-25``: ``initialize``; ``2026-07-28``:
per-request ``_meta``, no handshake), defaults otherwise (the result's ``outputSchema`` check on,
the tool listed once before the first call). The measured value is ``result.data``, the natural
value (unwrapped from the legacy ``{"result": ...}``).
"""

import asyncio
import sys

import common


async def main() -> None:
    args = common.parse_args()
    try:
        import toolkit
        from toolkit import Client
    except ImportError as exc:
        common.unsupported(f"this toolkit has no toolkit.Client (it predates it): {exc}")
    version = common.LEGACY_VERSION if args.era == "legacy" else common.MODERN_VERSION
    target = args.url if args.transport == "http" else args.server
    try:
        client = Client(target, protocol_version=version)
        await client.__aenter__()
    except ModuleNotFoundError as exc:
        if (exc.name or "").startswith("toolkit"):
            common.unsupported(f"this toolkit's client has no {args.transport} transport, {exc.name} (it predates it)")
        raise
    try:
        if client.negotiated_version != version:
            raise AssertionError(f"toolkit.Client speaks {client.negotiated_version}, not {version}")

        async def call():
            return await client.call_tool(common.TOOL)

        def check(result):
            if result.is_error:
                raise AssertionError(f"isError: {result.raw}")
            common.check_items(result.data, "toolkit.Client")

        figures = await common.measure(call, check, args)
    finally:
        await client.__aexit__(None, None, None)
    common.report(figures, "toolkit", getattr(toolkit, "__version__", "?"))


if __name__ == "__main__":
    asyncio.run(main())
    sys.exit(0)
