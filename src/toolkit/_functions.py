"""What toolkit reads off a user's function, and how it calls one.

Shared by tools, resources and prompts: the parameters and their hints, which parameter
(if any) receives the ``Context``, the docstring, and sync-vs-async invocation (sync
functions run in a worker thread so they never block the event loop).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, get_args, get_origin

from ._docstrings import Docstring, parse_docstring
from ._errors import RegistrationError

_EMPTY = inspect.Parameter.empty


@dataclass(frozen=True, slots=True)
class Param:
    name: str
    annotation: Any
    """The hint as written (``Annotated`` kept); ``Any`` when there is none."""
    default: Any
    """``inspect.Parameter.empty`` when the parameter is required."""

    @property
    def required(self) -> bool:
        return self.default is _EMPTY


@dataclass(frozen=True, slots=True)
class FunctionInfo:
    fn: Callable[..., Any]
    name: str
    params: tuple[Param, ...]
    context_param: str | None
    has_return_annotation: bool
    return_annotation: Any
    accepts_kwargs: bool
    is_async: bool
    doc: Docstring


def _is_context(annotation: Any, context_type: type) -> bool:
    if isinstance(annotation, type):
        return issubclass(annotation, context_type)
    origin = get_origin(annotation)
    if origin is typing.Annotated:
        return _is_context(get_args(annotation)[0], context_type)
    if origin is typing.Union or type(annotation).__name__ == "UnionType":
        args = [arg for arg in get_args(annotation) if arg is not type(None)]
        return len(args) == 1 and _is_context(args[0], context_type)
    return False


def _unwrap(fn: Callable[..., Any]) -> Callable[..., Any]:
    while isinstance(fn, functools.partial):
        fn = fn.func
    unwrapped: Callable[..., Any] = inspect.unwrap(fn)
    return unwrapped


def inspect_function(fn: Callable[..., Any], *, kind: str, context_type: type) -> FunctionInfo:
    """Read ``fn``'s signature; ``kind`` ("tool", "resource", "prompt") names it in errors."""
    if not callable(fn):
        raise RegistrationError(f"a {kind} must be a function, got {fn!r}")
    name = getattr(_unwrap(fn), "__name__", None) or type(fn).__name__
    if name == "<lambda>":
        name = "lambda"
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError) as exc:
        raise RegistrationError(f"cannot read the signature of {kind} {name!r}: {exc}") from None
    try:
        hints = typing.get_type_hints(_unwrap(fn), include_extras=True)
    except Exception as exc:
        raise RegistrationError(
            f"cannot resolve the type hints of {kind} {name!r}: {exc}. "
            "Define every type the hints mention before decorating the function."
        ) from None

    params: list[Param] = []
    context_param: str | None = None
    accepts_kwargs = False
    for parameter in signature.parameters.values():
        if parameter.kind is inspect.Parameter.VAR_KEYWORD:
            accepts_kwargs = True
            continue
        if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
            raise RegistrationError(
                f"{kind} {name!r} takes *{parameter.name}; MCP arguments are named, so use named parameters"
            )
        if parameter.kind is inspect.Parameter.POSITIONAL_ONLY:
            raise RegistrationError(
                f"parameter {parameter.name!r} of {kind} {name!r} is positional-only; toolkit passes "
                "arguments by name, so remove the '/' from the signature"
            )
        annotation = hints.get(parameter.name, Any)
        if _is_context(annotation, context_type):
            if context_param is not None:
                raise RegistrationError(f"{kind} {name!r} declares two Context parameters")
            context_param = parameter.name
            continue
        params.append(Param(parameter.name, annotation, parameter.default))

    unwrapped = _unwrap(fn)
    is_async = inspect.iscoroutinefunction(unwrapped) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 - async callable objects
    )
    return FunctionInfo(
        fn=fn,
        name=name,
        params=tuple(params),
        context_param=context_param,
        has_return_annotation="return" in hints,
        return_annotation=hints.get("return", Any),
        accepts_kwargs=accepts_kwargs,
        is_async=is_async,
        doc=parse_docstring(inspect.getdoc(unwrapped)),
    )


async def invoke(info: FunctionInfo, kwargs: dict[str, Any]) -> Any:
    """Call the user's function: awaited if async, in a worker thread if not."""
    if info.is_async:
        return await info.fn(**kwargs)
    result = await asyncio.to_thread(info.fn, **kwargs)
    if inspect.isawaitable(result):
        result = await result
    return result
