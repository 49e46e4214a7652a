"""What the performance page says about a run: Markdown tables, a summary, and the page's blocks.

``docs/performance.md`` holds **blocks** between markers that this module fills from a run's results,
section by section (``bench/sections.py``):

    <!-- bench:summary -->       the run in a paragraph and its headline figures, computed
    <!-- bench:chart cpu -->     a section's chart: its light and its dark SVG (mkdocs-material's
                                 #only-light / #only-dark), with the figures as alt text
    <!-- bench:table cpu -->     a section's Markdown table
    <!-- bench:more -->          every section the page places nowhere else (a new group appears here)

each closed by ``<!-- /bench -->``. ``blocks`` renders them and ``fill`` writes them into the page:
what lies between the markers is the results', never a hand's (``bench/publish.py check`` compares).
Standard library only, so the driver's ``.venv`` can use it as well as the charts' venv.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from bench.sections import (
    CALL_MODES,
    ERAS,
    FLOOR,
    GATEWAY_CPU,
    SECTIONS,
    VERDICT,
    Grid,
    Section,
    X,
    chart_files,
    columns,
    figure,
    fraction,
    grid_ratio,
    has_figure,
    number,
    sections,
    state,
    times,
    unit_of,
)

ASSETS = "assets/bench"  # the charts' folder, relative to docs/ (the page's own folder)
BLOCK = re.compile(r"(<!-- bench:(?P<name>[a-z0-9:_ -]+?) -->\n)(?P<body>.*?)(<!-- /bench -->)", re.S)

# --- tables -----------------------------------------------------------------------------------------


# mkdocs-material gives every table column at least 5rem (100 px at 1280 px), and the content column
# is 720 px wide there: a table of more columns would scroll sideways, so it is cut into two.
MAX_COLUMNS = 6


def table(results: dict[str, Any], section: Section) -> str:
    """A section as a Markdown table: a row per metric, a column per framework with any figure in it,
    then (for sections comparing frameworks) toolkit ÷ the better anchor and ÷ the floor with the
    targets' verdicts, or (for toolkit's own ratios) the target and its verdict. A grid section: its
    rows and columns, toolkit's figures. More than ``MAX_COLUMNS`` columns make two tables, the rows'
    labels repeated."""
    if section.grid is not None:
        return _grid_table(results, section, section.grid)
    rows = [row for row in section.rows if has_figure(results, row.key)]
    shown = [fw for fw in columns(results) if any(figure(results, r.key, fw, r.stat) is not None for r in rows)]
    hidden = [fw for fw in columns(results) if fw not in shown]
    metrics = results["metrics"]
    by_anchor = section.ratio and any(metrics[r.key].get("ratio_toolkit_best_anchor") for r in rows)
    by_node = section.ratio and any(metrics[r.key].get("ratio_toolkit_best_node") for r in rows)
    by_floor = section.ratio and any(metrics[r.key].get("ratio_toolkit_floor") for r in rows)
    own_target = any(metrics[r.key].get("target_of") == "value" for r in rows)
    header = [*shown]
    if by_anchor or by_node or by_floor:
        ratios = ["toolkit ÷ best anchor"] * by_anchor + ["÷ best Node"] * by_node + ["÷ floor"] * by_floor
        header.append(" · ".join(ratios))
    header += ["target"] * own_target
    body = []
    for row in rows:
        metric = metrics[row.key]
        unit = unit_of(results, row, section)
        cells = []
        for fw in shown:
            value = figure(results, row.key, fw, row.stat)
            text = number(value, unit) if value is not None else state(results, row.key, fw)
            cells.append(f"**{text}**" if fw == "toolkit" and value is not None else text)
        if by_anchor or by_node or by_floor:
            parts = [_by_anchor(metric)] if by_anchor and row.stat == "median" else []
            ratio = metric.get("ratio_toolkit_best_node") if by_node and row.stat == "median" else None
            if ratio is not None:
                parts.append(f"{times(ratio)} ({metric['best_node']}){VERDICT[metric.get('node_target_met')]}")
            ratio = metric.get("ratio_toolkit_floor") if by_floor and row.stat == "median" else None
            if ratio is not None:
                parts.append(f"{times(ratio)} (floor){VERDICT[metric.get('floor_target_met')]}")
            cells.append(" · ".join(part for part in parts if part))
        if own_target:
            target = fraction(metric.get("target")) if metric.get("target_of") == "value" else ""
            cells.append(f"≤ {target}{X}{VERDICT[metric.get('target_met')]}" if target else "")
        body.append(cells)
    corner = section.unit if section.kind != "tail" else ""
    tables = []
    for first in range(0, len(header), MAX_COLUMNS - 1):
        part = slice(first, first + MAX_COLUMNS - 1)
        lines = ["| " + " | ".join([corner, *header[part]]) + " |", "|" + "---|" * (1 + len(header[part]))]
        lines += ["| " + " | ".join([row.label, *cells[part]]) + " |" for row, cells in zip(rows, body, strict=True)]
        tables.append("\n".join(lines))
    notes = [section.note] if section.note else []
    for fw in hidden:
        reasons = {
            (metrics[r.key]["frameworks"].get(fw) or {}).get("unsupported") or ""
            for r in section.rows
            if r.key in metrics
        } - {""}
        if reasons:
            notes.append(f"{fw}: n/a ({'; '.join(sorted(reasons))}).")
    return "\n\n".join(tables) + ("\n\n" + " ".join(notes) if notes else "")


def _grid_table(results: dict[str, Any], section: Section, grid: Grid) -> str:
    lines = [
        "| " + " | ".join([section.unit, *(c.label for c in grid.columns)]) + " |",
        "|" + "---|" * (1 + len(grid.columns)),
    ]
    for label, part in grid.rows:
        cells = [label]
        for column in grid.columns:
            value = figure(results, grid.key(part, column), "toolkit")
            text = (
                number(value, section.unit) if value is not None else state(results, grid.key(part, column), "toolkit")
            )
            ratio = grid_ratio(results, grid, part, column)
            if ratio is not None:
                met = results["metrics"][grid.ratio(part, column)].get("target_met")
                text += f" ({ratio:.2f}{X}{VERDICT[met]})"
            cells.append(text)
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + (f"\n\n{section.note}" if section.note else "")


def _by_anchor(metric: dict[str, Any]) -> str:
    ratio = metric.get("ratio_toolkit_best_anchor")
    if not ratio:
        return ""
    text = f"{times(ratio)} ({metric['best_anchor']})"
    if metric.get("target_of") == "best_anchor" and metric.get("target"):
        text += VERDICT[metric.get("target_met")]
    return text


# --- the summary ----------------------------------------------------------------------------------


def _ratios(results: dict[str, Any], keys: Iterable[str], field_name: str = "ratio_toolkit_best_anchor") -> list[float]:
    values = [results["metrics"].get(key, {}).get(field_name) for key in keys]
    return [float(v) for v in values if isinstance(v, int | float)]


def _toolkit(results: dict[str, Any], keys: Iterable[str], framework: str = "toolkit") -> list[float]:
    values = [figure(results, key, framework) for key in keys]
    return [v for v in values if v is not None]


def _span(values: list[float], fmt: Callable[[float], str]) -> str:
    low, high = fmt(min(values)), fmt(max(values))
    return low if low == high else f"{low} to {high}"


def _less(ratios: list[float]) -> str:
    """Ratios below 1 as 'N times less': '4.5 to 12.5 times'."""
    return _span([1 / r for r in ratios], lambda v: f"{v:.1f}") + " times"


def run_line(results: dict[str, Any]) -> str:
    """Where and how the run was made, for the page: machine, load, commit, rounds, versions."""
    m, s = results["machine"], results["settings"]
    versions = ", ".join(
        f"{fw} {info['version']}" if fw != FLOOR else f"the floor (pydantic {info['version']})"
        for fw, info in results["frameworks"].items()
        if info.get("available")
    )
    source = results["toolkit_source"]
    commit, notes = f"`{source['start']}`", []
    if source["end"] != source["start"]:
        commit += f" to `{source['end']}`"
        notes.append("the tree changed during the run, so its medians mix these versions")
    if "+dirty" in source["start"] + source["end"]:
        notes.append("`+dirty`: with changes under `src/` not committed yet")
    if notes:
        commit += f" ({'; '.join(notes)})"
    load = f"load average {m['loadavg_start'][0]:.1f} at the start, {m['loadavg_end'][0]:.1f} at the end"
    return (
        f"`scripts/bench` of {results['date'][:10]}, toolkit at commit {commit}: "
        f"{s['rounds']} round{'s' * (s['rounds'] != 1)}, "
        f"{s['calls']:,} calls per batch after {s['warmup']} warm-up calls, {s['concurrency']} concurrent "
        f"HTTP clients; {versions}. Machine: {m['cpu']}, {m['cores']} cores, {m['memory_gib']} GiB, "
        f"Linux {m['kernel']}, Python {m['driver_python']}; shared with other work, {load}. "
        f"It took {results['duration_s'] / 60:.0f} minutes."
    )


def summary(results: dict[str, Any]) -> str:
    """The headline figures, each computed from the run, then every target it missed."""
    by_id = {section.id: section for section in SECTIONS}
    cpu = by_id["cpu"].keys()
    bullets = []
    if ratios := _ratios(results, cpu):
        line = f"- **Server CPU per call**: {_less(ratios)} less than the better of mcp and fastmcp"
        if floor := _ratios(results, cpu, "ratio_toolkit_floor"):
            line += f", and {_span(floor, lambda v: f'{v:.2f}')}{X} the frameworkless floor's"
        bullets.append(line + " (stdio and HTTP, both eras).")
    if nodes := _ratios(results, cpu, "ratio_toolkit_best_node"):
        bullets.append(
            f"- **Against the TypeScript SDK**: {_span(nodes, lambda v: f'{v:.2f}')}{X} the server CPU per call of "
            "the better Node column."
        )
    p99 = [f"call.{mode}.{era}.p99_us" for mode in CALL_MODES for era in ERAS]
    if ratios := _ratios(results, p99):
        bullets.append(f"- **p99 latency**: {_less(ratios)} lower than the better anchor's.")
    start = ["spawn.legacy.first_response_ms", "spawn.modern.first_response_ms"]
    if ratios := _ratios(results, start):
        line = f"- **Start-up**: the first answer of a new stdio server comes {_less(ratios)} sooner"
        if ratios := _ratios(results, ["list500.legacy.steady_ms", "list500.modern.steady_ms"]):
            line += f"; a steady `tools/list` of 500 tools is {_less(ratios)} faster"
        bullets.append(line + ".")
    if ratios := _ratios(results, ["rss.tools0_mib"]):
        bullets.append(
            f"- **Memory**: an idle server takes {_span(ratios, lambda v: f'{v:.2f}')}{X} the better anchor's RSS."
        )
    clients = by_id["client"].keys()
    if ratios := _ratios(results, clients):
        bullets.append(
            f"- **Client**: `toolkit.Client` spends {_less(ratios)} less CPU per call than mcp's or fastmcp's."
        )
    mount = _toolkit(results, by_id["mount"].keys())
    if mount:
        bullets.append(
            f"- **Mount**: a mounted tool costs {_span(mount, lambda v: f'{v:.2f}')}{X} the same tool unmounted."
        )
    gateway = _toolkit(results, by_id["gateway"].keys())
    if gateway:
        line = f"- **Gateway**: toolkit's gateway spends {_span(gateway, lambda v: f'{v:.2f}')}{X} a direct call's CPU"
        if ratios := _ratios(results, [r.key for r in GATEWAY_CPU.rows if r.key.endswith("cpu_us")]):
            line += f", {_less(ratios)} less than fastmcp's gateway"
        bullets.append(line + ".")
    missed = _missed(results)
    if missed:
        bullets.append("- **Not there yet**, the targets this run missed:")
        bullets += [f"    - {line}" for line in missed]
    return "\n".join(bullets)


def _missed(results: dict[str, Any]) -> list[str]:
    out = []
    for metric in results["metrics"].values():
        if metric.get("target_met") is False:
            if metric.get("target_of") == "value":
                value = metric["median"]["toolkit"]
                out.append(
                    f"{metric['label']}: {number(value, metric['unit'])}, target ≤ {fraction(metric['target'])}{X}"
                )
            else:
                ratio, target = metric["ratio_toolkit_best_anchor"], fraction(metric["target"])
                out.append(f"{metric['label']}: {times(ratio)} of {metric['best_anchor']}'s, target ≤ {target}")
        if metric.get("node_target_met") is False:
            out.append(
                f"{metric['label']}: {times(metric['ratio_toolkit_best_node'])}{X} {metric['best_node']}'s, "
                f"target ≤ {fraction(metric['node_target'])}{X}"
            )
        if metric.get("floor_target_met") is False:
            out.append(
                f"{metric['label']}: {times(metric['ratio_toolkit_floor'])}{X} the floor's, "
                f"target ≤ {fraction(metric['floor_target'])}{X}"
            )
    return out


# --- the page's blocks ----------------------------------------------------------------------------------


def alt(results: dict[str, Any], section: Section) -> str:
    """A chart's figures in words, for its alt text: each column's, per row it shows (of the tail, the p99s)."""
    parts = []
    for row in section.rows:
        if section.kind == "tail" and not row.label.endswith(": p99"):
            continue
        if section.kind == "generic" and row.key not in section.charted:
            continue
        figures = [
            f"{fw} {number(value, unit_of(results, row, section))}"
            for fw in columns(results)
            if (value := figure(results, row.key, fw, row.stat)) is not None
        ]
        if figures:
            parts.append(f"{row.label}: {', '.join(figures)}")
    return f"{section.title}. " + "; ".join(parts) + "."


def chart_block(results: dict[str, Any], section: Section) -> str:
    light, dark = chart_files(section.id)
    text = alt(results, section).replace("[", "(").replace("]", ")")
    return f"![{text}]({ASSETS}/{light}#only-light)\n![{text}]({ASSETS}/{dark}#only-dark)"


def blocks(results: dict[str, Any], placed: Iterable[str]) -> dict[str, str]:
    """Every block the page may hold, by marker name; ``placed`` are the markers the page has, so that
    ``more`` holds the sections placed nowhere else."""
    found = {s.id: s for s in sections(results)}
    out = {"summary": run_line(results) + "\n\n" + summary(results)}
    charted = {s.id for s in found.values() if s.id != GATEWAY_CPU.id}
    for section in found.values():
        if section.id in charted:
            out[f"chart {section.id}"] = chart_block(results, section)
        out[f"table {section.id}"] = table(results, section)
    placed = set(placed)
    more = []
    for section in found.values():
        if f"chart {section.id}" in placed or f"table {section.id}" in placed:
            continue
        more += [f"### {section.title}", ""]
        if section.id in charted:
            more += [chart_block(results, section), ""]
        more += [table(results, section), ""]
    out["more"] = "\n".join(more).rstrip("\n")
    return out


def markers(page: str) -> list[str]:
    return [match["name"] for match in BLOCK.finditer(page)]


def fill(page: str, results: dict[str, Any]) -> str:
    """The page with every block between its markers rendered from ``results``. A marker the run has no
    figures for gets an empty block; an unknown marker is an error (a typo would otherwise stay empty)."""
    rendered = blocks(results, markers(page))
    known = {"summary", "more"} | {f"{kind} {s.id}" for s in (*SECTIONS, GATEWAY_CPU) for kind in ("chart", "table")}
    unknown = [name for name in markers(page) if name not in rendered and name not in known]
    if unknown:
        raise ValueError(
            f"unknown bench block(s) in the page: {', '.join(unknown)} (known: {', '.join(sorted(known))})"
        )

    def body(match: re.Match[str]) -> str:
        text = rendered.get(match["name"], "")
        return match.group(1) + "\n" + (text + "\n\n" if text else "") + match.group(4)

    return BLOCK.sub(body, page)
