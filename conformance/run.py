"""Run the official MCP conformance suite against examples/conformance_server.py (see scripts/conformance).

For each protocol version a fresh server is started with ``toolkit run ... --transport http`` on a
free localhost port, the suite's ``server`` command runs every scenario that applies to that
version, and the server is stopped. With ``--gateway stdio|http`` the suite talks to a gateway
instead (``conformance/gateway.py``: what ``toolkit proxy TARGET`` serves, plus an event store;
``--proxy-cli``: the command itself), which proxies the same server started as its stdio child, or
served over HTTP on another free port; ``--compare`` also runs the server alone and fails when the
gateway scores below it on any scenario.

The verdict is read from each scenario's ``checks.json`` (see ``Outcome.verdict`` and
conformance/README.md): FAIL when a check is FAILURE or no result was
recorded; NOT EXERCISED when every check of the scenario's own is SKIPPED or INFO (never a pass);
PASS otherwise (WARNINGs are listed, not counted).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SERVER_APP = ROOT / "examples" / "conformance_server.py"
GATEWAY_APP = ROOT / "conformance" / "gateway.py"
GATEWAYS = ("stdio", "http")
"""How the gateway reaches the server: as its stdio child, or over Streamable HTTP."""
ALONE = "alone"
TOOLKIT = ROOT / ".venv" / "bin" / "toolkit"
RESULTS = ROOT / ".conformance" / "results"
SPEC_VERSIONS = ("2025-11-25", "2026-07-28")
EXTENSION = "extension"
SCORED_EXTENSION_PREFIXES = ("tasks-",)
"""Extension scenarios the server implements (the tasks extension): run at 2026-07-28 and scored by default."""
RESULT_DIR = re.compile(r"^server-(?P<scenario>.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$")
LISTED = re.compile(r"^\s*-\s+(?P<name>\S+)\s+\[(?P<tags>[^\]]*)\]")
PASS, FAIL, NOT_EXERCISED = "PASS", "FAIL", "NOT EXERCISED"
RANK = {FAIL: 0, NOT_EXERCISED: 1, PASS: 2}
"""How a target's verdict compares with the server's own (--compare): lower is worse."""
WIRE_CHECK = "wire-schema-valid"
"""The suite's check on every message of every scenario: it says nothing about the scenario's own subject."""
SILENT = ("SKIPPED", "INFO")
"""Statuses of a check that did not test anything."""


@dataclass
class Outcome:
    scenario: str
    version: str
    checks: list[dict[str, Any]] = field(default_factory=list)
    problem: str | None = None

    def ids(self, status: str) -> list[str]:
        counts: dict[str, int] = {}
        for check in self.checks:
            if check.get("status") == status:
                counts[str(check.get("id"))] = counts.get(str(check.get("id")), 0) + 1
        return [name if count == 1 else f"{name} x{count}" for name, count in counts.items()]

    @property
    def own_checks(self) -> list[dict[str, Any]]:
        return [check for check in self.checks if check.get("id") != WIRE_CHECK]

    @property
    def verdict(self) -> str:
        """FAIL, NOT EXERCISED (nothing of the scenario's own was tested: never a pass) or PASS."""
        if self.problem is not None or not self.checks or self.ids("FAILURE"):
            return FAIL
        if all(check.get("status") in SILENT for check in self.own_checks):
            return NOT_EXERCISED
        return PASS

    def line(self) -> str:
        parts = [f"{self.verdict:<4}  {self.version:<10}  {self.scenario}"]
        failed = self.ids("FAILURE")
        if self.problem is not None:
            parts.append(f"  [{self.problem}]")
        if failed:
            parts.append(f"  failed: {', '.join(failed)}")
        warned = self.ids("WARNING")
        if warned:
            parts.append(f"  warnings: {', '.join(warned)}")
        if self.verdict == NOT_EXERCISED:
            count = len(self.own_checks)
            parts.append(f"  ({count} own check{'' if count == 1 else 's'}, all SKIPPED/INFO)")
        return "".join(parts)

    def details(self) -> Iterator[str]:
        for check in self.checks:
            if check.get("status") in ("FAILURE", "WARNING"):
                message = " ".join(str(check.get("errorMessage") or check.get("description") or "").split())
                if len(message) > 400:
                    message = message[:400] + " ..."
                yield f"      {check.get('status')} {check.get('id')}: {message}"


def summary(outcomes: list[Outcome]) -> str:
    """``N passed, M failed, K not exercised``: a scenario that tested nothing is never counted as passed."""
    verdicts = [outcome.verdict for outcome in outcomes]
    return (
        f"{verdicts.count(PASS)} passed, {verdicts.count(FAIL)} failed, {verdicts.count(NOT_EXERCISED)} not exercised"
    )


def exit_status(outcomes: list[Outcome]) -> int:
    """1 when a scenario failed, or when none passed (a run that exercised nothing proved nothing); else 0.

    A not-exercised scenario is not a failure of the server (the suite chose not to test it),
    so it does not fail a run that passed something; it is never a pass either.
    """
    verdicts = [outcome.verdict for outcome in outcomes]
    return 1 if FAIL in verdicts or PASS not in verdicts else 0


def log(message: str) -> None:
    print(f"conformance: {message}", file=sys.stderr, flush=True)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass(frozen=True)
class Target:
    """What the suite runs against: the server ``alone``, or a gateway in front of it (``stdio``/``http``)."""

    kind: str = ALONE
    upstream: str | None = None
    """What the gateway proxies instead of the conformance server (a command or a URL)."""
    cli: bool = False
    """The gateway is ``toolkit proxy`` itself, not ``gateway.py``."""

    @property
    def label(self) -> str:
        return "the server alone" if self.kind == ALONE else f"the gateway ({self.kind} upstream)"


@contextmanager
def running_server(
    log_path: Path, command: Callable[[int], list[str]] | None = None, env: dict[str, str] | None = None
) -> Iterator[str]:
    """Serve ``command(port)`` (default: the example, ``toolkit run``) over Streamable HTTP; yield its URL once
    it answers; always stop it."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    argv = (command or serve_example)(port)
    with log_path.open("wb") as output:
        process = subprocess.Popen(
            argv,
            cwd=ROOT,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env={**os.environ, **(env or {})},
        )
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                tail = log_path.read_text(errors="replace")[-3000:]
                raise RuntimeError(
                    f"{' '.join(argv[:3])} exited with code {process.returncode} before answering:\n{tail}"
                )
            try:
                urllib.request.urlopen(urllib.request.Request(url, method="GET"), timeout=2).close()
                break
            except urllib.error.HTTPError:
                break  # any HTTP answer means it is serving
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{' '.join(argv[:3])} did not answer at {url} within 60 s") from None
                time.sleep(0.1)
        yield url
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)  # a gateway stops its stdio upstream itself
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def serve_example(port: int) -> list[str]:
    return [str(TOOLKIT), "run", str(SERVER_APP), "--transport", "http", "--host", "127.0.0.1", "--port", str(port)]


def gateway_of(upstream: str, cli: bool = False) -> Callable[[int], list[str]]:
    """A gateway in front of UPSTREAM over Streamable HTTP: ``gateway.py`` (``Server.proxy`` with an
    ``EventStore``, as the server alone has; it reads UPSTREAM from ``CONFORMANCE_UPSTREAM``), or with
    ``cli`` the ``toolkit proxy`` command, which has no event store to offer (its streams do not resume:
    ``server-sse-polling`` is then not exercised)."""

    def command(port: int) -> list[str]:
        where = ["--transport", "http", "--host", "127.0.0.1", "--port", str(port)]
        return [str(TOOLKIT), "proxy", upstream, *where] if cli else [str(TOOLKIT), "run", str(GATEWAY_APP), *where]

    return command


@contextmanager
def serving(output_dir: Path, target: Target) -> Iterator[str]:
    """The URL the suite tests: the server alone, or a gateway in front of it."""
    if target.kind == ALONE:
        with running_server(output_dir / "server.log") as url:
            yield url
        return
    with contextlib.ExitStack() as stack:
        upstream = target.upstream
        if upstream is None and target.kind == "http":
            upstream = stack.enter_context(running_server(output_dir / "server.log"))
        elif upstream is None:
            upstream = shlex.join([str(TOOLKIT), "run", str(SERVER_APP)])
        gateway = gateway_of(upstream, target.cli)
        yield stack.enter_context(
            running_server(output_dir / "gateway.log", gateway, {"CONFORMANCE_UPSTREAM": upstream})
        )


def list_scenarios(suite_bin: str) -> dict[str, list[str]]:
    """Server scenario name -> the spec versions it applies to (or ["extension"])."""
    listing = subprocess.run([suite_bin, "list", "--server"], capture_output=True, text=True, check=True, cwd=ROOT)
    scenarios: dict[str, list[str]] = {}
    for line in listing.stdout.splitlines():
        match = LISTED.match(line)
        if match:
            scenarios[match["name"]] = [tag.strip() for tag in match["tags"].split(",") if tag.strip()]
    if not scenarios:
        raise RuntimeError(f"`conformance list --server` listed no scenarios:\n{listing.stdout}{listing.stderr}")
    return scenarios


def harness(suite_bin: str, arguments: list[str], output_dir: Path, timeout: float) -> None:
    with (output_dir / "harness.log").open("ab") as output:
        try:
            subprocess.run(
                [suite_bin, "server", *arguments, "-o", str(output_dir)],
                cwd=ROOT,
                stdout=output,
                stderr=subprocess.STDOUT,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            log(f"the suite did not finish within {timeout:.0f} s ({' '.join(arguments)})")


def collect(output_dir: Path, version: str, expected: list[str]) -> list[Outcome]:
    found: dict[str, Outcome] = {}
    for checks_file in sorted(output_dir.glob("*/checks.json")):
        match = RESULT_DIR.match(checks_file.parent.name)
        if match is None:
            continue
        outcome = Outcome(match["scenario"], version)
        try:
            checks = json.loads(checks_file.read_text())
        except json.JSONDecodeError as exc:
            outcome.problem = f"unreadable checks.json: {exc}"
        else:
            outcome.checks = checks if isinstance(checks, list) else []
            if not outcome.checks:
                outcome.problem = "no checks recorded"
        found[outcome.scenario] = outcome
    missing = "no result (crashed or timed out)"
    outcomes = [found.pop(name) if name in found else Outcome(name, version, problem=missing) for name in expected]
    return outcomes + list(found.values())


def run_version(
    suite_bin: str,
    version: str,
    scenarios: list[str],
    whole_suite: bool,
    out: Path,
    timeout: float,
    target: Target = Target(),
) -> list[Outcome]:
    output_dir = out / version
    output_dir.mkdir(parents=True, exist_ok=True)
    log(f"{target.label}: {version}: {len(scenarios)} scenario(s)")
    with serving(output_dir, target) as url:
        if whole_suite:
            harness(suite_bin, ["--url", url, "--suite", "all", "--spec-version", version], output_dir, timeout)
        else:
            for name in scenarios:
                harness(suite_bin, ["--url", url, "--scenario", name, "--spec-version", version], output_dir, timeout)
    return collect(output_dir, version, scenarios)


def run_extensions(
    suite_bin: str, scenarios: list[str], out: Path, timeout: float, target: Target = Target()
) -> list[Outcome]:
    output_dir = out / EXTENSION
    output_dir.mkdir(parents=True, exist_ok=True)
    log(f"{target.label}: extensions: {len(scenarios)} scenario(s)")
    with serving(output_dir, target) as url:
        for name in scenarios:
            harness(suite_bin, ["--url", url, "--scenario", name], output_dir, timeout)
    return collect(output_dir, EXTENSION, scenarios)


def worse(baseline: list[Outcome], through: list[Outcome]) -> list[str]:
    """The scenarios ``through`` (a gateway) scores below ``baseline`` (the server alone), as lines."""
    verdicts = {(outcome.scenario, outcome.version): outcome.verdict for outcome in through}
    found = []
    for outcome in baseline:
        verdict = verdicts.get((outcome.scenario, outcome.version), FAIL)
        if RANK[verdict] < RANK[outcome.verdict]:
            found.append(f"{outcome.version:<10}  {outcome.scenario}: {outcome.verdict} alone, {verdict} here")
    return found


def table(targets: list[str], results: dict[str, list[Outcome]]) -> Iterator[str]:
    """One row per scenario and version: each target's verdict side by side."""
    verdicts = {target: {(o.scenario, o.version): o.verdict for o in results[target]} for target in targets}
    rows = list(dict.fromkeys((o.scenario, o.version) for target in targets for o in results[target]))
    width = max([len(scenario) for scenario, _ in rows] + [8])
    heads = [ALONE if target == ALONE else f"gateway/{target}" for target in targets]
    yield f"{'scenario':<{width}}  {'version':<10}  " + "  ".join(f"{head:<15}" for head in heads)
    for scenario, version in rows:
        cells = [verdicts[target].get((scenario, version), "-") for target in targets]
        yield f"{scenario:<{width}}  {version:<10}  " + "  ".join(f"{cell:<15}" for cell in cells)


def run_target(
    args: argparse.Namespace, catalogue: dict[str, list[str]], out: Path, target: Target
) -> tuple[list[Outcome], list[Outcome]]:
    """Every chosen scenario against ``target``: (scored outcomes, informational outcomes)."""
    versions = args.spec_version or list(SPEC_VERSIONS)
    extensions = [name for name, tags in catalogue.items() if tags == [EXTENSION]]
    suite, timeout = args.suite_bin, args.timeout
    if args.extensions:
        chosen = [name for name in args.scenario if name in extensions] if args.scenario else extensions
        return [], run_extensions(suite, chosen, out, timeout, target)
    outcomes: list[Outcome] = []
    for version in versions:
        applicable = [name for name, tags in catalogue.items() if version in tags]
        chosen = [name for name in args.scenario if name in applicable] if args.scenario else applicable
        if chosen:
            outcomes += run_version(suite, version, chosen, not args.scenario, out, timeout, target)
    if "2026-07-28" in versions:  # the extension scenarios run at 2026-07-28 only
        scored = [name for name in extensions if name.startswith(SCORED_EXTENSION_PREFIXES)]
        chosen = [name for name in args.scenario if name in scored] if args.scenario else scored
        if chosen:
            outcomes += run_extensions(suite, chosen, out, timeout, target)
    return outcomes, []


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite-bin", required=True, help="the conformance CLI (scripts/conformance passes it)")
    parser.add_argument("--scenario", action="append", default=[], help="only this scenario (repeatable)")
    parser.add_argument(
        "--spec-version", action="append", choices=SPEC_VERSIONS, default=[], help="only this version (repeatable)"
    )
    parser.add_argument("--extensions", action="store_true", help="run the extension scenarios (informational)")
    parser.add_argument(
        "--gateway",
        action="append",
        choices=GATEWAYS,
        default=[],
        help="test a gateway (conformance/gateway.py) in front of the server, over stdio or HTTP (repeatable)",
    )
    parser.add_argument(
        "--proxy-cli", action="store_true", help="the gateway is toolkit proxy TARGET itself (no event store)"
    )
    parser.add_argument(
        "--compare", action="store_true", help="also run the server alone; fail where a gateway scores below it"
    )
    parser.add_argument(
        "--upstream", default=None, help="what the gateway proxies instead of the conformance server (command or URL)"
    )
    parser.add_argument("--timeout", type=float, default=900, help="seconds allowed for one suite invocation")
    parser.add_argument("--out", type=Path, default=None, help="where to keep raw results")
    parser.add_argument("-v", "--verbose", action="store_true", help="print the message of every failed/warned check")
    args = parser.parse_args()
    if args.upstream is not None and not args.gateway:
        parser.error("--upstream names what a gateway proxies: use it with --gateway")

    started = time.monotonic()
    out = args.out or RESULTS / time.strftime("%Y%m%d-%H%M%S")
    out.mkdir(parents=True, exist_ok=True)
    catalogue = list_scenarios(args.suite_bin)
    unknown = [name for name in args.scenario if name not in catalogue]
    if unknown:
        log(f"unknown scenario(s) {unknown}; the server scenarios are: {', '.join(catalogue)}")
        return 2
    gateways = list(dict.fromkeys(args.gateway))
    targets = ([ALONE] if args.compare or not gateways else []) + gateways
    results: dict[str, list[Outcome]] = {}
    informational: dict[str, list[Outcome]] = {}
    try:
        for target in targets:
            target_out = out if targets == [ALONE] else out / target
            serve = Target(target, args.upstream if target != ALONE else None, args.proxy_cli)
            results[target], informational[target] = run_target(args, catalogue, target_out, serve)
            if args.scenario and not results[target] and not informational[target]:
                versions = args.spec_version or list(SPEC_VERSIONS)
                log(f"{args.scenario} apply to none of {versions} (extension scenarios run with --extensions)")
                return 2
    except RuntimeError as exc:
        log(str(exc))
        return 2

    for target in targets:
        if len(targets) > 1:
            print(f"== {Target(target).label}")
        for outcome in results[target] + informational[target]:
            print(outcome.line())
            if args.verbose:
                for detail in outcome.details():
                    print(detail)
    (out / "summary.json").write_text(
        json.dumps(
            [
                {
                    "target": target,
                    "scenario": o.scenario,
                    "version": o.version,
                    "verdict": o.verdict,
                    "problem": o.problem,
                    "failed": o.ids("FAILURE"),
                    "warnings": o.ids("WARNING"),
                }
                for target in targets
                for o in results[target] + informational[target]
            ],
            indent=2,
        )
    )
    log(f"raw results in {os.path.relpath(out, ROOT)}; took {time.monotonic() - started:.0f} s")
    if args.extensions:
        for target in targets:
            print(f"extensions (informational, not scored), {Target(target).label}: {summary(informational[target])}")
        return 0
    if len(targets) > 1:
        for line in table(targets, results):
            print(line)
    for target in targets:
        print(summary(results[target]) + ("" if len(targets) == 1 else f"  ({Target(target).label})"))
    status = max(exit_status(results[target]) for target in targets)
    if args.compare:
        for gateway in gateways:
            below = worse(results[ALONE], results[gateway])
            for line in below:
                print(f"below the server alone, {Target(gateway).label}: {line}")
            if below:
                status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
