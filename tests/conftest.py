"""Shared fixtures. Helpers behind them live in ``tests/support``."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support.apps import weather_server
from tests.support.processes import RunningServer
from tests.support.processes import free_port as _free_port
from tests.support.processes import http_server as _http_server
from tests.support.stdio import StdioClient

from toolkit import Server


@pytest.fixture
def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    return _free_port()


@pytest.fixture
def weather() -> Server:
    """A fresh ``examples/weather.py`` server (safe to add or remove tools)."""
    return weather_server()


@pytest.fixture
def stdio_client() -> Iterator[Callable[..., StdioClient]]:
    """Start ``toolkit run APP ARGS...`` over stdio: ``stdio_client(app, *args)``; all are reaped."""
    started: list[StdioClient] = []

    def start(app: Any, *args: str, **options: Any) -> StdioClient:
        client = StdioClient.toolkit(app, *args, **options)
        started.append(client)
        return client

    yield start
    for client in started:
        client.close()


@pytest.fixture
def http_server() -> Iterator[Callable[..., RunningServer]]:
    """Start ``toolkit run APP --transport http`` on a free port: ``http_server(app, *args)``; all are stopped."""
    with contextlib.ExitStack() as stack:
        yield lambda app, *args, **options: stack.enter_context(_http_server(app, *args, **options))


@pytest.fixture
async def mcp_http() -> Any:
    """Serve in-process with uvicorn on 127.0.0.1: ``http = await mcp_http(server, **http_app_options)``.

    ``server`` is a ``Server`` (served by ``server.http_app(**options)``) or any ASGI app; the
    result is a ``tests.http_support.McpHttp`` client of its endpoint. Every server is stopped
    at the end of the test. See ``tests/http_support.py``.
    """
    from tests.http_support import serving

    async with contextlib.AsyncExitStack() as stack:

        async def start(target: Any, **options: Any) -> Any:
            return await stack.enter_async_context(serving(target, **options))

        yield start


@pytest.fixture
def mcp_cli() -> Iterator[Callable[..., Any]]:
    """``toolkit run APP --transport http --port P [ARGS]`` in a subprocess: ``running = mcp_cli(app, *args)``.

    Waits until it listens, and stops it (SIGTERM, then SIGKILL) at the end of the test; the
    default ``--host`` is kept. Returns a ``tests.http_support.CliServer``.
    """
    from tests.http_support import cli_server

    with contextlib.ExitStack() as stack:
        yield lambda app, *args, **options: stack.enter_context(cli_server(app, *args, **options))


# --- uvloop: TOOLKIT_TEST_LOOP=uvloop runs the async tests on uvloop's event loop ---------------------
# scripts/install puts uvloop in .venv/uvloop, outside site-packages: uvicorn picks uvloop whenever it
# can import it, and the rest of the suite and the benchmark keep asyncio's loop. scripts/test runs the
# client, gateway and transport tests again this way; a test about asyncio's own loop (its internals, or
# the wording of its errors) is marked ``asyncio_loop`` and stays on asyncio's loop.
UVLOOP_DIR = Path(__file__).resolve().parent.parent / ".venv" / "uvloop"

TEST_LOOP = os.environ.get("TOOLKIT_TEST_LOOP") or "asyncio"
if TEST_LOOP not in ("asyncio", "uvloop"):
    raise pytest.UsageError(f"TOOLKIT_TEST_LOOP={TEST_LOOP!r}: it takes asyncio (the default) or uvloop")

if TEST_LOOP == "uvloop":
    if not (UVLOOP_DIR / "uvloop").is_dir():
        raise pytest.UsageError(f"TOOLKIT_TEST_LOOP=uvloop: uvloop is not in {UVLOOP_DIR}; run scripts/install")
    sys.path.insert(0, str(UVLOOP_DIR))
    # The servers the tests start inherit it, so uvicorn serves them on uvloop too.
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(UVLOOP_DIR), os.environ.get("PYTHONPATH")]))
    import uvloop

    def pytest_asyncio_loop_factories(config: pytest.Config, item: pytest.Item) -> dict[str, Any]:
        if item.get_closest_marker("asyncio_loop"):
            return {"asyncio": asyncio.new_event_loop}
        return {"uvloop": uvloop.new_event_loop}
