"""A server mounted in another: its components under a namespace, run by its own engine.

``MountedSource`` offers the child's tools, resources, templates and prompts (``namespace``'s
rules) as a snapshot, rebuilt when the child's registry changes, so the parent's clients hear of
a tool added to the child (``list_changed``). Each item is a thin stand-in for the child's own:
same schemas and validators (compiled once, by the child), same scopes, the outer name. Calling
one goes through the ``Runner`` the facade hands down — the child's engine — so the child's
``on_call_tool`` middleware, ``ctx.server`` and ``ctx.lifespan`` are its own, while the
parent's auth, middleware, rate limits and tracing wrap the whole call, and the parent shapes
the natural outcome once for the caller's era.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from .._components import CallContext, PromptBase, ResourceBase, TemplateBase, ToolBase
from .._content import CallOutcome
from .._errors import RegistrationError
from .._registry import KINDS, Kind
from .namespace import inner_uri, outer_name, outer_uri

if TYPE_CHECKING:
    from .._uritemplate import Value

logger = logging.getLogger("toolkit")


class Runner(Protocol):
    """The child server's engine, as its mounted components reach it (handed down by the facade)."""

    async def run_tool(self, tool: ToolBase, arguments: dict[str, Any], context: CallContext) -> CallOutcome: ...

    async def run_read(
        self, resource: ResourceBase, uri: str, variables: Mapping[str, Value], context: CallContext
    ) -> list[dict[str, Any]]: ...

    async def run_render(
        self, prompt: PromptBase, arguments: dict[str, Any], context: CallContext
    ) -> dict[str, Any]: ...

    async def run_complete(
        self, ref_type: str, target: str, argument: str, value: str, arguments: dict[str, str], context: CallContext
    ) -> list[str] | None: ...


class ChildRegistry(Protocol):
    """What a mounted source reads of the child: its merged snapshot per kind and its changes."""

    def items(self, kind: Kind) -> Mapping[str, Any]: ...

    def on_change(self, listener: Callable[[Kind], None]) -> None: ...

    def session_ended(self, session_id: str) -> None: ...


class MountedTool(ToolBase):
    """A child's tool under its outer name: the child's schemas and validators, run by the child's engine."""

    def __init__(self, inner: ToolBase, name: str, runner: Runner) -> None:
        # Not ToolBase.__init__: the child checked and compiled these schemas already.
        self.inner = inner
        self.runner = runner
        self.name = name
        self._what = f"tool {name!r}"
        self.title = inner.title
        self.description = inner.description
        self.annotations = inner.annotations
        self.meta = inner.meta
        self.icons = inner.icons
        self.scopes = inner.scopes
        self.tags: frozenset[str] = getattr(inner, "tags", frozenset())
        self.task = inner.task
        self.task_start = inner.task_start
        self.max_argument_depth = inner.max_argument_depth
        self.input_schema = inner.input_schema
        self._input_validator = inner._input_validator
        self.header_params = inner.header_params
        self.output_schema = inner.output_schema
        self._output_validator = inner._output_validator
        self.validate_arguments = inner.validate_arguments

    async def call(self, arguments: dict[str, Any], context: CallContext) -> CallOutcome:
        return await self.runner.run_tool(self.inner, arguments, context)


def _stand_in_for(
    made: MountedResource | MountedTemplate, inner: ResourceBase, uri: str, namespace: str | None, runner: Runner
) -> None:
    """What a resource's or a template's stand-in takes from the child's (its own ``inner`` aside)."""
    made.runner = runner
    made.namespace = namespace
    made.uri = uri
    made.name = inner.name
    made.mime_type = inner.mime_type
    made.ttl_ms = inner.ttl_ms
    made.cache_scope = inner.cache_scope
    made.scopes = inner.scopes
    made.tags = getattr(inner, "tags", frozenset())


class MountedResource(ResourceBase):
    """A child's resource under its outer URI."""

    runner: Runner
    namespace: str | None
    tags: frozenset[str]

    def __init__(self, inner: ResourceBase, uri: str, namespace: str | None, runner: Runner) -> None:
        self.inner = inner
        _stand_in_for(self, inner, uri, namespace, runner)

    def listing(self) -> dict[str, Any]:
        return {**self.inner.listing(), "uri": self.uri}

    async def read(self, uri: str, variables: Mapping[str, Value], context: CallContext) -> list[dict[str, Any]]:
        contents = await self.runner.run_read(self.inner, self.inner.uri, variables, context)
        return [_outer_contents(item, self.namespace) for item in contents]


class MountedTemplate(TemplateBase):
    """A child's resource template under its outer URI template; URIs are mapped back before matching."""

    runner: Runner
    namespace: str | None
    tags: frozenset[str]

    def __init__(self, inner: TemplateBase, uri_template: str, namespace: str | None, runner: Runner) -> None:
        self.inner = inner
        _stand_in_for(self, inner, uri_template, namespace, runner)
        self.uri_template = uri_template

    def listing(self) -> dict[str, Any]:
        return {**self.inner.listing(), "uriTemplate": self.uri_template}

    def match(self, uri: str) -> dict[str, Value] | None:
        inner = inner_uri(self.namespace, uri)
        return None if inner is None else self.inner.match(inner)

    def shape(self, uri: str) -> bool:
        inner = inner_uri(self.namespace, uri)
        return inner is not None and self.inner.shape(inner)

    def completion_hints(self) -> Mapping[str, Any]:
        return self.inner.completion_hints()

    async def read(self, uri: str, variables: Mapping[str, Value], context: CallContext) -> list[dict[str, Any]]:
        inner = inner_uri(self.namespace, uri)
        assert inner is not None  # match() said it is ours
        contents = await self.runner.run_read(self.inner, inner, variables, context)
        return [_outer_contents(item, self.namespace) for item in contents]

    async def complete(
        self, argument: str, value: str, arguments: dict[str, str], context: CallContext
    ) -> list[str] | None:
        given = await self.runner.run_complete(
            "ref/resource", self.inner.uri_template, argument, value, arguments, context
        )
        return await _or_further_down(given, self.inner, argument, value, arguments, context)


class MountedPrompt(PromptBase):
    """A child's prompt under its outer name."""

    def __init__(self, inner: PromptBase, name: str, runner: Runner) -> None:
        self.inner = inner
        self.runner = runner
        self.name = name
        self.scopes = inner.scopes
        self.tags: frozenset[str] = getattr(inner, "tags", frozenset())

    def listing(self) -> dict[str, Any]:
        return {**self.inner.listing(), "name": self.name}

    async def render(self, arguments: dict[str, Any], context: CallContext) -> dict[str, Any]:
        return await self.runner.run_render(self.inner, arguments, context)

    def completion_hints(self) -> Mapping[str, Any]:
        return self.inner.completion_hints()

    async def complete(
        self, argument: str, value: str, arguments: dict[str, str], context: CallContext
    ) -> list[str] | None:
        given = await self.runner.run_complete("ref/prompt", self.inner.name, argument, value, arguments, context)
        return await _or_further_down(given, self.inner, argument, value, arguments, context)


async def _or_further_down(
    given: list[str] | None,
    inner: PromptBase | TemplateBase,
    argument: str,
    value: str,
    arguments: dict[str, str],
    context: CallContext,
) -> list[str] | None:
    """``given`` (the child's completer's values), else those of the server behind the child's own item.

    The child has no completer for a prompt or template it mounted or proxied itself (a
    grandchild's ``a_b_remind``): the grandchild's completer is asked, as the child's engine
    would for its own clients.
    """
    if given is not None:
        return given
    ask: Callable[..., Awaitable[list[str] | None]] | None = getattr(inner, "complete", None)
    return None if ask is None else await ask(argument, value, arguments, context)


def _outer_contents(item: dict[str, Any], namespace: str | None) -> dict[str, Any]:
    """A read's item with its URI as the caller knows it (the child's read names the child's own URI)."""
    uri = item.get("uri")
    if namespace is None or not isinstance(uri, str):
        return item
    return {**item, "uri": outer_uri(namespace, uri)}


class MountedSource:
    """The components of a child server under ``namespace``, for the parent's registry (a ``Source``).

    ``select(kind, outer key, item)`` keeps an item or leaves it out (a mount's allowlist or
    denylist); ``None``: everything.
    """

    def __init__(
        self,
        child: ChildRegistry,
        runner: Runner,
        *,
        namespace: str | None,
        label: str,
        select: Callable[[Kind, str, Any], bool] | None = None,
    ) -> None:
        self.child = child
        self.runner = runner
        self.namespace = namespace
        self.label = label
        self.select = select
        self._listeners: list[Callable[[Kind], None]] = []
        self._made: dict[Kind, dict[int, Any]] = {}
        """Per kind, the stand-in made for each child item (by identity), kept while the child offers it."""
        self._tables: dict[Kind, dict[str, Any]] = {kind: self._build(kind) for kind in KINDS}
        self._following = False

    def items(self, kind: Kind) -> Mapping[str, Any]:
        return self._tables[kind]

    def on_change(self, listener: Callable[[Kind], None]) -> None:
        # The child is followed from the first listener on (the parent's registry, once it has
        # accepted this source): a mount refused for a clash leaves no listener on the child.
        if not self._following:
            self._following = True
            self.child.on_change(self._child_changed)
        self._listeners.append(listener)

    def session_ended(self, session_id: str) -> None:
        """A parent's session ended: the child's sources let go of what they hold for it (its calls ran in it)."""
        self.child.session_ended(session_id)

    def _child_changed(self, kind: Kind) -> None:
        self._tables[kind] = self._build(kind, live=True)
        for listener in self._listeners:
            listener(kind)

    def _build(self, kind: Kind, *, live: bool = False) -> dict[str, Any]:
        """The outer snapshot of ``kind``; a child item seen before keeps its stand-in (and its cached shapes).

        An item that cannot be named under the namespace (a template starting with a variable)
        is refused at mount time; added to the child later, it is left out here and a warning
        says why: the child's own registration stands, and its other parents still hear of it.
        """
        before = self._made.get(kind, {})
        made_now: dict[int, Any] = {}
        table: dict[str, Any] = {}
        for item in self.child.items(kind).values():
            made = before.get(id(item))
            if made is None or made.inner is not item:
                try:
                    made = self._stand_in(kind, item)
                except RegistrationError as exc:
                    if not live:
                        raise
                    logger.warning("%s leaves out a %s: %s", self.label, kind.rstrip("s"), exc)
                    continue
            made_now[id(item)] = made
            key = made.uri_template if kind == "templates" else made.uri if kind == "resources" else made.name
            if self.select is None or self.select(kind, key, made):
                table[key] = made
        self._made[kind] = made_now
        return table

    def _stand_in(self, kind: Kind, item: Any) -> Any:
        namespace, runner = self.namespace, self.runner
        if kind == "tools":
            return MountedTool(item, outer_name(namespace, item.name), runner)
        if kind == "prompts":
            return MountedPrompt(item, outer_name(namespace, item.name), runner)
        if kind == "templates":
            return MountedTemplate(item, outer_uri(namespace, item.uri_template), namespace, runner)
        return MountedResource(item, outer_uri(namespace, item.uri), namespace, runner)
