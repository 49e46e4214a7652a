"""One OpenAPI operation's parameters and request body as a tool's input, and a call back into HTTP.

``RequestPlan.build`` reads an operation once, when the document loads: its parameters (already
translated to JSON Schema 2020-12, component references as ``#/$defs/<Name>``) and its request
body become the tool's ``input_schema``; ``RequestPlan.request`` turns one call's arguments into
an ``HttpRequest`` (path, query, headers, cookies, body), ready for httpx. Pure code: no I/O,
nothing imported but the standard library and pydantic-core.

Argument names
    MCP arguments are JSON object keys, so any string would be legal; but model APIs are stricter
    than JSON (one major provider refuses tool property names outside ``^[a-zA-Z0-9_.-]{1,64}$``),
    so a tool whose schema says ``page[size]`` cannot be offered to every model. The rule: a name
    that matches ``[A-Za-z0-9_.-]{1,64}`` is kept exactly as the document writes it (``X-Request-Id``
    stays ``X-Request-Id``: the model sees the HTTP name); any other is sanitised, each run of
    other characters becoming ``_`` and the ends trimmed (``page[size]`` → ``page_size``,
    ``$filter`` → ``filter``), cut to 64 characters (``param`` if nothing is left).

Clashes
    Names are claimed in a fixed order: path, query, header, cookie, then the body (its flattened
    properties, or the one ``body`` argument), and in each location in the document's order.
    First, every name that needed no sanitising claims itself; the first claimant wins. Then the
    rest, in the same order, take their sanitised name if it is free, else ``<name>_<location>``
    (``id`` in query beside a path ``id`` becomes ``id_query``; a body property ``id`` becomes
    ``id_body``), else that with ``_2``, ``_3``, ... The whole-body argument is ``body``, else
    ``request_body``, else numbered. Every change is said in ``RequestPlan.renamed``, and
    ``RequestPlan.arguments`` maps each argument back to its location and HTTP name.

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

Headers the model may not set
    ``Accept``, ``Content-Type`` and ``Authorization`` parameters are ignored (the OpenAPI spec
    says so); ``Host``, ``Cookie``, ``Content-Length``, ``Transfer-Encoding``, ``Connection`` and
    the other hop-by-hop or framing headers are left out of the schema. Each is said in
    ``RequestPlan.notes``. Credentials come from the configuration, never the model; parameters
    the configuration fills are named in ``build(configured=...)`` and left out the same way.

Serialization (OpenAPI Parameter Object, "Style Values" and "Style Examples")
    Path ``simple``/``label``/``matrix``, query ``form``/``spaceDelimited``/``pipeDelimited``/
    ``deepObject``, header ``simple``, cookie ``form``, for primitives, arrays and objects, with
    either ``explode``, exactly as the Style Examples table of 3.0.4 and 3.1.1 (and 3.1.2) writes
    them. Those patch releases corrected the 3.0.3/3.1.0 table in two ways, and toolkit follows
    the correction: ``label`` with ``explode: false`` separates items with ``,`` (``.blue,black,brown``,
    as RFC 6570 ``{.color}`` does; 3.0.3 printed ``.blue.black.brown``), and ``|``, ``[`` and ``]``,
    which RFC 3986 does not allow in a query, are percent-encoded (``color=blue%7Cblack%7Cbrown``,
    ``color%5BR%5D=100``); servers decode them (3.1.1 Appendix E).

    Booleans and numbers are their JSON text (``true``, ``1.5``); an item that is itself an array
    or object is its compact JSON, an item that is null is ``null``. A parameter whose value is
    null, ``""``, ``[]`` or ``{}`` is the table's ``undefined`` column (``;color``, ``.``, an empty
    value, ``color=``): RFC 6570 §2.3 calls null and empty lists and maps undefined, and the empty
    string expands to the same text. An omitted optional parameter is not sent at all.

    Percent-encoding (RFC 3986, OpenAPI 3.1.1 "URL Percent-Encoding"): a path value encodes
    everything but the unreserved characters, so ``/``, ``?``, ``#`` and ``%`` cannot leave its
    segment, and a value that would make a ``.`` or ``..`` segment, or an empty ``simple`` one, is
    refused (httpx, like any URL normaliser, would drop ``..`` with the segment before it). A query
    or form name or value encodes the same and ``~``, except that ``allowReserved`` keeps
    ``:/?[]@!$'()*,;=`` (never ``#``, ``&`` or ``+``, which would end the query, split a pair or
    read as a space). Delimiters are literal (``,``, ``=``, ``&``) or encoded where RFC 3986 has
    no place for them (``%20``, ``%7C``, ``%5B``/``%5D``). Header values are not encoded: a value
    that is not printable ASCII is refused (a newline would split the request's headers). Cookie
    values are encoded as query values; an exploded cookie array or object is one cookie per item
    (``a=1; a=2``: 3.1.1 Appendix D warns that form style's ``&`` has no meaning in ``Cookie``).
    ``deepObject`` nests (``filter[a][b]=1``) and repeats a key for an array item: the spec leaves
    both undefined, and this is the common reading.

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
import re
import secrets
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final, Literal
from urllib.parse import quote, unquote

from pydantic_core import to_json

from ..._errors import ToolError
from ..._schema.keywords import REFERENCE_KEYWORDS, children
from ..._types import REF_PREFIX

Location = Literal["path", "query", "header", "cookie"]

_LOCATIONS: Final[tuple[Location, ...]] = ("path", "query", "header", "cookie")
_STYLES: Final[Mapping[str, frozenset[str]]] = {
    "path": frozenset({"simple", "label", "matrix"}),
    "query": frozenset({"form", "spaceDelimited", "pipeDelimited", "deepObject"}),
    "header": frozenset({"simple"}),
    "cookie": frozenset({"form"}),
}
_DEFAULT_STYLE: Final[Mapping[str, str]] = {"path": "simple", "query": "form", "header": "simple", "cookie": "form"}

_IGNORED_HEADERS: Final = frozenset({"accept", "content-type", "authorization"})
"""OpenAPI 3.0.3/3.1 Parameter Object, ``name``: these header parameters "SHALL be ignored"."""

_FORBIDDEN_HEADERS: Final = frozenset(
    {
        "host",
        "cookie",
        "content-length",
        "content-encoding",
        "transfer-encoding",
        "connection",
        "keep-alive",
        "upgrade",
        "te",
        "trailer",
        "expect",
        "proxy-authorization",
        "proxy-connection",
    }
)
"""Headers that frame or route the request, or carry credentials: the HTTP client's or the configuration's."""

_ARGUMENT_NAME: Final = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
_NOT_NAME_CHARS: Final = re.compile(r"[^A-Za-z0-9_.-]+")
_TOKEN: Final = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_HEADER_VALUE: Final = re.compile(r"^[\t\x20-\x7e]*$")
_TEMPLATE_VARIABLE: Final = re.compile(r"\{([^{}]*)\}")

_QUERY_RESERVED_KEPT: Final = ":/?[]@!$'()*,;="
"""RFC 3986 reserved characters ``allowReserved`` leaves as they are: all but ``#&+``."""
_DELIMITERS: Final = {"spaceDelimited": "%20", "pipeDelimited": "%7C"}
"""The delimiters of the non-RFC 6570 query styles, percent-encoded (RFC 3986 allows neither as it is)."""
_PATH_LITERAL_SAFE: Final = "/:@!$&'()*+,;=%-._~"

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
_WHOLE_BODY: Final = ""
"""``RequestPlan.arguments``' HTTP name for the argument that is the whole body."""
_MAX_REF_HOPS: Final = 32


# --- the interface ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Parameter:
    """One OpenAPI parameter, its schema already translated to JSON Schema 2020-12."""

    name: str
    location: Location
    schema: dict[str, Any]
    required: bool = False
    description: str | None = None
    style: str | None = None
    explode: bool | None = None
    allow_reserved: bool = False
    media_type: str | None = None
    deprecated: bool = False


@dataclass(frozen=True)
class Body:
    """One request body media type: its translated schema and, for forms, the encoding per property."""

    media_type: str
    schema: dict[str, Any]
    required: bool = False
    description: str | None = None
    encoding: Mapping[str, Mapping[str, Any]] | None = None


@dataclass(frozen=True)
class HttpRequest:
    """One call as HTTP, every part already encoded for the wire.

    ``path`` and ``query`` are percent-encoded (``query`` holds encoded pairs: hand httpx
    ``url``, never ``params=query``, which would encode them again); ``cookies`` hold encoded
    values; ``headers`` are the parameter headers only. Send it as::

        client.build_request(r.method, r.url, headers=r.header_items(), content=r.content)

    A query parameter added afterwards (a credential) must be encoded the same way:
    ``query_component(value)``.
    """

    method: str
    path: str
    query: list[tuple[str, str]]
    headers: list[tuple[str, str]]
    cookies: list[tuple[str, str]]
    content: bytes | None = None
    content_type: str | None = None

    @property
    def query_string(self) -> str:
        """The query, without ``?``: the pairs joined by ``&``."""
        return "&".join(f"{name}={value}" for name, value in self.query)

    @property
    def url(self) -> str:
        """The path with its query: relative, for a client that holds the base URL."""
        return f"{self.path}?{self.query_string}" if self.query else self.path

    @property
    def cookie_header(self) -> str | None:
        """The ``Cookie`` header value for ``cookies`` (RFC 6265 §4.2.1), or ``None`` without any."""
        return "; ".join(f"{name}={value}" for name, value in self.cookies) if self.cookies else None

    def header_items(self) -> list[tuple[str, str]]:
        """Every header this request needs: the parameters', ``Content-Type``, ``Cookie``."""
        items = list(self.headers)
        if self.content_type is not None:
            items.append(("Content-Type", self.content_type))
        cookie = self.cookie_header
        if cookie is not None:
            items.append(("Cookie", cookie))
        return items


def query_component(text: str, *, allow_reserved: bool = False) -> str:
    """``text`` percent-encoded as a query (or form) name or value; see the module docstring."""
    # OpenAPI 3.1.1+ "URL Percent-Encoding": all but RFC 3986's unreserved characters, and ``~``
    # too for form-urlencoded content (RFC 1738, which RFC 1866 cites), which a query string is.
    return quote(text, safe=_QUERY_RESERVED_KEPT if allow_reserved else "").replace("~", "%7E")


# --- the plan --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Slot:
    """One parameter argument, with everything its serialization needs decided."""

    argument: str
    parameter: Parameter
    style: str
    explode: bool


@dataclass(frozen=True, slots=True)
class _Field:
    """One declared property of a form or multipart body, its schemas' root ``$ref`` followed."""

    schema: Any
    items: Any  # an array property's item schema, else None
    encoding: Mapping[str, Any]
    binary: bool  # multipart: the value (each item of an array) is bytes, sent by the model as base64


_UNDECLARED: Final = _Field({}, None, {}, False)


@dataclass(frozen=True, slots=True)
class _BodyPlan:
    kind: Literal["json", "form", "multipart", "text", "binary", "encoded"]
    content_type: str
    required: bool
    whole: str | None  # the argument that is the whole body, when not flattened
    properties: tuple[tuple[str, str], ...]  # (argument, property) when flattened
    fields: Mapping[str, _Field]  # form and multipart: per property


@dataclass(frozen=True, slots=True)
class _Input:
    """A candidate argument before naming: where it goes and the schema the model sees."""

    name: str  # the HTTP name or body property ("" for the whole body)
    location: str  # a Location or "body"
    schema: dict[str, Any]
    required: bool


class RequestPlan:
    """An operation's tool input (``input_schema``) and the way back to HTTP (``request``).

    Built once per operation; ``request`` is pure and cheap (no schema work per call).
    """

    input_schema: dict[str, Any]
    arguments: Mapping[str, tuple[str, str]]
    renamed: list[str]
    notes: list[str]

    def __init__(
        self,
        method: str,
        template: list[str | _Slot],
        slots: list[_Slot],
        body: _BodyPlan | None,
        input_schema: dict[str, Any],
        arguments: dict[str, tuple[str, str]],
        renamed: list[str],
        notes: list[str],
    ) -> None:
        self.method = method
        self._template = template
        self._slots = slots
        self._body = body
        self.input_schema = input_schema
        self.arguments = arguments
        self.renamed = renamed
        self.notes = notes
        self._required = tuple(input_schema.get("required", ()))

    @classmethod
    def build(
        cls,
        method: str,
        path: str,
        parameters: Sequence[Parameter],
        body: Body | None,
        defs: Mapping[str, dict[str, Any]],
        *,
        where: str,
        configured: Collection[tuple[str, str]] = (),
    ) -> RequestPlan:
        """The plan of one operation; ``ValueError`` naming ``where`` for what cannot be served.

        ``configured`` names the ``(location, name)`` parameters the configuration fills (an API
        key in a query parameter, say): they are left out of the input schema.
        """
        notes: list[str] = []
        kept = _usable_parameters(parameters, path, where, notes, configured)
        inputs: list[_Input] = []
        slots_by_input: dict[int, Parameter] = {}
        for parameter in kept:
            slots_by_input[len(inputs)] = parameter
            inputs.append(_parameter_input(parameter))
        body_plan_parts = _body_inputs(body, defs, where, notes) if body is not None else None
        body_first = len(inputs)
        if body_plan_parts is not None:
            inputs.extend(body_plan_parts[1])

        names, renamed = _assign_names(inputs)
        properties: dict[str, Any] = {}
        required: list[str] = []
        arguments: dict[str, tuple[str, str]] = {}
        slots: list[_Slot] = []
        for index, (item, name) in enumerate(zip(inputs, names, strict=True)):
            properties[name] = item.schema
            if item.required:
                required.append(name)
            arguments[name] = (item.location, item.name)
            declared = slots_by_input.get(index)
            if declared is not None:
                style = declared.style or _DEFAULT_STYLE[declared.location]
                explode = declared.explode if declared.explode is not None else style == "form"
                slots.append(_Slot(name, declared, style, explode))

        template = _parse_template(path, {s.parameter.name: s for s in slots if s.parameter.location == "path"}, where)
        body_plan: _BodyPlan | None = None
        if body_plan_parts is not None:
            made, body_inputs = body_plan_parts
            body_names = names[body_first:]
            if made.whole is not None:
                body_plan = replace(made, whole=body_names[0])
            else:
                pairs = tuple((name, item.name) for name, item in zip(body_names, body_inputs, strict=True))
                body_plan = replace(made, properties=pairs)

        schema: dict[str, Any] = {"type": "object", "properties": properties}
        if required:
            schema["required"] = required
        schema["additionalProperties"] = False
        shared = defs if isinstance(defs, Definitions) else Definitions(defs)
        reachable = shared.reachable(properties.values(), where)
        if reachable:
            schema["$defs"] = reachable
        return cls(method.upper(), template, slots, body_plan, schema, arguments, renamed, notes)

    def request(self, arguments: Mapping[str, Any]) -> HttpRequest:
        """The HTTP request for one call's ``arguments``; ``ToolError`` for a value that cannot be sent."""
        unknown = [name for name in arguments if name not in self.arguments]
        if unknown:
            known = ", ".join(self.arguments) or "none"
            raise ToolError(f"Unknown argument(s) {', '.join(map(repr, unknown))}; this tool takes: {known}")
        missing = [name for name in self._required if name not in arguments]
        if missing:
            raise ToolError(f"Missing required argument(s): {', '.join(map(repr, missing))}")

        path_values: dict[str, str] = {}
        query: list[tuple[str, str]] = []
        headers: list[tuple[str, str]] = []
        cookies: list[tuple[str, str]] = []
        for slot in self._slots:
            if slot.argument not in arguments:
                continue
            value = arguments[slot.argument]
            parameter = slot.parameter
            location = parameter.location
            if parameter.media_type is not None:
                text = _media_text(parameter.media_type, value)
                if location == "path":
                    path_values[slot.argument] = _segment(text)
                elif location == "query":
                    query.append(
                        (
                            query_component(parameter.name),
                            query_component(text, allow_reserved=parameter.allow_reserved),
                        )
                    )
                elif location == "header":
                    headers.append((parameter.name, _header_text(text, slot.argument)))
                else:
                    cookies.append((query_component(parameter.name), query_component(text)))
            elif location == "path":
                path_values[slot.argument] = _path_value(slot.style, slot.explode, parameter.name, value, slot.argument)
            elif location == "query":
                query.extend(_query_pairs(slot.style, slot.explode, parameter.name, value, parameter.allow_reserved))
            elif location == "header":
                text = "" if value is None else _simple(slot.explode, value, str)
                headers.append((parameter.name, _header_text(text, slot.argument)))
            else:
                cookies.extend(_query_pairs("form", slot.explode, parameter.name, value, False))

        path = "".join(piece if isinstance(piece, str) else path_values[piece.argument] for piece in self._template)
        _refuse_dot_segments(path, self._template)
        content: bytes | None = None
        content_type: str | None = None
        if self._body is not None:
            content, content_type = _body_content(self._body, arguments)
        return HttpRequest(self.method, path, query, headers, cookies, content, content_type)


# --- building: parameters --------------------------------------------------------------------------


def _usable_parameters(
    parameters: Sequence[Parameter], path: str, where: str, notes: list[str], configured: Collection[tuple[str, str]]
) -> list[Parameter]:
    """The parameters the model fills, in location order; the others said in ``notes``."""
    in_template = set(_TEMPLATE_VARIABLE.findall(path))
    configured_keys = {(location, name.lower() if location == "header" else name) for location, name in configured}
    chosen: dict[tuple[str, str], Parameter] = {}
    for parameter in parameters:
        if parameter.location not in _LOCATIONS:
            raise ValueError(
                f"{where}: parameter {parameter.name!r} is in {parameter.location!r}, not path, query, header or cookie"
            )
        if not parameter.name:
            raise ValueError(f"{where}: a {parameter.location} parameter has an empty name")
        key_name = parameter.name.lower() if parameter.location == "header" else parameter.name
        key = (parameter.location, key_name)
        reason = _left_out(parameter, key_name, path, in_template, configured_keys)
        if reason is not None:
            notes.append(f"{parameter.location} parameter {parameter.name!r} {reason}")
            continue
        style = parameter.style or _DEFAULT_STYLE[parameter.location]
        if style not in _STYLES[parameter.location]:
            allowed = ", ".join(sorted(_STYLES[parameter.location]))
            raise ValueError(
                f"{where}: {parameter.location} parameter {parameter.name!r} has style {style!r}; "
                f"a {parameter.location} parameter takes {allowed}"
            )
        if key in chosen:
            notes.append(
                f"{parameter.location} parameter {parameter.name!r} is declared twice: the last declaration is used"
            )
            del chosen[key]
        chosen[key] = parameter
    order = {location: rank for rank, location in enumerate(_LOCATIONS)}
    return sorted(chosen.values(), key=lambda p: order[p.location])  # stable: the document's order within a location


def _left_out(
    parameter: Parameter, key_name: str, path: str, in_template: set[str], configured: set[tuple[str, str]]
) -> str | None:
    """Why the model is not given this parameter (the end of a note), or ``None``."""
    location = parameter.location
    if location == "header" and key_name in _IGNORED_HEADERS:
        return "ignored, as the OpenAPI spec says for it"
    if location == "header" and key_name in _FORBIDDEN_HEADERS:
        return "left out: the HTTP client or the configuration sets it"
    if location in ("header", "cookie") and not _TOKEN.match(parameter.name):
        return f"left out: not a valid {'HTTP header' if location == 'header' else 'cookie'} name"
    if location == "path" and parameter.name not in in_template:
        return f"left out: the path {path!r} has no {{{parameter.name}}}"
    if (location, key_name) in configured:
        return "left out: the configuration fills it"
    return None


def _parameter_input(parameter: Parameter) -> _Input:
    schema = dict(parameter.schema)
    if parameter.description:
        schema["description"] = parameter.description
    if parameter.deprecated:
        schema["deprecated"] = True
    return _Input(parameter.name, parameter.location, schema, parameter.required or parameter.location == "path")


def _parse_template(path: str, slots: Mapping[str, _Slot], where: str) -> list[str | _Slot]:
    pieces: list[str | _Slot] = []
    at = 0
    for match in _TEMPLATE_VARIABLE.finditer(path):
        slot = slots.get(match.group(1))
        if slot is None:
            raise ValueError(
                f"{where}: the path {path!r} has {{{match.group(1)}}}, but no path parameter of that name "
                "(declare it, or check its spelling)"
            )
        pieces.append(quote(path[at : match.start()], safe=_PATH_LITERAL_SAFE))
        pieces.append(slot)
        at = match.end()
    pieces.append(quote(path[at:], safe=_PATH_LITERAL_SAFE))
    literal = "".join(piece for piece in pieces if isinstance(piece, str))
    if any(segment in (".", "..") for segment in literal.split("/")):
        raise ValueError(f"{where}: the path {path!r} has a '.' or '..' segment")
    return [piece for piece in pieces if piece != ""]


# --- building: the body ----------------------------------------------------------------------------


def _body_inputs(
    body: Body, defs: Mapping[str, dict[str, Any]], where: str, notes: list[str]
) -> tuple[_BodyPlan, list[_Input]]:
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
        plan = _BodyPlan(kind, content_type, body.required, "body", (), fields)
        return plan, [_Input(_WHOLE_BODY, "body", _described(schema, body.description), body.required)]
    if kind == "text":
        if _is_xml(content_type) and _json_types(resolved) - {"string"}:
            raise ValueError(
                f"{where}: a {body.media_type} body described by a non-string schema: toolkit does not write XML"
            )
        plan = _BodyPlan("text", content_type, body.required, "body", (), {})
        return plan, [_Input(_WHOLE_BODY, "body", _described(body.schema, body.description), body.required)]
    if isinstance(resolved, dict) and "contentEncoding" in resolved:  # the API wants the encoded text itself
        plan = _BodyPlan("encoded", content_type, body.required, "body", (), {})
        return plan, [_Input(_WHOLE_BODY, "body", _described(body.schema, body.description), body.required)]
    plan = _BodyPlan("binary", content_type, body.required, "body", (), {})
    schema = {"type": "string", "contentEncoding": "base64", "contentMediaType": content_type}
    description = f"The {content_type} content, base64-encoded."
    if body.description:
        description = f"{body.description} ({description})"
    return plan, [_Input(_WHOLE_BODY, "body", {**schema, "description": description}, body.required)]


def _flattened(
    body: Body,
    kind: Literal["json", "form", "multipart", "text", "binary", "encoded"],
    content_type: str,
    resolved: dict[str, Any],
    fields: dict[str, _Field],
    defs: Mapping[str, dict[str, Any]],
    notes: list[str],
) -> tuple[_BodyPlan, list[_Input]]:
    required_names = set(resolved.get("required") or ()) if body.required else set()
    inputs: list[_Input] = []
    for name, schema in resolved["properties"].items():
        target = _follow(schema, defs) if isinstance(schema, dict) else schema
        if _read_only(schema) or _read_only(target):
            notes.append(f"body property {name!r} left out: it is read-only")
            continue
        argument_schema = schema if isinstance(schema, dict) else ({} if schema else {"not": {}})
        if name in fields and fields[name].binary:
            argument_schema = _binary_schema(schema, fields[name])
        inputs.append(_Input(name, "body", argument_schema, name in required_names))
    plan = _BodyPlan(kind, content_type, body.required, None, (), fields)
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
        name = _def_name(schema["$ref"])
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


# --- building: names and $defs ---------------------------------------------------------------------


def _assign_names(inputs: Sequence[_Input]) -> tuple[list[str], list[str]]:
    """Each input's argument name (the module docstring's rule), and the notes of what changed."""
    names: list[str | None] = [None] * len(inputs)
    taken: set[str] = set()
    for index, item in enumerate(inputs):  # pass 1: names that need no change
        own = "body" if item.name == _WHOLE_BODY else item.name
        if _ARGUMENT_NAME.match(own) and own not in taken:
            names[index] = own
            taken.add(own)
    renamed: list[str] = []
    for index, item in enumerate(inputs):  # pass 2: the rest, in the same order
        if names[index] is not None:
            continue
        if item.name == _WHOLE_BODY:
            candidates = ["body", "request_body"]
        else:
            base = _sanitised(item.name)
            candidates = [base, _suffixed(base, f"_{item.location}")]
        name = next((c for c in candidates if c not in taken), None)
        number = 2
        while name is None:
            candidate = _suffixed(candidates[-1], f"_{number}")
            name = candidate if candidate not in taken else None
            number += 1
        names[index] = name
        taken.add(name)
        where = "the body" if item.location == "body" else item.location
        what = "the whole request body" if item.name == _WHOLE_BODY else f"{item.name!r} in {where}"
        renamed.append(f"{what} became {name!r}")
    return [name for name in names if name is not None], renamed


def _sanitised(name: str) -> str:
    return _NOT_NAME_CHARS.sub("_", name).strip("_")[:64] or "param"


def _suffixed(base: str, suffix: str) -> str:
    return base[: 64 - len(suffix)] + suffix


def _def_name(reference: str) -> str | None:
    """The ``$defs`` entry a ``#/$defs/<Name>[/...]`` reference is in (pointer escapes undone)."""
    if not reference.startswith(REF_PREFIX):
        return None
    token = reference[len(REF_PREFIX) :].split("/", 1)[0]
    return unquote(token).replace("~1", "/").replace("~0", "~")


class Definitions(Mapping[str, dict[str, Any]]):
    """A document's ``$defs``, each definition's references read once, for every plan to share.

    ``RequestPlan.build`` takes any mapping; handing it the same ``Definitions`` for all of a
    document's operations keeps a document with interlinked components linear to load (each
    plan's ``$defs`` are the definitions its arguments reach, found through these lists).
    """

    def __init__(self, defs: Mapping[str, dict[str, Any]]) -> None:
        self._defs = defs
        self._order = {name: index for index, name in enumerate(defs)}
        self._references: dict[str, tuple[str, ...]] = {}

    def __getitem__(self, name: str) -> dict[str, Any]:
        return self._defs[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._defs)

    def __len__(self) -> int:
        return len(self._defs)

    def references(self, name: str) -> tuple[str, ...]:
        """The definitions ``name``'s schema refers to directly (cached)."""
        found = self._references.get(name)
        if found is None:
            found = self._references[name] = _referenced(self._defs[name])
        return found

    def reachable(self, schemas: Iterable[Any], where: str) -> dict[str, Any]:
        """The definitions ``schemas`` reach, in the document's order (shared, never copied)."""
        seen: set[str] = set()
        pending = list(_referenced(list(schemas)))
        while pending:
            name = pending.pop()
            if name in seen:
                continue
            if name not in self._defs:
                raise ValueError(f"{where}: a schema refers to #/$defs/{name}, which the document does not define")
            seen.add(name)
            pending.extend(self.references(name))
        return {name: self._defs[name] for name in sorted(seen, key=self._order.__getitem__)}


def _referenced(node: Any) -> tuple[str, ...]:
    """The ``$defs`` names the references in the schema ``node`` point into (data keywords skipped)."""
    found: list[str] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, dict):
            for keyword in REFERENCE_KEYWORDS:
                value = current.get(keyword)
                name = _def_name(value) if isinstance(value, str) else None
                if name is not None:
                    found.append(name)
            stack.extend(children(current))
        elif isinstance(current, list):
            stack.extend(current)
    return tuple(dict.fromkeys(found))


# --- calling: parameters ---------------------------------------------------------------------------


def _text(value: Any) -> str:
    """A value as the text of one item: strings as they are, everything else its compact JSON."""
    if isinstance(value, str):
        return value
    return to_json(value).decode()


def _is_empty(value: Any) -> bool:
    """The Style Examples table's ``undefined`` column: null, and (RFC 6570 §2.3) ``[]`` and ``{}``.

    The empty string is not undefined, but RFC 6570 expands it to the same text (``;color``,
    ``.``, nothing, ``color=``), so it takes the same way.
    """
    return value is None or (isinstance(value, str | list | dict) and not value)


def _simple(explode: bool, value: Any, encode: Callable[[str], str]) -> str:
    """RFC 6570 ``{x}`` / ``{x*}`` (OpenAPI ``simple``): comma-separated."""
    if isinstance(value, list):
        return ",".join(encode(_text(item)) for item in value)
    if isinstance(value, dict):
        if explode:
            return ",".join(f"{encode(key)}={encode(_text(item))}" for key, item in value.items())
        return ",".join(f"{encode(key)},{encode(_text(item))}" for key, item in value.items())
    return encode(_text(value))


def _segment(text: str) -> str:
    return quote(text, safe="")


def _path_value(style: str, explode: bool, name: str, value: Any, argument: str) -> str:
    empty = _is_empty(value)
    if style == "simple":
        if empty:
            raise ToolError(f"{argument!r} is a path parameter and may not be empty")
        return _simple(explode, value, _segment)
    if style == "label":
        if empty:
            return "."
        if isinstance(value, dict) and explode:
            return "".join(f".{_segment(key)}={_segment(_text(item))}" for key, item in value.items())
        if isinstance(value, list) and explode:
            return "".join(f".{_segment(_text(item))}" for item in value)
        return "." + _simple(False, value, _segment)
    # matrix
    label = _segment(name)
    if empty:
        return f";{label}"
    if isinstance(value, list) and explode:
        return "".join(f";{label}={_segment(_text(item))}" for item in value)
    if isinstance(value, dict) and explode:
        return "".join(f";{_segment(key)}={_segment(_text(item))}" for key, item in value.items())
    return f";{label}={_simple(False, value, _segment)}"


def _query_pairs(style: str, explode: bool, name: str, value: Any, allow_reserved: bool) -> list[tuple[str, str]]:
    """One query (or cookie, or form field) parameter as encoded ``(name, value)`` pairs."""

    def encode(text: str) -> str:
        return query_component(text, allow_reserved=allow_reserved)

    label = query_component(name)
    if style == "deepObject" and isinstance(value, dict):
        pairs: list[tuple[str, str]] = []
        _deep_pairs(label, value, encode, pairs)
        return pairs
    if _is_empty(value):
        return [(label, "")]
    if isinstance(value, list):
        if explode:
            return [(label, encode(_text(item))) for item in value]
        delimiter = _DELIMITERS.get(style, ",")
        return [(label, delimiter.join(encode(_text(item)) for item in value))]
    if isinstance(value, dict):
        if explode:
            return [(query_component(key), encode(_text(item))) for key, item in value.items()]
        delimiter = _DELIMITERS.get(style, ",")
        return [
            (label, delimiter.join(f"{encode(key)}{delimiter}{encode(_text(item))}" for key, item in value.items()))
        ]
    return [(label, encode(_text(value)))]


def _deep_pairs(prefix: str, value: Any, encode: Callable[[str], str], pairs: list[tuple[str, str]]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            _deep_pairs(f"{prefix}%5B{query_component(key)}%5D", item, encode, pairs)
    elif isinstance(value, list):
        pairs.extend((prefix, encode(_text(item))) for item in value)
    else:
        pairs.append((prefix, encode(_text(value))))


def _header_text(text: str, argument: str) -> str:
    if not _HEADER_VALUE.match(text):
        raise ToolError(
            f"{argument!r} is sent as an HTTP header, which holds printable ASCII only (no newlines, no non-ASCII)"
        )
    return text


def _media_text(media_type: str, value: Any) -> str:
    """A parameter given by ``content``: its value as that media type (JSON, else text)."""
    base = media_type.split(";", 1)[0].strip().lower()
    if base == "application/json" or base.endswith("+json"):
        return to_json(value).decode()
    return _text(value)


def _refuse_dot_segments(path: str, template: Sequence[str | _Slot]) -> None:
    if not any(isinstance(piece, _Slot) for piece in template):
        return
    for segment in path.split("/"):
        if segment in (".", ".."):
            raise ToolError(
                f"A path parameter made the path {path!r} hold a {segment!r} segment, which would leave the "
                "operation's path: give another value"
            )


# --- calling: the body -----------------------------------------------------------------------------


def _body_content(plan: _BodyPlan, arguments: Mapping[str, Any]) -> tuple[bytes | None, str | None]:
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
        return _text(value).encode(), plan.content_type
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
            pairs.extend(_query_pairs(style, explode, name, item, bool(encoding.get("allowReserved", False))))
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
        data = to_json(value) if _is_json(declared) else _text(value).encode()
        return _Part(name, data, declared)
    if isinstance(value, dict | list):
        return _Part(name, to_json(value), "application/json")
    return _Part(name, _text(value).encode(), "text/plain; charset=utf-8")


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
