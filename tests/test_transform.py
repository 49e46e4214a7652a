"""Tool transformation: ``toolkit.transform_tool`` / ``ArgTransform`` and ``server.transform_tool``.

A transformed tool is built once (its schema rewritten then, never per call), validated against
its own schema, and calls the tool behind it with the arguments mapped back; served in both eras
through the public API, for decorated tools and tools of another source alike.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest
from pydantic import BaseModel
from tests.support.sources_app import Catalog, Price

from toolkit import ArgTransform, RegistrationError, Server, transform_tool
from toolkit._components import CallContext, ToolBase
from toolkit._content import CallOutcome
from toolkit.testing import Client, ClientError

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
ERAS = [MODERN, LEGACY]


class ByName(BaseModel):
    name: str


class ById(BaseModel):
    id: int


class Address(BaseModel):
    street: str
    city: str


def catalog_server() -> Server:
    server = Server("catalog")

    @server.tool(tags={"read"}, annotations={"readOnlyHint": True}, title="Search")
    def search(query: str, limit: int = 3, user: str = "anonymous", ship_to: Address | None = None) -> list[str]:
        """Search the catalog.

        Args:
            query: What to look for.
            limit: How many results.
        """
        where = f" to {ship_to.city}" if ship_to else ""
        return [f"{query} #{index} for {user}{where}" for index in range(limit)]

    @server.tool
    def transfer(source: str, target: str, amount: float) -> str:
        return f"{amount:g} from {source} to {target}"

    return server


def result_of(result: dict[str, Any], version: str) -> Any:
    structured = result["structuredContent"]
    return structured if version == MODERN else structured["result"]


# --- the schema, rewritten once -------------------------------------------------------------------


def test_the_input_schema_is_rewritten_once_and_the_rest_kept() -> None:
    server = catalog_server()
    search = server.tools["search"]
    original = repr(search.input_schema)
    find = transform_tool(
        search,
        name="find",
        description="Find products.",
        arguments={
            "query": ArgTransform(name="q", description="Words to find."),
            "limit": ArgTransform(default=5),
            "user": ArgTransform(hide=True, default="agent"),
        },
    )
    assert repr(search.input_schema) == original  # the inner tool is untouched
    schema = find.input_schema
    assert list(schema["properties"]) == ["q", "limit", "ship_to"]
    assert schema["properties"]["q"] == {"type": "string", "description": "Words to find."}
    assert schema["properties"]["limit"]["default"] == 5
    assert schema["required"] == ["q"]
    assert schema["additionalProperties"] is False
    assert schema["$defs"] == search.input_schema["$defs"]  # ship_to's Address stays reachable
    assert find.output_schema is search.output_schema
    assert (find.name, find.title, find.description) == ("find", "Search", "Find products.")
    assert find.annotations == {"readOnlyHint": True}
    assert find.tags == frozenset({"read"}) and find.scopes == search.scopes and find.task == search.task
    assert repr(find) == "TransformedTool(name='find', inner=Tool(name='search'))"
    retitled = transform_tool(search, title="Look up", annotations={}, meta={"team": "shop"}, tags=["x"])
    assert (retitled.name, retitled.title, retitled.annotations, retitled.meta) == (
        "search",
        "Look up",
        None,
        {"team": "shop"},
    )
    assert retitled.tags == frozenset({"x"})
    assert retitled.input_schema == search.input_schema


@pytest.mark.parametrize("version", ERAS)
async def test_a_transformed_tool_is_served_beside_the_original(version: str) -> None:
    server = catalog_server()
    server.add_tool(
        transform_tool(
            server.tools["search"],
            name="find",
            arguments={"query": ArgTransform(name="q"), "user": ArgTransform(hide=True, default="agent")},
        )
    )
    async with Client(server, protocol_version=version) as client:
        tools = {tool["name"]: tool for tool in await client.list_tools()}
        assert list(tools) == ["search", "transfer", "find"]
        assert "user" not in tools["find"]["inputSchema"]["properties"]
        assert tools["find"]["outputSchema"] == tools["search"]["outputSchema"]  # shaped for each era alike
        found = await client.call_tool("find", {"q": "tea", "limit": 2, "ship_to": {"street": "1 Rue", "city": "Lyon"}})
        assert result_of(found, version) == ["tea #0 for agent to Lyon", "tea #1 for agent to Lyon"]
        original = await client.call_tool("search", {"query": "tea", "limit": 1})
        assert result_of(original, version) == ["tea #0 for anonymous"]


# --- calls ----------------------------------------------------------------------------------------------


async def test_arguments_are_checked_against_the_transformed_schema_only_once(monkeypatch: pytest.MonkeyPatch) -> None:
    server = catalog_server()
    search = server.tools["search"]
    server.add_tool(transform_tool(search, name="find", arguments={"query": ArgTransform(name="q")}))
    inner_checks: list[Any] = []
    validator = search._input_validator

    class Counting:
        def is_valid(self, instance: Any) -> bool:
            inner_checks.append(instance)
            return validator.is_valid(instance)

        def __getattr__(self, name: str) -> Any:
            return getattr(validator, name)

    monkeypatch.setattr(search, "_input_validator", Counting())
    async with Client(server) as client:
        assert (await client.call_tool("find", {"q": "tea", "limit": 1}))["structuredContent"] == [
            "tea #0 for anonymous"
        ]
        assert inner_checks == []  # the transformed tool checked them; the function's tool only converts
        refused = await client.call_tool("find", {"query": "tea"})
        assert refused["isError"] is True
        assert refused["content"][0]["text"].startswith("Invalid arguments for tool 'find': arguments: ")
        assert '"q" is a required property' in refused["content"][0]["text"]
        wrong = await client.call_tool("find", {"q": 7})
        assert (
            wrong["content"][0]["text"] == "Invalid arguments for tool 'find': arguments/q: 7 is not of type \"string\""
        )
        await client.call_tool("search", {"query": "tea"})
        assert len(inner_checks) == 1  # the original still checks its own


async def test_hidden_arguments_get_a_fixed_value_a_computed_one_or_their_own_default() -> None:
    server = catalog_server()
    calls = iter(range(100))

    async def next_user() -> str:
        return f"user-{next(calls)}"

    server.add_tool(
        transform_tool(
            server.tools["search"],
            name="mine",
            arguments={
                "user": ArgTransform(hide=True, default_factory=next_user),
                "ship_to": ArgTransform(hide=True, default=Address(street="1 Main St", city="Oslo")),
            },
        )
    )
    server.add_tool(
        transform_tool(
            server.tools["search"],
            name="anyone",
            arguments={"user": ArgTransform(hide=True), "limit": ArgTransform(hide=True)},
        )
    )
    async with Client(server) as client:
        first = await client.call_tool("mine", {"query": "jam", "limit": 1})
        second = await client.call_tool("mine", {"query": "jam", "limit": 1})
        assert first["structuredContent"] == ["jam #0 for user-0 to Oslo"]
        assert second["structuredContent"] == ["jam #0 for user-1 to Oslo"]  # computed on every call
        assert (await client.call_tool("anyone", {"query": "x"}))["structuredContent"] == [
            "x #0 for anonymous",
            "x #1 for anonymous",
            "x #2 for anonymous",
        ]
        sneaky = await client.call_tool("anyone", {"query": "x", "user": "root"})
        assert (
            sneaky["isError"] is True
            and "Additional properties are not allowed ('user'" in sneaky["content"][0]["text"]
        )


async def test_a_failing_or_misfitting_factory_is_an_error_result_and_a_log(caplog: pytest.LogCaptureFixture) -> None:
    server = catalog_server()

    def broken() -> str:
        raise RuntimeError("no user today")

    server.add_tool(
        transform_tool(
            server.tools["search"], name="broken", arguments={"user": ArgTransform(hide=True, default_factory=broken)}
        )
    )
    server.add_tool(
        transform_tool(
            server.tools["search"],
            name="misfit",
            arguments={"user": ArgTransform(hide=True, default_factory=lambda: 42)},
        )
    )
    async with Client(server) as client:
        for name in ("broken", "misfit"):
            result = await client.call_tool(name, {"query": "x"})
            assert result["isError"] is True
            assert result["content"][0]["text"] == f"Error executing tool {name!r}"
    assert "the default_factory of the hidden argument 'user' raised" in caplog.text
    assert "default_factory gave 'user' a value its schema refuses: arguments/user: 42 is not of type" in caplog.text


class Echo(ToolBase):
    """A tool of another kind whose schema is open to more properties."""

    def __init__(self) -> None:
        super().__init__(
            "echo",
            input_schema={"type": "object", "properties": {"text": {"type": "string"}, "secret": {"type": "string"}}},
            output_schema={"type": "object"},
        )

    async def call(self, arguments: dict[str, Any], context: CallContext) -> CallOutcome:
        return self.finish(arguments)


@pytest.mark.parametrize("version", ERAS)
async def test_any_tool_can_be_transformed_and_transformed_again(version: str) -> None:
    server = Server("echo")
    once = transform_tool(
        Echo(),
        name="say",
        arguments={"text": ArgTransform(name="words"), "secret": ArgTransform(hide=True, default="s3")},
    )
    server.add_tool(transform_tool(once, name="shout", arguments={"words": ArgTransform(name="loud")}))
    async with Client(server, protocol_version=version) as client:
        result = await client.call_tool("shout", {"loud": "hi", "extra": 1})
        assert result["structuredContent"] == {"text": "hi", "secret": "s3", "extra": 1}
        for sent in ("secret", "text", "words"):  # names the tools behind it know: not this tool's arguments
            refused = await client.call_tool("shout", {"loud": "hi", sent: "x"})
            assert refused["isError"] is True
            assert (
                refused["content"][0]["text"]
                == f"Invalid arguments for tool 'shout': {sent!r} is not one of its arguments"
            )


# --- mistakes, named -------------------------------------------------------------------------------------


def test_mistakes_name_the_tool_and_the_argument() -> None:
    search = catalog_server().tools["search"]
    transfer = catalog_server().tools["transfer"]
    with pytest.raises(
        RegistrationError,
        match=r"transform_tool\('search'\): the tool has no argument 'qeury' \(its arguments: 'query',"
        r" 'limit', 'user', 'ship_to'\)",
    ):
        transform_tool(search, arguments={"qeury": ArgTransform(name="q")})
    with pytest.raises(
        RegistrationError,
        match=r"transform_tool\('transfer'\): renaming the argument 'source' to 'target' clashes with the"
        r" argument 'target'",
    ):
        transform_tool(transfer, arguments={"source": ArgTransform(name="target")})
    with pytest.raises(
        RegistrationError,
        match=r"renaming the argument 'source' to 'account' clashes with the argument 'target', renamed too",
    ):
        transform_tool(
            transfer, arguments={"source": ArgTransform(name="account"), "target": ArgTransform(name="account")}
        )
    # a swap is no clash
    swapped = transform_tool(
        transfer, arguments={"source": ArgTransform(name="target"), "target": ArgTransform(name="source")}
    )
    assert list(swapped.input_schema["properties"]) == ["target", "source", "amount"]
    with pytest.raises(
        RegistrationError,
        match=r"transform_tool\('transfer'\): the tool requires the argument 'amount', so hiding it needs a value",
    ):
        transform_tool(transfer, arguments={"amount": ArgTransform(hide=True)})
    with pytest.raises(
        RegistrationError,
        match=r"transform_tool\('transfer'\): the default of 'amount' does not fit its schema:"
        r" arguments/amount: \"ten\" is not of type \"number\"",
    ):
        transform_tool(transfer, arguments={"amount": ArgTransform(default="ten")})
    with pytest.raises(TypeError, match=r"transform_tool\('transfer'\): arguments\['amount'\] must be an ArgTransform"):
        transform_tool(transfer, arguments={"amount": {"hide": True}})  # type: ignore[dict-item]
    with pytest.raises(TypeError, match="transform_tool takes a tool"):
        transform_tool("transfer")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="needs hide=True"):
        ArgTransform(default_factory=lambda: 1)
    with pytest.raises(TypeError, match="default= or default_factory=, not both"):
        ArgTransform(hide=True, default=1, default_factory=lambda: 1)
    with pytest.raises(TypeError, match="takes no name= or description="):
        ArgTransform(hide=True, name="x")
    assert repr(ArgTransform(name="q", hide=False)) == "ArgTransform(name='q')"


def test_a_schema_whose_root_names_arguments_is_refused() -> None:
    server = Server("unions")

    @server.tool(root_param="who")
    def lookup(who: ByName | ById) -> str:
        return "found"

    with pytest.raises(
        RegistrationError,
        match=r"transform_tool\('lookup'\): its input schema has '(any|one)Of' at its root, which can name arguments",
    ):
        transform_tool(server.tools["lookup"], arguments={"name": ArgTransform(name="n")})
    assert transform_tool(server.tools["lookup"], name="find").name == "find"  # the schema itself is kept


# --- server.transform_tool: a rule in the registry ----------------------------------------------------------


@pytest.mark.parametrize("version", ERAS)
async def test_server_transform_tool_replaces_the_tool_wherever_it_comes_from(version: str) -> None:
    server = catalog_server()
    catalog = Catalog([Price("tea", 3.5)])
    server.registry.add_source(catalog)
    server.transform_tool("search", name="find", arguments={"user": ArgTransform(hide=True, default="agent")})
    server.transform_tool("price_milk", name="milk_price", description="The price of a litre of milk.")
    async with Client(server, protocol_version=version) as client:
        assert [tool["name"] for tool in await client.list_tools()] == ["find", "transfer", "price_tea"]
        assert result_of(await client.call_tool("find", {"query": "x", "limit": 1}), version) == ["x #0 for agent"]
        catalog.add(Price("milk", 1.2))  # arrives later: the rule applies to it
        tools = {tool["name"]: tool for tool in await client.list_tools()}
        assert list(tools) == ["find", "transfer", "price_tea", "milk_price"]
        assert tools["milk_price"]["description"] == "The price of a litre of milk."
        milk = await client.call_tool("milk_price")
        assert milk["structuredContent"] == (1.2 if version == MODERN else {"result": 1.2})
        with pytest.raises(ClientError, match="Unknown tool: 'search'"):  # replaced
            await client.call_tool("search", {"query": "x"})
    assert server.tools["find"] is server.tools["find"]  # built once, not per snapshot
    find = server.tools["find"]
    catalog.add(Price("jam", 2.0))  # another change: the transformed tool is kept, not rebuilt
    assert server.tools["find"] is find
    server.disable("find")  # rules see the tool as clients do, by its new name
    assert "find" not in server.tools
    server.enable("find")
    server.transform_tool("search")  # no options: the tool as it is
    assert list(server.tools) == ["search", "transfer", "price_tea", "milk_price", "price_jam"]


def test_server_transform_tool_mistakes_are_refused_at_once_and_change_nothing() -> None:
    server = catalog_server()
    with pytest.raises(RegistrationError, match=r"transform_tool\('search'\): the tool has no argument 'usr'"):
        server.transform_tool("search", arguments={"usr": ArgTransform(hide=True)})
    with pytest.raises(
        RegistrationError,
        match=r"server.transform_tool\('search'\) names the tool 'transfer', which another tool has; give"
        r" it another name=",
    ):
        server.transform_tool("search", name="transfer")
    assert list(server.tools) == ["search", "transfer"]
    with pytest.raises(TypeError, match="unexpected option"):
        server.transform_tool("search", nmae="find")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="takes the tool's name"):
        server.transform_tool(server.tools["search"], name="find")  # type: ignore[arg-type]
    server.transform_tool("search", name="find")
    with pytest.raises(
        RegistrationError,
        match=r"a tool named 'find' is already registered; pass name=... to register another \(by"
        r" server.transform_tool\)",
    ):

        @server.tool
        def find() -> str:
            return ""


def test_a_rule_that_does_not_fit_a_later_tool_leaves_it_out_and_says_so(caplog: pytest.LogCaptureFixture) -> None:
    server = Server("later")
    catalog = Catalog([])
    server.registry.add_source(catalog)
    server.transform_tool("price_tea", arguments={"size": ArgTransform(hide=True, default="L")})
    server.transform_tool("price_jam", name="price_honey")
    with caplog.at_level(logging.WARNING, logger="toolkit"):
        catalog.add(Price("tea", 1.0))
        catalog.add(Price("honey", 5.0))
        catalog.add(Price("jam", 2.0))
    assert list(server.tools) == ["price_honey"]
    assert "server.transform_tool('price_tea') does not fit the tool offered now" in caplog.text
    assert "the tool has no argument 'size'" in caplog.text
    assert "server.transform_tool('price_jam') names the tool 'price_honey', which another tool has" in caplog.text
