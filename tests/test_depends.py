"""Dependencies (``Depends`` and the built-in providers) on tools, resources, templates and prompts.

In process (``toolkit.testing.Client``, both eras): what a client sees (no injected parameter in a
schema, a prompt's arguments or a template's variables; an argument of that name refused, naming
the tool and the parameter), every kind of provider (sync in a worker thread, ``blocking=False``
on the loop, async, generators of both kinds), one run per call, nesting, cleanup in reverse order
on success, failure and an unfinished round, failures naming the provider (masked like the tool's
own), the registration errors, ``dependency_overrides`` and the built-ins.

On the wire (``toolkit run tests/support/depends_app.py``): over stdio and Streamable HTTP in
2026-07-28 and a 2025-11-25 session, real JWTs for two users over HTTP (the subject and token
providers see each caller), the cleanup of a cancelled call, and a provider that blocks its thread
while the server answers another call. ``examples/dependencies.py`` over stdio in both eras.
"""

import asyncio
import contextlib
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Annotated, Any

import pytest
from tests.http_support import cli_server, free_port
from tests.support.issuer import serve_issuer
from tests.support.processes import REPO
from tests.wire import assert_result_valid

from toolkit import (
    CallerToken,
    Context,
    Depends,
    Lifespan,
    ProtocolVersion,
    RegistrationError,
    RequestHeader,
    RequestHeaders,
    Server,
    ServerStore,
    Subject,
    ToolError,
)
from toolkit.auth import AccessToken
from toolkit.client import Client as RemoteClient
from toolkit.stores import MemoryStore
from toolkit.testing import Client, ClientError

pytestmark = pytest.mark.timeout(180)

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
ERAS = (MODERN, LEGACY)
APP = REPO / "tests" / "support" / "depends_app.py"
EXAMPLE = REPO / "examples" / "dependencies.py"
PATIENT = 60.0
"""How long a condition may take to hold: far longer than it takes, so one that never holds fails."""


def text(result: dict[str, Any]) -> str:
    return "\n".join(block["text"] for block in result["content"] if block["type"] == "text")


def value(result: dict[str, Any]) -> Any:
    """The natural value of a successful result (a ``str`` return is text, not structured)."""
    assert not result.get("isError"), result
    if "structuredContent" not in result:
        return text(result)
    structured = result["structuredContent"]
    return structured["result"] if isinstance(structured, dict) and set(structured) == {"result"} else structured


# --- what a client sees ----------------------------------------------------------------------------


async def get_db() -> str:
    return "db"


def make_visible() -> Server:
    server = Server("depends-visible")

    @server.tool
    async def search(
        query: str, db: Annotated[str, Depends(get_db)], limit: int = 10, other: str = Depends(get_db)
    ) -> str:
        """Search.

        Args:
            query: What to look for.
            db: Never shown.
        """
        return f"{query} {db} {limit} {other}"

    @server.tool(input_schema={"type": "object", "additionalProperties": True})
    async def loose(db: Annotated[str, Depends(get_db)], **rest: Any) -> str:
        return db

    @server.prompt
    def brief(topic: str, db: Annotated[str, Depends(get_db)]) -> str:
        return f"{topic} from {db}"

    @server.resource("notes://{name}")
    def note(name: str, db: Annotated[str, Depends(get_db)]) -> str:
        return f"{name} in {db}"

    @server.resource("notes://all")
    def all_notes(db: Annotated[str, Depends(get_db)]) -> str:
        return f"all in {db}"

    return server


@pytest.mark.parametrize("version", ERAS)
async def test_injected_parameters_are_in_no_schema_argument_list_or_template(version: str) -> None:
    async with Client(make_visible(), protocol_version=version) as client:
        tools = {tool["name"]: tool for tool in await client.list_tools()}
        schema = tools["search"]["inputSchema"]
        assert set(schema["properties"]) == {"query", "limit"}
        assert schema["required"] == ["query"]
        prompt = (await client.result("prompts/list"))["prompts"][0]
        assert [argument["name"] for argument in prompt["arguments"]] == ["topic"]
        templates = (await client.result("resources/templates/list"))["resourceTemplates"]
        assert [template["uriTemplate"] for template in templates] == ["notes://{name}"]
        assert value(await client.call_tool("search", {"query": "q"})) == "q db 10 db"
        assert (await client.read_resource("notes://today"))["contents"][0]["text"] == "today in db"
        assert (await client.read_resource("notes://all"))["contents"][0]["text"] == "all in db"
        rendered = await client.get_prompt("brief", {"topic": "rain"})
        assert rendered["messages"][0]["content"]["text"] == "rain from db"


@pytest.mark.parametrize("version", ERAS)
async def test_an_argument_named_like_an_injected_parameter_is_refused(version: str) -> None:
    async with Client(make_visible(), protocol_version=version) as client:
        refused = await client.call_tool("search", {"query": "q", "db": "mine"})
        assert refused["isError"] is True
        assert text(refused) == (
            "Invalid arguments for tool 'search': 'db' (get_db): provided by the server (a dependency), "
            "never by the client; leave it out"
        )
        assert_result_valid(refused, version, "tools/call")
        # A hand-written schema that allows it: refused all the same, by the tool, not by the schema.
        loose = await client.call_tool("loose", {"db": "mine", "x": 1})
        assert loose["isError"] is True
        assert "Invalid arguments for tool 'loose': 'db' (get_db): provided by the server" in text(loose)
        assert value(await client.call_tool("loose", {"x": 1})) == "db"
        with pytest.raises(ClientError, match=r"Invalid arguments for prompt 'brief': 'db' \(get_db\): provided by"):
            await client.get_prompt("brief", {"topic": "rain", "db": "mine"})


# --- the kinds of providers, caching, nesting, order -----------------------------------------------


def make_kinds(record: list[str]) -> Server:
    server = Server("depends-kinds")

    def sync_provider() -> str:
        record.append(f"sync in {threading.current_thread().name}")
        return "sync"

    def inline_provider() -> str:
        record.append(f"inline in {threading.current_thread().name}")
        return "inline"

    async def async_provider() -> str:
        record.append("async")
        return "async"

    def sync_generator() -> Iterator[str]:
        record.append(f"open sync generator in {threading.current_thread().name}")
        yield "sync generator"
        record.append(f"close sync generator in {threading.current_thread().name}")

    async def async_generator() -> AsyncIterator[str]:
        record.append("open async generator")
        yield "async generator"
        record.append("close async generator")

    @server.tool
    def every_kind(
        a: Annotated[str, Depends(sync_provider)],
        b: Annotated[str, Depends(inline_provider, blocking=False)],
        c: Annotated[str, Depends(async_provider)],
        d: Annotated[str, Depends(sync_generator)],
        e: Annotated[str, Depends(async_generator)],
    ) -> list[str]:
        record.append("tool")
        return [a, b, c, d, e]

    counter = iter(range(1, 1000))

    def numbered() -> int:
        return next(counter)

    def twice(first: Annotated[int, Depends(numbered)], second: Annotated[int, Depends(numbered)]) -> list[int]:
        return [first, second]

    @server.tool
    async def cached(
        one: Annotated[int, Depends(numbered)],
        pair: Annotated[list[int], Depends(twice)],
        fresh: Annotated[int, Depends(numbered, use_cache=False)],
    ) -> list[int]:
        return [one, *pair, fresh]

    return server


@pytest.mark.parametrize("version", ERAS)
async def test_every_kind_of_provider(version: str) -> None:
    record: list[str] = []
    loop_thread = threading.current_thread().name
    async with Client(make_kinds(record), protocol_version=version) as client:
        result = await client.call_tool("every_kind")
        assert value(result) == ["sync", "inline", "async", "sync generator", "async generator"]
    assert record[0].startswith("sync in toolkit-worker-")  # a plain def provider: a worker thread
    assert record[1] == f"inline in {loop_thread}"  # blocking=False: the event loop
    assert record[2] == "async"
    assert record[3].startswith("open sync generator in toolkit-worker-")
    assert record[4:7] == ["open async generator", "tool", "close async generator"]  # closed in reverse order
    assert record[7].startswith("close sync generator in toolkit-worker-")
    assert len(record) == 8


async def test_a_provider_runs_once_per_call_unless_asked_not_to() -> None:
    async with Client(make_kinds([])) as client:
        assert value(await client.call_tool("cached")) == [1, 1, 1, 2]  # numbered once, and once more for fresh
        assert value(await client.call_tool("cached")) == [3, 3, 3, 4]  # every call afresh


def make_transactions(record: list[str], **server_options: Any) -> Server:
    server = Server("depends-transactions", **server_options)

    async def connection() -> AsyncIterator[str]:
        record.append("connect")
        try:
            yield "connection"
        except Exception as exc:
            record.append(f"connection saw {exc}")
            raise
        finally:
            record.append("disconnect")

    def transaction(conn: Annotated[str, Depends(connection)]) -> Iterator[str]:
        record.append(f"begin on {conn}")
        try:
            yield "transaction"
        except Exception:
            record.append("rollback")
            raise
        else:
            record.append("commit")

    def swallowing() -> Iterator[str]:
        try:
            yield "swallowing"
        except Exception:
            record.append("swallowed")  # and no raise: the call fails all the same

    @server.tool
    async def move(amount: int, tx: Annotated[str, Depends(transaction)]) -> str:
        if amount < 0:
            raise ValueError("negative")
        if amount == 0:
            raise ToolError("nothing to move")
        return f"moved {amount}"

    @server.tool
    async def swallowed(s: Annotated[str, Depends(swallowing)]) -> str:
        raise ValueError("lost")

    def failing_close() -> Iterator[str]:
        yield "x"
        raise OSError("the commit failed")

    @server.tool
    async def closes_badly(x: Annotated[str, Depends(failing_close)], tx: Annotated[str, Depends(transaction)]) -> str:
        return "done"

    return server


async def test_generators_close_in_reverse_order_and_see_the_failure() -> None:
    record: list[str] = []
    async with Client(make_transactions(record)) as client:
        assert value(await client.call_tool("move", {"amount": 5})) == "moved 5"
        assert record == ["connect", "begin on connection", "commit", "disconnect"]
        record.clear()
        failed = await client.call_tool("move", {"amount": -1})
        assert text(failed) == "Error executing tool 'move'"  # the tool's own failure, masked
        assert record == ["connect", "begin on connection", "rollback", "connection saw negative", "disconnect"]
        record.clear()
        refused = await client.call_tool("move", {"amount": 0})
        assert text(refused) == "nothing to move"
        assert record[2:] == ["rollback", "connection saw nothing to move", "disconnect"]
        record.clear()
        swallowed = await client.call_tool("swallowed")
        assert swallowed["isError"] is True and text(swallowed) == "Error executing tool 'swallowed'"
        assert record == ["swallowed"]


@pytest.mark.parametrize("masked", [True, False])
async def test_a_generator_that_fails_while_closing_fails_the_call(
    masked: bool, caplog: pytest.LogCaptureFixture
) -> None:
    record: list[str] = []
    async with Client(make_transactions(record, mask_errors=masked)) as client:
        result = await client.call_tool("closes_badly")
    assert result["isError"] is True
    said = (
        "Error executing tool 'closes_badly': its dependency make_transactions.<locals>.failing_close "
        "failed while closing"
    )
    assert text(result) == (said if masked else f"{said}: OSError: the commit failed")
    assert record == ["connect", "begin on connection", "commit", "disconnect"]  # the others were closed all the same
    assert "failing_close failed while closing" in caplog.text and "the commit failed" in caplog.text


def make_failing(**server_options: Any) -> Server:
    server = Server("depends-failing", **server_options)

    def broken() -> str:
        raise KeyError("secret detail")

    async def refusing() -> str:
        raise ToolError("you may not")

    async def middle(value: Annotated[str, Depends(broken)]) -> str:
        return value

    @server.tool
    async def uses_broken(x: Annotated[str, Depends(middle)]) -> str:
        return x

    @server.tool
    async def uses_refusing(x: Annotated[str, Depends(refusing)]) -> str:
        return x

    @server.resource("data://broken")
    def broken_resource(x: Annotated[str, Depends(broken)]) -> str:
        return x

    @server.prompt
    def broken_prompt(x: Annotated[str, Depends(broken)]) -> str:
        return x

    return server


@pytest.mark.parametrize("version", ERAS)
async def test_a_failing_provider_is_named_and_masked_like_the_tool(
    version: str, caplog: pytest.LogCaptureFixture
) -> None:
    async with Client(make_failing(), protocol_version=version) as client:
        result = await client.call_tool("uses_broken")
        assert result["isError"] is True
        assert text(result) == "Error executing tool 'uses_broken': its dependency make_failing.<locals>.broken raised"
        assert "secret detail" not in text(result)
        assert "tool 'uses_broken': dependency make_failing.<locals>.broken raised" in caplog.text
        assert "secret detail" in caplog.text  # the log has it all
        assert text(await client.call_tool("uses_refusing")) == "you may not"  # a ToolError is the provider's message
        with pytest.raises(
            ClientError, match=r"Error reading resource 'broken_resource': its dependency .*broken raised"
        ):
            await client.read_resource("data://broken")
        with pytest.raises(
            ClientError, match=r"Error rendering prompt 'broken_prompt': its dependency .*broken raised"
        ):
            await client.get_prompt("broken_prompt")
    async with Client(make_failing(mask_errors=False), protocol_version=version) as client:
        shown = text(await client.call_tool("uses_broken"))
        assert shown == (
            "Error executing tool 'uses_broken': its dependency make_failing.<locals>.broken raised: "
            "KeyError: 'secret detail'"
        )


async def test_a_modern_round_closes_the_generators_and_runs_them_again() -> None:
    record: list[str] = []
    server = Server("depends-rounds")

    async def session() -> AsyncIterator[str]:
        record.append("open")
        try:
            yield "session"
        finally:
            record.append("close")

    @server.tool
    async def confirm(ctx: Context, s: Annotated[str, Depends(session)]) -> str:
        answer = await ctx.elicit("Sure?", bool)
        return f"{s}: {answer.data}"

    def accept(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"value": True}}

    async with Client(server, protocol_version=MODERN, capabilities={"elicitation": {}}, elicitation=accept) as client:
        assert value(await client.call_tool("confirm")) == "session: True"
    assert record == ["open", "close", "open", "close"]  # the first round ended with the question


async def test_an_inline_tool_a_timeout_and_bound_methods() -> None:
    record: list[str] = []
    server = Server("depends-more")

    class Service:
        def __init__(self) -> None:
            self.calls = 0

        async def value(self) -> int:
            self.calls += 1
            return self.calls

    service = Service()

    async def held() -> AsyncIterator[str]:
        record.append("open")
        try:
            yield "held"
        except BaseException as exc:
            record.append(f"saw {type(exc).__name__}")
            raise
        finally:
            record.append("close")

    @server.tool(blocking=False)
    def inline(
        first: Annotated[int, Depends(service.value)],
        again: Annotated[int, Depends(service.value)],  # an equal bound method: the same provider
        thread: Annotated[str, Depends(lambda: threading.current_thread().name, blocking=False)],
    ) -> list[Any]:
        return [first, again, thread == threading.current_thread().name]

    @server.tool(timeout=0.05)
    async def slow(h: Annotated[str, Depends(held)]) -> str:
        await asyncio.sleep(3600)
        return h

    async with Client(server) as client:
        assert value(await client.call_tool("inline")) == [1, 1, True]  # the tool and its provider: one thread
        result = await client.call_tool("slow")
    assert text(result) == "Tool 'slow' timed out after 0.05 s"
    assert record == ["open", "saw CancelledError", "close"]


async def test_a_missing_value_in_a_resource_or_a_prompt() -> None:
    server = Server("depends-missing")

    @server.resource("tenant://name")
    def tenant_name(tenant: Annotated[str, RequestHeader("x-tenant")]) -> str:
        return tenant

    @server.prompt
    def for_me(user: Subject) -> str:
        return f"for {user}"

    def run_in_thread(ctx: Context) -> str:  # a plain def provider with a Context: its properties work there
        return f"{ctx.protocol_version} in {threading.current_thread().name}"

    @server.prompt
    def where(ran: Annotated[str, Depends(run_in_thread)]) -> str:
        return ran

    async with Client(server) as client:
        with pytest.raises(ClientError) as caught:
            await client.read_resource("tenant://name")
        assert caught.value.code == -32603
        assert caught.value.error["message"] == (
            "Resource 'tenant_name' needs the HTTP header 'x-tenant', which the request did not carry"
        )
        with pytest.raises(ClientError) as caught:
            await client.get_prompt("for_me")
        assert caught.value.code == -32602
        assert "Prompt 'for_me' needs the caller's subject" in caught.value.error["message"]
        rendered = await client.get_prompt("where")
        assert rendered["messages"][0]["content"]["text"].startswith(f"{MODERN} in toolkit-worker-")


WITHOUT_DEPENDENCIES = """
import sys
from toolkit import Server
server = Server("plain")

@server.tool
async def numbers() -> list[int]:
    return [1]

assert server.tools["numbers"].info.fn is numbers  # called as it is, not through an Injector
print(sorted(name for name in sys.modules if name in ("toolkit._injection", "toolkit._providers")))
"""


def test_a_server_without_dependencies_pays_nothing() -> None:
    """Its functions are called as before, and neither the injection nor the built-ins are even imported."""
    run = subprocess.run([sys.executable, "-c", WITHOUT_DEPENDENCIES], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "[]"


# --- registration ----------------------------------------------------------------------------------


def test_a_cycle_is_refused_at_registration() -> None:
    server = Server("cycle")

    def a(b_value: str = Depends(lambda: "")) -> str:  # its default is replaced below, to close the loop
        return b_value

    def b(a_value: str = Depends(a)) -> str:
        return a_value

    a.__defaults__ = (Depends(b),)  # a -> b -> a
    with pytest.raises(RegistrationError, match=r"tool 'loop': its dependencies form a cycle: .*\.a -> .*\.b -> .*\.a"):
        server.add_tool(lambda v=Depends(a): v, name="loop")  # noqa: B008
    assert "loop" not in server.tools


def test_a_provider_parameter_nothing_fills_is_refused_at_registration() -> None:
    server = Server("unfillable")

    def lookup(user_id: int) -> str:
        return str(user_id)

    with pytest.raises(
        RegistrationError,
        match=r"tool 'profile': dependency .*lookup takes 'user_id', which nothing provides\. A provider's parameters",
    ) as caught:
        server.add_tool(lambda user=Depends(lookup): user, name="profile")  # noqa: B008
    assert "test_depends.py" in str(caught.value)  # where the function is


def test_other_mistakes_are_refused_at_registration() -> None:
    server = Server("mistakes")

    async def provider() -> str:
        return ""

    with pytest.raises(RegistrationError, match=r"blocking= is for a plain def provider"):
        server.add_tool(lambda x=Depends(provider, blocking=False): x, name="blocking_async")  # noqa: B008
    with pytest.raises(RegistrationError, match=r"declares its dependency twice"):

        @server.tool
        def twice(x: Annotated[str, Depends(provider)] = Depends(provider)) -> str:
            return x

    with pytest.raises(RegistrationError, match=r"may be made optional with '\| None', and with nothing else"):

        @server.tool
        def united(x: Annotated[str, Depends(provider)] | int) -> str:
            return str(x)

    with pytest.raises(RegistrationError, match=r"takes \['name'\] from a dependency, so the URI cannot give them"):

        @server.resource("notes://{name}")
        def note(name: Annotated[str, Depends(provider)]) -> str:
            return name

    with pytest.raises(
        RegistrationError, match=r"is a dependency \(Depends\(.*provider\)\), and a completion function"
    ):

        @server.completion(prompt="p", argument="a")
        def complete(value: str, db: Annotated[str, Depends(provider)]) -> list[str]:
            return []

    with pytest.raises(TypeError, match=r"Depends\(\) takes the function that provides the value, not 'db'"):
        Depends("db")  # type: ignore[arg-type]


# --- overrides -------------------------------------------------------------------------------------


def make_overridable() -> Server:
    server = Server("depends-overrides")

    @server.tool
    async def who(
        db: Annotated[str, Depends(get_db)],
        subject: Subject | None,
        tenant: Annotated[str | None, RequestHeader("X-Tenant")],
    ) -> list[str | None]:
        return [db, subject, tenant]

    return server


async def test_overrides_replace_providers_for_the_calls_that_follow() -> None:
    server = make_overridable()
    async with Client(server) as client:
        assert value(await client.call_tool("who")) == ["db", None, None]

        async def fake_db(subject: Subject | None) -> str:  # an override takes dependencies of its own
            return f"fake db of {subject}"

        server.dependency_overrides[get_db] = fake_db
        server.dependency_overrides[Subject] = lambda: "alice"
        server.dependency_overrides[RequestHeader("x-tenant")] = lambda: "acme"
        assert value(await client.call_tool("who")) == ["fake db of alice", "alice", "acme"]
        assert server.dependency_overrides[Depends(get_db)] is fake_db
        assert len(server.dependency_overrides) == 3
        del server.dependency_overrides[Subject]
        assert value(await client.call_tool("who")) == ["fake db of None", None, "acme"]
        server.dependency_overrides.clear()
        assert value(await client.call_tool("who")) == ["db", None, None]
        server.dependency_overrides[get_db] = lambda user_id: user_id  # nothing fills user_id
        broken = await client.call_tool("who")
        assert broken["isError"] is True
        assert "tool 'who': dependency get_db (overridden by" in text(broken)
        assert "takes 'user_id', which nothing provides" in text(broken)
    with pytest.raises(TypeError, match="must be a function"):
        server.dependency_overrides[get_db] = "db"  # type: ignore[assignment]


async def test_overrides_belong_to_the_server_whose_functions_use_them() -> None:
    parent, child = make_overridable(), make_overridable()
    parent.mount(child, namespace="child")
    parent.dependency_overrides[get_db] = lambda: "parent's fake"
    async with Client(parent) as client:
        assert value(await client.call_tool("who"))[0] == "parent's fake"
        assert value(await client.call_tool("child_who"))[0] == "db"  # the child has its own
        child.dependency_overrides[get_db] = lambda: "child's fake"
        assert value(await client.call_tool("child_who"))[0] == "child's fake"


# --- the built-in providers ------------------------------------------------------------------------


def make_builtins(**server_options: Any) -> Server:
    server = Server("depends-builtins", **server_options)

    @server.tool
    async def caller(token: CallerToken) -> list[Any]:
        return [token.subject, sorted(token.scopes)]

    @server.tool
    async def subject(user: Subject) -> str:
        return user

    @server.tool
    async def maybe(user: Subject | None, token: CallerToken | None, headers: RequestHeaders | None) -> list[Any]:
        return [user, token is None, headers]

    @server.tool
    async def header(tenant: Annotated[str, RequestHeader("x-tenant")]) -> str:
        return tenant

    @server.tool
    async def defaulted(tenant: Annotated[str, RequestHeader("x-tenant")] = "public") -> str:
        return tenant

    @server.tool
    async def version(v: ProtocolVersion) -> str:
        return v

    @server.tool
    async def state(whole: Annotated[dict[str, Any], Lifespan()], db: Annotated[str, Lifespan("db")]) -> list[Any]:
        return [sorted(whole), db]

    @server.tool
    async def missing_key(cache: Annotated[str, Lifespan("cache")]) -> str:
        return cache

    @server.tool
    async def stores(first: ServerStore, ctx: Context) -> bool:
        return first is (ctx.server.store or first)

    return server


@contextlib.asynccontextmanager
async def with_db(server: Server) -> AsyncIterator[dict[str, Any]]:
    yield {"db": "the database", "pool": 4}


@pytest.mark.parametrize("version", ERAS)
async def test_the_caller_s_token_and_subject(version: str) -> None:
    alice = AccessToken(subject="alice", client_id="app", scopes=frozenset({"notes"}), expires_at=None)
    async with Client(make_builtins(), protocol_version=version, access_token=alice) as client:
        assert value(await client.call_tool("caller")) == ["alice", ["notes"]]
        assert value(await client.call_tool("subject")) == "alice"
        assert value(await client.call_tool("maybe")) == ["alice", False, None]
    async with Client(make_builtins(), protocol_version=version) as client:  # no token: in process, or stdio
        refused = await client.call_tool("caller")
        assert refused["isError"] is True
        assert text(refused) == (
            "Tool 'caller' needs the caller's access token, and the request carried none (stdio, or a server "
            "without auth=)"
        )
        assert "needs the caller's subject (the access token's sub)" in text(await client.call_tool("subject"))
        assert value(await client.call_tool("maybe")) == [None, True, None]  # None where the type admits it
    nobody = AccessToken(subject=None, client_id="service", scopes=frozenset(), expires_at=None)
    async with Client(make_builtins(), protocol_version=version, access_token=nobody) as client:
        assert value(await client.call_tool("maybe")) == [None, False, None]


@pytest.mark.parametrize("version", ERAS)
async def test_headers_version_lifespan_and_store(version: str, caplog: pytest.LogCaptureFixture) -> None:
    server = make_builtins(lifespan=with_db)
    async with Client(server, protocol_version=version) as client:
        assert text(await client.call_tool("header")) == (
            "Tool 'header' needs the HTTP header 'x-tenant', which the request did not carry"
        )
        assert value(await client.call_tool("defaulted")) == "public"
        assert value(await client.call_tool("version")) == version
        assert value(await client.call_tool("state")) == [["db", "pool"], "the database"]
        missing = await client.call_tool("missing_key")
        assert text(missing) == "Error executing tool 'missing_key': its dependency Lifespan('cache') raised"
        assert "the lifespan's state has no 'cache' (it holds 'db', 'pool')" in caplog.text
        assert value(await client.call_tool("stores")) is True
    store = MemoryStore()
    server.store = store
    async with Client(server, protocol_version=version) as client:
        assert value(await client.call_tool("stores")) is True


async def test_the_store_without_one_configured_is_the_same_memory_store_every_call() -> None:
    server = Server("depends-store")
    seen: list[Any] = []

    @server.tool
    def remember(store: ServerStore) -> str:
        seen.append(store)
        return type(store).__name__

    async with Client(server) as client:
        assert value(await client.call_tool("remember")) == "MemoryStore"
        await client.call_tool("remember")
    assert seen[0] is seen[1]


async def test_a_lifespan_dependency_without_a_lifespan_fails_naming_it(caplog: pytest.LogCaptureFixture) -> None:
    async with Client(make_builtins()) as client:
        result = await client.call_tool("state")
    assert text(result) == "Error executing tool 'state': its dependency Lifespan() raised"
    assert "the server's lifespan yielded nothing, or it has none" in caplog.text


def test_the_built_ins_are_typed_markers() -> None:
    assert RequestHeader("X-Tenant") is RequestHeader("x-tenant")  # one per header: overrides find it
    assert repr(RequestHeader("x-tenant")) == "RequestHeader('x-tenant')"
    assert repr(Lifespan("db")) == "Lifespan('db')"
    with pytest.raises(TypeError, match=r"RequestHeader\(\) takes the header's name"):
        RequestHeader("")
    with pytest.raises(TypeError, match=r"Lifespan\(\) takes the name of one key"):
        Lifespan(3)  # type: ignore[arg-type]


async def test_a_built_in_may_be_any_kind_of_provider() -> None:
    """The extension point: a new built-in (per-user state, say) is a Builtin on a provider of any kind."""
    from toolkit._depends import MISSING, Builtin

    record: list[str] = []

    async def counter_of(user: Subject | None) -> AsyncIterator[Any]:
        if user is None:
            yield MISSING  # nothing to give: the parameter's fallback, or the refusal
            return
        state = {"user": user, "calls": 1}
        record.append(f"load {user}")
        yield state
        record.append(f"save {state}")

    Counter = Annotated[dict[str, Any], Builtin(counter_of, "Counter", "a counter, and the request has no caller")]
    server = Server("depends-builtin-kinds")

    @server.tool
    async def count(counter: Counter) -> int:
        counter["calls"] += 1
        return int(counter["calls"])

    alice = AccessToken(subject="alice", client_id="app", scopes=frozenset(), expires_at=None)
    async with Client(server, access_token=alice) as client:
        assert value(await client.call_tool("count")) == 2
    assert record == ["load alice", "save {'user': 'alice', 'calls': 2}"]
    async with Client(server) as client:
        assert text(await client.call_tool("count")) == "Tool 'count' needs a counter, and the request has no caller"


# --- on the wire -----------------------------------------------------------------------------------


async def until(client: RemoteClient, event: str) -> list[str]:
    """The app's events, once ``event`` is among them (polled; PATIENT seconds at most)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + PATIENT
    while True:
        events: list[str] = (await client.call_tool("events")).data
        if event in events:
            return events
        assert loop.time() < deadline, f"{event!r} never happened: {events}"
        await asyncio.sleep(0.02)


async def check_calls(client: RemoteClient, version: str) -> None:
    """A transfer's generators in order; a failed one rolled back; a cancelled one closed; a blocked provider."""
    await client.call_tool("forget")
    assert (await client.call_tool("transfer", {"amount": 5})).text == "moved 5 in transaction"
    events = (await client.call_tool("events")).data
    assert events[0] == "open connection"
    assert events[1].startswith("begin in toolkit-worker-")
    assert events[2:] == ["transfer 5", "commit", "end", "close connection"]

    await client.call_tool("forget")
    failed = await client.call_tool("transfer", {"amount": -1}, raise_on_error=False)
    assert failed.is_error and failed.text == "Error executing tool 'transfer'"
    events = (await client.call_tool("events")).data
    assert events[2:] == ["rollback after ValueError", "end", "connection saw ValueError", "close connection"]

    refused = await client.call_tool("transfer", {"amount": 1, "tx": "mine"}, raise_on_error=False)
    assert refused.is_error
    assert refused.text.startswith("Invalid arguments for tool 'transfer': 'tx' (transaction): provided by the server")

    # Cancelled by the caller once the tool is running: the generators are closed, last first.
    await client.call_tool("forget")
    call = asyncio.ensure_future(client.call_tool("hang", timeout=PATIENT))
    await until(client, "hanging")
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    events = await until(client, "close connection")
    assert events[2:] == [
        "hanging",
        "rollback after CancelledError",
        "end",
        "connection saw CancelledError",
        "close connection",
    ]

    # A provider blocking its worker thread holds up no other call.
    await client.call_tool("forget")
    blocked = asyncio.ensure_future(client.call_tool("through_gate", timeout=PATIENT * 2))
    await until(client, "waiting at the gate")
    assert (await client.call_tool("open_gate")).text == "open"  # answered while the provider blocks
    assert (await blocked).text == "opened"


@pytest.mark.parametrize("version", ERAS)
async def test_over_stdio(version: str) -> None:
    command = [sys.executable, "-m", "toolkit", "run", str(APP)]
    async with RemoteClient(command, protocol_version=version) as client:
        assert client.negotiated_version == version
        tools = {tool["name"]: tool for tool in await client.list_tools()}
        assert set(tools["transfer"]["inputSchema"]["properties"]) == {"amount"}
        assert (await client.call_tool("whoami")).data == {
            "subject": None,
            "client_id": None,
            "account": "public/anonymous",
            "version": version,
            "greeting": "hello",
            "tenant": None,
        }
        await check_calls(client, version)


@pytest.fixture(scope="module")
def secured_app() -> Iterator[tuple[str, Any]]:
    """``toolkit run depends_app.py --transport http`` requiring JWTs from a local issuer."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    with serve_issuer(url) as issuer:
        flags = ("--auth-jwks-uri", issuer.jwks_uri, "--auth-issuer", issuer.issuer, "--auth-audience", url)
        with cli_server(APP, *flags, port=port) as running:
            yield running.url, issuer


@pytest.mark.parametrize("version", ERAS)
async def test_over_http_each_caller_is_who_their_token_says(version: str, secured_app: tuple[str, Any]) -> None:
    url, issuer = secured_app
    alice = issuer.token(sub="alice", client_id="alice-app")
    bob = issuer.token(sub="bob", client_id="bob-app")
    headers = {"authorization": f"Bearer {alice}", "x-tenant": "acme"}
    async with (
        RemoteClient(url, protocol_version=version, headers=headers) as as_alice,
        RemoteClient(url, protocol_version=version, headers={"authorization": f"Bearer {bob}"}) as as_bob,
    ):
        assert as_alice.negotiated_version == version
        # Interleaved, so that a value kept from one caller's call would show in the other's.
        for _ in range(3):
            seen_by_alice, seen_by_bob = await asyncio.gather(as_alice.call_tool("whoami"), as_bob.call_tool("whoami"))
            assert seen_by_alice.data == {
                "subject": "alice",
                "client_id": "alice-app",
                "account": "acme/alice",
                "version": version,
                "greeting": "hello",
                "tenant": "acme",
            }
            assert seen_by_bob.data == {
                "subject": "bob",
                "client_id": "bob-app",
                "account": "public/bob",
                "version": version,
                "greeting": "hello",
                "tenant": None,
            }
        await check_calls(as_alice, version)


@pytest.mark.parametrize("version", ERAS)
async def test_the_example_over_stdio(version: str) -> None:
    command = [sys.executable, "-m", "toolkit", "run", str(EXAMPLE)]
    async with RemoteClient(command, protocol_version=version) as client:
        tools = {tool["name"]: tool for tool in await client.list_tools()}
        assert set(tools["add_note"]["inputSchema"]["properties"]) == {"text"}
        assert (await client.call_tool("add_note", {"text": "buy milk"})).data == 1
        assert (await client.call_tool("add_note", {"text": "call mum"})).data == 2
        assert (await client.call_tool("list_notes")).data == ["buy milk (anonymous)", "call mum (anonymous)"]
        refused = await client.call_tool("add_note", {"text": "x", "tenant": "other"}, raise_on_error=False)
        assert refused.is_error and "'tenant' (" in refused.text
        prompt = await client.get_prompt("review_notes")
        assert "buy milk" in prompt["messages"][0]["content"]["text"]
