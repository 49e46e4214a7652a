"""OpenAPI parameter styles: a value written into a path, a query, a header or a cookie.

The serialization of the Parameter Object's "Style Values" and "Style Examples"; ``requests.py``
applies it per argument, ``bodies.py`` to the fields of a form. Pure code: the standard library
and pydantic-core only.

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
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, Final
from urllib.parse import quote

from pydantic_core import to_json

from ..._errors import ToolError

STYLES: Final[Mapping[str, frozenset[str]]] = {
    "path": frozenset({"simple", "label", "matrix"}),
    "query": frozenset({"form", "spaceDelimited", "pipeDelimited", "deepObject"}),
    "header": frozenset({"simple"}),
    "cookie": frozenset({"form"}),
}
"""The styles each parameter location takes."""
DEFAULT_STYLE: Final[Mapping[str, str]] = {"path": "simple", "query": "form", "header": "simple", "cookie": "form"}

_HEADER_VALUE: Final = re.compile(r"^[\t\x20-\x7e]*$")
_QUERY_RESERVED_KEPT: Final = ":/?[]@!$'()*,;="
"""RFC 3986 reserved characters ``allowReserved`` leaves as they are: all but ``#&+``."""
_DELIMITERS: Final = {"spaceDelimited": "%20", "pipeDelimited": "%7C"}
"""The delimiters of the non-RFC 6570 query styles, percent-encoded (RFC 3986 allows neither as it is)."""


def query_component(text: str, *, allow_reserved: bool = False) -> str:
    """``text`` percent-encoded as a query (or form) name or value; see the module docstring."""
    # OpenAPI 3.1.1+ "URL Percent-Encoding": all but RFC 3986's unreserved characters, and ``~``
    # too for form-urlencoded content (RFC 1738, which RFC 1866 cites), which a query string is.
    return quote(text, safe=_QUERY_RESERVED_KEPT if allow_reserved else "").replace("~", "%7E")


def item_text(value: Any) -> str:
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


def simple(explode: bool, value: Any, encode: Callable[[str], str]) -> str:
    """RFC 6570 ``{x}`` / ``{x*}`` (OpenAPI ``simple``): comma-separated."""
    if isinstance(value, list):
        return ",".join(encode(item_text(item)) for item in value)
    if isinstance(value, dict):
        if explode:
            return ",".join(f"{encode(key)}={encode(item_text(item))}" for key, item in value.items())
        return ",".join(f"{encode(key)},{encode(item_text(item))}" for key, item in value.items())
    return encode(item_text(value))


def path_segment(text: str) -> str:
    """``text`` percent-encoded to stay inside one path segment (all but the unreserved characters)."""
    return quote(text, safe="")


def path_value(style: str, explode: bool, name: str, value: Any, argument: str) -> str:
    """One path parameter's text in ``style`` (``simple``, ``label``, ``matrix``), encoded for the path."""
    empty = _is_empty(value)
    if style == "simple":
        if empty:
            raise ToolError(f"{argument!r} is a path parameter and may not be empty")
        return simple(explode, value, path_segment)
    if style == "label":
        if empty:
            return "."
        if isinstance(value, dict) and explode:
            return "".join(f".{path_segment(key)}={path_segment(item_text(item))}" for key, item in value.items())
        if isinstance(value, list) and explode:
            return "".join(f".{path_segment(item_text(item))}" for item in value)
        return "." + simple(False, value, path_segment)
    # matrix
    label = path_segment(name)
    if empty:
        return f";{label}"
    if isinstance(value, list) and explode:
        return "".join(f";{label}={path_segment(item_text(item))}" for item in value)
    if isinstance(value, dict) and explode:
        return "".join(f";{path_segment(key)}={path_segment(item_text(item))}" for key, item in value.items())
    return f";{label}={simple(False, value, path_segment)}"


def query_pairs(style: str, explode: bool, name: str, value: Any, allow_reserved: bool) -> list[tuple[str, str]]:
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
            return [(label, encode(item_text(item))) for item in value]
        delimiter = _DELIMITERS.get(style, ",")
        return [(label, delimiter.join(encode(item_text(item)) for item in value))]
    if isinstance(value, dict):
        if explode:
            return [(query_component(key), encode(item_text(item))) for key, item in value.items()]
        delimiter = _DELIMITERS.get(style, ",")
        return [
            (label, delimiter.join(f"{encode(key)}{delimiter}{encode(item_text(item))}" for key, item in value.items()))
        ]
    return [(label, encode(item_text(value)))]


def _deep_pairs(prefix: str, value: Any, encode: Callable[[str], str], pairs: list[tuple[str, str]]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            _deep_pairs(f"{prefix}%5B{query_component(key)}%5D", item, encode, pairs)
    elif isinstance(value, list):
        pairs.extend((prefix, encode(item_text(item))) for item in value)
    else:
        pairs.append((prefix, encode(item_text(value))))


def header_text(text: str, argument: str) -> str:
    """``text`` as a header value, unchanged; ``ToolError`` naming ``argument`` unless printable ASCII."""
    if not _HEADER_VALUE.match(text):
        raise ToolError(
            f"{argument!r} is sent as an HTTP header, which holds printable ASCII only (no newlines, no non-ASCII)"
        )
    return text


def media_text(media_type: str, value: Any) -> str:
    """A parameter given by ``content``: its value as that media type (JSON, else text)."""
    base = media_type.split(";", 1)[0].strip().lower()
    if base == "application/json" or base.endswith("+json"):
        return to_json(value).decode()
    return item_text(value)
