"""An MCP App that exercises its host (``toolkit run tests/support/apps_host_app.py --docs``).

``host_probe`` shows ``ui://host/probe`` (it asks for the camera and clipboard-write), whose
script, written without any library, runs the host side of the protocol through: it records the
host context (and any change of it), asks the host to open links (``javascript:``, ``data:``, and
the ``link`` argument when given), sends a ``ui/message`` and a ``ui/update-model-context`` whose
text holds markup, reads a ``ui://`` resource and a ``note://`` one, then writes what happened into
``<pre id="out">`` as JSON. On ``ui/resource-teardown`` it calls ``note`` (an app-only tool) with
the reason before it answers, so that ``notes`` shows the host asked and waited. ``plain`` shows
an app that asks for no permission; ``measure``, the probe with a result holding ``100.0``.
"""

from __future__ import annotations

from toolkit import App, Server

PROBE = """<!doctype html><meta charset="utf-8"><pre id="out">running</pre>
<script>
const out = { contexts: [] };
const show = () => { document.getElementById("out").textContent = JSON.stringify(out); };
let next = 1;
const pending = {};
const post = (message) => parent.postMessage({ jsonrpc: "2.0", ...message }, "*");
const ask = (method, params) => new Promise((resolve) => {
  const id = next++; pending[id] = resolve; post({ id, method, params });
});
const outcome = (answer) => (answer.error ? "refused " + answer.error.code : "answered");
addEventListener("message", async (e) => {
  const m = e.data;
  if (e.source !== parent || !m || m.jsonrpc !== "2.0") return;
  if (m.method === undefined && pending[m.id]) return pending[m.id](m);
  if (m.method === "ui/notifications/tool-input") { out.input = m.params.arguments; run(m.params.arguments); }
  if (m.method === "ui/notifications/tool-result") { out.result = m.params; show(); }
  if (m.method === "ui/notifications/host-context-changed") { out.contexts.push(m.params); show(); }
  if (m.method === "ui/resource-teardown") {
    await ask("tools/call", { name: "note", arguments: { text: "torn down: " + m.params.reason } });
    post({ id: m.id, result: {} });
  }
});
async function run(args) {
  out.javascriptLink = outcome(await ask("ui/open-link", { url: "javascript:alert(1)" }));
  out.dataLink = outcome(await ask("ui/open-link", { url: "data:text/html,<b>hi</b>" }));
  if (args.link) out.httpLink = outcome(await ask("ui/open-link", { url: args.link }));
  const text = "<script>window.pwned = 1<\\/script><b>bold</b>";
  out.message = outcome(await ask("ui/message", { role: "user", content: [{ type: "text", text }] }));
  const context = { content: [{ type: "text", text: "<img src=x onerror=pwned=1>" }], structuredContent: { days: 3 } };
  out.context = outcome(await ask("ui/update-model-context", context));
  const plain = await ask("resources/read", { uri: "ui://host/plain" });
  out.readUi = plain.result ? plain.result.contents[0].uri : "refused " + plain.error.code;
  out.readNote = outcome(await ask("resources/read", { uri: "note://secret" }));
  out.unknown = outcome(await ask("ui/no-such-method", {}));
  out.done = true;
  show();
}
(async () => {
  const appInfo = { name: "host-probe", version: "1" };
  const init = await ask("ui/initialize", { appInfo, appCapabilities: {}, protocolVersion: "2026-01-26" });
  out.hostContext = init.result.hostContext;
  out.hostCapabilities = init.result.hostCapabilities;
  post({ method: "ui/notifications/initialized", params: {} });
  show();
})();
</script>"""

PLAIN = """<!doctype html><meta charset="utf-8"><p id="plain">plain</p>"""

probe_app = App("ui://host/probe", html=PROBE, permissions=["camera", "clipboardWrite"])
plain_app = App("ui://host/plain", html=PLAIN)
server = Server("apps-host")
notes_taken: list[str] = []


@server.tool(app=probe_app)
def host_probe(link: str = "") -> str:
    """Show the app that exercises its host; it asks the host to open ``link`` when given."""
    return "probing the host"


@server.tool(app=probe_app)
def measure() -> dict[str, float]:
    """A result whose number is written 100.0: the page keeps such text, yet must post the app a value."""
    return {"celsius": 100.0}


@server.tool(app=plain_app)
def plain() -> str:
    """Show an app that asks for no permission; ``measure``, the probe with a result holding ``100.0``."""
    return "plain"


@server.tool(app=probe_app.visible_to("app"))
def note(text: str) -> str:
    """Record what the app says (the app calls it as it is torn down)."""
    notes_taken.append(text)
    return "noted"


@server.tool()
def notes() -> str:
    """What the app recorded, one line each."""
    return "\n".join(notes_taken) or "(nothing)"


@server.resource("note://secret")
def secret() -> str:
    """Not a ui:// resource: the tools page does not let an app read it."""
    return "the secret"
