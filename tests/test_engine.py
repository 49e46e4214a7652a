"""The protocol engine in both eras, in memory: lifecycle, negotiation, modern envelope, errors.

Spec: 2025-11-25 basic/lifecycle (initialize, version negotiation), basic/utilities/ping,
server/utilities/logging; 2026-07-28 basic/index (per-request ``_meta``), basic/versioning,
server/discover, server/tools ("Error Handling"); ARCHITECTURE §6 (errors).
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field
from tests.support.apps import weather_server
from tests.support.memory import (
    ALL_VERSIONS,
    CLIENT_CAPABILITIES_KEY,
    LEGACY,
    LOG_LEVEL_KEY,
    MODERN,
    PROTOCOL_VERSION_KEY,
    SERVER_INFO_KEY,
    RawClient,
    called,
    checked_request,
    listed_tools,
    modern_meta,
)
from tests.support.spec import definitions
from tests.wire import assert_valid, validator

from toolkit import KNOWN_VERSIONS, Context, Server, ToolError
from toolkit.testing import Client

LATEST_LEGACY = "2025-11-25"
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
SECRET = "db-password=hunter2"


class Station(BaseModel):
    code: str
    elevation_m: int


def tools_only_server(**options: Any) -> Server:
    server = Server("engine", version="2.1.0", instructions="Use the tools wisely.", **options)

    @server.tool
    def forecast(city: str, hours: Annotated[int, Field(ge=1, le=24)] = 3) -> list[int]:
        """Hourly temperatures."""
        return [60 + hour for hour in range(hours)]

    @server.tool
    def station(code: str) -> Station:
        """A station."""
        if code == "none":
            raise ToolError(f"No station with code {code!r}.")
        return Station(code=code, elevation_m=131)

    @server.tool
    def ping_me() -> int:
        """No arguments at all."""
        return 1

    @server.tool
    def crash() -> int:
        """Raises an unexpected exception."""
        raise RuntimeError(f"cannot connect: {SECRET}")

    @server.tool
    async def chatty(ctx: Context) -> int:
        """Logs at every level."""
        for level in LOG_LEVELS:
            await ctx.log(level, f"a {level} message")  # type: ignore[arg-type]
        return len(LOG_LEVELS)

    return server


def full_server() -> Server:
    server = tools_only_server()

    @server.resource("test://static", mime_type="text/plain")
    def static() -> str:
        return "static text"

    @server.resource("test://item/{item_id}")
    def item(item_id: str) -> str:
        return f"item {item_id}"

    @server.prompt
    def greet(name: str) -> str:
        """Greet someone."""
        return f"Hello, {name}!"

    return server


async def initialized(server: Server, version: str) -> RawClient:
    client = RawClient(server)
    await client.__aenter__()
    response = await client.initialize(version)
    assert "result" in response, response
    return client


# --- initialize: version negotiation (2025-11-25 basic/lifecycle, "Version Negotiation") ------


@pytest.mark.parametrize("version", LEGACY)
async def test_initialize_answers_a_supported_version_with_itself(version: str) -> None:
    async with RawClient(tools_only_server()) as client:
        response = await client.initialize(version)
    assert_valid(response, version, method="initialize")
    assert response["result"]["protocolVersion"] == version


@pytest.mark.parametrize(
    "requested", ["1999-01-01", "2025-01-01", "2025-12-31", "2026-07-28", "2099-01-01", "DRAFT-2026-v1", ""]
)
async def test_initialize_answers_other_versions_with_the_latest_legacy_version(requested: str) -> None:
    async with RawClient(tools_only_server()) as client:
        response = await client.initialize(requested)
        assert_valid(response, LATEST_LEGACY, method="initialize")
        assert response["result"]["protocolVersion"] == LATEST_LEGACY
        tools = await listed_tools(client)
    assert "forecast" in tools


@pytest.mark.parametrize("params", [{}, {"protocolVersion": 20251125}, {"protocolVersion": None}])
async def test_initialize_without_a_version_string_is_invalid_params(params: dict[str, Any]) -> None:
    async with RawClient(tools_only_server()) as client:
        response = await client.request("initialize", {"capabilities": {}, **params})
    assert_valid(response, LATEST_LEGACY)
    assert response["error"]["code"] == -32602


async def test_initialize_result_has_server_info_instructions_and_capabilities() -> None:
    async with RawClient(tools_only_server()) as client:
        result = (await client.initialize(LATEST_LEGACY))["result"]
    assert result["serverInfo"] == {"name": "engine", "version": "2.1.0"}
    assert result["instructions"] == "Use the tools wisely."
    assert set(result["capabilities"]) == {"tools", "logging"}, "declare only what the server has"


@pytest.mark.parametrize("version", ALL_VERSIONS)
async def test_capabilities_follow_what_is_registered_and_what_the_version_defines(version: str) -> None:
    async with Client(full_server(), protocol_version=version) as client:
        if version == MODERN:
            result = (await checked_request(client, "server/discover"))["result"]
        else:
            assert client.initialize_result is not None
            result = client.initialize_result
    capabilities = result["capabilities"]
    assert {"tools", "resources", "prompts", "logging"} <= set(capabilities)
    assert capabilities["resources"].get("subscribe") in (True, None)
    defined = definitions(version)["ServerCapabilities"]["properties"]
    assert set(capabilities) <= set(defined), f"{version} has no capability {set(capabilities) - set(defined)}"
    if "completions" in defined:
        assert "completions" in capabilities, "prompts and templates can be completed"


@pytest.mark.parametrize("version", ALL_VERSIONS)
async def test_server_info_fields_a_version_lacks_are_not_sent(version: str) -> None:
    icons = [{"src": "https://example.com/icon.png"}]
    server = Server("decorated", version="1.0", title="Decorated", website_url="https://example.com", icons=icons)
    async with Client(server, protocol_version=version) as client:
        if version == MODERN:
            info = (await checked_request(client, "server/discover"))["result"]["_meta"][SERVER_INFO_KEY]
        else:
            assert client.initialize_result is not None
            info = client.initialize_result["serverInfo"]
    defined = set(definitions(version)["Implementation"]["properties"])
    assert set(info) <= defined
    expected: dict[str, Any] = {
        "name": "decorated",
        "version": "1.0",
        "title": "Decorated",
        "websiteUrl": "https://example.com",
        "icons": icons,
    }
    assert info == {key: value for key, value in expected.items() if key in defined}


# --- before initialize -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("tools/list", {}),
        ("tools/call", {"name": "ping_me", "arguments": {}}),
        ("logging/setLevel", {"level": "info"}),
        ("resources/list", {}),
    ],
)
async def test_requests_before_initialize_are_refused_clearly(method: str, params: dict[str, Any]) -> None:
    async with RawClient(full_server()) as client:
        response = await client.request(method, params)
        assert_valid(response, LATEST_LEGACY)
        assert "result" not in response
        assert "initialize" in response["error"]["message"]
        assert (await client.initialize(LATEST_LEGACY))["result"]["protocolVersion"] == LATEST_LEGACY
        assert "result" in await client.request(method, params)


@pytest.mark.parametrize("version", LEGACY)
async def test_ping_before_and_after_initialize(version: str) -> None:
    async with RawClient(tools_only_server()) as client:
        before = await client.request("ping")
        assert_valid(before, version, method="ping")
        assert before["result"] == {}
        await client.initialize(version)
        after = await client.request("ping")
        assert_valid(after, version, method="ping")
        assert after["result"] == {}


# --- logging/setLevel --------------------------------------------------------------------------


@pytest.mark.parametrize("version", LEGACY)
@pytest.mark.parametrize("level", LOG_LEVELS)
async def test_set_level_accepts_every_level_and_filters(version: str, level: str) -> None:
    async with Client(tools_only_server(), protocol_version=version) as client:
        response = await checked_request(client, "logging/setLevel", {"level": level})
        assert response["result"] == {}
        await called(client, "chatty")
    sent = [
        message["params"]["level"] for message in client.notifications if message["method"] == "notifications/message"
    ]
    assert sent == list(LOG_LEVELS[LOG_LEVELS.index(level) :])
    for message in client.notifications:
        assert_valid(message, version)


@pytest.mark.parametrize("version", LEGACY)
@pytest.mark.parametrize("params", [{"level": "verbose"}, {"level": "INFO"}, {"level": 3}, {}])
async def test_set_level_rejects_unknown_levels(version: str, params: dict[str, Any]) -> None:
    async with Client(tools_only_server(), protocol_version=version) as client:
        response = await checked_request(client, "logging/setLevel", params)
    assert response["error"]["code"] == -32602


async def test_modern_requests_log_only_at_the_requested_level() -> None:
    async with Client(tools_only_server()) as client:
        await client.call_tool("chatty")
        assert client.notifications == [], "no logLevel in _meta: no notifications/message (2026-07-28 changelog)"
        await client.call_tool("chatty", meta={LOG_LEVEL_KEY: "error"})
    assert [m["params"]["level"] for m in client.notifications] == ["error", "critical", "alert", "emergency"]


# --- server/discover ---------------------------------------------------------------------------


async def test_server_discover() -> None:
    async with Client(full_server()) as client:
        response = await checked_request(client, "server/discover")
    result = response["result"]
    assert result["resultType"] == "complete"
    assert MODERN in result["supportedVersions"]
    assert set(result["supportedVersions"]) == set(KNOWN_VERSIONS), "a dual-era server supports every version"
    assert {"tools", "resources", "prompts"} <= set(result["capabilities"])
    assert result["instructions"] == "Use the tools wisely."
    assert isinstance(result["ttlMs"], int) and result["ttlMs"] >= 0
    assert result["cacheScope"] in ("public", "private")
    assert result["_meta"][SERVER_INFO_KEY] == {"name": "engine", "version": "2.1.0"}


async def test_server_discover_works_next_to_a_legacy_session() -> None:
    server = tools_only_server()
    client = await initialized(server, "2025-06-18")
    try:
        response = await client.request("server/discover", {"_meta": modern_meta()})
        assert_valid(response, MODERN, method="server/discover")
        legacy = await client.request("tools/list")
        assert_valid(legacy, "2025-06-18", method="tools/list")
        assert "resultType" not in legacy["result"]
    finally:
        await client.__aexit__(None, None, None)


# --- modern envelope errors (2026-07-28 basic/index "Per-request protocol fields") -------------


def _invalid_params(response: dict[str, Any]) -> dict[str, Any]:
    assert_valid(response, MODERN)
    error: dict[str, Any] = response["error"]
    assert error["code"] == -32602, error
    assert validator(MODERN, "InvalidParamsError").is_valid(error)
    return error


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"_meta": {}},
        {"_meta": {CLIENT_CAPABILITIES_KEY: {}}},
        {"_meta": {PROTOCOL_VERSION_KEY: MODERN}},
        {"_meta": {PROTOCOL_VERSION_KEY: MODERN, CLIENT_CAPABILITIES_KEY: "all"}},
        {"_meta": {PROTOCOL_VERSION_KEY: 20260728, CLIENT_CAPABILITIES_KEY: {}}},
    ],
    ids=["no-params", "empty-meta", "no-version", "no-capabilities", "bad-capabilities", "int-version"],
)
async def test_discover_with_incomplete_meta_is_invalid_params(params: dict[str, Any]) -> None:
    async with RawClient(tools_only_server()) as client:
        _invalid_params(await client.request("server/discover", params))


@pytest.mark.parametrize("method", ["tools/list", "tools/call"])
async def test_modern_request_missing_client_capabilities_is_invalid_params(method: str) -> None:
    async with RawClient(tools_only_server()) as client:
        params = {"name": "ping_me", "_meta": {PROTOCOL_VERSION_KEY: MODERN}}
        error = _invalid_params(await client.request(method, params))
    assert CLIENT_CAPABILITIES_KEY in error["message"]


@pytest.mark.parametrize("method", ["tools/list", "tools/call"])
async def test_modern_request_missing_protocol_version_is_invalid_params(method: str) -> None:
    # The request carries modern per-request _meta but not the required version:
    # "A request missing any required field is malformed; the server MUST reject it with -32602".
    async with RawClient(tools_only_server()) as client:
        params = {"name": "ping_me", "_meta": {CLIENT_CAPABILITIES_KEY: {}, "io.modelcontextprotocol/clientInfo": {}}}
        error = _invalid_params(await client.request(method, params))
    assert PROTOCOL_VERSION_KEY in error["message"]


@pytest.mark.parametrize("requested", ["1900-01-01", "2027-01-01", "2026-07-29", "draft"])
@pytest.mark.parametrize("method", ["server/discover", "tools/list", "tools/call"])
async def test_unsupported_version_is_32022_with_supported_and_requested(method: str, requested: str) -> None:
    async with RawClient(tools_only_server()) as client:
        response = await client.request(method, {"name": "ping_me", "_meta": modern_meta(requested)})
    assert_valid(response, MODERN)
    assert validator(MODERN, "UnsupportedProtocolVersionError").is_valid(response), response
    error = response["error"]
    assert error["code"] == -32022
    assert error["data"]["requested"] == requested
    assert MODERN in error["data"]["supported"]
    assert set(error["data"]["supported"]) <= set(KNOWN_VERSIONS)


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("initialize", {"protocolVersion": MODERN, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}),
        ("ping", {}),
        ("logging/setLevel", {"level": "info"}),
        ("resources/subscribe", {"uri": "test://static"}),
        ("resources/unsubscribe", {"uri": "test://static"}),
        ("tools/frobnicate", {}),
        ("notifications/initialized", {}),
    ],
)
async def test_methods_the_modern_era_lacks_are_not_found(method: str, params: dict[str, Any]) -> None:
    async with Client(full_server()) as client:
        response = await checked_request(client, method, params)
    assert response["error"]["code"] == -32601
    assert validator(MODERN, "MethodNotFoundError").is_valid(response["error"])


@pytest.mark.parametrize("version", LEGACY)
@pytest.mark.parametrize("method", ["tools/frobnicate", "server/discovery", "Tools/List"])
async def test_unknown_methods_are_not_found_in_legacy_sessions(version: str, method: str) -> None:
    async with Client(tools_only_server(), protocol_version=version) as client:
        response = await checked_request(client, method, {})
    assert response["error"]["code"] == -32601


@pytest.mark.parametrize("method", ["prompts/list", "resources/list", "resources/templates/list"])
@pytest.mark.parametrize("version", ALL_VERSIONS)
async def test_methods_of_undeclared_capabilities_are_not_found(version: str, method: str) -> None:
    async with Client(tools_only_server(), protocol_version=version) as client:
        response = await checked_request(client, method, {})
    assert response["error"]["code"] == -32601


# --- the modern envelope on results ------------------------------------------------------------

MODERN_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("server/discover", {}),
    ("tools/list", {}),
    ("tools/call", {"name": "station", "arguments": {"code": "SEA"}}),
    ("tools/call", {"name": "station", "arguments": {"code": "none"}}),
    ("tools/call", {"name": "forecast", "arguments": {"hours": 2}}),
    ("resources/list", {}),
    ("resources/templates/list", {}),
    ("resources/read", {"uri": "test://static"}),
    ("resources/read", {"uri": "test://item/42"}),
    ("prompts/list", {}),
    ("prompts/get", {"name": "greet", "arguments": {"name": "Ada"}}),
    (
        "completion/complete",
        {"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "name", "value": ""}},
    ),
]
CACHEABLE = {
    "server/discover",
    "tools/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "prompts/list",
}


@pytest.mark.parametrize(("method", "params"), MODERN_CALLS, ids=lambda value: str(value)[:40])
async def test_modern_results_carry_result_type_and_server_info(method: str, params: dict[str, Any]) -> None:
    async with Client(full_server()) as client:
        response = await checked_request(client, method, params)
    result = response["result"]
    assert result["resultType"] == "complete"
    assert result["_meta"][SERVER_INFO_KEY]["name"] == "engine"
    if method in CACHEABLE:
        assert isinstance(result["ttlMs"], int) and result["ttlMs"] >= 0
        assert result["cacheScope"] in ("public", "private")


@pytest.mark.parametrize("version", LEGACY)
@pytest.mark.parametrize(("method", "params"), MODERN_CALLS[1:], ids=lambda value: str(value)[:40])
async def test_legacy_results_have_no_modern_envelope(version: str, method: str, params: dict[str, Any]) -> None:
    async with Client(full_server(), protocol_version=version) as client:
        response = await checked_request(client, method, params)
    result = response["result"]
    for field in ("resultType", "ttlMs", "cacheScope"):
        assert field not in result
    assert SERVER_INFO_KEY not in result.get("_meta", {})


# --- ARCHITECTURE §6: tool errors --------------------------------------------------------------


@pytest.mark.parametrize("version", ALL_VERSIONS)
async def test_unknown_tool_is_invalid_params_with_data(version: str) -> None:
    async with Client(tools_only_server(), protocol_version=version) as client:
        response = await checked_request(client, "tools/call", {"name": "no_such_tool", "arguments": {}})
    error = response["error"]
    assert error["code"] == -32602
    assert "no_such_tool" in error["message"]
    assert "no_such_tool" in str(error.get("data")), "data must say what is wrong"


@pytest.mark.parametrize("version", [LATEST_LEGACY, MODERN])
@pytest.mark.parametrize(
    "params",
    [
        {"arguments": {}},
        {"name": 5, "arguments": {}},
        {"name": None},
        {"name": "station", "arguments": ["SEA"]},
        {"name": "station", "arguments": "code=SEA"},
        {"name": "station", "arguments": 3},
    ],
    ids=["no-name", "int-name", "null-name", "list-arguments", "string-arguments", "number-arguments"],
)
async def test_bad_call_params_are_invalid_params_with_data(version: str, params: dict[str, Any]) -> None:
    async with Client(tools_only_server(), protocol_version=version) as client:
        response = await checked_request(client, "tools/call", params)
    error = response["error"]
    assert error["code"] == -32602
    assert error.get("data") is not None, f"ARCHITECTURE §6: -32602 with a data that says what is wrong: {error}"


@pytest.mark.parametrize("version", ALL_VERSIONS)
async def test_missing_arguments_mean_no_arguments(version: str) -> None:
    async with Client(tools_only_server(), protocol_version=version) as client:
        without = await checked_request(client, "tools/call", {"name": "ping_me"})
    assert without["result"].get("isError", False) is False
    assert without["result"]["content"] == [{"type": "text", "text": "1"}]


@pytest.mark.parametrize("version", ALL_VERSIONS)
async def test_null_arguments_are_invalid_params_like_any_other_non_object(version: str) -> None:
    """Every version's schema declares ``arguments`` an object (not nullable): null is refused, not run."""
    async with Client(tools_only_server(), protocol_version=version) as client:
        null = await checked_request(client, "tools/call", {"name": "ping_me", "arguments": None})
    assert null["error"]["code"] == -32602
    assert null["error"]["message"] == 'Invalid params: "arguments" must be an object, not null'
    assert null["error"]["data"] == {"param": "arguments", "problem": "must be an object, not null"}


@pytest.mark.parametrize("version", ALL_VERSIONS)
@pytest.mark.parametrize(
    ("arguments", "mentions"),
    [
        ({}, "city"),
        ({"city": 5}, "city"),
        ({"city": "Seattle", "hours": 99}, "hours"),
        ({"city": "Seattle", "hours": 0}, "hours"),
        ({"city": "Seattle", "hours": "three"}, "hours"),
        ({"city": "Seattle", "days": 2}, "days"),
    ],
    ids=["missing", "wrong-type", "too-big", "too-small", "not-int", "unexpected"],
)
async def test_invalid_arguments_are_tool_errors_with_detail(
    version: str, arguments: dict[str, Any], mentions: str
) -> None:
    async with Client(tools_only_server(), protocol_version=version) as client:
        result = await called(client, "forecast", arguments)
    assert result["isError"] is True
    assert "structuredContent" not in result
    text = " ".join(block["text"] for block in result["content"])
    assert mentions in text, f"the detail must name what is wrong: {text}"


@pytest.mark.parametrize("version", ALL_VERSIONS)
async def test_tool_error_message_is_sent_as_is(version: str) -> None:
    async with Client(tools_only_server(), protocol_version=version) as client:
        result = await called(client, "station", {"code": "none"})
    assert result == {**result, "isError": True, "content": [{"type": "text", "text": "No station with code 'none'."}]}
    assert "structuredContent" not in result


@pytest.mark.parametrize("version", ALL_VERSIONS)
async def test_unexpected_exceptions_are_masked(version: str, caplog: pytest.LogCaptureFixture) -> None:
    async with Client(tools_only_server(), protocol_version=version) as client:
        result = await called(client, "crash")
    assert result["isError"] is True
    text = " ".join(block["text"] for block in result["content"])
    assert text
    for leak in (SECRET, "hunter2", "RuntimeError", "Traceback"):
        assert leak not in text
    assert SECRET in caplog.text, "the exception is logged server-side"


async def test_unmasked_exceptions_show_their_message() -> None:
    async with Client(tools_only_server(mask_errors=False)) as client:
        result = await called(client, "crash")
    assert result["isError"] is True
    assert SECRET in result["content"][0]["text"]


def output_violations() -> Server:
    server = Server("violations")

    @server.tool
    def negative() -> Annotated[int, Field(ge=0)]:
        return -1

    @server.tool
    def off_list() -> Literal["green", "red"]:
        return "blue"  # type: ignore[return-value]

    @server.tool
    def null_for_int() -> int:
        return None  # type: ignore[return-value]

    @server.tool
    def not_a_number() -> float:
        return "fast"  # type: ignore[return-value]

    @server.tool
    def incomplete_model() -> Station:
        return {"code": "SEA"}  # type: ignore[return-value]

    @server.tool
    def not_finite() -> float:
        return float("nan")

    @server.tool
    def infinite() -> list[float]:
        return [1.0, float("inf")]

    @server.tool(output_schema={"type": "array", "items": {"type": "integer"}, "maxItems": 2})
    def hand_written() -> Any:
        return [1, 2, 3]

    return server


@pytest.mark.parametrize("version", ALL_VERSIONS)
@pytest.mark.parametrize(
    "tool",
    [
        "negative",
        "off_list",
        "null_for_int",
        "not_a_number",
        "incomplete_model",
        "not_finite",
        "infinite",
        "hand_written",
    ],
)
async def test_output_schema_violations_are_tool_errors(version: str, tool: str) -> None:
    # 2026-07-28 server/tools "Output Schema": servers MUST provide structured results that
    # conform to the schema; ARCHITECTURE §6: isError, logged as a server bug.
    async with Client(output_violations(), protocol_version=version) as client:
        result = await called(client, tool)
    assert result.get("isError") is True, f"{tool} returned a value its output schema rejects: {result}"
    assert "structuredContent" not in result


# --- tools/list: order, cache, runtime changes --------------------------------------------------


@pytest.mark.parametrize("version", ALL_VERSIONS)
async def test_tools_list_order_is_deterministic_registration_order(version: str) -> None:
    server = weather_server()
    async with Client(server, protocol_version=version) as client:
        lists = [list(await listed_tools(client)) for _ in range(3)]
    assert lists[0] == lists[1] == lists[2]
    assert lists[0] == list(server.tools)


@pytest.mark.parametrize("version", ALL_VERSIONS)
async def test_tools_list_follows_tools_added_and_removed_at_runtime(version: str) -> None:
    server = tools_only_server()
    async with Client(server, protocol_version=version) as client:
        before = await listed_tools(client)
        assert "late" not in before

        def late(x: int) -> int:
            """Added later."""
            return x

        server.add_tool(late)
        await asyncio.sleep(0.01)
        after_add = await listed_tools(client)
        assert list(after_add) == [*before, "late"]
        assert after_add["late"]["inputSchema"]["properties"]["x"]["type"] == "integer"
        assert (await called(client, "late", {"x": 3}))["content"][0]["text"] == "3"

        server.remove_tool("late")
        server.remove_tool("station")
        await asyncio.sleep(0.01)
        after_remove = await listed_tools(client)
        assert list(after_remove) == [name for name in before if name != "station"]
        assert (await checked_request(client, "tools/call", {"name": "late", "arguments": {"x": 1}}))["error"][
            "code"
        ] == -32602

        def late_again(x: str) -> str:
            """Same name, new schema."""
            return x

        server.add_tool(late_again, name="late")
        await asyncio.sleep(0.01)
        assert (await listed_tools(client))["late"]["inputSchema"]["properties"]["x"]["type"] == "string"
    changed = [m for m in client.notifications if m["method"] == "notifications/tools/list_changed"]
    if version == MODERN:
        assert changed == [], "a stateless request has no session to notify"
    else:
        assert len(changed) >= 3
        for message in changed:
            assert_valid(message, version)


def decorated_server() -> Server:
    server = Server("decorated-lists")
    icons = [{"src": "https://example.com/icon.png"}]

    @server.resource("test://a", title="A", description="d", mime_type="text/plain", icons=icons, meta={"k.io/x": 1})
    def a() -> str:
        return "a"

    @server.resource("test://t/{x}", title="T", description="d", icons=icons, meta={"k.io/x": 1})
    def t(x: str) -> str:
        return x

    @server.prompt(title="P", icons=icons, meta={"k.io/x": 1})
    def p(name: str) -> str:
        """A prompt."""
        return name

    return server


@pytest.mark.parametrize("version", ALL_VERSIONS)
@pytest.mark.parametrize(
    ("method", "field", "definition"),
    [
        ("resources/list", "resources", "Resource"),
        ("resources/templates/list", "resourceTemplates", "ResourceTemplate"),
        ("prompts/list", "prompts", "Prompt"),
    ],
)
async def test_list_entry_fields_a_version_lacks_are_not_sent(
    version: str, method: str, field: str, definition: str
) -> None:
    async with Client(decorated_server(), protocol_version=version) as client:
        entries = (await checked_request(client, method))["result"][field]
    defined = set(definitions(version)[definition]["properties"])
    for entry in entries:
        assert set(entry) <= defined, f"{version} {definition} has no {set(entry) - defined}"
        for name in ("title", "icons", "_meta"):
            if name in defined:
                assert name in entry, f"{version} defines {definition}.{name}; it must be sent"
