"""``OpenAPISource``: an OpenAPI document's operations as a snapshot of tools, resources and templates.

Everything is read when the source is built (``OpenAPISource(document, base_url=...)``): the
operations, their route (``routes``), names, schemas, each checked as any tool's is. Building
sends nothing; ``start()`` opens the HTTP client (the one the source owns: a client handed in is
the caller's, used as it is and never closed), and for an ASGI app enters its lifespan. The
snapshot never changes afterwards.

An operation that cannot be served (a schema toolkit refuses, a parameter style it cannot send)
is left out with a warning and listed in ``skipped`` with the reason, so one odd operation does
not cost the other thousand; a document whose structure is broken (no ``openapi`` version, a
``$ref`` cycle in a path item) is refused as a whole (``OpenAPIDocumentError``).

The base URL: ``client``'s ``base_url``, else ``base_url=``, else the document's first ``servers``
entry, and that only when asked (``use_servers=True``): a document says where its authors'
servers are, not where this one should send credentials.
"""

from __future__ import annotations

import contextlib
import http.cookiejar
import logging
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any, Final

import httpx

from ..._errors import RegistrationError, SchemaError
from ..._registry import KINDS, Kind
from ..namespace import outer_name, outer_uri
from .components import OpenAPIResource, OpenAPITemplate, OpenAPITool, item_type, scalar_type
from .credentials import APIKey, Credential
from .operations import Operation, Output, operations, output, plan
from .requests import RequestPlan
from .routes import MAX_NAME, Names, RouteKind, RouteMap, derived_name, route_kind, sanitized
from .schemas import OpenAPIDocumentError, SchemaTranslator
from .sending import DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_TIMEOUT, Answer, OutgoingRequest, Sender, origin

logger = logging.getLogger("toolkit.openapi")

ASGI_BASE_URL: Final = "http://app"
"""The base URL of an app called in process (``Server.from_fastapi``): what its requests' Host says."""
_URI_SCHEME: Final = "api"


class OpenAPISource:
    """The operations of one OpenAPI document, for the registry (a ``Source``).

    ``document``: the document as a mapping (``documents.load_document`` reads a file or URL).
    ``client``/``base_url``/``app``: where calls go (see the module docstring; ``app``: an ASGI app
    called in process). ``namespace``: a prefix for names and URIs, as for a mounted server.
    ``route_maps``: ``RouteMap``s, first match wins (default: every operation a tool).
    ``auth``: ``Bearer``/``APIKey``/``Basic`` (or a list of them), or an ``httpx.Auth``.
    ``forward_headers``: headers of the caller's own HTTP request to send on (none by default).
    ``timeout``: seconds for a whole exchange; ``max_response_bytes``: the largest answer read.
    ``include_deprecated``: keep operations marked ``deprecated`` (left out by default).
    ``uri_scheme``: the scheme of resource URIs (``api://items/{item_id}``).
    ``include``/``exclude``: keep or leave out components by their own names (tool names, resource
    URIs, templates), before the namespace.
    """

    def __init__(
        self,
        document: Mapping[str, Any],
        *,
        client: httpx.AsyncClient | None = None,
        base_url: str | None = None,
        app: Any = None,
        use_servers: bool = False,
        document_url: str | None = None,
        namespace: str | None = None,
        label: str | None = None,
        route_maps: Iterable[RouteMap] = (),
        auth: Credential | Sequence[Credential] | httpx.Auth | None = None,
        forward_headers: Iterable[str] = (),
        timeout: float | None = DEFAULT_TIMEOUT,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        include_deprecated: bool = False,
        uri_scheme: str = _URI_SCHEME,
        include: Iterable[str] | None = None,
        exclude: Iterable[str] | None = None,
    ) -> None:
        self.document = document
        info = document.get("info")
        title = info.get("title") if isinstance(info, Mapping) else None
        self.title: str = title if isinstance(title, str) else ""
        self.namespace = namespace
        self.label = label or (
            f"OpenAPI document {self.title or '(untitled)'!r}" + (f" (namespace {namespace!r})" if namespace else "")
        )
        self.route_maps = tuple(route_maps)
        for route in self.route_maps:
            if not isinstance(route, RouteMap):
                raise TypeError(f"route_maps takes RouteMap(...) items, not {route!r}")
        self.include_deprecated = include_deprecated
        self.uri_scheme = _checked_scheme(uri_scheme)
        credentials, http_auth = _credentials(auth)
        self._given_client = client
        self._app = app
        self._client: httpx.AsyncClient | None = None
        self._running: contextlib.AsyncExitStack | None = None
        self.base_url = self._base_url(client, base_url, app, use_servers, document_url)
        self.sender = Sender(
            self.base_url,
            credentials=credentials,
            auth=http_auth,
            forward_headers=forward_headers,
            timeout=timeout,
            max_response_bytes=max_response_bytes,
        )
        self.renamed: dict[str, str] = {}
        """Operation (``GET /pets``) → its tool name, for every name that is not the one it asked for
        (an ``operationId`` sanitised or taken already)."""
        self.skipped: dict[str, str] = {}
        """Operation → why it is not offered (deprecated, excluded by a route map, cannot be served)."""
        self.notes: dict[str, list[str]] = {}
        """Operation → what was adapted in its input (an argument renamed, a header left out)."""
        self._tables: dict[Kind, dict[str, Any]] = {kind: {} for kind in KINDS}
        self._listeners: list[Callable[[Kind], None]] = []
        self._build(credentials, _names(include, "include"), _names(exclude, "exclude") or frozenset())

    # --- the Source protocol ------------------------------------------------------------------------

    def items(self, kind: Kind) -> Mapping[str, Any]:
        return self._tables[kind]

    def on_change(self, listener: Callable[[Kind], None]) -> None:
        self._listeners.append(listener)  # the snapshot never changes: nobody is ever called

    # --- lifecycle ----------------------------------------------------------------------------------

    async def start(self) -> None:
        """Open the HTTP client this source owns (and enter an ASGI app's lifespan)."""
        if self._given_client is not None or self._client is not None:
            return
        stack = contextlib.AsyncExitStack()
        try:
            app = self._app
            if app is not None:
                app = await _lifespan_entered(app, stack)
            self._client = await stack.enter_async_context(self._new_client(app))
        except BaseException:
            await stack.aclose()
            raise
        self._running = stack

    async def stop(self) -> None:
        stack, self._running, self._client = self._running, None, None
        if stack is not None:
            await stack.aclose()

    def _new_client(self, app: Any) -> httpx.AsyncClient:
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False) if app is not None else None
        timeout = httpx.Timeout(self.sender.timeout) if self.sender.timeout is not None else httpx.Timeout(None)
        # No cookie jar that keeps what an answer sets: the client serves every caller, and a session
        # cookie one caller's call earned must not ride on the next caller's.
        jar = http.cookiejar.CookieJar(policy=http.cookiejar.DefaultCookiePolicy(allowed_domains=[]))
        return httpx.AsyncClient(transport=transport, timeout=timeout, follow_redirects=False, cookies=jar)

    def client(self) -> httpx.AsyncClient:
        """The HTTP client calls go through: the one handed in, or the source's own (opened by ``start``;
        opened here, for the rest of the process, if a call comes before it)."""
        if self._given_client is not None:
            return self._given_client
        if self._client is None:
            if self._app is not None:
                raise RegistrationError(f"{self.label}: not started (its server is not running)")
            self._client = self._new_client(None)
        return self._client

    async def send(self, outgoing: OutgoingRequest, *, what: str, context: Any) -> Answer:
        return await self.sender.send(self.client(), outgoing, what=what, context=context)

    # --- reading the document -----------------------------------------------------------------------

    def _base_url(
        self,
        client: httpx.AsyncClient | None,
        base_url: str | None,
        app: Any,
        use_servers: bool,
        document_url: str | None,
    ) -> str:
        servers = _servers(self.document, document_url)
        if client is not None and app is not None:
            raise ValueError("give client= or an app, not both (an app is called in process through its own client)")
        given = str(client.base_url) if client is not None and str(client.base_url) else None
        if given is not None and base_url is not None and httpx.URL(given) != httpx.URL(base_url):
            raise ValueError(f"base_url={base_url!r} differs from the client's base_url {given!r}: give one of them")
        chosen = given or base_url or (ASGI_BASE_URL if app is not None else None)
        if chosen is None and use_servers:
            if not servers:
                raise ValueError(f"{self.label}: use_servers=True, but the document has no absolute servers URL")
            chosen = servers[0]
        if chosen is None:
            hint = f" (the document's servers say {servers[0]!r}: use_servers=True takes it)" if servers else ""
            raise ValueError(
                f"{self.label}: where should calls go? Pass base_url='https://api.example.com' or "
                f"client=httpx.AsyncClient(base_url=...){hint}"
            )
        if app is None and servers and not use_servers:
            configured = origin(httpx.URL(chosen))
            elsewhere = [url for url in servers if origin(httpx.URL(url)) != configured]
            if elsewhere:
                logger.info(
                    "%s: calls go to %s (configured); the document's servers (%s) are not used",
                    self.label,
                    chosen,
                    ", ".join(elsewhere),
                )
        return chosen

    def _build(
        self, credentials: Sequence[Credential], include: frozenset[str] | None, exclude: frozenset[str]
    ) -> None:
        translator = SchemaTranslator(self.document)
        configured = [(key.location, key.name) for key in credentials if isinstance(key, APIKey)]
        limit = MAX_NAME - (len(self.namespace) + 1 if self.namespace else 0)
        chosen: list[tuple[Operation, RouteKind, str]] = []  # (operation, route kind, the name it asks for)
        for operation in operations(self.document, translator):
            if operation.deprecated and not self.include_deprecated:
                self.skipped[operation.where] = "deprecated (include_deprecated=True keeps it)"
                continue
            kind = route_kind(
                self.route_maps, operation.method, operation.path, operation.tags, readable=operation.readable()
            )
            if kind == "exclude":
                self.skipped[operation.where] = "excluded by a route map"
                continue
            own = operation.operation_id
            wanted = (sanitized(own, limit) if own else "") or derived_name(operation.method, operation.path, limit)
            chosen.append((operation, kind, wanted))
        names = _claimed(chosen, limit)
        for (operation, route, wanted), name in zip(chosen, names, strict=True):
            if name != (operation.operation_id or wanted):
                self.renamed[operation.where] = name
                if name != wanted:  # a collision: worth a warning (sanitising alone is routine, GitHub's are all "a/b")
                    logger.warning(
                        "%s: %s: the name %r is another operation's; this one is the tool %r",
                        self.label,
                        operation.where,
                        wanted,
                        name,
                    )
                else:
                    logger.debug("%s: %s is the tool %r (sanitised)", self.label, operation.where, name)
            try:
                made = self._component(translator, operation, route, name, configured)
            except (OpenAPIDocumentError, SchemaError, ValueError) as exc:
                self.skipped[operation.where] = str(exc)
                logger.warning("%s: %s is left out: %s", self.label, operation.where, exc)
                continue
            table, own_key, component = made
            if (include is not None and own_key not in include) or own_key in exclude:
                self.skipped[operation.where] = f"{own_key!r} is not offered (include=/exclude=)"
                continue
            self._tables[table][_key(table, component)] = component
        if self.renamed:
            logger.info(
                "%s: %d tool names differ from their operationId (sanitised to the tool-name rule, or taken by "
                "another operation): the source's renamed lists them",
                self.label,
                len(self.renamed),
            )

    def _component(
        self,
        translator: SchemaTranslator,
        operation: Operation,
        kind: RouteKind,
        name: str,
        configured: Collection[tuple[str, str]],
    ) -> tuple[Kind, str, Any]:
        """The operation's component, its table and its own key (its name or URI before the namespace)."""
        request = plan(operation, translator, configured=configured)
        notes = [*request.renamed, *request.notes]
        if notes:
            self.notes[operation.where] = notes
        answer = output(operation, translator)
        if kind == "resource":
            readable = self._readable(operation, request, answer, name)
            if readable is not None:
                return readable
            notes.append("a tool, not a resource: its URI template could not be made")
            self.notes[operation.where] = notes
        try:
            tool = OpenAPITool(self, operation, request, answer, outer_name(self.namespace, name))
        except SchemaError:
            if answer.schema is None:
                raise
            tool = OpenAPITool(
                self, operation, request, Output(None, answer.media_type), outer_name(self.namespace, name)
            )
            notes.append("no output schema: the document's does not pass toolkit's checks")
            self.notes[operation.where] = notes
            logger.warning("%s: %s: its output schema is refused; the tool has none", self.label, operation.where)
        return "tools", name, tool

    def _readable(
        self, operation: Operation, request: RequestPlan, answer: Output, name: str
    ) -> tuple[Kind, str, Any] | None:
        """The operation as a resource (no path parameters) or a template; ``None`` if no URI template fits."""
        variables: dict[str, str] = {}  # path parameter → the argument (the template's variable)
        query: list[str] = []  # the arguments, each as the URI query writes it ("tag*": tag=a&tag=b)
        lists: set[str] = set()
        declared = {(raw.get("in"), raw.get("name")): raw for raw, _ in operation.parameters}
        defs = request.input_schema.get("$defs", {})
        for argument, (location, http_name) in request.arguments.items():
            schema = request.input_schema.get("properties", {}).get(argument, {})
            raw = declared.get((location, http_name), {})
            if location == "path":
                variables[http_name] = argument
            elif location != "query" or raw.get("style", "form") != "form" or "content" in raw:
                continue  # a URI query carries form-style values only
            elif scalar_type(schema, defs) is not None:
                query.append(argument)
            elif item_type(schema, defs) is not None:
                query.append(argument + ("*" if raw.get("explode", True) is not False else ""))
                lists.add(argument)
        path = operation.path
        for http_name, argument in variables.items():
            path = path.replace("{" + http_name + "}", "{" + argument + "}")
        own = f"{self.uri_scheme}://{path.lstrip('/') or '/'}"
        if not variables and not query:
            resource = OpenAPIResource(self, operation, request, answer, name, outer_uri(self.namespace, own))
            return "resources", own, resource
        if query:
            own += "{?" + ",".join(query) + "}"
        try:
            template = OpenAPITemplate(
                self,
                operation,
                request,
                answer,
                name,
                own,
                outer_uri(self.namespace, own),
                frozenset(lists),
                frozenset(name.rstrip("*") for name in query),
            )
        except (ValueError, RegistrationError) as exc:
            logger.info("%s: %s stays a tool: no URI template fits it (%s)", self.label, operation.where, exc)
            return None
        return "templates", own, template


def _key(table: Kind, component: Any) -> str:
    """A component's key in its table: a tool's name, a resource's URI, a template's URI template."""
    if table == "tools":
        return str(component.name)
    return str(component.uri_template if table == "templates" else component.uri)


def _claimed(chosen: list[tuple[Operation, RouteKind, str]], limit: int) -> list[str]:
    """Unique names, in document order; an ``operationId`` already valid as written claims first, so
    another's sanitised or derived name never takes it."""
    names = Names(limit)
    result: list[str | None] = [None] * len(chosen)
    for index, (operation, _, wanted) in enumerate(chosen):
        if operation.operation_id == wanted and wanted not in names.taken:
            result[index] = names.claim(wanted)
    for index, (_, _, wanted) in enumerate(chosen):
        if result[index] is None:
            result[index] = names.claim(wanted)
    return [name for name in result if name is not None]


def _servers(document: Mapping[str, Any], document_url: str | None) -> list[str]:
    """The document's absolute ``servers`` URLs (variables at their defaults; relative ones against the
    document's own URL, when it came from one)."""
    found = []
    servers = document.get("servers")
    for server in servers if isinstance(servers, list) else ():
        url = server.get("url") if isinstance(server, Mapping) else None
        if not isinstance(url, str) or not url:
            continue
        variables = server.get("variables")
        for key, variable in variables.items() if isinstance(variables, Mapping) else ():
            default = variable.get("default") if isinstance(variable, Mapping) else None
            if isinstance(default, str):
                url = url.replace("{" + key + "}", default)
        if document_url is not None:
            url = str(httpx.URL(document_url).join(url))
        parsed = httpx.URL(url)
        if parsed.scheme in ("http", "https") and parsed.host:
            found.append(url)
    return found


def _credentials(auth: Any) -> tuple[list[Credential], httpx.Auth | None]:
    if auth is None:
        return [], None
    if isinstance(auth, httpx.Auth):
        return [], auth
    if isinstance(auth, Credential):
        return [auth], None
    if isinstance(auth, Sequence) and not isinstance(auth, str) and all(isinstance(a, Credential) for a in auth):
        return list(auth), None
    raise TypeError(
        "auth= takes toolkit.Bearer(token), toolkit.APIKey(name, value), toolkit.Basic(user, password), a list of "
        f"them, or an httpx.Auth (toolkit.client.OAuth), not {auth!r}"
    )


def _names(given: Iterable[str] | None, option: str) -> frozenset[str] | None:
    if given is None:
        return None
    if isinstance(given, str):
        raise TypeError(f"{option}= takes a list of names, e.g. {option}=[{given!r}]")
    return frozenset(given)


def _checked_scheme(scheme: str) -> str:
    if not isinstance(scheme, str) or not scheme[:1].isalpha() or sanitized(scheme) != scheme or "_" in scheme:
        raise ValueError(f"uri_scheme={scheme!r}: a URI scheme is a letter then letters, digits, '+', '-' or '.'")
    return scheme.lower()


async def _lifespan_entered(app: Any, stack: contextlib.AsyncExitStack) -> Any:
    """Enter a Starlette/FastAPI app's lifespan; the app its requests go to (with the lifespan's state)."""
    router = getattr(app, "router", None)
    lifespan = getattr(router, "lifespan_context", None)
    if lifespan is None:
        return app
    state = await stack.enter_async_context(lifespan(app))
    if not state:
        return app
    shared = dict(state)

    async def with_state(scope: dict[str, Any], receive: Any, send: Any) -> None:
        scope["state"] = dict(shared)  # as Starlette gives each request a shallow copy
        await app(scope, receive, send)

    return with_state
