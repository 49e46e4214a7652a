"""A stand-in of GitHub's three documented OAuth endpoints, for ``GitHub`` preset tests. Not GitHub.

It answers as GitHub's documentation ("Authorizing OAuth apps", "Refreshing user access tokens",
"REST API: Get the authenticated user") says GitHub does, laid out like GitHub Enterprise Server
(the API under ``/api/v3``), so ``GitHub(base_url=standin.base, allow_http_loopback=True)`` finds
everything with its GHES defaults:

- ``GET /login/oauth/authorize`` (the browser): ``client_id``, ``redirect_uri`` (the registered
  one, exactly), ``scope``, ``state``, PKCE ``code_challenge`` with ``code_challenge_method=S256``
  (optional, as at GitHub; ``plain`` refused). The user (``login``) is already signed in and has
  authorized the app: a 302 to ``redirect_uri?code=...&state=...``, never an ``iss``.
- ``POST /login/oauth/access_token``: the code (once, ten minutes, with the ``code_verifier`` of
  its challenge and its ``redirect_uri``) or ``grant_type=refresh_token``, with ``client_id`` and
  ``client_secret`` in the form. JSON only with ``Accept: application/json``, else
  form-encoded; every error with status 200 and an ``error`` member (``bad_verification_code``,
  ``incorrect_client_credentials``, ``redirect_uri_mismatch``, ``bad_refresh_token``). Granted
  scopes are comma-separated. An OAuth app's tokens (``expiring=False``) never expire and come
  without a refresh token; a GitHub App's (``expiring=True``) expire in eight hours and come
  with a refresh token, replaced at every refresh.
- ``GET /api/v3/user`` with ``Authorization: Bearer <token>`` (or ``token <token>``): the
  account (numeric ``id``, ``login``, ...); 401 ``Bad credentials`` otherwise.

``standin.requests`` records what each endpoint was sent (method, path, the ``Accept`` header),
for tests to check what GitHub would have seen. Serve it with ``tests.http_support.serve``.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

CODE_SECONDS = 600.0
APP_TOKEN_SECONDS = 8 * 3600
REFRESH_TOKEN_SECONDS = 184 * 24 * 3600


@dataclass
class Account:
    id: int = 583231
    login: str = "octocat"
    name: str = "The Octocat"
    email: str | None = "octocat@example.com"

    def as_user(self) -> dict[str, Any]:
        return {"login": self.login, "id": self.id, "type": "User", "name": self.name, "email": self.email}


@dataclass
class _Code:
    client_id: str
    redirect_uri: str
    scopes: tuple[str, ...]
    challenge: str | None
    expires_at: float


@dataclass
class GitHubStandIn:
    """One registered app (``client_id``, ``client_secret``, ``redirect_uri``) and its signed-in user."""

    client_id: str = "Iv1.standin"
    client_secret: str = "standin-secret"
    redirect_uri: str = ""
    expiring: bool = False
    account: Account = field(default_factory=Account)
    requests: list[dict[str, str]] = field(default_factory=list)
    _codes: dict[str, _Code] = field(default_factory=dict)
    _tokens: dict[str, tuple[Account, float | None]] = field(default_factory=dict)
    _refresh_tokens: dict[str, tuple[Account, tuple[str, ...]]] = field(default_factory=dict)

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/login/oauth/authorize", self.authorize, methods=["GET"]),
                Route("/login/oauth/access_token", self.access_token, methods=["POST"]),
                Route("/api/v3/user", self.user, methods=["GET"]),
            ]
        )

    def _record(self, request: Request) -> None:
        self.requests.append(
            {"method": request.method, "path": request.url.path, "accept": request.headers.get("accept", "")}
        )

    # --- the browser -----------------------------------------------------------------------------

    async def authorize(self, request: Request) -> Response:
        self._record(request)
        params = request.query_params
        if params.get("client_id") != self.client_id:
            return Response("404: the application is not found", status_code=404)
        redirect_uri = params.get("redirect_uri") or self.redirect_uri
        if redirect_uri != self.redirect_uri:
            return Response("The redirect_uri is not associated with this application.", status_code=400)
        back = {"state": params["state"]} if "state" in params else {}
        challenge, method = params.get("code_challenge"), params.get("code_challenge_method")
        if challenge is not None and method != "S256":
            query = urlencode({"error": "invalid_request", "error_description": "Only S256 is supported", **back})
            return RedirectResponse(f"{redirect_uri}?{query}", status_code=302)
        code = secrets.token_hex(10)
        scopes = tuple(scope for scope in params.get("scope", "").replace(",", " ").split() if scope)
        self._codes[code] = _Code(self.client_id, redirect_uri, scopes, challenge, time.time() + CODE_SECONDS)
        return RedirectResponse(f"{redirect_uri}?{urlencode({'code': code, **back})}", status_code=302)

    # --- the token endpoint ----------------------------------------------------------------------

    async def access_token(self, request: Request) -> Response:
        self._record(request)
        form = await _form(request)
        wants_json = "application/json" in request.headers.get("accept", "")

        def answer(document: dict[str, Any]) -> Response:
            if wants_json:
                return JSONResponse(document)
            return Response(urlencode(document), media_type="application/x-www-form-urlencoded")

        def error(name: str, description: str) -> Response:
            return answer({"error": name, "error_description": description, "error_uri": "https://docs.github.com"})

        if form.get("client_id") != self.client_id or form.get("client_secret") != self.client_secret:
            return error("incorrect_client_credentials", "The client_id and/or client_secret passed are incorrect.")
        if form.get("grant_type") == "refresh_token":
            held = self._refresh_tokens.pop(str(form.get("refresh_token", "")), None)
            if held is None:
                return error("bad_refresh_token", "The refresh token passed is incorrect or expired.")
            return answer(self._issue(*held))
        code = self._codes.pop(str(form.get("code", "")), None)
        if code is None or code.expires_at < time.time():
            return error("bad_verification_code", "The code passed is incorrect or expired.")
        if form.get("redirect_uri") not in (None, code.redirect_uri):
            return error("redirect_uri_mismatch", "The redirect_uri MUST match the registered callback URL.")
        if code.challenge is not None and _s256(str(form.get("code_verifier", ""))) != code.challenge:
            return error("bad_verification_code", "The code_verifier does not match the code_challenge.")
        return answer(self._issue(self.account, code.scopes))

    def _issue(self, account: Account, scopes: tuple[str, ...]) -> dict[str, Any]:
        if not self.expiring:
            token = "gho_" + secrets.token_hex(18)
            self._tokens[token] = (account, None)
            return {"access_token": token, "token_type": "bearer", "scope": ",".join(scopes)}
        token, refresh = "ghu_" + secrets.token_hex(18), "ghr_" + secrets.token_hex(30)
        self._tokens[token] = (account, time.time() + APP_TOKEN_SECONDS)
        self._refresh_tokens[refresh] = (account, scopes)
        return {
            "access_token": token,
            "expires_in": APP_TOKEN_SECONDS,
            "refresh_token": refresh,
            "refresh_token_expires_in": REFRESH_TOKEN_SECONDS,
            "scope": "",
            "token_type": "bearer",
        }

    # --- the REST API ----------------------------------------------------------------------------

    async def user(self, request: Request) -> Response:
        self._record(request)
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        held = self._tokens.get(token) if scheme.lower() in ("bearer", "token") else None
        if held is None or (held[1] is not None and held[1] < time.time()):
            return JSONResponse(
                {"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest"}, status_code=401
            )
        return JSONResponse(held[0].as_user())


def _s256(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


async def _form(request: Request) -> dict[str, str]:
    """An ``application/x-www-form-urlencoded`` body (without python-multipart, which toolkit does not need)."""
    return dict(parse_qsl((await request.body()).decode("utf-8"), keep_blank_values=True))
