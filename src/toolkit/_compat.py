"""How each protocol version sees toolkit's natural results: the one place for era shaping.

Tools hold natural schemas and produce natural values (SEP-2106). This module derives,
deterministically, what a client of a given version receives (ARCHITECTURE §3):

| natural output              | 2026-07-28 | 2025-06-18, 2025-11-25                         | 2024-11-05, 2025-03-26 |
|-----------------------------|------------|------------------------------------------------|------------------------|
| object                      | natural    | natural, root ``type: "object"``, root $ref inlined  | none      |
| union of objects            | natural    | natural plus root ``type: "object"``            | no structured fields |
| anything else               | natural    | wrapped in ``{"result": ...}``                  | no structured fields |
| no output schema (*)        | the value  | an object as it is, anything else wrapped       | no structured fields |

plus the envelope fields only the modern era has (``resultType``, ``ttlMs``/``cacheScope``,
``serverInfo`` in ``_meta``) and the content blocks older versions cannot carry.

(*) A ``ToolResult``'s own ``structured_content`` on a tool without ``output_schema=``: no
``outputSchema`` is advertised, but the value the tool chose to send is sent; 2025-06-18 and
2025-11-25 define ``structuredContent`` as an object, so a non-object goes as ``{"result": v}``.
"""

from __future__ import annotations

import datetime
import re
import urllib.parse
from typing import TYPE_CHECKING, Any, Final

import pydantic_core

from ._content import NO_STRUCTURED, CallOutcome, ContentBlock
from ._errors import (
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    MISSING_CAPABILITY,
    RESOURCE_NOT_FOUND,
    McpError,
    ToolError,
)
from ._schema import hints, unions
from ._types import SERVER_INFO_KEY
from ._versions import KNOWN_VERSIONS, STRUCTURED_OUTPUT_SINCE, at_least, is_modern

if TYPE_CHECKING:
    from ._tools import Tool

RESULT_KEY: Final = "result"

# Content block types by the first version that has them.
_BLOCK_SINCE: Final = {"audio": "2025-03-26", "resource_link": "2025-06-18"}
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


def _structured_era(version: str) -> bool:
    return at_least(version, STRUCTURED_OUTPUT_SINCE)


# --- schemas -------------------------------------------------------------------------------


def _rewrite_into_result(reference: str) -> str:
    """A pointer into the natural root, re-aimed at ``#/properties/result`` of the wrapper."""
    if reference == "#":
        return f"#/properties/{RESULT_KEY}"
    # The fragment is a URI fragment: "%24defs" is "$defs" (RFC 6901 §6).
    if reference.startswith("#/") and not urllib.parse.unquote(reference).startswith("#/$defs/"):
        return f"#/properties/{RESULT_KEY}{reference[1:]}"
    return reference  # "#/$defs/..." (hoisted with the defs) and "#anchor" names stay valid


# A "$ref"/"$dynamicRef" whose value is not a "#/$defs/..." pointer: the only kind the
# wrapper has to rewrite. Matched on the serialized schema, so a data value that merely looks
# like one (inside "const", say) only costs the slower, exact walk. Compiled on first use (``re``
# keeps it), not at import: a server that never wraps a schema never needs it.
_REWRITABLE_REF: Final = rb'"\$(?:ref|dynamicRef)":"(?!#/(?:\$|%24)defs/)'


def wrap_schema(natural: dict[str, Any]) -> dict[str, Any]:
    """``{"type": "object", "properties": {"result": natural}, "required": ["result"]}``.

    ``$defs``, ``$schema`` and ``$id`` move to the wrapper's root so every ``#/$defs/...``
    pointer still resolves; other ``#/...`` pointers are rewritten to point inside ``result``.
    Schemas are never mutated once built, so when no pointer needs rewriting (pydantic's only
    point into ``$defs``) the wrapper shares the natural schema's parts instead of copying them.
    """
    inner = {key: value for key, value in natural.items() if key not in ("$defs", "$schema", "$id")}
    rewrite = re.search(_REWRITABLE_REF, pydantic_core.to_json(natural)) is not None
    wrapper: dict[str, Any] = {}
    for key in ("$schema", "$id"):
        if key in natural:
            wrapper[key] = natural[key]
    wrapper["type"] = "object"
    wrapper["properties"] = {RESULT_KEY: hints.walk_refs(inner, _rewrite_into_result) if rewrite else inner}
    wrapper["required"] = [RESULT_KEY]
    if "$defs" in natural:
        defs = natural["$defs"]
        # Walked one definition at a time: a definition's name ("default", say) is not a keyword.
        wrapper["$defs"] = (
            {name: hints.walk_refs(definition, _rewrite_into_result) for name, definition in defs.items()}
            if rewrite
            else defs
        )
    return wrapper


def _legacy_properties(schema: dict[str, Any]) -> dict[str, Any]:
    """Legacy schemas require every root ``properties`` value to be an object, not a boolean."""
    properties = schema.get("properties")
    if isinstance(properties, dict) and any(isinstance(value, bool) for value in properties.values()):
        fixed = {
            name: ({} if value is True else {"not": {}}) if isinstance(value, bool) else value
            for name, value in properties.items()
        }
        schema = {**schema, "properties": fixed}
    return schema


def legacy_output_schema(natural: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """The output schema a 2025-06-18/2025-11-25 client gets, and whether values are wrapped."""
    if unions.is_object_schema(natural):
        shaped = hints.inline_root_ref(natural)
        if shaped.get("type") != "object":
            shaped = {"type": "object", **{key: value for key, value in shaped.items() if key != "type"}}
        return _legacy_properties(shaped), False
    return wrap_schema(natural), True


class ToolShape:
    """How one tool looks to one class of versions: its ``tools/list`` entry and value wrapping."""

    # A plain class: a dataclass compiles its generated methods when this module is imported.
    __slots__ = ("advertised", "wrapped")

    def __init__(self, advertised: dict[str, Any], wrapped: bool) -> None:
        self.advertised: Final = advertised
        self.wrapped: Final = wrapped
        """Whether structured values travel as ``{"result": value}``."""


def _has(kind: str, field: str, version: str) -> bool:
    since = _FIELDS_SINCE[kind].get(field)
    return since is None or at_least(version, since)


def fields_for(kind: str, entry: dict[str, Any], version: str) -> dict[str, Any]:
    """``entry`` without the fields ``version`` does not define for ``kind``."""
    dropped = [field for field in entry if not _has(kind, field, version)]
    if not dropped:
        return entry
    return {field: value for field, value in entry.items() if field not in dropped}


def listing(kind: str, entry: dict[str, Any], version: str) -> dict[str, Any]:
    """A ``resources/list``/``templates``/``prompts/list`` entry as ``version`` defines it.

    (A prompt's arguments carry name, description and required only: fields every version has.)
    """
    return fields_for(kind, entry, version)


class ToolShapes:
    """``tool_shape`` computed once per tool and version (a tool never changes once registered)."""

    __slots__ = ("_shapes",)

    def __init__(self) -> None:
        self._shapes: dict[Tool, dict[str, ToolShape]] = {}

    def get(self, tool: Tool, version: str) -> ToolShape:
        per_version = self._shapes.get(tool)
        if per_version is None:
            per_version = self._shapes[tool] = {}
        shape = per_version.get(version)
        if shape is None:
            shape = per_version[version] = tool_shape(tool, version)
        return shape

    def clear(self) -> None:
        """Forget every shape (a tool was removed: do not keep it alive)."""
        self._shapes.clear()


def tool_shape(tool: Tool, version: str) -> ToolShape:
    entry: dict[str, Any] = {"name": tool.name}
    if tool.title is not None and _has("Tool", "title", version):
        entry["title"] = tool.title
    if tool.description:
        entry["description"] = tool.description
    modern = is_modern(version)
    entry["inputSchema"] = tool.input_schema if modern else _legacy_properties(tool.input_schema)
    structured = _structured_era(version)
    wrapped = False
    if tool.output_schema is not None and structured:
        if modern:
            entry["outputSchema"] = tool.output_schema
        else:
            entry["outputSchema"], wrapped = legacy_output_schema(tool.output_schema)
    for field, value in (("annotations", tool.annotations), ("icons", tool.icons), ("_meta", tool.meta)):
        if value and _has("Tool", field, version):
            entry[field] = value
    task_support(entry, tool.task, version)
    return ToolShape(entry, wrapped)


# --- results -------------------------------------------------------------------------------


def content_blocks(blocks: list[ContentBlock], version: str) -> list[dict[str, Any]]:
    """Wire form of content blocks, with blocks ``version`` lacks turned into text."""
    return [_block_for(block.to_wire(), version) for block in blocks]


def _block_for(item: dict[str, Any], version: str) -> dict[str, Any]:
    """One wire content block as ``version`` carries it (``item`` is the caller's to change)."""
    if "_meta" in item and not _has("ContentBlock", "_meta", version):
        item.pop("_meta")
    since = _BLOCK_SINCE.get(item["type"])
    if since is not None and not at_least(version, since):
        item = _as_text(item)
    return item


def _as_text(item: dict[str, Any]) -> dict[str, Any]:
    """A text stand-in for a block the client's version cannot carry, so nothing is silently lost."""
    if item["type"] == "resource_link":
        label = item.get("title") or item["name"]
        return {"type": "text", "text": f"Resource: {label} <{item['uri']}>"}
    # Only audio gets here (before 2025-03-26), and an audio block always has its mimeType.
    return {"type": "text", "text": f"[{item['type']} content ({item['mimeType']}) omitted]"}


def json_text(value: Any) -> str:
    """The text fallback: compact JSON of the natural value (``null`` for ``None``)."""
    return pydantic_core.to_json(value, inf_nan_mode="null").decode()


def call_result(outcome: CallOutcome, shape: ToolShape | None, version: str) -> dict[str, Any]:
    """The ``CallToolResult`` a client of ``version`` receives for ``outcome``."""
    has_structured = outcome.structured is not NO_STRUCTURED
    if outcome.content is not None:
        content = content_blocks(outcome.content, version)
    elif has_structured:
        content = [{"type": "text", "text": json_text(outcome.structured)}]
    else:
        content = []
    result: dict[str, Any] = {"content": content}
    if has_structured and not outcome.is_error and _structured_era(version):
        result["structuredContent"] = _structured_for(outcome.structured, shape is not None and shape.wrapped, version)
    if outcome.is_error:
        result["isError"] = True
    if outcome.meta:
        result["_meta"] = dict(outcome.meta)
    return result


def _structured_for(value: Any, wrapped: bool, version: str) -> Any:
    """``structuredContent`` for ``version`` (one that has the field) of the natural ``value``."""
    if is_modern(version):
        return value
    if wrapped or not isinstance(value, dict):
        # Wrapped by the advertised schema, or, with no output schema (a ToolResult's own
        # structured_content), because 2025-06-18/2025-11-25 define structuredContent as
        # an object: wrapped rather than dropped or sent invalid.
        return {RESULT_KEY: value}
    return value


def result_shape(version: str) -> str:
    """How ``version`` sees a tool's natural value: ``natural``, ``wrapped`` (if not an object) or ``text``."""
    if is_modern(version):
        return "natural"
    return "wrapped" if _structured_era(version) else "text"


def era_shapes() -> list[dict[str, str]]:
    """Every known version, newest first, with how it sees a natural value (the tools page's switcher)."""
    return [{"version": version, "shape": result_shape(version)} for version in reversed(KNOWN_VERSIONS)]


def era_results(result: dict[str, Any], output_schema: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    """:func:`reshape_result` for every known version, newest first."""
    return {version: reshape_result(result, output_schema, version) for version in reversed(KNOWN_VERSIONS)}


def reshape_result(result: dict[str, Any], output_schema: dict[str, Any] | None, version: str) -> dict[str, Any]:
    """The ``CallToolResult`` a client of ``version`` receives for the call a 2026-07-28 client saw as ``result``.

    ``output_schema`` is the tool's natural output schema (from a 2026-07-28 ``tools/list``), or
    ``None``. The same rules as :func:`call_result`: the tools page shows every era one call's
    outcome without calling the tool once per era. Raises ``ValueError`` if ``result`` is not a
    ``CallToolResult``.
    """
    content = result.get("content")
    if not isinstance(content, list) or not all(isinstance(block, dict) and "type" in block for block in content):
        raise ValueError("result.content must be a list of content blocks")
    try:
        shaped: dict[str, Any] = {"content": [_block_for(dict(block), version) for block in content]}
    except (KeyError, TypeError) as exc:
        raise ValueError(f"result.content holds a malformed block ({exc})") from None
    if is_modern(version):
        return dict(result)  # what the modern client saw, its envelope (resultType, server info) included
    is_error = result.get("isError") is True
    if "structuredContent" in result and not is_error and _structured_era(version):
        wrapped = output_schema is not None and legacy_output_schema(output_schema)[1]
        shaped["structuredContent"] = _structured_for(result["structuredContent"], wrapped, version)
    if is_error:
        shaped["isError"] = True
    meta = result.get("_meta")
    if isinstance(meta, dict):
        meta = {key: value for key, value in meta.items() if key != SERVER_INFO_KEY}
        if meta:
            shaped["_meta"] = meta
    return shaped


def finish(
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
        if value and _has("Implementation", field, version):
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
            http_status=400,
        )
    return ToolError(
        f"This tool needs the client capability {capability!r}, which the client did not declare at initialize"
    )


# --- tasks -------------------------------------------------------------------------------------
# Two forms: the experimental tasks of 2025-11-25 (a session asks with ``params.task``; ``ttl``,
# ``pollInterval``; ``tasks/result``, ``tasks/list``; a tool's ``execution.taskSupport``) and the
# 2026-07-28 extension (the client declares it per request; ``ttlMs``, ``pollIntervalMs``;
# ``resultType: "task"``; ``tasks/update`` carries input; no ``tasks/list``).

TASKS_EXTENSION: Final = "io.modelcontextprotocol/tasks"
RELATED_TASK_KEY: Final = "io.modelcontextprotocol/related-task"
EXPERIMENTAL_TASKS_VERSION: Final = "2025-11-25"
"""The only legacy version with tasks (they became an extension in 2026-07-28)."""


def task_form(version: str) -> str | None:
    """``"extension"`` (2026-07-28), ``"experimental"`` (2025-11-25), or ``None``: no tasks in ``version``."""
    if is_modern(version):
        return "extension"
    return "experimental" if version == EXPERIMENTAL_TASKS_VERSION else None


def wants_extension(client_capabilities: dict[str, Any]) -> bool:
    """Whether a modern request declares the tasks extension in its client capabilities."""
    extensions = client_capabilities.get("extensions")
    return isinstance(extensions, dict) and isinstance(extensions.get(TASKS_EXTENSION), dict)


def task_capabilities(capabilities: dict[str, Any], version: str) -> dict[str, Any]:
    """Add what a server with task-capable tools declares in ``version`` (nothing before 2025-11-25)."""
    form = task_form(version)
    if form == "extension":
        capabilities["extensions"] = {TASKS_EXTENSION: {}}
    elif form == "experimental":
        capabilities["tasks"] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
    return capabilities


def task_support(entry: dict[str, Any], support: str, version: str) -> dict[str, Any]:
    """A 2025-11-25 ``tools/list`` entry says whether the tool runs as a task (absent: ``forbidden``)."""
    if support != "forbidden" and task_form(version) == "experimental":
        entry["execution"] = {"taskSupport": support}
    return entry


def task_not_allowed(tool: str, version: str) -> McpError:
    """A 2025-11-25 ``tools/call`` with ``task`` for a tool whose ``taskSupport`` is ``forbidden`` (-32601)."""
    return McpError(
        METHOD_NOT_FOUND,
        f'Tool {tool!r} cannot run as a task (its execution.taskSupport is forbidden); call it without "task"',
    )


def task_required(tool: str, version: str) -> McpError:
    """A call without a task to a tool that runs only as one.

    2026-07-28: -32021 naming the extension (HTTP 400); 2025-11-25: -32601 (spec, tool-level negotiation).
    """
    if is_modern(version):
        return McpError(
            MISSING_CAPABILITY,
            f"Tool {tool!r} runs only as a task: declare the {TASKS_EXTENSION} extension in the request's "
            "_meta clientCapabilities",
            {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}},
            http_status=400,
        )
    return McpError(
        METHOD_NOT_FOUND,
        f'Tool {tool!r} runs only as a task (execution.taskSupport is required): call it with "task": {{}}',
    )


def extension_missing(method: str) -> McpError:
    """A modern ``tasks/*`` request (or a task subscription) from a client that did not declare the extension."""
    return McpError(
        MISSING_CAPABILITY,
        f"{method} needs the {TASKS_EXTENSION} extension: declare it in the request's _meta clientCapabilities",
        {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}},
        http_status=400,
    )


def _timestamp(seconds: float) -> str:
    moment = datetime.datetime.fromtimestamp(seconds, datetime.UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def task_view(task: dict[str, Any], version: str, *, detailed: bool) -> dict[str, Any]:
    """A task as ``version`` shows it; ``task`` holds a record's fields (``toolkit._store.tasks``).

    ``detailed``: with what its status carries (2026-07-28 ``tasks/get``: ``inputRequests``,
    ``result`` or ``error``); 2025-11-25 never inlines those (they come from ``tasks/result``).
    """
    modern = is_modern(version)
    view: dict[str, Any] = {"taskId": task["id"], "status": task["status"]}
    if task.get("status_message"):
        view["statusMessage"] = task["status_message"]
    view["createdAt"] = _timestamp(task["created_at"])
    view["lastUpdatedAt"] = _timestamp(task["updated_at"])
    view["ttlMs" if modern else "ttl"] = task["ttl_ms"]
    view["pollIntervalMs" if modern else "pollInterval"] = task["poll_interval_ms"]
    if detailed and modern:
        status = task["status"]
        if status == "input_required":
            view["inputRequests"] = task["input_requests"]
        elif status == "completed":
            view["result"] = task["result"]
        elif status == "failed":
            view["error"] = task["error"]
    return view


def created_task(view: dict[str, Any], version: str) -> dict[str, Any]:
    """The ``CreateTaskResult`` of a ``tools/call`` (2026-07-28: the task itself, with ``resultType: "task"``)."""
    return view if is_modern(version) else {"task": view}


def cancel_ended_acknowledged(version: str) -> bool:
    """``tasks/cancel`` of an ended task: 2026-07-28 acknowledges it (cancellation is cooperative);
    2025-11-25 MUST refuse it with -32602."""
    return is_modern(version)


def cancel_result(view: dict[str, Any], version: str) -> dict[str, Any]:
    """``tasks/cancel``'s result: an empty acknowledgement (2026-07-28) or the task (2025-11-25)."""
    return {} if is_modern(version) else view


def task_notifies(version: str) -> bool:
    """Whether a task's progress and log notifications go to the client: 2025-11-25 sends them
    with the task's id; 2026-07-28 sends none for tasks (ext-tasks, "Task Status Notifications")."""
    return not is_modern(version)


def finished_status(result: dict[str, Any], version: str) -> str:
    """The status a tool's result ends its task in: 2025-11-25 counts an ``isError`` result as failed;
    2026-07-28 keeps ``failed`` for JSON-RPC errors and completes with the ``isError`` result."""
    return "failed" if result.get("isError") is True and not is_modern(version) else "completed"


def related_task(result: dict[str, Any], task_id: str) -> dict[str, Any]:
    """A 2025-11-25 message about a task carries ``_meta["io.modelcontextprotocol/related-task"]``."""
    meta = result.get("_meta")
    related = {RELATED_TASK_KEY: {"taskId": task_id}}
    result["_meta"] = {**meta, **related} if isinstance(meta, dict) else related
    return result
