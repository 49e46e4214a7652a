"""The tools page: a browser page that lists a server's tools, resources and prompts and calls them.

Off unless asked for (``http_app(docs=True)``, ``toolkit run --docs``, ``toolkit dev``). The
page is static (``page/``: HTML, one script, one stylesheet, shipped in the wheel, no CDN);
everything it shows it gets from the MCP endpoint itself, as any client would, through the
same Host/Origin checks, authorization and validation. The one thing it asks of this module
besides its files is ``shape``: what a client of each protocol version receives for one call's
result, from the same compatibility rules the server applies (so a tool is called once, not
once per era).
"""

from __future__ import annotations

import html
import json
import re
import urllib.parse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from .asgi import BodyTooLarge, header_map, read_body
from .security import HostGuard

if TYPE_CHECKING:
    from starlette.types import Receive, Scope, Send

DEFAULT_DOCS_PATH: Final = "/docs"
MAX_SHAPE_BYTES: Final = 4 * 1024 * 1024

_ASSETS: Final = {
    "page.js": "text/javascript; charset=utf-8",
    "page.css": "text/css; charset=utf-8",
}
# The page runs only its own script and style; tool data is shown as text, never as markup,
# and this policy stops anything that slips through from running or loading elsewhere.
# Images: the page's own, inline (data:) images of results, and https icons tools declare.
_PAGE_CSP: Final = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: https:; "
    "media-src 'self' data:; connect-src 'self'; frame-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'"
)
# An MCP App's frame ({base}/sandbox, framed sandbox="allow-scripts" by the page: an opaque origin).
# Its own inline code and what its _meta.ui.csp declares, nothing else: no 'self' (it would name
# the server, and the app may not reach the MCP endpoint), no network unless declared.
_CSP_ORIGIN: Final = re.compile(r"(?:https?|wss?)://(?:\*\.)?[A-Za-z0-9.-]+(?::[0-9]{1,5})?/?")
_CSP_KEYS: Final = ("connectDomains", "resourceDomains", "frameDomains", "baseUriDomains")
# Everything else the page's routes answer (its script, style, JSON, errors) is never a document
# to render: were one opened as a page, it could run and load nothing, and nobody may frame it.
_OTHER_CSP: Final = "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
# On every answer, errors and Host/Origin refusals included.
_HEADERS: Final = (
    ("x-content-type-options", "nosniff"),  # a body is what its content-type says: never sniffed into HTML or script
    ("referrer-policy", "no-referrer"),  # the server's URL never leaves in a Referer (the page links to tool icons)
    ("x-frame-options", "DENY"),  # frame-ancestors, for browsers that predate CSP 2
)
# The page's files may be stored but are revalidated before each use: they change with toolkit's
# version under the same URL. config.json (the endpoint's path, whether it asks for a token) and
# shape (a tool's result) describe one server, and errors are never worth keeping: never stored.
_REVALIDATE: Final = "no-cache"
_NEVER_STORE: Final = "no-store"


Shape = Callable[[dict[str, Any], dict[str, Any] | None], dict[str, dict[str, Any]]]
"""One 2026-07-28 ``tools/call`` result and the tool's natural output schema → what each version receives."""


class PageOptions:
    """What the page needs from above the transports: its path, and the era rules (from the compat layer)."""

    __slots__ = ("path", "shape", "versions")

    def __init__(self, path: str, *, shape: Shape, versions: list[dict[str, str]]) -> None:
        self.path = path
        self.shape = shape
        self.versions = versions
        """Every version, newest first: ``{"version": ..., "shape": "natural" | "wrapped" | "text"}``."""


def docs_path(docs: object, mcp_path: str) -> str:
    """The page's path for ``http_app(docs=...)`` (``True`` or a path such as ``/docs``)."""
    if docs is True:
        path = DEFAULT_DOCS_PATH
    elif isinstance(docs, str) and docs.startswith("/") and len(docs) > 1 and not docs.endswith("/"):
        path = docs
    else:
        raise ValueError(f"http_app(docs=...) takes True, False or a path such as '/docs', not {docs!r}")
    if path == mcp_path:
        raise ValueError(f"http_app(docs={docs!r}): the tools page needs a path of its own, not the MCP path")
    return path


def _asset(name: str) -> bytes:
    import importlib.resources  # noqa: PLC0415 (on the first request for the page)

    return importlib.resources.files(__package__).joinpath("page", name).read_bytes()


class ToolsPage:
    """The ASGI endpoint at the page's path and below it (``page.js``, ``page.css``, ``config.json``, ``shape``)."""

    names: Final = ("config.json", "shape", "sandbox", *_ASSETS)
    """What it serves below its path; any other name is 404."""

    def __init__(self, guard: HostGuard, options: PageOptions, *, mcp_path: str, auth: bool) -> None:
        self.guard = guard
        self.path = options.path
        self.options = options
        self.mcp_path = mcp_path
        self.auth = auth
        self._files: dict[str, bytes] = {}

    def _file(self, name: str) -> bytes:
        body = self._files.get(name)
        if body is None:
            body = self._files[name] = _asset(name)
        return body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        rejected = self.guard.check(header_map(scope))
        if rejected is not None:
            await _text(send, rejected[0], rejected[1])
            return
        name = scope.get("path_params", {}).get("name")
        method = scope["method"]
        if name == "shape":
            if method != "POST":
                await _send(send, 405, b"", None, (("allow", "POST"),))
                return
            await self._shape(receive, send)
            return
        if method not in ("GET", "HEAD"):
            await _send(send, 405, b"", None, (("allow", "GET, HEAD"),))
            return
        head = method == "HEAD"
        base = scope.get("root_path", "") + self.path
        if name is None:
            body = self._file("page.html").replace(b"__BASE__", html.escape(base, quote=True).encode())
            await _send(send, 200, body, "text/html; charset=utf-8", csp=_PAGE_CSP, cache=_REVALIDATE, head=head)
        elif name == "config.json":
            body = json.dumps(self._config(scope, base)).encode()
            await _send(send, 200, body, "application/json", head=head)
        elif name == "sandbox":
            csp = app_csp(scope.get("query_string", b"").decode("latin-1"))
            headers = (("x-frame-options", "SAMEORIGIN"),)
            await _send(send, 200, self._file("sandbox.html"), "text/html; charset=utf-8", headers, csp=csp, head=head)
        elif name in _ASSETS:
            await _send(send, 200, self._file(name), _ASSETS[name], cache=_REVALIDATE, head=head)
        else:
            await _text(send, 404, "Not Found")

    def _config(self, scope: Scope, base: str) -> dict[str, Any]:
        return {
            "mcpPath": scope.get("root_path", "") + self.mcp_path,
            "shapePath": base + "/shape",
            "auth": self.auth,
            "versions": self.options.versions,
        }

    async def _shape(self, receive: Receive, send: Send) -> None:
        """``{"result": CallToolResult seen by a 2026-07-28 client, "outputSchema": natural or null}`` → per version."""
        try:
            body = await read_body(receive, MAX_SHAPE_BYTES)
        except BodyTooLarge:
            await _json(send, 413, {"error": f"the body is over {MAX_SHAPE_BYTES} bytes"})
            return
        if body is None:
            return  # the client went away
        try:
            request = json.loads(body)
            result = request["result"]
            schema = request.get("outputSchema")
            if not isinstance(result, dict) or not (schema is None or isinstance(schema, dict)):
                raise TypeError("result must be an object and outputSchema an object or null")
            shaped = self.options.shape(result, schema)
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
            detail = f"{type(exc).__name__}: {exc}" if isinstance(exc, KeyError) else str(exc)
            await _json(send, 400, {"error": f"not a tools/call result to shape: {detail}"})
            return
        await _json(send, 200, shaped)


def app_csp(query: str) -> str:
    """The CSP of an app's frame from ``?csp=`` (the resource's ``_meta.ui.csp`` as JSON); bad entries dropped."""
    try:
        declared = json.loads(urllib.parse.parse_qs(query).get("csp", ["{}"])[0])
    except ValueError:
        declared = {}
    if not isinstance(declared, dict):
        declared = {}

    def origins(key: str) -> str:
        values = declared.get(key)
        found = (
            [v for v in values if isinstance(v, str) and _CSP_ORIGIN.fullmatch(v)] if isinstance(values, list) else []
        )
        return " ".join(found[:64])

    connect, resources, frames, base = (origins(key) for key in _CSP_KEYS)
    none = "'none'"
    return (
        f"default-src 'none'; script-src 'unsafe-inline' {resources}; style-src 'unsafe-inline' {resources}; "
        f"img-src data: blob: {resources}; font-src data: {resources}; media-src data: blob: {resources}; "
        f"connect-src {connect or none}; frame-src {frames or none}; base-uri {base or none}; "
        "form-action 'none'; object-src 'none'; frame-ancestors 'self'"
    )


async def _send(
    send: Send,
    status: int,
    body: bytes,
    content_type: str | None,
    headers: tuple[tuple[str, str], ...] = (),
    *,
    csp: str = _OTHER_CSP,
    cache: str = _NEVER_STORE,
    head: bool = False,
) -> None:
    """Every answer of the page goes through here, so none leaves without ``_HEADERS``."""
    raw = [(b"content-length", str(len(body)).encode())]
    if content_type is not None:
        raw.append((b"content-type", content_type.encode()))
    all_headers = (*headers, *_HEADERS, ("content-security-policy", csp), ("cache-control", cache))
    framed = {name for name, _ in headers}  # the app frame's own x-frame-options replaces DENY
    raw += [
        (name.encode(), value.encode()) for name, value in all_headers if name not in framed or (name, value) in headers
    ]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": b"" if head else body})


async def _json(send: Send, status: int, value: Any) -> None:
    await _send(send, status, json.dumps(value).encode(), "application/json")


async def _text(send: Send, status: int, text: str) -> None:
    await _send(send, status, text.encode(), "text/plain; charset=utf-8")
