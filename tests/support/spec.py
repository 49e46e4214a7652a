"""What the official schema of a protocol version defines (``tests/spec/<version>/schema.json``)."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

SPEC = Path(__file__).resolve().parents[1] / "spec"


@functools.cache
def definitions(version: str) -> dict[str, Any]:
    """Every definition of ``version``'s schema, by name (``$defs`` or ``definitions``)."""
    document = json.loads((SPEC / version / "schema.json").read_text())
    found: dict[str, Any] = document.get("$defs") or document["definitions"]
    return found


def fields(version: str, name: str) -> set[str]:
    """The properties definition ``name`` has in ``version`` (the fields that version knows)."""
    return set(definitions(version)[name].get("properties", {}))
