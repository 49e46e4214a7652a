"""The authorization server's HTTP endpoints (``toolkit._auth.server``): what ``OAuthProxy`` answers, over HTTP.

Beside the MCP endpoint and its protected resource metadata, an app whose ``auth=`` is an
``OAuthProxy`` serves:

- ``/.well-known/oauth-authorization-server`` (RFC 8414), the same document as OpenID Connect
  Discovery serves it (``/.well-known/openid-configuration``, the one MCP clients try next), and
  ``/jwks``: public, CORS ``*``.
- ``/authorize`` (GET) and its consent form (POST ``/authorize/consent``): pages for people,
  with no external asset, no script, a strict CSP, no framing (clickjacking), no caching, no
  referrer (the URLs carry one-time ids).
- ``/authorize/callback``: where the upstream provider sends the user back.
- ``/token``, ``/revoke``, ``/register``: JSON for clients, never cached, CORS ``*`` (browser
  clients; no cookie is read there).

Every request passes the DNS-rebinding check first; a query or form repeating a parameter is
refused (RFC 6749 §3.1).
"""

from __future__ import annotations

import html
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Final
from urllib.parse import parse_qsl

from starlette.routing import Route

from ..._auth.oauth import OPENID_WELL_KNOWN
from ..._auth.server.answers import Answer, ConsentRequest, ErrorPage, JsonAnswer, Redirect, oauth_error
from ..._auth.server.paths import (
    AUTHORIZE,
    CALLBACK,
    CONSENT,
    CSRF_COOKIE,
    JWKS,
    METADATA,
    REGISTER,
    REVOKE,
    TOKEN,
    cookie_name,
)
from ..._auth.server.proxy import OAuthProxy
from ..._errors import StoreUnavailable
from .asgi import BodyTooLarge, header_map, read_body, respond
from .security import HostGuard

if TYPE_CHECKING:
    from starlette.types import Receive, Scope, Send

    from ..._auth.resource import ResourceServer
    from ..._store.base import Store

MAX_FORM_BYTES: Final = 64 * 1024
CORS: Final = [("access-control-allow-origin", "*")]
PAGE_HEADERS: Final = [
    ("content-type", "text/html; charset=utf-8"),
    ("cache-control", "no-store"),
    (
        "content-security-policy",
        "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
    ),
    ("x-frame-options", "DENY"),
    ("referrer-policy", "no-referrer"),
    ("x-content-type-options", "nosniff"),
]
STYLE: Final = (
    "body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;color:#111}"
    "code{word-break:break-all}button{font:inherit;padding:.5rem 1.25rem;margin-right:.75rem}"
    ".warn{border-left:4px solid #b45309;padding-left:.75rem}"
)


class Repeated(Exception):
    """A parameter given twice."""


def single(pairs: list[tuple[str, str]]) -> dict[str, str]:
    params: dict[str, str] = {}
    for name, value in pairs:
        if name in params:
            raise Repeated(name)
        params[name] = value
    return params


def cookies_of(headers: Mapping[str, str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for part in headers.get("cookie", "").split(";"):
        name, equals, value = part.strip().partition("=")
        if equals and name not in found:
            found[name] = value
    return found


Handler = Callable[["Scope", dict[str, str], bytes | None], Awaitable[Answer]]


class AuthorizationEndpoint:
    """One endpoint: the guard, the method, the parameters, then the proxy's answer as HTTP."""

    def __init__(self, guard: HostGuard, methods: tuple[str, ...], handler: Handler, *, cors: bool = False) -> None:
        self.guard = guard
        self.methods = methods
        self.handler = handler
        self.cors = cors

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        headers = header_map(scope)
        rejected = self.guard.check(headers)
        if rejected is not None:
            refusal = {"error": "invalid_request", "error_description": rejected[1]}
            await respond(send, rejected[0], json.dumps(refusal).encode())
            return
        method = scope["method"]
        if method == "OPTIONS" and self.cors:
            allow = [("access-control-allow-methods", ", ".join(self.methods)), ("access-control-allow-headers", "*")]
            await respond(send, 204, headers=[*CORS, *allow])
            return
        if method not in self.methods:
            await respond(send, 405, headers=[("allow", ", ".join(self.methods))])
            return
        body: bytes | None = None
        if method == "POST":
            try:
                body = await read_body(receive, MAX_FORM_BYTES)
            except BodyTooLarge:
                await send_answer(send, oauth_error(413, "invalid_request", "the request body is too large"), self.cors)
                return
            if body is None:
                return
        try:
            answer = await self.handler(scope, headers, body)
        except StoreUnavailable as exc:  # the grants cannot be read or kept: try again, not a server bug
            answer = oauth_error(503, "temporarily_unavailable", str(exc), **{"retry-after": "5"})
        if method == "HEAD" and isinstance(answer, JsonAnswer):
            answer = JsonAnswer(answer.status, None, answer.headers)
        await send_answer(send, answer, self.cors, secure=scope.get("scheme") == "https")


async def send_answer(send: Send, answer: Answer, cors: bool, *, secure: bool = False) -> None:
    if isinstance(answer, JsonAnswer):
        headers = [*answer.headers.items(), *(CORS if cors else [])]
        body = json.dumps(answer.body).encode() if answer.body is not None else b""
        await respond(send, answer.status, body, headers)
    elif isinstance(answer, Redirect):
        cookies = [("set-cookie", cookie(*each, secure=secure, same_site="Lax")) for each in answer.cookies]
        await respond(send, 303, headers=[("location", answer.location), ("cache-control", "no-store"), *cookies])
    elif isinstance(answer, ErrorPage):
        await send_page(send, answer.status, answer.title, f"<p>{html.escape(answer.message)}</p>")
    else:
        name = cookie_name(CSRF_COOKIE, answer.pending)
        csrf = cookie(name, answer.csrf, CONSENT, 600, secure=secure, same_site="Strict")
        await send_page(send, 200, "Allow access?", consent_form(answer), [("set-cookie", csrf)])


def cookie(name: str, value: str, path: str, max_age: int, *, secure: bool, same_site: str) -> str:
    flags = f"{name}={value}; Path={path}; Max-Age={max_age}; HttpOnly; SameSite={same_site}"
    return flags + "; Secure" if secure else flags


async def send_page(send: Send, status: int, title: str, content: str, extra: Sequence[tuple[str, str]] = ()) -> None:
    page = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>{html.escape(title)}</title><style>{STYLE}</style></head>"
        f"<body><main><h1>{html.escape(title)}</h1>{content}</main></body></html>"
    )
    body = page.encode()
    raw = [(name.encode("latin-1"), value.encode("latin-1")) for name, value in [*PAGE_HEADERS, *extra]]
    raw.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


def consent_form(request: ConsentRequest) -> str:
    e = html.escape
    name = request.client_name or request.client_id
    scopes = "".join(f"<li><code>{e(scope)}</code></li>" for scope in request.scopes) or "<li>no particular scope</li>"
    origin = "its metadata document at" if request.metadata_document else "the client id"
    return (
        f"<p><strong>{e(name)}</strong> wants to use <strong>{e(request.server_name)}</strong> "
        f"on your behalf. You will sign in with <code>{e(request.upstream)}</code>.</p>"
        f'<p class="warn">Only allow this if you started it. After you sign in, you will be sent to '
        f"<code>{e(request.redirect_uri)}</code>.</p>"
        f"<p>Application: {origin} <code>{e(request.client_id)}</code></p>"
        f"<p>It asks for:</p><ul>{scopes}</ul>"
        f'<form method="post" action="{e(CONSENT)}">'
        f'<input type="hidden" name="pending" value="{e(request.pending)}">'
        f'<input type="hidden" name="csrf" value="{e(request.csrf)}">'
        '<button type="submit" name="decision" value="approve">Allow</button>'
        '<button type="submit" name="decision" value="deny">Deny</button>'
        "</form>"
    )


def authorization_routes(proxy: object, guard: HostGuard, store: Store, resource: ResourceServer) -> list[Route]:
    """The routes of ``proxy``'s endpoints, for ``create_app``; its grants are kept in ``store``, and its
    consent page names the server as its protected resource metadata does."""
    if not isinstance(proxy, OAuthProxy):
        raise TypeError(f"{proxy!r} is not an OAuthProxy")
    proxy.bind(store, resource.resource_name)
    handlers = Handlers(proxy)
    read_only = ("GET", "HEAD", "OPTIONS")
    back_channel = ("POST", "OPTIONS")
    table: list[tuple[str, tuple[str, ...], Handler, bool]] = [
        (METADATA, read_only, handlers.metadata, True),
        (OPENID_WELL_KNOWN, read_only, handlers.openid_configuration, True),
        (JWKS, read_only, handlers.jwks, True),
        (AUTHORIZE, ("GET",), handlers.authorize, False),
        (CONSENT, ("POST",), handlers.consent, False),
        (CALLBACK, ("GET",), handlers.callback, False),
        (TOKEN, back_channel, handlers.form(proxy.token_issuer.token), True),
        (REVOKE, back_channel, handlers.form(proxy.token_issuer.revoke), True),
    ]
    if proxy.dynamic_registration:
        table.append((REGISTER, back_channel, handlers.register, True))
    return [
        Route(path, endpoint=AuthorizationEndpoint(guard, methods, handler, cors=cors), methods=None)
        for path, methods, handler, cors in table
    ]


def query_of(scope: Scope) -> dict[str, str]:
    """The query's parameters, each once (``Repeated`` otherwise)."""
    return single(parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True))


def form_of(body: bytes | None) -> dict[str, str]:
    """An ``application/x-www-form-urlencoded`` body's fields, each once (``Repeated`` otherwise)."""
    return single(parse_qsl((body or b"").decode("utf-8", "replace"), keep_blank_values=True))


class Handlers:
    """What each endpoint asks of the proxy, from the request's parameters."""

    def __init__(self, proxy: OAuthProxy) -> None:
        self.proxy = proxy

    async def metadata(self, scope: Scope, headers: dict[str, str], body: bytes | None) -> Answer:
        return JsonAnswer(200, self.proxy.metadata(), {"cache-control": "public, max-age=3600"})

    async def openid_configuration(self, scope: Scope, headers: dict[str, str], body: bytes | None) -> Answer:
        return JsonAnswer(200, self.proxy.openid_configuration(), {"cache-control": "public, max-age=3600"})

    async def jwks(self, scope: Scope, headers: dict[str, str], body: bytes | None) -> Answer:
        return JsonAnswer(200, self.proxy.keys.jwks(), {"cache-control": "public, max-age=300"})

    async def authorize(self, scope: Scope, headers: dict[str, str], body: bytes | None) -> Answer:
        try:
            params = query_of(scope)
        except Repeated as exc:
            return ErrorPage(400, "Bad request", f"The parameter {exc} is repeated. Start again from the application.")
        return await self.proxy.flow.authorize(params)

    async def consent(self, scope: Scope, headers: dict[str, str], body: bytes | None) -> Answer:
        try:
            form = form_of(body)
        except Repeated as exc:
            return ErrorPage(400, "Bad request", f"The field {exc} is repeated.")
        return await self.proxy.flow.consent(form, cookies_of(headers))

    async def callback(self, scope: Scope, headers: dict[str, str], body: bytes | None) -> Answer:
        try:
            params = query_of(scope)
        except Repeated as exc:
            return ErrorPage(400, "Bad request", f"The parameter {exc} is repeated.")
        return await self.proxy.flow.callback(params, cookies_of(headers))

    async def register(self, scope: Scope, headers: dict[str, str], body: bytes | None) -> Answer:
        return await self.proxy.token_issuer.register(body or b"")

    @staticmethod
    def form(call: Callable[[Mapping[str, str], str | None], Awaitable[JsonAnswer]]) -> Handler:
        """A back-channel endpoint: a form in (RFC 6749 §3.2), ``call``'s JSON out."""

        async def handle(scope: Scope, headers: dict[str, str], body: bytes | None) -> Answer:
            if not headers.get("content-type", "").lower().startswith("application/x-www-form-urlencoded"):
                return oauth_error(400, "invalid_request", "send the parameters as application/x-www-form-urlencoded")
            try:
                form = form_of(body)
            except Repeated as exc:
                return oauth_error(400, "invalid_request", f"the parameter {exc} is repeated")
            return await call(form, headers.get("authorization"))

        return handle
