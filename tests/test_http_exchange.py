"""A request over HTTP runs in the task of its HTTP exchange, and the MCP path skips Starlette's router.

Both are what make a call cheap (``docs/performance.md``, "Where the time goes"); these tests
hold the behaviour they must not change: a host's own cancellation of the exchange still reaches
the tool and goes on up to the host; middleware added to the app still sees every MCP request;
a request that sends nothing first is answered with plain JSON, one that does with SSE, and a
client's cancellation is answered as before. Real uvicorn on 127.0.0.1, raw HTTP with httpx.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.requests import Request
from starlette.responses import Response
from tests.http_support import Legacy, Modern, ServeHttp
from tests.support.waiting import hang_until_cancelled

from toolkit import Context, EventStore, Server

Scope = dict[str, Any]


def make_server(started: asyncio.Event, cancelled: asyncio.Event) -> Server:
    server = Server("exchange-tests", version="1.0.0")

    @server.tool
    async def hang() -> str:
        """Wait until cancelled."""
        started.set()
        await hang_until_cancelled(cancelled)
        return "never"

    @server.tool
    async def at_once() -> list[int]:
        """Answer without waiting."""
        return [1, 2, 3]

    @server.tool
    async def chatty(ctx: Context) -> int:
        """Report progress, then answer."""
        await ctx.report_progress(1, 2)
        await asyncio.sleep(0.01)
        await ctx.report_progress(2, 2)
        return 2

    return server


class HostTimeout:
    """A host's ASGI middleware that gives every request ``seconds``, then answers 504 itself."""

    def __init__(self, app: Any, seconds: float) -> None:
        self.app = app
        self.seconds = seconds
        self.timeouts = 0

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            async with asyncio.timeout(self.seconds):
                await self.app(scope, receive, send)
        except TimeoutError:
            self.timeouts += 1
            await send({"type": "http.response.start", "status": 504, "headers": [(b"content-length", b"0")]})
            await send({"type": "http.response.body", "body": b""})


async def test_a_host_timeout_cancels_the_tool_and_reaches_the_host(mcp_http: ServeHttp) -> None:
    started, cancelled = asyncio.Event(), asyncio.Event()
    host = HostTimeout(make_server(started, cancelled).http_app(), seconds=0.3)
    http = await mcp_http(host)
    reply = await Modern(http).call_tool("hang", {})
    # The exchange's cancellation was not taken for the request's own: it went on up to the
    # host (whose asyncio.timeout turned it into TimeoutError), and the tool was cancelled.
    assert reply.status == 504
    assert host.timeouts == 1
    await asyncio.wait_for(cancelled.wait(), 5)
    # The server serves on.
    again = await Modern(http).call_tool("at_once", {})
    assert again.status == 200
    assert again.result["structuredContent"] == [1, 2, 3]


async def test_middleware_added_to_the_app_sees_every_mcp_request(mcp_http: ServeHttp) -> None:
    seen: list[tuple[str, str]] = []

    async def record(request: Request, call_next: Any) -> Response:
        seen.append((request.method, request.url.path))
        response: Response = await call_next(request)
        response.headers["x-recorded"] = "yes"
        return response

    app = make_server(asyncio.Event(), asyncio.Event()).http_app()
    app.add_middleware(BaseHTTPMiddleware, dispatch=record)
    http = await mcp_http(app)
    legacy = await Legacy(http).open()
    called = await legacy.call_tool("at_once", {})
    assert called.headers["x-recorded"] == "yes"
    modern = await Modern(http).call_tool("at_once", {})
    assert modern.headers["x-recorded"] == "yes"
    assert modern.result["structuredContent"] == [1, 2, 3]
    # initialize, notifications/initialized, the legacy call, the modern call: all through it.
    assert seen == [("POST", "/mcp")] * 4


async def test_an_immediate_answer_is_json_and_a_chatty_one_is_sse(mcp_http: ServeHttp) -> None:
    http = await mcp_http(make_server(asyncio.Event(), asyncio.Event()))
    legacy, modern = await Legacy(http).open(), Modern(http)
    for client in (legacy, modern):
        quick = await client.call_tool("at_once", {})
        assert quick.status == 200
        assert quick.content_type == "application/json"
        if client is legacy:
            chatty = await legacy.request(
                "tools/call", {"name": "chatty", "arguments": {}, "_meta": {"progressToken": "p"}}
            )
        else:
            chatty = await modern.call_tool("chatty", {}, meta={"progressToken": "p"})
        assert chatty.status == 200
        assert chatty.content_type.startswith("text/event-stream")
        progress = [m["params"]["progress"] for m in chatty.notifications if m["method"] == "notifications/progress"]
        assert progress == [1, 2]
        assert chatty.result["content"][0]["text"] == "2"


async def test_a_client_cancellation_is_answered_and_the_next_request_is_served(mcp_http: ServeHttp) -> None:
    started, cancelled = asyncio.Event(), asyncio.Event()
    http = await mcp_http(make_server(started, cancelled))
    legacy = await Legacy(http).open()
    call = asyncio.create_task(legacy.call_tool("hang", {}, id=41))
    await asyncio.wait_for(started.wait(), 5)
    await legacy.notify("notifications/cancelled", {"requestId": 41})
    ended = await asyncio.wait_for(call, 5)
    await asyncio.wait_for(cancelled.wait(), 5)
    assert ended.status in (200, 204)
    assert not ended.messages or all("result" not in m for m in ended.messages), "a cancelled request gets no result"
    again = await legacy.call_tool("at_once", {})
    assert again.result["structuredContent"] == {"result": [1, 2, 3]}


def test_a_slow_legacy_request_becomes_a_resumable_stream_on_a_second_event_loop() -> None:
    """The one timer that watches slow requests belongs to an event loop: an app served again on
    another loop (as each test client or ``asyncio.run`` does) must start a new one, not wait for
    a timer that died with the first loop."""
    server = Server("exchange-tests", version="1.0.0")

    @server.tool
    async def slow() -> str:
        """Take 0.3 s."""
        await asyncio.sleep(0.3)
        return "done"

    app = server.http_app(event_store=EventStore())  # resumable legacy streams
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "slow", "arguments": {}}}

    async def serve_once() -> httpx.Response:
        async with app.lifespan(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
                opened = await client.post("/mcp", headers=headers, json=initialize)
                session = {**headers, "mcp-session-id": opened.headers["mcp-session-id"]}
                session["mcp-protocol-version"] = "2025-11-25"
                initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
                await client.post("/mcp", headers=session, json=initialized)
                answer = await client.post("/mcp", headers=session, json=call)
                # A quick request last: the loop ends with the watch's timer still pending.
                ping = await client.post("/mcp", headers=session, json={"jsonrpc": "2.0", "id": 3, "method": "ping"})
                assert ping.status_code == 200
                return answer

    for _ in range(2):  # the second time on a new event loop, the first loop's timer gone with it
        answer = asyncio.run(serve_once())
        # Longer than RESUMABLE_AFTER: a resumable SSE stream, its priming event (an id) first.
        assert answer.status_code == 200
        assert answer.headers["content-type"].startswith("text/event-stream")
        assert answer.text.lstrip().startswith("id:")
        assert "done" in answer.text
