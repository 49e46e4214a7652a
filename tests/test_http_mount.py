"""``server.http_app()`` mounted inside an existing Starlette or FastAPI application.

Starlette runs the lifespan of the outermost application only: a mounted app's lifespan
(toolkit's, which enters ``Server(lifespan=...)`` and manages legacy sessions) does not run
by itself. The host application takes it as its lifespan, or enters it from its own::

    mcp_app = server.http_app()
    app = FastAPI(lifespan=mcp_app.lifespan)            # nothing else to start, or:

    @contextlib.asynccontextmanager
    async def lifespan(app):
        async with mcp_app.lifespan(app):
            yield

    app = Starlette(routes=[Mount("/tools", app=mcp_app)], lifespan=lifespan)

These tests serve such applications with uvicorn on 127.0.0.1 and talk to the mounted MCP
endpoint over real HTTP, in both protocol eras.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from fastapi import FastAPI
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Mount, Route
from tests.http_support import Legacy, Modern, connect, serve

from toolkit import Context, Server


def tool_text(result: dict[str, Any]) -> str:
    return "".join(block.get("text", "") for block in result["content"])


def server_with_lifespan(events: list[str]) -> Server:
    @contextlib.asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[dict[str, str]]:
        events.append("mcp start")
        yield {"database": "connected"}
        events.append("mcp stop")

    server = Server("mounted", version="1.0.0", lifespan=lifespan)

    @server.tool
    def database(ctx: Context) -> str:
        """Report what the lifespan set up."""
        state = ctx.lifespan
        return "no lifespan state" if state is None else state["database"]

    return server


async def health(request: Request) -> JSONResponse:
    return JSONResponse({"ok": True})


async def check_both_eras(url: str) -> None:
    async with connect(url) as http:
        modern = await Modern(http).call_tool("database")
        assert modern.status == 200
        assert tool_text(modern.result) == "connected", "the tool must see what Server(lifespan=...) yielded"

        legacy = await Legacy(http).open()
        assert legacy.session_id
        called = await legacy.call_tool("database")
        assert called.status == 200
        assert tool_text(called.result) == "connected"
        listed = await legacy.request("tools/list")
        assert [tool["name"] for tool in listed.result["tools"]] == ["database"]
        assert 200 <= (await legacy.delete()).status < 300


async def test_mounted_in_a_starlette_app_with_the_lifespan_combined() -> None:
    events: list[str] = []
    mcp_app = server_with_lifespan(events).http_app(path="/mcp")

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        events.append("app start")
        async with mcp_app.lifespan(app):
            yield
        events.append("app stop")

    app = Starlette(routes=[Route("/health", health), Mount("/tools", app=mcp_app)], lifespan=lifespan)
    async with serve(app, path="/tools/mcp") as running:
        assert events == ["app start", "mcp start"]
        async with connect(running.url) as http:
            assert (await http.http.get(running.base + "/health")).json() == {"ok": True}
        await check_both_eras(running.url)
    assert events == ["app start", "mcp start", "mcp stop", "app stop"]


async def test_mounted_in_a_fastapi_app_with_the_lifespan_combined() -> None:
    events: list[str] = []
    mcp_app = server_with_lifespan(events).http_app(path="/mcp")

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            events.append("app start")
            await stack.enter_async_context(mcp_app.lifespan(app))
            yield
        events.append("app stop")

    app = FastAPI(lifespan=lifespan)

    @app.get("/health")
    async def fastapi_health() -> dict[str, bool]:
        return {"ok": True}

    app.mount("/ai", mcp_app)
    async with serve(app, path="/ai/mcp") as running:
        assert events == ["app start", "mcp start"]
        async with connect(running.url) as http:
            assert (await http.http.get(running.base + "/health")).json() == {"ok": True}
        await check_both_eras(running.url)
    assert events == ["app start", "mcp start", "mcp stop", "app stop"]


async def test_mounted_app_keeps_dns_rebinding_protection() -> None:
    events: list[str] = []
    mcp_app = server_with_lifespan(events).http_app(path="/mcp")

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with mcp_app.lifespan(app):
            yield

    app = FastAPI(lifespan=lifespan)
    app.mount("/ai", mcp_app)
    async with serve(app, path="/ai/mcp") as running, connect(running.url) as http:
        foreign = await Modern(http).request("tools/list", headers={"Origin": "http://evil.example.com"})
        assert foreign.status == 403
        local = await Modern(http).request("tools/list", headers={"Origin": running.base})
        assert local.status == 200


async def test_a_host_app_can_take_the_mcp_lifespan_directly() -> None:
    events: list[str] = []
    mcp_app = server_with_lifespan(events).http_app(path="/mcp")
    app = FastAPI(lifespan=mcp_app.lifespan)
    app.mount("/", mcp_app)
    async with serve(app) as running:
        assert events == ["mcp start"]
        await check_both_eras(running.url)
    assert events == ["mcp start", "mcp stop"]


async def test_forgetting_the_lifespan_is_a_clear_error_not_a_silent_none() -> None:
    events: list[str] = []
    mcp_app = server_with_lifespan(events).http_app(path="/mcp")
    app = Starlette(routes=[Mount("/", app=mcp_app)])  # the MCP lifespan is never entered
    async with serve(app) as running, connect(running.url) as http:
        response = await Modern(http).call_tool("database")
        assert response.status == 500
        assert "lifespan=mcp_app.lifespan" in response.message["error"]["message"]
    assert events == []
