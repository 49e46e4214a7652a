"""The app every replica runs in tests/test_oauth_proxy_replicas.py's HAProxy test.

``toolkit run tests/support/proxy_replica_app.py --transport http --store redis://...``: an
``OAuthProxy`` in front of the test rig's oidc-provider, configured in Python from the environment
the test gives every replica alike: the balancer's URL as ``base_url`` (toolkit's issuer, and the
callback the upstream sends the browser back to), and one signing key and one encryption key for
all of them, so that any replica verifies the tokens another issued and opens the upstream tokens
another sealed in the store.

- ``PROXY_REPLICA_UPSTREAM``: the upstream's issuer; ``PROXY_REPLICA_USERINFO``: its userinfo endpoint;
- ``PROXY_REPLICA_BASE_URL``: the balancer's origin;
- ``PROXY_REPLICA_SIGNING_KEY``: a PEM private key; ``PROXY_REPLICA_ENCRYPTION_KEY``: 32 bytes, base64.
"""

from __future__ import annotations

import os
from typing import Any

import httpx

from toolkit import Context, Server
from toolkit.auth import OIDC, OAuthProxy, UpstreamToken

UPSTREAM_CLIENT = ("toolkit-proxy", "proxy-secret")  # tests/test_oauth_proxy.py registers it at the upstream
USERINFO = os.environ["PROXY_REPLICA_USERINFO"]

server = Server(
    "replica-demo",
    auth=OAuthProxy(
        upstream=OIDC(
            os.environ["PROXY_REPLICA_UPSTREAM"], *UPSTREAM_CLIENT, scopes=["openid"], allow_http_loopback=True
        ),
        base_url=os.environ["PROXY_REPLICA_BASE_URL"],
        signing_key=os.environ["PROXY_REPLICA_SIGNING_KEY"],
        encryption_key=os.environ["PROXY_REPLICA_ENCRYPTION_KEY"],
    ),
)


@server.tool
async def upstream_me(token: UpstreamToken, ctx: Context) -> dict[str, Any]:
    """Who the upstream says the caller is, asked with the caller's own upstream token."""
    async with httpx.AsyncClient(timeout=30.0) as http:
        reply = await http.get(USERINFO, headers={"authorization": f"Bearer {token}"})
    reply.raise_for_status()
    access = ctx.access_token
    assert access is not None
    return {"subject": access.subject, "upstream": reply.json()["sub"], "replica_pid": os.getpid()}
