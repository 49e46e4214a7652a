"""Deployment settings from the environment: ``TOOLKIT_*`` variables and a ``.env`` file.

``toolkit run`` (and each of its workers, and ``toolkit dev``) applies them to the server APP
names once it is loaded, so a container or a host's config sets a server up without editing its
code. The environment is the deployment's say: a variable overrides what the code set. A value
that cannot be read stops the start, naming the variable and what it takes.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final

from ._server import Server
from ._tools import Tool


def _integer(text: str) -> int:
    value = int(text)
    if value < 1:
        raise ValueError
    return value


def _milliseconds(text: str) -> int:
    value = int(text)
    if value < 0:
        raise ValueError
    return value


def _seconds(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise ValueError
    return value


def _optional_seconds(text: str) -> float | None:
    return None if text.strip().lower() in ("", "none", "off") else _seconds(text)


def _boolean(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off"):
        return False
    raise ValueError


def _cache_scope(text: str) -> str:
    if text not in ("public", "private"):
        raise ValueError
    return text


_READERS: Final[dict[str, tuple[Callable[[str], Any], str]]] = {
    "integer": (_integer, "a whole number, at least 1"),
    "milliseconds": (_milliseconds, "a whole number of milliseconds, 0 or more"),
    "seconds": (_seconds, "a number of seconds above 0"),
    "optional_seconds": (_optional_seconds, "a number of seconds above 0, or none"),
    "boolean": (_boolean, "true or false (1/0, yes/no, on/off)"),
    "cache_scope": (_cache_scope, "public or private"),
}

SETTINGS: Final[dict[str, tuple[str, str]]] = {
    "TOOLKIT_MASK_ERRORS": ("mask_errors", "boolean"),
    "TOOLKIT_PAGE_SIZE": ("page_size", "integer"),
    "TOOLKIT_LIST_TTL_MS": ("list_ttl_ms", "milliseconds"),
    "TOOLKIT_READ_TTL_MS": ("read_ttl_ms", "milliseconds"),
    "TOOLKIT_READ_CACHE_SCOPE": ("read_cache_scope", "cache_scope"),
    "TOOLKIT_CLIENT_REQUEST_TIMEOUT": ("client_request_timeout", "seconds"),
    "TOOLKIT_TOOL_TIMEOUT": ("tool_timeout", "optional_seconds"),
    "TOOLKIT_MAX_CONCURRENT_REQUESTS": ("max_concurrent_requests", "integer"),
    "TOOLKIT_MAX_ARGUMENT_DEPTH": ("max_argument_depth", "integer"),
    "TOOLKIT_TASK_TTL_MS": ("task_ttl_ms", "integer"),
    "TOOLKIT_MAX_TASK_TTL_MS": ("max_task_ttl_ms", "integer"),
    "TOOLKIT_TASK_POLL_INTERVAL_MS": ("task_poll_interval_ms", "integer"),
    "TOOLKIT_MAX_RUNNING_TASKS": ("max_running_tasks", "integer"),
    "TOOLKIT_TRACING": ("tracing", "boolean"),
}
"""Each variable, the ``Server`` setting it sets, and how its value is read."""


def settings_from_environment(server: Server, environ: Mapping[str, str] = os.environ) -> list[str]:
    """Set each ``Server`` setting whose ``TOOLKIT_*`` variable is set; the variables applied.

    ``ValueError`` names a variable whose value cannot be read, and what it takes.
    """
    values: dict[str, Any] = {}
    for variable, (setting, kind) in SETTINGS.items():
        text = environ.get(variable)
        if text is None or text == "":
            continue
        read, takes = _READERS[kind]
        try:
            values[setting] = read(text)
        except ValueError:
            raise ValueError(f"${variable}={text!r}: {setting} takes {takes}") from None
    ttl = values.get("task_ttl_ms", server.task_ttl_ms)
    longest = values.get("max_task_ttl_ms", server.max_task_ttl_ms)
    if ttl > longest:
        raise ValueError(
            f"$TOOLKIT_TASK_TTL_MS ({ttl}) is above the longest a task may live, max_task_ttl_ms ({longest})"
        )
    for setting, value in values.items():
        if setting in ("tool_timeout", "max_argument_depth"):
            _apply_to_tools(server, setting, value)
        setattr(server, setting, value)
    return [variable for variable, (setting, _) in SETTINGS.items() if setting in values]


def _apply_to_tools(server: Server, setting: str, value: Any) -> None:
    """Tools take these two at registration: those that kept the server's value get the new one."""
    attribute = "timeout" if setting == "tool_timeout" else setting
    before = getattr(server, setting)
    for tool in server.registry.tools.values():
        if isinstance(tool, Tool) and getattr(tool, attribute) == before:
            setattr(tool, attribute, value)


def load_env_file(path: Path, environ: dict[str, str] | None = None) -> list[str]:
    """Put ``path``'s ``KEY=VALUE`` lines into the environment; a variable already set keeps its value.

    The usual ``.env`` form: ``#`` comments, blank lines, an optional ``export``, values in
    single or double quotes. The names it set are returned. ``ValueError`` names a line it cannot read.
    """
    target = os.environ if environ is None else environ
    added: list[str] = []
    for number, raw in enumerate(path.read_text().splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        line = line.removeprefix("export ").strip()
        name, equals, value = line.partition("=")
        name = name.strip()
        if not equals or not name.replace("_", "").isalnum():
            raise ValueError(f"{path}:{number}: not a KEY=VALUE line: {raw!r}")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        elif " #" in value:
            value = value.split(" #", 1)[0].rstrip()
        if name not in target:
            target[name] = value
            added.append(name)
    return added
