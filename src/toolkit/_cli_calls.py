"""``toolkit call``'s arguments and the call itself, over any ``ClientSession``: an app in process, or a remote server.

``_cli`` uses it for an app, ``_cli_remote`` for a URL or a command; neither imports the other.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from ._errors import ClientError

if TYPE_CHECKING:
    from ._client.session import ClientSession

MAX_TOOLS_LISTED = 20
"""How many tool names ``toolkit call`` lists when asked for one the app does not have."""


class CallArguments:
    # A plain class: a dataclass would compile its methods at every start of the CLI, stdio servers' too.
    __slots__ = ("assignments", "base")

    def __init__(self, base: dict[str, Any], assignments: list[tuple[str, str]]) -> None:
        self.base = base
        """``--json``: the arguments object."""
        self.assignments = assignments
        """``KEY=VALUE``, in order, each overriding a top-level argument."""


def call_arguments(args: argparse.Namespace) -> CallArguments:
    """``toolkit call``'s arguments, checked before APP is loaded; a usage error exits 2."""
    base: Any = {}
    if args.json is not None:
        try:
            base = json.loads(args.json)
        except json.JSONDecodeError as exc:
            _usage(f'--json: not valid JSON ({exc}); give one object, e.g. --json \'{{"city": "Paris"}}\'')
        if not isinstance(base, dict):
            _usage(f"--json: the arguments must be a JSON object, not {type(base).__name__}: {args.json}")
    assignments = []
    for text in args.arguments:
        key, equals, value = text.partition("=")
        if not equals or not key:
            _usage(f"{text!r}: give each argument as KEY=VALUE, e.g. city=Paris or hours=3")
        assignments.append((key, value))
    return CallArguments(base, assignments)


def _usage(message: str) -> Any:
    print(f"toolkit call: {message}", file=sys.stderr)
    raise SystemExit(2)


async def call_on(session: ClientSession, app: str, tool: str, arguments: CallArguments) -> int:
    """Call ``tool`` over ``session`` (in process, or a remote server's); print its result; the exit status."""
    try:
        tools = {entry["name"]: entry.get("inputSchema", {}) for entry in await session.list_tools()}
    except ClientError as exc:
        return _rpc_error("tools/list", exc.error)
    if tool not in tools:
        names = sorted(tools)
        shown = ", ".join(names[:MAX_TOOLS_LISTED]) + (", …" if len(names) > MAX_TOOLS_LISTED else "")
        _usage(f"{app} has no tool {tool!r}; its tools: {shown or '(none)'}")
    # Input schemas differ between eras only in boolean property schemas (true/false become
    # {}/{"not": {}} for legacy clients), which never take only strings: this client's list will do.
    values = {key: _argument_value(tools[tool], key, text) for key, text in arguments.assignments}
    response = await session.request("tools/call", {"name": tool, "arguments": {**arguments.base, **values}})
    if "error" in response:
        return _rpc_error(tool, response["error"])
    result: dict[str, Any] = response["result"]
    print(json.dumps(result, indent=2))
    return 1 if result.get("isError") else 0


def _rpc_error(what: str, error: Mapping[str, Any]) -> int:
    detail = f"\n{json.dumps(error['data'], indent=2)}" if error.get("data") is not None else ""
    print(f"toolkit call: {what}: JSON-RPC error {error.get('code')}: {error.get('message')}{detail}", file=sys.stderr)
    return 1


def _argument_value(schema: Mapping[str, Any], key: str, text: str) -> Any:
    """``KEY=VALUE``'s value: the text itself where the tool takes only a string, else JSON if it parses.

    Text that is not JSON is sent as it is, so the server's validation names the argument.
    """
    found = list(_property_schemas(schema, schema, key, depth=0))
    if found and all(_only_strings(schema, branch, depth=0) for branch in found):
        return text
    try:
        return json.loads(text, parse_constant=_not_json)
    except ValueError:
        return text


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")  # json.loads would take NaN and Infinity


MAX_SCHEMA_DEPTH = 32
"""How deep ``toolkit call`` follows ``$ref`` and combinators looking at an input schema."""


def _property_schemas(root: Mapping[str, Any], schema: Any, key: str, *, depth: int) -> Iterator[Any]:
    """The schemas of property ``key``: under ``properties``, and in every branch of a root union."""
    schema = _resolve(root, schema)
    if not isinstance(schema, Mapping) or depth > MAX_SCHEMA_DEPTH:
        return
    properties = schema.get("properties")
    if isinstance(properties, Mapping) and key in properties:
        yield properties[key]
    for combinator in ("oneOf", "anyOf", "allOf"):
        for branch in schema.get(combinator) or ():
            yield from _property_schemas(root, branch, key, depth=depth + 1)


def _only_strings(root: Mapping[str, Any], schema: Any, *, depth: int) -> bool:
    """Whether ``schema`` accepts strings and nothing else (type, enum, const, or unions of those)."""
    schema = _resolve(root, schema)
    if not isinstance(schema, Mapping) or depth > MAX_SCHEMA_DEPTH:
        return False
    if "const" in schema:
        return isinstance(schema["const"], str)
    if "enum" in schema:
        return bool(schema["enum"]) and all(isinstance(value, str) for value in schema["enum"])
    if schema.get("type") in ("string", ["string"]):
        return True
    if any(_only_strings(root, branch, depth=depth + 1) for branch in schema.get("allOf") or ()):
        return True
    for combinator in ("anyOf", "oneOf"):
        branches = schema.get(combinator)
        if branches:
            return all(_only_strings(root, branch, depth=depth + 1) for branch in branches)
    return False


def _resolve(root: Mapping[str, Any], schema: Any) -> Any:
    """A same-document ``$ref`` (``#/$defs/Name``) followed to its target; anything else as it is."""
    for _ in range(MAX_SCHEMA_DEPTH):
        if not isinstance(schema, Mapping) or not isinstance(schema.get("$ref"), str):
            return schema
        pointer: str = schema["$ref"]
        if not pointer.startswith("#"):
            return None
        target: Any = root
        for escaped in filter(None, pointer[1:].split("/")):
            token = escaped.replace("~1", "/").replace("~0", "~")
            target = target.get(token) if isinstance(target, Mapping) else None
        schema = target
    return None
