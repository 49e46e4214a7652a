"""The facade's wiring of an HTTP API into a server: ``OpenAPI``, ``Server.from_openapi``, ``Server.from_fastapi``.

``OpenAPI(document, ...)`` reads a document (a mapping, a file, a URL, or a FastAPI app's own
``app.openapi()``) and holds how to call the API; ``server.mount(OpenAPI(...), namespace=...)``
turns it into an ``OpenAPISource`` in the server's registry, started (its HTTP client opened)
and stopped with the server like a proxied one. ``Server.from_openapi`` and ``Server.from_fastapi``
make a server of one document. This module imports the sources wing, and with it httpx, only
when a document is used: ``import toolkit`` loads neither.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ._sources.namespace import checked_namespace

if TYPE_CHECKING:
    import httpx

    from ._registry import Registry
    from ._server import Server
    from ._sources.openapi.credentials import Credential
    from ._sources.openapi.routes import RouteMap
    from ._sources.openapi.source import OpenAPISource

DEFAULT_TIMEOUT = 30.0
DEFAULT_MAX_RESPONSE_BYTES = 10 * 1024 * 1024


class OpenAPI:
    """An HTTP API described by an OpenAPI 3.0/3.1 document, ready to mount in a server.

    >>> server.mount(OpenAPI("petstore.yaml", base_url="https://petstore.example.com/v3"), namespace="pets")
    >>> server.mount(OpenAPI(fastapi_app), namespace="shop")     # called in process

    ``document``: a mapping, a path to a JSON or YAML file, an ``http(s)://`` URL (fetched once,
    now, with a timeout and a size bound), or an ASGI app with an ``openapi()`` method (FastAPI:
    its document, its calls in process through httpx's ASGI transport, its lifespan run with the
    server). The rest says how calls are made:

    - ``client``: an ``httpx.AsyncClient`` (its ``base_url``, transport, proxies; never closed
      here), or ``base_url``; the document's ``servers`` are used only with ``use_servers=True``;
    - ``auth``: ``Bearer(token)``, ``APIKey(name, value, location=...)``, ``Basic(user, password)``,
      a list of them, or any ``httpx.Auth`` (``toolkit.client.OAuth``): from the configuration,
      never from the model;
    - ``forward_headers``: headers of the caller's own HTTP request sent on (e.g. ``["X-Tenant"]``);
    - ``route_maps``: ``RouteMap``s choosing tool, resource/template or exclude per operation
      (first match wins; default: every operation a tool); ``include_deprecated`` keeps
      operations marked deprecated (left out by default); ``uri_scheme``: resources' URI scheme;
    - ``timeout`` (seconds for a whole exchange) and ``max_response_bytes`` (the largest answer read).
    """

    def __init__(
        self,
        document: Mapping[str, Any] | str | os.PathLike[str] | Any,
        *,
        client: httpx.AsyncClient | None = None,
        base_url: str | None = None,
        use_servers: bool = False,
        auth: Credential | Sequence[Credential] | httpx.Auth | None = None,
        forward_headers: Iterable[str] = (),
        route_maps: Iterable[RouteMap] = (),
        include_deprecated: bool = False,
        uri_scheme: str = "api",
        timeout: float | None = DEFAULT_TIMEOUT,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    ) -> None:
        from ._sources.openapi.documents import load_document  # noqa: PLC0415 - only when a document is used

        given: Any = document
        self.app: Any = given if _is_app(given) else None
        self.document_url: str | None = None
        if self.app is not None:
            self.document: dict[str, Any] = self.app.openapi()
        else:
            self.document, self.document_url = load_document(document)
        self.sources: list[OpenAPISource] = []
        """The sources it was mounted as, one per ``mount`` (``renamed``, ``skipped``, ``notes``)."""
        self.options: dict[str, Any] = {
            "client": client,
            "base_url": base_url,
            "use_servers": use_servers,
            "auth": auth,
            "forward_headers": tuple(forward_headers),
            "route_maps": tuple(route_maps),
            "include_deprecated": include_deprecated,
            "uri_scheme": uri_scheme,
            "timeout": timeout,
            "max_response_bytes": max_response_bytes,
        }

    @property
    def title(self) -> str:
        """The document's ``info.title`` (empty when it has none)."""
        info = self.document.get("info")
        title = info.get("title") if isinstance(info, Mapping) else None
        return title if isinstance(title, str) else ""

    def source(
        self,
        *,
        namespace: str | None = None,
        include: Iterable[str] | None = None,
        exclude: Iterable[str] | None = None,
    ) -> OpenAPISource:
        """The registry's source of this API's operations (built now: every schema is checked here)."""
        from ._sources.openapi.source import OpenAPISource  # noqa: PLC0415 - httpx: only when a document is used

        return OpenAPISource(
            self.document,
            app=self.app,
            document_url=self.document_url,
            namespace=namespace,
            include=include,
            exclude=exclude,
            **self.options,
        )

    def __repr__(self) -> str:
        where = "app" if self.app is not None else (self.document_url or "document")
        return f"OpenAPI({self.title or where!r})"


def _is_app(document: Any) -> bool:
    """An ASGI app that describes itself (FastAPI: ``app.openapi()``), not a document."""
    return callable(document) and callable(getattr(document, "openapi", None)) and not isinstance(document, Mapping)


def mount_openapi(
    parent: Server,
    api: OpenAPI,
    *,
    namespace: str | None,
    include: Iterable[str] | None = None,
    exclude: Iterable[str] | None = None,
) -> OpenAPISource:
    """Offer ``api``'s operations through ``parent`` (not running yet: ``mount`` checks), under ``namespace``."""
    if namespace is not None:
        checked_namespace(namespace)
    source = api.source(namespace=namespace, include=include, exclude=exclude)
    registry: Registry = parent.registry
    registry.add_source(source)
    parent.mounted.append((api, source))
    api.sources.append(source)
    return source


class OpenAPIMixin:
    """``Server.from_openapi`` and ``Server.from_fastapi``."""

    openapi: OpenAPISource | None = None
    """The source of a server made by ``from_openapi``/``from_fastapi`` (``renamed``, ``skipped``, ``notes``)."""

    @classmethod
    def from_openapi(
        cls,
        document: Mapping[str, Any] | str | os.PathLike[str] | Any,
        *,
        name: str | None = None,
        client: httpx.AsyncClient | None = None,
        base_url: str | None = None,
        use_servers: bool = False,
        auth: Credential | Sequence[Credential] | httpx.Auth | None = None,
        forward_headers: Iterable[str] = (),
        route_maps: Iterable[RouteMap] = (),
        include_deprecated: bool = False,
        uri_scheme: str = "api",
        timeout: float | None = DEFAULT_TIMEOUT,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        **options: Any,
    ) -> Server:
        """A server whose tools (resources, templates) are the operations of an OpenAPI document.

        >>> server = Server.from_openapi("openapi.json", client=httpx.AsyncClient(base_url="https://api.example.com"))

        ``document`` and the call options are ``OpenAPI``'s; ``name``: the server's name (default
        the document's ``info.title``); ``options``: the ``Server`` constructor's (``version``,
        ``auth``-free settings, middleware, ...). The document is read and every schema checked
        now; nothing is sent until a tool is called. ``server.openapi`` is the source: its
        ``renamed``, ``skipped`` and ``notes`` say what was adapted.
        """
        api = OpenAPI(
            document,
            client=client,
            base_url=base_url,
            use_servers=use_servers,
            auth=auth,
            forward_headers=forward_headers,
            route_maps=route_maps,
            include_deprecated=include_deprecated,
            uri_scheme=uri_scheme,
            timeout=timeout,
            max_response_bytes=max_response_bytes,
        )
        return cls._of_api(api, name, options)

    @classmethod
    def from_fastapi(
        cls,
        app: Any,
        *,
        name: str | None = None,
        auth: Credential | Sequence[Credential] | httpx.Auth | None = None,
        forward_headers: Iterable[str] = (),
        route_maps: Iterable[RouteMap] = (),
        include_deprecated: bool = False,
        uri_scheme: str = "api",
        timeout: float | None = DEFAULT_TIMEOUT,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        **options: Any,
    ) -> Server:
        """A server of a FastAPI app's operations, called in process (httpx's ASGI transport).

        >>> server = Server.from_fastapi(app)

        The document is ``app.openapi()``; every call is a real request through the app, so its
        dependencies, validation and auth run as for any client (``auth=`` supplies what its
        security dependencies check). The app's lifespan runs while the server does. Options as
        ``from_openapi``.
        """
        if not _is_app(app):
            raise TypeError(f"from_fastapi() takes a FastAPI app (an ASGI app with an openapi() method), not {app!r}")
        api = OpenAPI(
            app,
            auth=auth,
            forward_headers=forward_headers,
            route_maps=route_maps,
            include_deprecated=include_deprecated,
            uri_scheme=uri_scheme,
            timeout=timeout,
            max_response_bytes=max_response_bytes,
        )
        return cls._of_api(api, name, options)

    @classmethod
    def _of_api(cls, api: OpenAPI, name: str | None, options: dict[str, Any]) -> Server:
        info = api.document.get("info")
        version = info.get("version") if isinstance(info, Mapping) else None
        if isinstance(version, str) and version:
            options.setdefault("version", version)
        server: Server = cls(name or api.title or "openapi", **options)  # type: ignore[call-arg,assignment]
        server.openapi = mount_openapi(server, api, namespace=None)
        return server
