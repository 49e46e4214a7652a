"""Where per-user, per-session and per-request state lives: ``StateStore`` and its in-memory implementation.

A scope (one user, one session, one handle; ``toolkit._state`` names them) holds named values,
each the JSON text of what a tool kept, each expiring ``ttl`` seconds after its last write.
The store bounds what a scope may hold (``StateLimits``: bytes per value, bytes and names per
scope) and refuses a write past a bound with ``StateLimitError``, saying which one. A write may
be conditional (``expect=``: the text the writer read, ``None`` for "absent"), which is how
``State.update`` changes a value without losing a concurrent change; ``incr`` counts in one
step. Session handles (``create_handle``) are kept here too, with their owner.

``MemoryStateStore`` is one process's (``store.state()`` of a ``MemoryStore``);
``RedisStateStore`` (``redis_state.py``) is shared by the replicas of one Redis.
"""

from __future__ import annotations

import re
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Final

from .._errors import ToolError


class _Any:
    def __repr__(self) -> str:
        return "ANY"


ANY: Final = _Any()
"""``put(..., expect=ANY)``: write whatever the scope holds (the default)."""

MAX_EXACT: Final = 2**53
"""``incr`` counts within ±2**53: what every JSON reader (and Redis's Lua) reads back exactly."""
MAX_NAME: Final = 200
_INTEGER: Final = re.compile(r"-?[0-9]+")


@dataclass(frozen=True, slots=True)
class StateLimits:
    """How much one scope may hold; a write past a bound is refused (``StateLimitError``)."""

    max_value_bytes: int = 64 * 1024
    """The JSON text of one value, in UTF-8 bytes."""
    max_scope_bytes: int = 1024 * 1024
    """All the values of one scope (one user, one session) together."""
    max_names: int = 1000
    """How many named values one scope holds."""

    def __post_init__(self) -> None:
        for name in ("max_value_bytes", "max_scope_bytes", "max_names"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"StateLimits({name}={value!r}): give a positive integer")


class StateError(ToolError):
    """State could not be read or written as asked; the message says why and what to do.

    A ``ToolError``: raised in a tool, the model sees the message (a full cart, an expired session).
    """


class StateLimitError(StateError):
    """A write would take a value or a scope past its ``StateLimits``."""

    def __init__(self, name: str, bound: str, size: int, limit: int) -> None:
        what = {
            "max_value_bytes": f"{size:,} bytes, over the limit of {limit:,} bytes per value",
            "max_scope_bytes": f"{size:,} bytes in this scope, over the limit of {limit:,} bytes per scope",
            "max_names": f"{size:,} names in this scope, over the limit of {limit:,} names per scope",
        }[bound]
        super().__init__(
            f"state {name!r} was not written: it would make {what} (StateLimits.{bound}); keep less "
            "(append(..., max_items=N), delete what is no longer needed) or raise the limit (store.state().limits)"
        )
        self.name = name
        self.bound = bound
        self.size = size
        self.limit = limit


def not_an_integer(name: str, held: str) -> StateError:
    shown = held if len(held) <= 40 else held[:37] + "..."
    return StateError(
        f"state {name!r} holds {shown}, not an integer within ±2**53: incr counts integers only; "
        "use update() for other values, or delete it first"
    )


def check_name(name: object) -> str:
    if not isinstance(name, str) or not name or len(name) > MAX_NAME or not name.isprintable():
        raise ValueError(
            f"state name {name!r}: give a non-empty printable string of at most {MAX_NAME} characters, like 'cart'"
        )
    return name


def check_ttl(ttl: float) -> int:
    """``ttl`` seconds as whole milliseconds (every value expires; at least 1 ms)."""
    if isinstance(ttl, bool) or not isinstance(ttl, int | float) or not ttl > 0 or ttl == float("inf"):
        raise ValueError(f"state ttl={ttl!r}: give a positive number of seconds (every value expires)")
    return max(1, round(ttl * 1000))


class StateStore(ABC):
    """Named JSON values per scope, bounded and expiring. Every method may raise ``toolkit.StoreUnavailable``.

    ``scope`` and ``name`` are strings the caller made safe (``check_name``); values are JSON text,
    kept and handed back as given. ``limits`` bound every write (set it to change them).
    """

    def __init__(self, limits: StateLimits | None = None) -> None:
        self.limits = limits or StateLimits()

    @abstractmethod
    async def get(self, scope: str, name: str) -> str | None:
        """The value's text, or ``None`` when it was never written, was deleted or expired."""

    @abstractmethod
    async def put(self, scope: str, name: str, value: str, *, ttl: float, expect: str | _Any | None = ANY) -> bool:
        """Keep ``value`` for ``ttl`` seconds. With ``expect``, only if the value is still that text (``None``:
        still absent); False, and nothing written, when it is not. ``StateLimitError`` past a bound."""

    @abstractmethod
    async def incr(self, scope: str, name: str, amount: int, *, ttl: float) -> int:
        """Add ``amount`` to the integer kept (0 when absent) in one step; the new value, kept ``ttl`` seconds."""

    @abstractmethod
    async def delete(self, scope: str, name: str) -> bool:
        """Forget the value; whether there was one."""

    @abstractmethod
    async def names(self, scope: str) -> list[str]:
        """The names the scope holds now, sorted."""

    @abstractmethod
    async def clear(self, scope: str) -> None:
        """Forget every value of the scope."""

    @abstractmethod
    async def create_handle(self, handle: str, owner: str, *, ttl: float) -> None:
        """Keep a new session handle for ``ttl`` seconds of idleness; ``owner`` ("" for anyone) may use it."""

    @abstractmethod
    async def open_handle(self, handle: str) -> tuple[str, float] | None:
        """The handle's owner ("" for none) and idle time in seconds, its expiry pushed back by that idle time;
        ``None`` if unknown or expired."""


def check_fits(limits: StateLimits, name: str, size: int, total: int, count: int) -> None:
    """Whether a scope holding ``total`` bytes in ``count`` names after the write is within ``limits``."""
    if size > limits.max_value_bytes:
        raise StateLimitError(name, "max_value_bytes", size, limits.max_value_bytes)
    if total > limits.max_scope_bytes:
        raise StateLimitError(name, "max_scope_bytes", total, limits.max_scope_bytes)
    if count > limits.max_names:
        raise StateLimitError(name, "max_names", count, limits.max_names)


class MemoryStateStore(StateStore):
    """State in this process (one replica)."""

    SWEEP_EVERY: Final = 1000
    """Every so many writes, scopes nobody reads any more are swept of what expired."""

    def __init__(self, limits: StateLimits | None = None) -> None:
        super().__init__(limits)
        self._scopes: dict[str, dict[str, tuple[str, float]]] = {}
        self._handles: dict[str, tuple[str, float, float]] = {}
        """handle: (owner, idle seconds, expiry)"""
        self._writes = 0

    def _scope(self, scope: str) -> dict[str, tuple[str, float]]:
        held = self._scopes.get(scope)
        if held is None:
            return {}
        now = time.monotonic()
        for name in [name for name, (_, expires) in held.items() if expires <= now]:
            del held[name]
        if not held:
            del self._scopes[scope]
        return held

    def _write(self, scope: str, name: str, value: str, ttl: float) -> None:
        expires = time.monotonic() + check_ttl(ttl) / 1000
        held = self._scope(scope)
        size = len(value.encode())
        previous = held.get(name)
        total = sum(len(text.encode()) for text, _ in held.values()) + size
        if previous is not None:
            total -= len(previous[0].encode())
        check_fits(self.limits, name, size, total, len(held) + (previous is None))
        self._scopes.setdefault(scope, held)[name] = (value, expires)
        self._writes += 1
        if self._writes % self.SWEEP_EVERY == 0:
            self._sweep()

    def _sweep(self) -> None:
        for scope in list(self._scopes):
            self._scope(scope)
        now = time.monotonic()
        for handle in [handle for handle, (_, _, expires) in self._handles.items() if expires <= now]:
            del self._handles[handle]

    async def get(self, scope: str, name: str) -> str | None:
        found = self._scope(scope).get(name)
        return None if found is None else found[0]

    async def put(self, scope: str, name: str, value: str, *, ttl: float, expect: str | _Any | None = ANY) -> bool:
        if expect is not ANY:
            found = self._scope(scope).get(name)
            if (None if found is None else found[0]) != expect:
                return False
        self._write(scope, name, value, ttl)
        return True

    async def incr(self, scope: str, name: str, amount: int, *, ttl: float) -> int:
        found = self._scope(scope).get(name)
        count = 0
        if found is not None:
            if not _INTEGER.fullmatch(found[0]) or abs(int(found[0])) >= MAX_EXACT:
                raise not_an_integer(name, found[0])
            count = int(found[0])
        count += amount
        if abs(count) >= MAX_EXACT:
            raise StateError(f"state {name!r}: incr would reach {count}, past ±2**53; reset it with set()")
        self._write(scope, name, str(count), ttl)
        return count

    async def delete(self, scope: str, name: str) -> bool:
        return self._scope(scope).pop(name, None) is not None

    async def names(self, scope: str) -> list[str]:
        return sorted(self._scope(scope))

    async def clear(self, scope: str) -> None:
        self._scopes.pop(scope, None)

    async def create_handle(self, handle: str, owner: str, *, ttl: float) -> None:
        ttl = check_ttl(ttl) / 1000
        self._handles[handle] = (owner, ttl, time.monotonic() + ttl)

    async def open_handle(self, handle: str) -> tuple[str, float] | None:
        found = self._handles.get(handle)
        now = time.monotonic()
        if found is None or found[2] <= now:
            self._handles.pop(handle, None)
            return None
        owner, ttl, _ = found
        self._handles[handle] = (owner, ttl, now + ttl)
        return owner, ttl
