"""toolkit on uvloop's event loop: the client, the gateway and the server, over the real wire.

uvicorn serves on uvloop whenever it can import it (``uvicorn[standard]`` and ``fastapi[standard]``
bring it), so ``toolkit run --transport http`` and ``toolkit proxy --transport http`` run on it
wherever it is installed, and an application may run its own code on it (``uvloop.run(main())``).
uvloop's transports are not registered with asyncio's ABCs: ``isinstance(transport,
asyncio.Transport)`` is false for them. toolkit's client once asserted exactly that, and every HTTP
or stdio connection it opened on uvloop failed.

scripts/install puts uvloop in ``.venv/uvloop``, outside site-packages (``requirements/uvloop.lock``
says why); these tests put it on the path of the processes they start, and use it in this one.
scripts/test also runs the client, gateway and transport suites on uvloop (``TOOLKIT_TEST_LOOP=uvloop``,
tests/conftest.py).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Coroutine, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from tests.conftest import TEST_LOOP, UVLOOP_DIR
from tests.support.processes import LOCALHOST, PYTHON, TOOLKIT, free_port, http_server, stop, wait_for_port

from toolkit import Client

APP = Path(__file__).parent / "support" / "loops_app.py"
MODERN, LEGACY, OLDEST = "2026-07-28", "2025-11-25", "2024-11-05"
ERAS = [MODERN, LEGACY, OLDEST]
READY = 90.0


@pytest.fixture(scope="module")
def uvloop() -> Iterator[ModuleType]:
    """uvloop, from ``.venv/uvloop``; the tests fail without it under ``TOOLKIT_TESTS_STRICT=1``."""
    if not (UVLOOP_DIR / "uvloop").is_dir():
        message = f"uvloop is not installed in {UVLOOP_DIR}: run scripts/install"
        if os.environ.get("TOOLKIT_TESTS_STRICT"):
            pytest.fail(message)
        pytest.skip(message)
    sys.path.insert(0, str(UVLOOP_DIR))
    try:
        import uvloop

        yield uvloop
    finally:
        sys.path.remove(str(UVLOOP_DIR))


def path_without_uvloop() -> list[str]:
    """``$PYTHONPATH`` without ``.venv/uvloop`` (which the suite's uvloop pass puts on it)."""
    return [entry for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep) if entry and entry != str(UVLOOP_DIR)]


@pytest.fixture
def on_uvloop(uvloop: ModuleType) -> dict[str, str]:
    """The environment of a process that can import uvloop (uvicorn then serves on it)."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(UVLOOP_DIR), *path_without_uvloop()])}


@pytest.fixture
def on_asyncio() -> dict[str, str]:
    """The environment of a process that cannot import uvloop: asyncio's loop, whichever pass runs."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join(path_without_uvloop())}


def run_on_uvloop(uvloop: ModuleType, coroutine: Coroutine[Any, Any, Any]) -> Any:
    """Run ``coroutine`` on a uvloop event loop of its own, as ``uvloop.run`` does."""
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(coroutine)


def loop_package() -> str:
    """``"asyncio"`` or ``"uvloop"``: the package of the running event loop's class."""
    return type(asyncio.get_running_loop()).__module__.partition(".")[0]


async def loop_and_primes(client: Client) -> tuple[str, str, Any, Any]:
    """The client's own loop, the server's, and ``primes(3)`` as data and as it came."""
    here = loop_package()
    there = (await client.call_tool("loop")).text
    result = await client.call_tool("primes", {"n": 3})
    return here, there, result.data, result.structured_content


def shape(version: str) -> Any:
    """``primes(3)``'s ``structuredContent`` as each era gets it: natural, wrapped, absent."""
    return {MODERN: [2, 3, 5], LEGACY: {"result": [2, 3, 5]}, OLDEST: None}[version]


def uses_uvloop(pid: int) -> bool:
    """Whether process ``pid`` has uvloop's extension module loaded."""
    return any("uvloop/loop.cpython" in line for line in Path(f"/proc/{pid}/maps").read_text().splitlines())


# --- the suite's own loop ------------------------------------------------------------------------------


async def test_an_async_test_runs_on_the_loop_of_the_pass() -> None:
    # scripts/test's uvloop pass would prove nothing if its tests quietly ran on asyncio's loop.
    assert loop_package() == TEST_LOOP


@pytest.mark.asyncio_loop
async def test_a_test_about_asyncios_loop_stays_on_it() -> None:
    assert loop_package() == "asyncio"


# --- the client on uvloop ------------------------------------------------------------------------------


@pytest.mark.parametrize("version", ERAS)
def test_the_client_speaks_each_era_over_http_on_uvloop(
    uvloop: ModuleType, on_uvloop: dict[str, str], version: str
) -> None:
    with http_server(APP, env=on_uvloop, timeout=READY) as server:
        assert uses_uvloop(server.process.pid), "uvicorn serves on uvloop when it can import it"

        async def session() -> tuple[str, str, Any, Any]:
            async with Client(server.url, protocol_version=version) as client:
                assert client.negotiated_version == version
                return await loop_and_primes(client)

        here, there, data, structured = run_on_uvloop(uvloop, session())
    assert (here, there) == ("uvloop", "uvloop")
    assert structured == shape(version)
    assert data == ([2, 3, 5] if version != OLDEST else None)


@pytest.mark.parametrize("version", [MODERN, OLDEST])
def test_the_client_runs_a_stdio_server_on_uvloop(uvloop: ModuleType, on_uvloop: dict[str, str], version: str) -> None:
    # The child serves stdio on uvloop too: server.run() runs asyncio.run(), which follows the policy.
    child = (
        "import asyncio, sys, uvloop; asyncio.set_event_loop_policy(uvloop.EventLoopPolicy()); "
        f"from toolkit._cli import main; main(['run', {str(APP)!r}])"
    )

    async def session() -> tuple[str, str, Any, Any]:
        async with Client([str(PYTHON), "-c", child], protocol_version=version, env=on_uvloop) as client:
            assert client.negotiated_version == version
            return await loop_and_primes(client)

    here, there, data, structured = run_on_uvloop(uvloop, session())
    assert (here, there) == ("uvloop", "uvloop")
    assert structured == shape(version)
    assert data == ([2, 3, 5] if version == MODERN else None)


# --- the gateway on uvloop -------------------------------------------------------------------------------


def test_a_gateway_on_uvloop_relays_an_http_and_a_stdio_upstream_to_each_era(
    on_uvloop: dict[str, str], on_asyncio: dict[str, str], tmp_path: Path
) -> None:
    # The upstreams run on asyncio's loop (the stdio one because stdio serving follows asyncio's
    # default policy, not what is installed); the gateway, a client of both, on uvloop.
    with http_server(APP, env=on_asyncio, timeout=READY) as upstream:
        config = tmp_path / "gateway.json"
        config.write_text(
            json.dumps(
                {
                    "mcpServers": {
                        "web": {"url": upstream.url},
                        "local": {"command": str(TOOLKIT), "args": ["run", str(APP)]},
                    }
                }
            )
        )
        port = free_port()
        log = tmp_path / "gateway.log"
        with log.open("wb") as sink:
            gateway = subprocess.Popen(
                [str(TOOLKIT), "proxy", str(config), "--transport", "http", "--host", LOCALHOST, "--port", str(port)],
                stdin=subprocess.DEVNULL,
                stdout=sink,
                stderr=subprocess.STDOUT,
                env=on_uvloop,
            )
        try:
            try:
                wait_for_port(port, timeout=READY, process=gateway)
            except AssertionError as exc:
                raise AssertionError(f"{exc}:\n{log.read_text(errors='replace')}") from None
            assert uses_uvloop(gateway.pid)

            async def calls(version: str) -> list[Any]:
                async with Client(f"http://{LOCALHOST}:{port}/mcp", protocol_version=version) as client:
                    names = {tool["name"] for tool in await client.list_tools()}
                    assert {"web_loop", "web_primes", "local_loop", "local_primes"} <= names
                    return [(await client.call_tool(f"{namespace}_loop")).text for namespace in ("web", "local")] + [
                        (await client.call_tool(f"{namespace}_primes", {"n": 3})).structured_content
                        for namespace in ("web", "local")
                    ]

            for version in ERAS:
                assert asyncio.run(calls(version)) == ["asyncio", "asyncio", shape(version), shape(version)], version
            assert stop(gateway) == 0, log.read_text(errors="replace")
        finally:
            stop(gateway)
