"""MCP Apps in the tools page, in headless Chromium against ``toolkit run APP --docs`` (the page is the host).

examples/apps_forecast.py bundles the real app-side library (@modelcontextprotocol/ext-apps, pinned in
interop/apps, installed by ``scripts/apps --install-only``): the app renders in a sandboxed iframe,
gets the tool's result, and its buttons call an app-only tool through the page. A hostile app
(tests/support/hostile_app.py) cannot reach the page, fetch the MCP endpoint past its CSP, or call a
tool whose visibility leaves out "app".
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from tests.browser import (
    browser_fixture,  # noqa: F401 (the fixture browser)
    call,
    eventually,
    fill,
    missing,
    one,
    open_page,
    page_servers_fixture,  # noqa: F401 (the fixture page_servers)
    serve_page,
    tool_card,
)
from tests.support.processes import REPO

pytestmark = pytest.mark.slow

FORECAST = REPO / "examples" / "apps_forecast.py"
HOSTILE = REPO / "tests" / "support" / "hostile_app.py"
BUNDLE = REPO / ".interop/apps/node_modules/@modelcontextprotocol/ext-apps/dist/src/app-with-deps.js"


def app_frame(driver: Any, card: Any) -> Any:
    frame = eventually(driver, lambda: one(card, "iframe.app-frame"), what="the app's iframe")
    assert frame.get_attribute("sandbox") == "allow-scripts"
    return frame


def test_the_forecast_app_renders_gets_its_result_and_calls_a_tool(browser: Any, page_servers: Any) -> None:
    if not BUNDLE.is_file() and not os.environ.get("TOOLKIT_EXT_APPS"):
        missing("the MCP Apps library (run scripts/apps --install-only)")
    server = page_servers(FORECAST)
    open_page(browser, server.url)
    card = tool_card(browser, "forecast")
    fill(card, "/city", "Paris")
    call(browser, card)
    frame = app_frame(browser, card)
    browser.switch_to.frame(frame)
    try:
        eventually(browser, lambda: browser.find_element("css selector", "body[data-connected='true']"), what="connect")
        title = eventually(browser, lambda: _text(browser, "#title", "Paris: 3 days"), what="the tool's result")
        assert title == "Paris: 3 days"
        assert len(browser.find_elements("css selector", "#bars li")) == 3
        browser.find_element("css selector", "button[data-days='7']").click()
        eventually(browser, lambda: _text(browser, "#title", "Paris: 7 days"), what="the app's own tool call")
        assert len(browser.find_elements("css selector", "#bars li")) == 7
        assert browser.execute_script("return self.origin") == "null"  # an opaque origin
    finally:
        browser.switch_to.default_content()


def _text(driver: Any, selector: str, want: str) -> str:
    text = str(driver.find_element("css selector", selector).text)
    assert text == want, text
    return text


def test_a_hostile_app_is_held_by_its_sandbox_its_csp_and_the_host(browser: Any) -> None:
    with serve_page(HOSTILE) as server:
        open_page(browser, server.url)
        card = tool_card(browser, "probe")
        call(browser, card)
        frame = app_frame(browser, card)
        browser.switch_to.frame(frame)
        try:

            def report() -> dict[str, Any]:
                text = browser.find_element("css selector", "#out").text
                assert text.startswith("{"), text
                found: dict[str, Any] = json.loads(text)
                return found

            out = eventually(browser, report, what="the probe's report")
        finally:
            browser.switch_to.default_content()
    assert out["origin"] == "null"
    assert out["parentDocument"] == "threw SecurityError"
    assert out["cookie"] == "threw SecurityError"
    assert out["setDomain"].startswith("threw")
    assert out["fetch"] == "blocked TypeError"  # connect-src 'none': not even the server's own endpoint
    assert out["fetched"] == server.mcp_url and out["violated"] == "connect-src"
    assert out["initialized"] is True
    assert out["secret"] == "refused -32602"  # visibility ["model"]: the host refuses the app
    assert out["probe"] == "answered"
