"""The stdio transport in this process: ``StdioServer`` fed from memory, every written line kept.

    async with MemoryStdio(server, max_message_bytes=1024) as stdio:
        stdio.send({"jsonrpc": "2.0", "id": 1, "method": "ping"})
        response = await stdio.response(1)

Frames go in through the same ``read`` callable a pipe would give the session (chunks of any
size, ``b""`` for end of input); what the session writes is split into lines and parsed.
Leaving the block ends the input and waits for the session to drain and return.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from typing import Any

from toolkit import Server
from toolkit._transports.stdio import StdioServer

from .memory import modern_meta

TIMEOUT = 10.0


class MemoryStdio:
    """One ``StdioServer`` serving ``server``; ``lines`` / ``messages`` are what it wrote."""

    def __init__(
        self, server: Server, *, max_message_bytes: int = 4 * 1024 * 1024, shutdown_grace: float = 5.0
    ) -> None:
        self.server = server
        self.server = StdioServer(
            server.engine,
            self._write,
            running=server.running,
            max_message_bytes=max_message_bytes,
            max_concurrent_requests=server.max_concurrent_requests,
            shutdown_grace=shutdown_grace,
        )
        self.lines: list[bytes] = []
        """Every line written, raw (without its newline)."""
        self.messages: list[dict[str, Any]] = []
        """Every line that is a JSON-RPC 2.0 object, parsed, in order."""
        self.invalid_lines: list[bytes] = []
        """Written lines that are not JSON-RPC 2.0 objects (there must be none)."""
        self.written_at: list[float] = []
        self.stop = asyncio.Event()
        self._pending = b""
        self._input: asyncio.Queue[bytes] = asyncio.Queue()
        self._changed = asyncio.Condition()
        self._task: asyncio.Task[None] | None = None
        self._ids = itertools.count(1)

    async def __aenter__(self) -> MemoryStdio:
        self._task = asyncio.create_task(self.server.serve(self._read, self.stop))
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        self.end_input()
        await self.finished(TIMEOUT)

    async def finished(self, timeout: float = TIMEOUT) -> None:
        """Wait for ``serve`` to return (it re-raises whatever ended it abnormally)."""
        assert self._task is not None
        try:
            async with asyncio.timeout(timeout):
                await asyncio.shield(self._task)
        except TimeoutError:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            raise

    @property
    def done(self) -> bool:
        return self._task is not None and self._task.done()

    # --- the two byte streams ---------------------------------------------------------------

    async def _read(self, size: int) -> bytes:
        return await self._input.get()

    async def _write(self, data: bytes) -> None:
        now = asyncio.get_running_loop().time()
        self._pending += data
        *complete, self._pending = self._pending.split(b"\n")
        for line in complete:
            parsed: Any = None
            with contextlib.suppress(ValueError):
                parsed = json.loads(line)
            self.lines.append(line)
            self.written_at.append(now)
            if isinstance(parsed, dict) and parsed.get("jsonrpc") == "2.0":
                self.messages.append(parsed)
            else:
                self.invalid_lines.append(line)
        async with self._changed:
            self._changed.notify_all()

    # --- sending ----------------------------------------------------------------------------

    def send_raw(self, data: bytes) -> None:
        """Bytes as the next chunk of input (frames need their own newlines)."""
        if data:
            self._input.put_nowait(data)

    def send(self, message: Any) -> None:
        self.send_raw(json.dumps(message, separators=(",", ":")).encode() + b"\n")

    def end_input(self) -> None:
        self._input.put_nowait(b"")

    def request(
        self, method: str, params: dict[str, Any] | None = None, *, request_id: Any = None, modern: bool = True
    ) -> Any:
        """Send a request (with 2026-07-28 ``_meta`` unless ``modern=False``); its id."""
        request_id = f"m-{next(self._ids)}" if request_id is None else request_id
        params = dict(params or {})
        if modern:
            params["_meta"] = {**modern_meta(), **params.get("_meta", {})}
        self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        return request_id

    def call(self, name: str, arguments: dict[str, Any] | None = None, **options: Any) -> Any:
        return self.request("tools/call", {"name": name, "arguments": arguments or {}}, **options)

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    async def initialize(self, version: str = "2025-11-25") -> dict[str, Any]:
        request_id = self.request(
            "initialize",
            {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "memory-stdio", "version": "1"}},
            modern=False,
        )
        response = await self.response(request_id)
        assert "result" in response, response
        self.notify("notifications/initialized")
        return response

    # --- receiving --------------------------------------------------------------------------

    def responses_to(self, request_id: Any) -> list[dict[str, Any]]:
        return [m for m in self.messages if m.get("id") == request_id and ("result" in m or "error" in m)]

    async def response(self, request_id: Any, timeout: float = TIMEOUT) -> dict[str, Any]:
        """The response to ``request_id``, waiting for it."""
        async with asyncio.timeout(timeout), self._changed:
            while not self.responses_to(request_id):
                await self._changed.wait()
        return self.responses_to(request_id)[0]

    async def result(self, request_id: Any, timeout: float = TIMEOUT) -> dict[str, Any]:
        response = await self.response(request_id, timeout)
        assert "result" in response, response
        result: dict[str, Any] = response["result"]
        return result

    async def quiet(self, seconds: float) -> None:
        """Let the session run for ``seconds`` (to prove something does not arrive)."""
        await asyncio.sleep(seconds)
