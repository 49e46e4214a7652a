"""httpx's connection-pool retry storm, shown without MCP clients or toolkit.

    .venv/bin/python bench/httpx_pool_stall.py                 # one shared AsyncClient: retries
    .venv/bin/python bench/httpx_pool_stall.py --own-clients   # a client per worker: none

The server is ``bench/servers/floor_server.py``: a bare ASGI callable under uvicorn (a child
process) answering each POST with ten items. Eight asyncio workers send requests one after
another through ONE shared ``httpx.AsyncClient`` (``max_connections=8``, keep-alive), as a load
test would, and the script counts how often httpcore's pool had to retry a request.

With httpcore 1.0.9, the pool can hand the same idle connection to several waiting requests.
One takes it. The others get ``ConnectionNotAvailable``, go back to the pool, and are handed
another connection that is also about to be taken. A typical run of 8,000 requests counts
1,500 to 2,300 such retries; with ``--own-clients`` it counts none. Most of the time a request
wins within a few retries. Now and then three or four requests keep losing for hundreds of
milliseconds to seconds while the other workers are served: the multi-second stalls of
``scripts/loadtest --tail --client httpx-shared``, against toolkit and against this floor alike.
This script shows the retries; that run shows the stalls. Same mechanism as encode/httpcore#822.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import socket
import time
from pathlib import Path

import httpcore._async.connection_pool as pool_module
import httpx

RETRIES = 0
CALL = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "get_items", "arguments": {}, "_meta": {"io.modelcontextprotocol/protocolVersion": "x"}},
    }
).encode()
HEADERS = {"content-type": "application/json", "accept": "application/json"}


def serve(sock: socket.socket) -> None:
    """The server: the frameworkless floor (a bare ASGI callable under uvicorn, about 0.3 ms of work)."""
    import sys

    import uvicorn

    sys.path.insert(0, str(Path(__file__).resolve().parent / "servers"))
    from floor_server import app

    config = uvicorn.Config(app, log_level="warning", lifespan="off")
    uvicorn.Server(config).run(sockets=[sock])


def count_retries() -> None:
    """Count the pool's ConnectionNotAvailable retries (the loop in handle_async_request)."""
    original = pool_module.AsyncPoolRequest.clear_connection

    def clear_connection(self: pool_module.AsyncPoolRequest) -> None:
        global RETRIES
        RETRIES += 1
        original(self)

    pool_module.AsyncPoolRequest.clear_connection = clear_connection  # type: ignore[method-assign]


async def run(url: str, workers: int, requests: int, own_clients: bool) -> list[float]:
    latencies: list[float] = []
    clients = [
        httpx.AsyncClient(limits=httpx.Limits(max_connections=workers))
        for _ in range(1 if not own_clients else workers)
    ]

    async def worker(index: int) -> None:
        client = clients[index % len(clients)]
        for _ in range(requests):
            started = time.perf_counter()
            response = await client.post(url, content=CALL, headers=HEADERS)
            response.raise_for_status()
            latencies.append(time.perf_counter() - started)

    await asyncio.gather(*(worker(index) for index in range(workers)))
    for client in clients:
        await client.aclose()
    return latencies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--requests", type=int, default=1000, help="per worker")
    parser.add_argument("--own-clients", action="store_true", help="one AsyncClient per worker (no shared pool)")
    args = parser.parse_args()
    count_retries()
    global RETRIES
    for number in range(1, args.runs + 1):
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        sock.listen(128)
        server = multiprocessing.Process(target=serve, args=(sock,), daemon=True)
        server.start()
        RETRIES = 0
        try:
            latencies = asyncio.run(
                run(f"http://127.0.0.1:{sock.getsockname()[1]}/", args.workers, args.requests, args.own_clients)
            )
        finally:
            server.terminate()
            server.join()
            sock.close()
        slow = sum(1 for value in latencies if value > 0.25)
        print(f"run {number}: max {max(latencies) * 1e3:.0f} ms, {slow} requests over 250 ms, {RETRIES} pool retries")


if __name__ == "__main__":
    main()
