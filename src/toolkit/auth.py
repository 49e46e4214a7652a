"""Authorization for HTTP servers: verify bearer tokens, protect tools with scopes, or issue the tokens.

>>> from toolkit import Server
>>> from toolkit.auth import JWTVerifier
>>> server = Server(
...     "secure",
...     auth=JWTVerifier(jwks_uri="https://auth.example.com/jwks", issuer="https://auth.example.com",
...                      audience="https://mcp.example.com/mcp"),
...     authorization_servers=["https://auth.example.com"],
... )

Or toolkit as the authorization server, users logging in with an OpenID Connect provider (or a
preset: ``Google``, ``GitHub``, ``Entra``, ``Auth0``, ``Keycloak``):

>>> from toolkit.auth import OIDC, OAuthProxy
>>> server = Server("secure", auth=OAuthProxy(
...     upstream=OIDC("https://accounts.example.com", client_id="...", client_secret="..."),
...     base_url="https://mcp.example.com",
... ))

See docs/authorization.md. All of it needs ``pip install 'toolkit-mcp[auth]'``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from ._auth.introspection import IntrospectionVerifier
from ._auth.jwt import JWTVerifier
from ._auth.tokens import AccessToken, InvalidToken, TokenVerifier, VerifierUnavailable
from ._context import Context
from ._depends import Depends

if TYPE_CHECKING:
    from ._auth.server.github import GitHub
    from ._auth.server.paths import UpstreamLoginRequired
    from ._auth.server.presets import Auth0, Entra, Google, Keycloak
    from ._auth.server.proxy import OAuthProxy
    from ._auth.server.upstream import OIDC

__all__ = [
    "OIDC",
    "AccessToken",
    "Auth0",
    "Entra",
    "GitHub",
    "Google",
    "IntrospectionVerifier",
    "InvalidToken",
    "JWTVerifier",
    "Keycloak",
    "OAuthProxy",
    "TokenVerifier",
    "UpstreamLoginRequired",
    "UpstreamToken",
    "VerifierUnavailable",
]

_LAZY = {
    "Auth0": "._auth.server.presets",
    "Entra": "._auth.server.presets",
    "GitHub": "._auth.server.github",
    "Google": "._auth.server.presets",
    "Keycloak": "._auth.server.presets",
    "OAuthProxy": "._auth.server.proxy",
    "OIDC": "._auth.server.upstream",
    "UpstreamLoginRequired": "._auth.server.paths",
}


def __getattr__(name: str) -> Any:
    """The authorization server's names, imported on first use (a resource server never loads them)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'toolkit.auth' has no attribute {name!r}")
    import importlib  # noqa: PLC0415

    value = getattr(importlib.import_module(module, __name__.rpartition(".")[0]), name)
    globals()[name] = value
    return value


async def _upstream_token(ctx: Context) -> str:
    proxy = getattr(getattr(ctx.server, "resource_server", None), "verifier", None)
    if not getattr(proxy, "issues_tokens", False):
        raise LookupError("UpstreamToken needs Server(auth=OAuthProxy(...)): only then do callers log in upstream")
    token: str = await proxy.upstream_token(ctx.access_token)  # type: ignore[union-attr]
    return token


UpstreamToken = Annotated[str, Depends(_upstream_token)]
"""The caller's access token at the upstream identity provider (``Server(auth=OAuthProxy(...))``), refreshed
when it has expired: ``async def me(token: UpstreamToken)`` calls the provider's API as the user. Never sent
to the MCP client. Without one (a revoked login, stdio), the call fails with ``UpstreamLoginRequired``'s message."""
