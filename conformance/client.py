"""The client the official MCP conformance suite drives: ``toolkit.Client`` doing what each scenario asks.

The suite (``conformance client --command ".venv/bin/python conformance/client.py"``) starts a mock
server for a scenario and runs this program with the server's URL as its last argument and:

- ``MCP_CONFORMANCE_SCENARIO``: the scenario's name (``tools_call``, ``auth/scope-step-up``, ...);
- ``MCP_CONFORMANCE_PROTOCOL_VERSION``: the protocol version to speak (``2025-11-25``: the
  ``initialize`` handshake; ``2026-07-28``: per-request ``_meta``);
- ``MCP_CONFORMANCE_CONTEXT`` (some scenarios): JSON with the scenario's data (pre-registered
  credentials, the tool calls to make).

Everything goes through the public client API (``toolkit.Client``, its ``OAuth``); the suite judges
what reached its server. Nothing here works around the client: where the client does something
wrong, the scenario fails. Exit status 0 when the scenario's steps all succeeded, 1 when the client
stopped with an error (which some scenarios expect: a refusal), 2 for a scenario not handled here;
the status is also left in ``$CONFORMANCE_CLIENT_STATUS_DIR`` for ``conformance/client_run.py``,
which runs and scores every scenario (conformance/README.md).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import traceback
from collections.abc import Callable, Coroutine
from typing import Any

import httpx

from toolkit.client import Client, OAuth

log = logging.getLogger("conformance.client")

LEGACY = "2025-11-25"
CIMD_URL = "https://conformance-test.local/client-metadata.json"
"""This client's metadata document URL (SEP-991), as the suite's own client uses it: the suite's
authorization server takes it as a client id without fetching it."""
REQUEST_TIMEOUT = 60.0
"""Seconds a request may wait for its answer: generous (the suite's own timeout bounds the run)."""

Scenario = Callable[[str, str, dict[str, Any]], Coroutine[Any, Any, None]]
SCENARIOS: dict[str, Scenario] = {}


def scenario(*names: str) -> Callable[[Scenario], Scenario]:
    def register(function: Scenario) -> Scenario:
        for name in names:
            SCENARIOS[name] = function
        return function

    return register


def client(url: str, version: str, **options: Any) -> Client:
    options.setdefault("client_info", {"name": "toolkit-conformance-client", "version": "1.0.0"})
    return Client(url, protocol_version=version, timeout=REQUEST_TIMEOUT, **options)


def placeholder(schema: Any) -> Any:
    """A value of the type a JSON Schema property asks for (arguments for tools the scenario does not specify)."""
    kind = schema.get("type") if isinstance(schema, dict) else None
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if not isinstance(kind, str):
        return "x"
    return {
        "string": "x",
        "integer": 1,
        "number": 1.5,
        "boolean": True,
        "object": {},
        "array": [],
        "null": None,
    }.get(kind, "x")


def arguments_for(tool: dict[str, Any]) -> dict[str, Any]:
    schema = tool.get("inputSchema") or {}
    properties = schema.get("properties") or {}
    return {name: placeholder(properties.get(name)) for name in schema.get("required") or []}


# --- the core scenarios -----------------------------------------------------------------------------


@scenario("initialize", "tools_call")
async def list_and_call(url: str, version: str, context: dict[str, Any]) -> None:
    """List the tools and call the first one with ``a=2, b=3`` (the suite's add_numbers)."""
    async with client(url, version) as mcp:
        tools = await mcp.list_tools()
        log.info("listed %d tool(s)", len(tools))
        if tools:
            result = await mcp.call_tool(tools[0]["name"], {"a": 2, "b": 3})
            log.info("called %s: %s", tools[0]["name"], result.content)


@scenario("json-schema-ref-no-deref")
async def list_only(url: str, version: str, context: dict[str, Any]) -> None:
    """List the tools (one has a network ``$ref`` the client must not fetch); the mock serves nothing else."""
    async with client(url, version) as mcp:
        tools = await mcp.list_tools()
        log.info("listed %d tool(s)", len(tools))


@scenario("json-schema-2020-12-preservation")
async def echo_schema(url: str, version: str, context: dict[str, Any]) -> None:
    """Send back the inputSchema the client listed for the focal tool: any keyword it dropped shows."""
    async with client(url, version) as mcp:
        tools = {tool["name"]: tool for tool in await mcp.list_tools()}
        focal = tools.get("json_schema_2020_12_tool")
        if focal is None:
            raise RuntimeError(f"the focal tool is not listed (listed: {sorted(tools)})")
        result = await mcp.call_tool("json_schema_echo", {"schema": focal["inputSchema"]})
        log.info("echoed: %s", result.content)


@scenario("request-metadata")
async def request_metadata(url: str, version: str, context: dict[str, Any]) -> None:
    """The client's own version negotiation (``auto``: ``server/discover`` first; the mock refuses the
    first request with -32022), then ``tools/list``; the handlers make it declare roots, sampling
    and elicitation, whose declarations the scenario checks."""
    async with client(
        url,
        "auto",
        roots=lambda params: {"roots": []},
        sampling=lambda params: {"role": "assistant", "content": {"type": "text", "text": "ok"}, "model": "none"},
        elicitation=lambda params: {"action": "decline"},
    ) as mcp:
        log.info("negotiated %s", mcp.negotiated_version)
        tools = await mcp.list_tools()
        log.info("listed %d tool(s)", len(tools))


@scenario("sse-retry")
async def sse_retry(url: str, version: str, context: dict[str, Any]) -> None:
    """Call ``test_reconnection``: the server closes the call's stream after a priming event with
    ``retry: 500``; the answer comes only on the stream the client resumes (GET, ``Last-Event-ID``)."""
    async with client(url, version) as mcp:
        await mcp.list_tools()
        result = await mcp.call_tool("test_reconnection", {})
        log.info("called test_reconnection: %s", result.content)


@scenario("elicitation-sep1034-client-defaults")
async def elicitation_defaults(url: str, version: str, context: dict[str, Any]) -> None:
    """Accept the server's form without filling anything in: the defaults of its schema are the answer."""

    def accept_as_is(params: dict[str, Any]) -> dict[str, Any]:
        log.info("elicitation: %s", json.dumps(params)[:500])
        return {"action": "accept", "content": {}}

    async with client(url, version, elicitation=accept_as_is) as mcp:
        await mcp.list_tools()
        result = await mcp.call_tool("test_client_elicitation_defaults", {})
        log.info("called: %s", result.content)


@scenario("sep-2322-client-request-state")
async def request_state(url: str, version: str, context: dict[str, Any]) -> None:
    """Three tools answering ``input_required`` (with ``requestState``, without it, without ``resultType``).

    While the first one's question is being answered, another tool is called on the same client:
    its request must carry neither the other call's ``inputResponses`` nor its ``requestState``.
    """
    mcp: Client | None = None
    unrelated_called = False

    async def confirm(params: dict[str, Any]) -> dict[str, Any]:
        nonlocal unrelated_called
        if not unrelated_called and mcp is not None:
            unrelated_called = True
            await mcp.call_tool("test_mrtr_unrelated", {})
            log.info("called test_mrtr_unrelated between the rounds of another call")
        return {"action": "accept", "content": {"confirmed": True}}

    async with client(url, version, elicitation=confirm) as connected:
        mcp = connected
        await mcp.list_tools()
        for name in ("test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_no_result_type"):
            result = await mcp.call_tool(name, {})
            log.info("called %s: %s", name, result.content)


# --- the HTTP header scenarios (2026-07-28) ---------------------------------------------------------


@scenario("http-standard-headers")
async def standard_headers(url: str, version: str, context: dict[str, Any]) -> None:
    """Every request that carries ``Mcp-Method`` / ``Mcp-Name``: tools, resources, prompts, each listed one used."""
    async with client(url, version) as mcp:
        for tool in await mcp.list_tools():
            await mcp.call_tool(tool["name"], arguments_for(tool))
        for resource in await mcp.list_resources():
            await mcp.read_resource(resource["uri"])
        for prompt in await mcp.list_prompts():
            arguments = {arg["name"]: "x" for arg in prompt.get("arguments") or [] if arg.get("required")}
            await mcp.get_prompt(prompt["name"], arguments)


@scenario("http-custom-headers")
async def custom_headers(url: str, version: str, context: dict[str, Any]) -> None:
    """The calls the scenario's context lists, with its arguments: the client mirrors the
    ``x-mcp-header`` parameters into ``Mcp-Param-*`` headers (Base64 where the value needs it)."""
    async with client(url, version) as mcp:
        await mcp.list_tools()
        for call in context.get("toolCalls") or []:
            result = await mcp.call_tool(call["name"], call.get("arguments") or {})
            log.info("called %s: %s", call["name"], result.content)


@scenario("http-invalid-tool-headers")
async def invalid_tool_headers(url: str, version: str, context: dict[str, Any]) -> None:
    """Call every tool the client offers: it must have left out those whose ``x-mcp-header`` is invalid
    (or refuse to call them), and keep the valid one."""
    async with client(url, version) as mcp:
        tools = await mcp.list_tools()
        log.info("the client lists %s", [tool["name"] for tool in tools])
        for tool in tools:
            try:
                await mcp.call_tool(tool["name"], arguments_for(tool))
                log.info("called %s", tool["name"])
            except Exception as exc:  # refused, one way or another (logged, for the report): the next tool
                log.info("calling %s failed: %s: %s", tool["name"], type(exc).__name__, exc)


# --- authorization ------------------------------------------------------------------------------------


async def follow_authorization(authorization_url: str) -> str:
    """The headless user agent: the suite's authorization server redirects at once; the redirect is the answer."""
    async with httpx.AsyncClient(timeout=30.0) as http:
        response = await http.get(authorization_url, follow_redirects=False)
    location = response.headers.get("location")
    if response.status_code not in (301, 302, 303, 307, 308) or not location:
        raise RuntimeError(f"the authorization endpoint answered {response.status_code} without a redirect")
    return str(httpx.URL(authorization_url).join(location))


def oauth(context: dict[str, Any]) -> OAuth:
    return OAuth(
        client_id=context.get("client_id"),
        client_secret=context.get("client_secret"),
        client_metadata_url=CIMD_URL,
        client_name="toolkit-conformance-client",
        user_agent=follow_authorization,
        allow_http_loopback=True,
    )


@scenario(
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
    "auth/resource-mismatch",
    "auth/offline-access-scope",
    "auth/offline-access-not-supported",
    "auth/authorization-server-migration",
    "auth/iss-supported",
    "auth/iss-not-advertised",
    "auth/iss-supported-missing",
    "auth/iss-wrong-issuer",
    "auth/iss-unexpected",
    "auth/iss-normalized",
    "auth/metadata-issuer-mismatch",
    "auth/2025-03-26-oauth-metadata-backcompat",
    "auth/2025-03-26-oauth-endpoint-fallback",
)
async def authorized(url: str, version: str, context: dict[str, Any]) -> None:
    """Sign in with toolkit's OAuth on the first 401, list the tools, call ``test-tool``.

    The scenario decides the rest: which metadata to find where, how to register (pre-registered
    credentials come in the context), which scopes to ask for, a step-up on the call, a move to
    another authorization server, or something the client must refuse.
    """
    async with client(url, version, auth=oauth(context)) as mcp:
        tools = await mcp.list_tools()
        log.info("listed %s", [tool["name"] for tool in tools])
        result = await mcp.call_tool("test-tool", {})
        log.info("called test-tool: %s", result.content)


@scenario("auth/client-credentials-basic")
async def client_credentials(url: str, version: str, context: dict[str, Any]) -> None:
    """The client credentials grant (an extension scenario: run, reported, not scored), with the
    client id and secret the context gives."""
    auth = OAuth(
        client_id=context["client_id"],
        client_secret=context["client_secret"],
        grant="client_credentials",
        allow_http_loopback=True,
    )
    async with client(url, version, auth=auth) as mcp:
        tools = await mcp.list_tools()
        log.info("listed %s", [tool["name"] for tool in tools])


def record(name: str, version: str, code: int, error: str | None) -> None:
    """Leave this run's exit status where ``client_run.py`` looks (``CONFORMANCE_CLIENT_STATUS_DIR``):
    the suite keeps only the checks, and a client that stopped with an error fails the scenario there."""
    directory = os.environ.get("CONFORMANCE_CLIENT_STATUS_DIR")
    if not directory:
        return
    status = {"scenario": name, "version": version, "exit": code, "error": error}
    path = os.path.join(directory, name.replace("/", "__") + ".json")
    os.makedirs(directory, exist_ok=True)
    with open(path + ".tmp", "w") as output:
        json.dump(status, output)
    os.replace(path + ".tmp", path)


def main() -> int:
    logging.basicConfig(
        level=logging.DEBUG if os.environ.get("CONFORMANCE_CLIENT_DEBUG") else logging.INFO,
        stream=sys.stderr,
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
    )
    name = os.environ.get("MCP_CONFORMANCE_SCENARIO")
    if not name or len(sys.argv) < 2:
        print("usage: MCP_CONFORMANCE_SCENARIO=<scenario> client.py <server-url>", file=sys.stderr)
        print(f"scenarios: {', '.join(sorted(SCENARIOS))}", file=sys.stderr)
        return 2
    url = sys.argv[-1]
    version = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION") or LEGACY
    run = SCENARIOS.get(name)
    if run is None:
        error = f"no such scenario in conformance/client.py: {name!r} (not built in toolkit's client)"
        print(f"{error}; scenarios: {', '.join(sorted(SCENARIOS))}", file=sys.stderr)
        record(name, version, 2, error)
        return 2
    raw_context = os.environ.get("MCP_CONFORMANCE_CONTEXT")
    context: dict[str, Any] = json.loads(raw_context) if raw_context else {}
    log.info("scenario %s at %s against %s", name, version, url)
    try:
        asyncio.run(run(url, version, context))
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"
        print(f"scenario {name} stopped: {error}", file=sys.stderr)
        traceback.print_exc()
        record(name, version, 1, error)
        return 1
    log.info("scenario %s: done", name)
    record(name, version, 0, None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
