"""The sessions a proxy holds to its upstream server: one shared, and one per caller where it must.

- The shared session is opened when the proxying server starts, and reopened when it is lost
  (the child exited, the server went away): on the next request, at once; after a failed attempt,
  not before a backoff that doubles up to ``MAX_BACKOFF`` seconds, so an upstream that is down
  costs each caller one quick, clear error rather than a hang.
- A legacy upstream is stateful (its log level, roots, subscriptions and questions belong to a
  session), so with ``sessions="auto"`` each legacy downstream session with an id (Streamable
  HTTP) gets a session of its own upstream, opened on its first request and closed when idle
  for ``idle_timeout`` seconds (or when ``max_sessions`` are open and it is the least recently
  used). A modern upstream is stateless: everyone shares one session.
- Upstream credentials are the ``toolkit.Client``'s own (``headers=``, ``auth=``): the caller's
  token is never forwarded, unless ``forward_token=True`` (the confused-deputy rule).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any, Final, Literal

from .._client.client import Client
from .._client.questions import QUESTIONS, Handler
from .._client.session import ClientSession
from .._client.targets import connected, describe
from .._errors import ToolkitError

logger = logging.getLogger("toolkit.proxy")

Sessions = Literal["auto", "shared", "per_session"]
MAX_BACKOFF: Final = 30.0
FIRST_BACKOFF: Final = 0.5


class UpstreamUnavailable(ToolkitError, ConnectionError):
    """The upstream server cannot be reached now (it refused, exited, or is backing off)."""


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
        self._lock = asyncio.Lock()
        self._backoff = 0.0
        self._retry_at = 0.0
        self._last_error = ""
        self._callers: dict[str, tuple[ClientSession, contextlib.AsyncExitStack, float]] = {}
        self._stopping = False

    # --- opening ----------------------------------------------------------------------------------

    async def _open(
        self, extra_headers: Mapping[str, str] | None = None
    ) -> tuple[ClientSession, contextlib.AsyncExitStack]:
        client = self.client
        stack = contextlib.AsyncExitStack()
        headers = {**(client.headers or {}), **(extra_headers or {})} or None
        try:
            transport = await stack.enter_async_context(
                connected(
                    client.target,
                    headers=headers,
                    auth=client.auth,
                    env=client.env,
                    cwd=client.cwd,
                    http_options=client.http_options,
                )
            )
            session = ClientSession(
                transport,
                protocol_version=client.protocol_version,
                capabilities={name: {} for name in QUESTIONS},
                client_info=client.client_info,
                log_level="debug",
                handlers=self.handlers,
                on_message=self.on_message,
                timeout=client.timeout,
                probe_timeout=client.probe_timeout,
            )
            stack.push_async_callback(session.close)
            await session.open()
            if not session.modern and (session.server_capabilities or {}).get("logging") is not None:
                # Every message: the downstream session's own level filters them (ctx.log).
                await session.result("logging/setLevel", {"level": "debug"})
        except BaseException:
            await stack.aclose()
            raise
        return session, stack

    async def start(self) -> ClientSession:
        """Open the shared session (the proxying server is starting); failing here fails the start."""
        async with self._lock:
            self._stopping = False
            self._backoff, self._retry_at = 0.0, 0.0
            self._shared, self._shared_stack = await self._open()
        self.on_connected(self._shared)
        return self._shared

    async def shared(self) -> ClientSession:
        """The shared session, reopened if it was lost (at most once per backoff period)."""
        session = self._shared
        if session is not None and session.closed_reason is None:
            return session
        async with self._lock:
            session = self._shared
            if session is not None and session.closed_reason is None:
                return session
            if self._stopping:
                raise UpstreamUnavailable(f"the upstream server {self.what} is stopping")
            now = time.monotonic()
            if now < self._retry_at:
                raise UpstreamUnavailable(
                    f"the upstream server {self.what} is unavailable ({self._last_error}); "
                    f"retrying in {self._retry_at - now:.1f} s"
                )
            if self._shared_stack is not None:
                stack, self._shared_stack, self._shared = self._shared_stack, None, None
                with contextlib.suppress(Exception):
                    await stack.aclose()
            try:
                self._shared, self._shared_stack = await self._open()
            except (OSError, TimeoutError, ToolkitError) as exc:
                self._backoff = min(MAX_BACKOFF, self._backoff * 2 if self._backoff else FIRST_BACKOFF)
                self._retry_at = time.monotonic() + self._backoff
                self._last_error = str(exc) or type(exc).__name__
                logger.warning("the upstream server %s is unavailable: %s", self.what, self._last_error)
                raise UpstreamUnavailable(
                    f"the upstream server {self.what} is unavailable: {self._last_error}"
                ) from None
            self._backoff = 0.0
            logger.info("reconnected to the upstream server %s", self.what)
        self.on_connected(self._shared)
        return self._shared

    async def session_for(self, session_id: str | None, token: str | None) -> ClientSession:
        """The session a caller's request goes through (its legacy session id; its bearer token)."""
        shared = await self.shared()
        if self.forward_token and token is not None:
            return await self._own(f"token:{token}", {"Authorization": f"Bearer {token}"})
        if session_id is None or self.sessions == "shared" or (self.sessions == "auto" and shared.modern):
            return shared
        return await self._own(f"session:{session_id}", None)

    async def _own(self, key: str, headers: Mapping[str, str] | None) -> ClientSession:
        now = time.monotonic()
        await self._sweep(now)
        held = self._callers.get(key)
        if held is not None and held[0].closed_reason is None:
            self._callers[key] = (held[0], held[1], now)
            return held[0]
        if held is not None:
            del self._callers[key]
            await _close_quietly(held[1])
        try:
            session, stack = await self._open(headers)
        except (OSError, TimeoutError, ToolkitError) as exc:
            raise UpstreamUnavailable(f"the upstream server {self.what} is unavailable: {exc}") from None
        self._callers[key] = (session, stack, now)
        return session

    async def _sweep(self, now: float) -> None:
        """Close the callers' sessions idle too long, and the least recently used beyond the limit."""
        idle = [key for key, (_, _, used) in self._callers.items() if now - used > self.idle_timeout]
        by_use = sorted(self._callers, key=lambda key: self._callers[key][2])
        idle += by_use[: max(0, len(self._callers) - len(idle) - self.max_sessions + 1)]
        for key in dict.fromkeys(idle):
            _, stack, _ = self._callers.pop(key)
            await _close_quietly(stack)

    async def stop(self) -> None:
        """Close every session (the proxying server is stopping)."""
        self._stopping = True
        stacks = [stack for _, stack, _ in self._callers.values()]
        self._callers.clear()
        if self._shared_stack is not None:
            stacks.append(self._shared_stack)
        self._shared, self._shared_stack = None, None
        for stack in stacks:
            await _close_quietly(stack)


async def _close_quietly(stack: contextlib.AsyncExitStack) -> None:
    try:
        await stack.aclose()
    except Exception as exc:  # a session already broken: nothing more to do with it
        logger.debug("closing an upstream session: %s", exc)
