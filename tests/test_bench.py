"""The benchmark keeps working: ``scripts/bench --quick --only toolkit`` runs clean.

A smoke run for correctness only: every request of every scenario must get the right answer
(the driver checks each one, and exits 1 otherwise) and every metric must get a value. No
timing is asserted here; performance is read from a full ``scripts/bench`` run, side by side
with the anchors (docs/performance.md).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.support.processes import REPO


def test_the_benchmark_runs_clean_in_quick_mode(tmp_path: Path) -> None:
    run = subprocess.run(
        [str(REPO / "scripts" / "bench"), "--quick", "--only", "toolkit", "--out", str(tmp_path)],
        check=False,
        capture_output=True,
        text=True,
        timeout=110,
        cwd=REPO,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
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
