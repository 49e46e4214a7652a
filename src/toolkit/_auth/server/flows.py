"""The browser's way through the authorization server: ``/authorize``, the consent form, the upstream callback.

1. ``/authorize`` checks the client and its redirect URI first: until both are known good,
   every error is a page for the user, never a redirect (an open redirector otherwise). Then
   ``response_type=code``, PKCE (``S256`` only, RFC 7636 and OAuth 2.1), the ``resource``
   (RFC 8707), the scopes; the request waits in the store and the consent page is shown.
2. The consent form (POST) carries a CSRF token that must match both the one kept with the
   request and the cookie set with the page: another site cannot answer it for the user. A
   refusal goes back to the client as ``access_denied``. On approval the user goes upstream
   with toolkit's own PKCE, ``state`` and ``nonce``, and the browser gets a cookie binding it to
   this login.
3. The upstream's callback must bring back a ``state`` toolkit issued and not yet used, in the
   browser that was sent upstream (the cookie), from the upstream itself (``iss``, RFC 9207,
   when it says it sends one). toolkit exchanges the code, checks the ID token, keeps the
   upstream tokens sealed in a new grant, and sends its own code to the client's redirect URI
   with the client's ``state`` and toolkit's ``iss``.
"""

from __future__ import annotations

import hmac
import logging
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from ..oauth import OAuthError, new_code_verifier, new_state, s256_challenge, with_query
from ..tokens import InvalidToken, VerifierUnavailable
from .answers import Answer, ConsentRequest, ErrorPage, Redirect
from .clients import ClientRefused
from .grants import fingerprint, new_secret
from .paths import BROWSER_COOKIE, CALLBACK, CSRF_COOKIE, cookie_name

if TYPE_CHECKING:
    from .proxy import OAuthProxy

logger = logging.getLogger("toolkit.auth")

PENDING_SECONDS: Final = 600.0
"""How long an authorization request may wait for the user (consent, then the upstream login)."""
CODE_SECONDS: Final = 300.0
CHALLENGE: Final = re.compile(r"[A-Za-z0-9_-]{43}")
"""An S256 ``code_challenge``: the base64url of 32 bytes, unpadded (RFC 7636 §4.2)."""


class AuthorizationFlow:
    """The three browser steps; see the module docstring."""

    def __init__(self, proxy: OAuthProxy) -> None:
        self.proxy = proxy

    # --- 1. /authorize ---------------------------------------------------------------------------

    async def authorize(self, params: Mapping[str, str]) -> Answer:
        proxy = self.proxy
        client_id = params.get("client_id")
        if not client_id:
            return ErrorPage(400, "Missing client", "The application sent no client_id. Start again from it.")
        try:
            client = await proxy.client(client_id)
        except ClientRefused as exc:
            return ErrorPage(400, "Unknown application", f"This application cannot sign in here: {exc}")
        redirect_uri = params.get("redirect_uri")
        if not redirect_uri or redirect_uri not in client.redirect_uris:
            logger.info("refused an authorization request: redirect_uri not registered for %s", client_id)
            return ErrorPage(
                400,
                "Wrong redirect URI",
                "The application asked to be sent back to an address it did not register "
                "(redirect URIs must match exactly). Nothing was sent to it.",
            )
        state = params.get("state")

        def refuse(error: str, description: str) -> Redirect:
            return self.back_to_client(redirect_uri, state, error=error, error_description=description)

        if params.get("response_type") != "code":
            return refuse("unsupported_response_type", "only response_type=code is supported")
        challenge, method = params.get("code_challenge"), params.get("code_challenge_method")
        if not challenge:
            return refuse("invalid_request", "code_challenge is required (PKCE with S256)")
        if method != "S256":
            return refuse("invalid_request", f"code_challenge_method must be S256, not {method or 'plain'!r}")
        if not CHALLENGE.fullmatch(challenge):
            return refuse("invalid_request", "code_challenge is not an S256 challenge (43 base64url characters)")
        try:
            resource = proxy.check_resource(params.get("resource"))
        except ValueError as exc:
            return refuse("invalid_target", str(exc))
        scopes = proxy.granted_scopes(params.get("scope"))
        pending, csrf = new_secret(), new_secret()
        record = {
            "client_id": client.client_id,
            "redirect_uri": redirect_uri,
            "state": state,
            "code_challenge": challenge,
            "resource": resource,
            "scopes": list(scopes),
            "csrf": csrf,
        }
        await proxy.grants.put("pending", fingerprint(pending), record, ttl=PENDING_SECONDS)
        return ConsentRequest(
            pending=pending,
            csrf=csrf,
            client_id=client.client_id,
            client_name=client.name,
            redirect_uri=redirect_uri,
            scopes=scopes,
            resource=resource,
            server_name=proxy.server_name,
            upstream=proxy.upstream.issuer,
            metadata_document=client.metadata_document,
        )

    def back_to_client(self, redirect_uri: str, state: str | None, **params: str) -> Redirect:
        """A redirect to the client's (checked) redirect URI with ``state`` and toolkit's ``iss`` (RFC 9207)."""
        if state is not None:
            params["state"] = state
        params["iss"] = self.proxy.issuer
        return Redirect(with_query(redirect_uri, params))

    # --- 2. the consent form ---------------------------------------------------------------------

    async def consent(self, form: Mapping[str, str], cookies: Mapping[str, str]) -> Answer:
        proxy = self.proxy
        pending = form.get("pending", "")
        key = fingerprint(pending)
        record = await proxy.grants.get("pending", key) if pending else None
        if record is None:
            return ErrorPage(
                400, "Request expired", "This sign-in request has expired or was already answered. Start again."
            )
        csrf = form.get("csrf", "")
        csrf_cookie = cookies.get(cookie_name(CSRF_COOKIE, pending))
        if not (_same(csrf, record["csrf"]) and _same(csrf_cookie or "", record["csrf"])):
            logger.warning("refused a consent answer without the matching CSRF token (client %s)", record["client_id"])
            return ErrorPage(403, "Request refused", "This answer did not come from the consent page. Start again.")
        taken = await proxy.grants.take("pending", key, tombstone_ttl=PENDING_SECONDS)
        if taken.record is None:
            return ErrorPage(400, "Request expired", "This sign-in request was already answered. Start again.")
        if form.get("decision") != "approve":
            return self.back_to_client(
                record["redirect_uri"], record["state"], error="access_denied", error_description="the user refused"
            )
        state, verifier, nonce, browser = new_state(), new_code_verifier(), new_secret(), new_secret()
        upstream_record = {**record, "verifier": verifier, "nonce": nonce, "browser": fingerprint(browser)}
        del upstream_record["csrf"]
        await proxy.grants.put("upstream", fingerprint(state), upstream_record, ttl=PENDING_SECONDS)
        try:
            location = await proxy.upstream.authorization_url(
                redirect_uri=proxy.url(CALLBACK), state=state, code_challenge=s256_challenge(verifier), nonce=nonce
            )
        except (OAuthError, VerifierUnavailable) as exc:
            logger.warning("the identity provider cannot be used: %s", exc)
            return ErrorPage(502, "Sign-in unavailable", "The identity provider cannot be reached. Try again later.")
        cookie = (cookie_name(BROWSER_COOKIE, state), browser, CALLBACK, int(PENDING_SECONDS))
        return Redirect(location, cookies=(cookie,))

    # --- 3. the upstream's callback --------------------------------------------------------------

    async def callback(self, params: Mapping[str, str], cookies: Mapping[str, str]) -> Answer:
        proxy = self.proxy
        state = params.get("state")
        key = fingerprint(state) if state else ""
        record = await proxy.grants.get("upstream", key) if state else None
        if record is None:
            logger.warning("refused an upstream callback with an unknown or used state")
            return ErrorPage(
                400, "Unknown sign-in", "This sign-in is unknown, expired or already finished. Start again."
            )
        browser_cookie = cookies.get(cookie_name(BROWSER_COOKIE, state or ""))
        if not _same(fingerprint(browser_cookie or ""), record["browser"]):
            logger.warning("refused an upstream callback in another browser (client %s)", record["client_id"])
            return ErrorPage(403, "Wrong browser", "Finish the sign-in in the browser that started it. Start again.")
        taken = await proxy.grants.take("upstream", key, tombstone_ttl=PENDING_SECONDS)
        if taken.record is None:
            return ErrorPage(400, "Unknown sign-in", "This sign-in was already finished. Start again.")
        back = record["redirect_uri"], record["state"]
        try:
            metadata = await proxy.upstream.metadata()  # fetched here too when another replica sent the user
        except (OAuthError, VerifierUnavailable) as exc:
            logger.warning("the identity provider cannot be used: %s", exc)
            return self.back_to_client(*back, error="temporarily_unavailable", error_description="try again later")
        iss = params.get("iss")
        if (iss is not None and not proxy.upstream.accepts_issuer(iss)) or (
            iss is None and metadata.authorization_response_iss_parameter_supported
        ):
            logger.warning("refused an upstream callback from issuer %r (RFC 9207 mix-up)", iss)
            return self.back_to_client(*back, error="access_denied", error_description="the login came from elsewhere")
        if "error" in params or not params.get("code"):
            return self.back_to_client(
                *back, error="access_denied", error_description="the identity provider did not log the user in"
            )
        try:
            upstream_token, id_token = await proxy.upstream.exchange(
                params["code"], redirect_uri=proxy.url(CALLBACK), code_verifier=record["verifier"]
            )
            identity = await proxy.upstream.identity(upstream_token, id_token, nonce=record["nonce"])
        except (OAuthError, InvalidToken, VerifierUnavailable) as exc:
            logger.warning("the upstream login failed: %s", exc)
            return self.back_to_client(
                *back, error="server_error", error_description="the identity provider's login could not be completed"
            )
        grant_id = new_secret()
        grant: dict[str, Any] = {
            "subject": identity.subject,
            "client_id": record["client_id"],
            "scopes": record["scopes"],
            "resource": record["resource"],
            "upstream": proxy.sealer.seal(upstream_token.to_dict(), grant_id),
        }
        await proxy.grants.put("grant", grant_id, grant, ttl=proxy.refresh_token_ttl)
        code = new_secret()
        code_record = {
            "grant": grant_id,
            "client_id": record["client_id"],
            "redirect_uri": record["redirect_uri"],
            "code_challenge": record["code_challenge"],
            "resource": record["resource"],
            "scopes": record["scopes"],
        }
        await proxy.grants.put("code", fingerprint(code), code_record, ttl=CODE_SECONDS)
        return self.back_to_client(*back, code=code)


def _same(given: str, kept: str) -> bool:
    return bool(given) and hmac.compare_digest(given.encode(), kept.encode())
