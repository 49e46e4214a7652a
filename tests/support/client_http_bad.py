"""Bad MCP servers for the HTTP client's tests: a raw ASGI app, one misbehaviour per path.

- ``/html``: ``200`` with an HTML page (not an MCP endpoint).
- ``/status-500``: ``500`` with no body.
- ``/forever``: an SSE stream that sends a keep-alive comment and never answers; it records when
  the client goes away (``disconnected``).
- ``/malformed``: an SSE event whose data is not JSON, and then nothing.
- ``/giant``: one SSE event of ``GIANT_BYTES`` of data.
- ``/early-end``: an SSE stream with a progress notification and no event id, then its end.
- ``/batch``: a JSON array (a 2025-03-26 batch): a notification, then the response.
- ``/linger``: an SSE stream with the response, kept open after it (until the client goes away).
- ``/rpc-error``: ``400`` with a JSON-RPC error that has no ``id``.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Final

GIANT_BYTES: Final = 64 * 1024


class BadServer:
    def __init__(self) -> None:
        self.holding = asyncio.Event()
        """Set once a stream that stays open has started."""
        self.disconnected = asyncio.Event()
        """Set once the client went away from a stream that stays open."""

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        request = json.loads(body) if body else {}
        request_id = request.get("id") if isinstance(request, dict) else None
        path = scope["path"]
        if path == "/html":
            await _respond(send, 200, "text/html; charset=utf-8", b"<!doctype html><html><body>Welcome!</body></html>")
        elif path == "/status-500":
            await _respond(send, 500, None, b"")
        elif path == "/forever":
            await self._hold_open(receive, send, b": keep-alive\r\n\r\n")
        elif path == "/linger":
            answer = {"jsonrpc": "2.0", "id": request_id, "result": {"tools": []}}
            await self._hold_open(receive, send, b"data: " + json.dumps(answer).encode() + b"\r\n\r\n")
        elif path == "/malformed":
            await _sse(send, [b"event: message\r\ndata: {not json\r\n\r\n"])
        elif path == "/giant":
            giant = json.dumps({"jsonrpc": "2.0", "id": request_id, "result": {"x": "a" * GIANT_BYTES}})
            await _sse(send, [b"data: " + giant.encode() + b"\r\n\r\n"])
        elif path == "/early-end":
            progress = {
                "jsonrpc": "2.0",
                "method": "notifications/progress",
                "params": {"progressToken": 1, "progress": 1},
            }
            await _sse(send, [b"data: " + json.dumps(progress).encode() + b"\n\n"])
        elif path == "/batch":
            log = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "hi"}}
            answer = {"jsonrpc": "2.0", "id": request_id, "result": {"tools": []}}
            await _respond(send, 200, "application/json", json.dumps([log, answer]).encode())
        elif path == "/rpc-error":
            error = {"jsonrpc": "2.0", "error": {"code": -32600, "message": "Bad Request: not today"}}
            await _respond(send, 400, "application/json", json.dumps(error).encode())
        else:
            await _respond(send, 404, "text/plain", b"no such path")

    async def _hold_open(self, receive: Any, send: Any, first: bytes) -> None:
        """An SSE stream that sends ``first`` and then stays open until the client goes away."""
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})
        await send({"type": "http.response.body", "body": first, "more_body": True})
        self.holding.set()
        while (await receive())["type"] != "http.disconnect":
            pass
        self.disconnected.set()


async def _respond(send: Any, status: int, content_type: str | None, body: bytes) -> None:
    headers = [(b"content-length", str(len(body)).encode())]
    if content_type is not None:
        headers.append((b"content-type", content_type.encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _sse(send: Any, chunks: list[bytes]) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})
    for chunk in chunks:
        await send({"type": "http.response.body", "body": chunk, "more_body": True})
    await send({"type": "http.response.body", "body": b""})
