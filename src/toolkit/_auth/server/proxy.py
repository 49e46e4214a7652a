"""``OAuthProxy``: toolkit issues its own tokens to MCP clients and lets an upstream provider log users in.

Google, GitHub, Entra and most company providers register no client on the fly, so MCP clients
cannot use them directly. toolkit stands in between: to MCP clients it is an OAuth 2.1
authorization server (RFC 8414 metadata, client ID metadata documents and RFC 7591 registration,
authorization code with PKCE S256, refresh with rotation, RFC 7009 revocation); to the provider
it is one confidential client. Every MCP client shares that one upstream client, so toolkit asks
the user's consent per MCP client before sending them upstream: without it, a client could ride
the consent the user once gave another (the "confused deputy" of the MCP security best practices).

The access tokens are JWTs toolkit signs (``keys``), with ``aud`` the MCP resource, checked by
the same ``JWTVerifier`` as any other (in process: no fetch of its own JWKS). The user's upstream
tokens stay on the server, sealed in the store, for tools to call the provider's API with
(``upstream_token``); they never reach an MCP client.

The flows are in ``flows.py`` (authorize, consent, callback) and ``issuing.py`` (the token and
revocation endpoints); this module holds the configuration and what the resource server and the
tools ask of it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit

from ..oauth import Token, TokenRequestFailed, canonical_resource, check_url
from ..tokens import AccessToken
from .clients import ClientRefused, DownstreamClient, MetadataDocuments, is_metadata_document_url
from .flows import AuthorizationFlow
from .grants import Grants, Sealer, fingerprint
from .issuing import TokenIssuer
from .keys import IssuedKeys, SigningKeys
from .paths import AUTHORIZE, JWKS, REGISTER, REVOKE, TOKEN, UpstreamLoginRequired
from .upstream import OIDC

if TYPE_CHECKING:
    import os
    import ssl

    from ..._store.base import Store
    from ..jwt import JWTVerifier

logger = logging.getLogger("toolkit.auth")

REFRESH_LEASE_MARGIN: Final = 5.0
"""Seconds a refresh lease outlives the upstream's timeout (a replica that died holding it frees it then)."""
REFRESH_LEASE_POLL: Final = 0.05
"""Seconds between two looks at a login another replica is refreshing."""


class OAuthProxy:
    """An authorization server for MCP clients in front of an upstream identity provider.

    ``Server(auth=OAuthProxy(upstream=OIDC(issuer, client_id, client_secret), base_url=...))``.

    Args:
        upstream: The identity provider users log in with (``OIDC``, or a preset: ``Google``,
            ``GitHub``, ``Entra``, ``Auth0``, ``Keycloak``). Register toolkit there with the
            redirect URI ``base_url + "/authorize/callback"``.
        base_url: The server's public URL (scheme, host, port): toolkit's issuer identifier, under
            which it serves ``/authorize``, ``/token``, ``/register``, ``/revoke``, ``/jwks``.
        resource_url: The MCP endpoint's URL, the audience of every token; ``base_url + "/mcp"``
            by default.
        scopes: The scopes a client may ask for (``None``: any; the user sees them on the consent
            page). Scopes asked for but not offered are left out of the grant (RFC 6749 §3.3).
        signing_key: toolkit's private key, PEM (RSA 2048+ or EC P-256). Generated at start when not
            given: then tokens die with the process, so give one to every replica.
        previous_signing_keys: Keys rotated out: still published and accepted until their tokens expire.
        encryption_key: 32 bytes (or their base64), or a list (the first seals, all open), sealing
            the upstream tokens in the store. Generated at start when not given (one process only).
        access_token_ttl: Seconds an access token is valid. A revoked grant's access tokens stay
            valid until they expire; its refresh tokens stop at once.
        refresh_token_ttl: Seconds a refresh token (and the grant) lives without being used.
        dynamic_registration: Serve RFC 7591 registration (``/register``) for clients without a
            client ID metadata document (deprecated by MCP 2026-07-28, still what many clients use).
        client_metadata_documents: Accept client ID metadata documents (an https URL as ``client_id``).
        allow_http_loopback: Fetch client metadata documents over http on loopback (tests).
        allow_private_addresses: Fetch client metadata documents from loopback, private and
            link-local addresses (tests, internal deployments); refused by default (SSRF).
        client_metadata_timeout: Seconds a metadata document fetch may take, all in.
        client_metadata_max_bytes: The most a metadata document may weigh.
        client_metadata_verify: Whom to trust for the https of client metadata documents: ``True``
            (the default) the public certificate authorities (certifi's bundle), a path to a PEM
            bundle of CA certificates (an internal CA), or an ``ssl.SSLContext``. Turning the check
            off (``False``) is refused: a document is trusted for the https origin it came from.
    """

    issues_tokens: Final = True
    """Marks an authorization server for the HTTP wing, which then serves its endpoints."""

    def __init__(
        self,
        *,
        upstream: OIDC,
        base_url: str,
        resource_url: str | None = None,
        scopes: Sequence[str] | None = None,
        signing_key: str | bytes | None = None,
        previous_signing_keys: Sequence[str | bytes] = (),
        encryption_key: str | bytes | list[str | bytes] | None = None,
        access_token_ttl: float = 3600.0,
        refresh_token_ttl: float = 30 * 24 * 3600.0,
        dynamic_registration: bool = True,
        client_metadata_documents: bool = True,
        allow_http_loopback: bool = False,
        allow_private_addresses: bool = False,
        client_metadata_timeout: float = 5.0,
        client_metadata_max_bytes: int = 16 * 1024,
        client_metadata_verify: bool | str | os.PathLike[str] | ssl.SSLContext = True,
    ) -> None:
        from ..jwt import require_extra  # noqa: PLC0415 - PyJWT and cryptography: the auth extra

        require_extra("jwt", "OAuthProxy")
        if not isinstance(upstream, OIDC):
            raise TypeError(f"OAuthProxy(upstream=...): give an identity provider like OIDC(...), not {upstream!r}")
        check_url(base_url, "OAuthProxy(base_url=...)", allow_http_loopback=True)
        parts = urlsplit(base_url)
        if parts.query or parts.path.rstrip("/"):
            raise ValueError(
                f"OAuthProxy(base_url={base_url!r}): give the server's origin (scheme, host, port) without a path"
            )
        self.upstream = upstream
        self.issuer = base_url.rstrip("/")
        self.resource_url = canonical_resource(resource_url or self.issuer + "/mcp")
        check_url(self.resource_url, "OAuthProxy(resource_url=...)", allow_http_loopback=True)
        self.scopes = tuple(scopes) if scopes is not None else None
        self.keys = SigningKeys.from_config(signing_key, previous_signing_keys)
        self.keys_generated = signing_key is None
        self.sealer = Sealer.from_config(encryption_key)
        self.sealer_generated = encryption_key is None
        self.access_token_ttl = access_token_ttl
        self.refresh_token_ttl = refresh_token_ttl
        self.dynamic_registration = dynamic_registration
        self.client_metadata_documents = client_metadata_documents
        self.documents = MetadataDocuments(
            allow_http_loopback=allow_http_loopback,
            allow_private_addresses=allow_private_addresses,
            max_bytes=client_metadata_max_bytes,
            timeout=client_metadata_timeout,
            verify=client_metadata_verify,
        )
        self.server_name = "this MCP server"
        self._grants: Grants | None = None
        self._verifier: JWTVerifier | None = None
        self._refreshing: dict[str, asyncio.Lock] = {}
        self.flow = AuthorizationFlow(self)
        self.token_issuer = TokenIssuer(self)

    def __repr__(self) -> str:
        return f"OAuthProxy({self.issuer!r}, upstream={self.upstream!r})"

    # --- wiring (the HTTP wing) ------------------------------------------------------------------

    @property
    def authorization_servers(self) -> list[str]:
        """What the protected resource metadata names: toolkit itself."""
        return [self.issuer]

    def url(self, path: str) -> str:
        return self.issuer + path

    def bind(self, store: Store, server_name: str | None = None) -> None:
        """Keep grants in ``store`` (the one the HTTP app serves with: memory, or Redis for replicas)."""
        if store.shared and (self.keys_generated or self.sealer_generated):
            raise ValueError(
                "OAuthProxy with a shared store (replicas) needs signing_key= and encryption_key=, the same for "
                "every replica: a key generated at start is this process's alone, and its tokens fail elsewhere"
            )
        self._grants = Grants(store.state())
        if server_name:
            self.server_name = server_name

    @property
    def grants(self) -> Grants:
        if self._grants is None:
            raise RuntimeError(
                "OAuthProxy is not serving yet: it keeps its grants in the HTTP app's store (server.http_app())"
            )
        return self._grants

    def metadata(self) -> dict[str, Any]:
        """The authorization server metadata (RFC 8414 §2), with MCP's client ID metadata document flag."""
        document: dict[str, Any] = {
            "issuer": self.issuer,
            "authorization_endpoint": self.url(AUTHORIZE),
            "token_endpoint": self.url(TOKEN),
            "revocation_endpoint": self.url(REVOKE),
            "jwks_uri": self.url(JWKS),
            "response_types_supported": ["code"],
            "response_modes_supported": ["query"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none", "client_secret_basic", "client_secret_post"],
            "revocation_endpoint_auth_methods_supported": ["none", "client_secret_basic", "client_secret_post"],
            "authorization_response_iss_parameter_supported": True,
            "client_id_metadata_document_supported": self.client_metadata_documents,
        }
        if self.dynamic_registration:
            document["registration_endpoint"] = self.url(REGISTER)
        if self.scopes is not None:
            document["scopes_supported"] = list(self.scopes)
        return document

    def openid_configuration(self) -> dict[str, Any]:
        """The same metadata as OpenID Connect Discovery 1.0 serves it (``/.well-known/openid-configuration``).

        MCP clients that find no RFC 8414 document try this one (MCP 2025-11-25, "Authorization
        Server Metadata Discovery"); some try it alone. It is RFC 8414's document (RFC 8414 §5 says
        they may be one) plus the two members OpenID Connect Discovery §3 requires and strict
        parsers (the TypeScript SDK's) insist on. toolkit issues access tokens only, no ID token:
        the signing algorithm named is its key's, the one its tokens are signed with.
        """
        return {
            **self.metadata(),
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": [self.keys.current.algorithm],
        }

    # --- the resource server's side --------------------------------------------------------------

    async def verify(self, token: str) -> AccessToken:
        """Check a token toolkit issued (the resource server calls this for every request)."""
        if self._verifier is None:
            from ..jwt import JWTVerifier  # noqa: PLC0415

            verifier = JWTVerifier(
                jwks_uri=self.url(JWKS), issuer=self.issuer, audience=self.resource_url, algorithms=("RS256", "ES256")
            )
            verifier.key_set = IssuedKeys(self.keys, self.url(JWKS))  # in process: no fetch of our own JWKS
            self._verifier = verifier
        return await self._verifier.verify(token)

    @property
    def leeway(self) -> float:
        return 30.0

    # --- the tools' side -------------------------------------------------------------------------

    async def upstream_token(self, access: AccessToken | None) -> str:
        """The caller's access token at the upstream provider, refreshed when it has expired.

        For a tool to call the provider's API on the user's behalf. ``UpstreamLoginRequired``
        when there is none to give (no caller, a revoked grant, a refused refresh).
        """
        token = await self.upstream_credentials(access)
        return token.access_token

    async def upstream_credentials(self, access: AccessToken | None) -> Token:
        """The caller's upstream ``Token`` (access token, expiry, scopes), refreshed when it has expired."""
        if access is None or not isinstance(access.claims.get("gid"), str) or access.claims.get("iss") != self.issuer:
            raise UpstreamLoginRequired("this request carries no token toolkit issued: no upstream login to use")
        grant_id: str = access.claims["gid"]
        token = await self._upstream_of(access, grant_id)
        if not token.expired(now=time.time()):
            return token
        # One refresh at a time per login, in the whole deployment: concurrent calls of one user would
        # otherwise each spend the same upstream refresh token, which a provider that rotates them takes
        # as theft (and revokes the login). In this process a lock; across replicas a lease in the store.
        lock = self._refreshing.setdefault(grant_id, asyncio.Lock())
        try:
            async with lock:
                holder = await self._refresh_lease(access, grant_id)
                if isinstance(holder, Token):
                    return holder  # another replica refreshed it meanwhile
                try:
                    token = await self._upstream_of(access, grant_id)  # another call may have refreshed it meanwhile
                    if not token.expired(now=time.time()):
                        return token
                    return await self._refresh(grant_id, token)
                finally:
                    await self.grants.release(f"refresh:{grant_id}", holder)
        finally:
            if not lock.locked() and self._refreshing.get(grant_id) is lock:
                del self._refreshing[grant_id]

    async def _refresh_lease(self, access: AccessToken, grant_id: str) -> str | Token:
        """The lease on refreshing ``grant_id``'s upstream token (its holder's secret), or the token
        another replica refreshed while this one waited for the lease."""
        ttl = self.upstream.timeout + REFRESH_LEASE_MARGIN  # the longest a refresh can take, and a margin
        while (holder := await self.grants.lease(f"refresh:{grant_id}", ttl=ttl)) is None:
            await asyncio.sleep(REFRESH_LEASE_POLL)  # another replica refreshes it now: its result is kept soon
            token = await self._upstream_of(access, grant_id)
            if not token.expired(now=time.time()):
                return token
        return holder

    async def _refresh(self, grant_id: str, token: Token) -> Token:
        try:
            token = await self.upstream.refresh(token)
        except TokenRequestFailed as exc:
            refused = f"the identity provider refused to refresh the login ({exc}): log in again"
            raise UpstreamLoginRequired(refused) from None
        grant = await self.grants.get("grant", grant_id)
        if grant is None:
            raise UpstreamLoginRequired("the login behind this token was revoked meanwhile: log in again")
        grant["upstream"] = self.sealer.seal(token.to_dict(), grant_id)
        await self.grants.put("grant", grant_id, grant, ttl=self.refresh_token_ttl)
        return token

    async def _upstream_of(self, access: AccessToken, grant_id: str) -> Token:
        grant = await self.grants.get("grant", grant_id)
        if grant is None or grant.get("subject") != access.subject or grant.get("client_id") != access.client_id:
            raise UpstreamLoginRequired("the login behind this token was revoked or has expired: log in again")
        opened = self.sealer.open(grant["upstream"], grant_id)
        if opened is None:
            raise UpstreamLoginRequired("the upstream tokens cannot be opened (encryption_key changed): log in again")
        return Token.from_dict(opened)

    # --- what both flows share -------------------------------------------------------------------

    async def client(self, client_id: str) -> DownstreamClient:
        """The client ``client_id`` names: a metadata document's URL, or a registered id; ``ClientRefused``."""
        if is_metadata_document_url(client_id):
            if not self.client_metadata_documents:
                raise ClientRefused("this server does not accept client ID metadata documents (a URL as client_id)")
            return await self.documents.client(client_id)
        record = await self.grants.get("client", fingerprint(client_id)) if len(client_id) <= 200 else None
        if record is None:
            raise ClientRefused(f"unknown client_id {client_id!r}: register it first (or use a client metadata URL)")
        return DownstreamClient.from_record(record)

    def check_resource(self, resource: str | None) -> str:
        """The resource a request names (RFC 8707), which must be this server's MCP endpoint."""
        if resource is None:
            return self.resource_url
        try:
            if canonical_resource(resource) == self.resource_url and not urlsplit(resource).fragment:
                return self.resource_url
        except ValueError:
            pass
        raise ValueError(f"resource {resource!r} is not this server's MCP endpoint ({self.resource_url})")

    def granted_scopes(self, requested: str | None) -> tuple[str, ...]:
        """The scopes to grant for a request's ``scope``: those offered (all of them when none were asked)."""
        asked = tuple(dict.fromkeys((requested or "").split()))
        if self.scopes is None:
            return tuple(scope for scope in asked if scope != "offline_access")
        if not asked:
            return self.scopes
        return tuple(scope for scope in asked if scope in self.scopes)
