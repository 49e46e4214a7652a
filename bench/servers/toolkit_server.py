"""The benchmark server on toolkit.

Run from the project venv: ``python bench/servers/toolkit_server.py [--workload W] [--transport T]``,
or ``toolkit run bench/servers/toolkit_server.py:server`` with ``BENCH_WORKLOAD`` set.

With ``BENCH_AUTH_JWKS`` (a JWKS URL), ``BENCH_AUTH_ISSUER`` and ``BENCH_AUTH_AUDIENCE`` (the
resource URL, ``http://127.0.0.1:PORT/mcp``) in the environment, the server requires bearer
tokens: ``auth=JWTVerifier(...)`` (the ``auth`` scenario). Without them it is built exactly as
before, and ``toolkit.auth`` is not even imported.

``BENCH_MIDDLEWARE`` (the ``middleware`` scenario) adds a middleware or configures OpenTelemetry:
``passthrough``, ``logging`` or ``otel`` (see ``middleware.py``). Unset, empty or ``none``: the
server is built exactly as without it, and ``middleware.py`` is not even imported.

``BENCH_DEPENDS`` (the ``depends`` scenario) adds ``get_items_for``, taking a user and a tenant as
arguments (``plain``) or from two dependencies (``injected``; see ``depends.py``). Unset, the server
is built exactly as without it, and ``depends.py`` is not even imported. ``BENCH_HOP`` (the plain
``def`` batches of ``calls``) adds ``get_items_hop``, an ``async def`` or a plain ``def`` (see
``hop.py``); unset, the same.
"""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import workloads

from toolkit import Server

config = workloads.Config.load(sys.argv[1:] if __name__ == "__main__" else None)
if os.environ.get("BENCH_AUTH_JWKS"):
    from toolkit.auth import JWTVerifier

    issuer = os.environ["BENCH_AUTH_ISSUER"]
    verifier = JWTVerifier(
        jwks_uri=os.environ["BENCH_AUTH_JWKS"], issuer=issuer, audience=os.environ["BENCH_AUTH_AUDIENCE"]
    )
    server = Server("bench", version="1.0.0", auth=verifier, authorization_servers=[issuer])
else:
    server = Server("bench", version="1.0.0")
if config.mount:
    child = Server("bench-child", version="1.0.0")
    for fn in workloads.tools(config.workload):
        child.add_tool(fn)
    server.mount(child, namespace=config.mount)
else:
    for fn in workloads.tools(config.workload):
        server.add_tool(fn)
if os.environ.get("BENCH_MIDDLEWARE", "none") not in ("", "none"):
    import middleware

    middleware.install(server, os.environ["BENCH_MIDDLEWARE"])
if os.environ.get("BENCH_DEPENDS"):
    import depends

    depends.install(server, os.environ["BENCH_DEPENDS"])
if os.environ.get("BENCH_HOP"):
    import hop

    hop.install(server, os.environ["BENCH_HOP"])

if __name__ == "__main__":
    if config.transport == "stdio":
        server.run()
    else:
        server.run(transport="http", host=config.host, port=config.port)
