"""Every resource-template form toolkit accepts, for the traversal tests (tests/test_templates.py).

Each form's function answers with the values it was given, as JSON. ``file:///docs/{folder}/{name}``
is the hostile review's case: it joins its values onto a directory the naive way, with
``secret.txt`` one level above it, so a traversal that got through would read the secret.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path
from typing import Any

from toolkit import Server

server = Server("templates")

BASE = Path(tempfile.mkdtemp(prefix="toolkit-templates-"))
atexit.register(shutil.rmtree, BASE, ignore_errors=True)
(BASE / "docs" / "guides").mkdir(parents=True)
(BASE / "docs" / "guides" / "intro.md").write_text("inside")
(BASE / "secret.txt").write_text("THE SECRET")
SECRET = "THE SECRET"


@server.resource("file:///docs/{folder}/{name}")
def naive(folder: str, name: str) -> str:
    """Joins without a check: only the template stands between a client and the secret."""
    return (BASE / "docs" / folder / name).read_text()


@server.resource("file:///tree/{+path}")
def naive_tree(path: str) -> str:
    """Joins a multi-segment value without a check."""
    return (BASE / "docs" / path).read_text()


def _values(**values: Any) -> dict[str, Any]:
    return {name: value for name, value in values.items() if value is not None}


@server.resource("forms://simple/{a}")
def simple(a: str) -> dict[str, Any]:
    return _values(a=a)


@server.resource("forms://pair/{a,b}")
def pair(a: str, b: str) -> dict[str, Any]:
    return _values(a=a, b=b)


@server.resource("forms://reserved/{+a}")
def reserved(a: str) -> dict[str, Any]:
    return _values(a=a)


@server.resource("forms://fragment/x{#a}")
def fragment(a: str) -> dict[str, Any]:
    return _values(a=a)


@server.resource("forms://wildcard/{a*}")
def wildcard(a: str) -> dict[str, Any]:
    return _values(a=a)


@server.resource("forms://segments{/a*}")
def segments(a: list[str] | None = None) -> dict[str, Any]:
    return _values(a=a)


@server.resource("forms://segment{/a}")
def segment(a: str) -> dict[str, Any]:
    return _values(a=a)


@server.resource("forms://label/x{.a}")
def label(a: str) -> dict[str, Any]:
    return _values(a=a)


@server.resource("forms://params/x{;a,b}")
def params(a: str, b: str | None = None) -> dict[str, Any]:
    return _values(a=a, b=b)


@server.resource("forms://query/x{?a,b}")
def query(a: str, b: int = 1) -> dict[str, Any]:
    return _values(a=a, b=b)


@server.resource("forms://continued/x?fixed=1{&a}")
def continued(a: str) -> dict[str, Any]:
    return _values(a=a)


@server.resource("forms://prefix/{a:3}")
def prefix(a: str) -> dict[str, Any]:
    return _values(a=a)


@server.resource("forms://open/{+a}", allow_traversal=True)
def opted_out(a: str) -> dict[str, Any]:
    """``allow_traversal=True``: the function takes responsibility for its values."""
    return _values(a=a)
