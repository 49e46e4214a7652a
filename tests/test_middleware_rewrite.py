"""Arguments an ``on_request`` middleware rewrites are validated like the client's own, over the real wire.

``toolkit run tests/support/rewrite_app.py`` over stdio (a subprocess) and over HTTP, in a legacy
session (2025-11-25) and stateless (2026-07-28): the middleware replaces ``params.arguments``
before the tool call is dispatched, with a valid value (the tool receives it, converted as its
type hint says) or an invalid one (the client gets the input validation error as an ``isError``
result, and the tool does not run). ``on_call_tool`` rewrites are tested in test_middleware.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.http_support import LEGACY, MODERN, Legacy, Modern, cli_server, connect
from tests.support.stdio import StdioClient

pytestmark = pytest.mark.timeout(60)

APP = Path(__file__).parent / "support" / "rewrite_app.py"
VERSIONS = [LEGACY, MODERN]


def assert_received_the_rewrite(result: dict[str, Any]) -> None:
    assert not result.get("isError"), result
    assert result["structuredContent"] == {"n": 42, "type": "int"}


def assert_validation_error(result: dict[str, Any]) -> None:
    assert result.get("isError") is True, f"the tool ran with arguments its schema forbids: {result}"
    [block] = result["content"]
    text = block["text"]
    assert text.startswith("Invalid arguments for tool 'describe': "), text
    assert "arguments/n" in text and "forty-two" in text, "the error is about the rewritten value"
    assert "structuredContent" not in result


@pytest.mark.parametrize("version", VERSIONS)
def test_arguments_rewritten_by_on_request_are_validated_over_stdio(version: str) -> None:
    with StdioClient.toolkit(APP) as client:
        if version == MODERN:
            client.use_modern()
        else:
            client.initialize(version)
        assert_received_the_rewrite(client.call_tool("describe", {"rewrite": "valid"}))
        assert_validation_error(client.call_tool("describe", {"rewrite": "invalid"}))
        client.assert_all_valid(version)
    assert not client.invalid_lines


@pytest.mark.parametrize("version", VERSIONS)
async def test_arguments_rewritten_by_on_request_are_validated_over_http(version: str) -> None:
    with cli_server(APP) as running:
        async with connect(running.url) as http:
            client: Modern | Legacy = Modern(http) if version == MODERN else await Legacy(http, version).open()
            valid = await client.call_tool("describe", {"rewrite": "valid"})
            assert valid.status == 200, valid.body_text
            assert_received_the_rewrite(valid.result)
            invalid = await client.call_tool("describe", {"rewrite": "invalid"})
            assert invalid.status == 200, invalid.body_text
            assert_validation_error(invalid.result)
