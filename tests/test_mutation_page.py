"""What the mutation run of ``toolkit/_transports/http/docs.py`` (the tools page) found unchecked.

Over the real wire (uvicorn on 127.0.0.1): the exact status, headers and body of every kind of
answer the page gives (its files, ``config.json``, ``shape`` and each of its refusals), the
paths ``http_app(docs=...)`` accepts, and a page path that needs escaping in HTML. Then, at the
ASGI interface itself, two things uvicorn happens to paper over and another server need not: a
``HEAD`` answer carries no body, and a scope without ``root_path`` (optional in the ASGI spec) is
served as if it were "". ``tests/test_tools_page.py`` holds the rest of the page's server side.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from tests.http_support import serve

from toolkit import Server

pytestmark = pytest.mark.timeout(20)

MAX_SHAPE_BYTES = 4 * 1024 * 1024
# What every answer of the page carries besides its own headers (the security review's list).
HARDENED = {
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
}
OTHER_CSP = "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"


def _server() -> Server:
    server = Server("page")

    @server.tool
    def echo(text: str) -> str:
        """Says it back."""
        return text

    return server


@contextlib.asynccontextmanager
async def page(**options: Any) -> AsyncIterator[httpx.AsyncClient]:
    async with serve(_server(), **options) as running, httpx.AsyncClient(base_url=running.base) as http:
        yield http


def _headers(answer: httpx.Response) -> dict[str, str]:
    """The answer's headers as the page set them (the server's own date and name left out)."""
    names = [name for name, _ in answer.headers.multi_items() if name not in ("date", "server")]
    assert len(names) == len(set(names)), f"a header twice: {answer.headers}"
    return {name: answer.headers[name] for name in names}


def _expected(content_type: str | None, length: int, **extra: str) -> dict[str, str]:
    expected = {"content-length": str(length), **HARDENED, "content-security-policy": OTHER_CSP}
    expected["cache-control"] = "no-store"
    if content_type is not None:
        expected["content-type"] = content_type
    expected.update({name.replace("_", "-"): value for name, value in extra.items()})
    return expected


async def test_a_wrong_method_is_405_with_the_allowed_ones_and_no_body() -> None:
    async with page(docs=True) as http:
        for path in ("/docs", "/docs/page.js", "/docs/config.json", "/docs/missing.css"):
            for method in ("POST", "PUT", "DELETE"):
                answer = await http.request(method, path)
                assert (answer.status_code, answer.content) == (405, b""), (method, path)
                assert _headers(answer) == _expected(None, 0, allow="GET, HEAD"), (method, path)
        for method in ("GET", "HEAD", "PUT"):
            answer = await http.request(method, "/docs/shape")
            assert (answer.status_code, answer.content) == (405, b""), method
            assert _headers(answer) == _expected(None, 0, allow="POST"), method


async def test_an_unknown_file_is_a_plain_404() -> None:
    async with page(docs=True) as http:
        answer = await http.get("/docs/missing.js")
    assert (answer.status_code, answer.text) == (404, "Not Found")
    assert _headers(answer) == _expected("text/plain; charset=utf-8", len("Not Found"))


async def test_config_is_json_that_is_never_stored() -> None:
    async with page(docs=True) as http:
        answer = await http.get("/docs/config.json")
    assert answer.status_code == 200
    assert _headers(answer) == _expected("application/json", len(answer.content))
    assert answer.json()["mcpPath"] == "/mcp"


@pytest.mark.parametrize(
    ("body", "error"),
    [
        (b"not json", "Expecting value: line 1 column 1 (char 0)"),
        (b"{}", "KeyError: 'result'"),
        (b'{"result": 3}', "result must be an object and outputSchema an object or null"),
        (b'{"result": 3, "outputSchema": null}', "result must be an object and outputSchema an object or null"),
        (
            b'{"result": {"content": []}, "outputSchema": "array"}',
            "result must be an object and outputSchema an object or null",
        ),
    ],
)
async def test_shape_says_exactly_why_it_refuses_a_body(body: bytes, error: str) -> None:
    async with page(docs=True) as http:
        answer = await http.post("/docs/shape", content=body)
    assert answer.status_code == 400
    assert answer.json() == {"error": f"not a tools/call result to shape: {error}"}
    assert _headers(answer) == _expected("application/json", len(answer.content))


async def test_shape_refuses_a_body_over_4_mib_saying_so() -> None:
    async with page(docs=True) as http:
        answer = await http.post("/docs/shape", content=b" " * (MAX_SHAPE_BYTES + 1))
    assert answer.status_code == 413
    assert answer.json() == {"error": f"the body is over {MAX_SHAPE_BYTES} bytes"}
    assert _headers(answer) == _expected("application/json", len(answer.content))


async def test_the_shortest_page_path_is_one_character_after_the_slash() -> None:
    async with page(docs="/d") as http:
        answer = await http.get("/d")
        assert answer.status_code == 200
        assert 'src="/d/page.js"' in answer.text
        assert (await http.get("/d/config.json")).json()["shapePath"] == "/d/shape"
    with pytest.raises(ValueError, match="a path such as '/docs'"):
        _server().http_app(docs="/")


async def test_a_page_path_is_escaped_where_the_page_names_it() -> None:
    async with page(docs="/t\"o'ols") as http:
        answer = await http.get("/t%22o'ols")
        assert answer.status_code == 200
        assert 'src="/t&quot;o&#x27;ols/page.js"' in answer.text
        assert 'href="/t&quot;o&#x27;ols/page.css"' in answer.text
        assert "/t\"o'ols" not in answer.text


# --- at the ASGI interface -----------------------------------------------------------------------


async def _asgi(app: Any, method: str, path: str) -> tuple[int, dict[str, str], bytes]:
    """One request straight to the ASGI app, as a server that does no more than the ASGI spec asks."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "headers": [(b"host", b"127.0.0.1:8000")],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }  # no root_path: optional, "" when absent (ASGI HTTP connection scope)
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    start, *bodies = sent
    headers = {name.decode(): value.decode() for name, value in start["headers"]}
    return start["status"], headers, b"".join(message.get("body", b"") for message in bodies)


async def test_a_head_answer_sends_the_length_but_no_body() -> None:
    app = _server().http_app(docs=True)
    for path in ("/docs", "/docs/page.js", "/docs/page.css", "/docs/config.json"):
        status, headers, body = await _asgi(app, "GET", path)
        assert status == 200, path
        head_status, head_headers, head_body = await _asgi(app, "HEAD", path)
        assert (head_status, head_body) == (200, b""), path
        assert head_headers == headers, path
        assert int(headers["content-length"]) == len(body) > 0, path


async def test_without_a_root_path_in_the_scope_the_page_names_its_own_paths() -> None:
    app = _server().http_app(docs=True)
    _, _, body = await _asgi(app, "GET", "/docs/config.json")
    config = json.loads(body)
    assert (config["mcpPath"], config["shapePath"]) == ("/mcp", "/docs/shape")
    _, _, page_html = await _asgi(app, "GET", "/docs")
    assert b'src="/docs/page.js"' in page_html
