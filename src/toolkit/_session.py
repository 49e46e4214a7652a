"""What lives across requests of one client: the legacy session and its in-flight requests.

``Session`` is the legacy era's state (one per stdio process after ``initialize``, one per
HTTP ``Mcp-Session-Id``); ``Connection`` pairs it with the requests a transport is running
for that client, so ``notifications/cancelled`` can find them. The modern era keeps none of
this: each request carries what it needs.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from ._errors import ClientRequestError
from ._jsonrpc import Correlator, Response
from ._types import RequestId, Send


class Session:
    """A legacy-era session: the negotiated version and what the client told us at ``initialize``."""

    def __init__(self, session_id: str | None = None, *, request_id_base: int = 0) -> None:
        self.id = session_id
        self.version: str | None = None
        self.client_capabilities: dict[str, Any] = {}
        self.client_info: dict[str, Any] = {}
        self.log_level = "debug"
        """Lowest level sent as ``notifications/message``; everything until ``logging/setLevel``."""
        self.initialized = False
        self.subscriptions: set[str] = set()
        self.notify: Send | None = None
        """Where unsolicited notifications go (stdout; the HTTP GET stream when one is open)."""
        self.notify_delivers: Callable[[], bool] = _always
        """Whether ``notify`` reaches the client now (stdout: always; HTTP: while its ``GET`` stream is open here)."""
        self.last_active = time.monotonic()
        self.closed = False
        self._requests = Correlator(_client_failure, first_id=request_id_base + 1)
        """Requests to the client; replicas sharing a session start their ids from different bases."""
        self.on_change: Callable[[Session, str, Any], Awaitable[None]] | None = None
        """Told of each change a request makes (``log_level``, ``subscribe``, ``unsubscribe``), to store it."""

    @property
    def ready(self) -> bool:
        return self.version is not None

    async def changed(self, what: str, value: Any) -> None:
        """A request changed the session (``log_level``, ``subscribe`` or ``unsubscribe`` a URI): store it."""
        if self.on_change is not None:
            await self.on_change(self, what, value)

    async def request(self, method: str, params: dict[str, Any], send: Send, timeout: float) -> Any:
        """Send a request to the client and wait for its result (legacy era only)."""
        return await self._requests.request(method, params, send, timeout)

    def resolve(self, response: Response) -> bool:
        """Hand a client's response to the request waiting for it; False if none is."""
        return self._requests.resolve(response)

    def close(self) -> None:
        self.closed = True
        self._requests.close("the session ended")


def _client_failure(kind: str, method: str, detail: Any) -> Exception:
    if kind == "timeout":
        return ClientRequestError(f"the client did not answer {method} within {detail:g} s")
    if kind == "error":
        return ClientRequestError(f"the client answered with an error: {detail.get('message', 'error')}")
    return ClientRequestError(str(detail))


class Cancellable(Protocol):
    """A running request, as ``Connection.inflight`` holds it: a task, or one running in another's."""

    def cancel(self) -> Any: ...


class Connection:
    """What a transport keeps per stdio process or per legacy HTTP session."""

    # A plain class: a dataclass compiles its generated methods when this module is imported.
    __slots__ = ("inflight", "session")

    def __init__(self, session: Session | None = None, inflight: dict[RequestId, Cancellable] | None = None) -> None:
        self.session = Session() if session is None else session
        self.inflight: dict[RequestId, Cancellable] = {} if inflight is None else inflight

    def cancel(self, request_id: Any) -> None:
        task = self.inflight.get(request_id)
        if task is not None:
            task.cancel()


def _always() -> bool:
    return True
