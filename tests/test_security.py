"""Security defaults, checked on the real wire.

- HTTP binds 127.0.0.1 unless told otherwise (both revisions' Streamable HTTP "Security"
  section: "servers SHOULD bind only to localhost").
- Host and Origin are validated by default, before anything else, on every method (2026-07-28
  streamable-http "Security & Endpoint" 1: a present, invalid Origin MUST get 403).
- Unexpected exceptions are masked by default everywhere (tools, resources, prompts,
  completions, internal errors): no message, no traceback, no file path reaches a client.
- Legacy session ids are cryptographically random, visible ASCII (2025-11-25 basic/transports,
  "Session Management" 1).
- ``requestState`` is integrity-protected and bound to its request and an expiry (2026-07-28
  basic/patterns/mrtr, "Server Requirements" 4-5).
- No remote ``$ref`` is ever fetched (2026-07-28 basic/index, "$ref Resolution"): a canary
  HTTP server counts every request toolkit might make, across registration, every
  version's ``tools/list``, calls, and input and output validation errors.
"""

from __future__ import annotations

import asyncio
import base64
import collections
import contextlib
import hashlib
import itertools
import json
import logging
import math
import re
import subprocess
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.http_support import LEGACY, MODERN, Legacy, Modern, Reply, ServeHttp, connect, free_port, serve
from tests.support.apps import load_module
from tests.support.canary import Canary, serve_canary
from tests.support.memory_stdio import MemoryStdio
from tests.support.processes import PYTHON, REPO, TOOLKIT
from tests.support.stdio import StdioClient
from tests.wire import assert_valid

from toolkit import Context, Server, ToolError, ToolResult
from toolkit.auth import AccessToken
from toolkit.middleware import CallNext, McpRequest, Middleware

LEGACY_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")


# --- bind address ------------------------------------------------------------------------------

BIND_APP = """
import sys

from toolkit import Server

server = Server("bind")
server.tool(lambda: 1, name="one")

if __name__ == "__main__":
    server.run("http", port=int(sys.argv[1]))
"""


def _listening(port: int) -> list[str]:
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            address, port_hex = fields[1].split(":")
            if int(port_hex, 16) == port and fields[3] == "0A":
                found.append(address)
    return found


def test_server_run_http_binds_loopback_only_by_default(tmp_path: Path) -> None:
    app = tmp_path / "bind_app.py"
    app.write_text(textwrap.dedent(BIND_APP))
    port = free_port()
    process = subprocess.Popen([str(PYTHON), str(app), str(port)], cwd=REPO, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while not _listening(port):
            assert process.poll() is None, f"the server exited with code {process.returncode}"
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.05)
        assert _listening(port) == ["0100007F"], "server.run('http') must listen on 127.0.0.1 only"
    finally:
        process.terminate()
        process.wait(10)


# --- Host and Origin -----------------------------------------------------------------------


def _small_server() -> Server:
    server = Server("security", version="1.0.0")

    @server.tool
    def echo(text: str) -> str:
        """Return the text."""
        return text

    return server


HOSTILE_HOSTS = [
    "evil.example.com",
    "EVIL.Example.COM",
    "evil.example.com.",
    "evil.example.com:80",
    "localhost.evil.example.com",
    "LocalHost.Evil.Example.Com",
    "localhost.evil.example.com.:8000",
    "127.0.0.1.nip.io",
    "127.0.0.1.nip.io.",
    "127.0.0.2",
    "0.0.0.0",
    "[::2]",
    "[2001:db8::1]:8000",
    "10.0.0.1:8000",
    "localhost@evil.example.com",
    "evil.example.com@localhost",
    "",
]
HOSTILE_ORIGINS = [
    "http://evil.example.com",
    "HTTP://EVIL.EXAMPLE.COM",
    "http://evil.example.com.",
    "https://localhost.evil.example.com",
    "http://LocalHost.Evil.Example.Com:3000",
    "http://127.0.0.1.nip.io:8000",
    "http://127.0.0.2",
    "http://[::2]",
    "http://[2001:db8::1]:8000",
    "http://localhost@evil.example.com",
    "null",
    "file://",
    "chrome-extension://abcdefghijklmnop",
    "ftp://localhost",
    "",
]
MALFORMED_HOSTS = ["localhost:80@evil.example.com", "[::1]@evil.example.com", "[::1].evil.example.com"]
MALFORMED_ORIGINS = [
    "http://localhost:80@evil.example.com",
    "http://[::1]@evil.example.com",
    "http://[::1].evil.example.com",
]
"""Values that start like a local host but carry more than ``:port`` after it (once let through)."""


def _hostile(hosts: list[str], origins: list[str]) -> list[Any]:
    """One case per hostile Host (421) and Origin (403) value."""
    cases = []
    for name, status, values in [("Host", 421, hosts), ("Origin", 403, origins)]:
        for value in values:
            cases.append(pytest.param({name: value}, status, id=f"{name}={value!r}"))
    return cases


HOSTILE = _hostile(HOSTILE_HOSTS + MALFORMED_HOSTS, HOSTILE_ORIGINS + MALFORMED_ORIGINS)
FRIENDLY = [
    {"Host": "localhost"},
    {"Host": "LOCALHOST:1234"},
    {"Host": "127.0.0.1:9"},
    {"Host": "[::1]:8000"},
    {"Origin": "http://localhost:3000"},
    {"Origin": "https://127.0.0.1"},
    {"Origin": "http://[::1]:5173"},
]


def _refused(reply: Reply, status: int) -> str | None:
    """What is wrong with the refusal of a hostile request, or ``None``."""
    message = reply.messages[-1] if reply.messages else {}
    if reply.status != status:
        return f"HTTP {reply.status}, expected {status}"
    if "result" in message or "error" not in message or "id" in message:
        return f"not a JSON-RPC error without an id: {message or reply.body_text!r}"
    if "mcp-session-id" in reply.headers:
        return "a session id was handed out"
    return None


@pytest.mark.parametrize(("headers", "status"), HOSTILE)
async def test_a_hostile_host_or_origin_is_refused_on_every_method(
    mcp_http: ServeHttp, headers: dict[str, str], status: int
) -> None:
    http = await mcp_http(_small_server())
    session = await Legacy(http).open()
    replies = {
        "modern POST": await Modern(http).request("tools/list", headers=headers),
        "legacy POST": await session.request("tools/list", headers=headers),
        "legacy notification": await session.notify("notifications/roots/list_changed", headers=headers),
        "legacy DELETE": await session.delete(headers=headers),
    }
    problems = [f"{what}: {problem}" for what, reply in replies.items() if (problem := _refused(reply, status))]
    async with session.listen(headers=headers) as stream:
        if stream.status != status:
            problems.append(f"legacy GET: HTTP {stream.status}, expected {status}")
    assert problems == []
    assert (await session.request("ping")).status == 200, "a rejected DELETE must not end the session"


@pytest.mark.parametrize("headers", FRIENDLY, ids=[f"{name}={value!r}" for h in FRIENDLY for name, value in h.items()])
async def test_local_hosts_and_origins_are_served_in_both_eras(mcp_http: ServeHttp, headers: dict[str, str]) -> None:
    http = await mcp_http(_small_server())
    assert (await Modern(http).request("tools/list", headers=headers)).status == 200
    session = await Legacy(http).open(headers=headers)
    assert (await session.request("tools/list", headers=headers)).status == 200


def _tool_counting_server(calls: list[str]) -> Server:
    server = Server("security", version="1.0.0")

    @server.tool
    def transfer(to: str) -> str:
        """A tool with an effect a hostile page must never cause."""
        calls.append(to)
        return f"sent to {to}"

    return server


@pytest.mark.parametrize(("headers", "status"), HOSTILE)
async def test_a_hostile_request_learns_nothing_and_runs_nothing(
    mcp_http: ServeHttp, headers: dict[str, str], status: int
) -> None:
    """Both eras: no session and no server description for a hostile page, and no tool runs for it."""
    calls: list[str] = []
    http = await mcp_http(_tool_counting_server(calls))
    initialize = Legacy(http).body(
        "initialize",
        {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}},
    )
    modern, session = Modern(http), await Legacy(http).open()
    replies = {
        "legacy initialize": await http.send(version=LEGACY, body=initialize, headers=headers),
        "modern server/discover": await modern.request("server/discover", headers=headers),
        "modern tools/call": await modern.call_tool("transfer", {"to": "mallory"}, headers=headers),
        "legacy tools/call": await session.call_tool("transfer", {"to": "mallory"}, headers=headers),
    }
    problems = [f"{what}: {problem}" for what, reply in replies.items() if (problem := _refused(reply, status))]
    assert problems == []
    assert calls == [], "a refused request ran the tool"
    await modern.call_tool("transfer", {"to": "alice"})
    await session.call_tool("transfer", {"to": "bob"})
    assert calls == ["alice", "bob"], "the tool runs for a local client"


ALLOWED = {"allowed_hosts": ["mcp.example.com"], "allowed_origins": ["https://app.example.com"]}
NEAR_ALLOWED = _hostile(
    ["mcp.example.com.evil.example.com", "evil-mcp.example.com", "mcp.example.com@evil.example.com"],
    ["https://app.example.com.evil.example.com", "http://app.example.com", "https://app.example.com:8443"],
)


@pytest.mark.parametrize(("headers", "status"), HOSTILE + NEAR_ALLOWED)
async def test_allowed_hosts_and_origins_let_in_only_themselves(
    mcp_http: ServeHttp, headers: dict[str, str], status: int
) -> None:
    http = await mcp_http(_small_server(), **ALLOWED)
    modern, session = Modern(http), await Legacy(http).open()
    for allowed in ({"Host": "mcp.example.com"}, {"Origin": "https://app.example.com"}):
        assert (await modern.request("tools/list", headers=allowed)).status == 200
        assert (await session.request("tools/list", headers=allowed)).status == 200
    replies = {
        "modern POST": await modern.request("tools/list", headers=headers),
        "legacy POST": await session.request("tools/list", headers=headers),
    }
    problems = [f"{what}: {problem}" for what, reply in replies.items() if (problem := _refused(reply, status))]
    assert problems == []


# --- masking of unexpected errors --------------------------------------------------------------

SECRET = "hunter2-db-password"
PATH = "/srv/secret/config.py"


class Unprintable:
    """A return value that cannot be turned into JSON or text (a forced internal error)."""

    def __str__(self) -> str:
        raise RuntimeError(f"{SECRET} in {PATH}")

    __repr__ = __str__


def leaky_server(**options: Any) -> Server:
    server = Server("leaky", version="1.0.0", **options)

    @server.tool
    def crash() -> str:
        """Raise with a secret in the message."""
        raise RuntimeError(f"could not connect: password={SECRET} at {PATH}")

    @server.tool
    async def crash_async(ctx: Context) -> int:
        """Raise a KeyError naming a secret."""
        raise KeyError(SECRET)

    @server.tool
    def refuse() -> str:
        """A ToolError is meant for the client."""
        raise ToolError("not allowed")

    @server.tool(structured_output=False)
    def unprintable() -> Any:
        """Return something that cannot be serialized."""
        return Unprintable()

    @server.resource("leaky://config")
    def config() -> str:
        raise RuntimeError(f"{SECRET} {PATH}")

    @server.resource("leaky://items/{item}")
    def item(item: str) -> str:
        raise OSError(f"{PATH}: {SECRET}")

    @server.prompt
    def summarize(topic: str) -> str:
        """A prompt that fails."""
        raise RuntimeError(f"{SECRET} {PATH}")

    @server.completion(prompt="summarize", argument="topic")
    def topics(value: str) -> list[str]:
        raise RuntimeError(f"{SECRET} {PATH}")

    return server


FAILING_REQUESTS: list[tuple[str, dict[str, Any]]] = [
    ("tools/call", {"name": "crash", "arguments": {}}),
    ("tools/call", {"name": "crash_async", "arguments": {}}),
    ("tools/call", {"name": "unprintable", "arguments": {}}),
    ("resources/read", {"uri": "leaky://config"}),
    ("resources/read", {"uri": "leaky://items/1"}),
    ("prompts/get", {"name": "summarize", "arguments": {"topic": "x"}}),
    (
        "completion/complete",
        {"ref": {"type": "ref/prompt", "name": "summarize"}, "argument": {"name": "topic", "value": "a"}},
    ),
]
LEAKS = [
    SECRET,
    PATH,
    "Traceback",
    'File "',
    "RuntimeError",
    "KeyError",
    "OSError",
    ".py",
    "site-packages",
    "toolkit/_",
]


def _leaks(message: Any) -> list[str]:
    text = json.dumps(message)
    return [needle for needle in LEAKS if needle in text]


def _break_the_engine(server: Server) -> None:
    """Make ``tools/list`` fail with an exception nobody expects (an internal error)."""

    async def broken(scope: Any) -> Any:
        raise RuntimeError(f"internal state corrupted: {SECRET} {PATH}")

    server.engine.add_method("tools/list", broken)


@pytest.mark.parametrize("transport", ["stdio", "legacy", "modern"])
async def test_unexpected_errors_are_masked_by_default(
    mcp_http: ServeHttp, transport: str, caplog: pytest.LogCaptureFixture
) -> None:
    server = leaky_server()
    _break_the_engine(server)
    requests = [*FAILING_REQUESTS, ("tools/list", {})]
    responses: list[dict[str, Any]] = []
    if transport == "stdio":
        async with MemoryStdio(server) as stdio:
            for method, params in requests:
                responses.append(await stdio.response(stdio.request(method, params)))
            assert stdio.invalid_lines == []
    else:
        http = await mcp_http(server)
        client: Modern | Legacy = Modern(http) if transport == "modern" else await Legacy(http).open()
        for method, params in requests:
            reply = await client.request(method, params)
            assert reply.messages, f"{method}: HTTP {reply.status} without a JSON-RPC answer: {reply.body_text!r}"
            responses.append(reply.message)
    for (method, params), response in zip(requests, responses, strict=True):
        assert not _leaks(response), f"{method} {params} leaked {_leaks(response)}: {response}"
        assert "result" in response or "error" in response
        if "result" in response and method == "tools/call":
            assert response["result"]["isError"] is True
    assert responses[-1]["error"] == {"code": -32603, "message": "Internal error"}
    logged = "\n".join(record.getMessage() + str(record.exc_info) for record in caplog.records)
    assert SECRET in logged, "the details are logged server-side for the operator"


async def test_an_internal_error_during_initialize_leaks_nothing(mcp_http: ServeHttp) -> None:
    server = _small_server()

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"internal state corrupted: {SECRET} {PATH}")

    server.engine.add_method("initialize", broken)  # the handler of initialize
    http = await mcp_http(server)
    body = {
        "jsonrpc": "2.0",
        "id": "init",
        "method": "initialize",
        "params": {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}},
    }
    async with http.open("POST", version=LEGACY, body=body) as stream:
        raw = (await stream.response.aread()).decode(errors="replace")
        status = stream.status
    assert status >= 500
    assert not [needle for needle in LEAKS if needle in raw], raw
    assert (await Modern(http).request("server/discover")).status == 200, "the server keeps serving"


async def test_mask_errors_false_shows_the_message_but_never_a_traceback() -> None:
    async with MemoryStdio(leaky_server(mask_errors=False)) as stdio:
        crash = await stdio.result(stdio.call("crash"))
        refused = await stdio.result(stdio.call("refuse"))
    text = crash["content"][0]["text"]
    assert crash["isError"] is True
    assert SECRET in text and "RuntimeError" in text, "mask_errors=False shows what went wrong"
    assert "Traceback" not in text and 'File "' not in text
    assert refused["content"] == [{"type": "text", "text": "not allowed"}]


def test_masked_errors_over_a_real_stdio_process_go_to_stderr_only(tmp_path: Path) -> None:
    app = tmp_path / "leaky_app.py"
    app.write_text(
        textwrap.dedent(
            f'''
            from toolkit import Server

            server = Server("leaky")


            @server.tool
            def crash() -> str:
                """Fail."""
                raise RuntimeError("password={SECRET} at {PATH}")
            '''
        )
    )
    with StdioClient([TOOLKIT, "run", str(app)]) as client:
        client.use_modern()
        result = client.call_tool("crash")
        assert result["isError"] is True
        assert client.close() == 0
        assert not _leaks(client.messages)
        assert client.invalid_lines == []
        assert SECRET in client.stderr and "Traceback" in client.stderr


# --- session ids --------------------------------------------------------------------------------


async def test_session_ids_are_random_visible_ascii_and_unique(mcp_http: ServeHttp) -> None:
    http = await mcp_http(_small_server())
    count = 300
    ids = []
    for _ in range(count):
        session = Legacy(http)
        await session.initialize()
        assert session.session_id is not None
        ids.append(session.session_id)
    assert len(set(ids)) == count
    for session_id in ids:
        assert re.fullmatch(r"[\x21-\x7e]+", session_id), session_id
    lengths = {len(session_id) for session_id in ids}
    alphabet = collections.Counter("".join(ids))
    total = sum(alphabet.values())
    entropy_per_char = -sum(n / total * math.log2(n / total) for n in alphabet.values())
    assert len(alphabet) >= 60, f"ids use only {len(alphabet)} distinct characters"
    assert entropy_per_char > 5.8, f"{entropy_per_char:.2f} bits per character"
    assert min(lengths) * entropy_per_char >= 128, "a session id must carry at least 128 random bits"
    assert len({session_id[:6] for session_id in ids}) == count, "ids share prefixes: not random"
    differing = [
        sum(a != b for a, b in zip(x, y, strict=False)) / min(len(x), len(y)) for x, y in itertools.pairwise(ids)
    ]
    assert min(differing) > 0.7, "consecutive ids look alike (a counter or a clock?)"


async def test_session_ids_cannot_be_guessed_reused_or_carried_to_another_server(mcp_http: ServeHttp) -> None:
    first = await mcp_http(_small_server())
    second = await mcp_http(_small_server())
    session = await Legacy(first).open()
    assert session.session_id is not None
    for guess in (session.session_id[:-1], session.session_id + "A", session.session_id.upper(), "1", "0" * 43):
        if guess == session.session_id:
            continue
        assert (await session.request("ping", headers={"Mcp-Session-Id": guess})).status == 404
    carried = Legacy(second)
    carried.session_id = session.session_id
    assert (await carried.request("ping")).status == 404
    assert (await session.delete()).status == 204
    assert (await session.request("ping")).status == 404, "a deleted session id is dead for good"


# --- what logs say about ids ------------------------------------------------------------------


class _TwoUsers:
    """A token verifier that knows two users."""

    async def verify(self, token: str) -> AccessToken | None:
        subject = {"alice-token": "alice", "mallory-token": "mallory"}.get(token)
        if subject is None:
            return None
        return AccessToken(subject=subject, client_id="c1", scopes=frozenset(), expires_at=None)


def _bearer(token: str) -> dict[str, str | None]:
    return {"authorization": f"Bearer {token}"}


def _toolkit_log(caplog: pytest.LogCaptureFixture) -> str:
    return "\n".join(record.getMessage() for record in caplog.records if record.name.startswith("toolkit"))


def _assert_logged_by_digest(log: str, secret: str) -> None:
    """``secret`` is named in ``log`` only as 12 hex digits of its SHA-256: no 8 characters of it appear."""
    assert hashlib.sha256(secret.encode()).hexdigest()[:12] in log
    leaked = [secret[i : i + 8] for i in range(len(secret) - 7) if secret[i : i + 8] in log]
    assert not leaked, f"the log holds part of the id: {leaked}"


@pytest.mark.parametrize("recheck", [False, True], ids=["local copy", "reloaded from the store"])
async def test_a_session_refused_to_another_caller_is_logged_by_digest(
    mcp_http: ServeHttp, caplog: pytest.LogCaptureFixture, recheck: bool
) -> None:
    caplog.set_level(logging.DEBUG, logger="toolkit")
    server = Server("sessions", auth=_TwoUsers(), authorization_servers=["https://as.example"])
    server.tool(lambda: 1, name="one")
    http = await mcp_http(server, session_idle_timeout=2.0)  # a local copy is trusted for 0.5 s
    alice = Legacy(http)
    await alice.initialize(headers=_bearer("alice-token"))
    assert alice.session_id is not None
    assert (await alice.notify("notifications/initialized", headers=_bearer("alice-token"))).status == 202
    if recheck:
        await asyncio.sleep(0.6)
    mallory = Legacy(http)
    mallory.session_id = alice.session_id
    assert (await mallory.request("ping", headers=_bearer("mallory-token"))).status == 404
    log = _toolkit_log(caplog)
    assert "did not open it" in log
    _assert_logged_by_digest(log, alice.session_id)


async def test_an_idle_session_ended_is_logged_by_digest(mcp_http: ServeHttp, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="toolkit")
    http = await mcp_http(_small_server(), session_idle_timeout=0.5)
    session = await Legacy(http).open()
    assert session.session_id is not None
    deadline = time.monotonic() + 5
    while "ending idle session" not in _toolkit_log(caplog):
        assert time.monotonic() < deadline, "the idle session was never ended"
        await asyncio.sleep(0.05)
    assert (await session.request("ping")).status == 404
    _assert_logged_by_digest(_toolkit_log(caplog), session.session_id)


class _BrokenOnCalls(Middleware):
    async def on_call_tool(self, request: McpRequest, call_next: CallNext[ToolResult]) -> ToolResult:
        raise RuntimeError("a bug in a middleware")


async def test_a_failed_task_is_logged_by_digest(mcp_http: ServeHttp, caplog: pytest.LogCaptureFixture) -> None:
    # Stateless and without auth=, a task's id is all it takes to read its result: a secret too.
    caplog.set_level(logging.DEBUG, logger="toolkit")
    server = Server("tasks", task_poll_interval_ms=20, middleware=[_BrokenOnCalls()])
    server.tool(lambda: "done", name="work", task="required")
    modern = Modern(await mcp_http(server), capabilities={"extensions": {"io.modelcontextprotocol/tasks": {}}})
    task_id = (await modern.call_tool("work", {})).result["taskId"]
    deadline = time.monotonic() + 5
    while (await modern.request("tasks/get", {"taskId": task_id})).result["status"] != "failed":
        assert time.monotonic() < deadline, "the task never failed"
        await asyncio.sleep(0.05)
    log = _toolkit_log(caplog)
    assert "(tool 'work') failed" in log
    _assert_logged_by_digest(log, task_id)


# --- sealed requestState -----------------------------------------------------------------------


def mrtr_server(secret: str = "test-secret") -> Server:
    server = Server("mrtr-security", version="1.0.0", state_secret=secret)

    @server.tool
    async def transfer(ctx: Context, amount: int) -> str:
        """Ask who, then confirm; two rounds."""
        who = await ctx.elicit("To whom?", {"type": "object", "properties": {"to": {"type": "string"}}}, key="to")
        confirm = await ctx.elicit(
            "Sure?", {"type": "object", "properties": {"ok": {"type": "boolean"}}}, key="confirm"
        )
        assert who.data is not None and confirm.data is not None
        return f"sent {amount} to {who.data['to']} (confirmed={confirm.data['ok']})"

    @server.tool
    async def other(ctx: Context, amount: int) -> str:
        """Another tool that asks the same question."""
        who = await ctx.elicit("To whom?", {"type": "object", "properties": {"to": {"type": "string"}}}, key="to")
        assert who.data is not None
        return f"other {amount} {who.data['to']}"

    return server


CAPABILITIES = {"elicitation": {}}


def _answer(content: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": content}


async def _second_round_state(modern: Modern, *, state_ttl: tuple[Server, float] | None = None) -> str:
    """The state of the second round; ``state_ttl`` shortens the server's TTL for that state alone."""
    first = await modern.call_tool("transfer", {"amount": 5})
    assert first.result["resultType"] == "input_required"
    if state_ttl is not None:
        server, seconds = state_ttl
        server.state_sealer.ttl_seconds = seconds
    second = await modern.request(
        "tools/call",
        {
            "name": "transfer",
            "arguments": {"amount": 5},
            "inputResponses": {"to": _answer({"to": "alice"})},
            "requestState": first.result["requestState"],
        },
    )
    assert second.result["resultType"] == "input_required"
    assert list(second.result["inputRequests"]) == ["confirm"]
    state: str = second.result["requestState"]
    return state


def _b64decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _b64encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _forged_states(state: str) -> dict[str, Any]:
    version, key_id, body = state.split(".")
    sealed = _b64decode(body)
    assert b"alice" not in sealed, "the answers inside the state must be encrypted, not just signed"
    flipped = bytearray(sealed)
    flipped[-1] ^= 1  # the GCM tag
    nonce_changed = bytearray(sealed)
    nonce_changed[0] ^= 1
    middle = bytearray(sealed)
    middle[len(middle) // 2] ^= 0x20  # inside the ciphertext
    return {
        "tag bit flipped": f"{version}.{key_id}.{_b64encode(bytes(flipped))}",
        "nonce changed": f"{version}.{key_id}.{_b64encode(bytes(nonce_changed))}",
        "ciphertext bit flipped": f"{version}.{key_id}.{_b64encode(bytes(middle))}",
        "tag dropped": f"{version}.{key_id}.{_b64encode(sealed[:-16])}",
        "sealed part empty": f"{version}.{key_id}.",
        "sealed part truncated": f"{version}.{key_id}.{body[:10]}",
        "unknown key id": f"{version}.AAAAAAAA.{body}",
        "another format": f"1.{key_id}.{body}",
        "segment dropped": f"{version}.{body}",
        "extra segment": f"{state}.x",
        "not base64": "2.!!!.???",
        "empty": "",
        "a number": 12345,
        "an object": {"a": 1},
        "a list": [state],
        "a megabyte": f"{version}.{key_id}." + "A" * 1_000_000,
    }


FORGED_STATE_LIVENESS = 8.0
"""Seconds a forged ``requestState`` may take to be refused (under the HTTP client's own 10 s)."""


async def test_request_state_tampering_is_rejected(mcp_http: ServeHttp) -> None:
    http = await mcp_http(mrtr_server())
    modern = Modern(http, capabilities=CAPABILITIES)
    state = await _second_round_state(modern)
    base = {"name": "transfer", "arguments": {"amount": 5}, "inputResponses": {"confirm": _answer({"ok": True})}}
    accepted = await modern.request("tools/call", {**base, "requestState": state})
    assert accepted.result["content"][0]["text"] == "sent 5 to alice (confirmed=True)", "the genuine state works"

    async def refused(what: str, forged: Any) -> str | None:
        try:
            # Liveness, not speed: a forged state is refused, never left hanging. A wide margin
            # for a loaded machine; how fast a refusal is, is not what this test checks.
            async with asyncio.timeout(FORGED_STATE_LIVENESS):
                reply = await modern.request("tools/call", {**base, "requestState": forged}, id=f"forged-{what}")
        except TimeoutError:
            return f"{what}: no answer within {FORGED_STATE_LIVENESS:g} s"
        message = reply.message
        assert_valid(message, MODERN)
        if message.get("error", {}).get("code") != -32602 or message.get("id") != f"forged-{what}":
            return f"{what}: {message}"
        if "mallory" in json.dumps(message):
            return f"{what}: the forged answer was used"
        return None

    forged_states = _forged_states(state).items()
    problems = await asyncio.gather(*(refused(what, forged) for what, forged in forged_states))
    assert [problem for problem in problems if problem is not None] == []


async def test_request_state_is_bound_to_its_tool_and_arguments(mcp_http: ServeHttp) -> None:
    http = await mcp_http(mrtr_server())
    modern = Modern(http, capabilities=CAPABILITIES)
    state = await _second_round_state(modern)
    replays = {
        "other tool": {"name": "other", "arguments": {"amount": 5}},
        "other amount": {"name": "transfer", "arguments": {"amount": 5000}},
        "extra argument": {"name": "transfer", "arguments": {"amount": 5, "memo": "x"}},
    }
    for what, params in replays.items():
        reply = await modern.request(
            "tools/call", {**params, "inputResponses": {"confirm": _answer({"ok": True})}, "requestState": state}
        )
        assert reply.message.get("error", {}).get("code") == -32602, (what, reply.message)


async def test_request_state_from_another_key_or_after_expiry_is_rejected(mcp_http: ServeHttp) -> None:
    sealer_server = mrtr_server("key-one")
    http_one = await mcp_http(sealer_server)
    http_two = await mcp_http(mrtr_server("key-two"))
    state = await _second_round_state(Modern(http_one, capabilities=CAPABILITIES))
    params = {
        "name": "transfer",
        "arguments": {"amount": 5},
        "inputResponses": {"confirm": _answer({"ok": True})},
        "requestState": state,
    }
    other_key = await Modern(http_two, capabilities=CAPABILITIES).request("tools/call", params)
    assert other_key.message["error"]["code"] == -32602

    # Only the second round's state is short-lived (1 s, so at most 2 s at a whole-second expiry):
    # the first round's state keeps the default TTL however slow the machine is.
    short_lived = await _second_round_state(Modern(http_one, capabilities=CAPABILITIES), state_ttl=(sealer_server, 1))
    await asyncio.sleep(2.1)
    expired = await Modern(http_one, capabilities=CAPABILITIES).request(
        "tools/call", {**params, "requestState": short_lived}
    )
    assert expired.message["error"]["code"] == -32602
    assert "expired" in expired.message["error"]["message"]


# --- no remote $ref is ever fetched -------------------------------------------------------------


@pytest.fixture
def canary() -> Iterator[Canary]:
    """An HTTP server on 127.0.0.1 that serves a permissive schema to anyone, and counts them."""
    with serve_canary() as running:
        yield running


CANARY_APP = '''
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from toolkit import Server, ToolResult

CANARY = "{canary}"
server = Server("canary", version="1.0.0")


class Linked(BaseModel):
    """A model whose generated schema names the canary in every annotation it can."""

    model_config = ConfigDict(json_schema_extra={{"$id": CANARY + "/linked.json", "$comment": CANARY + "/c"}})
    url: Annotated[str, Field(json_schema_extra={{"format": "uri", "examples": [{{"$ref": CANARY + "/ex.json"}}]}})]
    tags: list[str] = []


INPUT = {{
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": CANARY + "/input.json",
    "type": "object",
    "properties": {{
        "node": {{"$ref": "#/$defs/node"}},
        "leaf": {{"$ref": "#leaf"}},
        "link": {{"type": "string", "format": "uri", "default": CANARY + "/default"}},
        "data": {{"const": {{"$ref": CANARY + "/const.json"}}}},
        "any": {{}},
    }},
    "$defs": {{
        "node": {{
            "type": "object",
            "properties": {{"kids": {{"type": "array", "items": {{"$ref": "#/$defs/node"}}}}}},
            "additionalProperties": False,
        }},
        "leaf": {{"$anchor": "leaf", "type": "integer", "maximum": 10}},
    }},
}}
OUTPUT = {{
    "$id": CANARY + "/output.json",
    "type": "array",
    "items": {{"$ref": "#/$defs/item"}},
    "$defs": {{"item": {{"type": "object", "properties": {{"n": {{"type": "integer"}}}}, "required": ["n"]}}}},
}}


@server.tool(input_schema=INPUT, output_schema=OUTPUT)
def hand_written(**arguments: Any) -> Any:
    """Return arguments["items"] (valid or not)."""
    return arguments.get("any", [{{"n": 1}}])


@server.tool
def generated(linked: Linked, depth: int = 0) -> Linked:
    """Echo a model whose schema carries the canary's URL."""
    return linked


@server.tool
def returns_a_ref(value: Any = None) -> Any:
    """Return a value shaped like a schema reference."""
    return {{"$ref": CANARY + "/returned.json", "$schema": CANARY + "/meta", "value": value}}


@server.tool(output_schema=OUTPUT)
def wrong_output() -> ToolResult:
    """Violate the output schema."""
    return ToolResult(structured_content=[{{"n": "not an integer", "$ref": CANARY + "/x.json"}}])


@server.resource("canary://schema", mime_type="application/schema+json")
def schema_resource() -> dict[str, Any]:
    return {{"$ref": CANARY + "/resource.json"}}


@server.prompt
def explain(schema_url: str) -> str:
    """Explain a schema (the URL is only text)."""
    return "Explain " + schema_url
'''


def _canary_calls(canary: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("hand_written", {"node": {"kids": [{"kids": []}]}, "leaf": 3, "link": canary + "/l", "any": [{"n": 2}]}),
        ("hand_written", {"node": {"kids": [{"bad": 1}]}}),
        ("hand_written", {"leaf": 11}),
        ("hand_written", {"data": {"$ref": canary + "/const.json"}}),
        ("hand_written", {"data": {"$ref": canary + "/other.json"}}),
        ("hand_written", {"any": [{"n": "x"}]}),
        ("hand_written", {"any": {"$ref": canary + "/any.json"}}),
        ("generated", {"linked": {"url": canary + "/u", "tags": ["a"]}}),
        ("generated", {"linked": {"url": 5}}),
        ("generated", {"linked": {"$ref": canary + "/linked.json"}}),
        ("returns_a_ref", {"value": {"$ref": canary + "/v.json", "$id": canary + "/id"}}),
        ("wrong_output", {}),
    ]


async def _exercise(client: Modern | Legacy, canary: str, version: str) -> None:
    listed = await client.request("tools/list")
    assert listed.status == 200 and len(listed.result["tools"]) == 4
    for name, arguments in _canary_calls(canary):
        reply = await client.call_tool(name, arguments)
        assert reply.status == 200, (name, reply.messages)
        assert_valid(reply.message, version, method="tools/call")
    assert (await client.request("resources/read", {"uri": "canary://schema"})).status == 200
    assert (await client.request("prompts/get", {"name": "explain", "arguments": {"schema_url": canary}})).status == 200


async def test_no_ref_is_fetched_over_http_in_any_version(canary: Canary, tmp_path: Path) -> None:
    app = tmp_path / "canary_app.py"
    app.write_text(textwrap.dedent(CANARY_APP).format(canary=canary.url))
    module = load_module(app)
    async with serve(module.server) as running, connect(running.url) as http:
        await _exercise(Modern(http), canary.url, MODERN)
        for version in LEGACY_VERSIONS:
            await _exercise(await Legacy(http, version).open(), canary.url, version)
    assert canary.hits == []


def test_no_ref_is_fetched_by_a_real_stdio_process(canary: Canary, tmp_path: Path) -> None:
    app = tmp_path / "canary_app.py"
    app.write_text(textwrap.dedent(CANARY_APP).format(canary=canary.url))
    for version in ("2025-06-18", MODERN):
        with StdioClient([TOOLKIT, "run", str(app)]) as client:
            if version == MODERN:
                client.use_modern()
            else:
                client.initialize(version)
            assert len(client.result("tools/list")["tools"]) == 4
            for name, arguments in _canary_calls(canary.url):
                client.call_tool(name, arguments)
            client.result("resources/read", {"uri": "canary://schema"})
            assert client.close() == 0
            client.assert_all_valid(version)
    assert canary.hits == []


def test_the_canary_counts(canary: Canary) -> None:
    import urllib.request

    with contextlib.closing(urllib.request.urlopen(canary.url + "/probe", timeout=5)) as response:
        assert response.read() == b'{"type": "string"}'
    assert canary.hits == ["GET /probe"]
