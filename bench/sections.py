"""The benchmark's results cut into sections: what the performance page and its charts show.

A run's results (``bench/results/latest.json``, or the published ``docs/assets/bench/results.json``)
are cut into **sections**, each one chart (``bench/charts.py``) and one table (``bench/page.py``):
the server's CPU per call, latency and its tail, start-up and memory, the clients, mounting, the
gateway, authenticated calls, middleware, and one section per other group of metrics in the run
(``store``, ``scaleout``, ``tasks``, ... and whichever groups later scenarios add), found by the
first part of their keys. A section whose metrics the run lacks is left out; the columns are
whichever frameworks the run has (the floor, a ``--baseline`` column, a future one), in the run's
order. Standard library only: the driver's ``.venv`` reads it as well as the charts' venv.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

ERAS = ("legacy", "modern")
CALL_MODES = {"stdio": "stdio", "http_seq": "HTTP, one client", "http_c16": "HTTP, 16 clients"}
UPSTREAMS = {"http": "HTTP upstream", "stdio": "stdio upstream"}  # a gateway's
ANCHORS = ("mcp", "fastmcp")
FLOOR = "floor"
X = "\N{MULTIPLICATION SIGN}"  # as in 1.07 times (ruff takes the literal sign for a mistyped x)


@dataclass(frozen=True)
class Row:
    """One row of a section: a metric (its key) under a short label; ``stat`` picks a figure other than
    the median (``max``: the slowest single call of any round, from the p50 metric's latencies)."""

    label: str
    key: str
    stat: str = "median"


@dataclass(frozen=True)
class Column:
    """A column of a grid: toolkit's figure of ``key`` (``{row}`` filled with the row's part), and
    beside it the ratio ``ratio`` names, when there is one (the cost against the first column)."""

    label: str
    key: str
    ratio: str = ""


@dataclass(frozen=True)
class Grid:
    """toolkit's own figures in a grid, for the groups only toolkit runs (auth, middleware): a row per
    transport and era, a column per variant."""

    rows: tuple[tuple[str, str], ...]  # (label, the part of the keys it fills in)
    columns: tuple[Column, ...]

    def key(self, row: str, column: Column) -> str:
        return column.key.format(row=row)

    def ratio(self, row: str, column: Column) -> str:
        return column.ratio.format(row=row) if column.ratio else ""


@dataclass(frozen=True)
class Section:
    """A chart and a table of related metrics."""

    id: str
    title: str  # the chart's title, and the heading in the ``more`` block
    rows: tuple[Row, ...]
    unit: str  # what the rows' figures are in (every row of a section shares it, but the latency table)
    note: str = ""  # said under the table
    panels: tuple[str, ...] = ()  # the chart's panels: rows whose label ends with ", <panel>" go there
    ratio: bool = True  # the table's toolkit ÷ best anchor and ÷ floor columns
    kind: str = "bars"  # how charts.py draws it: bars, tail, ratios
    targets: dict[str, float] = field(default_factory=dict)  # ratios charts: a target line per framework
    charted: tuple[str, ...] = ()  # a generic section: the keys its chart shows (the table shows every row)
    grid: Grid | None = None  # a grid section (kind "grid"): its rows are the grid's cells
    needs: str = ""  # shown only when a row whose key starts so has a figure (a grid borrows other groups' keys)

    def keys(self) -> list[str]:
        return [row.key for row in self.rows]

    def __post_init__(self) -> None:
        if self.grid is not None and not self.rows:  # a grid's cells are its rows, for what reads rows
            cells = tuple(
                Row(f"{label}: {column.label}", self.grid.key(part, column))
                for label, part in self.grid.rows
                for column in self.grid.columns
            )
            object.__setattr__(self, "rows", cells)


def _era_rows(key: str, places: dict[str, str], stat: str = "median") -> tuple[Row, ...]:
    """A row per place (a transport, an upstream) and era: ``key`` with ``{place}`` and ``{era}`` filled in."""
    return tuple(
        Row(f"{label}, {era}", key.format(place=place, era=era), stat)
        for place, label in places.items()
        for era in ERAS
    )


SECTIONS: tuple[Section, ...] = (
    Section(
        "cpu",
        "Server CPU per tools/call (µs, lower is better)",
        _era_rows("call.{place}.{era}.cpu_us", CALL_MODES),
        "µs",
        note="get_items: one tool returning ten small pydantic models. Targets: toolkit ÷ the better anchor ≤ 1/4 "
        "over stdio, ≤ 1/3 over HTTP; toolkit ÷ the floor ≤ 2 over stdio, ≤ 1.3 over HTTP.",
        panels=ERAS,
    ),
    Section(
        "tail",
        "Latency of a tools/call: p50, p99 and the slowest call (µs)",
        tuple(
            row
            for mode, label in CALL_MODES.items()
            for era in ERAS
            for row in (
                Row(f"{label}, {era}: p50", f"call.{mode}.{era}.p50_us"),
                Row(f"{label}, {era}: p99", f"call.{mode}.{era}.p99_us"),
                Row(f"{label}, {era}: slowest", f"call.{mode}.{era}.p50_us", "max"),
                Row(f"{label}, {era}: calls/s", f"call.{mode}.{era}.calls_per_s"),
            )
        ),
        "µs",
        note="p50 and p99: medians over the rounds of each batch's percentile. Slowest: the one slowest call of all "
        "the rounds' batches. Calls/s: one sequential client (16 over HTTP, 16 clients); latency and calls/s move "
        "with whatever else runs on the machine, more than CPU per call does.",
        kind="tail",
        panels=ERAS,
    ),
    Section(
        "startup",
        "Start-up (ms, lower is better)",
        (
            Row("import", "import_ms"),
            Row("spawn → initialize answered", "spawn.legacy.first_response_ms"),
            Row("spawn → server/discover answered", "spawn.modern.first_response_ms"),
            Row("register 500 tools", "register500_ms"),
            Row("spawn → tools/list of 500 tools", "list500.legacy.spawn_ms"),
            Row("tools/list of 500 tools, steady", "list500.legacy.steady_ms"),
        ),
        "ms",
        note="import: `from toolkit import Server` (or the framework's own) in a fresh interpreter; spawn: a stdio "
        "server process started until its first answer. Targets: toolkit ÷ the better anchor ≤ 1/3 for the first "
        "answer, ≤ 1/4 to register 500 tools and to their first tools/list, ≤ 1/25 for a steady tools/list; "
        "toolkit ÷ the floor ≤ 1.25 for the first answer.",
    ),
    Section(
        "memory",
        "Idle memory, RSS (MiB, lower is better)",
        (Row("0 tools", "rss.tools0_mib"), Row("500 tools", "rss.tools500_mib")),
        "MiB",
        note="Resident memory of a stdio server after start, the handshake and one tools/list. Target: toolkit ÷ the "
        "better anchor ≤ 2/3 with 0 tools.",
    ),
    Section(
        "client",
        "Client CPU per tools/call (µs, lower is better)",
        _era_rows("client.{place}.{era}.cpu_us", {"stdio": "stdio", "http": "HTTP"}),
        "µs",
        note="The clients against one and the same toolkit server: toolkit.Client, mcp's Client, fastmcp's Client, "
        "each in its own process; CPU of the client process per call (lowest of 5 batches, median of the rounds). "
        "Target: toolkit ÷ the better anchor ≤ 3/10.",
        panels=ERAS,
    ),
    Section(
        "mount",
        "A mounted tool: server CPU per call ÷ the same tool on the server itself",
        _era_rows("compose.mount.{place}.{era}.cpu_ratio", {"stdio": "stdio", "http_seq": "HTTP"}),
        "x",
        note="A tool in a child server mounted under a namespace (toolkit's `Server.mount`, fastmcp's `mount`), "
        "against the same tool on the server itself, each framework's own; medians of the per-round ratios. "
        "Target: toolkit's ratio ≤ 1.1.",
        ratio=False,
        kind="ratios",
        targets={"toolkit": 1.1},
    ),
    Section(
        "gateway",
        "A gateway: its process's CPU per call ÷ a direct call's server CPU",
        _era_rows("compose.gateway.{place}.{era}.cpu_ratio", UPSTREAMS),
        "x",
        note="A gateway served over HTTP (toolkit's `Server.proxy`, fastmcp's `create_proxy`) in front of toolkit's "
        "bench server, reached over HTTP or started over stdio; the gateway process's own CPU per call over the "
        "upstream's CPU per call when called directly, medians of the per-round ratios. Target: toolkit's ratio ≤ 1.5.",
        ratio=False,
        kind="ratios",
        targets={"toolkit": 1.5},
    ),
    Section(
        "auth",
        "Authenticated calls: server CPU per call (µs, HTTP, one client)",
        (),
        "µs",
        note="A bearer token on every call, checked by `JWTVerifier` (RS256, its key set fetched once): the same "
        "token on every call, as clients send it, or a token the server has never seen on every call (each one "
        "parsed and its signature checked). In brackets: ÷ the call without auth, same round. Target: ≤ 1.25.",
        kind="grid",
        needs="auth.",
        grid=Grid(
            (("legacy", "legacy"), ("modern", "modern")),
            (
                Column("no auth", "call.http_seq.{row}.cpu_us"),
                Column("same token", "auth.http_seq.{row}.same.cpu_us", "auth.http_seq.{row}.same.cpu_ratio"),
                Column(
                    "new token each call", "auth.http_seq.{row}.fresh.cpu_us", "auth.http_seq.{row}.fresh.cpu_ratio"
                ),
            ),
        ),
    ),
    Section(
        "middleware",
        "Middleware and tracing: server CPU per call (µs)",
        (),
        "µs",
        note="The same server with no middleware, one pass-through middleware (`on_request` and `on_call_tool` "
        "that only call `call_next`), `RequestLogging` (a record per request to a `NullHandler`), or no middleware "
        "but the OpenTelemetry SDK configured (in-memory exporter and reader: four spans and a histogram record "
        "per call). In brackets: ÷ no middleware, same round.",
        kind="grid",
        needs="middleware.",
        grid=Grid(
            tuple(
                (f"{label}, {era}", f"{mode}.{era}")
                for mode, label in (("stdio", "stdio"), ("http_seq", "HTTP"))
                for era in ERAS
            ),
            tuple(
                Column(
                    label,
                    f"middleware.{{row}}.{variant}.cpu_us",
                    f"middleware.{{row}}.{variant}.cpu_ratio" * (variant != "none"),
                )
                for variant, label in (
                    ("none", "none"),
                    ("passthrough", "pass-through"),
                    ("logging", "RequestLogging"),
                    ("otel", "OpenTelemetry SDK"),
                )
            ),
        ),
    ),
)
GATEWAY_CPU = Section(  # the gateway's figures beside its ratios: a second table, no chart
    "gateway-cpu",
    "A gateway's CPU per call and the latency it adds",
    tuple(
        row
        for upstream, label in UPSTREAMS.items()
        for era in ERAS
        for row in (
            Row(f"{label}, {era}: gateway CPU (µs)", f"compose.gateway.{upstream}.{era}.cpu_us"),
            Row(f"{label}, {era}: p50 added (µs)", f"compose.gateway.{upstream}.{era}.added_p50_us"),
        )
    ),
    "µs",
    note="Target: toolkit's gateway CPU per call ≤ 3/10 of fastmcp's. p50 added: the median latency through the "
    "gateway minus the direct call's, same round.",
)
GROUP_TITLES = {  # the first part of a metric key, as a heading
    "auth": "Authenticated calls",
    "middleware": "Middleware and tracing",
    "store": "The Redis store",
    "scaleout": "Scale-out",
    "tasks": "Tasks",
    "openapi": "OpenAPI",
    "depends": "Dependencies (Depends)",
    "scale": "Many sessions and streams",
    "big": "Big results",
    "hop": "The plain def tool's worker thread",
    "authserver": "The authorization server (OAuthProxy)",
}
# The groups the dedicated sections cover, wholly or in the part worth a chart: never a generic section.
COVERED = (
    "call",
    "list500",
    "register500_ms",
    "spawn",
    "rss",
    "import_ms",
    "client",
    "compose",
    "auth",
    "middleware",
)


# --- reading a run ------------------------------------------------------------------------------


def columns(results: dict[str, Any]) -> list[str]:
    """The run's frameworks that ran, in its order (toolkit, a baseline, the anchors, the floor, ...)."""
    return [name for name, info in results["frameworks"].items() if info.get("available")]


def figure(results: dict[str, Any], key: str, framework: str, stat: str = "median") -> float | None:
    """A framework's figure for a metric: its median over the rounds, or (``max``) the slowest single
    call of any round, read from the p50 metric's latencies (a list per round, or the published
    ``{"count", "max"}``)."""
    metric = results["metrics"].get(key)
    if metric is None:
        return None
    if stat == "median":
        value = metric["median"].get(framework)
        return float(value) if isinstance(value, int | float) else None
    cell = metric["frameworks"].get(framework) or {}
    if cell.get("errors") or cell.get("unsupported"):
        return None
    highs = [max(raw) if isinstance(raw, list) else raw.get("max") for raw in cell.get("raw", []) if raw]
    highs = [float(value) for value in highs if isinstance(value, int | float)]
    return max(highs) if highs else None


def state(results: dict[str, Any], key: str, framework: str) -> str:
    """Why a framework has no figure: ``n/a`` (unsupported), ``error``, or ``-`` (not measured)."""
    cell = results["metrics"].get(key, {}).get("frameworks", {}).get(framework) or {}
    if cell.get("errors"):
        return "error"
    return "n/a" if cell.get("unsupported") else "-"


def sections(results: dict[str, Any]) -> list[Section]:
    """The sections this run has figures for: the dedicated ones, then one per other group of metrics."""
    found = [
        s
        for s in (*SECTIONS, GATEWAY_CPU)
        if any(
            # a grid draws toolkit's figures only: without them (a run of other columns) it has nothing to draw
            figure(results, row.key, "toolkit") is not None if s.grid is not None else has_figure(results, row.key)
            for row in s.rows
            if row.key.startswith(s.needs)
        )
    ]
    groups: dict[str, list[str]] = {}
    for key in results["metrics"]:
        group = key.split(".")[0]
        if group not in COVERED and has_figure(results, key):
            groups.setdefault(group, []).append(key)
    for group, keys in groups.items():
        found.append(_generic(results, group, keys))
    return found


def has_figure(results: dict[str, Any], key: str) -> bool:
    return any(figure(results, key, fw) is not None for fw in columns(results))


def _generic(results: dict[str, Any], group: str, keys: list[str]) -> Section:
    """A group no dedicated section knows: its per-call CPU figures as the chart (or, without any, the
    figures of its first metric's unit), every metric of it but the latencies in the table."""
    metrics = results["metrics"]
    cpu = [key for key in keys if key.endswith("cpu_us")]
    unit = "µs" if cpu else metrics[keys[0]]["unit"]
    charted = cpu or [key for key in keys if metrics[key]["unit"] == unit]
    title = GROUP_TITLES.get(group, group.replace("_", " ").capitalize())
    what = "server CPU per call" if cpu else metrics[charted[0]]["label"]
    rows = tuple(
        Row(
            _short(metrics[key]["label"])
            + ("" if metrics[key]["unit"] in (unit, "x") else f", {metrics[key]['unit']}"),
            key,
        )
        for key in keys
        if not key.endswith("p50_us")  # the latencies: the scenario's own note says what they mean
    )
    return Section(group, f"{title}: {what} ({unit})", rows, unit, ratio=False, kind="generic", charted=tuple(charted))


def _short(label: str) -> str:
    return label.replace("get_items ", "").replace("server CPU/call", "CPU/call")


# --- formatting -----------------------------------------------------------------------------------


def number(value: float, unit: str) -> str:
    """A figure as the page shows it: µs and 1/s to the unit, ratios to 2-3 digits, ms and MiB to 0.1."""
    if unit in ("µs", "1/s", "%"):
        return f"{value:,.0f}"
    if unit == "x":
        return f"{value:.2f}{X}" if value < 10 else f"{value:,.0f}{X}"
    if unit == "req":
        return f"{value:.2f}"
    return f"{value:,.1f}" if value < 100 else f"{value:,.0f}"


def times(ratio: float) -> str:
    """toolkit ÷ another: ``1/11.6`` below a half (so many times less), ``0.87`` or ``1.34`` around 1."""
    if ratio < 0.5:
        return f"1/{1 / ratio:.1f}"
    return f"{ratio:.2f}"


def fraction(text: str | None) -> str:
    """A target against an anchor, as a fraction (``1/4``); one on toolkit's own ratio, as a factor (``1.25``)."""
    if not text:
        return ""
    value = Fraction(text)
    return f"{value.numerator}/{value.denominator}" if value < 1 else f"{float(value):g}"


VERDICT = {True: " ✓", False: " ✗", None: ""}


def unit_of(results: dict[str, Any], row: Row, section: Section) -> str:
    metric = results["metrics"].get(row.key)
    return str(metric["unit"]) if metric is not None else section.unit


def grid_ratio(results: dict[str, Any], grid: Grid, part: str, column: Column) -> float | None:
    """The ratio shown beside a grid's cell, if it has one."""
    key = grid.ratio(part, column)
    return figure(results, key, "toolkit") if key else None


def chart_files(section_id: str) -> tuple[str, str]:
    """A section's two SVGs, for light and dark pages."""
    return f"{section_id}-light.svg", f"{section_id}-dark.svg"
