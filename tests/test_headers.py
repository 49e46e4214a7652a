"""The routing-header codec both sides of the wire use (``toolkit._headers``).

The spec's own encoding table, a round trip for any string, and the property that matters for a
client: the headers ``for_request`` builds pass the HTTP transport's check for any method, name
and tool parameters, and a header that says something else does not.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolkit._headers import decode_value, encode_value, for_request, param_text
from toolkit._jsonrpc import Request
from toolkit._methods import METHODS, named_field
from toolkit._transports.http.security import header_problem

MODERN = "2026-07-28"


@pytest.mark.parametrize(
    ("value", "encoded"),
    [  # 2026-07-28 streamable-http, "Value Encoding": the spec's examples
        ("us-west1", "us-west1"),
        ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
        (" padded ", "=?base64?IHBhZGRlZCA=?="),
        ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
        ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
    ],
)
def test_the_specs_encoding_examples(value: str, encoded: str) -> None:
    assert encode_value(value) == encoded
    assert decode_value(encoded) == value


@given(st.text())
def test_any_string_round_trips(value: str) -> None:
    encoded = encode_value(value)
    assert encoded.isascii() and "\n" not in encoded and "\r" not in encoded
    assert decode_value(encoded) == value


@pytest.mark.parametrize("bad", ["=?base64?not base64!?=", "=?base64?//8=?=", "caf\u00e9", "a\x00b", "line\nbreak"])
def test_invalid_header_values_decode_to_none(bad: str) -> None:
    assert decode_value(bad) is None


def test_param_text_follows_the_type_conversion_rule() -> None:
    assert [param_text(v) for v in ("x", 42, -7, True, False, None)] == ["x", "42", "-7", "true", "false", None]


def _headers_as_received(headers: dict[str, str]) -> dict[str, str]:
    return {name.lower(): value for name, value in headers.items()}


@given(
    method=st.sampled_from(sorted(name for name, method in METHODS.items() if "modern" in method.eras)),
    name=st.text(min_size=1),
    region=st.one_of(st.none(), st.text(), st.integers(), st.booleans()),
)
def test_what_a_client_sends_is_what_the_server_checks(method: str, name: str, region: Any) -> None:
    params: dict[str, Any] = {"_meta": {"io.modelcontextprotocol/protocolVersion": MODERN}}
    field = named_field(method)
    if field is not None:
        params[field] = name
    params["arguments"] = {"where": {"region": region}}
    paths = {"Region": ("where", "region")}
    request = Request(1, method, params)
    headers = _headers_as_received(for_request(method, params, MODERN, paths))
    assert header_problem(request, headers, lambda tool: paths) is None
    if field is not None:  # a header that names something else is refused
        wrong = {**headers, "mcp-name": encode_value(name + "x")}
        assert header_problem(request, wrong, lambda tool: paths) is not None
    if method == "tools/call" and region is not None:
        wrong = {**headers, "mcp-param-region": encode_value(str(param_text(region)) + "x")}
        assert header_problem(request, wrong, lambda tool: paths) is not None
