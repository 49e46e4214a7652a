"""MCP Apps and URL-mode elicitation through the Python SDK `mcp==2.3.0` (run with .interop/py-mcp230/bin/python).

Against tests/support/apps_url_app.py (tests/test_apps_url_interop.py starts it). Only the public
`mcp.Client` API:

* apps: `Client(extensions=[advertise("io.modelcontextprotocol/ui", {"mimeTypes": [...]})])` (the
  SDK's generic client-side way to declare an extension: mcp 2.3.0 ships MCP Apps on the server
  side only, `mcp/server/apps.py`), `server_capabilities.extensions`, `list_tools()` (the `panel`
  tool's `_meta.ui`), `read_resource("ui://demo/panel")` (mimeType and `_meta.ui`), `call_tool("panel")`;
* URL elicitation: `elicitation_callback` (mcp 2.3.0 then declares `elicitation: {form: {}, url: {}}`
  by itself), `message_handler` (to see `notifications/elicitation/complete`); `call_tool("linked")`,
  which raises URLElicitationRequired until the URL was opened (twice: the second call shows
  what a retry after opening it gives), then `call_tool("connect")` (the server's `ctx.elicit_url`).
  The callback plays the user: it opens the URL (an HTTP GET) and accepts. When the library
  raises -32042 instead, the driver opens the URLs it carries and calls again, as a client is
  told to. `--visit no`: the user accepts but never opens the page (over stdio the server has
  no page).

--mode auto (the library default: server/discover, 2026-07-28 against toolkit) or legacy
(initialize offering 2025-11-25). --transport http --url URL, or stdio --command JSON_ARGV.
Writes one JSON document to --out (and stdout).
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
import urllib.request
from typing import Any

import anyio
from mcp import Client, MCPError
from mcp.client.extension import advertise
from mcp.client.stdio import StdioServerParameters

UI = "io.modelcontextprotocol/ui"
APP_MIME = "text/html;profile=mcp-app"


def jsonable(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump(by_alias=True, mode="json", exclude_none=True)
    return value


def error_of(e: BaseException) -> dict[str, Any]:
    out: dict[str, Any] = {"type": type(e).__name__, "message": str(e)}
    if isinstance(e, MCPError):
        out["code"] = e.code
        out["data"] = jsonable(e.data)
    return out


def visit(url: str, doc: dict[str, Any]) -> None:
    """The user opens the URL (in a browser; here a GET); with --visit no they never do."""
    if not doc["visit"]:
        doc["visited"].append({"url": url, "skipped": True})
        return
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            doc["visited"].append({"url": url, "status": response.status})
    except Exception as e:
        doc["visited"].append({"url": url, "error": f"{type(e).__name__}: {e}"})


async def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--mode", choices=["auto", "legacy"], default="auto")
    p.add_argument("--transport", choices=["stdio", "http"], required=True)
    p.add_argument("--url")
    p.add_argument("--command", help="JSON argv of the server (stdio)")
    p.add_argument("--cwd")
    p.add_argument("--timeout", type=float, default=20.0)
    p.add_argument(
        "--visit", choices=["yes", "no"], default="yes", help="no: the user never opens the URL (stdio: no page)"
    )
    p.add_argument("--out")
    a = p.parse_args()
    from importlib.metadata import version

    doc: dict[str, Any] = {
        "library": "mcp",
        "library_version": version("mcp"),
        "mode": a.mode,
        "transport": a.transport,
        "elicitations": [],
        "notifications": [],
        "visit": a.visit == "yes",
        "visited": [],
    }

    async def on_elicit(context: Any, params: Any) -> Any:
        from mcp_types import ElicitResult

        seen = jsonable(params)
        doc["elicitations"].append(seen)
        if seen.get("mode") == "url":
            visit(seen["url"], doc)
            return ElicitResult(action="accept")
        return ElicitResult(action="decline")

    async def on_message(message: Any) -> None:
        if isinstance(message, Exception):
            return
        doc["notifications"].append(jsonable(message))

    if a.transport == "stdio":
        argv = json.loads(a.command)
        target: Any = StdioServerParameters(command=argv[0], args=argv[1:], cwd=a.cwd)
    else:
        target = a.url
    client = Client(
        target,
        mode=a.mode,
        read_timeout_seconds=a.timeout,
        elicitation_callback=on_elicit,
        message_handler=on_message,
        extensions=[advertise(UI, {"mimeTypes": [APP_MIME]})],
    )
    try:
        async with client:
            doc["protocol_version"] = client.protocol_version
            caps = client.server_capabilities
            doc["server_extensions"] = jsonable(getattr(caps, "extensions", None))
            with anyio.fail_after(a.timeout):
                listed = await client.list_tools()
            doc["tools_meta"] = {t.name: jsonable(t.meta) for t in listed.tools}
            try:
                with anyio.fail_after(a.timeout):
                    read = await client.read_resource("ui://demo/panel")
                first = read.contents[0]
                doc["resource"] = {
                    "uri": str(first.uri),
                    "mimeType": first.mime_type,
                    "_meta": jsonable(first.meta),
                    "text_length": len(getattr(first, "text", "") or ""),
                }
            except Exception as e:
                doc["resource"] = {"error": error_of(e)}
            calls: dict[str, Any] = {}
            doc["calls"] = calls
            for name in ("panel", "linked", "linked (again)", "connect"):
                tool = name.split(" ")[0]
                try:
                    with anyio.fail_after(a.timeout * 2):
                        r = await client.call_tool(tool, {})
                    calls[name] = {"ok": True, "isError": bool(r.is_error), "content": [jsonable(c) for c in r.content]}
                except Exception as e:
                    calls[name] = {"ok": False, "error": error_of(e)}
                    if isinstance(e, MCPError) and e.code == -32042:
                        for item in (e.data or {}).get("elicitations", []):  # the client is told to open these
                            visit(item["url"], doc)
    except BaseException as e:
        doc["fatal"] = error_of(e)
        doc["traceback"] = traceback.format_exc()[-3000:]
    text = json.dumps(doc, indent=1, default=repr)
    if a.out:
        with open(a.out, "w", encoding="utf-8") as f:
            f.write(text)
    sys.stdout.write(text + "\n")


if __name__ == "__main__":
    anyio.run(main)
