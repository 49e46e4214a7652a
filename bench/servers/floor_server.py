"""The frameworkless floor: ``get_items`` over Streamable HTTP with no MCP framework at all.

A bare ASGI callable under the same uvicorn as ``toolkit run`` (same defaults), doing the work any
server must do per call: read the body, parse the JSON-RPC request, serialize the ten items with a
pydantic ``TypeAdapter``, encode the response. It answers ``initialize`` (with an
``Mcp-Session-Id``), notifications (202), ``server/discover`` and ``tools/call`` of ``get_items``,
in the shape toolkit sends each era (the bare list for 2026-07-28, ``{"result": [...]}`` before).
Nothing else: no validation, no sessions kept, no routing beyond the method name.

    python bench/servers/floor_server.py --port 8123
"""

from __future__ import annotations

import argparse
import json
import secrets
import sys
from pathlib import Path
from typing import Any

import uvicorn
from pydantic import TypeAdapter

sys.path.insert(0, str(Path(__file__).resolve().parent))
import workloads

ITEMS = TypeAdapter(list[workloads.Item])
MODERN = "2026-07-28"


def answer(request: dict[str, Any]) -> tuple[dict[str, Any] | None, list[tuple[bytes, bytes]]]:
    """The response to one message (``None`` for a notification) and extra headers."""
    method = request.get("method")
    if "id" not in request:
        return None, []
    if method == "initialize":
        result = {
            "protocolVersion": request["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "floor", "version": "1.0.0"},
        }
        return {"jsonrpc": "2.0", "id": request["id"], "result": result}, [
            (b"mcp-session-id", secrets.token_urlsafe(16).encode())
        ]
    if method == "server/discover":
        result = {"supportedVersions": [MODERN], "capabilities": {"tools": {}}}
        return {"jsonrpc": "2.0", "id": request["id"], "result": result}, []
    items = ITEMS.dump_python(workloads.ITEMS, mode="json")
    modern = "_meta" in request.get("params", {})
    structured = items if modern else {"result": items}
    result = {"content": [{"type": "text", "text": json.dumps(items)}], "structuredContent": structured}
    return {"jsonrpc": "2.0", "id": request["id"], "result": result}, []


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    response, headers = answer(json.loads(body))
    if response is None:
        await send({"type": "http.response.start", "status": 202, "headers": [(b"content-length", b"0")]})
        await send({"type": "http.response.body", "body": b""})
        return
    payload = json.dumps(response).encode()
    headers += [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": payload})


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning", lifespan="on")
