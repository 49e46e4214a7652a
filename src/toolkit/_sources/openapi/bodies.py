"""An OpenAPI request body: the tool arguments it becomes, and the bytes one call's arguments make.

``body_arguments`` reads one media type of an operation's body when the document loads (the
``BodyPlan`` says how it is written, the ``BodyArgument``s what the model fills); ``requests.py``
names those arguments beside the parameters and, per call, hands them back to ``body_content``.
Pure code: the standard library and pydantic-core only.

The body
    A JSON body (``application/json``, ``*/*+json``) whose schema, after following a root
    ``$ref``, is a plain object (``properties``, no composition or whole-object keywords, an
    ``additionalProperties`` that is absent or boolean) is flattened: each property is a
    top-level argument, required when the body is required and the property is; read-only
    properties are left out (OpenAPI: they SHOULD NOT be sent). A form
    (``application/x-www-form-urlencoded``) or ``multipart/form-data`` body is flattened by
    the same rule. Any other body is one argument (``body``): arrays, primitives, unions, maps,
    text and binary media. When flattened arguments are all omitted, an optional body is not
    sent and a required one is sent as ``{}``; an optional body's required properties are not
    required arguments (a schema cannot say "all or none" in a way models follow: the API's own
    answer says what is missing). The input schema has ``additionalProperties: false``, so an
    argument the tool does not take is an error the model can correct, never silently dropped;
    the price is that a flattened body's undeclared extra properties cannot be sent.

Binary content
    JSON cannot carry bytes, so a binary value comes from the model as base64: a multipart part
    whose schema is ``format: binary``, a non-text ``contentMediaType`` without ``contentEncoding``,
    or the empty schema (OpenAPI 3.1's file-upload idiom); an array of them; a whole body of a
    non-text, non-JSON media type (``application/octet-stream``, ``image/png``). Their input
    schemas say so (``contentEncoding: base64``) and the value is decoded before it is sent (with
    ``filename`` = the property name for a part). A schema that already has ``contentEncoding``
    describes text the API wants as it is, so that text is sent unchanged.

Form and multipart bodies follow the Encoding Object: a form property with ``style``,
``explode`` or ``allowReserved`` is serialized as a query parameter of that style; one with a
JSON ``contentType`` as JSON text; others as ``form`` with ``explode: true`` (the spec's
default, which writes an object property's members as pairs of their own). A multipart part is
``text/plain`` for a primitive, ``application/json`` for an object, the encoding's
``contentType`` when given; an array is one part per item, and a null field is no part (RFC 7578
has no null). The encoding's ``headers`` are not sent (they would be values the model has no
argument for).
"""

from __future__ import annotations

import base64
import binascii
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from pydantic_core import to_json

from ..._errors import ToolError
from .pointers import defs_entry
from .styles import item_text, query_component, query_pairs

BodyKind = Literal["json", "form", "multipart", "text", "binary", "encoded"]

_NOT_PLAIN_OBJECT: Final = frozenset(
    {
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "if",
        "then",
        "else",
        "dependentSchemas",
        "dependentRequired",
        "patternProperties",
        "propertyNames",
        "unevaluatedProperties",
        "minProperties",
        "maxProperties",
        "enum",
        "const",
        "$ref",
        "$dynamicRef",
    }
)
"""Keywords that constrain the body as a whole, which separate arguments could not express."""
_ANNOTATIONS: Final = frozenset({"title", "description", "$comment", "deprecated", "examples", "readOnly", "writeOnly"})
WHOLE_BODY: Final = ""
"""``RequestPlan.arguments``' HTTP name for the argument that is the whole body."""
_MAX_REF_HOPS: Final = 32


@dataclass(frozen=True)
class Body:
    """One request body media type: its translated schema and, for forms, the encoding per property."""

    media_type: str
    schema: dict[str, Any]
    required: bool = False
    description: str | None = None
    encoding: Mapping[str, Mapping[str, Any]] | None = None


@dataclass(frozen=True, slots=True)
class BodyArgument:
    """One argument the body becomes, before it is named: a property (or ``WHOLE_BODY``), its schema."""

    name: str
    schema: dict[str, Any]
    required: bool


@dataclass(frozen=True, slots=True)
class _Field:
    """One declared property of a form or multipart body, its schemas' root ``$ref`` followed."""

    schema: Any
    items: Any  # an array property's item schema, else None
    encoding: Mapping[str, Any]
    binary: bool  # multipart: the value (each item of an array) is bytes, sent by the model as base64


_UNDECLARED: Final = _Field({}, None, {}, False)


@dataclass(frozen=True, slots=True)
class BodyPlan:
    """How one operation's body is written; ``requests.py`` fills in the argument names."""

    kind: BodyKind
    content_type: str
    required: bool
    whole: str | None  # the argument that is the whole body, when not flattened
    properties: tuple[tuple[str, str], ...]  # (argument, property) when flattened
    fields: Mapping[str, _Field]  # form and multipart: per property


# --- building --------------------------------------------------------------------------------------


def body_arguments(
    body: Body, defs: Mapping[str, dict[str, Any]], where: str, notes: list[str]
) -> tuple[BodyPlan, list[BodyArgument]]:
    """How the body is sent, and its arguments (one, or one per flattened property)."""
    content_type, kind = _body_kind(body.media_type)
    resolved = _follow(body.schema, defs)
    encoding = body.encoding or {}
    if kind in ("json", "form", "multipart"):
        if kind != "json" and not _may_be_object(resolved):
            raise ValueError(f"{where}: a {body.media_type} body must be an object (its properties are the fields)")
        fields: dict[str, _Field] = {}
        if kind != "json":
            properties = resolved.get("properties") if isinstance(resolved, dict) else None
            for name, schema in (properties or {}).items():
                fields[name] = _field(schema, encoding.get(name) or {}, defs, multipart=kind == "multipart")
        if _is_plain_object(resolved):
            return _flattened(body, kind, content_type, resolved, fields, defs, notes)
        schema = body.schema
        if any(f.binary for f in fields.values()):
            rewritten = {
                n: _binary_schema(s, fields[n]) if fields[n].binary else s for n, s in resolved["properties"].items()
            }
            schema = {**resolved, "properties": rewritten}
        plan = BodyPlan(kind, content_type, body.required, "body", (), fields)
        return plan, [BodyArgument(WHOLE_BODY, _described(schema, body.description), body.required)]
    if kind == "text":
        if _is_xml(content_type) and _json_types(resolved) - {"string"}:
            raise ValueError(
                f"{where}: a {body.media_type} body described by a non-string schema: toolkit does not write XML"
            )
        plan = BodyPlan("text", content_type, body.required, "body", (), {})
        return plan, [BodyArgument(WHOLE_BODY, _described(body.schema, body.description), body.required)]
    if isinstance(resolved, dict) and "contentEncoding" in resolved:  # the API wants the encoded text itself
        plan = BodyPlan("encoded", content_type, body.required, "body", (), {})
        return plan, [BodyArgument(WHOLE_BODY, _described(body.schema, body.description), body.required)]
    plan = BodyPlan("binary", content_type, body.required, "body", (), {})
    schema = {"type": "string", "contentEncoding": "base64", "contentMediaType": content_type}
    description = f"The {content_type} content, base64-encoded."
    if body.description:
        description = f"{body.description} ({description})"
    return plan, [BodyArgument(WHOLE_BODY, {**schema, "description": description}, body.required)]


def _flattened(
    body: Body,
    kind: BodyKind,
    content_type: str,
    resolved: dict[str, Any],
    fields: dict[str, _Field],
    defs: Mapping[str, dict[str, Any]],
    notes: list[str],
) -> tuple[BodyPlan, list[BodyArgument]]:
    required_names = set(resolved.get("required") or ()) if body.required else set()
    inputs: list[BodyArgument] = []
    for name, schema in resolved["properties"].items():
        target = _follow(schema, defs) if isinstance(schema, dict) else schema
        if _read_only(schema) or _read_only(target):
            notes.append(f"body property {name!r} left out: it is read-only")
            continue
        argument_schema = schema if isinstance(schema, dict) else ({} if schema else {"not": {}})
        if name in fields and fields[name].binary:
            argument_schema = _binary_schema(schema, fields[name])
        inputs.append(BodyArgument(name, argument_schema, name in required_names))
    plan = BodyPlan(kind, content_type, body.required, None, (), fields)
    return plan, inputs


def _body_kind(media_type: str) -> tuple[str, Literal["json", "form", "multipart", "text", "binary"]]:
    """The ``Content-Type`` to send, and how the body is written."""
    content_type = media_type.strip()
    base = content_type.split(";", 1)[0].strip().lower()
    if base in ("*/*", "application/*"):
        return "application/octet-stream", "binary"
    if base == "text/*":
        return "text/plain", "text"
    if base == "application/json" or base.endswith("+json"):
        return content_type, "json"
    if base == "application/x-www-form-urlencoded":
        return content_type, "form"
    if base.startswith("multipart/"):
        return base, "multipart"  # the boundary parameter is added per request
    if base.startswith("text/") or _is_xml(base):
        return content_type, "text"
    return content_type, "binary"


def _is_xml(media_type: str) -> bool:
    base = media_type.split(";", 1)[0].strip().lower()
    return base in ("application/xml", "text/xml") or base.endswith("+xml")


def _follow(schema: Any, defs: Mapping[str, dict[str, Any]]) -> Any:
    """``schema`` with a root ``$ref`` followed (annotations beside it kept), hop after hop."""
    hops = 0
    while isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and hops < _MAX_REF_HOPS:
        name = defs_entry(schema["$ref"])
        if name is None or name not in defs:
            return schema
        extra = {key: value for key, value in schema.items() if key != "$ref"}
        if extra.keys() - _ANNOTATIONS:
            return schema  # a $ref with constraints beside it: not one schema to read
        target = defs[name]
        schema = {**target, **extra} if extra and isinstance(target, dict) else target
        hops += 1
    return schema


def _is_plain_object(resolved: Any) -> bool:
    if not isinstance(resolved, dict) or resolved.keys() & _NOT_PLAIN_OBJECT:
        return False
    properties = resolved.get("properties")
    if not isinstance(properties, dict) or not properties:
        return False
    if resolved.get("type", "object") != "object":
        return False
    additional = resolved.get("additionalProperties", True)
    return isinstance(additional, bool) or additional == {}


def _may_be_object(resolved: Any) -> bool:
    types = _json_types(resolved)
    return not types or "object" in types


def _json_types(schema: Any) -> set[str]:
    if not isinstance(schema, dict):
        return set()
    declared = schema.get("type")
    if isinstance(declared, str):
        return {declared}
    if isinstance(declared, list):
        return {item for item in declared if isinstance(item, str)}
    return set()


def _read_only(schema: Any) -> bool:
    return isinstance(schema, dict) and schema.get("readOnly") is True


def _field(schema: Any, encoding: Mapping[str, Any], defs: Mapping[str, dict[str, Any]], *, multipart: bool) -> _Field:
    target = _follow(schema, defs)
    items = _follow(target["items"], defs) if isinstance(target, dict) and "items" in target else None
    if not multipart:
        return _Field(target, items, encoding, False)
    if "array" in _json_types(target):
        return _Field(target, items, encoding, items is not None and _is_binary(items))
    return _Field(target, items, encoding, _is_binary(target))


def _is_binary(schema: Any) -> bool:
    """A multipart part of bytes: ``format: binary`` (3.0), a non-text ``contentMediaType`` without
    ``contentEncoding`` (3.0's binary as 3.1 writes it), or the empty schema (3.1's file upload)."""
    if not isinstance(schema, dict):
        return schema is True
    if "contentEncoding" in schema:
        return False
    media = schema.get("contentMediaType")
    if isinstance(media, str) and _body_kind(media)[1] == "binary":
        return True
    return schema.get("format") == "binary" or not (schema.keys() - _ANNOTATIONS)


def _binary_schema(original: Any, field_: _Field) -> dict[str, Any]:
    """The argument schema of a binary part (or an array of them): base64 text, saying so."""
    one: dict[str, Any] = {"type": "string", "contentEncoding": "base64"}
    source = field_.items if field_.items is not None and "array" in _json_types(field_.schema) else field_.schema
    media = _part_media_type(field_.encoding) or (source.get("contentMediaType") if isinstance(source, dict) else None)
    if isinstance(media, str):
        one["contentMediaType"] = media
    description = next(
        (d.get("description") for d in (original, field_.schema) if isinstance(d, dict) and d.get("description")), None
    )
    if source is field_.schema:
        text = "The file's bytes, base64-encoded."
        return {**one, "description": f"{description} ({text})" if description else text}
    text = "One part per item: each the file's bytes, base64-encoded."
    outer = {key: value for key, value in field_.schema.items() if key not in ("items", "description")}
    return {**outer, "items": one, "description": f"{description} ({text})" if description else text}


def _described(schema: dict[str, Any], description: str | None) -> dict[str, Any]:
    return {**schema, "description": description} if description else schema


# --- calling ---------------------------------------------------------------------------------------


def body_content(plan: BodyPlan, arguments: Mapping[str, Any]) -> tuple[bytes | None, str | None]:
    if plan.whole is not None:
        if plan.whole not in arguments:
            return None, None
        value = arguments[plan.whole]
        what = plan.whole
    else:
        present = {prop: arguments[arg] for arg, prop in plan.properties if arg in arguments}
        if not present and not plan.required:
            return None, None
        value = present
        what = "the body"
    if plan.kind == "json":
        return to_json(value), plan.content_type
    if plan.kind in ("text", "encoded"):
        return item_text(value).encode(), plan.content_type
    if plan.kind == "binary":
        return _base64(value, what), plan.content_type
    if not isinstance(value, dict):
        raise ToolError(f"{what!r} must be an object: its members are the form's fields")
    if plan.kind == "form":
        return _form(value, plan.fields).encode("ascii"), plan.content_type
    return _multipart(value, plan.fields, plan.content_type)


def _form(value: Mapping[str, Any], fields: Mapping[str, _Field]) -> str:
    pairs: list[tuple[str, str]] = []
    for name, item in value.items():
        encoding = fields[name].encoding if name in fields else {}
        if {"style", "explode", "allowReserved"} & encoding.keys() or not _is_json(_part_media_type(encoding)):
            style = encoding.get("style", "form")
            explode = encoding.get("explode", style == "form")
            pairs.extend(query_pairs(style, explode, name, item, bool(encoding.get("allowReserved", False))))
        else:
            pairs.append((query_component(name), query_component(to_json(item).decode())))
    return "&".join(f"{name}={text}" for name, text in pairs)


@dataclass(frozen=True, slots=True)
class _Part:
    name: str
    data: bytes
    content_type: str
    filename: str | None = None


def _multipart(value: Mapping[str, Any], fields: Mapping[str, _Field], media_type: str) -> tuple[bytes, str]:
    parts: list[_Part] = []
    for name, item in value.items():
        declared = fields.get(name, _UNDECLARED)
        if item is None:  # RFC 7578 has no null: a null field is no part, as an omitted one
            continue
        if isinstance(item, list):  # OpenAPI 3.1 "Special Considerations for multipart Content": a part per item
            schema = declared.items if declared.items is not None else {}
            parts.extend(_part(name, one, schema, declared.encoding, declared.binary) for one in item)
        else:
            parts.append(_part(name, item, declared.schema, declared.encoding, declared.binary))
    boundary = "toolkit-" + secrets.token_hex(16)
    while any(boundary.encode() in part.data for part in parts):  # a part may hold any bytes, even these
        boundary = "toolkit-" + secrets.token_hex(16)
    chunks: list[bytes] = []
    for part in parts:
        disposition = f'form-data; name="{_quoted(part.name)}"'
        if part.filename is not None:
            disposition += f'; filename="{_quoted(part.filename)}"'
        head = f"--{boundary}\r\nContent-Disposition: {disposition}\r\nContent-Type: {part.content_type}\r\n\r\n"
        chunks.extend((head.encode(), part.data, b"\r\n"))
    chunks.append(f"--{boundary}--\r\n".encode())
    return b"".join(chunks), f"{media_type}; boundary={boundary}"


def _part(name: str, value: Any, schema: Any, encoding: Mapping[str, Any], binary: bool) -> _Part:
    declared = _part_media_type(encoding)
    if binary:
        media = declared or (schema.get("contentMediaType") if isinstance(schema, dict) else None)
        return _Part(name, _base64(value, name), media if isinstance(media, str) else "application/octet-stream", name)
    if declared is not None:
        data = to_json(value) if _is_json(declared) else item_text(value).encode()
        return _Part(name, data, declared)
    if isinstance(value, dict | list):
        return _Part(name, to_json(value), "application/json")
    return _Part(name, item_text(value).encode(), "text/plain; charset=utf-8")


def _part_media_type(encoding: Mapping[str, Any]) -> str | None:
    """The first concrete media type of an encoding's ``contentType`` (a list, wildcards allowed)."""
    declared = encoding.get("contentType")
    if not isinstance(declared, str):
        return None
    for candidate in declared.split(","):
        media = candidate.strip()
        if media and "*" not in media.split(";", 1)[0]:
            return media
    return None


def _is_json(media_type: str | None) -> bool:
    if media_type is None:
        return False
    base = media_type.split(";", 1)[0].strip().lower()
    return base == "application/json" or base.endswith("+json")


def _quoted(name: str) -> str:
    """A name inside a quoted ``Content-Disposition`` parameter (the HTML form-submission escapes)."""
    return name.replace("\r", "%0D").replace("\n", "%0A").replace('"', "%22")


def _base64(value: Any, what: str) -> bytes:
    if not isinstance(value, str):
        raise ToolError(f"{what!r} takes the content as a base64 string")
    text = "".join(value.split())
    text += "=" * (-len(text) % 4)
    try:
        if "-" in text or "_" in text:
            return base64.urlsafe_b64decode(text.encode("ascii"))
        return base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError) as error:
        raise ToolError(f"{what!r} is not valid base64 ({error}): send the content base64-encoded") from error
