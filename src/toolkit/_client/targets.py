"""Where ``toolkit.Client(target)`` connects: a server in this process, a command, or a URL.

- an object with ``in_memory()`` (a ``toolkit.Server``): the memory transport, inside the
  server's lifespan (the server hands the transport down: this wing never imports it);
- ``"http://..."`` / ``"https://..."``: Streamable HTTP;
- a command, as a list (``["python", "server.py"]``) or a string (split like a shell would);
  a string naming an existing ``.py`` file runs it with this interpreter: stdio;
- a ``Transport`` already built (``open``, ``send``, ``close``): used as it is.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from .transport import Transport


@runtime_checkable
class InProcessServer(Protocol):
    """A server that can hand a client a connection in this process (``toolkit.Server`` is one)."""

    def in_memory(self) -> AbstractAsyncContextManager[Transport]: ...


def is_url(target: Any) -> bool:
    return isinstance(target, str) and target.startswith(("http://", "https://"))


def describe(target: Any) -> str:
    """The target as an error message names it."""
    if isinstance(target, str):
        return target
    if isinstance(target, Sequence):
        return " ".join(str(part) for part in target)
    return type(target).__name__


def command_of(target: str | Sequence[str]) -> list[str]:
    """The argv of a stdio target (a ``.py`` file alone runs with this interpreter)."""
    if isinstance(target, str):
        import shlex  # noqa: PLC0415

        argv = shlex.split(target)
    else:
        argv = [str(part) for part in target]
    if not argv:
        raise ValueError("toolkit.Client: the command to start the server is empty")
    if len(argv) == 1 and argv[0].endswith(".py") and Path(argv[0]).is_file():
        argv = [sys.executable, argv[0]]
    return argv


@contextlib.asynccontextmanager
async def connected(
    target: Any,
    *,
    headers: Mapping[str, str] | None,
    auth: Any,
    env: Mapping[str, str] | None,
    cwd: str | None,
    http_options: Mapping[str, Any],
) -> AsyncIterator[Transport]:
    """The transport for ``target``, opened by the caller and torn down (lifespan included) on exit."""
    if isinstance(target, InProcessServer):
        async with target.in_memory() as transport:
            yield transport
        return
    if _is_transport(target):
        yield target
        return
    if is_url(target):
        try:
            from .http import HttpTransport  # noqa: PLC0415  (httpx: only when a URL is used)
        except ModuleNotFoundError as exc:
            if exc.name != "httpx":
                raise
            raise ModuleNotFoundError(
                f"toolkit.Client({target!r}) speaks Streamable HTTP with httpx, which is not installed: "
                "pip install 'toolkit-mcp[client]'",
                name="httpx",
            ) from None

        if isinstance(auth, str):  # a bearer token
            headers, auth = {**(headers or {}), "Authorization": f"Bearer {auth}"}, None
        yield HttpTransport(target, headers=headers, auth=auth, **http_options)
        return
    if isinstance(target, str | Sequence) and not isinstance(target, bytes):
        from .stdio import StdioTransport  # noqa: PLC0415

        yield StdioTransport(command_of(target), env=env, cwd=cwd)
        return
    raise TypeError(
        f"toolkit.Client cannot connect to {type(target).__name__}: pass a toolkit.Server, a URL "
        "('http://127.0.0.1:8000/mcp'), a command (['python', 'server.py']) or a transport"
    )


def _is_transport(target: Any) -> bool:
    return all(callable(getattr(target, name, None)) for name in ("open", "send", "close"))
