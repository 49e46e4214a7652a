"""Who hears about changes: legacy sessions and modern ``subscriptions/listen`` streams.

Legacy sessions get ``notifications/*/list_changed`` and ``notifications/resources/updated``
on their notify channel (stdout, or the HTTP GET stream) once initialized. Modern clients
open a ``subscriptions/listen`` request and receive, on its stream, only what its filter
asked for, each message tagged with the subscription's id.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from ._errors import StoreUnavailable
from ._session import Session
from ._store.base import Store
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


class Announcer:
    """Tells the listeners about changes: those connected here, or, with a shared store, every replica's.

    With a store, a change is published on its bus and each replica (this one too) delivers it
    to its own listeners when the message comes back (``on_broadcast``).
    """

    def __init__(self, subscribers: Subscribers) -> None:
        self.subscribers = subscribers
        self.bus: Store | None = None
        """The started shared store that carries change notifications to every replica, if any."""
        self.loop: asyncio.AbstractEventLoop | None = None
        """The loop serving clients: changes made from worker threads are announced there."""
        self._background: set[asyncio.Task[Any]] = set()

    def changed(self, kind: str) -> None:
        """The list of ``kind`` changed (from the event loop, a worker thread, or at import time)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            # Not on an event loop: at import time (nobody to tell), or in a sync tool's worker
            # thread (hand the notification to the loop that serves the clients).
            if self.loop is not None and not self.loop.is_closed():
                self.loop.call_soon_threadsafe(self._announce, kind)
            return
        self._announce(kind)

    def _announce(self, kind: str) -> None:
        if self.bus is not None:
            self._spawn(self._broadcast({"t": "changed", "k": kind}, lambda: self._deliver_changed(kind)))
        else:
            self._deliver_changed(kind)

    def on_broadcast(self, message: dict[str, Any]) -> None:
        """A change some replica (this one included) published: tell the listeners connected here."""
        kind = message.get("t")
        if kind == "changed" and message.get("k") in ("tools", "resources", "prompts"):
            self._deliver_changed(message["k"])
        elif kind == "updated" and isinstance(message.get("u"), str):
            self._spawn(self.subscribers.resource_updated(message["u"]))

    def _deliver_changed(self, kind: str) -> None:
        deliveries = self.subscribers.list_changed(kind)
        if deliveries:
            self._spawn(_deliver(deliveries))

    def _spawn(self, work: Awaitable[None]) -> None:
        task = asyncio.get_running_loop().create_task(_run(work))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _broadcast(self, message: dict[str, Any], locally: Callable[[], Any]) -> None:
        """Publish to every replica; if the store is out of reach, at least tell the listeners here."""
        assert self.bus is not None
        try:
            await self.bus.publish(message)
        except StoreUnavailable as exc:
            logger.warning("%s: change announced to this replica only", exc.message)
            result = locally()
            if asyncio.iscoroutine(result):
                await result

    async def resource_updated(self, uri: str) -> None:
        """Tell the subscribers of ``uri`` that it changed (on every replica, with a shared store)."""
        if self.bus is not None:
            await self._broadcast({"t": "updated", "u": uri}, lambda: self.subscribers.resource_updated(uri))
        else:
            await self.subscribers.resource_updated(uri)


async def _deliver(deliveries: list[Awaitable[None]]) -> None:
    for delivery in deliveries:
        await delivery


async def _run(work: Awaitable[None]) -> None:
    await work
