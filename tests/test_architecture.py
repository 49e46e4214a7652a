"""The one-way rule (docs/architecture.md), checked on the source: every import points down.

Imports are read with ``ast``, module-level or inside a function alike; only those under
``if TYPE_CHECKING:`` (annotations) are exempt. The layers are listed bottom-up; a module may
import its own layer and the layers below it. Transports are stricter: they are handed an
engine and callables, so they import only the foundation, the store and the auth wing. So is
the client: it imports only the foundation, ``_compat`` and its own wing, and it and the
transports never import each other (wall 1: the two sides of the wire are siblings).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import toolkit

SRC = Path(__file__).resolve().parent.parent / "src"
PACKAGE = SRC / "toolkit"

LAYERS: list[tuple[str, tuple[str, ...]]] = [
    (
        "foundation",
        (
            "_types",
            "_errors",
            "_methods",
            "_headers",
            "_framing",
            "_versions",
            "_json_pieces",
            "_jsonrpc",
            "_uritemplate",
        ),
    ),
    ("schema", ("_schema",)),
    (
        "model",
        (
            "_content",
            "_answers",
            "_depends",
            "_functions",
            "_injection",
            "_components",
            "_tools",
            "_resources",
            "_prompts",
            "_completions",
            "_routes",
            "_transform",
        ),
    ),
    ("registry", ("_registry",)),
    ("compat", ("_compat",)),
    ("store", ("_session", "_events", "_mrtr", "_store")),
    ("auth", ("_auth",)),
    ("transports", ("_transports",)),
    ("client", ("_client",)),
    ("sources", ("_sources",)),
    (
        "engine",
        (
            "_settings",
            "_script",
            "_inbound",
            "_context",
            "_providers",
            "_state",
            "_state_providers",
            "_notifications",
            "_pages",
            "_extensions",
            "_middleware",
            "_telemetry",
            "_calls",
            "_engine",
        ),
    ),
    ("facade", ("_server", "_server_shaping", "_compose", "_openapi")),
    (
        "entry",
        (
            "_loader",
            "_environment",
            "_cli",
            "_cli_remote",
            "_cli_calls",
            "_cli_proxy",
            "_cli_openapi",
            "_cli_auth",
            "_proxy_config",
            "_install",
            "_dev",
            "_dev_server",
            "_dev_watchdog",
            "testing",
            "client",
            "auth",
            "stores",
            "middleware",
            "extensions",
            "__main__",
            "__init__",
        ),
    ),
]
RANK = {name: rank for rank, (_, names) in enumerate(LAYERS) for name in names}
TRANSPORTS_MAY_IMPORT = {"foundation", "store", "auth", "transports"}
CLIENT_MAY_IMPORT = {"foundation", "schema", "compat", "client"}  # and the shared OAuth helpers (_is_shared_oauth)
SOURCES_MAY_NOT_IMPORT = {"transports", "auth", "store"}  # a source reaches a server through the client or a runner
ENGINE_MAY_NOT_IMPORT = {"sources", "client"}  # wall 2: the engine reads a registry that already holds them
MAX_TRANSPORT_FUNCTION_LINES = 60


def _is_shared_oauth(module: str) -> bool:
    """The OAuth helpers a client and an authorization server share (ARCHITECTURE §1, auth)."""
    return module == "_auth.oauth" or module.startswith("_auth.oauth.")


def _top(module: str) -> str:
    """``_transports.http.app`` → ``_transports``: a wing counts as one name."""
    return module.split(".", maxsplit=1)[0]


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        found[".".join(parts)] = path
    return found


def _runtime_imports(name: str, path: Path, *, annotations: bool = False) -> set[str]:
    """The package modules ``name`` imports at run time (relative to the package).

    ``annotations``: those under ``if TYPE_CHECKING:`` too.
    """
    tree = ast.parse(path.read_text())
    typing_only: set[int] = set()
    for node in ast.walk(tree):
        if not annotations and isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            typing_only.update(id(sub) for sub in ast.walk(node))
    # A module's package, against which relative imports resolve (for "x/__init__" too: "x.__init__"[:-1]).
    package_parts = name.split(".")[:-1]
    targets: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package_parts[: len(package_parts) - (node.level - 1)] if node.level > 1 else package_parts
                module = ".".join([*base, *(node.module.split(".") if node.module else [])])
                targets.update(f"{module}.{alias.name}".strip(".") for alias in node.names)
                targets.add(module)
            elif node.module and node.module.startswith("toolkit."):
                targets.add(node.module.removeprefix("toolkit."))
        elif isinstance(node, ast.Import):
            targets.update(a.name.removeprefix("toolkit.") for a in node.names if a.name.startswith("toolkit."))
    return {target for target in targets if target and _top(target) in RANK}


MODULES = _modules()


def test_every_module_has_a_layer() -> None:
    unplaced = sorted(name for name in MODULES if _top(name) not in RANK)
    assert not unplaced, f"place these modules in a layer (here and in docs/architecture.md): {unplaced}"


@pytest.mark.parametrize("name", sorted(MODULES))
def test_imports_point_down(name: str) -> None:
    layer = LAYERS[RANK[_top(name)]][0]
    upward = []
    for target in sorted(_runtime_imports(name, MODULES[name])):
        target_layer = LAYERS[RANK[_top(target)]][0]
        if RANK[_top(target)] > RANK[_top(name)]:
            upward.append(f"{target} ({target_layer})")
        elif layer == "transports" and target_layer not in TRANSPORTS_MAY_IMPORT:
            upward.append(f"{target} ({target_layer}: a transport gets an engine and callables instead)")
        elif layer == "client" and target_layer not in CLIENT_MAY_IMPORT and not _is_shared_oauth(target):
            upward.append(f"{target} ({target_layer}: the client reaches a server only through a transport)")
        elif layer == "sources" and target_layer in SOURCES_MAY_NOT_IMPORT:
            upward.append(f"{target} ({target_layer}: a source reaches its server through the client or a runner)")
        elif layer == "engine" and target_layer in ENGINE_MAY_NOT_IMPORT:
            upward.append(f"{target} ({target_layer}: the engine calls components through their base class)")
    assert not upward, f"toolkit.{name} ({layer}) imports upward: {upward}"


def test_the_client_and_the_transports_never_import_each_other(tmp_path: Path) -> None:
    """Wall 1, annotations included: what both sides of the wire need lives below them."""
    sibling = {"_client": "_transports", "_transports": "_client"}
    crossing = [
        f"{name} -> {target}"
        for name, path in MODULES.items()
        if _top(name) in sibling
        for target in _runtime_imports(name, path, annotations=True)
        if _top(target) == sibling[_top(name)]
    ]
    assert not crossing, f"the client and the transports import each other: {crossing}"
    # The check itself: an import for an annotation alone is caught too.
    guarded = tmp_path / "guarded.py"
    guarded.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .._transports.base import X\n")
    assert "_transports.base" in _runtime_imports("_client.session", guarded, annotations=True)


def test_the_rule_catches_an_upward_import(tmp_path: Path) -> None:
    """The checker itself: an engine-layer module importing the facade is reported."""
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from ._server import Server\n    return Server\n")
    assert _runtime_imports("_engine", bad) == {"_server", "_server.Server"}
    guarded = tmp_path / "guarded.py"
    guarded.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ._server import Server\n")
    assert _runtime_imports("_engine", guarded) == set()


ENGINE_CORE = {"_engine", "_calls", "_server"}


@pytest.mark.parametrize("wing", ["_extensions", "_middleware"])
def test_built_ins_import_only_their_wings_base(wing: str) -> None:
    """Wall 3: a built-in extension or middleware sees its wing's base and lower layers, not the engine."""
    offending = []
    for name, path in MODULES.items():
        if _top(name) != wing:
            continue
        for target in _runtime_imports(name, path):
            if _top(target) in ENGINE_CORE:
                offending.append(f"{name} imports {target}")
    assert not offending, offending


def test_transport_functions_stay_small() -> None:
    long = []
    for name, path in MODULES.items():
        if _top(name) != "_transports":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MAX_TRANSPORT_FUNCTION_LINES:
                    long.append(f"{name}.{node.name}: {lines} lines")
    assert not long, f"split these (one job per function): {long}"


# What a stdio server must not load to start: the HTTP stack and the optional extras, and what
# only some features need (each is imported where it is first used). ARCHITECTURE §8: ``import
# toolkit`` and a stdio server start fast; every module here once cost start-up time.
NOT_AT_START_UP = (
    "toolkit._transports.http",
    "toolkit._auth",
    "toolkit._store.redis",
    "toolkit._events",  # resumable legacy HTTP streams
    "toolkit._store.sessions",  # legacy HTTP sessions in a store
    "toolkit._answers",  # what ctx.elicit / sample / list_roots return
    "toolkit._extensions.tasks.runs",  # tasks: only once a task is asked for
    "toolkit._store.tasks",  # tasks: only for tools with task=
    "toolkit._extensions.apps",  # MCP Apps: only for a tool with app=
    "toolkit._state",  # state: only once ctx.state or a state dependency is used
    "toolkit._state_providers",
    "toolkit._store.state",
    "toolkit._schema.elicitation",
    "starlette",
    "uvicorn",
    "httpx",
    "redis",
    "jwt",
    "cryptography",
    "json",  # toolkit encodes with pydantic-core; json is for rare schema comparisons
    "queue",  # the worker threads of plain ``def`` functions, started on first use
    "mimetypes",  # content blocks read from files
    "toolkit._client",  # a server never needs the client
    "toolkit._sources.proxy",  # only a server that proxies another
    "toolkit._sources.results",  # (its results)
    "toolkit._sources.openapi",  # only a server made from an OpenAPI document (it loads httpx)
    "toolkit._transform",  # only once a tool is transformed
)
NOT_AT_START_UP_PREFIXES = tuple(f"{name}." for name in NOT_AT_START_UP)
START_A_SERVER = """
import sys
import asyncio, pydantic, jsonschema_rs  # what any toolkit server needs anyway
before = set(sys.modules)
from toolkit import Server
server = Server("start-up")
async def numbers() -> list[int]:
    \"\"\"Some numbers.\"\"\"
    return [1]
server.add_tool(numbers)
print("\\n".join(sorted(set(sys.modules) - before)))
"""


def test_a_stdio_server_starts_without_what_it_does_not_use() -> None:
    run = subprocess.run([sys.executable, "-c", START_A_SERVER], capture_output=True, text=True, check=True)
    loaded = run.stdout.split()
    assert "toolkit._transports.stdio" in loaded, run.stdout
    unexpected = [name for name in loaded if name in NOT_AT_START_UP or name.startswith(NOT_AT_START_UP_PREFIXES)]
    assert not unexpected, f"imported at start-up; import them where they are first used instead: {unexpected}"


def test_public_names_imported_on_first_use_resolve() -> None:
    from toolkit import _answers, _events

    assert toolkit.EventStore is _events.EventStore
    for name in ("ElicitResult", "Root", "SamplingResult"):
        assert getattr(toolkit, name) is getattr(_answers, name)
    assert set(toolkit.__all__) <= set(dir(toolkit))
    from toolkit import stores
    from toolkit._store import sessions

    assert stores.SessionRecord is sessions.SessionRecord
    with pytest.raises(AttributeError, match="no attribute 'Nothing'"):
        _ = toolkit.Nothing
