"""OAuth interop driver for the Python SDK: mcp==1.30.0 or mcp==2.3.0, whichever venv runs it.

    .interop/py-mcp130/bin/python interop/drivers/oauth_py.py --flow auth_code --url URL
    .interop/py-mcp230/bin/python interop/drivers/oauth_py.py --flow auth_code --mode modern --url URL
    .interop/py-mcp230/bin/python interop/drivers/oauth_py.py --flow client_credentials --url URL \\
        --issuer ISSUER --client-id cc-client --client-secret cc-secret

The client starts with no token and no registration. It connects to the MCP server the way a
user of the library would, with the library's own OAuth provider on its httpx client:

- ``auth_code``: ``OAuthClientProvider`` with an in-memory ``TokenStorage`` and client metadata
  whose redirect URI is ``http://localhost:PORT/callback`` (nothing listens there). The redirect
  handler plays the browser: it follows the authorization URL with httpx, cookies on, redirects
  followed by hand until a ``Location`` points at the redirect URI, and hands ``code``, ``state``
  (and ``iss``) to the callback handler. The test authorization server logs in and consents
  without a page (tests/authserver/server.mjs).
- ``client_credentials``: ``ClientCredentialsOAuthProvider`` (``client_secret_basic``).

Then it lists the tools and calls each ``--call`` (default: ``whoami``, then ``forecast`` for
Paris), and prints ONE JSON line on stdout: the library version, the negotiated protocol version,
the tool names, every call's result, and every HTTP exchange the client made (MCP endpoint,
well-known documents, registration, token; the browser's hops separately), with the
``WWW-Authenticate`` challenges it got and the parameters of its authorization and token requests
(secrets, codes and verifiers left out). Exit status 1, with the reason on stderr, when the
connection, the listing or a call failed; the JSON line is printed either way.

--mode legacy     the initialize handshake (2025-11-25); the only mode of mcp 1.30
--mode modern     mcp 2.3 ``mode="auto"``: server/discover, which must pick 2026-07-28
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
import traceback
from contextlib import AsyncExitStack, suppress
from datetime import timedelta
from importlib.metadata import version
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import anyio
from mcp.client.auth import OAuthClientProvider
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from pydantic import AnyUrl

MCP_VERSION = version("mcp")
MCP2 = int(MCP_VERSION.split(".")[0]) >= 2

if MCP2:  # mcp 2.x runs on httpx2, the same API under another name
    import httpx2 as httpx
    from mcp import Client
    from mcp.client.auth import AuthorizationCodeResult
else:
    import httpx
    from mcp import ClientSession

HIDDEN = {"client_secret", "code", "code_verifier", "refresh_token", "client_assertion"}
"""Form fields never copied into the report."""


class Failure(Exception):
    """Why the run failed, for stderr and the exit status."""


class MemoryStorage:
    """The ``TokenStorage`` protocol, in memory: empty at the start (or holding a pre-registered client)."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


def claims_of(token: str) -> dict[str, Any] | None:
    """A JWT's claims, unverified (None for an opaque token)."""
    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        return json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except ValueError:
        return None


def form_fields(request: httpx.Request) -> dict[str, str]:
    """The urlencoded body of a request, without secrets."""
    try:
        body = request.content.decode()
    except Exception:  # a streaming body: nothing to show
        return {}
    return {name: values[0] for name, values in parse_qs(body).items() if name not in HIDDEN}


class Recorder:
    """httpx event hooks: every exchange the MCP client (and its OAuth provider) made, in order."""

    def __init__(self, mcp_url: str) -> None:
        self.mcp_url = mcp_url
        self.exchanges: list[dict[str, Any]] = []

    async def on_request(self, request: httpx.Request) -> None:
        entry: dict[str, Any] = {"method": request.method, "url": str(request.url)}
        if str(request.url) == self.mcp_url:
            entry["kind"] = "mcp"
            entry["authorization"] = (
                "bearer" if request.headers.get("authorization", "").startswith("Bearer ") else None
            )
            if request.method == "POST":
                try:
                    entry["mcp_method"] = json.loads(request.content).get("method", "(response)")
                except Exception:
                    entry["mcp_method"] = None
        elif "/.well-known/" in request.url.path:
            entry["kind"] = "well-known"
        elif request.method == "POST" and request.headers.get("content-type", "").startswith("application/json"):
            entry["kind"] = "registration"
            with suppress(ValueError):
                entry["body"] = json.loads(request.content)
        elif request.method == "POST":
            entry["kind"] = "token"
            entry["form"] = form_fields(request)
            auth = request.headers.get("authorization", "")
            entry["client_auth"] = (
                "client_secret_basic" if auth.startswith("Basic ") else "client_secret_post/none (in the body)"
            )
        request.extensions["oauth_py_entry"] = entry
        self.exchanges.append(entry)

    async def on_response(self, response: httpx.Response) -> None:
        entry = response.request.extensions.get("oauth_py_entry")
        if entry is None:
            return
        entry["status"] = response.status_code
        challenge = response.headers.get("www-authenticate")
        if challenge:
            entry["www_authenticate"] = challenge

    def mcp_statuses(self, status: int) -> int:
        return sum(1 for e in self.exchanges if e.get("kind") == "mcp" and e.get("status") == status)


class Browser:
    """The user agent of the authorization-code flow: redirect handler and callback handler."""

    def __init__(self, redirect_uri: str, timeout: float) -> None:
        self.redirect_uri = redirect_uri
        self.timeout = timeout
        self.authorizations: list[dict[str, Any]] = []
        self._answer: tuple[str, str | None, str | None] | None = None

    async def redirect_handler(self, authorization_url: str) -> None:
        query = {name: values[0] for name, values in parse_qs(urlsplit(authorization_url).query).items()}
        record: dict[str, Any] = {"endpoint": authorization_url.split("?", 1)[0], "params": query, "hops": []}
        self.authorizations.append(record)
        target = urlsplit(self.redirect_uri)
        url = authorization_url
        async with httpx.AsyncClient(timeout=self.timeout, follow_redirects=False) as browser:
            for _ in range(10):
                reply = await browser.get(url)
                record["hops"].append({"url": url.split("?", 1)[0], "status": reply.status_code})
                location = reply.headers.get("location")
                if not reply.is_redirect or location is None:
                    raise Failure(f"{url} answered {reply.status_code}, not a redirect: {reply.text[:1000]}")
                url = urljoin(url, location)
                landed = urlsplit(url)
                if (landed.scheme, landed.netloc, landed.path) == (target.scheme, target.netloc, target.path):
                    params = {name: values[0] for name, values in parse_qs(landed.query).items()}
                    record["callback"] = {
                        "code": "code" in params,
                        "state": "state" in params,
                        "iss": params.get("iss"),
                        "error": params.get("error"),
                    }
                    if "code" not in params:
                        raise Failure(f"the authorization failed at {self.redirect_uri}: {params}")
                    self._answer = (params["code"], params.get("state"), params.get("iss"))
                    return
        raise Failure(f"no redirect to {self.redirect_uri} after 10 hops (last: {url.split('?', 1)[0]})")

    async def callback_handler(self) -> Any:
        if self._answer is None:
            raise Failure("the callback handler ran before the redirect handler reached the redirect URI")
        code, state, iss = self._answer
        self._answer = None
        if MCP2:
            return AuthorizationCodeResult(code=code, state=state, iss=iss)
        return code, state


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", required=True, help="the MCP endpoint, e.g. http://127.0.0.1:8000/mcp")
    ap.add_argument("--flow", choices=["auth_code", "client_credentials"], required=True)
    ap.add_argument("--mode", choices=["legacy", "modern"], default="legacy")
    ap.add_argument("--issuer", help="client_credentials: the issuer the credentials belong to")
    ap.add_argument(
        "--client-id",
        default=None,
        help="client_credentials: the client (default cc-client); auth_code: a pre-registered public client "
        "(default: none, the library registers one dynamically)",
    )
    ap.add_argument("--client-secret", default="cc-secret", help="client_credentials (default cc-secret)")
    ap.add_argument("--scope", default=None, help="client_credentials: the provider's scope argument (default none)")
    ap.add_argument("--redirect-port", type=int, default=33418, help="auth_code: port of the redirect URI")
    ap.add_argument(
        "--call",
        action="append",
        metavar="TOOL[=JSON]",
        help='a tool to call after listing, repeatable (default: whoami, forecast={"city": "Paris"})',
    )
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds per MCP request")
    a = ap.parse_args()
    if a.mode == "modern" and not MCP2:
        ap.error(f"--mode modern needs mcp 2.x; this is mcp {MCP_VERSION}")
    if a.flow == "client_credentials" and not a.issuer:
        ap.error("--flow client_credentials needs --issuer")
    if a.flow == "client_credentials" and a.client_id is None:
        a.client_id = "cc-client"
    return a


def planned_calls(a: argparse.Namespace) -> list[tuple[str, dict[str, Any]]]:
    calls = []
    for spec in a.call or ["whoami", 'forecast={"city": "Paris"}']:
        name, _, arguments = spec.partition("=")
        calls.append((name, json.loads(arguments) if arguments else {}))
    return calls


def make_provider(a: argparse.Namespace, storage: MemoryStorage, browser: Browser | None) -> Any:
    if a.flow == "client_credentials":
        scope_keyword = "scope" if MCP2 else "scopes"  # renamed in mcp 2.x
        return ClientCredentialsOAuthProvider(
            server_url=a.url,
            storage=storage,
            client_id=a.client_id,
            client_secret=a.client_secret,
            token_endpoint_auth_method="client_secret_basic",  # mcp 1.30's client_secret_post omits client_id
            issuer=a.issuer,
            **{scope_keyword: a.scope},
        )
    assert browser is not None
    if a.client_id is not None:  # pre-registered: the provider finds it in storage and skips registration
        storage.client_info = OAuthClientInformationFull(
            client_id=a.client_id,
            token_endpoint_auth_method="none",
            redirect_uris=[AnyUrl(browser.redirect_uri)],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
        )
    metadata = OAuthClientMetadata(
        client_name="toolkit oauth interop",
        redirect_uris=[AnyUrl(browser.redirect_uri)],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
    )
    return OAuthClientProvider(
        server_url=a.url,
        client_metadata=metadata,
        storage=storage,
        redirect_handler=browser.redirect_handler,
        callback_handler=browser.callback_handler,
    )


def dump_result(result: Any) -> dict[str, Any]:
    structured = result.structured_content if MCP2 else result.structuredContent
    is_error = result.is_error if MCP2 else result.isError
    return {
        "isError": bool(is_error),
        "structuredContent": structured,
        "text": [c.text for c in result.content if getattr(c, "type", None) == "text"],
    }


def error_of(exc: BaseException) -> dict[str, Any]:
    leaf = exc
    while isinstance(leaf, BaseExceptionGroup) and leaf.exceptions:
        leaf = leaf.exceptions[0]
    return {
        "type": type(leaf).__name__,
        "message": (str(leaf) or repr(leaf))[:2000],
        "traceback": "".join(traceback.format_exception(leaf))[-3000:],
    }


async def connect(stack: AsyncExitStack, a: argparse.Namespace, http: httpx.AsyncClient) -> tuple[Any, str | None]:
    """An open session and the negotiated protocol version."""
    transport = streamable_http_client(a.url, http_client=http)
    if MCP2:
        client = Client(transport, mode="auto" if a.mode == "modern" else "legacy", read_timeout_seconds=a.timeout)
        await stack.enter_async_context(client)
        return client, client.protocol_version
    read, write, _ = await stack.enter_async_context(transport)
    session = await stack.enter_async_context(
        ClientSession(read, write, read_timeout_seconds=timedelta(seconds=a.timeout))
    )
    init = await session.initialize()
    return session, init.protocolVersion


async def run(a: argparse.Namespace, doc: dict[str, Any]) -> list[str]:
    """Connect, list, call; fills ``doc`` as it goes and returns the failures."""
    failures: list[str] = []
    storage = MemoryStorage()
    browser = Browser(f"http://localhost:{a.redirect_port}/callback", a.timeout) if a.flow == "auth_code" else None
    recorder = Recorder(a.url)
    doc["http"] = recorder.exchanges
    if browser is not None:
        doc["authorizations"] = browser.authorizations
    provider = make_provider(a, storage, browser)
    http = httpx.AsyncClient(
        auth=provider,
        timeout=httpx.Timeout(a.timeout),
        event_hooks={"request": [recorder.on_request], "response": [recorder.on_response]},
    )
    try:
        async with http, AsyncExitStack() as stack:
            try:
                session, doc["negotiated_protocol_version"] = await connect(stack, a, http)
            except BaseException as exc:  # reported, then the run stops
                doc["connect"] = {"ok": False, "error": error_of(exc)}
                failures.append(
                    f"connecting failed: {doc['connect']['error']['type']}: {doc['connect']['error']['message']}"
                )
                return failures
            doc["connect"] = {"ok": True}
            try:
                with anyio.fail_after(a.timeout):
                    listed = await session.list_tools()
                doc["tools"] = [tool.name for tool in listed.tools]
            except Exception as exc:
                doc["list_tools_error"] = error_of(exc)
                failures.append(f"tools/list failed: {doc['list_tools_error']['message']}")
            for name, arguments in planned_calls(a):
                entry: dict[str, Any] = {"tool": name, "arguments": arguments, "ok": None}  # None: no answer
                doc["calls"].append(entry)
                try:
                    with anyio.fail_after(a.timeout):
                        result = await session.call_tool(name, arguments)
                    entry |= {"ok": True, "result": dump_result(result)}
                    if entry["result"]["isError"]:
                        failures.append(f"{name}: the tool answered isError: {entry['result']['text']}")
                except Exception as exc:
                    entry |= {"ok": False, "error": error_of(exc)}
                    failures.append(f"{name} failed: {entry['error']['type']}: {entry['error']['message']}")
    except BaseException as exc:  # the session broke (an OAuth flow error ends the transport)
        doc["session_error"] = error_of(exc)
        failures.append(f"the session failed: {doc['session_error']['type']}: {doc['session_error']['message']}")
    finally:
        doc["mcp_401"] = recorder.mcp_statuses(401)
        doc["mcp_403"] = recorder.mcp_statuses(403)
        if storage.client_info is not None:
            info = storage.client_info
            doc["client"] = {
                "client_id": info.client_id,
                "token_endpoint_auth_method": info.token_endpoint_auth_method,
                "scope": info.scope,
            }
        if storage.tokens is not None:
            doc["token"] = {
                "scope": storage.tokens.scope,
                "refresh_token": storage.tokens.refresh_token is not None,
                "claims": claims_of(storage.tokens.access_token),
            }
    return failures


async def main() -> int:
    a = parse_args()
    doc: dict[str, Any] = {
        "library": "mcp (python)",
        "library_version": MCP_VERSION,
        "flow": a.flow,
        "mode": a.mode,
        "negotiated_protocol_version": None,
        "tools": None,
        "calls": [],
    }
    failures = await run(a, doc)
    sys.stdout.write(json.dumps(doc, default=repr) + "\n")
    sys.stdout.flush()
    for failure in failures:
        sys.stderr.write(f"oauth_py ({MCP_VERSION}, {a.flow}, {a.mode}): {failure}\n")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(anyio.run(main))
