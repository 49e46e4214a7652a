"""The published run: ``docs/assets/bench/results.json``, the charts beside it, and the page's blocks.

``scripts/bench --publish`` (a full run, then this) and ``scripts/bench --publish-from FILE`` (a full
run's JSON written earlier, or the published file itself after a change to the charts or the
tables) write:

- ``docs/assets/bench/results.json``: the run's JSON in its published form (``report.published``:
  each batch's per-call latencies cut to their count and maximum; everything else as the run wrote it);
- ``docs/assets/bench/<section>-light.svg`` and ``-dark.svg``: drawn from that file by
  ``bench/charts.py`` in the charts' venv (``.bench/charts-venv``), any older chart removed;
- the blocks of ``docs/performance.md`` between their markers (``bench/page.py``).

Only a full run is published (every default group, every column, the default counts, no
``--baseline``, no error): a partial run would replace the page's figures with a part of them.
``scripts/bench --check-published`` (and ``tests/test_bench_charts.py``) redraws everything from
the committed results file and compares it with what is committed, byte for byte: a stale or
hand-edited chart, table or summary fails, naming the file.

Charts of any run are drawn beside its JSON too (``draw``: ``bench/results/charts/``), so every
``scripts/bench``, the quick smoke run included, exercises the drawing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from bench import page, report
from bench.metrics import FRAMEWORKS

ROOT = Path(__file__).resolve().parent.parent
CHARTS_PYTHON = ROOT / ".bench" / "charts-venv" / "bin" / "python"
MPLCONFIG = ROOT / ".bench" / "charts-venv" / "mplconfig"
ASSETS = ROOT / "docs" / page.ASSETS
RESULTS = ASSETS / "results.json"
PAGE = ROOT / "docs" / "performance.md"
README = ROOT / "README.md"


class ChartsError(Exception):
    """The charts could not be drawn (no charts' venv, or the drawing failed): what to do is in the message."""


def draw(results_path: Path, out: Path) -> list[Path]:
    """The charts of a run's JSON into ``out`` (made if missing; the SVGs of an earlier run there
    removed), drawn in the charts' venv. The paths written."""
    if not CHARTS_PYTHON.exists():
        raise ChartsError(
            f"{CHARTS_PYTHON.relative_to(ROOT)} is missing: scripts/bench builds it from bench/requirements-charts.txt"
        )
    with tempfile.TemporaryDirectory(prefix="bench-charts-") as tmp:
        run = subprocess.run(
            [str(CHARTS_PYTHON), "-m", "bench.charts", str(results_path.resolve()), tmp],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
            timeout=600,
            # A config and cache directory of the venv's own: nothing of the user's matplotlib settings.
            env={**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "svg", "MPLCONFIGDIR": str(MPLCONFIG)},
        )
        if run.returncode != 0:
            raise ChartsError(f"bench/charts.py failed (exit {run.returncode}):\n{run.stderr[-3000:]}")
        out.mkdir(parents=True, exist_ok=True)
        for old in out.glob("*.svg"):
            old.unlink()
        return [Path(shutil.copy(path, out / path.name)) for path in sorted(Path(tmp).glob("*.svg"))]


def problems(results: dict[str, Any], default_groups: Iterable[str], columns: Iterable[str] = FRAMEWORKS) -> list[str]:
    """Why a run's JSON cannot be published (empty when it can): a full run (``default_groups``), every
    column (``columns``: the benchmark's, the Node SDK's included), no error."""
    out = []
    s = results.get("settings", {})
    if s.get("quick"):
        out.append("it is a --quick run")
    if results.get("baseline"):
        out.append("it has a --baseline column")
    missing_groups = sorted(set(default_groups) - set(results.get("scenarios", [])))
    if missing_groups:
        out.append(f"its scenarios lack {', '.join(missing_groups)} (a --scenarios run)")
    frameworks = results.get("frameworks", {})
    absent = [fw for fw in columns if not frameworks.get(fw, {}).get("available")]
    if absent:
        out.append(f"it has no {', '.join(absent)} column (an --only run, or unavailable)")
    if (s.get("rounds"), s.get("calls"), s.get("warmup")) != (5, 2000, 200):
        out.append(
            f"its counts are not the defaults (rounds {s.get('rounds')}, calls {s.get('calls')}, "
            f"warm-up {s.get('warmup')}; a full run is 5 rounds of 2000 calls after 200)"
        )
    if results.get("errors"):
        out.append(f"it had {len(results['errors'])} error(s)")
    return out


def publish(results: dict[str, Any], *, assets: Path = ASSETS, page_path: Path = PAGE) -> list[Path]:
    """Write the published results file, its charts (older ones removed) and the page's blocks."""
    published = report.published(results)
    assets.mkdir(parents=True, exist_ok=True)
    results_path = assets / RESULTS.name
    results_path.write_text(_dump(published), encoding="utf-8")
    written = draw(results_path, assets)
    text = page_path.read_text(encoding="utf-8")
    page_path.write_text(page.fill(text, published), encoding="utf-8")
    return [results_path, *written, page_path]


def check(*, assets: Path = ASSETS, page_path: Path = PAGE, readme: Path = README) -> list[str]:
    """What differs from what the committed results file gives (empty: everything is its own)."""
    results_path = assets / RESULTS.name
    if not results_path.exists():
        return [f"{results_path} is missing: scripts/bench --publish writes it"]
    text = results_path.read_text(encoding="utf-8")
    results = json.loads(text)
    out = []
    if _dump(report.published(results)) != text:
        out.append(f"{results_path}: not as scripts/bench --publish writes it (edited by hand?)")
    with tempfile.TemporaryDirectory(prefix="bench-charts-") as tmp:
        drawn = {path.name: path.read_bytes() for path in draw(results_path, Path(tmp))}
    committed = {path.name: path.read_bytes() for path in assets.glob("*.svg")}
    for name in sorted(drawn.keys() | committed.keys()):
        if name not in committed:
            out.append(f"{assets / name}: missing (the results give this chart)")
        elif name not in drawn:
            out.append(f"{assets / name}: the results give no such chart (left from an older run?)")
        elif drawn[name] != committed[name]:
            out.append(f"{assets / name}: differs from the chart the results give (stale, or edited by hand)")
    current = page_path.read_text(encoding="utf-8")
    try:
        expected = page.fill(current, results)
    except ValueError as exc:
        out.append(f"{page_path}: {exc}")
    else:
        out += [f"{page_path}: block <!-- bench:{name} --> {why}" for name, why in _blocks_differ(current, expected)]
    for where in (page_path, readme):
        for name in _charts_named(where.read_text(encoding="utf-8")):
            if name not in committed:
                out.append(f"{where}: shows {page.ASSETS}/{name}, which is not committed")
    return out


def _blocks_differ(current: str, expected: str) -> list[tuple[str, str]]:
    now = {m["name"]: m["body"] for m in page.BLOCK.finditer(current)}
    want = {m["name"]: m["body"] for m in page.BLOCK.finditer(expected)}
    return [
        (name, "differs from what the results give (stale, or edited by hand)")
        for name in now
        if now[name] != want[name]
    ]


def _charts_named(text: str) -> set[str]:
    marker = page.ASSETS + "/"
    names = set()
    for part in text.split(marker)[1:]:
        name = part.split(")")[0].split('"')[0].split("#")[0]
        if name.endswith(".svg"):
            names.add(name)
    return names


def _dump(results: dict[str, Any]) -> str:
    return json.dumps(results, indent=1, ensure_ascii=False, sort_keys=False) + "\n"
