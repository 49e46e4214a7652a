"""Load example apps as fresh modules, so each test gets its own ``Server``."""

from __future__ import annotations

import importlib.util
import itertools
import sys
from pathlib import Path
from types import ModuleType

from toolkit import Server

from .processes import REPO

EXAMPLES = REPO / "examples"
WEATHER = EXAMPLES / "weather.py"
STDIO_APP = Path(__file__).with_name("stdio_app.py")

_fresh = itertools.count()


def load_module(path: Path) -> ModuleType:
    """Execute ``path`` as a new module (registered in ``sys.modules`` so forward references resolve)."""
    name = f"_toolkit_test_app_{path.stem}_{next(_fresh)}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def weather_module() -> ModuleType:
    """A fresh copy of ``examples/weather.py`` (its ``server`` and ``INTEROP_PLAN``)."""
    return load_module(WEATHER)


def weather_server() -> Server:
    server = weather_module().server
    assert isinstance(server, Server)
    return server
