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

import asyncio
import contextlib
import itertools
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import pydantic_core

from . import _compat
from ._errors import METHOD_NOT_FOUND, ClientError
from ._jsonrpc import Notification, Request, Response
from ._server import Server
from ._session import Connection
from ._types import CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY, LOG_LEVEL_KEY, PROTOCOL_VERSION_KEY
from ._versions import LATEST_VERSION, is_known, is_modern

if TYPE_CHECKING:
    from ._auth.tokens import AccessToken

__all__ = ["Client", "ClientError", "Handler"]

Handler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]] | dict[str, Any]]


class Client:
    """An in-process client of ``server`` speaking ``protocol_version``."""

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
        if not is_known(protocol_version):
            raise ValueError(f"unknown protocol version {protocol_version!r}")
        self.server = server
        self.protocol_version = protocol_version
        self.modern = is_modern(protocol_version)
        self.handlers = {"elicitation/create": elicitation, "sampling/createMessage": sampling, "roots/list": roots}
        if capabilities is None:
            capabilities = {}
            for name, handler in (("elicitation", elicitation), ("sampling", sampling), ("roots", roots)):
                if handler is not None:
                    capabilities[name] = {}
        self.capabilities = capabilities
        self.client_info = client_info or {"name": "toolkit-testing", "version": "1.0"}
        self.log_level = log_level
        self.access_token = access_token
        """Sent with every request as if verified (see what a caller with these scopes sees)."""
        self.messages: list[dict[str, Any]] = []
        """Every message the server sent besides responses (notifications, requests), in order."""
        self.initialize_result: dict[str, Any] | None = None
        self._connection = Connection()
        self._ids = itertools.count(1)
        self._stack = contextlib.AsyncExitStack()

    async def __aenter__(self) -> Client:
        await self._stack.enter_async_context(self.server.running())
        if not self.modern:
            response = await self.request(
                "initialize",
                {
                    "protocolVersion": self.protocol_version,
                    "capabilities": self.capabilities,
                    "clientInfo": self.client_info,
                },
            )
            if "error" in response:
                raise ClientError(response["error"])
            self.initialize_result = response["result"]
            await self.notify("notifications/initialized")
            if self.log_level is not None:
                await self.result("logging/setLevel", {"level": self.log_level})
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        self.server.engine.forget(self._connection.session)
        await self._stack.aclose()

    @property
    def notifications(self) -> list[dict[str, Any]]:
        return [message for message in self.messages if "id" not in message]

    def _meta(self, extra: dict[str, Any] | None) -> dict[str, Any]:
        meta: dict[str, Any] = {}
        if self.modern:
            meta[PROTOCOL_VERSION_KEY] = self.protocol_version
            meta[CLIENT_CAPABILITIES_KEY] = self.capabilities
            meta[CLIENT_INFO_KEY] = self.client_info
            if self.log_level is not None:
                meta[LOG_LEVEL_KEY] = self.log_level
        if extra:
            meta.update(extra)
        return meta

    async def _send(self, message: dict[str, Any]) -> None:
        # Round-trip through JSON so the test sees exactly what a real client would.
        message = pydantic_core.from_json(pydantic_core.to_json(message))
        self.messages.append(message)
        if "id" in message and "method" in message:  # a server-to-client request (legacy era)
            handler = self.handlers.get(message["method"])
            if handler is None:
                reply = Response(
                    message["id"], None, {"code": METHOD_NOT_FOUND, "message": "no handler in the test client"}
                )
            else:
                answer = handler(message.get("params", {}))
                if isinstance(answer, Awaitable):
                    answer = await answer
                reply = Response(message["id"], answer, None)
            self.server.engine.handle_response(reply, self._connection)

    async def request(
        self, method: str, params: dict[str, Any] | None = None, *, meta: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """Send one request; return the raw JSON-RPC response (``result`` or ``error``)."""
        params = dict(params or {})
        merged = self._meta(meta)
        if merged or "_meta" in params:
            params["_meta"] = {**merged, **params.get("_meta", {})}
        request = Request(next(self._ids), method, params)
        reply = await self.server.engine.handle_request(
            request, self._connection, self._send, access_token=self.access_token
        )
        response: dict[str, Any] = pydantic_core.from_json(reply.body)
        response["_http_status"] = reply.status
        return response

    async def result(self, method: str, params: dict[str, Any] | None = None, **options: Any) -> dict[str, Any]:
        """Send one request; return its ``result``, or raise ``ClientError``."""
        response = await self.request(method, params, **options)
        if "error" in response:
            raise ClientError(response["error"])
        result: dict[str, Any] = response["result"]
        return result

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        self.server.engine.handle_notification(Notification(method, params or {}), self._connection)

    async def list_tools(self) -> list[dict[str, Any]]:
        tools: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            result = await self.result("tools/list", {"cursor": cursor} if cursor else {})
            tools.extend(result["tools"])
            cursor = result.get("nextCursor")
            if not cursor:
                return tools

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        meta: dict[str, Any] | None = None,
        follow_input: bool = True,
        max_rounds: int = 10,
    ) -> dict[str, Any]:
        """Call a tool; return the ``CallToolResult`` (answering ``input_required`` rounds)."""
        params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
        return await self._with_input("tools/call", params, meta, follow_input, max_rounds)

    async def call_task(
        self, name: str, arguments: dict[str, Any] | None = None, *, ttl_ms: int | None = None, timeout: float = 30.0
    ) -> dict[str, Any]:
        """Call a tool as a task and follow it to its end; the ``CallToolResult`` it ends with.

        2026-07-28: the call declares the tasks extension; ``tasks/get`` is polled and the
        task's questions are answered with this client's handlers (``tasks/update``).
        2025-11-25: the call carries ``"task"`` (``ttl_ms`` as its ``ttl``) and ``tasks/result``
        waits for the end (questions arrive as requests, answered by the handlers). A failed
        task raises ``ClientError`` with its error, and so does a cancelled one; a call the
        server answers without a task returns that result. ``timeout``: how long to poll a
        2026-07-28 task before ``TimeoutError``.
        """
        arguments = arguments or {}
        if not self.modern:
            if _compat.task_form(self.protocol_version) is None:
                raise ValueError(
                    f"protocol version {self.protocol_version} has no tasks (2025-11-25 and 2026-07-28 do)"
                )
            augmentation = {} if ttl_ms is None else {"ttl": ttl_ms}
            created = await self.result("tools/call", {"name": name, "arguments": arguments, "task": augmentation})
            if "task" not in created:
                return created
            return await self.result("tasks/result", {"taskId": created["task"]["taskId"]})
        extensions = {**self.capabilities.get("extensions", {}), _compat.TASKS_EXTENSION: {}}
        meta = {CLIENT_CAPABILITIES_KEY: {**self.capabilities, "extensions": extensions}}
        created = await self.call_tool(name, arguments, meta=meta)
        if created.get("resultType") != "task":
            return created
        task_id: str = created["taskId"]
        answered: set[str] = set()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            task = await self.result("tasks/get", {"taskId": task_id}, meta=meta)
            status: str = task["status"]
            if status == "completed":
                result: dict[str, Any] = task["result"]
                return result
            if status in ("failed", "cancelled"):
                raise ClientError(task.get("error") or {"code": -32603, "message": f"the task was {status}"})
            asked = {key: value for key, value in (task.get("inputRequests") or {}).items() if key not in answered}
            if asked:
                responses = {key: await self._answer(value) for key, value in asked.items()}
                answered.update(responses)
                await self.result("tasks/update", {"taskId": task_id, "inputResponses": responses}, meta=meta)
            elif loop.time() > deadline:
                raise TimeoutError(f"task {task_id} of {name!r} still {status} after {timeout:g} s")
            else:
                await asyncio.sleep(0.005)

    async def _answer(self, asked: dict[str, Any]) -> Any:
        handler = self.handlers.get(asked["method"])
        if handler is None:
            raise AssertionError(f"the server asked for {asked['method']} and the test client has no handler")
        answer = handler(asked.get("params", {}))
        return await answer if isinstance(answer, Awaitable) else answer

    async def get_prompt(self, name: str, arguments: dict[str, str] | None = None, **options: Any) -> dict[str, Any]:
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments
        return await self._with_input("prompts/get", params, None, options.get("follow_input", True), 10)

    async def read_resource(self, uri: str) -> dict[str, Any]:
        return await self._with_input("resources/read", {"uri": uri}, None, True, 10)

    async def _with_input(
        self, method: str, params: dict[str, Any], meta: dict[str, Any] | None, follow: bool, max_rounds: int
    ) -> dict[str, Any]:
        for _ in range(max_rounds):
            result = await self.result(method, params, meta=meta)
            if result.get("resultType") != "input_required" or not follow:
                return result
            responses = {key: await self._answer(asked) for key, asked in (result.get("inputRequests") or {}).items()}
            params = {**params, "inputResponses": responses}
            if "requestState" in result:
                params["requestState"] = result["requestState"]
            else:
                params.pop("requestState", None)
        raise AssertionError(f"{method} still needed input after {max_rounds} rounds")
