"""A frameworkless gateway: the least a Python gateway under uvicorn does per proxied call.

For ``bench.gateway_instructions --floor`` (2026-07-28 callers only: it keeps no sessions). A bare
ASGI app under uvicorn (httptools), as the floor server is: each POST's body parsed (pydantic-core),
sent on as it came over one kept-alive HTTP/1.1 connection to ``BENCH_UPSTREAM`` (an asyncio
protocol, httptools parsing the answer), the answer parsed and sent back as it came. No checks,
no shaping, no era: a lower bound, not a gateway anyone should run.

    BENCH_UPSTREAM=http://127.0.0.1:8123/mcp python bench/servers/floor_gateway.py --port 8124
"""

from __future__ import annotations

import asyncio
import os
import sys
import urllib.parse
from typing import Any

import httptools
import pydantic_core
import uvicorn

UPSTREAM = urllib.parse.urlsplit(os.environ.get("BENCH_UPSTREAM", ""))


class Upstream(asyncio.Protocol):
    """One kept-alive connection; one request at a time (the bench's client is sequential)."""

    def __init__(self) -> None:
        self.parser = httptools.HttpResponseParser(self)
        self.body: list[bytes] = []
        self.answer: asyncio.Future[bytes] | None = None
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.parser.feed_data(data)

    def on_body(self, body: bytes) -> None:
        self.body.append(body)

    def on_message_complete(self) -> None:
        body, self.body = b"".join(self.body), []
        if self.answer is not None and not self.answer.done():
            self.answer.set_result(body)


upstream: Upstream | None = None


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    global upstream
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
    if "id" not in pydantic_core.from_json(body):  # a notification: nothing to answer
        await send({"type": "http.response.start", "status": 202, "headers": []})
        await send({"type": "http.response.body", "body": b""})
        return
    if upstream is None:
        loop = asyncio.get_running_loop()
        _, upstream = await loop.create_connection(Upstream, UPSTREAM.hostname, UPSTREAM.port)
    mcp = "".join(
        f"{name.decode()}: {value.decode()}\r\n" for name, value in scope["headers"] if name.startswith(b"mcp-")
    )
    head = (
        f"POST {UPSTREAM.path} HTTP/1.1\r\nHost: {UPSTREAM.netloc}\r\nAccept: application/json, text/event-stream\r\n"
        f"Content-Type: application/json\r\n{mcp}Content-Length: {len(body)}\r\n\r\n"
    )
    upstream.answer = asyncio.get_running_loop().create_future()
    assert upstream.transport is not None
    upstream.transport.write(head.encode() + body)
    answer = await upstream.answer
    pydantic_core.from_json(answer)
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(answer)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": answer})


if __name__ == "__main__":
    port = int(sys.argv[sys.argv.index("--port") + 1])
    uvicorn.run(app, host="127.0.0.1", port=port, http="httptools", log_level="warning", access_log=False)
