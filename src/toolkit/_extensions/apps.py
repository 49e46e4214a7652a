"""MCP Apps (``io.modelcontextprotocol/ui``, SEP-1865) as an extension, on the public extension API.

An ``App`` is a UI resource (``ui://...``, ``text/html;profile=mcp-app``): its HTML from a string,
a file or a function, and the ``_meta.ui`` a host reads on the read result (``csp``,
``permissions``, ``domain``, ``prefersBorder``). ``@server.tool(app=...)`` links a tool to it
(``_meta.ui.resourceUri``, and ``_meta.ui.visibility`` when not the default ``["model", "app"]``).

``AppsExtension`` is what the server adds the first time a tool names an app:

- the capability ``capabilities.extensions["io.modelcontextprotocol/ui"] = {}`` in the versions
  whose tools carry ``_meta`` (2025-06-18 and later; ``_compat`` drops a tool's ``_meta`` before);
- the apps' resources, a source of its own (merged after the server's components);
- a ``tools/call`` hook that refuses an app-only tool (``visibility: ["app"]``) to a client that
  did not declare the extension: only an app host can be calling it for an app. A host that does
  declare it keeps app-only tools from its model and refuses them to other servers' apps (the
  tools page does both).

``renders_apps(ctx)`` tells a tool whether the calling client declared it renders MCP Apps
(``text/html;profile=mcp-app`` in its ``extensions["io.modelcontextprotocol/ui"].mimeTypes``), so
it can answer in text otherwise.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final, Literal

from .._compat.envelope import has_field
from .._errors import INVALID_PARAMS, McpError, RegistrationError
from .base import CallNext, Extension, ExtensionHost, ToolCall

if TYPE_CHECKING:
    from .._components import ToolBase
    from .._registry import Kind, Source

UI_EXTENSION: Final = "io.modelcontextprotocol/ui"
APP_MIME: Final = "text/html;profile=mcp-app"
Visibility = Literal["model", "app"]
PERMISSIONS: Final = ("camera", "microphone", "geolocation", "clipboardWrite")
_VISIBILITIES: Final = ("model", "app")


def _origins(what: str, values: Iterable[str]) -> list[str]:
    """CSP source expressions as a host puts them in a header: no spaces, quotes or ``;``."""
    found = list(values)
    for value in found:
        if not isinstance(value, str) or not value or any(c in value for c in " \t\r\n;,'\""):
            raise RegistrationError(
                f"App {what}: {value!r} is not an origin (give one like 'https://api.example.com' or "
                "'https://*.example.com', without spaces, quotes, commas or semicolons)"
            )
    return found


class App:
    """A UI resource for MCP Apps: ``ui://...`` HTML a host renders in a sandboxed iframe.

    Exactly one of ``html`` (the page), ``file`` (a path read on each ``resources/read``) or
    ``render`` (a function returning the page, called on each read) gives its content. The rest
    is the resource's ``_meta.ui`` (SEP-1865): ``connect_domains`` (``fetch``/WebSocket origins,
    CSP ``connect-src``), ``resource_domains`` (scripts, styles, images, fonts, media),
    ``frame_domains`` (nested iframes), ``base_uri_domains``; ``permissions`` it asks for
    (``camera``, ``microphone``, ``geolocation``, ``clipboardWrite``); ``domain``, a dedicated
    sandbox origin in the form a host documents; ``prefers_border``.
    """

    __slots__ = (
        "base_uri_domains",
        "connect_domains",
        "description",
        "domain",
        "file",
        "frame_domains",
        "html",
        "name",
        "permissions",
        "prefers_border",
        "render",
        "resource_domains",
        "title",
        "uri",
    )

    def __init__(
        self,
        uri: str,
        *,
        html: str | None = None,
        file: str | os.PathLike[str] | None = None,
        render: Callable[[], str] | None = None,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        connect_domains: Iterable[str] = (),
        resource_domains: Iterable[str] = (),
        frame_domains: Iterable[str] = (),
        base_uri_domains: Iterable[str] = (),
        permissions: Iterable[str] = (),
        domain: str | None = None,
        prefers_border: bool | None = None,
    ) -> None:
        if not isinstance(uri, str) or not uri.startswith("ui://") or len(uri) <= len("ui://"):
            raise RegistrationError(f"App({uri!r}): an app's URI starts with ui:// (e.g. 'ui://forecast/chart')")
        if sum(given is not None for given in (html, file, render)) != 1:
            raise RegistrationError(f"App({uri!r}) takes exactly one of html=, file= or render=")
        self.uri = uri
        self.html, self.render = html, render
        self.file = os.fspath(file) if file is not None else None
        self.name = name or uri.removeprefix("ui://")
        self.title, self.description = title, description
        self.connect_domains = _origins("connect_domains", connect_domains)
        self.resource_domains = _origins("resource_domains", resource_domains)
        self.frame_domains = _origins("frame_domains", frame_domains)
        self.base_uri_domains = _origins("base_uri_domains", base_uri_domains)
        self.permissions = list(permissions)
        unknown = [p for p in self.permissions if p not in PERMISSIONS]
        if unknown:
            raise RegistrationError(
                f"App({uri!r}): unknown permission(s) {unknown}; the SEP defines {list(PERMISSIONS)}"
            )
        self.domain, self.prefers_border = domain, prefers_border

    def ui_meta(self) -> dict[str, Any]:
        """The resource's ``_meta.ui``: only what was set."""
        csp = {
            key: value
            for key, value in (
                ("connectDomains", self.connect_domains),
                ("resourceDomains", self.resource_domains),
                ("frameDomains", self.frame_domains),
                ("baseUriDomains", self.base_uri_domains),
            )
            if value
        }
        meta: dict[str, Any] = {}
        if csp:
            meta["csp"] = csp
        if self.permissions:
            meta["permissions"] = {name: {} for name in self.permissions}
        if self.domain is not None:
            meta["domain"] = self.domain
        if self.prefers_border is not None:
            meta["prefersBorder"] = self.prefers_border
        return meta

    def content(self) -> str:
        """The page, as of now (a file is read and a function called on each read)."""
        if self.html is not None:
            return self.html
        if self.file is not None:
            with open(self.file, encoding="utf-8") as f:
                return f.read()
        assert self.render is not None
        page = self.render()
        if not isinstance(page, str):
            raise TypeError(f"App({self.uri!r}): render() returned {type(page).__name__}, not the page's HTML (str)")
        return page

    def visible_to(self, *who: Visibility) -> AppLink:
        """A link for ``@server.tool(app=...)`` with ``_meta.ui.visibility``: ``"model"``, ``"app"`` or both.

        ``app.visible_to("app")``: a tool only the app calls (hosts keep it from their model).
        """
        return AppLink(self, who)

    def __repr__(self) -> str:
        return f"App({self.uri!r})"


class AppLink:
    """A tool's link to an app: ``_meta.ui`` on the tool (``resourceUri``, ``visibility``)."""

    __slots__ = ("app", "uri", "visibility")

    def __init__(self, app: App | str, visibility: Iterable[str] = _VISIBILITIES) -> None:
        self.app = app if isinstance(app, App) else None
        self.uri = app.uri if isinstance(app, App) else app
        if not isinstance(self.uri, str) or not self.uri.startswith("ui://"):
            raise RegistrationError(f"app={app!r}: give an App or its ui:// URI")
        self.visibility = list(dict.fromkeys(visibility))
        if not self.visibility or any(v not in _VISIBILITIES for v in self.visibility):
            raise RegistrationError(f"app visibility {list(visibility)!r}: give 'model', 'app' or both")

    def tool_meta(self) -> dict[str, Any]:
        ui: dict[str, Any] = {"resourceUri": self.uri}
        if self.visibility != list(_VISIBILITIES):
            ui["visibility"] = list(self.visibility)
        return ui


def _app_resource(app: App) -> Any:
    from .._context import Context  # noqa: PLC0415
    from .._resources import Resource, ResourceContents  # noqa: PLC0415

    def read():  # type: ignore[no-untyped-def]  # its hint would be read in this module's globals
        meta = app.ui_meta()
        return ResourceContents(text=app.content(), mime_type=APP_MIME, meta={"ui": meta} if meta else None)

    meta = app.ui_meta()
    return Resource(
        app.uri,
        read,
        context_type=Context,
        name=app.name,
        title=app.title,
        description=app.description,
        mime_type=APP_MIME,
        meta={"ui": meta} if meta else None,
    )


class _AppResources:
    """The apps' resources: the extension's own source, which grows as tools name apps."""

    label = "MCP Apps"

    def __init__(self) -> None:
        self.resources: dict[str, Any] = {}
        self.apps: dict[str, App] = {}
        self._listeners: list[Callable[[Kind], None]] = []

    def items(self, kind: Kind) -> Mapping[str, Any]:
        return self.resources if kind == "resources" else {}

    def on_change(self, listener: Callable[[Kind], None]) -> None:
        self._listeners.append(listener)

    def add(self, app: App) -> None:
        known = self.apps.get(app.uri)
        if known is app:
            return
        if known is not None:
            raise RegistrationError(f"two different apps have the URI {app.uri!r}: give each its own ui:// URI")
        self.apps[app.uri] = app
        self.resources[app.uri] = _app_resource(app)
        for listener in self._listeners:
            listener("resources")


def _ui(meta: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    ui = meta.get("ui") if meta else None
    return ui if isinstance(ui, Mapping) else None


def client_renders_apps(client_capabilities: Mapping[str, Any]) -> bool:
    """Whether capabilities declare ``io.modelcontextprotocol/ui`` with ``text/html;profile=mcp-app``."""
    extensions = client_capabilities.get("extensions")
    settings = extensions.get(UI_EXTENSION) if isinstance(extensions, Mapping) else None
    if not isinstance(settings, Mapping):
        return False
    mimes = settings.get("mimeTypes")
    return isinstance(mimes, list) and APP_MIME in mimes


def renders_apps(ctx: Any) -> bool:
    """Whether the client calling this tool renders MCP Apps (else answer in text: its model reads it)."""
    return client_renders_apps(ctx.client_capabilities)


class AppsExtension(Extension):
    """MCP Apps: the capability, the apps' ``ui://`` resources, app-only tools kept to app hosts."""

    id = UI_EXTENSION

    def __init__(self) -> None:
        self.source = _AppResources()

    def bind(self, host: ExtensionHost) -> None:
        self.host = host

    def add(self, app: App) -> None:
        """Serve ``app``'s resource (once; another app at the same URI is refused)."""
        self.source.add(app)

    def capabilities(self, capabilities: dict[str, Any], version: str) -> None:
        if has_field("Tool", "_meta", version):  # before 2025-06-18 a tool cannot carry _meta.ui
            self.declare(capabilities)

    def sources(self) -> Iterable[Source]:
        return [self.source]

    def wants_call(self, tool: ToolBase, params: Mapping[str, Any]) -> bool:
        ui = _ui(tool.meta)
        if ui is None:
            return False
        visibility = ui.get("visibility")
        return isinstance(visibility, list) and "model" not in visibility

    async def around_call(self, call: ToolCall, call_next: CallNext) -> dict[str, Any]:
        if not client_renders_apps(call.inbound.client_capabilities):
            raise McpError(
                INVALID_PARAMS,
                f"Tool {call.tool.name!r} is called only by its app (_meta.ui.visibility is ['app']): "
                f"call it from the app, through a host that declares the {UI_EXTENSION} extension",
            )
        return await call_next()


def link(extensions: list[Extension], add: Callable[[Extension], None], app: App | AppLink | str) -> dict[str, Any]:
    """``@server.tool(app=...)``: the tool's ``_meta.ui``; the apps extension added and the app served."""
    linked = app if isinstance(app, AppLink) else AppLink(app)
    extension = next((e for e in extensions if isinstance(e, AppsExtension)), None)
    if extension is None:
        extension = AppsExtension()
        add(extension)
    if linked.app is not None:
        extension.add(linked.app)
    return linked.tool_meta()
