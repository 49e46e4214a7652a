"""What FastMCP users write, ported as is (issue 41): it works, or fails at registration saying what to write.

Each test reproduces what a port of a fastmcp 2.x or ``mcp.server.fastmcp`` server observed (a wrong
schema, a ``FieldInfo`` handed to the function, a template nothing matched, a ``TypeError`` at call
time, an unhelpful registration error) and fails on the code before the fix.
"""

from __future__ import annotations

import enum
import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

import httpx
import pytest
from pydantic import Field
from tests.support.processes import REPO, TOOLKIT, RunningServer, free_port, stop, wait_for_port
from tests.support.stdio import StdioClient

import toolkit
from toolkit import Context, RegistrationError, Server
from toolkit._uritemplate import UriTemplate
from toolkit.auth import InvalidToken
from toolkit.testing import Client, TokenIssuer, serve_http

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
ERAS = [MODERN, LEGACY]


def text(result: dict[str, Any]) -> str:
    return str(result["content"][0]["text"])


# --- 1. Field(...) as a parameter default --------------------------------------------------------


def field_server() -> Server:
    server = Server("fields")

    @server.tool
    def search(
        query: str = Field(description="What to look for"),
        limit: int = Field(10, ge=1, le=50, description="How many results"),
        tags: list[str] = Field(default_factory=list, description="Only these tags"),  # noqa: B008
    ) -> str:
        return f"{query}|{limit!r}|{tags!r}"

    @server.resource("items://{kind}{?page}")
    def items(kind: str, page: int = Field(1, ge=1, description="Page number")) -> str:
        return f"{kind}|{page!r}"

    @server.prompt
    def summarize(topic: str = Field("everything", description="The topic")) -> str:
        return f"Summarize {topic}"

    return server


def test_a_field_default_gives_the_schema_what_annotated_would() -> None:
    server = field_server()

    @server.tool
    def annotated(
        query: Annotated[str, Field(description="What to look for")],
        limit: Annotated[int, Field(ge=1, le=50, description="How many results")] = 10,
    ) -> str:
        return ""

    schema = server.tools["search"].input_schema
    expected = server.tools["annotated"].input_schema
    assert schema["properties"]["limit"] == expected["properties"]["limit"]
    assert schema["properties"]["limit"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 50,
        "description": "How many results",
        "default": 10,
    }
    assert schema["properties"]["query"] == expected["properties"]["query"]
    assert schema["required"] == ["query"]
    # A default_factory makes a fresh value per call: there is no one default to advertise.
    assert schema["properties"]["tags"] == {
        "type": "array",
        "items": {"type": "string"},
        "description": "Only these tags",
    }


@pytest.mark.parametrize("version", ERAS)
async def test_a_field_default_is_validated_and_the_function_gets_the_value(version: str) -> None:
    async with Client(field_server(), protocol_version=version) as client:
        assert text(await client.call_tool("search", {"query": "cats"})) == "cats|10|[]"
        assert text(await client.call_tool("search", {"query": "cats", "limit": 3})) == "cats|3|[]"
        refused = await client.call_tool("search", {"query": "cats", "limit": 0})
        assert refused["isError"] is True
        assert "arguments/limit: 0 is less than the minimum of 1" in text(refused)
        missing = await client.call_tool("search", {})
        assert missing["isError"] is True and "query" in text(missing)

        read = await client.read_resource("items://books")
        assert read["contents"][0]["text"] == "books|1"
        read = await client.read_resource("items://books?page=4")
        assert read["contents"][0]["text"] == "books|4"
        with pytest.raises(Exception, match="greater than or equal to 1"):
            await client.read_resource("items://books?page=0")

        prompt = await client.get_prompt("summarize", {})
        assert prompt["messages"][0]["content"]["text"] == "Summarize everything"
        listed = await client.result("prompts/list", {})
        assert listed["prompts"][0]["arguments"] == [{"name": "topic", "description": "The topic", "required": False}]


async def test_a_default_factory_runs_for_each_call() -> None:
    server = Server("factory")
    made: list[list[str]] = []

    @server.tool
    def remember(seen: list[str] = Field(default_factory=list)) -> int:  # noqa: B008
        made.append(seen)
        seen.append("x")
        return len(seen)

    async with Client(server) as client:
        assert (await client.call_tool("remember"))["structuredContent"] == 1
        assert (await client.call_tool("remember"))["structuredContent"] == 1
    assert made[0] is not made[1]


def test_a_field_default_with_an_annotated_field_is_refused_naming_the_parameter() -> None:
    server = Server("both")
    with pytest.raises(RegistrationError) as refused:

        @server.tool
        def clash(limit: Annotated[int, Field(ge=1)] = Field(10, le=9)) -> int:
            return limit

    message = str(refused.value)
    assert "parameter 'limit' of tool 'clash'" in message
    assert "x: Annotated[int, Field(ge=1)] = 10" in message and "x: int = Field(10, ge=1)" in message


@pytest.mark.parametrize(
    ("default", "said"),
    [
        (Field(alias="n"), "cannot rename a parameter"),
        (Field(default_factory=lambda data: data["other"]), "default_factory that takes the other arguments"),
        (Field(1, exclude=True), r"Field\(exclude=True\) means nothing for a parameter"),
    ],
)
def test_field_options_that_mean_nothing_for_a_parameter_are_refused(default: Any, said: str) -> None:
    server = Server("odd")

    def odd(value: int = default) -> int:
        return value

    for register in (server.tool, server.prompt):
        with pytest.raises(RegistrationError, match=said) as refused:
            register(odd)
        assert "parameter 'value'" in str(refused.value)


# --- 2. {?query} templates -------------------------------------------------------------------------


def query_server() -> Server:
    server = Server("queries")

    @server.resource("search://docs{?q,limit}")
    def search(q: str = "", limit: int = 10) -> str:
        return f"{q}|{limit}"

    @server.resource("repo://{owner}/{name}{?ref}{&path}")
    def repo(owner: str, name: str, ref: str = "main", path: str = "") -> str:
        return f"{owner}|{name}|{ref}|{path}"

    return server


@pytest.mark.parametrize("version", ERAS)
@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        ("search://docs?q=cats&limit=3", "cats|3"),
        ("search://docs?limit=3&q=cats", "cats|3"),
        ("search://docs?q=hello%20world", "hello world|10"),
        ("search://docs?q=100%2525", "100%25|10"),  # decoded once
        ("search://docs", "|10"),
        # {?ref}{&path} is one query: the first expression's pattern took it whole, and no URI matched.
        ("repo://ada/notes?ref=v2&path=docs%2Findex.md", "ada|notes|v2|docs/index.md"),
        ("repo://ada/notes?path=a&ref=v2", "ada|notes|v2|a"),
        ("repo://ada/notes?path=a", "ada|notes|main|a"),
        ("repo://ada/notes", "ada|notes|main|"),
    ],
)
async def test_query_templates_match_in_any_order_each_part_optional(version: str, uri: str, expected: str) -> None:
    async with Client(query_server(), protocol_version=version) as client:
        read = await client.read_resource(uri)
        assert read["contents"][0]["text"] == expected


async def test_query_values_keep_the_traversal_rules() -> None:
    async with Client(query_server()) as client:
        with pytest.raises(Exception, match="refused"):
            await client.read_resource("repo://ada/notes?path=..%2F..%2Fetc%2Fpasswd")
        with pytest.raises(Exception, match="Resource not found"):
            await client.read_resource("search://docs?q=cats&unknown=1")


def test_a_template_no_uri_can_be_read_through_is_refused_at_registration() -> None:
    server = Server("unreadable")
    with pytest.raises(RegistrationError, match="no URI can be read through it") as refused:

        @server.resource("files://{stem}{suffix}")
        def glued(stem: str, suffix: str) -> str:
            return stem + suffix

    assert "glued()" in str(refused.value)
    assert not server.registry.templates


@pytest.mark.parametrize(
    ("template", "options"),
    [
        ("m://{a}", {}),
        ("m://{a,b}", {}),
        ("m://{+a}", {}),
        ("m://x{#a}", {}),
        ("m://{a*}", {}),
        ("m://x{/a}", {}),
        ("m://x{/a*}", {"lists": ["a"]}),
        ("m://x{.a}", {}),
        ("m://x{;a,b}", {}),
        ("m://x{?a,b}", {"optional": ["a", "b"]}),
        ("m://x{?a}{&b}", {"optional": ["a", "b"]}),
        ("m://x?fixed=1{&a}", {}),
        ("m://{a:3}", {}),
    ],
)
def test_every_template_form_reads_its_own_expansion(template: str, options: dict[str, Any]) -> None:
    parsed = UriTemplate(template, **options)
    values: dict[str, Any] = {
        name: ["p", "q r"] if name in options.get("lists", ()) else "v w" for name in parsed.variables
    }
    if template.endswith("{a:3}"):
        values = {"a": "abc"}
    assert parsed.match(parsed.expand(values)) == values


# --- 4. ctx.elicit's scalar and choice forms ----------------------------------------------------


class Size(enum.Enum):
    SMALL = "small"
    LARGE = "large"


FORMS: dict[str, tuple[Any, dict[str, Any], Any, Any]] = {
    # name: (what elicit() is given, the property asked for, what the user answers, what data is)
    "str": (str, {"type": "string"}, "Ada", "Ada"),
    "int": (int, {"type": "integer"}, 3, 3),
    "float": (float, {"type": "number"}, 1.5, 1.5),
    "bool": (bool, {"type": "boolean"}, True, True),
    "literal": (Literal["tea", "coffee"], {"type": "string", "enum": ["tea", "coffee"]}, "tea", "tea"),
    "enum": (Size, {"type": "string", "enum": ["small", "large"]}, "large", Size.LARGE),
    "choices": (["low", "high"], {"type": "string", "enum": ["low", "high"]}, "high", "high"),
    "several": (
        [["red", "blue"]],
        {"type": "array", "items": {"type": "string", "enum": ["red", "blue"]}},
        ["blue"],
        ["blue"],
    ),
}


def elicit_server(seen: list[Any]) -> Server:
    server = Server("asks")

    @server.tool
    async def ask(form: str, ctx: Context) -> str:
        if form == "confirm":
            confirmed = await ctx.elicit("Go ahead?", None)
            seen.append(confirmed.data)
            return confirmed.action
        answer = await ctx.elicit(f"Your {form}?", FORMS[form][0])
        seen.append(answer.data)
        return answer.action

    return server


@pytest.mark.parametrize("version", ERAS)
@pytest.mark.parametrize("form", list(FORMS))
async def test_elicit_takes_a_scalar_or_choice_and_gives_the_value_back(version: str, form: str) -> None:
    _, prop, answered, expected = FORMS[form]
    asked: list[dict[str, Any]] = []
    seen: list[Any] = []

    def answer(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params["requestedSchema"])
        return {"action": "accept", "content": {"value": answered}}

    async with Client(elicit_server(seen), protocol_version=version, elicitation=answer) as client:
        result = await client.call_tool("ask", {"form": form})
    assert text(result) == "accept"
    assert asked == [{"type": "object", "properties": {"value": prop}, "required": ["value"]}]
    assert seen[-1] == expected and type(seen[-1]) is type(expected)


@pytest.mark.parametrize("version", ERAS)
async def test_elicit_none_asks_for_no_data(version: str) -> None:
    asked: list[dict[str, Any]] = []
    seen: list[Any] = []

    def answer(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params["requestedSchema"])
        return {"action": "accept", "content": {}}

    async with Client(elicit_server(seen), protocol_version=version, elicitation=answer) as client:
        assert text(await client.call_tool("ask", {"form": "confirm"})) == "accept"
    assert asked == [{"type": "object", "properties": {}}]
    assert seen == [None]


async def test_an_answer_that_does_not_fit_the_scalar_is_a_tool_error() -> None:
    def answer(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"value": "many"}}

    async with Client(elicit_server([]), elicitation=answer) as client:
        result = await client.call_tool("ask", {"form": "int"})
    assert result["isError"] is True
    assert "the user's answer does not fit the question" in text(result)


async def test_choices_that_are_not_strings_are_refused_saying_what_elicit_takes() -> None:
    server = Server("bad-choices", mask_errors=False)

    @server.tool
    async def pick(ctx: Context) -> str:
        await ctx.elicit("Which?", [1, 2])
        return ""

    async with Client(server, elicitation=lambda params: {"action": "cancel"}) as client:
        result = await client.call_tool("pick")
    assert result["isError"] is True
    assert "a list of choices as strings" in text(result)


# --- 6. @server.tool("name") ------------------------------------------------------------------


def test_a_positional_name_says_to_use_the_keyword() -> None:
    server = Server("names")
    with pytest.raises(RegistrationError, match=r"use @server.tool\(name='greet'\)"):
        server.tool("greet")  # type: ignore[call-overload]
    with pytest.raises(RegistrationError, match=r"use @server.prompt\(name='intro'\)"):
        server.prompt("intro")  # type: ignore[call-overload]
    with pytest.raises(RegistrationError, match="takes the resource's URI first"):

        @server.resource  # type: ignore[arg-type]
        def bare() -> str:
            return ""


# --- 7. RequestLogging under toolkit run --------------------------------------------------------

LOGGED_APP = """
import logging
from toolkit import Server
from toolkit.middleware import RequestLogging

{configure}
server = Server("logged")
server.add_middleware(RequestLogging())
app_logger = logging.getLogger("app")


@server.tool
def ping() -> str:
    app_logger.info("ping was called")
    return "pong"
"""


def run_logged(tmp_path: Path, stdio_client: Callable[..., StdioClient], configure: str, *args: str) -> tuple[str, str]:
    app = tmp_path / "logged.py"
    app.write_text(LOGGED_APP.format(configure=configure))
    client = stdio_client(app, *args)
    client.use_modern()
    result = client.call_tool("ping")
    assert result["content"][0]["text"] == "pong"
    client.close()
    return client.stderr, str(app)


def test_request_logging_logs_at_the_default_level_of_toolkit_run(
    tmp_path: Path, stdio_client: Callable[..., StdioClient]
) -> None:
    stderr, _ = run_logged(tmp_path, stdio_client, "")
    assert "INFO toolkit.requests: tools/call ping v=2026-07-28 stdio" in stderr
    assert "ping was called" not in stderr  # the root logger stays at WARNING: only RequestLogging's lines


def test_the_apps_own_logging_configuration_is_kept_by_toolkit_run(
    tmp_path: Path, stdio_client: Callable[..., StdioClient]
) -> None:
    configure = 'logging.basicConfig(level=logging.INFO, format="APP %(levelname)s %(name)s: %(message)s")'
    stderr, _ = run_logged(tmp_path, stdio_client, configure)
    assert "APP INFO app: ping was called" in stderr
    assert "APP INFO toolkit.requests: tools/call ping" in stderr


def test_an_explicit_log_level_sets_the_level_of_the_apps_configuration(
    tmp_path: Path, stdio_client: Callable[..., StdioClient]
) -> None:
    configure = 'logging.basicConfig(level=logging.INFO, format="APP %(levelname)s %(name)s: %(message)s")'
    stderr, _ = run_logged(tmp_path, stdio_client, configure, "--log-level", "warning")
    assert "ping was called" not in stderr
    assert "APP INFO toolkit.requests: tools/call ping" in stderr  # its own logger's level: INFO


# --- 3. an ASGI app as APP, and plain HTTP routes -----------------------------------------------

ROUTED_APP = """
from starlette.requests import Request
from starlette.responses import JSONResponse

from toolkit import Server

server = Server("routed")


@server.custom_route("/health", methods=["GET"])
async def health(request: Request) -> JSONResponse:
    return JSONResponse({"status": "ok", "asked": request.url.path})


@server.tool
def ping() -> str:
    return "pong"
"""


def call_over_http(url: str, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    """One 2026-07-28 tools/call over HTTP; its result."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": name,
            "arguments": arguments or {},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "tools/call",
        "Mcp-Name": name,
    }
    response = httpx.post(url, json=body, headers=headers, timeout=10)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()["result"]
    return result


def test_toolkit_run_serves_an_asgi_app_mounting_toolkit_as_it_is(http_server: Callable[..., RunningServer]) -> None:
    # The loader called any callable as a factory: "Starlette.__call__() missing 3 required positional arguments".
    running = http_server(REPO / "examples" / "asgi_mount.py:app")
    assert httpx.get(running.base_url + "/health").json() == {"status": "ok", "mcp": "/ai/mcp"}
    # The host's lifespan ran, and through it the server's: the catalog is open.
    assert call_over_http(running.base_url + "/ai/mcp", "stock_level", {"sku": "MUG-1"})["structuredContent"] == 40


def test_tools_and_call_find_the_server_an_asgi_app_mounts() -> None:
    listed = subprocess.run(
        [str(TOOLKIT), "tools", "examples/asgi_mount.py:app"], cwd=REPO, capture_output=True, text=True, check=False
    )
    assert listed.returncode == 0, listed.stderr
    assert [tool["name"] for tool in json.loads(listed.stdout)] == ["search_products", "stock_level"]


def test_an_asgi_app_mounting_no_server_is_served_over_http_only(
    tmp_path: Path, http_server: Callable[..., RunningServer]
) -> None:
    app = tmp_path / "plain.py"
    app.write_text(
        "from starlette.applications import Starlette\n"
        "from starlette.responses import PlainTextResponse\n"
        "from starlette.routing import Route\n"
        "app = Starlette(routes=[Route('/', lambda request: PlainTextResponse('hello'))])\n"
    )
    stdio = subprocess.run(
        [str(TOOLKIT), "run", f"{app}:app"], cwd=REPO, capture_output=True, text=True, check=False, input=""
    )
    assert stdio.returncode == 2
    assert "mounts no toolkit server" in stdio.stderr and "--transport http" in stdio.stderr
    running = http_server(f"{app}:app")
    assert httpx.get(running.base_url + "/").text == "hello"


def test_a_custom_route_is_served_by_toolkit_run(tmp_path: Path, http_server: Callable[..., RunningServer]) -> None:
    app = tmp_path / "routed.py"
    app.write_text(ROUTED_APP)
    running = http_server(app)
    assert httpx.get(running.base_url + "/health").json() == {"status": "ok", "asked": "/health"}
    assert httpx.post(running.base_url + "/health").status_code == 405
    assert call_over_http(running.url, "ping")["content"][0]["text"] == "pong"


def test_a_custom_route_is_served_by_toolkit_dev(tmp_path: Path) -> None:
    app = tmp_path / "routed.py"
    app.write_text(ROUTED_APP)
    port = free_port()
    log = tmp_path / "dev.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [str(TOOLKIT), "dev", app.name, "--port", str(port), "--no-reload"],
            cwd=tmp_path,
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=sink,
        )
    try:
        wait_for_port(port, timeout=20, process=process)
        base = f"http://127.0.0.1:{port}"
        assert httpx.get(base + "/health").json() == {"status": "ok", "asked": "/health"}
        assert httpx.get(base + "/docs").status_code == 200
    finally:
        stop(process)


async def test_a_custom_route_is_part_of_http_app() -> None:
    server = Server("routed")

    @server.custom_route("/health")
    def health(request: Any) -> Any:
        from starlette.responses import PlainTextResponse

        return PlainTextResponse("ok")

    app = server.http_app()
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as client:
        assert (await client.get("/health")).text == "ok"
    assert [route.path for route in server.custom_routes] == ["/health"]


def test_custom_route_refusals_say_what_to_write() -> None:
    server = Server("routes")
    with pytest.raises(RegistrationError, match=r"methods= takes a list, e.g. methods=\['GET'\]"):
        server.custom_route("/health", methods="GET")
    with pytest.raises(RegistrationError, match="an absolute URL path, like '/health'"):
        server.custom_route("health")

    @server.custom_route("/mcp", methods=["GET"])
    async def clash(request: Any) -> Any:
        return None

    with pytest.raises(RegistrationError, match="custom_route\\('/mcp'\\) is where this app serves MCP"):
        server.http_app()
    with pytest.raises(RegistrationError, match=r"clash\(\) already serves \['GET'\] there"):
        server.custom_route("/mcp", methods=["GET", "POST"])(clash)


# --- 5. FastMCP calls toolkit lacks, and the real exception for the developer ---------------------

PORTED_APP = """
import contextlib
import sqlite3

from toolkit import Context, Image, Server


@contextlib.asynccontextmanager
async def open_db(server):
    db = sqlite3.connect(":memory:")  # on the event loop's thread, check_same_thread left on
    try:
        yield db
    finally:
        db.close()


server = Server("ported", lifespan=open_db)


@server.tool
async def settings(ctx: Context) -> str:
    return str(ctx.request_context.lifespan_context)


@server.tool
def logo() -> Image:
    return Image(data=b"...", format="png")


@server.tool
def count(ctx: Context) -> int:
    return ctx.lifespan.execute("select 1").fetchone()[0]
"""

HINTS = {
    "settings": "AttributeError: 'Context' object has no attribute 'request_context' (FastMCP's); in toolkit, "
    "ctx.lifespan is what the lifespan yielded",
    "logo": "TypeError: Image(format='png'): toolkit takes the MIME type, mime_type='image/png'",
    "count": "ProgrammingError: SQLite objects created in a thread can only be used in that same thread",
}


@pytest.mark.parametrize("tool", list(HINTS))
def test_toolkit_call_shows_the_real_exception_and_what_to_write_instead(tmp_path: Path, tool: str) -> None:
    app = tmp_path / "ported.py"
    app.write_text(PORTED_APP)
    called = subprocess.run(
        [str(TOOLKIT), "call", str(app), tool], cwd=REPO, capture_output=True, text=True, check=False, input=""
    )
    assert called.returncode == 1
    said = json.loads(called.stdout)["content"][0]["text"]
    assert said.startswith(f"Error executing tool {tool!r}: {HINTS[tool]}")
    if tool == "count":
        assert "sqlite3.connect(..., check_same_thread=False)" in said and "docs/context.md" in said


def test_toolkit_dev_shows_the_real_exception(tmp_path: Path) -> None:
    app = tmp_path / "ported.py"
    app.write_text(PORTED_APP)
    port = free_port()
    with (tmp_path / "dev.log").open("wb") as sink:
        process = subprocess.Popen(
            [str(TOOLKIT), "dev", app.name, "--port", str(port), "--no-reload"],
            cwd=tmp_path,
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=sink,
        )
    try:
        wait_for_port(port, timeout=20, process=process)
        result = call_over_http(f"http://127.0.0.1:{port}/mcp", "logo")
        assert result["content"][0]["text"] == f"Error executing tool 'logo': {HINTS['logo']}"
    finally:
        stop(process)


async def test_production_clients_still_see_the_masked_message_and_the_log_has_the_hint(
    caplog: pytest.LogCaptureFixture,
) -> None:
    namespace: dict[str, Any] = {}
    exec(compile(PORTED_APP, "ported.py", "exec"), namespace)
    async with Client(namespace["server"]) as client:
        result = await client.call_tool("count")
    assert text(result) == "Error executing tool 'count'"
    logged = [record.getMessage() for record in caplog.records if record.name == "toolkit"]
    assert any("check_same_thread=False" in line and "docs/context.md" in line for line in logged)


async def test_ctx_log_takes_fastmcps_extra() -> None:
    server = Server("extra")

    @server.tool
    async def work(ctx: Context) -> str:
        await ctx.info("fetched", extra={"rows": 3})
        return "done"

    async with Client(server, protocol_version=LEGACY, log_level="info") as client:
        await client.call_tool("work")
    logged = [message["params"] for message in client.notifications if message["method"] == "notifications/message"]
    assert logged == [{"level": "info", "data": {"message": "fetched", "rows": 3}}]


# --- 9. toolkit.testing: the natural value, an HTTP server, test tokens --------------------------


async def test_toolkit_client_in_process_gives_the_natural_value_in_both_eras() -> None:
    server = Server("natural")

    @server.tool
    def count() -> int:
        return 42

    for version in ERAS:
        async with toolkit.Client(server, protocol_version=version) as client:
            assert (await client.call_tool("count")).data == 42
        async with Client(server, protocol_version=version) as raw:  # the wire, as it is
            wire = (await raw.call_tool("count"))["structuredContent"]
        assert wire == (42 if version == MODERN else {"result": 42})


def test_serve_http_serves_a_server_on_a_free_port_for_a_sync_test_too() -> None:
    server = Server("served")

    @server.custom_route("/health")
    async def health(request: Any) -> Any:
        from starlette.responses import PlainTextResponse

        return PlainTextResponse("ok")

    @server.tool
    def ping() -> str:
        return "pong"

    with serve_http(server) as url:
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")
        assert call_over_http(url, "ping")["content"][0]["text"] == "pong"
        assert httpx.get(url.removesuffix("/mcp") + "/health").text == "ok"
    with pytest.raises(httpx.ConnectError):
        httpx.get(url)


@pytest.mark.parametrize("algorithm", ["RS256", "ES256"])
async def test_token_issuer_tokens_pass_its_verifier_and_bad_ones_do_not(algorithm: Any) -> None:
    issuer = TokenIssuer(audience="https://mcp.test/mcp", algorithm=algorithm)
    verifier = issuer.verifier()
    token = await verifier.verify(issuer.token(subject="alice", scopes=["a", "b"]))
    assert token.subject == "alice" and token.scopes == {"a", "b"} and token.client_id == "test-client"
    with pytest.raises(InvalidToken, match="ExpiredSignatureError"):
        await verifier.verify(issuer.token(expires_in=-3600))
    with pytest.raises(InvalidToken, match="InvalidAudienceError"):
        await verifier.verify(issuer.token(aud="https://elsewhere.test"))
    with pytest.raises(InvalidToken, match="InvalidSignatureError"):
        await verifier.verify(TokenIssuer(algorithm=algorithm).token())  # another key
    (key,) = issuer.jwks["keys"]
    assert key["kid"] == "test-key" and key["alg"] == algorithm and "d" not in key


@pytest.mark.parametrize("version", ERAS)
async def test_elicit_takes_fastmcps_response_type_keyword(version: str) -> None:
    """fastmcp 2.x documents ``ctx.elicit(message, response_type=int)``: the same as the second argument."""
    server = Server("asks")
    seen: list[Any] = []

    @server.tool
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("How many?", response_type=int)
        seen.append(answer.data)
        return answer.action

    def answer(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"value": 3}}

    async with Client(server, protocol_version=version, elicitation=answer) as client:
        assert text(await client.call_tool("ask")) == "accept"
    assert seen == [3]


async def test_elicit_refuses_a_schema_given_twice() -> None:
    server = Server("asks")

    @server.tool
    async def ask(ctx: Context) -> str:
        await ctx.elicit("How many?", int, response_type=int)
        return "asked"

    server.mask_errors = False
    async with Client(server, elicitation=lambda params: {"action": "decline"}) as client:
        result = await client.call_tool("ask")
    assert result["isError"] is True
    assert "give the schema once" in text(result)
