"""Sources: the registry merges the decorators with any other source of components (ARCHITECTURE §7).

Adding a source is one call; its components are listed and called like the decorators', in both
eras, over the real wire; a change it announces reaches clients as ``list_changed``; a name two
sources offer is refused naming both.
"""

from __future__ import annotations

import pytest
from tests.support.processes import REPO, TOOLKIT
from tests.support.sources_app import Catalog, Price
from tests.support.stdio import StdioClient

from toolkit import RegistrationError, Server
from toolkit.testing import Client

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
APP = REPO / "tests" / "support" / "sources_app.py"


@pytest.mark.parametrize("version", [MODERN, LEGACY])
def test_a_sources_tools_are_served_and_its_changes_announced(version: str) -> None:
    with StdioClient([TOOLKIT, "run", APP]) as client:
        client.use_era(version)
        names = [tool["name"] for tool in client.result("tools/list")["tools"]]
        assert names == ["restock", "price_tea", "price_jam"]
        tea = client.call_tool("price_tea")
        assert tea["structuredContent"] == (3.5 if version == MODERN else {"result": 3.5})
        mark = client.snapshot()
        assert client.call_tool("restock", {"item": "milk", "price": 1.2})["content"][0]["text"] == "price_milk added"
        if version == LEGACY:  # a session hears of the change; a stateless client lists again
            client.wait_for(lambda m: m.get("method") == "notifications/tools/list_changed")
            assert [m for m in client.since(mark) if m.get("method") == "notifications/tools/list_changed"]
        names = [tool["name"] for tool in client.result("tools/list")["tools"]]
        assert names == ["restock", "price_tea", "price_jam", "price_milk"]
        assert client.call_tool("price_milk")["structuredContent"] == (1.2 if version == MODERN else {"result": 1.2})
        client.assert_all_valid(version)


def test_a_name_two_sources_offer_is_refused_naming_both() -> None:
    server = Server("clash")

    @server.tool
    def price_tea() -> float:
        return 1.0

    with pytest.raises(RegistrationError) as raised:
        server.registry.add_source(Catalog([Price("tea", 3.5)]))
    assert str(raised.value) == (
        "the catalog offers the tool 'price_tea', which this server already offers; "
        "rename one of them (or mount under a namespace)"
    )
    other = Server("clash-later")
    other.registry.add_source(Catalog([Price("jam", 4.0)]))
    with pytest.raises(RegistrationError, match="the tool 'price_jam' is already offered by the catalog"):

        @other.tool
        def price_jam() -> float:
            return 1.0


async def test_a_later_clash_keeps_the_earlier_source_and_warns(caplog: pytest.LogCaptureFixture) -> None:
    server = Server("later")
    first, second = Catalog([Price("tea", 1.0)]), Catalog([])
    server.registry.add_source(first)
    server.registry.add_source(second)
    second.add(Price("tea", 9.0))
    assert "offers the tool 'price_tea', which an earlier source offers" in caplog.text
    async with Client(server) as client:
        assert (await client.call_tool("price_tea"))["structuredContent"] == 1.0


async def test_removing_a_source_withdraws_its_components() -> None:
    server = Server("remove")
    catalog = Catalog([Price("tea", 1.0)])
    server.registry.add_source(catalog)
    with pytest.raises(RegistrationError, match="already a source"):
        server.registry.add_source(catalog)
    generation = server.registry.generation["tools"]
    server.registry.remove_source(catalog)
    assert server.registry.generation["tools"] > generation
    async with Client(server) as client:
        assert await client.list_tools() == []
    with pytest.raises(KeyError):
        server.registry.remove_source(catalog)
    with pytest.raises(KeyError):
        server.registry.remove_source(server.registry.local)


def test_scopes_and_tasks_follow_the_merged_snapshot() -> None:
    server = Server("scoped")
    guarded = Price("gold", 99.0)
    guarded.scopes = frozenset({"vault"})
    catalog = Catalog([guarded])
    server.registry.add_source(catalog)
    assert server.registry.scopes["tools"] == {"vault"}
    server.registry.remove_source(catalog)
    assert server.registry.scopes["tools"] == frozenset()
