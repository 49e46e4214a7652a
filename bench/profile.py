"""Where the microseconds go: toolkit's stdio and HTTP call paths under cProfile, line item by line item.

    .venv/bin/python -m bench.profile [--calls N] [--transport stdio,http] [--era legacy,modern]
                                      [--servers toolkit,floor,gateway-http,gateway-stdio] [--out PATH]
                                      [--top K] [--keep-profiles DIR]

For each server x transport x era, the benchmark server (``bench/servers/toolkit_server.py
--workload items`` or ``bench/servers/floor_server.py``) is started twice and driven by one
client making sequential ``tools/call get_items`` requests (stdio: one pipe; HTTP: one keep-alive
connection), every answer checked (the right id, no error, ``structuredContent`` = the ten items).
``mounted`` is toolkit's server with the tool in a child server mounted under ``shop`` (``--mount
shop``, the ``compose`` scenario's), called as ``shop_get_items``.
``gateway-http`` and ``gateway-stdio`` profile toolkit's gateway instead (``bench/servers/
toolkit_gateway.py``, ``Server.proxy``, as the ``compose`` scenario runs it) in front of the same
toolkit server: an upstream process of its own serving HTTP (started first, not profiled), or the
gateway's own stdio child. The gateway is the profiled process; the upstream's CPU is not in its
figures.

1. **plainly**, as the benchmark starts it: the server's CPU time (user + system, its process CPU
   clock; ``/proc/PID/stat`` as a fallback, see ``bench.procs.cpu_seconds``) read before and after
   N calls that follow a warm-up. That is the measured CPU per call.
2. **under cProfile**: the same command run through ``WRAPPER`` (written next to the profiles as
   ``profile_wrapper.py``): ``cProfile.Profile()`` enabled, then ``runpy.run_path(server,
   run_name="__main__")``. After the same warm-up the driver sends SIGUSR2 (the server notes its
   profile so far), then the same N calls, then SIGUSR1 (the server writes its profile and ends
   with ``os._exit(0)``; a dump on SIGTERM does not work, uvicorn's exit path kills the process
   first). The profile of the N calls is the second snapshot minus the first: start-up, imports
   and warm-up are left out.

The profile's **self time** (tottime) per function is summed into the line items of ``LINE_ITEMS``
by where the function lives (its file, or a C function's name), first match wins. Generic helpers
(C builtins such as ``isinstance`` or ``dict.get``, and standard-library modules other than
asyncio, selectors and json) are charged to the line item of whoever called them, split by the
self time the profile recorded per caller. Time blocked waiting for the client (``epoll.poll``,
the floor's blocking ``readline``) and the wrapper's own bookkeeping are shown apart, not in the
CPU total.

Each line item is reported as **a proportional attribution**: its share of the profile's CPU
total x the CPU per call measured without the profiler. cProfile adds a roughly constant cost to
every Python and C function call it sees, so many small Python calls are inflated more than a few
large native ones (a pydantic-core ``to_json``, a ``send`` syscall): the shares lean towards
Python-heavy line items. The figures say where the time goes and in what order of magnitude,
not to the microsecond. (py-spy, a sampling profiler without that bias, cannot attach to a
process on this machine: "Failed to find python version from target process".)
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import itertools
import json
import marshal
import os
import platform
import re
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import procs
from bench.driver import (
    ACCEPT_BOTH,
    CLIENT_INFO,
    LEGACY_VERSION,
    MODERN_META,
    MODERN_VERSION,
    ProtocolError,
    check_items_result,
)
from bench.jwks import JwksServer
from bench.run import server_env

ROOT = Path(__file__).resolve().parent.parent
TOOLKIT_SERVER = [str(ROOT / "bench" / "servers" / "toolkit_server.py"), "--workload", "items"]
GATEWAY = [str(ROOT / "bench" / "servers" / "toolkit_gateway.py")]
SERVERS = {
    "toolkit": TOOLKIT_SERVER,
    "mounted": [*TOOLKIT_SERVER, "--mount", "shop"],  # get_items in a child server mounted under "shop"
    "floor": [str(ROOT / "bench" / "servers" / "floor_server.py")],
    "gateway-http": GATEWAY,  # toolkit's gateway in front of a toolkit server over HTTP
    "gateway-stdio": GATEWAY,  # ... in front of a toolkit server it starts over stdio
    "auth-same": TOOLKIT_SERVER,  # toolkit's server with JWTVerifier (HTTP only): one token on every request
    "auth-fresh": TOOLKIT_SERVER,  # ... a token it has never seen on every request (the `auth` scenario's)
}
AUTH_SERVERS = ("auth-same", "auth-fresh")
TOOLS = {"mounted": "shop_get_items"}  # the tool each server is called with, get_items if not named here
TRANSPORTS = ("stdio", "http")
ERAS = ("legacy", "modern")
DEFAULT_OUT = ROOT / "bench" / "results" / "profile-latest.json"

# --- the line items ------------------------------------------------------------------------------


@dataclass(frozen=True)
class LineItem:
    """One row of the report: the functions whose self time it sums.

    ``files``: regular expressions searched in a Python function's file path (pstats' key
    ``(file, line, name)``); ``builtins``: searched in a C function's name (its file is ``~``, its
    name e.g. ``<method 'to_json' of ...>`` or ``<built-in method pydantic_core._pydantic_core.to_json>``).
    ``excluded``: shown apart, not in the CPU total: wall time spent waiting for the client (mostly idle:
    the syscall's own CPU is a small part of it), or the profiling wrapper's own bookkeeping.
    """

    label: str
    files: tuple[str, ...] = ()
    builtins: tuple[str, ...] = ()
    excluded: bool = False


CALLER = "(charged to the caller)"  # not a row: the time goes to the line item of the calling function
OTHER = "other"
STDLIB = r"/lib/python3\.\d+/(?!site-packages/)"  # the standard library's own files

# First match wins: order matters where patterns overlap (the toolkit catch-all, STDLIB, OTHER).
LINE_ITEMS: tuple[LineItem, ...] = (
    LineItem("waiting in epoll (idle, not CPU)", builtins=(r"'poll' of 'select\.epoll'",), excluded=True),
    LineItem("waiting in blocking stdin readline (idle, not CPU)", builtins=(r"'readline' of '_io\.",), excluded=True),
    LineItem(
        "profiler bookkeeping (the wrapper's snapshots)",
        files=(r"/profile_wrapper\.py$",),
        builtins=(r"_lsprof\.",),
        excluded=True,
    ),
    LineItem("socket send/recv", builtins=(r"of '_socket\.socket' objects",)),
    LineItem("pipe read/write (stdio syscalls)", builtins=(r"posix\.(read|write)>", r"'(read|write|flush)' of '_io\.")),
    LineItem(
        "uvicorn + httptools (HTTP parsing, ASGI plumbing)",
        files=(r"/uvicorn/", r"/httptools/"),
        builtins=("httptools",),
    ),
    LineItem(
        "asyncio event loop + selectors (Python and C halves)",
        files=(r"/asyncio/", r"/selectors\.py$"),
        # The C half of asyncio (Task steps run inside Context.run, Futures, the timer heap).
        builtins=(r"_asyncio\b", r"'_contextvars\.Context'", r"_contextvars\.copy_context", r"_heapq\.", r"select\."),
    ),
    LineItem("starlette / anyio", files=(r"/starlette/", r"/anyio/")),
    LineItem("toolkit transport (_transports/*)", files=(r"/toolkit/_transports/",)),
    LineItem(
        "toolkit engine (_engine, _calls, _inbound, _session, _context, _registry, _extensions/*, _mrtr)",
        files=(r"/toolkit/_(engine|calls|inbound|session|context|registry|mrtr)\.py$", r"/toolkit/_extensions/"),
    ),
    LineItem("toolkit compat + content (_compat/*, _content)", files=(r"/toolkit/_compat/", r"/toolkit/_content\.py$")),
    LineItem(
        "toolkit JSON-RPC framing (_jsonrpc, _methods, _headers)",
        files=(r"/toolkit/_(jsonrpc|methods|headers)\.py$",),
    ),
    LineItem(
        "toolkit tools (_tools, _functions, _schema/*)",
        files=(r"/toolkit/_(tools|functions)\.py$", r"/toolkit/_schema/"),
    ),
    LineItem("toolkit client (_client/*: session, HTTP/1.1 and stdio transports)", files=(r"/toolkit/_client/",)),
    LineItem("toolkit proxy (_sources/*, _compose)", files=(r"/toolkit/_sources/", r"/toolkit/_compose\.py$")),
    LineItem("toolkit, other modules (_answers, _server, _versions, ...)", files=(r"/(src|site-packages)/toolkit/",)),
    LineItem(
        "pydantic-core (to_json/from_json/serializers/validators)",
        files=(r"/pydantic_core/",),
        builtins=("pydantic_core",),
    ),
    LineItem("pydantic (Python layer)", files=(r"/pydantic/",)),
    LineItem("jsonschema_rs (argument validation)", files=(r"/jsonschema_rs/",), builtins=("jsonschema_rs",)),
    LineItem("json stdlib", files=(r"/json/",), builtins=(r"_json\.",)),
    LineItem("the tool itself (bench/servers/workloads.py)", files=(r"/bench/servers/workloads\.py$",)),
    LineItem("floor server code", files=(r"/bench/servers/floor_server\.py$",)),
    # Generic helpers: any other C function (isinstance, dict.get, str.encode, ...), any other
    # standard-library module (re, enum, typing, logging, urllib, contextlib, _weakrefset, ...), frozen
    # stdlib modules, and code generated by exec (dataclasses' __init__, __eq__, ...: file "<string>").
    LineItem(CALLER, files=(STDLIB, r"^<string>$", r"^<frozen "), builtins=("",)),
    LineItem(OTHER, files=("",)),  # whatever is left: other packages, or a helper whose caller is unknown
)

# How often some telling functions run per request: (label, file regex or "~" for a C function, name regex).
COUNTED: tuple[tuple[str, str, str], ...] = (
    ("_run_once (loop iterations)", r"/asyncio/base_events\.py$", r"^_run_once$"),
    ("create_task", r"/asyncio/base_events\.py$", r"^create_task$"),
    ("call_soon", r"/asyncio/base_events\.py$", r"^call_soon$"),
    ("call_later", r"/asyncio/base_events\.py$", r"^call_later$"),
    ("socket.send", "~", r"'send' of '_socket\.socket'"),
    ("socket.recv", "~", r"'recv' of '_socket\.socket'"),
    ("os.read", "~", r"posix\.read>"),
    ("os.write", "~", r"posix\.write>"),
)

CAVEAT = (
    "Proportional attribution: each line item = its share of the profile's self time (CPU items only) x the\n"
    "server CPU/call measured without the profiler. cProfile's own overhead inflates many small Python calls\n"
    "more than a few large native ones (pydantic-core, syscalls), so Python-heavy items lean high. Its clock is\n"
    "wall time: syscalls (send, write) include waking the client and any preemption, and vary the most."
)

# The profiled server. The profiler runs from the start; SIGUSR2 (after the warm-up) and SIGUSR1 (after
# the measured calls) each take a snapshot of it while it keeps running, so the frames active all along
# (the serving loop) stay known as callers. SIGUSR1 then writes both snapshots, pstats tables, and ends
# the process; the measured calls' profile is the second minus the first (``window``). The garbage
# collector is off while the profiler's entries are listed: a finalizer run by a collection would be
# profiled and reorder the very tree being walked. Functions with the same pstats key (dataclasses'
# generated ``<string>:2(__init__)``, for one) are summed, where cProfile would keep only one of them.
WRAPPER = """\
import cProfile, gc, marshal, os, runpy, signal, sys
out, server = sys.argv[1], sys.argv[2]
profiler = cProfile.Profile()
warmup = []

def entries():
    gc.disable()
    listed = profiler.getstats()
    gc.enable()
    return listed

def table(listed):
    stats = {}
    for entry in listed:
        key = cProfile.label(entry.code)
        cc, nc, tt, ct, callers = stats.get(key, (0, 0, 0.0, 0.0, {}))
        primitive = entry.callcount - entry.reccallcount
        stats[key] = (cc + primitive, nc + entry.callcount, tt + entry.inlinetime, ct + entry.totaltime, callers)
    for entry in listed:
        caller = cProfile.label(entry.code)
        for sub in entry.calls or ():
            callee = stats.get(cProfile.label(sub.code))
            if callee is not None:
                nc, cc, tt, ct = callee[4].get(caller, (0, 0, 0.0, 0.0))
                primitive = sub.callcount - sub.reccallcount
                callee[4][caller] = (nc + sub.callcount, cc + primitive, tt + sub.inlinetime, ct + sub.totaltime)
    return stats

def write(path, stats):
    with open(path, "wb") as file:
        marshal.dump(stats, file)

def warmed_up(signum, frame):
    warmup[:] = entries()
    open(out + ".marked", "w").close()

def dump(signum, frame):
    end = entries()
    profiler.disable()
    write(out + ".warmup", table(warmup))
    write(out + ".tmp", table(end))
    os.rename(out + ".tmp", out)
    os._exit(0)

signal.signal(signal.SIGUSR2, warmed_up)
signal.signal(signal.SIGUSR1, dump)
sys.argv = sys.argv[2:]
sys.path[0] = os.path.dirname(os.path.abspath(server))
profiler.enable()
runpy.run_path(server, run_name="__main__")
"""

TIMEOUT = 60.0  # seconds: one request, a server's start, a profile's dump
SETTLE = 0.1  # seconds of quiet before the CPU clock is read or a snapshot taken

Json = dict[str, Any]
Key = tuple[str, int, str]  # pstats: (file, line, function name)
# pstats' table: key -> (primitive calls, calls, self time, cumulative time, {caller: (calls, primitive
# calls, self time, cumulative time) of the calls from that caller}); times in seconds.
Stats = dict[Key, tuple[int, int, float, float, dict[Key, tuple[int, int, float, float]]]]

# --- the client ----------------------------------------------------------------------------------


def _answer(message: Any, request_id: int, method: str) -> Json:
    if not isinstance(message, dict) or message.get("id") != request_id:
        raise ProtocolError(f"{method}: expected a response with id {request_id}, got {str(message)[:300]}")
    if "error" in message or not isinstance(message.get("result"), dict):
        raise ProtocolError(f"{method}: {json.dumps(message)[:500]}")
    result: Json = message["result"]
    return result


class Client:
    """One client of one server in one era: ``open`` (handshake or discover), then ``call`` get_items."""

    def __init__(self, era: str, tool: str = "get_items") -> None:
        self.era = era
        self.next_id = 0
        meta = {"_meta": MODERN_META} if era == "modern" else {}
        self.call_params = {"name": tool, "arguments": {}, **meta}

    def open(self) -> None:
        if self.era == "legacy":
            params = {"protocolVersion": LEGACY_VERSION, "capabilities": {}, "clientInfo": CLIENT_INFO}
            self.request("initialize", params)
            self.notify("notifications/initialized")
        else:
            result = self.request("server/discover", {"_meta": MODERN_META})
            if MODERN_VERSION not in result.get("supportedVersions", []):
                raise ProtocolError(f"server/discover does not list {MODERN_VERSION}: {result}")

    def call(self) -> None:
        check_items_result(self.request("tools/call", self.call_params))

    def request(self, method: str, params: Json) -> Json:
        self.next_id += 1
        body = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return _answer(self.exchange(body.encode(), self.next_id, method, params), self.next_id, method)

    def notify(self, method: str) -> None:
        raise NotImplementedError

    def exchange(self, body: bytes, request_id: int, method: str, params: Json) -> Any:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError


class StdioClient(Client):
    """Newline-delimited JSON over the server's stdin/stdout; lines that are not the response are skipped."""

    def __init__(self, process: subprocess.Popen[bytes], era: str, tool: str = "get_items") -> None:
        super().__init__(era, tool)
        assert process.stdin is not None
        assert process.stdout is not None
        self.process = process
        self.stdin = process.stdin.fileno()
        self.stdout = process.stdout.fileno()
        self.buffer = bytearray()

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self.stdin, view) :]

    def read_line(self) -> bytes:
        deadline = time.monotonic() + TIMEOUT
        while (newline := self.buffer.find(b"\n")) < 0:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([self.stdout], [], [], remaining)[0]:
                raise TimeoutError(f"no answer within {TIMEOUT:.0f} s")
            chunk = os.read(self.stdout, 1 << 20)
            if not chunk:
                raise ProtocolError(f"the server closed stdout (exit code {self.process.poll()})")
            self.buffer += chunk
        line = bytes(self.buffer[:newline])
        del self.buffer[: newline + 1]
        return line

    def notify(self, method: str) -> None:
        self.write(json.dumps({"jsonrpc": "2.0", "method": method}).encode() + b"\n")

    def exchange(self, body: bytes, request_id: int, method: str, params: Json) -> Any:
        self.write(body + b"\n")
        while True:
            message = json.loads(self.read_line())
            if isinstance(message, dict) and message.get("id") == request_id and "method" not in message:
                return message

    def close(self) -> None:
        if self.process.stdin is not None:
            with contextlib.suppress(OSError):
                self.process.stdin.close()  # EOF: the server's cue to exit


class HttpClient(Client):
    """Streamable HTTP on one keep-alive connection (``http.client``); JSON or SSE answers."""

    def __init__(self, port: int, era: str, tool: str = "get_items", tokens: Iterator[str] | None = None) -> None:
        super().__init__(era, tool)
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
        self.headers = {"Content-Type": "application/json", "Accept": ACCEPT_BOTH}
        if era == "modern":
            self.headers["MCP-Protocol-Version"] = MODERN_VERSION
        self.tokens = tokens  # a bearer token for each request (the auth servers)

    def post(self, body: bytes, headers: dict[str, str]) -> tuple[http.client.HTTPResponse, bytes]:
        if self.tokens is not None:
            headers = {**headers, "Authorization": f"Bearer {next(self.tokens)}"}
        self.connection.request("POST", "/mcp", body, {**self.headers, **headers})
        response = self.connection.getresponse()
        return response, response.read()

    def notify(self, method: str) -> None:
        response, _ = self.post(json.dumps({"jsonrpc": "2.0", "method": method}).encode(), {})
        if response.status != 202:
            raise ProtocolError(f"{method}: HTTP {response.status}")

    def exchange(self, body: bytes, request_id: int, method: str, params: Json) -> Any:
        headers = {}
        if self.era == "modern":
            headers["Mcp-Method"] = method
            if method == "tools/call":
                headers["Mcp-Name"] = params["name"]
        response, payload = self.post(body, headers)
        if response.status != 200:
            raise ProtocolError(f"{method}: HTTP {response.status} {payload[:300]!r}")
        if method == "initialize":
            session = response.getheader("mcp-session-id")
            if not session:
                raise ProtocolError("initialize: no Mcp-Session-Id")
            self.headers |= {"Mcp-Session-Id": session, "MCP-Protocol-Version": LEGACY_VERSION}
        if (response.getheader("content-type") or "").startswith("text/event-stream"):
            return _from_event_stream(payload.decode(), request_id)
        return json.loads(payload)

    def close(self) -> None:
        self.connection.close()


def _from_event_stream(text: str, request_id: int) -> Any:
    """The message with ``request_id`` among an SSE body's events."""
    for event in re.split(r"\r?\n\r?\n", text):
        data = "\n".join(line[5:].lstrip(" ") for line in event.splitlines() if line.startswith("data:"))
        if data:
            message = json.loads(data)
            if isinstance(message, dict) and message.get("id") == request_id:
                return message
    raise ProtocolError(f"no response with id {request_id} in the event stream: {text[:300]}")


# --- servers ---------------------------------------------------------------------------------------


class Server:
    """One server process (its own process group), always stopped by ``close``."""

    def __init__(
        self, python: str, name: str, transport: str, log: Path, profile: Path | None, requests: int = 0
    ) -> None:
        self.transport = transport
        self.name = name
        self.tool = TOOLS.get(name, "get_items")
        self.port = procs.free_port() if transport == "http" else 0
        argv = [*SERVERS[name], "--transport", transport]
        if transport == "http":
            argv += ["--port", str(self.port)]
        self.profile = profile
        self.upstream: Server | None = None
        env = server_env()  # what bench/run.py gives its servers
        if name == "gateway-http":
            self.upstream = Server(python, "toolkit", "http", log.with_suffix(".upstream.log"), None)
            try:
                self.upstream.wait_listening()
            except BaseException:
                self.upstream.close()
                raise
            env["BENCH_UPSTREAM"] = f"http://127.0.0.1:{self.upstream.port}/mcp"
        elif name == "gateway-stdio":
            env["BENCH_UPSTREAM"] = json.dumps([python, *TOOLKIT_SERVER, "--transport", "stdio"])
        self.jwks: JwksServer | None = None
        self.tokens: list[str] = []
        if name in AUTH_SERVERS:
            self.jwks = JwksServer()
            env |= self._auth_env(python, log, requests)
        command = [python, *argv]
        if profile is not None:
            wrapper = profile.with_name("profile_wrapper.py")  # a file of its own: LINE_ITEMS knows its path
            wrapper.write_text(WRAPPER)
            command = [python, str(wrapper), str(profile), *argv]
        self.log = log
        with open(log, "ab") as stderr:
            self.process = subprocess.Popen(
                command,
                stdin=subprocess.PIPE if transport == "stdio" else subprocess.DEVNULL,
                stdout=subprocess.PIPE if transport == "stdio" else stderr,
                stderr=stderr,
                env=env,
                cwd=ROOT,
                start_new_session=True,
            )

    def _auth_env(self, python: str, log: Path, requests: int) -> dict[str, str]:
        """Keys and tokens as the `auth` scenario makes them (bench/servers/auth_tokens.py), the key
        set served by a JwksServer; the server's BENCH_AUTH_* variables."""
        assert self.jwks is not None
        audience = f"http://127.0.0.1:{self.port}/mcp"
        keys = log.with_suffix(".keys")
        script = ROOT / "bench" / "servers" / "auth_tokens.py"
        count = requests if self.name == "auth-fresh" else 0
        argv = [python, str(script), str(keys), "--audience", audience, "--issuer", self.jwks.issuer]
        subprocess.run([*argv, "--count", str(count)], check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
        self.jwks.document = (keys / "jwks.json").read_bytes()
        made = json.loads((keys / "tokens.json").read_text())
        self.tokens = made["fresh"] if self.name == "auth-fresh" else [made["token"]]
        return {
            "BENCH_AUTH_JWKS": self.jwks.uri,
            "BENCH_AUTH_ISSUER": self.jwks.issuer,
            "BENCH_AUTH_AUDIENCE": audience,
        }

    def client(self, era: str) -> Client:
        if self.transport == "stdio":
            return StdioClient(self.process, era, self.tool)
        self.wait_listening()
        tokens = None
        if self.jwks is not None:
            tokens = iter(self.tokens) if self.name == "auth-fresh" else itertools.repeat(self.tokens[0])
        return HttpClient(self.port, era, self.tool, tokens)

    def wait_listening(self) -> None:
        deadline = time.monotonic() + TIMEOUT
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"the server exited with code {self.process.returncode}: {self.log_tail()}")
            try:
                with contextlib.closing(http.client.HTTPConnection("127.0.0.1", self.port, timeout=1)) as probe:
                    probe.connect()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"nothing listened on port {self.port}: {self.log_tail()}") from None
                time.sleep(0.02)

    def warmed_up(self) -> None:
        """SIGUSR2: the server notes its profile so far (start-up and warm-up), to be subtracted."""
        assert self.profile is not None
        marked = self.profile.with_name(self.profile.name + ".marked")
        os.kill(self.process.pid, signal.SIGUSR2)
        deadline = time.monotonic() + TIMEOUT
        while not marked.exists():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the profiled server did not take its warm-up snapshot: {self.log_tail()}")
            time.sleep(0.005)

    def finish(self) -> Stats:
        """SIGUSR1: the server writes both snapshots and exits; the profile of what came in between."""
        assert self.profile is not None
        os.kill(self.process.pid, signal.SIGUSR1)
        try:
            code = self.process.wait(TIMEOUT)
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"the profiled server did not exit after SIGUSR1: {self.log_tail()}") from None
        if code != 0 or not self.profile.exists():
            raise RuntimeError(f"the profiled server exited with {code} and no profile: {self.log_tail()}")
        with (
            open(self.profile, "rb") as end,
            open(self.profile.with_name(self.profile.name + ".warmup"), "rb") as start,
        ):
            return window(marshal.load(end), marshal.load(start))

    def log_tail(self) -> str:
        with contextlib.suppress(OSError):
            return self.log.read_text(errors="replace")[-2000:]
        return ""

    def close(self) -> None:
        """Close stdin (a stdio server's cue to exit), then SIGTERM, then SIGKILL; its group too; then
        the upstream a gateway was given."""
        try:
            self._close()
        finally:
            if self.jwks is not None:
                self.jwks.close()
            if self.upstream is not None:
                self.upstream.close()

    def _close(self) -> None:
        process = self.process
        if process.stdin is not None:
            with contextlib.suppress(OSError):
                process.stdin.close()
        if process.stdout is not None:
            process.stdout.close()
        if process.poll() is None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(0.5 if self.transport == "stdio" else 0.01)
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(3)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)  # anything it left behind in its group


# --- one configuration -----------------------------------------------------------------------------


@dataclass
class Run:
    cpu_us: float  # server CPU per call
    wall_us: float  # the client's wall time per call
    stats: Stats | None = None  # profiled: the measured calls' profile


def window(after: Stats, before: Stats) -> Stats:
    """The profile of what happened between two snapshots: ``after`` minus ``before``, per function
    and per (caller, function) pair. Calls still running at a snapshot count in neither."""
    nothing = (0, 0, 0.0, 0.0, {})
    result: Stats = {}
    for key, (cc, nc, tt, ct, callers) in after.items():
        b_cc, b_nc, b_tt, b_ct, b_callers = before.get(key, nothing)
        edges = {}
        for caller, edge in callers.items():
            earlier = b_callers.get(caller, (0, 0, 0.0, 0.0))
            if edge[0] > earlier[0]:
                edges[caller] = (edge[0] - earlier[0], edge[1] - earlier[1], edge[2] - earlier[2], edge[3] - earlier[3])
        if nc > b_nc:
            result[key] = (cc - b_cc, nc - b_nc, tt - b_tt, ct - b_ct, edges)
    return result


def drive(server: Server, era: str, calls: int, warmup: int) -> Run:
    """Open a session, warm up, then N measured calls (profiled: between SIGUSR2 and SIGUSR1)."""
    client = server.client(era)
    try:
        client.open()
        for _ in range(warmup):
            client.call()
        time.sleep(SETTLE)
        if server.profile is not None:
            server.warmed_up()
        cpu0, t0 = procs.cpu_seconds(server.process.pid), time.perf_counter()
        for _ in range(calls):
            client.call()
        wall = time.perf_counter() - t0
        time.sleep(SETTLE)  # let the last request's tail (after its response was sent) finish
        cpu = procs.cpu_seconds(server.process.pid) - cpu0
        stats = server.finish() if server.profile is not None else None
    finally:
        client.close()
    return Run(cpu / calls * 1e6, wall / calls * 1e6, stats)


def measure(python: str, name: str, transport: str, era: str, calls: int, warmup: int, work: Path) -> tuple[Run, Run]:
    """The plain run, then the profiled one."""
    runs = []
    for profiled in (False, True):
        tag = f"{name}-{transport}-{era}-{'profiled' if profiled else 'plain'}"
        profile = work / f"{tag}.raw" if profiled else None
        server = Server(python, name, transport, work / f"{tag}.log", profile, requests=calls + warmup + 4)
        try:
            runs.append(drive(server, era, calls, warmup))
        finally:
            server.close()
    if runs[1].stats is not None:  # the measured calls alone, for pstats: pstats.Stats(path)
        with open(work / f"{name}-{transport}-{era}.prof", "wb") as file:
            marshal.dump(runs[1].stats, file)
    return runs[0], runs[1]


# --- attribution -----------------------------------------------------------------------------------

_COMPILED = [(item, [re.compile(p) for p in item.files], [re.compile(p) for p in item.builtins]) for item in LINE_ITEMS]
EXCLUDED_LABELS = [item.label for item in LINE_ITEMS if item.excluded]
CPU_LABELS = [item.label for item in LINE_ITEMS if not item.excluded and item.label != CALLER]


def classify(key: Key) -> str:
    """The line item of a pstats key (or ``CALLER``)."""
    file, _, name = key
    builtin = file == "~"
    path = file.replace("\\", "/")
    for item, files, builtins in _COMPILED:
        patterns = builtins if builtin else files
        if any(pattern.search(name if builtin else path) for pattern in patterns):
            return item.label
    return OTHER


def describe(key: Key) -> str:
    """A short name for a function: ``pkg/module.py:line(name)``, or the C function's name."""
    file, line, name = key
    if file == "~":
        return name.strip("<>").replace("built-in method ", "")
    short = file.replace("\\", "/").replace(str(ROOT) + "/", "")
    short = re.sub(r"^.*/site-packages/|^src/|^.*/lib/python3\.\d+/", "", short)
    return f"{short}:{line}({name})"


def attribute(table: Stats) -> tuple[dict[str, float], dict[str, dict[Key, float]]]:
    """Seconds of self time per line item, and per line item per function that contributed.

    A ``CALLER`` function's self time is split among its callers by the self time the profile
    recorded for each caller (by call count when that is zero), recursively up to a few levels.
    """
    totals: dict[str, float] = defaultdict(float)
    contributors: dict[str, dict[Key, float]] = defaultdict(lambda: defaultdict(float))

    def charge(key: Key, origin: Key, amount: float, depth: int) -> None:
        label = classify(key)
        if label != CALLER:
            totals[label] += amount
            contributors[label][origin] += amount
            return
        callers = {caller: value for caller, value in table.get(key, (0, 0, 0, 0, {}))[4].items() if caller != key}
        weights = {caller: value[2] for caller, value in callers.items()}
        if sum(weights.values()) <= 0:
            weights = {caller: value[0] for caller, value in callers.items()}
        total = sum(weights.values())
        if depth >= 6 or total <= 0:
            totals[OTHER] += amount
            contributors[OTHER][origin] += amount
            return
        for caller, weight in weights.items():
            if weight > 0:
                charge(caller, origin, amount * weight / total, depth + 1)

    for key, (_, _, tottime, _, _) in table.items():
        if tottime > 0:
            charge(key, key, tottime, 0)
    return totals, contributors


def count_calls(table: Stats) -> dict[str, int]:
    counts = dict.fromkeys((label for label, _, _ in COUNTED), 0)
    for label, file_pattern, name_pattern in COUNTED:
        for (file, _, name), (_, ncalls, _, _, _) in table.items():
            in_file = file == "~" if file_pattern == "~" else file != "~" and re.search(file_pattern, file)
            if in_file and re.search(name_pattern, name):
                counts[label] += ncalls
    return counts


def analyse(name: str, transport: str, era: str, calls: int, plain: Run, profiled: Run, top: int) -> Json:
    """The JSON record of one configuration."""
    assert profiled.stats is not None
    totals, contributors = attribute(profiled.stats)
    cpu_total = sum(totals[label] for label in CPU_LABELS)
    scale = plain.cpu_us / cpu_total if cpu_total > 0 else 0.0  # µs per call per second of profile

    def top_of(label: str) -> list[Json]:
        ranked = sorted(contributors[label].items(), key=lambda pair: -pair[1])[:top]
        return [{"function": describe(key), "us_per_call": round(seconds * scale, 3)} for key, seconds in ranked]

    items = {
        label: {
            "us_per_call": round(totals[label] * scale, 3),
            "share": round(totals[label] / cpu_total, 5) if cpu_total > 0 else 0.0,
            "top": top_of(label),
        }
        for label in CPU_LABELS
    }
    table = profiled.stats
    functions = sorted(
        ((key, value[2]) for key, value in table.items() if classify(key) not in EXCLUDED_LABELS),
        key=lambda pair: -pair[1],
    )[:top]
    return {
        "server": name,
        "transport": transport,
        "era": era,
        "calls": calls,
        "cpu_us_per_call": round(plain.cpu_us, 3),
        "wall_us_per_call": round(plain.wall_us, 3),
        "profiled_cpu_us_per_call": round(profiled.cpu_us, 3),
        "profiled_wall_us_per_call": round(profiled.wall_us, 3),
        "profile_self_time_us_per_call": round(cpu_total / calls * 1e6, 3),
        "items": items,
        "excluded": {
            label: {"profiled_wall_us_per_call": round(totals[label] / calls * 1e6, 3)} for label in EXCLUDED_LABELS
        },
        "calls_per_request": {label: round(n / calls, 3) for label, n in count_calls(profiled.stats).items()},
        "top_functions": [
            {
                "function": describe(key),
                "line_item": classify(key),
                "us_per_call": round(seconds * scale, 3),
                "ncalls_per_request": round(table[key][1] / calls, 3),
            }
            for key, seconds in functions
        ],
    }


# --- report ----------------------------------------------------------------------------------------

SHOWN = 0.005  # µs/call: smaller items (the profiler's own signals, say) print as absent
LABEL_WIDTH = max(len(label) for label in CPU_LABELS) + 2


def title(config: Json) -> str:
    return f"{config['server']} · {config['transport']} · {config['era']}"


def table(config: Json) -> str:
    """The readable report of one configuration."""
    cpu, profiled = config["cpu_us_per_call"], config["profiled_cpu_us_per_call"]
    lines = [
        f"== {title(config)}: {config['calls']} calls ==",
        f"server CPU/call: {cpu:.1f} µs unprofiled (wall {config['wall_us_per_call']:.1f} µs/call); "
        f"{profiled:.1f} µs under cProfile (x{profiled / cpu if cpu else 0:.1f})",
        f"  {'line item':<{LABEL_WIDTH}} {'µs/call':>8} {'share':>7}",
    ]
    for label, item in sorted(config["items"].items(), key=lambda pair: -pair[1]["us_per_call"]):
        if item["us_per_call"] >= SHOWN:
            lines.append(f"  {label:<{LABEL_WIDTH}} {item['us_per_call']:8.2f} {item['share'] * 100:6.1f}%")
    total = sum(item["us_per_call"] for item in config["items"].values())
    lines.append(f"  {'total (= measured server CPU/call)':<{LABEL_WIDTH}} {total:8.2f} {100:6.1f}%")
    for label, excluded in config["excluded"].items():
        if (wall := excluded["profiled_wall_us_per_call"]) > 0:
            lines.append(f"  not in the total: {label}: {wall:.1f} µs/call of wall time under cProfile")
    counted = [f"{label} {n:g}" for label, n in config["calls_per_request"].items() if n]
    lines.append("  calls per request: " + (", ".join(counted) or "none of the counted functions"))
    if config["top_functions"]:
        lines.append("  top functions by self time (µs/call, attributed the same way):")
        for function in config["top_functions"]:
            item = function["line_item"] if function["line_item"] != CALLER else "charged to its callers"
            lines.append(f"    {function['us_per_call']:7.2f}  {function['function']}  [{item}]")
    return "\n".join(lines)


def matrix(configs: list[Json]) -> str:
    """Every configuration side by side, one row per line item (µs per call)."""
    width = 11
    heads = [(c["server"], f"{c['transport']}/{c['era'][:3]}") for c in configs]
    lines = [
        f"{'':<{LABEL_WIDTH}}" + "".join(f"{server:>{width}}" for server, _ in heads),
        f"{'µs per call':<{LABEL_WIDTH}}" + "".join(f"{mode:>{width}}" for _, mode in heads),
    ]
    for label in CPU_LABELS:
        values = [c["items"][label]["us_per_call"] for c in configs]
        if any(v >= SHOWN for v in values):
            lines.append(
                f"{label:<{LABEL_WIDTH}}"
                + "".join(f"{v:>{width}.1f}" if v >= SHOWN else f"{'-':>{width}}" for v in values)
            )
    lines.append(
        f"{'= measured server CPU/call':<{LABEL_WIDTH}}"
        + "".join(f"{c['cpu_us_per_call']:>{width}.1f}" for c in configs)
    )
    lines.append(
        f"{'(under cProfile)':<{LABEL_WIDTH}}"
        + "".join(f"{c['profiled_cpu_us_per_call']:>{width}.1f}" for c in configs)
    )
    for label, _, _ in COUNTED:
        values = [c["calls_per_request"][label] for c in configs]
        if any(values):
            lines.append(f"{label + ' / request':<{LABEL_WIDTH}}" + "".join(f"{v:>{width}.2f}" for v in values))
    return "\n".join(lines)


# --- main ------------------------------------------------------------------------------------------


def _choices(value: str, allowed: tuple[str, ...], what: str) -> list[str]:
    chosen = [part.strip() for part in value.split(",") if part.strip()]
    unknown = [part for part in chosen if part not in allowed]
    if unknown or not chosen:
        raise argparse.ArgumentTypeError(f"{what}: choose among {','.join(allowed)}, not {value!r}")
    return chosen


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.profile",
        description="Profile the benchmark servers' call paths with cProfile; report µs per call per line item.",
    )
    parser.add_argument("--calls", type=int, default=5000, help="measured calls per configuration (default 5000)")
    parser.add_argument("--warmup", type=int, default=500, help="calls before measuring (default 500)")
    parser.add_argument("--transport", default="stdio,http", type=lambda v: _choices(v, TRANSPORTS, "--transport"))
    parser.add_argument("--era", default="legacy,modern", type=lambda v: _choices(v, ERAS, "--era"))
    parser.add_argument("--servers", default="toolkit,floor", type=lambda v: _choices(v, tuple(SERVERS), "--servers"))
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"JSON results (default {DEFAULT_OUT})")
    parser.add_argument("--top", type=int, default=5, help="functions listed per configuration and line item")
    parser.add_argument("--keep-profiles", type=Path, metavar="DIR", help="keep the .prof files (and logs) in DIR")
    parser.add_argument("--python", default=None, help="the servers' interpreter (default: .venv/bin/python)")
    args = parser.parse_args(argv)
    if args.calls < 1 or args.warmup < 0:
        parser.error("--calls must be at least 1 and --warmup not negative")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    venv_python = ROOT / ".venv" / "bin" / "python"
    python = args.python or str(venv_python if venv_python.exists() else sys.executable)
    print(f"profiler: cProfile (py-spy cannot attach here); {args.calls} calls after {args.warmup} warm-up each")
    print(CAVEAT)
    configs: list[Json] = []
    with tempfile.TemporaryDirectory(prefix="bench-profile-") as scratch:
        work = args.keep_profiles or Path(scratch)
        work.mkdir(parents=True, exist_ok=True)
        for name in args.servers:
            for transport in args.transport:
                if name in AUTH_SERVERS and transport != "http":
                    continue  # a bearer token is an HTTP header
                for era in args.era:
                    plain, profiled = measure(python, name, transport, era, args.calls, args.warmup, work)
                    config = analyse(name, transport, era, args.calls, plain, profiled, args.top)
                    configs.append(config)
                    print()
                    print(table(config), flush=True)
    print()
    print("== all configurations: µs per call, attributed ==")
    print(matrix(configs))
    print()
    print(CAVEAT)
    results = {
        "profiler": "cProfile",
        "why": "py-spy cannot attach on this machine (Failed to find python version from target process)",
        "attribution": CAVEAT.replace("\n", " "),
        "calls": args.calls,
        "warmup": args.warmup,
        "python": platform.python_version(),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
        "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "line_items": CPU_LABELS,
        "excluded_items": EXCLUDED_LABELS,
        "configurations": configs,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    print(f"results: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
