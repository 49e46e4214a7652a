"""The authorization server's back channel: ``/token``, ``/revoke`` (RFC 7009), ``/register`` (RFC 7591).

Clients authenticate as they registered: ``none`` (public: PKCE is the proof), or with the
secret, by HTTP Basic or in the form; never two ways at once, and a public client sending a
secret is refused rather than trusted. Secrets are kept as SHA-256 only.

- ``authorization_code``: the code is taken once (a second use revokes the grant it made,
  OAuth 2.1 §4.1.3), for the client it was issued to, with the redirect URI it was issued for,
  and the PKCE verifier whose S256 is the challenge.
- ``refresh_token``: rotated at every use. A refresh token used twice means one copy was
  stolen: the whole family (the grant: every refresh token of that login) is revoked, and the
  upstream tokens with it. A refresh token presented by another client revokes it too.

Access tokens are RFC 9068 JWTs: ``iss`` toolkit, ``sub`` the upstream user, ``aud`` the MCP
resource, ``client_id``, ``scope``, ``jti``, and ``gid``, the grant whose upstream tokens a tool
may use.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import logging
import secrets
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import unquote

from ..oauth import s256_challenge
from ..tokens import InvalidToken
from .answers import JsonAnswer, oauth_error
from .clients import (
    AUTH_METHODS,
    ClientRefused,
    DownstreamClient,
    client_name_of,
    redirect_uris_of,
)
from .grants import fingerprint, new_secret

if TYPE_CHECKING:
    from .proxy import OAuthProxy

logger = logging.getLogger("toolkit.auth")

NO_STORE: Final = {"cache-control": "no-store", "pragma": "no-cache"}
VERIFIER_CHARACTERS: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
REGISTRATION_SECONDS: Final = 180 * 24 * 3600.0
"""How long a dynamically registered client is kept (clients register again when told it is unknown)."""
GRANT_TYPES: Final = frozenset({"authorization_code", "refresh_token"})
CODE_TOMBSTONE_SECONDS: Final = 600.0
"""How long a used code is remembered as used (longer than it lives: a replay within it revokes)."""


class TokenIssuer:
    """The token, revocation and registration endpoints of one ``OAuthProxy``."""

    def __init__(self, proxy: OAuthProxy) -> None:
        self.proxy = proxy

    # --- client authentication -------------------------------------------------------------------

    async def authenticate(self, form: Mapping[str, str], authorization: str | None) -> DownstreamClient | JsonAnswer:
        """The client making this back-channel request, or the RFC 6749 §5.2 refusal."""
        basic = _basic(authorization)
        if authorization is not None and basic is None:
            return _invalid_client("the Authorization header is not HTTP Basic client credentials")
        if basic is not None and "client_secret" in form:
            return oauth_error(400, "invalid_request", "authenticate one way: HTTP Basic or client_secret, not both")
        if basic is not None and form.get("client_id") not in (None, basic[0]):
            return oauth_error(400, "invalid_request", "client_id differs from the HTTP Basic client")
        client_id = basic[0] if basic is not None else form.get("client_id")
        if not client_id:
            return _invalid_client("client_id is missing")
        try:
            client = await self.proxy.client(client_id)
        except ClientRefused as exc:
            return _invalid_client(str(exc))
        secret = basic[1] if basic is not None else form.get("client_secret")
        if client.auth_method == "none":
            if secret is not None:
                return _invalid_client("this client is public (token_endpoint_auth_method none): send no secret")
            return client
        method = "client_secret_basic" if basic is not None else "client_secret_post"
        if secret is None or method != client.auth_method:
            return _invalid_client(f"this client authenticates with {client.auth_method}")
        digest = hashlib.sha256(secret.encode()).hexdigest()
        if client.secret_hash is None or not hmac.compare_digest(digest, client.secret_hash):
            return _invalid_client("the client secret is wrong")
        return client

    # --- /token ----------------------------------------------------------------------------------

    async def token(self, form: Mapping[str, str], authorization: str | None) -> JsonAnswer:
        client = await self.authenticate(form, authorization)
        if isinstance(client, JsonAnswer):
            return client
        grant_type = form.get("grant_type")
        if grant_type == "authorization_code":
            return await self._code(form, client)
        if grant_type == "refresh_token":
            return await self._refresh(form, client)
        return oauth_error(400, "unsupported_grant_type", "use authorization_code or refresh_token")

    async def _take(
        self, kind: str, field: str, form: Mapping[str, str], client: DownstreamClient, what: str, ttl: float
    ) -> dict[str, Any] | JsonAnswer:
        """The code's or refresh token's record, once, for ``client``; a second use, or another
        client's, revokes the grant it belongs to (a copy was stolen: OAuth 2.1 §4.1.3, §4.3.1)."""
        secret = form.get(field)
        if not secret:
            return oauth_error(400, "invalid_request", f"{field} is missing")
        taken = await self.proxy.grants.take(kind, fingerprint(secret), tombstone_ttl=ttl)
        if taken.record is None:
            if taken.reused and taken.grant:
                await self.revoke_grant(taken.grant, f"{what} was used twice")
            return oauth_error(400, "invalid_grant", f"{what} is unknown, expired, revoked or already used")
        if taken.record["client_id"] != client.client_id:
            await self.revoke_grant(taken.record["grant"], f"{what} was presented by another client")
            return oauth_error(400, "invalid_grant", f"{what} was issued to another client")
        return taken.record

    def _resource_refused(self, form: Mapping[str, str], authorized: str) -> JsonAnswer | None:
        """A token request's ``resource`` (RFC 8707 §2.2), when given, names the resource authorized."""
        if "resource" not in form:
            return None
        try:
            if self.proxy.check_resource(form["resource"]) == authorized:
                return None
        except ValueError:
            pass
        return oauth_error(400, "invalid_target", "resource is not the one authorized")

    async def _code(self, form: Mapping[str, str], client: DownstreamClient) -> JsonAnswer:
        record = await self._take("code", "code", form, client, "the code", CODE_TOMBSTONE_SECONDS)
        if isinstance(record, JsonAnswer):
            return record
        if form.get("redirect_uri") != record["redirect_uri"]:
            return oauth_error(400, "invalid_grant", "redirect_uri must be the one of the authorization request")
        verifier = form.get("code_verifier")
        if not verifier:
            return oauth_error(400, "invalid_request", "code_verifier is missing (PKCE)")
        if not 43 <= len(verifier) <= 128 or not set(verifier) <= VERIFIER_CHARACTERS:
            return oauth_error(400, "invalid_grant", "code_verifier is not 43 to 128 unreserved characters")
        if not hmac.compare_digest(s256_challenge(verifier), record["code_challenge"]):
            return oauth_error(400, "invalid_grant", "code_verifier does not match the code_challenge")
        refused = self._resource_refused(form, record["resource"])
        if refused is not None:
            return refused
        grant = await self.proxy.grants.get("grant", record["grant"])
        if grant is None:
            return oauth_error(400, "invalid_grant", "the login behind this code was revoked")
        return await self._issue(record["grant"], grant, tuple(record["scopes"]))

    async def _refresh(self, form: Mapping[str, str], client: DownstreamClient) -> JsonAnswer:
        ttl = self.proxy.refresh_token_ttl
        record = await self._take("refresh", "refresh_token", form, client, "the refresh token", ttl)
        if isinstance(record, JsonAnswer):
            return record
        grant = await self.proxy.grants.get("grant", record["grant"])
        if grant is None:
            return oauth_error(400, "invalid_grant", "the login behind this refresh token was revoked")
        scopes = tuple(record["scopes"])
        if "scope" in form:
            asked = tuple(dict.fromkeys(form["scope"].split()))
            if not set(asked) <= set(scopes):
                return oauth_error(400, "invalid_scope", "a refresh may only narrow the scopes granted")
            scopes = asked
        refused = self._resource_refused(form, grant["resource"])
        if refused is not None:
            return refused
        await self.proxy.grants.put("grant", record["grant"], grant, ttl=ttl)
        return await self._issue(record["grant"], grant, scopes)

    async def _issue(self, grant_id: str, grant: Mapping[str, Any], scopes: tuple[str, ...]) -> JsonAnswer:
        proxy = self.proxy
        now = int(time.time())
        claims = {
            "iss": proxy.issuer,
            "sub": grant["subject"],
            "aud": grant["resource"],
            "client_id": grant["client_id"],
            "scope": " ".join(scopes),
            "iat": now,
            "exp": now + int(proxy.access_token_ttl),
            "jti": secrets.token_urlsafe(16),
            "gid": grant_id,
        }
        refresh = new_secret()
        refresh_record = {"grant": grant_id, "client_id": grant["client_id"], "scopes": list(scopes)}
        await proxy.grants.put("refresh", fingerprint(refresh), refresh_record, ttl=proxy.refresh_token_ttl)
        body: dict[str, Any] = {
            "access_token": proxy.keys.sign(claims),
            "token_type": "Bearer",
            "expires_in": int(proxy.access_token_ttl),
            "refresh_token": refresh,
        }
        if scopes:  # RFC 6749 §5.1: absent when nothing in particular was granted
            body["scope"] = " ".join(scopes)
        return JsonAnswer(200, body, NO_STORE)

    async def revoke_grant(self, grant_id: str, why: str) -> None:
        """End a login: its refresh tokens stop working, its upstream tokens are forgotten."""
        if await self.proxy.grants.delete("grant", grant_id):
            logger.warning("revoked a grant: %s", why)

    # --- /revoke (RFC 7009) ----------------------------------------------------------------------

    async def revoke(self, form: Mapping[str, str], authorization: str | None) -> JsonAnswer:
        client = await self.authenticate(form, authorization)
        if isinstance(client, JsonAnswer):
            return client
        token = form.get("token")
        if not token:
            return oauth_error(400, "invalid_request", "token is missing")
        record = await self.proxy.grants.get("refresh", fingerprint(token))
        if record is not None and record["client_id"] == client.client_id:
            await self.proxy.grants.delete("refresh", fingerprint(token))
            await self.revoke_grant(record["grant"], "the client revoked a refresh token")
        elif record is None and token.count(".") == 2:
            try:
                access = await self.proxy.verify(token)
            except InvalidToken:
                access = None
            grant_id = access.claims.get("gid") if access is not None else None
            if access is not None and access.client_id == client.client_id and isinstance(grant_id, str):
                await self.revoke_grant(grant_id, "the client revoked an access token")
        # RFC 7009 §2.2: 200 whether or not the token was known (an unknown token is no error).
        return JsonAnswer(200, None, NO_STORE)

    # --- /register (RFC 7591) --------------------------------------------------------------------

    async def register(self, body: bytes) -> JsonAnswer:
        if not self.proxy.dynamic_registration:
            return oauth_error(404, "invalid_request", "dynamic client registration is off on this server")
        try:
            document = json.loads(body)
        except ValueError:
            return oauth_error(400, "invalid_client_metadata", "the registration request is not JSON")
        if not isinstance(document, dict):
            return oauth_error(400, "invalid_client_metadata", "the registration request is not a JSON object")
        try:
            redirect_uris = redirect_uris_of(document)
            name = client_name_of(document)
        except ClientRefused as exc:
            error = "invalid_redirect_uri" if str(exc).startswith("redirect_uris") else "invalid_client_metadata"
            return oauth_error(400, error, str(exc))
        method = document.get("token_endpoint_auth_method", "client_secret_basic")  # RFC 7591 §2's default
        if method not in AUTH_METHODS:
            return oauth_error(
                400, "invalid_client_metadata", f"token_endpoint_auth_method must be one of {', '.join(AUTH_METHODS)}"
            )
        grant_types = document.get("grant_types", ["authorization_code"])
        if not isinstance(grant_types, list) or not set(grant_types) <= GRANT_TYPES:
            return oauth_error(400, "invalid_client_metadata", "grant_types: authorization_code and refresh_token only")
        response_types = document.get("response_types", ["code"])
        if response_types != ["code"]:
            return oauth_error(400, "invalid_client_metadata", "response_types: only ['code']")
        client_id = secrets.token_urlsafe(18)
        secret = secrets.token_urlsafe(32) if method != "none" else None
        client = DownstreamClient(
            client_id=client_id,
            redirect_uris=redirect_uris,
            auth_method=method,
            secret_hash=hashlib.sha256(secret.encode()).hexdigest() if secret is not None else None,
            name=name,
        )
        await self.proxy.grants.put("client", fingerprint(client_id), client.to_record(), ttl=REGISTRATION_SECONDS)
        answer: dict[str, Any] = {
            "client_id": client_id,
            "client_id_issued_at": int(time.time()),
            "redirect_uris": list(redirect_uris),
            "token_endpoint_auth_method": method,
            "grant_types": grant_types,
            "response_types": ["code"],
        }
        if name is not None:
            answer["client_name"] = name
        if secret is not None:
            answer["client_secret"] = secret
            answer["client_secret_expires_at"] = 0
        return JsonAnswer(201, answer, NO_STORE)


def _basic(authorization: str | None) -> tuple[str, str] | None:
    """HTTP Basic client credentials (RFC 6749 §2.3.1: each part form-urlencoded), or ``None``."""
    if authorization is None:
        return None
    scheme, _, value = authorization.partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        decoded = base64.b64decode(value.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None
    client_id, colon, secret = decoded.partition(":")
    if not colon or not client_id:
        return None
    return unquote(client_id.replace("+", " ")), unquote(secret.replace("+", " "))


def _invalid_client(description: str) -> JsonAnswer:
    return oauth_error(401, "invalid_client", description, **{"www-authenticate": 'Basic realm="toolkit"'})
