"""An HTTP API as MCP tools: ``Server.from_openapi``, ``Server.from_fastapi``, ``mount(OpenAPI(...))``,
``toolkit run --openapi``, against a real FastAPI app (tests/support/openapi_app.py).

The app is served in process (``Server.from_fastapi``: httpx's ASGI transport) and by uvicorn in
a subprocess on a free 127.0.0.1 port (always stopped), where ``Server.from_openapi`` reaches it
with ``httpx.AsyncClient(base_url=...)`` and ``toolkit run --openapi`` with ``--base-url``. Every
operation is called through MCP by ``toolkit.Client`` in the 2026-07-28 era and in legacy
sessions (2025-11-25, 2025-06-18: non-object results wrapped), in process, over stdio and over
HTTP, and every result is validated against the official schema of the version in force.
"""

from __future__ import annotations

import contextlib
import http.cookiejar
import json
import logging
import re
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from tests.http_support import serve
from tests.support.authserver import READY_TIMEOUT, AuthServer
from tests.support.openapi_app import API_KEY, HUGE_BYTES, PASSWORD, TOKEN, USER, app
from tests.support.processes import PYTHON, REPO, TOOLKIT, free_port, stop, wait_for_port
from tests.test_auth_real import auth
from tests.wire import assert_result_valid, validator

import toolkit
from toolkit import APIKey, Basic, Bearer, OpenAPI, RouteMap, Server
from toolkit.auth import JWTVerifier
from toolkit.client import ClientError, OAuth

__all__ = ["auth"]  # the authorization server rig's fixture (tests/test_auth_real.py), named for pytest and ruff

MODERN = "2026-07-28"
ERAS = [MODERN, "2025-11-25", "2025-06-18"]
LAMP = {"id": 1, "name": "lamp", "price": 12.5, "tags": ["home"]}
CHAIR = {"id": 2, "name": "chair", "price": 40.0, "tags": ["home", "wood"]}
CREDENTIALS = [Bearer(TOKEN), APIKey("X-API-Key", API_KEY)]
"""What every mode configures (the CLI can give these two: --api-token, --api-header)."""


# --- the app, served --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def uvicorn_url() -> Iterator[str]:
    """The test app under uvicorn in a subprocess on a free port; stopped at the end of the module."""
    port = free_port()
    argv = [str(PYTHON), "-m", "uvicorn", "tests.support.openapi_app:app", "--host", "127.0.0.1", "--port", str(port)]
    argv += ["--log-level", "warning", "--timeout-graceful-shutdown", "1"]
    process = subprocess.Popen(argv, cwd=REPO, stdin=subprocess.DEVNULL)
    try:
        wait_for_port(port, process=process)
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(process)


@pytest.fixture
def document_file(tmp_path: Path) -> Path:
    path = tmp_path / "openapi.json"
    path.write_text(json.dumps(app.openapi()))
    return path


@pytest.fixture
def toolkit_http(document_file: Path, uvicorn_url: str) -> Iterator[str]:
    """``toolkit run --openapi FILE --base-url URL --transport http`` on a free port: its MCP URL."""
    port = free_port()
    argv = [str(TOOLKIT), "run", "--openapi", str(document_file), "--base-url", uvicorn_url, "--api-token", TOKEN]
    argv += ["--api-header", f"X-API-Key: {API_KEY}", "--transport", "http", "--port", str(port)]
    process = subprocess.Popen(argv, cwd=REPO, stdin=subprocess.DEVNULL)
    try:
        wait_for_port(port, process=process)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        assert stop(process) in (0, -15), "toolkit run --openapi did not stop cleanly"


def in_process() -> Server:
    return Server.from_fastapi(app, auth=CREDENTIALS)


def jar_that_keeps_nothing() -> http.cookiejar.CookieJar:
    """What docs/openapi.md tells a user handing in a client: cookies an answer sets are not kept."""
    return http.cookiejar.CookieJar(policy=http.cookiejar.DefaultCookiePolicy(allowed_domains=[]))


@pytest.fixture
async def over_uvicorn(uvicorn_url: str) -> AsyncIterator[Server]:
    async with httpx.AsyncClient(base_url=uvicorn_url, cookies=jar_that_keeps_nothing()) as client:
        yield Server.from_openapi(app.openapi(), client=client, auth=CREDENTIALS)


# --- every operation, every era, every way of reaching it -------------------------------------------


async def every_operation(client: toolkit.Client, version: str) -> None:
    """Call every operation of the app through ``client`` (speaking ``version``) and check each result."""
    modern = version == MODERN

    async def call(name: str, arguments: dict[str, Any] | None = None) -> Any:
        result = await client.call_tool(name, arguments or {}, raise_on_error=False)
        assert_result_valid(result.raw, version, "tools/call")
        return result

    def natural(result: Any, value: Any) -> None:
        """The value itself for 2026-07-28; a non-object wrapped for a legacy session."""
        assert not result.is_error, result.text
        assert result.data == value
        wrapped = not modern and not isinstance(value, dict)
        assert result.structured_content == ({"result": value} if wrapped else value)

    listed = {tool["name"]: tool for tool in await client.list_tools()}
    tool_schema = validator(version, "Tool")
    for entry in listed.values():  # each entry as the version's schema defines a Tool
        assert tool_schema.is_valid(entry), (entry["name"], [e.message for e in tool_schema.iter_errors(entry)][:3])
    assert "old_items" not in listed  # deprecated: left out by default
    assert listed["list_items"]["annotations"] == {"readOnlyHint": True, "idempotentHint": True, "openWorldHint": True}
    assert listed["list_items"]["title"] == "List the items"
    assert listed["list_items"]["description"] == "Every item, the newest last."
    assert listed["delete_item"]["annotations"]["destructiveHint"] is True
    assert "destructiveHint" not in listed["create_item"]["annotations"]
    assert listed["list_items"]["outputSchema"]["type"] == ("array" if modern else "object")
    assert "outputSchema" not in listed["hello_text"]  # text/plain: content only
    assert "outputSchema" not in listed["delete_item"]  # 204: no content
    secret_schema = listed["read_secret"]["inputSchema"]
    assert secret_schema.get("properties", {}) == {}  # the bearer token is configuration, never an argument
    tag_schema = listed["list_items"]["inputSchema"]["properties"]["tag"]
    assert "Only items with one of these tags" in json.dumps(tag_schema)

    natural(await call("list_items"), [LAMP, CHAIR])  # an array stays an array
    natural(await call("list_items", {"tag": None}), [LAMP, CHAIR])  # null for an optional parameter: not sent
    natural(await call("list_items", {"tag": ["wood", "none"], "limit": 5}), [CHAIR])
    natural(await call("get_item", {"item_id": 1}), LAMP)
    count = await call("count_items")
    assert isinstance(count.data, int) and count.data >= 2
    natural(count, count.data)  # a primitive stays a primitive
    echoed = await call("echo_everything", {"word": "a bé", "times": 3, "x-trace": "t-1", "flags": [1, 2]})
    natural(echoed, {"word": "a bé", "times": 3, "trace": "t-1", "flags": [1, 2], "theme": "light"})
    echoed = await call("echo_everything", {"word": "w", "times": 0, "x-trace": "t", "theme": "dark"})
    assert echoed.data["theme"] == "dark"  # a cookie parameter
    natural(await call("remember_theme"), {"set": "theme"})
    echoed = await call("echo_everything", {"word": "w", "times": 0, "x-trace": "t"})
    assert echoed.data["theme"] == "light"  # a cookie an answer set is not kept for the next call
    natural(await call("get_pet", {"name": "cleo"}), {"kind": "cat", "name": "cleo", "indoor": True})
    natural(await call("get_pet", {"name": "rex"}), {"kind": "dog", "name": "rex", "good": True})
    hello = await call("hello_text", {"name": "ada"})
    assert hello.content == [{"type": "text", "text": "hello ada"}] and hello.structured_content is None
    form = await call("form_login", {"user": "ada", "remember": True})
    assert form.data == {
        "content_type": "application/x-www-form-urlencoded",
        "fields": {"user": ["ada"], "remember": ["true"]},
    }

    created = await call("create_item", {"name": "pen", "price": 1.5, "tags": ["desk"]})  # 201, a JSON body
    assert not created.is_error, created.text
    made = created.data
    assert made == {"id": made["id"], "name": "pen", "price": 1.5, "tags": ["desk"]}
    replaced = await call("replace_item", {"item_id": made["id"], "name": "quill", "price": 2})
    assert replaced.data == {"id": made["id"], "name": "quill", "price": 2.0, "tags": []}
    deleted = await call("delete_item", {"item_id": made["id"]})
    assert deleted.content == [{"type": "text", "text": "HTTP 204 (no content)"}] and not deleted.is_error
    missing = await call("get_item", {"item_id": made["id"]})
    assert missing.is_error
    assert (
        missing.text
        == f'Tool \'get_item\': GET /items/{{item_id}}: HTTP 404 Not Found: {{"detail":"no item {made["id"]}"}}'
    )

    natural(await call("read_secret"), {"secret": "42", "tenant": None, "agent": None})
    natural(await call("keyed_header"), {"ok": True})
    natural(await call("redirect_here"), count.data)  # same origin: followed
    away = await call("redirect_away")
    assert away.is_error and "redirected to http://elsewhere.invalid" in away.text and "not followed" in away.text
    invalid = await call("get_item", {"item_id": "one"})
    assert invalid.is_error and "item_id" in invalid.text  # the input schema, checked before any request


@pytest.mark.parametrize("version", ERAS)
async def test_every_operation_in_process(version: str) -> None:
    async with toolkit.Client(in_process(), protocol_version=version) as client:
        await every_operation(client, version)


@pytest.mark.parametrize("version", ERAS)
async def test_every_operation_over_uvicorn(over_uvicorn: Server, version: str) -> None:
    async with toolkit.Client(over_uvicorn, protocol_version=version) as client:
        await every_operation(client, version)


@pytest.mark.parametrize("version", ERAS)
async def test_every_operation_through_toolkit_run_over_stdio(
    document_file: Path, uvicorn_url: str, version: str
) -> None:
    command = [str(TOOLKIT), "run", "--openapi", str(document_file), "--base-url", uvicorn_url]
    command += ["--api-token", TOKEN, "--api-header", f"X-API-Key: {API_KEY}"]
    async with toolkit.Client(command, protocol_version=version) as client:
        await every_operation(client, version)
        assert client.server_info is None or client.server_info["name"] == "Items API"


@pytest.mark.parametrize("version", ERAS)
async def test_every_operation_through_toolkit_run_over_http(toolkit_http: str, version: str) -> None:
    async with toolkit.Client(toolkit_http, protocol_version=version) as client:
        await every_operation(client, version)


async def test_toolkit_run_reads_a_document_from_a_url(uvicorn_url: str) -> None:
    """FastAPI serves its own document: fetched once at start, the token from ``$TOOLKIT_API_TOKEN``."""
    command = [str(TOOLKIT), "run", "--openapi", f"{uvicorn_url}/openapi.json", "--base-url", uvicorn_url]
    environment = {"TOOLKIT_API_TOKEN": TOKEN, "PATH": str(TOOLKIT.parent)}
    async with toolkit.Client(command, env=environment) as client:
        secret = await client.call_tool("read_secret")
        assert secret.data == {"secret": "42", "tenant": None, "agent": None}


def test_toolkit_run_says_what_is_wrong(tmp_path: Path, document_file: Path) -> None:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        argv = [str(TOOLKIT), "run", *args]
        return subprocess.run(
            argv, check=False, capture_output=True, text=True, cwd=REPO, stdin=subprocess.DEVNULL, timeout=60
        )

    broken = tmp_path / "broken.json"
    broken.write_text('{"openapi": "2.0", "paths": {}}')
    for args, said in [
        (("--openapi", str(broken), "--base-url", "http://127.0.0.1:1"), "toolkit reads OpenAPI 3.0.x and 3.1.x"),
        (("--openapi", str(tmp_path / "none.json"), "--base-url", "http://x"), "cannot read the OpenAPI document"),
        (("--openapi", str(document_file)), "where should calls go? Pass base_url="),
        (("app.py", "--openapi", str(document_file)), "give APP or --openapi, not both"),
        ((), "give APP"),
    ]:
        done = run(*args)
        assert done.returncode == 2, (args, done.stderr)
        assert said in done.stderr, (args, done.stderr)
        assert done.stdout == ""


# --- errors and bounds ----------------------------------------------------------------------------------


def _error_sources(uvicorn_url: str, client: httpx.AsyncClient, **options: Any) -> list[Server]:
    return [
        Server.from_fastapi(app, **options),
        Server.from_openapi(app.openapi(), client=client, **options),
    ]


async def test_error_answers_are_bounded_is_error_results(uvicorn_url: str) -> None:
    async with httpx.AsyncClient(base_url=uvicorn_url) as http:
        for server in _error_sources(uvicorn_url, http):
            async with toolkit.Client(server, raise_on_error=False) as client:
                for status, reason in (
                    (500, "Internal Server Error"),
                    (503, "Service Unavailable"),
                    (404, "Not Found"),
                ):
                    failed = await client.call_tool("fail_with", {"status": status})
                    assert failed.is_error and failed.structured_content is None
                    head = f"Tool 'fail_with': GET /fail/{{status}}: HTTP {status} {reason}: "
                    assert failed.text.startswith(head + '{"error":"it went wrong","padding":"xxx')
                    assert failed.text.endswith(" [...]")  # the body is 5 KB: 2 KB of it quoted
                    assert len(failed.text) <= len(head) + 2048 + len(" [...]")


async def test_a_response_that_breaks_its_schema_is_an_output_violation(
    uvicorn_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    async with httpx.AsyncClient(base_url=uvicorn_url) as http:
        for server in _error_sources(uvicorn_url, http):
            caplog.clear()
            async with toolkit.Client(server, raise_on_error=False) as client:
                broken = await client.call_tool("broken_item")
            assert broken.is_error
            assert broken.text == "Tool 'broken_item' produced a result that does not match its output schema"
            logged = [record.getMessage() for record in caplog.records if record.levelno == logging.ERROR]
            assert any("violates its output schema" in line and '"not a number"' in line for line in logged), logged


async def test_a_slow_answer_times_out_naming_the_operation_and_host(uvicorn_url: str) -> None:
    async with httpx.AsyncClient(base_url=uvicorn_url) as http:
        in_app, over_tcp = _error_sources(uvicorn_url, http, timeout=0.5)
        for server, host in ((in_app, "app"), (over_tcp, uvicorn_url.removeprefix("http://"))):
            async with toolkit.Client(server, raise_on_error=False) as client:
                slow = await client.call_tool("slow", {"seconds": 120})
            assert slow.is_error
            assert slow.text == f"Tool 'slow': GET /slow: {host} did not answer within 0.5 s (the source's timeout)"


async def test_an_api_that_cannot_be_reached_is_an_error_result() -> None:
    port = free_port()  # nothing listens there
    server = Server.from_openapi(app.openapi(), base_url=f"http://127.0.0.1:{port}")
    async with toolkit.Client(server, raise_on_error=False) as client:
        result = await client.call_tool("count_items")
    assert result.is_error
    assert result.text.startswith(f"Tool 'count_items': GET /count: could not reach 127.0.0.1:{port}: ")


@pytest.mark.parametrize("streamed", [False, True])
async def test_a_huge_answer_is_refused_at_the_bound(uvicorn_url: str, streamed: bool) -> None:
    async with httpx.AsyncClient(base_url=uvicorn_url) as http:
        for server in _error_sources(uvicorn_url, http, max_response_bytes=10_000):
            async with toolkit.Client(server, raise_on_error=False) as client:
                huge = await client.call_tool("huge", {"streamed": streamed})
            assert huge.is_error
            if streamed:  # no Content-Length: read until the bound, then given up
                assert (
                    huge.text == "Tool 'huge': GET /huge: the answer is over the limit of 10000 bytes; not read further"
                )
            else:
                said = f"the answer is {HUGE_BYTES} bytes, over the limit of 10000 bytes"
                assert huge.text == f"Tool 'huge': GET /huge: {said}"
    async with toolkit.Client(Server.from_fastapi(app)) as client:  # under the default bound (10 MB): read
        assert len((await client.call_tool("huge", {"streamed": streamed})).data) == HUGE_BYTES - 2


# --- credentials and the caller's headers ---------------------------------------------------------


class HeaderAuth(httpx.Auth):
    """Any ``httpx.Auth`` (``toolkit.client.OAuth`` is one): here, the bearer token on each request."""

    def __init__(self) -> None:
        self.requests = 0

    def auth_flow(self, request: httpx.Request) -> Iterator[httpx.Request]:
        self.requests += 1
        request.headers["Authorization"] = f"Bearer {TOKEN}"
        yield request


@pytest.mark.parametrize("where", ["in_process", "uvicorn"])
async def test_each_kind_of_credential_reaches_the_app(uvicorn_url: str, where: str) -> None:
    custom = HeaderAuth()
    cases: list[tuple[Any, str, Any]] = [
        (Bearer(TOKEN), "read_secret", {"secret": "42", "tenant": None, "agent": None}),
        (APIKey("X-API-Key", API_KEY), "keyed_header", {"ok": True}),
        (APIKey("api_key", API_KEY, location="query"), "keyed_query", {"ok": True}),
        (APIKey("session", API_KEY, location="cookie"), "keyed_cookie", {"ok": True}),
        (Basic(USER, PASSWORD), "basic_user", {"user": USER}),
        (custom, "read_secret", {"secret": "42", "tenant": None, "agent": None}),
    ]
    async with httpx.AsyncClient(base_url=uvicorn_url) as http:
        for credential, tool, expected in cases:
            options: dict[str, Any] = {"auth": credential}
            server = (
                Server.from_fastapi(app, **options)
                if where == "in_process"
                else Server.from_openapi(app.openapi(), client=http, **options)
            )
            async with toolkit.Client(server, raise_on_error=False) as client:
                allowed = await client.call_tool(tool)
                assert not allowed.is_error, (credential, allowed.text)
                assert allowed.data == expected
            bare = (
                Server.from_fastapi(app) if where == "in_process" else Server.from_openapi(app.openapi(), client=http)
            )
            async with toolkit.Client(bare, raise_on_error=False) as client:
                refused = await client.call_tool(tool)  # without it, the app's own dependency refuses
                assert refused.is_error and ("HTTP 401" in refused.text or "HTTP 403" in refused.text), refused.text
    assert custom.requests == 1
    assert repr(Bearer(TOKEN)) == "Bearer(token='***')" and TOKEN not in repr(APIKey("k", TOKEN))


def oauth_protected_api(auth: AuthServer, resource: str) -> FastAPI:
    """An API that takes the rig's JWT access tokens for ``resource`` and says so the RFC 9728 way."""
    verifier = JWTVerifier(jwks_uri=auth.jwks_uri, issuer=auth.issuer, audience=resource)
    api = FastAPI(title="Protected")
    challenge = f'Bearer resource_metadata="{resource}.well-known/oauth-protected-resource"'

    @api.get("/.well-known/oauth-protected-resource", include_in_schema=False)
    def metadata() -> dict[str, Any]:
        return {"resource": resource, "authorization_servers": [auth.issuer]}

    @api.get("/me", operation_id="whoami")
    async def whoami(request: Request) -> dict[str, Any]:
        given = request.headers.get("authorization", "")
        try:
            token = await verifier.verify(given.removeprefix("Bearer ")) if given.startswith("Bearer ") else None
        except Exception:  # a token the verifier refuses: the same challenge
            token = None
        if token is None:
            return JSONResponse({"detail": "sign in"}, status_code=401, headers={"WWW-Authenticate": challenge})  # type: ignore[return-value]
        return {"subject": token.subject, "audience": token.claims.get("aud")}

    return api


@pytest.mark.timeout(READY_TIMEOUT + 120)
async def test_the_oauth_client_signs_the_calls_in(auth: AuthServer) -> None:
    """``toolkit.client.OAuth`` (an ``httpx.Auth``) as the source's credential: client credentials from
    the real authorization server of the test rig, found through the API's 401 and its metadata."""
    port = free_port()
    resource = f"http://127.0.0.1:{port}/"
    api = oauth_protected_api(auth, resource)
    oauth = OAuth(
        resource,
        grant="client_credentials",
        client_id="cc-client",
        client_secret="cc-secret",
        allow_http_loopback=True,
    )
    async with serve(api, port=port):
        server = Server.from_openapi(api.openapi(), base_url=resource, auth=oauth)
        async with toolkit.Client(server) as client:
            first = await client.call_tool("whoami")
            assert first.data == {"subject": "cc-client", "audience": resource}
            assert (await client.call_tool("whoami")).data == first.data  # the token kept
        async with toolkit.Client(
            Server.from_openapi(api.openapi(), base_url=resource), raise_on_error=False
        ) as client:
            refused = await client.call_tool("whoami")
            assert refused.is_error and "HTTP 401" in refused.text


async def test_a_credential_wins_over_what_the_model_sends(uvicorn_url: str) -> None:
    """A document declaring the key as a parameter: the configuration fills it, the model cannot."""
    document = app.openapi()
    keyed = document["paths"]["/keyed/query"]["get"]
    keyed["parameters"] = [{"name": "api_key", "in": "query", "required": True, "schema": {"type": "string"}}]
    server = Server.from_openapi(document, base_url=uvicorn_url, auth=APIKey("api_key", API_KEY, location="query"))
    async with toolkit.Client(server) as client:
        tools = {tool["name"]: tool for tool in await client.list_tools()}
        assert "api_key" not in tools["keyed_query"]["inputSchema"].get("properties", {})
        assert (await client.call_tool("keyed_query")).data == {"ok": True}
    assert server.openapi is not None
    assert "query parameter 'api_key' left out: the configuration fills it" in server.openapi.notes["GET /keyed/query"]


async def test_forward_headers_sends_on_only_the_named_headers_of_the_caller() -> None:
    server = Server.from_fastapi(app, auth=Bearer(TOKEN), forward_headers=["X-Tenant"])
    async with serve(server) as running:
        headers = {"X-Tenant": "acme", "X-Agent": "curious", "Authorization": "Bearer the-callers-own"}
        for version in (MODERN, "2025-11-25"):
            async with toolkit.Client(running.url, protocol_version=version, headers=headers) as client:
                seen = await client.call_tool("read_secret")
                # The tenant was forwarded; the agent was not named; the caller's token never leaves.
                assert seen.data == {"secret": "42", "tenant": "acme", "agent": None}
    async with toolkit.Client(server) as client:  # no HTTP request behind the call: nothing to forward
        assert (await client.call_tool("read_secret")).data["tenant"] is None
    with pytest.raises(ValueError, match="describes the connection or the body"):
        Server.from_fastapi(app, forward_headers=["Content-Length"])


# --- composition: namespaces, include/exclude, tags, route maps ------------------------------------------


async def test_mounted_under_a_namespace_with_include_exclude_and_tags() -> None:
    api = OpenAPI(app, auth=CREDENTIALS)
    gateway = Server("gateway")

    @gateway.tool
    def local() -> str:
        return "here"

    gateway.mount(api, namespace="shop", exclude=["delete_item", "slow"])
    gateway.mount(OpenAPI(app), namespace="pets", include=["get_pet"])
    async with toolkit.Client(gateway) as client:
        names = {tool["name"] for tool in await client.list_tools()}
        assert {"local", "shop_list_items", "shop_get_item", "pets_get_pet"} <= names
        assert not {"shop_delete_item", "shop_slow", "pets_list_items", "list_items"} & names
        assert (await client.call_tool("shop_get_item", {"item_id": 2})).data == CHAIR
        assert (await client.call_tool("pets_get_pet", {"name": "cleo"})).data["kind"] == "cat"
        with pytest.raises(toolkit.RegistrationError, match="before it starts serving"):
            gateway.mount(OpenAPI(app), namespace="late")
    gateway.disable(tags={"auth"})  # OpenAPI tags are toolkit tags
    async with toolkit.Client(gateway) as client:
        names = {tool["name"] for tool in await client.list_tools()}
        assert "shop_read_secret" not in names and "shop_list_items" in names
    assert api.sources[0].skipped["DELETE /items/{item_id}"] == "'delete_item' is not offered (include=/exclude=)"
    with pytest.raises(toolkit.RegistrationError, match="already offers"):
        gateway.mount(OpenAPI(app), namespace="shop")  # the same names twice


async def test_route_maps_make_resources_templates_and_exclusions() -> None:
    maps = [
        RouteMap(tags=["errors"], kind="exclude"),
        RouteMap(methods=["GET"], pattern=r"^/items", kind="resource"),
        RouteMap(methods=["GET"], pattern=r"^/(hello|count)$", kind="template"),  # the same as "resource"
        RouteMap(methods=["POST"], kind="resource"),  # never fits a POST: they stay tools
    ]
    gateway = Server("gateway")
    gateway.mount(OpenAPI(app, route_maps=maps), namespace="shop")
    async with toolkit.Client(gateway) as client:
        tools = {tool["name"] for tool in await client.list_tools()}
        resources = {entry["uri"]: entry for entry in await client.list_resources()}
        templates = {entry["uriTemplate"]: entry for entry in await client.list_resource_templates()}
        assert "shop_create_item" in tools and "shop_redirect_here" in tools
        assert not {"shop_list_items", "shop_get_item", "shop_count_items", "shop_fail_with", "shop_slow"} & tools
        assert set(resources) == {"api://shop/count"}  # no parameters: a resource
        assert resources["api://shop/count"]["name"] == "count_items"
        # Path parameters make a template; optional query parameters join as a URI query.
        assert set(templates) == {
            "api://shop/items{?tag*,limit}",
            "api://shop/items/{item_id}",
            "api://shop/hello{?name}",
        }
        assert templates["api://shop/items/{item_id}"]["name"] == "get_item"
        assert templates["api://shop/items/{item_id}"]["mimeType"] == "application/json"
        read = await client.read_resource("api://shop/items/2")
        assert [{**content, "text": json.loads(content["text"])} for content in read] == [
            {"uri": "api://shop/items/2", "mimeType": "application/json", "text": CHAIR}
        ]
        listed = await client.read_resource("api://shop/items?tag=wood&tag=home&limit=1")
        assert json.loads(listed[0]["text"]) == [LAMP]
        count = await client.read_resource("api://shop/count")
        assert count[0]["mimeType"] == "application/json" and int(count[0]["text"]) >= 2
        hello = await client.read_resource("api://shop/hello?name=ada")
        assert hello[0]["text"] == "hello ada" and hello[0]["mimeType"] == "text/plain"
        with pytest.raises(ClientError, match=re.escape("Invalid params: URI variable 'item_id': 'seven' is not")):
            await client.read_resource("api://shop/items/seven")  # not an integer: invalid params
        with pytest.raises(ClientError, match=re.escape("GET /items/{item_id}: HTTP 404 Not Found")):
            await client.read_resource("api://shop/items/99")


def test_a_resource_map_on_an_operation_a_uri_cannot_carry_leaves_a_tool() -> None:
    source = OpenAPI(app, route_maps=[RouteMap(methods=["GET"], kind="resource")]).source()
    assert "echo_everything" in source.items("tools")  # a required query and header parameter
    assert "api://items/{item_id}" in source.items("templates")
    assert "api://count" in source.items("resources")


# --- names, annotations, deprecation ----------------------------------------------------------------


def _document(**paths: Any) -> dict[str, Any]:
    return {"openapi": "3.1.0", "info": {"title": "Names", "version": "2"}, "paths": paths}


def _operation(**fields: Any) -> dict[str, Any]:
    return {"responses": {"200": {"description": "ok"}}, **fields}


def test_tool_names_follow_the_spec_rule_and_collisions_are_reported(caplog: pytest.LogCaptureFixture) -> None:
    long_id = "x" * 200
    document = _document(
        **{
            "/a": {"get": _operation(operationId="list pets!"), "post": _operation(operationId="getPet")},
            "/b": {"get": _operation(operationId="getPet"), "put": _operation(operationId="getPet_2")},
            "/c/{id}": {"get": _operation(parameters=[{"name": "id", "in": "path", "required": True}])},
            "/d": {"delete": _operation(operationId=long_id), "patch": _operation(operationId="été")},
            "/e": {"get": _operation(operationId=long_id)},
        }
    )
    with caplog.at_level(logging.WARNING, logger="toolkit.openapi"):
        source = OpenAPI(document, base_url="http://127.0.0.1:1").source(namespace="ns")
    names = {tool.operation: tool.name for tool in source.items("tools").values()}
    assert names == {
        "GET /a": "ns_list_pets",
        "POST /a": "ns_getPet",  # first in the document; a valid operationId claims itself first
        "GET /b": "ns_getPet_3",  # getPet_2 is another operation's own operationId
        "PUT /b": "ns_getPet_2",
        "GET /c/{id}": "ns_get_c_id",
        "DELETE /d": "ns_" + "x" * 125,  # 128 characters with the namespace
        "PATCH /d": "ns_t",
        "GET /e": "ns_" + "x" * 123 + "_2",
    }
    assert all(len(name) <= 128 for name in names.values())
    assert source.renamed == {
        "GET /a": "list_pets",
        "GET /b": "getPet_3",
        "DELETE /d": "x" * 125,
        "PATCH /d": "t",
        "GET /e": "x" * 123 + "_2",
    }
    warned = [record.getMessage() for record in caplog.records if record.levelno == logging.WARNING]
    assert [line.split(": ", 1)[1] for line in warned] == [
        "GET /b: the name 'getPet' is another operation's; this one is the tool 'getPet_3'",
        f"GET /e: the name '{'x' * 125}' is another operation's; this one is the tool '{'x' * 123}_2'",
    ]


def test_annotations_follow_the_method() -> None:
    methods = ("get", "head", "options", "trace", "put", "post", "patch", "delete")
    document = _document(**{"/thing": {method: _operation(operationId=method) for method in methods}})
    tools = OpenAPI(document, base_url="http://127.0.0.1:1").source().items("tools")
    safe = {"readOnlyHint": True, "idempotentHint": True, "openWorldHint": True}
    assert {name: tools[name].annotations for name in methods} == {
        "get": safe,
        "head": safe,
        "options": safe,
        "trace": safe,
        "put": {"readOnlyHint": False, "idempotentHint": True, "openWorldHint": True},
        "post": {"readOnlyHint": False, "idempotentHint": False, "openWorldHint": True},
        "patch": {"readOnlyHint": False, "idempotentHint": False, "openWorldHint": True},
        "delete": {"readOnlyHint": False, "idempotentHint": True, "destructiveHint": True, "openWorldHint": True},
    }


async def test_deprecated_operations_are_left_out_unless_asked() -> None:
    default = Server.from_fastapi(app)
    assert default.openapi is not None
    assert default.openapi.skipped["GET /old"] == "deprecated (include_deprecated=True keeps it)"
    kept = Server.from_fastapi(app, include_deprecated=True)
    async with toolkit.Client(kept) as client:
        listed = {tool["name"]: tool for tool in await client.list_tools()}
        assert listed["old_items"]["inputSchema"]["type"] == "object"
        assert (await client.call_tool("old_items")).data[:2] == [LAMP, CHAIR]


def test_an_operation_that_cannot_be_served_is_left_out_and_said(caplog: pytest.LogCaptureFixture) -> None:
    document = _document(
        **{
            "/fine": {"get": _operation(operationId="fine")},
            "/far": {
                "get": _operation(operationId="far", parameters=[{"$ref": "other.yaml#/components/parameters/X"}])
            },
        }
    )
    with pytest.raises(ValueError, match="outside this document"):
        OpenAPI(document, base_url="http://127.0.0.1:1").source()  # a path item's parameters: the structure
    document["paths"]["/far"]["get"] = _operation(
        operationId="far",
        responses={
            "200": {"description": "ok", "content": {"application/json": {"schema": {"$ref": "https://x/y.json"}}}}
        },
    )
    with caplog.at_level(logging.WARNING, logger="toolkit.openapi"):
        source = OpenAPI(document, base_url="http://127.0.0.1:1").source()
    assert set(source.items("tools")) == {"fine"}
    assert "outside this document" in source.skipped["GET /far"]
    assert any("GET /far is left out" in record.getMessage() for record in caplog.records)


# --- where calls go ------------------------------------------------------------------------------------


async def test_a_servers_url_on_another_host_is_never_used_silently(uvicorn_url: str) -> None:
    document = app.openapi()
    document["servers"] = [{"url": "http://attacker.invalid:9/api"}]
    with pytest.raises(ValueError, match=r"where should calls go\?.*'http://attacker.invalid:9/api': use_servers=True"):
        Server.from_openapi(document)
    server = Server.from_openapi(document, base_url=uvicorn_url)  # configured: the document's servers are not used
    async with toolkit.Client(server) as client:
        assert (await client.call_tool("get_item", {"item_id": 1})).data == LAMP
    async with httpx.AsyncClient(base_url=uvicorn_url) as http:
        async with toolkit.Client(Server.from_openapi(document, client=http)) as client:
            assert (await client.call_tool("get_item", {"item_id": 1})).data == LAMP
        with pytest.raises(ValueError, match="differs from the client's base_url"):
            Server.from_openapi(document, client=http, base_url="http://127.0.0.1:1")
    document["servers"] = [
        {
            "url": "{scheme}://127.0.0.1:{port}",
            "variables": {"scheme": {"default": "http"}, "port": {"default": uvicorn_url.rsplit(":", 1)[1]}},
        }
    ]
    async with toolkit.Client(Server.from_openapi(document, use_servers=True)) as client:  # asked for
        assert (await client.call_tool("get_item", {"item_id": 2})).data == CHAIR


async def test_documents_load_from_json_yaml_and_a_url(tmp_path: Path, uvicorn_url: str, document_file: Path) -> None:
    as_yaml = tmp_path / "openapi.yaml"
    as_yaml.write_text(yaml.safe_dump(app.openapi(), sort_keys=False))
    for document in (document_file, str(as_yaml), f"{uvicorn_url}/openapi.json"):
        server = Server.from_openapi(document, base_url=uvicorn_url, name="loaded")
        async with toolkit.Client(server) as client:
            assert (await client.call_tool("get_item", {"item_id": 1})).data == LAMP
    hostile = tmp_path / "laughs.yaml"
    levels = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    levels += [f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]" for i in range(7)]
    hostile.write_text("openapi: 3.1.0\n" + "\n".join(levels) + "\n")
    with pytest.raises(ValueError, match=r"aliases expand to \d+ values, over the limit"):
        OpenAPI(str(hostile))


def test_import_toolkit_loads_neither_httpx_nor_the_source() -> None:
    code = (
        "import sys, toolkit; toolkit.OpenAPI; print(sorted(m for m in sys.modules if 'httpx' in m or 'openapi' in m))"
    )
    loaded = subprocess.run([str(PYTHON), "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "['toolkit._openapi']"


# --- the example ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [MODERN, "2025-11-25"])
async def test_the_example_served_by_toolkit_run(version: str) -> None:
    """``toolkit run examples/openapi_app.py``, as its docstring says, over stdio."""
    command = [str(TOOLKIT), "run", str(REPO / "examples" / "openapi_app.py")]
    async with toolkit.Client(command, protocol_version=version) as client:
        names = {tool["name"] for tool in await client.list_tools()}
        assert names == {"list_books", "add_book", "count_books"}
        books = await client.call_tool("list_books", {"author": "Mary Shelley"})
        assert books.data == [
            {"isbn": "9780486282114", "title": "Frankenstein", "author": "Mary Shelley", "year": 1818}
        ]
        assert len((await client.call_tool("list_books", {"author": None})).data) == 3
        added = {"isbn": "9780199535569", "title": "Persuasion", "author": "Jane Austen", "year": 1817}
        assert (await client.call_tool("add_book", added)).data == added
        assert (await client.call_tool("count_books")).data == 4
        templates = await client.list_resource_templates()
        assert [template["uriTemplate"] for template in templates] == ["library://books/{isbn}"]
        read = await client.read_resource("library://books/9780199535569")
        assert json.loads(read[0]["text"]) == added


async def test_a_fastapi_apps_lifespan_runs_with_the_server() -> None:
    """Its startup before the first call, its state in its requests, its shutdown when the server stops."""
    events: list[str] = []

    @contextlib.asynccontextmanager
    async def lifespan(api: FastAPI) -> AsyncIterator[dict[str, Any]]:
        events.append("startup")
        yield {"greeting": "hello from the lifespan"}
        events.append("shutdown")

    api = FastAPI(title="Lifespan", lifespan=lifespan)

    @api.get("/greeting", operation_id="greeting")
    def greeting(request: Request) -> str:
        return str(request.state.greeting)

    server = Server.from_fastapi(api)
    assert events == []  # nothing runs when the server is made
    async with toolkit.Client(server) as client:
        assert events == ["startup"]
        assert (await client.call_tool("greeting")).data == "hello from the lifespan"
    assert events == ["startup", "shutdown"]
    with pytest.raises(TypeError, match="from_fastapi\\(\\) takes a FastAPI app"):
        Server.from_fastapi(app.openapi())


async def test_template_variables_take_their_parameters_types_through_refs_and_enums(uvicorn_url: str) -> None:
    document = {
        "openapi": "3.0.3",
        "info": {"title": "Refs", "version": "1"},
        "components": {
            "schemas": {"Id": {"type": "integer", "minimum": 1}},
            "parameters": {
                "Id": {"name": "item_id", "in": "path", "required": True, "schema": {"$ref": "#/components/schemas/Id"}}
            },
        },
        "paths": {
            "/items/{item_id}": {
                "get": {
                    "operationId": "get_item",
                    "parameters": [
                        {"$ref": "#/components/parameters/Id"},
                        {"name": "view", "in": "query", "schema": {"enum": ["full", "short"], "nullable": True}},
                    ],
                    "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {}}}}},
                }
            }
        },
    }
    server = Server.from_openapi(document, base_url=uvicorn_url, route_maps=[RouteMap(kind="resource")])
    async with toolkit.Client(server) as client:
        (template,) = await client.list_resource_templates()
        assert template["uriTemplate"] == "api://items/{item_id}{?view}"
        read = await client.read_resource("api://items/2?view=short")
        assert json.loads(read[0]["text"]) == CHAIR
        with pytest.raises(ClientError, match="Invalid params"):
            await client.read_resource("api://items/0")  # below the referenced schema's minimum
        with pytest.raises(ClientError, match="Invalid params"):
            await client.read_resource("api://items/1?view=long")  # not in the enum
