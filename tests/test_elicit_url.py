"""URL-mode elicitation (2025-11-25, 2026-07-28 client/elicitation): ``ctx.elicit_url``,
``ctx.elicitation_complete``, ``URLElicitationRequired`` (-32042), the client's ``elicitation_url``
handler; in process in both eras, then on the wire through ``toolkit run`` with ``toolkit.Client``."""

from __future__ import annotations

import re
import sys
from typing import Any

import httpx
import pytest
from tests.http_support import cli_server
from tests.support.processes import REPO
from tests.wire import assert_valid, validator

from toolkit import Context, Server, URLElicitationRequired
from toolkit._client import questions
from toolkit.client import Client as RemoteClient
from toolkit.testing import Client

pytestmark = pytest.mark.timeout(120)

MODERN, LEGACY = "2026-07-28", "2025-11-25"
ERAS = (MODERN, LEGACY)
URL_CAPS = {"elicitation": {"url": {}}}
CONNECT = "https://connect.example.com/github?state=s1"
EXAMPLE = REPO / "examples" / "url_elicitation.py"


def make_server() -> Server:
    server = Server("url-elicitation", mask_errors=False)

    @server.tool
    async def connect(ctx: Context) -> str:
        answer = await ctx.elicit_url(CONNECT, "Connect GitHub", elicitation_id="e-1")
        if answer.accepted:
            await ctx.elicitation_complete("e-1")
        return f"{answer.action} {answer.data}"

    @server.tool
    async def unsafe(ctx: Context, url: str) -> str:
        return (await ctx.elicit_url(url, "go")).action

    @server.tool
    def repos() -> list[str]:
        raise URLElicitationRequired(CONNECT, "Connect GitHub first", elicitation_id="e-2").also(
            "http://127.0.0.1:9/pay", "And pay", elicitation_id="e-3"
        )

    @server.tool
    def can(ctx: Context) -> bool:
        return ctx.can_elicit_url

    return server


def answering(action: str, seen: list[dict[str, Any]]) -> Any:
    def handler(params: dict[str, Any]) -> dict[str, Any]:
        seen.append(params)
        return {"action": action}

    return handler


@pytest.mark.parametrize("version", ERAS)
@pytest.mark.parametrize("action", ["accept", "decline", "cancel"])
async def test_elicit_url_answers_in_both_eras(version: str, action: str) -> None:
    seen: list[dict[str, Any]] = []
    async with Client(
        make_server(), protocol_version=version, capabilities=URL_CAPS, elicitation=answering(action, seen)
    ) as client:
        result = await client.call_tool("connect")
        assert result["content"][0]["text"] == f"{action} None"
        asked = {"mode": "url", "message": "Connect GitHub", "url": CONNECT}
        if version == LEGACY:
            asked["elicitationId"] = "e-1"  # 2026-07-28 has no elicitationId: its schema lists none
        assert seen == [asked]
        assert validator(version, "ElicitRequestURLParams").is_valid(seen[0])
        for message in client.messages:
            assert_valid(message, version)
        completions = [m for m in client.messages if m.get("method") == "notifications/elicitation/complete"]
        if version == LEGACY and action == "accept":
            assert completions == [
                {"jsonrpc": "2.0", "method": "notifications/elicitation/complete", "params": {"elicitationId": "e-1"}}
            ]
            assert validator(version, "ElicitationCompleteNotification").is_valid(completions[0])
        else:  # declined, or 2026-07-28: no such notification (the client learns it on its retry)
            assert completions == []


async def test_modern_round_carries_the_url_question() -> None:
    async with Client(make_server(), capabilities=URL_CAPS, elicitation=answering("accept", [])) as client:
        first = await client.call_tool("connect", follow_input=False)
        assert first["resultType"] == "input_required"
        assert list(first["inputRequests"].values()) == [
            {"method": "elicitation/create", "params": {"mode": "url", "message": "Connect GitHub", "url": CONNECT}}
        ]


@pytest.mark.parametrize("version", ERAS)
async def test_form_only_client_is_refused_naming_the_tool(version: str) -> None:
    seen: list[dict[str, Any]] = []
    for caps in ({"elicitation": {}}, {"elicitation": {"form": {}}}):
        async with Client(
            make_server(), protocol_version=version, capabilities=caps, elicitation=answering("accept", seen)
        ) as client:
            assert (await client.call_tool("can"))["content"][0]["text"] == "false"
            if version == MODERN:
                response = await client.request("tools/call", {"name": "connect"})
                assert response["error"]["code"] == -32021
                assert "tools/call 'connect' needs URL-mode elicitation" in response["error"]["message"]
                assert response["error"]["data"] == {"requiredCapabilities": {"elicitation": {"url": {}}}}
                assert_valid(response, MODERN)
            else:
                result = await client.call_tool("connect")
                assert result["isError"] is True
                text = result["content"][0]["text"]
                assert "tools/call 'connect' needs URL-mode elicitation" in text
                assert "did not declare at initialize (elicitation.url)" in text
    assert seen == []  # nothing was sent


@pytest.mark.parametrize("version", ["2025-06-18", "2024-11-05"])
async def test_versions_before_url_mode_refuse_and_send_nothing(version: str) -> None:
    seen: list[dict[str, Any]] = []
    async with Client(
        make_server(), protocol_version=version, capabilities=URL_CAPS, elicitation=answering("accept", seen)
    ) as client:
        assert (await client.call_tool("can"))["content"][0]["text"] == "false"
        result = await client.call_tool("connect")
        assert result["isError"] is True
        assert f"which protocol {version} does not have (2025-11-25 and later do)" in result["content"][0]["text"]
    assert seen == []


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("http://connect.example.com/x", "uses http"),
        ("https://alice:pw@connect.example.com/x", "carries credentials"),
        ("https://connect.example.com/x?access_token=abc", "carries access_token in its query"),
        ("javascript:alert(1)", "is not an absolute http(s) URL"),
        ("https://connect.example.com/a b", "no spaces"),
    ],
)
async def test_unsafe_urls_are_refused_before_anything_is_sent(url: str, said: str) -> None:
    seen: list[dict[str, Any]] = []
    async with Client(
        make_server(), protocol_version=LEGACY, capabilities=URL_CAPS, elicitation=answering("accept", seen)
    ) as client:
        result = await client.call_tool("unsafe", {"url": url})
        assert result["isError"] is True
        assert "ctx.elicit_url in tools/call 'unsafe'" in result["content"][0]["text"]
        assert said in result["content"][0]["text"]
    assert seen == []
    with pytest.raises(ValueError, match=re.escape(said)):
        URLElicitationRequired(url, "go")


@pytest.mark.parametrize("url", ["http://localhost:8000/connect", "http://127.0.0.1/c", "https://a.example/?id=1"])
async def test_development_and_https_urls_are_accepted(url: str) -> None:
    async with Client(
        make_server(), protocol_version=LEGACY, capabilities=URL_CAPS, elicitation=answering("accept", [])
    ) as client:
        assert (await client.call_tool("unsafe", {"url": url}))["content"][0]["text"] == "accept"


async def test_url_elicitation_required_is_32042_with_the_urls() -> None:
    async with Client(make_server(), protocol_version=LEGACY, capabilities=URL_CAPS) as client:
        response = await client.request("tools/call", {"name": "repos"})
        assert_valid(response, LEGACY)
        assert validator(LEGACY, "URLElicitationRequiredError").is_valid(
            {key: value for key, value in response.items() if not key.startswith("_")}
        )
        assert response["error"]["code"] == -32042
        assert response["error"]["data"] == {
            "elicitations": [
                {"mode": "url", "elicitationId": "e-2", "url": CONNECT, "message": "Connect GitHub first"},
                {"mode": "url", "elicitationId": "e-3", "url": "http://127.0.0.1:9/pay", "message": "And pay"},
            ]
        }


async def test_url_elicitation_required_is_an_input_round_in_2026() -> None:
    async with Client(make_server(), capabilities=URL_CAPS) as client:
        response = await client.request("tools/call", {"name": "repos"})
        assert response["result"]["resultType"] == "input_required"
        assert set(response["result"]["inputRequests"]) == {"e-2", "e-3"}


# --- toolkit.Client: the handler, the capability, -32042 -----------------------------------------------


@pytest.mark.parametrize("version", ERAS)
async def test_client_url_handler_in_both_eras(version: str) -> None:
    seen: list[dict[str, Any]] = []

    def open_url(params: dict[str, Any]) -> str:
        seen.append(params)
        return "accept"

    notified: list[dict[str, Any]] = []
    async with RemoteClient(
        make_server(), protocol_version=version, elicitation_url=open_url, on_notification=notified.append
    ) as client:
        assert client.session.capabilities == {"elicitation": {"url": {}}}
        assert (await client.call_tool("can")).data is True
        assert (await client.call_tool("connect")).text == "accept None"
        assert [params["url"] for params in seen] == [CONNECT]
        assert ("elicitationId" in seen[0]) is (version == LEGACY)
        if version == LEGACY:
            assert {"elicitationId": "e-1"} in [
                m["params"] for m in notified if m["method"] == "notifications/elicitation/complete"
            ]


async def test_client_declares_form_and_url_with_both_handlers() -> None:
    both = RemoteClient(make_server(), elicitation=lambda p: {"action": "decline"}, elicitation_url=lambda p: "cancel")
    async with both as client:
        assert client.session.capabilities == {"elicitation": {"form": {}, "url": {}}}
        assert (await client.call_tool("connect")).text == "cancel None"
    async with RemoteClient(make_server(), elicitation=lambda p: {"action": "decline"}) as client:
        assert client.session.capabilities == {"elicitation": {}}  # form only, as before
        assert (await client.call_tool("can")).data is False


async def test_client_raises_url_elicitation_required_with_the_urls() -> None:
    async with RemoteClient(make_server(), protocol_version=LEGACY, elicitation_url=lambda p: "accept") as client:
        with pytest.raises(URLElicitationRequired) as raised:
            await client.call_tool("repos")
        assert raised.value.urls == [CONNECT, "http://127.0.0.1:9/pay"]
        assert raised.value.code == -32042
        assert [each["elicitationId"] for each in raised.value.elicitations] == ["e-2", "e-3"]


async def test_client_refuses_a_mode_it_has_no_handler_for() -> None:
    """2025-11-25 client/elicitation, "Error Handling": an undeclared mode is -32602."""
    form_only = {"elicitation/create": questions.elicitation_handler(lambda p: {"action": "accept"}, None)}
    asked = {"jsonrpc": "2.0", "id": 7, "method": "elicitation/create", "params": {"mode": "url", "url": CONNECT}}
    reply = await questions.reply(form_only, asked)
    assert reply["error"]["code"] == -32602
    assert "url-mode elicitation" in reply["error"]["message"]


# --- on the wire: toolkit run over stdio and HTTP, toolkit.Client as the real client ------------------


@pytest.mark.parametrize("version", ERAS)
async def test_example_over_stdio(version: str) -> None:
    command = [sys.executable, "-m", "toolkit", "run", str(EXAMPLE)]
    seen: list[dict[str, Any]] = []

    def decline(params: dict[str, Any]) -> str:
        seen.append(params)
        return "decline"

    async with RemoteClient(command, protocol_version=version, elicitation_url=decline) as client:
        assert client.negotiated_version == version
        assert (await client.call_tool("connect_github")).text == "GitHub is not connected (you chose decline)"
        assert seen[-1]["url"].startswith("http://127.0.0.1:8000/connect/")
        if version == LEGACY:
            with pytest.raises(URLElicitationRequired) as raised:
                await client.call_tool("github_repos")
            assert raised.value.urls == [seen[-1]["url"]]
    async with RemoteClient(command, protocol_version=version) as client:  # no URL mode: a link in text
        assert (await client.call_tool("connect_github")).text.startswith("Open http://127.0.0.1:8000/connect/")


@pytest.mark.parametrize("version", ERAS)
async def test_example_over_http_connects_through_the_page(version: str) -> None:
    with cli_server(EXAMPLE) as running:
        async with httpx.AsyncClient() as browser:  # the user's browser, opening the URL they agreed to

            async def open_in_browser(params: dict[str, Any]) -> str:
                page = await browser.get(params["url"])
                assert page.status_code == 200, page.text
                return "accept"

            notified: list[dict[str, Any]] = []
            async with RemoteClient(
                running.url, protocol_version=version, elicitation_url=open_in_browser, on_notification=notified.append
            ) as client:
                if version == LEGACY:
                    with pytest.raises(URLElicitationRequired):
                        await client.call_tool("github_repos")
                assert (await client.call_tool("connect_github")).text == "GitHub is connected"
                assert (await client.call_tool("github_repos")).data == ["octocat/hello-world", "octocat/spoon-knife"]
                completed = [m for m in notified if m["method"] == "notifications/elicitation/complete"]
                assert len(completed) == (1 if version == LEGACY else 0)
