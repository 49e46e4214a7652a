"""``RateLimit``: exactly N requests pass per window and key, the rest are refused with a clear error.

In process through ``toolkit.testing.Client`` (both eras), then over the real wire: ``toolkit run``
over HTTP (16 concurrent clients: HTTP 429 with ``Retry-After``; a legacy session too), over
stdio (the JSON-RPC error), behind real JWT authorization (each subject its own allowance), and
two replicas sharing one real redis-server (N in total; Redis gone: 503, back: served again).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.http_support import LEGACY, Legacy, Modern, Reply, connect
from tests.support.issuer import serve_issuer
from tests.support.processes import PYTHON, RunningServer, free_port, http_server
from tests.support.redis_rig import redis_server
from tests.support.stdio import StdioClient

import toolkit
from toolkit import Context, Server
from toolkit.auth import AccessToken
from toolkit.middleware import McpRequest, RateLimit
from toolkit.testing import Client

pytestmark = pytest.mark.timeout(60)

APP = Path(__file__).parent / "support" / "ratelimit_app.py"
APP_SPEC = f"{APP}:server"
RATE_LIMITED = -32000


def make_server(*limits: RateLimit) -> Server:
    server = Server("limited")

    @server.tool
    def search(query: str) -> str:
        """Search."""
        return f"found {query}"

    @server.tool
    def lookup(key: str) -> str:
        """Look up."""
        return key

    @server.tool(task="optional")
    async def report(ctx: Context) -> str:
        """A report, as a task if the client likes."""
        return "done"

    @server.resource("note://{name}")
    def note(name: str) -> str:
        """A note."""
        return name

    @server.prompt
    def greet(name: str) -> str:
        """Greet."""
        return f"Hello {name}"

    for limit in limits:
        server.add_middleware(limit)
    return server


async def call(client: Client, tool: str = "search", **arguments: Any) -> dict[str, Any]:
    """The raw JSON-RPC response to one ``tools/call``."""
    return await client.request("tools/call", {"name": tool, "arguments": arguments or {"query": "q"}})


def refused(response: dict[str, Any]) -> bool:
    error = response.get("error")
    if error is None:
        assert "result" in response and not response["result"].get("isError"), response
        return False
    assert error["code"] == RATE_LIMITED, error
    assert response["_http_status"] == 429
    return True


def token(subject: str) -> AccessToken:
    return AccessToken(subject=subject, client_id="app", scopes=frozenset(), expires_at=None)


# --- in process ---------------------------------------------------------------------------------


@pytest.mark.parametrize("version", ["2026-07-28", LEGACY])
async def test_exactly_n_of_m_calls_pass_and_the_rest_are_told_when_to_retry(version: str) -> None:
    server = make_server(RateLimit("5/minute"))
    async with Client(server, protocol_version=version) as client:
        responses = await asyncio.gather(*(call(client) for _ in range(8)))
    errors = [response["error"] for response in responses if refused(response)]
    assert len(responses) - len(errors) == 5
    assert len(errors) == 3
    for error in errors:
        retry_after = error["data"]["retryAfter"]
        assert isinstance(retry_after, int) and 1 <= retry_after <= 60
        assert error["data"]["limit"] == "5 per 1 minute"
        assert error["message"] == f"Rate limit exceeded for tool 'search': 5 per 1 minute; retry after {retry_after} s"


async def test_each_tool_has_its_own_allowance_by_default() -> None:
    async with Client(make_server(RateLimit("2/minute"))) as client:
        assert [refused(await call(client)) for _ in range(3)] == [False, False, True]
        assert [refused(await call(client, "lookup", key="k")) for _ in range(3)] == [False, False, True]


async def test_per_caller_every_tool_counts_and_each_caller_has_its_own() -> None:
    server = make_server(RateLimit("2/minute", per="caller"))
    async with Client(server, access_token=token("alice")) as alice, Client(server, access_token=token("bob")) as bob:
        assert not refused(await call(alice))
        assert not refused(await call(alice, "lookup", key="k"))
        assert refused(await call(alice, "lookup", key="k"))
        assert [refused(await call(bob)) for _ in range(3)] == [False, False, True]


async def test_tools_restricts_the_limit_to_those_tools() -> None:
    async with Client(make_server(RateLimit("1/minute", tools=["search"]))) as client:
        assert [refused(await call(client)) for _ in range(2)] == [False, True]
        assert not any([refused(await call(client, "lookup", key="k")) for _ in range(5)])


async def test_every_method_can_count() -> None:
    async with Client(make_server(RateLimit("3/minute", per="caller", methods="*"))) as client:
        assert "result" in await client.request("tools/list")
        assert "result" in await client.request("prompts/get", {"name": "greet", "arguments": {"name": "a"}})
        assert "result" in await client.request("resources/read", {"uri": "note://a"})
        assert refused(await call(client))
        listing = await client.request("tools/list")
        assert listing["error"]["message"].startswith("Rate limit exceeded for tools/list: 3 per 1 minute")


async def test_other_methods_are_named_in_the_refusal() -> None:
    server = make_server(RateLimit("1/minute", methods=["resources/read", "prompts/get"]))
    async with Client(server) as client:
        for _ in range(2):
            assert "result" in await call(client), "tools/call is not counted"
        assert "result" in await client.request("resources/read", {"uri": "note://a"})
        assert "result" in await client.request("resources/read", {"uri": "note://b"}), "per URI"
        read = await client.request("resources/read", {"uri": "note://a"})
        assert read["error"]["message"].startswith("Rate limit exceeded for resource 'note://a'")
        assert "result" in await client.request("prompts/get", {"name": "greet", "arguments": {"name": "a"}})
        prompt = await client.request("prompts/get", {"name": "greet", "arguments": {"name": "a"}})
        assert prompt["error"]["message"].startswith("Rate limit exceeded for prompt 'greet'")


async def test_a_key_function_decides_the_key_and_none_is_unlimited() -> None:
    def tenant(request: McpRequest) -> str | None:
        value = request.arguments.get("query")
        return value.split(":")[0] if isinstance(value, str) and ":" in value else None

    async with Client(make_server(RateLimit("2/minute", per=tenant))) as client:
        assert [refused(await call(client, query="acme:x")) for _ in range(3)] == [False, False, True]
        assert not refused(await call(client, query="globex:x"))
        assert not any([refused(await call(client, query="no tenant")) for _ in range(5)])


async def test_a_refused_call_is_not_validated() -> None:
    async with Client(make_server(RateLimit("1/minute"))) as client:
        first = await call(client, query=5)  # counted, then validated: the tool's isError result
        assert first["result"]["isError"] is True
        response = await client.request("tools/call", {"name": "search", "arguments": {"query": 5, "extra": [1]}})
        assert response["error"]["code"] == RATE_LIMITED, "refused before the arguments were looked at"


async def test_a_refused_task_call_creates_no_task() -> None:
    async with Client(make_server(RateLimit("1/minute")), protocol_version=LEGACY) as client:
        assert (await client.call_task("report"))["content"][0]["text"] == "done"
        second = await client.request("tools/call", {"name": "report", "arguments": {}, "task": {}})
        assert second["error"]["code"] == RATE_LIMITED
        assert len((await client.result("tasks/list"))["tasks"]) == 1


@pytest.mark.parametrize("strategy", ["fixed-window", "sliding-window-counter"])
async def test_the_other_strategies_also_allow_exactly_n(strategy: Any) -> None:
    async with Client(make_server(RateLimit("4/hour", strategy=strategy))) as client:
        responses = await asyncio.gather(*(call(client) for _ in range(7)))
    assert sum(not refused(response) for response in responses) == 4


async def test_the_window_moves_and_a_call_refused_by_one_limit_uses_none_of_another() -> None:
    async with Client(make_server(RateLimit(["1/second", "3/minute"]))) as client:
        assert not refused(await call(client))
        second = await call(client)
        assert refused(second)
        assert second["error"]["data"] == {"retryAfter": 1, "limit": "1 per 1 second"}
        for _ in range(2):  # had the refused call counted against 3/minute, the last would fail
            await asyncio.sleep(1.05)
            assert not refused(await call(client))
        await asyncio.sleep(1.05)
        last = await call(client)
        assert refused(last) and last["error"]["data"]["limit"] == "3 per 1 minute"
        assert 50 <= last["error"]["data"]["retryAfter"] <= 60


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"limit": "ten/minute"}, "cannot read the limit 'ten/minute'; write '<count>/<unit>'"),
        ({"limit": "10/fortnight"}, "with a unit of second, minute, hour, day, month or year"),
        ({"limit": "0/minute"}, "allows nothing"),
        ({"limit": []}, "no limit given"),
        ({"limit": "1/minute", "per": "user"}, "unknown key part(s) 'user'; use any of 'caller', 'tool'"),
        ({"limit": "1/minute", "per": ()}, "no key parts"),
        ({"limit": "1/minute", "strategy": "token-bucket"}, "use one of 'moving-window', 'fixed-window'"),
        ({"limit": "1/minute", "storage": "memcached://localhost:11211"}, "use 'memory://'"),
        ({"limit": "1/minute", "storage": "redis://localhost"}, "write redis://HOST:PORT/DB"),
        ({"limit": "1/minute", "methods": ()}, "give one or more non-empty names (or '*' for every request)"),
        ({"limit": "1/minute", "methods": "tools/list", "tools": ["search"]}, "add 'tools/call' to methods="),
        ({"limit": "1/minute", "key_prefix": ""}, "key_prefix='') must be a non-empty string"),
    ],
)
def test_bad_arguments_say_what_is_accepted(options: dict[str, Any], message: str) -> None:
    limit = options.pop("limit")
    with pytest.raises(ValueError) as raised:
        RateLimit(limit, **options)
    assert message in str(raised.value)


def test_a_key_function_must_be_plain() -> None:
    async def tenant(request: McpRequest) -> str:
        return "acme"

    with pytest.raises(TypeError, match="must be a plain def function, not async def"):
        RateLimit("1/minute", per=tenant)  # type: ignore[arg-type]


def test_a_password_in_the_storage_url_never_shows() -> None:
    for storage in ("redis://:hunter2@localhost", "redis://me:hunter2@localhost:port/0"):
        with pytest.raises(ValueError) as raised:
            RateLimit("1/minute", storage=storage)
        assert "hunter2" not in str(raised.value) and "***" in str(raised.value)
    limit = RateLimit(["10/minute", "2 per 3 seconds"], per="caller", storage="redis://me:hunter2@localhost:6379/0")
    assert repr(limit) == (
        "RateLimit(['10 per 1 minute', '2 per 3 seconds'], per=('caller',), methods=('tools/call',), "
        "storage='redis://me:***@localhost:6379/0', strategy='moving-window')"
    )


def test_without_limits_installed_the_error_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "limits", None)  # what `import limits` finds when it is not installed
    with pytest.raises(ImportError, match=r"pip install 'toolkit-mcp\[ratelimit\]'"):
        RateLimit("1/minute")


def test_a_server_without_rate_limits_never_imports_limits() -> None:
    code = (
        "import sys; from toolkit import Server; from toolkit.middleware import Middleware\n"
        "Server('plain').add_middleware(Middleware()); assert 'limits' not in sys.modules, 'imported'\n"
        "from toolkit.middleware import RateLimit; assert 'limits' not in sys.modules, 'imported early'\n"
        "RateLimit('1/minute'); assert 'limits' in sys.modules\n"
    )
    completed = subprocess.run([str(PYTHON), "-c", code], capture_output=True, text=True, timeout=30, check=False)
    assert completed.returncode == 0, completed.stderr


# --- the real wire --------------------------------------------------------------------------------


def environment(**settings: str) -> dict[str, str]:
    """This process's environment without toolkit's auth settings, with the app's ``RATELIMIT_*``."""
    env = {name: value for name, value in os.environ.items() if not name.startswith(("TOOLKIT_AUTH_", "RATELIMIT_"))}
    env.pop("TOOLKIT_RESOURCE_URL", None)
    return {**env, **{f"RATELIMIT_{name.upper()}": value for name, value in settings.items()}}


@pytest.fixture(scope="module")
def http_app() -> Iterator[RunningServer]:
    """``toolkit run`` over HTTP: 10 calls a minute per tool (every test client is 127.0.0.1)."""
    with http_server(APP_SPEC, env=environment(limit="10/minute"), timeout=30) as running:
        yield running


async def burst(url: str, clients: int, calls: int, tool: str = "search") -> list[Reply]:
    """``clients`` clients at once, each with its own connection, each making ``calls`` modern calls."""

    arguments = {"query": "q"} if tool == "search" else {"key": "k"}

    async def one() -> list[Reply]:
        async with connect(url) as http:
            modern = Modern(http)
            return [await modern.call_tool(tool, arguments) for _ in range(calls)]

    return [reply for replies in await asyncio.gather(*(one() for _ in range(clients))) for reply in replies]


def assert_429(reply: Reply) -> int:
    """A refusal as HTTP says it: 429, ``Retry-After`` (whole seconds), and the JSON-RPC error."""
    assert reply.status == 429, (reply.status, reply.messages)
    retry_after = reply.headers["retry-after"]
    assert retry_after.isdigit() and int(retry_after) >= 1
    assert reply.content_type == "application/json"
    assert reply.error["code"] == RATE_LIMITED
    assert reply.error["data"]["retryAfter"] == int(retry_after)
    return int(retry_after)


async def test_over_http_exactly_n_of_many_concurrent_calls_pass(http_app: RunningServer) -> None:
    replies = await burst(http_app.url, clients=16, calls=3)
    passed = [reply for reply in replies if reply.status == 200]
    assert len(passed) == 10, [(reply.status, reply.messages) for reply in replies]
    assert all(not reply.result.get("isError") for reply in passed)
    for reply in replies:
        if reply.status != 200:
            assert_429(reply)


async def test_a_legacy_session_over_http_is_refused_with_429(http_app: RunningServer) -> None:
    async with connect(http_app.url) as http:
        session = await Legacy(http).open()
        for _ in range(10):
            assert (await session.call_tool("lookup", {"key": "k"})).status == 200
        assert_429(await session.call_tool("lookup", {"key": "k"}))
        assert (await session.request("ping")).status == 200, "only tools/call counts; the session lives on"


def test_over_stdio_the_refusal_is_the_json_rpc_error() -> None:
    with StdioClient.toolkit(APP_SPEC, env=environment(limit="3/minute")) as client:
        client.use_modern()
        responses = [client.request("tools/call", {"name": "search", "arguments": {"query": "q"}}) for _ in range(5)]
    assert ["result" in response for response in responses] == [True, True, True, False, False]
    for response in responses[3:]:
        assert response["error"]["code"] == RATE_LIMITED
        assert response["error"]["data"]["limit"] == "3 per 1 minute"
        assert 1 <= response["error"]["data"]["retryAfter"] <= 60
    assert not client.invalid_lines


async def test_each_authorized_subject_has_its_own_allowance() -> None:
    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    with serve_issuer(resource) as issuer:
        flags = ["--auth-jwks-uri", issuer.jwks_uri, "--auth-issuer", issuer.issuer, "--resource-url", resource]
        env = environment(limit="3/minute", per="caller")
        with http_server(APP_SPEC, *flags, port=port, env=env, timeout=30):
            async with connect(resource) as http:
                modern = Modern(http)

                async def whoami(subject: str) -> Reply:
                    headers = {"authorization": f"Bearer {issuer.token(sub=subject)}"}
                    return await modern.call_tool("whoami", headers=headers)

                alice = [await whoami("alice") for _ in range(4)]
                bob = [await whoami("bob") for _ in range(4)]
    assert [reply.status for reply in alice] == [200, 200, 200, 429]
    assert [reply.status for reply in bob] == [200, 200, 200, 429], "bob's calls are not alice's"
    assert alice[0].result["structuredContent"] == "alice"
    assert bob[0].result["structuredContent"] == "bob"
    assert_429(alice[-1])


async def test_replicas_sharing_redis_allow_n_in_total_and_fail_closed_without_it() -> None:
    with redis_server() as redis:
        env = environment(limit="10/minute", storage=redis.url)
        with http_server(APP_SPEC, env=env, timeout=30) as one, http_server(APP_SPEC, env=env, timeout=30) as two:
            first, second = await asyncio.gather(burst(one.url, clients=8, calls=3), burst(two.url, clients=8, calls=3))
            assert sum(reply.status == 200 for reply in first + second) == 10, "ten in total, not ten per replica"
            for reply in first + second:
                if reply.status != 200:
                    assert_429(reply)
            assert redis.command("KEYS", "*") == ["toolkit:LIMITER/127.0.0.1/search/10/1/minute"]

            redis.stop()
            for replica in (one, two):
                gone = (await burst(replica.url, clients=1, calls=1, tool="lookup"))[0]
                assert gone.status == 503, (gone.status, gone.messages)
                message = gone.error["message"]
                assert message.startswith("Service Unavailable: the rate-limit storage (redis://127.0.0.1:")
                assert message.endswith("; retry shortly")

            redis.start()  # empty again: service resumes by itself
            for replica in (one, two):
                back = (await burst(replica.url, clients=1, calls=1, tool="lookup"))[0]
                assert back.status == 200, (back.status, back.messages)


async def test_a_parents_limit_counts_the_calls_of_mounted_and_proxied_tools() -> None:
    gateway = Server("gateway")
    gateway.mount(make_server(), "local")
    gateway.mount(toolkit.Client(make_server(), protocol_version="2025-11-25"), namespace="remote")
    gateway.add_middleware(RateLimit("2/minute", tools=["local_search", "remote_search"]))
    async with Client(gateway) as client:
        assert [refused(await call(client, "local_search", query="q")) for _ in range(3)] == [False, False, True]
        assert [refused(await call(client, "remote_search", query="q")) for _ in range(3)] == [False, False, True]
        assert not refused(await call(client, "local_lookup", key="k"))
