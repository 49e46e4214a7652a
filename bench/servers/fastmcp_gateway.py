"""The benchmark gateway on ``fastmcp`` 4.1.6: ``create_proxy(upstream, mode="legacy")``.

Run from the anchors' venv::

    BENCH_UPSTREAM=http://127.0.0.1:8123/mcp python bench/servers/fastmcp_gateway.py --transport http --port 8124

``BENCH_UPSTREAM`` is the upstream server: a URL (Streamable HTTP), or a JSON list, the command
of a stdio server, handed to fastmcp as its ``StdioTransport(command, args)`` (which keeps the
child process alive between the proxy's connections, its default). Everything else is
``create_proxy``'s default (a fresh upstream client session for each request), but one setting:
the upstream's era is pinned to the legacy one, ``mode="legacy"``. By default fastmcp's proxy
speaks to its upstream in the era of the request's own client, and a 2026-07-28 upstream's
natural array result (``get_items``' ten items, the bench's workload) makes it fail every call
("structured_content must be a dict or None. Got list"); over a legacy session the upstream
wraps the array as ``{"result": [...]}``, which fastmcp relays. As for ``fastmcp_server.py``, the
start-up banner is turned off (it asks PyPI for a newer release).
"""

import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import workloads
from fastmcp.client.transports import StdioTransport
from fastmcp.server import create_proxy


def upstream() -> Any:
    """``BENCH_UPSTREAM``: a URL, or a stdio transport for a command given as a JSON list."""
    value = os.environ.get("BENCH_UPSTREAM", "")
    if not value:
        raise SystemExit("fastmcp_gateway.py: set BENCH_UPSTREAM to the upstream's URL or command (a JSON list)")
    if value.startswith("["):
        command = json.loads(value)
        return StdioTransport(command=command[0], args=command[1:])
    return value


server = create_proxy(upstream(), name="bench-gateway", mode="legacy")

if __name__ == "__main__":
    config = workloads.Config.load(sys.argv[1:])
    if config.transport == "stdio":
        server.run(show_banner=False)
    else:
        server.run("http", show_banner=False, host=config.host, port=config.port, path="/mcp")
