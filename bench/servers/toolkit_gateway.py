"""The benchmark gateway on toolkit: ``toolkit.Server.proxy(upstream)``, nothing else.

The ``compose`` scenario serves it as a user would, with ``toolkit run``::

    BENCH_UPSTREAM=http://127.0.0.1:8123/mcp \\
        python -m toolkit run bench/servers/toolkit_gateway.py:server --transport http --port 8124

``BENCH_UPSTREAM`` is the upstream server: a URL (Streamable HTTP), or a JSON list, the command
of a stdio server (``["/path/python", "bench/servers/toolkit_server.py", "--transport", "stdio"]``).
The proxy's defaults are kept (``sessions="auto"``, no unwrapping, no token forwarded). Run as a
script (``python bench/servers/toolkit_gateway.py --transport http --port P``), it serves the same
server with ``server.run``, which is what ``bench/profile.py`` profiles.
"""

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import workloads

from toolkit import Server


def upstream() -> str | list[str]:
    """``BENCH_UPSTREAM``: a URL, or a command as a JSON list."""
    value = os.environ.get("BENCH_UPSTREAM", "")
    if not value:
        raise SystemExit("toolkit_gateway.py: set BENCH_UPSTREAM to the upstream's URL or command (a JSON list)")
    if value.startswith("["):
        command: list[str] = json.loads(value)
        return command
    return value


server = Server.proxy(upstream(), name="bench-gateway")

if __name__ == "__main__":
    config = workloads.Config.load(sys.argv[1:])
    if config.transport == "stdio":
        server.run()
    else:
        server.run(transport="http", host=config.host, port=config.port)
