"""An MCP App: a forecast chart whose buttons call a tool, with a text answer for other clients.

    scripts/apps --install-only                              # the app-side library, pinned (npm)
    toolkit dev examples/apps_forecast.py                    # the tools page renders the app

``forecast`` shows the app ``ui://forecast/chart`` (``_meta.ui.resourceUri``); a host that
renders MCP Apps fetches it, shows it in a sandboxed iframe and hands it the tool's result.
The chart's buttons call ``forecast_days``, a tool only the app calls (``visible_to("app")``:
hosts keep it from their model). A client that does not render apps gets a text answer.

The app's HTML bundles ``@modelcontextprotocol/ext-apps`` the way real apps do: its browser
build is inlined into the page when the resource is read, from the copy ``scripts/apps``
installed (``TOOLKIT_EXT_APPS`` names another file). See docs/apps.md.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from toolkit import App, Context, Server, ToolResult, renders_apps

BUNDLE = Path(
    os.environ.get("TOOLKIT_EXT_APPS")
    or Path(__file__).resolve().parent.parent
    / ".interop/apps/node_modules/@modelcontextprotocol/ext-apps/dist/src/app-with-deps.js"
)

APP_SCRIPT = """
const { App } = ExtApps;
const app = new App({ name: "forecast-chart", version: "1.0.0" });
const bars = document.getElementById("bars");
const title = document.getElementById("title");
function draw(result) {
  const data = result && result.structuredContent;
  if (!data) return;
  title.textContent = `${data.city}: ${data.days.length} days`;
  bars.replaceChildren(...data.days.map((day) => {
    const bar = document.createElement("li");
    bar.style.height = `${4 * (day.high + 10)}px`;
    bar.title = `${day.day}: ${day.high} °C`;
    bar.textContent = String(day.high);
    return bar;
  }));
  document.body.dataset.days = String(data.days.length);
}
app.ontoolresult = draw;
try {
  await app.connect();
} catch (error) {
  title.textContent = `Could not connect to the host: ${error.message}`;
  throw error;
}
for (const button of document.querySelectorAll("button[data-days]")) {
  button.addEventListener("click", async () => {
    const city = (title.textContent.split(":")[0] || "Paris");
    draw(await app.callServerTool({ name: "forecast_days", arguments: { city, days: Number(button.dataset.days) } }));
  });
}
document.body.dataset.connected = "true";
"""

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Forecast</title>
<style>
body { font: 14px system-ui, sans-serif; margin: 12px; }
#bars { display: flex; align-items: flex-end; gap: 6px; list-style: none; padding: 0; min-height: 120px; }
#bars li { width: 28px; background: #3b82f6; color: white; text-align: center; font-size: 11px; }
</style></head>
<body>
<h2 id="title">Forecast</h2>
<ol id="bars"></ol>
<button type="button" data-days="3">3 days</button>
<button type="button" data-days="7">7 days</button>
<script type="module">
__LIBRARY__
__APP__
</script>
</body></html>
"""


def library() -> str:
    """The ext-apps browser build as a module's body: its ``export{a as B,...}`` becomes ``const ExtApps``."""
    if not BUNDLE.is_file():
        raise FileNotFoundError(
            f"the MCP Apps library is not at {BUNDLE}: run scripts/apps --install-only "
            "(or set TOOLKIT_EXT_APPS to its dist/src/app-with-deps.js)"
        )
    code = BUNDLE.read_text(encoding="utf-8")
    start = code.rindex("export{")
    names = code[start + len("export{") : code.index("}", start)]
    pairs = [re.split(r"\s+as\s+", name.strip()) for name in names.split(",") if name.strip()]
    table = ",".join(f"{pair[-1]}:{pair[0]}" for pair in pairs)
    return code[:start] + f"const ExtApps={{{table}}};" + code[code.index("}", start) + 1 :]


def render() -> str:
    return PAGE.replace("__LIBRARY__", library()).replace("__APP__", APP_SCRIPT)


chart = App("ui://forecast/chart", render=render, title="Forecast chart", prefers_border=True)
server = Server("apps-forecast")


def days_for(city: str, days: int) -> dict[str, object]:
    """A made-up forecast: the same city always gets the same days."""
    seed = sum(map(ord, city))
    names = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    return {"city": city, "days": [{"day": names[i % 7], "high": (seed * (i + 3)) % 25} for i in range(days)]}


@server.tool(app=chart)
def forecast(city: str, ctx: Context) -> ToolResult:
    """The forecast for a city, as a chart where the client renders apps, else as text."""
    data = days_for(city, 3)
    text = ", ".join(f"{d['day']} {d['high']} °C" for d in data["days"])  # type: ignore[attr-defined]
    if not renders_apps(ctx):
        return ToolResult(content=f"{city}: {text}")
    return ToolResult(content=f"{city}: {text} (shown as a chart)", structured_content=data)


@server.tool(app=chart.visible_to("app"))
def forecast_days(city: str, days: int) -> ToolResult:
    """The chart's buttons: a forecast over ``days`` days (called by the app, never by the model)."""
    data = days_for(city, max(1, min(days, 7)))
    return ToolResult(content=f"{city}: {len(data['days'])} days", structured_content=data)  # type: ignore[arg-type]


@server.tool(app=chart.visible_to("model"))
def delete_forecasts() -> str:
    """Delete every stored forecast: for the model only (a host refuses it to the app)."""
    return "deleted"


if __name__ == "__main__":
    server.run()
