"""A gateway in front of examples/conformance_server.py: what the conformance suite tests through a proxy.

Run it:  toolkit run conformance/gateway.py --transport http --port 8001
Test it: scripts/conformance --gateway stdio     (or --gateway http)

The upstream is the conformance server started over stdio as a child of the gateway, or, when
``CONFORMANCE_UPSTREAM`` holds a URL (``http://127.0.0.1:8000/mcp``) or a command, that server.
The gateway holds no tool of its own: every scenario the suite runs goes through the proxy, in
whichever era the suite speaks, whatever era the upstream answers in.

What ``toolkit proxy TARGET --transport http`` serves, plus an ``EventStore`` (as the server alone
has one), so that its own SSE streams resume (``server-sse-polling``): the command has no option
for one (``scripts/conformance --gateway stdio --proxy-cli`` runs the command itself).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from toolkit import EventStore, Server

SERVER = Path(__file__).resolve().parent.parent / "examples" / "conformance_server.py"
upstream = os.environ.get("CONFORMANCE_UPSTREAM") or [sys.executable, "-m", "toolkit", "run", str(SERVER)]

server = Server.proxy(
    upstream,
    name="toolkit-conformance-gateway",
    version="1.0.0",
    instructions="A gateway in front of the MCP conformance suite's fixture server.",
    event_store=EventStore(),
)
