"""Shaping what a server exposes: tags, enable/disable by name or tag, per-source selections, visibility per caller.

Through the public API (``toolkit.testing.Client`` in both eras) and the real wire: a server run
by ``toolkit run app.py:server`` over stdio, driven by ``toolkit.Client``, whose clients hear
``list_changed`` when a tool disables a tag, see what the visibility function shows them, and
call a transformed tool.
"""

from __future__ import annotations

import asyncio
import json
import textwrap
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from tests.support.processes import TOOLKIT
from tests.support.sources_app import Catalog, Price

import toolkit
from toolkit import Caller, Context, Resource, Selection, Server
from toolkit._components import ToolBase
from toolkit.auth import AccessToken
from toolkit.testing import Client, ClientError

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
ERAS = [MODERN, LEGACY]


def shop() -> Server:
    server = Server("shop")

    @server.tool
    def status() -> str:
        return "ok"

    @server.tool(tags={"admin"})
    def reset(confirm: bool) -> str:
        return f"reset: {confirm}"

    @server.tool(tags={"admin", "billing"})
    def refund(order: int) -> int:
        return order

    @server.prompt(tags={"admin"})
    def incident(service: str) -> str:
        return f"Write the incident report for {service}."

    @server.prompt
    def greet(name: str) -> str:
        return f"Hello {name}"

    def report() -> str:
        return "all quiet"

    def invoice(number: str) -> str:
        return f"invoice {number}"

    server.registry.add_resource(Resource("data://report", report, context_type=Context, tags={"admin"}))
    server.registry.add_template(
        toolkit.ResourceTemplate("data://invoices/{number}", invoice, context_type=Context, tags={"billing"})
    )
    return server


async def names(client: Client) -> dict[str, list[str]]:
    return {
        "tools": [tool["name"] for tool in await client.list_tools()],
        "prompts": [prompt["name"] for prompt in (await client.result("prompts/list"))["prompts"]],
        "resources": [resource["uri"] for resource in (await client.result("resources/list"))["resources"]],
        "templates": [
            template["uriTemplate"]
            for template in (await client.result("resources/templates/list"))["resourceTemplates"]
        ],
    }


async def refusal(request: Awaitable[Any]) -> dict[str, Any]:
    with pytest.raises(ClientError) as raised:
        await request
    error: dict[str, Any] = raised.value.error
    return error


def renamed(error: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    """``error`` as it would read for ``new`` instead of ``old`` (a hidden target's error against an unknown one's)."""
    result: dict[str, Any] = json.loads(json.dumps(error).replace(old, new))
    return result


# --- tags ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", ERAS)
async def test_tags_are_kept_on_every_kind_and_never_sent(version: str) -> None:
    server = shop()
    assert server.tools["refund"].tags == frozenset({"admin", "billing"})
    assert server.tools["status"].tags == frozenset()
    assert server.registry.prompts["incident"].tags == frozenset({"admin"})
    assert server.registry.resources["data://report"].tags == frozenset({"admin"})
    assert server.registry.templates["data://invoices/{number}"].tags == frozenset({"billing"})
    async with Client(server, protocol_version=version) as client:
        for method in ("tools/list", "prompts/list", "resources/list", "resources/templates/list"):
            assert "tags" not in repr(await client.result(method))


def test_a_tag_given_as_a_string_is_refused_naming_the_function() -> None:
    server = Server("tags")
    with pytest.raises(TypeError, match=r"tool 'lookup' \(lookup\(\) in test_shaping\.py:\d+\): tags= takes an"):

        @server.tool(tags="admin")
        def lookup() -> str:
            return ""

    with pytest.raises(TypeError, match=r"prompt 'hi' \(hi\(\) in test_shaping\.py:\d+\): every tag must be a non"):

        @server.prompt(tags={3})
        def hi() -> str:
            return ""

    with pytest.raises(TypeError, match="tool 'raw': tags= takes an iterable of strings"):
        ToolBase("raw", input_schema={"type": "object"}, tags="admin")


def test_the_resource_decorator_takes_tags() -> None:
    server = Server("tags")

    @server.resource("data://x", tags={"admin"})
    def x() -> str:
        return ""

    assert server.registry.resources["data://x"].tags == frozenset({"admin"})


# --- enable / disable ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", ERAS)
async def test_disabled_components_are_neither_listed_nor_usable(version: str) -> None:
    server = shop()
    async with Client(server, protocol_version=version) as client:
        server.disable("status", "data://invoices/{number}", tags={"admin"})
        assert await names(client) == {"tools": [], "prompts": ["greet"], "resources": [], "templates": []}
        # Every use of a disabled component is answered exactly as one of an unknown component.
        for hidden, unknown, request in [
            ("reset", "nothing", lambda name: client.call_tool(name, {"confirm": True})),
            ("incident", "nothing", lambda name: client.get_prompt(name, {"service": "db"})),
            ("data://report", "data://nothing", client.read_resource),
            ("data://invoices/7", "data://nothing/7", client.read_resource),
        ]:
            assert await refusal(request(hidden)) == renamed(await refusal(request(unknown)), unknown, hidden)
        completion = {"ref": {"type": "ref/prompt", "name": "incident"}, "argument": {"name": "service", "value": ""}}
        error = await refusal(client.result("completion/complete", completion))
        assert error["message"] == "Unknown prompt: 'incident'"

        server.enable("status", "data://invoices/{number}", tags={"admin"})
        assert await names(client) == {
            "tools": ["status", "reset", "refund"],
            "prompts": ["incident", "greet"],
            "resources": ["data://report"],
            "templates": ["data://invoices/{number}"],
        }
        assert (await client.call_tool("reset", {"confirm": True}))["content"][0]["text"] == "reset: True"


async def test_a_rule_holds_for_components_registered_later() -> None:
    server = Server("later")
    server.disable("audit", tags={"admin"})

    @server.tool(tags={"admin"})
    def wipe() -> str:
        return "wiped"

    @server.tool
    def audit() -> str:
        return "audited"

    @server.tool(tags={"read"})
    def look() -> str:
        return "looked"

    async with Client(server) as client:
        assert [tool["name"] for tool in await client.list_tools()] == ["look"]
        server.enable(tags={"admin"})
        assert [tool["name"] for tool in await client.list_tools()] == ["wipe", "look"]
    assert list(server.tools) == ["wipe", "look"]
    server.remove_tool("wipe")  # a disabled tool is still registered: it can be removed
    server.remove_tool("audit")
    assert list(server.tools) == ["look"]


async def test_a_rule_by_name_outranks_the_rules_by_tag() -> None:
    server = shop()
    server.disable(tags={"admin"})
    server.enable("reset")
    assert list(server.tools) == ["status", "reset"]
    server.disable(tags={"billing"})
    server.enable(tags={"admin"})  # refund is tagged billing too, and billing is still off
    assert list(server.tools) == ["status", "reset"]
    server.enable(tags={"billing"})
    assert list(server.tools) == ["status", "reset", "refund"]
    server.disable("reset")
    server.enable(tags={"admin"})  # reset is off by name: no tag switches it on
    assert list(server.tools) == ["status", "refund"]
    server.disable(tags={"admin"})
    server.enable("reset")
    assert list(server.tools) == ["status", "reset"]


async def test_rules_apply_to_every_source_and_to_what_arrives_later() -> None:
    server = Server("sources")
    catalog = Catalog([Price("tea", 3.5), Price("jam", 4.0)])
    server.registry.add_source(catalog)
    server.disable("price_tea", tags={"seasonal"})
    async with Client(server) as client:
        assert [tool["name"] for tool in await client.list_tools()] == ["price_jam"]
        error = await refusal(client.call_tool("price_tea"))
        assert error["message"] == "Unknown tool: 'price_tea'"
        eggnog = Price("eggnog", 6.0)
        eggnog.tags = frozenset({"seasonal"})
        catalog.add(eggnog)
        catalog.add(Price("milk", 1.2))
        assert [tool["name"] for tool in await client.list_tools()] == ["price_jam", "price_milk"]
        server.enable("price_tea", tags={"seasonal"})
        assert [tool["name"] for tool in await client.list_tools()] == [
            "price_tea",
            "price_jam",
            "price_eggnog",
            "price_milk",
        ]


async def test_clients_hear_of_the_kinds_that_changed_and_only_those() -> None:
    server = shop()
    async with Client(server, protocol_version=LEGACY) as client:
        await client.list_tools()

        async def heard(change: Callable[[], None]) -> list[str]:
            before = len(client.notifications)
            change()
            await asyncio.sleep(0)
            return sorted(message["method"] for message in client.notifications[before:])

        assert await heard(lambda: server.disable("reset")) == ["notifications/tools/list_changed"]
        assert await heard(lambda: server.disable("reset")) == []  # nothing more is hidden: nothing is said
        assert await heard(lambda: server.disable("nothing-of-that-name")) == []
        assert await heard(lambda: server.disable(tags={"billing"})) == [
            "notifications/resources/list_changed",
            "notifications/tools/list_changed",
        ]
        assert await heard(lambda: server.disable(tags={"admin"})) == [
            "notifications/prompts/list_changed",
            "notifications/resources/list_changed",
        ]
        generation = server.registry.generation["tools"]
        assert await heard(lambda: server.enable(tags={"admin", "billing"})) != []
        assert server.registry.generation["tools"] > generation  # a cursor of before is refused


def test_rule_arguments_are_checked() -> None:
    server = Server("checked")
    with pytest.raises(TypeError, match=r"server.disable\(\) takes names one by one, server.disable\('a', 'b'\)"):
        server.disable(["reset"])  # type: ignore[arg-type]
    with pytest.raises(
        TypeError, match=r"server.enable\(\): tags= takes an iterable of strings, e.g. tags=\{'admin'\}"
    ):
        server.enable(tags="admin")
    with pytest.raises(TypeError, match="every name must be a non-empty string"):
        server.disable("")


# --- selections ---------------------------------------------------------------------------------------------


def test_a_selection_includes_by_name_or_tag_and_exclusion_wins() -> None:
    server = shop()
    tools = server.tools

    def allowed(selection: Selection) -> list[str]:
        return [name for name, tool in tools.items() if selection.allows("tools", name, tool)]

    assert allowed(Selection()) == ["status", "reset", "refund"]
    assert allowed(Selection(names=["status"], tags={"billing"})) == ["status", "refund"]
    assert allowed(Selection(tags={"admin"}, exclude_names=["reset"])) == ["refund"]
    assert allowed(Selection(names=["refund"], exclude_tags={"billing"})) == []
    assert allowed(Selection(exclude_tags={"admin"})) == ["status"]
    assert allowed(Selection(names=[])) == []  # an empty allowlist offers nothing
    template = server.registry.templates["data://invoices/{number}"]
    assert Selection(names={"data://invoices/{number}"}).allows("templates", "data://invoices/{number}", template)
    assert repr(Selection(tags={"b", "a"}, exclude_names=["x"])) == "Selection(tags=['a', 'b'], exclude_names=['x'])"
    with pytest.raises(
        TypeError, match=r"Selection: names= takes an iterable of strings, e.g. names=\{'status'\}, not the string"
    ):
        Selection(names="status")
    with pytest.raises(
        TypeError, match=r"Selection: exclude_tags= takes an iterable of strings.*one tag per character"
    ):
        Selection(exclude_tags="admin")


# --- visibility per caller ---------------------------------------------------------------------------------


def token(subject: str, *scopes: str) -> AccessToken:
    return AccessToken(subject=subject, client_id="tests", scopes=frozenset(scopes), expires_at=None)


def admins_only(component: Any, caller: Caller) -> bool:
    """Admin components for ada only."""
    if "admin" not in component.tags:
        return True
    return caller.access_token is not None and caller.access_token.subject == "ada"


@pytest.mark.parametrize("version", ERAS)
async def test_each_caller_sees_and_uses_what_the_visibility_function_shows_it(version: str) -> None:
    server = shop()
    server.set_visibility(admins_only)
    async with (
        Client(server, protocol_version=version, access_token=token("ada")) as ada,
        Client(server, protocol_version=version, access_token=token("bob")) as bob,
    ):
        everything = {
            "tools": ["status", "reset", "refund"],
            "prompts": ["incident", "greet"],
            "resources": ["data://report"],
            "templates": ["data://invoices/{number}"],
        }
        assert await names(ada) == everything
        assert await names(bob) == {
            "tools": ["status"],
            "prompts": ["greet"],
            "resources": [],
            "templates": ["data://invoices/{number}"],
        }
        assert await names(ada) == everything  # bob's pages were not served to ada, nor hers to him
        assert (await ada.call_tool("refund", {"order": 7}))["structuredContent"] == (
            7 if version == MODERN else {"result": 7}
        )
        assert await refusal(bob.call_tool("refund", {"order": 7})) == renamed(
            await refusal(bob.call_tool("nothing", {"order": 7})), "nothing", "refund"
        )
        assert (await refusal(bob.get_prompt("incident", {"service": "db"})))["message"] == (
            "Unknown prompt: 'incident'"
        )
        assert await refusal(bob.read_resource("data://report")) == renamed(
            await refusal(bob.read_resource("data://nothing")), "data://nothing", "data://report"
        )
        assert (await ada.read_resource("data://report"))["contents"][0]["text"] == "all quiet"
        if version == MODERN:  # a list that differs per caller must not be cached for everyone
            assert (await ada.result("tools/list"))["cacheScope"] == "private"


async def test_the_caller_is_a_read_only_view_of_the_request() -> None:
    server = shop()
    seen: list[Caller] = []

    @server.visibility
    def record(component: Any, caller: Caller) -> bool:
        seen.append(caller)
        return True

    assert server.engine.visibility is record
    async with Client(server, protocol_version=LEGACY, client_info={"name": "ops", "version": "2"}) as legacy:
        await legacy.call_tool("status")
    caller = seen[-1]
    assert caller.protocol_version == LEGACY
    assert caller.client_info == {"name": "ops", "version": "2"}
    assert caller.access_token is None
    assert "protocol_version='2025-11-25'" in repr(caller)
    with pytest.raises(AttributeError):
        caller.protocol_version = "x"  # type: ignore[misc]
    with pytest.raises(TypeError):
        caller.client_info["name"] = "root"  # type: ignore[index]
    async with Client(server, protocol_version=MODERN, access_token=token("ada")) as modern:
        await modern.list_tools()
    caller = seen[-1]
    assert caller.protocol_version == MODERN
    assert caller.session_id is None  # stateless
    assert caller.access_token is not None and caller.access_token.subject == "ada"
    assert caller.client_capabilities is not None


async def test_visibility_pages_with_cursors_per_caller() -> None:
    server = Server("paged")
    server.page_size = 2
    for index in range(5):
        server.add_tool(Price(str(index), float(index)))
    server.set_visibility(lambda tool, caller: caller.client_info.get("name") == "all" or tool.name < "price_3")

    async def every(client: Client) -> list[str]:
        listed: list[str] = []
        cursor = None
        while True:
            result = await client.result("tools/list", {"cursor": cursor} if cursor else {})
            listed += [tool["name"] for tool in result["tools"]]
            cursor = result.get("nextCursor")
            if cursor is None:
                return listed

    async with (
        Client(server, client_info={"name": "all", "version": "1"}) as everyone,
        Client(server, client_info={"name": "few", "version": "1"}) as few,
    ):
        for _ in range(2):  # the second time from the cache
            assert await every(few) == ["price_0", "price_1", "price_2"]
            assert await every(everyone) == [f"price_{index}" for index in range(5)]


async def test_setting_visibility_tells_clients_and_none_turns_it_off() -> None:
    server = shop()
    async with Client(server, protocol_version=LEGACY, access_token=token("bob")) as bob:
        assert len(await bob.list_tools()) == 3
        before = len(bob.notifications)
        server.set_visibility(admins_only)
        await asyncio.sleep(0)
        assert "notifications/tools/list_changed" in [message["method"] for message in bob.notifications[before:]]
        assert [tool["name"] for tool in await bob.list_tools()] == ["status"]
        server.set_visibility(None)
        assert len(await bob.list_tools()) == 3
    with pytest.raises(TypeError, match="set_visibility takes a function"):
        server.set_visibility("admins")  # type: ignore[arg-type]


async def test_without_a_visibility_function_a_request_does_no_extra_work(monkeypatch: pytest.MonkeyPatch) -> None:
    server = shop()
    server.set_visibility(admins_only)
    server.set_visibility(None)

    def looked_up(*args: Any) -> Any:
        raise AssertionError("the registry was asked for the request's target")

    monkeypatch.setattr(server.registry, "target", looked_up)
    monkeypatch.setattr(toolkit._inbound.Caller, "__init__", looked_up)  # type: ignore[attr-defined]
    async with Client(server) as client:
        assert (await client.call_tool("status"))["content"][0]["text"] == "ok"
        first = await client.request("tools/list", {})
        assert len(first["result"]["tools"]) == 3
    pages = server.engine.lists.pages
    assert all(key[4] == () for key in pages._cache)  # one page for everyone, as before


async def test_visibility_and_scopes_both_apply() -> None:
    server = Server("both")

    @server.tool(scopes=["vault"], tags={"admin"})
    def open_vault() -> str:
        return "open"

    @server.tool
    def lobby() -> str:
        return "lobby"

    server.set_visibility(admins_only)
    async with (
        Client(server, access_token=token("ada")) as ada_without_scope,
        Client(server, access_token=token("ada", "vault")) as ada,
        Client(server, access_token=token("bob", "vault")) as bob,
    ):
        assert [tool["name"] for tool in await ada_without_scope.list_tools()] == ["lobby"]
        assert [tool["name"] for tool in await ada.list_tools()] == ["open_vault", "lobby"]
        assert [tool["name"] for tool in await bob.list_tools()] == ["lobby"]


# --- over the wire: toolkit run app.py:server, toolkit.Client ----------------------------------------------

APP = '''
from toolkit import ArgTransform, Server

server = Server("shaped")


@server.tool
def status() -> str:
    return "ok"


@server.tool(tags={"admin"})
def reset() -> str:
    return "reset"


@server.tool(tags={"internal"})
def ops_report() -> list[str]:
    return ["disk 71%"]


@server.tool
def search(query: str, limit: int = 3, user: str = "anonymous") -> list[str]:
    """Search the catalog."""
    return [f"{query} #{index} for {user}" for index in range(limit)]


@server.tool
def lock(on: bool) -> str:
    """Switch the admin tools off (on=True) or back on."""
    (server.disable if on else server.enable)(tags={"admin"})
    return "locked" if on else "unlocked"


@server.visibility
def shown(component, caller) -> bool:
    return "internal" not in component.tags or caller.client_info.get("name") == "ops"


server.transform_tool(
    "search",
    name="find",
    description="Find products.",
    arguments={
        "query": ArgTransform(name="q", description="What to look for"),
        "user": ArgTransform(hide=True, default="wire"),
    },
)
'''


@pytest.fixture
def app(tmp_path: Path) -> str:
    path = tmp_path / "app.py"
    path.write_text(textwrap.dedent(APP))
    return f"{path}:server"


@pytest.mark.timeout(120)
async def test_over_the_wire_disable_visibility_and_a_transformed_tool_legacy(app: str) -> None:
    heard: list[str] = []
    changed = asyncio.Event()

    def on_notification(message: dict[str, Any]) -> None:
        heard.append(message["method"])
        if message["method"] == "notifications/tools/list_changed":
            changed.set()

    async with toolkit.Client(
        [str(TOOLKIT), "run", app],
        protocol_version=LEGACY,
        client_info={"name": "ops", "version": "1"},
        on_notification=on_notification,
    ) as ops:
        tools = {tool["name"]: tool for tool in await ops.list_tools()}
        assert list(tools) == ["status", "reset", "ops_report", "find", "lock"]
        assert tools["find"]["description"] == "Find products."
        assert tools["find"]["inputSchema"]["properties"] == {
            "q": {"type": "string", "description": "What to look for"},
            "limit": {"type": "integer", "default": 3},
        }
        assert tools["find"]["inputSchema"]["required"] == ["q"]
        assert (await ops.call_tool("find", {"q": "tea", "limit": 2})).data == ["tea #0 for wire", "tea #1 for wire"]
        assert (await ops.call_tool("ops_report")).data == ["disk 71%"]

        assert (await ops.call_tool("lock", {"on": True})).text == "locked"
        await asyncio.wait_for(changed.wait(), 30)
        assert [tool["name"] for tool in await ops.list_tools()] == ["status", "ops_report", "find", "lock"]
        with pytest.raises(toolkit.client.ClientError) as raised:
            await ops.call_tool("reset")
        assert raised.value.error["message"] == "Unknown tool: 'reset'"
        changed.clear()
        await ops.call_tool("lock", {"on": False})
        await asyncio.wait_for(changed.wait(), 30)
        assert (await ops.call_tool("reset")).text == "reset"


@pytest.mark.timeout(120)
async def test_over_the_wire_disable_visibility_and_a_transformed_tool_modern(app: str) -> None:
    async with toolkit.Client(
        [str(TOOLKIT), "run", app], protocol_version=MODERN, client_info={"name": "guest", "version": "1"}
    ) as guest:
        assert [tool["name"] for tool in await guest.list_tools()] == ["status", "reset", "find", "lock"]
        with pytest.raises(toolkit.client.ClientError) as raised:
            await guest.call_tool("ops_report")
        assert raised.value.error["message"] == "Unknown tool: 'ops_report'"
        found = await guest.call_tool("find", {"q": "jam"})
        assert found.data == ["jam #0 for wire", "jam #1 for wire", "jam #2 for wire"]
        refused = await guest.call_tool("find", {"query": "jam"}, raise_on_error=False)
        assert refused.is_error and "Invalid arguments for tool 'find'" in refused.text
        async with await guest.listen(tools=True) as subscription:
            await guest.call_tool("lock", {"on": True})
            notification = await asyncio.wait_for(anext(aiter(subscription)), 30)
            assert notification["method"] == "notifications/tools/list_changed"
        assert [tool["name"] for tool in await guest.list_tools()] == ["status", "find", "lock"]
