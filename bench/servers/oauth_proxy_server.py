"""The ``authserver`` scenario's server: ``get_items`` behind toolkit's own authorization server.

Run from the project venv by ``bench/authserver.py``::

    BENCH_UPSTREAM_ISSUER=http://127.0.0.1:PORT python bench/servers/oauth_proxy_server.py \\
        --workload items --transport http --port P

``Server("bench", auth=OAuthProxy(upstream=OIDC(issuer, "toolkit-proxy", "proxy-secret"),
base_url="http://127.0.0.1:P"))``: the upstream is the test rig's oidc-provider
(``tests/authserver/server.mjs``) with that one confidential client, as an operator registers
toolkit at Google or Entra. The signing and encryption keys are generated at start (one process,
the memory store): the tokens this process issues are the ones it is then called with. The tool
is the ``items`` workload's ``get_items``, as in ``toolkit_server.py``, so the calls compare with
the ``auth`` scenario's JWTVerifier server call for call.
"""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import workloads

from toolkit import Server
from toolkit.auth import OIDC, OAuthProxy

UPSTREAM_CLIENT = ("toolkit-proxy", "proxy-secret")

config = workloads.Config.load(sys.argv[1:] if __name__ == "__main__" else None)
proxy = OAuthProxy(
    upstream=OIDC(os.environ["BENCH_UPSTREAM_ISSUER"], *UPSTREAM_CLIENT, scopes=["openid"], allow_http_loopback=True),
    base_url=f"http://{config.host}:{config.port}",
)
server = Server("bench", version="1.0.0", auth=proxy)
for fn in workloads.tools(config.workload):
    server.add_tool(fn)

if __name__ == "__main__":
    server.run(transport="http", host=config.host, port=config.port)
