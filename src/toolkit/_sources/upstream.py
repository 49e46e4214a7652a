"""The sessions a proxy holds to its upstream server: one shared, and one per caller where it must.

- The shared session is opened when the proxying server starts, and reopened when it is lost
  (the child exited, the server went away): on the next request, at once; after a failed attempt,
  not before a backoff that doubles up to ``MAX_BACKOFF`` seconds, so an upstream that is down
  costs each caller one quick, clear error rather than a hang, and a burst of calls starts one
  upstream process, not one each.
- Each session is opened by one task, whoever asked first; every caller that needs it meanwhile
  waits for that task (shielded: a caller giving up does not abort it for the others), and
  ``stop`` cancels it, so no session opened while the proxy stops outlives it (no orphan child).
- A legacy upstream is stateful (its log level, roots, subscriptions and questions belong to a
  session), so with ``sessions="auto"`` each legacy downstream session with an id (Streamable
  HTTP) gets a session of its own upstream, opened on its first request and closed when that
  session ends (``end_caller``: a ``DELETE``, or its expiry; one still being opened is closed once
  open), when idle for ``idle_timeout`` seconds, or when ``max_sessions`` are open and it is the
  least recently used. A modern upstream is stateless: everyone shares one session.
- An upstream that answers neither a request (its timeout) nor then a ``ping`` (as long again) is
  taken as hung: its session is aborted (a stdio child is stopped) and opened again, as when the
  connection is lost; what waited on it fails at once, saying why. One that answers the ping is
  only slow, and kept.
- Upstream credentials are the ``toolkit.Client``'s own (``headers=``, ``auth=``): the caller's
  token is never forwarded, unless ``forward_token=True`` (the confused-deputy rule).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Coroutine, Mapping
from typing import Any, Final, Literal

from .._client.client import Client
from .._client.questions import QUESTIONS, Handler
from .._client.session import ClientSession
from .._client.targets import describe
from .._errors import ToolkitError

logger = logging.getLogger("toolkit.proxy")

Sessions = Literal["auto", "shared", "per_session"]
MAX_BACKOFF: Final = 30.0
FIRST_BACKOFF: Final = 0.5


class UpstreamUnavailable(ToolkitError, ConnectionError):
    """The upstream server cannot be reached now (it refused, exited, or is backing off)."""


SHARED: Final = ""
"""The key of the shared session among the sessions being opened."""

Opened = tuple[ClientSession, contextlib.AsyncExitStack]


class _Held:
    """A caller's own session: what closes it, and when it was last used."""

    __slots__ = ("session", "stack", "used")

    def __init__(self, session: ClientSession, stack: contextlib.AsyncExitStack, used: float) -> None:
        self.session = session
        self.stack = stack
        self.used = used


class Upstream:
    """The connection settings of one upstream (a ``toolkit.Client`` not yet entered) and its sessions.

    ``handlers``: the session-wide answers to the upstream's questions that no call can be
    found for; ``on_message``: every notification no call took (list changes, resource updates).
    """

    def __init__(
        self,
        client: Client,
        *,
        handlers: Mapping[str, Handler],
        on_message: Callable[[dict[str, Any]], None],
        on_connected: Callable[[ClientSession], None],
        sessions: Sessions = "auto",
        idle_timeout: float = 300.0,
        max_sessions: int = 100,
        forward_token: bool = False,
    ) -> None:
        if sessions not in ("auto", "shared", "per_session"):
            raise ValueError(f"sessions={sessions!r}: use 'auto', 'shared' or 'per_session'")
        self.client = client
        self.what = describe(client.target)
        self.handlers = handlers
        self.on_message = on_message
        self.on_connected = on_connected
        self.sessions = sessions
        self.idle_timeout = idle_timeout
        self.max_sessions = max_sessions
        self.forward_token = forward_token
        self._shared: ClientSession | None = None
        self._shared_stack: contextlib.AsyncExitStack | None = None
        self._backoff = 0.0
        self._retry_at = 0.0
        self._last_error = ""
        self._callers: dict[str, _Held] = {}
        self._opening: dict[str, asyncio.Task[ClientSession]] = {}
        self._closing: set[asyncio.Task[None]] = set()
        """Callers' sessions being closed because their downstream session ended (``stop`` waits for them)."""
        self._probing: dict[ClientSession, asyncio.Task[None]] = {}
        """Sessions whose upstream let a request time out, being pinged (``timed_out``)."""
        self._ended: set[str] = set()
        """Callers' sessions being opened whose downstream session ended meanwhile: closed once open."""
        self._stopping = False

    # --- opening ----------------------------------------------------------------------------------

    async def _open(self, extra_headers: Mapping[str, str] | None = None) -> Opened:
        stack = contextlib.AsyncExitStack()
        try:
            session = await self.client.open_session(
                stack,
                headers=extra_headers,
                capabilities={name: {} for name in QUESTIONS},
                handlers=self.handlers,
                on_message=self.on_message,
            )
            # A 2026-07-28 upstream is asked per request, at the caller's level (bridge.relayed). A
            # legacy session's level is the session's: every message, and each caller's level
            # filters them (ctx.log); asked only of a server that declares logging.
            if not session.modern and (session.server_capabilities or {}).get("logging") is not None:
                await session.result("logging/setLevel", {"level": "debug"})
        except BaseException:
            await stack.aclose()
            raise
        return session, stack

    def _opened_by_one(
        self, key: str, opening: Callable[[], Coroutine[Any, Any, ClientSession]]
    ) -> asyncio.Task[ClientSession]:
        """The task opening the session ``key``: the one under way, or a new one."""
        task = self._opening.get(key)
        if task is None:
            task = asyncio.get_running_loop().create_task(opening())
            self._opening[key] = task
            task.add_done_callback(lambda done: self._opened(key, done))
        return task

    def _opened(self, key: str, task: asyncio.Task[ClientSession]) -> None:
        if self._opening.get(key) is task:
            del self._opening[key]
        if not task.cancelled():
            task.exception()  # retrieved: every caller that waited for it has it already

    async def start(self) -> ClientSession:
        """Open the shared session (the proxying server is starting); failing here fails the start."""
        self._stopping = False
        self._backoff, self._retry_at = 0.0, 0.0
        session, stack = await self._open()
        if self._stopping:  # stopped while it was opening
            await _close_quietly(stack)
            raise UpstreamUnavailable("the proxy stopped while it connected")
        self._shared, self._shared_stack = session, stack
        self.on_connected(session)
        return session

    async def join(self) -> ClientSession:
        """``start`` again, for a server that could not be reached when the proxy started: by one task,
        as every opening of the shared session (a request's reopening meanwhile is waited for, not
        doubled), or the session a request opened meanwhile."""
        shared = self._shared
        if shared is not None and shared.closed_reason is None:
            return shared
        return await self._opened_by_one(SHARED, self.start)

    async def shared(self) -> ClientSession:
        """The shared session, reopened if it was lost (at most once per backoff period)."""
        session = self._shared
        if session is not None and session.closed_reason is None:
            return session
        if self._stopping:
            raise UpstreamUnavailable("the proxy is stopping")
        if SHARED not in self._opening:
            wait = self._retry_at - time.monotonic()
            if wait > 0:
                raise UpstreamUnavailable(
                    f"not tried again for another {wait:.1f} s; the last attempt failed: {self._last_error}"
                )
        return await asyncio.shield(self._opened_by_one(SHARED, self._reopen))

    async def _reopen(self) -> ClientSession:
        stack, self._shared_stack, self._shared = self._shared_stack, None, None
        if stack is not None:
            await _close_quietly(stack)  # the lost session: its child reaped before the next starts
        try:
            session, stack = await self._open()
        except (OSError, TimeoutError, ToolkitError) as exc:
            self._backoff = min(MAX_BACKOFF, self._backoff * 2 if self._backoff else FIRST_BACKOFF)
            self._retry_at = time.monotonic() + self._backoff
            self._last_error = str(exc) or type(exc).__name__
            logger.warning(
                "the upstream server %s is unavailable (next attempt in %g s): %s", self.what, self._backoff, exc
            )
            raise UpstreamUnavailable(self._last_error) from None
        self._shared, self._shared_stack = session, stack
        self._backoff, self._retry_at = 0.0, 0.0
        logger.info("reconnected to the upstream server %s", self.what)
        self.on_connected(session)
        return session

    def open_session_for(self, session_id: str | None, token: str | None) -> ClientSession | None:
        """``session_for``'s answer when it is the shared session, open already: nothing to wait for
        (``None``: ask ``session_for``)."""
        shared = self._shared
        if shared is not None and shared.closed_reason is None and self._shares(shared, session_id, token):
            return shared
        return None

    async def session_for(self, session_id: str | None, token: str | None) -> ClientSession:
        """The session a caller's request goes through (its legacy session id; its bearer token)."""
        shared = await self.shared()
        if self._shares(shared, session_id, token):
            return shared
        if self.forward_token and token is not None:
            return await self._own(f"token:{token}", {"Authorization": f"Bearer {token}"})
        return await self._own(_session_key(session_id), None)

    def end_caller(self, session_id: str) -> None:
        """The downstream session ``session_id`` ended: close the upstream session it had of its own.

        Its requests were cancelled with it; the upstream is told the session is over (a legacy
        HTTP upstream gets its ``DELETE``, a child process over stdio exits) rather than left to
        the idle sweep.
        """
        key = _session_key(session_id)
        if key in self._opening:  # its first request is opening it: closed as soon as it is open
            self._ended.add(key)
        held = self._callers.pop(key, None)
        if held is not None:
            task = asyncio.ensure_future(_close_quietly(held.stack))
            self._closing.add(task)
            task.add_done_callback(self._closing.discard)

    # --- a hung upstream ---------------------------------------------------------------------------

    def timed_out(self, session: ClientSession) -> None:
        """A request through ``session`` got no answer in time: ping the upstream, once at a time."""
        if self._stopping or session.closed_reason is not None or session in self._probing:
            return
        task = asyncio.get_running_loop().create_task(self._probe(session))
        self._probing[session] = task
        task.add_done_callback(lambda _: self._probing.pop(session, None))

    async def _probe(self, session: ClientSession) -> None:
        """A ``ping`` within the session's timeout; unanswered, the upstream is hung: start it again."""
        try:
            # Bounded whole: over a pipe the child no longer reads, the ping's own write waits for room.
            async with asyncio.timeout(session.timeout):
                await session.request("ping")
            return  # answered (even with an error): there, only slow
        except TimeoutError:
            pass
        except (ConnectionError, ToolkitError):
            return  # lost meanwhile: reopened as any lost session is
        if self._stopping or session.closed_reason is not None:
            return
        reason = (
            f"the upstream server {self.what} answered neither a request nor a ping within "
            f"{session.timeout:g} s; it was taken as hung and is being started again"
        )
        logger.warning("%s", reason)
        await session.abort(reason)
        if session is self._shared:
            self._opened_by_one(SHARED, self._reopen)  # now, not at the next request: closes the hung one first
            return
        for key, held in list(self._callers.items()):
            if held.session is session:
                del self._callers[key]
                await _close_quietly(held.stack)

    def _shares(self, shared: ClientSession, session_id: str | None, token: str | None) -> bool:
        """Whether the caller's request goes through the shared session (else one of its own)."""
        if self.forward_token and token is not None:
            return False
        return session_id is None or self.sessions == "shared" or (self.sessions == "auto" and shared.modern)

    async def _own(self, key: str, headers: Mapping[str, str] | None) -> ClientSession:
        held = self._callers.get(key)
        if held is not None and held.session.closed_reason is None:
            held.used = time.monotonic()
            return held.session
        if self._stopping:
            raise UpstreamUnavailable("the proxy is stopping")
        return await asyncio.shield(self._opened_by_one(key, lambda: self._open_own(key, headers)))

    async def _open_own(self, key: str, headers: Mapping[str, str] | None) -> ClientSession:
        await self._sweep(time.monotonic())
        held = self._callers.pop(key, None)
        if held is not None:
            await _close_quietly(held.stack)
        try:
            session, stack = await self._open(headers)
        except (OSError, TimeoutError, ToolkitError) as exc:
            raise UpstreamUnavailable(str(exc) or type(exc).__name__) from None
        finally:
            ended = key in self._ended
            self._ended.discard(key)
        if ended:  # the caller's session ended while this one opened: nobody is left to use it
            await _close_quietly(stack)
            raise UpstreamUnavailable("the caller's session ended while its upstream session was opening")
        self._callers[key] = _Held(session, stack, time.monotonic())
        return session

    async def _sweep(self, now: float) -> None:
        """Close the callers' sessions idle too long, and the least recently used beyond the limit
        (never one with a request in flight: its caller would lose the answer)."""
        idle = [
            key
            for key, held in self._callers.items()
            if now - held.used > self.idle_timeout and not held.session.in_flight
        ]
        by_use = sorted(
            (key for key, held in self._callers.items() if not held.session.in_flight),
            key=lambda key: self._callers[key].used,
        )
        idle += by_use[: max(0, len(self._callers) - len(idle) - self.max_sessions + 1)]
        for key in dict.fromkeys(idle):
            held = self._callers.pop(key, None)  # None: another opening's sweep took it meanwhile
            if held is not None:
                await _close_quietly(held.stack)

    async def stop(self) -> None:
        """Close every session, and those being opened (the proxying server is stopping)."""
        self._stopping = True
        probes = list(self._probing.values())
        for probe in probes:
            probe.cancel()
        opening = list(self._opening.values())
        for task in opening:
            task.cancel()
        await asyncio.gather(*probes, *opening, return_exceptions=True)
        stacks = [held.stack for held in self._callers.values()]
        self._callers.clear()
        if self._shared_stack is not None:
            stacks.append(self._shared_stack)
        self._shared, self._shared_stack = None, None
        await asyncio.gather(*(_close_quietly(stack) for stack in stacks), *self._closing)


def _session_key(session_id: str | None) -> str:
    """The key of a downstream legacy session's own upstream session among the callers'."""
    return f"session:{session_id}"


async def _close_quietly(stack: contextlib.AsyncExitStack) -> None:
    try:
        await stack.aclose()
    except Exception as exc:  # a session already broken: nothing more to do with it
        logger.debug("closing an upstream session: %s", exc)
