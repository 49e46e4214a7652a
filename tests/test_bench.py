"""The benchmark keeps working: ``scripts/bench --quick --only toolkit`` runs clean.

A smoke run for correctness only: every request of every scenario must get the right answer
(the driver checks each one, and exits 1 otherwise) and every metric must get a value. No
timing is asserted here; performance is read from a full ``scripts/bench`` run, side by side
with the anchors (docs/performance.md). The same holds for a before/after run against the
repository's own ``HEAD`` (``--baseline HEAD --only toolkit,base``).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.support.processes import REPO


def _bench(*arguments: str, timeout: float) -> subprocess.CompletedProcess[str]:
    """``scripts/bench ARGUMENTS``, which must exit 0 (every answer right)."""
    run = subprocess.run(
        [str(REPO / "scripts" / "bench"), *arguments],
        check=False,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return run


def test_the_benchmark_runs_clean_in_quick_mode(tmp_path: Path) -> None:
    run = _bench("--quick", "--only", "toolkit", "--out", str(tmp_path), timeout=110)
    results = json.loads((tmp_path / "latest.json").read_text())
    assert results["errors"] == []
    assert results["frameworks"]["toolkit"]["available"] is True
    assert len(results["metrics"]) >= 30
    missing = [
        metric["label"]
        for metric in results["metrics"].values()
        if not isinstance(metric["median"].get("toolkit"), int | float) or metric["median"]["toolkit"] <= 0
    ]
    assert missing == [], f"metrics without a toolkit figure: {missing}"
    for metric in results["metrics"].values():
        assert metric["label"] in run.stdout, "every metric is a row of the printed table"
    # The auth scenario ran (bearer tokens, JWT with a cached key set), with its ratios to the
    # unauthenticated calls of the same round and their target verdict.
    for era in ("legacy", "modern"):
        for variant in ("same", "fresh"):
            prefix = f"auth.http_seq.{era}.{variant}"
            for key in (f"{prefix}.cpu_us", f"{prefix}.p50_us", f"{prefix}.cpu_ratio"):
                assert results["metrics"][key]["median"]["toolkit"] > 0, key
            ratio = results["metrics"][f"{prefix}.cpu_ratio"]
            assert ratio["ratio_of"] == [f"{prefix}.cpu_us", f"call.http_seq.{era}.cpu_us"]
            assert ratio["target_met"] in (True, False)
    assert "auth target:" in run.stdout


def test_the_benchmark_compares_toolkit_with_a_baseline_commit(tmp_path: Path) -> None:
    # HEAD always exists; its worktree (.bench/baseline-<sha>, gitignored) is reused by later runs.
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], check=True, capture_output=True, text=True, cwd=REPO
    ).stdout.strip()
    run = _bench("--quick", "--baseline", "HEAD", "--only", "toolkit,base", "--out", str(tmp_path), timeout=150)
    results = json.loads((tmp_path / "latest.json").read_text())
    assert results["errors"] == []
    baseline = results["baseline"]
    assert baseline["sha"] == head
    column = baseline["column"]
    assert column == f"toolkit@{baseline['short']}"
    assert list(results["frameworks"]) == ["toolkit", column], "the baseline sits next to toolkit, no anchors"
    base_info = results["frameworks"][column]
    assert base_info["available"] is True
    # The baseline column imported toolkit from the worktree, not from ./src.
    assert Path(base_info["module_file"]).resolve().is_relative_to(REPO / ".bench" / f"baseline-{head}" / "src")
    assert Path(results["frameworks"]["toolkit"]["module_file"]).resolve().is_relative_to(REPO / "src")
    assert len(results["metrics"]) >= 30
    missing = [
        (metric["label"], fw)
        for metric in results["metrics"].values()
        for fw in ("toolkit", column)
        if not isinstance(metric["median"].get(fw), int | float) or metric["median"][fw] <= 0
    ]
    assert missing == [], f"metrics without a figure: {missing}"
    no_ratio = [m["label"] for m in results["metrics"].values() if not m["ratio_toolkit_baseline"]]
    assert no_ratio == [], f"metrics without a toolkit/baseline ratio: {no_ratio}"
    header = next(line for line in run.stdout.splitlines() if line.startswith("metric "))
    assert f"toolkit/{column}" in header, "the table has the ratio column"
    for metric in results["metrics"].values():
        assert metric["label"] in run.stdout, "every metric is a row of the printed table"
