"""The tools page in a real browser: headless Chromium against ``toolkit run APP --docs`` over HTTP.

No mocks: the page talks to the server's MCP endpoint as any client would. One Chromium serves the
module and one server runs per app (examples/weather.py, tests/support/page_app.py); each test
loads the page afresh. Cards start collapsed: ``tool_card`` and ``opened`` (tests/browser.py) expand the one a
test works in, as a user clicks its title. The rig is tests/browser.py; without Chromium, chromedriver or Selenium
(``scripts/browser --install-only``) the tests skip, or fail under ``TOOLKIT_TESTS_STRICT=1``.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tests import browser
from tests.browser import (
    PAGE_APP,
    WEATHER,
    PageServer,
    add_item,
    browser_fixture,  # noqa: F401 (the fixture browser)
    call,
    console_errors,
    control,
    eventually,
    every,
    fill,
    natural_value,
    one,
    open_page,
    page_servers_fixture,  # noqa: F401 (the fixture page_servers)
    pick_branch,
    screenshot,
    set_era,
    text_of,
    unlabelled_controls,
    wait_until,
    wire_listing,
    wire_result,
)
from tests.support import page_app

pytestmark = pytest.mark.slow

FORECAST_2 = [
    {"hour": "09:00", "temp": 68.0, "conditions": "sunny"},
    {"hour": "10:00", "temp": 70.0, "conditions": "partly cloudy"},
]
"""examples/weather.py: get_weather_forecast(city="Seattle", hours=2)."""


@pytest.fixture(scope="module")
def weather(page_servers: Callable[[Path], PageServer]) -> PageServer:
    return page_servers(WEATHER)


@pytest.fixture(scope="module")
def hostile(page_servers: Callable[[Path], PageServer]) -> PageServer:
    return page_servers(PAGE_APP)


@pytest.fixture
def driver(browser: Any) -> Any:
    """The module's browser, its console read clean before the test."""
    console_errors(browser)
    return browser


def listed_tools(app: Path) -> list[dict[str, Any]]:
    """The tools as a 2026-07-28 client's tools/list gives them (``toolkit tools APP``)."""
    completed = subprocess.run(
        [sys.executable, "-m", "toolkit", "tools", str(app)], capture_output=True, text=True, check=True, timeout=60
    )
    tools: list[dict[str, Any]] = json.loads(completed.stdout)
    return tools


def call_forecast(driver: Any, weather: PageServer, hours: int) -> Any:
    open_page(driver, weather.url)
    card = browser.tool_card(driver, "get_weather_forecast")
    fill(card, "/city", "Seattle")
    fill(card, "/hours", hours)
    call(driver, card)
    return card


def assert_png(path: Path) -> None:
    data = path.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 1000, f"{path}: {len(data)} bytes"


# --- examples/weather.py --------------------------------------------------------------------


def test_page_lists_every_tool_of_the_server(driver: Any, weather: PageServer, tmp_path: Path) -> None:
    open_page(driver, weather.url)
    assert "weather" in text_of(one(driver, "h1#server-name"))
    tools = listed_tools(WEATHER)
    names = [element.get_attribute("data-tool") for element in every(driver, "section.tool[data-tool]")]
    assert sorted(names) == sorted(tool["name"] for tool in tools), names
    assert len(names) == len(set(names))
    for tool in tools:
        card = browser.tool_card(driver, tool["name"])
        assert text_of(one(card, ".description")).strip() == tool["description"]
        assert one(card, "form.call-form").get_attribute("data-tool") == tool["name"]
    assert "Protocol version" in text_of(one(driver, "#era legend"))
    eras = [" ".join(text_of(label).split()) for label in every(driver, "#era label")]
    assert eras[0] == "2026-07-28 — natural", eras
    assert {"2025-11-25 — wrapped", "2024-11-05 — text"} <= set(eras), eras
    assert one(driver, "#era-2026-07-28").is_selected()
    assert unlabelled_controls(driver) == []
    assert_png(screenshot(one(driver, "body"), tmp_path / "page.png"))
    assert console_errors(driver) == []


def test_call_shows_the_natural_value_and_the_modern_wire_result(
    driver: Any, weather: PageServer, tmp_path: Path
) -> None:
    card = call_forecast(driver, weather, hours=2)
    assert text_of(one(card, ".result-status")).strip() == "OK"
    assert natural_value(driver, card) == FORECAST_2
    result = wire_result(driver, card, "2026-07-28")
    assert result["structuredContent"] == FORECAST_2
    assert result.get("isError") is not True
    assert wire_listing(driver, card, "2026-07-28")["outputSchema"]["type"] == "array"
    assert_png(screenshot(card, tmp_path / "natural.png"))
    assert console_errors(driver) == []


def test_era_switch_shows_what_each_version_receives(driver: Any, weather: PageServer, tmp_path: Path) -> None:
    card = call_forecast(driver, weather, hours=2)
    wire_result(driver, card, "2026-07-28")

    set_era(driver, "2025-11-25")
    assert wire_result(driver, card, "2025-11-25")["structuredContent"] == {"result": FORECAST_2}
    listing = wire_listing(driver, card, "2025-11-25")
    assert listing["outputSchema"]["type"] == "object"
    assert listing["outputSchema"]["properties"]["result"]["type"] == "array"
    assert_png(screenshot(card, tmp_path / "wrapped.png"))

    set_era(driver, "2024-11-05")
    result = wire_result(driver, card, "2024-11-05")
    assert "structuredContent" not in result
    assert json.loads(result["content"][0]["text"]) == FORECAST_2
    assert "outputSchema" not in wire_listing(driver, card, "2024-11-05")
    assert_png(screenshot(card, tmp_path / "text.png"))

    set_era(driver, "2026-07-28")
    assert wire_result(driver, card, "2026-07-28")["structuredContent"] == FORECAST_2
    assert wire_listing(driver, card, "2026-07-28")["outputSchema"]["type"] == "array"
    assert natural_value(driver, card) == FORECAST_2
    assert console_errors(driver) == []


def test_nested_union_and_root_union_arguments(driver: Any, weather: PageServer, tmp_path: Path) -> None:
    open_page(driver, weather.url)
    card = browser.tool_card(driver, "convert_temperature")
    pick_branch(card, "/value", "fahrenheit")
    fill(card, "/value/fahrenheit", 212)
    assert call(driver, card) == "OK"
    assert natural_value(driver, card) == 100.0
    # Numbers are shown as the server sent them (100.0, not JavaScript's 100), in every era's view.
    assert text_of(one(card, ".natural-value")).strip() == "100.0"
    wire_result(driver, card, "2026-07-28")  # the era's view comes after the natural value: wait for it
    assert '"structuredContent":100.0,' in "".join(text_of(one(card, ".wire-result")).split())
    set_era(driver, "2025-11-25")
    wire_result(driver, card, "2025-11-25")
    assert '"structuredContent":{"result":100.0}' in "".join(text_of(one(card, ".wire-result")).split())
    set_era(driver, "2026-07-28")
    assert_png(screenshot(card, tmp_path / "union.png"))

    card = browser.tool_card(driver, "find_user")
    pick_branch(card, "", "name")
    fill(card, "/name", "Alice")
    assert call(driver, card) == "OK"
    assert natural_value(driver, card) == {"id": "u1", "name": "Alice", "home_city": "Seattle"}
    assert console_errors(driver) == []


def test_validation_error_marks_the_field_until_the_next_call(driver: Any, weather: PageServer, tmp_path: Path) -> None:
    card = call_forecast(driver, weather, hours=99)
    assert "isError" in text_of(one(card, ".result-status"))
    hours = control(card, "/hours")

    def marked() -> str:
        assert hours.get_attribute("aria-invalid") == "true"
        errors = every(card, ".field-error")
        assert len(errors) == 1, [text_of(error) for error in errors]
        message = text_of(errors[0])
        assert message.startswith("Invalid") and "24" in message, message
        assert errors[0].get_attribute("id") in (hours.get_attribute("aria-describedby") or "").split()
        return message

    eventually(driver, marked, what="the /hours control marked invalid")
    wait_until(driver, lambda: driver.switch_to.active_element == hours, what="/hours focused")
    assert_png(screenshot(card, tmp_path / "invalid.png"))

    fill(card, "/hours", 2)
    assert call(driver, card) == "OK"
    assert natural_value(driver, card) == FORECAST_2

    def cleared() -> None:
        assert control(card, "/hours").get_attribute("aria-invalid") in (None, "false")
        assert [text_of(error) for error in every(card, ".field-error") if error.is_displayed()] == []

    eventually(driver, cleared, what="the mark cleared by the valid call")
    assert console_errors(driver) == []


# --- tests/support/page_app.py: hostile text, rich arguments, resources and prompts ----------


def shows(driver: Any, scope: Any, selector: str, text: str) -> None:
    """Wait until the one element at ``selector`` in ``scope`` holds exactly ``text``."""

    def holds() -> None:
        assert text_of(one(scope, selector)) == text

    eventually(driver, holds, what=f"{selector} holding {text!r}")


def no_foreign_scripts(driver: Any, server: PageServer) -> None:
    assert driver.execute_script("return typeof window.__pwned") == "undefined"
    sources = driver.execute_script("return Array.from(document.scripts, s => s.src)")
    assert sources == [server.url + "/page.js"], sources


def test_server_text_is_shown_as_text_never_run(driver: Any, hostile: PageServer) -> None:
    open_page(driver, hostile.url)
    card = browser.tool_card(driver, "hostile_markup")
    description = one(card, ".description")
    assert text_of(description).strip() == page_app.HOSTILE_DESCRIPTION
    assert "<script>" in description.text
    assert every(driver, 'img[src="x"], [onerror]') == []
    no_foreign_scripts(driver, hostile)

    assert call(driver, card) == "OK"
    shown = eventually(driver, lambda: one(card, ".content-blocks .block-text"), what="the text block")
    assert text_of(shown) == page_app.HOSTILE_RESULT
    assert "<script>" in shown.text
    assert every(card, ".content-blocks b") == []
    no_foreign_scripts(driver, hostile)

    resource = one(driver, f'section.resource[data-uri="{page_app.RESOURCE_URI}"]')
    assert page_app.RESOURCE_NAME in resource.text
    assert every(resource, "em") == []
    assert console_errors(driver) == []


def test_image_and_links_in_a_result(driver: Any, hostile: PageServer) -> None:
    open_page(driver, hostile.url)
    card = browser.tool_card(driver, "media")
    assert call(driver, card) == "OK"
    image = eventually(driver, lambda: one(card, "img.block-image"), what="the image block")
    assert (image.get_attribute("src") or "").startswith("data:image/png;base64,")
    wait_until(driver, lambda: driver.execute_script("return arguments[0].naturalWidth", image) == 16, what="loaded")
    assert image.get_attribute("alt") is not None
    assert every(driver, 'a[href^="javascript" i]') == []
    assert page_app.JAVASCRIPT_URI in text_of(one(card, ".content-blocks"))
    links = every(card, "a.block-link")
    assert [link.get_attribute("href") for link in links] == [page_app.HTTPS_URI]
    no_foreign_scripts(driver, hostile)
    assert console_errors(driver) == []


def test_nested_objects_and_arrays_of_objects_round_trip(driver: Any, hostile: PageServer, tmp_path: Path) -> None:
    open_page(driver, hostile.url)
    card = browser.tool_card(driver, "plan_trip")
    fill(card, "/traveller/name", "Ada Lovelace")
    fill(card, "/traveller/email", "ada@example.com")
    fill(card, "/traveller/age", 36)
    fill(card, "/traveller/address/street", "12 St James's Square")
    fill(card, "/traveller/address/city", "London")
    add_item(card, "/stops")
    add_item(card, "/stops")
    fill(card, "/stops/0/city", "Paris")
    fill(card, "/stops/0/arrive", "2026-08-01")
    fill(card, "/stops/0/nights", 3)
    fill(card, "/stops/1/city", "Vienna")
    fill(card, "/stops/1/arrive", "2026-08-04")
    fill(card, "/refundable", True)
    fill(card, "/budget", 1250.5)
    assert unlabelled_controls(driver) == []
    assert_png(screenshot(card, tmp_path / "form.png"))
    assert call(driver, card) == "OK"
    assert natural_value(driver, card) == {
        "traveller": {
            "name": "Ada Lovelace",
            "email": "ada@example.com",
            "age": 36,
            "address": {"street": "12 St James's Square", "city": "London", "postcode": None},
        },
        "stops": [
            {"city": "Paris", "arrive": "2026-08-01", "nights": 3},
            {"city": "Vienna", "arrive": "2026-08-04", "nights": 1},
        ],
        "refundable": True,
        "insurance": False,
        "budget": 1250.5,
        "notes": None,
    }
    assert console_errors(driver) == []


def test_resources_templates_and_prompts(driver: Any, hostile: PageServer) -> None:
    open_page(driver, hostile.url)

    resource = browser.opened(driver, f'section.resource[data-uri="{page_app.RESOURCE_URI}"]')
    one(resource, "button.read").click()
    shows(driver, resource, ".resource-contents pre", page_app.RESOURCE_TEXT)
    assert every(resource, ".resource-contents b") == []

    template = browser.opened(driver, f'section.template[data-uri-template="{page_app.TEMPLATE}"]')
    fill(template, "note_id", "hello world")
    one(template, "button.read").click()
    # RFC 6570 simple expansion percent-encodes the space; the server decodes it once (hello world).
    shows(driver, template, ".resource-contents pre", "Note hello world")

    prompt = browser.opened(driver, 'section.prompt[data-prompt="greet"]')
    fill(prompt, "name", "Ada")
    one(prompt, "button.get").click()
    message = eventually(driver, lambda: one(prompt, ".prompt-messages .message"), what="the prompt's message")
    assert "user" in text_of(message)
    assert "Say hello to Ada." in text_of(message)
    assert console_errors(driver) == []


def no_pwn(driver: Any) -> None:
    """Nothing of ``page_app.MARK`` became an element, and nothing it carries ran."""
    assert every(driver, ".pwn") == []
    assert every(driver, 'img[src="x"], img[src^="javascript" i], [onerror]') == []
    assert driver.execute_script("return typeof window.__pwned") == "undefined"


def test_markup_anywhere_stays_text_and_argument_names_cannot_break_the_page(driver: Any, hostile: PageServer) -> None:
    open_page(driver, hostile.url)
    assert page_app.MARK in text_of(one(driver, "#instructions"))
    card = browser.tool_card(driver, "hostile_everywhere")  # the page rendered: clobber's argument names broke nothing
    assert page_app.MARK in card.text
    icons = [icon.get_attribute("src") for icon in every(card, "img.icon")]
    assert icons == [page_app.RED_DOT_ICON]
    no_pwn(driver)

    fill(card, "/label", "x")  # too short: the server's message names the field
    assert call(driver, card) == "isError"
    error = eventually(driver, lambda: one(card, ".field-error"), what="the field's error")
    assert control(card, "/label").get_attribute("aria-invalid") == "true"
    assert text_of(error).startswith("Invalid:")
    no_pwn(driver)
    fill(card, "/label", "long enough")
    fill(card, "/pick", "<b class='pwn'>a</b>")
    assert call(driver, card) == "OK"
    shows(driver, card, ".content-blocks .block-text", "long enough <b class='pwn'>a</b>")
    assert page_app.MARK in text_of(one(card, ".content-blocks"))
    no_pwn(driver)

    prompt = browser.opened(driver, 'section.prompt[data-prompt="clobber"]')
    fill(prompt, "addEventListener", "one")
    fill(prompt, "append", "two")
    one(prompt, "button.get").click()
    message = eventually(driver, lambda: one(prompt, ".prompt-messages .message"), what="the prompt's message")
    assert f"one and two {page_app.MARK}" in text_of(message)
    no_pwn(driver)
    assert console_errors(driver) == []


# --- first paint, filter, collapsed cards, union labels (issue #37, item 7) -------------------


@contextlib.contextmanager
def blocked(driver: Any, *patterns: str) -> Iterator[None]:
    """Requests to URLs matching ``patterns`` fail in the browser (DevTools), and nothing comes from its cache."""
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd("Network.setCacheDisabled", {"cacheDisabled": True})
    driver.execute_cdp_cmd("Network.setBlockedURLs", {"urls": list(patterns)})
    try:
        yield
    finally:
        driver.execute_cdp_cmd("Network.setBlockedURLs", {"urls": []})
        driver.execute_cdp_cmd("Network.setCacheDisabled", {"cacheDisabled": False})
        driver.execute_cdp_cmd("Network.disable", {})
        console_errors(driver)  # the blocked loads, logged as errors on purpose


def test_the_first_paint_says_loading_and_a_failed_load_says_so(driver: Any, weather: PageServer) -> None:
    # Without its script (here: blocked), the page as served is what a browser paints first.
    with blocked(driver, "*/docs/page.js"):
        driver.get(weather.url)
        wait_until(driver, lambda: driver.execute_script("return document.readyState") == "complete", what="loaded")
        loading = one(driver, "#items #loading")
        assert loading.is_displayed()
        assert text_of(loading).startswith("Loading")
        assert loading.get_attribute("role") == "status"
        assert one(driver, "#items").get_attribute("aria-busy") == "true"
        assert every(driver, "section.card") == []

    # The data endpoint failing: the Loading… state gives way to an error state, never stays.
    for pattern, error in (("*/mcp", "Could not list the server's tools"), ("*/docs/config.json", "Could not load")):
        with blocked(driver, pattern):
            driver.get(weather.url)

            def failed(error: str = error) -> None:
                assert error in text_of(one(driver, "#page-error")), text_of(one(driver, "#page-error"))
                assert one(driver, "#page-error").is_displayed()
                assert every(driver, "#loading") == []
                assert one(driver, "#items .load-failed").is_displayed()
                assert one(driver, "#items").get_attribute("aria-busy") is None

            eventually(driver, failed, what=f"the error state with {pattern} failing")

    # And when the data arrives, it replaces the Loading… state.
    open_page(driver, weather.url)
    assert every(driver, "#loading") == []
    assert one(driver, "#items").get_attribute("aria-busy") is None
    assert console_errors(driver) == []


def visible_tools(driver: Any) -> list[str]:
    return [str(card.get_attribute("data-tool")) for card in every(driver, "section.tool") if card.is_displayed()]


def test_the_filter_finds_tools_by_name_title_and_description(driver: Any, weather: PageServer) -> None:
    open_page(driver, weather.url)
    tools = listed_tools(WEATHER)
    assert len(visible_tools(driver)) == len(tools) == 18
    box = one(driver, "#filter")
    assert box.is_displayed()
    assert unlabelled_controls(driver) == []

    def expect(names: list[str], status: str) -> None:
        def shown() -> None:
            assert sorted(visible_tools(driver)) == sorted(names)
            assert text_of(one(driver, "#filter-status")) == status
            links = [text_of(a) for a in every(driver, "nav li a") if a.is_displayed()]
            assert len(links) == len(names), links

        eventually(driver, shown, what=f"the tools {names}")

    box.send_keys("temperature")  # in names and descriptions
    wanted = [t["name"] for t in tools if "temperature" in f"{t['name']}\n{t.get('description', '')}".lower()]
    assert 1 < len(wanted) < 18, wanted
    expect(wanted, f"{len(wanted)} of 18 shown")

    box.clear()
    box.send_keys("CONVERT temp")  # every word, any case
    expect(["convert_temperature"], "1 of 18 shown")

    box.clear()
    box.send_keys("no such tool")
    expect([], "Nothing matches “no such tool”.")
    assert not one(driver, "#group-tools").is_displayed()

    box.clear()
    box.send_keys(" ")
    expect([t["name"] for t in tools], "")
    assert console_errors(driver) == []


def test_cards_start_collapsed_and_expand_by_click_keyboard_and_link(driver: Any, weather: PageServer) -> None:
    from selenium.webdriver.common.keys import Keys

    open_page(driver, weather.url)
    for card in every(driver, "section.card"):
        toggle = one(card, ".card-head h2 button.toggle")
        assert toggle.get_attribute("aria-expanded") == "false"
        panel = one(card, ".card-body")
        assert toggle.get_attribute("aria-controls") == panel.get_attribute("id")
        assert not panel.is_displayed()
        assert one(card, ".description").is_displayed()  # what the tool does, in one line

    card = one(driver, 'section.tool[data-tool="get_weather_forecast"]')
    toggle = one(card, "button.toggle")
    panel = one(card, ".card-body")
    toggle.click()
    wait_until(driver, lambda: panel.is_displayed() and toggle.get_attribute("aria-expanded") == "true", what="open")
    assert control(card, "/city").is_displayed()
    toggle.click()
    wait_until(driver, lambda: not panel.is_displayed(), what="closed")
    assert toggle.get_attribute("aria-expanded") == "false"

    # From the keyboard: Tab to the title, Enter opens, Space closes.
    driver.execute_script("arguments[0].focus()", one(driver, "#filter"))
    one(driver, "#filter").send_keys(Keys.TAB, Keys.TAB, Keys.TAB)  # Expand all, Collapse all, the first card
    first = every(driver, "section.card")[0]
    assert driver.switch_to.active_element == one(first, "button.toggle")
    driver.switch_to.active_element.send_keys(Keys.ENTER)
    wait_until(driver, lambda: one(first, ".card-body").is_displayed(), what="opened by Enter")
    driver.switch_to.active_element.send_keys(Keys.SPACE)
    wait_until(driver, lambda: not one(first, ".card-body").is_displayed(), what="closed by Space")

    # Expand all and collapse all.
    one(driver, "#expand-all").click()
    wait_until(driver, lambda: all(p.is_displayed() for p in every(driver, ".card-body")), what="all open")
    one(driver, "#collapse-all").click()
    wait_until(driver, lambda: not any(p.is_displayed() for p in every(driver, ".card-body")), what="all closed")

    # A deep link opens its card, as does the contents' link to it.
    open_page(driver, weather.url + "#tool-find_user")
    linked = one(driver, 'section.tool[data-tool="find_user"]')
    wait_until(driver, lambda: one(linked, ".card-body").is_displayed(), what="#tool-find_user opened")
    assert [p.is_displayed() for p in every(driver, ".card-body")].count(True) == 1
    one(driver, 'nav a[href="#tool-get_sky"]').click()
    sky = one(driver, 'section.tool[data-tool="get_sky"]')
    wait_until(driver, lambda: one(sky, ".card-body").is_displayed(), what="#tool-get_sky opened")
    driver.get("about:blank")
    assert console_errors(driver) == []


def test_eighteen_collapsed_tools_fit_in_a_screen_or_two(driver: Any, weather: PageServer, tmp_path: Path) -> None:
    size = driver.get_window_size()
    driver.set_window_size(1280, 800)
    try:
        open_page(driver, weather.url)
        assert len(every(driver, "section.tool")) == 18
        height = driver.execute_script("return document.documentElement.scrollHeight")
        assert height < 2500, f"the page with 18 collapsed tools is {height} px high"
        assert_png(screenshot(one(driver, "body"), tmp_path / "collapsed.png"))
        one(driver, "#expand-all").click()
        wait_until(driver, lambda: all(p.is_displayed() for p in every(driver, ".card-body")), what="all open")
        expanded = driver.execute_script("return document.documentElement.scrollHeight")
        assert expanded > 4 * height, (expanded, height)  # what the collapse saves
    finally:
        driver.set_window_size(size["width"], size["height"])
    assert console_errors(driver) == []


def branch_labels(card: Any, path: str) -> list[str]:
    picker = one(card, f"select.branch-picker[data-path={browser.css_string(path)}]")
    return [text_of(option) for option in every(picker, "option")]


def test_union_branches_are_named_by_their_model(driver: Any, weather: PageServer) -> None:
    open_page(driver, weather.url)
    assert branch_labels(browser.tool_card(driver, "convert_temperature"), "/value") == ["Celsius", "Fahrenheit"]
    assert branch_labels(browser.tool_card(driver, "find_user"), "") == ["ById", "ByName"]
    assert console_errors(driver) == []
