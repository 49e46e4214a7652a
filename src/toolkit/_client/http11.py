"""HTTP/1.1 for the client's hot path: asyncio protocols, ``httptools`` parsing, a keep-alive pool.

An MCP client POSTs small JSON bodies and reads JSON or SSE answers, over and over, to one
endpoint. This speaks exactly that (RFC 9112): a request is one ``write`` of a head built as
bytes and a ``Content-Length`` body; a response's body is delimited by ``Content-Length``, chunked
coding, or the connection's end, and handed on as it arrives (an SSE stream is read event by
event). No HTTP/2, no compression (none is asked for), no proxies (``exchange.lean_reachable``).

- Connections are kept per origin while idle for up to ``keepalive`` seconds (under the
  shortest keep-alive servers use, uvicorn's 5 s), at most ``max_idle`` of them, and at most
  ``max_connections`` open at once (a request waits up to ``timeout`` for one to free up).
  A connection whose response was not read to its end is closed, never reused.
- A reused connection that fails before any byte of its response came was closed by the
  server while idle (a stale socket): the request is sent once more, on a new connection. Once
  a byte of a response has arrived, nothing is resent.
- Redirects are followed as httpx follows them (``follow_redirects=True``): 307/308 keep the
  method and body (a mount's ``/mcp`` → ``/mcp/``), 301/302 turn a POST into a GET and 303 any
  method, at most 20; ``Authorization`` is not sent to another origin.
- Cookies the server sets are sent back (a load balancer's sticky-session cookie), as httpx's
  cookie jar does for the one origin a transport talks to.
- TLS: ``ssl.create_default_context()``, which reads ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` as
  OpenSSL does; without them, certifi's bundle is trusted too when it is installed (what httpx trusts).
- One connection, and the bounds on what an untrusted server sends on it: ``http11_connection``.
"""

from __future__ import annotations

import asyncio
import functools
import os
import ssl
import time
import urllib.parse
from collections.abc import Callable
from email.utils import parsedate_to_datetime
from typing import Final

from .exchange import ConnectFailed, Headers, HttpError, HttpTimeout
from .http11_connection import Connection, Event, Http11Response, Origin, RemoteClosed

MAX_REDIRECTS: Final = 20
REDIRECTS: Final = frozenset({301, 302, 303, 307, 308})
_SKIPPED: Final = frozenset({"content-length", "transfer-encoding", "connection"})
"""Headers this module writes itself (a caller's would contradict the framing)."""
_HEADS_KEPT: Final = 256


class _Target:
    """A URL as a request needs it: its origin, the request target, the ``Host`` header."""

    __slots__ = ("host_header", "origin", "target")

    def __init__(self, url: str) -> None:
        parts = urllib.parse.urlsplit(url)
        scheme = parts.scheme.lower()
        default = 443 if scheme == "https" else 80
        port = parts.port or default
        host = parts.hostname or ""
        self.origin: Origin = (scheme, host, port)
        shown = f"[{host}]" if ":" in host else host
        self.host_header = shown if port == default else f"{shown}:{port}"
        self.target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


class Http11Client:
    """Requests over kept-alive HTTP/1.1 connections (see the module's docstring); one per transport."""

    def __init__(
        self,
        *,
        timeout: float,
        keepalive: float,
        max_idle: int = 8,
        max_connections: int = 100,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self.timeout = timeout
        """Seconds to connect, to send a request, and to wait for a free connection."""
        self.keepalive = keepalive
        self.max_idle = max_idle
        self.max_connections = max_connections
        self._ssl_context = ssl_context
        self._idle: dict[Origin, list[Connection]] = {}
        self._open: set[Connection] = set()
        self._slot_waiters: list[asyncio.Future[None]] = []
        self._targets: dict[str, _Target] = {}
        self._cookies: dict[str, dict[str, str]] = {}
        self._heads: dict[int, tuple[Headers, _Target, str, bytes]] = {}
        """The start of each request head made so far (``_head``), up to ``_HEADS_KEPT``."""
        self._closed = False

    async def request(
        self,
        method: str,
        url: str,
        headers: Headers,
        body: bytes | None = None,
        *,
        read_timeout: float | None,
        on_sent: Callable[[], None] | None = None,
    ) -> Http11Response:
        for _ in range(MAX_REDIRECTS + 1):
            target = self._targets.get(url)
            if target is None:
                target = self._targets[url] = _Target(url)
            response = await self._exchange(target, self._head(target, method, headers, body), read_timeout, on_sent)
            on_sent = None
            location = response.headers.get("location") if response.status in REDIRECTS else None
            if location is None:
                return response
            await response.aclose()
            url, method, body, headers = _redirect(url, location, response.status, method, body, headers)
        raise HttpError(f"more than {MAX_REDIRECTS} redirects")

    def send_now(
        self,
        method: str,
        url: str,
        headers: Headers,
        body: bytes | None,
        watcher: Callable[[Http11Response, Event], bool],
    ) -> tuple[Connection, Http11Response] | None:
        """Write a request on a kept-alive connection now, within the caller's step; ``None`` if none is idle.

        Nobody reads the response: ``watcher`` is told of it from the connection's callbacks (see
        ``Http11Response.watcher``) and takes it over, to finish it itself (``Connection.done``)
        or to hand it to a reader (``read_chunk``, ``aclose``). A redirect is not followed, nor a
        stale connection retried: the watcher sees the response as it came. The caller waits for
        ``Connection.drain`` if the request must be out before it goes on.
        """
        target = self._targets.get(url)
        if target is None:
            target = self._targets[url] = _Target(url)
        data = self._head(target, method, headers, body)
        connection = self._idle_connection(target.origin)
        if connection is None:
            return None
        response = connection.start(data, None)
        response.watcher = watcher
        return connection, response

    async def aclose(self) -> None:
        self._closed = True
        for connection in list(self._open):
            connection.close()

    # --- one request on one connection -------------------------------------------------------------

    def _head(self, target: _Target, method: str, headers: Headers, body: bytes | None) -> bytes:
        """The request's head and body, as the one write that sends them.

        The part before the cookies and ``Content-Length`` is made once per target, method and
        headers when the headers come as a tuple (the transport's own, the same every time).
        """
        kept = type(headers) is tuple
        start = None
        if kept:  # known by identity (hashing the headers would cost more than the lookup saves)
            entry = self._heads.get(id(headers))
            if entry is not None and entry[0] is headers and entry[1] is target and entry[2] == method:
                start = entry[3]
        if start is None:
            start = self._head_start(target, method, headers)
            if kept:
                if len(self._heads) >= _HEADS_KEPT:
                    self._heads.clear()
                self._heads[id(headers)] = (headers, target, method, start)  # headers held: its id stays its own
        parts = [start]
        cookies = self._cookies.get(target.origin[1])
        if cookies:
            line = "Cookie: " + "; ".join(f"{name}={value}" for name, value in cookies.items()) + "\r\n"
            try:
                parts.append(line.encode("ascii"))
            except UnicodeEncodeError as exc:
                raise HttpError(f"a request header is not ASCII: {exc}") from None
        if body is not None:
            parts.append(b"Content-Length: %d\r\n\r\n" % len(body))
            if body:
                parts.append(body)
        else:
            parts.append(b"\r\n")
        return b"".join(parts)

    @staticmethod
    def _head_start(target: _Target, method: str, headers: Headers) -> bytes:
        """The request line, ``Host`` and the caller's headers (checked), with a ``User-Agent``."""
        host = target.host_header
        lines = []
        agent = True
        for name, value in headers:
            lower = name.lower()
            if lower in _SKIPPED:
                continue
            if "\r" in value or "\n" in value:
                raise HttpError(f"the value of header {name} has a line break")
            if lower == "host":
                host = value
                continue
            agent = agent and lower != "user-agent"
            lines.append(f"{name}: {value}\r\n")
        if agent:
            lines.append("User-Agent: toolkit-mcp\r\n")
        try:
            return f"{method} {target.target} HTTP/1.1\r\nHost: {host}\r\n{''.join(lines)}".encode("ascii")
        except UnicodeEncodeError as exc:
            raise HttpError(f"a request header is not ASCII: {exc}") from None

    async def _exchange(
        self, target: _Target, data: bytes, read_timeout: float | None, on_sent: Callable[[], None] | None
    ) -> Http11Response:
        for attempt in (1, 2):
            connection = self._idle_connection(target.origin) or await self._connect(target.origin)
            try:
                response = connection.start(data, read_timeout)
                await connection.drain(self.timeout)
                if on_sent is not None:
                    on_sent()
                    on_sent = None
                await response.wait_head()
            except RemoteClosed as exc:
                connection.close()
                if attempt == 1 and connection.reused and exc.before_response:
                    continue  # a stale socket: the server closed it while it was idle
                raise
            except BaseException:
                connection.close()
                raise
            return response
        raise AssertionError("unreachable")

    # --- the pool --------------------------------------------------------------------------------------

    def _idle_connection(self, origin: Origin) -> Connection | None:
        idle = self._idle.get(origin)
        if not idle:
            return None
        oldest = time.monotonic() - self.keepalive
        while idle:
            connection = idle.pop()
            transport = connection.transport
            if connection.lost or connection.idle_since < oldest or transport is None or transport.is_closing():
                connection.close()
                continue
            connection.reused = True
            return connection
        return None

    async def _connect(self, origin: Origin) -> Connection:
        if self._closed:
            raise HttpError("the HTTP client was closed")
        while len(self._open) >= self.max_connections and not self._close_an_idle():
            await self._wait_for_a_slot()
        scheme, host, port = origin
        connection = Connection(self, origin)
        self._open.add(connection)
        secure = scheme == "https"
        try:
            async with asyncio.timeout(self.timeout):
                await asyncio.get_running_loop().create_connection(
                    lambda: connection,
                    host,
                    port,
                    ssl=(self._ssl_context or default_ssl_context()) if secure else None,
                    server_hostname=host if secure else None,
                )
        except TimeoutError:
            connection.close()
            raise HttpTimeout(f"connecting took longer than {self.timeout:g} s") from None
        except OSError as exc:  # refused, unknown host, TLS refused (ssl.SSLError is an OSError)
            connection.close()
            raise ConnectFailed(str(exc) or type(exc).__name__) from exc
        except BaseException:
            connection.close()
            raise
        return connection

    def _close_an_idle(self) -> bool:
        for idle in self._idle.values():
            if idle:
                idle.pop(0).close()
                return True
        return False

    async def _wait_for_a_slot(self) -> None:
        waiter = asyncio.get_running_loop().create_future()
        self._slot_waiters.append(waiter)
        try:
            async with asyncio.timeout(self.timeout):
                await waiter
        except TimeoutError:
            raise HttpTimeout(f"no connection came free within {self.timeout:g} s") from None
        finally:
            if waiter in self._slot_waiters:
                self._slot_waiters.remove(waiter)

    def release(self, connection: Connection) -> None:
        """A connection whose response was read to its end: kept for the next request."""
        if self._closed:
            connection.close()
            return
        connection.idle_since = now = time.monotonic()
        idle = self._idle.setdefault(connection.origin, [])
        while idle and (len(idle) >= self.max_idle or idle[0].idle_since < now - self.keepalive):
            idle.pop(0).close()
        idle.append(connection)
        self._wake_a_waiter()

    def forget(self, connection: Connection) -> None:
        """A connection that closed: it no longer counts, nor waits for reuse."""
        if connection in self._open:
            self._open.discard(connection)
            idle = self._idle.get(connection.origin)
            if idle and connection in idle:
                idle.remove(connection)
            self._wake_a_waiter()

    def _wake_a_waiter(self) -> None:
        while self._slot_waiters:
            waiter = self._slot_waiters.pop(0)
            if not waiter.done():
                waiter.set_result(None)
                return

    def remember_cookies(self, host: str, response: Http11Response) -> None:
        """Keep the cookies a response sets, for the host that set them (``Max-Age``/``Expires`` end one)."""
        if not response.cookies:
            return
        jar = self._cookies.setdefault(host, {})
        for text in response.cookies:
            pair, _, attributes = text.partition(";")
            name, equals, value = pair.partition("=")
            name = name.strip()
            if not equals or not name:
                continue
            if _expired(attributes):
                jar.pop(name, None)
            else:
                jar[name] = value.strip()


def _expired(attributes: str) -> bool:
    for attribute in attributes.split(";"):
        key, _, value = attribute.strip().partition("=")
        key = key.lower()
        try:
            if key == "max-age":
                return int(value) <= 0
            if key == "expires":
                return parsedate_to_datetime(value).timestamp() <= time.time()
        except (ValueError, TypeError):
            continue
    return False


def _redirect(
    url: str, location: str, status: int, method: str, body: bytes | None, headers: Headers
) -> tuple[str, str, bytes | None, Headers]:
    """The request a redirect asks for, as httpx makes it (``httpx.Client._build_redirect_request``)."""
    new_url = urllib.parse.urljoin(url, location)
    old, new = urllib.parse.urlsplit(url), urllib.parse.urlsplit(new_url)
    if new.scheme not in ("http", "https") or not new.hostname:
        raise HttpError(f"a redirect to {new_url!r}, which is not an http(s) URL")
    changes = (status in (302, 303) and method != "HEAD") or (status == 301 and method == "POST")
    new_method = "GET" if changes else method
    dropped = set()
    if new_method != method:
        body = None
        dropped |= {"content-length", "transfer-encoding", "content-type"}
    same_origin = (old.scheme, old.hostname, old.port) == (new.scheme, new.hostname, new.port)
    upgrade = (
        old.scheme == "http"
        and new.scheme == "https"
        and old.hostname == new.hostname
        and old.port in (80, None)
        and new.port in (443, None)
    )
    if not (same_origin or upgrade):
        dropped.add("authorization")
    kept = [(name, value) for name, value in headers if name.lower() not in dropped and name.lower() != "host"]
    return new_url, new_method, body, kept


@functools.lru_cache(maxsize=4)
def _ssl_context(cert_file: str | None, cert_dir: str | None) -> ssl.SSLContext:
    context = ssl.create_default_context()  # the system's CAs, or SSL_CERT_FILE / SSL_CERT_DIR
    if cert_file is None and cert_dir is None:
        try:
            import certifi  # noqa: PLC0415  (httpx's bundle, when it is there)
        except ImportError:
            pass
        else:
            context.load_verify_locations(certifi.where())
    return context


def default_ssl_context() -> ssl.SSLContext:
    """The TLS settings of an https connection: verified against the trusted CAs, host name checked."""
    return _ssl_context(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))
