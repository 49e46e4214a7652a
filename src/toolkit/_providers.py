"""The built-in providers: what a request brings and what the server holds, as typed dependencies.

``def tool(user: Subject, tenant: Annotated[str, RequestHeader("x-tenant")]) -> ...``: each is a
``Depends`` on a small function of the ``Context`` (so ``ctx.access_token``, ``ctx.request``,
``ctx.lifespan`` and ``ctx.protocol_version`` are what they read), run on the event loop. When a
request has no such thing (no token over stdio, no header), the parameter gets ``None`` if its
type admits it (``user: Subject | None``) and the call is refused otherwise, saying what is
missing. A new built-in (per-user state, say) is one more function here and one more alias.
Imported on first use (``toolkit.__getattr__``): ``CallerToken`` loads the auth wing's
``AccessToken``, which a server that never names it does not need.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any

from ._auth.tokens import AccessToken
from ._context import Context
from ._depends import MISSING, Builtin
from ._store.base import Store, serving_store

if TYPE_CHECKING:
    pass


def _caller_token(ctx: Context) -> Any:
    token = ctx.access_token
    return MISSING if token is None else token


CallerToken = Annotated[
    AccessToken,
    Builtin(
        _caller_token,
        "CallerToken",
        "the caller's access token, and the request carried none (stdio, or a server without auth=)",
    ),
]
"""The caller's verified access token (``toolkit.auth.AccessToken``: subject, client id, scopes, claims)."""


def _subject(token: CallerToken | None) -> Any:
    return MISSING if token is None or token.subject is None else token.subject


Subject = Annotated[
    str,
    Builtin(
        _subject,
        "Subject",
        "the caller's subject (the access token's sub), and the request carried no token, or one without sub",
    ),
]
"""Who is calling: the ``sub`` of the caller's access token."""


def _request_headers(ctx: Context) -> Any:
    headers = getattr(ctx.request, "headers", None)
    return MISSING if headers is None else headers


RequestHeaders = Annotated[
    Mapping[str, str],
    Builtin(
        _request_headers,
        "RequestHeaders",
        "the request's HTTP headers, and it came by no HTTP request (stdio, or a server in this process)",
    ),
]
"""The HTTP request's headers, by lower-case name (repeated ones joined with ``", "``)."""


def RequestHeader(name: str) -> Any:
    """One HTTP header of the request: ``tenant: Annotated[str, RequestHeader("x-tenant")]``.

    Its value as sent (several of that name joined with ``", "``). Missing, the parameter gets
    ``None`` if its type admits it; otherwise the call is refused naming the header.
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f'RequestHeader() takes the header\'s name, like RequestHeader("x-tenant"); not {name!r}')
    return _request_header(name.lower())


@functools.cache
def _request_header(name: str) -> Builtin:
    """One marker per header name, so that ``dependency_overrides[RequestHeader("X-Tenant")]`` finds it."""

    def header(headers: RequestHeaders | None) -> Any:
        value = headers.get(name) if headers is not None else None
        return MISSING if value is None else value

    header.__qualname__ = f"RequestHeader({name!r})"
    return Builtin(header, f"RequestHeader({name!r})", f"the HTTP header {name!r}, which the request did not carry")


def _protocol_version(ctx: Context) -> str:
    return ctx.protocol_version


ProtocolVersion = Annotated[str, Builtin(_protocol_version, "ProtocolVersion", "the protocol version")]
"""The protocol version in force for this request (``"2026-07-28"``, ``"2025-11-25"``, ...)."""


def Lifespan(key: str | None = None) -> Any:
    """What the server's lifespan yielded (``ctx.lifespan``), or one ``key`` of it.

    ``db: Annotated[Database, Lifespan("db")]`` reads ``state["db"]`` when the lifespan yielded a
    mapping, ``state.db`` otherwise. A server with no lifespan, or a key its state lacks, is the
    server's mistake: the call fails (masked like any error of the server's code), and the log says
    what the state holds.
    """
    if key is not None and (not isinstance(key, str) or not key):
        raise TypeError(
            f'Lifespan() takes the name of one key of the lifespan\'s state, like Lifespan("db"); not {key!r}'
        )
    return _lifespan(key)


@functools.cache
def _lifespan(key: str | None) -> Builtin:
    label = "Lifespan()" if key is None else f"Lifespan({key!r})"

    def lifespan(ctx: Context) -> Any:
        state = ctx.lifespan
        if state is None:
            raise LookupError(
                f"{label}: the server's lifespan yielded nothing, or it has none (Server(lifespan=...) runs while "
                "the server serves; toolkit.testing.Client and toolkit.Client(server) run it too)"
            )
        if key is None:
            return state
        if isinstance(state, Mapping):
            if key in state:
                return state[key]
            held = ", ".join(map(repr, state)) or "nothing"
        elif hasattr(state, key):
            return getattr(state, key)
        else:
            held = (
                ", ".join(repr(name) for name in vars(state) if not name.startswith("_"))
                if hasattr(state, "__dict__")
                else type(state).__name__
            )
        raise LookupError(f"{label}: the lifespan's state has no {key!r} (it holds {held})")

    lifespan.__qualname__ = label
    return Builtin(lifespan, label, "the lifespan's state")


def _server_store(ctx: Context) -> Store:
    return serving_store(ctx.server)


ServerStore = Annotated[Store, Builtin(_server_store, "ServerStore", "the server's store")]
"""The store the server keeps its state in (``Server(store=...)``; without one, one in this process's memory)."""
