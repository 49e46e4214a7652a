"""The ``openapi`` scenario's server made from an OpenAPI document, in toolkit or fastmcp, over stdio.

    python bench/servers/openapi_server.py --framework toolkit --document api.github.com.json --mark /tmp/m
    python bench/servers/openapi_server.py --framework fastmcp --document items.json --base-url http://127.0.0.1:8124
    python bench/servers/openapi_server.py --framework toolkit --empty --mark /tmp/m   # the memory baseline

Runs in the framework's own environment (toolkit: the project's ``.venv``; fastmcp 4.1.6: the
anchors' venv). In this order:

1. **imports**: what a user's program imports to do this: toolkit ``from toolkit import Server`` and
   ``import httpx``; fastmcp ``from fastmcp import FastMCP`` and ``import httpx2`` (fastmcp 4.1.6's
   ``from_openapi`` takes an ``httpx2.AsyncClient``: the same API as httpx's, under that name);
2. ``--mark FILE``: ``time.perf_counter()`` (CLOCK_MONOTONIC, the same clock as the bench
   driver's) and this process's CPU seconds so far are written to FILE: the end of the imports;
3. **load**: the document read with ``json.load`` (the same for both: fastmcp takes a mapping
   only), then ``Server.from_openapi(document, client=httpx.AsyncClient(base_url=URL),
   include_deprecated=True)`` or ``FastMCP.from_openapi(document, client=httpx2.AsyncClient(
   base_url=URL))``; ``--base-url`` (default ``https://api.github.com``: nothing is sent while
   loading and listing). toolkit leaves deprecated operations out by default, fastmcp does not:
   ``include_deprecated=True`` makes both build every operation of the document. With
   ``--empty``, no document: ``Server("empty")`` / ``FastMCP("empty")``, the memory baseline;
4. **serve** over stdio: ``server.run()`` / ``server.run(show_banner=False)``, until stdin closes.
   Whatever each framework does before it can answer ``tools/list`` (fastmcp builds its tools'
   MCP shapes on the first list) happens between the mark and that answer.
"""

import argparse
import json
import time
from pathlib import Path
from typing import Any

GITHUB = "https://api.github.com"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--framework", choices=("toolkit", "fastmcp"), required=True)
    parser.add_argument("--document", type=Path, help="the OpenAPI document (a JSON file)")
    parser.add_argument("--base-url", default=GITHUB, help=f"where calls go (default {GITHUB})")
    parser.add_argument("--mark", type=Path, help="write the perf_counter and CPU seconds at the end of the imports")
    parser.add_argument("--empty", action="store_true", help="no document: a server with no tools (the baseline)")
    args = parser.parse_args()
    if (args.document is None) != args.empty:
        parser.error("give --document or --empty")
    server: Any
    if args.framework == "toolkit":
        import httpx

        from toolkit import Server

        mark(args.mark)
        if args.empty:
            server = Server("empty")
        else:
            document = _read(args.document)
            client = httpx.AsyncClient(base_url=args.base_url)
            server = Server.from_openapi(document, client=client, include_deprecated=True)
        server.run()
    else:
        import httpx2
        from fastmcp import FastMCP

        mark(args.mark)
        if args.empty:
            server = FastMCP("empty")
        else:
            document = _read(args.document)
            server = FastMCP.from_openapi(document, client=httpx2.AsyncClient(base_url=args.base_url))
        server.run(show_banner=False)


def mark(path: Path | None) -> None:
    if path is not None:
        path.write_text(f"{time.perf_counter()!r} {time.process_time()!r}\n")


def _read(path: Path) -> Any:
    with open(path, "rb") as f:
        return json.load(f)


if __name__ == "__main__":
    main()
