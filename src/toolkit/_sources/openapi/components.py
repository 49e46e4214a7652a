"""An operation as a tool, a resource or a resource template: one HTTP exchange per call or read.

A tool's result is the answer made natural: a 2xx JSON answer is the structured value itself (an
array stays an array, a number a number), checked against the output schema through
``ToolBase.finish``, so an answer that breaks the document's schema is reported as any tool's
output-schema violation is (an ``isError`` result, the detail in the server's log). A 2xx answer
that is not JSON is content: text, an image or audio, or an embedded blob; an empty one says its
status. Anything else (an error status, a timeout, a refused redirect) is an ``isError`` result
saying what happened, with the operation and the host.

A resource reads the operation with no arguments; a template with its URI's variables (path
parameters, and the optional query parameters a URI query can carry, ``{?limit,tag}``), each
converted to its parameter's JSON type and checked against the operation's input schema.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

import pydantic_core

from ..._components import ResourceBase, TemplateBase, ToolBase
from ..._content import Audio, CallOutcome, ContentBlock, EmbeddedResource, Image, Text
from ..._errors import ResourceError, ToolError
from ..._schema.checks import check_schema, describe_errors
from ..._uritemplate import UriTemplate
from ..namespace import inner_uri
from .routes import annotations_for
from .sending import Answer, ExchangeFailed

if TYPE_CHECKING:
    from ..._uritemplate import Value
    from .operations import Operation, Output
    from .requests import RequestPlan
    from .source import OpenAPISource

logger = logging.getLogger("toolkit.openapi")

_TEXTUAL: Final = ("text/", "application/xml", "application/javascript", "application/x-www-form-urlencoded")


class OpenAPITool(ToolBase):
    """An operation as a tool: the arguments become an HTTP request, the 2xx answer the natural result."""

    compile_on_first_use = True  # a document has a thousand operations; a session calls a few

    def __init__(
        self, source: OpenAPISource, operation: Operation, plan: RequestPlan, output: Output, name: str
    ) -> None:
        summary, description = operation.summary, operation.description
        super().__init__(
            name,
            input_schema=plan.input_schema,
            output_schema=output.schema,
            title=summary,
            description=description or summary or "",
            annotations=annotations_for(operation.method),
            tags=operation.tags,
        )
        self.source = source
        self.plan = plan
        self.operation = operation.where
        """``GET /pets/{petId}``: the operation behind it."""

    async def call(self, arguments: dict[str, Any], context: Any) -> CallOutcome:
        try:
            outgoing = self.plan.request(without_nulls(self.plan, arguments))
        except (ToolError, ValueError) as exc:
            return CallOutcome.error(f"Invalid arguments for tool {self.name!r}: {exc}")
        try:
            answer = await self.source.send(outgoing, what=self.operation, context=context)
        except ExchangeFailed as exc:
            return CallOutcome.error(f"Tool {self.name!r}: {exc}")
        return self.answered(answer)

    def answered(self, answer: Answer) -> CallOutcome:
        """The outcome of a 2xx answer (see the module docstring)."""
        if self.output_schema is not None:
            try:
                value = pydantic_core.from_json(answer.body)
            except ValueError:
                what = f"{answer.content_type or 'no content type'}, {len(answer.body)} bytes"
                logger.error(
                    "tool %r (%s): the API answered %s that is not JSON, where its document declares JSON",
                    self.name,
                    self.operation,
                    what,
                )
                return CallOutcome.error(f"Tool {self.name!r} produced a result that does not match its output schema")
            return self.finish(value)
        return CallOutcome(_content(answer))


def without_nulls(plan: RequestPlan, arguments: dict[str, Any]) -> dict[str, Any]:
    """``arguments`` without a ``null`` given for an optional parameter: HTTP has no null to send for a
    path, query, header or cookie value, and models fill optional arguments with ``null`` (FastAPI's
    ``author: str | None = None`` declares one), which would reach the API as the text ``null``."""
    if None not in arguments.values():
        return arguments
    required = plan.input_schema.get("required", ())
    return {
        name: value
        for name, value in arguments.items()
        if value is not None or name in required or plan.arguments.get(name, ("body", ""))[0] == "body"
    }


def _content(answer: Answer) -> list[ContentBlock]:
    """A 2xx answer without a declared JSON schema as content blocks."""
    media = answer.content_type
    if not answer.body:
        return [Text(f"HTTP {answer.status} (no content)")]
    if media.startswith("image/"):
        return [Image(answer.body, mime_type=media)]
    if media.startswith("audio/"):
        return [Audio(answer.body, mime_type=media)]
    if answer.is_json or media.startswith(_TEXTUAL) or answer.charset is not None or not media:
        return [Text(answer.text())]
    try:
        return [Text(answer.body.decode("utf-8"))]
    except UnicodeDecodeError:
        return [EmbeddedResource(answer.url, blob=answer.body, mime_type=media)]


def _contents(uri: str, answer: Answer) -> list[dict[str, Any]]:
    """A read's ``contents``: text for JSON and text, a base64 blob for anything else."""
    media = answer.content_type or "application/octet-stream"
    textual = answer.is_json or media.startswith(_TEXTUAL) or answer.charset is not None
    if textual:
        return [{"uri": uri, "mimeType": media, "text": answer.text()}]
    try:
        return [{"uri": uri, "mimeType": media, "text": answer.body.decode("utf-8")}]
    except UnicodeDecodeError:
        return [{"uri": uri, "mimeType": media, "blob": base64.b64encode(answer.body).decode("ascii")}]


class _Readable:
    """What a resource and a template share: the listing, the exchange, the contents."""

    source: OpenAPISource
    plan: RequestPlan
    operation: str
    name: str
    title: str | None
    description: str | None
    mime_type: str | None
    ttl_ms: int | None
    cache_scope: str | None

    def _described(self, operation: Operation, output: Output, name: str, source: OpenAPISource) -> None:
        self.source = source
        self.operation = operation.where
        self.name = name
        self.title = operation.summary
        self.description = operation.description or operation.summary
        self.mime_type = output.media_type.split(";", 1)[0].strip() if output.media_type else None
        self.ttl_ms: int | None = None
        self.cache_scope: str | None = None
        self.scopes: frozenset[str] = frozenset()
        self.tags: frozenset[str] = frozenset(operation.tags)

    def _entry(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"name": self.name}
        for key, value in (("title", self.title), ("description", self.description), ("mimeType", self.mime_type)):
            if value:
                entry[key] = value
        return entry

    async def _read(self, uri: str, arguments: dict[str, Any], context: Any) -> list[dict[str, Any]]:
        try:
            outgoing = self.plan.request(arguments)
        except ToolError as exc:
            raise ValueError(str(exc)) from None
        try:
            answer = await self.source.send(outgoing, what=self.operation, context=context)
        except ExchangeFailed as exc:
            raise ResourceError(str(exc)) from None
        return _contents(uri, answer)


class OpenAPIResource(_Readable, ResourceBase):
    """A GET without parameters a URI must carry, read at ``<scheme>://<path>``."""

    def __init__(
        self, source: OpenAPISource, operation: Operation, plan: RequestPlan, output: Output, name: str, uri: str
    ) -> None:
        self._described(operation, output, name, source)
        self.plan = plan
        self.uri = uri

    def listing(self) -> dict[str, Any]:
        return {"uri": self.uri, **self._entry()}

    async def read(self, uri: str, variables: Mapping[str, Value], context: Any) -> list[dict[str, Any]]:
        return await self._read(uri, {}, context)


class OpenAPITemplate(_Readable, TemplateBase):
    """A GET with path parameters, read at ``<scheme>://<path with {variables}>{?query}``.

    ``own_template`` is the template before the source's namespace, ``variables`` maps each of
    its variables to the argument it fills (``ValueError`` when a URI template cannot be made).
    """

    def __init__(
        self,
        source: OpenAPISource,
        operation: Operation,
        plan: RequestPlan,
        output: Output,
        name: str,
        own_template: str,
        outer_template: str,
        lists: frozenset[str],
        optional: frozenset[str],
    ) -> None:
        self._described(operation, output, name, source)
        self.plan = plan
        self.uri_template = outer_template
        self.own_template = own_template
        self.uri = outer_template
        self.template = UriTemplate(own_template, lists=lists, optional=optional)
        self._validator = check_schema(plan.input_schema, what=f"resource template {outer_template!r}")
        self._properties: Mapping[str, Any] = plan.input_schema.get("properties", {})
        self._defs: Mapping[str, Any] = plan.input_schema.get("$defs", {})

    def listing(self) -> dict[str, Any]:
        return {"uriTemplate": self.uri_template, **self._entry()}

    def match(self, uri: str) -> dict[str, Value] | None:
        inner = inner_uri(self.source.namespace, uri)
        return None if inner is None else self.template.match(inner)

    def shape(self, uri: str) -> bool:
        inner = inner_uri(self.source.namespace, uri)
        return inner is not None and self.template.shape(inner)

    async def read(self, uri: str, variables: Mapping[str, Value], context: Any) -> list[dict[str, Any]]:
        defs = self._defs
        arguments = {
            name: _typed(value, self._properties.get(name, {}), name, defs) for name, value in variables.items()
        }
        if not self._validator.is_valid(arguments):
            raise ValueError("; ".join(describe_errors(self._validator, arguments, root="URI variables", limit=3)))
        return await self._read(uri, arguments, context)


_ANNOTATION_ONLY: Final = frozenset({"title", "description", "default", "examples", "deprecated", "format", "enum"})


def _declared(schema: Any, defs: Mapping[str, Any]) -> tuple[Mapping[str, Any], Any] | None:
    """``schema`` and its one JSON type, seen through ``$ref``s into ``defs`` and a null alternative
    (``anyOf: [X, {"type": "null"}]``, ``type: [X, "null"]``); ``None`` when it is not that simple."""
    for _ in range(8):  # a chain of references, bounded
        if not isinstance(schema, Mapping):
            return None
        reference = schema.get("$ref")
        options = schema.get("anyOf")
        if isinstance(reference, str) and reference.startswith("#/$defs/"):
            schema = defs.get(reference.removeprefix("#/$defs/"))
        elif isinstance(options, list):
            kept = [option for option in options if not (isinstance(option, Mapping) and option.get("type") == "null")]
            if len(kept) != 1:
                return None
            schema = kept[0]
        else:
            declared = schema.get("type")
            if isinstance(declared, list):
                kept_types = [each for each in declared if each != "null"]
                declared = kept_types[0] if len(kept_types) == 1 else None
            if declared is None and isinstance(schema.get("enum"), list) and schema["enum"]:
                values = [value for value in schema["enum"] if value is not None]
                kinds = {type(value) for value in values}
                declared = (
                    {str: "string", int: "integer", float: "number", bool: "boolean"}.get(kinds.pop())
                    if len(kinds) == 1
                    else None
                )
            elif declared is None and not set(schema) - _ANNOTATION_ONLY:
                declared = "string"  # a format alone: a string is the usual meaning
            return schema, declared
    return None


def scalar_type(schema: Any, defs: Mapping[str, Any]) -> str | None:
    """The JSON type of a parameter a URI variable can carry (``string``, ``integer``, ``number``,
    ``boolean``); ``None`` for anything else."""
    found = _declared(schema, defs)
    return str(found[1]) if found is not None and found[1] in ("string", "integer", "number", "boolean") else None


def item_type(schema: Any, defs: Mapping[str, Any]) -> str | None:
    """For an array of scalars (``tag: list[str]``), the items' type; else ``None``."""
    found = _declared(schema, defs)
    return scalar_type(found[0].get("items", {}), defs) if found is not None and found[1] == "array" else None


def _typed(value: Value, schema: Any, name: str, defs: Mapping[str, Any]) -> Any:
    """A URI variable's text as its parameter's JSON type (``"7"`` → ``7`` for an integer)."""
    items = item_type(schema, defs)
    if isinstance(value, list) or items is not None:
        return [_scalar(each, items or "string", name) for each in (value if isinstance(value, list) else [value])]
    return _scalar(value, scalar_type(schema, defs) or "string", name)


def _scalar(text: str, kind: str, name: str) -> Any:
    try:
        if kind == "integer":
            return int(text)
        if kind == "number":
            return float(text)
    except ValueError:
        noun = "an integer" if kind == "integer" else "a number"
        raise ValueError(f"URI variable {name!r}: {text!r} is not {noun}") from None
    if kind == "boolean":
        if text in ("true", "false"):
            return text == "true"
        raise ValueError(f"URI variable {name!r}: {text!r} is not true or false")
    return text
