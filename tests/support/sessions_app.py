"""Replicas that share legacy sessions through one Redis, for tests/test_session_replicas.py.

An app built by ``server.http_app()`` (for its ``session_idle_timeout``) takes no ``--store`` or
``--auth-*`` flags, so everything comes from the environment:

- ``SESSIONS_STORE``: the Redis URL every replica shares (required);
- ``SESSIONS_IDLE_TIMEOUT``: ``session_idle_timeout`` in seconds (default 3600). Small, so that a
  local copy's recheck interval (a quarter of it, at most a second) and the reaper's refresh of
  a busy session's Redis TTL come within a test;
- ``SESSIONS_ISSUER``, ``SESSIONS_JWKS_URI``, ``SESSIONS_RESOURCE``: JWT authorization, the
  resource being the one URL the deployment is known by (all three, or none: no authorization);
- ``SESSIONS_MARKS``: a directory where ``hold`` waits for its release.

    SESSIONS_STORE=redis://127.0.0.1:6379/0 SESSIONS_IDLE_TIMEOUT=3 \\
        toolkit run tests/support/sessions_app.py:app --transport http --port 8001
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from toolkit import Context, Server
from toolkit.auth import JWTVerifier

server = Server("sessions", version="1.0.0", store=os.environ["SESSIONS_STORE"])

ISSUER = os.environ.get("SESSIONS_ISSUER")
if ISSUER:
    RESOURCE = os.environ["SESSIONS_RESOURCE"]
    server.set_auth(
        JWTVerifier(jwks_uri=os.environ["SESSIONS_JWKS_URI"], issuer=ISSUER, audience=RESOURCE),
        authorization_servers=[ISSUER],
        resource_url=RESOURCE,
    )


@server.tool
def whoami(ctx: Context) -> dict[str, Any]:
    """The access token's subject (``None`` without authorization) and the replica's process id."""
    token = ctx.access_token
    return {"subject": token.subject if token is not None else None, "pid": os.getpid()}


@server.tool
async def hold(tag: str) -> int:
    """Run until the file ``release-TAG`` appears in ``$SESSIONS_MARKS`` (a request kept in flight); the pid."""
    release = Path(os.environ["SESSIONS_MARKS"]) / f"release-{tag}"
    async with asyncio.timeout(60):
        while not release.exists():
            await asyncio.sleep(0.02)
    return os.getpid()


app = server.http_app(session_idle_timeout=float(os.environ.get("SESSIONS_IDLE_TIMEOUT", "3600")))
