"""An ``mcp`` 2.3.0 server protected by OAuth, as a user of the official Python SDK writes one.

Run from ``.interop/py-mcp230`` (``scripts/interop --install-only``):

    python interop/servers/mcp230_protected.py --port PORT --issuer ISSUER --jwks-uri JWKS_URI

Serves Streamable HTTP on ``http://127.0.0.1:PORT/mcp``, a resource server of the authorization
server ``ISSUER`` (the test rig's oidc-provider, tests/support/authserver.py) the SDK's way:
``MCPServer(auth=AuthSettings(...), token_verifier=...)``. The SDK answers 401 with
``WWW-Authenticate: Bearer ... resource_metadata=...``, serves the protected resource metadata
(RFC 9728) at ``/.well-known/oauth-protected-resource/mcp`` with ``scopes_supported`` =
``required_scopes`` (``forecast:read``, needed for every request), and checks that each token
was issued for this server (``validate_token_resource``). The verifier is PyJWT against the
authorization server's JWKS: RS256 JWT access tokens (RFC 9068) with ``iss`` = ISSUER and
``aud`` = this server's URL.

Tools, like tests/support/secure_app.py: ``forecast`` (a list; wrapped as ``{"result": ...}``
for a legacy client), ``whoami`` (who the token says is calling), and ``admin_reset``, which
needs the ``admin`` scope. The SDK has one scope list for the whole endpoint, so that tool's
scope is checked by a small ASGI guard in front of the SDK's transport (``AdminScopeGuard``): a
``tools/call`` of ``admin_reset`` with a token without ``admin`` is answered ``403`` with
``WWW-Authenticate: Bearer error="insufficient_scope", scope="forecast:read admin", ...``, the
step-up challenge of the MCP authorization spec.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import anyio
import jwt
import uvicorn
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken, TokenVerifier
from mcp.server.auth.routes import build_resource_metadata_url
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from pydantic import AnyHttpUrl, BaseModel
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

PATH = "/mcp"
REQUIRED_SCOPES = ["forecast:read"]
ADMIN_TOOL, ADMIN_SCOPE = "admin_reset", "admin"


def resource_url(port: int) -> str:
    """This server's URL: the resource its tokens are issued for."""
    return f"http://127.0.0.1:{port}{PATH}"


class JWTTokenVerifier(TokenVerifier):
    """RS256 JWT access tokens of ``issuer`` for ``audience``, keys from ``jwks_uri`` (PyJWT)."""

    def __init__(self, jwks_uri: str, issuer: str, audience: str) -> None:
        self.keys = jwt.PyJWKClient(jwks_uri, cache_keys=True)
        self.issuer = issuer
        self.audience = audience

    async def verify_token(self, token: str) -> AccessToken | None:
        try:
            # PyJWKClient fetches with urllib, which blocks: not on the event loop.
            key = await anyio.to_thread.run_sync(self.keys.get_signing_key_from_jwt, token)
            claims: dict[str, Any] = jwt.decode(
                token,
                key.key,
                algorithms=["RS256"],
                issuer=self.issuer,
                audience=self.audience,
                options={"require": ["exp", "iss", "aud", "sub"]},
            )
        except jwt.PyJWTError:
            return None
        audience = claims["aud"]
        return AccessToken(
            token=token,
            client_id=str(claims.get("client_id", claims["sub"])),
            scopes=str(claims.get("scope", "")).split(),
            expires_at=int(claims["exp"]),
            resource=audience if isinstance(audience, str) else self.audience,
            subject=str(claims["sub"]),
            claims={"iss": claims["iss"]},
        )


class HourlyForecast(BaseModel):
    hour: str
    temp: float


def make_server(port: int, issuer: str, jwks_uri: str) -> MCPServer:
    resource = resource_url(port)
    server = MCPServer(
        "mcp230-protected",
        version="2.3.0",
        token_verifier=JWTTokenVerifier(jwks_uri, issuer, resource),
        auth=AuthSettings(
            # Strings, not AnyHttpUrl(...): pydantic would add a "/" to the path-less issuer, and
            # the metadata would name an authorization server that is not the issuer (RFC 8414).
            issuer_url=issuer,  # type: ignore[arg-type]
            resource_server_url=resource,  # type: ignore[arg-type]
            required_scopes=REQUIRED_SCOPES,
            validate_token_resource=True,
        ),
    )

    @server.tool()
    def forecast(city: str) -> list[HourlyForecast]:
        """Hourly forecast for a city (needs forecast:read, as every request here)."""
        return [HourlyForecast(hour="09:00", temp=20.5), HourlyForecast(hour="10:00", temp=21.0 + len(city))]

    @server.tool()
    def whoami() -> dict[str, Any]:
        """Who the access token says is calling."""
        token = get_access_token()
        if token is None:
            return {"subject": None, "client_id": None, "scopes": []}
        return {"subject": token.subject, "client_id": token.client_id, "scopes": sorted(token.scopes)}

    @server.tool(name=ADMIN_TOOL)
    def admin_reset() -> str:
        """Reset every forecast (needs admin: a token without it is refused with 403, step-up)."""
        return "reset done"

    return server


class AdminScopeGuard:
    """In front of the SDK's transport, behind its authentication: ``admin_reset`` needs ``admin``.

    The request's body is read whole (an MCP POST is one JSON-RPC message) and handed on
    unchanged; anything but a ``tools/call`` of ``admin_reset`` passes untouched.
    """

    def __init__(self, app: ASGIApp, resource_metadata_url: str) -> None:
        self.app = app
        self.resource_metadata_url = resource_metadata_url

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        messages: list[Message] = []
        body = b""
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                break
            body += message.get("body", b"")
            if not message.get("more_body", False):
                break
        user = scope.get("user")
        held = user.scopes if isinstance(user, AuthenticatedUser) else []
        if _calls(body, ADMIN_TOOL) and ADMIN_SCOPE not in held:
            await self._insufficient_scope(send)
            return

        async def replay() -> Message:
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replay, send)

    async def _insufficient_scope(self, send: Send) -> None:
        needed = " ".join([*REQUIRED_SCOPES, ADMIN_SCOPE])
        challenge = (
            f'Bearer error="insufficient_scope", scope="{needed}", '
            f'error_description="{ADMIN_TOOL} needs the {ADMIN_SCOPE} scope", '
            f'resource_metadata="{self.resource_metadata_url}"'
        )
        body = json.dumps({"error": "insufficient_scope", "error_description": f"Required scope: {ADMIN_SCOPE}"})
        await send(
            {
                "type": "http.response.start",
                "status": 403,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"www-authenticate", challenge.encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body.encode()})


def _calls(body: bytes, tool: str) -> bool:
    """Whether ``body`` is a JSON-RPC ``tools/call`` of ``tool`` (alone or in a batch)."""
    try:
        message = json.loads(body)
    except ValueError:
        return False
    messages = message if isinstance(message, list) else [message]
    return any(
        isinstance(m, dict)
        and m.get("method") == "tools/call"
        and isinstance(m.get("params"), dict)
        and m["params"].get("name") == tool
        for m in messages
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--issuer", required=True, help="the authorization server's issuer")
    parser.add_argument("--jwks-uri", required=True, help="where its signing keys are published")
    args = parser.parse_args()

    server = make_server(args.port, args.issuer, args.jwks_uri)
    app = server.streamable_http_app(streamable_http_path=PATH, host="127.0.0.1")
    # The SDK's route for PATH is its RequireAuthMiddleware around the transport; the guard goes
    # inside it, so only authenticated requests with the endpoint's scopes reach it.
    (route,) = [r for r in app.routes if isinstance(r, Route) and r.path == PATH]
    require_auth = route.app
    metadata_url = build_resource_metadata_url(AnyHttpUrl(resource_url(args.port)))
    require_auth.app = AdminScopeGuard(require_auth.app, str(metadata_url))
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
