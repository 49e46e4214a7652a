"""SEP-2106 tools of examples/conformance_server.py over real Streamable HTTP, in both eras.

The official conformance suite never calls a tool whose output is not an object; these tests
do, against the same example served by ``toolkit run``:

- 2026-07-28 (stateless): ``tools/list`` advertises the natural ``outputSchema`` (an array, a
  number) and ``tools/call`` returns the natural value as ``structuredContent``, plus one
  TextContent with its JSON (SEP-2106, "Backward Compatibility").
- 2025-11-25 (``initialize`` + session): the schema is wrapped as
  ``{"type": "object", "properties": {"result": N}, "required": ["result"]}`` and the value
  travels as ``{"result": v}``, because that version's schema only allows object
  ``outputSchema``/``structuredContent`` (ARCHITECTURE §3).

Every JSON-RPC message the server sends is validated against the official schema of the
version in force (``tests/wire.py``).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import jsonschema_rs
import pytest
from tests.support.processes import http_server
from tests.wire import assert_valid

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "conformance_server.py"
MODERN = "2026-07-28"
LEGACY = "2025-11-25"
ACCEPT = "application/json, text/event-stream"

ARRAY_TOOL = "sep_2106_array_output_tool"
NUMBER_TOOL = "sep_2106_primitive_output_tool"
NATURAL_SCHEMAS: dict[str, dict[str, Any]] = {
    ARRAY_TOOL: {"type": "array", "items": {"type": "integer"}},
    NUMBER_TOOL: {"type": "number"},
}
VALUES: dict[str, Any] = {ARRAY_TOOL: [1, 2, 3], NUMBER_TOOL: 42.5}

_ids = itertools.count(1)


def _messages(response: httpx.Response) -> list[dict[str, Any]]:
    """The JSON-RPC messages of an answer: a JSON body, or the ``data`` of each SSE event."""
    assert response.status_code == 200, f"HTTP {response.status_code}: {response.text[:500]}"
    kind = response.headers.get("content-type", "").split(";", 1)[0].strip()
    if kind == "application/json":
        return [response.json()]
    assert kind == "text/event-stream", f"unexpected content type {kind!r}"
    messages: list[dict[str, Any]] = []
    data: list[str] = []
    for line in [*response.text.splitlines(), ""]:
        if line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
        elif line == "" and data:
            if any(data):
                messages.append(json.loads("\n".join(data)))
            data = []
    return messages


def _exchange(
    http: httpx.Client, url: str, method: str, params: dict[str, Any], version: str, headers: dict[str, str]
) -> dict[str, Any]:
    """Send one request; validate everything that comes back; the response's result."""
    request_id = next(_ids)
    body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    messages = _messages(http.post(url, json=body, headers={"Accept": ACCEPT, **headers}))
    responses = [message for message in messages if message.get("id") == request_id and "method" not in message]
    assert len(responses) == 1, f"expected one response to {method}, got {messages}"
    for message in messages:
        assert_valid(message, version, method=method if message is responses[0] else None)
    response = responses[0]
    assert "result" in response, f"{method} failed: {response}"
    result: dict[str, Any] = response["result"]
    return result


class Modern:
    """A stateless 2026-07-28 client: every request carries its version and capabilities."""

    def __init__(self, http: httpx.Client, url: str) -> None:
        self.http, self.url = http, url

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        meta = {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "toolkit-tests", "version": "1.0.0"},
        }
        headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": method}
        if params is not None and "name" in params:
            headers["Mcp-Name"] = params["name"]
        result = _exchange(self.http, self.url, method, {**(params or {}), "_meta": meta}, MODERN, headers)
        assert result.get("resultType") == "complete", result
        return result


class Legacy:
    """A 2025-11-25 client: ``initialize``, then requests on the session."""

    def __init__(self, http: httpx.Client, url: str) -> None:
        self.http, self.url = http, url
        body = {
            "jsonrpc": "2.0",
            "id": next(_ids),
            "method": "initialize",
            "params": {
                "protocolVersion": LEGACY,
                "capabilities": {},
                "clientInfo": {"name": "toolkit-tests", "version": "1.0.0"},
            },
        }
        answer = http.post(url, json=body, headers={"Accept": ACCEPT})
        (message,) = _messages(answer)
        assert_valid(message, LEGACY, method="initialize")
        assert message["result"]["protocolVersion"] == LEGACY
        self.headers = {"MCP-Protocol-Version": LEGACY}
        session = answer.headers.get("mcp-session-id")
        if session is not None:
            self.headers["Mcp-Session-Id"] = session
        initialized = http.post(
            url,
            json={"jsonrpc": "2.0", "method": "notifications/initialized"},
            headers={"Accept": ACCEPT, **self.headers},
        )
        assert initialized.status_code == 202, initialized.text

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return _exchange(self.http, self.url, method, params or {}, LEGACY, self.headers)

    def close(self) -> None:
        if "Mcp-Session-Id" in self.headers:
            self.http.delete(self.url, headers=self.headers)


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with http_server(EXAMPLE) as running:
        yield running.url


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=20) as client:
        yield client


@pytest.fixture
def modern(http: httpx.Client, url: str) -> Modern:
    return Modern(http, url)


@pytest.fixture
def legacy(http: httpx.Client, url: str) -> Iterator[Legacy]:
    client = Legacy(http, url)
    try:
        yield client
    finally:
        client.close()


def _listed(client: Modern | Legacy) -> dict[str, dict[str, Any]]:
    tools: dict[str, dict[str, Any]] = {}
    params: dict[str, Any] = {}
    while True:
        page = client.request("tools/list", params)
        tools.update({tool["name"]: tool for tool in page["tools"]})
        if not page.get("nextCursor"):
            return tools
        params = {"cursor": page["nextCursor"]}


def _assert_text_fallback(result: dict[str, Any], natural: Any) -> None:
    content = result["content"]
    assert len(content) == 1, f"expected exactly one content block, got {content}"
    assert content[0]["type"] == "text"
    assert json.loads(content[0]["text"]) == natural


def _assert_conforms(value: Any, schema: dict[str, Any]) -> None:
    errors = [error.message for error in jsonschema_rs.validator_for(schema, offline=True).iter_errors(value)]
    assert not errors, f"{value!r} does not match the advertised outputSchema {schema}: {errors}"


def test_modern_lists_natural_output_schemas(modern: Modern) -> None:
    tools = _listed(modern)
    for name, natural in NATURAL_SCHEMAS.items():
        assert tools[name]["outputSchema"] == natural
        assert tools[name]["inputSchema"]["type"] == "object"


@pytest.mark.parametrize("name", [ARRAY_TOOL, NUMBER_TOOL])
def test_modern_call_returns_the_natural_value(modern: Modern, name: str) -> None:
    schema = _listed(modern)[name]["outputSchema"]
    result = modern.request("tools/call", {"name": name, "arguments": {}})
    assert not result.get("isError", False), result
    assert result["structuredContent"] == VALUES[name]
    assert type(result["structuredContent"]) is type(VALUES[name])
    _assert_conforms(result["structuredContent"], schema)
    _assert_text_fallback(result, VALUES[name])


def test_legacy_lists_wrapped_output_schemas(legacy: Legacy) -> None:
    tools = _listed(legacy)
    for name, natural in NATURAL_SCHEMAS.items():
        assert tools[name]["outputSchema"] == {
            "type": "object",
            "properties": {"result": natural},
            "required": ["result"],
        }


@pytest.mark.parametrize("name", [ARRAY_TOOL, NUMBER_TOOL])
def test_legacy_call_returns_the_wrapped_value(legacy: Legacy, name: str) -> None:
    schema = _listed(legacy)[name]["outputSchema"]
    result = legacy.request("tools/call", {"name": name, "arguments": {}})
    assert not result.get("isError", False), result
    assert result["structuredContent"] == {"result": VALUES[name]}
    _assert_conforms(result["structuredContent"], schema)
    _assert_text_fallback(result, VALUES[name])
