"""A 2026-07-28 upstream over Streamable HTTP whose calls misbehave on the wire.

    python http_upstream.py PORT

A toolkit server (``pid``; ``hang``, which never answers and leaves ``cancelled-TAG`` when
cancelled) behind a thin ASGI layer that answers three tools itself, the way no MCP server
should:

- ``garbage``: an SSE stream of events that are not JSON-RPC messages (not JSON, a JSON array,
  an object of nothing), then the end of the stream, no response;
- ``endless``: an SSE stream of log notifications every 20 ms that never brings the response;
  ``closed-TAG`` is left when the client closes it;
- ``html``: a 200 with an HTML page.

Every start is recorded in ``$PROXY_FAULTS_DIR/spawns`` (``marks.spawned``).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

import uvicorn
from marks import mark, spawned

from toolkit import Server

server = Server("http-upstream", version="1.0.0")


@server.tool
def pid() -> int:
    """The process id of the upstream."""
    return os.getpid()


@server.tool
async def hang(tag: str) -> str:
    """Never answer; leave ``started-TAG`` at once and ``cancelled-TAG`` when the call is cancelled."""
    mark(f"started-{tag}")
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        mark(f"cancelled-{tag}")
        raise
    return "not reached"


@server.tool
def garbage() -> str:
    """Answered by the ASGI layer with SSE events that are not JSON-RPC."""
    return "not reached"


@server.tool
def endless(tag: str) -> str:
    """Answered by the ASGI layer with a stream of notifications that never ends."""
    return "not reached"


@server.tool
def html() -> str:
    """Answered by the ASGI layer with an HTML page."""
    return "not reached"


inner = server.http_app()
Message = dict[str, Any]


async def app(scope: Message, receive: Any, send: Any) -> None:
    if scope["type"] != "http" or scope["method"] != "POST":
        await inner(scope, receive, send)
        return
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    request = json.loads(body or b"null")
    params = request.get("params") if isinstance(request, dict) else None
    name = params.get("name") if isinstance(params, dict) and request.get("method") == "tools/call" else None
    if name == "garbage":
        await sse(send, [b"data: not json\n\n", b"data: [1, 2]\n\n", b"event: message\ndata: {}\n\n"])
    elif name == "endless":
        await endless_stream(send, receive, request, str(params.get("arguments", {}).get("tag")))
    elif name == "html":
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/html")]})
        await send({"type": "http.response.body", "body": b"<html><body>Gateway Timeout</body></html>"})
    else:
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # type: ignore[no-any-return]

        await inner(scope, replay, send)


async def sse(send: Any, events: list[bytes]) -> None:
    headers = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    for event in events:
        await send({"type": "http.response.body", "body": event, "more_body": True})
    await send({"type": "http.response.body", "body": b""})


async def endless_stream(send: Any, receive: Any, request: Message, tag: str) -> None:
    headers = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    token = ((request.get("params") or {}).get("_meta") or {}).get("progressToken")

    async def stream() -> None:
        count = 0
        while True:
            count += 1
            note: Message = {"jsonrpc": "2.0", "method": "notifications/message"}
            note["params"] = {"level": "info", "data": f"still going {count}"}
            if token is not None and count % 2:
                note = {"jsonrpc": "2.0", "method": "notifications/progress"}
                note["params"] = {"progressToken": token, "progress": count}
            event = b"event: message\ndata: " + json.dumps(note).encode() + b"\n\n"
            await send({"type": "http.response.body", "body": event, "more_body": True})
            await asyncio.sleep(0.02)

    streaming = asyncio.ensure_future(stream())
    while (await receive())["type"] != "http.disconnect":
        pass
    mark(f"closed-{tag}")
    streaming.cancel()
    await asyncio.gather(streaming, return_exceptions=True)


def main() -> None:
    spawned()
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning", lifespan="on")


if __name__ == "__main__":
    main()
