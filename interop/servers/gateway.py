"""A gateway file: ``toolkit.Server.proxy`` in front of one MCP server, for ``scripts/interop --gateway mcp130-file``.

    INTEROP_GATEWAY_UPSTREAM='["python", "old_weather_mcp130.py"]' toolkit run interop/servers/gateway.py:server
    INTEROP_GATEWAY_UPSTREAM=http://127.0.0.1:PORT/mcp toolkit run interop/servers/gateway.py:server --transport http

``INTEROP_GATEWAY_UPSTREAM``: the upstream, a URL or a command as a JSON list. With
``INTEROP_GATEWAY_PROTOCOL`` the gateway speaks that version to it instead of the newest both
speak. The upstream's ``{"result": x}`` wrappers are undone (``unwrap_results=True``), so a
2026-07-28 caller gets ``x`` under its natural schema. ``toolkit proxy TARGET --unwrap-results``
serves the same gateway without a file.
"""

from __future__ import annotations

import json
import os

import toolkit

_upstream = os.environ["INTEROP_GATEWAY_UPSTREAM"]
_version = os.environ.get("INTEROP_GATEWAY_PROTOCOL")
client = toolkit.Client(
    json.loads(_upstream) if _upstream.startswith("[") else _upstream,
    **({"protocol_version": _version} if _version else {}),
)
server = toolkit.Server.proxy(client, name="interop-gateway", unwrap_results=True)
