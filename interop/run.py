#!/usr/bin/env python3
"""Interop runner: real, unmodified MCP client libraries against a toolkit server.

For every client configuration x transport (stdio, Streamable HTTP) it starts the server under
test, runs that client's driver (interop/drivers/) with the plan, and checks what the client
library handed to its user:

  * connect: the handshake/negotiation succeeded in the expected era (protocol version);
  * tools/list: succeeded (the library's own result parsing ran) and lists every planned tool;
  * each planned call: no exception from the library (its own output-schema validation ran), no
    isError, and the value the user gets equals the plan's `expected`:
      - modern era (2026-07-28): structuredContent == expected;
      - legacy era (2025-06-18 .. 2025-11-25): structuredContent == expected when that is an
        object, else structuredContent == {"result": expected} under the documented wrapper
        outputSchema {"type":"object","properties":{"result":...},"required":["result"]};
      - tools without an outputSchema (str returns): the text content equals expected;
      - content[0] is a TextContent whose text parses to JSON equal to expected (non-str tools);
  * planned calls with "error": true come back as an isError result (not an exception/crash).

Then the tasks phase (unless --no-tasks): a second server, examples/long_running.py, and for each
client library that has a task API its driver with --phase tasks, which uses only that API to run
`build_report` as a task (polled statuses, final result == what the function returns), answer the
question `purge_archive` asks through its task, cancel a long `build_report`, and list the tasks.
Libraries without a task API get one "tasks" row marked N/A (counted neither way).

With --gateway the server under test is a toolkit gateway (`toolkit proxy TARGET --unwrap-results`,
or `toolkit run interop/servers/gateway.py:server`) in front of an mcp 1.30.0 FastMCP server
(stdio) or a fastmcp 4.1.6 server (HTTP, started here) serving interop/servers/old_weather.py's
tools, whose INTEROP_PLAN is the plan: the same checks, the text blocks being the upstream's own
(GATEWAYS below). Through a 2024-11-05 session with the upstream no structured output exists, and
the check is that none is made up: no outputSchema, no structuredContent, the upstream's text.

Prints a table (client x transport x check -> PASS/FAIL reason) and closes with the line
`N passed, M failed`; exits 1 on any failure (2 on a harness/setup error). Standard library only.

The plan is `INTEROP_PLAN` from examples/weather.py (imported by file path, in a subprocess with
the project's interpreter), or any JSON / .py file given with --plan. Plan entries:
    {"tool": str, "arguments": dict, "expected": <JSON value the function returns>, "error": bool}
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
INTEROP = ROOT / "interop"
DRIVERS = INTEROP / "drivers"
INSTALL = ROOT / ".interop"

MODERN_VERSION = "2026-07-28"
LEGACY_VERSION = "2025-11-25"
FIRST_STRUCTURED_VERSION = "2025-06-18"

DEFAULT_TARGET = "examples/weather.py:server"


# --------------------------------------------------------------------------------------------
# client configurations


@dataclass(frozen=True)
class ClientConfig:
    key: str  # unique id used by --clients
    label: str  # table label
    env: str  # directory under .interop/
    driver: str  # file under interop/drivers/
    mode: str  # driver --mode
    expect_version: str  # protocol version the connection must end up on
    js: bool = False
    # Tasks: the task API the driver uses with --phase tasks, or None and the reason in no_tasks
    # (the library, read from its installed sources, has no task API: see interop/README.md).
    tasks_api: str | None = None
    no_tasks: str = ""
    # The form of tasks that API speaks on this configuration's connection: LEGACY_VERSION (2025-11-25
    # `params.task`, tasks/get|result|list|cancel) or MODERN_VERSION (the 2026-07-28
    # io.modelcontextprotocol/tasks extension: resultType "task", tasks/get|update|cancel).
    tasks_form: str = LEGACY_VERSION

    def argv(self) -> list[str]:
        if self.js:
            return ["node", str(INSTALL / self.env / self.driver)]
        return [str(INSTALL / self.env / "bin" / "python"), str(DRIVERS / self.driver)]


NO_TASKS_MCP230 = (
    "mcp 2.3.0 (no task API in either form: no ClientSession.experimental, no tasks/* request or "
    "resultType 'task' handling; only the generic ClientExtension/ResultClaim hook)"
)
# @modelcontextprotocol/client 2.4.0 itself has no task API; its tasks package
# @modelcontextprotocol/ext-tasks (pinned in interop/ts-client2) speaks both forms on top of it.
EXT_TASKS = "@modelcontextprotocol/ext-tasks 0.2.2 createTaskSessionFromClient"

CLIENTS: list[ClientConfig] = [
    ClientConfig(
        "py-mcp130",
        "py mcp 1.30.0 (legacy)",
        "py-mcp130",
        "py_mcp130.py",
        "legacy",
        LEGACY_VERSION,
        tasks_api="2025-11-25 tasks: session.experimental",
    ),
    ClientConfig(
        "py-mcp230-modern",
        "py mcp 2.3.0 (modern)",
        "py-mcp230",
        "py_mcp230.py",
        "auto",
        MODERN_VERSION,
        no_tasks=NO_TASKS_MCP230,
    ),
    ClientConfig(
        "py-mcp230-legacy",
        "py mcp 2.3.0 (legacy)",
        "py-mcp230",
        "py_mcp230.py",
        "legacy",
        LEGACY_VERSION,
        no_tasks=NO_TASKS_MCP230,
    ),
    ClientConfig(
        "ts-sdk1",
        "ts sdk 1.32.2 (legacy)",
        "ts-sdk1",
        "ts_sdk1.mjs",
        "legacy",
        LEGACY_VERSION,
        js=True,
        tasks_api="2025-11-25 tasks: client.experimental.tasks",
    ),
    ClientConfig(
        "ts-client2-modern",
        "ts client 2.4.0 (modern)",
        "ts-client2",
        "ts_client2.mjs",
        "auto",
        MODERN_VERSION,
        js=True,
        tasks_api=f"2026-07-28 tasks extension: {EXT_TASKS} (rawDispatch + v2RequestFraming)",
        tasks_form=MODERN_VERSION,
    ),
    # The 2.4.0 client's DEFAULT (no versionNegotiation option) is a plain legacy initialize.
    ClientConfig(
        "ts-client2-legacy",
        "ts client 2.4.0 (default=legacy)",
        "ts-client2",
        "ts_client2.mjs",
        "legacy",
        LEGACY_VERSION,
        js=True,
        tasks_api=f"2025-11-25 tasks: {EXT_TASKS}",
    ),
]
TRANSPORTS = ["stdio", "http"]


# --------------------------------------------------------------------------------------------
# gateway mode (--gateway): the server under test is a toolkit gateway with unwrap_results on, in
# front of a server of another framework that serves interop/servers/old_weather.py's tools


def one_block_per_item(value: Any) -> list[Any]:
    """mcp 1.x FastMCP's text for a value (``_convert_to_content``): a list as one block per item, None as none."""
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def one_block(value: Any) -> list[Any]:
    """fastmcp's text for a value: one block (its JSON, or the str itself); None as none."""
    return [] if value is None else [value]


@dataclass(frozen=True)
class Gateway:
    """One gateway configuration: the server behind it, and how the gateway is run."""

    key: str  # unique id used by --gateway
    label: str  # what is proxied, for the header
    python: Path  # the upstream framework's pinned interpreter
    program: str  # the upstream, a file under interop/servers/
    transport: str  # how the gateway reaches it: "stdio" (spawns it) or "http" (the runner starts it)
    text_blocks: Any  # Callable[[value], list[value]]: the text blocks that framework writes for a value
    text_form: str  # what text_blocks says, for the PASS reason
    protocol: str | None = None  # the gateway's client speaks only this version upstream (None: negotiates)
    file: bool = False  # `toolkit run interop/servers/gateway.py:server` (Server.proxy) instead of `toolkit proxy`
    transports: tuple[str, ...] = tuple(TRANSPORTS)  # the transports the clients reach the gateway by

    @property
    def structured(self) -> bool:
        """Whether the gateway's session with the upstream can carry structured output (2025-06-18 on)."""
        return self.protocol is None or self.protocol >= FIRST_STRUCTURED_VERSION


MCP130_PYTHON = INSTALL / "py-mcp130" / "bin" / "python"
FASTMCP416_PYTHON = INSTALL / "servers" / "py-fastmcp416" / "bin" / "python"
MCP1X_TEXT = "mcp 1.x's text blocks (a list: one per item)"
FASTMCP_TEXT = "fastmcp's text block"
MCP130 = Gateway(
    "mcp130",
    "mcp 1.30.0 FastMCP over stdio",
    MCP130_PYTHON,
    "old_weather_mcp130.py",
    "stdio",
    one_block_per_item,
    MCP1X_TEXT,
)
GATEWAYS: list[Gateway] = [
    MCP130,
    Gateway(
        "fastmcp416",
        "fastmcp 4.1.6 over Streamable HTTP",
        FASTMCP416_PYTHON,
        "old_weather_fastmcp416.py",
        "http",
        one_block,
        FASTMCP_TEXT,
    ),
    # A 2024-era server: the same mcp 1.30.0 server, spoken to in 2024-11-05. That version has no
    # outputSchema and no structuredContent: a gateway can only pass the text on.
    replace(MCP130, key="mcp130-2024", label="mcp 1.30.0 FastMCP over stdio", protocol="2024-11-05"),
    # The same as mcp130, through a gateway file served by `toolkit run` (Server.proxy, as docs/composition.md
    # shows). Over stdio only: what differs from `toolkit proxy` is when a stdio server starts reading.
    replace(MCP130, key="mcp130-file", label="mcp 1.30.0 FastMCP over stdio", file=True, transports=("stdio",)),
]
GATEWAY_FILE = "interop/servers/gateway.py:server"
GATEWAY_PLAN = "interop/servers/old_weather.py"

Row = tuple[str, bool | None, str]  # (check, ok, reason); ok None: not applicable, counted neither way

DEFAULT_TASKS_TARGET = "examples/long_running.py:server"
# The tasks phase against examples/long_running.py. "expected" is what the Python function
# returns (build_report: Report(topic, [f"{topic}: section {n}" ...]); purge_archive after a
# confirm=true answer: f"{archive} purged"); "task_support" is the execution.taskSupport the tool
# must list; "answer" is the content the driver's elicitation handler accepts with.
DEFAULT_TASKS_PLAN: dict[str, dict[str, Any]] = {
    "build": {
        "tool": "build_report",
        "arguments": {"topic": "interop", "sections": 2, "seconds_per_section": 0.2},
        "expected": {"topic": "interop", "sections": ["interop: section 1", "interop: section 2"]},
        "task_support": "optional",
    },
    "purge": {
        "tool": "purge_archive",
        "arguments": {"archive": "old-logs"},
        "answer": {"confirm": True},
        "expected": "old-logs purged",
        "task_support": "required",
    },
    "cancel": {
        "tool": "build_report",
        "arguments": {"topic": "long", "sections": 50, "seconds_per_section": 0.2},
        "task_support": "optional",
    },
}
TERMINAL = {"completed", "failed", "cancelled"}


# --------------------------------------------------------------------------------------------
# JSON comparison


def jeq(a: Any, b: Any) -> bool:
    """Strict JSON equality: bool is not a number; 12 == 12.0 (JavaScript clients drop the '.0')."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(jeq(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(jeq(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def short(v: Any, n: int = 120) -> str:
    s = json.dumps(v, separators=(",", ":"), default=repr) if not isinstance(v, str) else v
    return s if len(s) <= n else s[: n - 3] + "..."


def is_wrapper_schema(schema: Any) -> bool:
    return (
        isinstance(schema, dict)
        and schema.get("type") == "object"
        and isinstance(schema.get("properties"), dict)
        and list(schema["properties"]) == ["result"]
        and schema.get("required") == ["result"]
    )


def era_of(version: str | None) -> str:
    if not version:
        return "unknown"
    if version >= MODERN_VERSION:
        return "modern"
    if version >= FIRST_STRUCTURED_VERSION:
        return "legacy"
    return "pre-structured"


# --------------------------------------------------------------------------------------------
# plan


def load_plan(plan_arg: str | None, python: str) -> tuple[list[dict[str, Any]], str]:
    path = Path(plan_arg) if plan_arg else ROOT / DEFAULT_TARGET.split(":", maxsplit=1)[0]
    if not path.is_absolute():
        path = (Path.cwd() / path) if plan_arg else path
    if not path.exists():
        raise SetupError(f"plan source {path} does not exist (give --plan FILE.json|FILE.py)")
    if path.suffix == ".json":
        plan = json.loads(path.read_text(encoding="utf-8"))
    else:
        code = (
            "import importlib.util, json, sys\n"
            "spec = importlib.util.spec_from_file_location('_interop_plan_source', sys.argv[1])\n"
            "mod = importlib.util.module_from_spec(spec)\n"
            "sys.modules[spec.name] = mod\n"
            "spec.loader.exec_module(mod)\n"
            "plan = getattr(mod, 'INTEROP_PLAN')\n"
            "try:\n"
            "    text = json.dumps(plan)\n"
            "except TypeError:\n"
            "    from pydantic_core import to_jsonable_python\n"
            "    text = json.dumps(to_jsonable_python(plan))\n"
            "sys.stdout.write('\\n@@PLAN@@' + text)\n"
        )
        try:
            proc = subprocess.run(
                [python, "-c", code, str(path)],
                check=False,
                cwd=ROOT,
                env=server_env({}),
                capture_output=True,
                text=True,
                timeout=60,
            )
        except subprocess.TimeoutExpired as e:
            raise SetupError(f"importing {path} for INTEROP_PLAN timed out") from e
        if proc.returncode != 0 or "@@PLAN@@" not in proc.stdout:
            raise SetupError(f"could not import INTEROP_PLAN from {path} with {python}:\n{proc.stderr[-3000:]}")
        plan = json.loads(proc.stdout.rsplit("@@PLAN@@", 1)[1])
    if not isinstance(plan, list) or not plan:
        raise SetupError(f"plan from {path} must be a non-empty list")
    for i, s in enumerate(plan):
        if not isinstance(s, dict) or not isinstance(s.get("tool"), str):
            raise SetupError(f"plan entry {i} must be a dict with a 'tool' string: {s!r}")
        s.setdefault("arguments", {})
        s.setdefault("error", False)
        if not isinstance(s["arguments"], dict):
            raise SetupError(f"plan entry {i} ({s['tool']}): 'arguments' must be a dict")
        if not s["error"] and "expected" not in s:
            raise SetupError(f"plan entry {i} ({s['tool']}): non-error entries need 'expected'")
    return plan, str(path)


def step_labels(plan: list[dict[str, Any]]) -> list[str]:
    labels = []
    for s in plan:
        args = ",".join(f"{k}={short(v, 24)}" for k, v in s["arguments"].items())
        labels.append(f"{s['tool']}({args})" + (" !err" if s["error"] else ""))
    return labels


# --------------------------------------------------------------------------------------------
# processes


class SetupError(Exception):
    pass


def server_env(extra: dict[str, str]) -> dict[str, str]:
    env = dict(os.environ)
    src = str(ROOT / "src")
    env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault("PYTHONUNBUFFERED", "1")
    env.update(extra)
    return env


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def kill_group(proc: subprocess.Popen, grace: float = 5.0) -> None:
    """Stop a process we started in its own session (and its process group)."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(5)


def reap_marked(marker: str) -> list[int]:
    """Kill leftover processes started by this run (they carry INTEROP_RUN_MARK=marker in their
    environment: drivers, and stdio servers that drivers spawned in their own sessions)."""
    needle = f"INTEROP_RUN_MARK={marker}".encode()
    killed = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit() or int(d.name) == os.getpid():
            continue
        try:
            if needle in (d / "environ").read_bytes().split(b"\0"):
                os.kill(int(d.name), signal.SIGKILL)
                killed.append(int(d.name))
        except (OSError, ValueError):
            continue
    return killed


@dataclass
class RunResult:
    client: ClientConfig
    transport: str
    rows: list[Row] = field(default_factory=list)  # ok None: N/A (not counted)
    doc: dict[str, Any] | None = None
    tasks_doc: dict[str, Any] | None = None
    seconds: float = 0.0
    logs: dict[str, str] = field(default_factory=dict)
    leftovers: list[int] = field(default_factory=list)
    gateway: Gateway | None = None  # gateway mode: the gateway configuration under test


def tail(path: Path, n: int = 1500) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")[-n:]
    except OSError:
        return ""


def toolkit_http_argv(cmd: list[str], port: int) -> list[str]:
    return [*cmd, "--transport", "http", "--host", "127.0.0.1", "--port", str(port)]


def start_http_server(
    cmd: list[str],
    workdir: Path,
    marker: str,
    startup: float,
    extra_env: dict[str, str] | None = None,
    argv_for: Any = toolkit_http_argv,  # Callable[[list[str], int], list[str]]: the command listening on a port
    name: str = "server",
) -> tuple[subprocess.Popen, int, Path]:
    last = ""
    for attempt in range(3):
        port = free_port()
        log = workdir / f"{name}-http-{attempt}.log"
        argv = argv_for(cmd, port)
        with open(log, "wb") as lf:
            proc = subprocess.Popen(
                argv,
                cwd=ROOT,
                env=server_env({"INTEROP_RUN_MARK": marker, **(extra_env or {})}),
                stdin=subprocess.DEVNULL,
                stdout=lf,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + startup
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                break
            if port_open(port):
                return proc, port, log
            time.sleep(0.1)
        kill_group(proc)
        last = f"server exited with {proc.returncode}" if proc.returncode is not None else "server did not listen"
        last += f" (port {port}, {startup:.0f}s): {tail(log, 800)}"
        if "address already in use" not in tail(log).lower():
            break
    raise SetupError(last)


def read_doc(path: Path) -> dict[str, Any] | None:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def run_one(
    client: ClientConfig,
    transport: str,
    server_cmd: list[str],
    plan_file: Path,
    plan: Any,  # the plan list, or for phase "tasks" the tasks plan dict
    workdir: Path,
    args: argparse.Namespace,
    url: str | None = None,
    phase: str = "plan",
    gateway: Gateway | None = None,
    extra_env: dict[str, str] | None = None,
) -> RunResult:
    """One driver run. phase "plan": `plan` is the plan list; phase "tasks": `plan` is the tasks plan
    (DEFAULT_TASKS_PLAN's shape), server_cmd the tasks server, and the rows are the task rows.
    `gateway`: server_cmd is that gateway (`extra_env`: what a gateway file is told of its upstream)."""
    rr = RunResult(client, transport, gateway=gateway)
    nr = (lambda p, why: tasks_not_run(p, why, client.tasks_form)) if phase == "tasks" else not_run
    chk = check_tasks if phase == "tasks" else functools.partial(check, gateway=gateway)

    marker = uuid.uuid4().hex
    out = workdir / "driver-output.json"
    driver_log = workdir / "driver-stderr.log"
    rr.logs["driver_stderr"] = str(driver_log)
    t0 = time.monotonic()
    server = None
    try:
        argv = [
            *client.argv(),
            "--transport",
            transport,
            "--mode",
            client.mode,
            "--plan",
            str(plan_file),
            "--timeout",
            str(args.request_timeout),
            "--out",
            str(out),
        ]
        if phase != "plan":
            argv += ["--phase", phase]
        if transport == "stdio":
            argv += [
                "--command",
                json.dumps(server_cmd),
                "--cwd",
                str(ROOT),
                "--server-env",
                f"PYTHONPATH={server_env({})['PYTHONPATH']}",
                "--server-env",
                f"INTEROP_RUN_MARK={marker}",
                *(arg for k, v in (extra_env or {}).items() for arg in ("--server-env", f"{k}={v}")),
            ]
        elif url is not None:  # --url: a server somebody else runs (a load balancer...)
            argv += ["--url", url]
        else:
            try:
                server, port, slog = start_http_server(server_cmd, workdir, marker, args.startup_timeout, extra_env)
                rr.logs["server"] = str(slog)
            except SetupError as e:
                rr.rows = nr(plan, f"HTTP server failed to start: {e}")
                return rr
            argv += ["--url", f"http://127.0.0.1:{port}/mcp"]
        env = dict(os.environ)
        env["INTEROP_RUN_MARK"] = marker
        env.pop("PYTHONPATH", None)  # the driver runs in its own pinned environment
        with open(driver_log, "wb") as lf:
            proc = subprocess.Popen(
                argv,
                cwd=ROOT,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=lf,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            try:
                proc.wait(args.driver_timeout)
            except subprocess.TimeoutExpired:
                kill_group(proc)
                timed_out = f"driver killed after {args.driver_timeout:.0f}s (--driver-timeout)"
                partial = read_doc(out)
                if partial is None or not partial.get("connect", {}).get("ok"):
                    rr.rows = nr(plan, f"{timed_out}; output: {tail(driver_log, 600)!r}")
                else:  # the drivers keep a partial document on disk: judge what did run
                    rr.doc = partial
                    rr.rows = chk(client, partial, plan, missing_reason=timed_out)
                return rr
        if not out.exists():
            rr.rows = nr(plan, f"driver exited {proc.returncode} without output; output: {tail(driver_log, 800)!r}")
            return rr
        rr.doc = read_doc(out)
        if rr.doc is None:
            rr.rows = nr(plan, f"driver exited {proc.returncode} with unreadable output {out}")
            return rr
        rr.rows = chk(client, rr.doc, plan)
        return rr
    finally:
        if server is not None:
            kill_group(server)
        rr.leftovers = reap_marked(marker)
        rr.seconds = time.monotonic() - t0


# --------------------------------------------------------------------------------------------
# checks


def describe_error(e: dict[str, Any] | None) -> str:
    if not e:
        return "unknown error"
    code = f" [{e['code']}]" if "code" in e else ""
    return f"{e.get('type', '?')}{code}: {short(e.get('message', ''), 300)}"


def text_of(result: dict[str, Any]) -> str | None:
    content = result.get("content") or []
    if content and isinstance(content[0], dict) and content[0].get("type") == "text":
        return content[0].get("text")
    return None


def text_is(text: Any, value: Any) -> bool:
    """A text block holds ``value``: the str itself, or its JSON."""
    if not isinstance(text, str):
        return False
    if isinstance(value, str) and text == value:
        return True
    try:
        return jeq(json.loads(text), value)
    except ValueError:
        return False


def check_upstream_text(result: dict[str, Any], expected: Any, gateway: Gateway) -> tuple[bool, str]:
    """Through a gateway the text blocks are the upstream's own, kept as they came (a value the gateway
    unwrapped from one block gets its JSON instead): ``gateway.text_blocks`` says what that framework writes."""
    blocks = result.get("content") or []
    want = gateway.text_blocks(expected)
    if len(blocks) != len(want) or any(not isinstance(b, dict) or b.get("type") != "text" for b in blocks):
        return False, f"content {short(blocks)} is not {gateway.text_form} for {short(expected)}"
    for block, item in zip(blocks, want, strict=True):
        if not text_is(block.get("text"), item):
            return False, f"text block {short(block.get('text'))!r} != {short(item)} ({gateway.text_form})"
    return True, f"text: {gateway.text_form}"


def check_call(
    step: dict[str, Any],
    call: dict[str, Any],
    tool: dict[str, Any] | None,
    era: str,
    gateway: Gateway | None = None,
) -> tuple[bool, str]:
    if step["error"]:
        if not call.get("ok"):
            return False, f"expected an isError result, client raised {describe_error(call.get('error'))}"
        r = call["result"]
        if not r.get("isError"):
            return False, f"expected an isError result, got success: {short(r.get('structuredContent', text_of(r)))}"
        return True, f"isError: {short(text_of(r) or '', 60)}"

    if not call.get("ok"):
        return False, f"client raised {describe_error(call.get('error'))}"
    r = call["result"]
    if r.get("isError"):
        return False, f"tool returned isError: {short(text_of(r) or r.get('content'), 200)}"
    expected = step["expected"]
    schema = tool.get("outputSchema") if tool else None
    text = text_of(r)
    notes: list[str] = []

    if gateway is not None and not gateway.structured:
        # A session in an era without structured output: nothing structured may be made up downstream.
        if schema is not None:
            return False, (
                f"outputSchema {short(schema, 80)} advertised, but the gateway's {gateway.protocol} session "
                "with the upstream carries no structured content"
            )
        if r.get("structuredContentPresent"):
            return False, f"structuredContent {short(r.get('structuredContent'))} from a {gateway.protocol} session"
        ok, why = check_upstream_text(r, expected, gateway)
        return ok, f"no outputSchema, no structuredContent; {why}" if ok else why

    if schema is None or era == "pre-structured":
        # No output schema (str returns), or an era without structured output: the text is the value.
        if gateway is not None:
            return check_upstream_text(r, expected, gateway)
        if text is None:
            return False, f"content[0] is not text: {short(r.get('content'))}"
        if isinstance(expected, str) and text == expected:
            return True, "text content == expected"
        try:
            parsed = json.loads(text)
        except ValueError:
            return False, f"text {short(text)!r} != expected {short(expected)}"
        if jeq(parsed, expected):
            return True, "text content (JSON) == expected"
        return False, f"text {short(text)!r} != expected {short(expected)}"

    if not r.get("structuredContentPresent"):
        return False, "tool has an outputSchema but the client handed over no structuredContent"
    sc = r.get("structuredContent")
    if era == "modern":
        if not isinstance(expected, dict) and (is_wrapper_schema(schema) or schema.get("x-fastmcp-wrap-result")):
            return False, f"modern outputSchema is still a {{result}} wrapper: {short(schema)}"
        if not jeq(sc, expected):
            return False, f"structuredContent {short(sc)} != expected {short(expected)}"
        notes.append("natural")
    else:  # legacy: objects as-is, anything else inside {"result": ...}
        if isinstance(expected, dict) and jeq(sc, expected):
            notes.append("natural object")
        elif (
            is_wrapper_schema(schema)
            and isinstance(sc, dict)
            and list(sc) == ["result"]
            and jeq(sc["result"], expected)
        ):
            notes.append("unwrapped {result}")
        elif not isinstance(sc, dict):
            return False, f"legacy client handed over non-object structuredContent {short(sc)}"
        elif "result" in sc and not is_wrapper_schema(schema):
            return False, f"structuredContent is wrapped but outputSchema is not the wrapper: {short(schema)}"
        else:
            want = expected if isinstance(expected, dict) else {"result": expected}
            return False, f"structuredContent {short(sc)} != {short(want)}"

    if gateway is not None:
        ok, why = check_upstream_text(r, expected, gateway)
        return ok, ", ".join([*notes, why]) if ok else why
    if text is None:
        return False, f"content[0] is not a TextContent: {short(r.get('content'))}"
    try:
        parsed = json.loads(text)
    except ValueError:
        return False, f"text fallback {short(text)!r} is not JSON"
    if not jeq(parsed, expected):
        return False, f"text fallback {short(text)} != expected {short(expected)}"
    notes.append("text ok")
    return True, ", ".join(notes)


def tidy(rows: list[Row]) -> list[Row]:
    """One-line reasons (library error messages are often multi-line)."""
    return [(name, ok, " ".join(why.split())) for name, ok, why in rows]


def not_run(plan: list[dict[str, Any]], reason: str) -> list[Row]:
    """Rows for a run that never got past connecting: every check fails (same row count as a real run)."""
    rows: list[Row] = [("connect", False, reason), ("tools/list", False, "not run: connect failed")]
    rows += [(lab, False, "not run: connect failed") for lab in step_labels(plan)]
    return tidy(rows)


def check(
    client: ClientConfig,
    doc: dict[str, Any],
    plan: list[dict[str, Any]],
    missing_reason: str = "not run by the driver",
    gateway: Gateway | None = None,
) -> list[Row]:
    rows: list[Row] = []
    labels = step_labels(plan)
    version = doc.get("negotiated_protocol_version")
    era = era_of(version)
    if not doc.get("connect", {}).get("ok"):
        return not_run(plan, f"client raised {describe_error(doc['connect'].get('error'))}")
    if version != client.expect_version:
        rows.append(("connect", False, f"negotiated {version!r}, expected {client.expect_version!r}"))
    else:
        rows.append(("connect", True, f"negotiated {version}"))

    lt = doc.get("list_tools", {})
    tools: dict[str, dict[str, Any]] = {}
    if not lt.get("ok"):
        rows.append(("tools/list", False, f"client raised {describe_error(lt.get('error'))}"))
    else:
        tools = {t["name"]: t for t in lt.get("tools", [])}
        missing = sorted({s["tool"] for s in plan} - set(tools))
        if missing:
            rows.append(("tools/list", False, f"missing planned tools: {', '.join(missing)}"))
        else:
            rows.append(("tools/list", True, f"{len(tools)} tools"))

    calls = doc.get("calls", [])
    for i, (step, lab) in enumerate(zip(plan, labels, strict=True)):
        if i >= len(calls):
            rows.append((lab, False, missing_reason))
            continue
        ok, why = check_call(step, calls[i], tools.get(step["tool"]), era, gateway)
        rows.append((lab, ok, why))
    return tidy(rows)


# --------------------------------------------------------------------------------------------
# tasks phase checks


def task_labels(tplan: dict[str, dict[str, Any]], form: str = LEGACY_VERSION) -> list[str]:
    def call(step: dict[str, Any]) -> str:
        return f"{step['tool']}(" + ",".join(f"{k}={short(v, 24)}" for k, v in step["arguments"].items()) + ")"

    answer = ",".join(f"{k}={short(v, 12)}" for k, v in tplan["purge"].get("answer", {}).items())
    return [
        "tasks: extension io.modelcontextprotocol/tasks"
        if form == MODERN_VERSION
        else "tasks: capability + execution.taskSupport",
        f"task {call(tplan['build'])}",
        f"task {tplan['purge']['tool']} + elicitation {answer}",
        f"task cancel {call(tplan['cancel'])}",
        "tasks/list",
    ]


def tasks_not_run(tplan: dict[str, dict[str, Any]], reason: str, form: str = LEGACY_VERSION) -> list[Row]:
    return tidy([(lab, False, reason) for lab in task_labels(tplan, form)])


def related_task_id(meta: Any) -> str | None:
    rel = meta.get("io.modelcontextprotocol/related-task") if isinstance(meta, dict) else None
    return rel.get("taskId") if isinstance(rel, dict) else None


def check_task_flow(rec: dict[str, Any], name: str) -> tuple[bool, str]:
    """Common part of a task that ran to its end: created, polled, completed."""
    if not rec.get("ok"):
        return False, f"client raised {describe_error(rec.get('error'))}"
    if not rec.get("task_id"):
        return False, "the library did not run the call as a task (no CreateTaskResult)"
    statuses = rec.get("statuses") or []
    final = (rec.get("final") or {}).get("status") or (statuses[-1] if statuses else None)
    if final != "completed":
        return False, f"{name} ended {final!r} (statuses polled: {statuses}), expected 'completed'"
    return True, "->".join(statuses) if statuses else "no status polled"


def check_tasks(
    client: ClientConfig,
    doc: dict[str, Any],
    tplan: dict[str, dict[str, Any]],
    missing_reason: str = "not run by the driver",
) -> list[Row]:
    if client.tasks_form == MODERN_VERSION:
        return check_tasks_v2(client, doc, tplan, missing_reason)
    labels = task_labels(tplan)
    if not doc.get("connect", {}).get("ok"):
        return tasks_not_run(tplan, f"client raised {describe_error(doc['connect'].get('error'))}")
    t = doc.get("tasks") or {}
    version = doc.get("negotiated_protocol_version")
    era = era_of(version)
    rows: list[Row] = []

    # 1. the server's declarations, as the library parsed them
    lt = doc.get("list_tools", {})
    tools = {x["name"]: x for x in lt.get("tools", [])} if lt.get("ok") else {}
    problems = []
    if version != client.expect_version:
        problems.append(f"negotiated {version!r}, expected {client.expect_version!r}")
    if not lt.get("ok"):
        problems.append(f"tools/list raised {describe_error(lt.get('error'))}")
    caps = t.get("capabilities_tasks")
    if not (isinstance(caps, dict) and isinstance(caps.get("requests", {}).get("tools", {}).get("call"), dict)):
        problems.append(f"capabilities.tasks.requests.tools.call missing (capabilities.tasks = {short(caps)})")
    for step in {st["tool"]: st for st in tplan.values()}.values():
        want = step.get("task_support")
        got = (tools.get(step["tool"], {}).get("execution") or {}).get("taskSupport")
        if lt.get("ok") and want and got != want:
            problems.append(f"{step['tool']}: execution.taskSupport {got!r}, expected {want!r}")
    rows.append((labels[0], not problems, "; ".join(problems) or f"{version}; tasks {short(caps, 80)}; taskSupport ok"))

    # 2. build_report as a task: non-terminal status seen, completed, result == what the function returns
    rec = t.get("build") or {}
    ok, why = check_task_flow(rec, "build")
    if ok:
        nonterminal = [x for x in rec.get("statuses", []) if x not in TERMINAL]
        step = {**tplan["build"], "error": False}
        rok, rwhy = check_call(step, {"ok": True, "result": rec.get("result") or {}}, tools.get(step["tool"]), era)
        rel = related_task_id((rec.get("result") or {}).get("meta"))
        if not nonterminal:
            ok, why = False, f"no non-terminal status observed (polled: {rec.get('statuses')})"
        elif not rok:
            ok, why = False, f"tasks/result: {rwhy}"
        elif rel != rec["task_id"]:
            ok, why = False, f"tasks/result _meta related-task {rel!r} != task {rec['task_id']!r}"
        else:
            why = f"{why}; {rwhy}; related-task ok"
    rows.append((labels[1], ok, why))

    # 3. purge_archive: the question arrives through the task, the answer lets it finish
    rec = t.get("purge") or {}
    ok, why = check_task_flow(rec, "purge")
    verdict: bool | None = ok
    if rec.get("ok") is None and rec.get("skipped"):  # the driver knows its library cannot run it
        verdict, why = None, f"not runnable: {rec['skipped']}"
    elif ok:
        step = {**tplan["purge"], "error": False}
        rok, rwhy = check_call(step, {"ok": True, "result": rec.get("result") or {}}, tools.get(step["tool"]), era)
        elicits = rec.get("elicitations") or []
        rel = related_task_id(elicits[0].get("_meta")) if elicits else None
        if len(elicits) != 1:
            ok, why = False, f"expected 1 elicitation/create request, the handler got {len(elicits)}"
        elif rel != rec["task_id"]:
            ok, why = False, f"elicitation/create _meta related-task {rel!r} != task {rec['task_id']!r}"
        elif not rok:
            ok, why = False, f"tasks/result: {rwhy}"
        else:
            why = f"{why}; elicitation with related-task; {rwhy}"
        verdict = ok
    rows.append((labels[2], verdict, why))

    # 4. cancel a long build_report
    rec = t.get("cancel") or {}
    if not rec.get("ok"):
        rows.append((labels[3], False, f"client raised {describe_error(rec.get('error'))}"))
    elif not rec.get("task_id"):
        rows.append((labels[3], False, "the library did not run the call as a task (no CreateTaskResult)"))
    else:
        got = (rec.get("cancel_result") or {}).get("status")
        if "cancel_result" not in rec and "cancel_acked" in rec:  # the library returns no task (ext-tasks)
            got = (
                "cancelled"
                if rec["cancel_acked"] is True
                else "not acknowledged: " + describe_error(rec.get("cancel_error"))
            )
        final = (rec.get("final") or {}).get("status")
        statuses = rec.get("statuses") or []
        rc = rec.get("recancel") or {}
        if not statuses or statuses[0] in TERMINAL:
            rows.append((labels[3], False, f"task was not running before tasks/cancel (polled: {statuses})"))
        elif got != "cancelled" or final != "cancelled":
            rows.append((labels[3], False, f"tasks/cancel -> {got!r}, then tasks/get -> {final!r}; expected cancelled"))
        elif rc.get("ok") is not False or (rc.get("error") or {}).get("code") != -32602:
            got_rc = f"raised {describe_error(rc.get('error'))}" if rc.get("ok") is False else f"returned {short(rc)}"
            rows.append((labels[3], False, f"tasks/cancel of the cancelled (terminal) task {got_rc}, expected -32602"))
        else:
            ack = "tasks/cancel acknowledged" if "cancel_result" not in rec else "tasks/cancel"
            why = f"{'->'.join(statuses)}; {ack} and tasks/get: cancelled; re-cancel -32602"
            if rec.get("stream_error"):
                why += f"; stream ended: {short(rec['stream_error'].get('message'), 60)}"
            rows.append((labels[3], True, why))

    # 5. tasks/list holds every task this session created
    rec = t.get("list") or {}
    created = [t[k]["task_id"] for k in ("build", "purge", "cancel") if (t.get(k) or {}).get("task_id")]
    if not rec.get("ok"):
        rows.append((labels[4], False, f"client raised {describe_error(rec.get('error')) if rec else missing_reason}"))
    elif not created:
        rows.append((labels[4], False, "no task was created"))
    else:
        missing = [x for x in created if x not in rec.get("task_ids", [])]
        rows.append((labels[4], not missing, f"missing {missing}" if missing else f"{len(created)} tasks listed"))
    for i, (name, verdict, why) in enumerate(rows):  # scenarios the driver never reached (killed)
        if verdict is False and why.startswith("client raised unknown error"):
            rows[i] = (name, False, missing_reason)
    return tidy(rows)


def check_tasks_v2(
    client: ClientConfig,
    doc: dict[str, Any],
    tplan: dict[str, dict[str, Any]],
    missing_reason: str = "not run by the driver",
) -> list[Row]:
    """Rows of the 2026-07-28 `io.modelcontextprotocol/tasks` extension (a task handle with
    resultType "task", tasks/get with the result / error / inputRequests inlined, tasks/update
    with inputResponses, tasks/cancel as a bare acknowledgement, no tasks/list), as a driver
    records them through its library's task API (see the ext-tasks part of ts_client2.mjs)."""
    labels = task_labels(tplan, MODERN_VERSION)
    if not doc.get("connect", {}).get("ok"):
        return tasks_not_run(tplan, f"client raised {describe_error(doc['connect'].get('error'))}", MODERN_VERSION)
    t = doc.get("tasks") or {}
    version = doc.get("negotiated_protocol_version")
    rows: list[Row] = []

    # 1. the extension as the libraries parsed it: server/discover capabilities.extensions, and the
    #    task session running in the 2026-07-28 form (task-update input, no server inventory)
    lt = doc.get("list_tools", {})
    tools = {x["name"]: x for x in lt.get("tools", [])} if lt.get("ok") else {}
    problems = []
    if version != client.expect_version or version != MODERN_VERSION:
        problems.append(f"negotiated {version!r}, expected {MODERN_VERSION!r}")
    if not lt.get("ok"):
        problems.append(f"tools/list raised {describe_error(lt.get('error'))}")
    else:
        missing = sorted({st["tool"] for st in tplan.values()} - set(tools))
        if missing:
            problems.append(f"tools/list misses {missing}")
    ext = t.get("capabilities_extension")
    if ext != {}:
        problems.append(f"capabilities.extensions['io.modelcontextprotocol/tasks'] is {short(ext)}, expected {{}}")
    if t.get("form") != MODERN_VERSION:
        problems.append(f"the task session runs the {t.get('form')!r} form")
    if t.get("session_error"):
        problems.append(f"task session not created: {describe_error(t['session_error'])}")
    scaps = t.get("session_capabilities") or {}
    if scaps and not (scaps.get("execution") and scaps.get("inputResponses") and scaps.get("cancellation")):
        problems.append(f"task session capabilities {short(scaps)}")
    summary = f"{version}; extensions {{tasks: {{}}}}; session {short(scaps, 90)}"
    rows.append((labels[0], not problems, "; ".join(problems) or summary))

    def flow(rec: dict[str, Any], name: str) -> tuple[bool, str]:
        if rec.get("kind") == "immediate":
            return False, "the server answered with an immediate result, not a task (resultType 'task')"
        ok, why = check_task_flow(rec, name)
        if ok and rec.get("outcome") != "completed":
            err = f": {describe_error(rec.get('outcome_error'))}" if rec.get("outcome_error") else ""
            return False, f"{name}: the library's outcome is {rec.get('outcome')!r}{err}"
        return ok, why

    def result_check(rec: dict[str, Any], step: dict[str, Any]) -> tuple[bool, str]:
        step = {**step, "error": False}
        return check_call(step, {"ok": True, "result": rec.get("result") or {}}, tools.get(step["tool"]), "modern")

    # 2. build_report as a task: a non-terminal status seen, completed, the inlined result natural
    rec = t.get("build") or {}
    ok, why = flow(rec, "build")
    if ok:
        nonterminal = [x for x in rec.get("statuses", []) if x not in TERMINAL]
        rok, rwhy = result_check(rec, tplan["build"])
        if not nonterminal:
            ok, why = False, f"no non-terminal status observed (statuses: {rec.get('statuses')})"
        elif not rok:
            ok, why = False, f"tasks/get result: {rwhy}"
        else:
            why = f"{why}; tasks/get result: {rwhy}"
    rows.append((labels[1], ok, why))

    # 3. purge_archive: the question comes inlined in tasks/get (inputRequests), the answer goes back
    #    with tasks/update (inputResponses); it never arrives as a server request
    rec = t.get("purge") or {}
    ok, why = flow(rec, "purge")
    if ok:
        rok, rwhy = result_check(rec, tplan["purge"])
        inputs = rec.get("input_requests") or []
        ctx = (inputs[0].get("context") or {}) if inputs else {}
        statuses = rec.get("statuses") or []
        if "input_required" not in statuses:
            ok, why = False, f"input_required never observed (statuses: {statuses})"
        elif len(inputs) != 1 or inputs[0].get("kind") != "elicitation":
            ok, why = False, f"expected 1 elicitation input request, the task session handed over {short(inputs)}"
        elif ctx.get("taskId") != rec["task_id"] or ctx.get("delivery") != "task-update":
            ok, why = False, f"input request context {short(ctx)} is not the task {rec['task_id']!r} (task-update)"
        elif rec.get("elicitations"):
            ok, why = False, f"{len(rec['elicitations'])} elicitation/create server request(s) reached the client"
        elif not rok:
            ok, why = False, f"tasks/get result: {rwhy}"
        else:
            why = f"{why}; inputRequests elicitation answered via tasks/update; {rwhy}"
    rows.append((labels[2], ok, why))

    # 4. cancel a long build_report: tasks/cancel is an acknowledgement, tasks/get then says cancelled
    rec = t.get("cancel") or {}
    if not rec.get("ok"):
        rows.append((labels[3], False, f"client raised {describe_error(rec.get('error'))}"))
    elif not rec.get("task_id"):
        rows.append((labels[3], False, "the library did not run the call as a task (no resultType 'task')"))
    else:
        statuses = rec.get("statuses") or []
        polled = rec.get("polled_after_cancel") or []
        if not statuses or statuses[0] in TERMINAL:
            rows.append((labels[3], False, f"task was not running before tasks/cancel (statuses: {statuses})"))
        elif rec.get("cancel_acked") is not True:
            rows.append((labels[3], False, f"tasks/cancel not acknowledged: {describe_error(rec.get('cancel_error'))}"))
        elif (rec.get("final") or {}).get("status") != "cancelled":
            rows.append((labels[3], False, f"after tasks/cancel, tasks/get said {polled}; expected cancelled"))
        else:
            why = f"{'->'.join(statuses)}; tasks/cancel acknowledged; tasks/get: {'->'.join(polled)}"
            rows.append((labels[3], True, why + f"; library outcome {rec.get('outcome')}"))

    # 5. the extension has no tasks/list
    rec = t.get("list") or {}
    if rec.get("ok") is None and rec.get("skipped"):
        rows.append((labels[4], None, f"not in the 2026-07-28 extension: {rec['skipped']}"))
    elif not rec.get("ok"):
        rows.append((labels[4], False, f"client raised {describe_error(rec.get('error')) if rec else missing_reason}"))
    else:
        rows.append((labels[4], False, f"the task session listed tasks in the 2026-07-28 form: {short(rec)}"))
    for i, (name, verdict, why) in enumerate(rows):  # scenarios the driver never reached (killed)
        if verdict is False and why.startswith("client raised unknown error"):
            rows[i] = (name, False, missing_reason)
    return tidy(rows)


# --------------------------------------------------------------------------------------------
# main


def preflight(clients: list[ClientConfig]) -> None:
    problems = []
    for c in clients:
        exe = INSTALL / c.env / "bin" / "python" if not c.js else INSTALL / c.env / "node_modules"
        if not exe.exists() or not (INSTALL / c.env / ".stamp").exists():
            problems.append(f"{c.env} is not installed ({exe} / .stamp missing)")
    if any(c.js for c in clients) and not shutil.which("node"):
        problems.append("node is not on PATH")
    if problems:
        raise SetupError("; ".join(sorted(set(problems))) + " -- run scripts/interop --install-only")
    # The JS drivers must sit next to their pinned node_modules to resolve them (ESM resolution
    # starts at the importing file), so they are copied into the install directory on every run.
    for c in clients:
        if c.js:
            for f in (c.driver, "_common.mjs"):
                shutil.copyfile(DRIVERS / f, INSTALL / c.env / f)


def select_gateways(spec: str) -> list[Gateway]:
    keys = [k.strip() for k in spec.split(",") if k.strip()]
    if keys == ["all"]:
        return GATEWAYS
    unknown = [k for k in keys if k not in {g.key for g in GATEWAYS}]
    if unknown or not keys:
        raise SetupError(f"--gateway takes 'all' or some of {[g.key for g in GATEWAYS]}, not {spec!r}")
    return [g for g in GATEWAYS if g.key in keys]


def preflight_gateways(gateways: list[Gateway], python: str) -> None:
    missing = sorted({str(g.python) for g in gateways if not g.python.exists()})
    if missing:
        raise SetupError(f"{', '.join(missing)} missing -- run scripts/servers --install-only")
    if not all(g.file for g in gateways):
        probe = subprocess.run(
            [python, "-m", "toolkit", "proxy", "--help"], cwd=ROOT, env=server_env({}), capture_output=True, check=False
        )
        if probe.returncode != 0:
            raise SetupError(f"`toolkit proxy` is not available: {probe.stderr.decode(errors='replace')[-400:]}")


@dataclass
class RunningGateway:
    """A gateway configuration ready to be started for each run: its command, its upstream running if over HTTP."""

    gateway: Gateway
    server_cmd: list[str]  # the gateway (HTTP runs append --transport http --host --port)
    env: dict[str, str]  # the gateway file's INTEROP_GATEWAY_* variables
    marker: str  # in the upstream's environment, wherever it runs
    proc: subprocess.Popen | None = None  # the HTTP upstream

    def stop(self) -> list[int]:
        if self.proc is not None:
            kill_group(self.proc)
        return reap_marked(self.marker)


def prepare_gateway(g: Gateway, python: str, workdir: Path, startup: float) -> RunningGateway:
    """The upstream started (HTTP) or its command (stdio: each gateway spawns its own), and the gateway's command.

    A stdio upstream's command starts with `env INTEROP_RUN_MARK=...`: a gateway spawns it with a
    clean environment, and the mark is how a process left over after a run is found."""
    marker = uuid.uuid4().hex
    program = str(INTEROP / "servers" / g.program)
    proc = None
    upstream: list[str] | str
    if g.transport == "stdio":
        upstream = ["env", f"INTEROP_RUN_MARK={marker}", str(g.python), program]
    else:
        workdir.mkdir(parents=True, exist_ok=True)
        proc, port, _ = start_http_server(
            [str(g.python), program],
            workdir,
            marker,
            startup,
            argv_for=lambda cmd, port: [*cmd, "--http", str(port)],
            name="upstream",
        )
        upstream = f"http://127.0.0.1:{port}/mcp"
    if g.file:
        env = {"INTEROP_GATEWAY_UPSTREAM": upstream if isinstance(upstream, str) else json.dumps(upstream)}
        if g.protocol:
            env["INTEROP_GATEWAY_PROTOCOL"] = g.protocol
        return RunningGateway(g, [python, "-m", "toolkit", "run", GATEWAY_FILE], env, marker, proc)
    target = upstream if isinstance(upstream, str) else shlex.join(upstream)
    cmd = [python, "-m", "toolkit", "proxy", target, "--unwrap-results"]
    if g.protocol:
        cmd += ["--protocol-version", g.protocol]
    return RunningGateway(g, cmd, {}, marker, proc)


@dataclass
class Matrix:
    """What every client x transport (x gateway) run shares."""

    args: argparse.Namespace
    server_cmd: list[str]
    plan: list[dict[str, Any]]
    plan_file: Path
    base: Path
    t0: float
    tasks_cmd: list[str] | None  # None: no tasks phase
    tasks_plan: dict[str, dict[str, Any]]
    tasks_plan_file: Path

    def run(self, c: ClientConfig, t: str, running: RunningGateway | None) -> RunResult:
        args, plan = self.args, self.plan
        g = running.gateway if running is not None else None
        wd = self.base / f"{g.key + '-' if g else ''}{c.key}-{t}"
        wd.mkdir(parents=True, exist_ok=True)
        exhausted = f"skipped: --total-timeout {args.total_timeout:.0f}s exhausted"
        if time.monotonic() - self.t0 > args.total_timeout:
            rr = RunResult(c, t, rows=not_run(plan, exhausted), gateway=g)
        elif running is not None:
            rr = run_one(c, t, running.server_cmd, self.plan_file, plan, wd, args, gateway=g, extra_env=running.env)
        else:
            rr = run_one(c, t, self.server_cmd, self.plan_file, plan, wd, args, url=args.url)
        if self.tasks_cmd is None:
            pass
        elif not c.tasks_api:
            rr.rows.append(("tasks", None, f"not supported by {c.no_tasks}"))
        elif time.monotonic() - self.t0 > args.total_timeout:
            rr.rows += tasks_not_run(self.tasks_plan, exhausted, c.tasks_form)
        else:
            twd = wd / "tasks"
            twd.mkdir(parents=True, exist_ok=True)
            tr = run_one(c, t, self.tasks_cmd, self.tasks_plan_file, self.tasks_plan, twd, args, phase="tasks")
            rr.rows += tr.rows
            rr.tasks_doc = tr.doc
            rr.seconds += tr.seconds
            rr.logs.update({f"tasks_{k}": v for k, v in tr.logs.items()})
            rr.leftovers += tr.leftovers
        nfail = sum(1 for r in rr.rows if r[1] is False)
        where = f"{g.key:12} " if g else ""
        print(
            f"  ran {where}{c.label:34} {t:5}  {rr.seconds:5.1f}s  {'ok' if nfail == 0 else f'{nfail} failed'}",
            flush=True,
        )
        return rr


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--server-cmd",
        help="server command line (shell syntax); HTTP runs append "
        "'--transport http --host 127.0.0.1 --port PORT'. Default: "
        f".venv/bin/python -m toolkit run {DEFAULT_TARGET}",
    )
    ap.add_argument(
        "--url",
        help="run the HTTP half against this already-running endpoint (e.g. a load balancer) instead of "
        "starting a server; only the http transport runs. The plan still comes from --target or --plan",
    )
    ap.add_argument("--target", default=DEFAULT_TARGET, help="FILE:OBJECT for the default server command")
    ap.add_argument("--plan", help="plan file: .json (a list) or .py (INTEROP_PLAN); default: the --target file")
    ap.add_argument(
        "--python",
        default=str(ROOT / ".venv" / "bin" / "python"),
        help="project interpreter (server + plan import); default .venv/bin/python",
    )
    ap.add_argument(
        "--tasks-target",
        default=DEFAULT_TASKS_TARGET,
        help="FILE:OBJECT of the server the tasks phase runs against (default: %(default)s)",
    )
    ap.add_argument(
        "--tasks-plan",
        help="JSON file shaped like DEFAULT_TASKS_PLAN in run.py (build / purge / cancel steps) for another "
        "--tasks-target; default: the built-in plan for examples/long_running.py",
    )
    ap.add_argument("--no-tasks", action="store_true", help="skip the tasks phase")
    ap.add_argument(
        "--gateway",
        metavar="CONFIGS",
        help="the server under test is a toolkit gateway (`toolkit proxy TARGET --unwrap-results`, or "
        f"`toolkit run {GATEWAY_FILE}`) in front of a server of another framework serving {GATEWAY_PLAN}'s "
        "tools, with that file's plan: 'all' or some of " + ", ".join(g.key for g in GATEWAYS) + " (no tasks phase)",
    )
    ap.add_argument("--clients", help="comma-separated subset of: " + ", ".join(c.key for c in CLIENTS))
    ap.add_argument("--transports", default=",".join(TRANSPORTS), help="comma-separated subset of stdio,http")
    ap.add_argument("--json", metavar="OUT", help="write all results (and every driver document) here")
    ap.add_argument("--request-timeout", type=float, default=10.0, help="per-request timeout inside drivers (s)")
    ap.add_argument("--driver-timeout", type=float, default=90.0, help="wall-clock limit per driver run (s)")
    ap.add_argument(
        "--total-timeout",
        type=float,
        default=600.0,
        help="no new client run starts after this many seconds (remaining runs are reported failed)",
    )
    ap.add_argument("--startup-timeout", type=float, default=30.0, help="HTTP server startup limit (s)")
    ap.add_argument("--keep", metavar="DIR", help="keep logs and driver outputs under DIR")
    ap.add_argument("-v", "--verbose", action="store_true", help="also print PASS reasons and log tails on failure")
    args = ap.parse_args(argv)

    python = args.python if Path(args.python).exists() else sys.executable
    try:
        clients = CLIENTS
        if args.clients:
            keys = [k.strip() for k in args.clients.split(",") if k.strip()]
            unknown = [k for k in keys if k not in {c.key for c in CLIENTS}]
            if unknown:
                raise SetupError(f"unknown client(s) {unknown}; known: {[c.key for c in CLIENTS]}")
            clients = [c for c in CLIENTS if c.key in keys]
        transports = [t.strip() for t in args.transports.split(",") if t.strip()]
        if not transports or any(t not in TRANSPORTS for t in transports):
            raise SetupError(f"--transports must be a subset of {TRANSPORTS}")
        skipped_transports = []
        if args.url:
            if args.server_cmd:
                raise SetupError("--url runs against a server that is already running: drop --server-cmd")
            if "http" not in transports:
                raise SetupError("--url runs the http transport only: include http in --transports")
            skipped_transports = [t for t in transports if t != "http"]
            transports = ["http"]
        preflight(clients)
        gateways: list[Gateway] = []
        if args.gateway:
            if args.url or args.server_cmd:
                raise SetupError("--gateway starts its own gateways: drop --url / --server-cmd")
            gateways = select_gateways(args.gateway)
            preflight_gateways(gateways, python)
            args.plan = args.plan or str(ROOT / GATEWAY_PLAN)
            args.target = GATEWAY_FILE
        if args.server_cmd:
            server_cmd = shlex.split(args.server_cmd)
            plan_src = args.plan
        else:
            target_file = ROOT / args.target.split(":")[0]
            if not target_file.exists():
                raise SetupError(f"{target_file} does not exist; pass --server-cmd and --plan for another server")
            server_cmd = [python, "-m", "toolkit", "run", args.target]
            plan_src = args.plan or str(target_file)
        plan, plan_origin = load_plan(plan_src, python)
        # --url: somebody else's server, not long_running; --gateway: the old servers have no tasks
        run_tasks = not args.no_tasks and not args.url and not args.gateway
        tasks_cmd: list[str] = []
        tasks_plan = DEFAULT_TASKS_PLAN
        if run_tasks:
            tasks_file = ROOT / args.tasks_target.split(":")[0]
            if not tasks_file.exists():
                raise SetupError(f"--tasks-target {tasks_file} does not exist (or pass --no-tasks)")
            tasks_cmd = [python, "-m", "toolkit", "run", args.tasks_target]
            if args.tasks_plan:
                tasks_plan = json.loads(Path(args.tasks_plan).read_text(encoding="utf-8"))
                if not isinstance(tasks_plan, dict) or any(
                    not isinstance(tasks_plan.get(k), dict) or "tool" not in tasks_plan[k]
                    for k in ("build", "purge", "cancel")
                ):
                    raise SetupError("--tasks-plan must be an object with build / purge / cancel steps")
                if any("expected" not in tasks_plan[k] for k in ("build", "purge")):
                    raise SetupError("--tasks-plan: the build and purge steps need 'expected'")
                for k in ("build", "purge", "cancel"):
                    tasks_plan[k].setdefault("arguments", {})
    except SetupError as e:
        print(f"interop: setup error: {e}", file=sys.stderr)
        return 2

    base = Path(args.keep).resolve() if args.keep else Path(tempfile.mkdtemp(prefix="toolkit-interop-"))
    base.mkdir(parents=True, exist_ok=True)
    plan_file = base / "plan.json"
    plan_file.write_text(json.dumps(plan, indent=1), encoding="utf-8")
    tasks_plan_file = base / "tasks-plan.json"
    tasks_plan_file.write_text(json.dumps(tasks_plan, indent=1), encoding="utf-8")
    if args.url:
        print(f"server: {args.url} (already running: --url)")
        if skipped_transports:
            print(f"note:   {', '.join(skipped_transports)} skipped (--url runs the http transport only)")
    elif not gateways:
        print(f"server: {shlex.join(server_cmd)}")
    for g in gateways:
        pinned = f", the gateway speaking {g.protocol} to it" if g.protocol else ""
        via = f"toolkit run {GATEWAY_FILE}" if g.file else "toolkit proxy --unwrap-results"
        only = f" (clients over {', '.join(g.transports)} only)" if set(g.transports) != set(TRANSPORTS) else ""
        print(f"gateway {g.key}: {via} in front of {g.label}{pinned}{only}")
    print(f"plan:   {plan_origin} ({len(plan)} calls, {len({s['tool'] for s in plan})} tools)")
    if run_tasks:
        print(f"tasks:  {shlex.join(tasks_cmd)} (clients with a task API)")
    else:
        print(f"tasks:  skipped ({'--no-tasks' if args.no_tasks else '--gateway' if args.gateway else '--url'})")
    sys.stdout.flush()

    results: list[RunResult] = []
    t0 = time.monotonic()
    matrix = Matrix(
        args, server_cmd, plan, plan_file, base, t0, tasks_cmd if run_tasks else None, tasks_plan, tasks_plan_file
    )
    if not gateways:
        for c in clients:
            for t in transports:
                results.append(matrix.run(c, t, None))
    for g in gateways:
        try:
            running = prepare_gateway(g, python, base / f"upstream-{g.key}", args.startup_timeout)
        except SetupError as e:
            for c in clients:
                for t in transports:
                    if t in g.transports:
                        rows = not_run(plan, f"upstream {g.label} failed to start: {e}")
                        results.append(RunResult(c, t, rows=rows, gateway=g))
            continue
        try:
            for c in clients:
                for t in transports:
                    if t in g.transports:
                        results.append(matrix.run(c, t, running))
        finally:
            leftovers = running.stop()
            if leftovers:
                print(f"note: gateway {g.key}: killed leftover upstream processes {leftovers}")

    # ---- table
    rows = [(rr.client.label, rr.transport, name, ok, why) for rr in results for (name, ok, why) in rr.rows]
    ups = [rr.gateway.key if rr.gateway else "" for rr in results for _ in rr.rows]
    w_up = max(len(x) for x in ["GATEWAY", *ups]) if args.gateway else -2  # the column only in gateway mode
    w_client = max([len("CLIENT")] + [len(r[0]) for r in rows])
    w_check = min(60, max([len("CHECK")] + [len(r[2]) for r in rows]))
    print()
    up_head, up_rule = (f"{'GATEWAY':{w_up}}  ", f"{'-' * w_up}  ") if args.gateway else ("", "")
    print(f"{up_head}{'CLIENT':{w_client}}  {'TRANSPORT':9}  {'CHECK':{w_check}}  RESULT")
    print(f"{up_rule}{'-' * w_client}  {'-' * 9}  {'-' * w_check}  {'-' * 6}")
    for up, (client_label, transport, name, ok, why) in zip(ups, rows, strict=True):
        name_s = name if len(name) <= w_check else name[: w_check - 3] + "..."
        verdict = "N/A" if ok is None else "PASS" if ok else "FAIL"
        up_s = f"{up:{w_up}}  " if args.gateway else ""
        line = f"{up_s}{client_label:{w_client}}  {transport:9}  {name_s:{w_check}}  {verdict:6}".rstrip()
        if not ok or args.verbose:
            line += f"  {why}"
        print(line)
    if args.verbose:
        for rr in results:
            if any(r[1] is False for r in rr.rows):
                for k, p in rr.logs.items():
                    t = tail(Path(p), 1200).strip()
                    if t:
                        up = f"{rr.gateway.key} " if rr.gateway else ""
                        print(f"\n--- {up}{rr.client.key} {rr.transport} {k} ({p}) ---\n{t}")
    for rr in results:
        if rr.leftovers:
            up = f"{rr.gateway.key}/" if rr.gateway else ""
            print(f"note: {up}{rr.client.key}/{rr.transport}: killed leftover processes {rr.leftovers}")

    passed = sum(1 for r in rows if r[3] is True)
    failed = sum(1 for r in rows if r[3] is False)
    if args.json:
        out = {
            "server_cmd": None if args.url else server_cmd,
            "url": args.url,
            "plan_origin": plan_origin,
            "plan": plan,
            "tasks_server_cmd": tasks_cmd if run_tasks else None,
            "tasks_plan": tasks_plan if run_tasks else None,
            "seconds": round(time.monotonic() - t0, 1),
            "passed": passed,
            "failed": failed,
            "gateways": [g.key for g in gateways],
            "results": [
                {"gateway": up or None, "client": r[0], "transport": r[1], "check": r[2], "ok": r[3], "reason": r[4]}
                for up, r in zip(ups, rows, strict=True)
            ],
            "runs": [
                {
                    "gateway": rr.gateway.key if rr.gateway else None,
                    "client": rr.client.key,
                    "label": rr.client.label,
                    "transport": rr.transport,
                    "mode": rr.client.mode,
                    "expected_protocol_version": rr.client.expect_version,
                    "seconds": round(rr.seconds, 2),
                    "logs": rr.logs,
                    "log_tails": {k: tail(Path(p), 4000) for k, p in rr.logs.items()}
                    if any(r[1] is False for r in rr.rows)
                    else {},
                    "driver_output": rr.doc,
                    "tasks_driver_output": rr.tasks_doc,
                }
                for rr in results
            ],
        }
        Path(args.json).write_text(json.dumps(out, indent=1), encoding="utf-8")
    if not args.keep:
        shutil.rmtree(base, ignore_errors=True)
    print()
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
