"""``OAuthProxy`` across replicas: a login started on one finishes on another (grants in Redis).

Two toolkit servers, each its own ``Server`` and ``OAuthProxy`` (as two processes would have),
with the same configuration (base URL, signing key, encryption key) and one real ``redis-server``
(tests/support/redis_rig.py); the upstream is the rig's oidc-provider. Each step of the flow goes
to the other replica from the one before: registration on A, consent on B, the upstream's callback
on A, the code exchanged on B, the refresh on A, and the tool, which opens the sealed upstream
token, called on B.
"""

from __future__ import annotations

import base64
import os
from urllib.parse import urljoin

import httpx
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from tests.http_support import serve
from tests.support.authserver import READY_TIMEOUT, AuthServer
from tests.support.consent_login import consent_action, consent_fields
from tests.support.oauth_login import query
from tests.support.processes import free_port
from tests.support.proxy_flow import ProxyFlow, new_verifier
from tests.support.redis_rig import redis_server, require
from tests.test_oauth_proxy import idp, proxied_server

from toolkit import Server
from toolkit.client import Client
from toolkit.stores import RedisStore

pytestmark = pytest.mark.timeout(READY_TIMEOUT + 120)
__all__ = ["idp"]

TIMEOUT = 60.0


def replica(idp: AuthServer, port: int, redis_url: str, key: bytes, secret: str) -> Server:
    server, _ = proxied_server(idp, port, signing_key=key, encryption_key=secret)
    server.store = RedisStore(redis_url)
    return server


async def test_a_login_started_on_one_replica_finishes_on_another(idp: AuthServer) -> None:
    require("redis-server")
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    secret = base64.b64encode(os.urandom(32)).decode()
    port_a, port_b = free_port(), free_port()
    with redis_server() as redis:
        # Both replicas are reached at A's URL by clients (the balancer's); B is also asked directly here.
        a_server, b_server = (replica(idp, port_a, redis.url, key, secret) for _ in range(2))
        async with (
            serve(a_server, port=port_a) as a,
            serve(b_server, port=port_b) as b,
            httpx.AsyncClient(timeout=TIMEOUT) as http,
        ):
            on_a, on_b = ProxyFlow(a.base, http), ProxyFlow(a.base, http)
            await on_b.aclose()
            on_b.browser = on_a.browser  # one user, one browser, whichever replica answers
            client = await on_a.register()
            verifier = new_verifier()
            page = await on_a.consent_page(client, verifier)
            action = consent_action(page.text, str(page.url)).replace(a.base, b.base)
            reply = await on_a.browser.post(action, data={**consent_fields(page.text), "decision": "approve"})
            while True:  # the upstream's login, up to its redirect to toolkit's callback
                assert reply.is_redirect, reply.text
                url = urljoin(str(reply.url), reply.headers["location"])
                if url.startswith(f"{a.base}/authorize/callback"):
                    break
                reply = await on_a.browser.get(url)
            landed = await on_a.browser.get(url)  # on A: the request B sent upstream
            code = query(landed.headers["location"])["code"]
            on_b.base = b.base
            tokens = (await on_b.exchange(client, code, verifier)).json()
            on_a.base = a.base
            refreshed = await on_a.refresh(client, tokens["refresh_token"])
            async with Client(b.url, auth=refreshed.json()["access_token"], timeout=TIMEOUT) as mcp:
                result = await mcp.call_tool("upstream_me")
            await on_a.aclose()
    assert refreshed.status_code == 200
    assert result.data["subject"] == "alice" and result.data["upstream"] == "alice"


async def test_a_store_outage_is_a_503_to_retry(idp: AuthServer) -> None:
    require("redis-server")
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    port = free_port()
    with redis_server() as redis:
        server = replica(idp, port, redis.url, key, base64.b64encode(os.urandom(32)).decode())
        async with serve(server, port=port) as running, httpx.AsyncClient(timeout=TIMEOUT) as http:
            flow = ProxyFlow(running.base, http)
            client = await flow.register()
            redis.stop()
            refused = await flow.refresh(client, "some-refresh-token")
            await flow.aclose()
    assert refused.status_code == 503, refused.text
    assert refused.json()["error"] == "temporarily_unavailable" and refused.headers["retry-after"] == "5"
