"""The facade's wiring of other servers into one: ``Server.mount`` and ``Server.proxy``.

A mounted ``Server`` becomes a ``MountedSource`` over its registry, run by its own engine (the
runner this module hands down: the sources never import the engine). A ``toolkit.Client``, a
URL or a command becomes a ``ProxySource`` over a client session. Either is added to the
parent's registry, which refuses a name two sources offer, naming both.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ._errors import RegistrationError
from ._registry import Kind
from ._sources.mounted import MountedSource
from ._sources.namespace import checked_namespace

if TYPE_CHECKING:
    from ._server import Server


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
    inner = getattr(item, "inner", item)
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
        found.append(child)
        found.extend(_descendants(child))
    return found


class ComposeMixin:
    """``Server.mount`` and ``Server.proxy``: other servers' components offered through this one."""

    registry: Any
    name: str

    def mount(
        self,
        child: Any,
        namespace: str | None = None,
        *,
        include: Iterable[str] | None = None,
        exclude: Iterable[str] | None = None,
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
        """
        from ._server import Server  # noqa: PLC0415 - the facade, for the isinstance only

        if isinstance(child, Server):
            mount_server(self, child, namespace=namespace, include=include, exclude=exclude)  # type: ignore[arg-type]
            return
        raise TypeError(
            f"mount() takes a toolkit.Server (or a toolkit.Client for a remote server), not {type(child).__name__}"
        )
