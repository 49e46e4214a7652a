"""A proxied call's result sent on as the upstream wrote it (``CallOutcome.wire``), and the client's
per-call savings that path stands on: the response's text kept (``BODY_KEY``), headers made once.

The upstreams here speak over a real wire (an HTTP server on a socket, a stdio child), since
only a wire carries a response's text. Every answer through a gateway that sends results on as
they came is compared, byte for byte, with the same gateway made to shape them again (a
pass-through ``on_call_tool`` middleware reads each outcome, so nothing is sent on as it came).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pydantic_core
import pytest
from tests.http_support import serve

import toolkit
from toolkit import Server, ToolResult
from toolkit._client.http import HttpTransport
from toolkit._client.session import CallScope, ClientSession
from toolkit._client.transport import BODY_KEY, parse_response
from toolkit._compat import ToolShape, as_sent, members_for, plain_text_only
from toolkit.middleware import Middleware

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
UPSTREAM = Path(__file__).parent / "support" / "relay_upstream.py"
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("nums", {"n": 3}),
    ("point", {}),
    ("add", {"a": 40, "b": 2}),
    ("nothing", {}),
    ("fails", {}),
    ("own_text", {}),
    ("accents", {}),
    ("big", {}),
    ("nums", {"n": "three"}),  # the upstream refuses the arguments: an isError result
    ("absent", {}),  # no such tool: a JSON-RPC error
]


class PassThrough(Middleware):
    """Reads every call's outcome (and leaves it as it is): the gateway shapes each result again."""

    def __init__(self) -> None:
        self.seen: list[Any] = []

    async def on_call_tool(self, request: Any, call_next: Any) -> Any:
        result = await call_next(request)
        self.seen.append((result.content, result.structured_content))
        return result


def _post(client: httpx.AsyncClient, url: str, request_id: Any, name: str, arguments: dict[str, Any]) -> Any:
    body = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }
    body["params"]["_meta"] = META
    headers = {**HEADERS, "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": name}
    return client.post(url, content=json.dumps(body), headers=headers)


@contextlib.asynccontextmanager
async def gateways(target: str | list[str]) -> AsyncIterator[tuple[str, str, PassThrough]]:
    """Two gateways of ``target``: one as it comes, one shaping every result again; their URLs."""
    reading = PassThrough()
    async with (
        serve(Server.proxy(target, name="gateway")) as plain,
        serve(Server.proxy(target, name="gateway", middleware=[reading])) as shaping,
    ):
        yield plain.url, shaping.url, reading


async def _target(stack: contextlib.AsyncExitStack, kind: str) -> str | list[str]:
    """The relay upstream: served over HTTP for the rest of ``stack`` (its URL), or its stdio command."""
    if kind == "http":
        upstream = await stack.enter_async_context(serve(_relay_upstream()))
        return str(upstream.url)
    return [sys.executable, str(UPSTREAM)]


@pytest.mark.parametrize("kind", ["http", "stdio"])
async def test_a_result_sent_on_as_it_came_is_the_one_shaping_it_again_gives(kind: str) -> None:
    async with contextlib.AsyncExitStack() as stack:
        plain, shaping, reading = await stack.enter_async_context(gateways(await _target(stack, kind)))
        client = await stack.enter_async_context(httpx.AsyncClient(timeout=60))
        for index, (name, arguments) in enumerate(CALLS):
            for request_id in (index, f"call-{index}"):
                sent_on = await _post(client, plain, request_id, name, arguments)
                shaped = await _post(client, shaping, request_id, name, arguments)
                assert sent_on.status_code == shaped.status_code
                assert sent_on.content == shaped.content, name
        assert len(reading.seen) == 2 * (len(CALLS) - 1)  # the middleware did read every outcome
        first = (await _post(client, plain, 1, "nums", {"n": 2})).json()["result"]
    assert first["structuredContent"] == [0, 1]
    assert first["content"] == [{"type": "text", "text": "[0,1]"}]
    assert first["_meta"] == {"io.modelcontextprotocol/serverInfo": {"name": "gateway", "version": toolkit.__version__}}


class LegacySession:
    """A legacy session of one gateway, opened with httpx: its requests' raw answers."""

    def __init__(self, client: httpx.AsyncClient, url: str, version: str) -> None:
        self.client, self.url, self.version = client, url, version
        self.headers = {**HEADERS, "MCP-Protocol-Version": version}

    async def open(self) -> None:
        params = {"protocolVersion": self.version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
        answer = await self.client.post(
            self.url, json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}, headers=HEADERS
        )
        assert answer.json()["result"]["protocolVersion"] == self.version
        self.headers["Mcp-Session-Id"] = answer.headers["mcp-session-id"]
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (await self.client.post(self.url, json=initialized, headers=self.headers)).status_code == 202

    def call(self, request_id: Any, name: str, arguments: dict[str, Any]) -> Any:
        body = {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments},
        }
        return self.client.post(self.url, content=json.dumps(body), headers=self.headers)


@pytest.mark.parametrize("kind", ["http", "stdio"])
@pytest.mark.parametrize("version", ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"])
async def test_a_legacy_caller_gets_from_the_bytes_as_they_came_what_shaping_again_gives(
    kind: str, version: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 2026-07-28 upstream's result for a legacy caller: ``members_for`` reshapes the bytes (a
    value wrapped as ``{"result": ...}``, or left out before 2025-06-18); the same gateway made to
    shape each outcome again answers with the same bytes."""
    taken: list[str] = []

    def counted(members: bytes, plain: bool, version: str, shape: Any) -> bytes | None:
        spliced = members_for(members, plain, version, shape)
        if spliced is not None:
            taken.append(version)
        return spliced

    monkeypatch.setattr(toolkit._compat, "members_for", counted)
    async with contextlib.AsyncExitStack() as stack:
        plain, shaping, reading = await stack.enter_async_context(gateways(await _target(stack, kind)))
        client = await stack.enter_async_context(httpx.AsyncClient(timeout=60))
        sessions = [LegacySession(client, url, version) for url in (plain, shaping)]
        for session in sessions:
            await session.open()
        for index, (name, arguments) in enumerate(CALLS):
            for request_id in (index, f"call-{index}"):
                sent_on, shaped = [await session.call(request_id, name, arguments) for session in sessions]
                assert sent_on.status_code == shaped.status_code
                assert sent_on.content == shaped.content, name
        assert len(reading.seen) == 2 * (len(CALLS) - 1)
        assert len(taken) >= 2 * 6 and set(taken) == {version}  # nums, point, add, nothing, fails, accents at least
        nums = (await sessions[0].call(1, "nums", {"n": 2})).json()["result"]
        point = (await sessions[0].call(2, "point", {})).json()["result"]
    assert nums["content"] == [{"type": "text", "text": "[0,1]"}]
    assert "_meta" not in nums
    if version < "2025-06-18":
        assert "structuredContent" not in nums and "structuredContent" not in point
    else:
        assert nums["structuredContent"] == {"result": [0, 1]}
        assert isinstance(point["structuredContent"], dict) and "result" not in point["structuredContent"]


def test_members_for_shapes_a_modern_results_bytes_for_each_version() -> None:
    listed = b'{"content":[{"type":"text","text":"[1]"}],"structuredContent":[1]'
    obj = b'{"content":[{"type":"text","text":"{\\"a\\":1}"}],"structuredContent":{"a":1}'
    text_only = b'{"content":[{"type":"text","text":"x"}],"isError":true'
    assert members_for(listed, True, MODERN, None) == listed
    assert members_for(listed, True, "2025-11-25", None) == (
        b'{"content":[{"type":"text","text":"[1]"}],"structuredContent":{"result":[1]}'
    )
    assert members_for(obj, True, "2025-06-18", None) == obj  # an object is structuredContent as it is
    wrapped = ToolShape({}, wrapped=True)
    assert members_for(obj, True, "2025-06-18", wrapped).endswith(b'"structuredContent":{"result":{"a":1}}')
    assert members_for(listed, True, "2025-03-26", None) == b'{"content":[{"type":"text","text":"[1]"}]'
    assert members_for(text_only, True, "2024-11-05", None) == text_only
    assert members_for(listed, False, "2025-11-25", None) is None  # a block of another type: shaped again
    assert members_for(listed, False, MODERN, None) == listed
    spaced = b'{"content":[{"type":"text","text":"[1]"}],"structuredContent": [1]'
    assert members_for(spaced, True, "2025-11-25", None) is None
    # A text holding the member's name cannot end the content early: its quotes are escaped.
    tricky = b'{"content":[{"type":"text","text":"\\",\\"structuredContent\\":"}],"structuredContent":[2]'
    assert members_for(tricky, True, "2025-11-25", None) == (
        b'{"content":[{"type":"text","text":"\\",\\"structuredContent\\":"}],"structuredContent":{"result":[2]}'
    )
    assert plain_text_only([{"type": "text", "text": "a"}])
    assert not plain_text_only([{"type": "text", "text": "a", "annotations": {}}])
    assert not plain_text_only([{"type": "image", "data": "AA"}])
    assert not plain_text_only(None)


async def test_a_caller_of_another_version_and_a_middleware_get_the_natural_outcome() -> None:
    seen: list[tuple[Any, Any]] = []

    class Doubling(Middleware):
        async def on_call_tool(self, request: Any, call_next: Any) -> Any:
            result = await call_next(request)
            seen.append((result.content, result.structured_content))
            if isinstance(result.structured_content, list):
                return ToolResult(structured_content=result.structured_content * 2)
            return result

    async with serve(_relay_upstream()) as upstream:
        url = upstream.url
        async with toolkit.Client(Server.proxy(url), protocol_version=LEGACY) as legacy:
            nums = await legacy.call_tool("nums", {"n": 2})
        assert nums.structured_content == {"result": [0, 1]}
        assert nums.text == "[0,1]"
        async with toolkit.Client(Server.proxy(url, middleware=[Doubling()]), protocol_version=MODERN) as modern:
            doubled = await modern.call_tool("nums", {"n": 2})
            own = await modern.call_tool("own_text", {})
    assert doubled.structured_content == [0, 1, 0, 1]
    assert doubled.text == "[0,1,0,1]"  # the new value's text, not the upstream's
    assert seen[0] == (None, [0, 1])  # the fallback text is no content of the tool's own
    assert own.text == "see the data"


def _result(**members: Any) -> dict[str, Any]:
    result: dict[str, Any] = {"content": [{"type": "text", "text": "[1]"}], "structuredContent": [1]}
    result.update(members)
    result.setdefault("resultType", "complete")
    result.setdefault("_meta", {"io.modelcontextprotocol/serverInfo": {"name": "up", "version": "1"}})
    return result


def _body(result: dict[str, Any], request_id: Any = 7, **extra: Any) -> bytes:
    return pydantic_core.to_json({"jsonrpc": "2.0", "id": request_id, "result": result, **extra})


def test_as_sent_takes_a_modern_result_written_compactly_in_toolkits_order() -> None:
    result = _result()
    members = as_sent(_body(result), result, MODERN)
    assert members == (b'{"content":[{"type":"text","text":"[1]"}],"structuredContent":[1]', True)
    errored = _result(isError=True)
    errored.pop("structuredContent")
    sent = as_sent(_body(errored), errored, MODERN)
    assert sent == (b'{"content":[{"type":"text","text":"[1]"}],"isError":true', True)
    image = _result(content=[{"type": "image", "data": "AAAA", "mimeType": "image/png"}])
    assert as_sent(_body(image), image, MODERN) == (
        b'{"content":[{"type":"image","data":"AAAA","mimeType":"image/png"}],"structuredContent":[1]',
        False,  # not text alone: shaped for a legacy caller, not sent on as it is
    )
    other = {**result, "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "another", "version": "2"}}}
    assert as_sent(_body(other), other, MODERN) == members  # the envelope is the server's own, not the last one


@pytest.mark.parametrize(
    ("why", "result", "body"),
    [
        ("no text kept", _result(), None),
        ("a string id", _result(), _body(_result(), "seven")),
        ("another member in the response", _result(), _body(_result(), extra=1)),
        ("not toolkit's order", {"structuredContent": [1], **_result()}, None),
        ("isError false", _result(isError=False), None),
        ("an error with a value, which no version is sent", _result(isError=True), None),
        ("a task", _result(resultType="task"), None),
        ("more in _meta", _result(_meta={"io.modelcontextprotocol/serverInfo": {"name": "up"}, "k": 1}), None),
        ("an audio block lacking its mimeType", _result(content=[{"type": "audio", "data": "AA"}]), None),
        ("spaced", _result(), json.dumps({"jsonrpc": "2.0", "id": 7, "result": _result()}).encode()),
    ],
)
def test_as_sent_refuses_what_it_cannot_tell_apart_exactly(
    why: str, result: dict[str, Any], body: bytes | None
) -> None:
    text = _body(result) if body is None and why != "no text kept" else body
    parsed = parse_response(text)["result"] if text is not None else result
    assert as_sent(text, parsed, MODERN) is None, why
    assert as_sent(_body(_result()), _result(), LEGACY) is None  # a legacy result has no envelope to take off


def test_only_strict_json_is_kept_to_be_sent_on() -> None:
    strict = b'{"jsonrpc":"2.0","id":1,"result":{"a":1}}'
    assert parse_response(strict) == {"jsonrpc": "2.0", "id": 1, "result": {"a": 1}, BODY_KEY: strict}
    lenient = parse_response(b'{"jsonrpc":"2.0","id":1,"result":{"a":NaN}}')
    assert lenient == {"jsonrpc": "2.0", "id": 1, "result": {"a": pytest.approx(float("nan"), nan_ok=True)}}
    assert BODY_KEY not in lenient
    assert parse_response(b'{"a":1}') == {"a": 1}  # not a response holding a result alone: no text kept
    assert BODY_KEY not in parse_response(b'{"jsonrpc":"2.0","id":1,"result":{},"x":1}')
    with pytest.raises(ValueError):
        parse_response(b"not json")


@pytest.mark.parametrize("kind", ["http", "stdio"])
async def test_a_responses_text_goes_to_its_scope_and_never_into_a_response(kind: str) -> None:
    async with contextlib.AsyncExitStack() as stack:
        if kind == "http":
            upstream = await stack.enter_async_context(serve(_relay_upstream()))
            client = toolkit.Client(upstream.url, protocol_version=MODERN)
        else:
            client = toolkit.Client([sys.executable, str(UPSTREAM)], protocol_version=MODERN)
        session = await client.open_session(stack)
        scope = CallScope({})
        for _ in range(2):  # the second over a kept-alive connection (HTTP: the connection's own path)
            response = await session.request("tools/call", {"name": "nums", "arguments": {"n": 1}}, scope=scope)
            assert BODY_KEY not in response
            assert scope.body is not None
            assert pydantic_core.from_json(scope.body) == response
        plain = await session.request("tools/call", {"name": "nums", "arguments": {"n": 1}})
        assert BODY_KEY not in plain
        failed = await session.request("tools/call", {"name": "absent", "arguments": {}}, scope=scope)
        assert "error" in failed
        assert scope.body is None  # an error's text is kept for nobody


async def test_the_same_method_and_name_get_the_same_headers_made_once() -> None:
    session = ClientSession(HttpTransport("http://127.0.0.1:9/mcp"), protocol_version=MODERN)
    first = session._headers_for("tools/call", {"name": "a", "arguments": {}})
    assert first is session._headers_for("tools/call", {"name": "a", "arguments": {"x": 1}})
    assert first is not session._headers_for("tools/call", {"name": "b", "arguments": {}})
    assert first == {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "a"}
    assert session._headers_for("tools/list", {}) == {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/list"}
    session.tool_params = {"a": {"Region": ("region",)}}  # a tool with x-mcp-header parameters: made each time
    headed = session._headers_for("tools/call", {"name": "a", "arguments": {"region": "eu"}})
    assert headed is not None
    assert headed["Mcp-Param-Region"] == "eu"
    assert headed is not session._headers_for("tools/call", {"name": "a", "arguments": {"region": "us"}})


async def test_requests_share_one_deadline_timer_and_each_times_out_on_its_own() -> None:
    transport = _Silent()
    async with ClientSession(transport, protocol_version=MODERN) as session:
        slow = [asyncio.create_task(session.result("tools/list", timeout=60)) for _ in range(3)]
        quick = asyncio.create_task(session.result("prompts/list", timeout=0.05))  # earlier than those queued
        with pytest.raises(TimeoutError, match=r"prompts/list within 0\.05 s"):
            await quick
        assert not any(task.done() for task in slow)
        for task in slow:
            task.cancel()
        await asyncio.gather(*slow, return_exceptions=True)
        # The shared timer is still set for the cancelled ones, a minute away: the next is on time.
        queued = [asyncio.create_task(session.result("tools/list", timeout=delay)) for delay in (0.05, 0.1)]
        for task in queued:
            with pytest.raises(TimeoutError, match="tools/list within"):
                await task
        assert len(session._requests) == 0
    assert not session._requests._deadlines


class _Silent:
    """A transport whose server never answers."""

    async def open(self, deliver: Any, *, on_close: Any = None) -> None:
        pass

    async def send(self, message: dict[str, Any], *, headers: Any = None) -> None:
        pass

    async def close(self) -> None:
        pass


def _relay_upstream() -> Server:
    namespace: dict[str, Any] = {}
    exec(compile(UPSTREAM.read_text(), str(UPSTREAM), "exec"), namespace)  # the stdio upstream's own server
    server: Server = namespace["server"]
    return server
