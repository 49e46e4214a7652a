"""MCP Apps and URL-mode elicitation with real clients: `mcp` 2.3.0 and `@modelcontextprotocol/client` 2.4.0.

Each client's driver (interop/drivers/apps_and_url_mcp230.py, apps_and_url_ts2.mjs) runs in both of
its eras (mcp 2.3.0: mode "auto" negotiates 2026-07-28, "legacy" 2025-11-25; the TS client:
versionNegotiation "auto" -> 2026-07-28, its default -> 2025-11-25) over Streamable HTTP (a fresh
`toolkit run tests/support/apps_url_app.py:server` on a free 127.0.0.1 port, always stopped) and
over stdio (the driver spawns the server). The clients come from `scripts/interop --install-only`
(`.interop/py-mcp230`, `.interop/ts-client2`): skipped without them, failed under
TOOLKIT_TESTS_STRICT=1.

What each client really does, asserted (the same in both clients unless said):
* apps: the client declares `io.modelcontextprotocol/ui` through its generic capabilities
  (`advertise(...)` in mcp 2.3.0, `capabilities.extensions` in the TS client) and the server sees it
  (`renders_apps` is true); it reads the server's `capabilities.extensions` (initialize result or
  server/discover), the tool's `_meta.ui.resourceUri` and the `ui://` resource's mimeType and `_meta.ui`;
* URL elicitation (both clients declare `elicitation.url`): the handler receives `ctx.elicit_url`'s
  URL (with its `elicitationId` on 2025-11-25) and the tool gets "accept"; 2025-11-25 also delivers
  `notifications/elicitation/complete`. `URLElicitationRequired` is a -32042 error with the URLs on
  2025-11-25 (TS: a `UrlElicitationRequiredError`; mcp 2.3.0: a plain `MCPError`, its
  `UrlElicitationRequiredError` class is not used for responses) and the call succeeds once the page
  was opened; on 2026-07-28 the handler gets the URL inside the call and the retry succeeds. Over
  stdio no page exists: the user accepts but never opens it, so 2026-07-28 ends at the client's
  round cap (10) and 2025-11-25 answers -32042 every time.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from typing import Any

import pytest
from tests.support.processes import PYTHON, REPO, http_server

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX servers")

APP = "tests/support/apps_url_app.py:server"
UI = "io.modelcontextprotocol/ui"
MCP230 = REPO / ".interop/py-mcp230/bin/python"
TS2 = REPO / ".interop/ts-client2"
STATE = "link-7f3a"
MODERN, LEGACY = "2026-07-28", "2025-11-25"


def require(client: str) -> list[str]:
    """The driver's argv, or skip (fail under TOOLKIT_TESTS_STRICT=1) when the client is not installed."""
    if client == "mcp230":
        missing = None if MCP230.exists() else MCP230
        argv = [str(MCP230), str(REPO / "interop/drivers/apps_and_url_mcp230.py")]
    else:
        node = shutil.which("node")
        missing = None if node and (TS2 / "node_modules/@modelcontextprotocol/client").is_dir() else TS2
        # ESM resolves packages from the file's directory: the driver runs from the pinned install.
        target = TS2 / "apps_and_url_ts2.mjs"
        if missing is None:
            with tempfile.NamedTemporaryFile("wb", dir=TS2, suffix=".tmp", delete=False) as copy:
                copy.write((REPO / "interop/drivers/apps_and_url_ts2.mjs").read_bytes())
            os.replace(copy.name, target)
        argv = [str(node), str(target)]
    if missing is not None:
        what = f"{missing} is missing: scripts/interop --install-only installs it"
        if os.environ.get("TOOLKIT_TESTS_STRICT"):
            pytest.fail(what)
        pytest.skip(what)
    return argv


def drive(argv: list[str], *options: str) -> dict[str, Any]:
    """Run a driver to its end (its requests are bounded by --timeout); its JSON document."""
    proc = subprocess.run(
        [*argv, *options, "--timeout", "30"],
        cwd=REPO,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=100,  # a hang bound under pytest-timeout's 120 s (not a measurement): a run takes a few seconds
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    doc: dict[str, Any] = json.loads(proc.stdout)
    assert "fatal" not in doc, json.dumps(doc, indent=1)
    return doc


def run(client: str, mode: str, transport: str) -> dict[str, Any]:
    argv = require(client)
    if transport == "stdio":
        command = json.dumps([str(PYTHON), "-m", "toolkit", "run", APP])
        return drive(
            argv, "--mode", mode, "--transport", "stdio", "--command", command, "--cwd", str(REPO), "--visit", "no"
        )
    with http_server(APP) as server:  # a fresh one: the page's state is per process
        return drive(argv, "--mode", mode, "--transport", "http", "--url", server.url)


def text(call: dict[str, Any]) -> str:
    assert call["ok"] and not call["isError"], call
    [block] = call["content"]
    assert block["type"] == "text"
    return str(block["text"])


CASES = [
    pytest.param(client, mode, transport, id=f"{client}-{mode}-{transport}")
    for client in ("mcp230", "ts2")
    for mode in ("auto", "legacy")
    for transport in ("http", "stdio")
]


@pytest.mark.parametrize(("client", "mode", "transport"), CASES)
def test_real_client_sees_apps_and_answers_url_elicitation(client: str, mode: str, transport: str) -> None:
    doc = run(client, mode, transport)
    version = MODERN if mode == "auto" else LEGACY
    assert doc["protocol_version"] == version, doc
    assert doc["library_version"] == ("2.3.0" if client == "mcp230" else "2.4.0")

    # MCP Apps: the extension, the tool's _meta.ui, the ui:// resource, the client's declaration seen by the server
    assert doc["server_extensions"] == {UI: {}}
    assert doc["tools_meta"]["panel"] == {"ui": {"resourceUri": "ui://demo/panel"}}
    assert doc["tools_meta"]["connect"] is None
    resource = doc["resource"]
    assert resource["uri"] == "ui://demo/panel"
    assert resource["mimeType"] == "text/html;profile=mcp-app"
    assert resource["_meta"] == {"ui": {"csp": {"connectDomains": ["https://api.example.com"]}, "prefersBorder": True}}
    assert resource["text_length"] > 0
    assert text(doc["calls"]["panel"]) == "renders_apps=True"

    # URL elicitation through ctx.elicit_url: the handler got the URL, the tool got "accept"
    host = "127.0.0.1" if transport == "stdio" else doc["visited"][0]["url"].split("/")[2]
    url = f"http://{host}/link/{STATE}"
    assert text(doc["calls"]["connect"]) == "action=accept"
    asked = {"mode": "url", "message": "Link your demo account", "url": url}
    if version == LEGACY:
        asked["elicitationId"] = STATE  # 2026-07-28 has no elicitationId
    assert doc["elicitations"][-1] == asked
    completion = {"method": "notifications/elicitation/complete", "params": {"elicitationId": STATE}}
    assert doc["notifications"] == ([completion] if version == LEGACY else [])  # 2026-07-28 has no such notification

    # URLElicitationRequired
    first, again = doc["calls"]["linked"], doc["calls"]["linked (again)"]
    required = [e for e in doc["elicitations"] if e["message"] == "Link your demo account first"]
    if version == LEGACY:
        expected_error = {
            "type": "UrlElicitationRequiredError" if client == "ts2" else "MCPError",
            "message": "This request requires more information.",
            "code": -32042,
            "data": {
                "elicitations": [
                    {"mode": "url", "elicitationId": STATE, "url": url, "message": "Link your demo account first"}
                ]
            },
        }
        assert first == {"ok": False, "error": expected_error}
        assert required == []  # an error, not a question: the handler is not involved
        if transport == "http":  # the driver opened the URL the error named: the call goes through
            assert text(again) == "linked"
        else:  # no page over stdio: nothing changed
            assert again == first
    elif transport == "http":  # 2026-07-28: an input_required round inside the call; the handler opened the page
        assert text(first) == "linked" and text(again) == "linked"
        assert required == [{"mode": "url", "message": "Link your demo account first", "url": url}]
        assert doc["visited"][0] == {"url": url, "status": 200}
    else:  # never opened: the tool asks again each round until the client's cap (10 rounds in both)
        assert required == [{"mode": "url", "message": "Link your demo account first", "url": url}] * 20
        for call in (first, again):
            assert not call["ok"]
            if client == "mcp230":
                assert call["error"]["type"] == "InputRequiredRoundsExceededError", call
            else:
                assert call["error"]["code"] == "INPUT_REQUIRED_ROUNDS_EXCEEDED", call
                assert call["error"]["data"]["rounds"] == 10
