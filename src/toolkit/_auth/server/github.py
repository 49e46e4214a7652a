"""GitHub as the identity provider: OAuth 2.0, not OpenID Connect.

What GitHub documents ("Authorizing OAuth apps", "Generating a user access token for a GitHub
App", "Refreshing user access tokens"), and what that changes here:

- Fixed endpoints, no discovery: ``{base_url}/login/oauth/authorize`` and
  ``{base_url}/login/oauth/access_token``; the REST API at ``https://api.github.com`` (GitHub
  Enterprise Server: ``{base_url}/api/v3``).
- No ID token and no ``nonce``: who logged in is ``GET {api}/user`` asked with the new token.
  The subject is the account's numeric ``id`` (as a string): a ``login`` can be renamed and then
  taken by someone else; the ``login`` stays in the claims.
- The token endpoint answers JSON only when asked (``Accept: application/json``), and answers
  its errors (``bad_verification_code``, ``incorrect_client_credentials``, ...) with status 200:
  ``OIDC._token_request`` takes an ``error`` member for an error whatever the status.
- Scopes are granted as a comma-separated ``scope``.
- PKCE: S256 only (supported since July 2025; toolkit always sends it).
- Tokens are opaque. An OAuth app's do not expire (until revoked or unused for a year) and come
  without a refresh token; a GitHub App's, with "expire user authorization tokens" on, expire
  after eight hours and come with a refresh token (six months), replaced at every refresh. Both
  work: the first is never refreshed, the second is refreshed when it has expired.
- No ``iss`` in the authorization response (RFC 9207): the callback is bound by ``state`` and
  the browser cookie alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from ..oauth import AuthorizationServerMetadata, OAuthError, Token, check_url
from .upstream import OIDC, Identity

GITHUB: Final = "https://github.com"
GITHUB_API: Final = "https://api.github.com"
DEFAULT_GITHUB_SCOPES: Final = ("read:user", "user:email")
API_VERSION: Final = "2022-11-28"
"""The REST API version asked for (``X-GitHub-Api-Version``)."""


class GitHub(OIDC):
    """GitHub accounts: ``OAuthProxy(upstream=GitHub(client_id, client_secret), ...)``.

    An ``OIDC`` in how ``OAuthProxy`` uses it (one confidential client, the code flow with PKCE
    and ``state``, refresh), with GitHub's fixed endpoints and its user API instead of discovery
    and an ID token.

    Args:
        client_id: The OAuth app's (or GitHub App's) Client ID.
        client_secret: A client secret generated there.
        scopes: OAuth scopes (an OAuth app's; a GitHub App's permissions are set on the app and
            it ignores these). ``read:user`` and ``user:email`` by default: enough to know who
            logged in. Add ``repo`` and the like for tools to act on the user's behalf.
        base_url: GitHub Enterprise Server's URL (``https://github.example.com``) instead of
            github.com.
        api_url: The REST API's URL: ``https://api.github.com`` for github.com, else
            ``{base_url}/api/v3``.
        authorization_params: More of GitHub's parameters (``login``, ``allow_signup``, ``prompt``).
        allow_http_loopback: Accept http URLs on a loopback host (tests against a stand-in).
        timeout: Seconds a request to GitHub may take.
    """

    required_scopes = ()

    def __init__(
        self,
        client_id: str,
        client_secret: str,
        *,
        scopes: Sequence[str] = DEFAULT_GITHUB_SCOPES,
        base_url: str = GITHUB,
        api_url: str | None = None,
        authorization_params: Mapping[str, str] | None = None,
        allow_http_loopback: bool = False,
        timeout: float = 10.0,
    ) -> None:
        base = check_url(base_url, "GitHub(base_url=...)", allow_http_loopback=allow_http_loopback).rstrip("/")
        super().__init__(
            base,
            client_id,
            client_secret,
            scopes=scopes,
            authorization_params=authorization_params,
            allow_http_loopback=allow_http_loopback,
            timeout=timeout,
        )
        api = api_url if api_url is not None else (GITHUB_API if base == GITHUB else f"{base}/api/v3")
        self.api_url = check_url(api, "GitHub(api_url=...)", allow_http_loopback=allow_http_loopback).rstrip("/")
        self.user_url = f"{self.api_url}/user"
        self._endpoints = AuthorizationServerMetadata(
            issuer=base,
            authorization_endpoint=f"{base}/login/oauth/authorize",
            token_endpoint=f"{base}/login/oauth/access_token",
            registration_endpoint=None,
            scopes_supported=None,
            token_endpoint_auth_methods_supported=("client_secret_post",),
            client_id_metadata_document_supported=False,
            authorization_response_iss_parameter_supported=False,
            document={},
        )

    async def metadata(self) -> AuthorizationServerMetadata:
        """GitHub's endpoints, as a discovery document would give them (nothing is fetched)."""
        return self._endpoints

    def authorization_parameters(
        self, *, redirect_uri: str, state: str, code_challenge: str, nonce: str
    ) -> dict[str, str]:
        """GitHub's parameters: no ``response_type`` (the code flow is the only one), no ``nonce``."""
        parameters = super().authorization_parameters(
            redirect_uri=redirect_uri, state=state, code_challenge=code_challenge, nonce=nonce
        )
        del parameters["response_type"], parameters["nonce"]
        return parameters

    def read_token(self, document: object, *, previous: Token | None) -> tuple[Token, str | None]:
        """GitHub's token response, its comma-separated ``scope`` made a list; never an ID token."""
        if isinstance(document, dict) and isinstance(document.get("scope"), str):
            document = {**document, "scope": " ".join(document["scope"].replace(",", " ").split())}
        token, _ = super().read_token(document, previous=previous)
        return token, None

    async def identity(self, token: Token, id_token: str | None, *, nonce: str) -> Identity:
        """Who logged in: ``GET {api}/user`` with the new token; the subject is the account's ``id``."""
        headers = {
            "authorization": f"Bearer {token.access_token}",
            "accept": "application/vnd.github+json",
            "x-github-api-version": API_VERSION,
        }
        status, user = await self._send("GET", self.user_url, "user API", headers=headers)
        if status != 200 or not isinstance(user, dict):
            raise OAuthError(f"GitHub's {self.user_url} answered {status}: who logged in is unknown")
        account = user.get("id")
        if not isinstance(account, int) or isinstance(account, bool) or not isinstance(user.get("login"), str):
            raise OAuthError(f"GitHub's {self.user_url} answered without an account id and login")
        return Identity(str(account), user)
