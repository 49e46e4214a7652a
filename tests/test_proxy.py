"""``Server.proxy`` and ``server.mount(toolkit.Client(...))``: any server of any era, relayed.

The upstreams are toolkit servers spoken to at a pinned version (so each era's wire shapes are
what arrives), in process through the memory transport, and as real stdio and HTTP servers for
what only a wire shows (per-session upstream sessions, the caller's token, a child process).
"""

from __future__ import annotations

import asyncio
import socket
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.http_support import serve

import toolkit
from toolkit import Context, Server, ToolResult
from toolkit._errors import ClientError, RegistrationError

MODERN = "2026-07-28"
LEGACY_VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
ALL_VERSIONS = [*LEGACY_VERSIONS, MODERN]
STRUCTURED = ["2025-06-18", "2025-11-25", MODERN]
UPSTREAM = Path(__file__).parent / "support" / "proxy_upstream.py"


def upstream_server() -> Server:
    server = Server("upstream", instructions="Upstream instructions")

    @server.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @server.tool
    def nums(n: int) -> list[int]:
        return list(range(n))

    @server.tool
    def point() -> dict[str, int]:
        return {"x": 1, "y": 2}

    @server.tool(
        output_schema={
            "type": "object",
            "properties": {"result": {"type": "array", "items": {"type": "integer"}}},
            "required": ["result"],
            "x-fastmcp-wrap-result": True,
        }
    )
    def wrapped() -> dict[str, Any]:
        return {"result": [1, 2]}

    @server.tool
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("Your name?", str)
        return f"{answer.action}:{answer.data}"

    @server.tool
    async def steps(ctx: Context) -> str:
        for step in range(3):
            await ctx.report_progress(step, 3)
            await ctx.info(f"step {step}")
        return "done"

    @server.tool
    def level(ctx: Context) -> str:
        return str(ctx.log_level)

    @server.tool
    def fails() -> str:
        raise toolkit.ToolError("upstream says no")

    @server.resource("data://item/{id}")
    def item(id: str) -> str:
        return f"item {id}"

    @server.resource("data://static")
    def static() -> str:
        return "static"

    @server.prompt
    def hello(who: str) -> str:
        return f"hello {who}"

    return server


def answer_bob(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {"value": "bob"}}


# --- the era matrix ---------------------------------------------------------------------------------


@pytest.mark.parametrize("upstream_version", ALL_VERSIONS)
@pytest.mark.parametrize("caller_version", ALL_VERSIONS)
async def test_results_are_made_natural_once_and_shaped_once(upstream_version: str, caller_version: str) -> None:
    proxy = Server.proxy(toolkit.Client(upstream_server(), protocol_version=upstream_version))
    async with toolkit.Client(proxy, protocol_version=caller_version) as client:
        listed = {tool["name"]: tool for tool in await client.list_tools()}
        assert {"add", "nums", "point", "ask"} <= set(listed)
        nums = await client.call_tool("nums", {"n": 3})
        point = await client.call_tool("point", {})
        assert nums.text == "[0,1,2]"  # the JSON text every era carries
        if upstream_version not in STRUCTURED or caller_version not in STRUCTURED:
            # Nothing structured came (2024-11-05/2025-03-26 upstream) or can go (such a caller).
            assert nums.structured_content is None
            assert "outputSchema" not in listed["nums"]
            return
        if caller_version == MODERN:
            assert nums.structured_content == [0, 1, 2]
            assert listed["nums"]["outputSchema"]["type"] == "array"
        else:
            assert nums.structured_content == {"result": [0, 1, 2]}
            assert listed["nums"]["outputSchema"]["properties"]["result"]["type"] == "array"
        assert point.structured_content == {"x": 1, "y": 2}
        assert nums.data == [0, 1, 2]


@pytest.mark.parametrize("upstream_version", ["2025-11-25", MODERN])
async def test_unwrap_results_undoes_a_declared_wrapper(upstream_version: str) -> None:
    plain = Server.proxy(toolkit.Client(upstream_server(), protocol_version=upstream_version))
    unwrapping = Server.proxy(toolkit.Client(upstream_server(), protocol_version=upstream_version), unwrap_results=True)
    async with toolkit.Client(plain, protocol_version=MODERN) as client:
        listed = {tool["name"]: tool for tool in await client.list_tools()}
        assert listed["wrapped"]["outputSchema"]["properties"]["result"]["type"] == "array"
        assert (await client.call_tool("wrapped", {})).structured_content == {"result": [1, 2]}
    async with toolkit.Client(unwrapping, protocol_version=MODERN) as client:
        listed = {tool["name"]: tool for tool in await client.list_tools()}
        assert listed["wrapped"]["outputSchema"] == {"type": "array", "items": {"type": "integer"}}
        result = await client.call_tool("wrapped", {})
        assert result.structured_content == [1, 2]
        assert result.text == "[1,2]"
    async with toolkit.Client(unwrapping, protocol_version="2025-06-18") as client:
        result = await client.call_tool("wrapped", {})
        assert result.structured_content == {"result": [1, 2]}  # toolkit's own wrapper, for a legacy caller


# --- what the upstream sends about a call -----------------------------------------------------------


@pytest.mark.parametrize("upstream_version", ["2025-06-18", MODERN])
@pytest.mark.parametrize("caller_version", ["2025-06-18", MODERN])
async def test_progress_and_log_messages_reach_the_caller_in_order(upstream_version: str, caller_version: str) -> None:
    proxy = Server.proxy(toolkit.Client(upstream_server(), protocol_version=upstream_version))
    seen: list[Any] = []
    async with toolkit.Client(
        proxy,
        protocol_version=caller_version,
        log_level="debug",
        on_log=lambda params: seen.append(("log", params["data"])),
    ) as client:
        result = await client.call_tool(
            "steps", {}, progress=lambda progress, total, message: seen.append(("progress", progress))
        )
    assert result.text == "done"
    assert seen == [item for step in range(3) for item in (("progress", step), ("log", f"step {step}"))]


@pytest.mark.parametrize("caller_version", ["2025-06-18", MODERN])
@pytest.mark.parametrize("caller_level", [None, "warning"])
async def test_a_modern_upstream_is_asked_for_logs_at_the_callers_level(
    caller_version: str, caller_level: str | None
) -> None:
    """Per request: a 2026-07-28 caller that takes no logs makes an upstream log nothing (no stream of
    messages nobody reads); a legacy caller's level is its session's (debug until it sets one)."""
    proxy = Server.proxy(toolkit.Client(upstream_server(), protocol_version=MODERN))
    async with toolkit.Client(proxy, protocol_version=caller_version, log_level=caller_level) as client:
        result = await client.call_tool("level", {})
    expected = caller_level or ("None" if caller_version == MODERN else "debug")
    assert result.text == expected


@pytest.mark.parametrize(
    ("upstream_version", "caller_version"),
    [("2025-06-18", "2025-06-18"), (MODERN, "2025-06-18"), (MODERN, MODERN), ("2025-11-25", "2025-11-25")],
)
async def test_the_upstreams_questions_are_asked_of_the_caller(upstream_version: str, caller_version: str) -> None:
    proxy = Server.proxy(toolkit.Client(upstream_server(), protocol_version=upstream_version))
    async with toolkit.Client(proxy, protocol_version=caller_version, elicitation=answer_bob) as client:
        assert (await client.call_tool("ask", {})).text == "accept:bob"


async def test_a_legacy_upstream_asking_a_modern_caller_mid_call_is_declined() -> None:
    """The one case that cannot be bridged directly (ARCHITECTURE §7): the call is not a task."""
    proxy = Server.proxy(toolkit.Client(upstream_server(), protocol_version="2025-06-18"))
    asked: list[Any] = []

    def handler(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params)
        return answer_bob(params)

    async with toolkit.Client(proxy, protocol_version=MODERN, elicitation=handler) as client:
        assert (await client.call_tool("ask", {})).text == "decline:None"
    assert asked == []


async def test_as_a_task_a_legacy_upstreams_question_reaches_a_modern_caller() -> None:
    proxy = Server.proxy(toolkit.Client(upstream_server(), protocol_version="2025-06-18"))
    async with toolkit.Client(proxy, protocol_version=MODERN, elicitation=answer_bob) as client:
        handle = await client.call_tool_as_task("ask", {})
        result = await handle.wait()
    assert result["content"] == [{"type": "text", "text": "accept:bob"}]


async def test_an_upstream_tool_error_stays_a_tool_error() -> None:
    proxy = Server.proxy(toolkit.Client(upstream_server(), protocol_version=MODERN))
    async with toolkit.Client(proxy, raise_on_error=False) as client:
        result = await client.call_tool("fails", {})
    assert result.is_error
    assert result.text == "upstream says no"


async def test_an_upstream_json_rpc_error_reaches_the_caller_as_it_was() -> None:
    proxy = Server.proxy(toolkit.Client(upstream_server(), protocol_version="2025-11-25"))
    async with toolkit.Client(proxy) as client:
        with pytest.raises(ClientError) as raised:
            await client.get_prompt("hello", {})  # "who" is required upstream
    assert raised.value.code == -32602


async def test_a_cancelled_call_is_cancelled_upstream() -> None:
    upstream = Server("slow")
    started, cancelled = asyncio.Event(), asyncio.Event()

    @upstream.tool
    async def wait() -> str:
        started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "late"

    proxy = Server.proxy(toolkit.Client(upstream, protocol_version="2025-11-25"))
    async with toolkit.Client(proxy, protocol_version="2025-11-25") as client:
        call = asyncio.ensure_future(client.call_tool("wait", {}))
        await started.wait()
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        await asyncio.wait_for(cancelled.wait(), 60)


# --- resources, prompts, namespaces -----------------------------------------------------------------


@pytest.mark.parametrize("upstream_version", ["2025-03-26", MODERN])
async def test_resources_templates_and_prompts_under_a_namespace(upstream_version: str) -> None:
    gateway = Server("gateway")
    gateway.mount(toolkit.Client(upstream_server(), protocol_version=upstream_version), namespace="up")
    async with toolkit.Client(gateway) as client:
        assert {tool["name"] for tool in await client.list_tools()} >= {"up_add", "up_nums"}
        assert (await client.call_tool("up_add", {"a": 2, "b": 3})).text == "5"
        resources = [resource["uri"] for resource in await client.list_resources()]
        assert resources == ["data://up/static"]
        templates = [template["uriTemplate"] for template in await client.list_resource_templates()]
        assert templates == ["data://up/item/{id}"]
        assert await client.read_resource("data://up/item/7") == [
            {"uri": "data://up/item/7", "mimeType": "text/plain", "text": "item 7"}
        ]
        prompt = await client.get_prompt("up_hello", {"who": "ann"})
        assert prompt["messages"][0]["content"]["text"] == "hello ann"


async def test_include_and_exclude_by_the_upstreams_names() -> None:
    gateway = Server("gateway")
    gateway.mount(toolkit.Client(upstream_server()), namespace="a", include=["add", "nums"])
    gateway.mount(toolkit.Client(upstream_server()), namespace="b", exclude=["add"])
    async with toolkit.Client(gateway) as client:
        names = {tool["name"] for tool in await client.list_tools()}
    assert {name for name in names if name.startswith("a_")} == {"a_add", "a_nums"}
    assert "b_add" not in names
    assert "b_nums" in names


async def test_a_clash_with_a_proxied_name_fails_the_start_naming_both() -> None:
    gateway = Server("gateway")

    @gateway.tool
    def add(a: int, b: int) -> int:
        return 0

    gateway.mount(toolkit.Client(upstream_server()))
    with pytest.raises(RegistrationError, match=r"proxied server .* offers the tool 'add', which this server"):
        async with toolkit.Client(gateway):
            pass


async def test_the_upstreams_list_changes_reach_the_caller() -> None:
    upstream = upstream_server()
    proxy = Server.proxy(toolkit.Client(upstream, protocol_version="2025-11-25"))
    changed = asyncio.Event()

    def notified(message: dict[str, Any]) -> None:
        if message.get("method") == "notifications/tools/list_changed":
            changed.set()

    async with toolkit.Client(proxy, protocol_version="2025-11-25", on_notification=notified) as client:

        @upstream.tool
        def late() -> int:
            return 7

        await asyncio.wait_for(changed.wait(), 60)
        assert (await client.call_tool("late", {})).data == 7


async def test_a_modern_upstreams_list_changes_reach_the_caller_through_its_subscription() -> None:
    upstream = upstream_server()
    proxy = Server.proxy(toolkit.Client(upstream, protocol_version=MODERN))
    async with toolkit.Client(proxy, protocol_version=MODERN) as client:
        async with await client.listen(tools=True) as changes:

            @upstream.tool
            def late() -> int:
                return 7

            message = await asyncio.wait_for(anext(changes), 60)
        assert message["method"] == "notifications/tools/list_changed"
        assert "late" in {tool["name"] for tool in await client.list_tools()}


async def test_a_modern_upstreams_list_changes_still_reach_the_caller_after_the_upstream_clients_timeout() -> None:
    """The proxy's standing listen stays open past its client's timeout (over HTTP it ended with a
    TimeoutError the listen loop did not expect, and the gateway heard no change again)."""
    upstream = upstream_server()
    async with serve(upstream) as running:
        proxy = Server.proxy(toolkit.Client(running.url, protocol_version=MODERN, timeout=2.0))
        async with toolkit.Client(proxy, protocol_version=MODERN) as client:
            async with await client.listen(tools=True) as changes:
                await asyncio.sleep(2.5)  # longer than the upstream client's timeout

                @upstream.tool
                def late() -> int:
                    return 7

                message = await asyncio.wait_for(anext(changes), 60)
            assert message["method"] == "notifications/tools/list_changed"
            assert (await client.call_tool("late", {})).data == 7


# --- real processes and sockets ---------------------------------------------------------------------


async def test_a_stdio_upstream_behind_a_proxy() -> None:
    proxy = Server.proxy([sys.executable, str(UPSTREAM)])
    async with toolkit.Client(proxy, protocol_version=MODERN) as client:
        assert (await client.call_tool("add", {"a": 40, "b": 2})).data == 42


async def test_each_legacy_session_gets_its_own_upstream_session_and_a_modern_upstream_is_shared() -> None:
    upstream = Server("sessions")

    @upstream.tool
    def whoami(ctx: Context) -> str:
        return str(ctx.session_id)

    async with serve(upstream) as running:
        url = running.url + "/mcp" if not running.url.endswith("/mcp") else running.url
        legacy_gateway = Server.proxy(toolkit.Client(url, protocol_version="2025-11-25"))
        async with serve(legacy_gateway) as gateway:
            seen = set()
            for _ in range(2):
                async with toolkit.Client(gateway.url, protocol_version="2025-11-25") as client:
                    first = (await client.call_tool("whoami", {})).text
                    assert (await client.call_tool("whoami", {})).text == first  # the same session throughout
                    seen.add(first)
            assert len(seen) == 2
        modern_gateway = Server.proxy(toolkit.Client(url, protocol_version=MODERN))
        async with serve(modern_gateway) as gateway:
            for version in ("2025-11-25", MODERN):
                async with toolkit.Client(gateway.url, protocol_version=version) as client:
                    assert (await client.call_tool("whoami", {})).text == "None"  # stateless upstream


async def test_the_callers_token_is_never_forwarded_unless_asked() -> None:
    upstream = Server("headers")

    @upstream.tool
    def authorization(ctx: Context) -> str:
        return str(ctx.request.headers.get("authorization"))

    async with serve(upstream) as running:
        url = running.url + "/mcp" if not running.url.endswith("/mcp") else running.url
        own = toolkit.Client(url, headers={"Authorization": "Bearer upstream-credential"})
        async with toolkit.Client(Server.proxy(own)) as client:
            assert (await client.call_tool("authorization", {})).text == "Bearer upstream-credential"
        token = _Token("caller-token")
        for forward, expected in ((False, "Bearer upstream-credential"), (True, "Bearer caller-token")):
            proxy = Server.proxy(
                toolkit.Client(url, headers={"Authorization": "Bearer upstream-credential"}), forward_token=forward
            )
            async with proxy.in_memory() as transport:
                transport._access_token = token  # what the HTTP transport's verifier hands the engine
                async with toolkit.Client(transport) as client:
                    assert (await client.call_tool("authorization", {})).text == expected


class _Token:
    def __init__(self, token: str) -> None:
        self.token = token
        self.scopes: frozenset[str] = frozenset()
        self.subject = "caller"
        self.client_id = "client"
        self.claims: dict[str, Any] = {}
        self.expires_at = None


async def test_proxy_and_mount_refuse_what_they_cannot_take() -> None:
    with pytest.raises(TypeError, match=r"toolkit\.Server, or a toolkit\.Client"):
        Server("x").mount(object())
    with pytest.raises(TypeError, match="options of a proxied server"):
        Server("x").mount(Server("y"), unwrap_results=True)
    with pytest.raises(ValueError, match="sessions="):
        Server.proxy(toolkit.Client(upstream_server()), sessions="sometimes")  # type: ignore[arg-type]


async def test_a_tool_result_with_its_own_content_keeps_it() -> None:
    upstream = Server("content")

    @upstream.tool
    def both() -> ToolResult:
        return ToolResult(content=[toolkit.Text("see the data")], structured_content={"k": 1})

    proxy = Server.proxy(toolkit.Client(upstream, protocol_version=MODERN))
    async with toolkit.Client(proxy, protocol_version="2025-06-18") as client:
        result = await client.call_tool("both", {})
    assert result.text == "see the data"
    assert result.structured_content == {"k": 1}


async def test_shaping_applies_to_proxied_tools_and_mounted_ones_alike() -> None:
    billing = Server("billing")

    @billing.tool
    def charge(customer: str, cents: int) -> list[int]:
        return [cents, len(customer)]

    gateway = Server("gateway")
    gateway.mount(billing, "billing")
    gateway.mount(toolkit.Client(upstream_server(), protocol_version="2025-11-25"), namespace="up")
    gateway.transform_tool(
        "billing_charge", name="charge_acme", arguments={"customer": toolkit.ArgTransform(hide=True, default="acme")}
    )
    gateway.transform_tool("up_add", name="plus", arguments={"a": toolkit.ArgTransform(name="left")})
    gateway.disable("up_nums")
    async with toolkit.Client(gateway, protocol_version=MODERN) as client:
        listed = {tool["name"]: tool for tool in await client.list_tools()}
        assert "up_nums" not in listed
        assert "billing_charge" not in listed
        assert set(listed["charge_acme"]["inputSchema"]["properties"]) == {"cents"}
        assert (await client.call_tool("charge_acme", {"cents": 5})).data == [5, 4]
        assert set(listed["plus"]["inputSchema"]["properties"]) == {"left", "b"}
        assert (await client.call_tool("plus", {"left": 40, "b": 2})).text == "42"
        gateway.enable("up_nums")
        assert (await client.call_tool("up_nums", {"n": 2})).data == [0, 1]


async def test_unwrapping_keeps_the_upstreams_own_text_and_drops_fastmcps_wrap_mark() -> None:
    upstream = Server("fastmcp-like")
    schema = {
        "type": "object",
        "properties": {"result": {"type": "string"}},
        "required": ["result"],
        "x-fastmcp-wrap-result": True,
    }

    @upstream.tool(output_schema=schema)
    def city() -> ToolResult:
        return ToolResult(
            content=[toolkit.Text("Seattle: rain")],
            structured_content={"result": "Seattle: rain"},
            meta={"fastmcp": {"wrap_result": True}, "other": 1},
        )

    @upstream.tool(output_schema={**schema, "properties": {"result": {"type": "array"}}})
    def numbers() -> ToolResult:
        return ToolResult(content=[toolkit.Text('{"result": [1, 2]}')], structured_content={"result": [1, 2]})

    proxy = Server.proxy(toolkit.Client(upstream, protocol_version=MODERN), unwrap_results=True)
    async with toolkit.Client(proxy, protocol_version=MODERN) as client:
        result = await client.call_tool("city", {})
        assert (result.structured_content, result.text) == ("Seattle: rain", "Seattle: rain")
        raw = await client.session.call_tool("city", {})
        assert raw["_meta"] == {
            "other": 1,
            "io.modelcontextprotocol/serverInfo": raw["_meta"]["io.modelcontextprotocol/serverInfo"],
        }
        result = await client.call_tool("numbers", {})
        assert (result.structured_content, result.text) == ([1, 2], "[1,2]")  # the wrapper's JSON: rewritten


async def test_a_flood_of_list_changes_costs_a_few_lists_not_one_each() -> None:
    upstream = upstream_server()
    lists: list[str] = []

    @upstream.middleware
    async def count_lists(request: Any, call_next: Any) -> Any:
        if request.method == "tools/list":
            lists.append(request.method)
        return await call_next(request)

    proxy = Server.proxy(toolkit.Client(upstream, protocol_version="2025-11-25"))
    async with toolkit.Client(proxy, protocol_version="2025-11-25") as client:
        before = len(lists)
        for index in range(50):
            upstream.add_tool(lambda number=index: number, name=f"late_{index}")
        async with asyncio.timeout(60):  # a hang guard, not a measure
            while "late_49" not in {tool["name"] for tool in await client.list_tools()}:
                await asyncio.sleep(0.01)
    assert len(lists) - before < 50


async def test_the_least_recently_used_upstream_session_closes_but_never_mid_call() -> None:
    upstream = Server("sessions")
    started, release = asyncio.Event(), asyncio.Event()

    @upstream.tool
    def whoami(ctx: Context) -> str:
        return str(ctx.session_id)

    @upstream.tool
    async def hold(ctx: Context) -> str:
        started.set()
        await release.wait()
        return str(ctx.session_id)

    async with serve(upstream) as running:
        url = running.url + "/mcp" if not running.url.endswith("/mcp") else running.url
        proxy = Server.proxy(toolkit.Client(url, protocol_version="2025-11-25"), max_upstream_sessions=1)
        async with (
            serve(proxy) as gateway,
            toolkit.Client(gateway.url, protocol_version="2025-11-25") as first,
            toolkit.Client(gateway.url, protocol_version="2025-11-25") as second,
        ):
            mine = (await first.call_tool("whoami", {})).text
            held = asyncio.ensure_future(first.call_tool("hold", {}))
            await started.wait()  # the held call is in flight upstream
            theirs = (await second.call_tool("whoami", {})).text  # over the limit, but first's is busy
            release.set()
            assert (await held).text == mine  # its session was not closed under it
            assert theirs != mine
            async with toolkit.Client(gateway.url, protocol_version="2025-11-25") as third:
                await third.call_tool("whoami", {})  # a session opens: the limit is enforced again
            again = (await first.call_tool("whoami", {})).text
            assert again != mine  # closed meanwhile (the least recently used), opened again


@pytest.mark.parametrize("where", ["proxy", "mounted"])
async def test_a_callers_own_upstream_session_ends_when_the_callers_session_does(where: str) -> None:
    # It stayed open until the idle sweep (upstream_idle_timeout, 300 s by default). "mounted": the
    # proxy is a child mounted in the server the callers talk to, which tells it their sessions ended.
    upstream = Server("sessions")

    @upstream.tool
    def whoami(ctx: Context) -> str:
        return str(ctx.session_id)

    inner = upstream.http_app()
    ended: list[str] = []
    delete_seen = asyncio.Event()

    async def recording(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] == "DELETE":
            ended.append(dict(scope["headers"]).get(b"mcp-session-id", b"").decode())
            delete_seen.set()
        await inner(scope, receive, send)

    async with serve(recording) as running:
        url = running.url + "/mcp" if not running.url.endswith("/mcp") else running.url
        proxy = Server.proxy(toolkit.Client(url, protocol_version="2025-11-25"))
        name = "whoami"
        if where == "mounted":
            parent = Server("parent")
            parent.mount(proxy, namespace="up")
            proxy, name = parent, "up_whoami"
        async with serve(proxy) as gateway, toolkit.Client(gateway.url, protocol_version="2025-11-25") as staying:
            theirs = (await staying.call_tool(name, {})).text
            async with toolkit.Client(gateway.url, protocol_version="2025-11-25") as leaving:
                mine = (await leaving.call_tool(name, {})).text
            # leaving's DELETE ended its session at the gateway, which ends its upstream session
            async with asyncio.timeout(30):  # a hang guard, not a measure
                await delete_seen.wait()
            assert ended == [mine]
            assert (await staying.call_tool(name, {})).text == theirs  # the other caller's stays
        # The gateway's stop ended the rest: the other caller's, and the shared session it lists through.
        assert ended[0] == mine and theirs in ended[1:] and len(ended) == 3


async def test_a_callers_upstream_session_still_opening_when_its_session_ends_is_closed_once_open() -> None:
    # The leaving caller's first request is opening its upstream session (the upstream holds the
    # initialize) when the caller's DELETE arrives. That session used to stay open, unused, until
    # the idle sweep; it is closed as soon as it is open.
    upstream = Server("sessions")

    @upstream.tool
    def whoami(ctx: Context) -> str:
        return str(ctx.session_id)

    inner = upstream.http_app()
    hold_next_open, held, release = False, asyncio.Event(), asyncio.Event()
    opened: list[str] = []  # the upstream sessions the held initialize opened
    ended: list[str] = []
    delete_seen = asyncio.Event()

    async def recording(scope: Any, receive: Any, send: Any) -> None:
        nonlocal hold_next_open
        headers = dict(scope.get("headers", []))
        if scope["type"] == "http" and scope["method"] == "DELETE":
            ended.append(headers.get(b"mcp-session-id", b"").decode())
            delete_seen.set()
        new_session = scope["type"] == "http" and scope["method"] == "POST" and b"mcp-session-id" not in headers
        if new_session and hold_next_open:  # an initialize: the leaving caller's upstream session
            hold_next_open = False
            held.set()
            await release.wait()

            async def noting(message: Any) -> None:
                if message["type"] == "http.response.start":
                    opened.append(dict(message["headers"]).get(b"mcp-session-id", b"").decode())
                await send(message)

            await inner(scope, receive, noting)
            return
        await inner(scope, receive, send)

    async with serve(recording) as running:
        url = running.url + "/mcp" if not running.url.endswith("/mcp") else running.url
        proxy = Server.proxy(toolkit.Client(url, protocol_version="2025-11-25"))
        async with serve(proxy) as gateway, toolkit.Client(gateway.url, protocol_version="2025-11-25") as staying:
            theirs = (await staying.call_tool("whoami", {})).text
            async with toolkit.Client(gateway.url, protocol_version="2025-11-25") as leaving:
                hold_next_open = True
                call = asyncio.ensure_future(leaving.call_tool("whoami", {}))
                async with asyncio.timeout(30):  # a hang guard, not a measure
                    await held.wait()
                call.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await call
            # leaving's DELETE has ended its session at the gateway; now its upstream session opens
            release.set()
            async with asyncio.timeout(30):
                await delete_seen.wait()
            assert opened and ended == opened  # closed once open, the gateway still serving
            assert (await staying.call_tool("whoami", {})).text == theirs  # the other caller's stays


async def test_a_proxied_server_not_required_that_cannot_be_reached_leaves_the_start_alone() -> None:
    # required=False: the parent starts and serves its own tools; the upstream is tried again in
    # the background, and that stops with the parent (the CLI's test sees one join).
    parent = Server("parent")

    @parent.tool
    def local() -> str:
        return "here"

    with socket.socket() as unused:  # a port nothing listens on
        unused.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{unused.getsockname()[1]}/mcp"
    parent.mount(toolkit.Client(url), "away", required=False)
    ((_, source),) = parent.mounted
    async with asyncio.timeout(30):  # a hang guard: the start and the stop, with the retries under way
        async with toolkit.Client(parent, protocol_version=MODERN) as client:
            assert [tool["name"] for tool in await client.list_tools()] == ["local"]
            assert (await client.call_tool("local")).text == "here"
            assert source.unreachable is not None and "cannot connect" in source.unreachable
    assert not source._tasks  # the retries stopped with the server


async def test_listing_again_what_did_not_change_keeps_a_callers_cursor_good() -> None:
    """The proxy lists again after a listen is acknowledged, a reconnection or a ``list_changed``;
    lists that came back the same change nothing, so a cursor handed out before stays good (it
    went stale once, and a client paging through the gateway's tools failed)."""
    proxy = Server.proxy(toolkit.Client(upstream_server(), protocol_version=MODERN))
    proxy.page_size = 2
    ((_, source),) = proxy.mounted
    async with toolkit.Client(proxy, protocol_version=MODERN) as client:
        first = await client.session.result("tools/list")
        await source._refetch(("tools",))
        second = await client.session.result("tools/list", {"cursor": first["nextCursor"]})
        assert [tool["name"] for tool in first["tools"] + second["tools"]][:4] == ["add", "nums", "point", "wrapped"]
