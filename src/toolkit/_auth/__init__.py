"""Authorization: toolkit as an OAuth 2.1 resource server (MCP basic/authorization).

- ``tokens``: ``AccessToken``, the ``TokenVerifier`` protocol, scope parsing and implied scopes.
- ``jwt``: ``JWTVerifier`` (PyJWT + cryptography), over ``jwks``: the key set fetched over HTTP.
- ``introspection``: ``IntrospectionVerifier`` (RFC 7662, httpx).
- ``resource``: ``ResourceServer``: authenticate a request, check its scopes, describe the
  resource (RFC 9728) and word the challenges (RFC 6750).

Transport-free and below the engine: the HTTP wing asks it about each request, the engine
uses ``AccessToken`` for ``ctx.access_token``, list filtering and binding state to the caller.
"""
