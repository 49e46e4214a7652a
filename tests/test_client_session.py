"""``ClientSession`` over the memory transport, against real ``toolkit.Server``s, in both eras.

The version (``"auto"``: ``server/discover``, else ``initialize``; or pinned), the modern
``_meta`` and headers, the server's questions answered in either era, tasks in both forms, and
errors. ``toolkit.testing.Client`` is this session too: the rest of the suite covers it as well.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping
from typing import Any

import pytest
from pydantic import BaseModel
from tests.test_tasks import make_server as make_task_server
from tests.wire import assert_valid

from toolkit import Context, Server
from toolkit._client.memory import InProcessEngine, MemoryTransport
from toolkit._client.session import ClientSession, InputRounds, NoHandler, VersionNotAgreed
from toolkit._client.tasks import call_task
from toolkit._client.transport import Deliver, OnClose, TransportClosed
from toolkit._errors import ClientError
from toolkit._jsonrpc import Notification, Reply, Request, Response, encode, error_reply
from toolkit._session import Connection
from toolkit._types import CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY, LOG_LEVEL_KEY, PROTOCOL_VERSION_KEY, Send

pytestmark = pytest.mark.timeout(20)

MODERN = "2026-07-28"
LATEST_LEGACY = "2025-11-25"
LEGACY = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")


class Name(BaseModel):
    name: str


def make_server() -> Server:
    server = Server("session-test", instructions="Be kind.")

    @server.tool
    def count() -> int:
        """A number."""
        return 42

    @server.tool
    async def info(ctx: Context) -> dict[str, Any]:
        """What the server knows of the request."""
        return {
            "version": ctx.protocol_version,
            "client": (ctx.client_info or {}).get("name"),
            "elicitation": ctx.client_supports("elicitation"),
        }

    @server.tool
    async def greet(ctx: Context) -> str:
        """Asks a name, then a model, then the roots."""
        answer = await ctx.elicit("Your name?", Name)
        name = answer.data.name if answer.accepted and answer.data else "nobody"
        sampled = await ctx.sample("Say hi", max_tokens=5)
        roots = await ctx.list_roots()
        return f"{sampled.text} {name} in {', '.join(root.uri for root in roots)}"

    @server.tool
    async def ask(ctx: Context) -> str:
        """Asks a name."""
        answer = await ctx.elicit("Your name?", Name)
        return answer.data.name if answer.accepted and answer.data else f"no name ({answer.action})"

    @server.tool
    async def chatty(ctx: Context) -> str:
        """Logs."""
        await ctx.warning("careful")
        return "ok"

    return server


def name_is(name: str) -> Any:
    def answer(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"name": name}}

    return answer


async def model(params: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m", "stopReason": "endTurn"}


def work_root(params: dict[str, Any]) -> dict[str, Any]:
    return {"roots": [{"uri": "file:///work"}]}


HANDLERS = {"elicitation/create": name_is("Ada"), "sampling/createMessage": model, "roots/list": work_root}


class Recording:
    """A transport in front of another, remembering what the session sent and with which headers."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.sent: list[tuple[dict[str, Any], dict[str, str]]] = []

    async def open(self, deliver: Deliver, *, on_close: OnClose | None = None) -> None:
        await self.inner.open(deliver, on_close=on_close)

    async def send(self, message: dict[str, Any], *, headers: Mapping[str, str] | None = None) -> None:
        self.sent.append((message, dict(headers or {})))
        await self.inner.send(message, headers=headers)

    async def close(self) -> None:
        await self.inner.close()

    def methods(self) -> list[str]:
        return [message.get("method", "(answer)") for message, _ in self.sent]


class Refusing:
    """An engine that answers ``server/discover`` with ``error`` (a legacy server, or a modern one refusing)."""

    def __init__(self, engine: InProcessEngine, error: dict[str, Any]) -> None:
        self.engine = engine
        self.error = error

    async def handle_request(self, request: Request, connection: Any, send: Send, *, access_token: Any = None) -> Reply:
        if request.method == "server/discover":
            return Reply(
                encode(error_reply(request.id, self.error["code"], self.error["message"], self.error.get("data")))
            )
        return await self.engine.handle_request(request, connection, send, access_token=access_token)

    def handle_notification(self, notification: Notification, connection: Any) -> None:
        self.engine.handle_notification(notification, connection)

    def handle_response(self, response: Response, connection: Any) -> bool:
        return self.engine.handle_response(response, connection)


class Silent(Recording):
    """A server that never answers ``server/discover`` (some legacy stdio servers ignore what they do not know)."""

    async def send(self, message: dict[str, Any], *, headers: Mapping[str, str] | None = None) -> None:
        if message.get("method") == "server/discover":
            self.sent.append((message, dict(headers or {})))
            return
        await super().send(message, headers=headers)


@contextlib.asynccontextmanager
async def opened(
    server: Server, *, engine: InProcessEngine | None = None, wrap: type[Recording] = Recording, **options: Any
) -> AsyncIterator[tuple[ClientSession, Recording]]:
    """A session to ``server`` over the memory transport, opened, with its transport recording."""
    connection = Connection()
    transport = wrap(MemoryTransport(engine or server.engine, connection))
    session = ClientSession(transport, **options)
    async with server.running():
        await session.open()
        try:
            yield session, transport
        finally:
            server.engine.forget(connection.session)
            await session.close()


# --- the version ------------------------------------------------------------------------------


async def test_auto_is_modern_when_the_server_answers_discover() -> None:
    async with opened(make_server(), client_info={"name": "probe", "version": "1"}) as (session, transport):
        info = await session.call_tool("info")
    assert (session.protocol_version, session.modern) == (MODERN, True)
    assert transport.methods() == ["server/discover", "tools/call"], "no initialize"
    assert session.initialize_result is None
    assert session.discover_result is not None
    assert MODERN in session.discover_result["supportedVersions"]
    assert session.server_capabilities is not None and "tools" in session.server_capabilities
    assert session.server_info is not None and session.server_info["name"] == "session-test"
    assert info["structuredContent"] == {"version": MODERN, "client": "probe", "elicitation": False}


async def test_modern_requests_carry_the_meta_and_the_routing_headers() -> None:
    async with opened(make_server(), protocol_version=MODERN, handlers=HANDLERS, log_level="info") as (
        session,
        transport,
    ):
        await session.call_tool("count", meta={"progressToken": "p"})
    (message, headers), *_ = transport.sent
    meta = message["params"]["_meta"]
    assert meta[PROTOCOL_VERSION_KEY] == MODERN
    assert meta[CLIENT_CAPABILITIES_KEY] == {"elicitation": {}, "sampling": {}, "roots": {}}
    assert meta[CLIENT_INFO_KEY] == {"name": "toolkit-client", "version": "1.0"}
    assert meta[LOG_LEVEL_KEY] == "info"
    assert meta["progressToken"] == "p"
    assert headers == {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "count"}


class Headless(Recording):
    """A transport that sends the message alone (as stdio and the memory transport do)."""

    sends_headers = False

    async def send(self, message: dict[str, Any], *, headers: Mapping[str, str] | None = None) -> None:
        assert headers is None, f"headers made for a transport that sends none: {headers!r}"
        await super().send(message, headers=headers)


@pytest.mark.parametrize("version", [MODERN, "2025-06-18"])
async def test_a_transport_that_sends_no_headers_is_handed_none(version: str) -> None:
    async with opened(make_server(), wrap=Headless, protocol_version=version, handlers=HANDLERS) as (
        session,
        transport,
    ):
        await session.call_tool("count", meta={"progressToken": "p"})
        await session.notify("notifications/roots/list_changed")
    assert [message.get("method") for message, _ in transport.sent][-2:] == [
        "tools/call",
        "notifications/roots/list_changed",
    ]
    assert all(headers == {} for _, headers in transport.sent)


@pytest.mark.parametrize("version", LEGACY)
async def test_a_pinned_legacy_version_opens_with_initialize(version: str) -> None:
    async with opened(make_server(), protocol_version=version, log_level="error") as (session, transport):
        counted = await session.call_tool("count")
    assert transport.methods()[:3] == ["initialize", "notifications/initialized", "logging/setLevel"]
    initialize, headers = transport.sent[0]
    assert initialize["params"]["protocolVersion"] == version
    assert headers == {}, "the version is negotiated in the body"
    assert [headers for _, headers in transport.sent[1:]] == [{"MCP-Protocol-Version": version}] * 3
    assert "_meta" not in transport.sent[-1][0]["params"]
    assert session.initialize_result is not None and session.initialize_result["protocolVersion"] == version
    assert session.server_info is not None and session.server_info["name"] == "session-test"
    assert session.initialize_result["instructions"] == "Be kind."
    assert (session.protocol_version, session.modern) == (version, False)
    assert counted.get("structuredContent") == ({"result": 42} if version in ("2025-06-18", "2025-11-25") else None)


async def test_auto_falls_back_to_initialize_when_discover_is_refused() -> None:
    server = make_server()
    legacy = Refusing(server.engine, {"code": -32601, "message": "Method not found"})
    async with opened(server, engine=legacy) as (session, transport):
        info = await session.call_tool("info")
    assert transport.methods()[:3] == ["server/discover", "initialize", "notifications/initialized"]
    assert (session.protocol_version, session.modern) == (LATEST_LEGACY, False)
    assert info["structuredContent"]["version"] == LATEST_LEGACY


async def test_auto_falls_back_to_initialize_when_discover_gets_no_answer() -> None:
    async with opened(make_server(), wrap=Silent, probe_timeout=0.05) as (session, transport):
        await session.call_tool("count")
    assert transport.methods()[:2] == ["server/discover", "initialize"]
    assert session.protocol_version == LATEST_LEGACY


async def test_an_unsupported_version_error_picks_a_version_from_the_servers_list() -> None:
    server = make_server()
    # A modern server whose modern versions are not this client's, but which also speaks 2025-06-18.
    refusing = Refusing(
        server.engine,
        {"code": -32022, "message": "Unsupported", "data": {"supported": ["2099-01-01", "2025-06-18"]}},
    )
    async with opened(server, engine=refusing) as (session, transport):
        assert session.protocol_version == "2025-06-18"
    initialize = transport.sent[1][0]
    assert initialize["method"] == "initialize" and initialize["params"]["protocolVersion"] == "2025-06-18"


async def test_no_version_in_common_and_other_modern_errors_are_raised() -> None:
    server = make_server()
    none_in_common = Refusing(
        server.engine, {"code": -32022, "message": "Unsupported", "data": {"supported": ["2099-01-01"]}}
    )
    with pytest.raises(VersionNotAgreed, match="2099-01-01"):
        async with opened(server, engine=none_in_common):
            pass
    header_mismatch = Refusing(server.engine, {"code": -32020, "message": "Header mismatch"})
    with pytest.raises(ClientError) as refused:
        async with opened(server, engine=header_mismatch):
            pass
    assert refused.value.code == -32020, "a modern error: never a fall back to initialize"


def test_an_unknown_pinned_version_is_refused() -> None:
    with pytest.raises(ValueError, match="1999-01-01"):
        ClientSession(MemoryTransport(make_server().engine), protocol_version="1999-01-01")


# --- the server's questions ---------------------------------------------------------------------


@pytest.mark.parametrize("version", [MODERN, LATEST_LEGACY, "2025-06-18"])
async def test_questions_are_answered_by_the_handlers_in_both_eras(version: str) -> None:
    seen: list[dict[str, Any]] = []
    async with opened(make_server(), protocol_version=version, handlers=HANDLERS, on_message=seen.append) as (
        session,
        _,
    ):
        greeted = await session.call_tool("greet")
    assert greeted["content"][0]["text"] == "hi Ada in file:///work"
    for message in seen:
        assert_valid(message, version)
    asked = [message["method"] for message in seen if "id" in message]
    if version == MODERN:  # multi round-trip: the questions came in results, not as requests
        assert asked == []
    else:
        assert asked == ["elicitation/create", "sampling/createMessage", "roots/list"]


async def test_modern_rounds_can_be_followed_by_hand() -> None:
    async with opened(make_server(), protocol_version=MODERN, handlers=HANDLERS) as (session, transport):
        first = await session.call_tool("ask", follow_input=False)
        assert first["resultType"] == "input_required"
        (key,) = first["inputRequests"]
        answered = await session.result(
            "tools/call",
            {
                "name": "ask",
                "arguments": {},
                "inputResponses": {key: await session.answer(first["inputRequests"][key])},
                "requestState": first["requestState"],
            },
        )
        followed = await session.call_tool("ask")
    assert answered["content"][0]["text"] == followed["content"][0]["text"] == "Ada"
    second_round = transport.sent[-1][0]["params"]
    assert set(second_round) >= {"inputResponses", "requestState"}, "the last round answered the first"


async def test_a_missing_handler_in_each_era() -> None:
    # Modern: the question comes back to the caller, who cannot answer it.
    async with opened(make_server(), protocol_version=MODERN, capabilities={"elicitation": {}}) as (session, _):
        with pytest.raises(NoHandler, match="elicitation/create"):
            await session.call_tool("ask")
    # Legacy: the server's request is answered with -32601 and the tool sees that error.
    async with opened(make_server(), protocol_version=LATEST_LEGACY, capabilities={"elicitation": {}}) as (
        session,
        transport,
    ):
        result = await session.call_tool("ask")
    assert result["isError"] is True
    (answer,) = [message for message, _ in transport.sent if "method" not in message]
    assert answer["error"]["code"] == -32601


async def test_a_failing_handler_is_an_error_answer_in_legacy_and_raises_in_modern() -> None:
    def broken(params: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("the dialog crashed")

    handlers = {"elicitation/create": broken}
    async with opened(make_server(), protocol_version=LATEST_LEGACY, handlers=handlers) as (session, transport):
        result = await session.call_tool("ask")
    assert result["isError"] is True
    (answer,) = [message for message, _ in transport.sent if "method" not in message]
    assert answer["error"] == {
        "code": -32603,
        "message": "the client's elicitation/create handler failed: the dialog crashed",
    }
    async with opened(make_server(), protocol_version=MODERN, handlers=handlers) as (session, _):
        with pytest.raises(RuntimeError, match="the dialog crashed"):
            await session.call_tool("ask")


async def test_rounds_are_bounded() -> None:
    async with opened(make_server(), protocol_version=MODERN, handlers=HANDLERS) as (session, _):
        with pytest.raises(InputRounds, match="after 1 rounds"):
            await session.call_tool("greet", max_rounds=1)


# --- tasks --------------------------------------------------------------------------------------


def yes(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {"confirm": True}}


@pytest.mark.parametrize("version", [MODERN, LATEST_LEGACY])
async def test_tasks_are_followed_in_both_forms(version: str) -> None:
    server, _ = make_task_server()
    async with opened(server, protocol_version=version, handlers={"elicitation/create": yes}) as (session, transport):
        confirmed = await call_task(session, "confirm", {"item": "x"})  # the server's poll interval (20 ms)
        doubled = await call_task(session, "double", {"n": 2}, ttl_ms=5000, poll_interval=0.005)
        with pytest.raises(ClientError) as failed:
            await call_task(session, "broken")
        plain = await call_task(session, "plain", {"n": 3}) if version == MODERN else None
    assert confirmed["content"][0]["text"] == "deleted x"
    assert doubled["structuredContent"] == ([2, 4] if version == MODERN else {"result": [2, 4]})
    assert failed.value.error == {"code": -32603, "message": "the backend refused", "data": {"backend": "db-1"}}
    methods = transport.methods()
    if version == MODERN:
        assert plain is not None and plain["structuredContent"] == 3
        assert "tasks/update" in methods, "the question was answered through the task"
        declared = transport.sent[-1][0]["params"]["_meta"][CLIENT_CAPABILITIES_KEY]
        assert declared == {"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}}
    else:
        assert "tasks/result" in methods and "tasks/update" not in methods
        calls = [message for message, _ in transport.sent if message.get("method") == "tools/call"]
        assert calls[1]["params"]["task"] == {"ttl": 5000}


async def test_a_task_that_outlives_the_timeout_and_a_version_without_tasks() -> None:
    server, _ = make_task_server()
    async with opened(server, protocol_version=MODERN) as (session, _):
        with pytest.raises(TimeoutError, match="still working"):
            await call_task(session, "forever", timeout=0.05, poll_interval=0.01)
    async with opened(server, protocol_version="2025-06-18") as (session, _):
        with pytest.raises(ValueError, match="2025-06-18 has no tasks"):
            await call_task(session, "double", {"n": 1})


# --- errors and the connection --------------------------------------------------------------------


@pytest.mark.parametrize("version", [MODERN, LATEST_LEGACY])
async def test_json_rpc_errors_raise_client_error_and_request_returns_them(version: str) -> None:
    async with opened(make_server(), protocol_version=version) as (session, _):
        with pytest.raises(ClientError) as unknown_tool:
            await session.call_tool("nope")
        with pytest.raises(ClientError) as unknown_method:
            await session.result("nope/nope")
        raw = await session.request("nope/nope")
    assert unknown_tool.value.code == -32602
    assert unknown_method.value.code == -32601
    assert raw["error"]["code"] == -32601 and isinstance(raw["id"], int)
    assert "_http_status" not in raw, "only when the transport is asked for it"


async def test_the_http_status_rides_along_when_asked_for() -> None:
    server = make_server()
    session = ClientSession(MemoryTransport(server.engine, http_status=True), protocol_version=MODERN)
    async with server.running(), session:
        unknown = await session.request("nope/nope")
        fine = await session.request("tools/list")
    assert (unknown["_http_status"], fine["_http_status"]) == (404, 200)


async def test_a_closed_transport_sends_nothing() -> None:
    async with opened(make_server(), protocol_version=MODERN) as (session, _):
        pass
    with pytest.raises(TransportClosed):
        await session.transport.send({"jsonrpc": "2.0", "method": "notifications/initialized"})


class Scripted:
    """A transport whose server is the test: it keeps what the session sends and delivers what the test says."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.deliver: Deliver | None = None

    async def open(self, deliver: Deliver, *, on_close: OnClose | None = None) -> None:
        self.deliver = deliver

    async def send(self, message: dict[str, Any], *, headers: Mapping[str, str] | None = None) -> None:
        self.sent.append(message)

    async def close(self) -> None:
        self.deliver = None


async def test_responses_are_correlated_by_id_whatever_their_order() -> None:
    transport = Scripted()
    async with ClientSession(transport, protocol_version=MODERN) as session:
        first = asyncio.create_task(session.result("tools/list"))
        second = asyncio.create_task(session.result("prompts/list"))
        while len(transport.sent) < 2:
            await asyncio.sleep(0)
        ids = {message["method"]: message["id"] for message in transport.sent}
        assert transport.deliver is not None
        await transport.deliver({"jsonrpc": "2.0", "id": ids["prompts/list"], "result": {"prompts": []}})
        await transport.deliver({"jsonrpc": "2.0", "id": "stranger", "result": {}})  # nothing waits: dropped
        await transport.deliver({"jsonrpc": "2.0", "id": ids["tools/list"], "result": {"tools": []}})
        assert (await first, await second) == ({"tools": []}, {"prompts": []})
        waiting = asyncio.create_task(session.result("tools/list", timeout=0.01))
        with pytest.raises(TimeoutError, match=r"tools/list within 0\.01 s"):
            await waiting
        pending = asyncio.create_task(session.result("tools/list"))
        while len(transport.sent) < 4:
            await asyncio.sleep(0)
    with pytest.raises(TransportClosed, match="tools/list got no response"):
        await pending


async def test_pings_are_answered_and_a_cancelled_question_is_not() -> None:
    transport = Scripted()
    started = asyncio.Event()

    async def slow(params: dict[str, Any]) -> dict[str, Any]:
        started.set()
        await asyncio.sleep(3600)
        return {"action": "decline"}

    session = ClientSession(transport, protocol_version=LATEST_LEGACY, handlers={"elicitation/create": slow})
    await session.connect()  # no handshake: this test is the server
    try:
        assert transport.deliver is not None
        await transport.deliver({"jsonrpc": "2.0", "id": "p", "method": "ping"})
        await transport.deliver({"jsonrpc": "2.0", "id": 7, "method": "elicitation/create", "params": {}})
        await started.wait()
        await transport.deliver({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}})
        for _ in range(5):
            await asyncio.sleep(0)
        assert not session._answering
    finally:
        await session.close()
    assert transport.sent == [{"jsonrpc": "2.0", "id": "p", "result": {}}]


class ScriptedHttp(Scripted):
    """A scripted transport that puts headers on the wire, as Streamable HTTP does."""

    sends_headers = True


def tool_with_header(name: str, annotated: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "inputSchema": {"type": "object", "properties": {"region": annotated}}}


INVALID_HEADER_TOOLS = [
    tool_with_header("empty", {"type": "string", "x-mcp-header": ""}),
    tool_with_header("space", {"type": "string", "x-mcp-header": "My Region"}),
    tool_with_header("newline", {"type": "string", "x-mcp-header": "Region\n"}),
    tool_with_header("accented", {"type": "string", "x-mcp-header": "Région"}),
    tool_with_header("number", {"type": "number", "x-mcp-header": "Region"}),
    tool_with_header("object", {"type": "object", "x-mcp-header": "Region"}),
    {
        "name": "twice",
        "inputSchema": {
            "type": "object",
            "properties": {
                "a": {"type": "string", "x-mcp-header": "Region"},
                "b": {"type": "string", "x-mcp-header": "region"},
            },
        },
    },
    {
        "name": "in-items",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "Region"}}},
        },
    },
]


@pytest.mark.parametrize("transport_class", [ScriptedHttp, Scripted], ids=["http", "stdio"])
async def test_tools_with_invalid_header_annotations_are_left_out_over_http(
    transport_class: type[Scripted], caplog: pytest.LogCaptureFixture
) -> None:
    transport = transport_class()
    valid = tool_with_header("valid", {"type": "string", "x-mcp-header": "Region"})
    async with ClientSession(transport, protocol_version=MODERN) as session:
        listing = asyncio.create_task(session.list_tools())
        while not transport.sent:
            await asyncio.sleep(0)
        assert transport.deliver is not None
        reply = {"tools": [valid, *INVALID_HEADER_TOOLS]}
        await transport.deliver({"jsonrpc": "2.0", "id": transport.sent[0]["id"], "result": reply})
        tools = await listing
    if transport_class is ScriptedHttp:  # 2026-07-28 streamable-http: MUST exclude, SHOULD log why
        assert [tool["name"] for tool in tools] == ["valid"]
        warned = [record.getMessage() for record in caplog.records if record.levelname == "WARNING"]
        assert len(warned) == len(INVALID_HEADER_TOOLS)
        assert any("tool 'twice'" in line and "used twice" in line for line in warned)
    else:  # other transports MAY ignore the annotations: every tool kept
        assert len(tools) == 1 + len(INVALID_HEADER_TOOLS)
    assert session.tool_params == {"valid": {"Region": ("region",)}}


async def answer_next(transport: Scripted, count: int, reply: dict[str, Any]) -> dict[str, Any]:
    """Wait for the session's ``count``-th message and answer it with ``reply``; the message."""
    while len(transport.sent) < count:
        await asyncio.sleep(0)
    assert transport.deliver is not None
    message = transport.sent[count - 1]
    await transport.deliver({"jsonrpc": "2.0", "id": message["id"], **reply})
    return message


REFUSED_ONCE = {"error": {"code": -32022, "message": "Unsupported protocol version", "data": {"supported": [MODERN]}}}


@pytest.mark.parametrize("requested", [MODERN, "auto"])
async def test_a_version_refused_once_but_listed_is_retried_once(requested: str) -> None:
    """2026-07-28 basic/versioning: the client retries with a version the server lists, even the one it sent."""
    transport = Scripted()
    session = ClientSession(transport, protocol_version=requested)
    async with contextlib.AsyncExitStack() as stack:
        opening = asyncio.create_task(stack.enter_async_context(session))
        if requested == "auto":
            first = await answer_next(transport, 1, REFUSED_ONCE)
            assert first["method"] == "server/discover"
            await answer_next(transport, 2, {"result": {"supportedVersions": [MODERN], "capabilities": {}}})
        await opening
        assert session.protocol_version == MODERN
        listing = asyncio.create_task(session.result("tools/list"))
        base = len(transport.sent)
        await answer_next(transport, base + 1, REFUSED_ONCE)
        again = await answer_next(transport, base + 2, {"result": {"tools": []}})
        assert again["method"] == "tools/list"
        assert await listing == {"tools": []}
        # Refused twice: the second refusal is the answer (no loop).
        twice = asyncio.create_task(session.request("tools/list"))
        base = len(transport.sent)
        await answer_next(transport, base + 1, REFUSED_ONCE)
        await answer_next(transport, base + 2, REFUSED_ONCE)
        assert (await twice)["error"]["code"] == -32022


async def test_a_server_that_declares_no_logging_is_not_asked_to_set_a_level() -> None:
    """mcp 1.x FastMCP declares no ``logging`` capability and answers ``logging/setLevel`` with -32601."""
    transport = Scripted()
    session = ClientSession(transport, protocol_version=LATEST_LEGACY, log_level="debug")
    opening = asyncio.create_task(session.open())
    while not transport.sent:
        await asyncio.sleep(0)
    assert transport.deliver is not None
    initialize = transport.sent[0]
    await transport.deliver(
        {
            "jsonrpc": "2.0",
            "id": initialize["id"],
            "result": {
                "protocolVersion": LATEST_LEGACY,
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "quiet", "version": "1"},
            },
        }
    )
    await opening
    await session.close()
    assert [message["method"] for message in transport.sent] == ["initialize", "notifications/initialized"]
