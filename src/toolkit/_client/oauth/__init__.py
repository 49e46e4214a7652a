"""OAuth 2.1 for MCP clients: ``httpx.AsyncClient(auth=OAuth())`` signs in on the first 401.

- ``flow``: ``OAuth``, the ``httpx.Auth``: discovery, registration, the grants, refresh, step-up.
- ``storage``: ``TokenStorage`` and its two built-ins, ``MemoryTokenStorage`` and ``FileTokenStorage``.
- ``browser``: ``LoopbackBrowser``, the default user-agent step (the system browser, and a
  one-shot listener on 127.0.0.1 for the redirect).

The checks the flow makes live in ``_auth/oauth/``, shared with the authorization-server side.
"""

from ..._auth.oauth import (
    AccessDenied,
    AuthorizationFailed,
    InsecureURL,
    MetadataRefused,
    OAuthError,
    RegistrationFailed,
    TokenRequestFailed,
)
from .browser import LoopbackBrowser, UserAgent
from .flow import OAuth
from .storage import FileTokenStorage, MemoryTokenStorage, TokenStorage

__all__ = [
    "AccessDenied",
    "AuthorizationFailed",
    "FileTokenStorage",
    "InsecureURL",
    "LoopbackBrowser",
    "MemoryTokenStorage",
    "MetadataRefused",
    "OAuth",
    "OAuthError",
    "RegistrationFailed",
    "TokenRequestFailed",
    "TokenStorage",
    "UserAgent",
]
