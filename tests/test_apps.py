"""MCP Apps (io.modelcontextprotocol/ui) on the wire, in both eras: the capability per version,
``_meta.ui`` on tools, the app's resource with its mime type and ``_meta.ui``, app-only tools
refused to clients that do not render apps, and ``renders_apps(ctx)``."""

from __future__ import annotations

from typing import Any

import pytest
from tests.support.apps import load_module
from tests.support.memory import RawClient, checked_request, modern_meta
from tests.support.processes import REPO

from toolkit import App, Context, RegistrationError, Server, renders_apps

UI = "io.modelcontextprotocol/ui"
MIME = "text/html;profile=mcp-app"
RENDERS = {"extensions": {UI: {"mimeTypes": [MIME]}}}
MODERN = "2026-07-28"
LEGACY_CARRYING = ["2025-11-25", "2025-06-18"]
LEGACY_NOT = ["2025-03-26", "2024-11-05"]


def make_server() -> Server:
    chart = App(
        "ui://forecast/chart",
        html="<!doctype html><p>chart</p>",
        connect_domains=["https://api.example.com"],
        resource_domains=["https://cdn.example.com"],
        permissions=["clipboardWrite"],
        domain="a904794854a047f6.claudemcpcontent.com",
        prefers_border=True,
    )
    server = Server("apps")

    @server.tool(app=chart)
    def forecast(city: str, ctx: Context) -> str:
        return f"chart for {city}" if renders_apps(ctx) else f"text for {city}"

    @server.tool(app=chart.visible_to("app"))
    def refresh(city: str) -> str:
        return f"refreshed {city}"

    @server.tool(app=chart.visible_to("model"))
    def wipe() -> str:
        return "wiped"

    @server.tool
    def plain() -> str:
        return "plain"

    return server


class Session:
    """One client of ``version``: legacy after ``initialize``, modern with ``_meta`` on each request."""

    def __init__(self, client: RawClient, version: str, capabilities: dict[str, Any]) -> None:
        self.client, self.version, self.capabilities = client, version, capabilities

    async def start(self) -> dict[str, Any]:
        if self.version == MODERN:
            response = await checked_request(self.client, "server/discover", self.params({}), version=MODERN)
        else:
            response = await self.client.initialize(self.version, self.capabilities)
        capabilities: dict[str, Any] = response["result"]["capabilities"]
        return capabilities

    def params(self, params: dict[str, Any]) -> dict[str, Any]:
        if self.version == MODERN:
            return {**params, "_meta": modern_meta(MODERN, self.capabilities)}
        return params

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return await checked_request(self.client, method, self.params(params), version=self.version)


async def session(client: RawClient, version: str, capabilities: dict[str, Any]) -> Session:
    s = Session(client, version, capabilities)
    s.capabilities_seen = await s.start()  # type: ignore[attr-defined]
    return s


@pytest.mark.parametrize("version", [MODERN, *LEGACY_CARRYING])
async def test_the_extension_is_declared_and_tools_carry_meta_ui(version: str) -> None:
    async with RawClient(make_server()) as client:
        s = await session(client, version, RENDERS)
        assert s.capabilities_seen["extensions"] == {UI: {}}  # type: ignore[attr-defined]
        tools = {tool["name"]: tool for tool in (await s.request("tools/list", {}))["result"]["tools"]}
        assert tools["forecast"]["_meta"] == {"ui": {"resourceUri": "ui://forecast/chart"}}
        assert tools["refresh"]["_meta"] == {"ui": {"resourceUri": "ui://forecast/chart", "visibility": ["app"]}}
        assert tools["wipe"]["_meta"]["ui"]["visibility"] == ["model"]
        assert "_meta" not in tools["plain"]


@pytest.mark.parametrize("version", LEGACY_NOT)
async def test_versions_whose_tools_have_no_meta_get_nothing(version: str) -> None:
    async with RawClient(make_server()) as client:
        s = await session(client, version, RENDERS)
        assert "extensions" not in s.capabilities_seen  # type: ignore[attr-defined]
        tools = {tool["name"]: tool for tool in (await s.request("tools/list", {}))["result"]["tools"]}
        assert all("_meta" not in tool for tool in tools.values())
        resources = (await s.request("resources/list", {}))["result"]["resources"]
        assert [r["uri"] for r in resources] == ["ui://forecast/chart"] and "_meta" not in resources[0]


@pytest.mark.parametrize("version", [MODERN, *LEGACY_CARRYING])
async def test_the_app_resource_is_read_with_its_mime_type_and_meta_ui(version: str) -> None:
    ui = {
        "csp": {"connectDomains": ["https://api.example.com"], "resourceDomains": ["https://cdn.example.com"]},
        "permissions": {"clipboardWrite": {}},
        "domain": "a904794854a047f6.claudemcpcontent.com",
        "prefersBorder": True,
    }
    async with RawClient(make_server()) as client:
        s = await session(client, version, RENDERS)
        listed = (await s.request("resources/list", {}))["result"]["resources"]
        assert listed == [
            {"uri": "ui://forecast/chart", "name": "forecast/chart", "mimeType": MIME, "_meta": {"ui": ui}}
        ]
        read = (await s.request("resources/read", {"uri": "ui://forecast/chart"}))["result"]["contents"]
        assert read == [
            {"uri": "ui://forecast/chart", "mimeType": MIME, "text": "<!doctype html><p>chart</p>", "_meta": {"ui": ui}}
        ]


@pytest.mark.parametrize("version", [MODERN, "2025-11-25"])
async def test_a_tool_knows_whether_the_client_renders_apps(version: str) -> None:
    async with RawClient(make_server()) as client:
        s = await session(client, version, RENDERS)
        result = (await s.request("tools/call", {"name": "forecast", "arguments": {"city": "Oslo"}}))["result"]
        assert result["content"][0]["text"] == "chart for Oslo"
    async with RawClient(make_server()) as client:
        s = await session(client, version, {"extensions": {UI: {"mimeTypes": ["text/plain"]}}})
        result = (await s.request("tools/call", {"name": "forecast", "arguments": {"city": "Oslo"}}))["result"]
        assert result["content"][0]["text"] == "text for Oslo"


@pytest.mark.parametrize("version", [MODERN, "2025-11-25"])
async def test_an_app_only_tool_is_refused_to_a_client_that_renders_no_apps(version: str) -> None:
    async with RawClient(make_server()) as client:
        s = await session(client, version, {})
        response = await s.request("tools/call", {"name": "refresh", "arguments": {"city": "Oslo"}})
        assert response["error"]["code"] == -32602
        assert "called only by its app" in response["error"]["message"] and UI in response["error"]["message"]
        ok = await s.request("tools/call", {"name": "wipe", "arguments": {}})
        assert ok["result"]["content"][0]["text"] == "wiped"
    async with RawClient(make_server()) as client:
        s = await session(client, version, RENDERS)
        ok = await s.request("tools/call", {"name": "refresh", "arguments": {"city": "Oslo"}})
        assert ok["result"]["content"][0]["text"] == "refreshed Oslo"


def test_declaring_an_app_wrongly_is_refused_with_what_to_do() -> None:
    with pytest.raises(RegistrationError, match="starts with ui://"):
        App("https://example.com/chart", html="x")
    with pytest.raises(RegistrationError, match="exactly one of html=, file= or render="):
        App("ui://a", html="x", render=lambda: "y")
    with pytest.raises(RegistrationError, match="not an origin"):
        App("ui://a", html="x", connect_domains=["https://a.example; script-src *"])
    with pytest.raises(RegistrationError, match="unknown permission"):
        App("ui://a", html="x", permissions=["usb"])
    server = Server("two")
    server.tool(app=App("ui://a", html="1"))(lambda: "x")
    with pytest.raises(RegistrationError, match="two different apps"):
        server.tool(name="other", app=App("ui://a", html="2"))(lambda: "y")


async def test_an_app_from_a_file_or_a_function_is_read_afresh(tmp_path: Any) -> None:
    page = tmp_path / "app.html"
    page.write_text("<p>one</p>")
    calls: list[int] = []
    server = Server("sources")
    server.tool(name="f", app=App("ui://file", file=page))(lambda: "x")
    server.tool(name="g", app=App("ui://render", render=lambda: (calls.append(1), f"<p>{len(calls)}</p>")[1]))(
        lambda: "y"
    )
    async with RawClient(server) as client:
        s = await session(client, MODERN, RENDERS)

        async def read(uri: str) -> str:
            text: str = (await s.request("resources/read", {"uri": uri}))["result"]["contents"][0]["text"]
            return text

        assert await read("ui://file") == "<p>one</p>"
        page.write_text("<p>two</p>")
        assert await read("ui://file") == "<p>two</p>"
        assert [await read("ui://render"), await read("ui://render")] == ["<p>1</p>", "<p>2</p>"]


def test_a_server_without_apps_does_not_load_the_extension() -> None:
    import subprocess
    import sys

    code = "import sys, toolkit\ntoolkit.Server('x').tool(lambda: 1)\nprint('toolkit._extensions.apps' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert out.stdout.strip() == "False"


async def test_the_example_lists_its_app_and_answers_in_text_without_one() -> None:
    module = load_module(REPO / "examples" / "apps_forecast.py")
    async with RawClient(module.server) as client:
        s = await session(client, MODERN, {})
        tools = {tool["name"]: tool for tool in (await s.request("tools/list", {}))["result"]["tools"]}
        assert tools["forecast"]["_meta"]["ui"] == {"resourceUri": "ui://forecast/chart"}
        result = (await s.request("tools/call", {"name": "forecast", "arguments": {"city": "Paris"}}))["result"]
        assert "structuredContent" not in result and result["content"][0]["text"].startswith("Paris: ")
