"""An upstream over stdio written without any MCP library, so that it can break the protocol.

    python raw_stdio.py MODE

It speaks 2025-06-18 (``server/discover`` is refused as unknown, so a client falls back to
``initialize``) and offers two tools: ``wait``, never answered, and ``echo``, whose answer
depends on ``MODE``:

- ``garbage``: before each answer, lines no client can use: not JSON, invalid UTF-8, JSON that
  is not an object, objects that are not JSON-RPC, a response to an id never sent, a progress
  notification without numbers, a request of a method nobody knows (the client's answer is recorded
  as ``answer-raw-1``); then the right answer.
- ``bad-result``: answers ``tools/call`` with a ``result`` that is not a ``CallToolResult``.
- ``flood``: from ``initialized`` on, writes ``notifications/message`` without end, as fast as
  the pipe takes them (``flooded`` holds how many so far, every 10,000); calls are answered.
- ``silent``: never answers ``tools/call``.
- ``list-fails-once``: answers its first ``tools/list`` with an error, the later ones as usual.

In every mode a ``notifications/cancelled`` is recorded as ``cancelled-ID``.

Every start is recorded in ``$PROXY_FAULTS_DIR/spawns`` (``marks.spawned``).
"""

from __future__ import annotations

import json
import os
import sys
import threading
from typing import Any

from marks import mark, spawned

VERSION = "2025-06-18"
TOOLS = [
    {
        "name": "echo",
        "description": "Answer with the text.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    },
    {"name": "wait", "description": "Never answered, in every mode.", "inputSchema": {"type": "object"}},
]
GARBAGE = [
    b"this is not JSON",
    b"\xff\xfe\x00 not UTF-8 either",
    b"[1, 2, 3]",
    b'"a string"',
    b"42",
    b"null",
    b'{"no": "jsonrpc here"}',
    b'{"jsonrpc": "2.0", "id": 987654, "result": {"content": []}}',
    b'{"jsonrpc": "2.0", "id": "nobody-asked", "error": {"code": -1, "message": "?"}}',
    b'{"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "x", "progress": "many"}}',
    b'{"jsonrpc": "2.0", "method": 5, "params": []}',
    b'{"jsonrpc": "2.0", "method": "notifications/message", "params": "not an object"}',
    b'{"jsonrpc": "2.0", "id": "raw-1", "method": "raw/unknown", "params": {}}',
    b"",
    b"   ",
]

mode = sys.argv[1]
listed: list[Any] = []  # list-fails-once: the tools/list already refused
out = sys.stdout.buffer
writing = threading.Lock()


def write(line: bytes) -> None:
    with writing:
        out.write(line + b"\n")
        out.flush()


def send(message: dict[str, Any]) -> None:
    write(json.dumps(message).encode())


def answer(request_id: Any, result: dict[str, Any]) -> None:
    send({"jsonrpc": "2.0", "id": request_id, "result": result})


def flood() -> None:
    count = 0
    line = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x" * 200}}
    try:
        while True:
            send(line)
            count += 1
            if count % 10_000 == 0:
                mark("flooded", str(count))
    except (BrokenPipeError, ValueError):  # the client went away
        pass


def called(request_id: Any, params: dict[str, Any]) -> None:
    text = (params.get("arguments") or {}).get("text", "")
    if mode == "garbage":
        for line in GARBAGE:
            write(line)
        answer(request_id, {"content": [{"type": "text", "text": text}]})
    elif mode == "bad-result":
        send({"jsonrpc": "2.0", "id": request_id, "result": "not a CallToolResult"})
    elif mode in ("flood", "list-fails-once"):
        answer(request_id, {"content": [{"type": "text", "text": text}]})
    # silent: nothing, ever


def main() -> None:
    spawned()
    for raw in sys.stdin.buffer:
        message = json.loads(raw)
        method, request_id = message.get("method"), message.get("id")
        params = message.get("params") or {}
        if method is None:
            mark(f"answer-{request_id}", json.dumps(message))  # the client's answer to our request
        elif method == "initialize":
            info = {"name": f"raw-{mode}", "version": "1.0.0"}
            answer(request_id, {"protocolVersion": VERSION, "capabilities": {"tools": {}}, "serverInfo": info})
        elif method == "notifications/initialized":
            if mode == "flood":
                threading.Thread(target=flood, daemon=True).start()
        elif method == "tools/list":
            if mode == "list-fails-once" and not listed:
                listed.append(request_id)
                send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32603, "message": "not ready yet"}})
                continue
            answer(request_id, {"tools": TOOLS})
        elif method == "tools/call":
            if params.get("name") == "echo":
                called(request_id, params)
        elif method == "notifications/cancelled":
            mark(f"cancelled-{params.get('requestId')}")
        elif request_id is not None:
            send(
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "error": {"code": -32601, "message": f"Method not found: {method}"},
                }
            )
    # stdin ended: the client went away. Exit now, not through the interpreter's shutdown, which a
    # flooding thread still writing would turn into a fatal error about the stdout lock.
    os._exit(0)


if __name__ == "__main__":
    main()
