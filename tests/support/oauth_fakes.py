"""Small local servers that play a resource server and an authorization server, for the OAuth
client tests (tests/test_client_oauth.py): hostile ones, to check what the client refuses, and
one for what the test authorization server (oidc-provider) cannot do, client ID metadata documents.

    async with fake_site() as site:
        site.documents[...] = ...   # whatever each path should answer
        ... httpx.AsyncClient(auth=OAuth(allow_http_loopback=True, user_agent=site.user_agent)) ...

``FakeSite`` is one origin on 127.0.0.1 (uvicorn, in this process) serving, by default, a
well-behaved MCP endpoint at ``/mcp`` (401 without its token, a JSON-RPC result with it), its
protected resource metadata, an authorization server (metadata, ``/authorize``, ``/token``,
``/register``) that checks PKCE S256, ``state`` round trip, ``resource`` and the client id. A
test then breaks exactly one thing. Every request is recorded in ``site.log``.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from tests.http_support import serve

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


@dataclass
class Answer:
    status: int
    body: Any = None  # JSON, or bytes as they are
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    form: dict[str, str]
    query: dict[str, str]


@dataclass
class FakeSite:
    base: str = ""
    token: str = "fake-access-token"
    cimd: bool = False
    """Whether the metadata advertises client ID metadata documents."""
    always_unauthorized: bool = False
    """The MCP endpoint answers 401 whatever the token (a server that loops the client)."""
    forbidden_scope: str | None = None
    """With its token, the MCP endpoint answers 403 ``insufficient_scope`` for this scope, always."""
    documents: dict[str, Answer] = field(default_factory=dict)
    """Fixed answers by path, replacing the default behaviour of that path."""
    log: list[Seen] = field(default_factory=list)
    codes: dict[str, dict[str, str]] = field(default_factory=dict)
    registered: list[dict[str, Any]] = field(default_factory=list)

    @property
    def mcp(self) -> str:
        return f"{self.base}/mcp"

    def paths(self, method: str | None = None) -> list[str]:
        return [seen.path for seen in self.log if method is None or seen.method == method]

    def resource_metadata(self) -> dict[str, Any]:
        return {"resource": self.mcp, "authorization_servers": [self.base], "scopes_supported": ["read"]}

    def server_metadata(self) -> dict[str, Any]:
        return {
            "issuer": self.base,
            "authorization_endpoint": f"{self.base}/authorize",
            "token_endpoint": f"{self.base}/token",
            "registration_endpoint": f"{self.base}/register",
            "code_challenge_methods_supported": ["S256"],
            "client_id_metadata_document_supported": self.cimd,
            "authorization_response_iss_parameter_supported": True,
            "token_endpoint_auth_methods_supported": ["none"],
        }

    async def user_agent(self, authorization_url: str) -> str:
        """A ``user_agent`` that asks this site's ``/authorize`` and hands back where it redirects."""
        parts = urlsplit(authorization_url)
        if f"{parts.scheme}://{parts.netloc}" != self.base:
            raise AssertionError(f"the client sent the user to {authorization_url}")
        params = {k: v[0] for k, v in parse_qs(parts.query).items()}
        answer = self._authorize(params)
        return answer.headers["location"]

    # --- the default behaviour -----------------------------------------------------------------

    def _answer(self, seen: Seen) -> Answer:
        if seen.path in self.documents:
            return self.documents[seen.path]
        if seen.path == "/mcp":
            metadata = f"{self.base}/.well-known/oauth-protected-resource/mcp"
            if not self.always_unauthorized and seen.headers.get("authorization") == f"Bearer {self.token}":
                if self.forbidden_scope is not None:
                    challenge = f'Bearer error="insufficient_scope", scope="{self.forbidden_scope}"'
                    return Answer(403, {"error": "forbidden"}, {"www-authenticate": challenge})
                return Answer(200, {"jsonrpc": "2.0", "id": 1, "result": {"tools": []}})
            return Answer(
                401, {"error": "unauthorized"}, {"www-authenticate": f'Bearer resource_metadata="{metadata}"'}
            )
        if seen.path == "/.well-known/oauth-protected-resource/mcp":
            return Answer(200, self.resource_metadata())
        if seen.path == "/.well-known/oauth-authorization-server":
            return Answer(200, self.server_metadata())
        if seen.path == "/authorize":
            return self._authorize(seen.query)
        if seen.path == "/register" and seen.method == "POST":
            return self._register(seen)
        if seen.path == "/token" and seen.method == "POST":
            return self._token(seen.form)
        return Answer(404, {"error": "not found"})

    def _register(self, seen: Seen) -> Answer:
        body = json.loads(seen.form.get("__json__", "{}"))
        self.registered.append(body)
        return Answer(201, {**body, "client_id": f"dcr-{len(self.registered)}"})

    def _authorize(self, params: dict[str, str]) -> Answer:
        if params.get("code_challenge_method") != "S256" or params.get("resource") != self.mcp:
            raise AssertionError(f"a bad authorization request: {params}")
        code = secrets.token_urlsafe(8)
        self.codes[code] = params
        reply = {"code": code, "state": params["state"], "iss": self.base}
        return Answer(302, None, {"location": f"{params['redirect_uri']}?{urlencode(reply)}"})

    def _token(self, form: dict[str, str]) -> Answer:
        asked = self.codes.pop(form.get("code", ""), None)
        if asked is None:
            return Answer(400, {"error": "invalid_grant"})
        digest = hashlib.sha256(form.get("code_verifier", "").encode()).digest()
        challenge = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
        checks = (
            challenge == asked["code_challenge"],
            form.get("client_id") == asked["client_id"],
            form.get("redirect_uri") == asked["redirect_uri"],
            form.get("resource") == self.mcp,
        )
        if not all(checks):
            return Answer(400, {"error": "invalid_grant", "error_description": f"checks: {checks}"})
        return Answer(200, {"access_token": self.token, "token_type": "Bearer", "expires_in": 300})

    # --- ASGI ----------------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        if headers.get("content-type", "").startswith("application/json"):
            form = {"__json__": body.decode()}
        else:
            form = {k: v[0] for k, v in parse_qs(body.decode()).items()}
        query = {k: v[0] for k, v in parse_qs(scope["query_string"].decode()).items()}
        seen = Seen(scope["method"], scope["path"], headers, form, query)
        self.log.append(seen)
        answer = self._answer(seen)
        payload = answer.body if isinstance(answer.body, bytes) else json.dumps(answer.body).encode()
        head = [(b"content-type", b"application/json")] + [(k.encode(), v.encode()) for k, v in answer.headers.items()]
        await send({"type": "http.response.start", "status": answer.status, "headers": head})
        await send({"type": "http.response.body", "body": payload})


@contextlib.asynccontextmanager
async def fake_site(**options: Any) -> AsyncIterator[FakeSite]:
    """A ``FakeSite`` listening on 127.0.0.1 for the duration of the block."""
    site = FakeSite(**options)
    async with serve(site) as running:
        site.base = running.base
        yield site
