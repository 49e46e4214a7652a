"""Validate messages toolkit sends against the official schema of the protocol version in force.

``assert_valid(message, version, method=...)`` checks the JSON-RPC envelope and, for a
result, the result type of the method it answers (``tools/list`` → ``ListToolsResult``,
...), the way the conformance suite's ``wire-schema-valid`` check does.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import jsonschema_rs

SPEC = Path(__file__).parent / "spec"

RESULT_TYPES = {
    "initialize": "InitializeResult",
    "ping": "EmptyResult",
    "logging/setLevel": "EmptyResult",
    "resources/subscribe": "EmptyResult",
    "resources/unsubscribe": "EmptyResult",
    "tools/list": "ListToolsResult",
    "tools/call": "CallToolResult",
    "resources/list": "ListResourcesResult",
    "resources/templates/list": "ListResourceTemplatesResult",
    "resources/read": "ReadResourceResult",
    "prompts/list": "ListPromptsResult",
    "prompts/get": "GetPromptResult",
    "completion/complete": "CompleteResult",
    "server/discover": "DiscoverResult",
    "subscriptions/listen": "SubscriptionsListenResult",
    # 2025-11-25 experimental tasks (core schema) and the 2026-07-28 extension (ext-tasks/schema.json)
    "tasks/get": "GetTaskResult",
    "tasks/cancel": "CancelTaskResult",
    "tasks/update": "UpdateTaskResult",
    "tasks/list": "ListTasksResult",
    "tasks/result": "CallToolResult",
}
EXTENSION = "ext-tasks"
"""The tasks extension's own schema (``tests/spec/ext-tasks``), for what the 2026-07-28 core does not define."""


@functools.cache
def _document(version: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((SPEC / version / "schema.json").read_text())
    return document


@functools.cache
def validator(version: str, definition: str) -> jsonschema_rs.Validator:
    document = dict(_document(version))
    container = "$defs" if "$defs" in document else "definitions"
    if definition not in document[container]:
        raise KeyError(f"{definition} is not defined in the {version} schema")
    document["$ref"] = f"#/{container}/{definition}"
    return jsonschema_rs.validator_for(document, offline=True)


def defines(version: str, definition: str) -> bool:
    document = _document(version)
    return definition in document.get("$defs", document.get("definitions", {}))


def _check(version: str, definition: str, value: Any, what: str) -> None:
    checker = validator(version, definition)
    errors = [f"{'/'.join(map(str, e.instance_path))}: {e.message}" for e in checker.iter_errors(value)]
    assert not errors, (
        f"{what} is not a valid {definition} in {version}:\n"
        + "\n".join(errors[:10])
        + (f"\n{json.dumps(value)[:2000]}")
    )


def assert_valid(message: dict[str, Any], version: str, *, method: str | None = None) -> None:
    """``message`` is valid for ``version``; ``method`` names the request a response answers."""
    message = {key: value for key, value in message.items() if not key.startswith("_http")}
    if "error" in message:
        envelope = "JSONRPCErrorResponse" if defines(version, "JSONRPCErrorResponse") else "JSONRPCError"
        _check(version, envelope, message, "error response")
        return
    if "result" in message:
        envelope = "JSONRPCResultResponse" if defines(version, "JSONRPCResultResponse") else "JSONRPCResponse"
        _check(version, envelope, message, "response")
        if method is not None and method in RESULT_TYPES:  # an extension's own method: its envelope only
            result = message["result"]
            definition = RESULT_TYPES[method]
            if isinstance(result, dict) and result.get("resultType") == "input_required":
                definition = "InputRequiredResult"
            elif isinstance(result, dict) and method == "tools/call" and ("task" in result or "taskId" in result):
                definition = "CreateTaskResult"
            if not defines(version, definition) and defines(EXTENSION, definition):
                _check(EXTENSION, definition, result, f"result of {method} (tasks extension)")
            else:
                _check(version, definition, result, f"result of {method}")
        return
    if "id" in message:
        assert defines(version, "ServerRequest"), f"a {version} server must not send requests: {message}"
        _check(version, "ServerRequest", message, "server request")
        _check(version, "JSONRPCRequest", message, "server request")
        return
    _check(version, "JSONRPCNotification", message, "notification")
    _check(version, "ServerNotification", message, "notification")


def assert_result_valid(result: dict[str, Any], version: str, method: str) -> None:
    """Shorthand: wrap a bare ``result`` in a response and validate it."""
    assert_valid({"jsonrpc": "2.0", "id": 1, "result": result}, version, method=method)
