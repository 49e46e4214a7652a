"""The two servers ported from FastMCP (issue 41), run as their docstrings say, driven by real clients.

- examples/ported_fastmcp.py (from fastmcp 2.x) and examples/ported_mcp_fastmcp.py (from
  ``mcp.server.fastmcp``, the SDK's v1) are started by ``toolkit run`` over stdio (the client
  starts the command) and by ``toolkit run --transport http`` on a free port.
- Each is driven by the pinned Python SDKs, as their users write clients: mcp 2.3.0 (``mcp.Client``,
  ``mode="auto"``: 2026-07-28; ``mode="legacy"``: 2025-11-25) and mcp 1.30.0 (``ClientSession``:
  2025-11-25). A small client program runs in that library's venv (``.interop/py-mcp230``,
  ``.interop/py-mcp130``; ``scripts/interop --install-only`` installs them) and prints JSON of what
  the library handed it: the tools' schemas (defaults, bounds), results (the natural value in
  2026-07-28, ``{"result": ...}`` in 2025-11-25), the ``{?query}`` template read, the question
  answered by the library's elicitation callback, progress, log messages. Under
  ``TOOLKIT_TESTS_STRICT=1`` a missing venv fails the tests instead of skipping them.
- ``toolkit.Client`` (the public API) drives both, over both transports, in both eras, and runs
  each file as a program (``python examples/x.py``: ``server.run()``).
- ``/health`` (``@server.custom_route``) answers over HTTP.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.support.processes import REPO, TOOLKIT, RunningServer, http_server

import toolkit
from toolkit.client import ToolCallFailed

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
EXAMPLES = REPO / "examples"
LENDING = EXAMPLES / "ported_fastmcp.py"
CHANGELOG = EXAMPLES / "ported_mcp_fastmcp.py"
INTEROP = REPO / ".interop"
DEADLINE = 60.0  # seconds: a server to listen, a request to be answered (a busy 2-core machine)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]  # a server start and a client run on a busy machine

# --- the client programs, each run with its library's python -----------------------------------

PRELUDE = """
import json
import sys

TARGET, MODE, PLAN = json.loads(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3])
seen = {"elicitations": [], "logs": []}


def dump(model):
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


async def on_elicit(context, params):
    schema = params.requested_schema if hasattr(params, "requested_schema") else params.requestedSchema  # 2.x, 1.x
    seen["elicitations"].append({"message": params.message, "requestedSchema": schema})
    return types.ElicitResult(action="accept", content=PLAN["answer"])


async def on_log(params):
    seen["logs"].append({"level": params.level, "data": params.data})


async def drive(session, version):
    doc = {"version": version}
    doc["tools"] = [dump(tool) for tool in (await session.list_tools()).tools]
    doc["resources"] = [dump(resource) for resource in (await session.list_resources()).resources]
    templates = await session.list_resource_templates()
    doc["templates"] = [dump(template) for template in templates.resourceTemplates]
    doc["calls"] = []
    for step in PLAN["calls"]:
        progress = []

        async def on_progress(done, total, message, progress=progress):
            progress.append([done, total, message])

        before = len(seen["elicitations"])
        result = await session.call_tool(step["tool"], step["arguments"], progress_callback=on_progress)
        asked = seen["elicitations"][before:]
        doc["calls"].append({"result": dump(result), "progress": progress, "elicitations": asked})
    doc["reads"] = {}
    for uri in PLAN["reads"]:
        try:
            doc["reads"][uri] = [dump(content) for content in (await session.read_resource(uri)).contents]
        except Exception as exc:  # what the library raises for a JSON-RPC error
            doc["reads"][uri] = {"error": str(exc)}
    doc["prompts"] = [dump(await session.get_prompt(p["name"], p["arguments"])) for p in PLAN["prompts"]]
    return doc
"""

MCP_230 = (
    """
import anyio
from mcp import Client, StdioServerParameters, types
"""
    + PRELUDE
    + """

async def main():
    if "url" in TARGET:
        server = TARGET["url"]
    else:
        command, *args = TARGET["command"]
        server = StdioServerParameters(command=command, args=args, cwd=TARGET["cwd"])
    async with Client(
        server,
        mode=MODE,
        read_timeout_seconds=TARGET["timeout"],
        elicitation_callback=on_elicit,
        logging_callback=on_log,
        log_level="info",  # the opt-in of 2026-07-28
    ) as client:
        if client.protocol_version != "2026-07-28":
            await client.set_logging_level("info")
        doc = await drive(Session(client), client.protocol_version)
    doc["logs"] = seen["logs"]
    print(json.dumps(doc))


class Session:
    \"\"\"mcp.Client under ClientSession's names (resourceTemplates is resource_templates in 2.x).\"\"\"

    def __init__(self, client):
        self.client = client

    def __getattr__(self, name):
        return getattr(self.client, name)

    async def list_resource_templates(self):
        listed = await self.client.list_resource_templates()
        return type("Templates", (), {"resourceTemplates": listed.resource_templates})


anyio.run(main)
"""
)

MCP_130 = (
    """
import datetime

import anyio
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
"""
    + PRELUDE
    + """

async def main():
    if "url" in TARGET:
        transport = streamable_http_client(TARGET["url"])
    else:
        command, *args = TARGET["command"]
        transport = stdio_client(StdioServerParameters(command=command, args=args, cwd=TARGET["cwd"]))
    timeout = datetime.timedelta(seconds=TARGET["timeout"])
    async with transport as streams, ClientSession(
        streams[0],
        streams[1],
        read_timeout_seconds=timeout,
        elicitation_callback=on_elicit,
        logging_callback=on_log,
    ) as session:
        initialized = await session.initialize()
        await session.set_logging_level("info")
        doc = await drive(session, initialized.protocolVersion)
    doc["logs"] = seen["logs"]
    print(json.dumps(doc))


anyio.run(main)
"""
)

# name: (venv, program, mode, the version it must get)
CLIENTS = {
    "mcp 2.3.0": ("py-mcp230", MCP_230, "auto", MODERN),
    "mcp 2.3.0 legacy": ("py-mcp230", MCP_230, "legacy", LEGACY),
    "mcp 1.30.0": ("py-mcp130", MCP_130, "-", LEGACY),
}

# --- what each client does with each server ------------------------------------------------------

WIZARD = "9780547773742"  # nine copies: every client borrows one from the same HTTP server

PLANS: dict[Path, dict[str, Any]] = {
    LENDING: {
        "calls": [
            {"tool": "search_books", "arguments": {"query": "le guin", "limit": 2}},
            {"tool": "search_books", "arguments": {"query": "le guin", "limit": 0}},
            {"tool": "borrow", "arguments": {"isbn": WIZARD}},
        ],
        "answer": {"value": 3},
        "reads": ["books://author/le%20guin?since=1969", "books://author/herbert", "books://author/herbert?since=-1"],
        "prompts": [],
    },
    CHANGELOG: {
        "calls": [
            {"tool": "latest_version", "arguments": {"package": "httpx"}},
            {"tool": "release_history", "arguments": {"package": "httpx", "last": 2}},
            {"tool": "release_history", "arguments": {"package": "left-pad"}},
        ],
        "answer": {},
        "reads": ["changelog://packages", "changelog://httpx/0.28.0"],
        "prompts": [{"name": "upgrade_plan", "arguments": {"package": "httpx", "from_version": "0.27.0"}}],
    },
}

SEARCH_SCHEMA = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "description": "Words from the title or the author's name"},
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": 20,
            "description": "How many books at most",
            "default": 5,
        },
    },
    "required": ["query"],
    "additionalProperties": False,
}
HISTORY_SCHEMA = {
    "type": "object",
    "properties": {
        "package": {"type": "string"},
        "last": {
            "type": "integer",
            "minimum": 1,
            "maximum": 10,
            "description": "How many releases, newest first",
            "default": 3,
        },
    },
    "required": ["package"],
    "additionalProperties": False,
}
WEEKS_FORM = {"type": "object", "properties": {"value": {"type": "integer"}}, "required": ["value"]}
HTTPX_RELEASES = [
    {"version": "0.28.1", "date": "2024-12-06", "changes": ["Fix SSL context of verify=False"]},
    {"version": "0.28.0", "date": "2024-11-28", "changes": ["Drop the deprecated app= argument"]},
]


def natural(result: dict[str, Any], version: str) -> Any:
    """The tool's value as a client of ``version`` has it: unwrapped by hand in 2025-11-25."""
    structured = result["structuredContent"]
    if version == LEGACY:
        assert list(structured) == ["result"], structured
        return structured["result"]
    return structured


def output_array(schema: dict[str, Any], version: str) -> dict[str, Any]:
    """The array schema of a ``-> list[...]`` tool: the schema itself, or its wrapper's ``result``."""
    if version == LEGACY:
        assert schema["type"] == "object" and schema["required"] == ["result"], schema
        return dict(schema["properties"]["result"])
    return schema


def text(result: dict[str, Any]) -> str:
    return "".join(block["text"] for block in result["content"] if block["type"] == "text")


def check_lending(doc: dict[str, Any], version: str) -> None:
    tools = {tool["name"]: tool for tool in doc["tools"]}
    assert list(tools) == ["search_books", "borrow"]
    assert tools["search_books"]["inputSchema"] == SEARCH_SCHEMA
    assert output_array(tools["search_books"]["outputSchema"], version)["items"] == {"$ref": "#/$defs/Book"}
    assert "outputSchema" not in tools["borrow"]  # -> str: text only

    searched, refused, borrowed = doc["calls"]
    titles = [book["title"] for book in natural(searched["result"], version)]
    assert titles == ["The Left Hand of Darkness", "A Wizard of Earthsea"]
    assert refused["result"]["isError"] is True
    assert "arguments/limit: 0 is less than the minimum of 1" in text(refused["result"])
    assert borrowed["elicitations"] == [
        {"message": "For how many weeks do you want A Wizard of Earthsea?", "requestedSchema": WEEKS_FORM}
    ]
    assert text(borrowed["result"]) == "A Wizard of Earthsea is yours for 3 weeks."
    assert "structuredContent" not in borrowed["result"] and not borrowed["result"].get("isError")

    assert [template["uriTemplate"] for template in doc["templates"]] == ["books://author/{surname}{?since}"]
    reads = doc["reads"]
    (since,) = reads["books://author/le%20guin?since=1969"]
    assert since["mimeType"] == "application/json"
    assert [book["title"] for book in json.loads(since["text"])] == ["The Left Hand of Darkness", "The Dispossessed"]
    assert [book["title"] for book in json.loads(reads["books://author/herbert"][0]["text"])] == ["Dune"]
    assert "greater than or equal to 0" in reads["books://author/herbert?since=-1"]["error"]

    logged = {"message": "3 books match 'le guin'", "query": "le guin", "matches": 3}
    assert {"level": "info", "data": logged} in doc["logs"]


def check_changelog(doc: dict[str, Any], version: str) -> None:
    tools = {tool["name"]: tool for tool in doc["tools"]}
    assert list(tools) == ["latest_version", "release_history"]
    assert tools["release_history"]["inputSchema"] == HISTORY_SCHEMA
    release = output_array(tools["release_history"]["outputSchema"], version)
    assert release["items"] == {"$ref": "#/$defs/Release"}

    latest, history, unknown = doc["calls"]
    assert text(latest["result"]) == "0.28.1" and "structuredContent" not in latest["result"]
    assert natural(history["result"], version) == HTTPX_RELEASES
    assert history["progress"] == [[1, 2, "read httpx 0.28.1"], [2, 2, "read httpx 0.28.0"]]
    assert unknown["result"]["isError"] is True
    assert text(unknown["result"]) == "Unknown package 'left-pad'; known: httpx, pydantic."

    assert [resource["uri"] for resource in doc["resources"]] == ["changelog://packages"]
    assert [template["uriTemplate"] for template in doc["templates"]] == ["changelog://{package}/{version}"]
    assert json.loads(doc["reads"]["changelog://packages"][0]["text"]) == ["httpx", "pydantic"]
    (notes,) = doc["reads"]["changelog://httpx/0.28.0"]
    assert notes["mimeType"] == "text/markdown"
    assert notes["text"] == "# httpx 0.28.0 (28 November 2024)\n\n- Drop the deprecated app= argument\n"

    (prompt,) = doc["prompts"]
    assert [message["role"] for message in prompt["messages"]] == ["user", "assistant"]
    assert prompt["messages"][0]["content"]["text"].startswith("I use httpx 0.27.0.")

    assert {"level": "info", "data": "reading 2 releases of httpx"} in doc["logs"]


CHECKS: dict[Path, Callable[[dict[str, Any], str], None]] = {LENDING: check_lending, CHANGELOG: check_changelog}

# --- running them --------------------------------------------------------------------------------


def pinned_python(venv: str) -> Path:
    python = INTEROP / venv / "bin" / "python"
    if not python.exists():
        missing = f"{venv} is not installed: scripts/interop --install-only installs it into .interop/"
        if os.environ.get("TOOLKIT_TESTS_STRICT"):  # scripts/test installs every client first
            pytest.fail(missing)
        pytest.skip(missing)
    return python


@pytest.fixture(scope="module")
def served() -> Iterator[Callable[[Path], RunningServer]]:
    """``toolkit run EXAMPLE --transport http`` on a free port, one per example for the module."""
    running: dict[Path, RunningServer] = {}
    with contextlib.ExitStack() as stack:

        def serve(example: Path) -> RunningServer:
            if example not in running:
                running[example] = stack.enter_context(http_server(example, timeout=DEADLINE))
            return running[example]

        yield serve


def target(example: Path, transport: str, served: Callable[[Path], RunningServer]) -> dict[str, Any]:
    if transport == "http":
        return {"url": served(example).url, "timeout": DEADLINE}
    return {"command": [str(TOOLKIT), "run", str(example)], "cwd": str(REPO), "timeout": DEADLINE}


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("client", list(CLIENTS))
@pytest.mark.parametrize("example", [LENDING, CHANGELOG], ids=lambda path: path.stem)
def test_a_real_mcp_client_sees_the_port_as_its_users_expect(
    example: Path, client: str, transport: str, served: Callable[[Path], RunningServer]
) -> None:
    venv, program, mode, version = CLIENTS[client]
    python = pinned_python(venv)
    argv = [
        str(python),
        "-c",
        program,
        json.dumps(target(example, transport, served)),
        mode,
        json.dumps(PLANS[example]),
    ]
    run = subprocess.run(argv, check=False, cwd=REPO, capture_output=True, text=True, timeout=110)
    assert run.returncode == 0, run.stderr[-3000:]
    doc = json.loads(run.stdout.splitlines()[-1])
    assert doc["version"] == version
    CHECKS[example](doc, version)


def test_health_answers_over_http(served: Callable[[Path], RunningServer]) -> None:
    running = served(LENDING)
    assert httpx.get(running.base_url + "/health", timeout=DEADLINE).json() == {"status": "ok"}
    assert httpx.post(running.base_url + "/health", timeout=DEADLINE).status_code == 405


# --- toolkit.Client, the public API --------------------------------------------------------------


def toolkit_target(example: Path, transport: str, served: Callable[[Path], RunningServer]) -> Any:
    return served(example).url if transport == "http" else [str(TOOLKIT), "run", str(example)]


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("version", [MODERN, LEGACY])
async def test_toolkit_client_drives_the_fastmcp_port(
    version: str, transport: str, served: Callable[[Path], RunningServer]
) -> None:
    asked: list[dict[str, Any]] = []
    logs: list[dict[str, Any]] = []

    def answer(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params)
        return {"action": "accept", "content": {"value": 2}}

    async with toolkit.Client(
        toolkit_target(LENDING, transport, served),
        protocol_version=version,
        timeout=DEADLINE,
        elicitation=answer,
        log_level="info",
        on_log=logs.append,
        cwd=REPO,
    ) as client:
        assert client.negotiated_version == version
        tools = {tool["name"]: tool for tool in await client.list_tools()}
        assert tools["search_books"]["inputSchema"] == SEARCH_SCHEMA
        found = await client.call_tool("search_books", {"query": "earthsea"})
        assert [book["title"] for book in found.data] == ["A Wizard of Earthsea"]  # natural in both eras
        with pytest.raises(ToolCallFailed, match="less than the minimum of 1"):
            await client.call_tool("search_books", {"query": "dune", "limit": 0})
        borrowed = await client.call_tool("borrow", {"isbn": WIZARD})
        assert borrowed.text == "A Wizard of Earthsea is yours for 2 weeks." and borrowed.data is None
        assert [params["requestedSchema"] for params in asked] == [WEEKS_FORM]
        read = await client.read_resource("books://author/guin?since=1970")
        assert [book["title"] for book in json.loads(read[0]["text"])] == ["The Dispossessed"]
    assert {"level": "info", "data": {"message": "1 books match 'earthsea'", "query": "earthsea", "matches": 1}} in logs


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("version", [MODERN, LEGACY])
async def test_toolkit_client_drives_the_sdk_v1_port(
    version: str, transport: str, served: Callable[[Path], RunningServer]
) -> None:
    progress: list[tuple[float, float | None, str | None]] = []
    async with toolkit.Client(
        toolkit_target(CHANGELOG, transport, served), protocol_version=version, timeout=DEADLINE, cwd=REPO
    ) as client:
        assert client.negotiated_version == version
        tools = {tool["name"]: tool for tool in await client.list_tools()}
        assert tools["release_history"]["inputSchema"] == HISTORY_SCHEMA
        history = await client.call_tool(
            "release_history",
            {"package": "httpx", "last": 2},
            progress=lambda done, total, message: progress.append((done, total, message)),
        )
        assert history.data == HTTPX_RELEASES
        assert progress == [(1, 2, "read httpx 0.28.1"), (2, 2, "read httpx 0.28.0")]
        assert (await client.call_tool("latest_version", {"package": "pydantic"})).text == "2.10.0"
        notes = await client.read_resource("changelog://pydantic/2.9.0")
        assert notes[0]["text"].startswith("# pydantic 2.9.0 (05 September 2024)")
        prompt = await client.get_prompt("upgrade_plan", {"package": "pydantic", "from_version": "2.9.0"})
        assert prompt["messages"][1]["content"]["text"].startswith("I will call release_history for pydantic")


@pytest.mark.parametrize("example", [LENDING, CHANGELOG], ids=lambda path: path.stem)
async def test_each_port_is_a_program(example: Path) -> None:
    """``python examples/x.py``: ``server.run()`` serves stdio, as FastMCP's ``mcp.run()`` did."""
    async with toolkit.Client(str(example), timeout=DEADLINE, cwd=REPO) as client:
        assert client.negotiated_version == MODERN
        names = [tool["name"] for tool in await client.list_tools()]
    assert names == (["search_books", "borrow"] if example == LENDING else ["latest_version", "release_history"])
