"""OAuth 2.1 as MCP uses it, for both sides: discovery documents and their checks, PKCE, tokens.

What an MCP client (``_client/oauth/``) and the authorization-server side both need, with no
HTTP client in it:

- ``errors``: ``OAuthError`` and what it narrows to (``InsecureURL``, ``MetadataRefused``, ...).
- ``urls``: ``check_url`` (https, or http on loopback when allowed: MCP "Communication
  Security"), the canonical resource of an MCP endpoint (RFC 8707), whether a metadata
  ``resource`` names it (RFC 9728 §3.3), the well-known URLs in the spec's order.
- ``challenge``: the ``Bearer`` challenge of a 401/403 (RFC 6750 §3), scopes and their union.
- ``metadata``: protected resource metadata (RFC 9728) and authorization server metadata
  (RFC 8414 / OpenID Connect Discovery), each checked before use (resource, issuer, PKCE S256,
  safe endpoints).
- ``authorization``: PKCE S256 (RFC 7636), ``state``, the authorization response and its
  ``iss`` (RFC 9207).
- ``credentials``: ``Token`` (a token response, RFC 6749 §5) and ``ClientRegistration``
  (RFC 7591), both storable as JSON.
"""

from .authorization import authorization_code, new_code_verifier, new_state, s256_challenge, same_endpoint, with_query
from .challenge import Challenge, parse_challenge, parse_scope, scope_union
from .credentials import ClientRegistration, Token, token_error
from .errors import (
    AccessDenied,
    AuthorizationFailed,
    InsecureURL,
    MetadataRefused,
    OAuthError,
    RegistrationFailed,
    TokenRequestFailed,
)
from .metadata import MAX_DOCUMENT_BYTES, AuthorizationServerMetadata, ProtectedResourceMetadata
from .urls import (
    OAUTH_WELL_KNOWN,
    OPENID_WELL_KNOWN,
    PROTECTED_RESOURCE_WELL_KNOWN,
    authorization_server_metadata_urls,
    canonical_resource,
    check_client_metadata_url,
    check_url,
    is_loopback,
    protected_resource_metadata_urls,
    resource_covers,
)

__all__ = [
    "MAX_DOCUMENT_BYTES",
    "OAUTH_WELL_KNOWN",
    "OPENID_WELL_KNOWN",
    "PROTECTED_RESOURCE_WELL_KNOWN",
    "AccessDenied",
    "AuthorizationFailed",
    "AuthorizationServerMetadata",
    "Challenge",
    "ClientRegistration",
    "InsecureURL",
    "MetadataRefused",
    "OAuthError",
    "ProtectedResourceMetadata",
    "RegistrationFailed",
    "Token",
    "TokenRequestFailed",
    "authorization_code",
    "authorization_server_metadata_urls",
    "canonical_resource",
    "check_client_metadata_url",
    "check_url",
    "is_loopback",
    "new_code_verifier",
    "new_state",
    "parse_challenge",
    "parse_scope",
    "protected_resource_metadata_urls",
    "resource_covers",
    "s256_challenge",
    "same_endpoint",
    "scope_union",
    "token_error",
    "with_query",
]
