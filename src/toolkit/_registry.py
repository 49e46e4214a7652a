"""``Registry``: what a server offers — tools, resources, templates, prompts, completers.

The ``Server`` facade builds the objects from decorated functions and adds them here; the
engine reads them from here. Every change bumps that kind's generation (list cursors carry
it, so a stale cursor is refused) and is announced to the change listeners (the engine drops
its cached list pages and tells subscribed clients).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, Literal

from ._completions import Completer
from ._components import PromptBase, ResourceBase, TemplateBase, ToolBase
from ._errors import INVALID_PARAMS, McpError, RegistrationError, UnsafeValue
from ._methods import METHODS
from ._methods import target as target_of

if TYPE_CHECKING:
    from ._uritemplate import Value

NO_SCOPES: Final[frozenset[str]] = frozenset()

Kind = Literal["tools", "resources", "templates", "prompts"]
KINDS: Final[tuple[Kind, ...]] = ("tools", "resources", "templates", "prompts")
CompletionKey = tuple[str, str, str]
"""``(ref type, prompt name or template URI, argument name)``."""


class Registry:
    """The registered tools, resources, templates and prompts, in registration order."""

    def __init__(self) -> None:
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

    def on_change(self, listener: Callable[[Kind], None]) -> None:
        """Call ``listener(kind)`` after every addition or removal (from any thread)."""
        self._listeners.append(listener)

    def items(self, kind: Kind) -> Mapping[str, Any]:
        return self._tables[kind]

    @property
    def has_resources(self) -> bool:
        return bool(self.resources or self.templates)

    @property
    def has_prompts(self) -> bool:
        return bool(self.prompts)

    @property
    def has_tasks(self) -> bool:
        """Whether some tool may run as a task (the server then declares tasks)."""
        return self._task_tools > 0

    # --- changes ------------------------------------------------------------------------------

    def add_tool(self, tool: ToolBase) -> ToolBase:
        self._add(
            "tools",
            tool.name,
            tool,
            f"a tool named {tool.name!r} is already registered; pass name=... to register another",
        )
        self._task_tools += tool.task != "forbidden"
        return tool

    def remove_tool(self, name: str) -> None:
        tool = self.tools.get(name)
        self._remove("tools", name, f"no tool named {name!r}")
        if tool is not None:
            self._task_tools -= tool.task != "forbidden"

    def add_resource(self, resource: ResourceBase) -> None:
        self._add("resources", resource.uri, resource, f"a resource {resource.uri!r} is already registered")

    def add_template(self, template: TemplateBase) -> None:
        uri = template.uri_template
        self._add("templates", uri, template, f"a resource template {uri!r} is already registered")

    def remove_resource(self, uri: str) -> None:
        """Remove a resource or a template by its URI (template)."""
        kind: Kind = "resources" if uri in self.resources else "templates"
        self._remove(kind, uri, f"no resource or template {uri!r}")

    def add_prompt(self, prompt: PromptBase) -> None:
        self._add("prompts", prompt.name, prompt, f"a prompt named {prompt.name!r} is already registered")

    def remove_prompt(self, name: str) -> None:
        self._remove("prompts", name, f"no prompt named {name!r}")

    def add_completer(self, key: CompletionKey, completer: Completer) -> None:
        self.completers[key] = completer

    def _add(self, kind: Kind, key: str, item: Any, duplicate: str) -> None:
        table = self._tables[kind]
        if key in table:
            raise RegistrationError(duplicate)
        table[key] = item
        if item.scopes:
            self.scopes[kind] |= item.scopes
        self._changed(kind)

    def _remove(self, kind: Kind, key: str, missing: str) -> None:
        item = self._tables[kind].pop(key, None)
        if item is None:
            raise KeyError(missing)
        if item.scopes:
            self.scopes[kind] = frozenset().union(*(other.scopes for other in self._tables[kind].values()))
        self._changed(kind)

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
