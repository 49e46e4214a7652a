"""Who hears about changes: legacy sessions and modern ``subscriptions/listen`` streams.

Legacy sessions get ``notifications/*/list_changed`` and ``notifications/resources/updated``
on their notify channel (stdout, or the HTTP GET stream) once initialized. Modern clients
open a ``subscriptions/listen`` request and receive, on its stream, only what its filter
asked for, each message tagged with the subscription's id.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from typing import Any

from ._session import Session
from ._types import SUBSCRIPTION_ID_KEY, RequestId, Send

logger = logging.getLogger("toolkit")


class Listener:
    """An open ``subscriptions/listen`` request (modern era)."""

    # A plain class: a dataclass compiles its generated methods when this module is imported.
    __slots__ = ("closed", "filter", "send", "subscription_id")

    def __init__(
        self, subscription_id: RequestId, filter: dict[str, Any], send: Send, closed: asyncio.Event | None = None
    ) -> None:
        self.subscription_id = subscription_id
        self.filter = filter
        self.send = send
        self.closed = asyncio.Event() if closed is None else closed

    @property
    def tag(self) -> dict[str, Any]:
        return {SUBSCRIPTION_ID_KEY: self.subscription_id}


class Subscribers:
    """The sessions and listeners open now, and the deliveries that reach them."""

    def __init__(self) -> None:
        self._sessions: set[Session] = set()
        self._listeners: set[Listener] = set()

    def add_session(self, session: Session) -> None:
        self._sessions.add(session)

    def forget(self, session: Session) -> None:
        session.close()
        self._sessions.discard(session)

    async def listen(self, listener: Listener) -> None:
        """Keep ``listener`` subscribed until ``close_listeners`` (shutdown) or cancellation."""
        self._listeners.add(listener)
        try:
            await listener.closed.wait()
        finally:
            self._listeners.discard(listener)

    def close_listeners(self) -> None:
        """End every open subscription gracefully (each gets its result response)."""
        for listener in list(self._listeners):
            listener.closed.set()

    def list_changed(self, kind: str) -> list[Awaitable[None]]:
        """Deliveries telling legacy sessions and modern listeners that a list changed.

        The recipients are the sessions and subscriptions open now, when the change happens;
        the caller awaits (or schedules) the returned deliveries.
        """
        method = f"notifications/{kind}/list_changed"
        flag = f"{kind}ListChanged"
        deliveries: list[Awaitable[None]] = []
        for session in list(self._sessions):
            if session.closed:
                self._sessions.discard(session)
            elif session.ready and session.notify is not None:
                deliveries.append(_quietly(session.notify({"jsonrpc": "2.0", "method": method})))
        for listener in list(self._listeners):
            if listener.filter.get(flag):
                message = {"jsonrpc": "2.0", "method": method, "params": {"_meta": listener.tag}}
                deliveries.append(_quietly(listener.send(message)))
        return deliveries

    async def resource_updated(self, uri: str) -> None:
        """Tell the subscribers of ``uri`` that it changed."""
        method = "notifications/resources/updated"
        for session in list(self._sessions):
            if session.ready and session.notify is not None and uri in session.subscriptions:
                await _quietly(session.notify({"jsonrpc": "2.0", "method": method, "params": {"uri": uri}}))
        for listener in list(self._listeners):
            if uri in listener.filter.get("resourceSubscriptions", ()):
                params = {"_meta": listener.tag, "uri": uri}
                await _quietly(listener.send({"jsonrpc": "2.0", "method": method, "params": params}))


async def _quietly(sending: Awaitable[None]) -> None:
    try:
        await sending
    except Exception:  # a closed stream must not stop the others from hearing about it
        logger.debug("could not deliver a notification", exc_info=True)
