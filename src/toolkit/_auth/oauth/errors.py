"""What goes wrong in an OAuth flow: one small hierarchy, each named for what was refused."""

from __future__ import annotations

from ..._errors import ToolkitError


class OAuthError(ToolkitError):
    """The OAuth flow cannot go on; the message says what was refused and what to do.

    ``error`` is the RFC 6749 error code when a server gave one (``invalid_scope``, ...).
    Messages never carry tokens, codes or secrets.
    """

    def __init__(self, message: str, *, error: str | None = None) -> None:
        super().__init__(message)
        self.error = error


class InsecureURL(OAuthError):
    """A URL that is neither https nor, where allowed, http on a loopback host (or not a URL at all)."""


class MetadataRefused(OAuthError):
    """A discovery document is missing, or fails a check the spec makes (resource, issuer, PKCE)."""


class RegistrationFailed(OAuthError):
    """No client id: registration was refused, or none of the ways to get one is available."""


class AuthorizationFailed(OAuthError):
    """The authorization step failed: the user agent, ``state``, ``iss``, or an error from the server."""


class TokenRequestFailed(OAuthError):
    """The token endpoint refused the grant, or answered something that is not a bearer token."""


class AccessDenied(OAuthError):
    """The resource server still refuses after the bounded number of new tokens."""
