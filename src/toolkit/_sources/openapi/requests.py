"""One OpenAPI operation's parameters and request body as a tool's input, and a call back into HTTP.

``RequestPlan.build`` reads an operation once, when the document loads: its parameters (already
translated to JSON Schema 2020-12, component references as ``#/$defs/<Name>``) and its request
body become the tool's ``input_schema``; ``RequestPlan.request`` turns one call's arguments into
an ``HttpRequest`` (path, query, headers, cookies, body), ready for httpx. Pure code: no I/O,
nothing imported but the standard library and pydantic-core. How each parameter value is written
(its style, ``explode``, percent-encoding) is ``styles.py``; how the body becomes arguments and
bytes (JSON, form, multipart, text, binary) is ``bodies.py``.

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

Headers the model may not set
    ``Accept``, ``Content-Type`` and ``Authorization`` parameters are ignored (the OpenAPI spec
    says so); ``Host``, ``Cookie``, ``Content-Length``, ``Transfer-Encoding``, ``Connection`` and
    the other hop-by-hop or framing headers are left out of the schema. Each is said in
    ``RequestPlan.notes``. Credentials come from the configuration, never the model; parameters
    the configuration fills are named in ``build(configured=...)`` and left out the same way.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final, Literal
from urllib.parse import quote

from ..._errors import ToolError
from .bodies import WHOLE_BODY, Body, BodyPlan, body_arguments, body_content
from .pointers import Definitions
from .styles import (
    DEFAULT_STYLE,
    STYLES,
    header_text,
    media_text,
    path_segment,
    path_value,
    query_component,
    query_pairs,
    simple,
)

__all__ = ["Body", "Definitions", "HttpRequest", "Location", "Parameter", "RequestPlan", "query_component"]
"""What other modules import from here: ``Body``, ``Definitions`` and ``query_component`` live in ``bodies.py``,
``pointers.py`` and ``styles.py`` and stay importable from here."""

Location = Literal["path", "query", "header", "cookie"]

_LOCATIONS: Final[tuple[Location, ...]] = ("path", "query", "header", "cookie")

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
_TEMPLATE_VARIABLE: Final = re.compile(r"\{([^{}]*)\}")
_PATH_LITERAL_SAFE: Final = "/:@!$&'()*+,;=%-._~"


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


# --- the plan --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Slot:
    """One parameter argument, with everything its serialization needs decided."""

    argument: str
    parameter: Parameter
    style: str
    explode: bool


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
        body: BodyPlan | None,
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
        body_plan_parts = body_arguments(body, defs, where, notes) if body is not None else None
        body_first = len(inputs)
        if body_plan_parts is not None:
            inputs.extend(_Input(item.name, "body", item.schema, item.required) for item in body_plan_parts[1])

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
                style = declared.style or DEFAULT_STYLE[declared.location]
                explode = declared.explode if declared.explode is not None else style == "form"
                slots.append(_Slot(name, declared, style, explode))

        template = _parse_template(path, {s.parameter.name: s for s in slots if s.parameter.location == "path"}, where)
        body_plan: BodyPlan | None = None
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
                text = media_text(parameter.media_type, value)
                if location == "path":
                    path_values[slot.argument] = path_segment(text)
                elif location == "query":
                    query.append(
                        (
                            query_component(parameter.name),
                            query_component(text, allow_reserved=parameter.allow_reserved),
                        )
                    )
                elif location == "header":
                    headers.append((parameter.name, header_text(text, slot.argument)))
                else:
                    cookies.append((query_component(parameter.name), query_component(text)))
            elif location == "path":
                path_values[slot.argument] = path_value(slot.style, slot.explode, parameter.name, value, slot.argument)
            elif location == "query":
                query.extend(query_pairs(slot.style, slot.explode, parameter.name, value, parameter.allow_reserved))
            elif location == "header":
                text = "" if value is None else simple(slot.explode, value, str)
                headers.append((parameter.name, header_text(text, slot.argument)))
            else:
                cookies.extend(query_pairs("form", slot.explode, parameter.name, value, False))

        path = "".join(piece if isinstance(piece, str) else path_values[piece.argument] for piece in self._template)
        _refuse_dot_segments(path, self._template)
        content: bytes | None = None
        content_type: str | None = None
        if self._body is not None:
            content, content_type = body_content(self._body, arguments)
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
        style = parameter.style or DEFAULT_STYLE[parameter.location]
        if style not in STYLES[parameter.location]:
            allowed = ", ".join(sorted(STYLES[parameter.location]))
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


# --- building: names -------------------------------------------------------------------------------


def _assign_names(inputs: Sequence[_Input]) -> tuple[list[str], list[str]]:
    """Each input's argument name (the module docstring's rule), and the notes of what changed."""
    names: list[str | None] = [None] * len(inputs)
    taken: set[str] = set()
    for index, item in enumerate(inputs):  # pass 1: names that need no change
        own = "body" if item.name == WHOLE_BODY else item.name
        if _ARGUMENT_NAME.match(own) and own not in taken:
            names[index] = own
            taken.add(own)
    renamed: list[str] = []
    for index, item in enumerate(inputs):  # pass 2: the rest, in the same order
        if names[index] is not None:
            continue
        if item.name == WHOLE_BODY:
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
        what = "the whole request body" if item.name == WHOLE_BODY else f"{item.name!r} in {where}"
        renamed.append(f"{what} became {name!r}")
    return [name for name in names if name is not None], renamed


def _sanitised(name: str) -> str:
    return _NOT_NAME_CHARS.sub("_", name).strip("_")[:64] or "param"


def _suffixed(base: str, suffix: str) -> str:
    return base[: 64 - len(suffix)] + suffix


# --- calling ---------------------------------------------------------------------------------------


def _refuse_dot_segments(path: str, template: Sequence[str | _Slot]) -> None:
    if not any(isinstance(piece, _Slot) for piece in template):
        return
    for segment in path.split("/"):
        if segment in (".", ".."):
            raise ToolError(
                f"A path parameter made the path {path!r} hold a {segment!r} segment, which would leave the "
                "operation's path: give another value"
            )
