"""Run the official MCP conformance suite's client scenarios against toolkit.Client (see scripts/conformance --client).

For each protocol version (2025-11-25, 2026-07-28), every client scenario that revision's frozen set
runs (``conformance list --client --requirements V``) is run against its own mock server, with
``conformance/client.py`` as the client: one suite invocation per scenario (``--scenario NAME
--spec-version V --force``, what ``--requirements V`` runs), a few at a time (``--jobs``; the
suite's ``--requirements`` runs them all at once, which on two cores slows each client past the
mock servers' 5 s keep-alive). Every result is scored like the server suite (``conformance/run.py``'s
``Outcome``): FAIL when a check is FAILURE or no result was recorded; NOT EXERCISED when every
check of the scenario's own is SKIPPED or INFO (never a pass); PASS otherwise (WARNINGs listed, not
counted). One thing more than the checks, from the suite's own verdict: a client that stopped with
an error where the scenario does not allow it ("CLIENT EXITED WITH ERROR"), or that the suite's
timeout killed, FAILs.

What the revision's set runs without scoring is reported apart: scenarios added to the suite after
the revision was frozen are scored here all the same (they test that revision's features); the
extension scenarios are informational, each with why it is out of scope. conformance/README.md.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DRIVER = ROOT / "conformance" / "client.py"
PYTHON = ROOT / ".venv" / "bin" / "python"
RESULTS = ROOT / ".conformance" / "results"
SPEC_VERSIONS = ("2025-11-25", "2026-07-28")
STATUS_ENV = "CONFORMANCE_CLIENT_STATUS_DIR"


def _load_server_runner() -> Any:
    """conformance/run.py, for its verdicts (one scoring for both suites)."""
    if "conformance_run" in sys.modules:
        return sys.modules["conformance_run"]
    spec = importlib.util.spec_from_file_location("conformance_run", ROOT / "conformance" / "run.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["conformance_run"] = module
    spec.loader.exec_module(module)
    return module


server_run = _load_server_runner()
Outcome = server_run.Outcome
PASS, FAIL, NOT_EXERCISED = server_run.PASS, server_run.FAIL, server_run.NOT_EXERCISED
summary, exit_status = server_run.summary, server_run.exit_status
NOT_RUN = "NOT RUN"

TIMING_SENSITIVE = frozenset({"sse-retry"})
"""Scenarios that time the client (sse-retry: the reconnection within 500 ms +200/-50 of ``retry``):
run alone, after the others, so that no other scenario's work delays the client."""
EXITED_WITH_ERROR = "CLIENT EXITED WITH ERROR"
TIMED_OUT = "CLIENT TIMED OUT"
"""What the suite prints for a client that stopped with an error where the scenario does not allow one
(scenarios where a conforming client refuses, ``allowClientError``, never get it), or that it killed."""

SCORED_REASONS = ("added-after-release",)
"""Reasons the suite gives for running a scenario unscored under which it is scored here all the same."""

NOT_BUILT = {
    "auth/client-credentials-jwt": "private_key_jwt client authentication (OAuth client-credentials extension) "
    "is not built in toolkit's OAuth",
    "auth/enterprise-managed-authorization": "enterprise-managed authorization (SEP-990: token exchange, "
    "jwt-bearer grant) is not built",
    "auth/dpop": "DPoP (SEP-1932) is not built",
    "auth/dpop-nonce": "DPoP (SEP-1932) is not built",
    "auth/wif-jwt-bearer": "workload identity federation (jwt-bearer grant) is not built",
}
"""Extension scenarios (never scored by the suite either) for what toolkit's client does not have: listed
with the reason, not run (they could only show that it is missing)."""
INFORMATIONAL = {
    "auth/client-credentials-basic": "OAuth client-credentials extension; toolkit's OAuth has the grant "
    "(grant='client_credentials'): run for information",
}
"""Extension scenarios for what toolkit's client has: run and reported, not scored."""

RESULT_DIR = re.compile(r"^(?P<scenario>.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$")


@dataclass
class Catalogue:
    """One revision's client scenarios: those it requires, and those it runs unscored (name -> reason)."""

    required: list[str] = field(default_factory=list)
    unscored: dict[str, str] = field(default_factory=dict)

    @property
    def scored(self) -> list[str]:
        extra = [name for name, reason in self.unscored.items() if reason in SCORED_REASONS]
        return self.required + [name for name in extra if name not in self.required]

    @property
    def informational(self) -> list[str]:
        """Run, reported, not scored."""
        return [name for name in self.unscored if name not in self.scored and name not in NOT_BUILT]

    @property
    def not_run(self) -> list[str]:
        return [name for name in self.unscored if name not in self.scored and name in NOT_BUILT]


def parse_requirements(listing: str) -> Catalogue:
    """The client part of ``conformance list --client --requirements V``."""
    catalogue = Catalogue()
    section = reason = None
    for line in listing.splitlines():
        if line.startswith("Client scenarios"):
            section = "client"
            continue
        if line.startswith("Server scenarios"):
            section = "server"
            continue
        if line.startswith("Run and reported, but never scored"):
            section = "unscored"
            continue
        if not line.strip():
            if section in ("client", "server"):
                section = None
            continue
        if section == "client":
            match = re.match(r"^  - (\S+)\s*$", line)
            if match:
                catalogue.required.append(match[1])
        elif section == "unscored":
            header = re.match(r"^  (\S.*?) \(\d+\):\s*$", line)
            if header:
                reason = header[1]
                continue
            entry = re.match(r"^    - (\S+) \[client\]\s*$", line)
            if entry and reason is not None:
                catalogue.unscored[entry[1]] = reason
    return catalogue


def list_requirements(suite_bin: str, version: str) -> Catalogue:
    listing = subprocess.run(
        [suite_bin, "list", "--client", "--requirements", version],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    catalogue = parse_requirements(listing.stdout)
    if listing.returncode != 0 or not catalogue.required:
        raise RuntimeError(
            f"`conformance list --client --requirements {version}` listed no client scenarios:\n"
            f"{listing.stdout}{listing.stderr}"
        )
    return catalogue


@dataclass
class ClientOutcome(Outcome):  # type: ignore[misc,valid-type]
    """A scenario's checks, and how the client's run ended (``conformance/client.py``'s status file)."""

    client_exit: int | None = None
    client_error: str | None = None
    reason: str | None = None
    """For an informational scenario: why it is not scored."""
    ran: bool = True
    """False for an extension scenario of something not built: listed, not run."""

    @property
    def verdict(self) -> str:
        return NOT_RUN if not self.ran else str(super().verdict)

    def line(self) -> str:
        if self.reason is not None:
            if not self.ran:
                return f"NOT SCORED  {self.version:<10}  {self.scenario}  ({self.reason}: not run)"
            return (
                f"NOT SCORED  {self.version:<10}  {self.scenario}  ({self.reason}; the suite's checks: {self.verdict})"
            )
        text: str = super().line()
        if self.client_exit not in (0, None) and self.problem is None:
            text = f"{text}  (the client refused, as the scenario allows: {self.client_error})"
        return text


def judge_exit(outcome: ClientOutcome, harness_log: str | None) -> None:
    """The suite's own verdict on the client's run, which ``checks.json`` does not keep: a client that
    stopped with an error where the scenario does not allow one, or that the suite's timeout killed, fails."""
    if outcome.problem is not None or outcome.reason is not None:
        return
    if harness_log is None:
        return
    if TIMED_OUT in harness_log:
        outcome.problem = "the client did not finish within the suite's timeout"
    elif EXITED_WITH_ERROR in harness_log:
        outcome.problem = f"the client stopped: {outcome.client_error or 'see its stderr.txt'}"


def collect(
    output_dir: Path, version: str, catalogue: Catalogue, logs: dict[str, str]
) -> tuple[list[ClientOutcome], list[ClientOutcome]]:
    """The scored outcomes (in the catalogue's order) and the informational ones, from ``output_dir``."""
    found: dict[str, ClientOutcome] = {}
    for checks_file in sorted(output_dir.rglob("checks.json")):
        relative = checks_file.parent.relative_to(output_dir).as_posix()
        match = RESULT_DIR.match(relative)
        if match is None:
            continue
        outcome = ClientOutcome(match["scenario"], version)
        try:
            checks = json.loads(checks_file.read_text())
        except json.JSONDecodeError as exc:
            outcome.problem = f"unreadable checks.json: {exc}"
        else:
            outcome.checks = checks if isinstance(checks, list) else []
            if not outcome.checks:
                outcome.problem = "no checks recorded"
        found[outcome.scenario] = outcome
    for status_file in sorted((output_dir / "status").glob("*.json")):
        try:
            status = json.loads(status_file.read_text())
        except json.JSONDecodeError:
            continue
        ran = found.get(str(status.get("scenario")))
        if ran is not None:
            ran.client_exit, ran.client_error = status.get("exit"), status.get("error")
    missing = "no result (crashed or timed out)"
    scored = [
        found.pop(name) if name in found else ClientOutcome(name, version, problem=missing) for name in catalogue.scored
    ]
    for outcome in scored:
        judge_exit(outcome, logs.get(outcome.scenario))
    informational = []
    for name in catalogue.informational:
        outcome = found.pop(name) if name in found else ClientOutcome(name, version, problem=missing)
        outcome.reason = INFORMATIONAL.get(name, f"{catalogue.unscored.get(name, 'not required')}, run for information")
        informational.append(outcome)
    for name in catalogue.not_run:
        informational.append(ClientOutcome(name, version, reason=NOT_BUILT[name], ran=False))
    for outcome in found.values():  # ran, though the listing did not name it: scored, to be seen
        judge_exit(outcome, logs.get(outcome.scenario))
        scored.append(outcome)
    return scored, informational


def run_scenario(suite_bin: str, version: str, name: str, output_dir: Path, timeout_ms: int, deadline: float) -> str:
    """One scenario, in a suite invocation of its own (``--force``: as ``--requirements`` runs it); the harness log."""
    log_path = output_dir / "logs" / (name.replace("/", "__") + ".log")
    log_path.parent.mkdir(parents=True, exist_ok=True)
    command = f"{PYTHON} {DRIVER}"
    env = {**os.environ, STATUS_ENV: str(output_dir / "status")}
    arguments = ["--scenario", name, "--spec-version", version, "--force", "--timeout", str(timeout_ms)]
    with log_path.open("wb") as output:
        try:
            subprocess.run(
                [suite_bin, "client", "--command", command, *arguments, "-o", str(output_dir)],
                cwd=ROOT,
                env=env,
                stdout=output,
                stderr=subprocess.STDOUT,
                timeout=deadline,
                check=False,
            )
        except subprocess.TimeoutExpired:
            log(f"the suite did not finish {name} at {version} within {deadline:.0f} s")
    return log_path.read_text(errors="replace")


def run_version(
    suite_bin: str, version: str, catalogue: Catalogue, out: Path, jobs: int, timeout_ms: int, deadline: float
) -> dict[str, str]:
    """Every scenario of the revision's set, ``jobs`` at a time (the timing-sensitive ones alone, after);
    each scenario's harness log."""
    output_dir = out / version
    output_dir.mkdir(parents=True, exist_ok=True)
    names = catalogue.scored + catalogue.informational
    log(
        f"{version}: {len(catalogue.scored)} scored client scenario(s), {len(catalogue.informational)} informational, "
        f"{len(catalogue.not_run)} not run (not built)"
    )
    alone = [name for name in names if name in TIMING_SENSITIVE]
    logs: dict[str, str] = {}
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {
            name: pool.submit(run_scenario, suite_bin, version, name, output_dir, timeout_ms, deadline)
            for name in names
            if name not in alone
        }
        for name, future in futures.items():
            logs[name] = future.result()
    for name in alone:
        logs[name] = run_scenario(suite_bin, version, name, output_dir, timeout_ms, deadline)
    return logs


def log(message: str) -> None:
    print(f"conformance: {message}", file=sys.stderr, flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite-bin", required=True, help="the conformance CLI (scripts/conformance passes it)")
    parser.add_argument(
        "--spec-version", action="append", choices=SPEC_VERSIONS, default=[], help="only this version (repeatable)"
    )
    parser.add_argument("--jobs", type=int, default=4, help="scenarios run at once (default 4)")
    parser.add_argument("--timeout", type=float, default=120, help="seconds the suite allows one client run")
    parser.add_argument("--deadline", type=float, default=300, help="seconds allowed for one suite invocation")
    parser.add_argument("--out", type=Path, default=None, help="where to keep raw results")
    parser.add_argument("-v", "--verbose", action="store_true", help="print the message of every failed/warned check")
    args = parser.parse_args()

    started = time.monotonic()
    out = args.out or RESULTS / f"client-{time.strftime('%Y%m%d-%H%M%S')}"
    out.mkdir(parents=True, exist_ok=True)
    scored: list[ClientOutcome] = []
    informational: list[ClientOutcome] = []
    try:
        for version in args.spec_version or list(SPEC_VERSIONS):
            catalogue = list_requirements(args.suite_bin, version)
            logs = run_version(
                args.suite_bin, version, catalogue, out, args.jobs, int(args.timeout * 1000), args.deadline
            )
            version_scored, version_informational = collect(out / version, version, catalogue, logs)
            scored += version_scored
            informational += version_informational
    except RuntimeError as exc:
        log(str(exc))
        return 2

    print("client scenarios (toolkit.Client, conformance/client.py):")
    for outcome in scored + informational:
        print(outcome.line())
        if args.verbose:
            for detail in outcome.details():
                print(detail)
            if outcome.client_error and outcome.client_exit not in (0, None):
                print(f"      client: exit {outcome.client_exit}: {outcome.client_error}")
    (out / "summary.json").write_text(
        json.dumps(
            [
                {
                    "scenario": o.scenario,
                    "version": o.version,
                    "verdict": o.verdict,
                    "scored": o.reason is None,
                    "not_scored_because": o.reason,
                    "problem": o.problem,
                    "failed": o.ids("FAILURE"),
                    "warnings": o.ids("WARNING"),
                    "client_exit": o.client_exit,
                    "client_error": o.client_error,
                }
                for o in scored + informational
            ],
            indent=2,
        )
    )
    log(f"raw results in {os.path.relpath(out, ROOT)}; took {time.monotonic() - started:.0f} s")
    print(f"client: {summary(scored)}; {len(informational)} extension scenario(s) not scored")
    status: int = exit_status(scored)
    return status


if __name__ == "__main__":
    sys.exit(main())
