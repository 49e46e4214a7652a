"""The ``openapi`` scenario's "direct" process: the API's ``list_items`` called with httpx, no framework.

What the generated tool does, at the least: per ``tools/call`` of ``list_items`` read from stdin,
``await client.get("/items", params={"limit": limit})`` on one shared ``httpx.AsyncClient``
(``base_url`` from ``--base-url``, httpx's defaults otherwise, opened once at start),
``raise_for_status()``, ``response.json()``, and the ``CallToolResult`` toolkit sends (a text block
with the JSON, ``structuredContent``: the bare array for 2026-07-28 with ``resultType`` and
``_meta``'s serverInfo, ``{"result": [...]}`` before), encoded with ``json.dumps`` and written as
one line. Nothing else: no validation of the arguments or of the answer against the document's
schemas, no sessions, no dispatch table, no logging (as ``floor_server.py``, whose message
handling it copies, with the tool call made over HTTP instead of in process).

stdio only (newline-delimited JSON-RPC): stdin is read by the event loop httpx runs in (a
``StreamReader`` on the pipe), answers are written to stdout and flushed. It answers
``initialize``, notifications (no output), ``server/discover`` and ``tools/call`` of
``list_items``; anything else gets -32601 / -32602.

    python bench/servers/openapi_direct.py --base-url http://127.0.0.1:8124
"""

import argparse
import asyncio
import json
import sys
from typing import Any

import httpx

PROTOCOL_VERSION_META = "io.modelcontextprotocol/protocolVersion"  # a 2026-07-28 request's _meta
MODERN = "2026-07-28"
SERVER_INFO = {"name": "openapi-direct", "version": "1.0.0"}
MODERN_META = {"io.modelcontextprotocol/serverInfo": SERVER_INFO}
COMPACT = (",", ":")
TOOL = "list_items"
CAPABILITIES: dict[str, Any] = {"tools": {}}

Message = dict[str, Any]


def error(request_id: Any, code: int, message: str) -> Message:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


async def answer(client: httpx.AsyncClient, request: Message) -> Message | None:
    """The response to one message, ``None`` for a notification."""
    if "id" not in request:
        return None
    method = request.get("method")
    params = request.get("params") or {}
    modern = PROTOCOL_VERSION_META in (params.get("_meta") or {})
    if method == "tools/call":
        if params.get("name") != TOOL:
            return error(request["id"], -32602, f"Unknown tool: {params.get('name')!r}")
        arguments = params.get("arguments") or {}
        response = await client.get("/items", params={"limit": arguments.get("limit", 10)})
        response.raise_for_status()
        value = response.json()
        result: Message = {
            "content": [{"type": "text", "text": json.dumps(value, separators=COMPACT)}],
            "structuredContent": value if modern else {"result": value},
        }
    elif method == "initialize":
        version = params.get("protocolVersion")
        result = {"protocolVersion": version, "capabilities": CAPABILITIES, "serverInfo": SERVER_INFO}
    elif method == "server/discover":
        result = {"supportedVersions": [MODERN], "capabilities": CAPABILITIES}
    else:
        return error(request["id"], -32601, f"Method not found: {method!r}")
    if modern:
        result["resultType"] = "complete"
        result["_meta"] = MODERN_META
    return {"jsonrpc": "2.0", "id": request["id"], "result": result}


async def serve(base_url: str) -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=64 * 1024 * 1024, loop=loop)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader, loop=loop), sys.stdin)
    stdout = sys.stdout.buffer
    async with httpx.AsyncClient(base_url=base_url) as client:
        while line := await reader.readline():
            if not line.strip():
                continue
            try:
                request = json.loads(line)
                response = await answer(client, request)
            except ValueError:
                response = error(None, -32700, "Parse error")
            except (AttributeError, TypeError, KeyError):
                response = error(None, -32600, "Invalid request")
            except httpx.HTTPError as exc:
                response = error(request.get("id"), -32603, f"GET /items: {exc}")
            if response is not None:
                stdout.write(json.dumps(response, separators=COMPACT).encode() + b"\n")
                stdout.flush()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-url", required=True, help="the API's base URL, e.g. http://127.0.0.1:8124")
    args = parser.parse_args()
    asyncio.run(serve(args.base_url))


if __name__ == "__main__":
    main()
