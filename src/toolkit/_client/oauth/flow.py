"""OAuth 2.1 for MCP clients, as an ``httpx.Auth``: ``httpx.AsyncClient(auth=OAuth())``.

A request goes out with the stored token, if any. On ``401`` the flow finds the protected
resource metadata (RFC 9728; the challenge's ``resource_metadata``, else the well-known URLs),
the authorization server's metadata (RFC 8414, then OpenID Connect Discovery), checks both,
gets a client id (pre-registered, else a client ID metadata document, else dynamic
registration), runs the authorization code grant with PKCE S256, ``state``, ``iss`` and
``resource`` (RFC 8707), or the client credentials grant, and sends the request again, once.
A refresh token is tried first when it can help. ``403 insufficient_scope`` re-authorizes with
the union of the scopes held and those asked for, a bounded number of times.

Everything the flow fetches goes through a client of its own (no redirects followed, answers
bounded in size and time), never through the caller's: a metadata document cannot send the flow
elsewhere, and an MCP response (an SSE stream) is never read by it. Tokens, codes and secrets
are never logged nor put in a message.

The checks themselves (URLs, documents, PKCE, the authorization response, tokens) live in
``_auth/oauth/``, where the authorization-server side uses them too.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
from collections.abc import AsyncGenerator, Generator, Iterable
from typing import Any, Final, Literal
from urllib.parse import quote, urlsplit

import httpx

from ..._auth.oauth import (
    AccessDenied,
    AuthorizationFailed,
    AuthorizationServerMetadata,
    Challenge,
    ClientRegistration,
    InsecureURL,
    MetadataRefused,
    OAuthError,
    ProtectedResourceMetadata,
    RegistrationFailed,
    Token,
    TokenRequestFailed,
    authorization_code,
    canonical_resource,
    check_client_metadata_url,
    check_url,
    is_loopback,
    new_code_verifier,
    new_state,
    parse_challenge,
    s256_challenge,
    scope_union,
    token_error,
    with_query,
)
from .browser import LoopbackBrowser, UserAgent
from .discovery import discover, flow_client, send_json
from .storage import MemoryTokenStorage, TokenStorage

logger = logging.getLogger("toolkit.client.oauth")

Grant = Literal["authorization_code", "client_credentials"]
CALLBACK_PATH: Final = "/callback"


class OAuth(httpx.Auth):
    """OAuth 2.1 for one MCP server, for ``httpx.AsyncClient(auth=...)``.

    - ``server_url``: the MCP endpoint; by default the URL of the first request. Requests to
      another origin pass through untouched (the token is never sent elsewhere).
    - ``client_id`` / ``client_secret``: a client registered beforehand (used first, MCP client
      registration priority). ``client_metadata_url``: an https URL of this client's metadata
      document, used as the client id where the server supports it (SEP-991). Otherwise the
      client registers dynamically (RFC 7591) as ``client_name``.
    - ``redirect_uri``: where the authorization server sends the browser back; by default
      ``http://127.0.0.1:<port>/callback``, ``port`` or a free one.
    - ``scopes``: asked for in addition to those the server's challenge or metadata call for.
    - ``storage``: a ``TokenStorage`` (``MemoryTokenStorage`` by default; ``FileTokenStorage``
      keeps a login across runs). ``user_agent``: the sign-in step (``LoopbackBrowser`` by default).
    - ``grant``: ``"client_credentials"`` for a machine client (``client_id`` and ``client_secret``).
    - ``allow_http_loopback``: accept http URLs on 127.0.0.1/localhost/::1 (development, tests);
      everything else must be https. ``timeout``: per request of the flow; ``max_step_ups``:
      re-authorizations for more scope per request.
    """

    requires_request_body = True  # the request is sent again once authorized

    def __init__(
        self,
        server_url: str | None = None,
        *,
        client_id: str | None = None,
        client_secret: str | None = None,
        client_metadata_url: str | None = None,
        client_name: str = "toolkit",
        redirect_uri: str | None = None,
        port: int = 0,
        scopes: Iterable[str] = (),
        storage: TokenStorage | None = None,
        user_agent: UserAgent | None = None,
        grant: Grant = "authorization_code",
        allow_http_loopback: bool = False,
        timeout: float = 30.0,
        authorization_timeout: float = 600.0,
        max_step_ups: int = 2,
        verify: Any = True,
    ) -> None:
        if grant not in ("authorization_code", "client_credentials"):
            raise ValueError(f"grant must be 'authorization_code' or 'client_credentials', not {grant!r}")
        if grant == "client_credentials" and not (client_id and client_secret):
            raise ValueError("grant='client_credentials' needs the client_id and client_secret registered for it")
        if client_secret and not client_id:
            raise ValueError("client_secret needs the client_id it belongs to")
        if server_url is not None:
            check_url(server_url, "server_url", allow_http_loopback=allow_http_loopback)
        if client_metadata_url is not None:
            check_client_metadata_url(client_metadata_url)
        if redirect_uri is not None:
            _check_redirect_uri(redirect_uri)
        self.server_url = canonical_resource(server_url) if server_url else None
        self.client_id, self.client_secret = client_id, client_secret
        self.client_metadata_url, self.client_name = client_metadata_url, client_name
        self.redirect_uri, self.port = redirect_uri, port
        self.scopes = tuple(scopes)
        self.storage: TokenStorage = storage if storage is not None else MemoryTokenStorage()
        self.user_agent: UserAgent = user_agent or LoopbackBrowser()
        self.grant, self.allow_http_loopback = grant, allow_http_loopback
        self.timeout, self.authorization_timeout = timeout, authorization_timeout
        self.max_step_ups, self.verify = max_step_ups, verify
        self._lock = asyncio.Lock()
        self._token: Token | None = None
        self._loaded = False
        self._resource: ProtectedResourceMetadata | None = None
        self._server: AuthorizationServerMetadata | None = None
        self._requested: tuple[str, ...] = ()

    # --- httpx ------------------------------------------------------------------------------------

    def sync_auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        raise TypeError("toolkit's OAuth runs with httpx.AsyncClient only")
        yield request  # pragma: no cover - makes this a generator

    async def async_auth_flow(self, request: httpx.Request) -> AsyncGenerator[httpx.Request, httpx.Response]:
        if self.server_url is None:
            check_url(str(request.url), "server_url", allow_http_loopback=self.allow_http_loopback)
            self.server_url = canonical_resource(str(request.url))
        if not _same_origin(str(request.url), self.server_url):
            yield request  # another server: no token of ours goes there
            return
        token = await self._usable_token()
        _authorize(request, token)
        response = yield request
        refreshed = authorized = False
        step_ups = 0
        while True:
            challenge = parse_challenge(response.headers.get_list("www-authenticate"))
            if response.status_code == 401:
                if authorized:
                    raise AccessDenied(f"{self.server_url} refused the token just issued for it (HTTP 401)")
                refresh = not refreshed and token is not None and token.refresh_token is not None
                refreshed, authorized = True, not refresh
                token = await self._renew(token, challenge, refresh=refresh)
            elif response.status_code == 403 and challenge.error == "insufficient_scope":
                if step_ups >= self.max_step_ups:
                    raise AccessDenied(
                        f"{self.server_url} still asks for more scope ({' '.join(challenge.scopes or ())}) "
                        f"after {step_ups} re-authorization(s)",
                        error="insufficient_scope",
                    )
                step_ups += 1
                token = await self._renew(token, challenge, step_up=True)
            else:
                return
            _authorize(request, token)
            response = yield request

    # --- tokens -----------------------------------------------------------------------------------

    @property
    def _token_key(self) -> str:
        return f"token:{self.server_url}"

    async def _usable_token(self) -> Token | None:
        """The token to send: loaded from storage once, and refreshed first if it is about to expire
        (after discovery through the well-known URLs if this process has not met the server yet;
        if that fails, the token goes as it is and the server's 401 leads the way)."""
        async with self._lock:
            if not self._loaded:
                self._loaded = True
                stored = await self.storage.get(self._token_key)
                with contextlib.suppress(ValueError):
                    self._token = Token.from_dict(stored) if stored else None
            token = self._token
            if token is not None and token.expired() and token.refresh_token:
                async with flow_client(timeout=self.timeout, verify=self.verify) as http:
                    with contextlib.suppress(OAuthError):
                        if self._server is None:
                            await self._discover(http, Challenge())
                        await self._refresh(http, token)
            return self._token

    async def _discover(self, http: httpx.AsyncClient, challenge: Challenge) -> None:
        assert self.server_url is not None
        self._resource, self._server = await discover(
            http, self.server_url, challenge, allow_http_loopback=self.allow_http_loopback
        )
        if self._token is not None and self._token.issuer not in (None, self._server.issuer):
            self._token = None  # issued by another authorization server: never refreshed at this one

    async def _renew(
        self, sent: Token | None, challenge: Challenge, *, refresh: bool = False, step_up: bool = False
    ) -> Token:
        async with self._lock:
            current = self._token
            # Another request renewed it meanwhile: use that, unless it still lacks a scope asked for.
            renewed = current is not None and current is not sent
            if renewed and current is not None and (not step_up or set(challenge.scopes or ()) <= set(current.scopes)):
                return current
            async with flow_client(timeout=self.timeout, verify=self.verify) as http:
                if self._server is None or not step_up:
                    await self._discover(http, challenge)
                if refresh and sent is not None:
                    try:
                        return await self._refresh(http, sent)
                    except TokenRequestFailed as exc:
                        logger.info("refresh refused (%s); authorizing again", exc.error)
                scopes = self._scopes_for(challenge, step_up=step_up, held=sent)
                if self.grant == "client_credentials":
                    return await self._client_credentials(http, scopes)
                return await self._authorization_code(http, scopes)

    async def _keep(self, token: Token) -> Token:
        self._token = token
        await self.storage.set(self._token_key, token.to_dict())
        return token

    def _scopes_for(self, challenge: Challenge, *, step_up: bool, held: Token | None) -> tuple[str, ...]:
        """MCP "Scope Selection Strategy": the challenge's scopes, else the metadata's
        ``scopes_supported``; on a step-up, the union with what was asked and granted before."""
        assert self._resource is not None
        selected = challenge.scopes if challenge.scopes is not None else (self._resource.scopes_supported or ())
        scopes = scope_union(self.scopes, selected)
        if step_up:
            scopes = scope_union(self._requested, held.scopes if held else (), scopes)
        return scopes

    # --- grants -----------------------------------------------------------------------------------

    async def _authorization_code(self, http: httpx.AsyncClient, scopes: tuple[str, ...]) -> Token:
        assert self._server is not None
        assert self._resource is not None
        server = self._server
        if server.authorization_endpoint is None:
            raise MetadataRefused(f"the authorization server {server.issuer} has no authorization_endpoint")
        client, redirect_uri = await self._client(http)
        if server.scopes_supported and "offline_access" in server.scopes_supported:
            scopes = scope_union(scopes, ["offline_access"])  # a refresh token where OIDC needs asking (SEP-2207)
        verifier, state = new_code_verifier(), new_state()
        params = {
            "response_type": "code",
            "client_id": client.client_id,
            "redirect_uri": redirect_uri,
            "state": state,
            "code_challenge": s256_challenge(verifier),
            "code_challenge_method": "S256",
            "resource": self._resource.resource,
        }
        if scopes:
            params["scope"] = " ".join(scopes)
        if "offline_access" in scopes:
            params["prompt"] = "consent"  # OpenID Connect Core §11
        self._requested = scopes
        try:
            async with asyncio.timeout(self.authorization_timeout):
                callback = await self.user_agent(with_query(server.authorization_endpoint, params))
        except TimeoutError:
            raise AuthorizationFailed(f"the sign-in took over {self.authorization_timeout:g} s") from None
        code = authorization_code(
            callback,
            redirect_uri=redirect_uri,
            state=state,
            issuer=server.issuer,
            iss_supported=server.authorization_response_iss_parameter_supported,
        )
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": redirect_uri,
            "code_verifier": verifier,
            "resource": self._resource.resource,
        }
        return await self._keep(await self._token_request(http, client, form, scopes))

    async def _client_credentials(self, http: httpx.AsyncClient, scopes: tuple[str, ...]) -> Token:
        assert self._resource is not None
        client = self._preregistered()
        assert client is not None
        form = {"grant_type": "client_credentials", "resource": self._resource.resource}
        if scopes:
            form["scope"] = " ".join(scopes)
        self._requested = scopes
        return await self._keep(await self._token_request(http, client, form, scopes))

    async def _refresh(self, http: httpx.AsyncClient, token: Token) -> Token:
        assert self._server is not None
        assert self._resource is not None
        assert token.refresh_token is not None
        if token.issuer not in (None, self._server.issuer):
            raise TokenRequestFailed(f"the refresh token was issued by {token.issuer}, not {self._server.issuer}")
        client = self._preregistered() or await self._stored_client()
        if client is None or (token.client_id is not None and client.client_id != token.client_id):
            raise TokenRequestFailed("no client registration to refresh the token with")
        form = {
            "grant_type": "refresh_token",
            "refresh_token": token.refresh_token,
            "resource": self._resource.resource,
        }
        try:
            fresh = await self._token_request(http, client, form, token.scopes, previous=token)
        except TokenRequestFailed:
            self._token = None
            await self.storage.delete(self._token_key)
            raise
        return await self._keep(fresh)

    async def _token_request(
        self,
        http: httpx.AsyncClient,
        client: ClientRegistration,
        form: dict[str, str],
        scopes: Iterable[str],
        previous: Token | None = None,
    ) -> Token:
        assert self._server is not None
        headers = {"accept": "application/json"}
        if client.token_endpoint_auth_method == "client_secret_basic" and client.client_secret is not None:
            # RFC 6749 §2.3.1: both form-urlencoded before the Basic encoding.
            pair = f"{quote(client.client_id, safe='')}:{quote(client.client_secret, safe='')}"
            headers["authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
        elif client.token_endpoint_auth_method == "client_secret_post" and client.client_secret is not None:
            form = {**form, "client_id": client.client_id, "client_secret": client.client_secret}
        else:
            form = {**form, "client_id": client.client_id}
        status, document = await send_json(
            http, "POST", self._server.token_endpoint, "token request", data=form, headers=headers
        )
        if status != 200:
            raise token_error(document, status)
        return Token.from_response(
            document, requested_scopes=scopes, previous=previous, issuer=self._server.issuer, client_id=client.client_id
        )

    # --- the client id ----------------------------------------------------------------------------

    def _preregistered(self) -> ClientRegistration | None:
        if self.client_id is None:
            return None
        assert self._server is not None
        method = "none"
        if self.client_secret is not None:
            supported = self._server.token_endpoint_auth_methods_supported
            method = "client_secret_post" if "client_secret_basic" not in supported else "client_secret_basic"
        return ClientRegistration(self.client_id, self.client_secret, method, redirect_uris=())

    async def _stored_client(self) -> ClientRegistration | None:
        assert self._server is not None
        stored = await self.storage.get(f"client:{self._server.issuer}")
        try:
            client = ClientRegistration.from_dict(stored) if stored else None
        except ValueError:
            return None
        return client if client is not None and client.issuer == self._server.issuer else None

    async def _client(self, http: httpx.AsyncClient) -> tuple[ClientRegistration, str]:
        """The client id to authorize with and its redirect URI, in MCP's order of preference:
        pre-registered, a client ID metadata document, a stored registration, dynamic registration."""
        assert self._server is not None
        server = self._server
        preregistered = self._preregistered()
        if preregistered is not None:
            return preregistered, self.redirect_uri or self._loopback_redirect(None)
        if self.client_metadata_url is not None and server.client_id_metadata_document_supported:
            # The document lists the redirect URIs; the client id is its URL, valid at any server.
            return ClientRegistration(self.client_metadata_url), self.redirect_uri or self._loopback_redirect(None)
        stored = await self._stored_client()
        redirect_uri = self.redirect_uri or self._loopback_redirect(stored)
        if stored is not None and redirect_uri in stored.redirect_uris:
            return stored, redirect_uri
        if server.registration_endpoint is None:
            raise RegistrationFailed(
                f"the authorization server {server.issuer} offers no way to get a client id here: it has no "
                "registration_endpoint"
                + ("" if server.client_id_metadata_document_supported else " nor client ID metadata documents")
                + "; register a client there and pass client_id=... (and client_secret=... if it has one)"
                + (", or client_metadata_url=..." if server.client_id_metadata_document_supported else "")
            )
        body = {
            "client_name": self.client_name,
            "redirect_uris": [redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
            # MCP client registration: native for a loopback redirect, web otherwise. No ``scope``:
            # a server may hold the client to the scopes it registered with, and step-up needs more.
            "application_type": "native" if is_loopback(urlsplit(redirect_uri).hostname) else "web",
        }
        status, document = await send_json(http, "POST", server.registration_endpoint, "registration", json_body=body)
        if status not in (200, 201):
            error = document.get("error") if isinstance(document, dict) else None
            raise RegistrationFailed(
                f"{server.issuer} refused the dynamic registration (HTTP {status}"
                + (f", {error}" if isinstance(error, str) else "")
                + "); pass client_id=... of a client registered there",
                error=error if isinstance(error, str) else None,
            )
        registered = ClientRegistration.from_response(document, issuer=server.issuer)
        if registered.redirect_uris and redirect_uri not in registered.redirect_uris:
            raise RegistrationFailed(f"{server.issuer} registered the client without its redirect URI")
        registered = ClientRegistration(
            registered.client_id,
            registered.client_secret,
            registered.token_endpoint_auth_method,
            server.issuer,
            (redirect_uri,),
        )
        await self.storage.set(f"client:{server.issuer}", registered.to_dict())
        logger.debug("registered with %s", server.issuer)
        return registered, redirect_uri

    def _loopback_redirect(self, stored: ClientRegistration | None) -> str:
        """``http://127.0.0.1:<port>/callback``: ``port``, else the registered one, else a free one."""
        if stored is not None and self.port == 0:
            for uri in stored.redirect_uris:
                parts = urlsplit(uri)
                if parts.scheme == "http" and parts.hostname == "127.0.0.1" and parts.port:
                    return uri
        if self.port == 0:
            self.port = _free_port()
        self.redirect_uri = f"http://127.0.0.1:{self.port}{CALLBACK_PATH}"
        return self.redirect_uri


def _authorize(request: httpx.Request, token: Token | None) -> None:
    if token is not None:
        request.headers["authorization"] = f"Bearer {token.access_token}"


def _same_origin(url: str, other: str) -> bool:
    a, b = urlsplit(url), urlsplit(other)
    return (a.scheme.lower(), a.hostname, a.port) == (b.scheme.lower(), b.hostname, b.port)


def _check_redirect_uri(uri: str) -> None:
    """MCP "Communication Security": a redirect URI is https or http on loopback, nothing else."""
    parts = urlsplit(uri)
    if parts.fragment or not (parts.scheme == "https" or (parts.scheme == "http" and is_loopback(parts.hostname))):
        raise InsecureURL(f"redirect_uri: {uri!r} must be https, or http on 127.0.0.1/localhost/[::1]")


def _free_port() -> int:
    import socket  # noqa: PLC0415 - only when no redirect port was given

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port
