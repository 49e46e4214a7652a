"""Signing in without a person, for the OAuth client tests (tests/test_client_oauth.py).

The test authorization server (tests/support/authserver.py) logs its current account in and
consents to everything at ``/interaction/...``, so following its redirects with cookies lands on
the client's ``redirect_uri``. Two ways to use that:

- ``HeadlessLogin``: a ``user_agent`` callable for ``OAuth``: it follows the redirects and hands
  back the URL it landed on, without requesting it (the headless use the API offers).
- ``BrowserStandIn``: an ``open_url`` for ``LoopbackBrowser``: it does what a browser would,
  in the thread ``LoopbackBrowser`` calls it in, including the final request to the loopback
  listener, so the real listener catches a real redirect. It knocks first with a wrong ``state``
  (which the listener must ignore).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx

TIMEOUT = 30.0
MAX_HOPS = 10


def query(url: str) -> dict[str, str]:
    """The query parameters of ``url``, each once."""
    return {name: values[0] for name, values in parse_qs(urlsplit(url).query).items()}


def _lands_on(url: str, redirect_uri: str) -> bool:
    a, b = urlsplit(url), urlsplit(redirect_uri)
    return (a.scheme, a.netloc, a.path) == (b.scheme, b.netloc, b.path)


@dataclass
class HeadlessLogin:
    """A ``user_agent``: follows the authorization server's redirects up to ``redirect_uri``.

    ``authorizations`` records every authorization URL it was handed (the parameters are what
    the tests check); ``callbacks`` what it handed back.
    """

    authorizations: list[str] = field(default_factory=list)
    callbacks: list[str] = field(default_factory=list)

    @property
    def asked(self) -> list[dict[str, str]]:
        """The parameters of each authorization request, in order."""
        return [query(url) for url in self.authorizations]

    async def __call__(self, authorization_url: str) -> str:
        self.authorizations.append(authorization_url)
        redirect_uri = query(authorization_url)["redirect_uri"]
        url = authorization_url
        async with httpx.AsyncClient(timeout=TIMEOUT) as browser:
            for _ in range(MAX_HOPS):
                reply = await browser.get(url)
                if not reply.is_redirect:
                    raise AssertionError(f"{url} answered {reply.status_code}, not a redirect: {reply.text[:2000]}")
                url = urljoin(url, reply.headers["location"])
                if _lands_on(url, redirect_uri):
                    self.callbacks.append(url)
                    return url
        raise AssertionError(f"no redirect to {redirect_uri} after {MAX_HOPS} hops (last: {url})")


@dataclass
class BrowserStandIn:
    """An ``open_url`` for ``LoopbackBrowser``: a browser that signs in and follows the redirect home.

    ``listener_answers`` records the status of each request to the loopback listener: the wrong
    ``state`` first, then the real redirect.
    """

    opened: list[str] = field(default_factory=list)
    listener_answers: list[tuple[str, int]] = field(default_factory=list)

    def __call__(self, authorization_url: str) -> Any:
        self.opened.append(authorization_url)
        redirect_uri = query(authorization_url)["redirect_uri"]
        with httpx.Client(timeout=TIMEOUT) as browser:
            forged = browser.get(redirect_uri, params={"code": "forged", "state": "not-the-state"})
            self.listener_answers.append(("wrong state", forged.status_code))
            url = authorization_url
            for _ in range(MAX_HOPS):
                reply = browser.get(url)
                if _lands_on(str(reply.url), redirect_uri):  # the listener itself answered
                    self.listener_answers.append(("redirect", reply.status_code))
                    return True
                if not reply.is_redirect:
                    raise AssertionError(f"{url} answered {reply.status_code}: {reply.text[:2000]}")
                url = urljoin(url, reply.headers["location"])
        raise AssertionError(f"no redirect to {redirect_uri} after {MAX_HOPS} hops")
