"""``toolkit proxy TARGET``: a command, a URL or an ``mcpServers`` file served as one gateway, through the CLI.

The gateways run as the real command (a subprocess) in front of real upstreams: small toolkit
servers started as commands (``tests/support/proxy_cli_apps.py``) or over HTTP, and an ``mcp``
1.30.0 ``FastMCP`` server (``.interop/py-mcp130``, from ``scripts/servers --install-only``;
skipped without it, failed under ``TOOLKIT_TESTS_STRICT=1``). Clients are ``toolkit.Client`` in
both eras. What the command refuses (config files, flags, upstreams it cannot reach) runs through
the CLI's entry point in this process, as ``toolkit install``'s tests do, so it is measured; one
start failure of each transport is typed as a command too.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.support.cli_in_process import run_cli
from tests.support.processes import LOCALHOST, REPO, TOOLKIT, free_port, http_server, stop, wait_for_port

from toolkit import Client, EventStore
from toolkit._cli_auth import auth_options
from toolkit._cli_proxy import build, parser
from toolkit._sources.proxy import ProxySource

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX servers")

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
OLDEST = "2024-11-05"
APPS = REPO / "tests" / "support" / "proxy_cli_apps.py"
NUMBERS = f"{TOOLKIT} run {APPS}:numbers"
WORDS = f"{TOOLKIT} run {APPS}:words"
MCP130 = (REPO / ".interop/py-mcp130/bin/python", REPO / "interop/servers/mcp130_server.py")
READY = 90.0
"""How long a gateway may take to listen: its upstream's cold start included, on a loaded machine."""
FINISHED = 120.0
"""How long a refused start may take: a deadline for a hang, not for speed."""


# --- running the command ----------------------------------------------------------------------------


def proxy_in_process(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``toolkit proxy ARGS`` through the CLI's entry point in this process; what it printed and its status."""
    return run_cli(["proxy", *args], cwd=cwd)


def proxy_command(*args: str) -> subprocess.CompletedProcess[str]:
    """``toolkit proxy ARGS`` typed as a command, stdin closed; bounded only against a hang."""
    return subprocess.run(
        [str(TOOLKIT), "proxy", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=FINISHED,
        check=False,
    )


class Gateway:
    def __init__(self, process: subprocess.Popen[bytes], port: int, log: Path) -> None:
        self.process, self.url, self.log = process, f"http://{LOCALHOST}:{port}/mcp", log

    def output(self) -> str:
        return self.log.read_text(errors="replace")


@contextlib.contextmanager
def http_gateway(target: str, *args: str) -> Iterator[Gateway]:
    """``toolkit proxy TARGET --transport http`` on a free port, once it accepts connections; always stopped.

    The gateway connects to its upstreams before it listens, so accepting connections means ready.
    """
    port = free_port()
    handle, name = tempfile.mkstemp(prefix="toolkit-proxy-", suffix=".log")
    log = Path(name)
    command = [str(TOOLKIT), "proxy", target, "--transport", "http", "--host", LOCALHOST, "--port", str(port), *args]
    with os.fdopen(handle, "wb") as sink:
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=sink, stderr=subprocess.STDOUT)
    gateway = Gateway(process, port, log)
    try:
        try:
            wait_for_port(port, timeout=READY, process=process)
        except AssertionError as exc:
            raise AssertionError(f"{exc}:\n{gateway.output()}") from None
        yield gateway
        assert stop(process) == 0, gateway.output()
    finally:
        stop(process)
        log.unlink(missing_ok=True)


def mcp130() -> list[str]:
    if not all(path.exists() for path in MCP130):
        what = f"{MCP130[0]} is missing: scripts/servers --install-only installs it"
        if os.environ.get("TOOLKIT_TESTS_STRICT"):
            pytest.fail(what)
        pytest.skip(what)
    return [str(path) for path in MCP130]


def write_config(path: Path, config: Any) -> Path:
    path.write_text(config if isinstance(config, str) else json.dumps(config))
    return path


# --- one server, over stdio and over HTTP -------------------------------------------------------------


@pytest.mark.parametrize("version", ["auto", LEGACY])
async def test_stdio_gateway_of_a_command(version: str) -> None:
    gateway = [str(TOOLKIT), "proxy", NUMBERS, "--name", "gateway"]
    async with Client(gateway, protocol_version=version, env={"TOOLKIT_PAGE_SIZE": "2"}) as client:
        # The first request already sees the upstream: the gateway connects before it reads one.
        page = await client.session.result("tools/list")
        assert [tool["name"] for tool in page["tools"]] == ["primes", "era"]  # the server settings apply
        assert "nextCursor" in page
        assert [tool["name"] for tool in await client.list_tools()] == ["primes", "era", "header"]
        assert client.server_info is not None and client.server_info["name"] == "gateway"
        assert (await client.call_tool("primes", {"n": 3})).data == [2, 3, 5]
        assert (await client.call_tool("era", {})).text == MODERN  # auto upstream: the newest both speak
        assert (await client.call_tool("header", {"name": "authorization"})).text == "<none>"  # stdio upstream
        assert client.negotiated_version == (MODERN if version == "auto" else LEGACY)


async def test_http_gateway_serves_both_eras() -> None:
    with http_gateway(NUMBERS) as gateway:
        for version in (MODERN, LEGACY):
            async with Client(gateway.url, protocol_version=version) as client:
                tools = {tool["name"]: tool for tool in await client.list_tools()}
                assert set(tools) == {"primes", "era", "header"}
                assert (await client.call_tool("primes", {"n": 2})).data == [2, 3]
                if version == MODERN:
                    assert tools["primes"]["outputSchema"] == {"type": "array", "items": {"type": "integer"}}
        assert "toolkit: serving MCP over Streamable HTTP at " + gateway.url in gateway.output()


async def test_upstream_credentials_of_a_url_target() -> None:
    """``--header`` and ``--upstream-token`` (or ``$TOOLKIT_UPSTREAM_TOKEN``) reach the upstream, as given."""
    with http_server(f"{APPS}:numbers", timeout=READY) as upstream:
        given = [str(TOOLKIT), "proxy", upstream.url, "--header", "X-Api-Key: k1", "--upstream-token", "t1"]
        async with Client(given) as client:
            assert (await client.call_tool("header", {"name": "x-api-key"})).text == "k1"
            assert (await client.call_tool("header", {"name": "authorization"})).text == "Bearer t1"
        environment = {"TOOLKIT_UPSTREAM_TOKEN": "t2"}
        async with Client([str(TOOLKIT), "proxy", upstream.url], env=environment) as client:
            assert (await client.call_tool("header", {"name": "authorization"})).text == "Bearer t2"


def test_the_gateway_takes_toolkit_runs_authorization_flags() -> None:
    """``--auth-*`` protect the gateway itself: a request without a token is refused, the metadata published."""
    issuer, resource = "https://issuer.example", "https://gateway.example/mcp"
    flags = ["--auth-jwks-uri", f"{issuer}/jwks", "--auth-issuer", issuer, "--resource-url", resource]
    with http_gateway(NUMBERS, *flags, "--required-scope", "mcp:use") as gateway:
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
        refused = httpx.post(gateway.url, json=body, headers={"Accept": "application/json, text/event-stream"})
        assert refused.status_code == 401
        assert "resource_metadata=" in refused.headers["www-authenticate"]
        metadata = httpx.get(gateway.url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")).json()
        assert (metadata["resource"], metadata["authorization_servers"]) == (resource, [issuer])
        assert metadata["scopes_supported"] == ["mcp:use"]


def test_a_gateway_as_authorization_server_on_another_path_names_that_path_as_its_resource(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``toolkit proxy --path /tools/mcp --oauth-proxy-*``: the tokens' audience and the protected
    resource metadata are the gateway's endpoint, not ``/mcp``."""
    monkeypatch.setenv("TOOLKIT_OAUTH_PROXY_CLIENT_SECRET", "upstream-secret")
    base = "https://gateway.example"
    flags = ["--oauth-proxy-issuer", "https://idp.example", "--oauth-proxy-client-id", "toolkit"]
    with http_gateway(NUMBERS, "--path", "/tools/mcp", *flags, "--oauth-proxy-base-url", base) as gateway:
        origin = gateway.url.removesuffix("/mcp")
        metadata = httpx.get(f"{origin}/.well-known/oauth-protected-resource/tools/mcp")
        assert metadata.status_code == 200, gateway.output()
        assert (metadata.json()["resource"], metadata.json()["authorization_servers"]) == (f"{base}/tools/mcp", [base])


# --- the upgrade story: an old server behind a 2026-07-28 endpoint ------------------------------------


async def test_a_server_pinned_to_2024_11_05_served_to_a_modern_client() -> None:
    """The gateway speaks 2024-11-05 upstream and 2026-07-28 to the caller: what that era carries, faithfully."""
    with http_gateway(NUMBERS, "--protocol-version", OLDEST) as gateway:
        async with Client(gateway.url) as client:
            assert client.negotiated_version == MODERN
            assert (await client.call_tool("era", {})).text == OLDEST
            tools = {tool["name"]: tool for tool in await client.list_tools()}
            assert "outputSchema" not in tools["primes"]  # 2024-11-05 has no structured output
            primes = await client.call_tool("primes", {"n": 3})
            assert (primes.data, json.loads(primes.text)) == (None, [2, 3, 5])


@pytest.mark.parametrize("unwrap", [True, False], ids=["unwrap-results", "as-declared"])
async def test_an_mcp_sdk_server_gains_natural_output(unwrap: bool) -> None:
    """An ``mcp`` 1.x server wraps lists and scalars as ``{"result": ...}``; ``--unwrap-results`` undoes it."""
    command = " ".join(mcp130())
    with http_gateway(command, *(["--unwrap-results"] if unwrap else [])) as gateway:
        async with Client(gateway.url, protocol_version=MODERN) as client:
            tools = {tool["name"]: tool for tool in await client.list_tools()}
            primes = await client.call_tool("primes", {"n": 3})
            answer = await client.call_tool("answer", {})
            weather = await client.call_tool("weather", {"city": "Paris"})
    assert weather.data == {"city": "Paris", "temp": 21.5, "sky": "sunny"}
    if unwrap:
        assert tools["primes"]["outputSchema"]["type"] == "array"
        assert (primes.data, answer.data) == ([2, 3, 5], 42)
        assert (primes.structured_content, answer.structured_content) == ([2, 3, 5], 42)
    else:
        assert list(tools["primes"]["outputSchema"]["properties"]) == ["result"]
        assert (primes.structured_content, answer.structured_content) == ({"result": [2, 3, 5]}, {"result": 42})


async def test_an_mcp_sdk_server_pinned_to_2024_11_05_served_to_a_modern_client() -> None:
    command = " ".join(mcp130())
    with http_gateway(command, "--protocol-version", OLDEST, "--unwrap-results") as gateway:
        async with Client(gateway.url, protocol_version=MODERN) as client:
            listed = {tool["name"]: tool for tool in await client.list_tools()}
            primes = await client.call_tool("primes", {"n": 3})  # the client checks the result against the listing
    assert "outputSchema" not in listed["primes"]  # 2024-11-05 has no structured output: none is made up
    assert primes.structured_content is None
    assert "2" in primes.text and "5" in primes.text


# --- an mcpServers file ---------------------------------------------------------------------------------


@pytest.mark.parametrize("form", ["mcpServers", "servers"])
async def test_a_config_file_of_two_servers(tmp_path: Path, form: str) -> None:
    (tmp_path / "home").mkdir()
    typed = {"type": "stdio"} if form == "servers" else {}  # VS Code's mcp.json says servers, with a type
    config = {
        form: {
            "numbers": {**typed, "command": str(TOOLKIT), "args": ["run", f"{APPS}:numbers"]},
            "words": {
                **typed,
                "command": str(TOOLKIT),
                "args": ["run", f"{APPS}:words"],
                "env": {"GREETING": "hi"},
                "cwd": "home",  # from the file's directory
                "autoApprove": ["greet"],  # a host's setting: ignored
            },
            "retired": {"command": "/nonexistent/server", "disabled": True},
        },
        "inputs": [],  # VS Code's prompts for secrets: not a server
    }
    path = write_config(tmp_path / "gateway.json", config)
    async with Client([str(TOOLKIT), "proxy", str(path)]) as client:
        names = [tool["name"] for tool in await client.list_tools()]
        assert names == ["numbers_primes", "numbers_era", "numbers_header", "words_greet", "words_where"]
        assert (await client.call_tool("numbers_primes", {"n": 1})).data == [2]
        assert (await client.call_tool("words_greet", {"name": "Ada"})).text == "Hello, Ada!"
        where = (await client.call_tool("words_where", {})).data
    assert where == {"cwd": str((tmp_path / "home").resolve()), "greeting": "hi"}


async def test_a_config_file_takes_values_from_the_environment(tmp_path: Path) -> None:
    # Claude Code's .mcp.json forms: they were sent as written ("${KEY}" as the header's value).
    with http_server(f"{APPS}:numbers") as numbers:
        config = {
            "mcpServers": {
                "web": {"url": "${TOOLKIT_TEST_UPSTREAM}", "headers": {"X-Key": "Key ${TOOLKIT_TEST_KEY}"}},
                "words": {
                    "command": "${TOOLKIT_TEST_NEVER_SET:-" + str(TOOLKIT) + "}",
                    "args": ["run", f"{APPS}:words"],
                    "env": {"GREETING": "${env:TOOLKIT_TEST_GREETING} $NOT_EXPANDED"},
                },
            }
        }
        path = write_config(tmp_path / "gateway.json", config)
        environment = {
            **os.environ,
            "TOOLKIT_TEST_UPSTREAM": numbers.url,
            "TOOLKIT_TEST_KEY": "k-123",
            "TOOLKIT_TEST_GREETING": "howdy",
        }
        async with Client([str(TOOLKIT), "proxy", str(path)], env=environment) as client:
            assert (await client.call_tool("web_header", {"name": "X-Key"})).text == "Key k-123"
            assert (await client.call_tool("words_where", {})).data["greeting"] == "howdy $NOT_EXPANDED"


def test_the_example_gateway_file(tmp_path: Path) -> None:
    """examples/gateway.json: weather.py and notes.py under one gateway, as docs/cli.md shows it."""
    path = REPO / "examples" / "gateway.json"
    shown = f"```json\n{path.read_text()}```\n"
    assert shown in (REPO / "docs" / "cli.md").read_text(), "docs/cli.md shows examples/gateway.json as it is"
    environment = {**os.environ, "PATH": f"{TOOLKIT.parent}{os.pathsep}{os.environ['PATH']}"}

    async def check() -> None:
        async with Client([str(TOOLKIT), "proxy", str(path)], env=environment, cwd=str(tmp_path)) as client:
            names = {tool["name"] for tool in await client.list_tools()}
            assert {"weather_get_temperatures", "notes_add_note"} <= names, names
            assert all(name.startswith(("weather_", "notes_")) for name in names)  # "everything" is disabled
            assert (await client.call_tool("weather_get_count", {})).data == 42

    asyncio.run(check())


# --- what the command refuses ----------------------------------------------------------------------------


CONFIG_ERRORS = {
    "bad-json": ('{"mcpServers": {"a": {"command": "x",}}}', ["is not valid JSON", "line 1"]),
    "not-an-object": ("[]", ["holds a JSON array"]),
    "no-servers-key": ({"servers_": {}}, ['no "mcpServers"']),
    "both-keys": ({"mcpServers": {}, "servers": {}}, ['both "mcpServers" and "servers"']),
    "empty": ({"mcpServers": {}}, ["no servers"]),
    "all-disabled": ({"mcpServers": {"a": {"command": "x", "disabled": True}}}, ["every entry is disabled"]),
    "neither": ({"mcpServers": {"weather": {"args": ["x"]}}}, ["server 'weather'", 'neither "command"', '"url"']),
    "both": ({"mcpServers": {"weather": {"command": "x", "url": "http://h/mcp"}}}, ["server 'weather'", "both"]),
    "sse": (
        {"mcpServers": {"legacy": {"type": "sse", "url": "http://h/sse"}}},
        ["server 'legacy'", '"type": "sse"', "HTTP+SSE", "does not speak"],
    ),
    "bad-type": ({"mcpServers": {"w": {"type": "ws", "url": "ws://h"}}}, ["server 'w'", "'ws'"]),
    "type-mismatch": ({"mcpServers": {"w": {"type": "http", "command": "x"}}}, ["server 'w'", "does not fit"]),
    "bad-name": ({"mcpServers": {"my server": {"command": "x"}}}, ["server 'my server'", "namespace", "letters"]),
    "unknown-key": (
        {"mcpServers": {"w": {"command": "x", "envFile": ".env"}}},
        ["server 'w'", "unknown key 'envFile'", "command, args, env"],
    ),
    "args-not-strings": ({"mcpServers": {"w": {"command": "x", "args": [1]}}}, ["server 'w'", '"args"']),
    "env-not-strings": ({"mcpServers": {"w": {"command": "x", "env": {"A": 1}}}}, ["server 'w'", '"env"']),
    "headers-on-a-command": ({"mcpServers": {"w": {"command": "x", "headers": {}}}}, ["server 'w'", '"headers"']),
    "env-on-a-url": ({"mcpServers": {"w": {"url": "http://h/mcp", "env": {}}}}, ["server 'w'", '"env"']),
    "url-scheme": ({"mcpServers": {"w": {"url": "ftp://h/mcp"}}}, ["server 'w'", "http://"]),
    "missing-cwd": ({"mcpServers": {"w": {"command": "x", "cwd": "nowhere"}}}, ["server 'w'", "not a directory"]),
    "disabled-not-bool": ({"mcpServers": {"w": {"command": "x", "disabled": "yes"}}}, ["server 'w'", "true or false"]),
    "entry-not-object": ({"mcpServers": {"w": "npx server"}}, ["server 'w'", "JSON string"]),
    "unset-variable": (
        {"mcpServers": {"w": {"command": "x", "args": ["--key", "${TOOLKIT_TEST_NEVER_SET}"]}}},
        ["server 'w'", '"args"', "${TOOLKIT_TEST_NEVER_SET}", "not set", "${TOOLKIT_TEST_NEVER_SET:-DEFAULT}"],
    ),
    "vs-code-input": (
        {"mcpServers": {"w": {"url": "http://h/mcp", "headers": {"X-Key": "${input:api-key}"}}}},
        ["server 'w'", "\"headers\" 'X-Key'", "${input:api-key}", "VS Code asks its user"],
    ),
    "unknown-reference": (
        {"mcpServers": {"w": {"command": "${workspaceFolder:x}/server"}}},
        ["server 'w'", '"command"', "${NAME:-default}"],
    ),
    "url-once-expanded": (
        {"mcpServers": {"w": {"url": "${TOOLKIT_TEST_NEVER_SET:-ftp://h}/mcp"}}},
        ["server 'w'", "http:// or https:// URL once expanded"],
    ),
}


@pytest.mark.parametrize("case", sorted(CONFIG_ERRORS))
def test_a_config_file_it_cannot_use(tmp_path: Path, case: str) -> None:
    config, said = CONFIG_ERRORS[case]
    path = write_config(tmp_path / "gateway.json", config)
    done = proxy_in_process(str(path))
    assert done.returncode == 2, done
    assert done.stderr.startswith(f"toolkit proxy: {path}") or done.stderr.startswith("toolkit proxy: cannot read")
    for fragment in said:
        assert fragment in done.stderr, (fragment, done.stderr)
    assert done.stderr.count("\n") == 1  # one line, no traceback


def test_a_missing_config_file(tmp_path: Path) -> None:
    done = proxy_in_process(str(tmp_path / "gateway.json"))
    assert (done.returncode, done.stderr) == (2, f"toolkit proxy: {tmp_path / 'gateway.json'}: no such file\n")


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["python server.py", "--header", "X-Key: 1"], "--header and --upstream-token are for a URL TARGET"),
        (["gateway.json", "--upstream-token", "t"], "--header and --upstream-token are for a URL TARGET"),
        (["http://127.0.0.1:1/mcp", "--header", "no-colon"], "--header 'no-colon': give NAME:VALUE"),
        (["python server.py", "--auth-jwks-uri", "https://as/jwks"], "--auth-jwks-uri is for a gateway served over"),
        (["python server.py", "--forward-token"], "--forward-token is for a gateway served over HTTP"),
        (["python server.py", "--transport", "http", "--auth-issuer", "https://as"], "needs --auth-jwks-uri too"),
        (["python server.py", "--log-level", "loud"], "--log-level 'loud': use debug, info, warning or error"),
        (["python server.py", "--store", "redis://127.0.0.1:1/0"], "--store is for a gateway served over HTTP"),
        (
            ["python server.py", "--transport", "http", "--store", "memcached://h"],
            "toolkit proxy: store: 'memcached://h' is not a store URL; use redis://HOST:PORT/DB",
        ),
    ],
)
def test_flags_it_refuses(args: list[str], said: str) -> None:
    done = proxy_in_process(*args)
    assert done.returncode == 2, done
    assert said in done.stderr


@pytest.mark.parametrize(
    ("flags", "in_memory"),
    [([], False), (["--resumable"], True), (["--resumable", "--store", "redis://127.0.0.1:1/0"], False)],
)
def test_resumable_keeps_the_events_in_memory_unless_the_store_keeps_them(flags: list[str], in_memory: bool) -> None:
    # With --store, Redis keeps every stream's events for all the replicas: a memory store would hide them.
    gateway = build(parser(auth_options).parse_args(["python server.py", "--transport", "http", *flags]))
    assert isinstance(gateway.event_store, EventStore) is in_memory


def test_a_store_it_cannot_reach_stops_the_start_naming_it() -> None:
    down = free_port()
    done = proxy_command("python server.py", "--transport", "http", "--store", f"redis://{LOCALHOST}:{down}/0")
    assert done.returncode == 1, done
    first, second = done.stderr.splitlines()
    assert first.startswith(f"toolkit proxy: cannot reach Redis at redis://{LOCALHOST}:{down}/0: ")
    assert second == "Start it, or fix --store."


def test_a_server_setting_it_cannot_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLKIT_PAGE_SIZE", "0")
    done = proxy_in_process("python server.py")
    assert (done.returncode, done.stderr) == (
        2,
        "toolkit proxy: $TOOLKIT_PAGE_SIZE='0': page_size takes a whole number, at least 1\n",
    )


def test_the_options_reach_each_upstream(tmp_path: Path) -> None:
    path = write_config(
        tmp_path / "gateway.json",
        {"mcpServers": {"a": {"command": "x"}, "b": {"url": "http://127.0.0.1:1/mcp", "headers": {"X-Key": "k"}}}},
    )
    given = [str(path), "--unwrap-results", "--sessions", "per_session", "--protocol-version", OLDEST]
    args = parser(auth_options).parse_args([*given, "--timeout", "5", "--name", "gw"])
    gateway = build(args)
    assert gateway.name == "gw"
    sources = [source for _, source in gateway.mounted]
    assert [source.namespace for source in sources] == ["a", "b"]
    for source in sources:
        assert isinstance(source, ProxySource)
        assert source.unwrap_results and source.upstream.sessions == "per_session"
        assert not source.upstream.forward_token
        client = source.upstream.client
        assert (client.protocol_version, client.timeout, client.probe_timeout) == (OLDEST, 5.0, 5.0)
    assert [source.upstream.client.target for source in sources] == [["x"], "http://127.0.0.1:1/mcp"]
    assert sources[1].upstream.client.headers == {"X-Key": "k"}


@pytest.mark.parametrize("where", ["url", "command", "exits", "config", "config-of-one"])
def test_an_upstream_it_cannot_reach_stops_the_start(tmp_path: Path, where: str) -> None:
    """Exit status 1 and one message saying why, at once: no hang, no traceback. "config": a file
    none of whose servers can be reached (one that can is served without the others: below)."""
    url = f"http://{LOCALHOST}:{free_port()}/mcp"
    crash = f"{sys.executable} -c \"import sys; sys.exit('upstream: out of cheese')\""
    config = {"mcpServers": {"down": {"url": url}}}
    if where == "config":
        config["mcpServers"]["missing"] = {"command": "/nonexistent/server"}
    target = {
        "url": url,
        "command": "/nonexistent/server --stdio",
        "exits": crash,
        "config": str(write_config(tmp_path / "gateway.json", config)),
        "config-of-one": str(write_config(tmp_path / "gateway.json", config)),
    }[where]
    done = proxy_in_process(target)
    assert done.returncode == 1, done
    message = done.stderr[done.stderr.index("toolkit proxy: ") :]
    assert message.startswith(f"toolkit proxy: {target}: the gateway did not start: ")
    reason = {
        "url": f"cannot connect to the MCP server at {url}",
        "command": "could not start the server command ['/nonexistent/server', '--stdio']: No such file",
        "exits": "exited with code 1; the last lines of its stderr:\n  upstream: out of cheese",
        "config": f"none of its servers could be reached: proxied server '{url}' (namespace 'down'): "
        f"cannot connect to the MCP server at {url}",
        "config-of-one": f"cannot connect to the MCP server at {url}",
    }[where]
    assert reason in message
    if where == "config":  # and the other one, named
        assert "proxied server '/nonexistent/server' (namespace 'missing'): [Errno 2] could not start" in message
    if where == "config-of-one":  # which of the file's servers it was
        assert f"proxied server '{url}' (namespace 'down') could not be reached" in message
    assert "Traceback" not in done.stderr


async def test_a_config_files_server_that_cannot_be_reached_joins_once_it_answers(tmp_path: Path) -> None:
    # It stopped the whole gateway's start (a replica restarting while one upstream was down served
    # nothing). Now the others are served meanwhile, and its tools join, announced, once it answers.
    port = free_port()
    url = f"http://{LOCALHOST}:{port}/mcp"
    config = {
        "mcpServers": {
            "numbers": {"command": str(TOOLKIT), "args": ["run", f"{APPS}:numbers"]},
            "words": {"url": url},
        }
    }
    path = write_config(tmp_path / "gateway.json", config)
    with http_gateway(str(path)) as gateway:
        assert f"proxied server '{url}' (namespace 'words') could not be reached; serving without it" in (
            gateway.output()
        )
        async with Client(gateway.url, protocol_version=MODERN) as client:
            names = [tool["name"] for tool in await client.list_tools()]
            assert names == ["numbers_primes", "numbers_era", "numbers_header"]
            assert (await client.call_tool("numbers_primes", {"n": 2})).data == [2, 3]
            async with await client.listen(tools=True) as subscription:
                with http_server(f"{APPS}:words", port=port):
                    async with asyncio.timeout(READY):  # a hang guard: the backoff is at most 30 s
                        notification = await anext(aiter(subscription))
                    assert notification["method"] == "notifications/tools/list_changed"
                    names = [tool["name"] for tool in await client.list_tools()]
                    assert names[3:] == ["words_greet", "words_where"]
                    assert (await client.call_tool("words_greet", {"name": "Ada"})).text == "Hello, Ada!"
        assert "can be reached now: its components join" in gateway.output()


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_an_unreachable_upstream_typed_as_a_command(transport: str) -> None:
    down = free_port()
    url = f"http://{LOCALHOST}:{down}/mcp"
    done = proxy_command(url, "--transport", transport, "--port", str(free_port()))
    assert done.returncode == 1, done
    # The last words are the event loop's: asyncio's, or uvloop's when uvicorn runs on it.
    refused = (f"[Errno 111] Connect call failed ('{LOCALHOST}', {down})", "[Errno 111] Connection refused")
    assert done.stderr in {
        f"toolkit proxy: {url}: the gateway did not start: proxied server '{url}' could not be reached: "
        f"cannot connect to the MCP server at {url}: {words}\n"
        for words in refused
    }
