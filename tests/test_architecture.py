"""The one-way rule (docs/architecture.md), checked on the source: every import points down.

Imports are read with ``ast``, module-level or inside a function alike; only those under
``if TYPE_CHECKING:`` (annotations) are exempt. The layers are listed bottom-up; a module may
import its own layer and the layers below it. Transports are stricter: they are handed an
engine and callables, so they import only the foundation, the store and the auth wing.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src"
PACKAGE = SRC / "toolkit"

LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("foundation", ("_types", "_errors", "_versions", "_jsonrpc")),
    ("schema", ("_schema",)),
    ("model", ("_content", "_functions", "_tools", "_resources", "_prompts", "_completions")),
    ("registry", ("_registry",)),
    ("compat", ("_compat",)),
    ("store", ("_session", "_events", "_mrtr", "_store")),
    ("auth", ("_auth",)),
    ("transports", ("_transports",)),
    ("engine", ("_settings", "_scope", "_context", "_notifications", "_pages", "_tasks", "_engine")),
    ("facade", ("_server",)),
    ("entry", ("_loader", "_cli", "testing", "auth", "stores", "__main__", "__init__")),
]
RANK = {name: rank for rank, (_, names) in enumerate(LAYERS) for name in names}
TRANSPORTS_MAY_IMPORT = {"foundation", "store", "auth", "transports"}
MAX_TRANSPORT_FUNCTION_LINES = 60


def _top(module: str) -> str:
    """``_transports.http.app`` → ``_transports``: a wing counts as one name."""
    return module.split(".", maxsplit=1)[0]


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        found[".".join(parts)] = path
    return found


def _runtime_imports(name: str, path: Path) -> set[str]:
    """The package modules ``name`` imports at run time (relative to the package)."""
    tree = ast.parse(path.read_text())
    typing_only: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
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
    assert not upward, f"toolkit.{name} ({layer}) imports upward: {upward}"


def test_the_rule_catches_an_upward_import(tmp_path: Path) -> None:
    """The checker itself: an engine-layer module importing the facade is reported."""
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from ._server import Server\n    return Server\n")
    assert _runtime_imports("_engine", bad) == {"_server", "_server.Server"}
    guarded = tmp_path / "guarded.py"
    guarded.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ._server import Server\n")
    assert _runtime_imports("_engine", guarded) == set()


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
