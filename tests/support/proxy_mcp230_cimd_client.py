"""``mcp`` 2.3.0's OAuth client naming itself by a client ID metadata document (run by the interop venv).

    .interop/py-mcp230/bin/python tests/support/proxy_mcp230_cimd_client.py --url URL --tool NAME \
        --client-metadata-url https://127.0.0.1:PORT/clients/mcp230.json

The SDK's ``OAuthClientProvider`` given ``client_metadata_url``: when the authorization server's
metadata says ``client_id_metadata_document_supported``, the SDK skips dynamic registration and
sends that URL as its ``client_id``; the server fetches the document (the test serves it). The
browser is ``proxy_mcp230_client``'s (one cookie jar, "Allow" on toolkit's consent page, the
upstream logging in by itself). Prints ONE JSON line: the tool's structured result, the consent
pages seen, the authorization requests' params. Exit status 1, with the reason on stderr, on failure.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import anyio
import httpx2 as httpx
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientMetadata
from proxy_mcp230_client import REDIRECT_URI, Browser, MemoryStorage  # this directory: the script's own
from pydantic import AnyUrl


async def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--tool", required=True)
    ap.add_argument("--client-metadata-url", required=True)
    a = ap.parse_args()
    browser = Browser()
    provider = OAuthClientProvider(
        server_url=a.url,
        # What the document says too: the SDK sends these redirect URIs, the server holds it to the document's.
        client_metadata=OAuthClientMetadata(
            client_name="mcp 2.3.0 by its metadata document",
            redirect_uris=[AnyUrl(REDIRECT_URI)],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
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
