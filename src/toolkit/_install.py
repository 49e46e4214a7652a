"""``toolkit install HOST APP``: the host's config entry that starts APP over stdio.

The entry runs APP with the Python running ``toolkit install`` (``python -m toolkit run
/abs/app.py``), so the host finds toolkit and the app's dependencies whatever its own ``PATH``
and working directory are. The host's file is read, the one entry added, and the whole written
back atomically: other servers and other keys are kept; an entry of the same name is replaced
only with ``--force``; a file toolkit cannot read as JSON is named and left alone.

Where each host keeps its servers (docs/cli.md lists the sources):

- ``claude-desktop``: ``claude_desktop_config.json`` in ``~/Library/Application Support/Claude``
  (macOS), ``%APPDATA%\\Claude`` (Windows), ``$XDG_CONFIG_HOME/Claude`` or ``~/.config/Claude``
  (Linux); ``mcpServers``.
- ``claude-code``: ``.mcp.json`` in the current directory (the project scope); ``mcpServers``.
- ``cursor``: ``~/.cursor/mcp.json``; ``mcpServers``.
- ``vscode``: ``.vscode/mcp.json`` in the current directory (the workspace); ``servers``, with
  ``"type": "stdio"``.
- ``mcp-json``: nothing written; the standard ``{"mcpServers": {...}}`` printed to stdout.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Final

from ._environment import load_env_file

HOSTS: Final = ("claude-desktop", "claude-code", "cursor", "vscode", "mcp-json")


class InstallError(Exception):
    """What ``toolkit install`` refuses to do, for the user."""


def config_path(host: str) -> Path:
    """The file ``host`` reads its servers from, on this machine, from the current directory."""
    if host == "claude-desktop":
        if sys.platform == "darwin":
            return Path.home() / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json"
        if sys.platform == "win32":
            appdata = os.environ.get("APPDATA") or str(Path.home() / "AppData" / "Roaming")
            return Path(appdata) / "Claude" / "claude_desktop_config.json"
        config = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
        return Path(config) / "Claude" / "claude_desktop_config.json"
    if host == "claude-code":
        return Path.cwd() / ".mcp.json"
    if host == "cursor":
        return Path.home() / ".cursor" / "mcp.json"
    if host == "vscode":
        return Path.cwd() / ".vscode" / "mcp.json"
    raise ValueError(f"no config file for {host}")


def app_argument(app: str) -> str:
    """APP as the host must give it: a file made absolute (the host starts servers anywhere), a module as it is."""
    target, colon, attr = app.partition(":")
    if target.endswith(".py") or Path(target).exists():
        return str(Path(target).resolve()) + colon + attr
    return app


def parse_env(pairs: list[str]) -> dict[str, str]:
    """``--env KEY=VALUE`` flags as a mapping; the last of a repeated KEY wins."""
    env: dict[str, str] = {}
    for pair in pairs:
        name, equals, value = pair.partition("=")
        if not equals or not name or not name.replace("_", "").isalnum():
            raise InstallError(f"--env {pair!r}: give KEY=VALUE")
        env[name] = value
    return env


def entry_for(host: str, app: str, *, env: dict[str, str], env_file: str | None) -> dict[str, Any]:
    """The server entry: the Python running this command, ``-m toolkit run``, APP and the env file, absolute."""
    args = ["-m", "toolkit", "run", app_argument(app)]
    if env_file is not None:
        path = Path(env_file)
        if not path.is_file():
            raise InstallError(f"--env-file {env_file}: no such file")
        try:
            load_env_file(path, {})  # read now, so a line the server could not read is reported here
        except (ValueError, OSError, UnicodeDecodeError) as exc:
            raise InstallError(f"--env-file: {exc}") from None
        args += ["--env-file", str(path.resolve())]
    entry: dict[str, Any] = {"type": "stdio"} if host in ("vscode", "claude-code") else {}
    entry["command"] = os.path.abspath(sys.executable)  # not resolved: a venv's python is a symlink to keep
    entry["args"] = args
    if env:
        entry["env"] = env
    return entry


def read_config(path: Path) -> dict[str, Any]:
    """The host's config as it is, ``{}`` when there is none yet; never guessed at when unreadable."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise InstallError(f"cannot read {path}: {exc}") from None
    if not text.strip():
        return {}
    try:
        config = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InstallError(
            f"{path} is not valid JSON ({exc}); it was left unchanged: fix it (comments and trailing commas "
            "are not JSON), or move it away and run this again"
        ) from None
    if not isinstance(config, dict):
        raise InstallError(f"{path} holds a JSON {type(config).__name__}, not an object; it was left unchanged")
    return config


def write_atomically(path: Path, config: dict[str, Any]) -> None:
    """Write ``config`` to ``path`` through a file beside it and a rename: a reader never sees half of it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777 if path.exists() else None
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            json.dump(config, file, indent=2, ensure_ascii=False)
            file.write("\n")
            file.flush()
            os.fsync(file.fileno())
        if mode is not None:
            os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def add_entry(path: Path, key: str, name: str, entry: dict[str, Any], *, force: bool) -> bool:
    """Put ``entry`` under ``config[key][name]`` in the file; whether it replaced one."""
    config = read_config(path)
    servers = config.setdefault(key, {})
    if not isinstance(servers, dict):
        raise InstallError(f"{path}: {key!r} is a JSON {type(servers).__name__}, not an object; it was left unchanged")
    replaced = name in servers
    if replaced and not force:
        raise InstallError(
            f"{path} already has a server named {name!r}; --force replaces it, --name NAME adds this one beside it"
        )
    servers[name] = entry
    write_atomically(path, config)
    return replaced


def install(host: str, app: str, name: str, *, env: list[str], env_file: str | None, force: bool) -> int:
    """``toolkit install``: write (or print) the entry; the exit status. Errors go to stderr."""
    try:
        entry = entry_for(host, app, env=parse_env(env), env_file=env_file)
        if host == "mcp-json":
            print(json.dumps({"mcpServers": {name: entry}}, indent=2, ensure_ascii=False))
            return 0
        path = config_path(host)
        replaced = add_entry(path, "servers" if host == "vscode" else "mcpServers", name, entry, force=force)
    except InstallError as exc:
        print(f"toolkit install: {exc}", file=sys.stderr)
        return 2
    done = "replaced" if replaced else "added"
    print(f"toolkit: {done} the server {name!r} in {path}:")
    print(json.dumps({name: entry}, indent=2, ensure_ascii=False))
    print(f"Restart {HOST_NAMES[host]} (or reload its MCP servers) to start it.")
    return 0


HOST_NAMES: Final = {
    "claude-desktop": "Claude Desktop",
    "claude-code": "Claude Code",
    "cursor": "Cursor",
    "vscode": "VS Code",
}
