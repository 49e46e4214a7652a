"""``Registry``: what a server offers — tools, resources, templates, prompts, completers.

The ``Server`` facade builds the objects from decorated functions and adds them here; the
engine reads them from here. Every change bumps that kind's generation (list cursors carry
it, so a stale cursor is refused) and is announced to the change listeners (the engine drops
its cached list pages and tells subscribed clients).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, Literal

from ._completions import Completer
from ._errors import RegistrationError
from ._prompts import Prompt
from ._resources import Resource, ResourceTemplate
from ._tools import Tool

Kind = Literal["tools", "resources", "templates", "prompts"]
KINDS: Final[tuple[Kind, ...]] = ("tools", "resources", "templates", "prompts")
CompletionKey = tuple[str, str, str]
"""``(ref type, prompt name or template URI, argument name)``."""


class Registry:
    """The registered tools, resources, templates and prompts, in registration order."""

    def __init__(self) -> None:
        self.tools: dict[str, Tool] = {}
        self.resources: dict[str, Resource] = {}
        self.templates: dict[str, ResourceTemplate] = {}
        self.prompts: dict[str, Prompt] = {}
        self.completers: dict[CompletionKey, Completer] = {}
        self.generation: dict[Kind, int] = dict.fromkeys(KINDS, 0)
        self._listeners: list[Callable[[Kind], None]] = []

    def on_change(self, listener: Callable[[Kind], None]) -> None:
        """Call ``listener(kind)`` after every addition or removal (from any thread)."""
        self._listeners.append(listener)

    def items(self, kind: Kind) -> Mapping[str, Any]:
        tables: dict[Kind, Mapping[str, Any]] = {
            "tools": self.tools,
            "resources": self.resources,
            "templates": self.templates,
            "prompts": self.prompts,
        }
        return tables[kind]

    @property
    def has_resources(self) -> bool:
        return bool(self.resources or self.templates)

    @property
    def has_prompts(self) -> bool:
        return bool(self.prompts)

    # --- changes ------------------------------------------------------------------------------

    def add_tool(self, tool: Tool) -> Tool:
        if tool.name in self.tools:
            raise RegistrationError(
                f"a tool named {tool.name!r} is already registered; pass name=... to register another"
            )
        self.tools[tool.name] = tool
        self._changed("tools")
        return tool

    def remove_tool(self, name: str) -> None:
        if self.tools.pop(name, None) is None:
            raise KeyError(f"no tool named {name!r}")
        self._changed("tools")

    def add_resource(self, resource: Resource) -> None:
        if resource.uri in self.resources:
            raise RegistrationError(f"a resource {resource.uri!r} is already registered")
        self.resources[resource.uri] = resource
        self._changed("resources")

    def add_template(self, template: ResourceTemplate) -> None:
        if template.uri_template in self.templates:
            raise RegistrationError(f"a resource template {template.uri_template!r} is already registered")
        self.templates[template.uri_template] = template
        self._changed("templates")

    def remove_resource(self, uri: str) -> None:
        """Remove a resource or a template by its URI (template)."""
        if self.resources.pop(uri, None) is not None:
            self._changed("resources")
        elif self.templates.pop(uri, None) is not None:
            self._changed("templates")
        else:
            raise KeyError(f"no resource or template {uri!r}")

    def add_prompt(self, prompt: Prompt) -> None:
        if prompt.name in self.prompts:
            raise RegistrationError(f"a prompt named {prompt.name!r} is already registered")
        self.prompts[prompt.name] = prompt
        self._changed("prompts")

    def remove_prompt(self, name: str) -> None:
        if self.prompts.pop(name, None) is None:
            raise KeyError(f"no prompt named {name!r}")
        self._changed("prompts")

    def add_completer(self, key: CompletionKey, completer: Completer) -> None:
        self.completers[key] = completer

    def _changed(self, kind: Kind) -> None:
        self.generation[kind] += 1
        for listener in self._listeners:
            listener(kind)

    # --- lookups ------------------------------------------------------------------------------

    def find_resource(self, uri: str) -> tuple[Resource | ResourceTemplate, dict[str, str]] | None:
        """The resource at ``uri``, or the first template matching it with its variables."""
        resource = self.resources.get(uri)
        if resource is not None:
            return resource, {}
        for template in self.templates.values():
            variables = template.match(uri)
            if variables is not None:
                return template, variables
        return None
