"""A real browser against a real server: the tools page's test rig (and scripts/screenshots').

    with serve_page(WEATHER) as page, chromium() as driver:
        open_page(driver, page.url)
        card = tool_card(driver, "get_weather_forecast")
        fill(card, "/city", "Seattle")
        call(driver, card)

``serve_page`` runs ``python -m toolkit run APP --transport http --port P --docs`` on a free
127.0.0.1 port, waits until the page answers and always stops it; ``chromium`` is a headless
Chromium driven by Selenium. The fixtures ``browser`` (one Chromium for the module) and
``page_servers`` (one server per app for the module) wrap them for tests: a test module imports
``browser_fixture`` and ``page_servers_fixture``, and asks for them by those names.

Chromium and chromedriver come from Debian's apt, Selenium from requirements/browser.lock:
``scripts/browser --install-only`` installs them. Without them a test skips, or fails under
``TOOLKIT_TESTS_STRICT=1``. Nothing is downloaded here: Selenium gets the browser's and the
driver's paths, so Selenium Manager never runs (and ``SE_OFFLINE=true`` would stop it if it did).

The helpers follow the DOM contract of the page (``src/toolkit/_transports/http/page/``) and wait
with deadlines (``eventually``), never with fixed sleeps.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import pytest
from tests.support.processes import LOCALHOST, REPO, free_port, stop

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver
    from selenium.webdriver.remote.webelement import WebElement

INSTALL_HINT = "run scripts/browser --install-only"
WEATHER = REPO / "examples" / "weather.py"
PAGE_APP = REPO / "tests" / "support" / "page_app.py"
DOCS_PATH = "/docs"
WINDOW = (1280, 1000)
WAIT = 10.0
"""Seconds any one expected change on the page may take."""

T = TypeVar("T")


def missing(what: str) -> NoReturn:
    """Skip the test, or fail it under ``TOOLKIT_TESTS_STRICT`` (where scripts/test installed everything)."""
    if os.environ.get("TOOLKIT_TESTS_STRICT"):  # scripts/test installs the browser first
        pytest.fail(what)
    pytest.skip(what)


def browser_paths() -> tuple[str, str]:
    """Chromium's and chromedriver's paths, once Selenium imports; skips or fails without them."""
    chromium_path = shutil.which("chromium")
    driver_path = shutil.which("chromedriver")
    if chromium_path is None or driver_path is None:
        missing(f"chromium and chromedriver (Debian's chromium, chromium-driver) are not installed: {INSTALL_HINT}")
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing(f"selenium is not installed in this environment: {INSTALL_HINT}")
    return chromium_path, driver_path


# --- the server ---------------------------------------------------------------------------


@dataclass
class PageServer:
    """A running ``toolkit run APP --docs``: its page at ``url``, its MCP endpoint at ``mcp_url``."""

    process: subprocess.Popen[bytes]
    port: int
    log: Path

    @property
    def base_url(self) -> str:
        return f"http://{LOCALHOST}:{self.port}"

    @property
    def url(self) -> str:
        return self.base_url + DOCS_PATH

    @property
    def mcp_url(self) -> str:
        return self.base_url + "/mcp"

    def output(self) -> str:
        return self.log.read_text("utf-8", "replace")


def _wait_until_answering(server: PageServer, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if server.process.poll() is not None:
            raise AssertionError(f"the server exited with code {server.process.returncode}:\n{server.output()}")
        try:
            with urllib.request.urlopen(server.url, timeout=2):
                return
        except urllib.error.HTTPError as error:  # it listens, but serves no page there
            raise AssertionError(f"{server.url} answered {error.code}:\n{server.output()}") from error
        except OSError:
            pass  # not listening yet
        if time.monotonic() > deadline:
            raise AssertionError(f"{server.url} did not answer within {timeout:g} s:\n{server.output()}")
        time.sleep(0.05)


@contextlib.contextmanager
def serve_page(app: str | os.PathLike[str], *args: str, timeout: float = 30.0) -> Iterator[PageServer]:
    """``python -m toolkit run APP --transport http --port P --docs`` on 127.0.0.1, for the ``with`` block."""
    port = free_port()
    argv = [sys.executable, "-m", "toolkit", "run", str(app), "--transport", "http"]
    argv += ["--host", LOCALHOST, "--port", str(port), "--docs", *args]
    with tempfile.NamedTemporaryFile(prefix="toolkit-page-", suffix=".log") as log:
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, cwd=REPO)
        try:
            server = PageServer(process, port, Path(log.name))
            _wait_until_answering(server, timeout)
            yield server
        finally:
            stop(process)


# --- the browser --------------------------------------------------------------------------


@contextlib.contextmanager
def chromium(*, window: tuple[int, int] = WINDOW) -> Iterator[WebDriver]:
    """A headless Chromium (Debian's) driven through Debian's chromedriver; quit at the end."""
    chromium_path, driver_path = browser_paths()
    os.environ["SE_OFFLINE"] = "true"  # belt and braces: Selenium Manager must never download anything
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium_path
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        f"--window-size={window[0]},{window[1]}",
        "--lang=en-US",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-default-apps",
        "--disable-sync",
    ):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(executable_path=driver_path))
    try:
        driver.set_page_load_timeout(30)
        driver.set_script_timeout(30)
        yield driver
    finally:
        driver.quit()


# Named apart from their functions, so a test module imports them without shadowing its arguments.
@pytest.fixture(scope="module", name="browser")
def browser_fixture() -> Iterator[WebDriver]:
    """One headless Chromium for the test module."""
    with chromium() as driver:
        yield driver


@pytest.fixture(scope="module", name="page_servers")
def page_servers_fixture() -> Iterator[Callable[[str | os.PathLike[str]], PageServer]]:
    """``page_servers(APP)``: the module's server for APP (started on first use, stopped at the end)."""
    started: dict[str, PageServer] = {}
    with contextlib.ExitStack() as stack:

        def serve(app: str | os.PathLike[str]) -> PageServer:
            key = os.fspath(app)
            if key not in started:
                started[key] = stack.enter_context(serve_page(app))
            return started[key]

        yield serve


# --- waiting ------------------------------------------------------------------------------


def eventually(driver: WebDriver, check: Callable[[], T], *, timeout: float = WAIT, what: str = "") -> T:
    """``check()``'s value once it stops raising (an assertion, a missing element, bad JSON), or the
    last failure after ``timeout`` seconds."""
    from selenium.common.exceptions import TimeoutException, WebDriverException
    from selenium.webdriver.support.wait import WebDriverWait

    last: Exception | None = None
    found: list[T] = []

    def attempt(_: object) -> bool:
        nonlocal last
        try:
            found.append(check())
        except (AssertionError, WebDriverException, ValueError, KeyError, IndexError, TypeError) as error:
            last = error
            return False
        return True

    try:
        WebDriverWait(driver, timeout, poll_frequency=0.05).until(attempt)
    except TimeoutException:
        label = f" ({what})" if what else ""
        raise AssertionError(f"still failing after {timeout:g} s{label}: {last!r}") from last
    return found[-1]


def wait_until(driver: WebDriver, predicate: Callable[[], bool], *, timeout: float = WAIT, what: str = "") -> None:
    """Wait until ``predicate()`` is true (see ``eventually``)."""

    def check() -> None:
        assert predicate(), what or "not yet"

    eventually(driver, check, timeout=timeout, what=what)


# --- the page's DOM: tool cards, their forms and results, the era switcher -----------------


def css_string(value: str) -> str:
    """``value`` as a quoted CSS string, for attribute selectors."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\a ") + '"'


def text_of(element: WebElement) -> str:
    """The element's ``textContent`` (also inside closed ``<details>`` or hidden parents)."""
    return str(element.get_attribute("textContent") or "")


def json_of(element: WebElement) -> Any:
    return json.loads(text_of(element))


def one(scope: WebDriver | WebElement, selector: str) -> WebElement:
    from selenium.webdriver.common.by import By

    found = scope.find_elements(By.CSS_SELECTOR, selector)
    assert len(found) == 1, f"{len(found)} elements match {selector!r}"
    return found[0]


def every(scope: WebDriver | WebElement, selector: str) -> list[WebElement]:
    from selenium.webdriver.common.by import By

    return scope.find_elements(By.CSS_SELECTOR, selector)


class PageError(Exception):
    """The page reported an error of its own (``#page-error``) instead of listing anything."""


def open_page(driver: WebDriver, url: str) -> None:
    """Load the page afresh and wait until it lists tools; fails at once if it shows a page error."""
    driver.get(url)

    def listed() -> None:
        errors = [text_of(element).strip() for element in every(driver, "#page-error")]
        if errors and errors[0]:
            raise PageError(f"#page-error: {errors[0]}")
        assert every(driver, "section.tool[data-tool]"), "no section.tool[data-tool] yet"

    eventually(driver, listed, what="the page lists its tools")


def opened(driver: WebDriver, selector: str) -> WebElement:
    """The one card at ``selector``, expanded by a click on its title (the page shows cards collapsed)."""
    card = one(driver, selector)
    toggle = one(card, ".card-head button.toggle")
    if toggle.get_attribute("aria-expanded") != "true":
        toggle.click()
    wait_until(driver, lambda: one(card, ".card-body").is_displayed(), what=f"{selector} expanded")
    return card


def tool_card(driver: WebDriver, name: str) -> WebElement:
    """The tool's card, expanded."""
    return opened(driver, f"section.tool[data-tool={css_string(name)}]")


def control(scope: WebElement, pointer: str) -> WebElement:
    """The form control for the argument at JSON Pointer ``pointer`` (not a branch picker)."""
    name = css_string(pointer)
    return one(scope, f"input[name={name}], textarea[name={name}], select[name={name}]:not(.branch-picker)")


def fill(scope: WebElement, pointer: str, value: Any) -> WebElement:
    """Set the argument at ``pointer`` the way a user would: type, tick, choose."""
    from selenium.webdriver.support.select import Select

    element = control(scope, pointer)
    tag = element.tag_name.lower()
    kind = (element.get_attribute("type") or "").lower()
    if tag == "select":
        menu = Select(element)
        wanted = json.dumps(value)
        by_value = [option for option in menu.options if option.get_attribute("value") == wanted]
        if by_value:  # clicked rather than select_by_value: that builds a CSS selector from the value
            if not by_value[0].is_selected():
                by_value[0].click()
        else:
            menu.select_by_visible_text(str(value).lower() if isinstance(value, bool) else str(value))
    elif kind == "checkbox":
        if element.is_selected() != bool(value):
            element.click()
    elif kind in ("date", "datetime-local", "time", "month", "week", "color", "range"):
        # The typed form of these depends on the browser's locale; a user's pick ends as this value.
        element.parent.execute_script(
            "const e = arguments[0]; e.value = arguments[1];"
            "e.dispatchEvent(new Event('input', {bubbles: true}));"
            "e.dispatchEvent(new Event('change', {bubbles: true}));",
            element,
            str(value),
        )
    else:
        element.clear()
        element.send_keys(str(value))
    return element


def pick_branch(scope: WebElement, path: str, label: str) -> None:
    """Choose the union branch whose option text mentions ``label`` in the picker at ``path``."""
    from selenium.webdriver.support.select import Select

    menu = Select(one(scope, f"select.branch-picker[data-path={css_string(path)}]"))
    matches = [option for option in menu.options if label.lower() in option.text.lower()]
    assert len(matches) == 1, f"{label!r} names {len(matches)} of {[option.text for option in menu.options]}"
    menu.select_by_visible_text(matches[0].text)


def add_item(scope: WebElement, path: str) -> None:
    one(scope, f"button[data-add={css_string(path)}]").click()


def call(driver: WebDriver, card: WebElement) -> str:
    """Click the card's Call button; the ``.result-status`` text of the new result."""
    # Blank the last result first, so that it cannot pass for the new one.
    driver.execute_script(
        "for (const e of arguments[0].querySelectorAll('.result-status, .natural-value, .wire-result'))"
        " e.textContent = '';",
        card,
    )
    one(card, "button.call").click()
    return eventually(driver, lambda: _status(card), what="a result")


def _status(card: WebElement) -> str:
    status = text_of(one(card, ".result-status")).strip()
    assert status, "no result status yet"
    return status


def natural_value(driver: WebDriver, card: WebElement) -> Any:
    return eventually(driver, lambda: json_of(one(card, ".natural-value")), what="the natural value")


def wire_result(driver: WebDriver, card: WebElement, version: str) -> dict[str, Any]:
    """The ``.wire-result`` JSON (the CallToolResult) once it shows ``version``'s view."""
    return _wire_view(driver, card, ".wire-result", version)


def wire_listing(driver: WebDriver, card: WebElement, version: str) -> dict[str, Any]:
    """The ``.wire-listing`` JSON (the tools/list entry) once it shows ``version``'s view."""
    return _wire_view(driver, card, ".wire-listing", version)


def _wire_view(driver: WebDriver, card: WebElement, selector: str, version: str) -> dict[str, Any]:
    def shown() -> dict[str, Any]:
        element = one(card, selector)
        assert element.get_attribute("data-version") == version, element.get_attribute("data-version")
        value = json_of(element)
        assert isinstance(value, dict), f"not a JSON object: {text_of(element)[:200]!r}"
        return value

    return eventually(driver, shown, what=f"{selector} in the {version} view")


def set_era(driver: WebDriver, version: str) -> None:
    """Choose the protocol version in the page-wide switcher, by its label, and wait until every
    listing on the page shows it."""
    radio = one(driver, f"#era input[type=radio][value={css_string(version)}]")
    label = every(driver, f"label[for={css_string(radio.get_attribute('id') or '')}]")
    (label[0] if label and label[0].is_displayed() else radio).click()
    assert radio.is_selected(), f"the {version} radio is not selected"

    def all_switched() -> None:
        listings = every(driver, ".wire-listing")
        assert listings, "no .wire-listing on the page"
        stale = [e.get_attribute("data-version") for e in listings if e.get_attribute("data-version") != version]
        assert not stale, f"{len(stale)} listings still show {set(stale)}"
        for element in listings:
            json_of(element)

    eventually(driver, all_switched, what=f"every listing in the {version} view")


def unlabelled_controls(driver: WebDriver) -> list[str]:
    """The page's form controls that have no label (``<label for>``, ``aria-label`` or ``aria-labelledby``)."""
    found: list[str] = driver.execute_script(
        "return Array.from(document.querySelectorAll('input, select, textarea'))"
        ".filter(e => !(e.labels && e.labels.length) && !e.getAttribute('aria-label')"
        " && !e.getAttribute('aria-labelledby'))"
        ".map(e => e.outerHTML.slice(0, 200));"
    )
    return found


def console_errors(driver: WebDriver) -> list[str]:
    """SEVERE browser console entries since the last look (script errors, CSP violations, failed loads)."""
    entries = driver.get_log("browser")
    return [f"{entry.get('source')}: {entry.get('message')}" for entry in entries if entry.get("level") == "SEVERE"]


def screenshot(element: WebElement, path: Path) -> Path:
    """Save a PNG of ``element`` (scrolled into view) at ``path``."""
    element.parent.execute_script("arguments[0].scrollIntoView({block: 'start'})", element)
    assert element.screenshot(str(path)), f"no screenshot of {element.tag_name} at {path}"
    return path
