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

from pydantic_core import to_json

from ._errors import StoreUnavailable
from ._session import Session
from ._store.base import Store
from ._types import SUBSCRIPTION_ID_KEY, RequestId, Send

logger = logging.getLogger("toolkit")

_ID_KEY = to_json(SUBSCRIPTION_ID_KEY)


class Listener:
    """An open ``subscriptions/listen`` request (modern era)."""

    # A plain class: a dataclass compiles its generated methods when this module is imported.
    __slots__ = ("_ended", "closed", "filter", "send", "subscription_id", "wire_id")

    def __init__(self, subscription_id: RequestId, filter: dict[str, Any], send: Send) -> None:
        self.subscription_id = subscription_id
        self.filter = filter
        self.send = send
        self.wire_id = to_json(subscription_id)
        """The subscription id as JSON, spliced into each notification (``_Tagged``)."""
        self.closed = False
        """Set by ``close``: the subscription ends (with its result response)."""
        self._ended: asyncio.Future[None] | None = None
        """What ``Subscribers.listen`` awaits (a future, not an ``asyncio.Event``: a thousand listeners
        are a thousand of them, and an event's waiter deque is 600 bytes)."""

    @property
    def tag(self) -> dict[str, Any]:
        return {SUBSCRIPTION_ID_KEY: self.subscription_id}

    def close(self) -> None:
        self.closed = True
        if self._ended is not None and not self._ended.done():
            self._ended.set_result(None)

    async def wait_closed(self) -> None:
        if not self.closed:
            self._ended = asyncio.get_running_loop().create_future()
            try:
                await self._ended
            finally:
                self._ended = None


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
            await listener.wait_closed()
        finally:
            self._listeners.discard(listener)

    def close_listeners(self) -> None:
        """End every open subscription gracefully (each gets its result response)."""
        for listener in list(self._listeners):
            listener.close()

    def list_changed(self, kind: str) -> list[Awaitable[None]]:
        """Deliveries telling legacy sessions and modern listeners that a list changed.

        The recipients are the sessions and subscriptions open now, when the change happens;
        the caller awaits (or schedules) the returned deliveries.
        """
        method = f"notifications/{kind}/list_changed"
        flag = f"{kind}ListChanged"
        deliveries: list[Awaitable[None]] = []
        shared = _encoded({"jsonrpc": "2.0", "method": method})
        for session in list(self._sessions):
            if session.closed:
                self._sessions.discard(session)
            elif session.ready and session.notify is not None:
                deliveries.append(_quietly(session.notify(shared)))
        tagged = _Tagged(method, {})
        for listener in list(self._listeners):
            if listener.filter.get(flag):
                deliveries.append(_quietly(listener.send(tagged.message(listener))))
        return deliveries

    async def resource_updated(self, uri: str) -> None:
        """Tell the subscribers of ``uri`` that it changed.

        The fan-out's cost is per subscriber, so what can be made once is: one message for every
        legacy session, and for the listeners one encoding into which each one's id is spliced.
        A failed delivery (a stream just closed) must not keep the others from hearing of it.
        """
        method = "notifications/resources/updated"
        shared: dict[str, Any] | None = None
        for session in list(self._sessions):
            if session.ready and session.notify is not None and uri in session.subscriptions:
                if shared is None:
                    shared = _encoded({"jsonrpc": "2.0", "method": method, "params": {"uri": uri}})
                try:
                    await session.notify(shared)
                except Exception:
                    logger.debug("could not deliver a notification", exc_info=True)
        tagged: _Tagged | None = None
        for listener in list(self._listeners):
            if uri in listener.filter.get("resourceSubscriptions", ()):
                if tagged is None:
                    tagged = _Tagged(method, {"uri": uri})
                try:
                    await listener.send(tagged.message(listener))
                except Exception:
                    logger.debug("could not deliver a notification", exc_info=True)


class Encoded(dict[str, Any]):
    """A message together with its JSON (``wire``), made without encoding the message again.

    A transport that knows the attribute (the HTTP streams) sends ``wire`` as it is; any other
    reads the message as the plain dict it also is.
    """

    __slots__ = ("wire",)
    wire: bytes


def _encoded(message: dict[str, Any]) -> Encoded:
    """``message`` and its JSON, for every legacy session alike (one encoding for a fan-out)."""
    shared = Encoded(message)
    shared.wire = to_json(message, inf_nan_mode="null")
    return shared


class _Tagged:
    """One notification for many listeners, each copy tagged with its subscription's id: the JSON
    is made once, and each listener's id (encoded once, ``Listener.wire_id``) spliced into it."""

    __slots__ = ("head", "method", "params", "tail")

    def __init__(self, method: str, params: dict[str, Any]) -> None:
        self.method = method
        self.params = params
        self.head = b'{"jsonrpc":"2.0","method":' + to_json(method) + b',"params":{"_meta":{' + _ID_KEY + b":"
        rest = to_json(params, inf_nan_mode="null")[1:-1]
        self.tail = b"}," + rest + b"}}" if rest else b"}}}"

    def message(self, listener: Listener) -> Encoded:
        message = Encoded(jsonrpc="2.0", method=self.method, params={"_meta": listener.tag, **self.params})
        message.wire = self.head + listener.wire_id + self.tail
        return message


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
