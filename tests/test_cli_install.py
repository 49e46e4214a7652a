"""``toolkit install HOST APP``: the host's config entry, written into a temporary home and project.

Each test runs the real command in a subprocess with ``HOME`` (and the working directory, for the
workspace files) pointed at temporary folders, reads the JSON it wrote, and starts the server the
way the host would: the entry's command and args, its env added, listed or called through
``toolkit tools|call "<command>"``.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.support.cli_in_process import run_cli
from tests.support.processes import TOOLKIT

from toolkit import Client

APP = '''
import os

from toolkit import Server

server = Server("envy")


@server.tool()
def show(name: str) -> str:
    """The value of an environment variable, as the server sees it."""
    return os.environ.get(name, "<unset>")
'''

# host: (the file, relative to HOME or to the project, the key holding servers, whether under HOME)
HOSTS: dict[str, tuple[str, str, bool]] = {
    "claude-desktop": (".config/Claude/claude_desktop_config.json", "mcpServers", True),
    "claude-code": (".mcp.json", "mcpServers", False),
    "cursor": (".cursor/mcp.json", "mcpServers", True),
    "vscode": (".vscode/mcp.json", "servers", False),
}


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path]:
    """A home and a project folder, with the app in the project."""
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    (project / "app.py").write_text(APP)
    return home, project


def environment(home: Path) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items() if name not in ("XDG_CONFIG_HOME", "APPDATA")}
    env["HOME"] = str(home)
    return env


def install_command(home: Path, project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``toolkit install ARGS`` as a user types it: the real command, in a subprocess."""
    return subprocess.run(
        [str(TOOLKIT), "install", *args],
        cwd=project,
        env=environment(home),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def install(home: Path, project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``toolkit install ARGS`` through the CLI's entry point in this process (the same code as the command).

    HOME and the working directory are pointed at the test's folders for the call and put back
    after; what it prints and the exit status come back as the subprocess's would.
    """
    return run_cli(["install", *args], env=environment(home), cwd=project)


def config_of(host: str, home: Path, project: Path) -> Path:
    relative, _, under_home = HOSTS[host]
    return (home if under_home else project) / relative


def started(entry: dict[str, Any], home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``toolkit ARGS "<the entry's command>"``, run from elsewhere with the entry's env, as a host would."""
    command = shlex.join([entry["command"], *entry["args"]])
    env = environment(home) | entry.get("env", {})
    elsewhere = home  # hosts start servers in a directory of their own, not the app's
    return subprocess.run(
        [str(TOOLKIT), args[0], command, *args[1:]],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


async def values_seen(entry: dict[str, Any], home: Path, *names: str) -> dict[str, str]:
    """The variables the server sees, started from the entry by ``toolkit.Client`` the way a host does."""
    async with Client([entry["command"], *entry["args"]], env=entry.get("env"), cwd=str(home)) as client:
        return {name: (await client.call_tool("show", {"name": name})).text for name in names}


@pytest.mark.parametrize("host", list(HOSTS))
def test_install_writes_the_entry_and_keeps_the_rest(host: str, places: tuple[Path, Path]) -> None:
    home, project = places
    path = config_of(host, home, project)
    _, key, _ = HOSTS[host]
    path.parent.mkdir(parents=True, exist_ok=True)
    other = {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"]}
    path.write_text(json.dumps({"theme": "dark", key: {"everything": other}}))

    done = install(home, project, host, "app.py")

    assert done.returncode == 0, done.stderr
    assert str(path) in done.stdout and "'envy'" in done.stdout
    config = json.loads(path.read_text())
    assert config["theme"] == "dark" and config[key]["everything"] == other  # nothing else touched
    entry = config[key]["envy"]
    assert entry["command"] == os.path.abspath(sys.executable)
    assert entry["args"] == ["-m", "toolkit", "run", str(project / "app.py")]
    assert "env" not in entry
    if host in ("vscode", "claude-code"):
        assert entry["type"] == "stdio"
    else:
        assert "type" not in entry
    # The printed entry is the one written.
    printed = done.stdout.split(":\n", 1)[1].rsplit("\n", 2)[0]
    assert json.loads(printed) == {"envy": entry}

    listed = started(entry, home, "tools")
    assert listed.returncode == 0, listed.stderr
    assert [tool["name"] for tool in json.loads(listed.stdout)] == ["show"]


@pytest.mark.parametrize("host", list(HOSTS))
def test_install_creates_the_file_and_its_folders(host: str, places: tuple[Path, Path]) -> None:
    home, project = places
    path = config_of(host, home, project)
    assert not path.parent.exists() or not path.exists()
    done = install(home, project, host, "app.py", "--name", "mine")
    assert done.returncode == 0, done.stderr
    _, key, _ = HOSTS[host]
    assert list(json.loads(path.read_text())) == [key]
    assert list(json.loads(path.read_text())[key]) == ["mine"]
    assert not [p.name for p in path.parent.iterdir() if p.name.endswith(".tmp")]  # no temporary file left


def test_install_refuses_an_existing_name_unless_forced(places: tuple[Path, Path]) -> None:
    home, project = places
    path = config_of("cursor", home, project)
    assert install(home, project, "cursor", "app.py").returncode == 0
    first = path.read_bytes()

    again = install(home, project, "cursor", "app.py", "--env", "A=1")
    assert again.returncode == 2
    assert f"{path} already has a server named 'envy'" in again.stderr and "--force" in again.stderr
    assert path.read_bytes() == first

    forced = install(home, project, "cursor", "app.py", "--env", "A=1", "--force")
    assert forced.returncode == 0, forced.stderr
    assert "replaced the server 'envy'" in forced.stdout
    assert json.loads(path.read_text())["mcpServers"]["envy"]["env"] == {"A": "1"}


@pytest.mark.parametrize(
    "text",
    ['{"servers": {}, // a comment\n}', "[1, 2]", '{"mcpServers": []}', '{"mcpServers": {"a": 1},}'],
    ids=["comment", "array", "servers-not-object", "trailing-comma"],
)
def test_install_leaves_a_file_it_cannot_read_alone(text: str, places: tuple[Path, Path]) -> None:
    home, project = places
    path = config_of("claude-code", home, project)
    path.write_text(text)
    done = install(home, project, "claude-code", "app.py", "--force")
    assert done.returncode == 2
    assert str(path) in done.stderr and "left unchanged" in done.stderr
    assert path.read_text() == text
    assert not [p.name for p in project.iterdir() if p.name.endswith(".tmp")]


def test_install_env_and_env_file_reach_the_server(places: tuple[Path, Path]) -> None:
    home, project = places
    (project / "secrets.env").write_text('# the API key\nexport API_KEY="s3cret"\nREGION=eu\n')
    done = install(
        home, project, "vscode", "app.py", "--env", "REGION=us", "--env", "MODE=a=b", "--env-file", "secrets.env"
    )
    assert done.returncode == 0, done.stderr
    entry = json.loads((project / ".vscode" / "mcp.json").read_text())["servers"]["envy"]
    assert entry["env"] == {"REGION": "us", "MODE": "a=b"}
    assert entry["args"][-2:] == ["--env-file", str(project / "secrets.env")]  # absolute: read at each start
    assert "s3cret" not in (project / ".vscode" / "mcp.json").read_text()  # the secret stays in its file

    # As a host starts it: the command and args, a small default environment plus the entry's env, elsewhere.
    shown = asyncio.run(values_seen(entry, home, "API_KEY", "REGION", "MODE"))
    assert shown == {"API_KEY": "s3cret", "REGION": "us", "MODE": "a=b"}
    # REGION: the entry's env is set before the file is read, and a variable already set wins.


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--env", "NOVALUE"), "--env 'NOVALUE': give KEY=VALUE"),
        (("--env-file", "missing.env"), "--env-file missing.env: no such file"),
    ],
)
def test_install_refuses_bad_env(args: tuple[str, ...], message: str, places: tuple[Path, Path]) -> None:
    home, project = places
    done = install(home, project, "cursor", "app.py", *args)
    assert done.returncode == 2
    assert message in done.stderr
    assert not (home / ".cursor").exists()


def test_install_refuses_an_env_file_it_cannot_read(places: tuple[Path, Path]) -> None:
    home, project = places
    (project / "bad.env").write_text("not a pair\n")
    done = install(home, project, "cursor", "app.py", "--env-file", "bad.env")
    assert done.returncode == 2
    assert "bad.env:1: not a KEY=VALUE line" in done.stderr
    assert not (home / ".cursor").exists()


def test_install_refuses_an_app_that_does_not_load(places: tuple[Path, Path]) -> None:
    home, project = places
    (project / "broken.py").write_text("raise RuntimeError('boom')\n")
    done = install(home, project, "cursor", "broken.py")
    assert done.returncode == 2
    assert "boom" in done.stderr
    assert not (home / ".cursor").exists()


def test_install_mcp_json_prints_the_standard_entry(places: tuple[Path, Path]) -> None:
    home, project = places
    done = install(home, project, "mcp-json", "app.py:server", "--env", "A=1")
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    assert list(printed) == ["mcpServers"]
    entry = printed["mcpServers"]["envy"]
    assert entry == {
        "command": os.path.abspath(sys.executable),
        "args": ["-m", "toolkit", "run", f"{project / 'app.py'}:server"],
        "env": {"A": "1"},
    }
    assert list(home.iterdir()) == []  # nothing written
    assert asyncio.run(values_seen(entry, home, "A")) == {"A": "1"}


def test_install_help_lists_the_hosts() -> None:
    helped = subprocess.run([str(TOOLKIT), "install", "--help"], capture_output=True, text=True, check=True).stdout
    for host in (*HOSTS, "mcp-json"):
        assert host in helped


def test_install_as_a_command_writes_what_the_entry_point_writes(places: tuple[Path, Path]) -> None:
    """The other tests call the CLI's entry point in process; this one types the command."""
    home, project = places
    done = install_command(home, project, "cursor", "app.py", "--env", "A=1")
    assert done.returncode == 0, done.stderr
    entry = json.loads(config_of("cursor", home, project).read_text())["mcpServers"]["envy"]
    assert entry["args"] == ["-m", "toolkit", "run", str(project / "app.py")]
    assert entry["env"] == {"A": "1"}
    refused = install_command(home, project, "cursor", "app.py")
    assert refused.returncode == 2 and "already has a server named 'envy'" in refused.stderr
