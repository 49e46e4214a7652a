"""The ``toolkit`` command: ``run`` (app loading in every spelling) and ``tools``."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from tests.support.apps import STDIO_APP, WEATHER, weather_server
from tests.support.memory import ALL_VERSIONS, MODERN, SERVER_INFO_KEY, modern_meta
from tests.support.processes import REPO, TOOLKIT, RunningServer
from tests.support.stdio import StdioClient
from tests.wire import assert_valid, validator

from toolkit.testing import Client

Start = Callable[..., StdioClient]
APP = STDIO_APP.relative_to(REPO)


def toolkit(*args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(TOOLKIT), *args], cwd=REPO, capture_output=True, text=True, timeout=timeout, check=False)


def served(client: StdioClient) -> tuple[str, list[str]]:
    """The name a server reports and its tool names."""
    client.use_modern()
    discover = client.result("server/discover")
    tools = [tool["name"] for tool in client.result("tools/list")["tools"]]
    assert client.close() == 0
    client.assert_all_valid(MODERN)
    return discover["_meta"][SERVER_INFO_KEY]["name"], tools


@pytest.mark.parametrize(
    ("app", "name", "tool"),
    [
        (f"{APP}:other", "stdio-test-other", "only_other"),
        (str(STDIO_APP) + ":other", "stdio-test-other", "only_other"),
        ("tests.support.stdio_app:other", "stdio-test-other", "only_other"),
        (str(APP), "stdio-test", "slow"),
        ("tests.support.stdio_app", "stdio-test", "slow"),
        (f"{APP}:server", "stdio-test", "slow"),
        (f"{APP}:make_server", "stdio-test-factory", "made"),
        ("tests.support.stdio_app:make_server", "stdio-test-factory", "made"),
        ("examples/weather.py", "weather", "get_weather_forecast"),
    ],
    ids=[
        "path:attr",
        "absolute-path:attr",
        "module:attr",
        "path-default-attr",
        "module-default-attr",
        "path:server",
        "path:factory",
        "module:factory",
        "weather",
    ],
)
def test_run_loads_the_app_in_every_spelling(stdio_client: Start, app: str, name: str, tool: str) -> None:
    reported, tools = served(stdio_client(app))
    assert reported == name
    assert tool in tools


@pytest.mark.parametrize("command", ["run", "tools"])
@pytest.mark.parametrize(
    ("app", "mentions"),
    [
        ("tests/support/no_such_app.py", "no_such_app.py"),
        ("tests/support/no_such_app.py:server", "no_such_app.py"),
        (f"{APP}:no_such_attr", "no_such_attr"),
        ("tests.support.no_such_module:server", "no_such_module"),
        ("tests.support.stdio_app:no_such_attr", "no_such_attr"),
        (f"{APP}:not_a_server", "not_a_server"),
    ],
    ids=["missing-file", "missing-file-attr", "missing-attr", "missing-module", "module-missing-attr", "not-a-server"],
)
def test_missing_apps_fail_clearly(command: str, app: str, mentions: str) -> None:
    completed = toolkit(command, app)
    assert completed.returncode == 2, completed
    assert mentions in completed.stderr
    assert "Traceback" not in completed.stderr, "a clear message, not a stack trace"
    assert completed.stdout == "", "nothing on stdout (it is the protocol channel for stdio)"


@pytest.mark.parametrize("version", ALL_VERSIONS)
async def test_tools_prints_what_a_client_of_that_version_sees(version: str) -> None:
    completed = toolkit("tools", str(WEATHER), "--protocol-version", version)
    assert completed.returncode == 0, completed.stderr
    printed = json.loads(completed.stdout)
    async with Client(weather_server(), protocol_version=version) as client:
        expected = await client.list_tools()
    assert printed == expected
    tool_schema = validator(version, "Tool")
    for tool in printed:
        assert tool_schema.is_valid(tool), f"{tool['name']} is not a valid {version} Tool"


async def test_tools_defaults_to_the_latest_version() -> None:
    completed = toolkit("tools", "examples/weather.py")
    assert completed.returncode == 0, completed.stderr
    async with Client(weather_server()) as client:
        assert json.loads(completed.stdout) == await client.list_tools()


def test_tools_rejects_an_unknown_protocol_version() -> None:
    completed = toolkit("tools", str(WEATHER), "--protocol-version", "1999-01-01")
    assert completed.returncode == 2
    assert "1999-01-01" in completed.stderr
    assert completed.stdout == ""


def test_run_over_http_on_a_free_port(http_server: Callable[..., RunningServer]) -> None:
    running = http_server(APP)
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": modern_meta()}}
    headers = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "server/discover",
        "Origin": running.base_url,
    }
    response = httpx.post(running.url, json=body, headers=headers, timeout=10)
    assert response.status_code == 200, response.text
    message = response.json()
    assert_valid(message, MODERN, method="server/discover")
    assert message["result"]["_meta"][SERVER_INFO_KEY]["name"] == "stdio-test"
