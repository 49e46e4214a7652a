"""The memory transport: an engine in this process, no framing, no socket.

It is handed the engine's entry points (``InProcessEngine``) and the server-side state of this
one client (an opaque connection the engine gets back with every message), so this wing never
imports the engine (wall 4: reaching up only through what the layer above hands down;
``toolkit.testing.Client`` wires ``Server.engine`` in). A message to the server is classified
by the rule the server's transports use (``_jsonrpc.classify``) and handed to the matching entry
point; the engine's reply, and everything it sends meanwhile, comes back through JSON, so the
session sees exactly what a client on a wire would see.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Protocol

import pydantic_core

from .._jsonrpc import Notification, Reply, Request, Response, classify, encode
from .._types import Send
from .transport import Deliver, OnClose, TransportClosed

HTTP_STATUS_KEY: Final = "_http_status"
"""Where ``MemoryTransport(http_status=True)`` puts the status Streamable HTTP would answer with."""


class InProcessEngine(Protocol):
    """The engine of a server in this process, as the memory transport drives it.

    ``toolkit._engine.Engine`` is one. ``connection`` is whatever the engine keeps per client
    (its ``Connection``); the transport only hands it back.
    """

    async def handle_request(
        self, request: Request, connection: Any, send: Send, *, access_token: Any = None
    ) -> Reply: ...

    def handle_notification(self, notification: Notification, connection: Any) -> None: ...

    def handle_response(self, response: Response, connection: Any) -> bool: ...


class MemoryTransport:
    """Talks to ``engine`` in this process, as the client holding ``connection``.

    ``access_token``: every request arrives as if that token had been verified (what a caller
    with its scopes sees). ``http_status``: each response also carries ``"_http_status"``, the
    status the Streamable HTTP transport would answer with (a test of the server wants it; it is
    not part of JSON-RPC). A request runs in the task that sends it, and its response is
    delivered before ``send`` returns: the session's timeout never fires here (the engine
    answers, or the caller cancels, which cancels the request as a disconnect would).
    """

    sends_headers: Final = False
    """The engine takes the message alone: the session makes no HTTP headers for it."""

    def __init__(
        self, engine: InProcessEngine, connection: Any = None, *, access_token: Any = None, http_status: bool = False
    ) -> None:
        self._engine = engine
        self._connection = connection
        self._access_token = access_token
        self._http_status = http_status
        self._deliver: Deliver | None = None
        self._on_close: OnClose | None = None

    async def open(self, deliver: Deliver, *, on_close: OnClose | None = None) -> None:
        self._deliver = deliver
        self._on_close = on_close

    async def send(self, message: dict[str, Any], *, headers: Mapping[str, str] | None = None) -> None:
        deliver = self._deliver
        if deliver is None:
            raise TransportClosed("the memory transport is not open")
        parsed = classify(message)
        if isinstance(parsed, Request):
            reply = await self._engine.handle_request(
                parsed, self._connection, self._from_server, access_token=self._access_token
            )
            response: dict[str, Any] = pydantic_core.from_json(reply.body)
            if self._http_status:
                response[HTTP_STATUS_KEY] = reply.status
            await deliver(response)
        elif isinstance(parsed, Notification):
            self._engine.handle_notification(parsed, self._connection)
        elif isinstance(parsed, Response):
            self._engine.handle_response(parsed, self._connection)
        else:  # what the server's transports answer to a frame that is no message
            await deliver(parsed.reply)

    async def _from_server(self, message: dict[str, Any]) -> None:
        """The engine's ``send``: a notification or a request of the server's, through JSON as on a wire."""
        deliver = self._deliver
        if deliver is not None:  # closed: as on a closed pipe, nobody reads it
            await deliver(pydantic_core.from_json(encode(message)))

    async def close(self) -> None:
        self._deliver = None
        on_close, self._on_close = self._on_close, None
        if on_close is not None:
            on_close("the transport was closed")
