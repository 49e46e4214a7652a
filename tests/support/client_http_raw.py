"""An HTTP/1.1 server a test scripts byte by byte, for the client's own HTTP/1.1 client (``http11``).

``RawServer(answer)`` listens on 127.0.0.1 (TLS with ``ssl``); for every request it reads (head
and ``Content-Length`` body) it awaits ``answer(request, writer)``, which writes whatever it
likes and returns whether to keep the connection open for another request. It counts the
connections it accepted and keeps every request, so a test sees what reached the wire: how many
sockets the client used, and whether a request was sent again.

``ASGI`` helpers for the transport's tests against a real toolkit server: ``Redirecting``
(a 307 from one path to another), ``Sticky`` (a cookie set on every answer, as a load balancer does).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import ipaddress
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class RawRequest:
    connection: int
    """Which connection it came on (0 for the first accepted)."""
    index: int
    """Which request it is on that connection (0 for the first)."""
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


Answer = Callable[[RawRequest, asyncio.StreamWriter], Awaitable[bool]]


@dataclass
class RawServer:
    answer: Answer
    connections: int = 0
    requests: list[RawRequest] = field(default_factory=list)
    handlers: dict[asyncio.Task[Any], asyncio.StreamWriter] = field(default_factory=dict)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        number = self.connections
        self.connections += 1
        task = asyncio.current_task()
        assert task is not None
        self.handlers[task] = writer
        try:
            for index in range(1_000_000):
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                request_line, *lines = head.decode("latin-1").split("\r\n")
                method, path, _ = request_line.split(" ", 2)
                headers = {}
                for line in lines:
                    if line:
                        name, _, value = line.partition(":")
                        headers[name.strip().lower()] = value.strip()
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                request = RawRequest(number, index, method, path, headers, body)
                self.requests.append(request)
                if not await self.answer(request, writer):
                    return
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()


@contextlib.asynccontextmanager
async def raw_server(answer: Answer, *, tls: ssl.SSLContext | None = None) -> AsyncIterator[tuple[str, RawServer]]:
    """A ``RawServer`` listening on a free port: its base URL (``http://`` or ``https://127.0.0.1:port``)."""
    server = RawServer(answer)
    listening = await asyncio.start_server(server.handle, "127.0.0.1", 0, ssl=tls)
    port = listening.sockets[0].getsockname()[1]
    scheme = "https" if tls is not None else "http"
    try:
        yield f"{scheme}://127.0.0.1:{port}", server
    finally:
        listening.close()
        for task in server.handlers:
            task.cancel()
        if server.handlers:
            await asyncio.wait(server.handlers, timeout=5)


def response(status: int, body: bytes, *headers: str, framing: str = "length") -> bytes:
    """A response's bytes; ``framing``: ``length`` (Content-Length), ``chunked`` (one chunk a 7 bytes), ``close``."""
    lines = [f"HTTP/1.1 {status} {'OK' if status == 200 else 'Status'}", *headers]
    if framing == "length":
        lines.append(f"Content-Length: {len(body)}")
        payload = body
    elif framing == "chunked":
        lines.append("Transfer-Encoding: chunked")
        parts = [body[i : i + 7] for i in range(0, len(body), 7)]
        payload = b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in parts) + b"0\r\n\r\n"
    else:
        lines.append("Connection: close")
        payload = body
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + payload


def self_signed(directory: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 signed by itself, and its key: (cert.pem, key.pem) in ``directory``."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_path, key_path


class Redirecting:
    """An ASGI app that answers ``moved`` with a 307 to ``to`` (method and body kept), else hands on to ``app``."""

    def __init__(self, app: Any, moved: str, to: str) -> None:
        self.app, self.moved, self.to = app, moved, to

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"] == self.moved:
            await send({"type": "http.response.start", "status": 307, "headers": [(b"location", self.to.encode())]})
            await send({"type": "http.response.body", "body": b""})
            return
        await self.app(scope, receive, send)


class Sticky:
    """An ASGI app that sets cookie ``lb=node-1`` on every answer, as a load balancer pins a client."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_cookie(message: Any) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message["headers"], (b"set-cookie", b"lb=node-1; Path=/")]}
            await send(message)

        await self.app(scope, receive, with_cookie)


@contextlib.asynccontextmanager
async def serve_tls(app: Any, cert: Path, key: Path) -> AsyncIterator[str]:
    """``app`` under uvicorn over TLS on 127.0.0.1 (``cert``, ``key``): its base URL, ``https://127.0.0.1:port``."""
    import socket

    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        app, lifespan="on", log_level="warning", ssl_certfile=str(cert), ssl_keyfile=str(key), access_log=False
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        async with asyncio.timeout(10):
            while not server.started:
                if task.done():
                    task.result()
                    raise RuntimeError("uvicorn stopped before it started")
                await asyncio.sleep(0.005)
        yield f"https://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        try:
            async with asyncio.timeout(10):
                await asyncio.shield(task)
        except TimeoutError:
            server.force_exit = True
            task.cancel()
