"""An OAuth client and a browser, by hand, against toolkit's ``OAuthProxy`` (the hostile-case tests).

``ProxyFlow`` does what an MCP client's OAuth flow does, step by step, so that a test can change
one step: register (RFC 7591), open ``/authorize`` with PKCE, answer the consent page, let the
real upstream (oidc-provider) log the user in, take the code off the redirect, and call
``/token`` and ``/revoke``. Nothing is faked: every request goes to the running servers.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode, urljoin

import httpx
from tests.support.consent_login import consent_action, consent_fields
from tests.support.oauth_login import MAX_HOPS, TIMEOUT, _lands_on, query

REDIRECT_URI = "http://127.0.0.1:9/callback"
"""Where codes go: never requested (the browser stops at the redirect and reads the code off it)."""


def s256(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


@dataclass
class Registered:
    client_id: str
    client_secret: str | None
    redirect_uri: str


class ProxyFlow:
    """One MCP client's dealings with the proxy at ``base``, and its user's browser (one cookie jar)."""

    def __init__(self, base: str, http: httpx.AsyncClient) -> None:
        self.base = base
        self.http = http
        self.browser = httpx.AsyncClient(timeout=TIMEOUT)

    async def aclose(self) -> None:
        await self.browser.aclose()

    async def register(self, redirect_uri: str = REDIRECT_URI, method: str = "none", **extra: Any) -> Registered:
        document = {"redirect_uris": [redirect_uri], "token_endpoint_auth_method": method, **extra}
        reply = await self.http.post(f"{self.base}/register", json=document)
        assert reply.status_code == 201, reply.text
        answer = reply.json()
        return Registered(answer["client_id"], answer.get("client_secret"), redirect_uri)

    def authorize_url(self, client_id: str, redirect_uri: str, verifier: str | None, **params: str) -> str:
        query_params = {
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": redirect_uri,
            "state": "client-state",
            "resource": f"{self.base}/mcp",
        }
        if verifier is not None:
            query_params |= {"code_challenge": s256(verifier), "code_challenge_method": "S256"}
        query_params |= params
        return f"{self.base}/authorize?{urlencode({k: v for k, v in query_params.items() if v is not None})}"

    async def consent_page(self, client: Registered, verifier: str) -> httpx.Response:
        reply = await self.browser.get(self.authorize_url(client.client_id, client.redirect_uri, verifier))
        assert reply.status_code == 200, reply.text
        return reply

    async def answer_consent(self, page: httpx.Response, decision: str = "approve") -> httpx.Response:
        form = {**consent_fields(page.text), "decision": decision}
        return await self.browser.post(consent_action(page.text, str(page.url)), data=form)

    async def follow(self, reply: httpx.Response, redirect_uri: str) -> dict[str, str]:
        """Follow redirects (the upstream's login) until the client's redirect URI: its query parameters."""
        for _ in range(MAX_HOPS):
            assert reply.is_redirect, f"{reply.url} answered {reply.status_code}: {reply.text[:2000]}"
            url = urljoin(str(reply.url), reply.headers["location"])
            if _lands_on(url, redirect_uri):
                return query(url)
            reply = await self.browser.get(url)
        raise AssertionError("too many redirects")

    async def upstream_callback(self, client: Registered, verifier: str) -> str:
        """Up to the upstream's redirect back to toolkit: the callback URL (not requested)."""
        reply = await self.answer_consent(await self.consent_page(client, verifier))
        for _ in range(MAX_HOPS):
            assert reply.is_redirect, f"{reply.url} answered {reply.status_code}: {reply.text[:2000]}"
            url = urljoin(str(reply.url), reply.headers["location"])
            if url.startswith(f"{self.base}/authorize/callback"):
                return url
            reply = await self.browser.get(url)
        raise AssertionError("too many redirects")

    async def code(self, client: Registered, verifier: str) -> str:
        params = await self.follow(
            await self.answer_consent(await self.consent_page(client, verifier)), client.redirect_uri
        )
        assert "code" in params, params
        assert params["state"] == "client-state" and params["iss"] == self.base
        return params["code"]

    async def token(self, client: Registered, **form: str) -> httpx.Response:
        form = {"client_id": client.client_id, **form} if client.client_secret is None else form
        auth = (client.client_id, client.client_secret) if client.client_secret is not None else None
        return await self.http.post(f"{self.base}/token", data=form, auth=auth)

    async def exchange(self, client: Registered, code: str, verifier: str) -> httpx.Response:
        return await self.token(
            client, grant_type="authorization_code", code=code, code_verifier=verifier, redirect_uri=client.redirect_uri
        )

    async def refresh(self, client: Registered, refresh_token: str) -> httpx.Response:
        return await self.token(client, grant_type="refresh_token", refresh_token=refresh_token)

    async def tokens(self, client: Registered) -> dict[str, Any]:
        """A whole login: a code, exchanged."""
        verifier = new_verifier()
        reply = await self.exchange(client, await self.code(client, verifier), verifier)
        assert reply.status_code == 200, reply.text
        tokens: dict[str, Any] = reply.json()
        return tokens


def new_verifier() -> str:
    return secrets.token_urlsafe(32)
