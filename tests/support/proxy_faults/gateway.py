"""The gateway ``toolkit run`` serves in the tests: a proxy of the upstream ``$PROXY_FAULTS_TARGET`` names.

    PROXY_FAULTS_TARGET='["python", "upstream.py"]' toolkit run gateway.py:server [--transport http]

``PROXY_FAULTS_TARGET``: a JSON list (a command) or string (a URL); ``PROXY_FAULTS_TIMEOUT``:
the upstream client's ``timeout`` (default 60 s); ``PROXY_FAULTS_SESSIONS``: ``sessions=``;
``PROXY_FAULTS_VERSION``: the protocol version spoken upstream (default ``auto``). The
upstream child gets ``$PROXY_FAULTS_DIR``. Besides what it proxies, the gateway has one tool of
its own, ``replica``: its process id.
"""

from __future__ import annotations

import json
import os

import toolkit

target = json.loads(os.environ["PROXY_FAULTS_TARGET"])
upstream = toolkit.Client(
    target,
    timeout=float(os.environ.get("PROXY_FAULTS_TIMEOUT", "60")),
    protocol_version=os.environ.get("PROXY_FAULTS_VERSION", "auto"),
    env={"PROXY_FAULTS_DIR": os.environ.get("PROXY_FAULTS_DIR", "")},
)
server = toolkit.Server.proxy(
    upstream,
    name="gateway",
    sessions=os.environ.get("PROXY_FAULTS_SESSIONS", "auto"),  # type: ignore[arg-type]
)


@server.tool
def replica() -> int:
    """The process id of the gateway that served this call (which replica, behind a balancer)."""
    return os.getpid()
