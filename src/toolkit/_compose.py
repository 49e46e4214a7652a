"""The facade's wiring of other servers into one: ``Server.mount`` and ``Server.proxy``.

A mounted ``Server`` becomes a ``MountedSource`` over its registry, run by its own engine (the
runner this module hands down: the sources never import the engine). A ``toolkit.Client``, a
URL or a command becomes a ``ProxySource`` over a client session. Either is added to the
parent's registry, which refuses a name two sources offer, naming both.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any, cast

from ._errors import RegistrationError, ToolkitError
from ._registry import Kind
from ._sources.mounted import MountedSource
from ._sources.namespace import checked_namespace

if TYPE_CHECKING:
    from ._engine import Engine
    from ._registry import Registry
    from ._server import Server
    from ._sources.proxy import ProxySource
    from ._sources.upstream import Sessions


def selection(
    include: Iterable[str] | None, exclude: Iterable[str] | None, what: str
) -> Any:  # Callable[[Kind, str, Any], bool] | None
    """The allowlist/denylist of a mount, by the names (or URIs) the child gives them."""
    if isinstance(include, str) or isinstance(exclude, str):
        raise TypeError(f"{what}: include= and exclude= take lists of names, e.g. include=['charge']")
    allowed = frozenset(include) if include is not None else None
    denied = frozenset(exclude or ())
    if allowed is None and not denied:
        return None

    def select(kind: Kind, key: str, item: Any) -> bool:
        own = _own_key(kind, item)
        if own in denied:
            return False
        return allowed is None or own in allowed

    return select


def _own_key(kind: Kind, item: Any) -> str:
    """The name (or URI) the child or the upstream gives ``item``, before the namespace."""
    inner = getattr(item, "inner", None)
    if inner is None:  # proxied: the upstream's names
        if kind == "templates":
            return str(item.remote_template)
        return str(item.remote_uri if kind == "resources" else item.remote_name)
    if kind == "templates":
        return str(inner.uri_template)
    if kind == "resources":
        return str(inner.uri)
    return str(inner.name)


def mount_server(
    parent: Server,
    child: Server,
    *,
    namespace: str | None,
    include: Iterable[str] | None = None,
    exclude: Iterable[str] | None = None,
) -> MountedSource:
    """Offer ``child``'s components through ``parent``, under ``namespace``."""
    _not_running(parent, f"server {child.name!r}")
    if namespace is not None:
        checked_namespace(namespace)
    if child is parent:
        raise RegistrationError(f"server {parent.name!r} cannot be mounted in itself")
    if parent in _descendants(child):
        raise RegistrationError(
            f"server {child.name!r} already mounts {parent.name!r} (directly or further down): mounting it in "
            f"{parent.name!r} would make a cycle"
        )
    if any(mounted is child for mounted, _ in parent.mounted):
        raise RegistrationError(f"server {child.name!r} is already mounted in {parent.name!r}")
    label = f"mounted server {child.name!r}" + (f" (namespace {namespace!r})" if namespace else "")
    source = MountedSource(
        child.registry,
        child.engine.calls,
        namespace=namespace,
        label=label,
        select=selection(include, exclude, f"mount({child.name!r})"),
    )
    parent.registry.add_source(source)
    parent.mounted.append((child, source))
    child.parents.append((parent, namespace))
    return source


def _descendants(server: Server) -> list[Server]:
    found: list[Server] = []
    for child, _ in server.mounted:
        if isinstance(child, ComposeMixin):
            found.append(cast("Server", child))
            found.extend(_descendants(cast("Server", child)))
    return found


def mount_client(
    parent: Server,
    client: Any,
    *,
    namespace: str | None,
    include: Iterable[str] | None = None,
    exclude: Iterable[str] | None = None,
    unwrap_results: bool = False,
    sessions: Sessions = "auto",
    forward_token: bool = False,
    upstream_idle_timeout: float = 300.0,
    max_upstream_sessions: int = 100,
    required: bool = True,
) -> ProxySource:
    """Offer the components of the server ``client`` connects to through ``parent``, under ``namespace``."""
    _not_running(parent, "a proxied server")
    from ._client.targets import describe  # noqa: PLC0415 - the client wing: only for a proxy
    from ._sources.proxy import ProxySource  # noqa: PLC0415

    if namespace is not None:
        checked_namespace(namespace)
    label = f"proxied server {describe(client.target)!r}" + (f" (namespace {namespace!r})" if namespace else "")
    source = ProxySource(
        client,
        namespace=namespace,
        label=label,
        unwrap_results=unwrap_results,
        sessions=sessions,
        forward_token=forward_token,
        idle_timeout=upstream_idle_timeout,
        max_sessions=max_upstream_sessions,
        select=selection(include, exclude, f"mount({describe(client.target)!r})"),
        on_resource_updated=parent.notify_resource_updated,
        required=required,
    )
    parent.registry.add_source(source)
    parent.mounted.append((client, source))
    return source


def _not_running(parent: Server, what: str) -> None:
    if parent._runs.count:
        raise RegistrationError(
            f"mount {what} in {parent.name!r} before it starts serving: its lifespan and connections start with "
            f"{parent.name!r}'s"
        )


class SharedRun:
    """One run of a server's lifespan shared by everyone serving it at once: the first starts it, the last stops it."""

    def __init__(self) -> None:
        self.count = 0
        self._stack: contextlib.AsyncExitStack | None = None
        self._lock: asyncio.Lock | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def _locked(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        if self._lock is None or (self._loop is not loop and not self.count):
            self._lock, self._loop = asyncio.Lock(), loop
        return self._lock

    @contextlib.asynccontextmanager
    async def held(self, start: Callable[[contextlib.AsyncExitStack], Awaitable[None]]) -> AsyncIterator[None]:
        lock = self._locked()
        async with lock:
            if not self.count:
                stack = contextlib.AsyncExitStack()
                try:
                    await start(stack)
                except BaseException:
                    await stack.aclose()
                    raise
                self._stack = stack
            self.count += 1
        try:
            yield
        finally:
            async with lock:
                self.count -= 1
                if not self.count and self._stack is not None:
                    stack, self._stack = self._stack, None
                    await stack.aclose()


@contextlib.asynccontextmanager
async def children_running(server: Server) -> AsyncIterator[None]:
    """Mounted servers' lifespans and proxied servers' connections, for as long as ``server`` runs.

    Started in mount order, stopped in reverse. A proxied server's names are known once it is
    connected: one that another source offers fails the start here, naming both.
    """
    async with contextlib.AsyncExitStack() as stack:
        for child, source in server.mounted:
            if isinstance(child, ComposeMixin):
                child = cast("Server", child)
                await stack.enter_async_context(child.running())
                continue
            stack.push_async_callback(source.stop)
            await _start(source)
            server.registry.refuse_clashes(source)
        yield


async def _start(source: Any) -> None:
    """Connect a proxied source; a failure names it (a gateway of several says which one)."""
    from ._sources.upstream import UpstreamUnavailable  # noqa: PLC0415 - only with a proxied source

    try:
        await source.start()
    except UpstreamUnavailable:
        raise
    except (OSError, TimeoutError, ToolkitError) as exc:
        raise UpstreamUnavailable(f"{source.label} could not be reached: {exc}") from exc


class ComposeMixin:
    """``Server.mount``, ``Server.proxy``, and running a server with what is mounted in it."""

    registry: Registry
    engine: Engine
    name: str
    served: bool
    lifespan: Any
    lifespan_state: Any
    mounted: list[tuple[Any, Any]]
    _runs: SharedRun

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[Any]:
        """Enter the lifespan (and mounted servers') for as long as a transport serves this server.

        Entered once however many transports, clients or parents serve it at the same time: the
        first one in starts it, the last one out stops it.
        """
        self.served = True
        self.engine.bind_loop(asyncio.get_running_loop())
        async with self._runs.held(self._start_running):
            yield self

    async def _start_running(self, stack: contextlib.AsyncExitStack) -> None:
        await stack.enter_async_context(
            children_running(cast("Server", self))
        )  # mounted servers start first, stop last
        if self.lifespan is not None:
            self.lifespan_state = await stack.enter_async_context(self.lifespan(self))
            stack.callback(setattr, self, "lifespan_state", None)

    def mount(
        self,
        child: Any,
        namespace: str | None = None,
        *,
        include: Iterable[str] | None = None,
        exclude: Iterable[str] | None = None,
        **proxy_options: Any,
    ) -> None:
        """Offer ``child``'s tools, resources, templates and prompts through this server.

        ``child`` is a ``toolkit.Server`` (run in this process by its own engine: its
        ``on_call_tool`` middleware, lifespan and ``ctx.server`` are its own; this server's
        auth, middleware, rate limits and tracing apply on top). Under ``namespace``, a tool or
        prompt ``charge`` is ``billing_charge`` and a resource ``data://invoices/7`` is
        ``data://billing/invoices/7``. It stays live: what the child adds or removes later
        appears here, and connected clients are told the list changed. ``include``/``exclude``
        keep or leave out the child's components by their own names (or URIs). A name this
        server already offers is refused, naming both.

        ``child`` may also be a ``toolkit.Client`` (not entered): the remote server it connects
        to is proxied, connected when this server starts; ``proxy_options`` are
        ``Server.proxy``'s ``unwrap_results``, ``sessions``, ``forward_token``,
        ``upstream_idle_timeout`` and ``max_upstream_sessions``, and ``required``: with
        ``required=False`` a remote server that cannot be reached when this one starts does not
        fail the start; it is tried again in the background (the reconnection backoff, up to 30
        s) and its components join, announced as a list change, once it answers. Or a
        ``toolkit.OpenAPI``: the operations of an HTTP API (``include``/``exclude`` by their tool
        names and resource URIs).
        """
        if isinstance(child, ComposeMixin):
            child = cast("Server", child)
            if proxy_options:
                raise TypeError(f"mount({child.name!r}): {sorted(proxy_options)} are options of a proxied server")
            mount_server(self, child, namespace=namespace, include=include, exclude=exclude)  # type: ignore[arg-type]
            return
        from ._openapi import OpenAPI, mount_openapi  # noqa: PLC0415 - it imports this module

        if isinstance(child, OpenAPI):
            if proxy_options:
                raise TypeError(f"mount({child!r}): {sorted(proxy_options)} are options of a proxied server")
            _not_running(self, f"the OpenAPI document {child.title!r}")  # type: ignore[arg-type]
            mount_openapi(self, child, namespace=namespace, include=include, exclude=exclude)  # type: ignore[arg-type]
            return
        from ._client.client import Client  # noqa: PLC0415 - the client wing: only for a proxy

        if isinstance(child, Client):
            mount_client(self, child, namespace=namespace, include=include, exclude=exclude, **proxy_options)  # type: ignore[arg-type]
            return
        raise TypeError(
            f"mount() takes a toolkit.Server, or a toolkit.Client for a remote server "
            f"(toolkit.Client('http://...') or toolkit.Client(['python', 'server.py'])), or a toolkit.OpenAPI "
            f"document, not {type(child).__name__}"
        )

    @classmethod
    def proxy(
        cls,
        target: Any,
        *,
        name: str | None = None,
        unwrap_results: bool = False,
        sessions: Sessions = "auto",
        forward_token: bool = False,
        upstream_idle_timeout: float = 300.0,
        max_upstream_sessions: int = 100,
        **options: Any,
    ) -> Server:
        """A server that serves what the MCP server at ``target`` offers, in every era, over any transport.

        ``target``: a URL (Streamable HTTP), a command (stdio), or a ``toolkit.Client`` (its
        ``headers=``/``auth=`` are the upstream's credentials). ``name``: this server's name
        (default ``"proxy"``); ``options``: the ``Server`` constructor's (auth, middleware, ...).
        ``unwrap_results``: an upstream's declared ``{"result": x}`` wrapper (fastmcp, the ``mcp``
        SDK) is undone, so 2026-07-28 callers get ``x`` and its natural schema. ``sessions``:
        ``"auto"`` (a legacy upstream gets a session per legacy downstream session; a modern one
        is shared), ``"shared"`` or ``"per_session"``. ``forward_token``: send each caller's own
        bearer token upstream (off: a caller's token never leaves this server).
        ``upstream_idle_timeout``/``max_upstream_sessions``: a caller's own upstream session is
        closed after that many idle seconds, or when that many are open and it is the least
        recently used (never while a request of it waits for an answer).
        """
        from ._client.client import Client  # noqa: PLC0415 - the client wing: only for a proxy

        server = cls(name or "proxy", **options)  # type: ignore[call-arg]
        client = target if isinstance(target, Client) else Client(target)
        mount_client(
            server,  # type: ignore[arg-type]
            client,
            namespace=None,
            unwrap_results=unwrap_results,
            sessions=sessions,
            forward_token=forward_token,
            upstream_idle_timeout=upstream_idle_timeout,
            max_upstream_sessions=max_upstream_sessions,
        )
        return server  # type: ignore[return-value]
