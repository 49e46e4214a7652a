"""Per-session and per-request state the engine keeps while it serves a request.

``Session`` is the legacy era's state (one per stdio process after ``initialize``, one per
HTTP ``Mcp-Session-Id``). ``RequestScope`` describes one request, whichever era: its
version, the client's capabilities, where its notifications go, and (modern) the
multi round-trip answers it carries.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Final

from ._errors import McpError
from ._jsonrpc import RequestId, Response

Send = Callable[[dict[str, Any]], Awaitable[None]]
"""Deliver one JSON-RPC message to the client on the right stream."""

LOG_LEVELS: Final = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
LOG_RANK: Final = {level: rank for rank, level in enumerate(LOG_LEVELS)}


class ClientRequestError(Exception):
    """The client answered a server-to-client request with an error, or not in time."""


class Session:
    """A legacy-era session: the negotiated version and what the client told us at ``initialize``."""

    def __init__(self, session_id: str | None = None) -> None:
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
        self.last_active = time.monotonic()
        self.closed = False
        self._pending: dict[RequestId, asyncio.Future[Any]] = {}
        self._ids = itertools.count(1)

    @property
    def ready(self) -> bool:
        return self.version is not None

    async def request(self, method: str, params: dict[str, Any], send: Send, timeout: float) -> Any:
        """Send a request to the client and wait for its result (legacy era only)."""
        request_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            await send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
            try:
                return await asyncio.wait_for(future, timeout)
            except TimeoutError:
                raise ClientRequestError(f"the client did not answer {method} within {timeout:g} s") from None
        finally:
            self._pending.pop(request_id, None)

    def resolve(self, response: Response) -> bool:
        """Hand a client's response to the request waiting for it; False if none is."""
        future = self._pending.get(response.id)
        if future is None or future.done():
            return False
        if response.error is not None:
            message = response.error.get("message", "error")
            future.set_exception(ClientRequestError(f"the client answered with an error: {message}"))
        else:
            future.set_result(response.result)
        return True

    def close(self) -> None:
        self.closed = True
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ClientRequestError("the session ended"))


@dataclass(slots=True)
class RequestScope:
    """Everything about one request that its handler and its ``Context`` need."""

    request_id: RequestId
    method: str
    params: dict[str, Any]
    version: str
    modern: bool
    client_capabilities: dict[str, Any]
    client_info: dict[str, Any] | None
    send: Send
    session: Session | None = None
    log_level: str | None = None
    """Lowest level to send as ``notifications/message``; ``None`` sends none."""
    progress_token: str | int | None = None
    answers: dict[str, Any] = field(default_factory=dict)
    """Modern: input responses gathered over the rounds of this request."""
    pending_inputs: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Modern: input requests raised in this round."""
    request_info: Any = None
    """The transport's view of the request (e.g. the Starlette ``Request`` over HTTP)."""

    def client_supports(self, capability: str) -> bool:
        return isinstance(self.client_capabilities.get(capability), dict)

    def require(self, capability: str) -> None:
        """Fail the request unless the client declared ``capability``."""
        if self.client_supports(capability):
            return
        if self.modern:
            raise McpError(
                -32021,
                f"This request needs the client capability {capability!r}, which the request's "
                "_meta clientCapabilities does not declare",
                {"requiredCapabilities": {capability: {}}},
                http_status=400,
            )
        from ._errors import ToolError

        raise ToolError(
            f"This tool needs the client capability {capability!r}, which the client did not declare at initialize"
        )
