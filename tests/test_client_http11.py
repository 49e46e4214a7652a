"""toolkit's own HTTP/1.1 client (``_client/http11.py``, ``http11_connection.py``) against servers
that misbehave on the wire, and which HTTP client the Streamable HTTP transport takes when.

The servers are ``tests/support/client_http_raw.py``'s: scripted byte by byte, counting their
connections and keeping every request, so a test sees how many sockets the client used and
whether it sent a request again. No timing is asserted; timeouts are generous.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.support.client_http_raw import RawRequest, raw_server, response, self_signed

from toolkit._client.exchange import ConnectFailed, HttpError, ReadTimeout, lean_reachable
from toolkit._client.http import KEEPALIVE_SECONDS, HttpTransport
from toolkit._client.http11 import Http11Client
from toolkit._client.http11_connection import HIGH_WATER, MAX_HEAD_BYTES, Http11Response

pytestmark = pytest.mark.timeout(60)

WAIT = 20.0
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


@pytest.fixture(autouse=True)
def no_proxy_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)


@contextlib.asynccontextmanager
async def client(**options: Any) -> Any:
    http = Http11Client(timeout=WAIT, keepalive=KEEPALIVE_SECONDS, **options)
    try:
        yield http
    finally:
        await http.aclose()


async def body_of(answer: Any) -> bytes:
    chunks = []
    while chunk := await answer.read_chunk():
        chunks.append(chunk)
    await answer.aclose()
    return b"".join(chunks)


async def post(http: Http11Client, url: str, body: bytes = b"{}", read_timeout: float | None = WAIT) -> bytes:
    answer = await http.request("POST", url, [("Content-Type", "application/json")], body, read_timeout=read_timeout)
    assert answer.status == 200
    return await body_of(answer)


async def echo(request: RawRequest, writer: asyncio.StreamWriter) -> bool:
    """Answers each request with its own body, kept alive (framing chosen by the path)."""
    framing = request.path.strip("/") or "length"
    writer.write(response(200, request.body or b"-", "Content-Type: application/json", framing=framing))
    await writer.drain()
    return framing != "close"


# --- keep-alive and framing -----------------------------------------------------------------------


async def test_one_connection_for_many_requests() -> None:
    async with raw_server(echo) as (base, server), client() as http:
        for i in range(50):
            assert await post(http, base + "/", str(i).encode()) == str(i).encode()
    assert server.connections == 1
    assert len(server.requests) == 50
    head = server.requests[0].headers
    assert head["host"] == base.removeprefix("http://")
    assert head["content-length"] == "1"
    assert head["content-type"] == "application/json"


async def test_concurrent_requests_each_get_a_connection_then_share_them() -> None:
    async with raw_server(echo) as (base, server), client(max_idle=4) as http:
        answers = await asyncio.gather(*(post(http, base + "/", str(i).encode()) for i in range(10)))
        assert answers == [str(i).encode() for i in range(10)]
        opened = server.connections
        for _ in range(10):
            await post(http, base + "/", b"again")
    assert server.connections == opened, "later requests take the idle connections"


@pytest.mark.parametrize("framing", ["length", "chunked", "close"])
async def test_every_body_framing_is_read_whole(framing: str) -> None:
    payload = b'{"x": "' + b"y" * 10_000 + b'"}'
    async with raw_server(echo) as (base, server), client() as http:
        for _ in range(3):
            assert await post(http, f"{base}/{framing}", payload) == payload
    assert server.connections == (3 if framing == "close" else 1), "a body ended by the close ends its connection"


async def test_a_response_not_read_to_its_end_closes_its_connection() -> None:
    async def partly(request: RawRequest, writer: asyncio.StreamWriter) -> bool:
        if request.path != "/partly":
            return await echo(request, writer)
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nfirst\r\n")  # and more, later
        await writer.drain()
        return True

    async with raw_server(partly) as (base, server), client() as http:
        answer = await http.request("POST", base + "/partly", [], b"{}", read_timeout=WAIT)
        assert await answer.read_chunk() == b"first"
        await answer.aclose()  # abandoned half-read: the connection cannot serve another request
        assert await post(http, base + "/", b"next") == b"next"
    assert server.connections == 2


# --- connections the server closed ----------------------------------------------------------------


async def test_a_stale_pooled_connection_is_retried_once_on_a_new_one() -> None:
    """The server closes the kept-alive socket as the second request arrives: sent again, once, on a new one."""

    async def close_on_second(request: RawRequest, writer: asyncio.StreamWriter) -> bool:
        if request.connection == 0 and request.index == 1:
            return False  # closed without a byte of an answer, like a server whose keep-alive ran out
        return await echo(request, writer)

    async with raw_server(close_on_second) as (base, server), client() as http:
        assert await post(http, base + "/", b"one") == b"one"
        assert await post(http, base + "/", b"two") == b"two"
    assert server.connections == 2
    assert [(r.connection, r.body) for r in server.requests] == [(0, b"one"), (0, b"two"), (1, b"two")]


async def test_a_request_is_never_sent_again_after_part_of_its_answer_came() -> None:
    async def half_an_answer(request: RawRequest, writer: asyncio.StreamWriter) -> bool:
        if request.index == 1:
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Le")
            await writer.drain()
            return False
        return await echo(request, writer)

    async with raw_server(half_an_answer) as (base, server), client() as http:
        await post(http, base + "/", b"one")
        with pytest.raises(HttpError, match="closed the connection mid-response"):
            await post(http, base + "/", b"two")
    assert [r.body for r in server.requests] == [b"one", b"two"], "not sent again"


async def test_a_body_cut_short_is_an_error_not_an_end() -> None:
    async def short(request: RawRequest, writer: asyncio.StreamWriter) -> bool:
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly this")
        await writer.drain()
        return False

    async with raw_server(short) as (base, server), client() as http:
        answer = await http.request("POST", base + "/", [], b"{}", read_timeout=WAIT)
        with pytest.raises(HttpError, match="mid-response"):
            await body_of(answer)
    assert len(server.requests) == 1


async def test_a_new_connection_closed_without_an_answer_is_not_retried() -> None:
    async def silent_close(request: RawRequest, writer: asyncio.StreamWriter) -> bool:
        return False

    async with raw_server(silent_close) as (base, server), client() as http:
        with pytest.raises(HttpError, match="without a response"):
            await post(http, base + "/")
    assert len(server.requests) == 1, "only a reused connection may be stale"


async def test_a_connection_closed_while_idle_is_not_used_again() -> None:
    async def answer_then_close(request: RawRequest, writer: asyncio.StreamWriter) -> bool:
        await echo(request, writer)
        return False  # closes right after answering, though the answer said keep-alive

    async with raw_server(answer_then_close) as (base, server), client() as http:
        for i in range(3):
            assert await post(http, base + "/", str(i).encode()) == str(i).encode()
            await asyncio.sleep(0.1)
    assert server.connections == 3
    assert len(server.requests) == 3


async def test_an_idle_connection_past_the_keepalive_is_not_reused() -> None:
    async with raw_server(echo) as (base, server), client() as http:
        await post(http, base + "/", b"one")
        http.keepalive = 0.0  # every idle connection has now been idle too long
        await post(http, base + "/", b"two")
    assert server.connections == 2


# --- untrusted servers ----------------------------------------------------------------------------


async def test_an_oversized_head_fails_the_request() -> None:
    async def huge_head(request: RawRequest, writer: asyncio.StreamWriter) -> bool:
        writer.write(b"HTTP/1.1 200 OK\r\nX-Big: " + b"a" * (MAX_HEAD_BYTES * 2) + b"\r\n\r\n")
        await writer.drain()
        return True

    async with raw_server(huge_head) as (base, _), client() as http:
        with pytest.raises(HttpError, match=f"head is over {MAX_HEAD_BYTES} bytes"):
            await post(http, base + "/")


async def test_a_body_nobody_reads_is_buffered_only_so_far() -> None:
    """An endless body: reading from the socket pauses once ``HIGH_WATER`` bytes wait to be read."""
    endless = asyncio.Event()

    async def flood(request: RawRequest, writer: asyncio.StreamWriter) -> bool:
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
        block = b"x" * 65536
        with contextlib.suppress(ConnectionError):
            while not endless.is_set():
                writer.write(b"%x\r\n%s\r\n" % (len(block), block))
                await writer.drain()
        return False

    async with raw_server(flood) as (base, _), client() as http:
        answer = await http.request("POST", base + "/", [], b"{}", read_timeout=WAIT)
        assert isinstance(answer, Http11Response)
        await asyncio.sleep(0.5)
        assert answer._buffered <= HIGH_WATER + 256 * 1024 + 65536
        assert len(await answer.read_chunk()) > 0, "reading resumes"
        endless.set()
        await answer.aclose()


async def test_a_server_that_trickles_its_head_is_bounded_by_the_read_timeout() -> None:
    async def slow_loris(request: RawRequest, writer: asyncio.StreamWriter) -> bool:
        with contextlib.suppress(ConnectionError):
            for byte in b"HTTP/1.1 200 OK\r\n" + b"X-Slow: " + b"a" * 100_000:
                writer.write(bytes([byte]))
                await writer.drain()
                await asyncio.sleep(0.05)
        return False

    async with raw_server(slow_loris) as (base, _), client() as http:
        with pytest.raises(ReadTimeout):
            await post(http, base + "/", read_timeout=0.5)


async def test_a_server_that_says_nothing_is_bounded_by_the_read_timeout() -> None:
    async def silent(request: RawRequest, writer: asyncio.StreamWriter) -> bool:
        await asyncio.sleep(WAIT * 3)
        return False

    async with raw_server(silent) as (base, _), client() as http:
        with pytest.raises(ReadTimeout):
            await post(http, base + "/", read_timeout=0.3)


async def test_a_line_break_in_a_header_value_is_refused() -> None:
    async with raw_server(echo) as (base, server), client() as http:
        with pytest.raises(HttpError, match="line break"):
            await http.request("POST", base + "/", [("X-Evil", "a\r\nX-Injected: 1")], b"{}", read_timeout=WAIT)
    assert server.requests == []


async def test_connection_refused() -> None:
    async with raw_server(echo) as (base, _):
        pass  # closed: nothing listens on that port any more
    async with client() as http:
        with pytest.raises(ConnectFailed):
            await post(http, base + "/")


# --- TLS ------------------------------------------------------------------------------------------


def server_tls(cert: Path, key: Path) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    return context


async def test_https_trusts_ssl_cert_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cert, key = self_signed(tmp_path)
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    async with raw_server(echo, tls=server_tls(cert, key)) as (base, server), client() as http:
        assert base.startswith("https://")
        for _ in range(3):
            assert await post(http, base + "/", b"over tls") == b"over tls"
    assert server.connections == 1


async def test_https_with_a_given_ssl_context(tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path)
    trusting = ssl.create_default_context(cafile=str(cert))
    async with raw_server(echo, tls=server_tls(cert, key)) as (base, _), client(ssl_context=trusting) as http:
        assert await post(http, base + "/", b"ok") == b"ok"


async def test_https_refuses_an_untrusted_certificate(tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path)
    async with raw_server(echo, tls=server_tls(cert, key)) as (base, _), client() as http:
        with pytest.raises(ConnectFailed, match="CERTIFICATE_VERIFY_FAILED"):
            await post(http, base + "/")


# --- redirects ------------------------------------------------------------------------------------


async def test_redirects_as_httpx_follows_them() -> None:
    async def redirecting(request: RawRequest, writer: asyncio.StreamWriter) -> bool:
        if request.path == "/307":
            writer.write(response(307, b"", "Location: /mcp/"))
        elif request.path == "/303":
            writer.write(response(303, b"", "Location: /mcp/"))
        else:
            writer.write(response(200, f"{request.method} {request.body.decode()}".encode()))
        await writer.drain()
        return True

    async with raw_server(redirecting) as (base, server), client() as http:
        assert await post(http, base + "/307", b"body") == b"POST body", "307: method and body kept"
        assert await post(http, base + "/303", b"body") == b"GET ", "303: a GET without the body"
    assert server.connections == 1
    assert [r.path for r in server.requests] == ["/307", "/mcp/", "/303", "/mcp/"]


# --- which client the transport takes -------------------------------------------------------------


@pytest.fixture
def deliver() -> Any:
    async def ignore(message: dict[str, Any]) -> None:
        pass

    return ignore


@contextlib.contextmanager
def environment(monkeypatch: pytest.MonkeyPatch, **variables: str) -> Iterator[None]:
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    yield


@pytest.mark.parametrize(
    ("url", "variables", "lean"),
    [
        ("http://127.0.0.1:8000/mcp", {}, True),
        ("https://example.com/mcp", {}, True),
        ("http://127.0.0.1:8000/mcp", {"HTTP_PROXY": "http://proxy:3128"}, False),
        ("http://127.0.0.1:8000/mcp", {"http_proxy": "http://proxy:3128"}, False),
        ("https://example.com/mcp", {"HTTP_PROXY": "http://proxy:3128"}, True),
        ("https://example.com/mcp", {"HTTPS_PROXY": "http://proxy:3128"}, False),
        ("https://example.com/mcp", {"ALL_PROXY": "http://proxy:3128"}, False),
        ("http://127.0.0.1:8000/mcp", {"HTTP_PROXY": "http://proxy:3128", "NO_PROXY": "127.0.0.1"}, True),
        ("https://example.com/mcp", {"HTTPS_PROXY": "http://proxy:3128", "NO_PROXY": ".example.com"}, True),
        ("http://user:secret@example.com/mcp", {}, False),
        ("http://exämple.com/mcp", {}, False),
        ("ftp://example.com/mcp", {}, False),
    ],
)
async def test_which_client_a_url_takes(
    url: str, variables: dict[str, str], lean: bool, monkeypatch: pytest.MonkeyPatch, deliver: Any
) -> None:
    with environment(monkeypatch, **variables):
        assert lean_reachable(url) is lean
        transport = HttpTransport(url)
        await transport.open(deliver)
        try:
            assert transport.lean is lean
        finally:
            await transport.close()


async def test_auth_or_a_users_client_takes_httpx(deliver: Any) -> None:
    class Nothing(httpx.Auth):
        pass

    for options in ({"auth": Nothing()}, {"http_client": httpx.AsyncClient()}):
        transport = HttpTransport("http://127.0.0.1:8000/mcp", **options)
        await transport.open(deliver)
        try:
            assert transport.lean is False
        finally:
            await transport.close()
            if "http_client" in options:
                await options["http_client"].aclose()
