"""conformance/client_run.py scores the suite's client scenarios like the server suite (conformance/README.md).

Verdicts come from each scenario's ``checks.json`` (FAIL on a FAILURE or no result, NOT EXERCISED
when the scenario's own checks are all SKIPPED/INFO, PASS otherwise), plus the suite's own verdict on
the client's run, which ``checks.json`` does not keep: a client that stopped with an error where the
scenario does not allow it, or that the suite killed, fails. Extension scenarios are reported apart,
never scored. The results here are synthetic, laid out as the suite writes them
(``<out>/<version>/<scenario>-<timestamp>/checks.json``, ``auth/...`` scenarios one level deeper).
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


def _load(name: str, path: Path) -> Any:
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


client_run = _load("conformance_client_run", REPO / "conformance" / "client_run.py")
VERSION = "2026-07-28"
STAMP = "2026-11-27T13-37-56-926Z"

LISTING = """\
Required for 2026-07-28 (5 scenarios, frozen; run at the 2026-07-28 wire):

Server scenarios (test against a server):
  - tools-list
  - ping

Client scenarios (test against a client):
  - tools_call
  - auth/metadata-default
  - auth/iss-wrong-issuer

Run and reported, but never scored:
  extension (3):
    - auth/dpop [client]
    - auth/client-credentials-basic [client]
    - tasks-lifecycle [server]
  added-after-release (2):
    - json-schema-2020-12-preservation [client]
    - server-session-lifecycle [server]

"""


def check(check_id: str, status: str) -> dict[str, Any]:
    return {"id": check_id, "name": check_id, "description": f"{check_id} works", "status": status}


WIRE_OK = check("wire-schema-valid", "SUCCESS")


def test_the_requirement_listing_is_read() -> None:
    catalogue = client_run.parse_requirements(LISTING)
    assert catalogue.required == ["tools_call", "auth/metadata-default", "auth/iss-wrong-issuer"]
    assert catalogue.unscored == {
        "auth/dpop": "extension",
        "auth/client-credentials-basic": "extension",
        "json-schema-2020-12-preservation": "added-after-release",
    }, "server scenarios are not the client's"
    assert catalogue.scored == [*catalogue.required, "json-schema-2020-12-preservation"], (
        "a scenario added after the revision was frozen is scored all the same"
    )
    assert catalogue.informational == ["auth/client-credentials-basic"]
    assert catalogue.not_run == ["auth/dpop"], "DPoP is not built: listed, not run"


def write(directory: Path, name: str, checks: list[dict[str, Any]], exit_code: int | None, error: str | None) -> None:
    scenario_dir = directory / f"{name}-{STAMP}"
    scenario_dir.mkdir(parents=True)
    (scenario_dir / "checks.json").write_text(json.dumps(checks))
    if exit_code is not None:
        status_dir = directory / "status"
        status_dir.mkdir(exist_ok=True)
        status = {"scenario": name, "version": VERSION, "exit": exit_code, "error": error}
        (status_dir / (name.replace("/", "__") + ".json")).write_text(json.dumps(status))


def collect(tmp_path: Path, runs: dict[str, tuple[list[dict[str, Any]], int | None, str | None, str]]) -> Any:
    """``runs``: scenario -> (checks, the client's exit, its error, the harness log)."""
    for name, (checks, exit_code, error, _) in runs.items():
        write(tmp_path, name, checks, exit_code, error)
    catalogue = client_run.Catalogue(required=[name for name in runs if name != "auth/client-credentials-basic"])
    if "auth/client-credentials-basic" in runs:
        catalogue.unscored["auth/client-credentials-basic"] = "extension"
    catalogue.required.append("never-ran")
    catalogue.unscored["auth/dpop"] = "extension"
    logs = {name: log for name, (_, _, _, log) in runs.items()}
    return client_run.collect(tmp_path, VERSION, catalogue, logs)


PASSED_LOG = "Checks:\n...\n✅ OVERALL: PASSED\n"
STOPPED_LOG = "\nClient exited with code 1\n\n⚠️  CLIENT EXITED WITH ERROR (code 1) - Test may be incomplete\n"
REFUSED_LOG = "\nClient exited with code 1\n\n✅ OVERALL: PASSED\n"  # allowClientError: no warning printed
KILLED_LOG = "\nClient timed out after 120000ms\n\n⚠️  CLIENT TIMED OUT - Test incomplete\n"


def test_each_client_scenario_gets_its_verdict(tmp_path: Path) -> None:
    scored, informational = collect(
        tmp_path,
        {
            "tools_call": ([check("tool-add-numbers", "SUCCESS"), WIRE_OK], 0, None, PASSED_LOG),
            "auth/metadata-default": ([check("prm", "SUCCESS"), WIRE_OK], 1, "ClientError: boom", STOPPED_LOG),
            "auth/iss-wrong-issuer": ([check("iss", "SUCCESS"), WIRE_OK], 1, "AuthorizationFailed: iss", REFUSED_LOG),
            "sse-retry": ([check("timing", "SUCCESS"), WIRE_OK], None, None, KILLED_LOG),
            "http-standard-headers": ([check("hdr", "SKIPPED"), WIRE_OK], 0, None, PASSED_LOG),
            "elicitation": ([check("default", "FAILURE"), WIRE_OK], 0, None, PASSED_LOG),
            "request-metadata": ([check("retry", "WARNING"), WIRE_OK], 0, None, PASSED_LOG),
            "auth/client-credentials-basic": ([check("cc", "FAILURE")], 1, "nope", STOPPED_LOG),
        },
    )
    verdicts = {outcome.scenario: outcome.verdict for outcome in scored}
    assert verdicts == {
        "tools_call": client_run.PASS,
        "auth/metadata-default": client_run.FAIL,  # stopped where the scenario does not allow it
        "auth/iss-wrong-issuer": client_run.PASS,  # a refusal the scenario allows: its checks decide
        "sse-retry": client_run.FAIL,  # killed by the suite's timeout
        "http-standard-headers": client_run.NOT_EXERCISED,
        "elicitation": client_run.FAIL,
        "request-metadata": client_run.PASS,  # a warning is listed, not counted
        "never-ran": client_run.FAIL,
    }
    by_name = {outcome.scenario: outcome for outcome in scored}
    assert "[the client stopped: ClientError: boom]" in by_name["auth/metadata-default"].line()
    assert (
        "the client refused, as the scenario allows: AuthorizationFailed: iss"
        in by_name["auth/iss-wrong-issuer"].line()
    )
    assert "within the suite's timeout" in by_name["sse-retry"].line()
    assert by_name["request-metadata"].line().endswith("warnings: retry")
    assert client_run.summary(scored) == "3 passed, 4 failed, 1 not exercised"
    assert client_run.exit_status(scored) == 1

    assert [(o.scenario, o.verdict) for o in informational] == [
        ("auth/client-credentials-basic", client_run.FAIL),
        ("auth/dpop", client_run.NOT_RUN),
    ]
    lines = [outcome.line() for outcome in informational]
    assert lines[0].startswith(f"NOT SCORED  {VERSION}  auth/client-credentials-basic  (")
    assert lines[0].endswith("the suite's checks: FAIL)")
    assert lines[1] == f"NOT SCORED  {VERSION}  auth/dpop  (DPoP (SEP-1932) is not built: not run)"


def test_informational_scenarios_never_decide_the_exit_status(tmp_path: Path) -> None:
    scored, informational = collect(
        tmp_path,
        {
            "tools_call": ([check("tool-add-numbers", "SUCCESS"), WIRE_OK], 0, None, PASSED_LOG),
            "auth/client-credentials-basic": ([check("cc", "FAILURE")], 1, "nope", STOPPED_LOG),
        },
    )
    scored = [outcome for outcome in scored if outcome.scenario != "never-ran"]
    assert client_run.exit_status(scored) == 0
    assert informational[0].verdict == client_run.FAIL


FAKE_SUITE = """
    #!{python}
    # Stands in for the suite's CLI: lists a requirement set; runs one scenario as `client --scenario` does.
    import json, os, pathlib, sys

    RUNS = json.loads({runs!r})
    LISTING = {listing!r}
    args = sys.argv[1:]
    if args[:2] == ["list", "--client"]:
        print(LISTING)
    elif args[0] == "client":
        name = args[args.index("--scenario") + 1]
        assert args[args.index("--spec-version") + 1] == {version!r}
        assert "--force" in args, "as --requirements runs them"
        out = pathlib.Path(args[args.index("-o") + 1])
        checks, exit_code, error, log = RUNS[name]
        scenario_dir = out / f"{{name}}-{stamp}"
        scenario_dir.mkdir(parents=True)
        (scenario_dir / "checks.json").write_text(json.dumps(checks))
        status_dir = pathlib.Path(os.environ["CONFORMANCE_CLIENT_STATUS_DIR"])
        status_dir.mkdir(parents=True, exist_ok=True)
        status = {{"scenario": name, "version": {version!r}, "exit": exit_code, "error": error}}
        (status_dir / (name.replace("/", "__") + ".json")).write_text(json.dumps(status))
        print(log)
"""


def run_the_runner(tmp_path: Path, runs: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    tmp_path.mkdir(exist_ok=True)
    suite = tmp_path / "conformance"
    source = FAKE_SUITE.format(python=PYTHON, runs=json.dumps(runs), listing=LISTING, version=VERSION, stamp=STAMP)
    suite.write_text(textwrap.dedent(source).lstrip())
    suite.chmod(0o755)
    command = [
        str(PYTHON),
        str(REPO / "conformance" / "client_run.py"),
        "--suite-bin",
        str(suite),
        "--spec-version",
        VERSION,
        "--out",
        str(tmp_path / "out"),
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=90, cwd=REPO, check=False)


def test_the_runner_prints_and_exits_by_the_verdicts(tmp_path: Path) -> None:
    """The whole runner against a stand-in suite: what a user of scripts/conformance --client sees."""
    runs = {
        "tools_call": ([check("tool-add-numbers", "SUCCESS"), WIRE_OK], 0, None, PASSED_LOG),
        "auth/metadata-default": ([check("prm", "SUCCESS"), WIRE_OK], 0, None, PASSED_LOG),
        "auth/iss-wrong-issuer": ([check("iss", "SUCCESS"), WIRE_OK], 1, "AuthorizationFailed: iss", REFUSED_LOG),
        "json-schema-2020-12-preservation": ([check("keywords", "SUCCESS"), WIRE_OK], 0, None, PASSED_LOG),
        "auth/client-credentials-basic": ([check("cc", "FAILURE")], 1, "nope", STOPPED_LOG),
    }
    done = run_the_runner(tmp_path, runs)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[-1] == "client: 4 passed, 0 failed, 0 not exercised; 2 extension scenario(s) not scored"
    assert [line.split("  ")[0] for line in lines[1:-1]] == ["PASS"] * 4 + ["NOT SCORED"] * 2
    written = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert {row["scenario"]: (row["verdict"], row["scored"]) for row in written} == {
        "tools_call": ("PASS", True),
        "auth/metadata-default": ("PASS", True),
        "auth/iss-wrong-issuer": ("PASS", True),
        "json-schema-2020-12-preservation": ("PASS", True),
        "auth/client-credentials-basic": ("FAIL", False),
        "auth/dpop": ("NOT RUN", False),
    }

    runs["auth/metadata-default"] = ([check("prm", "SUCCESS"), WIRE_OK], 1, "ClientError: -32603", STOPPED_LOG)
    failed = run_the_runner(tmp_path / "stopped", runs)
    assert failed.returncode == 1, failed.stdout
    assert failed.stdout.splitlines()[-1].startswith("client: 3 passed, 1 failed, 0 not exercised")
