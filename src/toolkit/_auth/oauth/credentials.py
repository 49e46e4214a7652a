"""What a flow ends with: tokens (RFC 6749 §5) and client registrations (RFC 7591), storable as JSON."""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .challenge import parse_scope
from .errors import RegistrationFailed, TokenRequestFailed


@dataclass(frozen=True, slots=True)
class Token:
    """An access token as issued (RFC 6749 §5.1), with its expiry made absolute.

    ``scopes`` is what was granted (the response's ``scope``, else what was asked: RFC 6749 §5.1);
    ``issuer`` and ``client_id`` bind it to who issued it and to whom. ``repr`` hides the secrets.
    """

    access_token: str = field(repr=False)
    token_type: str = "Bearer"
    expires_at: float | None = None
    refresh_token: str | None = field(default=None, repr=False)
    scopes: tuple[str, ...] = ()
    issuer: str | None = None
    client_id: str | None = None

    @classmethod
    def from_response(
        cls,
        document: object,
        *,
        requested_scopes: Iterable[str] = (),
        previous: Token | None = None,
        issuer: str | None = None,
        client_id: str | None = None,
        now: float | None = None,
    ) -> Token:
        """A token from a successful token response; ``previous`` (a refresh) lends its refresh token
        and scopes when the response leaves them out (RFC 6749 §6)."""
        if not isinstance(document, dict):
            raise TokenRequestFailed("the token endpoint answered something that is not a JSON object")
        access_token, token_type = document.get("access_token"), document.get("token_type")
        if not isinstance(access_token, str) or not access_token:
            raise TokenRequestFailed("the token response has no access_token")
        if not isinstance(token_type, str) or token_type.lower() != "bearer":
            raise TokenRequestFailed(f"the token response's token_type is {token_type!r}, not Bearer")
        expires_in = document.get("expires_in")
        if isinstance(expires_in, str) and expires_in.isdigit():  # some servers send it as a string
            expires_in = int(expires_in)
        expires_at = None
        if isinstance(expires_in, int | float) and not isinstance(expires_in, bool) and expires_in >= 0:
            expires_at = (time.time() if now is None else now) + float(expires_in)
        refresh = document.get("refresh_token")
        kept_refresh = previous.refresh_token if previous is not None else None
        scope = document.get("scope")
        scopes = parse_scope(scope) if isinstance(scope, str) else tuple(requested_scopes)
        if not isinstance(scope, str) and not scopes and previous is not None:
            scopes = previous.scopes
        return cls(
            access_token=access_token,
            token_type="Bearer",
            expires_at=expires_at,
            refresh_token=refresh if isinstance(refresh, str) and refresh else kept_refresh,
            scopes=scopes,
            issuer=issuer,
            client_id=client_id,
        )

    def expired(self, *, leeway: float = 30.0, now: float | None = None) -> bool:
        """Whether it expires within ``leeway`` seconds (a token about to expire is refreshed first)."""
        if self.expires_at is None:
            return False
        return (time.time() if now is None else now) + leeway >= self.expires_at

    def to_dict(self) -> dict[str, Any]:
        return {
            "access_token": self.access_token,
            "token_type": self.token_type,
            "expires_at": self.expires_at,
            "refresh_token": self.refresh_token,
            "scopes": list(self.scopes),
            "issuer": self.issuer,
            "client_id": self.client_id,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Token:
        """A stored token; ``ValueError`` if ``data`` is not one."""
        access_token = data.get("access_token")
        if not isinstance(access_token, str):
            raise ValueError("a stored token has no access_token")
        expires_at = data.get("expires_at")
        return cls(
            access_token=access_token,
            expires_at=float(expires_at) if isinstance(expires_at, int | float) else None,
            refresh_token=_text(data, "refresh_token"),
            scopes=_texts(data, "scopes"),
            issuer=_text(data, "issuer"),
            client_id=_text(data, "client_id"),
        )


def token_error(document: object, status: int) -> TokenRequestFailed:
    """What a refused token request says (RFC 6749 §5.2): its ``error`` and description, nothing else."""
    error = document.get("error") if isinstance(document, dict) else None
    description = document.get("error_description") if isinstance(document, dict) else None
    if not isinstance(error, str):
        return TokenRequestFailed(f"the token endpoint answered HTTP {status}")
    detail = f" ({description})" if isinstance(description, str) else ""
    return TokenRequestFailed(f"the token endpoint refused the grant: {error}{detail}", error=error)


@dataclass(frozen=True, slots=True)
class ClientRegistration:
    """A client id at one authorization server (``issuer``), with its secret if it has one.

    MCP "Authorization Server Binding": a registration belongs to the issuer that made it and is
    never presented to another.
    """

    client_id: str
    client_secret: str | None = field(default=None, repr=False)
    token_endpoint_auth_method: str = "none"
    issuer: str | None = None
    redirect_uris: tuple[str, ...] = ()

    @classmethod
    def from_response(cls, document: object, *, issuer: str) -> ClientRegistration:
        """A dynamic registration's answer (RFC 7591 §3.2.1), checked usable by this client."""
        if not isinstance(document, dict) or not isinstance(document.get("client_id"), str):
            raise RegistrationFailed(f"the registration response of {issuer} has no client_id")
        secret = document.get("client_secret")
        method = document.get("token_endpoint_auth_method") or ("client_secret_basic" if secret else "none")
        if method not in ("none", "client_secret_basic", "client_secret_post"):
            raise RegistrationFailed(f"{issuer} registered the client for {method!r}, which this client cannot use")
        if method != "none" and not isinstance(secret, str):
            raise RegistrationFailed(f"{issuer} registered the client for {method!r} but issued no client_secret")
        redirect_uris = document.get("redirect_uris") or ()
        return cls(
            client_id=document["client_id"],
            client_secret=secret if isinstance(secret, str) else None,
            token_endpoint_auth_method=method,
            issuer=issuer,
            redirect_uris=tuple(u for u in redirect_uris if isinstance(u, str)),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "client_id": self.client_id,
            "client_secret": self.client_secret,
            "token_endpoint_auth_method": self.token_endpoint_auth_method,
            "issuer": self.issuer,
            "redirect_uris": list(self.redirect_uris),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ClientRegistration:
        client_id = data.get("client_id")
        if not isinstance(client_id, str):
            raise ValueError("a stored client registration has no client_id")
        return cls(
            client_id=client_id,
            client_secret=_text(data, "client_secret"),
            token_endpoint_auth_method=_text(data, "token_endpoint_auth_method") or "none",
            issuer=_text(data, "issuer"),
            redirect_uris=_texts(data, "redirect_uris"),
        )


def _text(data: Mapping[str, Any], name: str) -> str | None:
    """A stored string, or None (a stored document is read leniently: it may predate a field)."""
    value = data.get(name)
    return value if isinstance(value, str) else None


def _texts(data: Mapping[str, Any], name: str) -> tuple[str, ...]:
    value = data.get(name)
    return tuple(item for item in value if isinstance(item, str)) if isinstance(value, list) else ()
