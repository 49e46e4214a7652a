"""Where the authorization server's endpoints live (under its issuer), and the one error tools see."""

from __future__ import annotations

import hashlib
from typing import Final

from ..._errors import ToolError

AUTHORIZE: Final = "/authorize"
CONSENT: Final = "/authorize/consent"
CALLBACK: Final = "/authorize/callback"
TOKEN: Final = "/token"
REVOKE: Final = "/revoke"
REGISTER: Final = "/register"
JWKS: Final = "/jwks"
METADATA: Final = "/.well-known/oauth-authorization-server"
CSRF_COOKIE: Final = "toolkit_consent"
BROWSER_COOKIE: Final = "toolkit_login"


def cookie_name(base: str, secret: str) -> str:
    """A cookie per flow (two sign-ins in two tabs must not overwrite each other's), named by a hash."""
    return f"{base}_{hashlib.sha256(secret.encode()).hexdigest()[:16]}"


class UpstreamLoginRequired(ToolError):
    """The caller's upstream tokens are gone (revoked, expired, refused on refresh): log in again.

    A ``ToolError``: raised in a tool (or by ``UpstreamToken``), the caller sees the message.
    """
