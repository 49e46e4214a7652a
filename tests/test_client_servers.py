"""``toolkit.Client`` against real servers of other frameworks, over stdio and Streamable HTTP, in every era they speak.

The servers (``interop/servers/``; ``scripts/servers --install-only`` installs their pinned
environments, the interop clients' for ``mcp``):

- ``everything``: the reference TypeScript server, ``@modelcontextprotocol/server-everything``
  2026.8.31 (``@modelcontextprotocol/sdk`` 1.32.2: the ``initialize`` era only; tasks of
  2025-11-25), run as its package ships it;
- ``mcp230``: an ``mcp`` 2.3.0 ``MCPServer`` (both eras), ``interop/servers/mcp230_server.py``;
- ``mcp130``: an ``mcp`` 1.30.0 ``FastMCP`` server (legacy only), ``interop/servers/mcp130_server.py``;
- ``fastmcp416``: a ``fastmcp`` 4.1.6 server (both eras), ``interop/servers/fastmcp416_server.py``;
- ``toolkit``: toolkit itself (both eras, tasks), ``interop/servers/toolkit_server.py``.

The four Python servers have the same tools (an object, a list, a scalar, a str, text only, an
error, progress, elicitation, sampling, a tool that waits until it is cancelled and writes
``cancelled`` to the file it is given), a resource, a template and a prompt. For each server x
transport x era (pinned versions, and ``"auto"``): the client lists and calls every tool shape and
``.data`` is the natural value (``42``, not ``{"result": 42}``, in every era), reads the resource
and the template, gets the prompt, answers elicitation and sampling with handlers, receives
progress, cancels a call by its timeout (and the server saw it), and runs a task where the server
has tasks.

HTTP servers listen on a free port of 127.0.0.1, one process per server for the module (each
client its own session), polled until they accept connections and always stopped. Without the
installed environments the tests skip, or fail under ``TOOLKIT_TESTS_STRICT=1``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import pytest
from pydantic import BaseModel
from tests.support.processes import REPO, free_port, stop, wait_for_port

from toolkit.client import Client, ToolCallFailed

pytestmark = [
    pytest.mark.timeout(180),
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX servers"),
]

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
OLDER = "2025-06-18"
SERVERS_DIR = REPO / "interop" / "servers"
EVERYTHING = REPO / ".interop/servers/ts-everything/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
PATIENT = 60.0
"""A request's timeout: far longer than anything here takes, so a hang fails the test instead."""
READY = 90.0
"""How long a server may take to listen (a cold start of node or of a venv under stress-ng --cpu 2)."""
INSTALL = "scripts/servers --install-only installs it"


def missing(what: str) -> NoReturn:
    if os.environ.get("TOOLKIT_TESTS_STRICT"):  # scripts/test installs every server first
        pytest.fail(what)
    pytest.skip(what)


@dataclass(frozen=True)
class Spec:
    """One server program: how to start it over stdio and over HTTP, what it speaks."""

    name: str
    runtime: Path  # the interpreter (python or node)
    program: Path
    eras: tuple[str, ...]  # what the client asks for: "auto" and pinned versions
    auto_era: str  # what "auto" must end on
    tasks: bool

    def require(self) -> None:
        for path in (self.runtime, self.program):
            if not path.exists():
                missing(f"{path} is missing: {INSTALL}")

    def stdio(self) -> list[str]:
        if self.name == "everything":
            return [str(self.runtime), str(self.program), "stdio"]
        return [str(self.runtime), str(self.program)]

    def http_argv(self, port: int) -> tuple[list[str], dict[str, str]]:
        env = {**os.environ}
        if self.name == "everything":
            return [str(self.runtime), str(self.program), "streamableHttp"], {**env, "PORT": str(port)}
        if self.name == "toolkit":
            env["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), env.get("PYTHONPATH", "")])
        return [str(self.runtime), str(self.program), "--http", str(port)], env


def _node() -> Path:
    import shutil

    return Path(shutil.which("node") or "/nonexistent/node")


SPECS = {
    "everything": Spec("everything", _node(), EVERYTHING, ("auto", LEGACY, OLDER), LEGACY, tasks=True),
    "mcp230": Spec(
        "mcp230",
        REPO / ".interop/py-mcp230/bin/python",
        SERVERS_DIR / "mcp230_server.py",
        ("auto", MODERN, LEGACY),
        MODERN,
        tasks=False,
    ),
    "mcp130": Spec(
        "mcp130",
        REPO / ".interop/py-mcp130/bin/python",
        SERVERS_DIR / "mcp130_server.py",
        ("auto", LEGACY, OLDER),
        LEGACY,
        tasks=False,
    ),
    "fastmcp416": Spec(
        "fastmcp416",
        REPO / ".interop/servers/py-fastmcp416/bin/python",
        SERVERS_DIR / "fastmcp416_server.py",
        ("auto", MODERN, LEGACY),
        MODERN,
        tasks=False,
    ),
    "toolkit": Spec(
        "toolkit", REPO / ".venv/bin/python", SERVERS_DIR / "toolkit_server.py", ("auto", MODERN, LEGACY), MODERN, True
    ),
}

CASES = [
    pytest.param((name, transport, era), id=f"{name}-{transport}-{era}")
    for name, spec in SPECS.items()
    for transport in ("stdio", "http")
    for era in spec.eras
]
PYTHON_CASES = [case for case in CASES if case.values[0][0] != "everything"]
EVERYTHING_CASES = [case for case in CASES if case.values[0][0] == "everything"]
TASK_CASES = [case for case in CASES if SPECS[case.values[0][0]].tasks and case.values[0][2] != OLDER]
"""Tasks: 2025-11-25 (experimental) and 2026-07-28; 2025-06-18 has none."""


# --- servers ----------------------------------------------------------------------------------------


@dataclass
class HttpServer:
    process: subprocess.Popen[bytes]
    url: str
    log: Path

    def output(self) -> str:
        return self.log.read_text("utf-8", "replace")[-4000:]


class HttpServers:
    """One HTTP server process per server program, started on first use, all stopped at the end."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.running: dict[str, HttpServer] = {}

    def url(self, spec: Spec) -> str:
        server = self.running.get(spec.name)
        if server is not None and server.process.poll() is None:
            return server.url
        port = free_port()
        argv, env = spec.http_argv(port)
        log = self.directory / f"{spec.name}-{port}.log"
        with log.open("wb") as out:
            process = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out, cwd=REPO, env=env, start_new_session=True
            )
        server = HttpServer(process, f"http://127.0.0.1:{port}/mcp", log)
        self.running[spec.name] = server
        try:
            wait_for_port(port, timeout=READY, process=process)
        except AssertionError as exc:
            raise AssertionError(f"{spec.name} over HTTP did not start: {exc}\n{server.output()}") from None
        return server.url

    def close(self) -> None:
        for server in self.running.values():
            stop(server.process)


@pytest.fixture(scope="module")
def http_servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServers]:
    servers = HttpServers(tmp_path_factory.mktemp("servers"))
    try:
        yield servers
    finally:
        servers.close()


@dataclass
class Case:
    spec: Spec
    transport: str
    era: str
    target: Any

    @property
    def expected_era(self) -> str:
        return self.spec.auto_era if self.era == "auto" else self.era

    def client(self, **options: Any) -> Client:
        options.setdefault("timeout", PATIENT)
        return Client(self.target, protocol_version=self.era, **options)


@pytest.fixture
def case(request: pytest.FixtureRequest, http_servers: HttpServers) -> Case:
    name, transport, era = request.param
    spec = SPECS[name]
    spec.require()
    target: Any = spec.stdio() if transport == "stdio" else http_servers.url(spec)
    return Case(spec, transport, era, target)


# --- handlers ---------------------------------------------------------------------------------------


class Handlers:
    """The client's answers to the server's questions, and what the server asked."""

    def __init__(self) -> None:
        self.elicitations: list[dict[str, Any]] = []
        self.samplings: list[dict[str, Any]] = []

    async def elicit(self, params: dict[str, Any]) -> dict[str, Any]:
        self.elicitations.append(params)
        properties = (params.get("requestedSchema") or {}).get("properties") or {}
        if "interpretation" in properties:  # everything's research task: pick the first choice offered
            return {
                "action": "accept",
                "content": {"interpretation": properties["interpretation"]["oneOf"][0]["const"]},
            }
        return {"action": "accept", "content": {"name": "Ada"}}

    async def sample(self, params: dict[str, Any]) -> dict[str, Any]:
        self.samplings.append(params)
        return {
            "role": "assistant",
            "content": {"type": "text", "text": "a short summary"},
            "model": "test-model",
            "stopReason": "endTurn",
        }


def first_text(message: dict[str, Any]) -> str:
    content = message["content"]
    if isinstance(content, list):
        content = content[0]
    return str(content["text"])


# --- the Python servers: same tools, same values ------------------------------------------------------


class Weather(BaseModel):
    city: str
    temp: float
    sky: str


PARIS = {"city": "Paris", "temp": 21.5, "sky": "sunny"}
PYTHON_TOOLS = {
    "weather",
    "primes",
    "answer",
    "greet",
    "shout",
    "fail",
    "count",
    "ask_name",
    "summarize",
    "wait_until_cancelled",
}


@pytest.mark.parametrize("case", PYTHON_CASES, indirect=True)
async def test_every_tool_shape_gives_the_natural_value(case: Case) -> None:
    async with case.client() as client:
        assert client.negotiated_version == case.expected_era
        tools = {tool["name"]: tool for tool in await client.list_tools()}
        assert set(tools) >= PYTHON_TOOLS

        weather = await client.call_tool("weather", {"city": "Paris"})
        assert weather.data == PARIS
        assert weather.is_error is False
        parsed = await client.call_tool("weather", {"city": "Paris"}, into=Weather)
        assert parsed.data == Weather(**PARIS)

        primes = await client.call_tool("primes", {"n": 4})
        assert primes.data == [2, 3, 5, 7], (
            f"{case.spec.name} {case.era}: structuredContent={primes.structured_content}"
        )

        answer = await client.call_tool("answer", {})
        assert answer.data == 42, f"{case.spec.name} {case.era}: structuredContent={answer.structured_content}"

        greet = await client.call_tool("greet", {"name": "Ada"})
        assert greet.text == "Hello, Ada!"
        if tools["greet"].get("outputSchema") is not None:  # the framework's default for a str: structured
            assert greet.data == "Hello, Ada!", f"structuredContent={greet.structured_content}"
        else:
            assert greet.data is None

        shout = await client.call_tool("shout", {"text": "hi"})
        assert tools["shout"].get("outputSchema") is None
        assert (shout.data, shout.structured_content, shout.text) == (None, None, "HI")


@pytest.mark.parametrize("case", PYTHON_CASES, indirect=True)
async def test_an_error_result_raises_or_is_returned(case: Case) -> None:
    async with case.client() as client:
        with pytest.raises(ToolCallFailed, match="failed: boom") as raised:
            await client.call_tool("fail", {"reason": "boom"})
        assert raised.value.result.is_error is True
        result = await client.call_tool("fail", {"reason": "boom"}, raise_on_error=False)
        assert result.is_error is True
        assert result.data is None
        assert "failed: boom" in result.text
        assert (await client.call_tool("shout", {"text": "on"})).text == "ON"  # the session goes on


@pytest.mark.parametrize("case", PYTHON_CASES, indirect=True)
async def test_resources_templates_and_prompts(case: Case) -> None:
    async with case.client() as client:
        resources = await client.list_resources()
        assert [(r["uri"], r.get("mimeType")) for r in resources] == [("config://app", "application/json")]
        templates = await client.list_resource_templates()
        assert [t["uriTemplate"] for t in templates] == ["greeting://{name}"]
        config = await client.read_resource("config://app")
        assert [(c["uri"], c["text"]) for c in config] == [("config://app", '{"debug": false}')]
        greeting = await client.read_resource("greeting://Ada")
        assert [(c["uri"], c["text"]) for c in greeting] == [("greeting://Ada", "Hello, Ada!")]

        prompts = await client.list_prompts()
        assert [p["name"] for p in prompts] == ["review"]
        assert [(a["name"], a.get("required")) for a in prompts[0]["arguments"]] == [("code", True)]
        prompt = await client.get_prompt("review", {"code": "x = 1"})
        assert [(m["role"], first_text(m)) for m in prompt["messages"]] == [("user", "Please review:\nx = 1")]


@pytest.mark.parametrize("case", PYTHON_CASES, indirect=True)
async def test_elicitation_sampling_and_progress(case: Case) -> None:
    handlers = Handlers()
    async with case.client(elicitation=handlers.elicit, sampling=handlers.sample) as client:
        named = await client.call_tool("ask_name", {})  # .data: see test_every_tool_shape_gives_the_natural_value
        assert named.text == "Hello, Ada!"
        [asked] = handlers.elicitations
        assert asked["message"] == "What is your name?"
        assert asked["requestedSchema"]["properties"]["name"]["type"] == "string"

        summary = await client.call_tool("summarize", {"text": "a long text"})
        assert summary.text == "a short summary"
        [sampled] = handlers.samplings
        assert [first_text(m) for m in sampled["messages"]] == ["Summarize: a long text"]
        assert sampled["maxTokens"] == 50

        reports: list[tuple[float, float | None, str | None]] = []
        counted = await client.call_tool("count", {"steps": 3}, progress=lambda *report: reports.append(report))
        assert counted.text == "counted 3"
        assert reports == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


async def wait_for_mark(mark: Path, want: str, timeout: float = PATIENT) -> str:
    deadline = time.monotonic() + timeout
    seen = ""
    while time.monotonic() < deadline:
        with contextlib.suppress(FileNotFoundError):
            seen = mark.read_text()
            if seen == want:
                return seen
        await asyncio.sleep(0.05)
    return seen


@pytest.mark.parametrize("case", PYTHON_CASES, indirect=True)
async def test_a_call_that_times_out_is_cancelled_on_the_server(case: Case, tmp_path: Path) -> None:
    mark = tmp_path / "mark"
    async with case.client() as client:
        started = time.monotonic()
        with pytest.raises(TimeoutError):
            await client.call_tool("wait_until_cancelled", {"mark": str(mark)}, timeout=3.0)
        assert time.monotonic() - started < 30
        assert await wait_for_mark(mark, "cancelled") == "cancelled", "the server never saw the cancellation"
        assert (await client.call_tool("shout", {"text": "on"})).text == "ON"  # the session goes on


@pytest.mark.parametrize("case", [c for c in TASK_CASES if c.values[0][0] == "toolkit"], indirect=True)
async def test_a_tool_runs_as_a_task(case: Case) -> None:
    async with case.client() as client:
        handle = await client.call_tool_as_task("build_report", {"topic": "tides", "sections": 2})
        result = await client.task_result(handle, timeout=PATIENT)
        assert result.data == {"topic": "tides", "sections": ["tides: section 1", "tides: section 2"]}
        # A client that does not ask for a task gets the result at once.
        direct = await client.call_tool("build_report", {"topic": "tides", "sections": 1})
        assert direct.data == {"topic": "tides", "sections": ["tides: section 1"]}


# --- server-everything -----------------------------------------------------------------------------------

EVERYTHING_TOOLS = {
    "echo",
    "get-annotated-message",
    "get-env",
    "get-resource-links",
    "get-resource-reference",
    "get-structured-content",
    "get-sum",
    "get-tiny-image",
    "gzip-file-as-resource",
    "toggle-simulated-logging",
    "toggle-subscriber-updates",
    "trigger-long-running-operation",
}
"""The tools of server-everything 2026.8.31 for any client."""
EVERYTHING_CONDITIONAL = {"trigger-elicitation-request", "trigger-sampling-request"}
"""Listed once the client declared elicitation (and sampling)."""


@pytest.mark.parametrize("case", EVERYTHING_CASES, indirect=True)
async def test_everything_tools(case: Case) -> None:
    async with case.client() as client:
        assert client.negotiated_version == case.expected_era
        assert client.server_info is not None
        assert client.server_info["name"] == "mcp-servers/everything"
        tools = {tool["name"]: tool for tool in await client.list_tools()}
        assert set(tools) >= EVERYTHING_TOOLS | {"simulate-research-query"}
        assert not set(tools) & EVERYTHING_CONDITIONAL  # no elicitation or sampling declared

        echo = await client.call_tool("echo", {"message": "hi"})
        assert (echo.text, echo.data, echo.is_error) == ("Echo: hi", None, False)
        total = await client.call_tool("get-sum", {"a": 2, "b": 40})
        assert total.text == "The sum of 2 and 40 is 42."

        weather = await client.call_tool("get-structured-content", {"location": "Chicago"})
        assert weather.data == {"temperature": 36, "conditions": "Light rain / drizzle", "humidity": 82}
        assert tools["get-structured-content"]["outputSchema"]["type"] == "object"

        image = await client.call_tool("get-tiny-image", {})
        assert [block["type"] for block in image.content] == ["text", "image", "text"]
        assert image.content[1]["mimeType"] == "image/png"

        with pytest.raises(ToolCallFailed):  # input validation fails: an isError result
            await client.call_tool("get-sum", {"a": "two", "b": 40})
        invalid = await client.call_tool("get-sum", {"a": "two", "b": 40}, raise_on_error=False)
        assert invalid.is_error is True
        assert invalid.text


@pytest.mark.parametrize("case", EVERYTHING_CASES, indirect=True)
async def test_everything_resources_and_prompts(case: Case) -> None:
    async with case.client() as client:
        resources = await client.list_resources()
        assert resources
        assert all(r["uri"].startswith("demo://resource/static/document/") for r in resources)
        document = await client.read_resource(resources[0]["uri"])
        assert document[0]["uri"] == resources[0]["uri"]
        assert document[0]["text"]
        templates = {t["uriTemplate"] for t in await client.list_resource_templates()}
        assert templates >= {"demo://resource/dynamic/text/{resourceId}", "demo://resource/dynamic/blob/{resourceId}"}
        [text] = await client.read_resource("demo://resource/dynamic/text/7")
        assert text["uri"] == "demo://resource/dynamic/text/7"
        assert text["text"].startswith("Resource 7: This is a plaintext resource")
        [blob] = await client.read_resource("demo://resource/dynamic/blob/7")
        assert blob["blob"]

        prompts = {p["name"] for p in await client.list_prompts()}
        assert prompts >= {"simple-prompt", "args-prompt", "completable-prompt", "resource-prompt"}
        simple = await client.get_prompt("simple-prompt")
        assert first_text(simple["messages"][0])
        args = await client.get_prompt("args-prompt", {"city": "Paris"})
        assert [(m["role"], first_text(m)) for m in args["messages"]] == [("user", "What's weather in Paris?")]
        completion = await client.complete({"type": "ref/prompt", "name": "completable-prompt"}, "department", "")
        assert completion["values"]


@pytest.mark.parametrize("case", EVERYTHING_CASES, indirect=True)
async def test_everything_elicitation_sampling_and_progress(case: Case) -> None:
    handlers = Handlers()
    async with case.client(elicitation=handlers.elicit, sampling=handlers.sample) as client:
        tools = {tool["name"] for tool in await client.list_tools()}
        assert tools >= EVERYTHING_CONDITIONAL

        elicited = await client.call_tool("trigger-elicitation-request", {})
        assert "- Name: Ada" in elicited.text
        [asked] = handlers.elicitations
        assert asked["requestedSchema"]["required"] == ["name"]

        sampled = await client.call_tool("trigger-sampling-request", {"prompt": "the tides", "maxTokens": 20})
        assert "a short summary" in sampled.text
        [request] = handlers.samplings
        assert first_text(request["messages"][0]) == "Resource trigger-sampling-request context: the tides"
        assert request["maxTokens"] == 20

        reports: list[tuple[float, float | None, str | None]] = []
        done = await client.call_tool(
            "trigger-long-running-operation",
            {"duration": 0.6, "steps": 3},
            progress=lambda *report: reports.append(report),
        )
        assert done.text.startswith("Long running operation completed.")
        assert [(p, t) for p, t, _ in reports] == [(1, 3), (2, 3), (3, 3)]


@pytest.mark.parametrize("case", EVERYTHING_CASES, indirect=True)
async def test_everything_a_call_that_times_out(case: Case) -> None:
    """The call is given up on after its timeout (notifications/cancelled: nothing of the server's shows it)."""
    async with case.client() as client:
        started = time.monotonic()
        with pytest.raises(TimeoutError):
            await client.call_tool("trigger-long-running-operation", {"duration": 30, "steps": 30}, timeout=2.0)
        assert time.monotonic() - started < 20
        assert (await client.call_tool("echo", {"message": "still here"})).text == "Echo: still here"
        await client.ping()


@pytest.mark.parametrize("case", [c for c in TASK_CASES if c.values[0][0] == "everything"], indirect=True)
async def test_everything_a_task_and_its_question(case: Case) -> None:
    handlers = Handlers()
    async with case.client(elicitation=handlers.elicit, sampling=handlers.sample) as client:
        handle = await client.call_tool_as_task("simulate-research-query", {"topic": "tides"})
        report = await client.task_result(handle, timeout=PATIENT)
        assert "# Research Report: tides" in report.text
        assert handlers.elicitations == []

        # An ambiguous query asks (elicitation/create, related to the task) before it goes on.
        handle = await client.call_tool_as_task("simulate-research-query", {"topic": "python", "ambiguous": True})
        report = await client.task_result(handle, timeout=PATIENT)
        assert "# Research Report: python (programming)" in report.text
        [asked] = handlers.elicitations
        assert "interpretation" in asked["requestedSchema"]["properties"]
