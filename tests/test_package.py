"""The distribution as a user gets it: ``python -m build``, then the wheel in a fresh virtual env.

The wheel and the sdist must hold the package and nothing else (no tests, no benchmarks). The
wheel, installed into a new venv with its dependencies from the package index, must serve
``examples/weather.py`` over stdio.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from tests.support.processes import REPO

import toolkit

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(REPO)],
        check=True,
        capture_output=True,
        text=True,
        timeout=240,
    )
    return out


def test_the_wheel_holds_the_package_only(dist: Path) -> None:
    (wheel,) = dist.glob("toolkit_mcp-*.whl")
    assert wheel.name == f"toolkit_mcp-{toolkit.__version__}-py3-none-any.whl"
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/", 1)[0] for name in names}
    assert tops == {"toolkit", f"toolkit_mcp-{toolkit.__version__}.dist-info"}
    assert "toolkit/py.typed" in names
    for page_file in ("page.html", "page.js", "page.css"):  # the tools page works offline: its files ship
        assert f"toolkit/_transports/http/page/{page_file}" in names
    assert not [name for name in names if "__pycache__" in name or name.endswith(".pyc")]


def test_the_sdist_holds_the_package_and_its_metadata_only(dist: Path) -> None:
    (sdist,) = dist.glob("toolkit_mcp-*.tar.gz")
    with tarfile.open(sdist) as archive:
        members = ["/".join(member.name.split("/")[1:]) for member in archive.getmembers() if member.isfile()]
    outside = {name for name in members if not name.startswith("src/toolkit/")}
    assert outside == {"README.md", "CHANGELOG.md", "LICENSE", "pyproject.toml", "PKG-INFO", ".gitignore"}
    assert not [name for name in members if name.startswith(("tests/", "bench/", "docs/", "examples/"))]


def test_the_wheel_serves_over_stdio_from_a_fresh_venv(dist: Path, tmp_path: Path) -> None:
    (wheel,) = dist.glob("toolkit_mcp-*.whl")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    install = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "--quiet", "--disable-pip-version-check", str(wheel)],
        check=False,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert install.returncode == 0, install.stderr[-3000:]
    version = subprocess.run([str(venv / "bin" / "toolkit"), "version"], capture_output=True, text=True, check=True)
    assert version.stdout.strip() == toolkit.__version__
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {
            "name": "get_weather_forecast",
            "arguments": {"city": "Oslo", "hours": 2},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
    served = subprocess.run(
        [str(venv / "bin" / "toolkit"), "run", str(REPO / "examples" / "weather.py")],
        input=f"{json.dumps(initialize)}\n{json.dumps(call)}\n",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=tmp_path,
    )
    answers = {message["id"]: message for message in map(json.loads, served.stdout.splitlines())}
    assert answers[1]["result"]["serverInfo"]["name"] == "weather", served.stderr
    forecast = answers[2]["result"]["structuredContent"]
    assert [hour["hour"] for hour in forecast] == ["09:00", "10:00"], answers[2]
    where = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import toolkit; print(toolkit.__file__)"],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    assert Path(where.stdout.strip()).is_relative_to(venv), "the server ran from the installed wheel"
