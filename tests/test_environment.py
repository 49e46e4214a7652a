"""``TOOLKIT_*`` variables and ``.env`` files, read into a ``Server`` (``toolkit._environment``) in this process.

tests/test_first_hour.py starts ``toolkit run`` with them set, as a deployment would; here each
reader, refusal and rule is checked on its own.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from toolkit import Server
from toolkit._environment import SETTINGS, load_env_file, settings_from_environment


def server_with_a_tool() -> Server:
    server = Server("env")

    @server.tool
    def echo(text: str) -> str:
        return text

    return server


def test_each_variable_sets_its_setting() -> None:
    server = server_with_a_tool()
    environ = {
        "TOOLKIT_MASK_ERRORS": "no",
        "TOOLKIT_PAGE_SIZE": "7",
        "TOOLKIT_LIST_TTL_MS": "0",
        "TOOLKIT_READ_TTL_MS": "1500",
        "TOOLKIT_READ_CACHE_SCOPE": "private",
        "TOOLKIT_CLIENT_REQUEST_TIMEOUT": "2.5",
        "TOOLKIT_TOOL_TIMEOUT": "none",
        "TOOLKIT_MAX_CONCURRENT_REQUESTS": "3",
        "TOOLKIT_TRACING": "on",
        "UNRELATED": "x",
    }
    applied = settings_from_environment(server, environ)
    assert set(applied) == {name for name in environ if name.startswith("TOOLKIT_")}
    assert server.mask_errors is False
    assert server.page_size == 7
    assert server.list_ttl_ms == 0
    assert server.read_ttl_ms == 1500
    assert server.read_cache_scope == "private"
    assert server.client_request_timeout == 2.5
    assert server.tool_timeout is None
    assert server.max_concurrent_requests == 3
    assert server.tracing is True


def test_an_empty_variable_is_unset() -> None:
    server = server_with_a_tool()
    before = server.page_size
    assert settings_from_environment(server, {"TOOLKIT_PAGE_SIZE": ""}) == []
    assert server.page_size == before


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("TOOLKIT_PAGE_SIZE", "0", "page_size takes a whole number, at least 1"),
        ("TOOLKIT_PAGE_SIZE", "ten", "page_size takes a whole number, at least 1"),
        ("TOOLKIT_LIST_TTL_MS", "-1", "list_ttl_ms takes a whole number of milliseconds, 0 or more"),
        ("TOOLKIT_CLIENT_REQUEST_TIMEOUT", "0", "client_request_timeout takes a number of seconds above 0"),
        ("TOOLKIT_TOOL_TIMEOUT", "soon", "tool_timeout takes a number of seconds above 0, or none"),
        ("TOOLKIT_MASK_ERRORS", "maybe", "mask_errors takes true or false"),
        ("TOOLKIT_READ_CACHE_SCOPE", "shared", "read_cache_scope takes public or private"),
    ],
)
def test_a_value_that_cannot_be_read_names_the_variable_and_what_it_takes(
    variable: str, value: str, message: str
) -> None:
    with pytest.raises(ValueError, match=rf"^\${variable}={value!r}: {message}"):
        settings_from_environment(server_with_a_tool(), {variable: value})


def test_a_task_ttl_above_the_longest_is_refused() -> None:
    with pytest.raises(ValueError, match=r"TOOLKIT_TASK_TTL_MS \(5000\) is above the longest a task may live"):
        settings_from_environment(
            server_with_a_tool(), {"TOOLKIT_TASK_TTL_MS": "5000", "TOOLKIT_MAX_TASK_TTL_MS": "1000"}
        )


def test_tool_timeout_and_depth_reach_tools_that_kept_the_servers_value() -> None:
    server = server_with_a_tool()

    @server.tool(timeout=9.0)
    def own(text: str) -> str:
        return text

    settings_from_environment(server, {"TOOLKIT_TOOL_TIMEOUT": "4", "TOOLKIT_MAX_ARGUMENT_DEPTH": "5"})
    tools = server.registry.tools
    assert tools["echo"].timeout == 4.0  # type: ignore[attr-defined]
    assert tools["own"].timeout == 9.0  # type: ignore[attr-defined]  (its own value stays)
    assert tools["echo"].max_argument_depth == 5


def test_every_variable_names_a_real_setting() -> None:
    server = Server("names")
    for setting, _ in SETTINGS.values():
        assert hasattr(server, setting), setting


def test_an_env_file_in_the_usual_form(tmp_path: Path) -> None:
    path = tmp_path / ".env"
    path.write_text("# a comment\n\nexport API_KEY='s3cret'\nREGION=\"eu west\"\nMODE=a=b # trailing\nKEPT=from-file\n")
    environ = {"KEPT": "already"}
    added = load_env_file(path, environ)
    assert added == ["API_KEY", "REGION", "MODE"]
    assert environ == {"KEPT": "already", "API_KEY": "s3cret", "REGION": "eu west", "MODE": "a=b"}


def test_an_env_file_line_that_is_not_key_value_is_named(tmp_path: Path) -> None:
    path = tmp_path / ".env"
    path.write_text("GOOD=1\nnot a line\n")
    with pytest.raises(ValueError, match=r"\.env:2: not a KEY=VALUE line: 'not a line'"):
        load_env_file(path, {})
