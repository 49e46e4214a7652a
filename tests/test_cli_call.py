"""``toolkit call APP TOOL [KEY=VALUE ...]``: one tool called in-process, its result printed as a client gets it.

Every test runs the real command (``python -m toolkit call``) and reads the JSON it prints.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from tests.support.apps import WEATHER
from tests.support.processes import REPO

from toolkit import LATEST_VERSION
from toolkit._cli import main

APP = textwrap.dedent(
    '''
    from __future__ import annotations

    import enum
    from typing import Any, Literal

    from pydantic import BaseModel

    from toolkit import McpError, Server

    server = Server("calls")


    class Color(enum.Enum):
        RED = "red"
        BLUE = "blue"


    class Address(BaseModel):
        street: str
        number: int


    @server.tool
    def echo(
        text: str = "",
        label: str | None = None,
        color: Color = Color.RED,
        mode: Literal["a", "b"] = "a",
        size: Literal[1, 2] = 1,
        n: int = 0,
        tags: list[str] = [],
        address: Address | None = None,
    ) -> dict[str, Any]:
        """Every argument back as it arrived."""
        return {
            "text": text,
            "label": label,
            "color": color.value,
            "mode": mode,
            "size": size,
            "n": n,
            "tags": tags,
            "address": address.model_dump() if address else None,
        }


    @server.tool
    def broken() -> str:
        """A JSON-RPC error."""
        raise McpError(-32603, "the backend refused", {"backend": "db-1"})


    for number in range(25):
        def numbered() -> int:
            return 0

        numbered.__name__ = f"tool_{number:02d}"
        server.add_tool(numbered, description="One of many.")
    '''
)


@dataclass
class Done:
    returncode: int
    stdout: str
    stderr: str


Run = Callable[..., Done]


@pytest.fixture(params=["subprocess", "in-process"])
def toolkit_call(request: pytest.FixtureRequest, capsys: pytest.CaptureFixture[str]) -> Run:
    """``toolkit call ARGS``: the real command, and ``main()`` in this process (which coverage measures)."""
    if request.param == "subprocess":
        return run_subprocess
    return functools.partial(run_in_process, capsys)


def run_subprocess(*args: str | Path) -> Done:
    done = subprocess.run(
        [sys.executable, "-m", "toolkit", "call", *map(str, args)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    return Done(done.returncode, done.stdout, done.stderr)


def run_in_process(capsys: pytest.CaptureFixture[str], *args: str | Path) -> Done:
    """``main(["call", *args])``, leaving ``sys.path`` and ``sys.modules`` as they were (but for toolkit's own)."""
    app_dir = str(Path(REPO, str(args[0]).partition(":")[0]).resolve().parent)
    path, modules = list(sys.path), set(sys.modules)
    cwd = os.getcwd()
    os.chdir(REPO)
    try:
        main(["call", *map(str, args)])
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    finally:
        os.chdir(cwd)
        sys.path[:] = path
        for name in set(sys.modules) - modules:
            if str(getattr(sys.modules[name], "__file__", "")).startswith(app_dir):
                del sys.modules[name]
    captured = capsys.readouterr()
    return Done(code, captured.out, captured.err)


def printed(done: Done, status: int = 0) -> dict[str, Any]:
    """The result the command printed, after checking its exit status."""
    assert done.returncode == status, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("call") / "calls.py"
    path.write_text(APP)
    return path


# --- what each protocol version receives -------------------------------------------------------------


def test_the_latest_version_gets_the_natural_array(toolkit_call: Run) -> None:
    result = printed(toolkit_call(WEATHER, "get_temperatures", "city=Paris"))
    assert LATEST_VERSION == "2026-07-28"
    assert result["structuredContent"] == [61, 63, 66, 70, 72, 71]
    assert result["resultType"] == "complete"
    assert json.loads(result["content"][0]["text"]) == [61, 63, 66, 70, 72, 71]


def test_2025_11_25_gets_the_array_wrapped(toolkit_call: Run) -> None:
    result = printed(toolkit_call(WEATHER, "get_temperatures", "city=Paris", "--protocol-version", "2025-11-25"))
    assert result["structuredContent"] == {"result": [61, 63, 66, 70, 72, 71]}
    assert "resultType" not in result


def test_2024_11_05_gets_no_structured_content(toolkit_call: Run) -> None:
    result = printed(toolkit_call(WEATHER, "get_temperatures", "city=Paris", "--protocol-version", "2024-11-05"))
    assert "structuredContent" not in result
    assert json.loads(result["content"][0]["text"]) == [61, 63, 66, 70, 72, 71]


def test_json_gives_the_arguments_object(toolkit_call: Run) -> None:
    result = printed(toolkit_call(WEATHER, "convert_temperature", "--json", '{"value": {"celsius": 100}}'))
    assert result["structuredContent"] == 212.0


# --- KEY=VALUE: text where only a string fits, JSON elsewhere ----------------------------------------


def test_a_string_parameter_keeps_the_text(toolkit_call: Run) -> None:
    """``code=123`` stays "123" (a number would fail the schema): no station has that code."""
    result = printed(toolkit_call(WEATHER, "find_station", "code=123"))
    assert result["structuredContent"] is None
    assert printed(toolkit_call(WEATHER, "find_station", "code=sea"))["structuredContent"]["code"] == "SEA"


def test_a_number_parameter_gets_json(toolkit_call: Run) -> None:
    result = printed(toolkit_call(WEATHER, "get_weather_forecast", "city=Paris", "hours=2"))
    assert len(result["structuredContent"]) == 2


def test_values_follow_each_parameter_schema(toolkit_call: Run, app: Path) -> None:
    result = printed(
        toolkit_call(
            app,
            "echo",
            "text=123",  # string
            "label=null",  # str | None: JSON null
            "color=blue",  # an enum of strings behind a $ref
            "mode=b",  # Literal of strings
            "size=2",  # Literal of numbers: JSON
            "n=7",
            'tags=["x", "y"]',
            'address={"street": "Main", "number": 5}',
        )
    )
    assert result["structuredContent"] == {
        "text": "123",
        "label": None,
        "color": "blue",
        "mode": "b",
        "size": 2,
        "n": 7,
        "tags": ["x", "y"],
        "address": {"street": "Main", "number": 5},
    }


def test_text_that_is_not_json_is_sent_as_text(toolkit_call: Run, app: Path) -> None:
    """``label=x`` (str | None) is not JSON: sent as "x", which the schema accepts."""
    assert printed(toolkit_call(app, "echo", "label=x"))["structuredContent"]["label"] == "x"


def test_key_value_overrides_json(toolkit_call: Run, app: Path) -> None:
    result = printed(toolkit_call(app, "echo", "--json", '{"text": "a", "n": 1}', "n=2"))
    assert (result["structuredContent"]["text"], result["structuredContent"]["n"]) == ("a", 2)


# --- failures ------------------------------------------------------------------------------------------


def test_invalid_arguments_print_the_error_result_and_exit_1(toolkit_call: Run) -> None:
    result = printed(toolkit_call(WEATHER, "get_weather_forecast", "city=Paris", "hours=99"), status=1)
    assert result["isError"] is True
    assert "hours" in result["content"][0]["text"]


def test_text_a_number_parameter_cannot_take_is_reported_by_the_server(toolkit_call: Run, app: Path) -> None:
    result = printed(toolkit_call(app, "echo", "n=seven"), status=1)
    assert result["isError"] is True
    assert "n" in result["content"][0]["text"]


def test_a_tool_error_exits_1(toolkit_call: Run) -> None:
    result = printed(toolkit_call(WEATHER, "find_user", "--json", '{"id": "zzz"}'), status=1)
    assert result["isError"] is True
    assert result["content"][0]["text"] == "No such user. Known ids: u1, u2."


def test_a_json_rpc_error_goes_to_stderr_and_exits_1(toolkit_call: Run, app: Path) -> None:
    done = toolkit_call(app, "broken")
    assert done.returncode == 1
    assert done.stdout == ""
    assert "JSON-RPC error -32603: the backend refused" in done.stderr
    assert "db-1" in done.stderr


def test_an_unknown_tool_exits_2_listing_the_tools(toolkit_call: Run) -> None:
    done = toolkit_call(WEATHER, "get_forecast")
    assert done.returncode == 2
    assert "no tool 'get_forecast'" in done.stderr
    assert "clear_cache, convert_temperature, find_station" in done.stderr  # sorted
    assert done.stdout == ""


def test_an_unknown_tool_lists_the_first_20_of_many(toolkit_call: Run, app: Path) -> None:
    done = toolkit_call(app, "nope")
    assert done.returncode == 2
    listed = done.stderr.split("its tools: ", 1)[1].strip()
    assert listed.endswith(", …")
    assert listed.split(", ")[:3] == ["broken", "echo", "tool_00"]
    assert len(listed.split(", ")) == 21


@pytest.mark.parametrize(
    ("json_arg", "mentions"),
    [("{", "not valid JSON"), ("[1, 2]", "must be a JSON object"), ('"city"', "must be a JSON object")],
)
def test_bad_json_exits_2(toolkit_call: Run, json_arg: str, mentions: str) -> None:
    done = toolkit_call(WEATHER, "get_count", "--json", json_arg)
    assert done.returncode == 2
    assert "--json" in done.stderr and mentions in done.stderr


@pytest.mark.parametrize("argument", ["city", "=Paris"])
def test_bad_key_value_exits_2(toolkit_call: Run, argument: str) -> None:
    done = toolkit_call(WEATHER, "get_weather_forecast", argument)
    assert done.returncode == 2
    assert "KEY=VALUE" in done.stderr and repr(argument) in done.stderr


def test_load_errors_are_reported_as_toolkit_run_does(toolkit_call: Run, tmp_path: Path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("from toolkit import Server\nserver = Server('x')\nraise RuntimeError('no database')\n")
    done = toolkit_call(broken, "anything")
    assert done.returncode == 2
    assert "broken.py raised an exception while loading" in done.stderr
    assert 'broken.py", line 3' in done.stderr and "RuntimeError: no database" in done.stderr
    assert "_loader.py" not in done.stderr
    shown = run_subprocess(broken, "anything", "--traceback")
    assert "_loader.py" in shown.stderr
    missing = toolkit_call(tmp_path / "missing.py", "anything")
    assert missing.returncode == 2 and "no such file" in missing.stderr
