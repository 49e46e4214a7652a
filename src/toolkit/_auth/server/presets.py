"""Identity provider presets: OpenID Connect providers whose issuer and quirks are known.

Each is ``OIDC`` with its issuer built from what the provider's console shows (a domain, a
realm, a tenant) and its documented differences applied:

- ``Google``: the issuer is fixed; a refresh token only with ``access_type=offline`` on the
  authorization URL, and again after the first consent only with ``prompt=consent``; ID tokens
  carry ``iss`` with or without ``https://`` (Google's OpenID Connect guide).
- ``Entra``: one issuer per tenant. ``common`` and ``organizations`` are no tenant: their
  discovery document names the issuer ``https://login.microsoftonline.com/{tenantid}/v2.0``, a
  template, and each ID token's ``iss`` carries the user's tenant, which the token also names in
  ``tid``. The token is accepted only when ``iss`` is the template filled with that ``tid``, so
  one tenant's token can never pass as another's. The discovery document lists no
  ``code_challenge_methods_supported``, though the Microsoft identity platform documents PKCE
  S256 for the code flow.
- ``Auth0``: the issuer is ``https://{domain}/``, with its trailing slash (``iss`` is compared as
  a string); ``audience`` asks for an access token for your API instead of an opaque one.
- ``Keycloak``: the issuer is ``{base_url}/realms/{realm}``.

GitHub is not OpenID Connect: ``github.py``.
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import quote, urlsplit

from ..oauth import AuthorizationServerMetadata, MetadataRefused, check_url
from ..tokens import InvalidToken
from .upstream import DEFAULT_SCOPES, OIDC

if TYPE_CHECKING:
    from ..jwt import JWTVerifier

GOOGLE_ISSUER: Final = "https://accounts.google.com"
GOOGLE_BARE_ISSUER: Final = "accounts.google.com"
"""Google's ID tokens may name their issuer without the scheme (Google's OpenID Connect guide)."""
ENTRA_AUTHORITY: Final = "https://login.microsoftonline.com"
ENTRA_TENANT_PLACEHOLDER: Final = "{tenantid}"
ENTRA_MULTI_TENANT: Final = ("common", "organizations")
ENTRA_CONSUMERS_TENANT: Final = "9188040d-6c67-4c5b-b112-36a304b66dad"
"""The tenant id of personal Microsoft accounts (the ``consumers`` tenant)."""
ENTRA_DEFAULT_SCOPES: Final = ("openid", "profile", "email", "offline_access", "User.Read")
HOST: Final = re.compile(r"[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?")
"""A domain name (Auth0's domain, an Entra tenant's domain or keyword), nothing around it."""
GUID: Final = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
MAX_TENANT_VERIFIERS: Final = 256
"""Per-tenant ID token verifiers kept (they share one key set); the map starts over past it."""


class Google(OIDC):
    """Google accounts: ``OAuthProxy(upstream=Google(client_id, client_secret), ...)``.

    Args:
        client_id: The OAuth client's id (Google Cloud console, "Google Auth Platform", "Clients").
        client_secret: Its secret.
        scopes: ``openid`` is always asked; add Google API scopes
            (``https://www.googleapis.com/auth/drive.readonly``) for tools to call those APIs.
        offline: Ask for a refresh token (``access_type=offline``, and ``prompt=consent`` so that
            Google sends one at every login, not only the first), so the upstream token outlives
            its hour. Without it, a tool's ``UpstreamToken`` stops after an hour until the user
            logs in again.
        authorization_params: More of Google's parameters (``hd``, ``login_hint``); ``hd`` only
            picks the account shown, it admits no one and refuses no one.
        issuer: Leave it: Google's. Another value is for tests against a local provider playing
            Google (with ``allow_http_loopback``).
        allow_http_loopback: With ``issuer``, for tests only.
        timeout: Seconds a request to Google may take.
    """

    def __init__(
        self,
        client_id: str,
        client_secret: str,
        *,
        scopes: Sequence[str] = DEFAULT_SCOPES,
        offline: bool = True,
        authorization_params: Mapping[str, str] | None = None,
        issuer: str = GOOGLE_ISSUER,
        allow_http_loopback: bool = False,
        timeout: float = 10.0,
    ) -> None:
        parameters = {"access_type": "offline", "prompt": "consent"} if offline else {}
        super().__init__(
            issuer,
            client_id,
            client_secret,
            scopes=scopes,
            authorization_params={**parameters, **(authorization_params or {})},
            allow_http_loopback=allow_http_loopback,
            timeout=timeout,
        )

    @property
    def id_token_issuers(self) -> tuple[str, ...]:
        if self.issuer == GOOGLE_ISSUER:
            return (GOOGLE_ISSUER, GOOGLE_BARE_ISSUER)
        return (self.issuer,)


class Auth0(OIDC):
    """An Auth0 tenant: ``Auth0("example.us.auth0.com", client_id, client_secret)``.

    Args:
        domain: The tenant's domain (Applications, your application, "Settings", "Domain"), or
            your custom domain: the host alone, no ``https://``. The issuer is
            ``https://{domain}/``.
        client_id: The application's Client ID (a "Regular Web Application").
        client_secret: Its Client Secret.
        audience: Your API's identifier (Applications, "APIs"): the upstream access token is then
            a JWT for that API, which tools can call with ``UpstreamToken``. Without it, Auth0
            gives an opaque token good for its ``/userinfo`` only.
        scopes: ``offline_access`` (in the default) gives a refresh token when the API allows
            offline access; add your API's scopes.
        authorization_params: More of Auth0's parameters (``organization``, ``connection``).
        timeout: Seconds a request to Auth0 may take.
    """

    def __init__(
        self,
        domain: str,
        client_id: str,
        client_secret: str,
        *,
        audience: str | None = None,
        scopes: Sequence[str] = (*DEFAULT_SCOPES, "offline_access"),
        authorization_params: Mapping[str, str] | None = None,
        timeout: float = 10.0,
    ) -> None:
        if not HOST.fullmatch(domain or ""):
            raise ValueError(
                f"Auth0(domain={domain!r}): give the tenant's domain alone, like 'example.us.auth0.com' "
                "(no https://, no path)"
            )
        parameters = {"audience": audience} if audience is not None else {}
        super().__init__(
            f"https://{domain}/",
            client_id,
            client_secret,
            scopes=scopes,
            authorization_params={**parameters, **(authorization_params or {})},
            timeout=timeout,
        )
        self.domain = domain
        self.audience = audience


class Keycloak(OIDC):
    """A Keycloak realm: ``Keycloak("https://sso.example.com", "staff", client_id, client_secret)``.

    Args:
        base_url: Where Keycloak is served (with ``/auth`` for Keycloak 16 and older).
        realm: The realm's name. The issuer is ``{base_url}/realms/{realm}``.
        client_id: The client's id (Clients, "Create client": OpenID Connect, "Client
            authentication" on, "Standard flow" on).
        client_secret: Its secret (the client's "Credentials" tab).
        scopes: What toolkit asks for; ``openid`` is always asked.
        authorization_params: More parameters (``kc_idp_hint`` to go straight to a broker).
        allow_http_loopback: Accept ``http://localhost`` (a development Keycloak).
        timeout: Seconds a request to Keycloak may take.
    """

    def __init__(
        self,
        base_url: str,
        realm: str,
        client_id: str,
        client_secret: str,
        *,
        scopes: Sequence[str] = DEFAULT_SCOPES,
        authorization_params: Mapping[str, str] | None = None,
        allow_http_loopback: bool = False,
        timeout: float = 10.0,
    ) -> None:
        if not realm:
            raise ValueError("Keycloak(realm=...): name the realm users log in to")
        check_url(base_url, "Keycloak(base_url=...)", allow_http_loopback=allow_http_loopback)
        if urlsplit(base_url).query:
            raise ValueError(f"Keycloak(base_url={base_url!r}): give where Keycloak is served, without a query")
        super().__init__(
            f"{base_url.rstrip('/')}/realms/{quote(realm, safe='')}",
            client_id,
            client_secret,
            scopes=scopes,
            authorization_params=authorization_params,
            allow_http_loopback=allow_http_loopback,
            timeout=timeout,
        )
        self.realm = realm


class Entra(OIDC):
    """Microsoft Entra ID (work and school accounts, and personal Microsoft accounts).

    ``Entra(client_id, client_secret, tenant="contoso.onmicrosoft.com")`` lets one organization's
    users in; ``tenant="organizations"`` any organization's; ``"common"`` those and personal
    accounts too. With a multi-tenant ``tenant``, narrow it with ``tenants=``.

    Args:
        client_id: The app registration's "Application (client) ID".
        client_secret: A secret's *value* (Certificates & secrets), not its id.
        tenant: A tenant id (a GUID) or domain, ``"organizations"``, ``"common"`` or ``"consumers"``.
        tenants: With ``"common"`` or ``"organizations"``: the tenant ids (GUIDs) whose users may
            log in; ``None`` lets in every tenant's users.
        scopes: The default adds ``offline_access`` (refresh tokens) and Microsoft Graph's
            ``User.Read``, so ``UpstreamToken`` calls ``https://graph.microsoft.com/v1.0/me``.
            Scopes of one resource only, besides the OpenID ones (the v2.0 endpoint's rule).
        authorization_params: More parameters (``domain_hint``, ``login_hint``, ``prompt``).
        authority: The cloud's login host: Microsoft's global cloud by default; a national cloud's
            (``https://login.microsoftonline.us``) otherwise.
        allow_http_loopback: With ``authority``, for tests only.
        timeout: Seconds a request to Microsoft may take.
    """

    def __init__(
        self,
        client_id: str,
        client_secret: str,
        *,
        tenant: str = "common",
        tenants: Iterable[str] | None = None,
        scopes: Sequence[str] = ENTRA_DEFAULT_SCOPES,
        authorization_params: Mapping[str, str] | None = None,
        authority: str = ENTRA_AUTHORITY,
        allow_http_loopback: bool = False,
        timeout: float = 10.0,
    ) -> None:
        if not HOST.fullmatch(tenant or ""):
            raise ValueError(
                f"Entra(tenant={tenant!r}): give the tenant id (a GUID), its domain, 'organizations' or 'common'"
            )
        check_url(authority, "Entra(authority=...)", allow_http_loopback=allow_http_loopback)
        self.authority = authority.rstrip("/")
        self.tenant = tenant.lower() if GUID.fullmatch(tenant.lower()) else tenant
        self.multi_tenant = self.tenant in ENTRA_MULTI_TENANT
        allowed = None if tenants is None else frozenset(t.lower() for t in tenants)
        if allowed is not None and (not self.multi_tenant or not all(GUID.fullmatch(t) for t in allowed)):
            raise ValueError(
                "Entra(tenants=...): only with tenant='common' or 'organizations', and as tenant ids (GUIDs)"
            )
        self.tenants = allowed
        super().__init__(
            f"{self.authority}/{self.tenant}/v2.0",
            client_id,
            client_secret,
            scopes=scopes,
            authorization_params=authorization_params,
            allow_http_loopback=allow_http_loopback,
            timeout=timeout,
        )
        self.tenant_issuer: str | None = None
        """The issuer the discovery document named, for one tenant (known once it is fetched)."""
        self._tenant_verifiers: dict[str, JWTVerifier] = {}
        self._verifier_lock = asyncio.Lock()

    def issuer_of(self, tenant_id: str) -> str:
        """The issuer identifier of the tenant ``tenant_id``: what its ID tokens carry in ``iss``."""
        return f"{self.authority}/{tenant_id}/v2.0"

    def parse_metadata(self, document: object, *, source: str) -> AuthorizationServerMetadata:
        """Entra's document, checked against what it is for: the ``{tenantid}`` template for
        ``common``/``organizations``; for one tenant, that tenant's issuer, ``{authority}/<GUID>/v2.0``
        (a domain name is answered with its tenant's GUID). PKCE S256 is supplied when unlisted."""
        if not isinstance(document, dict):
            raise MetadataRefused(f"the identity provider's discovery document at {source} is not a JSON object")
        named = document.get("issuer")
        if self.multi_tenant:
            expected = self.issuer_of(ENTRA_TENANT_PLACEHOLDER)
            if named != expected:
                raise MetadataRefused(
                    f"the discovery document at {source} names the issuer {named!r}, not {expected!r}: "
                    f"not Entra's {self.tenant!r} endpoint"
                )
        else:
            tenant_id = self._tenant_of(named)
            if tenant_id is None or (GUID.fullmatch(self.tenant) and tenant_id != self.tenant):
                raise MetadataRefused(
                    f"the discovery document at {source} names the issuer {named!r}, not the issuer of the "
                    f"tenant {self.tenant!r} ({self.issuer_of('<tenant id>')})"
                )
            self.tenant_issuer = named
        checked = {**document, "issuer": self.issuer}
        checked.setdefault("code_challenge_methods_supported", ["S256"])
        return super().parse_metadata(checked, source=source)

    def _tenant_of(self, issuer: object) -> str | None:
        """The tenant GUID of ``{authority}/<GUID>/v2.0``; None for anything else."""
        if not isinstance(issuer, str):
            return None
        prefix, suffix = self.authority + "/", "/v2.0"
        if not (issuer.startswith(prefix) and issuer.endswith(suffix)):
            return None
        tenant_id = issuer[len(prefix) : -len(suffix)]
        return tenant_id if GUID.fullmatch(tenant_id) else None

    def tenant_allowed(self, tenant_id: str) -> bool:
        """Whether a user of ``tenant_id`` may log in: the tenant asked for, or any the multi-tenant
        ``tenant`` covers (``organizations``: not personal accounts) and ``tenants`` allows."""
        if not GUID.fullmatch(tenant_id):
            return False
        if not self.multi_tenant:
            return self.tenant_issuer is not None and self.issuer_of(tenant_id) == self.tenant_issuer
        if self.tenant == "organizations" and tenant_id == ENTRA_CONSUMERS_TENANT:
            return False
        return self.tenants is None or tenant_id in self.tenants

    def accepts_issuer(self, iss: str) -> bool:
        tenant_id = self._tenant_of(iss)
        return iss == self.issuer or (tenant_id is not None and self.tenant_allowed(tenant_id))

    async def _verified_id_token(self, id_token: str, metadata: AuthorizationServerMetadata) -> dict[str, Any]:
        """The ID token checked with its own tenant's issuer: ``iss`` must be ``{authority}/{tid}/v2.0``
        for the token's ``tid``, a tenant this preset lets in.

        ``tid`` is read before the signature is checked, only to choose the issuer to expect; the
        verifier then checks the signature over that same payload and ``iss`` against that issuer,
        so a token passes only when its signed ``iss`` and signed ``tid`` name the same tenant.
        """
        tenant_id = _unverified_claims(id_token).get("tid")
        if not isinstance(tenant_id, str) or not self.tenant_allowed(tenant_id):
            raise InvalidToken(
                f"the ID token's tenant {tenant_id!r} may not log in here (Entra tenant={self.tenant!r})"
            )
        verifier = await self._verifier_for(self.issuer_of(tenant_id), metadata)
        return dict((await verifier.verify(id_token)).claims)

    async def _verifier_for(self, issuer: str, metadata: AuthorizationServerMetadata) -> JWTVerifier:
        from ..jwt import JWTVerifier  # noqa: PLC0415 - the auth extra

        async with self._verifier_lock:
            verifier = self._tenant_verifiers.get(issuer)
            if verifier is not None:
                return verifier
            jwks_uri = metadata.document.get("jwks_uri")
            check_url(jwks_uri, f"jwks_uri of {self.issuer}", allow_http_loopback=self.allow_http_loopback)
            verifier = JWTVerifier(jwks_uri=jwks_uri, issuer=issuer, audience=self.client_id)
            shared = next(iter(self._tenant_verifiers.values()), None)
            if shared is not None:
                verifier.key_set = shared.key_set  # one key set for all tenants: one fetch, one cache
            if len(self._tenant_verifiers) >= MAX_TENANT_VERIFIERS:
                self._tenant_verifiers.clear()
            self._tenant_verifiers[issuer] = verifier
            return verifier


def _unverified_claims(token: str) -> dict[str, Any]:
    """A JWT's payload *before* its signature is checked: only to pick the issuer to check it against."""
    try:
        payload = token.split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    except (IndexError, ValueError):
        raise InvalidToken("malformed ID token") from None
    if not isinstance(claims, dict):
        raise InvalidToken("malformed ID token: the payload is not an object")
    return claims
