"""The state built-ins: ``UserState``, ``LocalUserState``, ``SessionState``, ``RequestState``.

``async def remember(note: str, notes: UserState) -> int``: each is a ``Builtin`` dependency on
``ctx.state`` (``_state``), typed ``State``, run on the event loop, like those of ``_providers``.
``UserState`` has nothing to give a request without a subject (the parameter gets ``None`` if its
type admits it, the call is refused otherwise); ``SessionState`` has nothing to give a
2026-07-28 call that passed no handle as its ``session`` argument. Imported on first use.
"""

from __future__ import annotations

from typing import Annotated, Any

from ._context import Context
from ._depends import MISSING, Builtin
from ._state import SESSION_ARGUMENT, State


def _user_state(ctx: Context) -> Any:
    token = ctx.access_token
    return MISSING if token is None or token.subject is None else ctx.state.user


UserState = Annotated[
    State,
    Builtin(
        _user_state,
        "UserState",
        "the caller's subject (the access token's sub) to keep its state under, and the request carried none "
        "(stdio, or a server without auth=); LocalUserState shares one state among callers without one",
    ),
]
"""The caller's state (``ctx.state.user``): the values kept for the access token's subject."""


def _local_user_state(ctx: Context) -> State:
    return ctx.state.local_user


LocalUserState = Annotated[State, Builtin(_local_user_state, "LocalUserState", "the local user's state")]
"""The caller's state, or the one shared by every caller without a subject (``ctx.state.local_user``)."""


async def _session_state(ctx: Context) -> Any:
    scopes = ctx.state
    handle = scopes.session_argument
    if handle is not None:
        return await scopes.session(handle)
    return await scopes.session() if scopes.in_session else MISSING


SessionState = Annotated[
    State,
    Builtin(
        _session_state,
        "SessionState",
        f"a session, and the call has none: on 2026-07-28 pass the handle ctx.state.new_session() gave as the "
        f"{SESSION_ARGUMENT!r} argument (declare it: {SESSION_ARGUMENT}: str)",
    ),
]
"""The session's state: the handle in the call's ``session`` argument, else the legacy session's."""


def _request_state(ctx: Context) -> State:
    return ctx.state.request


RequestState = Annotated[State, Builtin(_request_state, "RequestState", "the request's state")]
"""This request's state (``ctx.state.request``), shared by its dependencies and the function."""
