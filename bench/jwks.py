"""The authorization server's key set, served by the harness for the ``auth`` scenario.

A stdlib ``http.server`` on 127.0.0.1 (a free port) in a daemon thread of the harness process:
``GET /jwks.json`` answers the document once it is set (503 before), anything else 404. The
server under test fetches it once and caches it, so this thread sits idle while calls are
measured, and its CPU is the harness's, not the server's. Always stopped by ``close`` (or the
``with`` block).
"""

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Self

PATH = "/jwks.json"


class JwksServer:
    def __init__(self) -> None:
        self.document: bytes | None = None
        self.fetches = 0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path.split("?", 1)[0] != PATH:
                    self.send_error(404)
                    return
                document = owner.document
                if document is None:
                    self.send_error(503, "key set not ready")
                    return
                owner.fetches += 1
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(document)))
                self.end_headers()
                self.wfile.write(document)

            def log_message(self, format: str, *args: object) -> None:
                pass  # keep the benchmark's output to the table

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.port = int(self._httpd.server_address[1])
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="bench-jwks", daemon=True)
        self._thread.start()

    @property
    def issuer(self) -> str:
        """The issuer the tokens name (and the server lists in ``authorization_servers``)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def uri(self) -> str:
        return f"{self.issuer}{PATH}"

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()
