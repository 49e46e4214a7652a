"""The ``toolkit run`` and ``toolkit proxy`` flags for authorization over HTTP: JWT bearer tokens of
another authorization server, or toolkit as the authorization server (``OAuthProxy``). Each flag
has an environment variable (``_loader.AUTH_ENVIRONMENT``), which is where workers find them."""

from __future__ import annotations

import argparse
import os
from typing import Any, Final

from ._loader import AUTH_ENVIRONMENT


def auth_options(command: argparse.ArgumentParser) -> None:
    """``run`` and ``proxy`` over HTTP: the flags that require JWT bearer tokens, or make toolkit the issuer."""
    auth = command.add_argument_group(
        "authorization (HTTP)", "Require JWT bearer tokens; each flag also reads its environment variable."
    )
    auth.add_argument("--auth-jwks-uri", metavar="URL", help="the authorization server's JWKS ($TOOLKIT_AUTH_JWKS_URI)")
    auth.add_argument("--auth-issuer", metavar="URL", help="the tokens' expected iss ($TOOLKIT_AUTH_ISSUER)")
    auth.add_argument(
        "--auth-audience",
        metavar="URL",
        help="the tokens' expected aud; default --resource-url ($TOOLKIT_AUTH_AUDIENCE)",
    )
    auth.add_argument(
        "--authorization-server",
        metavar="URL",
        action="append",
        help="issuer clients get tokens from, repeatable; default --auth-issuer ($TOOLKIT_AUTH_AUTHORIZATION_SERVERS)",
    )
    auth.add_argument("--resource-url", metavar="URL", help="this server's canonical URL ($TOOLKIT_RESOURCE_URL)")
    auth.add_argument(
        "--required-scope", metavar="SCOPE", action="append", help="scope every request needs, repeatable"
    )
    _oauth_proxy_options(command)


OAUTH_PROXY_SECRET_FLAGS: Final = {
    "--oauth-proxy-client-secret": ("TOOLKIT_OAUTH_PROXY_CLIENT_SECRET", "--oauth-proxy-client-secret-file"),
    "--oauth-proxy-signing-key": ("TOOLKIT_OAUTH_PROXY_SIGNING_KEY", "--oauth-proxy-signing-key-file"),
    "--oauth-proxy-previous-signing-keys": (
        "TOOLKIT_OAUTH_PROXY_PREVIOUS_SIGNING_KEYS",
        "--oauth-proxy-previous-signing-keys-file",
    ),
    "--oauth-proxy-encryption-key": ("TOOLKIT_OAUTH_PROXY_ENCRYPTION_KEY", "--oauth-proxy-encryption-key-file"),
}
"""The secrets no flag takes: what to give instead (argparse would otherwise read ``--oauth-proxy-client-secret
S3CRET`` as an abbreviation of ``--oauth-proxy-client-secret-file`` and name the secret as a missing file)."""


class _SecretOnCommandLine(argparse.Action):
    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        variable, file_flag = OAUTH_PROXY_SECRET_FLAGS[self.option_strings[0]]
        parser.error(
            f"{self.option_strings[0]}: secrets are not taken on the command line (anyone on the machine can read "
            f"it in the process list); set ${variable}, or give {file_flag} PATH"
        )


def _oauth_proxy_options(command: argparse.ArgumentParser) -> None:
    """The flags making toolkit the authorization server for MCP clients (``OAuthProxy``)."""
    proxy = command.add_argument_group(
        "authorization server (HTTP): toolkit issues the tokens, users log in at an identity provider",
        "Each flag also reads its environment variable. The client secret, signing key and encryption key are "
        "never taken on the command line, where anyone on the machine can read them: set "
        "$TOOLKIT_OAUTH_PROXY_CLIENT_SECRET, $TOOLKIT_OAUTH_PROXY_SIGNING_KEY (PEM) and "
        "$TOOLKIT_OAUTH_PROXY_ENCRYPTION_KEY (base64 of 32 bytes), or give the files below. Not with the JWT "
        "flags above.",
    )
    proxy.add_argument(
        "--oauth-proxy-provider",
        choices=("oidc", "google", "github", "entra", "auth0", "keycloak"),
        help="the identity provider users log in at (default oidc) ($TOOLKIT_OAUTH_PROXY_PROVIDER)",
    )
    proxy.add_argument(
        "--oauth-proxy-issuer",
        metavar="URL",
        help="oidc: the provider's issuer, found by discovery; http only on loopback ($TOOLKIT_OAUTH_PROXY_ISSUER)",
    )
    proxy.add_argument(
        "--oauth-proxy-tenant",
        metavar="TENANT",
        help="entra: the tenant (default common) ($TOOLKIT_OAUTH_PROXY_TENANT)",
    )
    proxy.add_argument(
        "--oauth-proxy-allowed-tenant",
        metavar="ID",
        action="append",
        help="entra, with a tenant of common or organizations: a tenant id whose users may log in, repeatable; "
        "default any ($TOOLKIT_OAUTH_PROXY_ALLOWED_TENANTS)",
    )
    proxy.add_argument(
        "--oauth-proxy-domain", metavar="DOMAIN", help="auth0: the tenant's domain ($TOOLKIT_OAUTH_PROXY_DOMAIN)"
    )
    proxy.add_argument(
        "--oauth-proxy-audience",
        metavar="ID",
        help="auth0: your API's identifier, for upstream tokens that call it ($TOOLKIT_OAUTH_PROXY_AUDIENCE)",
    )
    proxy.add_argument(
        "--oauth-proxy-keycloak-url",
        metavar="URL",
        help="keycloak: its base URL ($TOOLKIT_OAUTH_PROXY_KEYCLOAK_URL)",
    )
    proxy.add_argument("--oauth-proxy-realm", metavar="REALM", help="keycloak: the realm ($TOOLKIT_OAUTH_PROXY_REALM)")
    proxy.add_argument(
        "--oauth-proxy-client-id",
        metavar="ID",
        help="toolkit's client at the provider, registered with the redirect URI BASE_URL/authorize/callback "
        "($TOOLKIT_OAUTH_PROXY_CLIENT_ID)",
    )
    proxy.add_argument(
        "--oauth-proxy-client-secret-file",
        metavar="PATH",
        help="a file holding its secret, else $TOOLKIT_OAUTH_PROXY_CLIENT_SECRET "
        "($TOOLKIT_OAUTH_PROXY_CLIENT_SECRET_FILE)",
    )
    proxy.add_argument(
        "--oauth-proxy-upstream-scope",
        metavar="SCOPE",
        action="append",
        help="a scope to ask the provider for, repeatable; default the provider's "
        "($TOOLKIT_OAUTH_PROXY_UPSTREAM_SCOPES)",
    )
    proxy.add_argument(
        "--oauth-proxy-base-url",
        metavar="URL",
        help="this server's public origin: toolkit's issuer; the resource is it + --path unless --resource-url "
        "($TOOLKIT_OAUTH_PROXY_BASE_URL)",
    )
    proxy.add_argument(
        "--oauth-proxy-scope",
        metavar="SCOPE",
        action="append",
        help="a scope MCP clients may ask for, repeatable; default any ($TOOLKIT_OAUTH_PROXY_SCOPES)",
    )
    proxy.add_argument(
        "--oauth-proxy-signing-key-file",
        metavar="PATH",
        help="toolkit's private key (PEM), else $TOOLKIT_OAUTH_PROXY_SIGNING_KEY, else one made at start "
        "($TOOLKIT_OAUTH_PROXY_SIGNING_KEY_FILE)",
    )
    proxy.add_argument(
        "--oauth-proxy-previous-signing-keys-file",
        metavar="PATH",
        help="keys rotated out, PEM one after another, still published and accepted "
        "($TOOLKIT_OAUTH_PROXY_PREVIOUS_SIGNING_KEYS_FILE)",
    )
    proxy.add_argument(
        "--oauth-proxy-encryption-key-file",
        metavar="PATH",
        help="base64 keys sealing the provider's tokens in the store, the first seals; else "
        "$TOOLKIT_OAUTH_PROXY_ENCRYPTION_KEY, else one made at start ($TOOLKIT_OAUTH_PROXY_ENCRYPTION_KEY_FILE)",
    )
    for flag in OAUTH_PROXY_SECRET_FLAGS:
        proxy.add_argument(flag, nargs="?", action=_SecretOnCommandLine, help=argparse.SUPPRESS)


def export_auth_flags(args: argparse.Namespace) -> None:
    """Put the authorization flags in the environment, where workers find them too (repeated ones space-separated)."""
    for name, flag in AUTH_ENVIRONMENT.items():
        value = getattr(args, flag.removeprefix("--").replace("-", "_"))
        if value:
            os.environ[name] = " ".join(value) if isinstance(value, list) else value
