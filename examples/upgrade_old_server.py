"""Upgrade an old stdio MCP server to a 2026-07-28 Streamable HTTP endpoint, without changing it.

The gateway below starts the old server as its child (``OLD_SERVER``, a command; by default
``legacy_weather.py`` beside this file, an ``mcp`` 1.x server) and serves what it offers to
clients of every protocol version. ``unwrap_results=True`` takes off the ``{"result": ...}``
wrapper the old server declares, so a 2026-07-28 client gets ``[61, 63, ...]`` and a natural
``{"type": "array"}`` output schema (SEP-2106); a 2025 client gets what it always got.

    OLD_SERVER="python my_old_server.py" toolkit run upgrade_old_server.py:server --transport http

The same without a file: ``toolkit proxy "python my_old_server.py" --transport http --unwrap-results``.
"""

import os
import shlex
import sys
from pathlib import Path

import toolkit

OLD_SERVER = os.environ.get("OLD_SERVER") or shlex.join(
    [sys.executable, str(Path(__file__).with_name("legacy_weather.py"))]
)

server = toolkit.Server.proxy(toolkit.Client(shlex.split(OLD_SERVER)), name="weather", unwrap_results=True)
