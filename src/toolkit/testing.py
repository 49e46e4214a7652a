"""An in-memory MCP client for tests: talk to a ``Server`` without a subprocess or a socket.

It speaks either era exactly as a real client would (``initialize`` for a legacy version,
per-request ``_meta`` for 2026-07-28) and gives back raw wire JSON, so a test sees what a
client would see::

    async with Client(server) as client:                      # 2026-07-28
        result = await client.call_tool("get_count")
        assert result["structuredContent"] == 42

    async with Client(server, protocol_version="2025-11-25") as client:
        result = await client.call_tool("get_count")
        assert result["structuredContent"] == {"result": 42}

Answers to the server's questions (elicitation, sampling, roots) come from the handlers
you pass; in the modern era ``call_tool`` follows ``input_required`` rounds for you
(``follow_input=False`` to see them).
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ._client.memory import MemoryTransport
from ._client.session import ClientSession
from ._client.tasks import call_task
from ._errors import ClientError
from ._server import Server
from ._session import Connection
from ._versions import LATEST_VERSION, is_known

if TYPE_CHECKING:
    from ._auth.tokens import AccessToken

__all__ = ["Client", "ClientError", "Handler"]

Handler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]] | dict[str, Any]]

POLL_SECONDS = 0.005
"""How often ``call_task`` polls a 2026-07-28 task: in process, waiting costs a test more than asking."""


class Client(ClientSession):
    """An in-process client of ``server`` speaking ``protocol_version``.

    A ``ClientSession`` (``toolkit._client``) over the memory transport, wired to ``server.engine``
    as one client (its own ``Connection``) while the server's lifespan runs: every request, answer
    and round on the wire is the session's. What it adds: the lifespan, ``messages`` (what the
    server sent besides responses), ``_http_status`` on each response, and ``call_task``.
    """

    def __init__(
        self,
        server: Server,
        *,
        protocol_version: str = LATEST_VERSION,
        capabilities: dict[str, Any] | None = None,
        client_info: dict[str, Any] | None = None,
        log_level: str | None = None,
        elicitation: Handler | None = None,
        sampling: Handler | None = None,
        roots: Handler | None = None,
        access_token: AccessToken | None = None,
    ) -> None:
        if not is_known(protocol_version):  # pinned only: a test reads protocol_version before it connects
            raise ValueError(f"unknown protocol version {protocol_version!r}")
        self.server = server
        self.access_token = access_token
        """Sent with every request as if verified (see what a caller with these scopes sees)."""
        self.messages: list[dict[str, Any]] = []
        """Every message the server sent besides responses (notifications, requests), in order."""
        self._connection = Connection()
        super().__init__(
            MemoryTransport(server.engine, self._connection, access_token=access_token, http_status=True),
            protocol_version=protocol_version,
            capabilities=capabilities,
            client_info=client_info or {"name": "toolkit-testing", "version": "1.0"},
            log_level=log_level,
            handlers={"elicitation/create": elicitation, "sampling/createMessage": sampling, "roots/list": roots},
            on_message=self.messages.append,
        )
        self._stack = contextlib.AsyncExitStack()

    async def __aenter__(self) -> Client:
        await self._stack.enter_async_context(self.server.running())
        await self.open()
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        self.server.engine.forget(self._connection.session)
        await self.close()
        await self._stack.aclose()

    @property
    def notifications(self) -> list[dict[str, Any]]:
        return [message for message in self.messages if "id" not in message]

    async def call_task(
        self, name: str, arguments: dict[str, Any] | None = None, *, ttl_ms: int | None = None, timeout: float = 30.0
    ) -> dict[str, Any]:
        """Call a tool as a task and follow it to its end; the ``CallToolResult`` it ends with.

        2026-07-28: the call declares the tasks extension; ``tasks/get`` is polled and the
        task's questions are answered with this client's handlers (``tasks/update``).
        2025-11-25: the call carries ``"task"`` (``ttl_ms`` as its ``ttl``) and ``tasks/result``
        waits for the end (questions arrive as requests, answered by the handlers). A failed
        task raises ``ClientError`` with its error, and so does a cancelled one; a call the
        server answers without a task returns that result. ``timeout``: how long to follow the
        task before ``TimeoutError``.
        """
        return await call_task(self, name, arguments, ttl_ms=ttl_ms, timeout=timeout, poll_interval=POLL_SECONDS)
