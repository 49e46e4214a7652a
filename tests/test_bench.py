"""The benchmark keeps working: ``scripts/bench --quick --only toolkit`` runs clean.

A smoke run for correctness only: every request of every scenario must get the right answer
(the driver checks each one, and exits 1 otherwise) and every metric must get a value. No
timing is asserted here; performance is read from a full ``scripts/bench`` run, side by side
with the anchors (docs/performance.md). The same holds for a before/after run against the
repository's own ``HEAD`` (``--baseline HEAD --only toolkit,base``), and for the ``store`` and
``scaleout`` scenarios, which start a real redis-server and a real HAProxy.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.support.processes import REPO
from tests.support.redis_rig import require


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


def test_the_store_and_scaleout_scenarios_run_clean_in_quick_mode(tmp_path: Path) -> None:
    require("redis-server")
    require("haproxy")
    run = _bench("--quick", "--only", "toolkit", "--scenarios", "store,scaleout", "--out", str(tmp_path), timeout=150)
    results = json.loads((tmp_path / "latest.json").read_text())
    assert results["errors"] == []
    metrics = results["metrics"]
    assert all(key.startswith(("store.", "scaleout.")) for key in metrics), "only the scenarios asked for"
    for metric in metrics.values():
        assert isinstance(metric["median"].get("toolkit"), int | float), metric["label"]
        assert metric["label"] in run.stdout, "every metric is a row of the printed table"
    for variant in ("legacy", "legacy_json", "modern"):
        for store in ("memory", "redis"):
            assert metrics[f"store.{variant}.{store}.cpu_us"]["median"]["toolkit"] > 0
        assert f"store.{variant}.redis.redis_cpu_us" in metrics  # may be ~0 (modern calls leave Redis alone)
        ratio = metrics[f"store.{variant}.cpu_ratio"]
        assert ratio["ratio_of"] == [f"store.{variant}.redis.cpu_us", f"store.{variant}.memory.cpu_us"]
        assert ratio["target_met"] in (True, False)

    def sse(variant: str, store: str) -> tuple[int, int]:
        (raw,) = metrics[f"store.{variant}.{store}.cpu_us"]["frameworks"]["toolkit"]["raw"]
        return raw["sse_responses"], raw["answered"]

    # What each row says it measures: the forecast tool answers at once, so even with Redis (whose
    # legacy streams are resumable) a client accepting SSE gets plain JSON, as with the memory store.
    assert sse("legacy", "redis")[0] == 0 and sse("legacy", "redis")[1] > 0
    assert sse("legacy", "memory")[0] == 0
    assert sse("legacy_json", "redis")[0] == 0
    assert "store target:" in run.stdout
    for era in ("legacy", "modern"):
        for count in (1, 2):
            figure = metrics[f"scaleout.{era}.r{count}.calls_per_s"]["frameworks"]["toolkit"]
            assert figure["samples"][0] > 0
            # Every replica answered some of the calls through the balancer (X-Served-By).
            assert sorted(figure["raw"][0]["served_by"]) == [f"r{index}" for index in range(count)]
        assert metrics[f"scaleout.{era}.scaling"]["median"]["toolkit"] > 0
    assert "scale-out:" in run.stdout
