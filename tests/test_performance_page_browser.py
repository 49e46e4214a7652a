"""The performance page in a real browser: the built docs, headless Chromium, a 1280 px wide window.

The page is toolkit's strongest argument, and it is read on laptops: at 1280 px nothing on it may
need sideways scrolling (not the page, not a table, a code block or a chart inside its column), its
charts load, and each colour scheme shows its own variant of every chart (mkdocs-material's
``#only-light`` / ``#only-dark``). The site is built as CI builds it (``mkdocs build --strict``) into
a temporary directory and served by ``python -m http.server`` on a free 127.0.0.1 port, always
stopped. The rig is tests/browser.py; without Chromium, chromedriver or Selenium
(``scripts/browser --install-only``) the tests skip, or fail under ``TOOLKIT_TESTS_STRICT=1``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from tests.browser import WINDOW, browser_fixture, screenshot, wait_until  # noqa: F401 (the fixture browser)
from tests.support.processes import LOCALHOST, REPO, free_port, stop, wait_for_port

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

pytestmark = pytest.mark.slow

# Everything in the article that could be wider than its column, and how far it reaches: its own
# scrolling (content wider than its box) and its right edge against the article's.
OVERFLOWS = """
const article = document.querySelector("article.md-content__inner");
// The content column: mkdocs-material lets a table's scrolling box reach into the article's margins.
const right = article.parentElement.getBoundingClientRect().right;
const out = [];
const wide = "table, .md-typeset__scrollwrap, .md-typeset__table, pre, pre > code, img, svg, figure, p, li";
for (const el of article.querySelectorAll(wide)) {
  if (el.offsetParent === null) continue;  // not shown (a chart of the other colour scheme)
  const box = el.getBoundingClientRect();
  const what = el.tagName.toLowerCase() + (el.className ? "." + String(el.className).split(" ")[0] : "")
    + " " + (el.getAttribute("src") || el.textContent.trim().slice(0, 60));
  if (el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX !== "visible")
    out.push(`${what}: scrolls sideways (${el.scrollWidth} px of content in ${el.clientWidth} px)`);
  if (box.right > right + 1)
    out.push(`${what}: reaches ${Math.round(box.right)} px, past the column's ${Math.round(right)} px`);
}
return out;
"""
CHARTS = """
return [...document.querySelectorAll("article img")]
  .filter((img) => img.getAttribute("src").includes("assets/bench/"))
  .map((img) => ({
    src: img.getAttribute("src"),
    loaded: img.complete && img.naturalWidth > 0,
    shown: img.offsetParent !== null && img.getBoundingClientRect().width > 0,
    width: img.getBoundingClientRect().width,
  }));
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The docs, built as CI builds them."""
    out = tmp_path_factory.mktemp("site")
    run = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(out)],
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def served(site: Path) -> Iterator[str]:
    """The built site over HTTP on a free 127.0.0.1 port: its base URL."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", LOCALHOST, "--directory", str(site)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, timeout=30.0, process=process)
        yield f"http://{LOCALHOST}:{port}"
    finally:
        stop(process)


def _open(driver: WebDriver, url: str) -> None:
    driver.get(url)
    wait_until(
        driver,
        lambda: driver.execute_script("return document.readyState === 'complete'"),
        what="the page loaded",
    )


def _charts(driver: WebDriver) -> list[dict[str, Any]]:
    charts: list[dict[str, Any]] = driver.execute_script(CHARTS)
    return charts


@pytest.mark.timeout(300)  # the first test builds the site (mkdocs build --strict) on a busy machine
def test_the_performance_page_fits_1280_px_without_sideways_scrolling(
    browser: WebDriver, served: str, tmp_path: Path
) -> None:
    _open(browser, f"{served}/performance/")
    assert browser.execute_script("return window.innerWidth") == WINDOW[0]
    wait_until(browser, lambda: all(chart["loaded"] for chart in _charts(browser)), what="every chart loaded")
    scroll = browser.execute_script("const s = document.scrollingElement; return [s.scrollWidth, s.clientWidth];")
    assert scroll[0] <= scroll[1], f"the page scrolls sideways: {scroll[0]} px wide in a {scroll[1]} px window"
    assert browser.execute_script(OVERFLOWS) == []
    # The page leads with its charts: the first picture comes before the first table.
    order = browser.execute_script(
        "const a = document.querySelector('article');"
        "const img = a.querySelector('img[src*=\"assets/bench/\"]'), table = a.querySelector('table');"
        "return img.compareDocumentPosition(table) & Node.DOCUMENT_POSITION_FOLLOWING;"
    )
    assert order, "a chart comes before the first table"
    shot = screenshot(browser.find_element("css selector", "article.md-content__inner"), tmp_path / "performance.png")
    assert shot.stat().st_size > 0


@pytest.mark.timeout(300)
def test_each_colour_scheme_shows_its_own_charts(browser: WebDriver, served: str) -> None:
    _open(browser, f"{served}/performance/")
    wait_until(browser, lambda: all(chart["loaded"] for chart in _charts(browser)), what="every chart loaded")
    for scheme, shown, hidden in (("default", "-light.svg", "-dark.svg"), ("slate", "-dark.svg", "-light.svg")):
        browser.execute_script("document.body.setAttribute('data-md-color-scheme', arguments[0])", scheme)
        charts = _charts(browser)
        assert charts, "the page has charts"
        for chart in charts:
            name = chart["src"].split("#")[0]
            if name.endswith(shown):
                assert chart["shown"] and chart["width"] > 400, (scheme, chart)
            else:
                assert name.endswith(hidden) and not chart["shown"], (scheme, chart)
        assert browser.execute_script(OVERFLOWS) == [], scheme
