"""``client.listen(...)``: the server's change notifications as one async iterator, in either era.

2026-07-28 (basic/patterns/subscriptions): a ``subscriptions/listen`` request stays open and
its notifications carry its id; the server acknowledges first
(``notifications/subscriptions/acknowledged``, with what it agreed to), and ends it with a
response; the client ends it by cancelling the request (closing its stream on HTTP,
``notifications/cancelled`` on stdio). The legacy era has the same notifications over the
session: list changes come unasked, resource updates after ``resources/subscribe`` (and stop
after ``resources/unsubscribe``). Either way the user reads one stream of notifications.
"""

from __future__ import annotations

import asyncio
from typing import Any, Final

ACKNOWLEDGED: Final = "notifications/subscriptions/acknowledged"

FILTER_FIELDS: Final = {
    "toolsListChanged": "notifications/tools/list_changed",
    "promptsListChanged": "notifications/prompts/list_changed",
    "resourcesListChanged": "notifications/resources/list_changed",
}
"""The listen filter's boolean fields and the notification each one asks for."""

RESOURCE_UPDATED: Final = "notifications/resources/updated"

_END: Final = object()


class Subscription:
    """The notifications a ``listen`` asked for, in order: ``async for message in subscription``.

    ``acknowledged`` is the filter the server agreed to (2026-07-28; the legacy era agrees to
    what was asked). Iteration ends when the server ends the subscription or ``close()`` is
    called; leaving ``async with`` closes it.
    """

    def __init__(self, requested: dict[str, Any]) -> None:
        self.requested = requested
        self.acknowledged: dict[str, Any] | None = None
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._ready = asyncio.get_running_loop().create_future()
        self._closer: Any = None
        self.ended = False

    # --- fed by the client ------------------------------------------------------------------------

    def deliver(self, message: dict[str, Any]) -> None:
        """One notification of this subscription (the acknowledgement settles ``acknowledged``)."""
        if message.get("method") == ACKNOWLEDGED:
            params = message.get("params") or {}
            self._acknowledge(params.get("notifications") if isinstance(params, dict) else None)
            return
        self._queue.put_nowait(message)

    def wants(self, message: dict[str, Any]) -> bool:
        """Whether a legacy-era notification is one this subscription asked for."""
        method = message.get("method")
        if method == RESOURCE_UPDATED:
            params = message.get("params")
            uri = params.get("uri") if isinstance(params, dict) else None
            return uri in (self.requested.get("resourceSubscriptions") or ())
        return any(self.requested.get(field) and method == wanted for field, wanted in FILTER_FIELDS.items())

    def _acknowledge(self, agreed: Any) -> None:
        self.acknowledged = agreed if isinstance(agreed, dict) else {}
        if not self._ready.done():
            self._ready.set_result(None)

    def end(self, error: BaseException | None = None) -> None:
        """The subscription is over (the server's response, the connection, or ``close``)."""
        if self.ended:
            return
        self.ended = True
        if not self._ready.done():
            if error is None:
                self._ready.set_result(None)
            else:
                self._ready.set_exception(error)
                self._ready.exception()  # read: an unacknowledged failure is raised by wait_acknowledged
        self._queue.put_nowait(_END if error is None else error)

    # --- read by the user -------------------------------------------------------------------------

    async def wait_acknowledged(self) -> dict[str, Any]:
        """The filter the server agreed to, once it has said so."""
        await self._ready
        return self.acknowledged or {}

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> dict[str, Any]:
        item = await self._queue.get()
        if item is _END:
            self._queue.put_nowait(_END)  # a second loop over an ended subscription ends too
            raise StopAsyncIteration
        if isinstance(item, BaseException):
            raise item
        message: dict[str, Any] = item
        return message

    async def close(self) -> None:
        """End the subscription on the server (and stop the iteration)."""
        closer, self._closer = self._closer, None
        if closer is not None:
            await closer()
        self.end()

    async def __aenter__(self) -> Subscription:
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self.close()
