"""Marks the upstream processes leave in ``$PROXY_FAULTS_DIR`` for the test to read.

Imported by the scripts beside it (run as files, so by path) and by the tests (as a module).
"""

from __future__ import annotations

import os
from pathlib import Path

DIR_VARIABLE = "PROXY_FAULTS_DIR"
SPAWNS = "spawns"
"""One line per upstream process started: its pid."""
DOWN = "down"
"""While this file exists, an upstream started exits at once with code 1 (the server is down)."""


def marks_dir() -> Path | None:
    value = os.environ.get(DIR_VARIABLE)
    return Path(value) if value else None


def mark(name: str, text: str = "") -> None:
    """Leave the mark ``name`` holding ``text`` (or this pid), whole: written aside, then renamed."""
    where = marks_dir()
    if where is not None:
        partial = where / f".{name}.{os.getpid()}.partial"
        partial.write_text(text or str(os.getpid()))
        partial.replace(where / name)


def spawned() -> None:
    """Record this process's start (one line in ``spawns``); exit with code 1 while ``down`` exists."""
    where = marks_dir()
    if where is None:
        return
    with (where / SPAWNS).open("a") as log:
        log.write(f"{os.getpid()}\n")
    if (where / DOWN).exists():
        os.write(2, b"upstream: down for maintenance\n")
        os._exit(1)


def spawns(where: Path) -> list[int]:
    """The pids of the upstream processes started so far."""
    try:
        return [int(line) for line in (where / SPAWNS).read_text().split()]
    except FileNotFoundError:
        return []
