"""The frameworkless floor: ``get_items`` with no MCP framework at all, over stdio or Streamable HTTP.

The least work any correct Python MCP server must do per call, so that the benchmark can show how
far toolkit is from it (a lower bound, not a competitor). Per request, on both transports: parse
the JSON-RPC message (``json.loads``), call ``workloads.get_items``, dump its result with a
pydantic ``TypeAdapter(list[Item])`` built once (``dump_python(mode="json")``), build the
``CallToolResult`` toolkit sends (a text block with the JSON, ``structuredContent``: the bare list
for 2026-07-28 with ``resultType`` and ``_meta``'s serverInfo, ``{"result": [...]}`` before), encode
it (``json.dumps``) and write it. Nothing else: no validation of the request, no sessions kept, no
dispatch table (the method name is compared, in the order the calls come), no logging.

It answers ``initialize`` (over HTTP with an ``Mcp-Session-Id`` header, which it never checks),
notifications (HTTP 202; stdio: no output), ``server/discover`` and ``tools/call`` of ``get_items``;
``tools/call`` of another tool gets -32602, any other request -32601. The era of a request is
2026-07-28 when its ``params._meta`` carries ``io.modelcontextprotocol/protocolVersion``.

- ``--transport stdio``: a plain blocking loop, no asyncio: ``sys.stdin.buffer.readline()``, answer,
  write the line to ``sys.stdout.buffer`` and flush. ``get_items`` is ``async def`` and never
  awaits, so it is run by stepping its coroutine once (``coro.send(None)`` raises ``StopIteration``
  carrying the return value), with no event loop. This path imports only the standard library,
  pydantic and ``workloads``: spawn -> first response is a process that imports pydantic and
  answers the same message.
- ``--transport http``: a bare ASGI callable under the same uvicorn, with the same settings, as
  ``toolkit run`` (``log_level="warning"``, ``lifespan="on"``); uvicorn is imported only here.

    python bench/servers/floor_server.py --transport stdio
    python bench/servers/floor_server.py --transport http --port 8123

The transport defaults to ``BENCH_TRANSPORT``, else HTTP when ``--port`` is given (as
``scripts/loadtest --tail`` starts it), else stdio. ``--workload`` takes ``items`` or ``big`` (the
``big`` scenario: ``get_models_1mb`` and ``get_models_10mb`` instead of ``get_items``, each dumped
by a ``TypeAdapter(list[Model])`` built once, the same way).
"""

import argparse
import json
import os
import secrets
import sys
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

sys.path.insert(0, str(Path(__file__).resolve().parent))
import workloads

ITEMS = TypeAdapter(list[workloads.Item])  # built once, at start-up
# The served tools: name -> (function, the adapter that dumps its result); --workload big swaps them.
TOOLS: dict[str, tuple[Any, TypeAdapter[Any]]] = {"get_items": (workloads.get_items, ITEMS)}
PROTOCOL_VERSION_META = "io.modelcontextprotocol/protocolVersion"  # a 2026-07-28 request's _meta
MODERN = "2026-07-28"
SERVER_INFO = {"name": "floor", "version": "1.0.0"}
MODERN_META = {"io.modelcontextprotocol/serverInfo": SERVER_INFO}
COMPACT = (",", ":")  # toolkit's separators: the same bytes on the wire

Message = dict[str, Any]
CAPABILITIES: Message = {"tools": {}}


def call_tool(function: Any = workloads.get_items) -> Any:
    """``get_items()`` (or ``function()``), without an event loop: its coroutine never awaits, so one
    step runs it to its ``return`` (``StopIteration.value``)."""
    coro = function()
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value
    coro.close()
    raise RuntimeError("get_items suspended: the floor only runs coroutines that never await")


def error(request_id: Any, code: int, message: str) -> Message:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def answer(request: Message) -> Message | None:
    """The response to one message, ``None`` for a notification."""
    if "id" not in request:
        return None
    method = request.get("method")
    params = request.get("params") or {}
    modern = PROTOCOL_VERSION_META in (params.get("_meta") or {})
    if method == "tools/call":
        tool = TOOLS.get(params.get("name"))  # type: ignore[arg-type]
        if tool is None:
            return error(request["id"], -32602, f"Unknown tool: {params.get('name')!r}")
        function, adapter = tool
        value = adapter.dump_python(call_tool(function), mode="json")
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


def respond(body: bytes) -> tuple[Message | None, Any]:
    """``answer`` for raw bytes, and the request's method; malformed input gets -32700 (not JSON)
    or -32600 (not a request object)."""
    try:
        request = json.loads(body)
        return answer(request), request.get("method")
    except ValueError:
        return error(None, -32700, "Parse error"), None
    except (AttributeError, TypeError, KeyError):
        return error(None, -32600, "Invalid request"), None


def serve_stdio() -> None:
    """Newline-delimited JSON-RPC on stdin/stdout until stdin closes; blocking, one message at a time."""
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while line := stdin.readline():
        if not line.strip():
            continue
        response, _ = respond(line)
        if response is not None:
            stdout.write(json.dumps(response, separators=COMPACT).encode() + b"\n")
            stdout.flush()


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Streamable HTTP, POST only, every answer plain JSON (never SSE)."""
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    if scope["method"] != "POST":  # no GET stream, no DELETE of a session that is not kept
        await send({"type": "http.response.start", "status": 405, "headers": [(b"allow", b"POST")]})
        await send({"type": "http.response.body", "body": b""})
        return
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    response, method = respond(body)
    if response is None:
        await send({"type": "http.response.start", "status": 202, "headers": [(b"content-length", b"0")]})
        await send({"type": "http.response.body", "body": b""})
        return
    payload = json.dumps(response, separators=COMPACT).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    if method == "initialize" and "result" in response:  # a session id, never checked afterwards
        headers.append((b"mcp-session-id", secrets.token_urlsafe(16).encode()))
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": payload})


def main(argv: list[str]) -> None:
    env = os.environ
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workload", default=env.get("BENCH_WORKLOAD", "items"), help="items or big")
    parser.add_argument("--transport", choices=["stdio", "http"])
    parser.add_argument("--host", default=env.get("BENCH_HOST", "127.0.0.1"))
    parser.add_argument("--port", type=int)
    args = parser.parse_args(argv)
    if args.workload == "big":
        models: TypeAdapter[Any] = TypeAdapter(list[workloads.Model])
        TOOLS.clear()
        TOOLS.update((fn.__name__, (fn, models)) for fn in workloads.tools("big"))
    elif args.workload != "items":
        parser.error(f"the floor serves the items and big workloads only, not {args.workload!r}")
    transport = args.transport or env.get("BENCH_TRANSPORT") or ("http" if args.port else "stdio")
    if transport == "stdio":
        serve_stdio()
        return
    import uvicorn  # HTTP only: the stdio floor must not pay for its import

    port = args.port or int(env.get("BENCH_PORT", "8000"))
    # What toolkit's runner does too (toolkit._transports.base.settle_allocator): free one 1 MiB
    # block so glibc stops serving asyncio's 256 KiB read buffers with mmap/munmap, a cost of the
    # allocator's state at start-up, not of the work a server does per call.
    bytes(1 << 20)
    uvicorn.run(app, host=args.host, port=port, log_level="warning", lifespan="on")


if __name__ == "__main__":
    main(sys.argv[1:])
