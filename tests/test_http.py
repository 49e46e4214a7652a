"""Streamable HTTP over a real socket: both protocol eras on one endpoint.

Each test starts a toolkit server with uvicorn on 127.0.0.1 (in this event loop, or through
``toolkit run ... --transport http`` in a subprocess), talks raw HTTP to it with httpx, and
validates every JSON-RPC message it receives against the official schema of the version in
force (``tests/http_support.py`` does that on every read).

Specs: modern ``docs/2026-07-28/basic/transports/streamable-http.mdx``; legacy
``docs/2025-11-25/basic/transports.mdx`` (Streamable HTTP); conformance expectations
``design/conformance-server.md`` §1 and §5.
"""

from __future__ import annotations

import asyncio
import json
import re
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any

import httpx
import pytest
from pydantic import BaseModel
from tests.http_support import (
    ACCEPT_BOTH,
    LEGACY,
    MODERN,
    SUBSCRIPTION_ID_KEY,
    CliServer,
    Legacy,
    McpHttp,
    Modern,
    Reply,
    ServeHttp,
    base64_sentinel,
    cli_server,
    connect,
    merge_headers,
    raw_post,
    serve,
)
from tests.support.waiting import hang_until_cancelled
from tests.wire import assert_valid

from toolkit import Context, EventStore, Header, Server, ToolError

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
VISIBLE_ASCII = re.compile(r"^[\x21-\x7E]+$")
QUIET = 0.3
"""Seconds to wait when proving that something does not arrive."""


class Name(BaseModel):
    name: str


class Target(BaseModel):
    tenant: Annotated[str, Header("Tenant")]
    table: str = "users"


class Probe:
    """What the test tools record, for the test to look at."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.cancelled = asyncio.Event()
        self.release = asyncio.Event()
        self.lifespan_seen: list[Any] = []


def make_server(probe: Probe | None = None, **options: Any) -> Server:
    probe = probe if probe is not None else Probe()
    server = Server("http-tests", version="1.0.0", **options)

    @server.tool
    def echo(text: str) -> str:
        """Return the text."""
        return text

    @server.tool
    async def steps(ctx: Context, n: int = 3) -> int:
        """Report progress and log a message at each of n steps."""
        for i in range(1, n + 1):
            await ctx.report_progress(i, n, f"step {i}")
            await ctx.info(f"step {i} of {n}")
        return n

    @server.tool
    async def ask_name(ctx: Context) -> str:
        """Ask the user for their name."""
        answer = await ctx.elicit("What is your name?", Name, key="user_name")
        return f"Hello, {answer.data.name}" if answer.accepted and answer.data else answer.action

    @server.tool
    async def hang(ctx: Context, announce: bool = True) -> str:
        """Wait until cancelled (after one progress notification, if announce)."""
        if announce:
            await ctx.report_progress(1)
        probe.started.set()
        await hang_until_cancelled(probe.cancelled)

    @server.tool
    async def poll_me(ctx: Context, close: bool = True) -> str:
        """Close the SSE connection half-way (if close); finish once released."""
        await ctx.report_progress(1, 2, "before the break")
        if close:
            await ctx.close_stream()
        probe.started.set()
        try:
            await probe.release.wait()
        except asyncio.CancelledError:
            probe.cancelled.set()
            raise
        await ctx.report_progress(2, 2, "after the break")
        return "done"

    @server.tool
    async def needs_sampling(ctx: Context) -> str:
        """Ask the client's model something."""
        result = await ctx.sample("Say hi", max_tokens=10)
        return result.text

    @server.tool
    def regional(query: str, region: Annotated[str, Header("Region")] = "us-west1") -> str:
        """Run a query in a region."""
        return f"{region}: {query}"

    @server.tool
    def counted(count: Annotated[int, Header("Count")]) -> int:
        """Return the count."""
        return count

    @server.tool
    def routed(target: Target, dry_run: Annotated[bool, Header("Dry-Run")] = False) -> str:
        """A nested and a boolean header parameter."""
        return f"{target.tenant}/{target.table} dry_run={dry_run}"

    @server.tool
    async def trigger_tool_change() -> str:
        """Add a tool at runtime."""
        name = f"added_{len(server.tools)}"
        server.add_tool(lambda: "added", name=name, description="Added at runtime.")
        return name

    @server.tool
    def trigger_tool_change_sync() -> str:
        """Add a tool at runtime, from a plain (non-async) function."""
        name = f"added_{len(server.tools)}"
        server.add_tool(lambda: "added", name=name, description="Added at runtime.")
        return name

    @server.resource("test://café/menu", mime_type="text/plain", description="A non-ASCII URI.")
    def menu() -> str:
        return "croissant"

    @server.prompt
    def greet(name: str) -> str:
        """Greet someone."""
        return f"Say hello to {name}."

    return server


def tool_text(result: dict[str, Any]) -> str:
    return "".join(block.get("text", "") for block in result["content"])


def assert_modern_error(reply: Reply, status: int, code: int, request_id: Any) -> dict[str, Any]:
    """An HTTP ``status`` whose JSON body is a JSON-RPC error ``code`` carrying ``request_id``."""
    assert reply.status == status, f"expected HTTP {status}, got {reply.status}: {reply.messages or reply.body_text}"
    assert reply.content_type == "application/json"
    message = reply.message
    assert message["error"]["code"] == code, message
    assert message.get("id") == request_id, f"the error must carry the request id {request_id!r}: {message}"
    return reply.error


# --- the CLI: `toolkit run APP --transport http` --------------------------------------------------


@pytest.fixture(scope="module")
def weather_cli() -> Iterator[CliServer]:
    with cli_server(EXAMPLES / "weather.py") as running:
        yield running


async def test_cli_serves_both_eras_on_one_endpoint(weather_cli: CliServer) -> None:
    forecast = {"city": "Seattle", "hours": 2}
    expected = [
        {"hour": "09:00", "temp": 68.0, "conditions": "sunny"},
        {"hour": "10:00", "temp": 70.0, "conditions": "partly cloudy"},
    ]
    async with connect(weather_cli.url) as http:
        legacy = await Legacy(http).open()
        modern = Modern(http)

        modern_tools = await modern.request("tools/list")
        assert modern_tools.status == 200
        schemas = {tool["name"]: tool.get("outputSchema") for tool in modern_tools.result["tools"]}
        assert schemas["get_weather_forecast"]["type"] == "array"

        legacy_tools = await legacy.request("tools/list")
        assert legacy_tools.status == 200
        legacy_schemas = {tool["name"]: tool.get("outputSchema") for tool in legacy_tools.result["tools"]}
        assert legacy_schemas["get_weather_forecast"]["type"] == "object"

        modern_call = await modern.call_tool("get_weather_forecast", forecast)
        assert modern_call.status == 200
        assert modern_call.result["structuredContent"] == expected
        assert modern_call.result["resultType"] == "complete"

        legacy_call = await legacy.call_tool("get_weather_forecast", forecast)
        assert legacy_call.status == 200
        assert legacy_call.result["structuredContent"] == {"result": expected}
        assert "mcp-session-id" not in modern_call.headers


def _listening_addresses(port: int) -> list[str]:
    addresses = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            address, port_hex = fields[1].split(":")
            if int(port_hex, 16) == port and fields[3] == "0A":  # 0A: LISTEN
                addresses.append(address)
    return addresses


def test_cli_binds_loopback_only_by_default(weather_cli: CliServer) -> None:
    """Spec (both revisions, Security): servers running locally SHOULD bind only to 127.0.0.1."""
    addresses = _listening_addresses(weather_cli.port)
    assert addresses, f"nothing listens on port {weather_cli.port}"
    assert addresses == ["0100007F"], f"the CLI listens on {addresses}, not only on 127.0.0.1"


APP = """
from toolkit import Server

server = Server("cli-app", version="1.0.0")


@server.tool
def echo(text: str) -> str:
    '''Return the text.'''
    return text
"""


@pytest.fixture(scope="module")
def app_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cli") / "cli_app.py"
    path.write_text(textwrap.dedent(APP))
    return path


async def test_cli_allowed_host_and_origin_options(app_file: Path, mcp_cli: Callable[..., CliServer]) -> None:
    running = mcp_cli(app_file, "--allowed-host", "mcp.example.com", "--allowed-origin", "https://app.example.com")
    async with connect(running.url) as http:
        modern = Modern(http)
        host = await modern.request("tools/list", headers={"Host": "mcp.example.com"})
        assert host.status == 200
        origin = await modern.request("tools/list", headers={"Origin": "https://app.example.com"})
        assert origin.status == 200
        foreign = await modern.request("tools/list", headers={"Origin": "https://evil.example.com"})
        assert foreign.status == 403
        foreign_host = await modern.request("tools/list", headers={"Host": "evil.example.com"})
        assert foreign_host.status == 421


async def test_cli_stops_promptly_on_sigterm_with_streams_open(
    app_file: Path, mcp_cli: Callable[..., CliServer]
) -> None:
    running = mcp_cli(app_file)
    async with connect(running.url) as http:
        legacy = await Legacy(http).open()
        modern = Modern(http)
        async with (
            legacy.listen() as standalone,
            modern.stream("subscriptions/listen", {"notifications": {"toolsListChanged": True}}) as listener,
        ):
            assert standalone.status == 200
            assert standalone.is_sse
            acknowledged = await listener.next_message()
            assert acknowledged is not None
            assert acknowledged["method"] == "notifications/subscriptions/acknowledged"
            took = await asyncio.to_thread(running.stop, 10.0)
            assert took is not None, "the server ignored SIGTERM for 10 s with SSE streams open"
            assert running.process.returncode == 0, running.output()


# --- legacy era: sessions ------------------------------------------------------------------------


async def test_legacy_initialize_mints_a_random_visible_ascii_session_id(mcp_http: ServeHttp) -> None:
    http = await mcp_http(make_server())
    ids = set()
    for _ in range(5):
        session = await Legacy(http).open()
        assert session.session_id is not None, "initialize must mint an Mcp-Session-Id"
        assert VISIBLE_ASCII.match(session.session_id), session.session_id
        assert len(session.session_id) >= 22, "too short to carry 128 random bits"
        ids.add(session.session_id)
    assert len(ids) == 5


async def test_legacy_session_id_required_after_initialize(mcp_http: ServeHttp) -> None:
    http = await mcp_http(make_server())
    session = await Legacy(http).open()

    missing = await session.request("tools/list", id="s1", headers={"Mcp-Session-Id": None})
    assert missing.status == 400
    assert missing.message["id"] == "s1"
    assert "error" in missing.message

    unknown = await session.request("tools/list", id="s2", headers={"Mcp-Session-Id": "no-such-session"})
    assert unknown.status == 404
    assert unknown.message["id"] == "s2"

    notification = await session.notify("notifications/roots/list_changed", headers={"Mcp-Session-Id": None})
    assert notification.status == 400

    ok = await session.request("tools/list")
    assert ok.status == 200
    assert ok.result["tools"]


async def test_legacy_delete_ends_the_session(mcp_http: ServeHttp) -> None:
    http = await mcp_http(make_server())
    session = await Legacy(http).open()
    other = await Legacy(http).open()

    deleted = await session.delete()
    assert 200 <= deleted.status < 300

    after = await session.request("tools/list")
    assert after.status == 404
    notification = await session.notify("notifications/roots/list_changed")
    assert notification.status == 404
    again = await session.delete()
    assert again.status == 404
    async with session.listen() as stream:
        assert stream.status == 404

    still = await other.request("tools/list")
    assert still.status == 200, "deleting one session must leave the others alone"


async def test_legacy_protocol_version_header_is_checked(mcp_http: ServeHttp) -> None:
    """2025-11-25 transports, Protocol Version Header: an unsupported version MUST get 400."""
    http = await mcp_http(make_server())
    session = await Legacy(http).open()
    bad = await session.request("tools/list", headers={"MCP-Protocol-Version": "1999-01-01"})
    assert bad.status == 400
    assert "error" in bad.message

    good = await session.request("tools/list")
    assert good.status == 200

    old = await Legacy(http, "2025-03-26").open()
    assert "MCP-Protocol-Version" not in old.headers()
    without_header = await old.request("tools/list")
    assert without_header.status == 200, "no header: the server SHOULD assume 2025-03-26"


async def test_legacy_notifications_and_responses_are_answered_202(mcp_http: ServeHttp) -> None:
    http = await mcp_http(make_server())
    session = await Legacy(http).open()
    notified = await session.notify("notifications/roots/list_changed")
    assert notified.status == 202
    assert notified.messages == []
    assert notified.body_text == ""

    answered = await session.respond(987654, {})
    assert answered.status == 202
    assert answered.messages == []


# --- legacy era: answers ---------------------------------------------------------------------------


async def test_legacy_request_answered_with_json(mcp_http: ServeHttp) -> None:
    http = await mcp_http(make_server())
    session = await Legacy(http).open()
    reply = await session.call_tool("echo", {"text": "hi"})
    assert reply.status == 200
    assert reply.content_type == "application/json"
    assert tool_text(reply.result) == "hi"


async def test_legacy_sse_carries_progress_and_logs_before_the_response(mcp_http: ServeHttp) -> None:
    http = await mcp_http(make_server())
    session = await Legacy(http).open()
    assert (await session.request("logging/setLevel", {"level": "info"})).status == 200
    reply = await session.request(
        "tools/call", {"name": "steps", "arguments": {"n": 3}, "_meta": {"progressToken": "p-1"}}
    )
    assert reply.status == 200
    assert reply.content_type == "text/event-stream"
    assert reply.headers.get("x-accel-buffering") == "no"
    *before, last = reply.messages
    assert last["result"]["structuredContent"] == {"result": 3}
    progress = [m["params"] for m in before if m["method"] == "notifications/progress"]
    logs = [m["params"] for m in before if m["method"] == "notifications/message"]
    assert [p["progress"] for p in progress] == [1, 2, 3]
    assert {p["progressToken"] for p in progress} == {"p-1"}
    assert [log["data"] for log in logs] == ["step 1 of 3", "step 2 of 3", "step 3 of 3"]


async def test_legacy_elicitation_request_travels_on_the_post_stream(mcp_http: ServeHttp) -> None:
    http = await mcp_http(make_server())
    session = await Legacy(http, capabilities={"elicitation": {}}).open()
    async with (
        session.listen() as standalone,
        session.stream("tools/call", {"name": "ask_name", "arguments": {}}) as stream,
    ):
        assert stream.status == 200
        assert stream.is_sse
        asked = await stream.next_message()
        assert asked is not None
        assert asked["method"] == "elicitation/create"
        assert asked["params"]["message"] == "What is your name?"
        accepted = await session.respond(asked["id"], {"action": "accept", "content": {"name": "Ada"}})
        assert accepted.status == 202
        response = await stream.next_message()
        assert response is not None
        assert tool_text(response["result"]) == "Hello, Ada"
        assert await stream.next_message() is None, "the stream must end after the response"
        duplicate = await standalone.within(QUIET)
        assert duplicate is None, f"a message went out on two streams (2025-11-25, Multiple Connections): {duplicate}"


async def test_legacy_get_stream_receives_list_changed(mcp_http: ServeHttp) -> None:
    server = make_server()
    http = await mcp_http(server)
    session = await Legacy(http).open()
    async with session.listen() as standalone:
        assert standalone.status == 200
        assert standalone.is_sse
        assert standalone.headers.get("x-accel-buffering") == "no"
        added = await session.call_tool("trigger_tool_change")
        assert added.status == 200
        changed = await standalone.next_message()
        assert changed == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
        assert added.notifications == [], "list_changed belongs on the GET stream, not the POST's"

        server.add_tool(lambda: "late", name="late_tool", description="Added by the test.")
        changed = await standalone.next_message()
        assert changed is not None
        assert changed["method"] == "notifications/tools/list_changed"
        tools = await session.request("tools/list")
        assert "late_tool" in [tool["name"] for tool in tools.result["tools"]]


async def test_list_changed_from_a_sync_tool_reaches_the_get_stream(mcp_http: ServeHttp) -> None:
    """A plain ``def`` tool that adds a tool: toolkit runs it in a worker thread; the change must still be told."""
    http = await mcp_http(make_server())
    session = await Legacy(http).open()
    async with session.listen() as standalone:
        added = await session.call_tool("trigger_tool_change_sync")
        assert added.status == 200
        changed = await standalone.next_message(timeout=5)
        assert changed == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}


async def test_legacy_json_response_mode_routes_server_requests_to_the_get_stream(mcp_http: ServeHttp) -> None:
    http = await mcp_http(make_server(), json_response=True)
    session = await Legacy(http, capabilities={"elicitation": {}}).open()
    progress = await session.request(
        "tools/call", {"name": "steps", "arguments": {"n": 2}, "_meta": {"progressToken": 1}}
    )
    assert progress.status == 200
    assert progress.content_type == "application/json", "json_response=True must never answer with SSE"
    modern = await Modern(http, log_level="debug").call_tool("steps", {"n": 2}, meta={"progressToken": 2})
    assert modern.status == 200
    assert modern.content_type == "application/json", "json_response=True must never answer with SSE"
    assert modern.result["structuredContent"] == 2
    async with session.listen() as standalone:
        call = asyncio.create_task(session.call_tool("ask_name"))
        asked = None
        while asked is None or "id" not in asked:
            asked = await standalone.next_message()
            assert asked is not None
        assert asked["method"] == "elicitation/create"
        assert (await session.respond(asked["id"], {"action": "accept", "content": {"name": "Bo"}})).status == 202
        reply = await call
        assert reply.content_type == "application/json"
        assert tool_text(reply.result) == "Hello, Bo"


async def test_json_response_mode_still_answers_subscriptions_listen(mcp_http: ServeHttp) -> None:
    """A listen stream cannot be one JSON object: it must still stream (or be refused), never hang unanswered."""
    http = await mcp_http(make_server(), json_response=True)
    modern = Modern(http)
    try:
        async with (
            asyncio.timeout(5),
            modern.stream("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, id="L") as stream,
        ):
            first = await stream.next_message()
    except (TimeoutError, httpx.ReadTimeout):
        pytest.fail("json_response=True: subscriptions/listen got no answer at all within 5 s")
    assert first is not None
    if stream.is_sse:
        assert first["method"] == "notifications/subscriptions/acknowledged"
    else:
        assert "error" in first, f"a listen answered as JSON can only be an error: {first}"
        assert first["id"] == "L"


async def test_legacy_stateless_mode_serves_without_sessions(mcp_http: ServeHttp) -> None:
    http = await mcp_http(make_server(), stateless=True)
    session = Legacy(http)
    await session.initialize()
    assert session.session_id is None, "stateless=True must not mint session ids"
    listed = await session.request("tools/list")
    assert listed.status == 200
    assert listed.result["tools"]
    called = await session.request(
        "tools/call", {"name": "steps", "arguments": {"n": 2}, "_meta": {"progressToken": "s"}}
    )
    assert called.status == 200
    assert called.result["structuredContent"] == {"result": 2}
    assert [m["params"]["progress"] for m in called.notifications if m["method"] == "notifications/progress"] == [
        1,
        2,
    ]
    async with session.listen() as stream:
        assert stream.status == 405
    assert (await session.delete()).status == 405
    modern = await Modern(http).call_tool("steps", {"n": 2}, meta={"progressToken": "m"})
    assert modern.status == 200
    assert modern.message["result"]["structuredContent"] == 2


# --- legacy era: resumability and disconnects -----------------------------------------------------------


async def test_legacy_resumable_stream_has_priming_event_and_event_ids(mcp_http: ServeHttp) -> None:
    http = await mcp_http(make_server(event_store=EventStore()))
    session = await Legacy(http).open()
    reply = await session.request(
        "tools/call", {"name": "steps", "arguments": {"n": 2}, "_meta": {"progressToken": "r"}}
    )
    assert reply.status == 200
    assert reply.content_type == "text/event-stream"
    priming, *rest = reply.events
    assert priming.id, "the first event must carry an event id to resume from"
    assert priming.data == ""
    assert priming.retry is not None and priming.retry > 0
    assert all(event.id for event in rest)
    ids = [event.id for event in reply.events]
    assert len(set(ids)) == len(ids)
    assert reply.message["result"]["structuredContent"] == {"result": 2}

    second = await session.call_tool("echo", {"text": "x"})
    assert not {event.id for event in second.events} & set(ids), "event ids must be unique in the session"


async def test_legacy_close_stream_then_resume_with_last_event_id(mcp_http: ServeHttp) -> None:
    probe = Probe()
    http = await mcp_http(make_server(probe, event_store=EventStore()))
    session = await Legacy(http).open()
    params = {"name": "poll_me", "arguments": {}, "_meta": {"progressToken": "poll"}}
    async with session.stream("tools/call", params) as stream:
        received = await stream.read()
        assert stream.ended
    assert stream.events[0].retry is not None
    assert [m["method"] for m in received] == ["notifications/progress"], "the connection closes before the result"
    last_id = stream.events[-1].id
    assert last_id
    await asyncio.wait_for(probe.started.wait(), 5)
    probe.release.set()
    async with session.listen(headers={"Last-Event-ID": last_id}) as resumed:
        assert resumed.status == 200
        assert resumed.is_sse
        rest = await resumed.read()
    assert [m.get("method") for m in rest] == ["notifications/progress", None]
    assert rest[0]["params"]["progress"] == 2
    assert tool_text(rest[-1]["result"]) == "done"
    assert resumed.events[-1].id, "replayed events keep their ids"


async def test_legacy_resume_does_not_replay_another_sessions_stream(mcp_http: ServeHttp) -> None:
    """2025-11-25 Resumability: event ids are scoped to a session; never replay another stream's messages."""
    probe = Probe()
    http = await mcp_http(make_server(probe, event_store=EventStore()))
    owner = await Legacy(http).open()
    intruder = await Legacy(http).open()
    params = {"name": "poll_me", "arguments": {}, "_meta": {"progressToken": "secret"}}
    async with owner.stream("tools/call", params) as stream:
        await stream.read()
    last_id = stream.events[-1].id
    assert last_id
    await asyncio.wait_for(probe.started.wait(), 5)
    probe.release.set()
    async with intruder.listen(headers={"Last-Event-ID": last_id}) as hijack:
        if hijack.status == 200 and hijack.is_sse:
            leaked = await hijack.within(QUIET)
            assert leaked is None, f"session B received session A's message: {leaked}"
        else:
            assert 400 <= hijack.status < 500
    async with owner.listen(headers={"Last-Event-ID": last_id}) as resumed:
        rest = await resumed.read()
    assert tool_text(rest[-1]["result"]) == "done", "the owner can still resume its stream"


async def test_legacy_unknown_last_event_id_does_not_end_the_session(mcp_http: ServeHttp) -> None:
    """A 404 tells a client its session is gone and it MUST re-initialize (2025-11-25, Session Management 3-4)."""
    http = await mcp_http(make_server(event_store=EventStore()))
    session = await Legacy(http).open()
    async with session.listen(headers={"Last-Event-ID": "no-such-stream_3"}) as stream:
        assert stream.status != 404, "404 on a live session makes the client throw the session away"
    assert (await session.request("tools/list")).status == 200


async def test_legacy_dropped_stream_without_event_store_does_not_cancel_the_request(mcp_http: ServeHttp) -> None:
    """2025-11-25 Transports: "Disconnection SHOULD NOT be interpreted as the client cancelling its request".

    "To cancel, the client SHOULD explicitly send an MCP CancelledNotification": that still works.
    """
    probe = Probe()
    http = await mcp_http(make_server(probe))
    session = await Legacy(http).open()
    params = {"name": "hang", "arguments": {}, "_meta": {"progressToken": 7}}
    async with session.stream("tools/call", params, id="dropped") as stream:
        first = await stream.next_message()
        assert first is not None
        assert first["method"] == "notifications/progress"
    await asyncio.sleep(QUIET)
    assert not probe.cancelled.is_set(), "a legacy client's disconnect was taken as cancellation"
    assert (await session.request("tools/call", {"name": "echo", "arguments": {"text": "still here"}})).status == 200
    cancelled = await session.notify("notifications/cancelled", {"requestId": "dropped", "reason": "gave up"})
    assert cancelled.status == 202
    await asyncio.wait_for(probe.cancelled.wait(), 5)


async def test_legacy_request_left_unheard_fails_its_questions_at_once(mcp_http: ServeHttp) -> None:
    """Without an event store nobody can answer an elicitation sent after the disconnect: it fails, no 60 s wait."""
    raised: asyncio.Queue[str] = asyncio.Queue()
    release = asyncio.Event()
    server = Server("unheard")

    @server.tool
    async def ask_later(ctx: Context) -> str:
        """Report progress, wait, then ask the user something."""
        await ctx.report_progress(1)
        await release.wait()
        try:
            await ctx.elicit("Still there?", Name)
        except ToolError as exc:
            raised.put_nowait(str(exc))
            raise
        return "answered"

    http = await mcp_http(server)
    session = await Legacy(http, capabilities={"elicitation": {}}).open()
    params = {"name": "ask_later", "arguments": {}, "_meta": {"progressToken": 1}}
    async with session.stream("tools/call", params) as stream:
        assert (await stream.next_message()) is not None
    await asyncio.sleep(QUIET)
    release.set()
    message = await asyncio.wait_for(raised.get(), 5)
    assert "elicitation/create failed" in message and "disconnected" in message


async def test_legacy_dropped_stream_with_event_store_keeps_running_and_resumes(mcp_http: ServeHttp) -> None:
    """2025-11-25: disconnection SHOULD NOT be taken as cancellation when the stream is resumable."""
    probe = Probe()
    http = await mcp_http(make_server(probe, event_store=EventStore()))
    session = await Legacy(http).open()
    params = {"name": "poll_me", "arguments": {"close": False}, "_meta": {"progressToken": "d"}}
    async with session.stream("tools/call", params) as stream:
        while (message := await stream.next_message()) is not None and message.get(
            "method"
        ) != "notifications/progress":
            pass
        await asyncio.wait_for(probe.started.wait(), 5)
    last_id = stream.events[-1].id
    assert last_id
    await asyncio.sleep(QUIET)
    assert not probe.cancelled.is_set(), "the client dropped a resumable stream; the request must go on"
    probe.release.set()
    async with session.listen(headers={"Last-Event-ID": last_id}) as resumed:
        rest = await resumed.read()
    assert [m.get("method") for m in rest] == ["notifications/progress", None]
    assert tool_text(rest[-1]["result"]) == "done"


@pytest.mark.parametrize(
    ("resumable", "announce"),
    [(False, False), (False, True), (True, True)],
    ids=["json-pending", "sse", "sse-resumable"],
)
async def test_legacy_cancelled_request_ends_its_post(mcp_http: ServeHttp, resumable: bool, announce: bool) -> None:
    """2025-11-25 Cancellation: the receiver SHOULD stop processing and free associated resources.

    No response is due for a cancelled request, but its POST must still end (the SSE stream
    terminated, or an HTTP answer) rather than stay open forever.
    """
    probe = Probe()
    http = await mcp_http(make_server(probe, event_store=EventStore() if resumable else None))
    session = await Legacy(http).open()
    params = {"name": "hang", "arguments": {"announce": announce}, "_meta": {"progressToken": 1}}
    call = asyncio.create_task(session.request("tools/call", params, id="doomed"))
    await asyncio.wait_for(probe.started.wait(), 5)
    cancelled = await session.notify("notifications/cancelled", {"requestId": "doomed", "reason": "gave up"})
    assert cancelled.status == 202
    await asyncio.wait_for(probe.cancelled.wait(), 5)
    try:
        reply = await asyncio.wait_for(call, 5)
    except TimeoutError:
        pytest.fail("the cancelled request's POST was still open 5 s after it was cancelled")
    assert all("result" not in m for m in reply.messages), "no response for a cancelled request"


async def test_server_stops_promptly_after_a_cancelled_resumable_request() -> None:
    """A request cancelled after its resumable stream dropped must not leave work behind that stalls shutdown."""
    probe = Probe()
    async with serve(make_server(probe, event_store=EventStore())) as running:
        async with connect(running.url) as http:
            session = await Legacy(http).open()
            params = {"name": "hang", "arguments": {}, "_meta": {"progressToken": 3}}
            async with session.stream("tools/call", params, id="dropped") as stream:
                assert await stream.next_message() is not None
            cancelled = await session.notify("notifications/cancelled", {"requestId": "dropped"})
            assert cancelled.status == 202
            await asyncio.wait_for(probe.cancelled.wait(), 5)
        loop = asyncio.get_running_loop()
        stopping = loop.time()
    assert loop.time() - stopping < 5, "shutdown waited for a cancelled request's leftovers"


# --- modern era ------------------------------------------------------------------------------------------


async def test_modern_stateless_requests(mcp_http: ServeHttp) -> None:
    http = await mcp_http(make_server())
    modern = Modern(http)
    discover = await modern.request("server/discover")
    assert discover.status == 200
    assert MODERN in discover.result["supportedVersions"]
    listed = await modern.request("tools/list")
    assert listed.status == 200
    assert listed.result["resultType"] == "complete"
    assert "mcp-session-id" not in listed.headers
    called = await modern.call_tool("echo", {"text": "hi"})
    assert called.content_type == "application/json"
    assert tool_text(called.result) == "hi"
    notification = await http.send(
        version=MODERN,
        body={"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
        headers={"MCP-Protocol-Version": MODERN},
    )
    assert notification.status == 202


async def test_modern_protocol_version_header_must_match_meta(mcp_http: ServeHttp) -> None:
    http = await mcp_http(make_server())
    modern = Modern(http)
    mismatch = await modern.request("tools/list", id="a", headers={"MCP-Protocol-Version": LEGACY})
    assert_modern_error(mismatch, 400, -32020, "a")

    unknown_body = modern.body("tools/list", id="b", meta={"io.modelcontextprotocol/protocolVersion": "v999.0.0"})
    body_mismatch = await modern.post(unknown_body)
    assert_modern_error(body_mismatch, 400, -32020, "b")

    missing = await modern.request("tools/list", id="c", headers={"MCP-Protocol-Version": None})
    assert_modern_error(missing, 400, -32020, "c")


async def test_modern_unsupported_version(mcp_http: ServeHttp) -> None:
    http = await mcp_http(make_server())
    modern = Modern(http)
    supported = (await modern.request("server/discover")).result["supportedVersions"]
    body = modern.body("server/discover", id=41, meta={"io.modelcontextprotocol/protocolVersion": "v999.0.0"})
    reply = await modern.post(body, {"MCP-Protocol-Version": "v999.0.0"})
    error = assert_modern_error(reply, 400, -32022, 41)
    assert error["data"]["requested"] == "v999.0.0"
    assert error["data"]["supported"]
    assert set(error["data"]["supported"]) <= set(supported)


async def test_modern_mcp_method_header(mcp_http: ServeHttp) -> None:
    http = await mcp_http(make_server())
    modern = Modern(http)
    assert_modern_error(await modern.request("tools/list", id=1, headers={"Mcp-Method": None}), 400, -32020, 1)
    assert_modern_error(
        await modern.request("tools/list", id=2, headers={"Mcp-Method": "prompts/list"}), 400, -32020, 2
    )
    assert_modern_error(await modern.request("tools/list", id=3, headers={"Mcp-Method": "TOOLS/LIST"}), 400, -32020, 3)
    for name in ("mcp-method", "MCP-METHOD"):
        reply = await modern.request("tools/list", headers={"Mcp-Method": None, name: "tools/list"})
        assert reply.status == 200, f"header names are case-insensitive ({name})"

    padded = await post_raw(http, modern.body("tools/list", id=4), {"Mcp-Method": " \t tools/list  "})
    assert padded["id"] == 4
    assert "result" in padded, "surrounding whitespace in a header value is not part of it"


async def post_raw(
    http: McpHttp, body: dict[str, Any], headers: dict[str, str], *, status: int = 200
) -> dict[str, Any]:
    """POST with header values written byte for byte (latin-1), which httpx refuses to send; the JSON answer."""
    url = httpx.URL(http.url)
    assert url.port is not None
    got, _, payload = await raw_post(
        url.port,
        url.path,
        [
            ("Content-Type", "application/json"),
            ("Accept", ACCEPT_BOTH),
            *((name, value) for name, value in merge_headers(Modern(http).headers_for(body), headers).items() if value),
        ],
        json.dumps(body).encode(),
    )
    answer: dict[str, Any] = json.loads(payload)
    assert_valid(answer, MODERN, method=body["method"])
    assert got == status, answer
    return answer


async def test_modern_mcp_name_header(mcp_http: ServeHttp) -> None:
    http = await mcp_http(make_server())
    modern = Modern(http)
    call = {"name": "echo", "arguments": {"text": "x"}}
    assert_modern_error(await modern.request("tools/call", call, id=1, headers={"Mcp-Name": None}), 400, -32020, 1)
    assert_modern_error(await modern.request("tools/call", call, id=2, headers={"Mcp-Name": "steps"}), 400, -32020, 2)
    assert_modern_error(
        await modern.request("tools/call", call, id=3, headers={"Mcp-Name": "=?base64?%%%?="}), 400, -32020, 3
    )
    assert_modern_error(
        await modern.request("tools/call", call, id=4, headers={"Mcp-Name": "=?base64?ZWNobw?="}), 400, -32020, 4
    )
    encoded = await modern.request("tools/call", call, headers={"Mcp-Name": base64_sentinel("echo")})
    assert encoded.status == 200
    assert tool_text(encoded.result) == "x"

    menu = await modern.request("resources/read", {"uri": "test://café/menu"})
    assert menu.status == 200
    assert menu.result["contents"][0]["text"] == "croissant"
    assert_modern_error(
        await modern.request("resources/read", {"uri": "test://café/menu"}, id=5, headers={"Mcp-Name": None}),
        400,
        -32020,
        5,
    )
    assert_modern_error(
        await modern.request(
            "prompts/get", {"name": "greet", "arguments": {"name": "x"}}, id=6, headers={"Mcp-Name": "other"}
        ),
        400,
        -32020,
        6,
    )
    prompt = await modern.request("prompts/get", {"name": "greet", "arguments": {"name": "Ada"}})
    assert prompt.status == 200

    padded = await post_raw(http, modern.body("tools/call", call, id=7), {"Mcp-Name": "  echo  "})
    assert padded["id"] == 7
    assert tool_text(padded["result"]) == "x"

    menu_body = modern.body("resources/read", {"uri": "test://café/menu"}, id=8)
    raw = await post_raw(http, menu_body, {"Mcp-Name": "test://café/menu"}, status=400)
    assert raw["error"]["code"] == -32020, "a non-ASCII value must come Base64-encoded"
    assert raw["id"] == 8


async def test_modern_x_mcp_header_parameters(mcp_http: ServeHttp) -> None:
    http = await mcp_http(make_server())
    modern = Modern(http)
    tools = {tool["name"]: tool for tool in (await modern.request("tools/list")).result["tools"]}
    assert tools["regional"]["inputSchema"]["properties"]["region"]["x-mcp-header"] == "Region"
    assert tools["counted"]["inputSchema"]["properties"]["count"]["x-mcp-header"] == "Count"

    args = {"query": "SELECT 1", "region": "us-east1"}
    ok = await modern.call_tool("regional", args, headers={"Mcp-Param-Region": "us-east1"})
    assert ok.status == 200
    assert tool_text(ok.result) == "us-east1: SELECT 1"
    lower = await modern.call_tool("regional", args, headers={"mcp-param-region": "us-east1"})
    assert lower.status == 200

    mismatch = await modern.call_tool("regional", args, id=1, headers={"Mcp-Param-Region": "eu-west1"})
    assert_modern_error(mismatch, 400, -32020, 1)
    missing = await modern.call_tool("regional", args, id=2)
    assert_modern_error(missing, 400, -32020, 2)
    invalid = await modern.call_tool("regional", args, id=3, headers={"Mcp-Param-Region": "=?base64?!!!?="})
    assert_modern_error(invalid, 400, -32020, 3)

    zurich = {"query": "q", "region": "Zürich"}
    encoded = await modern.call_tool("regional", zurich, headers={"Mcp-Param-Region": base64_sentinel("Zürich")})
    assert encoded.status == 200
    assert tool_text(encoded.result) == "Zürich: q"

    raw_body = modern.body("tools/call", {"name": "regional", "arguments": zurich}, id=9)
    raw = await post_raw(http, raw_body, {"Mcp-Param-Region": "Zürich"}, status=400)
    assert raw["error"]["code"] == -32020, "a header with invalid characters must be rejected"
    assert raw["id"] == 9

    absent = await modern.call_tool("regional", {"query": "q"})
    assert absent.status == 200, "no argument: the client omits the header and the server must not expect it"

    numeric = await modern.call_tool("counted", {"count": 42}, headers={"Mcp-Param-Count": "42.0"})
    assert numeric.status == 200, "integers compare numerically"
    assert numeric.result["structuredContent"] == 42
    wrong = await modern.call_tool("counted", {"count": 42}, id=4, headers={"Mcp-Param-Count": "43"})
    assert_modern_error(wrong, 400, -32020, 4)
    garbage = await modern.call_tool("counted", {"count": 42}, id=5, headers={"Mcp-Param-Count": "forty-two"})
    assert_modern_error(garbage, 400, -32020, 5)


async def test_modern_nested_and_boolean_header_parameters(mcp_http: ServeHttp) -> None:
    http = await mcp_http(make_server())
    modern = Modern(http)
    tools = {tool["name"]: tool for tool in (await modern.request("tools/list")).result["tools"]}
    schema = tools["routed"]["inputSchema"]
    assert schema["properties"]["target"]["properties"]["tenant"]["x-mcp-header"] == "Tenant"
    assert schema["properties"]["dry_run"]["x-mcp-header"] == "Dry-Run"

    args = {"target": {"tenant": "acme"}, "dry_run": True}
    ok = await modern.call_tool("routed", args, headers={"Mcp-Param-Tenant": "acme", "Mcp-Param-Dry-Run": "true"})
    assert ok.status == 200
    assert tool_text(ok.result) == "acme/users dry_run=True"

    wrong_tenant = {"Mcp-Param-Tenant": "other", "Mcp-Param-Dry-Run": "true"}
    assert_modern_error(await modern.call_tool("routed", args, id=1, headers=wrong_tenant), 400, -32020, 1)
    no_tenant = {"Mcp-Param-Dry-Run": "true"}
    assert_modern_error(await modern.call_tool("routed", args, id=2, headers=no_tenant), 400, -32020, 2)
    capitalised = {"Mcp-Param-Tenant": "acme", "Mcp-Param-Dry-Run": "True"}
    assert_modern_error(await modern.call_tool("routed", args, id=3, headers=capitalised), 400, -32020, 3)
    wrong_flag = {"Mcp-Param-Tenant": "acme", "Mcp-Param-Dry-Run": "false"}
    assert_modern_error(await modern.call_tool("routed", args, id=4, headers=wrong_flag), 400, -32020, 4)


async def test_modern_missing_meta_fields_are_invalid_params(mcp_http: ServeHttp) -> None:
    http = await mcp_http(make_server())
    modern = Modern(http)
    no_meta = {"jsonrpc": "2.0", "id": "m1", "method": "server/discover", "params": {}}
    assert_modern_error(await modern.post(no_meta), 400, -32602, "m1")

    for id_, dropped in (
        ("m2", "io.modelcontextprotocol/protocolVersion"),
        ("m3", "io.modelcontextprotocol/clientCapabilities"),
    ):
        body = modern.body("server/discover", id=id_)
        del body["params"]["_meta"][dropped]
        assert_modern_error(await modern.post(body), 400, -32602, id_)

    body = modern.body("server/discover", id="m4")
    del body["params"]["_meta"]["io.modelcontextprotocol/clientInfo"]
    assert (await modern.post(body)).status == 200, "clientInfo is optional"


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("initialize", {"protocolVersion": MODERN, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}),
        ("ping", {}),
        ("logging/setLevel", {"level": "info"}),
        ("resources/subscribe", {"uri": "test://café/menu"}),
        ("resources/unsubscribe", {"uri": "test://café/menu"}),
        ("unknown/method", {}),
    ],
)
async def test_modern_removed_and_unknown_methods_are_404(
    method: str, params: dict[str, Any], mcp_http: ServeHttp
) -> None:
    http = await mcp_http(make_server())
    reply = await Modern(http).request(method, params, id=f"id-{method}")
    assert_modern_error(reply, 404, -32601, f"id-{method}")


async def test_modern_missing_client_capability(mcp_http: ServeHttp) -> None:
    http = await mcp_http(make_server())
    without = Modern(http, capabilities={})
    error = assert_modern_error(await without.call_tool("needs_sampling", id=77), 400, -32021, 77)
    assert error["data"]["requiredCapabilities"] == {"sampling": {}}

    with_sampling = Modern(http, capabilities={"sampling": {}})
    reply = await with_sampling.call_tool("needs_sampling")
    assert reply.status == 200
    assert reply.result["resultType"] == "input_required"
    (asked,) = reply.result["inputRequests"].values()
    assert asked["method"] == "sampling/createMessage"


async def test_modern_elicitation_uses_mrtr_not_server_requests(mcp_http: ServeHttp) -> None:
    http = await mcp_http(make_server())
    modern = Modern(http, capabilities={"elicitation": {}})
    first = await modern.call_tool("ask_name")
    assert first.status == 200
    assert all("id" not in m or "method" not in m for m in first.messages), "no server-to-client requests"
    assert first.result["resultType"] == "input_required"
    assert first.result["inputRequests"]["user_name"]["method"] == "elicitation/create"
    retry = {
        "name": "ask_name",
        "arguments": {},
        "inputResponses": {"user_name": {"action": "accept", "content": {"name": "Ada"}}},
        "requestState": first.result["requestState"],
    }
    second = await modern.request("tools/call", retry)
    assert second.status == 200
    assert second.result["resultType"] == "complete"
    assert tool_text(second.result) == "Hello, Ada"


async def test_modern_sse_carries_progress_and_logs_before_the_response(mcp_http: ServeHttp) -> None:
    http = await mcp_http(make_server())
    modern = Modern(http, log_level="info")
    reply = await modern.call_tool("steps", {"n": 3}, meta={"progressToken": "tok"})
    assert reply.status == 200
    assert reply.content_type == "text/event-stream"
    assert reply.headers.get("x-accel-buffering") == "no"
    *before, last = reply.messages
    assert last["result"]["structuredContent"] == 3
    assert all("id" not in message for message in before), "no server-to-client requests on modern streams"
    assert [m["params"]["progress"] for m in before if m["method"] == "notifications/progress"] == [1, 2, 3]
    assert [m["params"]["data"] for m in before if m["method"] == "notifications/message"] == [
        "step 1 of 3",
        "step 2 of 3",
        "step 3 of 3",
    ]

    quiet = await Modern(http).call_tool("steps", {"n": 2})
    assert quiet.status == 200
    assert not quiet.notifications, "no logLevel and no progressToken: nothing but the response"


async def test_modern_closing_the_sse_stream_cancels_the_request(mcp_http: ServeHttp) -> None:
    probe = Probe()
    http = await mcp_http(make_server(probe))
    modern = Modern(http)
    async with modern.stream("tools/call", {"name": "hang", "arguments": {}}, meta={"progressToken": 1}) as stream:
        assert stream.is_sse
        first = await stream.next_message()
        assert first is not None
        assert first["method"] == "notifications/progress"
    await asyncio.wait_for(probe.cancelled.wait(), 5)


async def test_modern_disconnect_before_any_answer_cancels_the_request(mcp_http: ServeHttp) -> None:
    probe = Probe()
    http = await mcp_http(make_server(probe))
    modern = Modern(http)
    params = {"name": "hang", "arguments": {"announce": False}}
    call = asyncio.create_task(modern.request("tools/call", params))
    await asyncio.wait_for(probe.started.wait(), 5)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    await asyncio.wait_for(probe.cancelled.wait(), 5)


async def test_modern_get_and_delete_are_405(mcp_http: ServeHttp) -> None:
    http = await mcp_http(make_server())
    headers = {"MCP-Protocol-Version": MODERN, "Accept": "text/event-stream"}
    get = await http.send("GET", version=MODERN, headers=headers)
    assert get.status == 405
    delete = await http.send("DELETE", version=MODERN, headers={"MCP-Protocol-Version": MODERN})
    assert delete.status == 405
    put = await http.send("PUT", version=MODERN, body={}, headers={"MCP-Protocol-Version": MODERN})
    assert put.status == 405


async def test_modern_ignores_mcp_session_id(mcp_http: ServeHttp) -> None:
    http = await mcp_http(make_server())
    legacy = await Legacy(http).open()
    modern = Modern(http)
    bogus = await modern.request("tools/list", headers={"Mcp-Session-Id": "no-such-session"})
    assert bogus.status == 200
    assert "mcp-session-id" not in bogus.headers
    real = await modern.call_tool("echo", {"text": "m"}, headers={"Mcp-Session-Id": legacy.session_id})
    assert real.status == 200
    assert tool_text(real.result) == "m"
    assert "mcp-session-id" not in real.headers
    resume = await modern.call_tool("echo", {"text": "r"}, headers={"Last-Event-ID": "abc_1"})
    assert resume.status == 200, "2026-07-28: a Last-Event-ID header is ignored"
    assert tool_text(resume.result) == "r"
    assert (await legacy.request("tools/list")).status == 200


async def test_modern_subscriptions_listen_filters_and_tags_notifications(mcp_http: ServeHttp) -> None:
    server = make_server()
    http = await mcp_http(server)
    modern = Modern(http)
    tools_filter = {"notifications": {"toolsListChanged": True}}
    prompts_filter = {"notifications": {"promptsListChanged": True}}
    async with (
        modern.stream("subscriptions/listen", tools_filter, id="tools-sub") as tools_stream,
        modern.stream("subscriptions/listen", prompts_filter, id="prompts-sub") as prompts_stream,
    ):
        for stream, sub_id in ((tools_stream, "tools-sub"), (prompts_stream, "prompts-sub")):
            assert stream.status == 200
            assert stream.is_sse
            assert stream.headers.get("x-accel-buffering") == "no"
            ack = await stream.next_message()
            assert ack is not None
            assert ack["method"] == "notifications/subscriptions/acknowledged"
            assert ack["params"]["_meta"][SUBSCRIPTION_ID_KEY] == sub_id

        server.add_tool(lambda: "one", name="late_one", description="Added by the test.")
        server.prompt(name="late_prompt", description="Added by the test.")(lambda: "hi")
        server.add_tool(lambda: "two", name="late_two", description="Added by the test.")
        steps = await modern.call_tool("steps", {"n": 1}, meta={"progressToken": "x"})
        assert steps.status == 200

        for _ in range(2):
            changed = await tools_stream.next_message()
            assert changed is not None
            assert changed["method"] == "notifications/tools/list_changed", changed
            assert changed["params"]["_meta"][SUBSCRIPTION_ID_KEY] == "tools-sub"
        prompt_changed = await prompts_stream.next_message()
        assert prompt_changed is not None
        assert prompt_changed["method"] == "notifications/prompts/list_changed", prompt_changed
        assert prompt_changed["params"]["_meta"][SUBSCRIPTION_ID_KEY] == "prompts-sub"
        assert await prompts_stream.within(QUIET) is None, "only what the listener asked for"
        assert await tools_stream.within(QUIET) is None, "no progress or log messages on a listen stream"


# --- both eras at once ---------------------------------------------------------------------------------------


async def test_legacy_session_and_modern_requests_interleaved(mcp_http: ServeHttp) -> None:
    http = await mcp_http(make_server())
    legacy = await Legacy(http).open()
    modern = Modern(http, log_level="info")
    assert tool_text((await modern.call_tool("echo", {"text": "m1"})).result) == "m1"
    assert tool_text((await legacy.call_tool("echo", {"text": "l1"})).result) == "l1"
    assert (await modern.request("server/discover")).status == 200
    assert (await legacy.request("ping")).result == {}

    legacy_steps, modern_steps = await asyncio.gather(
        legacy.request("tools/call", {"name": "steps", "arguments": {"n": 2}, "_meta": {"progressToken": "L"}}),
        modern.call_tool("steps", {"n": 2}, meta={"progressToken": "M"}),
    )
    assert legacy_steps.message["result"]["structuredContent"] == {"result": 2}
    assert modern_steps.message["result"]["structuredContent"] == 2
    assert {m["params"]["progressToken"] for m in legacy_steps.notifications if "progressToken" in m["params"]} == {"L"}
    assert {m["params"]["progressToken"] for m in modern_steps.notifications if "progressToken" in m["params"]} == {"M"}
    assert (await legacy.request("tools/list")).status == 200


# --- security and HTTP hygiene -------------------------------------------------------------------------------


async def test_foreign_origin_is_403(mcp_http: ServeHttp) -> None:
    http = await mcp_http(make_server())
    reply = await Modern(http).request("tools/list", headers={"Origin": "http://evil.example.com"})
    assert reply.status == 403
    assert "error" in reply.message
    assert "id" not in reply.message, "spec: the body MAY be a JSON-RPC error response that has no id"


async def test_foreign_host_is_421(mcp_http: ServeHttp) -> None:
    http = await mcp_http(make_server())
    reply = await Modern(http).request("tools/list", headers={"Host": "evil.example.com"})
    assert reply.status == 421
    assert "error" in reply.message


async def test_dns_rebinding_probe() -> None:
    """conformance-server.md §1: the dns-rebinding-protection scenario."""
    async with serve(make_server()) as running, connect(running.url) as http:
        probe_headers = {"Mcp-Method": "initialize", "MCP-Protocol-Version": LEGACY}
        evil = Legacy(http)
        evil_reply = await http.send(
            version=LEGACY,
            body=evil.body(
                "initialize",
                {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}},
            ),
            headers={**probe_headers, "Host": "evil.example.com", "Origin": "http://evil.example.com"},
        )
        assert 400 <= evil_reply.status < 500
        assert "mcp-session-id" not in evil_reply.headers

        for host in (f"127.0.0.1:{running.port}", f"localhost:{running.port}"):
            local = Legacy(http)
            await local.initialize(headers={**probe_headers, "Host": host, "Origin": f"http://{host}"})
            assert local.session_id


async def test_allowed_hosts_and_origins_extend_the_defaults(mcp_http: ServeHttp) -> None:
    http = await mcp_http(make_server(), allowed_hosts=["mcp.example.com"], allowed_origins=["https://app.example.com"])
    modern = Modern(http)
    assert (await modern.request("tools/list", headers={"Host": "mcp.example.com"})).status == 200
    assert (await modern.request("tools/list", headers={"Origin": "https://app.example.com"})).status == 200
    assert (await modern.request("tools/list", headers={"Origin": "https://other.example.com"})).status == 403
    assert (await modern.request("tools/list", headers={"Host": "other.example.com"})).status == 421
    assert (await modern.request("tools/list")).status == 200, "localhost stays allowed"


async def test_body_limit_is_413(mcp_http: ServeHttp) -> None:
    limit = 2048
    http = await mcp_http(make_server(), max_body_bytes=limit)
    modern = Modern(http)
    body = modern.body("tools/call", {"name": "echo", "arguments": {"text": "x"}}, id="big")
    encoded = json.dumps(body).encode()
    headers = {**modern.headers_for(body)}

    exact = encoded + b" " * (limit - len(encoded))
    fits = await http.send(version=MODERN, content=exact, headers=headers)
    assert fits.status == 200, "a body of exactly max_body_bytes is allowed"

    too_big = encoded + b" " * (limit + 1 - len(encoded))
    declared = await http.send(version=MODERN, content=too_big, headers=headers)
    assert declared.status == 413
    assert "error" in declared.message

    async def chunks() -> Any:
        for _ in range(8):
            yield b" " * 512
        yield encoded

    chunked = await http.http.post(
        http.url,
        content=chunks(),
        headers={**headers, "Content-Type": "application/json", "Accept": ACCEPT_BOTH},
    )
    assert "content-length" not in chunked.request.headers
    assert chunked.status_code == 413
    assert_valid(chunked.json(), MODERN)


async def test_wrong_content_type_is_415(mcp_http: ServeHttp) -> None:
    http = await mcp_http(make_server())
    modern = Modern(http)
    reply = await modern.request("tools/list", headers={"Content-Type": "text/plain"})
    assert reply.status == 415
    assert "error" in reply.message


async def test_accept_without_json_or_sse_is_406_and_json_only_gets_json(mcp_http: ServeHttp) -> None:
    http = await mcp_http(make_server())
    modern = Modern(http)
    refused = await modern.request("tools/list", headers={"Accept": "text/html"})
    assert refused.status == 406
    assert "error" in refused.message

    json_only = await modern.call_tool(
        "steps", {"n": 2}, meta={"progressToken": 1}, headers={"Accept": "application/json"}
    )
    assert json_only.status == 200
    assert json_only.content_type == "application/json", "a client that does not accept SSE must get JSON"
    assert json_only.result["structuredContent"] == 2


async def test_invalid_json_is_400_parse_error(mcp_http: ServeHttp) -> None:
    http = await mcp_http(make_server())
    reply = await http.send(
        version=MODERN,
        content=b'{"jsonrpc": "2.0", "id": 1, "method": ',
        headers={"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/list"},
    )
    assert reply.status == 400
    assert reply.message["error"]["code"] == -32700

    not_jsonrpc = await http.send(
        version=MODERN,
        body={"jsonrpc": "1.0", "id": 5, "method": "tools/list"},
        headers={"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/list"},
    )
    assert not_jsonrpc.status == 400
    assert not_jsonrpc.message["error"]["code"] == -32600
    assert not_jsonrpc.message["id"] == 5


async def test_the_listening_socket_gives_connections_tcp_nodelay() -> None:
    """uvicorn writes a response's head and body apart: without TCP_NODELAY the body waits for the
    client's delayed ACK (about 40 ms a call). asyncio sets it on an accepted socket only when the
    listening socket says IPPROTO_TCP, so ``listen`` must create it so."""
    import socket

    from toolkit._transports.http.runner import listen

    accepted: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    class Probe(asyncio.Protocol):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            sock = transport.get_extra_info("socket")
            accepted.set_result(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            transport.close()

    server = await asyncio.get_running_loop().create_server(Probe, sock=listen("127.0.0.1", 0))
    async with server:
        port = server.sockets[0].getsockname()[1]
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        assert await accepted != 0
        writer.close()
