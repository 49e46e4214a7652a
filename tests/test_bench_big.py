"""The benchmark's ``big`` scenario (``bench/bigresults.py``): a tool returning ~1 MB and ~10 MB of
models, toolkit's server and the floor's, each answer checked model by model by the driver."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from tests.support.processes import REPO

# Four fresh processes per column; the bound is for a hang, not for speed.
pytestmark = pytest.mark.timeout(600)

ROWS = [f"big.{size}.{era}" for size in ("1mb", "10mb") for era in ("legacy", "modern")]


def test_the_big_scenario_measures_toolkit_against_the_floor_in_quick_mode(tmp_path: Path) -> None:
    arguments = ["--quick", "--only", "toolkit,floor", "--scenarios", "big", "--out", str(tmp_path)]
    run = subprocess.run(
        [str(REPO / "scripts" / "bench"), *arguments], check=False, capture_output=True, text=True, cwd=REPO
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    results = json.loads((tmp_path / "latest.json").read_text())
    assert results["scenarios"] == ["big"]
    metrics = results["metrics"]
    for row in ROWS:
        for fw in ("toolkit", "floor"):
            for metric in ("cpu_ms", "p50_ms", "peak_rss_mib", "peak_x", "result_mib"):
                assert metrics[f"{row}.{metric}"]["median"][fw] > 0, (row, metric, fw)
        size = metrics[f"{row}.result_mib"]["median"]["toolkit"]
        assert (0.9, 9.5)[row.startswith("big.10mb")] < size < (1.0, 9.7)[row.startswith("big.10mb")]
        (peak,) = metrics[f"{row}.peak_x"]["frameworks"]["toolkit"]["raw"]
        assert peak["peak_kib"] >= peak["before_kib"]
        own = metrics[f"{row}.peak_x"]
        assert (own["target"], own["target_of"]) == ("3", "value") and own["target_met"] in (True, False)
        cpu = metrics[f"{row}.cpu_ms"]
        if row.startswith("big.10mb"):
            assert cpu["floor_target"] == "3/2" and cpu["floor_target_met"] in (True, False)
        else:
            assert cpu["floor_target"] is None
