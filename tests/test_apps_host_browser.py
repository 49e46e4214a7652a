"""The tools page as an MCP Apps host, in headless Chromium against ``toolkit run APP --docs``.

tests/support/apps_host_app.py's app, written without any library, drives the host side of the
protocol that SEP-1865 gives a host beyond the handshake: ``_meta.ui.permissions`` become the
frame's ``allow``; ``ui/open-link`` opens http(s) links in a new tab and refuses other schemes;
``ui/message`` and ``ui/update-model-context`` are shown in the app's box as text, never markup;
``resources/read`` reaches ``ui://`` resources only; ``hostContext`` carries the page's colour
scheme (and its change); a new call of the tool sends the old app ``ui/resource-teardown`` and
waits for its answer before removing it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from tests.browser import (
    browser_fixture,  # noqa: F401 (the fixture browser)
    call,
    eventually,
    every,
    fill,
    one,
    open_page,
    page_servers_fixture,  # noqa: F401 (the fixture page_servers)
    text_of,
    tool_card,
    wait_until,
)
from tests.support.processes import REPO

pytestmark = pytest.mark.slow

APP = REPO / "tests" / "support" / "apps_host_app.py"


def app_frame(driver: Any, card: Any) -> Any:
    frame = eventually(driver, lambda: one(card, ".app:not([hidden]) iframe.app-frame"), what="the app's iframe")
    assert frame.get_attribute("sandbox") == "allow-scripts"
    return frame


def attribute(driver: Any, element: Any, name: str) -> str | None:
    """The element's attribute as written (None when absent), not the like-named DOM property."""
    value = driver.execute_script("return arguments[0].getAttribute(arguments[1])", element, name)
    return None if value is None else str(value)


def report(driver: Any, frame: Any, *, done: bool = True) -> dict[str, Any]:
    """The probe's ``<pre id="out">``, once it holds its report (all of it, when ``done``)."""
    driver.switch_to.frame(frame)
    try:

        def read() -> dict[str, Any]:
            found: dict[str, Any] = json.loads(driver.find_element("css selector", "#out").text)
            assert not done or found.get("done") is True, found
            return found

        return eventually(driver, read, what="the probe's report")
    finally:
        driver.switch_to.default_content()


@pytest.fixture(name="dark")
def dark_fixture(browser: Any) -> Iterator[Any]:
    """``dark(True)`` makes the page's colour scheme dark (as the system setting would); reset after."""

    def scheme(on: bool) -> None:
        value = "dark" if on else "light"
        browser.execute_cdp_cmd(
            "Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": value}]}
        )

    scheme(False)
    try:
        yield scheme
    finally:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})


def test_declared_permissions_become_the_frames_allow_attribute(browser: Any, page_servers: Any) -> None:
    server = page_servers(APP)
    open_page(browser, server.url)
    card = tool_card(browser, "host_probe")
    call(browser, card)
    frame = app_frame(browser, card)
    wait_until(browser, lambda: frame.get_attribute("src") is not None, what="the frame loads")
    assert attribute(browser, frame, "allow") == "camera; clipboard-write"
    assert report(browser, frame)["hostCapabilities"]["sandbox"] == {
        "permissions": {"camera": {}, "clipboardWrite": {}}
    }
    plain = tool_card(browser, "plain")
    call(browser, plain)
    frame = app_frame(browser, plain)
    wait_until(browser, lambda: frame.get_attribute("src") is not None, what="the plain frame loads")
    assert attribute(browser, frame, "allow") is None  # nothing asked, nothing allowed


def test_links_messages_context_and_resources_from_the_app(browser: Any, page_servers: Any, dark: Any) -> None:
    server = page_servers(APP)
    open_page(browser, server.url)
    page = browser.current_window_handle
    tabs = set(browser.window_handles)
    link = f"{server.url}#opened-by-the-app"
    card = tool_card(browser, "host_probe")
    fill(card, "/link", link)
    call(browser, card)
    out = report(browser, app_frame(browser, card))

    assert out["hostContext"]["theme"] == "light"
    assert out["hostContext"]["displayMode"] == "inline"
    assert out["hostContext"]["availableDisplayModes"] == ["inline"]
    assert out["javascriptLink"] == "refused -32000"
    assert out["dataLink"] == "refused -32000"
    assert out["httpLink"] == "answered"
    assert out["message"] == "answered" and out["context"] == "answered"
    assert out["readUi"] == "ui://host/plain"  # a ui:// resource: proxied
    assert out["readNote"] == "refused -32602"  # any other: refused
    assert out["unknown"] == "refused -32601"

    # The http(s) link: shown in the page, and opened in a new tab.
    shown = one(card, ".app-says .app-link a")
    assert shown.get_attribute("href") == link and shown.get_attribute("rel") == "noopener noreferrer"
    opened = eventually(browser, lambda: _one_new(set(browser.window_handles) - tabs), what="the new tab")
    try:
        browser.switch_to.window(opened)
        wait_until(browser, lambda: browser.current_url == link, what="the new tab's address")
    finally:
        browser.close()
        browser.switch_to.window(page)

    # ui/message and ui/update-model-context: text, never markup.
    says = one(card, ".app-says")
    assert text_of(one(says, ".app-message")) == "The app says: <script>window.pwned = 1</script><b>bold</b>"
    context = text_of(one(says, ".app-context"))
    assert context == 'The app\'s context for the model: <img src=x onerror=pwned=1>\n{"days":3}'
    assert every(says, "script, b, img") == []
    assert browser.execute_script("return window.pwned") is None

    # The page's colour scheme turns dark: the app is told, and a new app starts dark.
    dark(True)
    frame = app_frame(browser, card)
    eventually(browser, lambda: _assert_eq(report(browser, frame)["contexts"], [{"theme": "dark"}]), what="the change")
    call(browser, card)
    assert report(browser, app_frame(browser, card))["hostContext"]["theme"] == "dark"
    browser.switch_to.window(page)


def test_a_new_call_tears_the_old_app_down_and_waits_for_its_answer(browser: Any, page_servers: Any) -> None:
    server = page_servers(APP)
    open_page(browser, server.url)
    card = tool_card(browser, "host_probe")
    call(browser, card)
    first = app_frame(browser, card)
    report(browser, first)  # initialized, its work done
    call(browser, card)
    # The old app's ui/resource-teardown handler calls `note` through the page before it answers.
    notes = tool_card(browser, "notes")

    def noted() -> str:
        call(browser, notes)
        text = text_of(one(notes, ".content-blocks"))
        assert "torn down: a new call of the tool" in text, text
        return text

    eventually(browser, noted, what="the old app's note")
    wait_until(browser, lambda: len(every(card, ".app")) == 1, what="the old app removed")
    report(browser, app_frame(browser, card))  # the new one runs


def test_the_app_gets_a_result_whose_numbers_the_page_keeps_as_written(browser: Any, page_servers: Any) -> None:
    # The page keeps 100.0 as written (JSON.rawJSON) for its panes; such a value cannot be posted.
    server = page_servers(APP)
    open_page(browser, server.url)
    card = tool_card(browser, "measure")
    call(browser, card)
    out = report(browser, app_frame(browser, card))
    assert out["result"]["structuredContent"] == {"celsius": 100}


def _one_new(handles: set[str]) -> str:
    assert len(handles) == 1, handles
    return handles.pop()


def _assert_eq(got: Any, want: Any) -> None:
    assert got == want, got
