"""``HttpTransport`` against real servers over a socket: a toolkit server in both eras, and bad servers.

Each test starts uvicorn on 127.0.0.1 in this event loop (``tests.http_support.serve``) and drives
it with ``ClientSession(HttpTransport(url))``: JSON and SSE answers, pagination, the server's
questions over the POST stream and the legacy GET stream, resumption with ``Last-Event-ID``,
``Mcp-Session-Id`` and ``DELETE``, the modern headers, cancellation by closing a request's stream,
and servers that misbehave (``tests/support/client_http_bad.py``).

Every test runs on both of the transport's HTTP clients (the ``http_path`` fixture): toolkit's
own HTTP/1.1 client (``lean``, what a plain URL takes) and httpx (what OAuth, a user's
``http_client`` or a proxy take), so the session sees the same either way.

Specs: ``docs/2026-07-28/basic/transports/streamable-http.mdx`` and
``docs/2025-11-25/basic/transports.mdx`` (Streamable HTTP); ``docs/2026-07-28/basic/patterns/
cancellation.mdx`` and ``subscriptions.mdx``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator, Mapping
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.http_support import Running, free_port, serve
from tests.support.client_http_bad import GIANT_BYTES, BadServer
from tests.support.client_http_raw import Redirecting, Sticky, self_signed, serve_tls
from tests.support.client_http_recorder import Recorder
from tests.test_http import Probe, make_server

from toolkit import EventStore
from toolkit._client import http as http_module
from toolkit._client.http import HttpTransport
from toolkit._client.http11 import Http11Client
from toolkit._client.session import ClientSession
from toolkit._client.sse import SseParser
from toolkit._client.transport import TransportClosed
from toolkit._errors import ClientError

pytestmark = pytest.mark.timeout(60)

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
WAIT = 20.0
"""Generous: these tests must pass on a loaded machine."""
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


@pytest.fixture(autouse=True, params=["lean", "httpx"])
def http_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Run the test on one HTTP client; afterwards, check every transport took that one."""
    path: str = request.param
    for name in PROXY_VARIABLES:  # a proxy in the test's environment would decide for us
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    if path == "httpx":
        monkeypatch.setattr(http_module, "lean_reachable", lambda url: False)
    chosen: list[str] = []
    original = HttpTransport._http_client_for_url

    def recording(self: HttpTransport) -> Any:
        client = original(self)
        chosen.append("lean" if isinstance(client, Http11Client) else "httpx")
        return client

    monkeypatch.setattr(HttpTransport, "_http_client_for_url", recording)
    yield path
    assert set(chosen) <= {path}, f"a transport took {chosen}, not {path}"


class Spy(HttpTransport):
    """An ``HttpTransport`` that keeps every message it sends (a test needs the ids of its requests)."""

    def __init__(self, url: str, **options: Any) -> None:
        super().__init__(url, **options)
        self.sent: list[dict[str, Any]] = []

    async def send(self, message: dict[str, Any], *, headers: Mapping[str, str] | None = None) -> None:
        self.sent.append(message)
        await super().send(message, headers=headers)

    def request_id(self, method: str, name: str | None = None) -> Any:
        for message in reversed(self.sent):
            if message.get("method") == method and (name is None or message["params"].get("name") == name):
                return message["id"]
        raise AssertionError(f"no {method} was sent")


@contextlib.asynccontextmanager
async def toolkit_server(probe: Probe | None = None, **options: Any) -> AsyncIterator[tuple[Running, Recorder]]:
    """A toolkit server over HTTP (``tests/test_http.py``'s, two tools a page), its requests recorded."""
    app = make_server(probe if probe is not None else Probe(), page_size=2).http_app(**options)
    recorder = Recorder(app)
    async with serve(recorder) as running:
        yield running, recorder


async def wait_for(condition: Any, what: str) -> None:
    async with asyncio.timeout(WAIT):
        while not condition():
            await asyncio.sleep(0.01)


def text(result: dict[str, Any]) -> str:
    block = result["content"][0]
    assert block["type"] == "text", result
    value: str = block["text"]
    return value


# --- a toolkit server in every era ------------------------------------------------------------


@pytest.mark.parametrize("version", ["2025-03-26", LEGACY, MODERN, "auto"])
async def test_list_and_call_in_every_era(version: str) -> None:
    seen: list[dict[str, Any]] = []
    async with toolkit_server() as (running, _):
        transport = Spy(running.url)
        session = ClientSession(transport, protocol_version=version, on_message=seen.append, log_level="info")
        async with session:
            assert session.protocol_version == (MODERN if version == "auto" else version)
            tools = await session.list_tools()
            names = [tool["name"] for tool in tools]
            assert len(set(names)) == len(names)
            assert {"echo", "steps", "ask_name", "hang", "poll_me", "regional"} <= set(names)
            pages = [message for message in transport.sent if message.get("method") == "tools/list"]
            assert len(pages) == -(-len(names) // 2), "two tools a page: every page was asked for"
            echoed = await session.call_tool("echo", {"text": "héllo"})  # a plain JSON answer
            assert text(echoed) == "héllo"
            stepped = await session.call_tool("steps", {"n": 3}, meta={"progressToken": "t"})  # an SSE answer
            assert text(stepped) == "3"
    progress = [m["params"]["progress"] for m in seen if m["method"] == "notifications/progress"]
    assert progress == [1, 2, 3], "each progress notification, in order, before the response"
    logged = [m["params"]["data"] for m in seen if m["method"] == "notifications/message"]
    assert logged == [f"step {i} of 3" for i in (1, 2, 3)]


async def test_many_calls_at_once_each_get_their_own_answer() -> None:
    async with (
        toolkit_server() as (running, _),
        ClientSession(HttpTransport(running.url), protocol_version=MODERN) as session,
    ):
        calls = [session.call_tool("echo", {"text": str(i)}) for i in range(20)]
        results = await asyncio.gather(*calls)
    assert [text(result) for result in results] == [str(i) for i in range(20)]


async def test_legacy_session_id_is_sent_and_deleted_on_close() -> None:
    async with toolkit_server() as (running, recorder):
        transport = HttpTransport(running.url)
        async with ClientSession(transport, protocol_version=LEGACY) as session:
            await session.call_tool("echo", {"text": "x"})
            session_id = transport.session_id
            assert session_id
            await wait_for(lambda: "GET" in recorder.methods(), "the GET stream")
        initialize, *later = recorder.seen
        assert initialize.method == "POST"
        assert "mcp-session-id" not in initialize.headers, "initialize opens the session"
        assert all(seen.headers.get("mcp-session-id") == session_id for seen in later)
        assert all(seen.headers.get("mcp-protocol-version") == LEGACY for seen in later)
        assert recorder.methods()[-1] == "DELETE", "close() ends the session"
        assert recorder.methods().count("DELETE") == 1
        await transport.close()  # idempotent
        assert recorder.methods().count("DELETE") == 1
        gone = app_sessions(recorder)
        assert session_id not in gone, "the server ended the session"


def app_sessions(recorder: Recorder) -> dict[str, Any]:
    sessions: dict[str, Any] = recorder.app.endpoint.sessions.local
    return sessions


async def test_modern_headers_on_the_wire_and_no_legacy_machinery() -> None:
    async with toolkit_server() as (running, recorder):
        transport = HttpTransport(running.url)
        async with ClientSession(transport, protocol_version=MODERN) as session:
            assert text(await session.call_tool("echo", {"text": "x"})) == "x"
            await session.list_tools()
            assert text(await session.call_tool("regional", {"query": "q", "region": "eu-north1"})) == "eu-north1: q"
        assert set(recorder.methods()) == {"POST"}, "2026-07-28: no GET stream, no DELETE"
        calls = [seen.headers for seen in recorder.seen if seen.headers.get("mcp-method") == "tools/call"]
        assert [headers["mcp-name"] for headers in calls] == ["echo", "regional"]
        assert all(headers["mcp-protocol-version"] == MODERN for headers in calls)
        assert all("mcp-session-id" not in headers for headers in calls)
        assert calls[-1].get("mcp-param-region") == "eu-north1", "the tool's x-mcp-header parameter"
        assert transport.session_id is None


async def test_user_headers_go_on_every_request() -> None:
    async with toolkit_server() as (running, recorder):
        transport = HttpTransport(running.url, headers={"X-Tenant": "acme"})
        async with ClientSession(transport, protocol_version=LEGACY) as session:
            await session.call_tool("echo", {"text": "x"})
        assert recorder.seen
        assert all(seen.headers.get("x-tenant") == "acme" for seen in recorder.seen)


async def test_sequential_calls_share_one_connection() -> None:
    async with toolkit_server() as (running, recorder):
        async with ClientSession(HttpTransport(running.url), protocol_version=MODERN) as session:
            for i in range(30):
                assert text(await session.call_tool("echo", {"text": str(i)})) == str(i)
        assert len(recorder.seen) >= 30
        assert recorder.connections() == 1, "one kept-alive connection for every call"


async def test_a_redirect_is_followed_with_its_method_and_body() -> None:
    """A 307 (a mount's ``/mcp`` → ``/mcp/``) is followed: the POST again, with its body, where it points."""
    app = make_server(Probe(), page_size=2).http_app()
    recorder = Recorder(Redirecting(app, "/moved", "/mcp"))
    async with (
        serve(recorder) as running,
        ClientSession(HttpTransport(running.base + "/moved"), protocol_version=LEGACY) as session,
    ):
        assert text(await session.call_tool("echo", {"text": "there"})) == "there"
    assert len([seen for seen in recorder.seen if seen.method == "POST"]) >= 4, "each POST asked twice"


async def test_cookies_the_server_sets_are_sent_back() -> None:
    """A load balancer's sticky-session cookie comes back on later requests, as httpx's jar sends it."""
    app = make_server(Probe(), page_size=2).http_app()
    recorder = Recorder(Sticky(app))
    async with (
        serve(recorder) as running,
        ClientSession(HttpTransport(running.url, get_stream=False), protocol_version=LEGACY) as session,
    ):
        await session.call_tool("echo", {"text": "x"})
    first, *later = recorder.seen
    assert "cookie" not in first.headers
    assert later and all(seen.headers.get("cookie") == "lb=node-1" for seen in later)


async def test_https_with_the_certificate_in_ssl_cert_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cert, key = self_signed(tmp_path)
    app = make_server(Probe(), page_size=2).http_app()
    async with serve_tls(app, cert, key) as base:
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))
        async with ClientSession(HttpTransport(base + "/mcp"), protocol_version=MODERN) as session:
            assert text(await session.call_tool("echo", {"text": "secret"})) == "secret"


async def test_https_with_an_untrusted_certificate_cannot_connect(tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path)
    app = make_server(Probe(), page_size=2).http_app()
    async with serve_tls(app, cert, key) as base:
        session = ClientSession(HttpTransport(base + "/mcp"), protocol_version=MODERN)
        with pytest.raises(ConnectionError, match=r"cannot connect to the MCP server at .*CERTIFICATE_VERIFY_FAILED"):
            await open_and_list(session)
        await session.close()


# --- the server's questions -------------------------------------------------------------------


async def answer_name(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {"name": "Ada"}}


@pytest.mark.parametrize("version", [LEGACY, MODERN])
async def test_elicitation_on_the_request_stream(version: str) -> None:
    """Legacy: the server's request on the POST's SSE stream; modern: an input_required round."""
    async with (
        toolkit_server() as (running, _),
        ClientSession(
            HttpTransport(running.url), protocol_version=version, handlers={"elicitation/create": answer_name}
        ) as session,
    ):
        assert text(await session.call_tool("ask_name")) == "Hello, Ada"


async def test_legacy_elicitation_over_the_get_stream() -> None:
    """JSON answers only: the server's request comes on the session's GET stream (2025-11-25)."""
    seen: list[dict[str, Any]] = []
    async with toolkit_server(json_response=True) as (running, recorder):
        transport = HttpTransport(running.url)
        async with ClientSession(
            transport, protocol_version=LEGACY, handlers={"elicitation/create": answer_name}, on_message=seen.append
        ) as session:
            await wait_for(lambda: any(s.standalone is not None for s in app_sessions(recorder).values()), "GET")
            assert text(await session.call_tool("ask_name")) == "Hello, Ada"
        assert [m["method"] for m in seen] == ["elicitation/create"]
        get = next(seen for seen in recorder.seen if seen.method == "GET")
        assert get.headers["accept"] == "text/event-stream"
        assert get.headers["mcp-session-id"] == transport.session_id


async def test_no_get_stream_retries_where_the_server_has_none() -> None:
    """A stateless legacy server answers GET with 405: asked once, not again."""
    async with toolkit_server(stateless=True) as (running, recorder):
        async with ClientSession(HttpTransport(running.url), protocol_version=LEGACY) as session:
            await wait_for(lambda: "GET" in recorder.methods(), "the GET")
            for _ in range(3):
                await session.call_tool("echo", {"text": "x"})
            await asyncio.sleep(0.2)
        assert recorder.methods().count("GET") == 1
        assert "DELETE" not in recorder.methods(), "no session, nothing to end"


# --- resumption and cancellation --------------------------------------------------------------


async def test_legacy_stream_resumed_with_last_event_id() -> None:
    """The server closes the POST's stream half-way; the client resumes it with GET + Last-Event-ID."""
    probe = Probe()
    seen: list[dict[str, Any]] = []
    async with toolkit_server(probe, event_store=EventStore(), retry_ms=50) as (running, recorder):
        async with ClientSession(
            HttpTransport(running.url), protocol_version=LEGACY, on_message=seen.append
        ) as session:
            call = asyncio.create_task(session.call_tool("poll_me", meta={"progressToken": "p"}))
            await asyncio.wait_for(probe.started.wait(), WAIT)
            probe.release.set()
            result = await asyncio.wait_for(call, WAIT)
        assert text(result) == "done"
        assert [m["params"]["progress"] for m in seen if m["method"] == "notifications/progress"] == [1, 2]
        resumed = [s for s in recorder.seen if s.method == "GET" and "last-event-id" in s.headers]
        assert resumed, "the rest came on a GET with Last-Event-ID"


async def test_modern_abandon_cancels_the_call_on_the_server() -> None:
    """2026-07-28: closing the request's SSE stream is its cancellation."""
    probe = Probe()
    async with toolkit_server(probe) as (running, _):
        transport = Spy(running.url)
        async with ClientSession(transport, protocol_version=MODERN) as session:
            call = asyncio.create_task(session.call_tool("hang"))
            await asyncio.wait_for(probe.started.wait(), WAIT)
            request_id = transport.request_id("tools/call", "hang")
            assert await transport.abandon(request_id) is True
            await asyncio.wait_for(probe.cancelled.wait(), WAIT)
            assert await transport.abandon(request_id) is False, "nothing left to close"
            assert await transport.abandon(12345) is False
            call.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await call
            assert text(await session.call_tool("echo", {"text": "still fine"})) == "still fine"


async def test_legacy_cancelled_notification_closes_the_requests_stream() -> None:
    """Legacy: notifications/cancelled cancels on the server; the transport stops reading that stream."""
    probe = Probe()
    async with toolkit_server(probe) as (running, _):
        transport = Spy(running.url, get_stream=False)
        async with ClientSession(transport, protocol_version=LEGACY) as session:
            call = asyncio.create_task(session.request("tools/call", {"name": "hang", "arguments": {}}))
            await asyncio.wait_for(probe.started.wait(), WAIT)
            request_id = transport.request_id("tools/call", "hang")
            await session.notify("notifications/cancelled", {"requestId": request_id, "reason": "test"})
            await asyncio.wait_for(probe.cancelled.wait(), WAIT)
            assert await transport.abandon(request_id) is False, "its stream was closed with the notification"
            call.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await call


async def test_modern_subscription_stream_stays_open() -> None:
    """``subscriptions/listen`` is an ordinary POST whose SSE stream stays open for notifications."""
    seen: list[dict[str, Any]] = []
    server = make_server(Probe())
    async with serve(server.http_app()) as running:
        transport = Spy(running.url)
        async with ClientSession(transport, protocol_version=MODERN, on_message=seen.append) as session:
            params = {"notifications": {"toolsListChanged": True}}
            listen = asyncio.create_task(session.request("subscriptions/listen", params, timeout=WAIT * 3))
            await wait_for(lambda: any(m["method"].endswith("/acknowledged") for m in seen), "the ack")

            @server.tool
            def added() -> str:
                """A tool added while the client listens."""
                return "new"

            await wait_for(lambda: any(m["method"] == "notifications/tools/list_changed" for m in seen), "a change")
            assert not listen.done(), "the stream stays open"
            assert await transport.abandon(transport.request_id("subscriptions/listen")) is True
            listen.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await listen


async def test_expired_session_says_so() -> None:
    async with toolkit_server() as (running, _):
        transport = HttpTransport(running.url, get_stream=False)
        async with ClientSession(transport, protocol_version=LEGACY) as session:
            assert transport.session_id
            async with httpx.AsyncClient() as other:  # the session ends behind the client's back
                ended = await other.delete(running.url, headers={"Mcp-Session-Id": transport.session_id})
                assert ended.status_code == 204
            with pytest.raises(ClientError, match="no longer knows this session"):
                await session.call_tool("echo", {"text": "x"})
            assert transport.session_expired
            with pytest.raises(TransportClosed, match="no longer knows this session"):
                await session.call_tool("echo", {"text": "x"})  # said at once, without asking the server


async def test_on_close_is_told_once() -> None:
    reasons: list[str] = []

    async def deliver(message: dict[str, Any]) -> None:
        pass

    async with toolkit_server() as (running, _):
        transport = HttpTransport(running.url)
        await transport.open(deliver, on_close=reasons.append)
        await transport.close()
        await transport.close()
        with pytest.raises(TransportClosed, match="was closed"):
            await transport.send({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert reasons == [f"the HTTP transport to {running.url} was closed"]


# --- bad servers ------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [MODERN, "auto"])
async def test_connection_refused_names_the_url(version: str) -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    session = ClientSession(HttpTransport(url), protocol_version=version)
    with pytest.raises(ConnectionError, match="cannot connect to the MCP server at " + url):
        await open_and_list(session)
    await session.close()


@contextlib.asynccontextmanager
async def bad_server() -> AsyncIterator[tuple[str, BadServer]]:
    app = BadServer()
    async with serve(app) as running:
        yield running.base, app


async def open_and_list(session: ClientSession) -> None:
    await session.open()  # "auto" probes here
    await session.list_tools()


@pytest.mark.parametrize("version", [MODERN, "auto"])
async def test_an_html_page_is_not_an_mcp_server(version: str) -> None:
    async with bad_server() as (base, _):
        session = ClientSession(HttpTransport(base + "/html"), protocol_version=version)
        try:
            with pytest.raises(ClientError, match=r"not an MCP endpoint.*text/html.*Welcome!"):
                await open_and_list(session)
        finally:
            await session.close()


async def test_status_500_without_body() -> None:
    async with (
        bad_server() as (base, _),
        ClientSession(HttpTransport(base + "/status-500"), protocol_version=MODERN) as session,
    ):
        with pytest.raises(ClientError, match="HTTP 500 Internal Server Error with no body") as raised:
            await session.list_tools()
        assert raised.value.error["data"] == {"httpStatus": 500}


async def test_a_stream_that_never_answers_ends_with_the_timeout_and_is_closed() -> None:
    async with bad_server() as (base, app):
        transport = Spy(base + "/forever")
        async with ClientSession(transport, protocol_version=MODERN) as session:
            with pytest.raises(TimeoutError):
                await session.request("tools/list", timeout=0.5)
            await asyncio.wait_for(app.holding.wait(), WAIT)
            # The session abandons it on the timeout; abandoning again finds nothing, or does it now.
            await transport.abandon(transport.request_id("tools/list"))
            await asyncio.wait_for(app.disconnected.wait(), WAIT)


async def test_a_stream_kept_open_after_its_response_is_closed() -> None:
    async with (
        bad_server() as (base, app),
        ClientSession(HttpTransport(base + "/linger"), protocol_version=MODERN) as session,
    ):
        assert await session.list_tools() == []
        await asyncio.wait_for(app.disconnected.wait(), WAIT)


async def test_a_json_rpc_error_with_an_http_error_is_the_requests_error() -> None:
    async with (
        bad_server() as (base, _),
        ClientSession(HttpTransport(base + "/rpc-error"), protocol_version=MODERN) as session,
    ):
        with pytest.raises(ClientError, match="not today") as raised:
            await session.list_tools()
        assert raised.value.code == -32600


async def test_malformed_sse_fails_the_request() -> None:
    async with (
        bad_server() as (base, _),
        ClientSession(HttpTransport(base + "/malformed"), protocol_version=MODERN) as session,
    ):
        with pytest.raises(ClientError, match="bad SSE stream: an event that is not JSON"):
            await session.list_tools()


async def test_a_giant_event_fails_the_request() -> None:
    async with (
        bad_server() as (base, _),
        ClientSession(
            HttpTransport(base + "/giant", max_message_bytes=GIANT_BYTES // 2), protocol_version=MODERN
        ) as session,
    ):
        with pytest.raises(ClientError, match=f"an SSE (line|event) over {GIANT_BYTES // 2} bytes"):
            await session.list_tools()


async def test_a_giant_event_within_the_limit_is_read() -> None:
    async with (
        bad_server() as (base, _),
        ClientSession(HttpTransport(base + "/giant"), protocol_version=MODERN) as session,
    ):
        result = await session.result("tools/list")
        assert len(result["x"]) == GIANT_BYTES


async def test_a_stream_that_ends_without_the_response() -> None:
    async with (
        bad_server() as (base, _),
        ClientSession(HttpTransport(base + "/early-end"), protocol_version=MODERN) as session,
    ):
        with pytest.raises(ClientError, match=r"ended the stream of request .* before its response"):
            await session.list_tools()


async def test_a_json_batch_is_delivered_message_by_message() -> None:
    seen: list[dict[str, Any]] = []
    async with (
        bad_server() as (base, _),
        ClientSession(HttpTransport(base + "/batch"), protocol_version=MODERN, on_message=seen.append) as session,
    ):
        assert await session.list_tools() == []
    assert [m["method"] for m in seen] == ["notifications/message"]


# --- the SSE parser ---------------------------------------------------------------------------


def test_sse_parser_reads_any_chunking() -> None:
    stream = (
        b"\xef\xbb\xbfid: 1\r\ndata: \r\nretry: 50\r\n\r\n: keep-alive\r\n"
        b'event: message\r\ndata: {"a":\r\ndata: 1}\r\nid: 2\r\n\r\n'
        b"data:x\rdata:y\r\r\nevent: other\ndata: z\n\nunfinished"
    )
    for size in (1, 2, 3, 7, len(stream)):
        parser = SseParser(100)
        events = [event for start in range(0, len(stream), size) for event in parser.feed(stream[start : start + size])]
        assert [(e.event, e.data, e.id) for e in events] == [
            ("message", b'{"a":\n1}', "2"),
            ("message", b"x\ny", "2"),
            ("other", b"z", "2"),
        ]
        assert parser.last_event_id == "2"
        assert parser.retry == 50
