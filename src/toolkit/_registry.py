"""``Registry``: what a server offers — tools, resources, templates, prompts, completers — merged from sources.

A source (``Source``) is a snapshot per kind plus a change callback: the decorators are the
first one (``LocalSource``); a mounted server, a proxied one or an OpenAPI document are others
(``add_source``). The registry keeps the merged snapshot the request path reads. Every change
bumps that kind's generation (list cursors carry it, so a stale cursor is refused) and is
announced to the change listeners (the engine drops its cached list pages and tells subscribed
clients).

What the merge offers can be shaped by rules that outlive any one component: components
switched off by name or tag (``set_enabled``) and tools replaced by a transformed version
(``transform_tool``). They are applied while merging, so a component that arrives later obeys
them too, and the request path stays a dict lookup. With no rule set, nothing is done.
``Selection`` is the allowlist/denylist a mount applies to one source.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol

from ._completions import Completer
from ._components import PromptBase, ResourceBase, TemplateBase, ToolBase, declared_strings
from ._errors import INVALID_PARAMS, McpError, RegistrationError, UnsafeValue
from ._methods import METHODS
from ._methods import target as target_of

if TYPE_CHECKING:
    from ._uritemplate import Value

logger = logging.getLogger("toolkit")

NO_SCOPES: Final[frozenset[str]] = frozenset()

Kind = Literal["tools", "resources", "templates", "prompts"]
KINDS: Final[tuple[Kind, ...]] = ("tools", "resources", "templates", "prompts")
_NOUN: Final[dict[Kind, str]] = {
    "tools": "tool",
    "resources": "resource",
    "templates": "resource template",
    "prompts": "prompt",
}
CompletionKey = tuple[str, str, str]
"""``(ref type, prompt name or template URI, argument name)``."""


class Source(Protocol):
    """Where components come from: a snapshot per kind and a change callback (ARCHITECTURE §7).

    The decorators are one source (``LocalSource``); a mounted server, a proxied one and an
    OpenAPI document are others. ``label`` names it in errors ("mounted server 'billing'").
    A source that holds something per legacy session (a proxy's upstream sessions) also has
    ``session_ended(session_id)``, called when such a session ends here.
    """

    label: str

    def items(self, kind: Kind) -> Mapping[str, Any]: ...

    def on_change(self, listener: Callable[[Kind], None]) -> None: ...


class LocalSource:
    """The components the server's own decorators and ``add_*`` calls registered."""

    label = "this server"

    def __init__(self) -> None:
        self.tables: dict[Kind, dict[str, Any]] = {kind: {} for kind in KINDS}
        self._listeners: list[Callable[[Kind], None]] = []

    def items(self, kind: Kind) -> Mapping[str, Any]:
        return self.tables[kind]

    def on_change(self, listener: Callable[[Kind], None]) -> None:
        self._listeners.append(listener)


class Selection:
    """Which of a source's components to offer: an allowlist and a denylist, by name and by tag.

    A name is a tool's or a prompt's name, or a resource's URI or a template's URI template.

    - ``names`` / ``tags``: offer only the components named here or carrying one of these tags
      (either suffices); leave both out to offer everything;
    - ``exclude_names`` / ``exclude_tags``: never offer these, even when included (exclusion wins).

    >>> only_reads = Selection(tags={"read"}, exclude_names={"dump_all"})
    """

    __slots__ = ("exclude_names", "exclude_tags", "names", "tags")

    def __init__(
        self,
        *,
        names: Iterable[str] | None = None,
        tags: Iterable[str] | None = None,
        exclude_names: Iterable[str] | None = None,
        exclude_tags: Iterable[str] | None = None,
    ) -> None:
        self.names = None if names is None else declared_strings(names, "Selection", "names=")
        self.tags = None if tags is None else declared_strings(tags, "Selection", "tags=")
        self.exclude_names = declared_strings(exclude_names, "Selection", "exclude_names=")
        self.exclude_tags = declared_strings(exclude_tags, "Selection", "exclude_tags=")

    def allows(self, kind: Kind, key: str, item: Any) -> bool:
        """Whether the component ``item``, offered as ``key`` (a name or URI), is offered."""
        tags: frozenset[str] = item.tags
        if key in self.exclude_names or not self.exclude_tags.isdisjoint(tags):
            return False
        if self.names is None and self.tags is None:
            return True
        return (self.names is not None and key in self.names) or (
            self.tags is not None and not self.tags.isdisjoint(tags)
        )

    def __repr__(self) -> str:
        given = [
            f"{field}={sorted(value)!r}"
            for field in ("names", "tags", "exclude_names", "exclude_tags")
            if (value := getattr(self, field))
        ]
        return f"Selection({', '.join(given)})"


ToolRule = Callable[[ToolBase], ToolBase]
"""What ``Registry.transform_tool`` applies: the tool offered in, its replacement out."""


class Registry:
    """What the server offers, merged from its sources in order; the decorators' source comes first.

    ``tools``, ``resources``, ``templates`` and ``prompts`` are the merged snapshots the request
    path reads (a dict lookup, whatever the source). A name two sources offer is refused when the
    second one arrives, naming both; should a source later announce one anyway, the earlier
    source keeps it and a warning is logged.
    """

    def __init__(self) -> None:
        self.local = LocalSource()
        self._sources: list[Source] = [self.local]
        self.tools: dict[str, ToolBase] = {}
        self.resources: dict[str, ResourceBase] = {}
        self.templates: dict[str, TemplateBase] = {}
        self.prompts: dict[str, PromptBase] = {}
        self.completers: dict[CompletionKey, Completer] = {}
        self.generation: dict[Kind, int] = dict.fromkeys(KINDS, 0)
        self.scopes: dict[Kind, frozenset[str]] = dict.fromkeys(KINDS, frozenset())
        """Per kind, every scope some item of that kind requires (empty: nothing is protected)."""
        self._task_tools = 0
        """How many tools may run as a task."""
        self._listeners: list[Callable[[Kind], None]] = []
        self._tables: dict[Kind, dict[str, Any]] = {
            "tools": self.tools,
            "resources": self.resources,
            "templates": self.templates,
            "prompts": self.prompts,
        }
        self._switched: dict[str, bool] = {}
        """Name or URI → on or off (``set_enabled``): it decides for that component, whatever its tags."""
        self._off_tags: set[str] = set()
        """Tags switched off: a component carrying one is off, unless switched on by name."""
        self._tool_rules: dict[str, ToolRule] = {}
        """Tool name → the rule that replaces that tool (``transform_tool``)."""
        self._ruled: dict[str, tuple[ToolBase, ToolBase | None]] = {}
        """Tool name → (the tool a source offers, what its rule made of it; ``None``: the rule failed)."""
        self._shaped = False
        """Whether any rule is set; if not, the merge offers the sources' components as they are."""

    def on_change(self, listener: Callable[[Kind], None]) -> None:
        """Call ``listener(kind)`` after every addition or removal (from any thread)."""
        self._listeners.append(listener)

    def items(self, kind: Kind) -> Mapping[str, Any]:
        return self._tables[kind]

    @property
    def has_resources(self) -> bool:
        """Whether the server serves resources: some offered, or all of them switched off for now."""
        return bool(self.resources or self.templates) or self._offers("resources", "templates")

    @property
    def has_prompts(self) -> bool:
        return bool(self.prompts) or self._offers("prompts")

    def _offers(self, *kinds: Kind) -> bool:
        """Whether a source offers ``kinds`` that rules keep from the snapshot (a capability stays declared)."""
        return self._shaped and any(source.items(kind) for source in self._sources for kind in kinds)

    @property
    def has_tasks(self) -> bool:
        """Whether some tool may run as a task (the server then declares tasks)."""
        return self._task_tools > 0

    # --- sources ------------------------------------------------------------------------------

    def add_source(self, source: Source) -> None:
        """Offer ``source``'s components after those already here; a name offered twice is refused."""
        if source in self._sources:
            raise RegistrationError(f"{source.label} is already a source of this server")
        self.refuse_clashes(source)
        self._sources.append(source)
        source.on_change(self._source_changed)
        for kind in KINDS:
            if source.items(kind):
                self._source_changed(kind)

    def session_ended(self, session_id: str) -> None:
        """A legacy session ended here: each source that holds something for it lets it go."""
        for source in self._sources:
            ended = getattr(source, "session_ended", None)
            if ended is not None:
                ended(session_id)

    def remove_source(self, source: Source) -> None:
        """Stop offering ``source``'s components (the local source stays)."""
        if source is self.local or source not in self._sources:
            raise KeyError(f"{source.label} is not a source of this server")
        self._sources.remove(source)
        for kind in KINDS:
            if source.items(kind):
                self._source_changed(kind)

    def refuse_clashes(self, source: Source) -> None:
        """``RegistrationError`` naming both if ``source`` offers a name another source offers.

        Called when a source is added, and again once a remote one knows its names (it connected).
        """
        for kind in KINDS:
            for key in source.items(kind):
                owner = self._origin(kind, key, besides=source)
                if owner is not None:
                    raise RegistrationError(
                        f"{source.label} offers the {_NOUN[kind]} {key!r}, which {owner.label} already offers; "
                        "rename one of them (or mount under a namespace)"
                    )

    def _origin(self, kind: Kind, key: str, besides: Source | None = None) -> Source | None:
        return next((source for source in self._sources if source is not besides and key in source.items(kind)), None)

    def _source_changed(self, kind: Kind) -> None:
        """A source changed ``kind``: merge the snapshot again; announce it if what is offered changed."""
        if self._merge(kind):
            self._changed(kind)

    def _merged(self, kind: Kind, *, warn: bool = True) -> dict[str, Any]:
        """What the sources offer of ``kind``, first source first, before any rule."""
        merged: dict[str, Any] = {}
        for source in self._sources:
            for key, item in source.items(kind).items():
                if key not in merged:
                    merged[key] = item
                elif merged[key] is not item and warn:
                    logger.warning(
                        "%s offers the %s %r, which an earlier source offers: the earlier one is kept",
                        source.label,
                        _NOUN[kind],
                        key,
                    )
        return merged

    def _merge(self, kind: Kind, *, warn: bool = True) -> bool:
        """Rebuild the snapshot of ``kind`` from the sources and the rules; whether it changed."""
        merged = self._merged(kind, warn=warn)
        if self._shaped:
            merged = self._shape(kind, merged)
        table = self._tables[kind]
        if list(table.items()) == list(merged.items()):  # components compare by identity
            return False
        table.clear()
        table.update(merged)
        self.scopes[kind] = frozenset().union(*(item.scopes for item in table.values()))
        if kind == "tools":
            self._task_tools = sum(tool.task != "forbidden" for tool in self.tools.values())
        return True

    # --- rules: what is offered, whatever the source ---------------------------------------------

    def set_enabled(self, enabled: bool, names: Iterable[str] = (), tags: Iterable[str] = ()) -> None:
        """Switch components on or off by name (or URI) and by tag, now and for any that arrive later.

        A component switched by name is on or off as its name says; any other is off while one
        of its tags is. So after ``disable(tags={"admin"})``, ``enable("reset")`` offers ``reset``
        although it is tagged ``admin``, and ``enable(tags={"admin"})`` offers the others again
        (those carrying another tag switched off stay off). Only the kinds whose snapshot
        changed are announced.
        """
        for name in names:
            self._switched[name] = enabled
        if enabled:
            self._off_tags.difference_update(tags)
        else:
            self._off_tags.update(tags)
        if not self._off_tags and all(self._switched.values()):  # nothing is off: no rule is needed
            self._switched.clear()
        self._reshape(KINDS)

    def is_enabled(self, key: str, item: Any) -> bool:
        """Whether the enable/disable rules offer ``item`` (offered as ``key``: its name or URI)."""
        switched = self._switched.get(key)
        if switched is not None:
            return switched
        return self._off_tags.isdisjoint(item.tags)

    def transform_tool(self, name: str, rule: ToolRule | None) -> None:
        """Offer ``rule(tool)`` instead of the tool named ``name``, now and whenever such a tool arrives.

        ``rule`` runs once per tool a source offers, not per call; ``None`` removes the rule. A
        tool offered now is transformed at once, so a rule that cannot apply to it (or whose
        new name another tool has) raises here and changes nothing. One that fails on a tool
        arriving later is logged, and that tool left out until the rule fits it.
        """
        rules = dict(self._tool_rules)
        if rule is None:
            rules.pop(name, None)
        else:
            rules[name] = rule
        previous = self._ruled.pop(name, None)
        try:
            self._transformed(self._merged("tools", warn=False), rules, strict=name)
        except Exception:
            if previous is not None:
                self._ruled[name] = previous
            raise
        self._tool_rules = rules
        self._reshape(("tools",))

    def touch(self, *kinds: Kind) -> None:
        """Announce ``kinds`` as changed although no source changed them (who sees what did)."""
        for kind in kinds:
            self._changed(kind)

    def _reshape(self, kinds: Iterable[Kind]) -> None:
        self._shaped = bool(self._switched or self._off_tags or self._tool_rules)
        for kind in kinds:
            if self._merge(kind, warn=False):
                self._changed(kind)

    def _shape(self, kind: Kind, merged: dict[str, Any]) -> dict[str, Any]:
        if kind == "tools" and self._tool_rules:
            merged = self._transformed(merged, self._tool_rules)
        if self._switched or self._off_tags:
            merged = {key: item for key, item in merged.items() if self.is_enabled(key, item)}
        return merged

    def _transformed(
        self, merged: dict[str, Any], rules: Mapping[str, ToolRule], strict: str | None = None
    ) -> dict[str, Any]:
        """``merged`` with each ruled tool replaced, under its new name; ``strict``: raise for that one."""
        kept = {key for key in merged if key not in rules}
        shaped: dict[str, Any] = {}
        for key, tool in merged.items():
            rule = rules.get(key)
            if rule is None:
                shaped[key] = tool
                continue
            made = self._made(key, tool, rule, strict=key == strict)
            if made is None:
                continue
            if made.name in kept or made.name in shaped:
                problem = f"server.transform_tool({key!r}) names the tool {made.name!r}, which another tool has"
                if key == strict:
                    raise RegistrationError(f"{problem}; give it another name=")
                logger.warning("%s: the transformed tool is left out", problem)
                continue
            shaped[made.name] = made
        return shaped

    def _made(self, key: str, tool: ToolBase, rule: ToolRule, *, strict: bool) -> ToolBase | None:
        """What ``rule`` makes of ``tool``, once per tool offered (cached until another one is)."""
        cached = self._ruled.get(key)
        if cached is not None and cached[0] is tool:
            return cached[1]
        made: ToolBase | None
        try:
            made = rule(tool)
        except Exception as exc:
            if strict:
                raise
            logger.error("server.transform_tool(%r) does not fit the tool offered now (%s): it is left out", key, exc)
            made = None
        self._ruled[key] = (tool, made)
        return made

    # --- changes ------------------------------------------------------------------------------

    def add_tool(self, tool: ToolBase) -> ToolBase:
        self._add(
            "tools",
            tool.name,
            tool,
            f"a tool named {tool.name!r} is already registered; pass name=... to register another",
        )
        return tool

    def remove_tool(self, name: str) -> None:
        self._remove("tools", name, f"no tool named {name!r}")

    def add_resource(self, resource: ResourceBase) -> None:
        self._add("resources", resource.uri, resource, f"a resource {resource.uri!r} is already registered")

    def add_template(self, template: TemplateBase) -> None:
        uri = template.uri_template
        self._add("templates", uri, template, f"a resource template {uri!r} is already registered")

    def remove_resource(self, uri: str) -> None:
        """Remove a resource or a template by its URI (template)."""
        kind: Kind = "resources" if uri in self.local.tables["resources"] else "templates"
        self._remove(kind, uri, f"no resource or template {uri!r}")

    def add_prompt(self, prompt: PromptBase) -> None:
        self._add("prompts", prompt.name, prompt, f"a prompt named {prompt.name!r} is already registered")

    def remove_prompt(self, name: str) -> None:
        self._remove("prompts", name, f"no prompt named {name!r}")

    def add_completer(self, key: CompletionKey, completer: Completer) -> None:
        self.completers[key] = completer

    def _add(self, kind: Kind, key: str, item: Any, duplicate: str) -> None:
        owner = self._origin(kind, key)
        if owner is self.local:
            raise RegistrationError(duplicate)
        if owner is not None:
            raise RegistrationError(
                f"the {_NOUN[kind]} {key!r} is already offered by {owner.label}; register this one under "
                "another name (name=...), or mount the other under a namespace"
            )
        if key in self._tables[kind]:  # no source offers it: a tool transform_tool renamed has it
            raise RegistrationError(f"{duplicate} (by server.transform_tool)")
        self.local.tables[kind][key] = item
        if len(self._sources) == 1 and not self._shaped:  # the common case: the local table is the merge
            self._tables[kind][key] = item
            if item.scopes:
                self.scopes[kind] |= item.scopes
            if kind == "tools":
                self._task_tools += item.task != "forbidden"
            self._changed(kind)
        else:
            self._source_changed(kind)

    def _remove(self, kind: Kind, key: str, missing: str) -> None:
        item = self.local.tables[kind].pop(key, None)
        if item is None:
            raise KeyError(missing)
        if len(self._sources) == 1 and not self._shaped:
            del self._tables[kind][key]
            if item.scopes:
                self.scopes[kind] = frozenset().union(*(other.scopes for other in self._tables[kind].values()))
            if kind == "tools":
                self._task_tools -= item.task != "forbidden"
            self._changed(kind)
        else:
            self._source_changed(kind)

    def _changed(self, kind: Kind) -> None:
        self.generation[kind] += 1
        for listener in self._listeners:
            listener(kind)

    # --- lookups ------------------------------------------------------------------------------

    def scopes_in_use(self) -> frozenset[str]:
        """Every scope any tool, resource, template or prompt requires."""
        return frozenset().union(*self.scopes.values())

    def find_resource(self, uri: str) -> tuple[ResourceBase, dict[str, Value]] | None:
        """The resource at ``uri``, or the first template matching it with its variables.

        A URI whose values a template refuses (``..``, an absolute path: ``_uritemplate``) is an
        invalid-params error naming the variable, unless a later template takes it.
        """
        resource = self.resources.get(uri)
        if resource is not None:
            return resource, {}
        refused: UnsafeValue | None = None
        for template in self.templates.values():
            try:
                variables = template.match(uri)
            except UnsafeValue as exc:
                refused = refused or exc
                continue
            if variables is not None:
                return template, variables
        if refused is not None:
            raise McpError(INVALID_PARAMS, f"Invalid params: {refused}", {"uri": uri})
        return None

    # --- what a request is about -----------------------------------------------------------------

    def required_scopes(self, method: str, params: dict[str, Any]) -> frozenset[str]:
        """The scopes the tool, resource or prompt a request targets requires (none for other requests)."""
        if method == "tools/call":
            kinds: tuple[Kind, ...] = ("tools",)
        elif method in ("resources/read", "resources/subscribe"):
            kinds = ("resources", "templates")
        elif method == "prompts/get":
            kinds = ("prompts",)
        elif method == "completion/complete":
            kinds = ("prompts", "resources", "templates")
        else:
            return NO_SCOPES
        if not any(self.scopes[kind] for kind in kinds):
            return NO_SCOPES  # nothing of those kinds is protected: the common case, at once
        target = self.target(method, params)
        return target.scopes if target is not None else NO_SCOPES

    def target(self, method: str, params: dict[str, Any]) -> ToolBase | ResourceBase | PromptBase | None:
        """The tool, resource (or template) or prompt a request is about, if it names a registered one."""
        if method == "completion/complete":
            ref = params.get("ref")
            if not isinstance(ref, dict):
                return None
            key = ref.get("name") if ref.get("type") == "ref/prompt" else ref.get("uri")
            if not isinstance(key, str):
                return None
            if ref.get("type") == "ref/prompt":
                return self.prompts.get(key)
            return self.templates.get(key) or self.resources.get(key)
        named = target_of(method, params)
        if named is None:
            return None
        kind = METHODS[method].kind
        if kind == "tools":
            return self.tools.get(named)
        if kind == "prompts":
            return self.prompts.get(named)
        if kind != "resources":
            return None
        try:
            found = self.find_resource(named)
        except McpError:  # refused values: the template's scopes still apply, so the caller learns nothing more
            return next((template for template in self.templates.values() if template.shape(named)), None)
        return found[0] if found is not None else None
