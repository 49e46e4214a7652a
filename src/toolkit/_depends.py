"""``Depends``: a parameter whose value the server provides, never the client.

``def tool(city: str, db: Annotated[DB, Depends(get_db)])``, or ``db: DB = Depends(get_db)``:
the marker that says so, how a parameter is recognised as one (``injected``), and
``DependencyOverrides``, the mapping behind ``server.dependency_overrides``. How a function's
dependencies are planned at registration and provided on each call is ``_injection``; the
built-in providers (the caller's token, the HTTP headers, the lifespan's state...) are
``_providers``.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable, Iterable, Iterator, MutableMapping
from typing import Any, Final, get_args, get_origin

from ._errors import RegistrationError


class _Missing:
    """What a built-in provider gives when the request has no such thing (no token, no header)."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final = _Missing()
"""The parameter gets its ``fallback`` (``Injected``)."""

REFUSE: Final = _Missing()
"""The ``fallback`` of a parameter with no default and a type that does not admit ``None``."""


class Dependency:
    """The marker ``Depends(...)`` makes: a provider, whether its value is shared within a call, where it runs."""

    __slots__ = ("blocking", "label", "provider", "use_cache")

    def __init__(self, provider: Callable[..., Any], *, use_cache: bool = True, blocking: bool | None = None) -> None:
        if not callable(provider):
            raise TypeError(f"Depends() takes the function that provides the value, not {provider!r}")
        self.provider: Final = provider
        self.use_cache: Final = use_cache
        self.blocking: Final = blocking
        self.label = getattr(provider, "__qualname__", None) or repr(provider)
        """How errors name it: ``get_db``; a built-in, as it is written: ``RequestHeader('x-tenant')``."""

    def __repr__(self) -> str:
        return f"Depends({self.label})"


class Builtin(Dependency):
    """A built-in provider (``_providers``): runs on the event loop, and may have nothing to give (``MISSING``).

    Any kind of provider: a plain ``def`` (called on the loop: a built-in never blocks), an ``async
    def``, or a generator of either kind (one that loads something and saves it after the call).
    """

    __slots__ = ("missing",)

    def __init__(self, provider: Callable[..., Any], label: str, missing: str) -> None:
        asynchronous = inspect.iscoroutinefunction(provider) or inspect.isasyncgenfunction(provider)
        super().__init__(provider, blocking=None if asynchronous else False)
        self.label = label
        self.missing: Final = missing
        """What the refusal says after "Tool 'x' needs ": what is missing, and why it may be."""

    def __repr__(self) -> str:
        return self.label


def Depends(provider: Callable[..., Any], *, use_cache: bool = True, blocking: bool | None = None) -> Any:
    """The server provides this parameter: the value ``provider`` returns (or yields), for each call.

    ``db: Annotated[DB, Depends(get_db)]``, or ``db: DB = Depends(get_db)``. ``provider`` is a
    function, ``def`` or ``async def``, plain or a generator (the code after its ``yield`` runs once
    the call is over, also when it failed or was cancelled). Its own parameters are other
    dependencies, built-in ones (``Subject``, ``RequestHeader("x-tenant")``...) or a ``Context``.
    Within one call each provider runs once, however many parameters ask for it; ``use_cache=False``
    gives this parameter a value of its own. A plain ``def`` provider runs in a worker thread, as a
    plain ``def`` tool does; ``blocking=False`` says it never blocks, so it is called on the event
    loop instead. The parameter never appears in the input schema, and a client that sends an
    argument of its name is refused. See docs/dependencies.md.
    """
    return Dependency(provider, use_cache=use_cache, blocking=blocking)


class Injected:
    """One parameter of a function that a dependency fills: its name, its marker, whether ``None`` will do."""

    __slots__ = ("depends", "fallback", "name")

    def __init__(self, name: str, depends: Dependency, fallback: Any) -> None:
        self.name: Final = name
        self.depends: Final = depends
        self.fallback: Final = fallback
        """What it gets when a built-in has nothing to give: its default, else ``None`` if its type admits
        ``None``, else ``REFUSE`` (the call is refused, saying what is missing)."""

    def __repr__(self) -> str:
        return f"Injected({self.name!r}, {self.depends!r})"


def _admits_none(annotation: Any) -> bool:
    if annotation is None or annotation is type(None) or annotation is Any:
        return annotation is not Any
    origin = get_origin(annotation)
    if origin is typing.Annotated:
        return _admits_none(get_args(annotation)[0])
    if origin is typing.Union or origin is types.UnionType:
        return any(_admits_none(arg) for arg in get_args(annotation))
    return False


def _markers(annotation: Any) -> list[Dependency]:
    if get_origin(annotation) is not typing.Annotated:  # the one kind of hint with metadata
        return []
    return [extra for extra in annotation.__metadata__ if isinstance(extra, Dependency)]


def injected(name: str, annotation: Any, default: Any, what: str) -> Injected | None:
    """The dependency a parameter declares, or ``None`` for an ordinary one.

    ``x: Annotated[T, Depends(f)]``, ``x: T = Depends(f)``, and an alias used as ``x: Alias | None``
    (``Union[Annotated[T, Depends(f)], None]``). ``what`` names the function in errors.
    """
    found = _markers(annotation)
    if not found and get_origin(annotation) in (typing.Union, types.UnionType):
        members = get_args(annotation)
        inner = [marker for member in members for marker in _markers(member)]
        if inner:
            if len(members) != 2 or type(None) not in members:
                raise RegistrationError(
                    f"parameter {name!r} of {what}: a dependency may be made optional with '| None', and with "
                    f"nothing else; {annotation!r} unites it with other types"
                )
            found = inner
    if isinstance(default, Dependency):
        if found:
            raise RegistrationError(
                f"parameter {name!r} of {what} declares its dependency twice (in Annotated[...] and as the "
                "default); say it once"
            )
        return Injected(name, default, None if _admits_none(annotation) else REFUSE)
    if not found:
        return None
    if len(found) > 1:
        raise RegistrationError(f"parameter {name!r} of {what} has {len(found)} Depends(...); give it one")
    if default is not inspect.Parameter.empty:  # what a built-in with nothing to give passes instead
        return Injected(name, found[0], default)
    return Injected(name, found[0], None if _admits_none(annotation) else REFUSE)


def sent_by_client(dependencies: tuple[Injected, ...], names: Iterable[str]) -> str:
    """Why a client's arguments named like injected parameters are refused: an argument never replaces a dependency."""
    shown = ", ".join(f"{each.name!r} ({each.depends.label})" for each in dependencies if each.name in names)
    return f"{shown}: provided by the server (a dependency), never by the client; leave it out"


def override_key(target: Any) -> Any:
    """What ``server.dependency_overrides[target]`` names: a provider, a ``Depends``, or an alias of one.

    ``Annotated[DB, Depends(get_db)]`` and ``Depends(get_db)`` both name ``get_db``; a built-in alias
    (``Subject``) or marker (``RequestHeader("x-tenant")``) names its own provider.
    """
    markers = _markers(target)
    if len(markers) == 1:
        target = markers[0]
    if isinstance(target, Dependency):
        return target.provider
    if not callable(target):
        raise TypeError(
            f"dependency_overrides keys are providers (functions), Depends(...) or an alias of one; not {target!r}"
        )
    return target


class DependencyOverrides(MutableMapping[Any, Callable[..., Any]]):
    """``server.dependency_overrides``: providers replaced, for tests (``[get_db] = fake_db``).

    A key is the provider as ``Depends`` names it (or the ``Depends``, or an ``Annotated`` alias of
    one, built-ins included: ``[Subject] = lambda: "alice"``); the value is the function to call
    instead, which may take dependencies of its own. It applies to the calls that start after the
    change, to this server's tools, resources and prompts (a mounted server has its own).
    """

    def __init__(self) -> None:
        self._overrides: dict[Any, Callable[..., Any]] = {}
        self.version = 0
        """Changed by every change: a plan made with the overrides of one version serves only that one."""

    def __getitem__(self, key: Any) -> Callable[..., Any]:
        return self._overrides[override_key(key)]

    def __setitem__(self, key: Any, value: Callable[..., Any]) -> None:
        if not callable(value):
            raise TypeError(f"dependency_overrides[{key!r}] must be a function that provides the value, not {value!r}")
        self._overrides[override_key(key)] = value
        self.version += 1

    def __delitem__(self, key: Any) -> None:
        del self._overrides[override_key(key)]
        self.version += 1

    def __iter__(self) -> Iterator[Any]:
        return iter(self._overrides)

    def __len__(self) -> int:
        return len(self._overrides)

    def get_override(self, provider: Any) -> Callable[..., Any] | None:
        """The replacement of ``provider`` (a ``Depends.provider``), if any; the call path's lookup."""
        return self._overrides.get(provider)

    def __repr__(self) -> str:
        return f"DependencyOverrides({self._overrides!r})"
