"""A run's charts: one SVG per section of ``bench/sections.py``, for light pages and for dark ones.

    python -m bench.charts RESULTS_JSON OUT_DIR      # writes OUT_DIR/<section>-light.svg and -dark.svg

Runs in the charts' own venv, ``.bench/charts-venv`` (matplotlib, pinned in
``bench/requirements-charts.txt``; ``scripts/bench`` builds it), never in toolkit's: ``bench/publish.py``
starts it. The sections, their rows and their figures are ``bench/sections.py``'s, so a chart shows the
same numbers as its table; the columns are whichever frameworks the run has.

The SVGs are byte-for-byte the same from the same results (the docs' check depends on it): a fixed
``svg.hashsalt`` for the ids matplotlib makes, no date in the metadata, text kept as text
(``svg.fonttype: none``: no glyph outlines, whose ids and paths would depend on the font files),
matplotlib's own defaults and only the fonts it ships (DejaVu Sans) for the layout. The background
is transparent; the two variants differ only in the colours of text, grid and of the series that
need more contrast on a dark page.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.sections import Row, Section, X, chart_files, columns, figure, grid_ratio, number, sections

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

WIDTH = 7.2  # inches: 518 pt = 691 px, the page's column at 1280 px: shown at its own size there
THEMES: dict[str, dict[str, str]] = {
    "light": {"text": "#1f2328", "muted": "#57606a", "grid": "#d0d7de", "target": "#cf222e"},
    "dark": {"text": "#e6edf3", "muted": "#9da7b3", "grid": "#3d444d", "target": "#ff7b72"},
}
# Okabe-Ito's colour-blind-safe palette; toolkit and the floor lighter on a dark page.
COLOURS: dict[str, dict[str, str]] = {
    "toolkit": {"light": "#0072B2", "dark": "#56B4E9"},
    "mcp": {"light": "#E69F00", "dark": "#E69F00"},
    "fastmcp": {"light": "#D55E00", "dark": "#F0814A"},
    "floor": {"light": "#8C8C8C", "dark": "#A6A6A6"},
}
MORE_COLOURS = ("#009E73", "#CC79A7", "#F0E442", "#7B68EE")  # a baseline, the Node SDK, what comes next
ERA_TITLES = {"legacy": "legacy era (2025-11-25, initialize)", "modern": "modern era (2026-07-28)"}
LOG_SPREAD = 12  # a chart whose largest figure is this many times its smallest is drawn on a log scale


def colour(framework: str, theme: str, order: Sequence[str]) -> str:
    known = COLOURS.get(framework)
    if known is not None:
        return known[theme]
    others = [fw for fw in order if fw not in COLOURS]
    return MORE_COLOURS[others.index(framework) % len(MORE_COLOURS)] if framework in others else MORE_COLOURS[0]


def _setup() -> None:
    import matplotlib
    from matplotlib import font_manager

    matplotlib.use("svg")
    # The same layout on every machine: matplotlib's own defaults (no matplotlibrc of the user's or
    # the directory's), and only the fonts it ships, not the system's (a DejaVu Sans of another
    # version measures text otherwise).
    matplotlib.rcdefaults()
    shipped = Path(matplotlib.get_data_path()) / "fonts" / "ttf"
    font_manager.fontManager.ttflist = [f for f in font_manager.fontManager.ttflist if Path(f.fname).parent == shipped]
    matplotlib.rcParams.update(
        {
            "svg.hashsalt": "toolkit-bench",
            "svg.fonttype": "none",
            # Laid out with matplotlib's own DejaVu Sans; a browser without it takes the next.
            "font.family": "sans-serif",
            "font.sans-serif": ["DejaVu Sans", "Verdana", "Arial", "Helvetica"],
            "font.size": 9,
            "axes.titlesize": 9.5,
            "axes.titleweight": "bold",
            "figure.facecolor": "none",
            "axes.facecolor": "none",
            "savefig.transparent": True,
        }
    )


# --- what each panel shows ---------------------------------------------------------------------------


@dataclass
class Panel:
    """One panel of bars: a group per row, a bar per series (frameworks, or a grid's columns)."""

    title: str
    rows: list[str]
    series: list[str]
    values: list[list[float | None]]  # [row][series]
    labels: list[list[str]]


def _panels(results: dict[str, Any], section: Section) -> list[tuple[str, list[Row]]]:
    """The section's rows by panel: by era when the section says so (the suffix dropped from the label)."""
    if section.kind == "generic":
        keys = set(section.charted)
        return [("", [row for row in section.rows if row.key in keys])]
    rows = [row for row in section.rows if not row.label.endswith("calls/s")]
    if not section.panels:
        return [("", rows)]
    out = []
    for era in section.panels:
        mine = [Row(row.label.replace(f", {era}", ""), row.key, row.stat) for row in rows if f", {era}" in row.label]
        if mine:
            out.append((ERA_TITLES.get(era, era), mine))
    return out


def _frameworks(results: dict[str, Any], rows: list[Row]) -> list[str]:
    return [fw for fw in columns(results) if any(figure(results, r.key, fw, r.stat) is not None for r in rows)]


def _bar_panels(results: dict[str, Any], section: Section) -> list[Panel]:
    if section.grid is not None:
        grid = section.grid
        values, labels = [], []
        for _, part in grid.rows:
            row_values: list[float | None] = []
            row_labels = []
            for column in grid.columns:
                value = figure(results, grid.key(part, column), "toolkit")
                ratio = grid_ratio(results, grid, part, column)
                row_values.append(value)
                text = number(value, section.unit) if value is not None else ""
                row_labels.append(f"{text} ({ratio:.2f}{X})" if ratio is not None and text else text)
            values.append(row_values)
            labels.append(row_labels)
        return [Panel("", [label for label, _ in grid.rows], [c.label for c in grid.columns], values, labels)]
    panels = _panels(results, section)
    frameworks = _frameworks(results, [row for _, rows in panels for row in rows])
    out = []
    for title, rows in panels:
        values = [[figure(results, row.key, fw, row.stat) for fw in frameworks] for row in rows]
        labels = [
            [number(v, str(results["metrics"][row.key]["unit"])) if v is not None else "" for v in row_values]
            for row, row_values in zip(rows, values, strict=True)
        ]
        out.append(Panel(title, [row.label for row in rows], frameworks, values, labels))
    return out


# --- drawing -------------------------------------------------------------------------------------------


def draw(results: dict[str, Any], section: Section, theme: str) -> str:
    """One section's chart as SVG text."""
    import io

    import matplotlib.pyplot as plt

    figure_ = _figure(results, section, theme)
    out = io.StringIO()
    figure_.savefig(out, format="svg", metadata={"Date": None, "Title": section.title, "Creator": "bench/charts.py"})
    plt.close(figure_)
    return out.getvalue()


def _figure(results: dict[str, Any], section: Section, theme: str) -> Figure:
    import matplotlib.pyplot as plt

    colours = THEMES[theme]
    if section.kind == "tail":
        tail_panels = _panels(results, section)
        frameworks = _frameworks(results, [row for _, rows in tail_panels for row in rows])
        series = frameworks
        modes = max(sum(row.label.endswith(": p50") for row in rows) for _, rows in tail_panels)
        per_panel = modes * (len(frameworks) * 0.24 + 0.3)
        titles = [title for title, _ in tail_panels]
        values = [
            v
            for _, rows in tail_panels
            for row in rows
            for fw in frameworks
            if (v := figure(results, row.key, fw, row.stat)) is not None and v > 0
        ]
    else:
        bar_panels = _bar_panels(results, section)
        series = bar_panels[0].series
        per_panel = max(len(p.rows) for p in bar_panels) * (len(series) * 0.2 + 0.28)
        titles = [p.title for p in bar_panels]
        values = [v for p in bar_panels for row in p.values for v in row if v is not None and v > 0]
    tints = {name: _tint(section, name, theme, series) for name in series}
    # The tail's labels (three figures a bar) need the whole width: its panels go one under the other.
    stacked = section.kind == "tail"
    height = 0.95 + per_panel * (len(titles) if stacked else 1) + 0.3 * (len(titles) - 1) * stacked
    shape = (len(titles), 1) if stacked else (1, len(titles))
    fig, grid = plt.subplots(*shape, figsize=(WIDTH, height), squeeze=False)
    axes = [ax for line in grid for ax in line]
    log = bool(values) and max(values) / min(values) >= LOG_SPREAD
    for index, ax in enumerate(axes):
        if section.kind == "tail":
            _tail(ax, results, tail_panels[index][1], frameworks, tints, colours, log, values)
        else:
            _bars(ax, bar_panels[index], tints, colours, log, values, section)
        _style(ax, colours, titles[index], log)
    fig.suptitle(
        section.title,
        x=0.01,
        y=1 - 0.06 / height,
        ha="left",
        va="top",
        fontsize=10.5,
        fontweight="bold",
        color=colours["text"],
    )
    handles = [plt.Rectangle((0, 0), 1, 1, color=tints[name]) for name in series]
    legend = fig.legend(
        handles,
        series,
        loc="upper left",
        ncols=len(series),
        frameon=False,
        fontsize=8.5,
        bbox_to_anchor=(0.003, 1 - 0.22 / height),
        handlelength=1.2,
        columnspacing=1.2,
    )
    for text in legend.get_texts():
        text.set_color(colours["text"])
    footer = {"tail": "● p50   ◆ p99   | slowest call", "ratios": "dashed: toolkit's target"}.get(section.kind)
    if footer:
        fig.text(0.01, 0.01, footer, fontsize=8, color=colours["muted"])
    bottom = 0.2 / height if footer else 0.0
    fig.tight_layout(pad=0.5, rect=(0, bottom, 1, 1 - 0.45 / height))
    return fig


def _tint(section: Section, name: str, theme: str, series: list[str]) -> str:
    if section.grid is None:
        return colour(name, theme, series)
    # A grid's columns: the plain variant in toolkit's colour, the others after it.
    palette = [
        COLOURS["toolkit"][theme],
        *MORE_COLOURS[:1],
        MORE_COLOURS[1],
        COLOURS["fastmcp"][theme],
        MORE_COLOURS[3],
    ]
    return palette[series.index(name) % len(palette)]


def _limits(values: list[float], log: bool) -> tuple[float, float]:
    """The value axis: room on the right for the labels."""
    if log:
        low = 10 ** math.floor(math.log10(min(values)))
        high = 10 ** (math.log10(max(values)) + (math.log10(max(values)) - math.log10(low)) * 0.35)
        return low, high
    return 0.0, max(values) * 1.3


def _bars(
    ax: Axes,
    panel: Panel,
    tints: dict[str, str],
    colours: dict[str, str],
    log: bool,
    values: list[float],
    section: Section,
) -> None:
    count = len(panel.series)
    height = 0.8 / max(1, count)
    low, high = _limits(values, log)
    # A ratio's bar starts at 1 (no extra cost), so the bar is the extra cost; a target is a line.
    base = 1.0 if section.kind == "ratios" else (low if log else 0.0)
    if section.kind == "ratios" and not log:
        top = max(*values, *section.targets.values())
        low = min(0.9, min(values) - 0.05)
        high = top + (top - low) * 0.25
    for index, (row_values, row_labels) in enumerate(zip(panel.values, panel.labels, strict=True)):
        for slot, (name, value, label) in enumerate(zip(panel.series, row_values, row_labels, strict=True)):
            if value is None:
                continue
            y = index + (slot - (count - 1) / 2) * height
            ax.barh(y, value - base, left=base, height=height * 0.92, color=tints[name])
            ax.text(
                value * 1.06 if log else value + (high - low) * 0.01,
                y,
                label,
                va="center",
                ha="left",
                fontsize=7.5,
                color=colours["text"],
                fontweight="bold" if name == "toolkit" else "normal",
            )
    for name, target in section.targets.items():
        if name in panel.series:
            ax.axvline(target, color=colours["target"], linestyle="--", linewidth=1)
    if section.kind == "ratios":
        ax.axvline(1.0, color=colours["muted"], linewidth=0.8)
    ax.set_yticks(range(len(panel.rows)), panel.rows)
    ax.set_ylim(len(panel.rows) - 0.5, -0.5)
    ax.set_xlim(low, high)


def _tail(
    ax: Axes,
    results: dict[str, Any],
    rows: list[Row],
    frameworks: list[str],
    tints: dict[str, str],
    colours: dict[str, str],
    log: bool,
    values: list[float],
) -> None:
    modes = [row for row in rows if row.label.endswith(": p50")]
    height = 0.8 / max(1, len(frameworks))
    low, high = _limits(values, log)
    for index, p50_row in enumerate(modes):
        mode = p50_row.label.removesuffix(": p50")
        mine = {row.label.removeprefix(f"{mode}: "): row for row in rows if row.label.startswith(f"{mode}: ")}
        for slot, fw in enumerate(frameworks):
            y = index + (slot - (len(frameworks) - 1) / 2) * height
            p50, p99, top = (
                figure(results, mine[stat].key, fw, mine[stat].stat) if stat in mine else None
                for stat in ("p50", "p99", "slowest")
            )
            if p50 is None:
                continue
            tint = tints[fw]
            end = top if top is not None else (p99 if p99 is not None else p50)
            ax.plot([p50, end], [y, y], color=tint, linewidth=1.6, solid_capstyle="butt")
            ax.plot([p50], [y], marker="o", markersize=4.5, color=tint, linestyle="none")
            if p99 is not None:
                ax.plot([p99], [y], marker="D", markersize=4, color=tint, linestyle="none")
            if top is not None:
                ax.plot([top], [y], marker="|", markersize=8, markeredgewidth=1.6, color=tint, linestyle="none")
            ax.text(
                end * 1.12 if log else end + (high - low) * 0.01,
                y,
                " / ".join(number(v, "µs") for v in (p50, p99, top) if v is not None),
                va="center",
                ha="left",
                fontsize=7,
                color=colours["text"],
                fontweight="bold" if fw == "toolkit" else "normal",
            )
    ax.set_yticks(range(len(modes)), [row.label.removesuffix(": p50") for row in modes])
    ax.set_ylim(len(modes) - 0.5, -0.5)
    ax.set_xlim(low, high if log else high * 1.4)


def _style(ax: Axes, colours: dict[str, str], title: str, log: bool) -> None:
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    if log:
        ax.set_xscale("log")
        ax.xaxis.set_major_locator(LogLocator(base=10, numticks=12))  # every power of ten
        ax.xaxis.set_minor_formatter(NullFormatter())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:,.0f}" if value >= 1000 else f"{value:g}"))
    if title:
        ax.set_title(title, loc="left", color=colours["text"])
    ax.grid(axis="x", color=colours["grid"], linewidth=0.6, which="major")
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    for side in ("left", "bottom"):
        ax.spines[side].set_color(colours["grid"])
    ax.tick_params(colors=colours["muted"], labelcolor=colours["text"], which="both")
    ax.tick_params(axis="y", length=0)


# --- the files ----------------------------------------------------------------------------------------------


def write(results: dict[str, Any], out: Path) -> list[Path]:
    """Every section's two SVGs into ``out``; the paths written."""
    _setup()
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for section in sections(results):
        if section.id == "gateway-cpu":  # a second table of the gateway's section, no chart of its own
            continue
        for name, theme in zip(chart_files(section.id), ("light", "dark"), strict=True):
            path = out / name
            path.write_text(draw(results, section, theme), encoding="utf-8")
            written.append(path)
    return written


def main(argv: list[str]) -> int:
    import json

    if len(argv) != 2:
        print("usage: python -m bench.charts RESULTS_JSON OUT_DIR", file=sys.stderr)
        return 2
    results = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    for path in write(results, Path(argv[1])):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
