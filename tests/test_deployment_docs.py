"""docs/deployment.md shows what runs: its configurations, messages, numbers and commands are the real ones.

- The HAProxy block is what ``haproxy_config()`` (tests/support/cluster.py) writes for a balancer
  on 8080 and replicas on 8001 to 8003: the configuration tests/test_scaleout.py and
  tests/test_cluster_rig.py run, so the page cannot drift from what is tested.
- The nginx block runs, only its ports changed: a real nginx (Debian's package) in front of
  three ``toolkit run --store`` replicas and a real redis-server carries a legacy session (calls
  spread over the replicas, an SSE stream unbuffered, ``DELETE`` everywhere) and routes around a
  killed replica.
- The page's ``app.py`` keeps its sessions under the prefix it sets, in a real Redis.
- The quoted warning and error messages are what toolkit prints; the numbers are the code's
  constants and defaults; the ``toolkit run`` commands and the Kubernetes manifest parse.

``scripts/cluster --install-only`` installs nginx, redis-server and haproxy; without the ones a
test needs it skips, or fails under ``TOOLKIT_TESTS_STRICT=1``.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import inspect
import json
import math
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.http_support import Legacy, connect
from tests.support.cluster import Replicas, haproxy_config
from tests.support.processes import LOCALHOST, REPO, TOOLKIT, free_port, stop, wait_for_port
from tests.support.redis_rig import RedisServer, log_tail, redis_server, require

from toolkit import Server
from toolkit._cli import _parser
from toolkit._store.base import GET_STREAM_CLAIM_SECONDS
from toolkit._store.redis import DEAD_OWNER_MESSAGE, FOLLOW_BLOCK_MS, HEARTBEAT_SECONDS, LEASE_SECONDS
from toolkit._transports.http.app import McpEndpoint
from toolkit.stores import RedisStore, StoreUnavailable

pytestmark = pytest.mark.timeout(120)

PAGE = REPO / "docs" / "deployment.md"
APP_SPEC = f"{REPO / 'tests' / 'support' / 'scaleout_app.py'}:server"
DOC_BALANCER_PORT = 8080
DOC_REPLICA_PORTS = (8001, 8002, 8003)


def _load_generator() -> Any:
    """scripts/gen_docs.py, which splits pages into blocks (as tests/test_docs.py loads it)."""
    if "gen_docs" in sys.modules:
        return sys.modules["gen_docs"]
    spec = importlib.util.spec_from_file_location("gen_docs", REPO / "scripts" / "gen_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["gen_docs"] = module
    spec.loader.exec_module(module)
    return module


gen_docs = _load_generator()


def block(title: str) -> str:
    """The code of the page's one block titled ``title``."""
    found = [found.code for found in gen_docs.blocks(PAGE) if found.title == title]
    assert len(found) == 1, f"docs/deployment.md has {len(found)} blocks titled {title!r}"
    code: str = found[0]
    return code


def blocks(language: str) -> list[str]:
    return [found.code for found in gen_docs.blocks(PAGE) if found.language == language]


def prose() -> str:
    """The page's text with every run of whitespace made one space (sentences wrap across lines)."""
    return " ".join(PAGE.read_text().split())


# --- HAProxy: the page shows the configuration the tests run ----------------------------------------


def test_the_haproxy_block_is_the_configuration_the_tests_run() -> None:
    backends = [(f"r{index}", port) for index, port in enumerate(DOC_REPLICA_PORTS)]
    assert block("haproxy.cfg") == haproxy_config(DOC_BALANCER_PORT, backends), (
        "docs/deployment.md's HAProxy block differs from tests/support/cluster.py's haproxy_config(): "
        f"paste the output of haproxy_config({DOC_BALANCER_PORT}, {backends})"
    )


# --- nginx: the page's configuration, run --------------------------------------------------------

NGINX_MAIN = """\
daemon off;
master_process on;
worker_processes 1;
pid {directory}/nginx.pid;
error_log {directory}/error.log info;

events {{
    worker_connections 512;
}}

http {{
    access_log {directory}/access.log;
    client_body_temp_path {directory}/client_body;
    proxy_temp_path {directory}/proxy;
    fastcgi_temp_path {directory}/fastcgi;
    uwsgi_temp_path {directory}/uwsgi;
    scgi_temp_path {directory}/scgi;

{site}
}}
"""
"""What wraps the page's block: nginx's main context, everything under one scratch directory."""


def nginx_site(port: int, backend_ports: list[int]) -> str:
    """The page's nginx block with the balancer on ``port`` and the replicas on ``backend_ports``."""
    site = block("mcp.conf")
    listen = f"listen {DOC_BALANCER_PORT};"
    assert site.count(listen) == 1, f"the nginx block should say `{listen}` once"
    site = site.replace(listen, f"listen {LOCALHOST}:{port};")
    assert len(backend_ports) == len(DOC_REPLICA_PORTS)
    for documented, actual in zip(DOC_REPLICA_PORTS, backend_ports, strict=True):
        server = f"server 127.0.0.1:{documented};"
        assert site.count(server) == 1, f"the nginx block should say `{server}` once"
        site = site.replace(server, f"server {LOCALHOST}:{actual};")
    return site


@contextlib.contextmanager
def nginx(directory: Path, backend_ports: list[int]) -> Iterator[str]:
    """A real nginx running the page's block in front of ``backend_ports``; its /mcp URL. Always stopped."""
    binary = require("nginx")
    directory.mkdir(parents=True, exist_ok=True)
    port = free_port()
    config = directory / "nginx.conf"
    config.write_text(NGINX_MAIN.format(directory=directory, site=nginx_site(port, backend_ports)))
    log = directory / "nginx.out"
    argv = [binary, "-p", f"{directory}/", "-c", str(config), "-e", str(directory / "error.log")]
    with log.open("ab") as sink:
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=sink, stderr=sink)
    try:
        try:
            wait_for_port(port, timeout=10, process=process)
        except AssertionError as error:
            output = log_tail(log) + log_tail(directory / "error.log")
            raise AssertionError(f"nginx did not start: {error}\n{output}") from None
        yield f"http://{LOCALHOST}:{port}/mcp"
    finally:
        stop(process)


@pytest.fixture(scope="module")
def redis() -> Iterator[RedisServer]:
    with redis_server() as server:
        yield server


@pytest.fixture(scope="module")
def three(redis: RedisServer) -> Iterator[Replicas]:
    require("nginx")  # skip before starting replicas that would not be used
    with Replicas(APP_SPEC, 3, store_url=redis.url) as replicas:
        replicas.start()
        yield replicas


def pid_of(reply: Any) -> int:
    assert reply.status == 200, f"HTTP {reply.status}: {reply.messages or reply.body_text}"
    result = reply.result
    assert not result.get("isError"), result
    pid: int = result["structuredContent"]["result"]  # 2025-11-25 wraps the int
    return pid


async def test_the_nginx_block_carries_a_legacy_session_over_the_replicas(three: Replicas, tmp_path: Path) -> None:
    with nginx(tmp_path / "nginx", three.ports) as url:
        async with connect(url) as http:
            session = await Legacy(http).open()
            pids = [pid_of(await session.call_tool("whoami")) for _ in range(6)]
            assert len(set(pids)) == 3, f"round-robin: six calls of one session reach all three replicas ({pids})"

            params = {"name": "steps", "arguments": {"count": 2, "pause": 0.8}, "_meta": {"progressToken": "p"}}
            arrivals: list[tuple[float, dict[str, Any]]] = []
            async with session.stream("tools/call", params) as stream:
                assert stream.status == 200 and stream.is_sse
                while (message := await stream.next_message()) is not None:
                    arrivals.append((time.monotonic(), message))
            progress_at = next(at for at, message in arrivals if message.get("method") == "notifications/progress")
            result_at, result = arrivals[-1]
            assert result["result"]["structuredContent"]["steps"] == 2
            # The tool sleeps 0.8 s after each of its two progress events: passed on as they come,
            # the first event arrives 1.6 s before the result; held back, they would arrive together.
            assert result_at - progress_at > 1.0, f"the first event came {result_at - progress_at:.2f} s before the end"

            assert (await session.delete()).status == 204
            for _ in range(3):  # every replica
                assert (await session.request("ping")).status == 404


async def test_the_nginx_block_sends_a_killed_replicas_turns_to_the_others(redis: RedisServer, tmp_path: Path) -> None:
    require("nginx")
    with Replicas(APP_SPEC, 3, store_url=redis.url) as replicas:
        replicas.start()
        with nginx(tmp_path / "nginx", replicas.ports) as url:
            async with connect(url) as http:
                session = await Legacy(http).open()
                before = {pid_of(await session.call_tool("whoami")) for _ in range(3)}
                assert len(before) == 3
                replicas.kill("r1")
                after = [pid_of(await session.call_tool("whoami")) for _ in range(6)]
    assert len(set(after)) == 2 and set(after) < before, f"the two live replicas answered every call ({after})"


async def test_the_pages_app_keeps_its_sessions_under_its_prefix(redis: RedisServer, tmp_path: Path) -> None:
    app = tmp_path / "app.py"
    app.write_text(block("app.py"))
    with Replicas(f"{app}:server", 1, env={"REDIS_URL": redis.url}, cwd=tmp_path) as one:
        one.start()
        async with connect(f"http://{LOCALHOST}:{one.ports[0]}/mcp") as http:
            session = await Legacy(http).open()
            assert pid_of(await session.call_tool("replica")) > 0
            assert redis.command("EXISTS", f"weather:s:{session.session_id}") == 1
            assert redis.command("EXISTS", f"toolkit:s:{session.session_id}") == 0


# --- the messages the page quotes -------------------------------------------------------------------


def text_block_with(needle: str) -> str:
    (found,) = [code for code in blocks("text") if needle in code]
    return found.strip()


def test_the_unreachable_redis_message_is_what_toolkit_prints() -> None:
    port = str(free_port())
    url = f"redis://127.0.0.1:{port}/0"
    run = subprocess.run(
        [str(TOOLKIT), "run", APP_SPEC, "--transport", "http", "--port", str(free_port()), "--store", url],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 1
    assert "exits 1" in prose()
    assert run.stderr.strip() == text_block_with("cannot reach Redis").replace("6379", port)


def test_the_workers_warning_is_what_toolkit_logs() -> None:
    port = free_port()
    argv = [str(TOOLKIT), "run", APP_SPEC, "--transport", "http", "--port", str(port), "--workers", "2"]
    process = subprocess.Popen(
        argv, stderr=subprocess.PIPE, env={**os.environ, "TOOLKIT_STORE": ""}, start_new_session=True
    )
    try:
        wait_for_port(port, process=process)
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            _, err = process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)  # the workers too: they are in its session
            _, err = process.communicate()
    (logged,) = [line for line in err.decode().splitlines() if "WITHOUT sessions" in line]
    shown = text_block_with("WITHOUT sessions")
    assert shown.startswith("WARNING toolkit: with 4 workers")
    # The log line starts with a timestamp; the page leaves it out.
    assert logged.endswith(shown.replace("with 4 workers", "with 2 workers")), logged


def json_block_with(needle: str) -> dict[str, Any]:
    (found,) = [code for code in blocks("json") if needle in code]
    document: dict[str, Any] = json.loads(found)
    return document


@pytest.mark.asyncio_loop  # the page shows asyncio's wording of the refused connection
async def test_the_503_body_names_the_store_as_toolkit_does() -> None:
    port = free_port()
    store = RedisStore(f"redis://127.0.0.1:{port}/0", timeout=2.0)
    try:
        with pytest.raises(StoreUnavailable) as raised:
            await store.load_session("any", ttl=60)
    finally:
        await store.client.aclose()
    shown = json_block_with("Service Unavailable")
    assert "id" not in shown, "the 503 is answered before a request id is read"
    assert shown["error"] == {"code": raised.value.code, "message": raised.value.message.replace(str(port), "6379")}
    assert "`503`** with `Retry-After: 1`" in prose()


def test_the_dead_replica_error_is_toolkits() -> None:
    shown = json_block_with("stopped before it answered")
    assert shown["error"] == {"code": -32603, "message": DEAD_OWNER_MESSAGE}


# --- the numbers and defaults the page states -------------------------------------------------------


def test_the_numbers_are_the_codes() -> None:
    text = prose()
    grace = inspect.signature(McpEndpoint.__init__).parameters["shutdown_grace"].default
    ping = inspect.signature(McpEndpoint.__init__).parameters["sse_ping_seconds"].default
    client_timeout = inspect.signature(Server.__init__).parameters["client_request_timeout"].default
    dead = LEASE_SECONDS + 2 * HEARTBEAT_SECONDS  # the lease lapses, then stays away two heartbeats
    for phrase in (
        f"has not renewed its lease for {LEASE_SECONDS:g} s, and whose lease is still missing "
        f"{2 * HEARTBEAT_SECONDS:g} s later (two heartbeats",
        f"ends only {dead:g} to {dead + 2 * FOLLOW_BLOCK_MS / 1000:g} s after the replica's last heartbeat",
        f"next heartbeat (within {HEARTBEAT_SECONDS:g} s)",
        f"refreshed every {HEARTBEAT_SECONDS:g} s",
        f"lasts {GET_STREAM_CLAIM_SECONDS:g} s after its last renewal",
        f"outlives a dead replica by {GET_STREAM_CLAIM_SECONDS:g} s",
        f"keep-alive comment every {ping:g} s (`sse_ping_seconds`)",
        f"gives in-flight requests {grace:g} s (`shutdown_grace=`)",
        f"gets {grace:g} s for its in-flight requests and stops within {math.ceil(grace) + 2} s",
        f"`client_request_timeout` ({client_timeout:g} s)",
    ):
        assert phrase in text, f"docs/deployment.md should say {phrase!r}"


def test_the_redis_store_options_table_is_its_signature() -> None:
    rows = re.findall(r"^\| `(\w+)` \| `([^`]+)` \|", PAGE.read_text(), re.MULTILINE)
    documented = {name: ast.literal_eval(default) for name, default in rows}
    parameters = inspect.signature(RedisStore.__init__).parameters
    actual = {name: p.default for name, p in parameters.items() if p.kind is inspect.Parameter.KEYWORD_ONLY}
    assert documented == actual


# --- the commands and the manifest ------------------------------------------------------------------


def toolkit_commands() -> list[list[str]]:
    commands = []
    for code in blocks("bash"):
        for line in code.replace("\\\n", " ").splitlines():
            if line.startswith("toolkit run"):
                commands.append(shlex.split(line))
    return commands


def test_the_toolkit_run_commands_parse() -> None:
    commands = toolkit_commands()
    assert len(commands) >= 3
    for argv in commands:
        args = _parser().parse_args(argv[1:])
        assert args.transport == "http", argv
    assert any("--workers" in argv and "--store" in argv for argv in commands)


def test_the_kubernetes_manifest() -> None:
    deployment, service = yaml.safe_load_all(block("weather-mcp.yaml"))
    assert deployment["kind"] == "Deployment" and service["kind"] == "Service"
    assert deployment["spec"]["replicas"] >= 2
    pod = deployment["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    command = container["command"]
    assert command[:2] == ["toolkit", "run"]
    args = _parser().parse_args(command[1:])
    assert args.transport == "http" and args.host == "0.0.0.0" and args.workers == 1 and args.allowed_host
    assert args.store is None, "the store URL comes from the Secret, not the command line"
    (exposed,) = container["ports"]
    assert exposed["containerPort"] == args.port == container["readinessProbe"]["tcpSocket"]["port"]
    assert service["spec"]["ports"][0]["targetPort"] == args.port
    assert service["spec"].get("sessionAffinity", "None") == "None"
    assert service["spec"]["selector"] == deployment["spec"]["template"]["metadata"]["labels"]
    secrets = {item["name"]: item["valueFrom"]["secretKeyRef"] for item in container["env"]}
    assert set(secrets) == {"TOOLKIT_STORE", "TOOLKIT_STATE_SECRET"}
    kubectl = " ".join(code for code in blocks("bash") if "kubectl create secret" in code)
    for reference in secrets.values():
        assert f"generic {reference['name']}" in kubectl and f"--from-literal={reference['key']}=" in kubectl
    grace = inspect.signature(McpEndpoint.__init__).parameters["shutdown_grace"].default
    assert pod["terminationGracePeriodSeconds"] > math.ceil(grace) + 2, "longer than toolkit's own shutdown"


def test_the_page_is_in_the_site_nav() -> None:
    nav = yaml.safe_load((REPO / "mkdocs.yml").read_text())["nav"]
    assert {"Deploying": "deployment.md"} in nav
