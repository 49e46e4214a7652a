"""What toolkit reads off a user's function, and how it calls one.

Shared by tools, resources and prompts: the parameters and their hints, which parameter
(if any) receives the ``Context``, which ones the server provides (``Depends``), the docstring,
and sync-vs-async invocation (sync functions run in a worker thread so they never block the
event loop).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import functools
import inspect
import os
import re
import threading
import types
import typing
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Final, get_args, get_origin

import pydantic
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from ._depends import Injected, injected
from ._errors import RegistrationError, SchemaError
from ._schema.docstrings import Docstring, parse_docstring

_EMPTY = inspect.Parameter.empty
_SCOPE: Final = r"[\x21\x23-\x5b\x5d-\x7e]+"
"""RFC 6749 §3.3 scope-token: printable ASCII but space, ``"`` and ``\\`` (compiled on first use)."""

# Param and FunctionInfo are plain classes: a frozen dataclass compiles its generated methods
# when this module is imported (about 0.3 ms each, paid by every server's start-up). Their
# attributes are ``Final``: what was read off a function does not change.


class Param:
    __slots__ = ("annotation", "default", "name")

    def __init__(self, name: str, annotation: Any, default: Any) -> None:
        self.name: Final = name
        self.annotation: Final = annotation
        """The hint as written (``Annotated`` kept); ``Any`` when there is none."""
        self.default: Final = default
        """``inspect.Parameter.empty`` when the parameter is required."""

    @property
    def required(self) -> bool:
        return self.default is _EMPTY

    def __repr__(self) -> str:
        return f"Param(name={self.name!r}, annotation={self.annotation!r}, default={self.default!r})"


class FunctionInfo:
    __slots__ = (
        "accepts_kwargs",
        "context_param",
        "dependencies",
        "doc",
        "fills",
        "fn",
        "has_return_annotation",
        "is_async",
        "name",
        "params",
        "return_annotation",
        "untyped",
    )

    def __init__(
        self,
        fn: Callable[..., Any],
        name: str,
        params: tuple[Param, ...],
        context_param: str | None,
        has_return_annotation: bool,
        return_annotation: Any,
        accepts_kwargs: bool,
        is_async: bool,
        doc: Docstring,
        fills: tuple[tuple[str, Callable[[], Any]], ...] = (),
        untyped: tuple[str, ...] = (),
        dependencies: tuple[Injected, ...] = (),
    ) -> None:
        self.fn: Final = fn
        self.name: Final = name
        self.params: Final = params
        self.context_param: Final = context_param
        self.has_return_annotation: Final = has_return_annotation
        self.return_annotation: Final = return_annotation
        self.accepts_kwargs: Final = accepts_kwargs
        self.is_async: Final = is_async
        self.doc: Final = doc
        self.fills: Final = fills
        """Parameters whose Python default is a ``Field(...)``: what to pass when the argument is absent."""
        self.untyped: Final = untyped
        """Parameters with no type hint (their annotation is ``Any``, as if written)."""
        self.dependencies: Final = dependencies
        """Parameters the server provides (``Depends``): never in ``params``, never from the client."""

    def __repr__(self) -> str:
        return f"FunctionInfo(name={self.name!r}, params={self.params!r})"


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


def unwrap(fn: Callable[..., Any]) -> Callable[..., Any]:
    while isinstance(fn, functools.partial):
        fn = fn.func
    unwrapped: Callable[..., Any] = inspect.unwrap(fn)
    return unwrapped


def inspect_function(
    fn: Callable[..., Any], *, kind: str, context_type: type, dependencies: bool = False
) -> FunctionInfo:
    """Read ``fn``'s signature; ``kind`` ("tool", "resource", "prompt") names it in errors.

    ``dependencies``: the caller provides ``Depends`` parameters (``_injection``); otherwise one is refused.
    """
    if not callable(fn):
        raise RegistrationError(f"a {kind} must be a function, got {fn!r}")
    unwrapped = unwrap(fn)
    name = getattr(unwrapped, "__name__", None) or type(fn).__name__
    if name == "<lambda>":
        name = "lambda"
    try:
        parameters = _parameters(fn)
    except (TypeError, ValueError) as exc:
        raise RegistrationError(f"cannot read the signature of {kind} {name!r}: {exc}") from None
    try:
        hints = _type_hints(unwrapped)
    except Exception as exc:
        raise RegistrationError(
            f"cannot resolve the type hints of {kind} {name!r}: {exc}. Define every type (and Depends provider) "
            "the hints mention before decorating the function; with `from __future__ import annotations`, hints "
            "are read in the module's globals, so a name local to a function is not found"
        ) from None

    params: list[Param] = []
    fills: list[tuple[str, Callable[[], Any]]] = []
    untyped: list[str] = []
    provided: list[Injected] = []
    context_param: str | None = None
    accepts_kwargs = False
    for parameter, parameter_kind, given in parameters:
        if parameter_kind is inspect.Parameter.VAR_KEYWORD:
            accepts_kwargs = True
            continue
        if parameter_kind is inspect.Parameter.VAR_POSITIONAL:
            raise RegistrationError(
                f"{kind} {name!r} takes *{parameter}; MCP arguments are named, so use named parameters"
            )
        if parameter_kind is inspect.Parameter.POSITIONAL_ONLY:
            raise RegistrationError(
                f"parameter {parameter!r} of {kind} {name!r} is positional-only; toolkit passes "
                "arguments by name, so remove the '/' from the signature"
            )
        annotation = hints.get(parameter, Any)
        if _is_context(annotation, context_type):
            if context_param is not None:
                raise RegistrationError(f"{kind} {name!r} declares two Context parameters")
            context_param = parameter
            continue
        default = given
        dependency = injected(parameter, annotation, default, f"{kind} {name!r}")
        if dependency is not None:
            if not dependencies:
                raise RegistrationError(
                    f"parameter {parameter!r} of {kind} {name!r} is a dependency ({dependency.depends!r}), "
                    f"and a {kind} function takes none; compute the value inside it"
                )
            provided.append(dependency)
            continue
        if isinstance(default, FieldInfo):
            annotation, default, fill = _field_default(
                annotation, default, f"parameter {parameter!r} of {kind} {name!r}"
            )
            if fill is not None:
                fills.append((parameter, fill))
        params.append(Param(parameter, annotation, default))
        if parameter not in hints:
            untyped.append(parameter)

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
        fills=tuple(fills),
        untyped=tuple(untyped),
        dependencies=tuple(provided),
    )


def _type_hints(fn: Callable[..., Any]) -> dict[str, Any]:
    """``typing.get_type_hints(fn, include_extras=True)``.

    A plain function whose annotations hold nothing to evaluate (no string, no ``ForwardRef``,
    at any depth) has them as they are (``None`` read as ``NoneType``), as ``typing`` would give
    them, without rebuilding every ``list[X]`` on the way; anything else goes through ``typing``.
    """
    if type(fn) is types.FunctionType:
        annotations = fn.__annotations__
        if all(_evaluated(value) for value in annotations.values()):
            return {name: type(None) if value is None else value for name, value in annotations.items()}
    return typing.get_type_hints(fn, include_extras=True)


_ALIASES: Final = (typing._GenericAlias, types.GenericAlias, types.UnionType)  # type: ignore[attr-defined]


def _evaluated(hint: Any, inside: bool = False) -> bool:
    """Whether ``typing._eval_type`` would give ``hint`` back as it is (or an equal rebuild of it).

    A string is evaluated when it is the whole annotation or an argument of a builtin generic
    (``list["X"]``); inside ``typing``'s own generics it is a value (``Literal["a"]``: ``typing``
    made any string meant as a type a ``ForwardRef`` there already).
    """
    if isinstance(hint, type) or hint is None:
        return True
    if isinstance(hint, typing.ForwardRef):
        return False
    if isinstance(hint, str):
        return inside
    if not isinstance(hint, _ALIASES):
        return True
    if isinstance(hint, types.GenericAlias) and any(isinstance(arg, str) for arg in hint.__args__):
        return False
    return all(_evaluated(arg, True) for arg in hint.__args__)


_Parameter = tuple[str, inspect._ParameterKind, Any]
"""A parameter's name, kind and default (``inspect.Parameter.empty`` when it has none)."""
_CO_VARARGS: Final = inspect.CO_VARARGS
_CO_VARKEYWORDS: Final = inspect.CO_VARKEYWORDS


def _parameters(fn: Callable[..., Any]) -> list[_Parameter]:
    """``inspect.signature(fn)``'s parameters, in its order.

    A plain function with nothing set on it (no ``functools.wraps``, no ``__signature__``: an
    empty ``__dict__``) is read off its code object directly, as ``inspect`` reads it, without
    building a ``Signature`` (a tenth of registering a tool of a server of hundreds); anything
    else (a method, a partial, a callable object, a decorated function) goes through ``inspect``.
    """
    if type(fn) is not types.FunctionType or fn.__dict__:
        return [(each.name, each.kind, each.default) for each in inspect.signature(fn).parameters.values()]
    code = fn.__code__
    names = code.co_varnames
    positional, only, keyword = code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount
    defaults = fn.__defaults__ or ()
    first_default = positional - len(defaults)
    found: list[_Parameter] = [
        (
            names[index],
            inspect.Parameter.POSITIONAL_ONLY if index < only else inspect.Parameter.POSITIONAL_OR_KEYWORD,
            defaults[index - first_default] if index >= first_default else _EMPTY,
        )
        for index in range(positional)
    ]
    after = positional + keyword  # *args, then **kwargs, are named after the keyword-only ones
    if code.co_flags & _CO_VARARGS:
        found.append((names[after], inspect.Parameter.VAR_POSITIONAL, _EMPTY))
        after += 1
    keyword_defaults = fn.__kwdefaults__ or {}
    found.extend(
        (names[index], inspect.Parameter.KEYWORD_ONLY, keyword_defaults.get(names[index], _EMPTY))
        for index in range(positional, positional + keyword)
    )
    if code.co_flags & _CO_VARKEYWORDS:
        found.append((names[after], inspect.Parameter.VAR_KEYWORD, _EMPTY))
    return found


def _field_default(annotation: Any, field: FieldInfo, what: str) -> tuple[Any, Any, Callable[[], Any] | None]:
    """``x: int = Field(10, ge=1)`` read as ``x: Annotated[int, Field(ge=1)] = 10`` (pydantic's and FastAPI's rule).

    Gives the annotation carrying the field's constraints, the parameter's default (``empty`` when
    the field has none: a required parameter) and what to pass the function when the argument is
    absent (its Python default is the ``FieldInfo`` itself, which the function must never see).
    """
    if get_origin(annotation) is typing.Annotated and any(
        isinstance(extra, FieldInfo) for extra in annotation.__metadata__
    ):
        raise RegistrationError(
            f"{what} has both an Annotated[..., Field(...)] hint and a Field(...) default; say it once: "
            "either `x: Annotated[int, Field(ge=1)] = 10` or `x: int = Field(10, ge=1)`"
        )
    given = set(field._attributes_set)
    if field.default_factory_takes_validated_data:
        raise RegistrationError(
            f"{what}: a default_factory that takes the other arguments (data) is not supported for a parameter; "
            "compute that default in the function"
        )
    if "alias" in given or "validation_alias" in given or "serialization_alias" in given:
        raise RegistrationError(
            f"{what}: Field(alias=...) cannot rename a parameter (the argument's name is the parameter's); "
            "rename the parameter instead"
        )
    if field.exclude:
        raise RegistrationError(f"{what}: Field(exclude=True) means nothing for a parameter; remove it")
    rest = {key: value for key, value in field._attributes_set.items() if key not in ("default", "default_factory")}
    extras: list[Any] = list(field.metadata)
    if rest:
        extras.append(pydantic.Field(**rest))
    constrained = typing.Annotated[(annotation, *extras)] if extras else annotation
    if field.default_factory is not None:
        factory = typing.cast(Callable[[], Any], field.default_factory)
        return constrained, FACTORY, factory
    if field.default is PydanticUndefined or field.default is Ellipsis:
        return constrained, _EMPTY, _missing(what)
    value = field.default
    return constrained, value, lambda: value


class _Factory:
    """The default of a parameter whose ``Field(default_factory=...)`` makes it afresh for each call."""

    def __repr__(self) -> str:
        return "<default_factory>"


FACTORY: Final = _Factory()


def _missing(what: str) -> Callable[[], Any]:
    def fail() -> Any:  # only reached by a caller that skips validation (a required argument)
        raise TypeError(f"{what} is required")

    return fail


def filled(info: FunctionInfo, kwargs: dict[str, Any]) -> dict[str, Any]:
    """``kwargs`` plus the defaults of absent ``Field(...)``-defaulted parameters (never the ``FieldInfo``)."""
    for name, make in info.fills:
        if name not in kwargs:
            kwargs[name] = make()
    return kwargs


async def invoke(info: FunctionInfo, kwargs: dict[str, Any]) -> Any:
    """Call the user's function: awaited if async, in a worker thread if not."""
    if info.fills:
        kwargs = filled(info, kwargs)
    if info.is_async:
        return await info.fn(**kwargs)
    result = await (_pool or _workers()).run(contextvars.copy_context().run, info.fn, kwargs)
    if inspect.isawaitable(result):
        result = await result
    return result


async def in_worker_thread(fn: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    """``fn(**kwargs)`` in a worker thread, in a copy of this task's context variables (``invoke``'s
    way, written out there so that a plain function's call pays no extra frame)."""
    return await (_pool or _workers()).run(contextvars.copy_context().run, fn, kwargs)


def failure_hint(exc: BaseException) -> str | None:
    """What to do about an exception a function raised, when toolkit knows a likely cause; else None.

    A plain ``def`` runs in a worker thread (``invoke``), so an object bound to the thread that made
    it, a ``sqlite3`` connection opened in the lifespan on the event loop's thread, fails there
    (FastMCP runs plain functions on the loop, so code ported from it meets this).
    """
    if type(exc).__module__ == "sqlite3" and "thread" in str(exc):
        return (
            "plain def tools run in worker threads: open the connection with "
            "sqlite3.connect(..., check_same_thread=False) and guard it with a lock, or open one per call, "
            "or make the tool async def; see 'Lifespan' in docs/context.md"
        )
    return None


class WorkerThreads:
    """The threads plain ``def`` tools, resources and prompts run in.

    Unlike asyncio's default pool (``min(32, CPUs + 4)`` threads, joined at exit), there are
    up to ``max_workers`` of them and they are daemon threads: a function blocked for good
    (a socket read without a timeout, say) cannot keep the process from exiting once the
    shutdown grace period is over. Threads are started on demand and then kept.

    The hand-off is the least a thread hop can be: the call goes on a ``SimpleQueue`` a worker
    blocks on, and the worker completes the caller's asyncio future with one
    ``loop.call_soon_threadsafe`` (one write to the loop's self-pipe). No
    ``concurrent.futures.Future`` and no ``run_in_executor`` chaining in between: that machinery
    (a second future, its lock and condition, the callbacks copying one future's state into the
    other) was half of the hop's cost. The semantics are ``run_in_executor``'s: the exception the
    function raised is the one the caller gets, traceback and all; a caller cancelled before a
    worker took the call means the function never runs; cancelled while it runs, the function
    finishes in its thread and its outcome is dropped.
    """

    def __init__(self, max_workers: int) -> None:
        import queue  # noqa: PLC0415 - the pool is made on first use (_workers): no start-up cost

        self.max_workers = max_workers
        self._work: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._started = 0
        self._pending = 0
        """Calls queued or running: a thread is started when they outnumber the threads."""

    def run(self, run: Callable[..., Any], fn: Callable[..., Any], kwargs: dict[str, Any]) -> asyncio.Future[Any]:
        """The future of ``run(fn, **kwargs)`` in a worker thread (``run``: a context's ``run``)."""
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        with self._lock:
            self._pending += 1
            more = self._pending > self._started and self._started < self.max_workers
            if more:
                self._started += 1
                name = f"toolkit-worker-{self._started}"
        self._work.put((loop, future, run, fn, kwargs))
        if more:
            threading.Thread(target=self._serve, name=name, daemon=True).start()
        return future

    def _serve(self) -> None:
        get = self._work.get
        lock = self._lock
        while True:
            loop, future, run, fn, kwargs = get()
            if future.cancelled():  # the caller gave up before the call started: it never runs
                with lock:
                    self._pending -= 1
                continue
            try:
                result = run(fn, **kwargs)
            except BaseException as exc:  # handed to the awaiting task, like run_in_executor
                with lock:
                    self._pending -= 1
                _complete(loop, _fail, future, exc)
                del exc
            else:
                with lock:
                    self._pending -= 1
                _complete(loop, _succeed, future, result)
                del result
            del loop, future, run, fn, kwargs


_Job = tuple[asyncio.AbstractEventLoop, "asyncio.Future[Any]", Callable[..., Any], Callable[..., Any], dict[str, Any]]


def _complete(loop: asyncio.AbstractEventLoop, settle: Callable[..., None], future: Any, value: Any) -> None:
    with contextlib.suppress(RuntimeError):  # the loop was closed meanwhile: nobody awaits the outcome any more
        loop.call_soon_threadsafe(settle, future, value)


def _succeed(future: asyncio.Future[Any], result: Any) -> None:
    if not future.done():  # cancelled while the function ran: its result is dropped
        future.set_result(result)


def _fail(future: asyncio.Future[Any], exc: BaseException) -> None:
    if future.done():
        return
    if isinstance(exc, concurrent.futures.CancelledError):  # as run_in_executor hands it on
        exc = asyncio.CancelledError(*exc.args)
    elif isinstance(exc, StopIteration):  # a future refuses it (run_in_executor left the caller hanging)
        exc = RuntimeError(f"the function raised StopIteration: {exc!r}")
    future.set_exception(exc)


MAX_WORKER_THREADS: Final = 40
"""Plain functions running at once (anyio's default too, so FastAPI users find the same)."""

_pool: WorkerThreads | None = None


def _workers() -> WorkerThreads:
    """The worker pool, made on first use: a server whose functions are all ``async def`` never needs it."""
    global _pool
    if _pool is None:
        _pool = WorkerThreads(MAX_WORKER_THREADS)
    return _pool


def declared_scopes(scopes: Iterable[str] | None, what: str) -> frozenset[str]:
    """The ``scopes=`` of a tool, resource or prompt, checked (a lone string is a mistake: say so)."""
    if scopes is None:
        return frozenset()
    if isinstance(scopes, str):
        raise RegistrationError(f"{what}: scopes= takes a list of scopes, e.g. scopes=[{scopes!r}], not a string")
    result = frozenset(scopes)
    for scope in result:
        if not isinstance(scope, str) or not re.fullmatch(_SCOPE, scope):
            raise RegistrationError(
                f"{what}: {scope!r} is not a valid OAuth scope (printable ASCII without spaces, quotes or backslashes)"
            )
    return result


def where_defined(fn: Callable[..., Any]) -> str:
    """``file.py:LINE`` of a function's definition (what a registration error points at)."""
    target = unwrap(fn)
    code = getattr(target, "__code__", None)
    if code is None:
        return repr(fn)
    return f"{os.path.basename(code.co_filename)}:{code.co_firstlineno}"


@contextlib.contextmanager
def explained(fn: Callable[..., Any], kind: str, context_type: type) -> Iterator[None]:
    """Turn pydantic's errors about a type, raised while registering ``fn``, into one that names it.

    pydantic says what it could not do, deep in its own terms; the user needs to know which
    function, which parameter (or the return annotation), which type, and what to write instead.
    The original error stays as ``__cause__``.
    """
    try:
        yield
    except (pydantic.errors.PydanticUserError, pydantic.errors.PydanticInvalidForJsonSchema) as exc:
        raise SchemaError(_type_problem(fn, kind, context_type, exc)) from exc
    except RegistrationError as exc:  # toolkit's own: say where the function is, once
        where = where_defined(fn)
        if exc.args and isinstance(exc.args[0], str) and where not in exc.args[0]:
            exc.args = (f"{exc.args[0]} [{kind} {getattr(fn, '__name__', fn)}() in {where}]", *exc.args[1:])
        raise


def _provided(name: str, hint: Any) -> bool:
    try:
        return injected(name, hint, inspect.Parameter.empty, "") is not None
    except RegistrationError:
        return True


def _type_problem(fn: Callable[..., Any], kind: str, context_type: type, exc: Exception) -> str:
    name = getattr(fn, "__name__", repr(fn))
    place = f"{kind} {name}() in {where_defined(fn)}"
    culprit = _culprit(fn, context_type)
    first = str(exc).strip().split("\n", 1)[0].split(". ", 1)[0]  # what failed, not pydantic's workarounds
    if culprit is None:
        return f"{place}: a type in its signature cannot be described as JSON Schema ({first})"
    target, hint = culprit
    shown = getattr(hint, "__name__", None) or repr(hint)
    return (
        f"{place}, {target}: toolkit cannot describe the type {shown} as JSON Schema. Use a pydantic model, "
        "a dataclass or a TypedDict for a structured value, or Annotated[..., Field(...)] to constrain a "
        "simple one (arbitrary_types_allowed is no way out: clients need a schema for the value). "
        f"pydantic said: {first}"
    )


def _culprit(fn: Callable[..., Any], context_type: type) -> tuple[str, Any] | None:
    """Which annotation of ``fn`` pydantic cannot describe: ``("parameter 'x'", hint)``, or None."""
    try:
        annotations = typing.get_type_hints(unwrap(fn), include_extras=True)
    except Exception:  # unresolvable hints: nothing to point at
        return None
    for name, hint in sorted(annotations.items(), key=lambda item: item[0] == "return"):
        if _is_context(hint, context_type) or (name != "return" and _provided(name, hint)):
            continue
        try:
            pydantic.TypeAdapter(hint).json_schema()
        except Exception:
            return ("the return annotation" if name == "return" else f"parameter {name!r}"), hint
    return None
