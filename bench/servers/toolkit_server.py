"""The benchmark server on toolkit.

Run from the project venv: ``python bench/servers/toolkit_server.py [--workload W] [--transport T]``,
or ``toolkit run bench/servers/toolkit_server.py:server`` with ``BENCH_WORKLOAD`` set.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import workloads

from toolkit import Server

config = workloads.Config.load(sys.argv[1:] if __name__ == "__main__" else None)
server = Server("bench", version="1.0.0")
for fn in workloads.tools(config.workload):
    server.add_tool(fn)

if __name__ == "__main__":
    if config.transport == "stdio":
        server.run()
    else:
        server.run(transport="http", host=config.host, port=config.port)
