"""Argument completion (``completion/complete``) for prompt arguments and template variables.

A function registered with ``@server.completion(...)`` answers for one argument. Without
one, a parameter typed ``Literal[...]`` or an ``Enum`` completes from its values.
"""

from __future__ import annotations

import enum
import typing
from collections.abc import Callable, Mapping
from typing import Any, Final, get_args, get_origin

from ._functions import FunctionInfo, inspect_function, invoke

MAX_VALUES: Final = 100
"""The spec caps a completion at 100 values."""


class Completer:
    def __init__(self, fn: Callable[..., Any], *, context_type: type) -> None:
        self.info: FunctionInfo = inspect_function(fn, kind="completion", context_type=context_type)
        names = [param.name for param in self.info.params]
        self._value_param = names[0] if names else None
        self._arguments_param = names[1] if len(names) > 1 else None

    async def values(self, value: str, arguments: Mapping[str, str], context: Any) -> list[str]:
        kwargs: dict[str, Any] = {}
        if self._value_param is not None:
            kwargs[self._value_param] = value
        if self._arguments_param is not None:
            kwargs[self._arguments_param] = dict(arguments)
        if self.info.context_param is not None:
            kwargs[self.info.context_param] = context
        result = await invoke(self.info, kwargs)
        return [str(item) for item in (result or [])]


def choices(annotation: Any) -> list[str] | None:
    """The string values of a ``Literal``/``Enum`` annotation, if it is one."""
    origin = get_origin(annotation)
    if origin is typing.Annotated:
        return choices(get_args(annotation)[0])
    if origin is typing.Literal:
        return [str(value) for value in get_args(annotation)]
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return [str(member.value) for member in annotation]
    return None


def completion_result(values: list[str]) -> dict[str, Any]:
    return {
        "completion": {
            "values": values[:MAX_VALUES],
            "total": len(values),
            "hasMore": len(values) > MAX_VALUES,
        }
    }
