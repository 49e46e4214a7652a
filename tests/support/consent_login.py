"""Signing in through toolkit's own authorization server without a person (``OAuthProxy`` tests).

The browser's way: toolkit's ``/authorize`` shows a consent page (an HTML form with hidden
``pending`` and ``csrf`` fields and a CSRF cookie); the upstream (the test rig's oidc-provider,
tests/support/authserver.py) logs its current account in and consents by itself; toolkit's callback
sends the browser to the client's ``redirect_uri``. ``ConsentingLogin`` is a ``user_agent`` for
``toolkit.client.OAuth`` that does all of that with one cookie jar, as a browser would, and hands
back the URL it landed on. It records every consent page it saw.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from urllib.parse import urljoin

import httpx
from tests.support.oauth_login import MAX_HOPS, TIMEOUT, _lands_on, query

FIELD = re.compile(r'<input type="hidden" name="(pending|csrf)" value="([^"]*)">')
ACTION = re.compile(r'<form method="post" action="([^"]+)">')


def consent_fields(page: str) -> dict[str, str]:
    """The hidden fields of a consent page's form."""
    return {name: html.unescape(value) for name, value in FIELD.findall(page)}


def consent_action(page: str, page_url: str) -> str:
    found = ACTION.search(page)
    if found is None:
        raise AssertionError(f"no consent form on the page: {page[:2000]}")
    return urljoin(page_url, html.unescape(found.group(1)))


@dataclass
class ConsentingLogin:
    """A ``user_agent``: follows redirects, answers toolkit's consent page with ``decision``, lands on the client."""

    decision: str = "approve"
    consent_pages: list[str] = field(default_factory=list)
    authorizations: list[str] = field(default_factory=list)

    async def __call__(self, authorization_url: str) -> str:
        self.authorizations.append(authorization_url)
        redirect_uri = query(authorization_url)["redirect_uri"]
        async with httpx.AsyncClient(timeout=TIMEOUT) as browser:
            reply = await browser.get(authorization_url)
            for _ in range(MAX_HOPS):
                if reply.is_redirect:
                    url = urljoin(str(reply.url), reply.headers["location"])
                    if _lands_on(url, redirect_uri):
                        return url
                    reply = await browser.get(url)
                elif reply.status_code == 200 and "<form" in reply.text:
                    self.consent_pages.append(reply.text)
                    form = {**consent_fields(reply.text), "decision": self.decision}
                    reply = await browser.post(consent_action(reply.text, str(reply.url)), data=form)
                else:
                    raise AssertionError(f"{reply.url} answered {reply.status_code}: {reply.text[:2000]}")
        raise AssertionError(f"no redirect to {redirect_uri} after {MAX_HOPS} hops")
