"""Prompts: typed arguments from the signature, messages from whatever the function returns."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal

import pydantic

from ._components import PromptBase, declared_tags
from ._content import ContentBlock, Text
from ._depends import sent_by_client
from ._errors import PromptError
from ._functions import FunctionInfo, declared_scopes, inspect_function, invoke, where_defined
from ._schema import hints


class Message:
    """A prompt message: ``Message("text")`` is from the user; give ``role="assistant"`` otherwise."""

    __slots__ = ("content", "role")

    def __init__(self, content: str | ContentBlock, role: Literal["user", "assistant"] = "user") -> None:
        self.content = Text(content) if isinstance(content, str) else content
        self.role = role

    def to_wire(self) -> dict[str, Any]:
        return {"role": self.role, "content": self.content.to_wire()}

    def __repr__(self) -> str:
        return f"Message({self.content!r}, role={self.role!r})"


def _messages(value: Any) -> list[dict[str, Any]]:
    items: Sequence[Any] = value if isinstance(value, (list, tuple)) else [value]
    messages: list[dict[str, Any]] = []
    for item in items:
        if isinstance(item, Message):
            messages.append(item.to_wire())
        elif isinstance(item, (str, ContentBlock)):
            messages.append(Message(item).to_wire())
        elif isinstance(item, Mapping) and "role" in item and "content" in item:
            content = item["content"]
            wire = content.to_wire() if isinstance(content, ContentBlock) else content
            if isinstance(wire, str):
                wire = {"type": "text", "text": wire}
            messages.append({"role": item["role"], "content": wire})
        else:
            raise PromptError(
                "a prompt must return a str, a Message, a content block, a {'role', 'content'} dict, "
                f"or a list of those; got {type(item).__name__}"
            )
    return messages


class Prompt(PromptBase):
    """A registered prompt. Arguments arrive as strings and are converted to the parameter types."""

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        context_type: type,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        icons: list[dict[str, Any]] | None = None,
        meta: Mapping[str, Any] | None = None,
        scopes: Iterable[str] | None = None,
        tags: Iterable[str] | None = None,
    ) -> None:
        self.fn = fn
        self.info: FunctionInfo = inspect_function(fn, kind="prompt", context_type=context_type, dependencies=True)
        self.name = name or self.info.name
        if self.info.dependencies:  # rendered through an Injector (_injection); one without them pays nothing
            from ._injection import inject  # noqa: PLC0415 - loaded by the servers whose functions have dependencies

            self.info = inject(self.info, kind="prompt", name=self.name, context_type=context_type)
        self.title = title
        self.description = description if description is not None else (self.info.doc.summary or "")
        self.icons = icons
        self.meta = dict(meta) if meta else None
        for param in self.info.params:  # a type pydantic cannot read fails now, not at the first get
            if param.annotation not in (str, Any):
                hints.adapter_for(param.annotation)
        self.scopes = declared_scopes(scopes, f"prompt {self.name!r}")
        """OAuth scopes a caller's access token must grant to see and get this prompt."""
        self.tags = declared_tags(tags, f"prompt {self.name!r} ({self.info.name}() in {where_defined(fn)})")
        """Labels for the server's own use (``server.disable(tags=...)``); never sent."""
        self.arguments = []
        for param in self.info.params:
            argument: dict[str, Any] = {"name": param.name}
            described = self.info.doc.params.get(param.name) or _field_description(param.annotation)
            if described:
                argument["description"] = described
            argument["required"] = param.required
            self.arguments.append(argument)

    def listing(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"name": self.name}
        if self.title:
            entry["title"] = self.title
        entry["description"] = self.description
        if self.arguments:
            entry["arguments"] = self.arguments
        if self.icons:
            entry["icons"] = self.icons
        if self.meta:
            entry["_meta"] = self.meta
        return entry

    def bind(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        kwargs: dict[str, Any] = {}
        problems: list[str] = []
        for param in self.info.params:
            if param.name not in arguments:
                if param.required:
                    problems.append(f"missing required argument {param.name!r}")
                continue
            raw = arguments[param.name]
            if param.annotation in (str, Any):
                kwargs[param.name] = raw
                continue
            adapter = hints.adapter_for(param.annotation)
            try:
                kwargs[param.name] = adapter.validate_python(raw)
            except pydantic.ValidationError as first:
                try:  # prompt arguments are strings: "[1, 2]" for a list, say
                    if not isinstance(raw, str):
                        raise
                    kwargs[param.name] = adapter.validate_json(raw)
                except pydantic.ValidationError:
                    problems.append(f"argument {param.name!r}: {first.errors()[0]['msg']}")
        unknown = sorted(set(arguments) - {param.name for param in self.info.params})
        if unknown and self.info.dependencies:
            provided = [name for name in unknown if any(each.name == name for each in self.info.dependencies)]
            if provided:
                problems.append(sent_by_client(self.info.dependencies, provided))
                unknown = [name for name in unknown if name not in provided]
        if unknown and not self.info.accepts_kwargs:
            problems.append(f"unknown arguments {unknown}")
        if problems:
            raise PromptError(f"Invalid arguments for prompt {self.name!r}: " + "; ".join(problems))
        return kwargs

    def completion_hints(self) -> Mapping[str, Any]:
        return {param.name: param.annotation for param in self.info.params}

    async def render(self, arguments: Mapping[str, Any], context: Any) -> dict[str, Any]:
        kwargs = self.bind(arguments)
        if self.info.context_param is not None:
            kwargs[self.info.context_param] = context
        value = await invoke(self.info, kwargs)
        result: dict[str, Any] = {}
        if self.description:
            result["description"] = self.description
        result["messages"] = _messages(value)
        return result


def _field_description(annotation: Any) -> str | None:
    for extra in getattr(annotation, "__metadata__", ()):
        description = getattr(extra, "description", None)
        if isinstance(description, str):
            return description
    return None
