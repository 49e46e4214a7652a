"""An emergency revocation: a key taken out of the JWKS with nothing put in its place stops verifying.

The rotation tests (test_auth.py) add a new key, and a token naming the new ``kid`` makes the
server refetch at once. Here no new key comes: the issuer withdraws one of its two published
keys, and only the key set's own refresh rule (a background refetch once the set is older than
``jwks_cache_seconds``, at most one per ``jwks_refetch_interval``) can tell the server. The server
is a real uvicorn on 127.0.0.1; the key set is served over real HTTP by ``Issuer``, whose
``published`` keys the test changes.

Every request refreshes a stale key set in the background, a remembered token's too: traffic of
cached tokens alone must notice the withdrawal (it used to wait for ``cache_seconds``, 300 s).
"""

from __future__ import annotations

import asyncio
import time

import pytest
from tests.http_support import Legacy, McpHttp, Modern, Reply, free_port, serve
from tests.support.bearer import bearer_client
from tests.support.issuer import Issuer, SigningKey, serve_issuer

from toolkit import Context, Server
from toolkit.auth import JWTVerifier

pytestmark = pytest.mark.timeout(60)

CACHE_SECONDS = 0.5
REFETCH_INTERVAL = 0.2
DEADLINE = 10.0


def protected(issuer: Issuer) -> Server:
    verifier = JWTVerifier(
        jwks_uri=issuer.jwks_uri,
        issuer=issuer.issuer,
        audience=issuer.audience,
        jwks_cache_seconds=CACHE_SECONDS,
        jwks_refetch_interval=REFETCH_INTERVAL,
    )
    server = Server("revocation", auth=verifier, authorization_servers=[issuer.issuer])

    @server.tool
    def whoami(ctx: Context) -> str:
        """The token's subject."""
        token = ctx.access_token
        assert token is not None
        return token.subject or ""

    return server


async def whoami(client: McpHttp) -> Reply:
    return await Modern(client).call_tool("whoami")


def withdrawn_while_serving(issuer: Issuer) -> tuple[SigningKey, SigningKey]:
    """Two published keys: the issuer's own (to be withdrawn) and a second one that stays."""
    revoked, kept = issuer.keys[0], SigningKey.ec("key-2")
    issuer.keys.append(kept)
    return revoked, kept


async def test_a_key_withdrawn_from_the_key_set_stops_verifying_even_cached_tokens() -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    with serve_issuer(url) as issuer:
        revoked, kept = withdrawn_while_serving(issuer)
        async with (
            serve(protected(issuer), port=port),
            bearer_client(url, issuer.token(key=revoked, sub="alice")) as alice,
            bearer_client(url, issuer.token(key=revoked, sub="alice", jti="later")) as alice_later,
        ):
            first = await whoami(alice)
            assert first.status == 200 and first.result["content"][0]["text"] == "alice"
            session = await Legacy(alice).open()  # a legacy session opened with the doomed key
            assert (await session.request("ping")).status == 200
            fetched = issuer.fetches

            issuer.published = [kept]  # the key is withdrawn: nothing new is published
            started, round_ = time.monotonic(), 0
            while True:
                # Other callers come with tokens the server has not verified yet: their key lookups
                # are what refresh a key set older than jwks_cache_seconds.
                round_ += 1
                async with bearer_client(url, issuer.token(key=kept, sub="bob", jti=f"bob-{round_}")) as bob:
                    assert (await whoami(bob)).status == 200, "the key still published keeps working"
                reply = await whoami(alice)  # verified before: served from the token cache until the set changes
                if reply.status != 200:
                    break
                assert time.monotonic() - started < DEADLINE, (
                    f"a token of a withdrawn key still verifies {DEADLINE:g} s later "
                    f"({issuer.fetches - fetched} key-set fetches since)"
                )
                await asyncio.sleep(0.05)
            assert reply.status == 401, (reply.status, reply.messages)
            assert issuer.fetches > fetched, "refused once the key set was fetched again"
            assert 'error="invalid_token"' in reply.headers["www-authenticate"]

            again = [await whoami(alice), await whoami(alice_later), await session.request("ping")]
            assert [r.status for r in again] == [401, 401, 401], "the withdrawn key stays refused, in both eras"


async def test_traffic_of_cached_tokens_alone_refreshes_a_stale_key_set() -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    with serve_issuer(url) as issuer:
        revoked, kept = withdrawn_while_serving(issuer)
        async with serve(protected(issuer), port=port), bearer_client(url, issuer.token(key=revoked)) as alice:
            assert (await whoami(alice)).status == 200
            fetched = issuer.fetches
            issuer.published = [kept]
            started = time.monotonic()
            while (reply := await whoami(alice)).status == 200:
                assert time.monotonic() - started < 6 * CACHE_SECONDS, (
                    f"{issuer.fetches - fetched} key-set fetches in {6 * CACHE_SECONDS:g} s of requests "
                    f"with a key set older than jwks_cache_seconds ({CACHE_SECONDS:g} s)"
                )
                await asyncio.sleep(0.05)
            assert reply.status == 401
