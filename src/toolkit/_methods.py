"""The protocol's request methods, in one table: which era has each, what names its target, its kind.

Both sides of the wire read it: the engine (which era may call a method, the capability it
needs), the HTTP transport (the body field the modern ``Mcp-Name`` header mirrors: 2026-07-28
streamable-http, "Server Validation"), the registry and telemetry (what a request is about), and
a client (which header to send). The tasks extension's methods are here too, so their
``Mcp-Name`` is checked like a core method's.
"""

from __future__ import annotations

from typing import Any, Final, Literal

from ._types import TASKS_EXTENSION

Era = Literal["legacy", "modern"]
LEGACY: Final[frozenset[Era]] = frozenset({"legacy"})
MODERN: Final[frozenset[Era]] = frozenset({"modern"})
BOTH: Final[frozenset[Era]] = frozenset({"legacy", "modern"})


class Method:
    """One request method: its eras, the ``params`` field naming its target, its kind."""

    __slots__ = ("eras", "extension", "kind", "name", "target")

    def __init__(
        self,
        name: str,
        eras: frozenset[Era],
        *,
        target: str | None = None,
        kind: str | None = None,
        extension: str | None = None,
    ) -> None:
        self.name = name
        self.eras = eras
        self.target = target
        """The ``params`` field that names what the request is about (``name``, ``uri``, ``taskId``)."""
        self.kind = kind
        """The feature it belongs to, as the server's capabilities name it (``tools``, ``prompts``, ...)."""
        self.extension = extension
        """The extension that defines it (``io.modelcontextprotocol/tasks``); ``None``: the core protocol."""

    def __repr__(self) -> str:
        return f"Method({self.name!r}, eras={sorted(self.eras)}, target={self.target!r}, kind={self.kind!r})"


METHODS: Final[dict[str, Method]] = {
    method.name: method
    for method in (
        Method("initialize", LEGACY),
        Method("ping", LEGACY),
        Method("logging/setLevel", LEGACY, kind="logging"),
        Method("server/discover", MODERN),
        Method("subscriptions/listen", MODERN),
        Method("tools/list", BOTH, kind="tools"),
        Method("tools/call", BOTH, target="name", kind="tools"),
        Method("resources/list", BOTH, kind="resources"),
        Method("resources/templates/list", BOTH, kind="resources"),
        Method("resources/read", BOTH, target="uri", kind="resources"),
        Method("resources/subscribe", LEGACY, target="uri", kind="resources"),
        Method("resources/unsubscribe", LEGACY, target="uri", kind="resources"),
        Method("prompts/list", BOTH, kind="prompts"),
        Method("prompts/get", BOTH, target="name", kind="prompts"),
        Method("completion/complete", BOTH, kind="completions"),
        # The tasks extension: 2025-11-25's experimental form and 2026-07-28's
        # ("Streamable HTTP: Routing Headers" names taskId for Mcp-Name).
        Method("tasks/get", BOTH, target="taskId", kind="tasks", extension=TASKS_EXTENSION),
        Method("tasks/cancel", BOTH, target="taskId", kind="tasks", extension=TASKS_EXTENSION),
        Method("tasks/result", LEGACY, target="taskId", kind="tasks", extension=TASKS_EXTENSION),
        Method("tasks/list", LEGACY, kind="tasks", extension=TASKS_EXTENSION),
        Method("tasks/update", MODERN, target="taskId", kind="tasks", extension=TASKS_EXTENSION),
    )
}
"""Every request method toolkit knows, core and extensions', by name."""

MODERN_ONLY: Final = frozenset(
    name for name, method in METHODS.items() if method.eras == MODERN and method.extension is None
)
"""Core methods only the modern era has: a request for one is modern even without ``_meta``."""


def named_field(method: str) -> str | None:
    """The ``params`` field the modern ``Mcp-Name`` header mirrors for ``method``; ``None``: no header."""
    known = METHODS.get(method)
    return known.target if known is not None and "modern" in known.eras else None


def target(method: str, params: dict[str, Any]) -> str | None:
    """The name, URI or task id a request is about, when it names one as a string."""
    known = METHODS.get(method)
    if known is None or known.target is None:
        return None
    value = params.get(known.target)
    return value if isinstance(value, str) else None
