"""``toolkit ARGS`` through the CLI's entry point in this process: the same code as the command, in the
pytest process (where coverage counts it), with what it printed and its exit status as a subprocess's."""

from __future__ import annotations

import contextlib
import io
import logging
import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

from toolkit._cli import main


def run_cli(
    args: list[str], *, env: Mapping[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``toolkit ARGS``; ``env`` replaces the environment and ``cwd`` the working directory for the
    call. Both are put back after, and so are the root logger's handlers (``--log-level`` adds one)."""
    out, err = io.StringIO(), io.StringIO()
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    saved_cwd, saved_environment = os.getcwd(), dict(os.environ)
    code = 0
    try:
        if env is not None:
            os.environ.clear()
            os.environ.update(env)
        if cwd is not None:
            os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main(args)
            except SystemExit as exit_:
                code = exit_.code if isinstance(exit_.code, int) else 1
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_environment)
        root.handlers[:], root.level = handlers, level
    return subprocess.CompletedProcess(["toolkit", *args], code, out.getvalue(), err.getvalue())
