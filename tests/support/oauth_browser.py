"""A stand-in for the system browser, for ``toolkit ... --oauth`` (``BROWSER="python oauth_browser.py %s"``).

Python's ``webbrowser`` runs ``$BROWSER`` with the authorization URL; this signs in at the test
authorization server (it logs its current account in and consents, tests/support/authserver.py)
by following its redirects with cookies, up to and including the request to the CLI's loopback
listener, as a browser would. Exit status 0 when the listener answered 200.
"""

from __future__ import annotations

import sys
from urllib.parse import urljoin

import httpx
from tests.support.oauth_login import MAX_HOPS, TIMEOUT, _lands_on, query


def main(authorization_url: str) -> int:
    redirect_uri = query(authorization_url)["redirect_uri"]
    url = authorization_url
    with httpx.Client(timeout=TIMEOUT) as browser:
        for _ in range(MAX_HOPS):
            reply = browser.get(url)
            if _lands_on(str(reply.url), redirect_uri):
                return 0 if reply.status_code == 200 else 1
            if not reply.is_redirect:
                print(f"{url} answered {reply.status_code}", file=sys.stderr)
                return 1
            url = urljoin(url, reply.headers["location"])
    return 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1]))
