"""A stand-in of Microsoft Entra ID's documented v2.0 endpoints, for ``Entra`` preset tests. Not Microsoft.

What the Microsoft identity platform documents ("OpenID Connect on the Microsoft identity
platform", "ID token claims reference"), served on 127.0.0.1 with the authority
``standin.base`` in place of ``https://login.microsoftonline.com``:

- ``GET /{tenant}/v2.0/.well-known/openid-configuration`` for ``common``, ``organizations``,
  ``consumers``, a tenant id or a tenant's domain (``DOMAINS``). For ``common`` and
  ``organizations`` the ``issuer`` is the template ``{base}/{tenantid}/v2.0``; for a tenant it
  is that tenant's, by its id even when asked by domain; ``consumers`` is the tenant of personal
  accounts. Like Entra's, the document lists no ``code_challenge_methods_supported``.
- ``GET /{tenant}/oauth2/v2.0/authorize`` (the browser): the user (``standin.user``, of
  ``standin.user_tenant``) is signed in and consents; a 302 to ``redirect_uri?code=&state=``,
  no ``iss``. PKCE S256 required.
- ``POST /{tenant}/oauth2/v2.0/token``: the code (once, with its verifier) or a refresh token,
  client secret basic or post; errors with status 400. The ID token is RS256, ``iss`` the
  user's tenant's issuer, ``tid`` that tenant, ``aud`` the client, ``nonce`` as asked.
- ``GET /common/discovery/v2.0/keys``: the signing key.

``standin.sign(claims)`` signs any claims with the stand-in's key, for tests of hostile tokens.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

TENANT_A = "72f988bf-86f1-41af-91ab-2d7cd011db47"
TENANT_B = "0b5d2c88-8a1f-4f5e-9c0e-9b6a0e6a4c10"
CONSUMERS = "9188040d-6c67-4c5b-b112-36a304b66dad"
DOMAINS = {"contoso.onmicrosoft.com": TENANT_A}
KID = "standin-key"


@dataclass
class EntraStandIn:
    """One app registration (``client_id``, ``client_secret``, ``redirect_uri``) and its signed-in user."""

    base: str = ""
    client_id: str = "11111111-2222-3333-4444-555555555555"
    client_secret: str = "standin~secret"
    redirect_uri: str = ""
    user: str = "AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ"
    user_tenant: str = TENANT_A
    key: Any = field(default_factory=lambda: rsa.generate_private_key(public_exponent=65537, key_size=2048))
    _codes: dict[str, dict[str, Any]] = field(default_factory=dict)
    _refresh_tokens: dict[str, str] = field(default_factory=dict)

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/{tenant}/v2.0/.well-known/openid-configuration", self.discovery, methods=["GET"]),
                Route("/{tenant}/oauth2/v2.0/authorize", self.authorize, methods=["GET"]),
                Route("/{tenant}/oauth2/v2.0/token", self.token, methods=["POST"]),
                Route("/common/discovery/v2.0/keys", self.keys, methods=["GET"]),
            ]
        )

    def issuer_of(self, tenant_id: str) -> str:
        return f"{self.base}/{tenant_id}/v2.0"

    def sign(self, claims: dict[str, Any]) -> str:
        return jwt.encode(claims, self.key, algorithm="RS256", headers={"kid": KID})

    def id_token(self, tenant_id: str, nonce: str, **changes: Any) -> str:
        now = int(time.time())
        claims = {
            "iss": self.issuer_of(tenant_id),
            "tid": tenant_id,
            "aud": self.client_id,
            "sub": self.user,
            "oid": "00000000-0000-0000-66f3-3332eca7ea81",
            "preferred_username": "adele@contoso.example",
            "nonce": nonce,
            "iat": now,
            "nbf": now,
            "exp": now + 3600,
            "ver": "2.0",
            **changes,
        }
        return self.sign({name: value for name, value in claims.items() if value is not None})

    async def discovery(self, request: Request) -> Response:
        tenant = request.path_params["tenant"]
        if tenant in ("common", "organizations"):
            issuer = self.issuer_of("{tenantid}")
        elif tenant == "consumers":
            issuer = self.issuer_of(CONSUMERS)
        else:
            issuer = self.issuer_of(DOMAINS.get(tenant, tenant))
        return JSONResponse(
            {
                "issuer": issuer,
                "authorization_endpoint": f"{self.base}/{tenant}/oauth2/v2.0/authorize",
                "token_endpoint": f"{self.base}/{tenant}/oauth2/v2.0/token",
                "jwks_uri": f"{self.base}/common/discovery/v2.0/keys",
                "token_endpoint_auth_methods_supported": [
                    "client_secret_post",
                    "private_key_jwt",
                    "client_secret_basic",
                ],
                "response_types_supported": ["code", "id_token", "code id_token", "id_token token"],
                "scopes_supported": ["openid", "profile", "email", "offline_access"],
                "subject_types_supported": ["pairwise"],
                "id_token_signing_alg_values_supported": ["RS256"],
                "claims_supported": ["sub", "iss", "aud", "exp", "iat", "nonce", "tid", "preferred_username"],
            }
        )

    async def keys(self, request: Request) -> Response:
        jwk = jwt.algorithms.RSAAlgorithm.to_jwk(self.key.public_key(), as_dict=True)
        return JSONResponse({"keys": [{**jwk, "kid": KID, "use": "sig", "kty": "RSA"}]})

    async def authorize(self, request: Request) -> Response:
        params = request.query_params
        if params.get("client_id") != self.client_id or params.get("redirect_uri") != self.redirect_uri:
            return Response("AADSTS50011: the redirect URI does not match the app registration", status_code=400)
        back = {"state": params["state"]} if "state" in params else {}
        if params.get("code_challenge_method") != "S256" or not params.get("code_challenge"):
            query = urlencode({"error": "invalid_request", "error_description": "AADSTS50148: PKCE", **back})
            return RedirectResponse(f"{self.redirect_uri}?{query}", status_code=302)
        code = secrets.token_urlsafe(24)
        self._codes[code] = {"challenge": params["code_challenge"], "nonce": params.get("nonce")}
        return RedirectResponse(f"{self.redirect_uri}?{urlencode({'code': code, **back})}", status_code=302)

    async def token(self, request: Request) -> Response:
        form = await _form(request)
        client = (form.get("client_id"), form.get("client_secret"))
        basic = request.headers.get("authorization", "")
        if basic.startswith("Basic "):
            client_id, _, secret = base64.b64decode(basic[6:]).decode().partition(":")
            client = (client_id, secret)
        if client != (self.client_id, self.client_secret):
            return JSONResponse({"error": "invalid_client", "error_description": "AADSTS7000215"}, status_code=401)
        if form.get("grant_type") == "refresh_token":
            if self._refresh_tokens.pop(str(form.get("refresh_token", "")), None) is None:
                return JSONResponse({"error": "invalid_grant", "error_description": "AADSTS70008"}, status_code=400)
            return JSONResponse(self._tokens(nonce=None))
        held = self._codes.pop(str(form.get("code", "")), None)
        verifier = str(form.get("code_verifier", ""))
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        if held is None or held["challenge"] != challenge:
            return JSONResponse({"error": "invalid_grant", "error_description": "AADSTS70008"}, status_code=400)
        return JSONResponse(self._tokens(nonce=held["nonce"]))

    def _tokens(self, nonce: str | None) -> dict[str, Any]:
        refresh = secrets.token_urlsafe(32)
        self._refresh_tokens[refresh] = self.user
        answer = {
            "token_type": "Bearer",
            "scope": "openid profile email User.Read",
            "expires_in": 3600,
            "access_token": secrets.token_urlsafe(32),
            "refresh_token": refresh,
        }
        if nonce is not None:
            answer["id_token"] = self.id_token(self.user_tenant, nonce)
        return answer


async def _form(request: Request) -> dict[str, str]:
    """An ``application/x-www-form-urlencoded`` body (without python-multipart, which toolkit does not need)."""
    return dict(parse_qsl((await request.body()).decode("utf-8"), keep_blank_values=True))
