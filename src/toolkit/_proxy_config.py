"""The ``mcpServers`` file MCP hosts keep their servers in, read for ``toolkit proxy CONFIG.json``.

The format of Claude Desktop, Claude Code, Cursor and most hosts: ``{"mcpServers": {NAME: ENTRY}}``
(VS Code's ``mcp.json`` says ``"servers"``). An ENTRY starts a command (stdio) or names a URL
(Streamable HTTP)::

    {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"],
     "env": {"KEY": "value"}, "cwd": "servers/everything"}
    {"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ..."}}

with an optional ``"type"`` (``stdio``; ``http`` or ``streamable-http``; ``sse`` is refused: the
2024-11-05 HTTP+SSE transport has no client here) and ``"disabled": true`` to leave an entry out.
NAME becomes the entry's namespace in the gateway (``_sources/namespace.py``). ``command``,
``args``, ``env``, ``url`` and ``headers`` may use ``${NAME}`` and ``${NAME:-default}`` (Claude
Code's ``.mcp.json`` forms) and VS Code's ``${env:NAME}``, taken from the environment when the
file is read (``expand``); an unset one without a default is refused, naming it, and so is VS
Code's ``${input:...}``, which asks a person. Any other key is refused, naming the entry and the
key, except the hosts' approval lists (``autoApprove``, ``alwaysAllow``), which mean nothing to a
gateway.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from ._errors import RegistrationError
from ._sources.namespace import checked_namespace

KEYS: Final = ("type", "command", "args", "env", "cwd", "url", "headers", "disabled")
"""What an entry may say."""

IGNORED_KEYS: Final = ("autoApprove", "alwaysAllow")
"""Hosts' own settings (which tools run without asking the user), meaningless to a gateway."""

HTTP_TYPES: Final = ("http", "streamable-http", "streamableHttp")


class ConfigError(ValueError):
    """A config file ``toolkit proxy`` cannot use: the message names the file, the entry and the fault."""


@dataclass(frozen=True)
class ServerEntry:
    """One enabled server of the file: a command to start (``argv``) or a ``url``."""

    name: str
    argv: list[str] | None = None
    url: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def target(self) -> str | list[str]:
        """What ``toolkit.Client`` connects to."""
        if self.url is not None:
            return self.url
        assert self.argv is not None
        return self.argv


def read_servers(path: Path, environ: Mapping[str, str] | None = None) -> list[ServerEntry]:
    """The enabled servers of the config file at ``path``, in the file's order; ``ConfigError`` otherwise.

    ``${NAME}`` references are taken from ``environ`` (default: this process's environment).
    """
    servers = _servers_of(path, _json_of(path))
    entries = []
    for name, entry in servers.items():
        parsed = _entry(path, name, entry)
        if parsed is not None:
            entries.append(_expanded(_where(path, name), parsed, os.environ if environ is None else environ))
    if not entries:
        raise ConfigError(f"{path}: no server to proxy (every entry is disabled)" if servers else f"{path}: no servers")
    return entries


def _json_of(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{path} is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno} "
            "(comments and trailing commas, which some hosts accept, are not JSON)"
        ) from None


def _servers_of(path: Path, config: Any) -> dict[str, Any]:
    if not isinstance(config, dict):
        raise ConfigError(f'{path} holds a JSON {_kind(config)}; expected an object: {{"mcpServers": {{...}}}}')
    keys = [key for key in ("mcpServers", "servers") if key in config]
    if not keys:
        raise ConfigError(f'{path} has no "mcpServers" (or VS Code\'s "servers"): nothing to proxy')
    if len(keys) == 2:
        raise ConfigError(f'{path} has both "mcpServers" and "servers": keep one')
    servers = config[keys[0]]
    if not isinstance(servers, dict):
        raise ConfigError(f'{path}: "{keys[0]}" is a JSON {_kind(servers)}; expected an object of named servers')
    return servers


def _where(path: Path, name: str) -> str:
    """How errors name an entry of the file."""
    return f"{path}: server {name!r}"


def _entry(path: Path, name: str, entry: Any) -> ServerEntry | None:
    where = _where(path, name)
    if not isinstance(entry, dict):
        raise ConfigError(f"{where} is a JSON {_kind(entry)}; expected an object with a command or a url")
    unknown = [key for key in entry if key not in KEYS and key not in IGNORED_KEYS]
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r}; an entry takes {', '.join(KEYS)}")
    disabled = entry.get("disabled", False)
    if not isinstance(disabled, bool):
        raise ConfigError(f'{where}: "disabled" is {disabled!r}; use true or false')
    if disabled:
        return None
    try:
        checked_namespace(name)
    except RegistrationError:
        raise ConfigError(
            f"{where}: the name is the namespace of its tools ({name}_TOOL), so it must use letters, digits, "
            "'_', '-' or '.', start with a letter or a digit, and be at most 64 characters, e.g. \"weather\""
        ) from None
    kind = _transport_of(where, entry)
    if kind == "http":
        return _http_entry(where, name, entry)
    command = entry["command"]
    if not isinstance(command, str) or not command.strip():
        raise ConfigError(f'{where}: "command" must be a non-empty string, e.g. "npx"')
    return ServerEntry(
        name,
        argv=[command, *_strings(where, "args", entry.get("args", []))],
        env=_string_map(where, "env", entry.get("env", {})),
        cwd=_cwd(path, where, entry.get("cwd")),
    )


_REFERENCE: Final = re.compile(r"\$\{([^}]*)\}")
_VARIABLE: Final = re.compile(r"(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?", re.DOTALL)


def expand(text: str, environ: Mapping[str, str], place: str) -> str:
    """``text`` with each ``${NAME}``, ``${NAME:-default}`` and ``${env:NAME}`` replaced from ``environ``.

    ``:-`` gives the default when NAME is unset or empty, as in a shell. ``$NAME`` without braces
    stays as written. ``ConfigError`` (naming ``place``, never a value) for an unset NAME without a
    default and for a reference toolkit cannot resolve (VS Code's ``${input:...}``).
    """

    def value(reference: re.Match[str]) -> str:
        inside = reference.group(1)
        variable = _VARIABLE.fullmatch(inside)
        if variable is None:
            if inside.startswith("input:"):
                raise ConfigError(
                    f"{place} uses ${{{inside}}}, which VS Code asks its user for; toolkit proxy asks no one: put "
                    "the value in an environment variable and write ${NAME}"
                )
            raise ConfigError(
                f"{place} uses ${{{inside}}}; toolkit proxy expands ${{NAME}}, ${{NAME:-default}} and "
                "${env:NAME} from its environment"
            )
        name, default = variable.group(1), variable.group(2)
        given = environ.get(name)
        if default is not None and not given:
            return default
        if given is None:
            raise ConfigError(
                f"{place} uses ${{{name}}}, which is not set in toolkit proxy's environment: set it, or write "
                f"${{{name}:-DEFAULT}}"
            )
        return given

    return _REFERENCE.sub(value, text) if "${" in text else text


def _expanded(where: str, entry: ServerEntry, environ: Mapping[str, str]) -> ServerEntry:
    """``entry`` with its command, args, env, url and headers expanded (``expand``)."""

    def each(key: str, values: Mapping[str, str]) -> dict[str, str]:
        return {name: expand(text, environ, f'{where}: "{key}" {name!r}') for name, text in values.items()}

    argv = None
    if entry.argv is not None:
        command, *args = entry.argv
        argv = [expand(command, environ, f'{where}: "command"')]
        argv += [expand(arg, environ, f'{where}: "args"') for arg in args]
    url = None if entry.url is None else expand(entry.url, environ, f'{where}: "url"')
    if url is not None and not url.startswith(("http://", "https://")):
        expanded = " once expanded" if url != entry.url else ""
        raise ConfigError(f'{where}: "url" must be an http:// or https:// URL{expanded}, not {entry.url!r}')
    return ServerEntry(
        entry.name,
        argv=argv,
        url=url,
        env=each("env", entry.env),
        cwd=entry.cwd,
        headers=each("headers", entry.headers),
    )


def _transport_of(where: str, entry: dict[str, Any]) -> str:
    """``stdio`` or ``http``: from ``type`` when given, else from ``command`` or ``url``."""
    declared = entry.get("type")
    if declared == "sse":
        raise ConfigError(
            f'{where}: "type": "sse" is the 2024-11-05 HTTP+SSE transport, which toolkit does not speak; '
            'proxy a Streamable HTTP endpoint ("type": "http") or start the server as a command'
        )
    if declared is not None and declared != "stdio" and declared not in HTTP_TYPES:
        raise ConfigError(f'{where}: "type": {declared!r} is not one of stdio, http, streamable-http (sse is refused)')
    has_command, has_url = "command" in entry, "url" in entry
    if has_command and has_url:
        raise ConfigError(f'{where} has both "command" and "url"; give one')
    if not has_command and not has_url:
        raise ConfigError(f'{where} has neither "command" (a server to start) nor "url" (a server to connect to)')
    kind = "http" if has_url else "stdio"
    if declared is not None and (declared == "stdio") != (kind == "stdio"):
        given = "a url" if has_url else "a command"
        raise ConfigError(f'{where}: "type": {declared!r} does not fit {given}')
    stray = [key for key in (("headers",) if kind == "stdio" else ("args", "env", "cwd")) if key in entry]
    if stray and kind == "stdio":
        raise ConfigError(f'{where}: "headers" is for a server at a url; this entry starts a command (give it "env")')
    if stray:
        raise ConfigError(f'{where}: "{stray[0]}" is for a command to start; this entry names a url')
    return kind


def _http_entry(where: str, name: str, entry: dict[str, Any]) -> ServerEntry:
    url = entry["url"]
    if not isinstance(url, str):  # its scheme is checked once expanded (_expanded)
        raise ConfigError(f'{where}: "url" must be an http:// or https:// URL, not {url!r}')
    return ServerEntry(name, url=url, headers=_string_map(where, "headers", entry.get("headers", {})))


def _strings(where: str, key: str, value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f'{where}: "{key}" must be a list of strings')
    return list(value)


def _string_map(where: str, key: str, value: Any) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(item, str) for item in value.values()):
        raise ConfigError(f'{where}: "{key}" must be an object of strings, e.g. {{"NAME": "value"}}')
    return dict(value)


def _cwd(path: Path, where: str, value: Any) -> str | None:
    """The command's working directory: a relative one is taken from the config file's directory."""
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise ConfigError(f'{where}: "cwd" must be a directory, as a string')
    directory = path.parent / value
    if not directory.is_dir():
        raise ConfigError(f'{where}: "cwd" {value!r} is not a directory (looked for {directory})')
    return str(directory.resolve())


def _kind(value: Any) -> str:
    names = {dict: "object", list: "array", str: "string", bool: "boolean", int: "number", float: "number"}
    return "null" if value is None else names.get(type(value), type(value).__name__)
