"""A canary HTTP server on 127.0.0.1: it serves a schema to anyone who asks, and counts them.

Tests that must prove nothing is ever fetched (a remote ``$ref``, an unknown ``$schema``)
point at it and assert that ``hits`` stays empty.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Canary:
    url: str
    hits: list[str]


@contextlib.contextmanager
def serve_canary() -> Iterator[Canary]:
    hits: list[str] = []
    body = b'{"type": "string"}'

    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            hits.append(f"{self.command} {self.path}")
            self.send_response(200)
            self.send_header("Content-Type", "application/schema+json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = do_HEAD = _serve

        def log_message(self, format: str, *args: Any) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield Canary(f"http://127.0.0.1:{server.server_address[1]}", hits)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
