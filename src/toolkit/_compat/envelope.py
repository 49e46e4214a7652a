"""The envelope of every result and list entry, as each protocol version defines it.

Optional fields a version lacks are left out (``_FIELDS_SINCE``); the modern era's envelope
(``resultType``, ``ttlMs``/``cacheScope``, ``serverInfo`` in ``_meta``) is added only for it;
and the errors whose code or wording depends on the era are built here.
"""

from __future__ import annotations

from typing import Any, Final

from .._errors import (
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    MISSING_CAPABILITY,
    RESOURCE_NOT_FOUND,
    McpError,
    ToolError,
)
from .._types import SERVER_INFO_KEY
from .._versions import at_least, is_modern

# Optional fields, per type, by the first version that defines them (from each version's
# schema.json). A field is sent only to versions that have it.
_FIELDS_SINCE: Final[dict[str, dict[str, str]]] = {
    "Tool": {"annotations": "2025-03-26", "title": "2025-06-18", "_meta": "2025-06-18", "icons": "2025-11-25"},
    "Implementation": {
        "title": "2025-06-18",
        "description": "2025-11-25",
        "icons": "2025-11-25",
        "websiteUrl": "2025-11-25",
    },
    "Resource": {"title": "2025-06-18", "_meta": "2025-06-18", "icons": "2025-11-25"},
    "ResourceTemplate": {"title": "2025-06-18", "_meta": "2025-06-18", "icons": "2025-11-25"},
    "Prompt": {"title": "2025-06-18", "_meta": "2025-06-18", "icons": "2025-11-25"},
    "ContentBlock": {"_meta": "2025-06-18"},
    "ProgressNotificationParams": {"message": "2025-03-26"},
    "ElicitRequestFormParams": {"mode": "2025-11-25"},
    "ServerCapabilities": {"completions": "2025-03-26"},
}


def has_field(kind: str, field: str, version: str) -> bool:
    """Whether ``version`` defines the optional ``field`` of ``kind`` (a type of its schema.json)."""
    since = _FIELDS_SINCE[kind].get(field)
    return since is None or at_least(version, since)


def fields_for(kind: str, entry: dict[str, Any], version: str) -> dict[str, Any]:
    """``entry`` without the fields ``version`` does not define for ``kind``."""
    dropped = [field for field in entry if not has_field(kind, field, version)]
    if not dropped:
        return entry
    return {field: value for field, value in entry.items() if field not in dropped}


def listing(kind: str, entry: dict[str, Any], version: str) -> dict[str, Any]:
    """A ``resources/list``/``templates``/``prompts/list`` entry as ``version`` defines it.

    (A prompt's arguments carry name, description and required only: fields every version has.)
    """
    return fields_for(kind, entry, version)


def envelop(
    result: dict[str, Any], version: str, server_info: dict[str, Any] | None, *, result_type: str
) -> dict[str, Any]:
    """Add the envelope the modern era puts on every result (``resultType``, server info)."""
    if is_modern(version):
        result["resultType"] = result_type
        if server_info is not None:
            meta = result.get("_meta")
            result["_meta"] = {**meta, SERVER_INFO_KEY: server_info} if meta else {SERVER_INFO_KEY: server_info}
    return result


def cacheable(result: dict[str, Any], version: str, ttl_ms: int, scope: str) -> dict[str, Any]:
    """Caching hints (modern ``tools/list``, ``resources/read`` …); legacy versions have none."""
    if is_modern(version):
        result["ttlMs"] = ttl_ms
        result["cacheScope"] = scope
    return result


def server_info(
    version: str,
    *,
    name: str,
    version_string: str | None = None,
    title: str | None = None,
    website_url: str | None = None,
    icons: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """``serverInfo`` (``Implementation``) with the fields ``version`` defines."""
    info: dict[str, Any] = {"name": name, "version": version_string or ""}
    for field, value in (("title", title), ("websiteUrl", website_url), ("icons", icons)):
        if value and has_field("Implementation", field, version):
            info[field] = value
    return info


# --- errors whose code or wording depends on the era ----------------------------------------


def method_not_found(method: str, version: str) -> McpError:
    """-32601; over HTTP a 404 in the modern era only (2026-07-28 streamable-http, "Protocol Version
    Header"): to a legacy session a 404 means "your session is gone"."""
    return McpError(
        METHOD_NOT_FOUND,
        f"Method not found: {method!r} is not available in protocol version {version}",
        http_status=404 if is_modern(version) else 200,
    )


def resource_not_found(uri: str, version: str) -> McpError:
    """An unknown resource URI: -32002 before 2026-07-28, -32602 since (2026-07-28 server/resources)."""
    code = INVALID_PARAMS if is_modern(version) else RESOURCE_NOT_FOUND
    return McpError(code, f"Resource not found: {uri}", {"uri": uri})


_MODERN_HTTP_STATUS: Final = {MISSING_CAPABILITY: 400}
"""The HTTP status a 2026-07-28 error answers with besides 200, by code (basic/index, "Error Codes")."""


def error_http_status(code: int, version: str) -> int:
    """The HTTP status of a JSON-RPC error ``code`` answered to a request of ``version`` (a relayed one too)."""
    return _MODERN_HTTP_STATUS.get(code, 200) if is_modern(version) else 200


def missing_capability(capability: str, version: str) -> Exception:
    """A handler needs a client capability the client did not declare.

    Modern: the request fails with -32021 and HTTP 400 (2026-07-28 basic/index, "Error Codes").
    Legacy: there is no such error; the tool fails with an ``isError`` result saying why.
    """
    if is_modern(version):
        return McpError(
            MISSING_CAPABILITY,
            f"This request needs the client capability {capability!r}, which the request's "
            "_meta clientCapabilities does not declare",
            {"requiredCapabilities": {capability: {}}},
            http_status=error_http_status(MISSING_CAPABILITY, version),
        )
    return ToolError(
        f"This tool needs the client capability {capability!r}, which the client did not declare at initialize"
    )
