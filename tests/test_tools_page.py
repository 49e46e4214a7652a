"""The tools page's server side over real HTTP: off by default, its files and headers, the
Host/Origin checks, mounting, and ``shape`` — one call's result as each protocol version sees it.

The page itself, in a real browser, is ``tests/test_tools_page_browser.py``.
"""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.routing import Mount

from http_support import cli_server, serve
from toolkit import Audio, Image, ResourceLink, Server, ToolResult
from toolkit._transports.http.docs import ToolsPage
from toolkit.auth import AccessToken
from toolkit.testing import Client

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples"))
import weather  # noqa: E402

VERSIONS = ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]
PAGE_FILES = ("page.html", "page.js", "page.css")


@contextlib.asynccontextmanager
async def page_client(target: Any, **options: Any) -> Any:
    async with serve(target, **options) as running, httpx.AsyncClient(base_url=running.base) as http:
        yield http


async def test_the_page_is_off_unless_asked_for() -> None:
    for options in ({}, {"docs": False}):
        async with page_client(weather.server, **options) as http:
            for path in ("/docs", "/docs/page.js", "/docs/config.json"):
                assert (await http.get(path)).status_code == 404, (options, path)


def test_the_cli_serves_the_page_only_with_docs() -> None:
    example = str(ROOT / "examples" / "weather.py")
    with cli_server(example) as off:
        assert httpx.get(off.base + "/docs").status_code == 404
    with cli_server(example, "--docs") as on:
        page = httpx.get(on.base + "/docs")
        assert page.status_code == 200
        assert 'src="/docs/page.js"' in page.text
    with cli_server(example, "--docs-path", "/tools") as custom:
        assert httpx.get(custom.base + "/tools").status_code == 200
        assert httpx.get(custom.base + "/docs").status_code == 404


async def test_the_page_its_files_and_headers() -> None:
    async with page_client(weather.server, docs=True) as http:
        page = await http.get("/docs")
        assert page.status_code == 200
        assert page.headers["content-type"] == "text/html; charset=utf-8"
        policy = page.headers["content-security-policy"]
        assert "script-src 'self'" in policy
        assert "default-src 'none'" in policy
        assert "frame-ancestors 'none'" in policy
        assert "'unsafe-inline'" not in policy
        assert page.headers["x-content-type-options"] == "nosniff"
        assert 'href="/docs/page.css"' in page.text
        assert 'src="/docs/page.js"' in page.text
        assert "__BASE__" not in page.text
        script = await http.get("/docs/page.js")
        assert script.status_code == 200
        assert script.headers["content-type"] == "text/javascript; charset=utf-8"
        style = await http.get("/docs/page.css")
        assert style.headers["content-type"] == "text/css; charset=utf-8"
        head = await http.head("/docs/page.js")
        assert head.status_code == 200
        assert head.content == b""
        assert int(head.headers["content-length"]) == len(script.content)
        for missing in ("/docs/page.py", "/docs/..%2F__init__.py", "/docs/x"):
            assert (await http.get(missing)).status_code == 404, missing
        assert (await http.post("/docs")).status_code == 405
        assert (await http.get("/docs/shape")).status_code == 405


EVERY_METHOD = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
STATIC_TYPES = ("text/html; charset=utf-8", "text/javascript; charset=utf-8", "text/css; charset=utf-8")


def _page_paths(app: Any) -> list[str]:
    """Every path the page answers, read from the app's routes (a route or file added later is walked too)."""
    paths: list[str] = []
    for route in app.routes:
        if not isinstance(route.endpoint, ToolsPage):
            assert route.path == "/mcp", f"a route that is neither the endpoint nor the page: {route.path}"
            continue
        assert set(route.param_convertors) <= {"name"}, f"a page route this test cannot fill in: {route.path}"
        if route.param_convertors:
            paths += [route.path.replace("{name}", name) for name in (*route.endpoint.names, "missing.js")]
        else:
            paths.append(route.path)
    return paths


def _assert_hardened(answer: httpx.Response) -> None:
    where = f"{answer.request.method} {answer.request.url.path} -> {answer.status_code}"
    headers = answer.headers
    assert headers.get("x-content-type-options") == "nosniff", where
    assert headers.get("referrer-policy") == "no-referrer", where
    policy = headers.get("content-security-policy", "")
    assert "default-src 'none'" in policy, where
    if answer.request.url.path.endswith("/sandbox") and answer.status_code == 200:
        # An MCP App's frame (docs/apps.md): framed by the page alone, in an iframe with
        # sandbox="allow-scripts"; it names no origin ('self' would be the server's) and reaches no network.
        assert headers.get("x-frame-options") == "SAMEORIGIN", where
        assert "frame-ancestors 'self'" in policy, where
        assert "connect-src 'none'" in policy, where
        assert "'self'" not in policy.replace("frame-ancestors 'self'", ""), where
    else:
        assert headers.get("x-frame-options") == "DENY", where
        assert "frame-ancestors 'none'" in policy, where
    # The page's own files may be stored but are revalidated (they change with toolkit); config.json
    # (the server's paths), shape answers and every error are never stored.
    static = answer.status_code == 200 and headers["content-type"] in STATIC_TYPES
    if answer.request.url.path.endswith("/sandbox"):
        static = False  # the app frame's CSP is made from its query: never stored
    assert headers.get("cache-control") == ("no-cache" if static else "no-store"), where


async def test_every_answer_of_the_page_carries_the_security_headers() -> None:
    """Every route of the page, every method, its errors and the Host/Origin refusals: nosniff and the rest."""
    app = weather.server.http_app(docs=True)
    paths = _page_paths(app)
    statuses: set[int] = set()
    async with page_client(app) as http:
        page = await http.get("/docs")
        config = (await http.get("/docs/config.json")).json()
        linked = set(re.findall(r'(?:src|href)="(/docs/[^"]*)"', page.text)) | {config["shapePath"]}
        assert linked <= set(paths), f"the page links to paths not walked here: {linked - set(paths)}"
        answers = [await http.request(method, path) for path in paths for method in EVERY_METHOD]
        answers += [await http.get(path, headers={"host": "evil.example"}) for path in paths]
        answers += [await http.get(path, headers={"origin": "http://evil.example"}) for path in paths]
        answers.append(await http.post("/docs/shape", json={"result": {"content": []}}))
        answers.append(await http.post("/docs/shape", content=b"not json"))
        answers.append(await http.post("/docs/shape", content=b" " * (4 * 1024 * 1024 + 1)))
        for answer in answers:
            statuses.add(answer.status_code)
            _assert_hardened(answer)
    assert statuses == {200, 400, 403, 404, 405, 413, 421}


async def test_config_names_the_endpoint_and_every_version_newest_first() -> None:
    async with page_client(weather.server, docs="/tools", path="/rpc") as http:
        config = (await http.get("/tools/config.json")).json()
    assert config == {
        "mcpPath": "/rpc",
        "shapePath": "/tools/shape",
        "auth": False,
        "versions": [
            {"version": "2026-07-28", "shape": "natural"},
            {"version": "2025-11-25", "shape": "wrapped"},
            {"version": "2025-06-18", "shape": "wrapped"},
            {"version": "2025-03-26", "shape": "text"},
            {"version": "2024-11-05", "shape": "text"},
        ],
    }


@pytest.mark.parametrize(
    ("docs", "message"),
    [
        ("docs", "a path such as '/docs'"),
        ("/docs/", "a path such as '/docs'"),
        ("/", "a path such as '/docs'"),
        (3, "a path such as '/docs'"),
        ("/mcp", "a path of its own"),
    ],
)
def test_a_bad_docs_option_says_what_it_takes(docs: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        weather.server.http_app(docs=docs)


async def test_the_page_answers_only_allowed_hosts_and_origins() -> None:
    async with page_client(weather.server, docs=True) as http:
        assert (await http.get("/docs", headers={"host": "evil.example"})).status_code == 421
        assert (await http.get("/docs/config.json", headers={"origin": "http://evil.example"})).status_code == 403
        shaped = await http.post("/docs/shape", json={"result": {"content": []}}, headers={"host": "evil.example"})
        assert shaped.status_code == 421
        assert (await http.get("/docs", headers={"origin": "http://localhost:1234"})).status_code == 200


async def test_mounted_under_a_prefix_the_page_points_at_its_own_paths() -> None:
    mcp_app = weather.server.http_app(docs=True)
    host = Starlette(routes=[Mount("/sub", app=mcp_app)], lifespan=mcp_app.lifespan)
    async with page_client(host) as http:
        page = await http.get("/sub/docs")
        assert 'src="/sub/docs/page.js"' in page.text
        assert (await http.get("/sub/docs/page.js")).status_code == 200
        config = (await http.get("/sub/docs/config.json")).json()
        assert config["mcpPath"] == "/sub/mcp"
        assert config["shapePath"] == "/sub/docs/shape"


async def test_shape_refuses_what_is_not_a_call_result() -> None:
    async with page_client(weather.server, docs=True) as http:
        for body in (
            b"not json",
            b"{}",
            json.dumps({"result": 3}).encode(),
            json.dumps({"result": {"content": "text"}}).encode(),
            json.dumps({"result": {"content": [{"type": "audio"}]}, "outputSchema": None}).encode(),
            json.dumps({"result": {"content": []}, "outputSchema": "array"}).encode(),
            b'{"result": {"content": []}, "outputSchema": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        ):
            answer = await http.post("/docs/shape", content=body)
            assert answer.status_code == 400, body
            assert answer.json()["error"].startswith("not a tools/call result to shape"), body
        huge = await http.post("/docs/shape", content=b" " * (4 * 1024 * 1024 + 1))
        assert huge.status_code == 413


def _content_server() -> Server:
    server = Server("content")

    @server.tool
    def picture() -> Image:
        """An image."""
        return Image(b"\x89PNG\r\n", mime_type="image/png")

    @server.tool
    def mixed() -> ToolResult:
        """Blocks of every kind, a structured value and meta of its own."""
        return ToolResult(
            ["text", Audio(b"RIFF", mime_type="audio/wav"), ResourceLink("file:///a.txt", "a", title="A")],
            structured_content=[1, 2],
            meta={"note": "kept"},
        )

    @server.tool
    def mapping() -> ToolResult:
        """An object without an output schema."""
        return ToolResult("x", structured_content={"a": 1})

    @server.tool
    def failing() -> ToolResult:
        """An error result with a structured value (not sent to anyone)."""
        return ToolResult("bad", structured_content={"a": 1}, is_error=True)

    return server


def _cases(content: Server) -> list[tuple[Server, str, dict[str, Any]]]:
    cases: list[tuple[Server, str, dict[str, Any]]] = [
        (weather.server, str(step["tool"]), dict(step["arguments"]))  # type: ignore[call-overload]
        for step in weather.INTEROP_PLAN
    ]
    cases.append((weather.server, "get_weather_forecast", {"city": "x", "hours": 99}))  # invalid arguments
    cases.append((weather.server, "find_user", {"id": "nobody"}))  # a ToolError
    cases += [(content, name, {}) for name in ("picture", "mixed", "mapping", "failing")]
    return cases


async def test_shape_gives_exactly_what_each_version_receives() -> None:
    """For every call of the interop plan and then some: shaping the 2026-07-28 result equals calling as V."""
    content = _content_server()
    async with page_client(weather.server, docs=True) as weather_http, page_client(content, docs=True) as content_http:
        for server, tool, arguments in _cases(content):
            async with Client(server) as modern:
                natural = await modern.call_tool(tool, arguments)
                listed = {entry["name"]: entry for entry in await modern.list_tools()}
            http = weather_http if server is weather.server else content_http
            body = {"result": natural, "outputSchema": listed[tool].get("outputSchema")}
            answer = await http.post("/docs/shape", json=body)
            assert answer.status_code == 200
            shaped = answer.json()
            assert list(shaped) == VERSIONS
            for version in VERSIONS:
                async with Client(server, protocol_version=version) as client:
                    received = await client.call_tool(tool, arguments)
                assert shaped[version] == received, (tool, arguments, version)


class _OneToken:
    async def verify(self, token: str) -> AccessToken | None:
        if token == "let-me-in":
            return AccessToken(subject="u1", client_id="c1", scopes=frozenset(), expires_at=None)
        return None


async def test_with_authorization_the_page_holds_nothing_and_the_endpoint_still_asks_for_a_token() -> None:
    """The page is static (no tool data in it); what it shows comes from the endpoint, which checks the token."""
    server = Server("guarded", auth=_OneToken(), authorization_servers=["https://as.example"])

    @server.tool
    def secret() -> str:
        """Not for everyone."""
        return "s3cret"

    async with page_client(server, docs=True) as http:
        page = await http.get("/docs")
        assert page.status_code == 200
        assert "secret" not in page.text
        assert (await http.get("/docs/config.json")).json()["auth"] is True
        headers = {
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": "tools/list",
        }
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/list",
            "params": {
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {},
                }
            },
        }
        refused = await http.post("/mcp", json=body, headers=headers)
        assert refused.status_code == 401
        assert "www-authenticate" in refused.headers
        allowed = await http.post("/mcp", json=body, headers={**headers, "authorization": "Bearer let-me-in"})
        assert [tool["name"] for tool in allowed.json()["result"]["tools"]] == ["secret"]


def test_an_app_without_the_page_does_not_load_it() -> None:
    """Off costs nothing: not a route, not a module."""
    probe = (
        "import sys; sys.path.insert(0, 'examples'); from weather import server; "
        "app = server.http_app(); print('toolkit._transports.http.docs' in sys.modules, len(app.routes))"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "1"]


class _Tags(HTMLParser):
    """Every start tag of a document, with its attributes, and the text inside each element with an id."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: dict[str, str] = {}
        self._open: list[str | None] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag not in ("meta", "link", "input", "br", "img"):
            self._open.append(dict(attrs).get("id"))

    def handle_endtag(self, tag: str) -> None:
        if self._open:
            self._open.pop()

    def handle_data(self, data: str) -> None:
        for element in self._open:
            if element:
                self.text[element] = self.text.get(element, "") + data


async def test_the_page_as_served_says_loading_and_runs_no_inline_code() -> None:
    async with page_client(weather.server, docs=True) as http:
        page = await http.get("/docs")
    parsed = _Tags()
    parsed.feed(page.text)
    by_id = {attrs["id"]: (tag, attrs) for tag, attrs in parsed.tags if attrs.get("id")}
    # The first paint, before the script runs: a Loading… state in the list, announced, marked busy.
    assert by_id["items"][1].get("aria-busy") == "true"
    assert by_id["loading"] == ("p", {"class": "loading", "id": "loading", "role": "status"})
    assert parsed.text["loading"].startswith("Loading")
    assert "Loading" in parsed.text["items"]
    # The filter and the expand/collapse buttons are in the page, labelled, shown once tools are listed.
    assert "hidden" in by_id["toolbar"][1]
    assert by_id["filter"][1]["type"] == "search"
    assert any(tag == "label" and attrs.get("for") == "filter" for tag, attrs in parsed.tags)
    assert by_id["filter"][1]["aria-describedby"] == "filter-status"
    assert by_id["filter-status"][1]["role"] == "status"
    assert by_id["expand-all"][0] == by_id["collapse-all"][0] == "button"
    # The policy forbids inline code and style: the page has none (only its own files).
    assert "'unsafe-inline'" not in page.headers["content-security-policy"]
    scripts = [attrs for tag, attrs in parsed.tags if tag == "script"]
    assert scripts == [{"src": "/docs/page.js", "defer": None}]
    assert not re.search(r"<script(?![^>]*\bsrc=)", page.text)
    handlers = [(tag, name) for tag, attrs in parsed.tags for name in attrs if name.startswith("on") or name == "style"]
    assert handlers == []
    assert "<style" not in page.text


async def test_the_page_script_labels_union_branches_by_model_and_wires_the_cards() -> None:
    """What the browser tests exercise, pinned in the served script: names from $defs, the card toggle."""
    async with page_client(weather.server, docs=True) as http:
        script = (await http.get("/docs/page.js")).text
    assert "(?:\\$defs|definitions)" in script  # a branch's $ref names its model
    assert '"aria-expanded"' in script
    assert '"aria-controls"' in script
    assert 'on(window, "hashchange", openHash)' in script
