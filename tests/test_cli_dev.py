"""``toolkit dev APP`` (a reloading development server) and ``toolkit run --docs``, as real processes.

Each test starts ``python -m toolkit dev`` on an app file in ``tmp_path`` with ``--port 0``,
reads the URL it prints, speaks MCP to it over HTTP, edits the file and waits (with a deadline,
never a fixed sleep) for the change to be served. The process is always stopped.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest
from tests.support.apps import WEATHER
from tests.support.processes import REPO, free_port, http_server, stop
from tests.wire import assert_valid

from toolkit import _dev, _dev_server
from toolkit._cli import _describe_failure, main
from toolkit._dev_server import LoadFailure
from toolkit._transports.http.app import McpApp

MODERN = "2026-07-28"
DEADLINE = 10.0
URL_LINE = re.compile(r"toolkit dev: serving \S+ at (http://127\.0\.0\.1:(\d+))/mcp")

SMALL_APP = """\
from toolkit import Server

server = Server("dev-test")


@server.tool
def get_count() -> int:
    \"\"\"A number.\"\"\"
    return 42
"""
ADDED_TOOL = """

@server.tool
def added(name: str) -> str:
    \"\"\"A tool added while the server runs.\"\"\"
    return f"hello {name}"
"""

T = TypeVar("T")


@dataclass
class Dev:
    process: subprocess.Popen[bytes]
    log: Path
    base: str
    port: int

    @property
    def url(self) -> str:
        return self.base + "/mcp"

    def output(self) -> str:
        return self.log.read_text(errors="replace")


def _read_url(process: subprocess.Popen[bytes], log: Path) -> re.Match[str]:
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        found = URL_LINE.search(log.read_text(errors="replace"))
        if found:
            return found
        if process.poll() is not None:
            break
        time.sleep(0.02)
    raise AssertionError(f"toolkit dev printed no URL (exit {process.poll()}):\n{log.read_text(errors='replace')}")


def toolkit(*args: str, cwd: Path = REPO, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m toolkit ARGS``, run to its end (stdin closed)."""
    return subprocess.run(
        [sys.executable, "-m", "toolkit", *args],
        cwd=cwd,
        env=env,
        input="",
        capture_output=True,
        text=True,
        timeout=DEADLINE,
        check=False,
    )


@contextlib.contextmanager
def toolkit_dev(app: Path, *args: str, env: dict[str, str] | None = None, new_session: bool = False) -> Iterator[Dev]:
    """``toolkit dev APP --port 0 [args]`` in ``app``'s directory (its own process group with ``new_session``)."""
    log = app.parent / "dev.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "toolkit", "dev", app.name, "--port", "0", *args],
            cwd=app.parent,
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=sink,
            env=env,
            start_new_session=new_session,
        )
    try:
        found = _read_url(process, log)
        yield Dev(process, log, found[1], int(found[2]))
    finally:
        stop(process)


def eventually(check: Callable[[], T], what: str, timeout: float = DEADLINE) -> T:
    """``check()``'s first result that raises nothing (HTTP errors and assertions are retried)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return check()
        except (AssertionError, httpx.HTTPError) as exc:
            if time.monotonic() > deadline:
                raise AssertionError(f"{what}: still failing after {timeout:g} s: {exc}") from exc
        time.sleep(0.05)


def mcp(url: str, method: str, params: dict[str, Any] | None = None, *, name: str | None = None) -> httpx.Response:
    """One 2026-07-28 request over HTTP."""
    params = {
        **(params or {}),
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {},
        },
    }
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": method,
    }
    if name is not None:
        headers["Mcp-Name"] = name
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return httpx.post(url, json=body, headers=headers, timeout=DEADLINE)


def result_of(response: httpx.Response, method: str) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    message = response.json()
    assert_valid(message, MODERN, method=method)
    result: dict[str, Any] = message["result"]
    return result


def call(url: str, tool: str, arguments: dict[str, Any] | None = None) -> Any:
    """The tool's structured result, or the text of a tool without an output schema."""
    result = result_of(mcp(url, "tools/call", {"name": tool, "arguments": arguments or {}}, name=tool), "tools/call")
    return result["structuredContent"] if "structuredContent" in result else result["content"][0]["text"]


def tool_names(url: str) -> list[str]:
    return [tool["name"] for tool in result_of(mcp(url, "tools/list"), "tools/list")["tools"]]


def error_page(dev: Dev, path: str = "/docs") -> str:
    page = httpx.get(dev.base + path, timeout=DEADLINE)
    assert page.status_code == 500, f"{page.status_code}: {page.text[:200]}"
    assert page.headers["content-type"].startswith("text/html")
    return page.text


def assert_listed(url: str, tool: str) -> None:
    assert tool in tool_names(url)


def assert_printed(dev: Dev, text: str) -> None:
    assert text in dev.output()


def assert_closed(port: int) -> None:
    assert not listening(port), f"something still listens on {port}"


def listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


# --- toolkit dev -----------------------------------------------------------------------------------------


def test_dev_serves_reloads_survives_a_syntax_error_and_stops_cleanly(tmp_path: Path) -> None:
    app = tmp_path / "app.py"
    app.write_text(WEATHER.read_text())
    with toolkit_dev(app) as dev:
        assert f"toolkit dev: tools page at {dev.base}/docs" in dev.output()
        assert f"toolkit dev: watching {tmp_path}" in dev.output()
        assert call(dev.url, "get_count") == 42
        page = httpx.get(dev.base + "/docs", timeout=DEADLINE)
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")

        # A new tool is served after the reload.
        app.write_text(WEATHER.read_text() + ADDED_TOOL)
        eventually(lambda: assert_listed(dev.url, "added"), "the added tool listed")
        assert call(dev.url, "added", {"name": "dev"}) == "hello dev"
        assert "toolkit dev: app.py changed; restarting" in dev.output()

        # A syntax error: the process stays, serving the error (HTML-escaped) at the page and the MCP path.
        source = WEATHER.read_text() + "\n\nbroken = <oops>\n"
        line = source.count("\n")
        app.write_text(source)
        shown = eventually(lambda: error_page(dev), "the error page")
        assert f"app.py:{line}" in shown and f"line {line}" in shown
        assert "SyntaxError" in shown
        assert "&lt;oops&gt;" in shown and "<oops>" not in shown
        assert error_page(dev, "/") == shown
        refused = mcp(dev.url, "tools/list")
        assert refused.status_code == 503
        error = refused.json()["error"]
        assert refused.json()["id"] == 1
        assert "failed to load" in error["message"] and f"app.py:{line}" in error["message"]
        assert dev.process.poll() is None
        assert f'app.py", line {line}' in dev.output()  # printed as toolkit run prints it

        # Fixed: served again, on the same port.
        app.write_text(WEATHER.read_text())
        assert eventually(lambda: call(dev.url, "get_count"), "served again after the fix") == 42
        assert "added" not in tool_names(dev.url)
        assert URL_LINE.findall(dev.output()) == [(dev.base, str(dev.port))]

        dev.process.send_signal(signal.SIGTERM)
        assert dev.process.wait(DEADLINE) == 0
        assert "Traceback" not in dev.output().split("broken = <oops>")[-1]
        assert "toolkit dev: stopped" in dev.output()
        assert not listening(dev.port)


def test_dev_waits_for_a_change_when_the_app_exits_by_itself(tmp_path: Path) -> None:
    app = tmp_path / "server.py"
    app.write_text("from toolkit import Server\n\nserver = Server('x')\nraise RuntimeError('no <database>')\n")
    with toolkit_dev(app) as dev:
        shown = eventually(lambda: error_page(dev), "the error page")
        assert "server.py:4" in shown and "RuntimeError: no &lt;database&gt;" in shown

        # A process that ends by itself is reported once and not started again until a change.
        app.write_text("import os\n\nos._exit(3)\n")
        eventually(lambda: assert_printed(dev, "exited with status 3"), "the exit reported")
        assert not listening_http(dev)
        assert dev.output().count("exited with status 3") == 1
        assert dev.process.poll() is None

        app.write_text(SMALL_APP)
        assert eventually(lambda: call(dev.url, "get_count"), "served after the change") == 42


def listening_http(dev: Dev) -> bool:
    """Whether a request gets an answer within a short while (the socket queues it when no child serves)."""
    try:
        httpx.get(dev.base + "/docs", timeout=0.5)
    except httpx.TimeoutException:
        return False
    return True


def test_dev_registration_errors_show_the_users_line(tmp_path: Path) -> None:
    app = tmp_path / "server.py"
    app.write_text(
        "from toolkit import Server\n\nserver = Server('x')\n\n\nclass Thing:\n    pass\n\n\n"
        "@server.tool\ndef f(x: Thing) -> int:\n    return 1\n"
    )
    with toolkit_dev(app, "--docs-path", "/tools") as dev:
        shown = eventually(lambda: error_page(dev, "/tools"), "the error page")
        assert "cannot load server.py" in shown and "server.py:" in shown
        refused = mcp(dev.url, "tools/list")
        assert refused.status_code == 503 and "server.py:" in refused.json()["error"]["message"]


def test_dev_stops_its_child_when_the_supervisor_is_killed(tmp_path: Path) -> None:
    app = tmp_path / "app.py"
    app.write_text(SMALL_APP)
    with toolkit_dev(app) as dev:
        assert eventually(lambda: call(dev.url, "get_count"), "served") == 42
        dev.process.kill()
        dev.process.wait()
        eventually(lambda: assert_closed(dev.port), "the child gone with the supervisor")


def test_dev_ctrl_c_stops_the_supervisor_and_its_child(tmp_path: Path) -> None:
    """A terminal's Ctrl-C sends SIGINT to its whole foreground process group."""
    app = tmp_path / "app.py"
    app.write_text(SMALL_APP)
    with toolkit_dev(app, new_session=True) as dev:
        assert eventually(lambda: call(dev.url, "get_count"), "served") == 42
        os.killpg(dev.process.pid, signal.SIGINT)
        assert dev.process.wait(DEADLINE) == 0
        assert "Traceback" not in dev.output() and "toolkit dev: stopped" in dev.output()
        assert not listening(dev.port)


def test_dev_no_reload_serves_in_one_process_without_watchfiles(tmp_path: Path) -> None:
    app = tmp_path / "app.py"
    app.write_text(SMALL_APP)
    fake = tmp_path / "fake"
    (fake / "watchfiles").mkdir(parents=True)
    (fake / "watchfiles" / "__init__.py").write_text("raise ImportError('No module named watchfiles')\n")
    env = {**os.environ, "PYTHONPATH": str(fake)}

    missing = toolkit("dev", app.name, "--port", "0", cwd=tmp_path, env=env)
    assert missing.returncode == 2
    assert "pip install 'toolkit-mcp[reload]'" in missing.stderr and "--no-reload" in missing.stderr

    with toolkit_dev(app, "--no-reload", env=env) as dev:
        assert "not watching for changes (--no-reload)" in dev.output()
        assert call(dev.url, "get_count") == 42
        assert httpx.get(dev.base + "/docs", timeout=DEADLINE).status_code == 200
        dev.process.send_signal(signal.SIGINT)
        assert dev.process.wait(DEADLINE) == 0


def test_dev_no_reload_exits_2_when_the_app_fails_to_load(tmp_path: Path) -> None:
    app = tmp_path / "app.py"
    app.write_text("from toolkit import Server\nserver = Server('x')\nraise RuntimeError('boom')\n")
    done = toolkit("dev", app.name, "--port", "0", "--no-reload", cwd=tmp_path)
    assert done.returncode == 2
    assert 'app.py", line 3' in done.stderr and "RuntimeError: boom" in done.stderr


@pytest.mark.parametrize(
    ("args", "mentions"),
    [(["missing.py"], "no such file: missing.py"), (["app.py", "--docs-path", "docs"], "--docs-path")],
)
def test_dev_usage_errors_exit_2(tmp_path: Path, args: list[str], mentions: str) -> None:
    (tmp_path / "app.py").write_text(SMALL_APP)
    done = toolkit("dev", *args, "--port", "0", cwd=tmp_path)
    assert done.returncode == 2
    assert mentions in done.stderr


def test_a_stdio_start_imports_neither_the_dev_server_nor_watchfiles(tmp_path: Path) -> None:
    app = tmp_path / "app.py"
    app.write_text(SMALL_APP)
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "toolkit", "run", str(app)],
        input="",  # stdin closes at once: the server ends
        capture_output=True,
        text=True,
        timeout=DEADLINE,
        check=True,
    )
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if "|" in line}
    assert "toolkit._cli" in imported
    assert not {name for name in imported if name.startswith(("toolkit._dev", "watchfiles"))}


# --- toolkit run --docs -------------------------------------------------------------------------------------


def test_run_docs_path_serves_the_tools_page() -> None:
    with http_server(WEATHER, "--docs-path", "/tools") as running:
        page = httpx.get(running.base_url + "/tools", timeout=DEADLINE)
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        assert httpx.get(running.base_url + "/docs", timeout=DEADLINE).status_code == 404


def test_run_docs_needs_http() -> None:
    done = toolkit("run", str(WEATHER), "--docs")
    assert done.returncode == 2
    assert "--docs" in done.stderr and "--transport http" in done.stderr


def test_run_docs_is_refused_for_an_app_built_in_code(tmp_path: Path) -> None:
    app = tmp_path / "built.py"
    app.write_text(SMALL_APP + "\napp = server.http_app()\n")
    done = toolkit("run", f"{app}:app", "--transport", "http", "--docs")
    assert done.returncode == 2
    assert "made by server.http_app(); set --docs there, in code" in done.stderr


# --- the same pieces in this process (coverage is measured in the pytest process only) ---------------------


@pytest.fixture
def restore_imports(tmp_path: Path) -> Iterator[None]:
    """Loading an app adds its directory to ``sys.path`` and the module to ``sys.modules``: undo both."""
    path, modules = list(sys.path), set(sys.modules)
    yield
    sys.path[:] = path
    for name in set(sys.modules) - modules:
        if str(getattr(sys.modules[name], "__file__", "")).startswith(str(tmp_path)):
            del sys.modules[name]


def prepared(app: str, *, path: str = "/mcp", docs: str = "/docs") -> McpApp | LoadFailure:
    return _dev_server.prepare(app, path=path, docs=docs, describe=functools.partial(_describe_failure, app))


def asgi_client(app: Any) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url="http://127.0.0.1")


@pytest.mark.usefixtures("restore_imports")
async def test_prepare_gives_the_app_with_its_tools_page(tmp_path: Path) -> None:
    (tmp_path / "dev_ok.py").write_text(SMALL_APP)
    app = prepared(str(tmp_path / "dev_ok.py"), docs="/tools")
    assert isinstance(app, McpApp)
    async with asgi_client(app) as client:
        assert (await client.get("/tools")).status_code == 200
    assert app.state.mcp.shutdown_grace == _dev_server.DEV_SHUTDOWN_GRACE


@pytest.mark.usefixtures("restore_imports")
@pytest.mark.parametrize(
    ("source", "where", "headline"),
    [
        ("x = (\n", "dev_bad.py:1", "SyntaxError"),
        ("from toolkit import Server\nserver = Server('x')\n\n1 / 0\n", "dev_bad.py:4", "ZeroDivisionError"),
        ("from toolkit import Server\none = Server('x')\ntwo = Server('y')\n", None, "has no attribute 'server'"),
        ("from toolkit import Server\nserver = Server('x', page_size=0)\n", "dev_bad.py:2", "page_size"),
    ],
    ids=["syntax", "exception", "no-server", "refused-argument"],
)
def test_prepare_describes_why_the_app_did_not_load(
    tmp_path: Path, source: str, where: str | None, headline: str
) -> None:
    (tmp_path / "dev_bad.py").write_text(source)
    failure = prepared(str(tmp_path / "dev_bad.py"))
    assert isinstance(failure, LoadFailure)
    assert failure.where == where
    assert headline in failure.headline and failure.text.startswith("toolkit: ")


@pytest.mark.usefixtures("restore_imports")
def test_an_app_built_in_code_is_served_as_built(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "dev_built.py").write_text(SMALL_APP + "\napp = server.http_app('/api')\n")
    spec = f"{tmp_path / 'dev_built.py'}:app"
    assert isinstance(prepared(spec), McpApp)
    notes = capsys.readouterr().err
    assert "serves MCP at its own path, /api" in notes and "no tools page (give it docs=True)" in notes
    refused = prepared(spec, path="/other", docs="/tools")
    assert isinstance(refused, LoadFailure)
    assert "set --path, --docs-path there, in code" in refused.text


async def test_the_failure_app_shows_the_error_escaped() -> None:
    failure = LoadFailure("toolkit: app.py raised <b>boom</b>", "app.py:3", "RuntimeError: <b>boom</b>")
    app = _dev_server.failure_app(failure, app_spec="app.py", path="/mcp", docs="/docs")
    async with asgi_client(app) as client:
        page = await client.get("/docs")
        assert page.status_code == 500 and page.headers["content-type"].startswith("text/html")
        assert "&lt;b&gt;boom&lt;/b&gt;" in page.text and "<b>boom" not in page.text and "app.py:3" in page.text
        assert "default-src 'none'" in page.headers["content-security-policy"]
        assert (await client.get("/")).text == page.text
        assert (await client.get("/elsewhere")).status_code == 404
        answer = await client.post("/mcp", json={"jsonrpc": "2.0", "id": "a", "method": "tools/list"})
        assert answer.status_code == 503
        body = answer.json()
        assert body["id"] == "a" and body["error"]["data"]["where"] == "app.py:3"
        assert "app.py failed to load (app.py:3): RuntimeError" in body["error"]["message"]
        assert (await client.post("/mcp", content=b"not json")).json()["id"] is None
        assert (await client.post("/mcp", json={"jsonrpc": "2.0", "id": True})).json()["id"] is None
        assert (await client.get("/mcp")).status_code == 503
        assert (await client.get("/docs", headers={"host": "evil.example"})).status_code == 421
        refused = await client.post("/mcp", json={}, headers={"origin": "https://evil.example"})
        assert refused.status_code == 403


def test_watch_root_and_its_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "app.py").write_text(SMALL_APP)
    assert _dev.watch_root(f"{tmp_path / 'app.py'}:server") == tmp_path
    monkeypatch.chdir(tmp_path)
    assert _dev.watch_root("package.module:server") == tmp_path
    with pytest.raises(SystemExit) as exited:
        _dev.watch_root("missing.py")
    assert exited.value.code == 2


def test_a_port_in_use_is_said_plainly(capsys: pytest.CaptureFixture[str]) -> None:
    with (
        _dev.listening("127.0.0.1", 0) as taken,
        pytest.raises(SystemExit) as exited,
        _dev.listening("127.0.0.1", taken.getsockname()[1]),
    ):
        pass
    assert exited.value.code == 1
    assert "cannot listen on 127.0.0.1:" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        _dev.listening("no-such-host.invalid", 0).__enter__()


def test_the_announcement_brackets_ipv6(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        _dev.announce("app.py", sock, host="::1", path="/mcp", docs="/docs", watching=None)
    said = capsys.readouterr().err
    assert f"serving app.py at http://[::1]:{port}/mcp" in said
    assert "not watching for changes (--no-reload)" in said


def test_without_watchfiles_dev_says_how_to_get_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "watchfiles", None)
    with pytest.raises(SystemExit) as exited:
        _dev.supervise("app.py", host="127.0.0.1", port=0, path="/mcp", docs="/docs", log_level="info")
    assert exited.value.code == 2
    assert "pip install 'toolkit-mcp[reload]'" in capsys.readouterr().err


def test_a_child_that_ignores_sigterm_is_killed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ready = tmp_path / "ready"
    stubborn = (
        "import pathlib, signal, sys, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "pathlib.Path(sys.argv[1]).touch()\n"
        "time.sleep(30)\n"
    )
    with socket.socket() as sock:
        child = _dev._Child([sys.executable, "-c", stubborn, str(ready)], sock.fileno())
        child.start()
        eventually(lambda: assert_exists(ready), "the child ready")
        monkeypatch.setattr(_dev, "STOP_SECONDS", 0.2)
        child.stop()
        child.stop()  # stopping a stopped child does nothing
    assert "did not stop within 0.2 s; killing it" in capsys.readouterr().err

    with socket.socket() as sock:
        child = _dev._Child([sys.executable, "-c", "raise SystemExit(3)"], sock.fileno())
        child.start()
        assert child.process is not None
        child.process.wait(DEADLINE)
        child.report_if_ended()
        child.report_if_ended()
        child.stop()
    assert capsys.readouterr().err.count("exited with status 3") == 1


def assert_exists(path: Path) -> None:
    assert path.exists()


def test_the_supervisor_in_this_process(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``toolkit dev`` (``main``) itself, stopped by SIGTERM as from outside; its children are real processes."""
    app = tmp_path / "app.py"
    app.write_text(SMALL_APP)
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    failures: list[BaseException] = []

    def drive() -> None:
        try:
            assert eventually(lambda: call(url, "get_count"), "served") == 42
            app.write_text(SMALL_APP + ADDED_TOOL)
            eventually(lambda: assert_listed(url, "added"), "the added tool listed")
        except BaseException as exc:
            failures.append(exc)
        finally:
            os.kill(os.getpid(), signal.SIGTERM)

    # A SIGTERM arriving after supervise() restored the handlers must not end pytest.
    original = signal.signal(signal.SIGTERM, lambda signum, frame: None)
    driver = threading.Thread(target=drive)
    driver.start()
    try:
        main(["dev", str(app), "--port", str(port), "--log-level", "warning"])
    finally:
        driver.join(DEADLINE * 3)
        signal.signal(signal.SIGTERM, original)
    assert not failures, failures
    said = capsys.readouterr().err
    assert f"toolkit dev: serving {app} at {url}" in said
    assert "toolkit dev: app.py changed; restarting" in said and "toolkit dev: stopped" in said
    assert not listening(port)


async def test_the_dev_server_as_authorization_server_names_its_own_path_as_the_resource(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``toolkit dev --path /tools/mcp`` with ``TOOLKIT_OAUTH_PROXY_*``: the protected resource is
    the endpoint the dev server serves, not ``/mcp``."""
    from tests.http_support import serve

    from toolkit._dev_server import LoadFailure, prepare

    for name in [name for name in os.environ if name.startswith(("TOOLKIT_AUTH_", "TOOLKIT_OAUTH_PROXY_"))]:
        monkeypatch.delenv(name)
    monkeypatch.delenv("TOOLKIT_RESOURCE_URL", raising=False)
    base = "https://dev.example"
    monkeypatch.setenv("TOOLKIT_OAUTH_PROXY_ISSUER", "https://idp.example")
    monkeypatch.setenv("TOOLKIT_OAUTH_PROXY_CLIENT_ID", "toolkit")
    monkeypatch.setenv("TOOLKIT_OAUTH_PROXY_CLIENT_SECRET", "upstream-secret")
    monkeypatch.setenv("TOOLKIT_OAUTH_PROXY_BASE_URL", base)

    def refuse(exc: Exception) -> LoadFailure:
        raise exc

    app = prepare(f"{WEATHER}:server", path="/tools/mcp", docs="/docs", describe=refuse)
    assert not isinstance(app, LoadFailure)
    async with serve(app) as running, httpx.AsyncClient() as http:
        metadata = await http.get(f"{running.base}/.well-known/oauth-protected-resource/tools/mcp")
    assert metadata.status_code == 200
    assert metadata.json()["resource"] == f"{base}/tools/mcp"
