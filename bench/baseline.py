"""The baseline: toolkit as of an earlier commit, measured in the same run as the current tree.

``--baseline REF`` checks REF out as a detached git worktree under ``.bench/baseline-<full sha>``
(reused while it is still clean and at that sha) and adds a column ``toolkit@<short sha>``. That
column runs the *current* bench servers with the project's ``.venv`` Python, only with
``PYTHONPATH=<worktree>/src`` so that ``import toolkit`` finds the baseline's package: the
workloads, the driver and the dependencies stay identical, and the one thing that differs between
the two toolkit columns is the framework's source.
"""

import fcntl
import subprocess
from dataclasses import dataclass
from pathlib import Path

# What ``--only`` accepts for the baseline column (its real name changes with the sha).
ALIASES = ("base", "baseline")


class BaselineError(Exception):
    """The baseline cannot be prepared; the message says why, for the user."""


@dataclass(frozen=True)
class Baseline:
    ref: str  # as the user wrote it, e.g. HEAD~3
    sha: str
    short: str
    subject: str
    worktree: Path

    @property
    def column(self) -> str:
        return f"toolkit@{self.short}"

    @property
    def src(self) -> Path:
        return self.worktree / "src"

    def as_json(self) -> dict[str, str]:
        return {
            "ref": self.ref,
            "sha": self.sha,
            "short": self.short,
            "subject": self.subject,
            "column": self.column,
            "worktree": str(self.worktree),
        }


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise BaselineError(f"git {' '.join(args)}: {done.stderr.strip() or f'exit {done.returncode}'}")
    return done.stdout.strip()


def prepare(root: Path, ref: str) -> Baseline:
    """Resolve ``ref`` and make or reuse its worktree."""
    try:
        sha = _git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    except BaselineError:
        raise BaselineError(f"--baseline {ref!r} is not a commit of {root}") from None
    short = _git(root, "rev-parse", "--short", sha)
    subject = _git(root, "log", "-1", "--format=%s", sha)
    worktree = root / ".bench" / f"baseline-{sha}"
    worktree.parent.mkdir(parents=True, exist_ok=True)
    # Two runs asking for the same baseline at once (a test next to a manual run) must not both
    # `git worktree add` the same path; the lock is released when the file is closed.
    with open(worktree.parent / "baseline.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if worktree.exists():
            _check_reusable(worktree, sha)
        else:
            # --force: a `.bench/baseline-*` directory deleted by hand leaves its registration
            # behind ("missing but already registered worktree"), which would block the add.
            _git(root, "worktree", "add", "--detach", "--force", str(worktree), sha)
        if not (worktree / "src" / "toolkit" / "__init__.py").is_file():
            raise BaselineError(f"{ref} ({short}) has no src/toolkit package: nothing to compare against")
    return Baseline(ref=ref, sha=sha, short=short, subject=subject, worktree=worktree)


def _check_reusable(worktree: Path, sha: str) -> None:
    """An existing worktree is reused only if it is still exactly ``sha``: the column claims so."""
    # .bench/ lies inside the main checkout: in a plain directory there, git would answer for the
    # main repository, so the directory must be a worktree's top level itself.
    try:
        top = _git(worktree, "rev-parse", "--show-toplevel")
        head = _git(worktree, "rev-parse", "HEAD")
    except BaselineError as exc:
        raise BaselineError(f"{worktree} exists but is not a git worktree ({exc}); remove it") from None
    if Path(top).resolve() != worktree.resolve():
        raise BaselineError(f"{worktree} exists but is not a git worktree; remove it")
    if head != sha:
        raise BaselineError(f"{worktree} is at {head}, not {sha}; remove it (git worktree remove --force {worktree})")
    status = _git(worktree, "status", "--porcelain", "--", "src").splitlines()
    # Bytecode is not a change (an old REF's .gitignore may not list it; compileall writes it).
    dirty = "\n".join(line for line in status if "__pycache__" not in line and not line.endswith(".pyc"))
    if dirty:
        raise BaselineError(
            f"{worktree} has local changes under src/, so it is not {sha[:12]} any more; "
            f"remove it (git worktree remove --force {worktree}):\n{dirty}"
        )


def compile_sources(python: Path, *trees: Path) -> None:
    """Byte-compile both toolkit trees before a before/after run, with the servers' interpreter.

    Otherwise the two columns' import and spawn figures differ by compilation, not by code: the
    anchors' site-packages are compiled by pip, but a source tree's bytecode is whatever earlier
    imports left behind, and nothing at all in a fresh worktree or where PYTHONDONTWRITEBYTECODE
    is set (as it is on the machine this was written on). Only stale files are rewritten; errors are left to the probe.
    """
    for tree in trees:
        subprocess.run([str(python), "-m", "compileall", "-q", str(tree)], capture_output=True, check=False)
