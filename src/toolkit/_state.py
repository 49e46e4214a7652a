"""State a tool keeps between calls: per user, per session (a legacy session or a handle), per request.

``ctx.state.user`` (the access token's subject), ``await ctx.state.session(handle)`` and
``ctx.state.request`` are ``State`` objects, and so are the built-in dependencies ``UserState``,
``LocalUserState``, ``SessionState`` and ``RequestState`` (``_state_providers``). A ``State`` keeps named JSON values
(or pydantic models) on the server's store (``store.state()``: this process's memory, or Redis
shared by every replica), each expiring ``ttl`` seconds after its last write, bounded by the
store's ``StateLimits``; ``incr``, ``append`` and ``update`` change a value without losing a
concurrent change. On 2026-07-28 there are no sessions: ``await ctx.state.new_session()`` mints an
unguessable handle, bound to the caller's subject when there is one, that a tool returns and a
later call passes back as its ``session`` argument. See docs/state.md.

Imported on first use (``ctx.state``, ``toolkit.UserState``...): a server that keeps no state
never loads it.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import inspect
import random
import secrets
import weakref
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final, TypeVar, overload

import pydantic
import pydantic_core

from ._store.base import serving_store, session_state_scope
from ._store.state import MemoryStateStore, StateError, StateStore, check_name, check_ttl

if TYPE_CHECKING:
    from ._inbound import InboundRequest
    from ._server import Server
    from ._session import Session

T = TypeVar("T")

USER_TTL: Final = 30 * 24 * 3600.0
"""How long a user's value lives after its last write, unless the write says otherwise."""
SESSION_TTL: Final = 24 * 3600.0
"""How long a session handle lives unused, and a session's value after its last write."""
REQUEST_TTL: Final = 3600.0
UPDATE_TRIES: Final = 50
HANDLE_PREFIX: Final = "sst_"
SESSION_ARGUMENT: Final = "session"
"""The argument a 2026-07-28 call passes a session handle in, for ``SessionState``."""
_REQUEST_STORE: Final = "toolkit/request-state"
_LOCAL_USER: Final = "local"
_stdio_sessions: weakref.WeakKeyDictionary[Session, str] = weakref.WeakKeyDictionary()


@functools.lru_cache(maxsize=256)
def _adapter(model: Any) -> pydantic.TypeAdapter[Any]:
    return pydantic.TypeAdapter(model)


def _encode(name: str, value: Any) -> str:
    try:
        return pydantic_core.to_json(value).decode()
    except pydantic_core.PydanticSerializationError:
        raise TypeError(
            f"state {name!r}: a {type(value).__name__} cannot be kept; keep JSON values (dict, list, str, int, "
            "float, bool, None), pydantic models, dataclasses, or what pydantic serializes"
        ) from None


def _decode(name: str, text: str, model: Any) -> Any:
    if model is None:
        return pydantic_core.from_json(text)
    try:
        return _adapter(model).validate_json(text)
    except pydantic.ValidationError as exc:
        kind = getattr(model, "__name__", repr(model))
        raise ValueError(
            f"state {name!r} holds a value that is not a {kind} ({exc.errors()[0]['msg']}); it was kept as another "
            "type: read it without a model, or delete it"
        ) from None


def _owner(subject: str) -> str:
    """A subject as state names it: hashed, so that keys and handles never carry an e-mail address."""
    return hashlib.sha256(subject.encode()).hexdigest()


class State:
    """The named values of one scope: one user, one session, one request."""

    __slots__ = ("_store", "scope", "ttl")

    def __init__(self, store: StateStore, scope: str, *, ttl: float) -> None:
        check_ttl(ttl)
        self._store = store
        self.scope: Final = scope
        """The scope's key in the store (``u.<hash of the subject>``, ``h.<handle>``, ``s.<session>``, ``r``)."""
        self.ttl = ttl
        """How long a value lives after its last write, unless that write says otherwise (seconds)."""

    def __repr__(self) -> str:
        return f"State({self.scope!r})"

    @overload
    async def get(self, name: str) -> Any: ...

    @overload
    async def get(self, name: str, model: type[T]) -> T | None: ...

    @overload
    async def get(self, name: str, model: type[T], default: T) -> T: ...

    @overload
    async def get(self, name: str, model: Any, default: Any) -> Any: ...

    async def get(self, name: str, model: Any = None, default: Any = None) -> Any:
        """The value kept as ``name`` (``default`` if none), validated as ``model`` when given.

        ``await state.get("cart", Cart)`` gives a ``Cart``; any type pydantic validates will do
        (``list[Item]``, ``int``); without one, the JSON value (dicts, lists...).
        """
        text = await self._store.get(self.scope, check_name(name))
        return default if text is None else _decode(name, text, model)

    async def set(self, name: str, value: Any, *, ttl: float | None = None) -> None:
        """Keep ``value`` (JSON, or a pydantic model) as ``name`` for ``ttl`` seconds (default: the scope's)."""
        await self._store.put(self.scope, check_name(name), _encode(name, value), ttl=self.ttl if ttl is None else ttl)

    async def delete(self, name: str) -> bool:
        """Forget ``name``; whether it was kept."""
        return await self._store.delete(self.scope, check_name(name))

    async def names(self) -> list[str]:
        """The names kept in this scope, sorted."""
        return await self._store.names(self.scope)

    async def clear(self) -> None:
        """Forget everything kept in this scope."""
        await self._store.clear(self.scope)

    async def incr(self, name: str, amount: int = 1, *, ttl: float | None = None) -> int:
        """Add ``amount`` to the integer kept as ``name`` (0 if none), in one step; the new count."""
        if not isinstance(amount, int) or isinstance(amount, bool):
            raise TypeError(f"state {name!r}: incr counts integers; give amount= an int, not {amount!r}")
        return await self._store.incr(self.scope, check_name(name), amount, ttl=self.ttl if ttl is None else ttl)

    async def append(self, name: str, item: Any, *, max_items: int | None = None, ttl: float | None = None) -> int:
        """Add ``item`` to the list kept as ``name`` (a new one if none); the list's length after.

        ``max_items`` keeps only the newest that many (a history that does not grow past a bound).
        """
        if max_items is not None and (not isinstance(max_items, int) or max_items < 1):
            raise ValueError(f"state {name!r}: max_items={max_items!r}; give a positive integer, or None")

        def add(current: Any) -> list[Any]:
            if current is not None and not isinstance(current, list):
                raise StateError(f"state {name!r} holds a {type(current).__name__}, not a list: append adds to lists")
            items: list[Any] = [*(current or ()), item]
            return items[-max_items:] if max_items is not None else items

        kept: list[Any] = await self.update(name, add, ttl=ttl)
        return len(kept)

    @overload
    async def update(
        self, name: str, change: Callable[[Any], T | Awaitable[T]], *, default: Any = None, ttl: float | None = None
    ) -> T: ...

    @overload
    async def update(
        self,
        name: str,
        change: Callable[[Any], T | Awaitable[T]],
        *,
        model: Any,
        default: Any = None,
        ttl: float | None = None,
    ) -> T: ...

    async def update(
        self,
        name: str,
        change: Callable[[Any], Any],
        *,
        model: Any = None,
        default: Any = None,
        ttl: float | None = None,
    ) -> Any:
        """Replace the value kept as ``name`` by ``change(value)`` (``default`` if none); the new value.

        ``change`` (plain or ``async``) gets the value as ``get(name, model)`` gives it and returns
        the new one. When another call changed the value meanwhile (another replica, too), the
        write is refused and ``change`` runs again on the newer value, so no change is lost; keep
        it free of side effects. After ``UPDATE_TRIES`` refused writes, ``StateError``.
        """
        check_name(name)
        for attempt in range(UPDATE_TRIES):
            text = await self._store.get(self.scope, name)
            current = default if text is None else _decode(name, text, model)
            new = change(current)
            if inspect.isawaitable(new):
                new = await new
            if await self._store.put(
                self.scope, name, _encode(name, new), ttl=self.ttl if ttl is None else ttl, expect=text
            ):
                return new
            # Contended: step aside a little, longer each time, so that the writers stop colliding.
            await asyncio.sleep(random.uniform(0, 0.001 * (attempt + 1)))
        raise StateError(
            f"state {name!r} kept changing under {UPDATE_TRIES} tries of update(); too many calls change it at "
            "once: use incr() for counters, or try again"
        )


class Scopes:
    """``ctx.state``: the state of the caller (``user``), of a session (``session()``), of this request."""

    __slots__ = ("_inbound", "_server")

    def __init__(self, inbound: InboundRequest, server: Server) -> None:
        self._inbound = inbound
        self._server = server

    def _store(self) -> StateStore:
        return serving_store(self._server).state()

    def _subject(self) -> str | None:
        token = self._inbound.access_token
        return None if token is None else token.subject

    @property
    def user(self) -> State:
        """The caller's state: the values kept for the access token's subject, on every call they make.

        ``StateError`` when the request has no subject (stdio, or an HTTP server without ``auth=``):
        use ``local_user`` to share one state among such callers instead.
        """
        subject = self._subject()
        if subject is None:
            raise StateError(
                "ctx.state.user: the request carries no subject to keep the user's state under (stdio, or an HTTP "
                "server without auth=); run the server with auth= so each caller has one, or use "
                "ctx.state.local_user (LocalUserState), shared by every caller without one"
            )
        return State(self._store(), f"u.{_owner(subject)}", ttl=USER_TTL)

    @property
    def local_user(self) -> State:
        """The caller's state as ``user``, or, for a caller with no subject, the one state all such callers share.

        Over stdio that is the local user who started the server. Over HTTP without ``auth=`` it is
        everyone: use it there only for what anyone may see and change.
        """
        subject = self._subject()
        scope = f"u.{_owner(subject)}" if subject is not None else f"u.{_LOCAL_USER}"
        return State(self._store(), scope, ttl=USER_TTL)

    @property
    def request(self) -> State:
        """This request's state, gone when it ends: what its dependencies and the function share.

        In this process only (no store), bounded like the others. On 2026-07-28 each round of a
        call that asks the client for input is a request of its own.
        """
        store = self._inbound.extras.get(_REQUEST_STORE)
        if store is None:
            store = self._inbound.extras[_REQUEST_STORE] = MemoryStateStore(self._store().limits)
        return State(store, "r", ttl=REQUEST_TTL)

    @property
    def in_session(self) -> bool:
        """Whether this request belongs to a legacy session (``session()`` without a handle has one)."""
        return not self._inbound.modern and self._inbound.session is not None

    @property
    def session_argument(self) -> Any:
        """The call's ``session`` argument (where a client sends a handle back), or ``None``."""
        params = self._inbound.params
        arguments = params.get("arguments") if isinstance(params, dict) else None
        return arguments.get(SESSION_ARGUMENT) if isinstance(arguments, dict) else None

    async def new_session(self, *, ttl: float = SESSION_TTL) -> str:
        """Mint a session handle: an unguessable string, for a tool to return and a later call to pass back.

        The session lasts ``ttl`` seconds unused (each use pushes it back), and so does each value kept
        in it after its last write. It belongs to the caller's subject when there is one: no other
        user's call may use it. Without a subject (stdio, no ``auth=``), whoever holds it may.
        """
        check_ttl(ttl)
        handle = HANDLE_PREFIX + secrets.token_urlsafe(24)
        subject = self._subject()
        await self._store().create_handle(handle, "" if subject is None else _owner(subject), ttl=ttl)
        return handle

    async def session(self, handle: str | None = None) -> State:
        """The state of the session ``handle`` names (``new_session``), or of this legacy session when ``None``.

        A handle that is unknown, expired, or another user's is refused with a ``StateError`` that
        says to start a new session (the model sees it and can). Without a handle, a 2026-07-28
        request has no session: that is refused too, saying how to get one.
        """
        if handle is not None:
            return await self._handle_state(handle)
        session = self._inbound.session
        if self._inbound.modern or session is None:
            raise StateError(
                "this 2026-07-28 request belongs to no session (the protocol has none): pass the handle "
                "a tool got from ctx.state.new_session() (returned to the client, sent back as an argument)"
            )
        if session.id is not None:
            return State(self._store(), session_state_scope(session.id), ttl=SESSION_TTL)
        key = _stdio_sessions.get(session)  # stdio: the process's one session, which has no id
        if key is None:
            key = _stdio_sessions[session] = secrets.token_urlsafe(24)
        return State(self._store(), session_state_scope(key), ttl=SESSION_TTL)

    async def _handle_state(self, handle: object) -> State:
        store = self._store()
        found = None
        if isinstance(handle, str) and handle.startswith(HANDLE_PREFIX) and len(handle) <= 64:
            found = await store.open_handle(handle)
        subject = self._subject()
        if found is None or (found[0] and (subject is None or found[0] != _owner(subject))):
            # Another user's handle is answered as an unknown one: a handle tells nothing to whoever found it.
            shown = handle if isinstance(handle, str) and len(handle) <= 64 else f"{str(handle)[:20]}..."
            raise StateError(
                f"session {shown!r} is unknown or has expired (a session ends when unused for a while); start a "
                "new session and use the handle it gives"
            )
        assert isinstance(handle, str)
        return State(store, f"h.{handle}", ttl=found[1])
