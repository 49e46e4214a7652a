"""The document read into operations: what each one is called, what it takes, what it answers.

``operations(document)`` walks ``paths`` in the document's order (a Path Item's operations in
``routes.HTTP_METHODS`` order), resolving local ``$ref``s to path items, parameters, request
bodies and responses. Per operation, only what is asked is built: ``plan`` (the tool's input
schema, from ``requests.RequestPlan``) and ``output`` (its natural output schema), so an operation
a route map excludes costs no schema work.

The output schema is the 2xx answer's, natural: the JSON schema of each ``2xx``/``2XX`` response
(several: ``anyOf`` of them). An operation with a 2xx answer that is not JSON (no content, text,
an image) has none: its result is content only. ``default`` responses are not read as success
(most documents use them for errors).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

from .requests import Body, Parameter, RequestPlan
from .routes import HTTP_METHODS
from .schemas import OpenAPIDocumentError, SchemaTranslator, escape_token, with_defs

_SUCCESS: Final = re.compile(r"^(2\d\d|2XX)$")
_BODY_PREFERENCE: Final = ("application/json", "+json", "application/x-www-form-urlencoded", "multipart/form-data")


def is_json_media(media_type: str) -> bool:
    """``application/json``, ``application/problem+json``, ``text/json``, ... (parameters ignored)."""
    media = media_type.split(";", 1)[0].strip().lower()
    return media in ("application/json", "text/json") or media.endswith("+json")


@dataclass
class Operation:
    """One operation of the document, as written (its schemas are built on demand)."""

    method: str
    """Upper case: ``GET``."""
    path: str
    node: dict[str, Any]
    parameters: list[tuple[dict[str, Any], str]]
    """Path-level and operation-level Parameter Objects, resolved, the operation's winning a clash; each
    with the JSON pointer where the document gives it."""

    @property
    def pointer(self) -> str:
        """``#/paths/~1pets~1{petId}/get``: where the document holds it (errors name schemas from here)."""
        return f"#/paths/{escape_token(self.path)}/{self.method.lower()}"

    @property
    def where(self) -> str:
        """``GET /pets/{petId}``: how errors and logs name it."""
        return f"{self.method} {self.path}"

    @property
    def operation_id(self) -> str | None:
        value = self.node.get("operationId")
        return value if isinstance(value, str) and value else None

    @property
    def summary(self) -> str | None:
        value = self.node.get("summary")
        return value.strip() or None if isinstance(value, str) else None

    @property
    def description(self) -> str | None:
        value = self.node.get("description")
        return value.strip() or None if isinstance(value, str) else None

    @property
    def tags(self) -> tuple[str, ...]:
        tags = self.node.get("tags")
        return tuple(tag for tag in tags if isinstance(tag, str) and tag) if isinstance(tags, list) else ()

    @property
    def deprecated(self) -> bool:
        return self.node.get("deprecated") is True

    def readable(self) -> bool:
        """Whether a URI can carry every call of it: a GET without a request body whose only required
        parameters are in the path (a resource's or a template's reads send nothing else)."""
        if self.method != "GET" or "requestBody" in self.node:
            return False
        return all(p.get("in") == "path" or p.get("required") is not True for p, _ in self.parameters)


def operations(document: Mapping[str, Any], translator: SchemaTranslator) -> Iterator[Operation]:
    """Every operation of ``document``, in its order; ``OpenAPIDocumentError`` for a broken structure."""
    paths = document.get("paths", {})
    if paths is None:
        return
    if not isinstance(paths, Mapping):
        raise OpenAPIDocumentError(f"paths must be an object, not {type(paths).__name__}")
    for path, written in paths.items():
        if not isinstance(path, str) or not path.startswith("/"):
            raise OpenAPIDocumentError(f"paths: {path!r} is not a path (it must start with '/')", pointer="#/paths")
        at = f"#/paths/{escape_token(path)}"
        item = translator.resolve(written, where=at)
        if not isinstance(item, Mapping):
            raise OpenAPIDocumentError(f"'{at}' must be a Path Item Object", pointer=at)
        shared = _parameters(item.get("parameters"), translator, at)
        for method in HTTP_METHODS:
            node = item.get(method)
            if node is None:
                continue
            if not isinstance(node, dict):
                raise OpenAPIDocumentError(f"'{at}/{method}' must be an Operation Object", pointer=f"{at}/{method}")
            own = _parameters(node.get("parameters"), translator, f"{at}/{method}")
            merged = {(p.get("name"), p.get("in")): (p, where) for p, where in shared}
            merged.update({(p.get("name"), p.get("in")): (p, where) for p, where in own})
            yield Operation(method.upper(), path, node, list(merged.values()))


def _parameters(given: Any, translator: SchemaTranslator, at: str) -> list[tuple[dict[str, Any], str]]:
    if given is None:
        return []
    if not isinstance(given, list):
        raise OpenAPIDocumentError(f"'{at}/parameters' must be a list", pointer=f"{at}/parameters")
    found = []
    for index, parameter in enumerate(given):
        where = f"{at}/parameters/{index}"
        resolved = translator.resolve(parameter, where=where)
        if not isinstance(resolved, dict) or not isinstance(resolved.get("name"), str):
            raise OpenAPIDocumentError(f"'{where}' is not a Parameter Object with a name", pointer=where)
        found.append((resolved, where))
    return found


def plan(
    operation: Operation, translator: SchemaTranslator, *, configured: Collection[tuple[str, str]] = ()
) -> RequestPlan:
    """The operation's tool input and its way back to HTTP; ``ValueError`` (or ``OpenAPIDocumentError``) if
    it cannot be served."""
    where = operation.where
    defs: dict[str, Any] = {}
    parameters = []
    for raw, given_at in operation.parameters:
        name = raw["name"]
        location = raw.get("in")
        schema_node: Any = raw.get("schema")
        media_type = None
        at = f"{given_at}/schema"
        if schema_node is None and isinstance(raw.get("content"), Mapping) and raw["content"]:
            media_type, media = next(iter(raw["content"].items()))
            schema_node = media.get("schema") if isinstance(media, Mapping) else None
            at = f"{given_at}/content/{escape_token(media_type)}/schema"
        schema_node = schema_node if schema_node is not None else {}
        translated = translator.translate(schema_node, where=at, mode="input", depth=1)
        defs.update(translated.defs)
        explode = raw.get("explode")
        parameters.append(
            Parameter(
                name=name,
                location=location,  # type: ignore[arg-type]  # RequestPlan.build refuses any other
                schema=translated.schema,
                required=raw.get("required") is True,
                description=_text(raw.get("description")),
                style=raw.get("style") if isinstance(raw.get("style"), str) else None,
                explode=explode if isinstance(explode, bool) else None,
                allow_reserved=raw.get("allowReserved") is True,
                media_type=media_type,
                deprecated=raw.get("deprecated") is True,
            )
        )
    body = _body(operation, translator, defs)
    return RequestPlan.build(
        operation.method, operation.path, parameters, body, defs, where=where, configured=configured
    )


def _body(operation: Operation, translator: SchemaTranslator, defs: dict[str, Any]) -> Body | None:
    raw = operation.node.get("requestBody")
    if raw is None:
        return None
    where = f"{operation.pointer}/requestBody"
    resolved = translator.resolve(raw, where=where)
    content = resolved.get("content") if isinstance(resolved, Mapping) else None
    if not isinstance(content, Mapping) or not content:
        raise OpenAPIDocumentError(f"'{where}': a Request Body Object needs a content map", pointer=where)
    media_type = _preferred(list(content))
    media = content[media_type] if isinstance(content[media_type], Mapping) else {}
    at = f"{where}/content/{escape_token(media_type)}/schema"
    translated = translator.translate(media.get("schema", {}), where=at, mode="input", depth=1)
    defs.update(translated.defs)
    encoding = media.get("encoding")
    return Body(
        media_type=media_type,
        schema=translated.schema,
        required=resolved.get("required") is True,
        description=_text(resolved.get("description")),
        encoding=encoding if isinstance(encoding, Mapping) else None,
    )


def _preferred(media_types: list[str]) -> str:
    """The request body's media type a tool sends: JSON first, then a form, then the document's first."""
    for wanted in _BODY_PREFERENCE:
        for media_type in media_types:
            lowered = media_type.split(";", 1)[0].strip().lower()
            if lowered == wanted or (wanted.startswith("+") and lowered.endswith(wanted)):
                return media_type
    return media_types[0]


@dataclass
class Output:
    """What a 2xx answer of the operation is, as the document declares it."""

    schema: dict[str, Any] | None
    """The natural output schema, self-contained (``$defs``); ``None``: not all 2xx answers are JSON."""
    media_type: str | None
    """The first 2xx answer's media type (``application/json``, ``text/plain``), if it declares one."""


def output(operation: Operation, translator: SchemaTranslator) -> Output:
    """The operation's natural output schema and declared media type (see the module docstring)."""
    responses = operation.node.get("responses")
    if not isinstance(responses, Mapping):
        return Output(None, None)
    schemas: list[dict[str, Any]] = []
    defs: dict[str, Any] = {}
    all_json = True
    first_media: str | None = None
    for status, raw in responses.items():
        if not _SUCCESS.match(str(status)):
            continue
        where = f"{operation.pointer}/responses/{status}"
        response = translator.resolve(raw, where=where)
        content = response.get("content") if isinstance(response, Mapping) else None
        if not isinstance(content, Mapping) or not content:
            all_json = False
            continue
        media_type = next((media for media in content if is_json_media(media)), None)
        if first_media is None:
            first_media = media_type or next(iter(content))
        media = content.get(media_type) if media_type is not None else None
        if not isinstance(media, Mapping) or "schema" not in media:
            all_json = False
            continue
        at = f"{where}/content/{escape_token(str(media_type))}/schema"
        translated = translator.translate(media["schema"], where=at, mode="output")
        defs.update(translated.defs)
        if translated.schema not in schemas:
            schemas.append(translated.schema)
    if not all_json or not schemas:
        return Output(None, first_media)
    schema = schemas[0] if len(schemas) == 1 else {"anyOf": schemas}
    return Output(with_defs(schema, defs), first_media)


def _text(value: Any) -> str | None:
    return value.strip() or None if isinstance(value, str) else None
