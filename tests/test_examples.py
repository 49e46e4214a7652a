"""Every program in examples/, started the way its docstring tells a user to, answering real calls.

- weather.py, notes.py, elicitation.py: ``toolkit run`` over stdio (and ``scripts/serve`` for
  weather.py, the README's main command), in both eras: an ``initialize``-d 2025-11-25 session
  and stateless 2026-07-28 requests, with the questions (elicitation) answered the way each era
  asks them.
- elicitation.py and conformance_server.py: ``toolkit run --transport http`` too.
- asgi_mount.py: ``uvicorn asgi_mount:app --app-dir examples``, its own routes and the mounted
  MCP endpoint.
- files.py: ``toolkit run`` over stdio in both eras, in tests/test_templates.py (traversal attempts).
- remote_client.py: ``python examples/remote_client.py [TARGET]``, against weather.py started by
  its default command (stdio) and served by ``toolkit run --transport http`` (a URL).
- long_running.py: ``toolkit run`` over stdio, by clients that cannot take a task (a plain
  answer) here; as tasks, over stdio and HTTP in both forms, in tests/test_tasks_wire.py.
- ported_fastmcp.py, ported_mcp_fastmcp.py (the FastMCP ports): ``toolkit run`` over stdio and HTTP,
  driven by mcp 2.3.0, mcp 1.30.0 and ``toolkit.Client`` in both eras, in tests/test_ported_examples.py.
- mount.py (a gateway of two servers): ``toolkit run`` over stdio in both eras, and over HTTP.
- dependencies.py: ``toolkit run`` over stdio in both eras, in tests/test_depends.py.

Every message a server sends is validated against the official schema of the version in force.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.http_support import Legacy, Modern, cli_server, connect
from tests.support.processes import REPO, TOOLKIT, free_port, stop, wait_for_port
from tests.support.stdio import StdioClient
from tests.wire import validator

import toolkit

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
EXAMPLES = REPO / "examples"
TESTED = {
    "weather.py",
    "notes.py",
    "elicitation.py",
    "apps_forecast.py",
    "asgi_mount.py",
    "conformance_server.py",
    "long_running.py",
    "files.py",  # over stdio, with hostile URIs: tests/test_templates.py
    "remote_client.py",
    "ported_fastmcp.py",  # with real mcp clients: tests/test_ported_examples.py
    "ported_mcp_fastmcp.py",  # the same
    "mount.py",
    "upgrade_old_server.py",  # in front of legacy_weather.py (mcp 1.30, .interop/py-mcp130)
    "legacy_weather.py",
    "openapi_app.py",  # toolkit run over stdio, both eras: tests/test_openapi.py
    "dependencies.py",  # toolkit run over stdio, both eras: tests/test_depends.py
    "state_counter.py",  # over stdio and HTTP, both eras, and three replicas: tests/test_state_wire.py
    "url_elicitation.py",  # toolkit run over stdio and HTTP, both eras: tests/test_elicit_url.py
}


def test_every_example_is_tested_here() -> None:
    assert {path.name for path in EXAMPLES.glob("*.py")} == TESTED


@pytest.fixture
def stdio() -> Iterator[Any]:
    started: list[StdioClient] = []

    def start(*argv: str | Path) -> StdioClient:
        client = StdioClient([str(arg) for arg in argv])
        started.append(client)
        return client

    yield start
    for client in started:
        assert client.invalid_lines == [], "only JSON-RPC messages may reach stdout"
        assert client.close() == 0, client.stderr


def interop_plan() -> list[dict[str, Any]]:
    spec = importlib.util.spec_from_file_location("weather_plan", EXAMPLES / "weather.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["weather_plan"] = module
    spec.loader.exec_module(module)
    plan: list[dict[str, Any]] = module.INTEROP_PLAN
    return plan


def natural(result: dict[str, Any], schema: dict[str, Any] | None, version: str) -> Any:
    """The value a user of this client reads: unwrapped from ``result`` for a legacy wrapper."""
    if schema is None:
        return result["content"][0]["text"]
    structured = result["structuredContent"]
    if version == MODERN or schema.get("required") != ["result"] or list(schema["properties"]) != ["result"]:
        return structured
    return structured["result"]


def approx(value: Any) -> Any:
    return json.loads(json.dumps(value), parse_int=float)


# --- weather.py -----------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [MODERN, LEGACY])
def test_weather_over_stdio(stdio: Any, version: str) -> None:
    client = stdio(TOOLKIT, "run", EXAMPLES / "weather.py")
    if version == MODERN:
        client.use_modern()
    else:
        client.initialize(version)
    schemas = {tool["name"]: tool.get("outputSchema") for tool in client.result("tools/list")["tools"]}
    for step in interop_plan():
        result = client.call_tool(step["tool"], step["arguments"])
        assert result.get("isError", False) is step["error"], (step, result)
        if step["error"]:
            continue
        schema = schemas[step["tool"]]
        assert approx(natural(result, schema, version)) == approx(step["expected"]), step
        text = result["content"][0]["text"]
        assert (text if schema is None else approx(json.loads(text))) == approx(step["expected"]), step
    client.assert_all_valid(version)


def test_scripts_serve_serves_weather_over_stdio(stdio: Any) -> None:
    """The README's main command."""
    client = stdio(REPO / "scripts" / "serve")
    client.use_modern()
    result = client.call_tool("get_temperatures", {"city": "Paris"}, timeout=60)
    assert result["structuredContent"] == [61, 63, 66, 70, 72, 71]
    client.initialize(LEGACY)
    assert client.call_tool("get_count")["structuredContent"] == {"result": 42}


# --- answering questions over stdio ------------------------------------------------------------------


def call_answering_legacy(client: StdioClient, name: str, arguments: dict[str, Any], answers: list[Any]) -> Any:
    """A legacy ``tools/call`` during which the server asks questions: answer each, in order."""
    mark = client.snapshot()
    answered = {m["id"] for m in client.messages[:mark] if m.get("method") == "elicitation/create"}
    request_id = client.start_request("tools/call", {"name": name, "arguments": arguments})
    for answer in answers:
        question = client.wait_for(
            lambda m: m.get("method") == "elicitation/create" and "id" in m and m["id"] not in answered, timeout=15
        )
        answered.add(question["id"])
        client.send({"jsonrpc": "2.0", "id": question["id"], "result": answer})
    response = client.response(request_id)
    requests = [m for m in client.since(mark) if m.get("method") == "elicitation/create"]
    assert len(requests) == len(answers)
    return response["result"], [question["params"] for question in requests]


def call_answering_modern(client: StdioClient, name: str, arguments: dict[str, Any], answers: list[Any]) -> Any:
    """A 2026-07-28 ``tools/call`` through its ``input_required`` rounds, answering each question in order."""
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    asked = []
    for answer in answers:
        first = client.result("tools/call", params)
        assert first["resultType"] == "input_required", first
        ((key, question),) = first["inputRequests"].items()
        assert question["method"] == "elicitation/create"
        asked.append(question["params"])
        params = {**params, "inputResponses": {key: answer}, "requestState": first["requestState"]}
    done = client.result("tools/call", params)
    assert done["resultType"] == "complete"
    return done, asked


def call_answering(client: StdioClient, version: str, name: str, arguments: dict[str, Any], answers: list[Any]) -> Any:
    if version == MODERN:
        return call_answering_modern(client, name, arguments, answers)
    return call_answering_legacy(client, name, arguments, answers)


def start_stdio(stdio: Any, example: str, version: str) -> StdioClient:
    client: StdioClient = stdio(TOOLKIT, "run", EXAMPLES / example)
    if version == MODERN:
        client.use_modern(capabilities={"elicitation": {}}, log_level="info")
    else:
        client.initialize(version, capabilities={"elicitation": {}})
    return client


# --- long_running.py (as tasks: tests/test_tasks_wire.py) ------------------------------------------


@pytest.mark.parametrize("version", [MODERN, "2025-06-18"])
def test_long_running_answers_clients_without_tasks_as_a_plain_call(stdio: Any, version: str) -> None:
    client = start_stdio(stdio, "long_running.py", version)
    arguments = {"topic": "tides", "sections": 2, "seconds_per_section": 0.01}
    result = client.call_tool("build_report", arguments)
    assert "taskId" not in result and "task" not in result
    assert result["structuredContent"] == {"topic": "tides", "sections": ["tides: section 1", "tides: section 2"]}
    if version == MODERN:  # it runs only as a task, and this client cannot take one
        refused = client.request("tools/call", {"name": "purge_archive", "arguments": {"archive": "a"}})
        assert refused["error"]["code"] == -32021
    else:  # 2025-06-18 has no tasks: the tool runs as an ordinary call, asking as any call does
        confirm = {"action": "accept", "content": {"confirm": True}}
        purged, asked = call_answering(client, version, "purge_archive", {"archive": "a"}, [confirm])
        assert purged["content"][0]["text"] == "a purged"
        assert [params["message"] for params in asked] == ["Really purge 'a'? This cannot be undone."]
    client.assert_all_valid(version)


# --- elicitation.py ---------------------------------------------------------------------------------

PARTY = {"action": "accept", "content": {"name": "Ada", "guests": 3, "seating": "terrace"}}
YES = {"action": "accept", "content": {"confirm": True}}
NO = {"action": "accept", "content": {"confirm": False}}
BOOKING = {"restaurant": "Chez Nous", "day": "2026-08-14"}


@pytest.mark.parametrize("version", [MODERN, LEGACY])
def test_elicitation_books_after_both_answers(stdio: Any, version: str) -> None:
    client = start_stdio(stdio, "elicitation.py", version)
    result, asked = call_answering(client, version, "book_table", BOOKING, [PARTY, YES])
    assert [params["message"] for params in asked] == [
        "Booking at Chez Nous on Friday 14 August: who is coming?",
        "Book a table for 3 at Chez Nous, Friday 14 August, terrace, for Ada?",
    ]
    assert asked[0]["requestedSchema"]["properties"]["seating"]["enum"] == ["indoor", "terrace"]
    booking = {
        "reference": "B0001",
        "restaurant": "Chez Nous",
        "day": "2026-08-14",
        "name": "Ada",
        "guests": 3,
        "seating": "terrace",
    }
    assert result["structuredContent"] == booking
    listed = client.call_tool("list_bookings")["structuredContent"]
    assert listed == ([booking] if version == MODERN else {"result": [booking]})
    client.assert_all_valid(version)


@pytest.mark.parametrize("version", [MODERN, LEGACY])
def test_elicitation_books_nothing_without_confirmation(stdio: Any, version: str) -> None:
    client = start_stdio(stdio, "elicitation.py", version)
    result, _ = call_answering(client, version, "book_table", BOOKING, [PARTY, NO])
    assert result["isError"] is True
    assert result["content"][0]["text"] == "The user did not confirm; nothing was booked."
    declined, _ = call_answering(client, version, "book_table", BOOKING, [{"action": "decline"}])
    assert declined["isError"] is True
    assert client.call_tool("list_bookings")["content"][0]["text"] == "[]"
    client.assert_all_valid(version)


async def test_elicitation_over_http_in_both_eras() -> None:
    with cli_server(EXAMPLES / "elicitation.py") as running:
        async with connect(running.url) as http:
            modern = Modern(http, capabilities={"elicitation": {}})
            params: dict[str, Any] = {"name": "book_table", "arguments": BOOKING}
            for answer, key in ((PARTY, "party"), (YES, "confirm")):
                round_ = await modern.request("tools/call", params)
                assert round_.result["resultType"] == "input_required"
                assert list(round_.result["inputRequests"]) == [key]
                params = {**params, "inputResponses": {key: answer}, "requestState": round_.result["requestState"]}
            booked = await modern.request("tools/call", params)
            assert booked.result["structuredContent"]["reference"] == "B0001"

            legacy = await Legacy(http, capabilities={"elicitation": {}}).open()
            async with legacy.stream("tools/call", {"name": "book_table", "arguments": BOOKING}) as stream:
                assert stream.is_sse, "the questions travel on the call's SSE stream"
                for answer in (PARTY, YES):
                    question = await stream.next_message()
                    assert question is not None and question["method"] == "elicitation/create"
                    assert (await legacy.respond(question["id"], answer)).status == 202
                rest = await stream.read()
            assert [m["params"]["data"] for m in rest if m.get("method") == "notifications/message"] == [
                "booked B0002: 3 at Chez Nous, Friday 14 August, terrace, for Ada"
            ]
            assert rest[-1]["result"]["structuredContent"]["reference"] == "B0002"


# --- notes.py ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [MODERN, LEGACY])
def test_notes_over_stdio(stdio: Any, version: str) -> None:
    client = start_stdio(stdio, "notes.py", version)
    notes = json.loads(client.result("resources/read", {"uri": "notes://all"})["contents"][0]["text"])
    assert [note["title"] for note in notes] == ["Groceries", "Launch plan"]
    page = client.result("resources/read", {"uri": "notes://2"})["contents"][0]
    assert page["text"] == "# Launch plan\n\nShip toolkit 0.1 on Monday.\n"
    added = client.call_tool("add_note", {"title": "Call Ada", "body": "About the booking.", "tags": ["todo"]})
    assert added["structuredContent"]["id"] == 3
    found = client.call_tool("search_notes", {"query": "ada"})["structuredContent"]
    assert [note["id"] for note in (found if version == MODERN else found["result"])] == [3]
    mark = client.snapshot()
    indexed = client.result("tools/call", {"name": "reindex", "arguments": {}, "_meta": {"progressToken": "reindex"}})
    assert indexed["content"][0]["text"] == "3"
    progress = [m["params"]["progress"] for m in client.since(mark) if m.get("method") == "notifications/progress"]
    assert progress == [1, 2, 3]
    deleted, asked = call_answering(client, version, "delete_note", {"note_id": 1}, [YES])
    assert asked[0]["message"] == "Delete the note 'Groceries'?"
    assert deleted["content"][0]["text"] == "Deleted 'Groceries'."
    prompt = client.result("prompts/get", {"name": "summarize", "arguments": {"note_id": "2"}})
    assert prompt["messages"][0]["content"]["text"] == "Summarize the note at notes://2 as bullets."
    completion = client.result(
        "completion/complete",
        {"ref": {"type": "ref/prompt", "name": "summarize"}, "argument": {"name": "note_id", "value": ""}},
    )
    assert completion["completion"]["values"] == ["2", "3"]
    client.assert_all_valid(version)


# --- mount.py -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [MODERN, LEGACY])
def test_mount_serves_two_servers_under_their_namespaces_over_stdio(stdio: Any, version: str) -> None:
    client = start_stdio(stdio, "mount.py", version)
    tools = [tool["name"] for tool in client.result("tools/list")["tools"]]
    assert tools == ["opening_hours", "billing_unpaid_invoices", "billing_mark_paid", "support_open_ticket"]
    unpaid = client.call_tool("billing_unpaid_invoices")["structuredContent"]
    assert [invoice["number"] for invoice in (unpaid if version == MODERN else unpaid["result"])] == [7, 17]
    paid = client.call_tool("billing_mark_paid", {"number": 7})["structuredContent"]
    assert paid == {"number": 7, "customer": "Ada", "amount": 120.0, "paid": True}, "billing's ledger is open"
    missing = client.call_tool("billing_mark_paid", {"number": 99})
    assert missing["isError"] is True
    assert missing["content"][0]["text"] == "There is no invoice 99; unpaid_invoices lists the open ones."
    assert client.call_tool("support_open_ticket", {"customer": "Ada", "problem": "late"})["structuredContent"] == (
        1 if version == MODERN else {"result": 1}
    )
    templates = client.result("resources/templates/list")["resourceTemplates"]
    assert [template["uriTemplate"] for template in templates] == ["invoices://billing/{number}"]
    (contents,) = client.result("resources/read", {"uri": "invoices://billing/17"})["contents"]
    assert contents["uri"] == "invoices://billing/17"
    assert json.loads(contents["text"])["customer"] == "Grace"
    (tickets,) = client.result("resources/read", {"uri": "tickets://support/open"})["contents"]
    assert json.loads(tickets["text"]) == ["Ada: late"]
    completion = client.result(
        "completion/complete",
        {
            "ref": {"type": "ref/resource", "uri": "invoices://billing/{number}"},
            "argument": {"name": "number", "value": "1"},
        },
    )
    assert completion["completion"]["values"] == ["17"]
    prompt = client.result("prompts/get", {"name": "billing_payment_reminder", "arguments": {"customer": "Ada"}})
    assert prompt["messages"][0]["content"]["text"].startswith("Write a short, friendly reminder to Ada")
    client.assert_all_valid(version)


async def test_mount_over_http_runs_billings_own_middleware(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACME_BOOKS_CLOSED", "1")
    with cli_server(EXAMPLES / "mount.py") as running:
        async with connect(running.url) as http:
            modern = Modern(http)
            hours = await modern.call_tool("opening_hours")
            assert hours.result["content"][0]["text"] == "Monday to Friday, 9:00 to 17:00 CET"
            refused = await modern.call_tool("billing_mark_paid", {"number": 7})
            assert refused.result["isError"] is True
            assert (
                refused.result["content"][0]["text"]
                == "The books are closed for the month; record the payment tomorrow."
            )
            legacy = await Legacy(http).open()
            unpaid = await legacy.call_tool("billing_unpaid_invoices")
            assert [invoice["number"] for invoice in unpaid.result["structuredContent"]["result"]] == [7, 17]
            assert (await legacy.delete()).status in (200, 204)


# --- conformance_server.py ----------------------------------------------------------------------------


async def test_conformance_server_over_http() -> None:
    with cli_server(EXAMPLES / "conformance_server.py") as running:
        async with connect(running.url) as http:
            modern = Modern(http)
            text = await modern.call_tool("test_simple_text")
            assert text.result["content"] == [{"type": "text", "text": "This is a simple text response for testing."}]
            image = await modern.call_tool("test_image_content")
            assert image.result["content"][0]["type"] == "image"
            array = await modern.call_tool("sep_2106_array_output_tool")
            assert isinstance(array.result["structuredContent"], list)
            read = await modern.request("resources/read", {"uri": "test://static-text"})
            assert read.result["contents"][0]["uri"] == "test://static-text"

            legacy = await Legacy(http).open()
            wrapped = await legacy.call_tool("sep_2106_array_output_tool")
            assert wrapped.result["structuredContent"] == {"result": array.result["structuredContent"]}
            prompt = await legacy.request("prompts/get", {"name": "test_simple_prompt"})
            assert prompt.result["messages"][0]["role"] == "user"
            assert (await legacy.delete()).status in (200, 204)


def test_conformance_server_over_stdio(stdio: Any) -> None:
    client = stdio(TOOLKIT, "run", EXAMPLES / "conformance_server.py")
    client.initialize(LEGACY)
    tools = {tool["name"] for tool in client.result("tools/list")["tools"]}
    assert {"test_simple_text", "sep_2106_array_output_tool", "json_schema_2020_12_tool"} <= tools
    assert client.call_tool("sep_2106_primitive_output_tool")["structuredContent"].keys() == {"result"}
    client.assert_all_valid(LEGACY)


# --- asgi_mount.py ------------------------------------------------------------------------------------


@pytest.fixture
def uvicorn_app() -> Iterator[str]:
    """``uvicorn asgi_mount:app --app-dir examples --port P`` (the example's docstring), always stopped."""
    port = free_port()
    process = subprocess.Popen(
        [TOOLKIT.with_name("uvicorn"), "asgi_mount:app", "--app-dir", "examples", "--port", str(port)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        wait_for_port(port, process=process)
        yield f"http://127.0.0.1:{port}"
    finally:
        code = stop(process)
        assert process.stdout is not None
        with process.stdout:
            log = process.stdout.read().decode()
    assert code in (0, -15), log  # uvicorn ends "killed by SIGTERM" once it has shut down cleanly
    assert "Application shutdown complete." in log, log


async def test_asgi_mount_routes_and_mcp_endpoint(uvicorn_app: str) -> None:
    async with httpx.AsyncClient(base_url=uvicorn_app, timeout=10) as plain:
        assert (await plain.get("/health")).json() == {"status": "ok", "mcp": "/ai/mcp"}
        products = (await plain.get("/api/products", params={"q": "mug"})).json()
        assert [product["sku"] for product in products] == ["MUG-1", "MUG-2"], "the catalog was opened at startup"

    async with connect(uvicorn_app + "/ai/mcp") as http:
        modern = Modern(http)
        found = await modern.call_tool("search_products", {"query": "tea"})
        assert found.status == 200
        assert [product["sku"] for product in found.result["structuredContent"]] == ["TEA-1"]
        stock = await modern.call_tool("stock_level", {"sku": "TEA-1"})
        assert stock.result["structuredContent"] == 120

        legacy = await Legacy(http).open()
        wrapped = await legacy.call_tool("stock_level", {"sku": "MUG-1"})
        assert wrapped.result["structuredContent"] == {"result": 40}
        missing = await legacy.call_tool("stock_level", {"sku": "NOPE"})
        assert missing.result["isError"] is True
        assert (await legacy.delete()).status in (200, 204)


def test_asgi_mount_tools_without_the_app() -> None:
    """``toolkit tools examples/asgi_mount.py`` works too: the server owns its lifespan."""
    listed = subprocess.run(
        [TOOLKIT, "tools", EXAMPLES / "asgi_mount.py"], capture_output=True, text=True, timeout=60, check=True
    )
    tools = json.loads(listed.stdout)
    assert [tool["name"] for tool in tools] == ["search_products", "stock_level"]
    for tool in tools:
        assert validator(MODERN, "Tool").is_valid(tool), tool


@pytest.mark.timeout(120)
def test_remote_client_lists_and_calls_weather_over_stdio_and_http() -> None:
    script = EXAMPLES / "remote_client.py"
    over_stdio = subprocess.run([sys.executable, str(script)], check=False, capture_output=True, text=True, timeout=90)
    assert over_stdio.returncode == 0, over_stdio.stderr
    assert "over protocol version 2026-07-28" in over_stdio.stdout
    assert "- get_weather_forecast: Hourly forecast for a city." in over_stdio.stdout
    assert "get_temperatures(city='Paris') -> [61, 63, 66, 70, 72, 71]" in over_stdio.stdout
    with cli_server(EXAMPLES / "weather.py") as server:
        over_http = subprocess.run(
            [sys.executable, str(script), server.url], check=False, capture_output=True, text=True, timeout=90
        )
    assert over_http.returncode == 0, over_http.stderr
    assert "get_temperatures(city='Paris') -> [61, 63, 66, 70, 72, 71]" in over_http.stdout


async def test_upgrade_old_server_serves_an_mcp_1x_server_to_every_era_with_natural_output(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    python = REPO / ".interop" / "py-mcp130" / "bin" / "python"
    if not python.exists():
        missing = "py-mcp130 is not installed: scripts/interop --install-only installs it into .interop/"
        if os.environ.get("TOOLKIT_TESTS_STRICT"):  # scripts/test installs every client first
            pytest.fail(missing)
        pytest.skip(missing)
    monkeypatch.setenv("OLD_SERVER", f"{python} {EXAMPLES / 'legacy_weather.py'}")

    with cli_server(EXAMPLES / "upgrade_old_server.py") as gateway:
        async with toolkit.Client(gateway.url, protocol_version=MODERN) as modern:
            listed = {tool["name"]: tool for tool in await modern.list_tools()}
            assert listed["get_temperatures"]["outputSchema"]["type"] == "array"
            temperatures = await modern.call_tool("get_temperatures", {"city": "Paris"})
            assert temperatures.structured_content == [61, 63, 66, 68, 70, 71]
            conditions = await modern.call_tool("get_conditions", {"city": "Paris"})
            assert conditions.structured_content == {"sky": "cloudy", "wind": "SW 12 mph"}
        async with toolkit.Client(gateway.url, protocol_version="2025-06-18") as legacy:
            temperatures = await legacy.call_tool("get_temperatures", {"city": "Paris"})
            assert temperatures.structured_content == {"result": [61, 63, 66, 68, 70, 71]}
            assert temperatures.data == [61, 63, 66, 68, 70, 71]
