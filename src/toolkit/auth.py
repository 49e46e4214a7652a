"""Authorization for HTTP servers: verify bearer tokens, protect tools with scopes.

>>> from toolkit import Server
>>> from toolkit.auth import JWTVerifier
>>> server = Server(
...     "secure",
...     auth=JWTVerifier(jwks_uri="https://auth.example.com/jwks", issuer="https://auth.example.com",
...                      audience="https://mcp.example.com/mcp"),
...     authorization_servers=["https://auth.example.com"],
... )

See docs/authorization.md. ``JWTVerifier`` and ``IntrospectionVerifier`` need
``pip install 'toolkit-mcp[auth]'``.
"""

from ._auth.introspection import IntrospectionVerifier
from ._auth.jwt import JWTVerifier
from ._auth.tokens import AccessToken, InvalidToken, TokenVerifier, VerifierUnavailable

__all__ = [
    "AccessToken",
    "IntrospectionVerifier",
    "InvalidToken",
    "JWTVerifier",
    "TokenVerifier",
    "VerifierUnavailable",
]
