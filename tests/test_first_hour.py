"""Issue 37, "the first hour": what a newcomer hit, each reproduced the way it was found.

Through the docs as written, the ``toolkit`` command in a real subprocess, or the wire.
"""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import pytest
from tests.support.processes import REPO, TOOLKIT
from tests.test_cli_dev import error_page, eventually, toolkit_dev


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
