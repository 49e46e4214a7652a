"""The extension API (ARCHITECTURE §9): what an extension declares, and what it is given.

An ``Extension`` says what it adds; the engine asks it, at the points where each addition
matters. It is never handed the ``Server``: ``bind`` gives it an ``ExtensionHost`` (the
registry it may read, the settings, and the envelope every result needs).

What it can add:

- ``capabilities(capabilities, version)``: edit the server's capabilities for a version (an
  extension of 2026-07-28 goes under ``capabilities["extensions"][id]``).
- ``methods()``: extra request methods, each a ``Method`` (its eras, the field ``Mcp-Name``
  mirrors) with its handler; the engine adds them to its one method table, and the HTTP
  transport checks their headers like a core method's.
- ``around_call(call, call_next)``: a hook around ``tools/call``, asked only for the calls its
  ``wants_call(tool, params)`` picks (so a server pays nothing for calls it leaves alone).
- ``tools_list_entry(entry, tool, version)``: edit a tool's ``tools/list`` entry (cached per
  version, like the entry itself).
- ``sources()``: components of its own (a ``Source`` the registry merges).
- ``attach_store(store)`` / ``detach_store()`` / ``shutdown()``: its lifespan beside the server's
  (a shared store replicas agree through; the server stopping), and ``on_bus(message)``: a
  message another replica published on the store's bus for it.

Per-request state of an extension lives in the inbound request's ``extras`` (a dict), never in
new slots; ``_inbound`` names the keys the ``Context`` reads (``RUNS_AS``: what a call runs as
when that takes over its progress and its questions, a task; ``BEGIN_TASK``: what
``ctx.begin_task()`` signals).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from .._components import ToolBase
    from .._context import Context
    from .._inbound import InboundRequest
    from .._methods import Method
    from .._registry import Registry, Source
    from .._settings import Settings
    from .._store.base import Store

Handler = Callable[["InboundRequest"], Awaitable[dict[str, Any]]]
"""A request method's handler: the inbound request in, the result (before the envelope) out."""


class ExtensionHost(Protocol):
    """What the engine lends an extension: read-only views and the envelope, never the ``Server``."""

    @property
    def registry(self) -> Registry: ...

    @property
    def settings(self) -> Settings: ...

    def envelop(
        self, result: dict[str, Any], inbound: InboundRequest, *, result_type: str = "complete"
    ) -> dict[str, Any]:
        """The result as the request's version sends it (the modern envelope: ``resultType``, ``serverInfo``)."""
        ...


class ToolCall(Protocol):
    """One ``tools/call`` as the ``around_call`` hook sees it, with what the hook may do with it."""

    @property
    def inbound(self) -> InboundRequest: ...

    @property
    def tool(self) -> ToolBase: ...

    @property
    def arguments(self) -> dict[str, Any]: ...

    def context(self, *, with_answers: bool = True) -> Context:
        """The ``Context`` the tool runs with (``with_answers``: the modern rounds' answers loaded)."""
        ...

    async def run(self, context: Context) -> dict[str, Any]:
        """Run the tool (middleware and tracing included) and give its result, shaped for the version."""
        ...

    def input_required(self) -> dict[str, Any]:
        """The ``input_required`` result for the questions the call asked (2026-07-28)."""
        ...


CallNext = Callable[[], Awaitable[dict[str, Any]]]
"""Passes the call on: to the next extension's hook, or to the call itself."""


class Extension:
    """Subclass and override what your extension adds; each default adds nothing."""

    id: str = ""
    """The extension's identifier (``io.modelcontextprotocol/tasks``)."""

    def bind(self, host: ExtensionHost) -> None:
        """Called once, when the extension is added to a server, with what it may use of it."""

    def capabilities(self, capabilities: dict[str, Any], version: str) -> None:
        """Add what this extension declares to ``capabilities`` for ``version`` (edit in place).

        Most extensions call ``self.declare(capabilities)``: the extensions framework's
        ``capabilities.extensions[id]`` (SEP-2133), which every version's schema lets through.
        """

    def declare(self, capabilities: dict[str, Any], settings: dict[str, Any] | None = None) -> None:
        """Put ``settings`` (default ``{}``) under ``capabilities["extensions"][self.id]``."""
        capabilities.setdefault("extensions", {})[self.id] = settings if settings is not None else {}

    def methods(self) -> Iterable[tuple[Method, Handler]]:
        """Extra request methods and their handlers."""
        return ()

    def wants_call(self, tool: ToolBase, params: Mapping[str, Any]) -> bool:
        """Whether ``around_call`` should see this ``tools/call`` (cheap: asked for every call)."""
        return False

    async def around_call(self, call: ToolCall, call_next: CallNext) -> dict[str, Any]:
        """Wrap a ``tools/call`` this extension wants: answer it yourself, or ``await call_next()``."""
        return await call_next()

    def tools_list_entry(self, entry: dict[str, Any], tool: ToolBase, version: str) -> dict[str, Any]:
        """A tool's ``tools/list`` entry for ``version``, edited (return it)."""
        return entry

    def sources(self) -> Iterable[Source]:
        """Components this extension offers (merged after the server's own)."""
        return ()

    async def attach_store(self, store: Store) -> None:
        """The server serves with ``store``, shared by its replicas: keep what they must agree on there."""

    def detach_store(self) -> None:
        """The shared store is going away."""

    async def shutdown(self) -> None:
        """The server stops: end what runs here."""

    def on_bus(self, message: dict[str, Any]) -> bool:
        """A message from the store's bus; ``True`` if it was this extension's."""
        return False

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.id!r})"
