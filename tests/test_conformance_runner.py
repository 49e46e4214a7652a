"""conformance/run.py scores the official suite's results honestly (see conformance/README.md).

A scenario whose own checks are all SKIPPED or INFO tested nothing: it is reported and counted
as "not exercised", never as passed, and a run that passed nothing does not exit 0. The results
here are synthetic ``checks.json`` files laid out as the suite writes them
(``<out>/server-<scenario>-<timestamp>/checks.json``).
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from tests.support.processes import PYTHON, REPO


def _load_runner() -> Any:
    spec = importlib.util.spec_from_file_location("conformance_run", REPO / "conformance" / "run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["conformance_run"] = module
    spec.loader.exec_module(module)
    return module


run = _load_runner()
VERSION = "2026-07-28"
STAMP = "2026-11-23T04-44-26-655Z"


def check(check_id: str, status: str) -> dict[str, Any]:
    return {"id": check_id, "name": check_id, "description": f"{check_id} works", "status": status}


WIRE_OK = check("wire-schema-valid", "SUCCESS")
SCENARIOS: dict[str, list[dict[str, Any]]] = {
    "all-skipped": [check("sse-resume", "SKIPPED"), check("sse-notes", "INFO"), WIRE_OK],
    "tested": [check("ping", "SUCCESS"), check("ping-notes", "INFO"), WIRE_OK],
    "warned": [check("ping", "WARNING"), WIRE_OK],
    "failed": [check("ping", "FAILURE"), check("ping-extra", "SKIPPED"), WIRE_OK],
    "skipped-but-bad-wire": [check("sse-resume", "SKIPPED"), check("wire-schema-valid", "FAILURE")],
    "only-the-wire-check": [WIRE_OK],
}
EXPECTED = {
    "all-skipped": run.NOT_EXERCISED,
    "tested": run.PASS,
    "warned": run.PASS,
    "failed": run.FAIL,
    "skipped-but-bad-wire": run.FAIL,
    "only-the-wire-check": run.NOT_EXERCISED,
    "never-ran": run.FAIL,
}


def write_results(directory: Path, scenarios: dict[str, list[dict[str, Any]]]) -> None:
    for name, checks in scenarios.items():
        scenario_dir = directory / f"server-{name}-{STAMP}"
        scenario_dir.mkdir(parents=True)
        (scenario_dir / "checks.json").write_text(json.dumps(checks, indent=2))


def outcomes_of(directory: Path, scenarios: dict[str, list[dict[str, Any]]], expected: list[str]) -> list[Any]:
    write_results(directory, scenarios)
    return list(run.collect(directory, VERSION, expected))


def test_each_scenario_gets_its_verdict(tmp_path: Path) -> None:
    outcomes = outcomes_of(tmp_path, SCENARIOS, list(EXPECTED))
    assert {outcome.scenario: outcome.verdict for outcome in outcomes} == EXPECTED
    assert run.summary(outcomes) == "2 passed, 3 failed, 2 not exercised"
    assert run.exit_status(outcomes) == 1


def test_an_all_skipped_scenario_is_not_counted_as_passed(tmp_path: Path) -> None:
    outcomes = outcomes_of(tmp_path, {name: SCENARIOS[name] for name in ("tested", "all-skipped")}, [])
    assert run.summary(outcomes) == "1 passed, 0 failed, 1 not exercised"
    assert run.exit_status(outcomes) == 0, "not exercised is not a failure"
    (skipped,) = [outcome for outcome in outcomes if outcome.scenario == "all-skipped"]
    assert skipped.line() == f"NOT EXERCISED  {VERSION}  all-skipped  (2 own checks, all SKIPPED/INFO)"


def test_a_run_that_exercised_nothing_does_not_exit_0(tmp_path: Path) -> None:
    outcomes = outcomes_of(tmp_path, {"all-skipped": SCENARIOS["all-skipped"]}, ["all-skipped"])
    assert run.summary(outcomes) == "0 passed, 0 failed, 1 not exercised"
    assert run.exit_status(outcomes) == 1


FAKE_SUITE = """
    #!{python}
    # Stands in for the suite's CLI: lists the scenarios, and writes their checks.json like it does.
    import json, pathlib, sys

    SCENARIOS = json.loads({scenarios!r})
    if sys.argv[1:] == ["list", "--server"]:
        for name in SCENARIOS:
            print(f"  - {{name}} [{version}]")
    elif sys.argv[1] == "server":
        out = pathlib.Path(sys.argv[sys.argv.index("-o") + 1])
        for name, checks in SCENARIOS.items():
            scenario_dir = out / f"server-{{name}}-{stamp}"
            scenario_dir.mkdir(parents=True)
            (scenario_dir / "checks.json").write_text(json.dumps(checks))
"""


def run_the_runner(tmp_path: Path, scenarios: dict[str, list[dict[str, Any]]]) -> subprocess.CompletedProcess[str]:
    tmp_path.mkdir(exist_ok=True)
    suite = tmp_path / "conformance"
    source = FAKE_SUITE.format(python=PYTHON, scenarios=json.dumps(scenarios), version=VERSION, stamp=STAMP)
    suite.write_text(textwrap.dedent(source).lstrip())
    suite.chmod(0o755)
    command = [
        str(PYTHON),
        str(REPO / "conformance" / "run.py"),
        "--suite-bin",
        str(suite),
        "--out",
        str(tmp_path / "out"),
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=90, cwd=REPO, check=False)


def test_the_runner_prints_and_exits_by_the_verdicts(tmp_path: Path) -> None:
    """The whole runner (a real server, a stand-in suite): what a user of scripts/conformance sees."""
    chosen = {name: SCENARIOS[name] for name in ("tested", "all-skipped")}
    done = run_the_runner(tmp_path, chosen)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[-1] == "1 passed, 0 failed, 1 not exercised"
    assert sorted(line.split("  ")[0] for line in lines[:-1]) == ["NOT EXERCISED", "PASS"]
    written = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert {row["scenario"]: row["verdict"] for row in written} == {"tested": "PASS", "all-skipped": "NOT EXERCISED"}

    nothing = run_the_runner(tmp_path / "skipped-only", {"all-skipped": SCENARIOS["all-skipped"]})
    assert nothing.stdout.splitlines()[-1] == "0 passed, 0 failed, 1 not exercised"
    assert nothing.returncode == 1, "a run that exercised nothing must not exit 0"
