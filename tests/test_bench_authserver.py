"""The benchmark's ``authserver`` scenario (``bench/authserver.py``): toolkit's ``OAuthProxy`` in front of
the test rig's oidc-provider, the logins, the token requests and the calls with its tokens, run clean.

Correctness only, as every bench test: each login must end with tokens, each call with the ten items
(the driver checks every answer), and every metric must get a value. No figure is asserted.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from tests.support.authserver import authserver_available
from tests.support.processes import REPO
from tests.test_auth_real import missing

# Three servers and the upstream, some hundred logins; the bound is for a hang, not for speed.
pytestmark = pytest.mark.timeout(600)

ERAS = ("legacy", "modern")
TOKENS = ("same", "fresh")


def test_the_authserver_scenario_runs_clean_in_quick_mode(tmp_path: Path) -> None:
    if not authserver_available():
        missing("the test authorization server is not installed: scripts/authserver --install-only installs it")
    arguments = ["--quick", "--only", "toolkit,floor", "--scenarios", "authserver", "--out", str(tmp_path)]
    run = subprocess.run(
        [str(REPO / "scripts" / "bench"), *arguments], check=False, capture_output=True, text=True, cwd=REPO
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    results = json.loads((tmp_path / "latest.json").read_text())
    assert results["scenarios"] == ["authserver"]
    assert results["errors"] == []
    metrics = {key: metric for key, metric in results["metrics"].items() if key.startswith("authserver.")}
    calls = [
        f"authserver.calls.{era}.{source}.{token}" for era in ERAS for source in ("issued", "jwt") for token in TOKENS
    ]
    expected = {
        *(f"authserver.flow.{m}" for m in ("wall_ms", "cpu_ms", "upstream_cpu_ms")),
        *(f"authserver.token.{grant}.{m}" for grant in ("code", "refresh") for m in ("cpu_us", "p50_us")),
        *(f"{prefix}.{m}" for prefix in calls for m in ("cpu_us", "p50_us")),
        *(f"authserver.calls.{era}.{token}.cpu_ratio" for era in ERAS for token in TOKENS),
    }
    assert set(metrics) == expected
    for key, metric in metrics.items():
        assert metric["median"]["toolkit"] > 0, key
        assert metric["label"] in run.stdout, "every metric is a row of the printed table"
        assert metric["frameworks"]["floor"]["unsupported"], "the floor starts nothing here"
    (flow,) = metrics["authserver.flow.cpu_ms"]["frameworks"]["toolkit"]["raw"]
    assert flow["requests_per_flow"] == 7  # toolkit's 4 (consent page, form, callback, /token), the upstream's 3
    for era in ERAS:
        for token in TOKENS:
            ratio = metrics[f"authserver.calls.{era}.{token}.cpu_ratio"]
            issued, jwt = (f"authserver.calls.{era}.{source}.{token}.cpu_us" for source in ("issued", "jwt"))
            assert ratio["ratio_of"] == [issued, jwt]
            assert (ratio["target"], ratio["target_of"]) == ("11/10", "value") and ratio["target_met"] in (True, False)
    assert (tmp_path / "charts" / "authserver-light.svg").is_file()
