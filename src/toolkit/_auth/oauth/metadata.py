"""The two discovery documents, checked before anything in them is used (RFC 9728, RFC 8414 / OIDC)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from .errors import MetadataRefused
from .urls import check_url, resource_covers

MAX_DOCUMENT_BYTES: Final = 256 * 1024
"""The most a metadata, registration or token response may weigh: real ones are a few KiB."""


def _strings(document: Mapping[str, Any], name: str) -> tuple[str, ...] | None:
    value = document.get(name)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise MetadataRefused(f"{name} must be a list of strings, got {value!r}")
    return tuple(value)


@dataclass(frozen=True, slots=True)
class ProtectedResourceMetadata:
    """A checked RFC 9728 document: its ``resource`` names the server and its servers are safe URLs."""

    resource: str
    authorization_servers: tuple[str, ...]
    scopes_supported: tuple[str, ...] | None
    document: Mapping[str, Any] = field(repr=False)

    @classmethod
    def parse(
        cls, document: object, *, server_url: str, source: str, allow_http_loopback: bool = False
    ) -> ProtectedResourceMetadata:
        """Check ``document`` (fetched from ``source``) against the server the client is calling.

        RFC 9728 §3.3: a document whose ``resource`` does not name the server MUST NOT be used
        (it would let one server send the client's login to another's authorization server).
        """
        if not isinstance(document, dict):
            raise MetadataRefused(f"the protected resource metadata at {source} is not a JSON object")
        resource = document.get("resource")
        if not isinstance(resource, str) or not resource_covers(resource, server_url):
            raise MetadataRefused(
                f"the protected resource metadata at {source} is for {resource!r}, not {server_url} "
                "(RFC 9728 §3.3); refusing to use it"
            )
        servers = _strings(document, "authorization_servers")
        if not servers:
            raise MetadataRefused(f"the protected resource metadata at {source} names no authorization_servers")
        for server in servers:
            check_url(server, f"authorization server of {source}", allow_http_loopback=allow_http_loopback)
        return cls(resource, servers, _strings(document, "scopes_supported"), document)


@dataclass(frozen=True, slots=True)
class AuthorizationServerMetadata:
    """A checked RFC 8414 / OpenID document: issued by the issuer asked for, PKCE S256, safe endpoints."""

    issuer: str
    authorization_endpoint: str | None
    token_endpoint: str
    registration_endpoint: str | None
    scopes_supported: tuple[str, ...] | None
    token_endpoint_auth_methods_supported: tuple[str, ...]
    client_id_metadata_document_supported: bool
    authorization_response_iss_parameter_supported: bool
    document: Mapping[str, Any] = field(repr=False)

    @classmethod
    def parse(
        cls, document: object, *, issuer: str, source: str, allow_http_loopback: bool = False
    ) -> AuthorizationServerMetadata:
        """Check ``document`` (fetched from ``source``, built from ``issuer``).

        RFC 8414 §3.3 / OIDC Discovery §4.3: ``issuer`` identical to the one the URL was built
        from (a simple string comparison). MCP security considerations: refuse to proceed without
        ``S256`` in ``code_challenge_methods_supported``. Every endpoint is a safe URL.
        """
        if not isinstance(document, dict):
            raise MetadataRefused(f"the authorization server metadata at {source} is not a JSON object")
        if document.get("issuer") != issuer:
            raise MetadataRefused(
                f"the authorization server metadata at {source} names the issuer {document.get('issuer')!r}, "
                f"not {issuer!r} (RFC 8414 §3.3); refusing to use it"
            )
        methods = _strings(document, "code_challenge_methods_supported") or ()
        if "S256" not in methods:
            raise MetadataRefused(
                f"the authorization server {issuer} does not list S256 in code_challenge_methods_supported "
                f"(it lists {list(methods)}); MCP clients must refuse an authorization server without PKCE S256"
            )

        def endpoint(name: str, *, required: bool = False) -> str | None:
            value = document.get(name)
            if value is None and not required:
                return None
            if value is None:
                raise MetadataRefused(f"the authorization server metadata at {source} has no {name}")
            return check_url(value, f"{name} of {issuer}", allow_http_loopback=allow_http_loopback)

        token_endpoint = endpoint("token_endpoint", required=True)
        assert token_endpoint is not None
        return cls(
            issuer=issuer,
            authorization_endpoint=endpoint("authorization_endpoint"),
            token_endpoint=token_endpoint,
            registration_endpoint=endpoint("registration_endpoint"),
            scopes_supported=_strings(document, "scopes_supported"),
            # RFC 8414 §2: absent means client_secret_basic.
            token_endpoint_auth_methods_supported=_strings(document, "token_endpoint_auth_methods_supported")
            or ("client_secret_basic",),
            client_id_metadata_document_supported=document.get("client_id_metadata_document_supported") is True,
            authorization_response_iss_parameter_supported=(
                document.get("authorization_response_iss_parameter_supported") is True
            ),
            document=document,
        )
