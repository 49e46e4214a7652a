"""``OAuthProxy`` across replicas: a login started on one finishes on another (grants in Redis).

Two toolkit servers, each its own ``Server`` and ``OAuthProxy`` (as two processes would have),
with the same configuration (base URL, signing key, encryption key) and one real ``redis-server``
(tests/support/redis_rig.py); the upstream is the rig's oidc-provider. Each step of the flow goes
to the other replica from the one before: registration on A, consent on B, the upstream's callback
on A, the code exchanged on B, the refresh on A, and the tool, which opens the sealed upstream
token, called on B.

Then the deployment itself: three ``toolkit run`` processes (tests/support/proxy_replica_app.py,
the same keys for all, given in Python) on one redis-server behind the HAProxy rig
(tests/support/cluster.py, round-robin per request), and toolkit's own ``Client`` logging in
through the balancer's URL. HAProxy's log says which replica answered each request.
"""

from __future__ import annotations

import asyncio
import base64
import os
import time
from itertools import pairwise
from urllib.parse import urljoin

import httpx
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from tests.http_support import serve
from tests.support.authserver import READY_TIMEOUT, AuthServer
from tests.support.cluster import Served, cluster
from tests.support.consent_login import ConsentingLogin, consent_action, consent_fields
from tests.support.oauth_login import query
from tests.support.processes import REPO, free_port
from tests.support.proxy_flow import ProxyFlow, new_verifier
from tests.support.redis_rig import redis_server, require
from tests.test_oauth_proxy import expire_upstream, idp, proxied_server

from toolkit import Server
from toolkit.client import Client, OAuth
from toolkit.stores import RedisStore

pytestmark = pytest.mark.timeout(READY_TIMEOUT + 120)
__all__ = ["idp"]

TIMEOUT = 60.0
REPLICA_APP = REPO / "tests" / "support" / "proxy_replica_app.py"


def signing_key() -> bytes:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


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


async def test_replicas_refresh_one_login_upstream_once(idp: AuthServer) -> None:
    """One user's calls on two replicas at once, the upstream token expired: one replica refreshes
    it at the provider, the other waits for the result (a lease in the store). Both spending the
    same refresh token would look like theft to a provider that rotates them."""
    require("redis-server")
    key = signing_key()
    secret = base64.b64encode(os.urandom(32)).decode()
    port_a, port_b = free_port(), free_port()
    with redis_server() as redis:
        (a_server, a), (b_server, b) = (
            proxied_server(idp, port_a, signing_key=key, encryption_key=secret) for _ in range(2)
        )
        a_server.store, b_server.store = RedisStore(redis.url), RedisStore(redis.url)
        async with serve(a_server, port=port_a) as running, serve(b_server, port=port_b):
            async with httpx.AsyncClient(timeout=TIMEOUT) as http:
                flow = ProxyFlow(running.base, http)
                tokens = await flow.tokens(await flow.register())
                await flow.aclose()
            access = await a.verify(tokens["access_token"])
            before = await a.upstream_token(access)
            refreshed = []
            for _ in range(3):
                await expire_upstream(a, access.claims["gid"])
                together = await asyncio.gather(*(proxy.upstream_token(access) for proxy in (a, b, a, b)))
                refreshed.append(together)
    for together in refreshed:
        assert len(set(together)) == 1, together  # one refresh, whichever replica made it
    assert len({together[0] for together in refreshed} | {before}) == 4  # and each time a new token


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


def first(served: list[Served], method: str, path: str) -> Served:
    found = [request for request in served if (request.method, request.path) == (method, path)]
    assert found, f"the balancer logged no {method} {path}: {served}"
    return found[0]


async def test_three_replicas_behind_haproxy_share_a_login_and_its_upstream_token(idp: AuthServer) -> None:
    require("redis-server")
    port = free_port()  # the balancer's: the replicas' public URL, so known before they start
    env = {
        "PROXY_REPLICA_UPSTREAM": idp.issuer,
        "PROXY_REPLICA_USERINFO": idp.metadata["userinfo_endpoint"],
        "PROXY_REPLICA_BASE_URL": f"http://127.0.0.1:{port}",
        "PROXY_REPLICA_SIGNING_KEY": signing_key().decode(),
        "PROXY_REPLICA_ENCRYPTION_KEY": base64.b64encode(os.urandom(32)).decode(),
    }
    login = ConsentingLogin()
    with redis_server() as redis, cluster(REPLICA_APP, 3, redis.url, env=env, balancer_port=port) as running:
        oauth = OAuth(user_agent=login, allow_http_loopback=True, client_name="replica-tests")
        replicas = {running.replicas.pid(name): name for name in running.replicas.names}
        async with Client(running.url, auth=oauth, timeout=TIMEOUT) as client:
            results = [await client.call_tool("upstream_me")]
            # More calls until every replica has run the tool (round-robin: three calls in a row,
            # unless the client sends something else in between), each opening the upstream token
            # sealed in Redis by the replica that took the upstream's callback.
            while len({result.data["replica_pid"] for result in results}) < 3 and len(results) < 9:
                results.append(await client.call_tool("upstream_me"))
        # HAProxy writes a request's line once the request is over: wait for the token request's
        # (long over by now on any machine; the deadline is a hang guard).
        deadline = time.monotonic() + 60
        while not any(r.path == "/token" for r in running.balancer.served()) and time.monotonic() < deadline:
            time.sleep(0.05)
        served = running.balancer.served()

    assert len(login.consent_pages) == 1  # one login, through toolkit's consent
    registered = first(served, "POST", "/register")
    authorized = first(served, "GET", "/authorize")  # the consent page: the pending request saved in Redis
    consented = first(served, "POST", "/authorize/consent")  # taken by another replica, sent upstream
    returned = first(served, "GET", "/authorize/callback")  # the upstream's code: redeemed, tokens sealed
    exchanged = first(served, "POST", "/token")  # the code taken by yet another replica
    assert (registered.status, authorized.status, exchanged.status) == (201, 200, 200), served
    assert consented.status == 303 and returned.status == 303, served
    steps = [authorized.server, consented.server, returned.server, exchanged.server]
    assert all(a != b for a, b in pairwise(steps)), f"a step stayed on its replica: {served}"
    assert {registered.server, *steps} == {"r0", "r1", "r2"}, served
    ran_on = {replicas[result.data["replica_pid"]] for result in results}
    assert ran_on == {"r0", "r1", "r2"}, f"the tool ran on {ran_on} only, in {len(results)} calls"
    for result in results:
        assert result.data["subject"] == "alice" and result.data["upstream"] == "alice"
