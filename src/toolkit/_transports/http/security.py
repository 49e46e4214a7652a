"""What an HTTP request must pass before the engine sees it.

- DNS-rebinding protection (2025-11-25 transports, "Security Warning"): a foreign ``Origin`` is
  403, a foreign ``Host`` 421.
- The modern era's header mirroring (2026-07-28 streamable-http, "Server Validation"): the
  ``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name`` and ``Mcp-Param-*`` headers must say
  exactly what the body says.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Final

from ..._headers import argument_at, decode_value, param_matches
from ..._jsonrpc import Request
from ..._methods import named_field
from ..._types import PROTOCOL_VERSION_KEY

LOCAL_HOSTS: Final = ("127.0.0.1", "localhost", "[::1]")

ToolHeaders = Callable[[str], Mapping[str, tuple[str, ...]] | None]
"""A tool's ``x-mcp-header`` parameters (header name → argument path), or ``None``: no such tool."""


class HostGuard:
    """DNS-rebinding protection: only the allowed Host and Origin values get through."""

    def __init__(
        self, *, allowed_hosts: Iterable[str] | None, allowed_origins: Iterable[str] | None, enabled: bool = True
    ) -> None:
        self.enabled = enabled
        self.allowed_hosts = {host.lower() for host in (*LOCAL_HOSTS, *(allowed_hosts or ()))}
        self.allowed_origins = {origin.lower().rstrip("/") for origin in allowed_origins or ()}

    def check(self, headers: Mapping[str, str]) -> tuple[int, str] | None:
        """``(status, message)`` for a refused request, or ``None``."""
        if not self.enabled:
            return None
        origin = headers.get("origin")
        if origin is not None and origin.lower().rstrip("/") not in self.allowed_origins:
            scheme, _, rest = origin.partition("://")
            if scheme.lower() not in ("http", "https") or host_only(rest) not in self.allowed_hosts:
                return 403, f"Forbidden: Origin {origin!r} is not allowed (DNS-rebinding protection)"
        host = headers.get("host")
        if host is not None and host_only(host) not in self.allowed_hosts and "*" not in self.allowed_hosts:
            return 421, f"Misdirected Request: Host {host!r} is not allowed (DNS-rebinding protection)"
        return None


def host_only(host: str) -> str:
    """``host[:port]`` without the port (IPv6 literals keep their brackets).

    Anything else after the host than ``:digits`` (``localhost:80@evil.example``,
    ``[::1].evil.example``) comes back whole, so it matches no allowed host.
    """
    host = host.strip().lower()
    if host.startswith("["):
        end = host.find("]")
        rest = host[end + 1 :]
        if end > 0 and (not rest or (rest[0] == ":" and rest[1:].isdigit())):
            return host[: end + 1]
        return host
    name, colon, port = host.rpartition(":")
    if colon and ":" not in name:
        return name if port.isdigit() else host
    return host


def header_problem(
    request: Request,
    headers: Mapping[str, str],
    tool_headers: ToolHeaders,
    named: Callable[[str], str | None] = named_field,
) -> str | None:
    """What the modern request's headers fail to mirror from its body, or ``None``.

    ``named``: the field ``Mcp-Name`` mirrors for a method (the engine's, with its extensions' methods).
    """
    version = headers.get("mcp-protocol-version")
    if version is None:
        return "the MCP-Protocol-Version header is missing"
    meta = request.params.get("_meta")
    body_version = meta.get(PROTOCOL_VERSION_KEY) if isinstance(meta, dict) else None
    if body_version is not None and version != body_version:
        return f"MCP-Protocol-Version header {version!r} does not match _meta protocolVersion {body_version!r}"
    method = headers.get("mcp-method")
    if method is None:
        return "the Mcp-Method header is missing"
    if method != request.method:
        return f"Mcp-Method header {method!r} does not match body method {request.method!r}"
    field_name = named(request.method)
    if field_name is not None:
        raw = headers.get("mcp-name")
        if raw is None:
            return f"the Mcp-Name header is missing (required for {request.method})"
        name = decode_value(raw)
        if name is None:
            return "the Mcp-Name header has invalid characters or invalid Base64"
        if name != request.params.get(field_name):
            return f"Mcp-Name header {name!r} does not match body {field_name} {request.params.get(field_name)!r}"
    if request.method == "tools/call":
        return _param_header_problem(request, headers, tool_headers)
    return None


def _param_header_problem(request: Request, headers: Mapping[str, str], tool_headers: ToolHeaders) -> str | None:
    params = tool_headers(str(request.params.get("name")))
    if not params:
        return None
    for header_name, path in params.items():
        value = argument_at(request.params.get("arguments"), path)
        raw = headers.get(f"mcp-param-{header_name.lower()}")
        if value is None:
            continue  # absent or null: the client omits the header, the server expects none
        if raw is None:
            return f"the Mcp-Param-{header_name} header is missing for argument {'.'.join(path)}"
        decoded = decode_value(raw)
        if decoded is None:
            return f"the Mcp-Param-{header_name} header has invalid characters or invalid Base64"
        if not param_matches(decoded, value):
            return f"Mcp-Param-{header_name} header {decoded!r} does not match argument {'.'.join(path)}"
    return None
