"""A function's dependencies (``Depends``): planned when it is registered, provided on each call.

At registration, ``inject`` reads every provider the function needs, and the providers those
need, into a flat plan: each provider once (twice only for a ``use_cache=False`` use), after
every provider it takes a value from. A cycle, and a provider parameter that nothing can fill,
are refused then, naming the function and the provider. The function's ``FunctionInfo`` is
replaced by one whose function is an ``Injector``: async, taking the client's arguments and the
``Context``, so a tool, resource or prompt with dependencies is called exactly like one without
them, and one without them pays nothing.

On each call the ``Injector`` runs the plan in order (async providers awaited, plain ones in a
worker thread unless ``blocking=False``, generators entered), calls the function, then closes
the generators in reverse order, handing them the call's exception if it failed (cancellation
included). ``server.dependency_overrides`` replace providers for the calls that follow: a plan
is made for each version of the overrides, on the first call that sees it.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import logging
from collections.abc import Callable
from typing import Any, Final

from ._depends import MISSING, REFUSE, Builtin, Dependency, DependencyOverrides, sent_by_client
from ._errors import INTERNAL_ERROR, McpError, PromptError, RegistrationError, ResourceError, ToolError
from ._functions import FunctionInfo, failure_hint, filled, in_worker_thread, inspect_function, invoke, unwrap

logger = logging.getLogger("toolkit")

CONTEXT_KEY: Final = "toolkit:context"
"""Where the ``Injector`` gets the ``Context`` among its keyword arguments (no parameter can have this name)."""

# How a step runs its provider.
_ASYNC: Final = 0  # await provider(**kw)
_INLINE: Final = 1  # provider(**kw), on the event loop (blocking=False, the built-ins)
_THREAD: Final = 2  # provider(**kw) in a worker thread
_ASYNC_GENERATOR: Final = 3  # entered and closed as an async context manager
_GENERATOR_INLINE: Final = 4  # entered and closed as a context manager, on the event loop
_GENERATOR_THREAD: Final = 5  # entered and closed as a context manager, in a worker thread

Arg = tuple[str, int, Any]
"""A parameter a step (or the function) takes: its name, the step giving the value, its ``Injected.fallback``."""


class Step:
    """One provider to run: how, with which values of the steps before it."""

    __slots__ = ("args", "context_param", "dependency", "fills", "info", "mode", "run")

    def __init__(self, dependency: Dependency, info: FunctionInfo, mode: int, args: tuple[Arg, ...]) -> None:
        self.dependency: Final = dependency
        self.info: Final = info
        self.mode: Final = mode
        self.args: Final = args
        self.context_param: Final = info.context_param
        self.fills: Final = bool(info.fills)
        run: Callable[..., Any] = info.fn
        if mode == _ASYNC_GENERATOR:
            run = contextlib.asynccontextmanager(info.fn)
        elif mode in (_GENERATOR_INLINE, _GENERATOR_THREAD):
            run = contextlib.contextmanager(info.fn)
        self.run: Final = run


class Plan:
    """The steps in order, and the function's own injected parameters."""

    __slots__ = ("args", "steps")

    def __init__(self, steps: tuple[Step, ...], args: tuple[Arg, ...]) -> None:
        self.steps: Final = steps
        self.args: Final = args


_KIND: Final = {"tool": "Tool", "resource": "Resource", "prompt": "Prompt"}
_DOING: Final = {
    "tool": "Error executing tool",
    "resource": "Error reading resource",
    "prompt": "Error rendering prompt",
}


class Injector:
    """The function as the model calls it: the dependencies provided, the function called, the generators closed."""

    def __init__(
        self,
        info: FunctionInfo,
        *,
        kind: str,
        name: str,
        context_type: type,
        inline: bool,
        masked: Callable[[], bool],
    ) -> None:
        self.info: Final = info
        self.kind: Final = kind
        self.name: Final = name
        self.context_type: Final = context_type
        self.inline: Final = inline
        self.masked: Final = masked
        self.names: Final = frozenset(dependency.name for dependency in info.dependencies)
        self.plan = self._plan(None)
        self._overridden: tuple[DependencyOverrides, int, Plan] | None = None

    @property
    def what(self) -> str:
        return f"{self.kind} {self.name!r}"

    # --- registration ------------------------------------------------------------------------------

    def _plan(self, overrides: DependencyOverrides | None) -> Plan:
        steps: list[Step] = []
        done: dict[Any, int] = {}  # provider -> the step that last gave its value (what a cached use takes)
        inside: list[Dependency] = []  # the providers being planned, outermost first: a cycle returns to one

        def visit(dependency: Dependency) -> int:
            key = dependency.provider
            if dependency.use_cache and key in done:
                return done[key]
            # == rather than is: two Depends(obj.method) hold two equal bound methods
            start = next((index for index, outer in enumerate(inside) if outer.provider == key), None)
            if start is not None:
                chain = " -> ".join(outer.label for outer in inside[start:])
                raise RegistrationError(f"{self.what}: its dependencies form a cycle: {chain} -> {dependency.label}")
            inside.append(dependency)
            replacement = overrides.get_override(key) if overrides is not None else None
            info = self._provider(dependency, replacement)
            args = tuple((each.name, visit(each.depends), each.fallback) for each in info.dependencies)
            inside.pop()
            steps.append(Step(dependency, info, self._mode(dependency, info), args))
            done[key] = len(steps) - 1
            return done[key]

        args = tuple((each.name, visit(each.depends), each.fallback) for each in self.info.dependencies)
        return Plan(tuple(steps), args)

    def _provider(self, dependency: Dependency, replacement: Callable[..., Any] | None) -> FunctionInfo:
        fn = dependency.provider if replacement is None else replacement
        instead = getattr(fn, "__qualname__", None) or repr(fn)
        whose = dependency.label if replacement is None else f"{dependency.label} (overridden by {instead})"
        try:
            info = inspect_function(fn, kind="dependency", context_type=self.context_type, dependencies=True)
        except RegistrationError as exc:
            raise RegistrationError(f"{self.what}: dependency {whose}: {exc}") from None
        unfilled = [param.name for param in info.params if param.required]
        if unfilled:
            raise RegistrationError(
                f"{self.what}: dependency {whose} takes {', '.join(map(repr, unfilled))}, which nothing provides. "
                "A provider's parameters are other dependencies (Depends(...), a built-in such as Subject) or a "
                "Context; give the others a default"
            )
        return info

    def _mode(self, dependency: Dependency, info: FunctionInfo) -> int:
        target = unwrap(info.fn)
        blocking = dependency.blocking
        if inspect.isasyncgenfunction(target):
            mode = _ASYNC_GENERATOR
        elif inspect.isgeneratorfunction(target):
            return _GENERATOR_INLINE if blocking is False else _GENERATOR_THREAD
        elif info.is_async:
            mode = _ASYNC
        else:
            return _INLINE if blocking is False else _THREAD
        if blocking is not None and info.fn is dependency.provider:
            raise RegistrationError(
                f"{self.what}: dependency {dependency.label}: blocking= is for a plain def provider (blocking=False "
                "calls it on the event loop instead of a worker thread); an async def one already runs there"
            )
        return mode

    # --- calling -----------------------------------------------------------------------------------

    def _current(self, context: Any) -> Plan:
        """The plan for this call: the registered one, or one made for the server's overrides."""
        overrides = getattr(getattr(context, "server", None), "dependency_overrides", None)
        if overrides is None or not overrides.version:  # never overridden: the registered plan
            return self.plan
        made = self._overridden
        if made is not None and made[0] is overrides and made[1] == overrides.version:
            return made[2]
        try:
            plan = self._plan(overrides)
        except RegistrationError as exc:  # an override with parameters nothing fills, say
            logger.error("%s", exc)
            raise self._failure(f"{_DOING[self.kind]} {self.name!r}: {exc}") from None
        self._overridden = (overrides, overrides.version, plan)
        return plan

    async def __call__(self, **kwargs: Any) -> Any:
        # The call path of every function with dependencies: written out, not factored, for its cost.
        context = kwargs.pop(CONTEXT_KEY)
        if not self.names.isdisjoint(kwargs):
            refused = sent_by_client(self.info.dependencies, self.names.intersection(kwargs))
            raise self._refusal(f"Invalid arguments for {self.what}: {refused}")
        plan = self._current(context)
        values: list[Any] = []
        opened: list[tuple[Step, Any]] = []
        try:
            for step in plan.steps:
                kw: dict[str, Any] = {}
                for name, index, fallback in step.args:
                    value = values[index]
                    kw[name] = value if value is not MISSING else self._given(fallback, index, plan)
                if step.context_param is not None:
                    kw[step.context_param] = context
                if step.fills:
                    kw = filled(step.info, kw)
                if step.mode == _ASYNC:
                    try:
                        values.append(await step.run(**kw))
                    except (ToolError, McpError):
                        raise
                    except (Exception, SystemExit) as exc:
                        raise self._crash(step, exc, "raised") from None
                else:
                    values.append(await self._run(step, kw, opened))
            for name, index, fallback in plan.args:
                value = values[index]
                kwargs[name] = value if value is not MISSING else self._given(fallback, index, plan)
            info = self.info
            if info.context_param is not None:
                kwargs[info.context_param] = context
            if info.fills:
                kwargs = filled(info, kwargs)
            if info.is_async:
                value = await info.fn(**kwargs)
            elif self.inline:
                value = info.fn(**kwargs)
                if inspect.isawaitable(value):
                    value = await value
            else:
                value = await invoke(info, kwargs)
        except BaseException as exc:
            if opened:
                await self._close(opened, exc)
            raise
        if opened:
            await self._close(opened, None)
        return value

    async def _run(self, step: Step, kw: dict[str, Any], opened: list[tuple[Step, Any]]) -> Any:
        """Every mode but ``_ASYNC`` (which ``__call__`` runs itself)."""
        mode = step.mode
        try:
            if mode in (_INLINE, _THREAD):
                value = step.run(**kw) if mode == _INLINE else await in_worker_thread(step.run, kw)
                if inspect.isawaitable(value):
                    value = await value
                return value
            manager = step.run(**kw)
            if mode == _ASYNC_GENERATOR:
                value = await manager.__aenter__()
            elif mode == _GENERATOR_INLINE:
                value = manager.__enter__()
            else:
                value = await in_worker_thread(manager.__enter__, {})
            opened.append((step, manager))
            return value
        except (ToolError, McpError):
            raise
        except (Exception, SystemExit) as exc:
            raise self._crash(step, exc, "raised") from None

    async def _close(self, opened: list[tuple[Step, Any]], exc: BaseException | None) -> None:
        """Close the generators, last opened first, each handed ``exc`` (``None``: the call succeeded).

        A generator cannot turn a failed call into a value: the call's exception goes on whatever the
        generator does with it. One that fails while closing fails a call that had succeeded; the
        others are closed all the same.
        """
        failed: BaseException | None = None
        kind = type(exc) if exc is not None else None
        trace = exc.__traceback__ if exc is not None else None
        for step, manager in reversed(opened):
            try:
                if step.mode == _ASYNC_GENERATOR:
                    await manager.__aexit__(kind, exc, trace)
                elif step.mode == _GENERATOR_INLINE:
                    manager.__exit__(kind, exc, trace)
                else:
                    await in_worker_thread(functools.partial(manager.__exit__, kind, exc, trace), {})
            except BaseException as problem:
                if problem is exc:  # it let the call's exception through
                    continue
                if exc is not None or failed is not None:
                    label = step.dependency.label
                    logger.error("%s: dependency %s failed while closing", self.what, label, exc_info=problem)
                elif isinstance(problem, Exception | SystemExit):
                    failed = self._crash(step, problem, "failed while closing")
                else:  # cancelled while closing: the rest are closed, then the cancellation goes on
                    failed = problem
        if failed is not None:
            raise failed

    # --- failures ----------------------------------------------------------------------------------

    def _given(self, fallback: Any, index: int, plan: Plan) -> Any:
        """A parameter's value when its built-in (step ``index``) had none: its fallback, or the call's refusal."""
        if fallback is not REFUSE:
            return fallback
        builtin = plan.steps[index].dependency
        missing = builtin.missing if isinstance(builtin, Builtin) else f"a value from {builtin.label}"
        raise self._refusal(f"{_KIND[self.kind]} {self.name!r} needs {missing}")

    def _crash(self, step: Step, exc: BaseException, what_happened: str) -> Exception:
        label = step.dependency.label
        hint = failure_hint(exc)
        logger.error(
            "%s: dependency %s %s%s", self.what, label, what_happened, f" ({hint})" if hint else "", exc_info=exc
        )
        said = f"{_DOING[self.kind]} {self.name!r}: its dependency {label} {what_happened}"
        if not self.masked():
            said = f"{said}: {type(exc).__name__}: {exc}"
            if hint:
                said = f"{said} ({hint})"
        return self._failure(said)

    def _failure(self, message: str) -> Exception:
        if self.kind == "prompt":
            return McpError(INTERNAL_ERROR, message)
        return ResourceError(message) if self.kind == "resource" else ToolError(message)

    def _refusal(self, message: str) -> Exception:
        if self.kind == "prompt":
            return PromptError(message)
        return ResourceError(message) if self.kind == "resource" else ToolError(message)


def inject(
    info: FunctionInfo,
    *,
    kind: str,
    name: str,
    context_type: type,
    inline: bool = False,
    masked: Callable[[], bool] = lambda: True,
) -> FunctionInfo:
    """``info`` as the model calls it: one async function taking the arguments and the ``Context``
    (at ``CONTEXT_KEY``), which provides the dependencies. Refuses an impossible plan now."""
    injector = Injector(info, kind=kind, name=name, context_type=context_type, inline=inline, masked=masked)
    return FunctionInfo(
        fn=injector,
        name=info.name,
        params=info.params,
        context_param=CONTEXT_KEY,
        has_return_annotation=info.has_return_annotation,
        return_annotation=info.return_annotation,
        accepts_kwargs=info.accepts_kwargs,
        is_async=True,
        doc=info.doc,
        untyped=info.untyped,
        dependencies=info.dependencies,
    )
