"""``toolkit tools TARGET`` and ``toolkit call TARGET TOOL`` against a server at a URL or started by a command.

Every test runs the real command (``toolkit ...``) against a real server: a ``toolkit run``
process over Streamable HTTP, or a child process over stdio started by the command itself.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from tests.support.apps import WEATHER
from tests.support.cli_in_process import run_cli
from tests.support.issuer import serve_issuer
from tests.support.processes import TOOLKIT, free_port, http_server

pytestmark = pytest.mark.timeout(120)

STDIO_TARGET = f"{sys.executable} -m toolkit run {WEATHER}"


def toolkit_command(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``toolkit ARGS`` as a user types it: the real command, in a subprocess."""
    return subprocess.run(
        [str(TOOLKIT), *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=90,
        stdin=subprocess.DEVNULL,
        env=env,
    )


def toolkit(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``toolkit ARGS`` through the CLI's entry point in this process (the same code as the command).

    ``env`` replaces the environment for the call and is put back after; what it prints and the
    exit status come back as the subprocess's would.
    """
    return run_cli(list(args), env=env)


def test_the_command_lists_and_calls_a_remote_server() -> None:
    """The other tests call the CLI's entry point in process; this one types the command."""
    done = toolkit_command("tools", STDIO_TARGET)
    assert done.returncode == 0, done.stderr
    assert "get_temperatures" in {tool["name"] for tool in json.loads(done.stdout)}
    with http_server(WEATHER, timeout=60) as server:
        called = toolkit_command("call", server.url, "get_temperatures", "city=Paris")
    assert called.returncode == 0, called.stderr
    assert json.loads(called.stdout)["structuredContent"] == [61, 63, 66, 70, 72, 71]


def test_tools_of_a_command_lists_over_stdio_in_the_newest_era() -> None:
    done = toolkit("tools", STDIO_TARGET)
    assert done.returncode == 0, done.stderr
    names = {tool["name"] for tool in json.loads(done.stdout)}
    assert {"get_temperatures", "get_weather_forecast"} <= names


@pytest.mark.parametrize(
    ("version", "structured"),
    [("auto", [61, 63, 66, 70, 72, 71]), ("2025-11-25", {"result": [61, 63, 66, 70, 72, 71]})],
)
def test_call_over_http_prints_what_a_client_of_that_era_gets(version: str, structured: object) -> None:
    with http_server(WEATHER, timeout=60) as server:
        done = toolkit("call", server.url, "get_temperatures", "city=Paris", "--protocol-version", version)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["structuredContent"] == structured


def test_call_over_a_command_with_arguments_from_the_schema() -> None:
    done = toolkit("call", STDIO_TARGET, "get_weather_forecast", "city=Paris", "hours=2")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert len(result["structuredContent"]) == 2


def test_an_unknown_tool_lists_the_remote_tools_and_exits_2() -> None:
    done = toolkit("call", STDIO_TARGET, "nope")
    assert done.returncode == 2
    assert "has no tool 'nope'; its tools:" in done.stderr and "get_temperatures" in done.stderr


def test_token_is_sent_as_a_bearer_token() -> None:
    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    with serve_issuer(resource) as issuer:
        flags = ["--auth-jwks-uri", issuer.jwks_uri, "--auth-issuer", issuer.issuer, "--resource-url", resource]
        env = {key: value for key, value in os.environ.items() if not key.startswith("TOOLKIT_")}
        with http_server(WEATHER, *flags, port=port, env=env, timeout=60):
            refused = toolkit("tools", resource, env=env)
            assert refused.returncode == 1
            assert "Unauthorized: send a bearer token" in refused.stderr
            flag = toolkit("tools", resource, "--token", issuer.token(), env=env)
            assert flag.returncode == 0, flag.stderr
            from_environment = toolkit("tools", resource, env={**env, "TOOLKIT_TOKEN": issuer.token()})
            assert from_environment.returncode == 0, from_environment.stderr


def test_header_is_sent_and_a_malformed_one_is_refused() -> None:
    with http_server(WEATHER, timeout=60) as server:
        done = toolkit("tools", server.url, "--header", "X-Trace: abc")
        assert done.returncode == 0, done.stderr
        bad = toolkit("tools", server.url, "--header", "no-colon")
    assert bad.returncode == 2
    assert "give NAME:VALUE" in bad.stderr


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("http://127.0.0.1:9/mcp", "cannot connect to the MCP server at http://127.0.0.1:9/mcp"),
        ("no-such-command --flag", "could not start the server command"),
    ],
)
def test_an_unreachable_server_is_named_with_the_reason(target: str, message: str) -> None:
    done = toolkit("tools", target, "--timeout", "30")
    assert done.returncode == 1
    assert message in done.stderr


def test_auto_is_refused_for_a_local_app() -> None:
    done = toolkit("tools", str(WEATHER), "--protocol-version", "auto")
    assert done.returncode == 2
    assert "--protocol-version auto is for a URL or a command" in done.stderr
