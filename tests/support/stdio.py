"""A raw JSON-RPC client for a server subprocess speaking newline-delimited JSON on stdio.

No MCP library: it writes bytes to the child's stdin and records every line of its stdout.
Lines that are not JSON-RPC messages are kept in ``invalid_lines`` so a test can prove the
server wrote nothing else to stdout.

    with StdioClient.toolkit(WEATHER) as client:
        client.use_modern()
        tools = client.result("tools/list")["tools"]

Use it as a context manager (or call ``close``): the process is always reaped.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .memory import CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY, LOG_LEVEL_KEY, MODERN, PROTOCOL_VERSION_KEY
from .processes import REPO, TOOLKIT

DEFAULT_TIMEOUT = 15.0


class StdioClient:
    """One server subprocess and the messages it wrote."""

    def __init__(
        self, argv: Sequence[str | os.PathLike[str]], *, cwd: Path = REPO, env: dict[str, str] | None = None
    ) -> None:
        self.argv = [str(arg) for arg in argv]
        self.process = subprocess.Popen(
            self.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=env,
        )
        self.lines: list[bytes] = []
        """Every stdout line, raw, in order."""
        self.messages: list[dict[str, Any]] = []
        """Every stdout line that is a JSON-RPC 2.0 message, parsed, in order."""
        self.invalid_lines: list[bytes] = []
        """Stdout lines that are not JSON-RPC 2.0 messages (there must be none)."""
        self.stdout_closed = False
        self.protocol_version: str | None = None
        self.modern = False
        self.capabilities: dict[str, Any] = {}
        self.log_level: str | None = None
        self.sent: dict[Any, str] = {}
        """The method of every request sent, by id (to validate responses as their result type)."""
        self._stderr = bytearray()
        self._changed = threading.Condition()
        self._ids = itertools.count(1)
        self._threads = [
            threading.Thread(target=self._read_stdout, daemon=True),
            threading.Thread(target=self._read_stderr, daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    @classmethod
    def toolkit(cls, app: str | os.PathLike[str], *args: str, **options: Any) -> StdioClient:
        """``toolkit run APP ARGS...`` over stdio."""
        return cls([TOOLKIT, "run", app, *args], **options)

    # --- lifecycle --------------------------------------------------------------------------

    def __enter__(self) -> StdioClient:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def close(self, timeout: float = 10.0) -> int:
        """Close stdin, wait for the exit (killing the process if it hangs); the exit code."""
        self.close_stdin()
        try:
            code = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait()
        for thread in self._threads:
            thread.join(5)
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()
        return code

    def close_stdin(self) -> None:
        stdin = self.process.stdin
        if stdin is not None and not stdin.closed:
            with contextlib.suppress(BrokenPipeError):
                stdin.close()

    def terminate(self) -> None:
        self.process.send_signal(signal.SIGTERM)

    def wait(self, timeout: float = DEFAULT_TIMEOUT) -> int:
        """Wait for the process to exit and for its stdout to be read to the end."""
        code = self.process.wait(timeout)
        self._wait(lambda: self.stdout_closed, timeout, "stdout to close")
        return code

    @property
    def stderr(self) -> str:
        with self._changed:
            return self._stderr.decode("utf-8", "replace")

    # --- reading ----------------------------------------------------------------------------

    def _read_stdout(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        for line in stream:
            parsed: Any = None
            with contextlib.suppress(ValueError):
                parsed = json.loads(line)
            with self._changed:
                self.lines.append(line)
                if isinstance(parsed, dict) and parsed.get("jsonrpc") == "2.0" and line.endswith(b"\n"):
                    self.messages.append(parsed)
                else:
                    self.invalid_lines.append(line)
                self._changed.notify_all()
        with self._changed:
            self.stdout_closed = True
            self._changed.notify_all()

    def _read_stderr(self) -> None:
        stream = self.process.stderr
        assert stream is not None
        for chunk in iter(lambda: stream.read1(65536), b""):
            with self._changed:
                self._stderr += chunk

    def _wait(self, ready: Callable[[], Any], timeout: float, what: str) -> Any:
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                value = ready()
                if value:
                    return value
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(
                        f"timed out after {timeout:g} s waiting for {what}; stdout so far: "
                        f"{[line[:300] for line in self.lines[-10:]]}; stderr: {self._stderr[-2000:]!r}"
                    )
                self._changed.wait(remaining)

    def wait_for(self, predicate: Callable[[dict[str, Any]], bool], timeout: float = DEFAULT_TIMEOUT) -> dict[str, Any]:
        """The first message (so far or to come) that satisfies ``predicate``."""

        def find() -> dict[str, Any] | None:
            return next((message for message in self.messages if predicate(message)), None)

        found: dict[str, Any] = self._wait(find, timeout, "a matching message")
        return found

    def response(self, request_id: Any, timeout: float = DEFAULT_TIMEOUT) -> dict[str, Any]:
        """The response to ``request_id`` (waiting for it)."""
        return self.wait_for(lambda m: m.get("id") == request_id and ("result" in m or "error" in m), timeout)

    def responses_to(self, request_id: Any) -> list[dict[str, Any]]:
        """Every response with id ``request_id`` received so far."""
        with self._changed:
            return [m for m in self.messages if m.get("id") == request_id and ("result" in m or "error" in m)]

    @property
    def notifications(self) -> list[dict[str, Any]]:
        with self._changed:
            return [m for m in self.messages if "method" in m and "id" not in m]

    def snapshot(self) -> int:
        """How many messages have arrived; pass it to ``since`` later."""
        with self._changed:
            return len(self.messages)

    def since(self, mark: int) -> list[dict[str, Any]]:
        with self._changed:
            return list(self.messages[mark:])

    # --- writing ----------------------------------------------------------------------------

    def send_raw(self, data: bytes) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        stdin.write(data)
        stdin.flush()

    def send(self, message: Any) -> None:
        """Write one message as a single line."""
        self.send_raw(json.dumps(message, separators=(",", ":")).encode() + b"\n")

    def next_id(self) -> str:
        return f"req-{next(self._ids)}"

    def use_modern(
        self, version: str = MODERN, capabilities: dict[str, Any] | None = None, log_level: str | None = None
    ) -> None:
        """From now on, every request carries 2026-07-28 ``_meta``."""
        self.protocol_version = version
        self.modern = True
        self.capabilities = capabilities or {}
        self.log_level = log_level

    def use_era(self, version: str) -> None:
        """Speak ``version``: 2026-07-28 per request, an older one through ``initialize``."""
        if version == MODERN:
            self.use_modern()
        else:
            self.initialize(version)

    def meta(self) -> dict[str, Any]:
        if not self.modern:
            return {}
        meta: dict[str, Any] = {
            PROTOCOL_VERSION_KEY: self.protocol_version,
            CLIENT_CAPABILITIES_KEY: self.capabilities,
            CLIENT_INFO_KEY: {"name": "raw-stdio-client", "version": "1.0"},
        }
        if self.log_level is not None:
            meta[LOG_LEVEL_KEY] = self.log_level
        return meta

    def start_request(
        self, method: str, params: dict[str, Any] | None = None, *, request_id: Any = None, meta: bool = True
    ) -> Any:
        """Send a request without waiting; its id."""
        request_id = self.next_id() if request_id is None else request_id
        params = dict(params or {})
        if meta and self.modern:
            params["_meta"] = {**self.meta(), **params.get("_meta", {})}
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        self.sent[request_id] = method
        if params:
            message["params"] = params
        self.send(message)
        return request_id

    def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        request_id: Any = None,
        meta: bool = True,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> dict[str, Any]:
        """Send a request and return its raw response."""
        return self.response(self.start_request(method, params, request_id=request_id, meta=meta), timeout)

    def result(self, method: str, params: dict[str, Any] | None = None, **options: Any) -> dict[str, Any]:
        response = self.request(method, params, **options)
        assert "result" in response, f"{method} failed: {response}"
        result: dict[str, Any] = response["result"]
        return result

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    def initialize(self, version: str, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
        """The legacy handshake: ``initialize`` then ``notifications/initialized``; the response."""
        response = self.request(
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": capabilities or {},
                "clientInfo": {"name": "raw-stdio-client", "version": "1.0"},
            },
            meta=False,
        )
        assert "result" in response, f"initialize failed: {response}"
        self.protocol_version = response["result"]["protocolVersion"]
        self.modern = False
        self.notify("notifications/initialized")
        return response

    def assert_all_valid(self, version: str, messages: list[dict[str, Any]] | None = None) -> None:
        """Every message received (or ``messages``) validates against ``version``'s official schema."""
        from tests.wire import assert_valid

        for message in self.messages if messages is None else messages:
            method = self.sent.get(message.get("id")) if "method" not in message else None
            assert_valid(message, version, method=method)

    def call_tool(self, name: str, arguments: dict[str, Any] | None = None, **options: Any) -> dict[str, Any]:
        return self.result("tools/call", {"name": name, "arguments": arguments or {}}, **options)
