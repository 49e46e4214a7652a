"""The identity provider users log in with: generic OpenID Connect.

toolkit is one confidential client of the upstream (one ``client_id``, one redirect URI: its
callback), whatever the MCP client. The code flow runs with its own PKCE (S256), ``state`` and
``nonce``; the ID token is checked (signature by the upstream's JWKS, ``iss``, ``aud`` = our
client id, ``exp``, ``nonce``) with the same ``JWTVerifier`` as bearer tokens, and the user is
its ``sub``. Without an ID token, the userinfo endpoint says who the user is.

Everything fetched from the upstream is bounded in size and time and follows no redirect; its
endpoints are checked like any authorization server's (https, or http on loopback when allowed).

The presets (``presets.py``: Google, Entra, Auth0, Keycloak; ``github.py``) are subclasses that
change what their provider does differently, through the hooks here: ``authorization_params``
(extra parameters on the authorization URL), ``parse_metadata`` (a discovery document that bends
a rule), ``id_token_issuers`` and ``accepts_issuer`` (who may sign), ``read_token`` (a token
response in another dialect).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Final
from urllib.parse import quote

from ..oauth import (
    OPENID_WELL_KNOWN,
    AuthorizationServerMetadata,
    MetadataRefused,
    OAuthError,
    Token,
    TokenRequestFailed,
    check_url,
    token_error,
    with_query,
)
from ..oauth.metadata import MAX_DOCUMENT_BYTES
from ..tls import shared_tls
from ..tokens import InvalidToken, VerifierUnavailable

logger = logging.getLogger("toolkit.auth")

DEFAULT_SCOPES: Final = ("openid", "profile", "email")
RESERVED_PARAMETERS: Final = frozenset(
    {"response_type", "client_id", "redirect_uri", "scope", "state", "nonce", "code_challenge", "code_challenge_method"}
)
"""What toolkit itself puts on the authorization URL: ``authorization_params`` may not change them."""


@dataclass(frozen=True, slots=True)
class Identity:
    """Who logged in upstream: the ``sub``, and the claims of the ID token (or of userinfo)."""

    subject: str
    claims: Mapping[str, Any]


class OIDC:
    """An OpenID Connect provider, found by discovery (``issuer`` + ``/.well-known/openid-configuration``).

    Args:
        issuer: The provider's issuer identifier, exactly as its discovery document names it.
        client_id: toolkit's client at the provider (registered there once, by you).
        client_secret: Its secret.
        scopes: What toolkit asks the provider for (``openid`` is added when missing); add
            ``offline_access`` or the provider's own scopes for refresh tokens and API access.
        authorization_params: More parameters for the provider's authorization URL, as its
            documentation names them (Google's ``access_type``, Auth0's ``audience``, a
            ``prompt``, a ``login_hint``). Those toolkit sets itself (``RESERVED_PARAMETERS``:
            ``state``, ``scope``, PKCE, ...) are refused; ``scope`` goes in ``scopes``.
        allow_http_loopback: Accept an http issuer on a loopback host (tests, local providers).
        timeout: Seconds a request to the provider may take.
    """

    required_scopes: ClassVar[tuple[str, ...]] = ("openid",)
    """Added to ``scopes`` when missing: an OpenID provider sends an ID token only for ``openid``."""

    def __init__(
        self,
        issuer: str,
        client_id: str,
        client_secret: str,
        *,
        scopes: Sequence[str] = DEFAULT_SCOPES,
        authorization_params: Mapping[str, str] | None = None,
        allow_http_loopback: bool = False,
        timeout: float = 10.0,
    ) -> None:
        name = type(self).__name__
        check_url(issuer, f"{name}(issuer=...)", allow_http_loopback=allow_http_loopback)
        if not client_id or not client_secret:
            raise ValueError(f"{name} needs client_id= and client_secret=: the client you registered at the provider")
        if isinstance(scopes, str):
            raise TypeError(f"{name}(scopes=...): give a list of scopes, not the string {scopes!r}")
        self.issuer = issuer
        self.client_id = client_id
        self.client_secret = client_secret
        self.scopes = tuple(dict.fromkeys([*self.required_scopes, *scopes]))
        self.authorization_params = checked_parameters(authorization_params or {}, name)
        self.allow_http_loopback = allow_http_loopback
        self.timeout = timeout
        self._metadata: AuthorizationServerMetadata | None = None
        self._lock = asyncio.Lock()
        self._id_tokens: Any = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.issuer!r}, client_id={self.client_id!r})"

    @property
    def discovery_url(self) -> str:
        """Where the discovery document is: the issuer + ``/.well-known/openid-configuration``."""
        return self.issuer.rstrip("/") + OPENID_WELL_KNOWN

    @property
    def id_token_issuers(self) -> tuple[str, ...]:
        """The ``iss`` values an ID token of this provider may carry (OIDC Core §3.1.3.7: its issuer)."""
        return (self.issuer,)

    def accepts_issuer(self, iss: str) -> bool:
        """Whether an authorization response's ``iss`` (RFC 9207) names this provider."""
        return iss == self.issuer

    # --- discovery -------------------------------------------------------------------------------

    async def metadata(self) -> AuthorizationServerMetadata:
        """The provider's checked discovery document, fetched once."""
        if self._metadata is not None:
            return self._metadata
        async with self._lock:
            if self._metadata is None:
                url = self.discovery_url
                status, document = await self._send("GET", url, "discovery")
                if status != 200:
                    raise VerifierUnavailable(f"the identity provider's discovery document at {url} answered {status}")
                self._metadata = self.parse_metadata(document, source=url)
        return self._metadata

    def parse_metadata(self, document: object, *, source: str) -> AuthorizationServerMetadata:
        """The discovery document, checked (RFC 8414 §3.3 issuer, PKCE S256, safe endpoints); a preset
        whose provider documents an exception to a rule overrides this, and says why."""
        metadata = AuthorizationServerMetadata.parse(
            document, issuer=self.issuer, source=source, allow_http_loopback=self.allow_http_loopback
        )
        if metadata.authorization_endpoint is None:
            raise MetadataRefused(f"the identity provider at {source} names no authorization_endpoint")
        return metadata

    # --- the code flow ---------------------------------------------------------------------------

    def authorization_parameters(
        self, *, redirect_uri: str, state: str, code_challenge: str, nonce: str
    ) -> dict[str, str]:
        """The query of the provider's authorization URL: the code flow's, then ``authorization_params``."""
        return {
            "response_type": "code",
            "client_id": self.client_id,
            "redirect_uri": redirect_uri,
            "scope": " ".join(self.scopes),
            "state": state,
            "nonce": nonce,
            "code_challenge": code_challenge,
            "code_challenge_method": "S256",
            **self.authorization_params,
        }

    async def authorization_url(self, *, redirect_uri: str, state: str, code_challenge: str, nonce: str) -> str:
        metadata = await self.metadata()
        assert metadata.authorization_endpoint is not None
        parameters = self.authorization_parameters(
            redirect_uri=redirect_uri, state=state, code_challenge=code_challenge, nonce=nonce
        )
        return with_query(metadata.authorization_endpoint, parameters)

    async def exchange(self, code: str, *, redirect_uri: str, code_verifier: str) -> tuple[Token, str | None]:
        """The provider's tokens for ``code``, and its ID token (if it sent one)."""
        form = {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri}
        form["code_verifier"] = code_verifier
        return await self._token_request(form, previous=None)

    async def refresh(self, token: Token) -> Token:
        """New provider tokens from ``token``'s refresh token; ``TokenRequestFailed`` when refused."""
        if token.refresh_token is None:
            raise TokenRequestFailed("the identity provider gave no refresh token; the user must log in again")
        fresh, _ = await self._token_request(
            {"grant_type": "refresh_token", "refresh_token": token.refresh_token}, previous=token
        )
        return fresh

    async def identity(self, token: Token, id_token: str | None, *, nonce: str) -> Identity:
        """Who logged in: the verified ID token's claims, else the userinfo endpoint's answer."""
        metadata = await self.metadata()
        if id_token is not None:
            claims = await self._verified_id_token(id_token, metadata)
            if claims.get("nonce") != nonce:
                raise InvalidToken("the identity provider's ID token does not carry the nonce sent")
            check_authorized_party(claims, self.client_id)
            subject = claims.get("sub")
            if not isinstance(subject, str) or not subject:
                raise InvalidToken("the identity provider's ID token has no sub")
            return Identity(subject, claims)
        userinfo = metadata.document.get("userinfo_endpoint")
        if not isinstance(userinfo, str):
            raise OAuthError("the identity provider sent no ID token and has no userinfo endpoint: who logged in?")
        check_url(userinfo, f"userinfo_endpoint of {self.issuer}", allow_http_loopback=self.allow_http_loopback)
        status, document = await self._send(
            "GET", userinfo, "userinfo", headers={"authorization": f"Bearer {token.access_token}"}
        )
        if status != 200 or not isinstance(document, dict) or not isinstance(document.get("sub"), str):
            raise OAuthError(f"the identity provider's userinfo endpoint answered {status} without a sub")
        return Identity(document["sub"], document)

    async def _verified_id_token(self, id_token: str, metadata: AuthorizationServerMetadata) -> dict[str, Any]:
        if self._id_tokens is None:
            from ..jwt import JWTVerifier  # noqa: PLC0415 - the auth extra

            jwks_uri = metadata.document.get("jwks_uri")
            check_url(jwks_uri, f"jwks_uri of {self.issuer}", allow_http_loopback=self.allow_http_loopback)
            self._id_tokens = JWTVerifier(
                jwks_uri=jwks_uri, issuer=list(self.id_token_issuers), audience=self.client_id
            )
        verified = await self._id_tokens.verify(id_token)
        return dict(verified.claims)

    async def _token_request(self, form: dict[str, str], *, previous: Token | None) -> tuple[Token, str | None]:
        metadata = await self.metadata()
        headers: dict[str, str] = {}
        if "client_secret_basic" in metadata.token_endpoint_auth_methods_supported:
            # RFC 6749 §2.3.1: each part form-urlencoded before the base64.
            import base64  # noqa: PLC0415

            pair = f"{quote(self.client_id, safe='')}:{quote(self.client_secret, safe='')}"
            headers["authorization"] = "Basic " + base64.b64encode(pair.encode()).decode("ascii")
        else:
            form = {**form, "client_id": self.client_id, "client_secret": self.client_secret}
        status, document = await self._send("POST", metadata.token_endpoint, "token", data=form, headers=headers)
        # RFC 6749 §5.2 says 400; GitHub answers its errors with 200: an error is an error either way.
        if status != 200 or (isinstance(document, dict) and "error" in document):
            raise token_error(document, status)
        return self.read_token(document, previous=previous)

    def read_token(self, document: object, *, previous: Token | None) -> tuple[Token, str | None]:
        """A successful token response: the ``Token``, and the ID token if there is one."""
        token = Token.from_response(document, previous=previous, issuer=self.issuer, client_id=self.client_id)
        id_token = document.get("id_token") if isinstance(document, dict) else None
        return token, id_token if isinstance(id_token, str) else None

    async def _send(
        self,
        method: str,
        url: str,
        what: str,
        *,
        data: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> tuple[int, object]:
        import httpx  # noqa: PLC0415 - the auth extra

        sent = {"accept": "application/json", **(headers or {})}
        try:
            async with (
                httpx.AsyncClient(
                    timeout=self.timeout, follow_redirects=False, trust_env=False, verify=shared_tls(trust_env=False)
                ) as http,
                http.stream(method, url, data=data, headers=sent) as response,
            ):
                body = bytearray()
                async for chunk in response.aiter_bytes():
                    body += chunk
                    if len(body) > MAX_DOCUMENT_BYTES:
                        raise OAuthError(f"the identity provider's {what} answer exceeds {MAX_DOCUMENT_BYTES} bytes")
                status = response.status_code
        except httpx.HTTPError as exc:
            raise VerifierUnavailable(f"the identity provider's {what} endpoint {url} is unreachable ({exc})") from None
        try:
            return status, json.loads(body) if body else None
        except ValueError:
            return status, None


def checked_parameters(parameters: Mapping[str, str], name: str) -> dict[str, str]:
    """``authorization_params``, refused when one would change what toolkit sets itself."""
    taken = sorted(RESERVED_PARAMETERS.intersection(parameters))
    if taken:
        raise ValueError(
            f"{name}(authorization_params=...): {taken} are set by toolkit itself (give scopes in scopes=); "
            "pass only the provider's own parameters"
        )
    if not all(isinstance(key, str) and isinstance(value, str) for key, value in parameters.items()):
        raise TypeError(f"{name}(authorization_params=...): names and values must be strings")
    return dict(parameters)


def check_authorized_party(claims: Mapping[str, Any], client_id: str) -> None:
    """OpenID Connect Core §3.1.3.7: an ID token for several audiences names us as ``azp``; an ``azp``
    (when present) is us. ``aud`` containing us is checked with the signature."""
    audience = claims.get("aud")
    azp = claims.get("azp")
    if isinstance(audience, list) and len(audience) > 1 and azp is None:
        raise InvalidToken("the identity provider's ID token has several audiences and no azp")
    if azp is not None and azp != client_id:
        raise InvalidToken(f"the identity provider's ID token was issued to {azp!r}, not to toolkit's client")
