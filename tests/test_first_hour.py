"""Issue 37, "the first hour": what a newcomer hit, each reproduced the way it was found.

Through the docs as written, the ``toolkit`` command in a real subprocess, or the wire.
"""

from __future__ import annotations

import re
import shlex

from tests.support.processes import REPO


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
