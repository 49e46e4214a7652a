"""An OpenAPI operation's parameters and body as a tool's input, and a call's arguments as HTTP.

``RequestPlan`` (``toolkit._sources.openapi.requests``) is pure; these tests read what it makes:

- the OpenAPI spec's own "Style Examples" table (3.0.3 and 3.1, Parameter Object), every row,
  through the public ``request`` (paths, query strings, header values);
- percent-encoding, and a path value that may not leave its segment;
- argument names: kept, sanitised, disambiguated across locations, reported;
- bodies: flattened or one ``body`` argument; JSON, form, multipart (read back with the standard
  library's ``email`` parser), text and binary;
- every generated input schema passes toolkit's own schema checks and accepts the arguments used;
- a round trip through httpx into a real Starlette app (``httpx.ASGITransport``): the server's own
  request parsing reads back the path parameters, query arrays, ``deepObject``, cookies, headers
  and the JSON, form and multipart bodies.
"""

from __future__ import annotations

import base64
import email.parser
import email.policy
import json
from collections.abc import Mapping, Sequence
from email.message import EmailMessage
from typing import Any
from urllib.parse import parse_qsl, unquote

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from toolkit._errors import ToolError
from toolkit._schema.checks import check_schema
from toolkit._sources.openapi.requests import (
    Body,
    Definitions,
    HttpRequest,
    Location,
    Parameter,
    RequestPlan,
    query_component,
)

WHERE = "GET /test (test)"
STRING = "blue"
ARRAY = ["blue", "black", "brown"]
OBJECT = {"R": 100, "G": 200, "B": 150}


def plan(
    path: str = "/t",
    parameters: Sequence[Parameter] = (),
    body: Body | None = None,
    defs: Mapping[str, dict[str, Any]] | None = None,
    method: str = "GET",
    **options: Any,
) -> RequestPlan:
    made = RequestPlan.build(method, path, parameters, body, defs or {}, where=WHERE, **options)
    # Every generated schema passes the checks a tool's input schema gets at registration.
    check_schema(made.input_schema, what="input schema", assert_formats=True)
    return made


def call(made: RequestPlan, arguments: Mapping[str, Any]) -> HttpRequest:
    validator = check_schema(made.input_schema, what="input schema", assert_formats=True)
    assert validator.is_valid(dict(arguments)), f"{arguments} fails {made.input_schema}"
    return made.request(arguments)


# --- the spec's Style Examples table -----------------------------------------------------------------

# OpenAPI 3.0.4 / 3.1.1 / 3.1.2, Parameter Object, "Style Examples": a parameter named `color` whose
# value is undefined (null), the string "blue", the array ["blue", "black", "brown"] or the object
# {"R": 100, "G": 200, "B": 150}. (style, explode, undefined, string, array, object); None where the
# table says n/a; "" where it says *empty*.
STYLE_TABLE: list[tuple[str, bool, str | None, str | None, str | None, str | None]] = [
    ("matrix", False, ";color", ";color=blue", ";color=blue,black,brown", ";color=R,100,G,200,B,150"),
    ("matrix", True, ";color", ";color=blue", ";color=blue;color=black;color=brown", ";R=100;G=200;B=150"),
    ("label", False, ".", ".blue", ".blue,black,brown", ".R,100,G,200,B,150"),
    ("label", True, ".", ".blue", ".blue.black.brown", ".R=100.G=200.B=150"),
    ("simple", False, "", "blue", "blue,black,brown", "R,100,G,200,B,150"),
    ("simple", True, "", "blue", "blue,black,brown", "R=100,G=200,B=150"),
    ("form", False, "color=", "color=blue", "color=blue,black,brown", "color=R,100,G,200,B,150"),
    ("form", True, "color=", "color=blue", "color=blue&color=black&color=brown", "R=100&G=200&B=150"),
    ("spaceDelimited", False, None, None, "color=blue%20black%20brown", "color=R%20100%20G%20200%20B%20150"),
    ("spaceDelimited", True, None, None, None, None),
    ("pipeDelimited", False, None, None, "color=blue%7Cblack%7Cbrown", "color=R%7C100%7CG%7C200%7CB%7C150"),
    ("pipeDelimited", True, None, None, None, None),
    ("deepObject", False, None, None, None, None),
    ("deepObject", True, None, None, None, "color%5BR%5D=100&color%5BG%5D=200&color%5BB%5D=150"),
]

# The same table in OpenAPI 3.0.3 / 3.1.0, before 3.0.4 and 3.1.1 corrected it: `empty` for
# `undefined`, n/a for simple's, the bare value for the delimited styles, `|` `[` `]` unencoded,
# and label with explode false written like explode true (against RFC 6570, which the style cites).
STYLE_TABLE_3_0_3: list[tuple[str, bool, str | None, str | None, str | None, str | None]] = [
    ("matrix", False, ";color", ";color=blue", ";color=blue,black,brown", ";color=R,100,G,200,B,150"),
    ("matrix", True, ";color", ";color=blue", ";color=blue;color=black;color=brown", ";R=100;G=200;B=150"),
    ("label", False, ".", ".blue", ".blue.black.brown", ".R.100.G.200.B.150"),
    ("label", True, ".", ".blue", ".blue.black.brown", ".R=100.G=200.B=150"),
    ("form", False, "color=", "color=blue", "color=blue,black,brown", "color=R,100,G,200,B,150"),
    ("form", True, "color=", "color=blue", "color=blue&color=black&color=brown", "R=100&G=200&B=150"),
    ("simple", False, None, "blue", "blue,black,brown", "R,100,G,200,B,150"),
    ("simple", True, None, "blue", "blue,black,brown", "R=100,G=200,B=150"),
    ("spaceDelimited", False, None, None, "blue%20black%20brown", "R%20100%20G%20200%20B%20150"),
    ("pipeDelimited", False, None, None, "blue|black|brown", "R|100|G|200|B|150"),
    ("deepObject", True, None, None, None, "color[R]=100&color[G]=200&color[B]=150"),
]
PATH_STYLES = {"matrix", "label", "simple"}
KINDS = ("undefined", "string", "array", "object")
SCHEMAS: dict[str, dict[str, Any]] = {
    "undefined": {"type": ["string", "null"]},
    "string": {"type": "string"},
    "array": {"type": "array"},
    "object": {"type": "object"},
}
VALUES: dict[str, Any] = {"undefined": None, "string": STRING, "array": ARRAY, "object": OBJECT}


def _table_cases(table: list[tuple[str, bool, str | None, str | None, str | None, str | None]]) -> list[Any]:
    cases = []
    for style, explode, *expected in table:
        for kind, text in zip(KINDS, expected, strict=True):
            if text is not None:
                cases.append(pytest.param(style, explode, kind, text, id=f"{style}-{explode}-{kind}"))
    return cases


def _serialized(style: str, explode: bool, kind: str) -> str:
    """What a `color` parameter of this style serializes to: the path expansion, or the query."""
    location: Location = "path" if style in PATH_STYLES else "query"
    parameter = Parameter("color", location, SCHEMAS[kind], required=True, style=style, explode=explode)
    if location == "path":
        made = plan("/c{color}", [parameter])  # what replaces the template expression
        if style == "simple" and kind == "undefined":
            with pytest.raises(ToolError, match="may not be empty"):  # /c/ would name another resource
                made.request({"color": None})
            return ""
        request = call(made, {"color": VALUES[kind]})
        assert request.query == []
        assert request.url.startswith("/c")
        return request.url.removeprefix("/c")
    request = call(plan("/q", [parameter]), {"color": VALUES[kind]})
    assert request.path == "/q"
    assert request.url == f"/q?{request.query_string}"
    return request.query_string


@pytest.mark.parametrize(("style", "explode", "kind", "expected"), _table_cases(STYLE_TABLE))
def test_the_spec_style_examples_table(style: str, explode: bool, kind: str, expected: str) -> None:
    assert _serialized(style, explode, kind) == expected


@pytest.mark.parametrize(("style", "explode", "kind", "expected"), _table_cases(STYLE_TABLE_3_0_3))
def test_the_3_0_3_table_differs_only_by_the_later_corrections(
    style: str, explode: bool, kind: str, expected: str
) -> None:
    ours = _serialized(style, explode, kind)
    if style == "label" and not explode and kind in ("array", "object"):
        assert ours.replace(",", ".") == expected  # the erratum: RFC 6570 separates these with ","
        return
    if style in ("spaceDelimited", "pipeDelimited"):
        expected = f"color={expected}"
    assert ours.replace("%7C", "|").replace("%5B", "[").replace("%5D", "]") == expected


def test_the_empty_string_expands_like_undefined() -> None:
    for style in ("matrix", "label"):
        made = plan("/c{color}", [Parameter("color", "path", {"type": "string"}, style=style)])
        assert call(made, {"color": ""}).url == {"matrix": "/c;color", "label": "/c."}[style]
    made = plan(parameters=[Parameter("color", "query", {"type": "string"}), Parameter("X-C", "header", {})])
    request = call(made, {"color": "", "X-C": ""})
    assert (request.query_string, request.headers) == ("color=", [("X-C", "")])


@pytest.mark.parametrize(("explode", "expected"), [(row[1], row[2:]) for row in STYLE_TABLE if row[0] == "simple"])
def test_header_parameters_are_simple_style_as_in_the_table(explode: bool, expected: tuple[str, ...]) -> None:
    made = plan(parameters=[Parameter("X-Color", "header", {}, style="simple", explode=explode)])
    for value, text in zip((None, STRING, ARRAY, OBJECT), expected, strict=True):
        assert call(made, {"X-Color": value}).headers == [("X-Color", text)]


def test_the_default_styles_are_the_spec_defaults() -> None:
    made = plan(
        "/p/{id}",
        [
            Parameter("id", "path", {"type": "array"}),  # simple, explode false
            Parameter("tag", "query", {"type": "array"}),  # form, explode true
            Parameter("X-Tags", "header", {"type": "array"}),  # simple, explode false
            Parameter("pref", "cookie", {"type": "object"}),  # form, explode true
        ],
    )
    request = call(made, {"id": [1, 2], "tag": ["a", "b"], "X-Tags": ["x", "y"], "pref": {"a": 1, "b": "two"}})
    assert request.url == "/p/1,2?tag=a&tag=b"
    assert request.headers == [("X-Tags", "x,y")]
    assert request.cookies == [("a", "1"), ("b", "two")]
    assert request.cookie_header == "a=1; b=two"


def test_cookies_in_form_style() -> None:
    made = plan(
        parameters=[
            Parameter("ids", "cookie", {"type": "array"}, explode=False),
            Parameter("one", "cookie", {"type": "string"}),
            Parameter("many", "cookie", {"type": "array"}),
        ]
    )
    request = call(made, {"ids": [3, 4, 5], "one": "a b;c", "many": ["x", "y"]})
    assert request.cookie_header == "ids=3,4,5; one=a%20b%3Bc; many=x; many=y"


def test_space_and_pipe_delimited_with_explode_repeat_the_name() -> None:
    for style in ("spaceDelimited", "pipeDelimited"):
        made = plan(parameters=[Parameter("color", "query", {"type": "array"}, style=style, explode=True)])
        assert call(made, {"color": ARRAY}).query_string == "color=blue&color=black&color=brown"


def test_deep_object_nests_and_repeats_array_items() -> None:
    made = plan(parameters=[Parameter("filter", "query", {"type": "object"}, style="deepObject", explode=True)])
    request = call(made, {"filter": {"name": "a&b", "size": {"min": 1, "max": 2}, "tag": ["x", "y"]}})
    assert request.query_string == (
        "filter%5Bname%5D=a%26b&filter%5Bsize%5D%5Bmin%5D=1&filter%5Bsize%5D%5Bmax%5D=2"
        "&filter%5Btag%5D=x&filter%5Btag%5D=y"
    )


def test_numbers_and_booleans_are_json_text_and_null_is_undefined() -> None:
    made = plan(parameters=[Parameter(name, "query", {}) for name in ("a", "b", "c", "d", "e")])
    request = call(made, {"a": True, "b": 1.5, "c": None, "d": 0, "e": [False, 2, {"k": [1]}, None]})
    assert request.query == [
        ("a", "true"),
        ("b", "1.5"),
        ("c", ""),  # the table's `undefined` column
        ("d", "0"),
        ("e", "false"),
        ("e", "2"),
        ("e", query_component('{"k":[1]}')),
        ("e", "null"),  # an item that is null is its JSON
    ]


def test_missing_optional_parameters_are_omitted() -> None:
    made = plan(
        "/p/{id}",
        [
            Parameter("id", "path", {"type": "string"}),
            Parameter("q", "query", {"type": "string"}),
            Parameter("X-Trace", "header", {"type": "string"}),
            Parameter("session", "cookie", {"type": "string"}),
        ],
    )
    request = call(made, {"id": "7"})
    assert (request.url, request.headers, request.cookies, request.content) == ("/p/7", [], [], None)
    assert request.header_items() == []
    assert made.input_schema["required"] == ["id"]


def test_a_parameter_given_by_content_is_sent_as_json() -> None:
    coordinates = {"type": "object", "properties": {"lat": {"type": "number"}, "long": {"type": "number"}}}
    made = plan(
        "/near/{where}",
        [
            Parameter("coordinates", "query", coordinates, media_type="application/json"),
            Parameter("where", "path", {}, media_type="application/json"),
            Parameter("X-Filter", "header", {}, media_type="application/json"),
            Parameter("raw", "query", {"type": "string"}, media_type="text/plain"),
        ],
    )
    request = call(
        made, {"coordinates": {"lat": 1.5, "long": -2}, "where": ["a/b"], "X-Filter": {"a": 1}, "raw": "x y"}
    )
    assert request.path == "/near/" + query_component('["a/b"]')
    assert request.query == [("coordinates", query_component('{"lat":1.5,"long":-2}')), ("raw", "x%20y")]
    assert request.headers == [("X-Filter", '{"a":1}')]


# --- percent-encoding and the path's segments --------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "encoded"),
    [
        ("../etc/passwd", "..%2Fetc%2Fpasswd"),
        ("a/b", "a%2Fb"),
        ("a?b#c", "a%3Fb%23c"),
        ("%2e%2e", "%252e%252e"),
        ("..%2f", "..%252f"),
        ("a b+c;d=e,f", "a%20b%2Bc%3Bd%3De%2Cf"),
        ("é☃", "%C3%A9%E2%98%83"),
        ("...", "..."),
        ("~user_1.x-y", "~user_1.x-y"),
    ],
)
def test_a_path_value_stays_in_its_segment(value: str, encoded: str) -> None:
    made = plan("/files/{name}/raw", [Parameter("name", "path", {"type": "string"})])
    request = call(made, {"name": value})
    assert request.path == f"/files/{encoded}/raw"
    assert request.path.count("/") == 3
    assert "?" not in request.url and "#" not in request.url


@pytest.mark.parametrize(
    ("style", "value"), [("simple", ".."), ("simple", "."), ("label", "."), ("simple", ["..", ""])]
)
def test_a_path_value_that_makes_a_dot_segment_is_refused(style: str, value: Any) -> None:
    # httpx (like any URL normaliser) would drop ".." with the segment before it: /files/.. is /.
    made = plan("/files/{name}", [Parameter("name", "path", {}, style=style)])
    if isinstance(value, list):
        request = made.request({"name": value})  # "..," is not a dot segment
        assert request.path == "/files/..,"
        return
    with pytest.raises(ToolError, match="segment"):
        made.request({"name": value})


def test_an_empty_simple_path_value_is_refused() -> None:
    made = plan("/files/{name}/raw", [Parameter("name", "path", {"type": "string"})])
    with pytest.raises(ToolError, match="may not be empty"):
        made.request({"name": ""})


def test_query_values_encode_reserved_characters_unless_allow_reserved() -> None:
    value = "a/b?c:d@e!f$g'h(i)j*k,l;m=n[o]p&q#r+s%t u"
    made = plan(
        parameters=[
            Parameter("strict", "query", {"type": "string"}),
            Parameter("loose", "query", {"type": "string"}, allow_reserved=True),
        ]
    )
    request = call(made, {"strict": value, "loose": value})
    assert request.query == [
        ("strict", "a%2Fb%3Fc%3Ad%40e%21f%24g%27h%28i%29j%2Ak%2Cl%3Bm%3Dn%5Bo%5Dp%26q%23r%2Bs%25t%20u"),
        # allowReserved keeps RFC 3986's reserved characters, but never those that would end the
        # query (#), split a pair (&) or read as a space (+).
        ("loose", "a/b?c:d@e!f$g'h(i)j*k,l;m=n[o]p%26q%23r%2Bs%25t%20u"),
    ]


def test_delimiters_stay_literal_and_items_holding_them_are_encoded() -> None:
    made = plan(
        parameters=[
            Parameter("csv", "query", {"type": "array"}, explode=False),
            Parameter("pipes", "query", {"type": "array"}, style="pipeDelimited"),
        ]
    )
    request = call(made, {"csv": ["a,b", "c"], "pipes": ["x|y", "z"]})
    # form's "," is literal, so an item's own comma is told apart; the delimited styles' delimiters
    # are percent-encoded by the spec itself (%7C, %20), so an item holding one reads the same.
    assert request.query == [("csv", "a%2Cb,c"), ("pipes", "x%7Cy%7Cz")]


def test_query_names_are_encoded() -> None:
    made = plan(parameters=[Parameter("page[size]", "query", {"type": "integer"}), Parameter("a b", "query", {})])
    request = call(made, {"page_size": 10, "a_b": "x"})
    assert request.query == [("page%5Bsize%5D", "10"), ("a%20b", "x")]


@pytest.mark.parametrize("value", ["a\r\nX-Injected: 1", "a\nb", "é", "nul\x00"])
def test_a_header_value_that_is_not_printable_ascii_is_refused(value: str) -> None:
    made = plan(parameters=[Parameter("X-Note", "header", {"type": "string"})])
    with pytest.raises(ToolError, match="printable ASCII"):
        made.request({"X-Note": value})


# --- argument names --------------------------------------------------------------------------------


def test_names_that_are_valid_argument_names_are_kept() -> None:
    made = plan(parameters=[Parameter("X-Request-Id", "header", {}), Parameter("page.size", "query", {})])
    assert list(made.input_schema["properties"]) == ["page.size", "X-Request-Id"]
    assert made.renamed == []
    assert made.arguments == {"page.size": ("query", "page.size"), "X-Request-Id": ("header", "X-Request-Id")}


def test_other_names_are_sanitised_and_reported() -> None:
    made = plan(
        parameters=[
            Parameter("page[size]", "query", {}),
            Parameter("$filter", "query", {}),
            Parameter("€", "query", {}),
            Parameter("x" * 80, "query", {}),
        ]
    )
    assert list(made.input_schema["properties"]) == ["page_size", "filter", "param", "x" * 64]
    assert made.arguments["page_size"] == ("query", "page[size]")
    assert made.renamed == [
        "'page[size]' in query became 'page_size'",
        "'$filter' in query became 'filter'",
        "'€' in query became 'param'",
        f"'{'x' * 80}' in query became '{'x' * 64}'",
    ]


def test_a_name_clash_across_locations_is_resolved_by_location_order() -> None:
    made = plan(
        "/users/{id}",
        [
            Parameter("id", "cookie", {"type": "string"}),
            Parameter("id", "header", {"type": "string"}),
            Parameter("id", "query", {"type": "integer"}),
            Parameter("id", "path", {"type": "string"}),
        ],
        Body("application/json", {"type": "object", "properties": {"id": {"type": "string"}, "name": {}}}),
        method="PUT",
    )
    assert made.arguments == {
        "id": ("path", "id"),
        "id_query": ("query", "id"),
        "id_header": ("header", "id"),
        "id_cookie": ("cookie", "id"),
        "id_body": ("body", "id"),
        "name": ("body", "name"),
    }
    assert made.renamed == [
        "'id' in query became 'id_query'",
        "'id' in header became 'id_header'",
        "'id' in cookie became 'id_cookie'",
        "'id' in the body became 'id_body'",
    ]
    request = call(made, {"id": "p", "id_query": 1, "id_header": "h", "id_cookie": "c", "id_body": "b", "name": "n"})
    assert request.url == "/users/p?id=1"
    assert request.headers == [("id", "h")]
    assert request.cookies == [("id", "c")]
    assert json.loads(request.content or b"") == {"id": "b", "name": "n"}


def test_a_kept_name_wins_over_a_sanitised_one_and_suffixes_are_numbered() -> None:
    made = plan(
        parameters=[
            Parameter("page[size]", "query", {}),  # sanitises to page_size, which the next one has
            Parameter("page_size", "query", {}),
            Parameter("page_size_query", "query", {}),  # the suffix the first would take
        ]
    )
    assert made.arguments == {
        "page_size": ("query", "page_size"),
        "page_size_query": ("query", "page_size_query"),
        "page_size_query_2": ("query", "page[size]"),
    }
    assert made.renamed == ["'page[size]' in query became 'page_size_query_2'"]


def test_the_whole_body_argument_is_renamed_on_clash() -> None:
    made = plan(
        parameters=[Parameter("body", "query", {"type": "string"})],
        body=Body("application/json", {"type": "array", "items": {"type": "integer"}}, required=True),
        method="POST",
    )
    assert made.arguments == {"body": ("query", "body"), "request_body": ("body", "")}
    assert made.renamed == ["the whole request body became 'request_body'"]
    assert made.input_schema["required"] == ["request_body"]
    request = call(made, {"body": "q", "request_body": [1, 2]})
    assert (request.url, request.content, request.content_type) == ("/t?body=q", b"[1,2]", "application/json")


def test_headers_the_model_may_not_set_are_left_out_with_a_note() -> None:
    names = ["Accept", "content-type", "Authorization", "Host", "Cookie", "Content-Length", "Connection", "X-Ok"]
    made = plan(parameters=[Parameter(name, "header", {"type": "string"}) for name in names])
    assert list(made.input_schema["properties"]) == ["X-Ok"]
    assert len(made.notes) == 7
    assert "ignored, as the OpenAPI spec says" in made.notes[0]
    assert "'Host' left out" in made.notes[3]


def test_parameters_the_configuration_fills_are_left_out() -> None:
    made = plan(
        parameters=[
            Parameter("api_key", "query", {"type": "string"}, required=True),
            Parameter("X-API-Key", "header", {"type": "string"}, required=True),
            Parameter("q", "query", {"type": "string"}),
        ],
        configured=[("query", "api_key"), ("header", "x-api-key")],
    )
    assert list(made.input_schema["properties"]) == ["q"]
    assert "required" not in made.input_schema
    assert made.notes == [
        "query parameter 'api_key' left out: the configuration fills it",
        "header parameter 'X-API-Key' left out: the configuration fills it",
    ]


def test_the_input_schema_keeps_descriptions_deprecation_and_path_requirement() -> None:
    made = plan(
        "/p/{id}",
        [
            Parameter("id", "path", {"$ref": "#/$defs/Id"}, required=False, description="The id."),
            Parameter("old", "query", {"type": "string"}, deprecated=True),
        ],
        defs={"Id": {"type": "string", "pattern": "^[a-z]+$"}, "Unused": {"type": "integer"}},
    )
    assert made.input_schema == {
        "type": "object",
        "properties": {
            "id": {"$ref": "#/$defs/Id", "description": "The id."},
            "old": {"type": "string", "deprecated": True},
        },
        "required": ["id"],
        "additionalProperties": False,
        "$defs": {"Id": {"type": "string", "pattern": "^[a-z]+$"}},
    }


def test_unknown_and_missing_arguments_are_said() -> None:
    made = plan("/p/{id}", [Parameter("id", "path", {"type": "string"})])
    with pytest.raises(ToolError, match=r"Unknown argument\(s\) 'ID'; this tool takes: id"):
        made.request({"ID": "x"})
    with pytest.raises(ToolError, match=r"Missing required argument\(s\): 'id'"):
        made.request({})


# --- what cannot be served -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "parameters", "body", "defs", "message"),
    [
        ("/p/{id}", [], None, {}, r"has \{id\}, but no path parameter"),
        ("/p", [Parameter("x", "query", {}, style="matrix")], None, {}, "has style 'matrix'"),
        ("/p", [Parameter("x", "body", {})], None, {}, "not path, query, header or cookie"),  # type: ignore[arg-type]
        ("/p/../q", [], None, {}, r"'\.' or '\.\.' segment"),
        ("/p", [Parameter("x", "query", {"$ref": "#/$defs/Gone"})], None, {}, "#/\\$defs/Gone"),
        ("/p", [], Body("multipart/form-data", {"type": "array"}), {}, "must be an object"),
        ("/p", [], Body("application/x-www-form-urlencoded", {"type": "string"}), {}, "must be an object"),
        ("/p", [], Body("application/xml", {"type": "object", "properties": {"a": {}}}), {}, "does not write XML"),
    ],
)
def test_what_cannot_be_served_is_a_value_error_naming_the_operation(
    path: str, parameters: list[Parameter], body: Body | None, defs: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message) as raised:
        RequestPlan.build("GET", path, parameters, body, defs, where=WHERE)
    assert str(raised.value).startswith(WHERE)


def test_a_path_parameter_missing_from_the_template_is_left_out() -> None:
    made = plan("/p", [Parameter("id", "path", {"type": "string"})])
    assert made.input_schema["properties"] == {}
    assert made.notes == ["path parameter 'id' left out: the path '/p' has no {id}"]


def test_a_parameter_declared_twice_keeps_the_last_declaration() -> None:
    made = plan(parameters=[Parameter("q", "query", {"type": "string"}), Parameter("q", "query", {"type": "integer"})])
    assert made.input_schema["properties"] == {"q": {"type": "integer"}}
    assert made.notes == ["query parameter 'q' is declared twice: the last declaration is used"]


# --- bodies ----------------------------------------------------------------------------------------

PET = {
    "type": "object",
    "properties": {
        "id": {"type": "integer", "readOnly": True},
        "name": {"type": "string"},
        "tag": {"$ref": "#/$defs/Tag"},
    },
    "required": ["id", "name"],
}
DEFS: dict[str, dict[str, Any]] = {
    "Pet": PET,
    "Tag": {"type": "object", "properties": {"label": {"type": "string"}, "parent": {"$ref": "#/$defs/Tag"}}},
    "Other": {"type": "string"},
}


def test_an_object_json_body_is_flattened_through_its_root_ref() -> None:
    made = plan(body=Body("application/json", {"$ref": "#/$defs/Pet"}, required=True), defs=DEFS, method="POST")
    assert made.input_schema == {
        "type": "object",
        "properties": {"name": {"type": "string"}, "tag": {"$ref": "#/$defs/Tag"}},
        "required": ["name"],
        "additionalProperties": False,
        "$defs": {"Tag": DEFS["Tag"]},  # reachable only, recursion included; Pet itself is not referenced
    }
    assert made.notes == ["body property 'id' left out: it is read-only"]
    assert made.arguments == {"name": ("body", "name"), "tag": ("body", "tag")}
    request = call(made, {"name": "Rex", "tag": {"label": "dog", "parent": {"label": "animal"}}})
    assert request.content_type == "application/json"
    assert json.loads(request.content or b"") == {"name": "Rex", "tag": {"label": "dog", "parent": {"label": "animal"}}}


def test_shared_definitions_give_the_same_plans_as_a_plain_mapping() -> None:
    defs = {
        **DEFS,
        "Owner": {"type": "object", "properties": {"pets": {"type": "array", "items": {"$ref": "#/$defs/Pet"}}}},
        "Odd/Name": {"type": "integer"},
    }
    shared = Definitions(defs)
    assert dict(shared) == defs and len(shared) == len(defs)
    bodies = [
        Body("application/json", {"$ref": "#/$defs/Owner"}, required=True),
        Body("application/json", {"type": "array", "items": {"$ref": "#/$defs/Tag"}}),
        Body("application/json", {"$ref": "#/$defs/Odd~1Name"}),
    ]
    for body in bodies:
        alone = plan(body=body, defs=defs, method="POST")
        together = plan(body=body, defs=shared, method="POST")
        assert alone.input_schema == together.input_schema
    # Owner is flattened away; what its property reaches stays, in the document's order
    assert list(plan(body=bodies[0], defs=shared).input_schema["$defs"]) == ["Pet", "Tag"]
    assert shared.references("Owner") == ("Pet",)
    assert shared.references("Tag") == ("Tag",)
    with pytest.raises(ValueError, match=r"#/\$defs/Gone, which the document does not define"):
        RequestPlan.build("POST", "/", [], Body("application/json", {"$ref": "#/$defs/Gone"}), shared, where=WHERE)


def test_an_optional_flattened_body_requires_nothing_and_is_omitted_when_empty() -> None:
    made = plan(body=Body("application/json", {"$ref": "#/$defs/Pet"}), defs=DEFS, method="PATCH")
    assert "required" not in made.input_schema
    assert call(made, {}).content is None
    assert call(made, {}).content_type is None
    assert json.loads(call(made, {"name": "Rex"}).content or b"") == {"name": "Rex"}


def test_a_required_flattened_body_with_no_arguments_is_an_empty_object() -> None:
    schema = {"type": "object", "properties": {"note": {"type": "string"}}}
    made = plan(body=Body("application/json", schema, required=True), method="POST")
    assert call(made, {}).content == b"{}"


def test_a_vendor_json_media_type_is_json() -> None:
    schema = {"type": "object", "properties": {"op": {"type": "string"}}}
    made = plan(body=Body("application/merge-patch+json", schema, required=True), method="PATCH")
    request = call(made, {"op": "x"})
    assert (request.content, request.content_type) == (b'{"op":"x"}', "application/merge-patch+json")


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "array", "items": {"type": "string"}},
        {"type": "string"},
        {"oneOf": [{"$ref": "#/$defs/Pet"}, {"type": "string"}]},
        {"allOf": [{"$ref": "#/$defs/Pet"}]},
        {"type": "object", "additionalProperties": {"type": "integer"}},
        {"type": "object", "properties": {"a": {}}, "additionalProperties": {"type": "integer"}},
        {"type": ["object", "null"], "properties": {"a": {}}},
        {"type": "object", "properties": {}},
        {"$ref": "#/$defs/Pet", "minProperties": 2},
    ],
)
def test_any_other_json_body_is_one_body_argument(schema: dict[str, Any]) -> None:
    made = plan(body=Body("application/json", schema, required=True, description="The payload."), defs=DEFS)
    assert list(made.input_schema["properties"]) == ["body"]
    assert made.input_schema["properties"]["body"] == {**schema, "description": "The payload."}
    assert made.arguments == {"body": ("body", "")}
    assert made.input_schema["required"] == ["body"]


def test_a_body_argument_sends_its_value_as_json() -> None:
    made = plan(body=Body("application/json", {"type": "array", "items": {}}), method="POST")
    assert call(made, {"body": [1, "two", None]}).content == b'[1,"two",null]'
    assert call(made, {"body": []}).content == b"[]"
    assert call(made, {}).content is None


def test_a_text_body_is_sent_as_it_is() -> None:
    made = plan(body=Body("text/plain; charset=utf-8", {"type": "string"}, required=True), method="POST")
    request = call(made, {"body": "héllo\n"})
    assert (request.content, request.content_type) == ("héllo\n".encode(), "text/plain; charset=utf-8")


def test_a_binary_body_comes_as_base64_and_goes_as_bytes() -> None:
    made = plan(body=Body("image/png", {}, required=True, description="The picture."), method="PUT")
    assert made.input_schema["properties"]["body"] == {
        "type": "string",
        "contentEncoding": "base64",
        "contentMediaType": "image/png",
        "description": "The picture. (The image/png content, base64-encoded.)",
    }
    data = bytes(range(256))
    request = call(made, {"body": base64.b64encode(data).decode()})
    assert (request.content, request.content_type) == (data, "image/png")
    # unpadded, wrapped, or URL-safe base64 is read too
    loose = base64.urlsafe_b64encode(data).decode().rstrip("=")
    assert made.request({"body": loose[:40] + "\n" + loose[40:]}).content == data
    with pytest.raises(ToolError, match="not valid base64"):
        made.request({"body": "not base64!"})


def test_a_body_schema_with_content_encoding_is_sent_as_the_encoded_text() -> None:
    schema = {"type": "string", "contentMediaType": "image/png", "contentEncoding": "base64"}
    made = plan(body=Body("image/png", schema, required=True), method="PUT")
    assert made.input_schema["properties"]["body"] == schema
    assert call(made, {"body": "aGVsbG8="}).content == b"aGVsbG8="


def test_a_wildcard_body_media_type_is_sent_as_octet_stream() -> None:
    made = plan(body=Body("*/*", {}, required=True), method="POST")
    request = call(made, {"body": base64.b64encode(b"\x00\x01").decode()})
    assert (request.content, request.content_type) == (b"\x00\x01", "application/octet-stream")


def test_a_form_body_follows_the_encoding_object() -> None:
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "ids": {"type": "array", "items": {"type": "integer"}},
            "filter": {"type": "object"},
            "meta": {"type": "object"},
            "point": {"type": "object"},
        },
        "required": ["name"],
    }
    encoding: dict[str, dict[str, Any]] = {
        "ids": {"style": "form", "explode": False},
        "filter": {"style": "deepObject", "explode": True},
        "meta": {"contentType": "application/json"},
    }
    made = plan(body=Body("application/x-www-form-urlencoded", schema, required=True, encoding=encoding), method="POST")
    assert list(made.input_schema["properties"]) == ["name", "tags", "ids", "filter", "meta", "point"]
    assert made.input_schema["required"] == ["name"]
    arguments = {
        "name": "a b&c=d",
        "tags": ["x", "y"],
        "ids": [1, 2],
        "filter": {"size": 3},
        "meta": {"k": [1]},
        "point": {"x": 1, "y": 2},
    }
    request = call(made, arguments)
    assert request.content_type == "application/x-www-form-urlencoded"
    assert request.content == (
        b"name=a%20b%26c%3Dd&tags=x&tags=y&ids=1,2&filter%5Bsize%5D=3&meta=%7B%22k%22%3A%5B1%5D%7D&x=1&y=2"
    )
    # the standard library's form parser reads it back
    assert parse_qsl((request.content or b"").decode()) == [
        ("name", "a b&c=d"),
        ("tags", "x"),
        ("tags", "y"),
        ("ids", "1,2"),
        ("filter[size]", "3"),
        ("meta", '{"k":[1]}'),
        ("x", "1"),
        ("y", "2"),
    ]


def _multipart_parts(request: HttpRequest) -> list[EmailMessage]:
    assert request.content_type is not None and request.content is not None
    head = f"Content-Type: {request.content_type}\r\nMIME-Version: 1.0\r\n\r\n".encode()
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + request.content)
    assert message.is_multipart()
    assert not message.defects
    return [part for part in message.iter_parts() if isinstance(part, EmailMessage)]


UPLOAD: dict[str, Any] = {
    "type": "object",
    "properties": {
        "title": {"type": "string"},
        "count": {"type": "integer"},
        "meta": {"type": "object", "properties": {"a": {}}},
        "file": {"type": "string", "format": "binary", "description": "The document."},
        "photos": {"type": "array", "items": {}},
        "notes": {"type": "array", "items": {"type": "string"}},
        "signature": {"type": "string", "contentEncoding": "base64"},
        "xml": {"type": "string"},
    },
    "required": ["file"],
}


def test_a_multipart_body_has_a_part_per_field_and_binary_fields_come_as_base64() -> None:
    encoding = {"file": {"contentType": "application/pdf"}, "xml": {"contentType": "application/xml, text/xml"}}
    made = plan(body=Body("multipart/form-data", UPLOAD, required=True, encoding=encoding), method="POST")
    properties = made.input_schema["properties"]
    assert properties["file"] == {
        "type": "string",
        "contentEncoding": "base64",
        "contentMediaType": "application/pdf",
        "description": "The document. (The file's bytes, base64-encoded.)",
    }
    assert properties["photos"] == {
        "type": "array",
        "items": {"type": "string", "contentEncoding": "base64"},
        "description": "One part per item: each the file's bytes, base64-encoded.",
    }
    assert properties["signature"] == UPLOAD["properties"]["signature"]  # the API wants the base64 text
    pdf, photo1, photo2 = b"%PDF-1.7\r\n--boundary?\r\n\x00\xff", b"\x89PNG\r\n", b"GIF89a"
    arguments = {
        "title": "Bericht über 2026",
        "count": 3,
        "meta": {"a": [1, "x"]},
        "file": base64.b64encode(pdf).decode(),
        "photos": [base64.b64encode(photo1).decode(), base64.b64encode(photo2).decode()],
        "notes": ["one", "two"],
        "signature": "c2ln",
        "xml": "<a/>",
    }
    request = call(made, arguments)
    assert request.content_type is not None and request.content_type.startswith("multipart/form-data; boundary=")
    parts = _multipart_parts(request)
    read = [
        (part.get_param("name", header="content-disposition"), part.get_filename(), part.get_content_type())
        for part in parts
    ]
    assert read == [
        ("title", None, "text/plain"),
        ("count", None, "text/plain"),
        ("meta", None, "application/json"),
        ("file", "file", "application/pdf"),
        ("photos", "photos", "application/octet-stream"),
        ("photos", "photos", "application/octet-stream"),
        ("notes", None, "text/plain"),
        ("notes", None, "text/plain"),
        ("signature", None, "text/plain"),
        ("xml", None, "application/xml"),
    ]
    payloads = [part.get_payload(decode=True) for part in parts]
    assert payloads == [
        "Bericht über 2026".encode(),
        b"3",
        b'{"a":[1,"x"]}',
        pdf,
        photo1,
        photo2,
        b"one",
        b"two",
        b"c2ln",
        b"<a/>",
    ]


def test_a_multipart_boundary_never_occurs_in_a_part() -> None:
    schema = {"type": "object", "properties": {"text": {"type": "string"}}}
    made = plan(body=Body("multipart/form-data", schema, required=True), method="POST")
    first = made.request({"text": "x"})
    boundary = (first.content_type or "").split("boundary=", 1)[1]
    hostile = made.request({"text": f"--{boundary}\r\n"})  # another call, another boundary
    assert (hostile.content_type or "").split("boundary=", 1)[1] != boundary
    parts = _multipart_parts(hostile)
    assert [part.get_payload(decode=True) for part in parts] == [f"--{boundary}\r\n".encode()]


def test_a_multipart_field_name_cannot_break_out_of_its_header() -> None:
    schema = {"type": "object", "additionalProperties": {"type": "string"}}
    made = plan(body=Body("multipart/form-data", schema, required=True), method="POST")
    request = call(made, {"body": {'a"; filename="x\r\nX-Evil: 1': "v"}})
    assert b"\r\nX-Evil" not in (request.content or b"")
    (part,) = _multipart_parts(request)
    assert part.get_filename() is None
    assert part["X-Evil"] is None


def test_a_multipart_body_that_is_not_flattened_still_takes_its_files_as_base64() -> None:
    schema = {
        "type": "object",
        "properties": {"file": {"type": "string", "format": "binary"}},
        "additionalProperties": {"type": ["string", "null"]},
    }
    made = plan(body=Body("multipart/form-data", schema, required=True), method="POST")
    assert made.input_schema["properties"]["body"] == {
        "type": "object",
        "properties": {
            "file": {"type": "string", "contentEncoding": "base64", "description": "The file's bytes, base64-encoded."}
        },
        "additionalProperties": {"type": ["string", "null"]},
    }
    request = call(made, {"body": {"file": base64.b64encode(b"\x00").decode(), "extra": "x", "gone": None}})
    parts = _multipart_parts(request)
    assert [
        (part.get_param("name", header="content-disposition"), part.get_payload(decode=True)) for part in parts
    ] == [
        ("file", b"\x00"),
        ("extra", b"x"),
    ]
    with pytest.raises(ToolError, match="must be an object"):
        made.request({"body": ["not", "an", "object"]})


def test_a_part_with_a_non_text_content_media_type_is_binary_and_base64_must_be_text() -> None:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "image": {"type": "string", "contentMediaType": "image/png"},  # OpenAPI 3.1's spelling of binary
            "page": {"type": "string", "contentMediaType": "text/html"},  # text: sent as it is
        },
    }
    made = plan(body=Body("multipart/form-data", schema, required=True), method="POST")
    assert made.input_schema["properties"]["image"]["contentEncoding"] == "base64"
    assert made.input_schema["properties"]["page"] == schema["properties"]["page"]
    parts = _multipart_parts(call(made, {"image": base64.b64encode(b"\x89PNG").decode(), "page": "<p>"}))
    assert [(part.get_content_type(), part.get_payload(decode=True)) for part in parts] == [
        ("image/png", b"\x89PNG"),
        ("text/plain", b"<p>"),
    ]
    with pytest.raises(ToolError, match="takes the content as a base64 string"):
        made.request({"image": 12})


def test_a_cookie_given_by_content_and_an_empty_parameter_name() -> None:
    made = plan(parameters=[Parameter("prefs", "cookie", {}, media_type="application/json")])
    assert call(made, {"prefs": {"a": "b c"}}).cookie_header == "prefs=" + query_component('{"a":"b c"}')
    with pytest.raises(ValueError, match="empty name"):
        RequestPlan.build("GET", "/", [Parameter("", "query", {})], None, {}, where=WHERE)


def test_a_form_field_that_is_null_is_undefined() -> None:
    schema = {"type": "object", "properties": {"a": {"type": ["string", "null"]}, "b": {"type": "string"}}}
    made = plan(body=Body("application/x-www-form-urlencoded", schema), method="POST")
    assert call(made, {"a": None, "b": "x"}).content == b"a=&b=x"
    assert call(made, {}).content is None


def test_a_root_ref_chain_with_annotations_is_followed_to_a_plain_object() -> None:
    defs = {**DEFS, "Alias": {"$ref": "#/$defs/Pet", "description": "A pet, by another name."}, "a/b": PET}
    for schema in ({"$ref": "#/$defs/Alias"}, {"$ref": "#/$defs/a~1b", "title": "T"}):
        made = plan(body=Body("application/json", schema, required=True), defs=defs, method="POST")
        assert list(made.input_schema["properties"]) == ["name", "tag"]


def test_text_and_wildcard_text_bodies() -> None:
    made = plan(body=Body("text/*", {"type": "string"}, required=True), method="POST")
    assert call(made, {"body": "x"}).content_type == "text/plain"
    made = plan(body=Body("text/csv", {"type": "array"}), method="POST")
    assert call(made, {"body": [1, 2]}).content == b"[1,2]"  # a value that is not text: its JSON
    made = plan(body=Body("application/xml", {"type": "string"}, required=True), method="POST")
    request = call(made, {"body": "<a/>"})
    assert (request.content, request.content_type) == (b"<a/>", "application/xml")


def test_invalid_header_and_cookie_names_are_left_out() -> None:
    made = plan(parameters=[Parameter("Bad Name", "header", {}), Parameter("a;b", "cookie", {})])
    assert made.input_schema["properties"] == {}
    assert made.notes == [
        "header parameter 'Bad Name' left out: not a valid HTTP header name",
        "cookie parameter 'a;b' left out: not a valid cookie name",
    ]


def test_the_request_parts_for_httpx() -> None:
    made = plan(
        "/p/{id}",
        [Parameter("id", "path", {}), Parameter("q", "query", {}), Parameter("c", "cookie", {})],
        Body("application/json", {"type": "object", "properties": {"x": {}}}, required=True),
        method="post",
    )
    request = call(made, {"id": 1, "q": "a b", "c": "v", "x": 2})
    assert request.method == "POST"
    assert request.url == "/p/1?q=a%20b"
    assert request.header_items() == [("Content-Type", "application/json"), ("Cookie", "c=v")]


# --- the server reads what is sent: a real Starlette app through httpx -----------------------------


def _payload(part: Any) -> bytes:
    payload = part.get_payload(decode=True)
    assert isinstance(payload, bytes)
    return payload


async def _echo(request: Request) -> JSONResponse:
    """What the server's own request parsing reads: path, query, cookies, headers and the body."""
    body = await request.body()
    content_type = request.headers.get("content-type", "")
    read: Any = None
    if content_type.startswith("application/json"):
        read = await request.json()
    elif content_type.startswith("application/x-www-form-urlencoded"):
        read = parse_qsl(body.decode(), keep_blank_values=True)
    elif content_type.startswith("multipart/form-data"):
        head = f"Content-Type: {content_type}\r\n\r\n".encode()
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + body)
        read = [
            [
                part.get_param("name", header="content-disposition"),
                part.get_filename(),
                part.get_content_type(),
                base64.b64encode(_payload(part)).decode(),
            ]
            for part in message.iter_parts()
        ]
    return JSONResponse(
        {
            "path_params": request.path_params,
            "raw_path": request.scope["raw_path"].decode(),
            "query": list(request.query_params.multi_items()),
            "cookies": request.cookies,
            "headers": {name: request.headers.get(name) for name in ("x-request-id", "x-tags")},
            "body": read,
        }
    )


ECHO_APP = Starlette(
    routes=[
        # Starlette routes on the percent-decoded path, so a value holding an encoded "/" needs the
        # path convertor to reach its route; the raw path shows what went on the wire.
        Route("/api/items/{item_id:path}", _echo, methods=["GET", "POST"]),
        Route("/api/files/{name:path}/raw", _echo, methods=["GET"]),
        Route("/api/upload", _echo, methods=["POST"]),
    ]
)


async def _send(made: RequestPlan, arguments: Mapping[str, Any]) -> dict[str, Any]:
    request = call(made, arguments)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=ECHO_APP), base_url="http://api.test/api") as client:
        sent = client.build_request(
            request.method, request.url, headers=request.header_items(), content=request.content
        )
        response = await client.send(sent)
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


async def test_round_trip_path_query_deep_object_cookies_and_headers() -> None:
    made = plan(
        "/items/{item_id}",
        [
            Parameter("item_id", "path", {"type": "string"}),
            Parameter("tag", "query", {"type": "array", "items": {"type": "string"}}),
            Parameter("ids", "query", {"type": "array"}, explode=False),
            Parameter("filter", "query", {"type": "object"}, style="deepObject", explode=True),
            Parameter("page[size]", "query", {"type": "integer"}),
            Parameter("X-Request-Id", "header", {"type": "string"}),
            Parameter("X-Tags", "header", {"type": "array"}),
            Parameter("session", "cookie", {"type": "string"}),
            Parameter("theme", "cookie", {"type": "string"}),
        ],
    )
    answer = await _send(
        made,
        {
            "item_id": "a b/c?d#e",
            "tag": ["x&y", "z=1", "é"],
            "ids": [1, 2, 3],
            "filter": {"name": "rex", "age": 3},
            "page_size": 20,
            "X-Request-Id": "req-1",
            "X-Tags": ["a", "b"],
            "session": "s 1;2",
            "theme": "dark",
        },
    )
    assert answer["path_params"] == {"item_id": "a b/c?d#e"}
    assert answer["query"] == [
        ["tag", "x&y"],
        ["tag", "z=1"],
        ["tag", "é"],
        ["ids", "1,2,3"],
        ["filter[name]", "rex"],
        ["filter[age]", "3"],
        ["page[size]", "20"],
    ]
    assert answer["headers"] == {"x-request-id": "req-1", "x-tags": "a,b"}
    assert {name: unquote(value) for name, value in answer["cookies"].items()} == {"session": "s 1;2", "theme": "dark"}


async def test_round_trip_a_hostile_path_value_stays_on_its_route() -> None:
    made = plan("/files/{name}/raw", [Parameter("name", "path", {"type": "string"})])
    answer = await _send(made, {"name": "../../items/1"})
    assert answer["raw_path"] == "/api/files/..%2F..%2Fitems%2F1/raw"
    assert answer["path_params"] == {"name": "../../items/1"}


async def test_round_trip_json_body_flattened_beside_a_clashing_path_parameter() -> None:
    schema = {"type": "object", "properties": {"item_id": {"type": "integer"}, "name": {"type": "string"}}}
    made = plan(
        "/items/{item_id}",
        [Parameter("item_id", "path", {"type": "string"})],
        Body("application/json", schema, required=True),
        method="POST",
    )
    answer = await _send(made, {"item_id": "7", "item_id_body": 8, "name": "Rex"})
    assert answer["path_params"] == {"item_id": "7"}
    assert answer["body"] == {"item_id": 8, "name": "Rex"}


async def test_round_trip_form_body() -> None:
    schema = {"type": "object", "properties": {"name": {"type": "string"}, "tags": {"type": "array"}}}
    made = plan("/upload", body=Body("application/x-www-form-urlencoded", schema, required=True), method="POST")
    answer = await _send(made, {"name": "a+b c", "tags": ["1", "2"]})
    assert answer["body"] == [["name", "a+b c"], ["tags", "1"], ["tags", "2"]]


async def test_round_trip_multipart_body() -> None:
    made = plan("/upload", body=Body("multipart/form-data", UPLOAD, required=True), method="POST")
    data = b"\x00\x01binary\r\n--"
    answer = await _send(made, {"title": "t", "file": base64.b64encode(data).decode(), "meta": {"a": 1}})
    assert answer["body"] == [  # in the schema's order
        ["title", None, "text/plain", base64.b64encode(b"t").decode()],
        ["meta", None, "application/json", base64.b64encode(b'{"a":1}').decode()],
        ["file", "file", "application/octet-stream", base64.b64encode(data).decode()],
    ]
