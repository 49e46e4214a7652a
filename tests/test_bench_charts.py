"""The benchmark's charts, and the performance page's figures: they are the committed results'.

``docs/performance.md`` shows charts (``docs/assets/bench/*.svg``) and tables drawn from
``docs/assets/bench/results.json`` by ``scripts/bench --publish``. Here: redrawn from that file, they
are what is committed, byte for byte (a stale or hand-edited chart, table or summary fails, and the
check names it); the drawing is deterministic; it takes whatever columns and groups a run has (a
Node SDK column, a new group of metrics, no floor); and a partial run is never published. The
charts are drawn in the bench's own venv (``.bench/charts-venv``, matplotlib pinned in
``bench/requirements-charts.txt``), which ``scripts/bench`` builds; toolkit's ``.venv`` has no
matplotlib. The quick smoke run draws its charts too (``tests/test_bench.py``).
"""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from bench import page, publish, report
from bench.run import main_async, parse_args
from bench.sections import GATEWAY_CPU, X, chart_files, figure, number, sections
from tests.support.processes import REPO

BENCH = REPO / "scripts" / "bench"
SVG = "{http://www.w3.org/2000/svg}"


def _bench(*arguments: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BENCH), *arguments], check=False, capture_output=True, text=True, timeout=timeout, cwd=REPO
    )


@pytest.fixture(scope="module")
def check_run() -> subprocess.CompletedProcess[str]:
    """``scripts/bench --check-published``, once: it builds the charts' venv first if needed (pinned, from
    the package registry), then checks the committed figures."""
    return _bench("--check-published")


@pytest.fixture
def charts_venv(check_run: subprocess.CompletedProcess[str]) -> Path:
    """The charts' venv's Python (whatever the check found)."""
    assert publish.CHARTS_PYTHON.exists(), check_run.stdout[-3000:] + check_run.stderr[-3000:]
    return publish.CHARTS_PYTHON


@pytest.mark.timeout(660)
def test_the_published_charts_and_tables_are_those_of_the_committed_results(
    check_run: subprocess.CompletedProcess[str],
) -> None:
    assert check_run.returncode == 0, check_run.stdout[-3000:] + check_run.stderr[-3000:]
    assert "the charts and tables of docs/performance.md are those of its results file" in check_run.stdout
    # The published file is a full run of its day (every column, the default counts), without errors.
    results = json.loads(publish.RESULTS.read_text(encoding="utf-8"))
    assert publish.problems(results, results["scenarios"], results["frameworks"]) == []
    assert {"toolkit", "mcp", "fastmcp", "floor"} <= set(results["frameworks"])
    assert set(results["scenarios"]) >= {"calls", "client", "compose"}
    text = publish.PAGE.read_text(encoding="utf-8")
    names = page.markers(text)
    for name in ("summary", "chart cpu", "table cpu", "chart tail", "chart gateway", "more"):
        assert name in names, f"the page shows {name}"
    # Every chart the run gives is on the page (placed, or in the "more" block), in both variants.
    shown = publish._charts_named(text)
    for section in sections(results):
        if section.id != GATEWAY_CPU.id:
            assert set(chart_files(section.id)) <= shown, section.id
    # The README shows the headline chart.
    assert {"cpu-light.svg", "cpu-dark.svg"} <= publish._charts_named(publish.README.read_text(encoding="utf-8"))


def _copy_published(tmp_path: Path) -> tuple[Path, Path, Path]:
    assets = tmp_path / "assets"
    shutil.copytree(publish.ASSETS, assets)
    page_path = tmp_path / "performance.md"
    shutil.copy(publish.PAGE, page_path)
    readme = tmp_path / "README.md"
    shutil.copy(publish.README, readme)
    return assets, page_path, readme


def _check(assets: Path, page_path: Path, readme: Path) -> list[str]:
    return publish.check(assets=assets, page_path=page_path, readme=readme)


@pytest.mark.timeout(660)
def test_a_stale_or_hand_edited_figure_fails_the_check(charts_venv: Path, tmp_path: Path) -> None:
    assets, page_path, readme = _copy_published(tmp_path)
    assert _check(assets, page_path, readme) == [], "the copy checks clean"

    # A chart edited by hand: one of toolkit's figures changed in the SVG's text.
    chart = assets / "cpu-light.svg"
    original = chart.read_text(encoding="utf-8")
    results = json.loads((assets / "results.json").read_text(encoding="utf-8"))
    value = number(results["metrics"]["call.stdio.legacy.cpu_us"]["median"]["toolkit"], "µs")
    assert f">{value}<" in original, "toolkit's figure is text in the chart"
    chart.write_text(original.replace(f">{value}<", ">1<", 1), encoding="utf-8")
    assert _check(assets, page_path, readme) == [
        f"{chart}: differs from the chart the results give (stale, or edited by hand)"
    ]
    chart.write_text(original, encoding="utf-8")

    # A table edited by hand.
    text = page_path.read_text(encoding="utf-8")
    table = text.index("<!-- bench:table cpu -->")
    row = text.index(f"**{value}**", table)
    page_path.write_text(text[:row] + "**1**" + text[row + len(f"**{value}**") :], encoding="utf-8")
    problems = _check(assets, page_path, readme)
    assert problems == [
        f"{page_path}: block <!-- bench:table cpu --> differs from what the results give (stale, or edited by hand)"
    ]
    page_path.write_text(text, encoding="utf-8")

    # Stale: the results changed (as a new run would), the charts and the page not.
    stale = copy.deepcopy(results)
    stale["date"] = "2099-01-01T00:00:00Z"
    stale["metrics"]["call.stdio.legacy.cpu_us"]["median"]["toolkit"] *= 2
    (assets / "results.json").write_text(publish._dump(stale), encoding="utf-8")
    problems = _check(assets, page_path, readme)
    assert f"{assets / 'cpu-light.svg'}: differs from the chart the results give (stale, or edited by hand)" in problems
    assert any("bench:table cpu" in line for line in problems)
    assert any("bench:summary" in line for line in problems)

    # The results file itself, edited: not in its published form (a latency list put back).
    raw = copy.deepcopy(results)
    raw["metrics"]["call.stdio.legacy.p50_us"]["frameworks"]["toolkit"]["raw"][0] = [1.0, 2.0]
    (assets / "results.json").write_text(publish._dump(raw), encoding="utf-8")
    assert f"{assets / 'results.json'}: not as scripts/bench --publish writes it (edited by hand?)" in _check(
        assets, page_path, readme
    )

    # A chart the page shows that is not committed, and one committed that the results do not give.
    (assets / "results.json").write_text(publish._dump(results), encoding="utf-8")
    (assets / "old-light.svg").write_text(original, encoding="utf-8")
    (assets / "tail-dark.svg").unlink()
    assert sorted(_check(assets, page_path, readme)) == sorted(
        [
            f"{assets / 'old-light.svg'}: the results give no such chart (left from an older run?)",
            f"{assets / 'tail-dark.svg'}: missing (the results give this chart)",
            f"{page_path}: shows {page.ASSETS}/tail-dark.svg, which is not committed",
        ]
    )


@pytest.mark.timeout(660)
def test_the_charts_come_out_byte_for_byte_the_same(charts_venv: Path, tmp_path: Path) -> None:
    """Two processes, different hash seeds: the same bytes (the check above depends on it)."""
    outputs = []
    for seed in ("1", "2"):
        out = tmp_path / seed
        run = subprocess.run(
            [str(charts_venv), "-m", "bench.charts", str(publish.RESULTS), str(out)],
            check=False,
            capture_output=True,
            text=True,
            timeout=240,
            cwd=REPO,
            env={"PYTHONHASHSEED": seed, "PYTHONPATH": str(REPO), "MPLCONFIGDIR": str(tmp_path / f"mpl{seed}")},
        )
        assert run.returncode == 0, run.stderr[-3000:]
        outputs.append({path.name: path.read_bytes() for path in sorted(out.glob("*.svg"))})
    assert outputs[0] == outputs[1]
    assert outputs[0] == {path.name: path.read_bytes() for path in sorted(publish.ASSETS.glob("*.svg"))}
    for name, svg in outputs[0].items():
        root = ET.fromstring(svg)
        assert root.tag == f"{SVG}svg", name
        # No date, no background: the page's own colour shows through, light or dark.
        assert b"<dc:date>" not in svg, name
        assert root.find(f"{SVG}title") is not None, name


def test_matplotlib_is_no_dependency_of_toolkit_or_its_tests() -> None:
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8").lower()
    locks = "".join(path.read_text(encoding="utf-8").lower() for path in (REPO / "requirements").glob("*.lock"))
    assert "matplotlib" not in pyproject and "matplotlib" not in locks
    pinned = (REPO / "bench" / "requirements-charts.txt").read_text(encoding="utf-8").splitlines()
    requirements = [line for line in pinned if line and not line.startswith("#")]
    assert all("==" in line for line in requirements), "every version pinned"
    assert any(line.startswith("matplotlib==") for line in requirements)


# --- whatever a run has: columns and groups --------------------------------------------------------


def _metric(label: str, unit: str, medians: dict[str, float | None], **extra: Any) -> dict[str, Any]:
    frameworks: dict[str, Any] = {}
    for fw, value in medians.items():
        frameworks[fw] = {
            "samples": [] if value is None else [value],
            "rounds": [] if value is None else [1],
            "raw": [],
            "unsupported": "not measured here" if value is None else None,
            "errors": [],
        }
    anchors = {fw: v for fw, v in medians.items() if fw in ("mcp", "fastmcp") and v}
    best = min(anchors, key=anchors.__getitem__) if anchors else None
    toolkit = medians.get("toolkit")
    return {
        "label": label,
        "unit": unit,
        "better": "lower",
        "target": None,
        "target_of": None,
        "ratio_of": None,
        "median": medians,
        "best_anchor": best,
        "ratio_toolkit_best_anchor": toolkit / anchors[best] if best and toolkit else None,
        "ratio_toolkit_anchor": {},
        "target_met": None,
        "baseline": None,
        "ratio_toolkit_baseline": None,
        "floor_target": None,
        "ratio_toolkit_floor": None,
        "floor_target_met": None,
        "frameworks": frameworks,
        **extra,
    }


def _another_run() -> dict[str, Any]:
    """A run unlike the published one: a Node SDK column (``node``), no floor, the calls and compose groups
    only, and a group no section knows (``openapi``, as its scenario would add)."""
    columns = ("toolkit", "mcp", "fastmcp", "node")
    metrics: dict[str, Any] = {}
    for mode, scale in (("stdio", 1.0), ("http_seq", 2.0), ("http_c16", 1.5)):
        for era in ("legacy", "modern"):
            figures = {"toolkit": 50 * scale, "mcp": 600 * scale, "fastmcp": 800 * scale, "node": 150 * scale}
            metrics[f"call.{mode}.{era}.cpu_us"] = _metric(
                f"get_items server CPU/call ({mode}, {era})",
                "µs",
                figures,
                best_node="node",
                ratio_toolkit_best_node=1 / 3,
                node_target="1",
                node_target_met=True,
            )
            p50 = _metric("p50", "µs", {fw: v * 1.6 for fw, v in figures.items()})
            for fw in columns:
                p50["frameworks"][fw]["raw"] = [[v * 1.0 for v in range(1, 100)] + [figures[fw] * 30]]
            metrics[f"call.{mode}.{era}.p50_us"] = p50
            metrics[f"call.{mode}.{era}.p99_us"] = _metric("p99", "µs", {fw: v * 3 for fw, v in figures.items()})
    for era in ("legacy", "modern"):
        for upstream in ("http", "stdio"):
            metrics[f"compose.gateway.{upstream}.{era}.cpu_ratio"] = _metric(
                "gateway / direct", "x", {"toolkit": 1.8, "mcp": None, "fastmcp": 90.0, "node": None}
            )
    metrics["openapi.http_seq.modern.cpu_us"] = _metric(
        "an OpenAPI operation's server CPU/call (HTTP, modern)", "µs", {"toolkit": 300.0, "fastmcp": 2500.0}
    )
    metrics["openapi.http_seq.modern.cpu_ratio"] = _metric(
        "OpenAPI call / plain call (HTTP, modern)", "x", {"toolkit": 1.4, "fastmcp": 3.1}
    )
    return {
        "date": "2027-01-02T03:04:05Z",
        "toolkit_source": {"start": "abc1234", "end": "abc1234"},
        "baseline": None,
        "duration_s": 600.0,
        "machine": {
            "cpu": "a CPU",
            "cores": 2,
            "cores_usable": 2,
            "memory_gib": 8.0,
            "kernel": "6.1",
            "driver_python": "3.11.7",
            "loadavg_start": [0.5, 0.5, 0.5],
            "loadavg_end": [1.5, 1.0, 1.0],
        },
        "settings": {"rounds": 1, "calls": 100, "warmup": 20, "concurrency": 16, "quick": True},
        "scenarios": ["calls", "compose", "openapi"],
        "frameworks": {fw: {"available": True, "version": "1.0", "kind": fw} for fw in columns},
        "metrics": metrics,
        "errors": [],
    }


def _texts(svg: Path) -> list[str]:
    return [element.text or "" for element in ET.parse(svg).getroot().iter(f"{SVG}text")]


@pytest.mark.timeout(660)
def test_the_charts_take_whatever_columns_and_groups_a_run_has(charts_venv: Path, tmp_path: Path) -> None:
    results = _another_run()
    (tmp_path / "run.json").write_text(json.dumps(results), encoding="utf-8")
    drawn = publish.draw(tmp_path / "run.json", tmp_path / "charts")
    assert sorted(path.name for path in drawn) == sorted(
        name for section in ("cpu", "tail", "gateway", "openapi") for name in chart_files(section)
    ), "a chart per section with figures: none for the groups the run lacks, one for the new group"
    cpu = _texts(tmp_path / "charts" / "cpu-light.svg")
    assert {"toolkit", "mcp", "fastmcp", "node"} <= set(cpu), "the Node SDK column is in the legend"
    assert "floor" not in cpu
    assert "150" in cpu and "300" in cpu, "node's stdio and HTTP figures are labelled"
    tail = _texts(tmp_path / "charts" / "tail-light.svg")
    assert "80 / 150 / 1,500" in tail, "toolkit's p50 / p99 / slowest call over stdio"
    gateway = _texts(tmp_path / "charts" / "gateway-light.svg")
    assert f"1.80{X}" in gateway and f"90{X}" in gateway
    assert "openapi" not in cpu and "2,500" in _texts(tmp_path / "charts" / "openapi-light.svg")

    # The page: the new group appears in the "more" block, its table with the columns that have figures.
    text = "# Performance\n\n<!-- bench:summary -->\n<!-- /bench -->\n\n<!-- bench:more -->\n<!-- /bench -->\n"
    filled = page.fill(text, results)
    assert "### OpenAPI: server CPU per call (µs)" in filled
    assert "![" in filled and f"{page.ASSETS}/openapi-light.svg#only-light" in filled
    assert "| µs | toolkit | mcp | fastmcp | node | toolkit ÷ best anchor · ÷ best Node |" in filled
    assert "| stdio, legacy | **50** | 600 | 800 | 150 | 1/12.0 (mcp) · 1/3.0 (node) ✓ |" in filled, "6 columns"
    assert f"- **Against the TypeScript SDK**: 0.33{X} the server CPU per call of the better Node column." in filled
    assert f"| OpenAPI call / plain call (HTTP, modern) | **1.40{X}** | 3.10{X} |" in filled
    assert page.fill(filled, results) == filled, "filling is idempotent"


def test_a_table_wider_than_the_page_is_cut_in_two() -> None:
    """mkdocs-material gives a column at least 100 px of the 720 px there are at 1280 px: at most six."""
    results = _another_run()
    results["frameworks"]["floor"] = {"available": True, "version": "2.0", "kind": "floor"}
    for key, metric in results["metrics"].items():
        if key.endswith(".cpu_us") and key.startswith("call."):
            metric["median"]["floor"] = metric["median"]["toolkit"] * 0.8
            metric["frameworks"]["floor"] = {**metric["frameworks"]["toolkit"], "samples": [metric["median"]["floor"]]}
            metric["ratio_toolkit_floor"] = 1.25
    cpu = next(section for section in sections(results) if section.id == "cpu")
    text = page.table(results, cpu)
    first, second = (part for part in text.split("\n\n") if part.startswith("|"))
    assert first.splitlines()[0] == "| µs | toolkit | mcp | fastmcp | node | floor |"
    assert second.splitlines()[0] == "| µs | toolkit ÷ best anchor · ÷ best Node · ÷ floor |"
    assert "| stdio, legacy | 1/12.0 (mcp) · 1/3.0 (node) ✓ · 1.25 (floor) |" in second, "the rows' labels repeated"


def test_an_unknown_block_in_the_page_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown bench block"):
        page.fill("<!-- bench:table cpus -->\n<!-- /bench -->\n", _another_run())


def test_the_published_file_keeps_every_figure_but_the_latencies() -> None:
    results = _another_run()
    published = report.published(results)
    cell = published["metrics"]["call.stdio.legacy.p50_us"]["frameworks"]["toolkit"]
    assert cell["raw"] == [{"count": 100, "max": 1500.0}]
    assert cell["samples"] == results["metrics"]["call.stdio.legacy.p50_us"]["frameworks"]["toolkit"]["samples"]
    assert report.published(published) == published, "applied to its own output it changes nothing"
    assert figure(published, "call.stdio.legacy.p50_us", "toolkit", "max") == 1500.0
    assert figure(results, "call.stdio.legacy.p50_us", "toolkit", "max") == 1500.0


async def test_a_partial_run_is_never_published(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Refused before anything is measured: --publish with anything but a full run.
    for arguments in (["--only", "toolkit"], ["--quick"], ["--scenarios", "calls"], ["--rounds", "2"]):
        assert await main_async(parse_args(["--publish", *arguments])) == 2
        assert f"--publish needs a full run: drop {arguments[0]}" in capsys.readouterr().err
    # A JSON that is not a full run's: not published, and why.
    partial = tmp_path / "partial.json"
    partial.write_text(json.dumps(_another_run()), encoding="utf-8")
    before = {path: path.read_bytes() for path in (publish.RESULTS, publish.PAGE)}
    assert await main_async(parse_args(["--publish-from", str(partial)])) == 2
    err = capsys.readouterr().err
    assert f"not published: {partial} is not a full run: it is a --quick run;" in err
    assert "its scenarios lack" in err and "it has no floor, node2 column" in err
    assert {path: path.read_bytes() for path in before} == before, "the published files are untouched"
