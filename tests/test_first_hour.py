"""Issue 37, "the first hour": what a newcomer hit, each reproduced the way it was found.

Through the docs as written, the ``toolkit`` command in a real subprocess, or the wire.
"""

from __future__ import annotations

import json
import os
import pty
import re
import shlex
import socket
import subprocess
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from tests.support.apps import WEATHER
from tests.support.processes import PYTHON, REPO, TOOLKIT, RunningServer, stop
from tests.support.stdio import StdioClient
from tests.test_cli_dev import call, error_page, eventually, toolkit_dev


def bash_lines(page: str) -> list[str]:
    text = (REPO / page).read_text()
    blocks = re.findall(r"```bash\n(.*?)```", text, re.DOTALL)
    return [line for block in blocks for line in block.replace("\\\n", " ").splitlines() if line.strip()]


# --- 1. the install line ---------------------------------------------------------------------------


def test_quickstart_installs_from_a_copy_of_the_repository() -> None:
    # `pip install toolkit-mcp` answered "No matching distribution found": it is not published.
    installs = [line for line in bash_lines("docs/quickstart.md") if " install " in line]
    for line in installs:
        target = shlex.split(line, comments=True)[2]
        assert target.startswith("~/src/toolkit"), f"the quickstart installs {target!r}, which is not published: {line}"
    text = (REPO / "docs/quickstart.md").read_text()
    assert "~/src/toolkit" in text.split("```bash")[0], "the quickstart says where the copy is before using it"
    # The clone URL was a placeholder: no command of the quickstart or the README has one.
    for page in ("docs/quickstart.md", "README.md"):
        for line in bash_lines(page):
            assert "<" not in line.split("#")[0], f"{page}: a placeholder in a command: {line}"


def test_readme_marks_the_pypi_name_as_not_yet_published() -> None:
    text = (REPO / "README.md").read_text()
    for sentence in re.split(r"(?<=[.;])\s", text):
        if "pip install toolkit-mcp" in sentence:
            assert "once published" in sentence.lower() or "not work yet" in sentence, sentence
    assert "pip install /path/to/toolkit" in text


# --- 2. server.run() at module level ---------------------------------------------------------------

RUNS_AT_IMPORT = """\
from toolkit import Server

server = Server("runs")


@server.tool
def add(a: int, b: int) -> int:
    return a + b


server.run()
"""


def toolkit(*args: str, cwd: Path, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    """``toolkit ARGS`` in ``cwd``, its stdin an open pipe as a terminal's would be (not at EOF)."""
    with subprocess.Popen(
        [str(TOOLKIT), *args], cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as process:
        out, err = _wait(process, timeout)
        return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def _wait(process: subprocess.Popen[str], timeout: float) -> tuple[str, str]:
    # communicate() would close stdin, which ends a stdio server: keep it open as a terminal does.
    assert process.stdout is not None and process.stderr is not None
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise AssertionError(f"{process.args} still ran after {timeout:g} s (it hangs)") from None
    return process.stdout.read(), process.stderr.read()


@pytest.mark.parametrize("command", [["tools"], ["call", "add", "a=1", "b=2"], ["run"], ["dev", "--no-reload"]])
def test_server_run_at_import_is_refused_saying_what_to_write(tmp_path: Path, command: list[str]) -> None:
    (tmp_path / "runs.py").write_text(RUNS_AT_IMPORT)
    args = [command[0], "runs.py", *command[1:]]
    done = toolkit(*args, "--port", "0", cwd=tmp_path) if command[0] == "dev" else toolkit(*args, cwd=tmp_path)
    assert done.returncode == 2, done
    assert "runs.py calls server.run() at runs.py:11 while it is imported" in done.stderr
    assert 'if __name__ == "__main__":' in done.stderr
    assert done.stdout == ""


def test_server_run_at_import_is_shown_on_the_dev_page(tmp_path: Path) -> None:
    app = tmp_path / "runs.py"
    app.write_text(RUNS_AT_IMPORT)
    with toolkit_dev(app) as dev:
        shown = eventually(lambda: error_page(dev), "the error page")
        assert "calls server.run() at runs.py:11" in shown and "__main__" in shown


# --- 3. a return value that is not JSON ------------------------------------------------------------

POINTS = """\
from toolkit import Server

server = Server("points")


class Point:
    def __init__(self, x: int, y: int) -> None:
        self.x, self.y = x, y


@server.tool
def where(x: int, y: int):
    return Point(x, y)


@server.tool
def where_dict(x: int, y: int) -> dict:
    return {"at": Point(x, y)}
"""

NOT_JSON = {
    "where": "Tool 'where' returned a Point, which has no JSON form. Make Point a pydantic model or a dataclass "
    "(and annotate the return type with it), or return dicts and lists of JSON values",
    "where_dict": "Tool 'where_dict' returned a dict holding a Point, which has no JSON form. Make Point a pydantic "
    "model or a dataclass (and annotate the return type with it), or return dicts and lists of JSON values",
}


@pytest.mark.parametrize("tool", sorted(NOT_JSON))
def test_toolkit_call_refuses_a_value_with_no_json_form_naming_tool_type_and_fix(tmp_path: Path, tool: str) -> None:
    # It went out as "<point.Point object at 0x...>" (no annotation), or as "does not match its output schema"
    # with the cause only in the log (-> dict).
    (tmp_path / "points.py").write_text(POINTS)
    done = toolkit("call", "points.py", tool, "x=1", "y=2", cwd=tmp_path)
    assert done.returncode == 1, done
    result = json.loads(done.stdout)
    assert result["isError"] is True
    assert result["content"] == [{"type": "text", "text": NOT_JSON[tool]}]
    assert f"ERROR toolkit: {NOT_JSON[tool]} (pydantic: Unable to serialize unknown type" in done.stderr


def test_a_served_tool_with_no_json_form_is_masked_for_the_client_and_logged(
    tmp_path: Path, stdio_client: Callable[..., StdioClient]
) -> None:
    (tmp_path / "points.py").write_text(POINTS)
    client = stdio_client(tmp_path / "points.py")
    client.use_modern()
    for tool in NOT_JSON:
        result = client.call_tool(tool, {"x": 1, "y": 2})
        assert result["isError"] is True
        text = result["content"][0]["text"]
        assert text == f"Tool {tool!r} returned a value that is not JSON (see the server's log)"
        assert "object at 0x" not in json.dumps(result)
    assert client.close() == 0
    for said in NOT_JSON.values():
        assert said in client.stderr


# --- 4. untyped parameters -------------------------------------------------------------------------

GREET = """\
from typing import Any

from toolkit import Server

server = Server("greeter")


@server.tool
def greet(name: str, excited=False, extra: Any = None, ctx=None) -> str:
    return f"Hello, {name}{'!' if excited else '.'}"
"""


@pytest.mark.parametrize("command", [["tools"], ["run"]])
def test_an_untyped_parameter_is_warned_about_at_registration(tmp_path: Path, command: list[str]) -> None:
    # `excited=no` reached the function as the string "no", which is true, and nothing said why.
    (tmp_path / "greet.py").write_text(GREET)
    done = subprocess.run(
        [str(TOOLKIT), command[0], "greet.py"],
        check=False,
        cwd=tmp_path,
        input="",
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    warned = [line for line in done.stderr.splitlines() if "has no type hint" in line]
    assert warned == [
        "tool 'greet' (greet.py:8): parameter 'excited' has no type hint, so clients may send any JSON value there "
        'and the function gets it as it came ("no" stays a string, which is true). Annotate it (excited: bool), or '
        "with Any to take any value on purpose",
        "tool 'greet' (greet.py:8): parameter 'ctx' has no type hint, so clients may send any JSON value there "
        'and the function gets it as it came ("no" stays a string, which is true). Annotate it (ctx: str | None), or '
        "with Any to take any value on purpose",
    ]


# --- 5. what toolkit run says when it starts -------------------------------------------------------

BANNER = re.compile(r"toolkit: serving MCP over Streamable HTTP at (http://127\.0\.0\.1:(\d+))/mcp\n")


def test_run_over_http_says_where_it_listens_and_the_page(tmp_path: Path) -> None:
    # It printed nothing at start, with --docs too.
    log = tmp_path / "run.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [str(TOOLKIT), "run", str(WEATHER), "--transport", "http", "--port", "0", "--docs"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=sink,
        )
    try:
        said = eventually(lambda: _said(log, "Ctrl-C to stop"), "the start banner")
        found = BANNER.search(said)
        assert found, said
        base = found[1]
        assert f"toolkit: tools page at {base}/docs\n" in said
        assert httpx.get(f"{base}/docs", timeout=30).status_code == 200
    finally:
        stop(process)


def _said(log: Path, text: str) -> str:
    said = log.read_text()
    assert text in said
    return said


def test_a_port_in_use_gets_a_toolkit_message(tmp_path: Path) -> None:
    # It was uvicorn's bare "[Errno 98] error while attempting to bind on address".
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        for extra in ([], ["--workers", "2"]):
            done = subprocess.run(
                [str(TOOLKIT), "run", str(WEATHER), "--transport", "http", "--port", str(port), *extra],
                check=False,
                input="",
                capture_output=True,
                text=True,
                timeout=30,
            )
            assert done.returncode == 1, done
            assert (
                f"toolkit: cannot listen on 127.0.0.1:{port}: Address already in use; another server listens there: "
                "stop it or choose another --port"
            ) in done.stderr
            assert "Errno" not in done.stderr


def test_stdio_in_a_terminal_says_it_waits_for_a_client() -> None:
    # In a terminal, `toolkit run server.py` sat silent: it looked hung.
    primary, secondary = pty.openpty()
    with (
        os.fdopen(primary, "wb", buffering=0) as terminal,
        subprocess.Popen([str(TOOLKIT), "run", str(WEATHER)], stdin=secondary, stderr=subprocess.PIPE) as process,
    ):
        os.close(secondary)
        assert process.stderr is not None
        line = process.stderr.readline().decode()
        terminal.write(b"\x04")  # Ctrl-D: end of input
        stop(process)
    assert line.startswith("toolkit: serving MCP over stdio, waiting for a client's JSON-RPC messages on stdin.")
    assert "`toolkit dev APP`" in line


def test_stdio_from_a_host_says_nothing(stdio_client: Callable[..., StdioClient]) -> None:
    client = stdio_client(WEATHER)
    client.use_modern()
    client.result("tools/list")
    assert client.close() == 0
    assert "waiting for a client" not in client.stderr


# --- 6. a tool holding the event loop --------------------------------------------------------------

SLEEPY = """\
import time

from toolkit import Server

server = Server("sleepy")


@server.tool
async def slow() -> str:
    time.sleep(2)
    return "done"
"""


def test_dev_says_which_tool_holds_the_event_loop_and_what_to_do(tmp_path: Path) -> None:
    # time.sleep() in an async def tool made every other call wait, and nothing said why.
    app = tmp_path / "sleepy.py"
    app.write_text(SLEEPY)
    with toolkit_dev(app) as dev:
        assert eventually(lambda: call(dev.url, "slow"), "the call") == "done"
        said = eventually(lambda: _said(dev.log, "the event loop is free again"), "the report")
    held = [line for line in said.splitlines() if "held the event loop" in line]
    assert len(held) == 1, said
    assert held[0].startswith("toolkit dev: tool 'slow' has held the event loop for ")
    assert held[0].endswith(
        " s, at sleepy.py:10: every other request waits meanwhile. An async def tool must not block: await "
        "asyncio.sleep() and async libraries (httpx.AsyncClient, asyncpg, aiofiles) there, or make it a plain def, "
        "which toolkit runs in a worker thread"
    )


# --- 8. small CLI inaccuracies ---------------------------------------------------------------------


@pytest.mark.parametrize("given", ["proj", "proj/"])
@pytest.mark.parametrize("command", ["tools", "run", "dev"])
def test_a_directory_as_app_is_called_one_and_the_files_in_it_named(tmp_path: Path, given: str, command: str) -> None:
    # It was "no such file: proj/".
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "trips.py").write_text(RUNS_AT_IMPORT.replace("server.run()\n", ""))
    (tmp_path / "proj" / "helpers.py").write_text("X = 1\n")
    done = toolkit(command, given, cwd=tmp_path)
    assert done.returncode == 2, done
    assert done.stderr == (
        f"toolkit: {given} is a directory; give the Python file that makes the server, e.g. "
        f"{os.path.join(given, 'trips.py')} (files there that make a Server: trips.py)\n"
    )


NAMED_MCP = """\
from toolkit import Server

mcp = Server("notes")
also_mcp = mcp


@mcp.tool
def add(a: int, b: int) -> int:
    return a + b
"""

TWO_SERVERS = """\
from toolkit import Server

notes = Server("notes")
todos = Server("todos")
"""


def test_a_file_whose_one_server_is_not_called_server_is_served(
    tmp_path: Path, stdio_client: Callable[..., StdioClient]
) -> None:
    # It was "app.py has no attribute 'server'; it has mcp": FastMCP users name it mcp.
    (tmp_path / "app.py").write_text(NAMED_MCP)
    listed = toolkit("tools", "app.py", cwd=tmp_path)
    assert listed.returncode == 0, listed
    assert [tool["name"] for tool in json.loads(listed.stdout)] == ["add"]
    called = toolkit("call", "app.py", "add", "a=1", "b=2", cwd=tmp_path)
    assert called.returncode == 0, called
    assert json.loads(called.stdout)["structuredContent"] == 3
    client = stdio_client("app.py", cwd=tmp_path)
    client.use_modern()
    assert [tool["name"] for tool in client.result("tools/list")["tools"]] == ["add"]
    assert client.result("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})["structuredContent"] == 3
    assert client.close() == 0


@pytest.mark.parametrize("command", ["tools", "run"])
def test_a_file_with_several_servers_and_none_called_server_asks_which(tmp_path: Path, command: str) -> None:
    (tmp_path / "app.py").write_text(TWO_SERVERS)
    done = toolkit(command, "app.py", cwd=tmp_path)
    assert done.returncode == 2, done
    assert done.stderr == "toolkit: app.py has no attribute 'server'; it has notes, todos. Say which: app.py:NAME\n"
    picked = toolkit("tools", "app.py:todos", cwd=tmp_path)
    assert (picked.returncode, json.loads(picked.stdout)) == (0, []), picked


def test_a_name_given_is_the_name_used(tmp_path: Path) -> None:
    # The one Server is found only when no name is given: a wrong name is still an error.
    (tmp_path / "app.py").write_text(NAMED_MCP)
    done = toolkit("tools", "app.py:server", cwd=tmp_path)
    assert done.returncode == 2, done
    assert done.stderr == "toolkit: app.py has no attribute 'server'; it has mcp, also_mcp. Use app.py:NAME\n"


def test_python_server_py_without_a_main_block_says_why_it_ended(tmp_path: Path) -> None:
    # It exited 0 in silence; an MCP host showed only "Connection closed".
    (tmp_path / "trips.py").write_text(RUNS_AT_IMPORT.replace("server.run()\n", ""))
    done = subprocess.run(
        [str(PYTHON), "trips.py"], check=False, cwd=tmp_path, input="", capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0
    assert done.stdout == ""
    assert done.stderr.startswith(
        "toolkit: trips.py made Server 'runs' but never served it, so it exited at once (an MCP client sees only "
        '"Connection closed"). End the file with\n\n    if __name__ == "__main__":\n        server.run()\n'
    )
    assert "`toolkit run trips.py`" in done.stderr


@pytest.mark.parametrize(
    "script",
    [
        RUNS_AT_IMPORT.replace("server.run()", 'if __name__ == "__main__":\n    server.run()'),
        'from toolkit import Server\n\nserver = Server("empty")\n',
        RUNS_AT_IMPORT.replace("server.run()", "raise RuntimeError('broken')"),
    ],
    ids=["served", "nothing-to-serve", "crashes"],
)
def test_a_script_that_serves_or_has_nothing_to_serve_says_nothing(tmp_path: Path, script: str) -> None:
    (tmp_path / "trips.py").write_text(script)
    done = subprocess.run(
        [str(PYTHON), "trips.py"], check=False, cwd=tmp_path, input="", capture_output=True, text=True, timeout=30
    )
    assert "never served" not in done.stderr, done.stderr


def test_a_browser_opening_the_endpoint_is_sent_to_the_page(http_server: Callable[..., RunningServer]) -> None:
    # It got "Bad Request: missing Mcp-Session-Id header".
    browser = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}
    with_page = http_server(WEATHER, "--docs")
    opened = httpx.get(with_page.url, headers=browser, timeout=30)
    assert opened.status_code == 303 and opened.headers["location"] == "/docs"
    assert httpx.get(with_page.url, headers=browser, follow_redirects=True, timeout=30).status_code == 200
    without = http_server(WEATHER)
    refused = httpx.get(without.url, headers=browser, timeout=30)
    assert refused.status_code == 400
    message = refused.json()["error"]["message"]
    assert message.startswith("Bad Request: this is an MCP endpoint, for MCP clients")
    assert "--docs" in message and "Mcp-Session-Id" not in message
    # An MCP client's GET is answered as before.
    client = httpx.get(without.url, headers={"Accept": "text/event-stream"}, timeout=30)
    assert client.status_code == 400 and "missing Mcp-Session-Id" in client.json()["error"]["message"]


# --- settings from the environment -----------------------------------------------------------------

FAILING = """\
from toolkit import Server

server = Server("settings", page_size=100)


@server.tool
def one() -> int:
    return 1


@server.tool
def fails() -> int:
    raise RuntimeError("the real reason")
"""


def test_toolkit_run_takes_settings_from_a_dot_env_file(
    tmp_path: Path, stdio_client: Callable[..., StdioClient]
) -> None:
    app = tmp_path / "settings.py"
    app.write_text(FAILING)
    (tmp_path / ".env").write_text(
        "# deployment\nTOOLKIT_PAGE_SIZE=1\nexport TOOLKIT_MASK_ERRORS='false'\nAPP_SECRET=\"s3cret\"\n"
    )
    client = stdio_client(app, cwd=tmp_path)
    client.use_modern()
    first = client.result("tools/list")
    assert [tool["name"] for tool in first["tools"]] == ["one"] and "nextCursor" in first  # the code said 100
    failed = client.call_tool("fails")
    assert failed["content"][0]["text"] == "Error executing tool 'fails': RuntimeError: the real reason"
    assert client.close() == 0


def test_the_environment_wins_over_the_env_file_and_flags_over_both(tmp_path: Path) -> None:
    app = tmp_path / "settings.py"
    app.write_text(FAILING)
    (tmp_path / "prod.env").write_text("TOOLKIT_TRANSPORT=http\nTOOLKIT_PORT=1\nTOOLKIT_PAGE_SIZE=oops\n")
    env = {**os.environ, "TOOLKIT_PAGE_SIZE": "2"}
    log = tmp_path / "run.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [str(TOOLKIT), "run", "settings.py", "--env-file", "prod.env", "--port", "0"],
            cwd=tmp_path,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=sink,
        )
    try:
        said = eventually(lambda: _said(log, "Ctrl-C to stop"), "the start banner")  # http, from the file
        assert BANNER.search(said), said  # --port 0 beat TOOLKIT_PORT=1
    finally:
        stop(process)


@pytest.mark.parametrize(
    ("variable", "value", "said"),
    [
        ("TOOLKIT_PAGE_SIZE", "0", "$TOOLKIT_PAGE_SIZE='0': page_size takes a whole number, at least 1"),
        ("TOOLKIT_MASK_ERRORS", "maybe", "$TOOLKIT_MASK_ERRORS='maybe': mask_errors takes true or false"),
        ("TOOLKIT_READ_CACHE_SCOPE", "shared", "read_cache_scope takes public or private"),
        ("TOOLKIT_PORT", "eighty", "$TOOLKIT_PORT='eighty': --port takes a whole number"),
    ],
)
def test_a_setting_that_cannot_be_read_stops_the_start(tmp_path: Path, variable: str, value: str, said: str) -> None:
    (tmp_path / "settings.py").write_text(FAILING)
    done = subprocess.run(
        [str(TOOLKIT), "run", "settings.py"],
        check=False,
        cwd=tmp_path,
        env={**os.environ, variable: value},
        input="",
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 2 and said in done.stderr, done.stderr


def test_every_setting_variable_is_listed_in_the_cli_page() -> None:
    from toolkit._cli import RUN_ENVIRONMENT
    from toolkit._environment import SETTINGS

    page = (REPO / "docs/cli.md").read_text()
    for variable in [*SETTINGS, *RUN_ENVIRONMENT.values()]:
        assert f"`{variable}`" in page, f"docs/cli.md does not list {variable}"


# --- 9. scripts/serve installs what serving needs ----------------------------------------------------


def test_scripts_serve_installs_toolkit_without_the_dev_toolchain() -> None:
    # It ran scripts/install: 76 packages (pytest, mypy, mkdocs, ...) in 22 s to serve one example.
    script = (REPO / "scripts/serve").read_text()
    lines = [line.split("  #", 1)[0].strip() for line in script.splitlines()]
    commands = [line for line in lines if line and not line.startswith("#")]
    assert not any("scripts/install" in line for line in commands)
    (install,) = [line for line in commands if "pip install" in line]
    assert install.endswith("-c requirements/dev.lock -e .")  # toolkit alone, pinned; no [extras]
    assert "[" not in install.split("pip install", 1)[1]


def test_readme_says_what_scripts_test_needs() -> None:
    text = (REPO / "README.md").read_text()
    for need in ("Node.js 20", "apt-get", "sudo", "800 MB", "minutes on 2 cores"):
        assert need in text, f"README.md does not say scripts/test needs {need}"
