"""``mcp`` 2.3.0's own OAuth client against toolkit's ``OAuthProxy`` (run by the interop venv).

    .interop/py-mcp230/bin/python tests/support/proxy_mcp230_client.py --url URL --tool NAME \
        [--client-metadata-url https://127.0.0.1:PORT/clients/mcp230.json]

The library's ``OAuthClientProvider`` on its httpx client, an in-memory token storage, dynamic
registration (or, with ``--client-metadata-url``, the client ID metadata document at that URL:
the SDK then sends the URL as its ``client_id`` when the server's metadata says it takes
documents): the way a user of the SDK connects. The redirect handler plays the user's browser
with one cookie jar: it follows redirects, answers toolkit's consent page (its form's hidden
fields) with "Allow", lets the upstream log in by itself, and hands the code, ``state`` and
``iss`` off the redirect URI to the callback handler. Then it calls the tool and prints ONE JSON
line: the tool's structured result, the consent pages seen, the authorization requests' params.
Exit status 1, with the reason on stderr, on failure.
"""

from __future__ import annotations

import argparse
import html
import json
import re
import sys
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import anyio
import httpx2 as httpx
from mcp import Client
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientMetadata
from pydantic import AnyUrl

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "interop" / "drivers"))
from oauth_py import MemoryStorage  # the interop driver's TokenStorage, from its own directory

REDIRECT_URI = "http://localhost:33419/callback"  # nothing listens: the browser stops at the redirect
FIELD = re.compile(r'<input type="hidden" name="(pending|csrf)" value="([^"]*)">')
ACTION = re.compile(r'<form method="post" action="([^"]+)">')


def query(url: str) -> dict[str, str]:
    return {name: values[0] for name, values in parse_qs(urlsplit(url).query).items()}


class Browser:
    def __init__(self) -> None:
        self.consent_pages = 0
        self.authorizations: list[dict[str, str]] = []
        self.answer: AuthorizationCodeResult | None = None

    async def redirect_handler(self, authorization_url: str) -> None:
        self.authorizations.append(query(authorization_url))
        target = urlsplit(REDIRECT_URI)
        async with httpx.AsyncClient(timeout=30.0, follow_redirects=False) as browser:
            reply = await browser.get(authorization_url)
            for _ in range(12):
                if reply.is_redirect:
                    url = urljoin(str(reply.url), reply.headers["location"])
                    landed = urlsplit(url)
                    if (landed.scheme, landed.netloc, landed.path) == (target.scheme, target.netloc, target.path):
                        params = query(url)
                        if "code" not in params:
                            raise RuntimeError(f"the authorization failed: {params}")
                        self.answer = AuthorizationCodeResult(
                            code=params["code"], state=params.get("state"), iss=params.get("iss")
                        )
                        return
                    reply = await browser.get(url)
                elif reply.status_code == 200 and "<form" in reply.text:
                    self.consent_pages += 1
                    form = {name: html.unescape(value) for name, value in FIELD.findall(reply.text)}
                    action = ACTION.search(reply.text)
                    assert action is not None, reply.text
                    target_url = urljoin(str(reply.url), html.unescape(action.group(1)))
                    reply = await browser.post(target_url, data={**form, "decision": "approve"})
                else:
                    raise RuntimeError(f"{reply.url} answered {reply.status_code}: {reply.text[:1000]}")
        raise RuntimeError("no redirect to the redirect URI")

    async def callback_handler(self) -> AuthorizationCodeResult:
        assert self.answer is not None
        answer, self.answer = self.answer, None
        return answer


async def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--tool", required=True)
    ap.add_argument("--client-metadata-url", help="name the client by this client ID metadata document (no DCR)")
    a = ap.parse_args()
    browser = Browser()
    by_document = a.client_metadata_url is not None
    provider = OAuthClientProvider(
        server_url=a.url,
        # With a metadata document, what the document says too: the server holds the client to the document's.
        client_metadata=OAuthClientMetadata(
            client_name="mcp 2.3.0 by its metadata document" if by_document else "mcp 2.3.0 via toolkit's proxy",
            redirect_uris=[AnyUrl(REDIRECT_URI)],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            **({"token_endpoint_auth_method": "none"} if by_document else {}),
        ),
        storage=MemoryStorage(),
        redirect_handler=browser.redirect_handler,
        callback_handler=browser.callback_handler,
        client_metadata_url=a.client_metadata_url,
    )
    async with (
        httpx.AsyncClient(auth=provider, timeout=httpx.Timeout(30.0)) as http,
        Client(streamable_http_client(a.url, http_client=http), mode="auto", read_timeout_seconds=30) as client,
    ):
        result = await client.call_tool(a.tool, {})
        doc: dict[str, Any] = {
            "structured": result.structured_content,
            "is_error": result.is_error,
            "protocol_version": client.protocol_version,
            "consent_pages": browser.consent_pages,
            "authorizations": browser.authorizations,
        }
    print(json.dumps(doc))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(anyio.run(main))
    except Exception as exc:  # the reason, for the test's message
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        raise
