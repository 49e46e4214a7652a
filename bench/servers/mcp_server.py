"""The benchmark server on the official SDK's high-level API (``mcp`` 2.3.0, ``MCPServer``).

Run from the anchors venv: ``python bench/servers/mcp_server.py [--workload W] [--transport T]``.
Framework defaults are kept, except for what the benchmark must set (host, port, ``/mcp``).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import workloads
from mcp.server.mcpserver import MCPServer

config = workloads.Config.load(sys.argv[1:] if __name__ == "__main__" else None)
if config.mount:
    raise SystemExit("mcp_server.py: mcp 2.3.0's MCPServer cannot mount a server (--mount/BENCH_MOUNT)")
server = MCPServer("bench", version="1.0.0")
for fn in workloads.tools(config.workload):
    server.add_tool(fn)

if __name__ == "__main__":
    if config.transport == "stdio":
        server.run()
    else:
        server.run("streamable-http", host=config.host, port=config.port, streamable_http_path="/mcp")
