"""toolkit as an OAuth 2.1 authorization server for MCP clients, delegating the login upstream.

Transport-free, like the resource server beside it; the HTTP wing serves it
(``_transports/http/authserver.py``):

- ``keys``: toolkit's signing keys (the current one signs, previous ones stay published), the
  JWKS document, and the key set the resource server checks toolkit's own tokens with.
- ``grants``: authorization requests in flight, codes, refresh-token families and the upstream
  tokens (sealed), all in the server's ``StateStore``, so any replica finishes what another began.
- ``clients``: who the downstream clients are: dynamically registered (RFC 7591) or named by a
  client ID metadata document, fetched with SSRF protections.
- ``upstream``: the identity provider the user logs in with (generic OpenID Connect).
- ``proxy``: ``OAuthProxy``, the flows themselves: authorize, consent, the upstream callback,
  the token endpoint, revocation, and the verifier of the tokens it issues.
"""
