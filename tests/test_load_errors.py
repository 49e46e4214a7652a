"""Mistakes in a server file, as a new user makes them: what ``toolkit tools|run`` tells them.

Each error names the function, where it is defined, the parameter (or the return annotation)
and what to do; the CLI prints it without toolkit's frames (``--traceback`` shows them all).
"""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

import pydantic
import pytest
from tests.support.processes import TOOLKIT
from tests.test_docs import blocks_of

from toolkit import RegistrationError, SchemaError, Server

PLAIN_CLASS = """\
from toolkit import Server

server = Server("bad")


class Thing:
    pass


@server.tool
def f(x: Thing) -> str:
    return "x"
"""


def toolkit(tmp_path: Path, source: str, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "app.py").write_text(textwrap.dedent(source))
    command = [str(TOOLKIT), *(args or ("tools",)), "app.py"]
    if args and args[-1] == "--traceback":
        command = [str(TOOLKIT), *args[:-1], "app.py", "--traceback"]
    return subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False)


def assert_short(run: subprocess.CompletedProcess[str]) -> None:
    assert run.returncode == 2, run
    assert run.stdout == ""
    assert "/toolkit/" not in run.stderr, "no toolkit frames without --traceback"
    assert "<frozen" not in run.stderr


def test_a_parameter_pydantic_cannot_describe_is_named_as_the_docs_show(tmp_path: Path) -> None:
    run = toolkit(tmp_path, PLAIN_CLASS)
    assert_short(run)
    assert "Traceback" not in run.stderr
    (documented,) = [
        block.code for block in blocks_of("cli.md", "text") if block.code.startswith("$ toolkit tools app.py")
    ]
    assert run.stderr == documented.split("\n", 1)[1]


def test_the_return_annotation_is_named(tmp_path: Path) -> None:
    run = toolkit(tmp_path, PLAIN_CLASS.replace("def f(x: Thing) -> str:", "def f() -> Thing:"))
    assert_short(run)
    assert "tool f() in app.py:10, the return annotation: toolkit cannot describe the type Thing" in run.stderr


@pytest.mark.parametrize(
    ("decorator", "kind"),
    [('@server.resource("data://{x}")', "resource"), ("@server.prompt", "prompt")],
)
def test_resources_and_prompts_are_named_too(tmp_path: Path, decorator: str, kind: str) -> None:
    run = toolkit(tmp_path, PLAIN_CLASS.replace("@server.tool", decorator))
    assert_short(run)
    assert f"{kind} f() in app.py:10, parameter 'x': toolkit cannot describe the type Thing" in run.stderr


def test_toolkits_own_registration_errors_say_where(tmp_path: Path) -> None:
    source = PLAIN_CLASS.replace("def f(x: Thing) -> str:", "def f(*args: int) -> str:")
    run = toolkit(tmp_path, source, "run")
    assert_short(run)
    assert "tool 'f' takes *args; MCP arguments are named, so use named parameters [tool f() in app.py:10]" in (
        run.stderr
    )


def test_the_users_own_exception_shows_only_the_users_frames(tmp_path: Path) -> None:
    source = """\
        from toolkit import Server

        server = Server("bad")
        CONFIG = {}


        def load() -> str:
            return CONFIG["missing"]


        TITLE = load()
        """
    run = toolkit(tmp_path, source, "run")
    assert_short(run)
    assert 'app.py", line 11, in <module>' in run.stderr
    assert 'app.py", line 8, in load' in run.stderr
    assert run.stderr.rstrip().endswith("KeyError: 'missing'")


def test_traceback_shows_everything(tmp_path: Path) -> None:
    run = toolkit(tmp_path, PLAIN_CLASS, "tools", "--traceback")
    assert run.returncode != 0
    assert "_server.py" in run.stderr and "pydantic" in run.stderr
    assert "toolkit._errors.SchemaError" in run.stderr
    assert "PydanticSchemaGenerationError" in run.stderr  # the cause, kept


class Unknown:
    """A plain class: pydantic has no schema for it."""


def test_in_code_the_error_is_toolkits_with_pydantics_as_its_cause() -> None:
    server = Server("bad")

    def f(x: Unknown) -> str:
        return "x"

    with pytest.raises(SchemaError, match=r"tool f\(\) in test_load_errors.py:\d+, parameter 'x'") as caught:
        server.tool(f)
    assert isinstance(caught.value.__cause__, pydantic.errors.PydanticSchemaGenerationError)

    @server.tool
    def g() -> str:
        return "g"

    def h() -> str:
        return "h"

    with pytest.raises(RegistrationError, match=r"already registered.*\[tool h\(\) in test_load_errors.py:\d+\]"):
        server.tool(name="g")(h)


def test_an_argument_toolkit_refuses_points_at_the_users_line(tmp_path: Path) -> None:
    run = toolkit(tmp_path, 'from toolkit import Server\n\nserver = Server("x", page_size=0)\n', "run")
    assert_short(run)
    assert run.stderr.startswith("toolkit: cannot load app.py: page_size must be at least 1 (at app.py:3)")


def test_an_error_inside_toolkit_shows_everything(tmp_path: Path) -> None:
    source = """\
        from toolkit import Server

        server = Server("x")
        server.registry = None  # breaks toolkit from the inside: what a toolkit bug looks like


        @server.tool
        def f() -> int:
            return 1
        """
    run = toolkit(tmp_path, source, "run")
    assert run.returncode == 2
    assert run.stderr.startswith("toolkit: an internal error while loading the app (please report it):")
    assert "_server.py" in run.stderr and "AttributeError" in run.stderr
