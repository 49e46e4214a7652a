"""The benchmark server on ``fastmcp`` 4.1.6.

Run from the anchors venv: ``python bench/servers/fastmcp_server.py [--workload W] [--transport T]``.
Framework defaults are kept, except for what the benchmark must set (host, port, ``/mcp``) and the
start-up banner, which is turned off: it is cosmetic, and it asks PyPI for a newer release, which
would put network time into the start-up figures.

``--mount NAMESPACE`` (``BENCH_MOUNT``, the ``compose`` scenario): the tools go into a child server,
mounted in this one with ``server.mount(child, namespace=NAMESPACE)``.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import workloads
from fastmcp import FastMCP

config = workloads.Config.load(sys.argv[1:] if __name__ == "__main__" else None)
server = FastMCP("bench", version="1.0.0")
if config.mount:
    child = FastMCP("bench-child", version="1.0.0")
    for fn in workloads.tools(config.workload):
        child.add_tool(fn)
    server.mount(child, namespace=config.mount)
else:
    for fn in workloads.tools(config.workload):
        server.add_tool(fn)

if __name__ == "__main__":
    if config.transport == "stdio":
        server.run(show_banner=False)
    else:
        server.run("http", show_banner=False, host=config.host, port=config.port, path="/mcp")
