"""Mount: ``server.mount(child, namespace)``, through the public API and over the real wire.

A mounted server's tools, resources, templates and prompts appear under the namespace
(``billing_charge``, ``data://billing/invoices/7``), live; they run by the child's own engine
(its ``on_call_tool`` middleware, ``ctx.server``, ``ctx.lifespan``) inside the parent's request
(its middleware outside, its auth and scopes, its era shaping, the caller's answers and tasks).
In process with ``toolkit.Client(server)`` (natural values) and ``toolkit.testing.Client`` (the
wire as sent); over stdio with ``toolkit run tests/support/mount_app.py:server`` as a child
process; over HTTP with ``server.http_app()`` served by uvicorn on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from pydantic import BaseModel
from starlette.applications import Starlette
from starlette.routing import Mount
from tests.http_support import serve
from tests.support.processes import REPO
from tests.support.stdio import StdioClient
from tests.wire import assert_valid

import toolkit
from toolkit import Context, PromptError, RegistrationError, ResourceError, Server, ToolError, ToolResult
from toolkit.middleware import CallNext, McpRequest, Middleware
from toolkit.testing import Client as WireClient
from toolkit.testing import ClientError, TokenIssuer

pytestmark = pytest.mark.timeout(60)

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
OLD = "2025-06-18"
APP = REPO / "tests" / "support" / "mount_app.py"
TOOLKIT_RUN = [sys.executable, "-m", "toolkit", "run", f"{APP}:server"]


class Confirm(BaseModel):
    confirm: bool


class Name(BaseModel):
    name: str


def yes(params: dict[str, Any]) -> dict[str, Any]:
    """The user's answer to every question: a name for a name, yes for a confirmation."""
    wanted = params["requestedSchema"]["properties"]
    return {"action": "accept", "content": {"name": "Ada"} if "name" in wanted else {"confirm": True}}


def billing_server(**options: Any) -> Server:
    """A child with one of each kind, and completers for its prompt and its template."""
    billing = Server("billing", **options)

    @billing.tool
    def charge(amount: int) -> list[int]:
        """Charge an amount; the charge and its total with tax."""
        return [amount, amount * 2]

    @billing.resource("data://invoices")
    def invoices() -> str:
        """Every invoice."""
        return "7, 8"

    @billing.resource("data://invoices/{number}")
    def invoice(number: int) -> str:
        """One invoice."""
        return f"invoice {number}"

    @billing.prompt
    def remind(customer: str) -> str:
        """A payment reminder."""
        return f"Remind {customer} to pay."

    @billing.completion(prompt="remind", argument="customer")
    def customers(value: str) -> list[str]:
        return [name for name in ("ada", "alan", "bob") if name.startswith(value)]

    @billing.completion(resource="data://invoices/{number}", argument="number")
    def numbers(value: str) -> list[str]:
        return [number for number in ("7", "8", "17") if number.startswith(value)]

    return billing


def gateway(child: Server, namespace: str | None = "billing", **options: Any) -> Server:
    parent = Server("gateway")
    parent.mount(child, namespace, **options)
    return parent


async def tool_names(client: toolkit.Client) -> list[str]:
    return [tool["name"] for tool in await client.list_tools()]


async def next_message(subscription: Any) -> dict[str, Any]:
    message: dict[str, Any] = await asyncio.wait_for(anext(subscription), 10)
    return message


async def wait_until(condition: Callable[[], bool]) -> None:
    async with asyncio.timeout(10):
        while not condition():
            await asyncio.sleep(0.01)


# --- every kind, under the naming rule ------------------------------------------------------------


@pytest.mark.parametrize("version", [MODERN, LEGACY, OLD])
async def test_every_kind_is_offered_under_the_namespace(version: str) -> None:
    async with toolkit.Client(gateway(billing_server()), protocol_version=version) as client:
        assert await tool_names(client) == ["billing_charge"]
        assert (await client.call_tool("billing_charge", {"amount": 3})).data == [3, 6]

        assert [(r["uri"], r["name"]) for r in await client.list_resources()] == [
            ("data://billing/invoices", "invoices")
        ]
        assert await client.read_resource("data://billing/invoices") == [
            {"uri": "data://billing/invoices", "mimeType": "text/plain", "text": "7, 8"}
        ]
        templates = await client.list_resource_templates()
        assert [(t["uriTemplate"], t["name"]) for t in templates] == [("data://billing/invoices/{number}", "invoice")]
        assert await client.read_resource("data://billing/invoices/17") == [
            {"uri": "data://billing/invoices/17", "mimeType": "text/plain", "text": "invoice 17"}
        ]

        prompts = await client.list_prompts()
        assert [(p["name"], p["description"]) for p in prompts] == [("billing_remind", "A payment reminder.")]
        prompt = await client.get_prompt("billing_remind", {"customer": "Ada"})
        assert prompt["messages"][0]["content"]["text"] == "Remind Ada to pay."

        by_prompt = await client.complete({"type": "ref/prompt", "name": "billing_remind"}, "customer", "a")
        assert by_prompt["values"] == ["ada", "alan"]
        by_template = await client.complete(
            {"type": "ref/resource", "uri": "data://billing/invoices/{number}"}, "number", "1"
        )
        assert by_template["values"] == ["17"]


async def test_the_child_keeps_its_own_names() -> None:
    billing = billing_server()
    gateway(billing)
    async with toolkit.Client(billing) as client:
        assert await tool_names(client) == ["charge"]
        assert (await client.read_resource("data://invoices/7"))[0]["uri"] == "data://invoices/7"


@pytest.mark.parametrize(
    ("inner", "outer"),
    [
        ("data://invoices/7", "data://billing/invoices/7"),
        ("file:///etc/invoice.txt", "file://billing//etc/invoice.txt"),
        ("urn:isbn:0451450523", "urn:billing/isbn:0451450523"),
        ("invoices/7", "billing/invoices/7"),
    ],
)
async def test_a_resource_uri_gets_the_namespace_after_its_scheme(inner: str, outer: str) -> None:
    child = Server("child")

    @child.resource(inner)
    def the_resource() -> str:
        return "contents"

    async with toolkit.Client(gateway(child)) as client:
        assert [resource["uri"] for resource in await client.list_resources()] == [outer]
        assert await client.read_resource(outer) == [{"uri": outer, "mimeType": "text/plain", "text": "contents"}]
        with pytest.raises(toolkit.ToolkitError):
            await client.read_resource(inner)  # the child's own URI is not the parent's


def by_number(number: int) -> str:
    return f"number {number}"


def by_path(path: str) -> str:
    return f"path {path}"


def by_two(year: int, month: int) -> str:
    return f"{year}-{month:02}"


@pytest.mark.parametrize(
    ("template", "function", "uri", "outer_template", "text"),
    [
        ("data://invoices/{number}", by_number, "data://billing/invoices/7", "data://billing/invoices/{number}", "7"),
        ("data://{number}", by_number, "data://billing/7", "data://billing/{number}", "number 7"),
        ("file:///srv/{+path}", by_path, "file://billing//srv/a/b.txt", "file://billing//srv/{+path}", "a/b.txt"),
        ("cal://{year}/{month}", by_two, "cal://billing/2026/7", "cal://billing/{year}/{month}", "2026-07"),
    ],
)
async def test_a_template_matches_the_outer_uri_and_reads_with_its_variables(
    template: str, function: Callable[..., str], uri: str, outer_template: str, text: str
) -> None:
    child = Server("child")
    child.resource(template)(function)
    async with toolkit.Client(gateway(child)) as client:
        assert [t["uriTemplate"] for t in await client.list_resource_templates()] == [outer_template]
        (contents,) = await client.read_resource(uri)
    assert contents["uri"] == uri
    assert contents["text"].endswith(text)


async def test_without_a_namespace_the_names_are_the_childs() -> None:
    parent = gateway(billing_server(), None)

    @parent.tool
    def own() -> int:
        return 1

    async with toolkit.Client(parent) as client:
        assert await tool_names(client) == ["own", "charge"]
        assert (await client.call_tool("charge", {"amount": 2})).data == [2, 4]
        assert (await client.read_resource("data://invoices/8"))[0]["text"] == "invoice 8"
        assert (await client.get_prompt("remind", {"customer": "Bob"}))["messages"][0]["content"]["text"] == (
            "Remind Bob to pay."
        )
        completion = await client.complete({"type": "ref/prompt", "name": "remind"}, "customer", "b")
        assert completion["values"] == ["bob"]


@pytest.mark.parametrize("namespace", ["", "has space", "a/b", "-leading", "x" * 65, "ünicode"])
def test_a_namespace_must_fit_names_and_uris(namespace: str) -> None:
    with pytest.raises(RegistrationError, match="use letters, digits"):
        Server("parent").mount(billing_server(), namespace)


def test_a_template_starting_with_a_variable_is_mounted_only_without_a_namespace() -> None:
    child = Server("child")

    @child.resource("{scheme}://anything")
    def anything(scheme: str) -> str:
        return scheme

    with pytest.raises(RegistrationError, match="starts with a variable, so it has no scheme"):
        Server("parent").mount(child, "ns")
    assert list(gateway(child, None).registry.templates) == ["{scheme}://anything"]


async def test_a_template_the_namespace_cannot_name_added_later_is_left_out_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    child = billing_server()
    parent = gateway(child)

    @child.resource("{scheme}://anything")  # fine for the child itself
    def anything(scheme: str) -> str:
        return scheme

    assert "mounted server 'billing' (namespace 'billing') leaves out a template" in caplog.text

    @child.tool
    def later() -> int:
        return 1

    async with toolkit.Client(parent) as client:
        assert [t["uriTemplate"] for t in await client.list_resource_templates()] == [
            "data://billing/invoices/{number}"
        ]
        assert await tool_names(client) == ["billing_charge", "billing_later"], "later changes still arrive"
    async with toolkit.Client(child) as client:
        assert len(await client.list_resource_templates()) == 2


# --- output shaping --------------------------------------------------------------------------------


async def test_a_list_result_is_natural_for_2026_and_wrapped_for_2025_06_18() -> None:
    parent = gateway(billing_server())
    async with WireClient(parent, protocol_version=OLD) as old:
        (listed,) = (await old.result("tools/list"))["tools"]
        old_result = await old.call_tool("billing_charge", {"amount": 5})
    assert listed["outputSchema"] == {
        "type": "object",
        "properties": {"result": {"type": "array", "items": {"type": "integer"}}},
        "required": ["result"],
    }
    assert old_result["structuredContent"] == {"result": [5, 10]}
    assert_valid({"jsonrpc": "2.0", "id": 1, "result": old_result}, OLD, method="tools/call")

    async with WireClient(parent, protocol_version=MODERN) as modern:
        (listed,) = (await modern.result("tools/list"))["tools"]
        modern_result = await modern.call_tool("billing_charge", {"amount": 5})
    assert listed["outputSchema"] == {"type": "array", "items": {"type": "integer"}}
    assert modern_result["structuredContent"] == [5, 10]
    assert_valid({"jsonrpc": "2.0", "id": 1, "result": modern_result}, MODERN, method="tools/call")

    for version in (OLD, MODERN):
        async with toolkit.Client(parent, protocol_version=version) as client:
            assert (await client.call_tool("billing_charge", {"amount": 5})).data == [5, 10]


# --- nested mounts ---------------------------------------------------------------------------------


def three_levels() -> tuple[Server, Server, Server]:
    grandchild = Server("grandchild")

    @grandchild.tool
    def tool(ctx: Context) -> str:
        return ctx.server.name

    @grandchild.resource("data://rows/{row}")
    def row(row: str) -> str:
        return f"row {row}"

    @grandchild.resource("data://all")
    def everything() -> str:
        return "all rows"

    @grandchild.prompt
    def ask(topic: str) -> str:
        """Ask about a topic."""
        return f"Tell me about {topic}."

    @grandchild.completion(prompt="ask", argument="topic")
    def topics(value: str) -> list[str]:
        return [topic for topic in ("tides", "tea") if topic.startswith(value)]

    @grandchild.completion(resource="data://rows/{row}", argument="row")
    def rows(value: str) -> list[str]:
        return ["1", "2"]

    child = Server("child")
    child.mount(grandchild, "b")
    parent = Server("parent")
    parent.mount(child, "a")
    return parent, child, grandchild


async def test_nested_mounts_compose_the_namespaces() -> None:
    parent, _, _ = three_levels()
    async with toolkit.Client(parent) as client:
        assert await tool_names(client) == ["a_b_tool"]
        assert (await client.call_tool("a_b_tool")).text == "grandchild"
        assert [t["uriTemplate"] for t in await client.list_resource_templates()] == ["data://a/b/rows/{row}"]
        assert await client.read_resource("data://a/b/rows/3") == [
            {"uri": "data://a/b/rows/3", "mimeType": "text/plain", "text": "row 3"}
        ]
        assert await client.read_resource("data://a/b/all") == [
            {"uri": "data://a/b/all", "mimeType": "text/plain", "text": "all rows"}
        ]
        assert [p["name"] for p in await client.list_prompts()] == ["a_b_ask"]
        prompt = await client.get_prompt("a_b_ask", {"topic": "tides"})
        assert prompt["messages"][0]["content"]["text"] == "Tell me about tides."
        by_prompt = await client.complete({"type": "ref/prompt", "name": "a_b_ask"}, "topic", "t")
        assert by_prompt["values"] == ["tides", "tea"]
        by_template = await client.complete({"type": "ref/resource", "uri": "data://a/b/rows/{row}"}, "row", "")
        assert by_template["values"] == ["1", "2"]


async def test_a_middle_servers_completer_for_its_mounted_prompt_comes_first() -> None:
    parent, child, _ = three_levels()

    @child.completion(prompt="b_ask", argument="topic")
    def chosen_by_the_child(value: str) -> list[str]:
        return ["the child's choice"]

    async with toolkit.Client(parent) as client:
        completion = await client.complete({"type": "ref/prompt", "name": "a_b_ask"}, "topic", "")
    assert completion["values"] == ["the child's choice"]


async def test_a_grandchild_mounted_after_the_child_was_mounted_appears() -> None:
    child = Server("child")
    parent = gateway(child, "a")
    grandchild = Server("grandchild")

    @grandchild.tool
    def late() -> str:
        return "late"

    child.mount(grandchild, "b")
    async with toolkit.Client(parent) as client:
        assert await tool_names(client) == ["a_b_late"]
        assert (await client.call_tool("a_b_late")).text == "late"


# --- live changes --------------------------------------------------------------------------------


async def test_a_tool_added_to_the_child_is_listed_and_a_removed_one_unlisted() -> None:
    child = billing_server()
    async with toolkit.Client(gateway(child)) as client:
        assert await tool_names(client) == ["billing_charge"]

        @child.tool
        def refund(amount: int) -> int:
            return -amount

        assert await tool_names(client) == ["billing_charge", "billing_refund"]
        assert (await client.call_tool("billing_refund", {"amount": 4})).data == -4
        child.remove_tool("refund")
        assert await tool_names(client) == ["billing_charge"]
        with pytest.raises(ClientError, match="Unknown tool: 'billing_refund'"):
            await client.call_tool("billing_refund", {"amount": 4})

        @child.prompt
        def thanks() -> str:
            """Thank the customer."""
            return "Thanks!"

        child.remove_resource("data://invoices")
        assert [p["name"] for p in await client.list_prompts()] == ["billing_remind", "billing_thanks"]
        assert await client.list_resources() == []


@pytest.mark.parametrize("version", [LEGACY, OLD])
async def test_a_legacy_client_hears_list_changed_when_the_child_changes(version: str) -> None:
    child = billing_server()
    heard: list[str] = []
    async with toolkit.Client(
        gateway(child), protocol_version=version, on_notification=lambda message: heard.append(message["method"])
    ) as client:
        await client.list_tools()

        @child.tool
        def refund(amount: int) -> int:
            return -amount

        await wait_until(lambda: "notifications/tools/list_changed" in heard)
        assert "billing_refund" in await tool_names(client)

        @child.prompt
        def thanks() -> str:
            return "Thanks!"

        child.remove_tool("refund")
        await wait_until(lambda: heard.count("notifications/tools/list_changed") == 2)
        await wait_until(lambda: "notifications/prompts/list_changed" in heard)
        assert "billing_refund" not in await tool_names(client)


async def test_a_modern_client_hears_through_subscriptions_listen() -> None:
    child = billing_server()
    async with toolkit.Client(gateway(child)) as client:
        async with await client.listen(tools=True, prompts=True) as subscription:
            assert subscription.acknowledged is not None

            @child.tool
            def refund(amount: int) -> int:
                return -amount

            assert (await next_message(subscription))["method"] == "notifications/tools/list_changed"
            child.remove_tool("refund")
            assert (await next_message(subscription))["method"] == "notifications/tools/list_changed"

            @child.prompt
            def thanks() -> str:
                return "Thanks!"

            assert (await next_message(subscription))["method"] == "notifications/prompts/list_changed"
        assert await tool_names(client) == ["billing_charge"]


async def test_a_change_two_levels_down_reaches_the_top() -> None:
    parent, _, grandchild = three_levels()
    heard: list[str] = []
    async with toolkit.Client(
        parent, protocol_version=LEGACY, on_notification=lambda message: heard.append(message["method"])
    ) as client:

        @grandchild.tool
        def deeper() -> int:
            return 2

        await wait_until(lambda: "notifications/tools/list_changed" in heard)
        assert await tool_names(client) == ["a_b_tool", "a_b_deeper"]
        assert (await client.call_tool("a_b_deeper")).data == 2


@pytest.mark.parametrize("version", [MODERN, LEGACY])
async def test_a_resource_update_on_the_child_reaches_the_parents_subscriber_with_the_outer_uri(version: str) -> None:
    child = billing_server()
    parent = gateway(child)
    async with (
        toolkit.Client(parent, protocol_version=version) as client,
        await client.listen(resources=["data://billing/invoices/7"]) as subscription,
    ):
        await child.notify_resource_updated("data://invoices/8")  # not subscribed to
        await child.notify_resource_updated("data://invoices/7")
        update = await next_message(subscription)
    assert update["method"] == "notifications/resources/updated"
    assert update["params"]["uri"] == "data://billing/invoices/7"


async def test_a_resource_update_two_levels_down_names_the_uri_the_top_serves() -> None:
    parent, _, grandchild = three_levels()
    async with toolkit.Client(parent) as client, await client.listen(resources=["data://a/b/all"]) as subscription:
        await grandchild.notify_resource_updated("data://all")
        update = await next_message(subscription)
    assert update["params"]["uri"] == "data://a/b/all"


# --- clashes and refusals ------------------------------------------------------------------------


def test_a_parent_tool_clashing_with_a_childs_namespaced_tool_is_refused_naming_both() -> None:
    parent = Server("gateway")

    @parent.tool
    def billing_charge() -> int:
        return 0

    with pytest.raises(RegistrationError) as refused:
        parent.mount(billing_server(), "billing")
    assert str(refused.value) == (
        "mounted server 'billing' (namespace 'billing') offers the tool 'billing_charge', which this server "
        "already offers; rename one of them (or mount under a namespace)"
    )
    assert parent.mounted == []


@pytest.mark.parametrize(
    ("add", "what"),
    [
        (lambda s: s.tool(name="same")(lambda: 1), "the tool 'same'"),
        (lambda s: s.prompt(name="same")(lambda: "hi"), "the prompt 'same'"),
        (lambda s: s.resource("data://same")(lambda: "x"), "the resource 'data://same'"),
        (lambda s: s.resource("data://same/{id}")(lambda id: id), "the resource template 'data://same/{id}'"),
    ],
)
def test_two_children_offering_one_name_are_refused_naming_both(add: Callable[[Server], Any], what: str) -> None:
    first, second = Server("first"), Server("second")
    add(first)
    add(second)
    parent = Server("gateway")
    parent.mount(first)
    with pytest.raises(RegistrationError) as refused:
        parent.mount(second)
    assert str(refused.value).startswith(f"mounted server 'second' offers {what}, which mounted server 'first'")


def test_two_namespaces_that_compose_to_one_name_are_refused() -> None:
    first, second = Server("first"), Server("second")
    first.tool(name="b_c")(lambda: 1)
    second.tool(name="c")(lambda: 2)
    parent = Server("gateway")
    parent.mount(first, "a")
    with pytest.raises(RegistrationError, match="'second' \\(namespace 'a_b'\\) offers the tool 'a_b_c', which "):
        parent.mount(second, "a_b")


def test_a_local_tool_added_later_that_clashes_is_refused_naming_the_mount() -> None:
    parent = gateway(billing_server())
    with pytest.raises(RegistrationError, match="the tool 'billing_charge' is already offered by mounted server"):

        @parent.tool
        def billing_charge() -> int:
            return 0

    with pytest.raises(RegistrationError, match="the prompt 'billing_remind' is already offered by mounted server"):
        parent.prompt(name="billing_remind")(lambda: "hi")


async def test_a_child_tool_added_later_that_clashes_keeps_the_parents_and_warns(
    caplog: pytest.LogCaptureFixture,
) -> None:
    child = Server("child")
    parent = gateway(child, "c")

    @parent.tool
    def c_status() -> str:
        return "the parent's"

    @child.tool
    def status() -> str:
        return "the child's"

    assert "offers the tool 'c_status', which an earlier source offers: the earlier one is kept" in caplog.text
    async with toolkit.Client(parent) as client:
        assert (await client.call_tool("c_status")).text == "the parent's"


def test_a_cycle_and_a_self_mount_are_refused() -> None:
    parent, child, grandchild = three_levels()
    with pytest.raises(RegistrationError, match="server 'parent' cannot be mounted in itself"):
        parent.mount(parent, "me")
    with pytest.raises(RegistrationError, match=r"server 'parent' already mounts 'grandchild' .* would make a cycle"):
        grandchild.mount(parent, "up")
    with pytest.raises(RegistrationError, match="would make a cycle"):
        child.mount(parent)
    with pytest.raises(RegistrationError, match="server 'child' is already mounted in 'parent'"):
        parent.mount(child, "again")


def test_mount_takes_a_server() -> None:
    with pytest.raises(TypeError, match=r"mount\(\) takes a toolkit.Server.*, not int"):
        Server("parent").mount(42, "x")


async def test_a_refused_mount_leaves_the_parent_as_it_was() -> None:
    parent = Server("gateway")
    parent.tool(name="billing_charge")(lambda: 0)
    child = billing_server()
    with pytest.raises(RegistrationError):
        parent.mount(child, "billing")

    @child.tool
    def later() -> int:
        return 1

    async with toolkit.Client(parent) as client:
        assert await tool_names(client) == ["billing_charge"]
        assert client.server_capabilities is not None
        assert "prompts" not in client.server_capabilities, "none of the child's prompts came along"


# --- include / exclude ---------------------------------------------------------------------------


async def test_include_keeps_only_the_named_components_by_the_childs_own_names() -> None:
    child = billing_server()
    child.tool(name="void")(lambda: 0)
    parent = gateway(child, include=["charge", "data://invoices/{number}", "remind"])
    async with toolkit.Client(parent) as client:
        assert await tool_names(client) == ["billing_charge"]
        assert await client.list_resources() == []
        assert [t["uriTemplate"] for t in await client.list_resource_templates()] == [
            "data://billing/invoices/{number}"
        ]
        assert [p["name"] for p in await client.list_prompts()] == ["billing_remind"]
        with pytest.raises(ClientError, match="Unknown tool"):
            await client.call_tool("billing_void")

        child.tool(name="added_later")(lambda: 0)  # not included: stays out
        assert await tool_names(client) == ["billing_charge"]


async def test_exclude_leaves_out_the_named_components() -> None:
    child = billing_server()
    child.tool(name="void")(lambda: 0)
    parent = gateway(child, exclude=["void", "data://invoices"])
    async with toolkit.Client(parent) as client:
        assert await tool_names(client) == ["billing_charge"]
        assert await client.list_resources() == []
        assert len(await client.list_resource_templates()) == 1
        with pytest.raises(toolkit.ToolkitError):
            await client.read_resource("data://billing/invoices")

        child.tool(name="added_later")(lambda: 0)  # not excluded: appears
        assert await tool_names(client) == ["billing_charge", "billing_added_later"]


async def test_exclude_wins_over_include() -> None:
    parent = gateway(billing_server(), include=["charge", "remind"], exclude=["charge"])
    async with toolkit.Client(parent) as client:
        assert await tool_names(client) == []
        assert [p["name"] for p in await client.list_prompts()] == ["billing_remind"]


def test_include_and_exclude_take_lists_not_a_string() -> None:
    with pytest.raises(TypeError, match=r"include= and exclude= take lists of names"):
        gateway(billing_server(), include="charge")
    with pytest.raises(TypeError, match=r"include= and exclude= take lists of names"):
        gateway(billing_server(), exclude="charge")


def test_a_clash_with_an_excluded_component_is_no_clash() -> None:
    parent = Server("gateway")
    parent.tool(name="billing_charge")(lambda: 0)
    parent.mount(billing_server(), "billing", exclude=["charge"])
    assert list(parent.registry.tools) == ["billing_charge"]


# --- the child's own: ctx.server, lifespan, middleware -----------------------------------------


async def test_ctx_server_and_ctx_lifespan_are_the_childs() -> None:
    @contextlib.asynccontextmanager
    async def child_life(server: Server) -> AsyncIterator[str]:
        yield f"{server.name}'s state"

    @contextlib.asynccontextmanager
    async def parent_life(server: Server) -> AsyncIterator[str]:
        yield "the parent's state"

    child = Server("child", lifespan=child_life)

    @child.tool
    def where(ctx: Context) -> dict[str, Any]:
        return {"server": ctx.server.name, "lifespan": ctx.lifespan}

    @child.resource("data://where")
    def where_read(ctx: Context) -> str:
        return f"{ctx.server.name}: {ctx.lifespan}"

    @child.prompt
    def where_prompt(ctx: Context) -> str:
        return f"{ctx.server.name}: {ctx.lifespan}"

    parent = Server("parent", lifespan=parent_life)
    parent.mount(child, "c")
    async with toolkit.Client(parent) as client:
        assert (await client.call_tool("c_where")).data == {"server": "child", "lifespan": "child's state"}
        assert (await client.read_resource("data://c/where"))[0]["text"] == "child: child's state"
        prompt = await client.get_prompt("c_where_prompt")
        assert prompt["messages"][0]["content"]["text"] == "child: child's state"


async def test_lifespans_are_entered_children_first_and_exited_children_last() -> None:
    events: list[str] = []

    def life(label: str) -> Any:
        @contextlib.asynccontextmanager
        async def lifespan(server: Server) -> AsyncIterator[str]:
            events.append(f"enter {label}")
            yield label
            events.append(f"exit {label}")

        return lifespan

    grandchild = Server("grandchild", lifespan=life("grandchild"))
    first = Server("first", lifespan=life("first"))
    second = Server("second")  # no lifespan of its own, one below it
    second.mount(grandchild, "g")
    parent = Server("parent", lifespan=life("parent"))
    parent.mount(first, "f")
    parent.mount(second, "s")
    async with toolkit.Client(parent) as client:
        await client.ping()
        assert events == ["enter first", "enter grandchild", "enter parent"]
    assert events == [
        "enter first",
        "enter grandchild",
        "enter parent",
        "exit parent",
        "exit grandchild",
        "exit first",
    ]


async def test_a_child_mounted_in_two_parents_keeps_one_lifespan_while_either_runs() -> None:
    entered: list[str] = []

    @contextlib.asynccontextmanager
    async def child_life(server: Server) -> AsyncIterator[str]:
        entered.append("enter")
        yield "open"

    child = Server("child", lifespan=child_life)

    @child.tool
    def state(ctx: Context) -> str:
        return str(ctx.lifespan)

    first, second = gateway(child, "c"), gateway(child, "c")
    async with toolkit.Client(first) as one:
        async with toolkit.Client(second) as two:
            assert (await two.call_tool("c_state")).text == "open"
        assert (await one.call_tool("c_state")).text == "open", "the other parent still runs"
    assert entered == ["enter"]


class Record(Middleware):
    """Records the tool each ``on_call_tool`` sees, on the way in and out."""

    def __init__(self, label: str, seen: list[str]) -> None:
        self.label = label
        self.seen = seen

    async def on_call_tool(self, request: McpRequest, call_next: CallNext[ToolResult]) -> ToolResult:
        self.seen.append(f"{self.label} > {request.name}")
        result = await call_next(request)
        self.seen.append(f"{self.label} < {request.name}")
        return result


async def test_the_childs_on_call_tool_runs_inside_the_parents() -> None:
    seen: list[str] = []
    parent, child, grandchild = three_levels()
    parent.add_middleware(Record("parent", seen))
    child.add_middleware(Record("child", seen))
    grandchild.add_middleware(Record("grandchild", seen))
    async with toolkit.Client(parent) as client:
        assert (await client.call_tool("a_b_tool")).text == "grandchild"
    assert seen == [
        "parent > a_b_tool",
        "child > b_tool",
        "grandchild > tool",
        "grandchild < tool",
        "child < b_tool",
        "parent < a_b_tool",
    ]


async def test_the_childs_middleware_may_rewrite_the_arguments_and_refuse_a_call() -> None:
    child = billing_server()

    class Double(Middleware):
        async def on_call_tool(self, request: McpRequest, call_next: CallNext[ToolResult]) -> ToolResult:
            if request.arguments.get("amount") == 13:
                raise ToolError("13 is unlucky")
            if request.arguments.get("amount") == 99:
                request.arguments = {"amount": "not a number"}
            else:
                request.arguments = {"amount": request.arguments["amount"] * 10}
            return await call_next(request)

    child.add_middleware(Double())
    async with toolkit.Client(gateway(child), raise_on_error=False) as client:
        assert (await client.call_tool("billing_charge", {"amount": 2})).data == [20, 40]
        refused = await client.call_tool("billing_charge", {"amount": 13})
        assert refused.is_error and refused.text == "13 is unlucky"
        broken = await client.call_tool("billing_charge", {"amount": 99})
        assert broken.is_error and broken.text.startswith("Invalid arguments for tool 'charge'")


async def test_the_parents_middleware_and_the_childs_see_their_own_results() -> None:
    child = billing_server()

    class Stamp(Middleware):
        def __init__(self, key: str) -> None:
            self.key = key

        async def on_call_tool(self, request: McpRequest, call_next: CallNext[ToolResult]) -> ToolResult:
            result = await call_next(request)
            result.meta = {**(result.meta or {}), self.key: request.name}
            return result

    child.add_middleware(Stamp("child"))
    parent = gateway(child)
    parent.add_middleware(Stamp("parent"))
    async with toolkit.Client(parent) as client:
        result = await client.call_tool("billing_charge", {"amount": 1})
    assert result.meta is not None
    assert (result.meta["child"], result.meta["parent"]) == ("charge", "billing_charge")
    assert result.data == [1, 2]


# --- errors ---------------------------------------------------------------------------------------


def failing_child(**options: Any) -> Server:
    child = Server("child", **options)

    @child.tool
    def crash() -> int:
        raise RuntimeError("the database password is hunter2")

    @child.tool
    def refuse() -> int:
        raise ToolError("you may not do that")

    @child.tool
    def typed(count: int) -> int:
        return count

    @child.resource("data://broken")
    def broken() -> str:
        raise ResourceError("the disk is gone")

    @child.resource("data://crashing")
    def crashing() -> str:
        raise RuntimeError("hunter2")

    @child.prompt
    def picky(word: str) -> str:
        raise PromptError(f"{word!r} is not a word I take")

    return child


async def test_a_childs_errors_reach_the_caller_as_its_own_would() -> None:
    async with toolkit.Client(gateway(failing_child(), "c"), raise_on_error=False) as client:
        crashed = await client.call_tool("c_crash")
        assert crashed.is_error
        assert "hunter2" not in crashed.text
        assert crashed.text.startswith("Error executing tool")
        refused = await client.call_tool("c_refuse")
        assert refused.is_error and refused.text == "you may not do that"
        invalid = await client.call_tool("c_typed", {"count": "many"})
        assert invalid.is_error
        assert invalid.text.startswith("Invalid arguments for tool")
        assert 'arguments/count: "many" is not of type "integer"' in invalid.text
        with pytest.raises(ClientError, match="the disk is gone"):
            await client.read_resource("data://c/broken")
        with pytest.raises(ClientError) as masked:
            await client.read_resource("data://c/crashing")
        assert masked.value.error["message"] == "Error reading resource data://c/crashing"
        with pytest.raises(ClientError, match="'tea' is not a word I take") as picky:
            await client.get_prompt("c_picky", {"word": "tea"})
        assert picky.value.code == -32602


async def test_an_unmasked_childs_exception_text_is_shown() -> None:
    async with toolkit.Client(gateway(failing_child(mask_errors=False), "c"), raise_on_error=False) as client:
        crashed = await client.call_tool("c_crash")
    assert crashed.is_error
    assert "the database password is hunter2" in crashed.text


# --- questions and tasks ----------------------------------------------------------------------------


def asking_child() -> Server:
    child = Server("child")

    @child.tool
    async def greet(ctx: Context) -> str:
        name = await ctx.elicit("Your name?", Name)
        sure = await ctx.elicit("Greet them?", Confirm)
        assert name.data is not None and sure.data is not None
        return f"hello {name.data.name}" if sure.data.confirm else "no greeting"

    @child.resource("data://secret")
    async def secret(ctx: Context) -> str:
        answer = await ctx.elicit("Your name?", Name)
        return f"the secret, for {answer.data.name}" if answer.data is not None else "nothing"

    @child.prompt
    async def personal(ctx: Context) -> str:
        answer = await ctx.elicit("Your name?", Name)
        return f"Write to {answer.data.name}." if answer.data is not None else "Write."

    return child


@pytest.mark.parametrize("version", [LEGACY, OLD])
async def test_a_mounted_tool_asks_the_legacy_client_and_its_handler_answers(version: str) -> None:
    asked: list[str] = []

    def answer(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params["message"])
        return yes(params)

    async with toolkit.Client(gateway(asking_child(), "c"), protocol_version=version, elicitation=answer) as client:
        assert (await client.call_tool("c_greet")).text == "hello Ada"
        assert (await client.read_resource("data://c/secret"))[0]["text"] == "the secret, for Ada"
        prompt = await client.get_prompt("c_personal")
        assert prompt["messages"][0]["content"]["text"] == "Write to Ada."
    assert asked == ["Your name?", "Greet them?", "Your name?", "Your name?"]


async def test_a_mounted_tool_asks_a_2026_client_in_input_required_rounds() -> None:
    parent = gateway(asking_child(), "c")
    async with WireClient(parent, capabilities={"elicitation": {}}, elicitation=yes) as client:
        params: dict[str, Any] = {"name": "c_greet", "arguments": {}}
        messages = []
        for _ in range(2):
            round_ = await client.follow_input("tools/call", params, follow=False)
            assert_valid({"jsonrpc": "2.0", "id": 1, "result": round_}, MODERN, method="tools/call")
            assert round_["resultType"] == "input_required"
            ((key, question),) = round_["inputRequests"].items()
            messages.append(question["params"]["message"])
            params = {
                **params,
                "inputResponses": {key: yes(question["params"])},
                "requestState": round_["requestState"],
            }
        done = await client.follow_input("tools/call", params, follow=False)
        assert done["resultType"] == "complete"
        assert done["content"] == [{"type": "text", "text": "hello Ada"}]
        assert messages == ["Your name?", "Greet them?"]

        read = await client.read_resource("data://c/secret")  # the rounds followed for us
        assert read["contents"][0] == {
            "uri": "data://c/secret",
            "mimeType": "text/plain",
            "text": "the secret, for Ada",
        }
        prompt = await client.get_prompt("c_personal")
        assert prompt["messages"][0]["content"]["text"] == "Write to Ada."


async def test_a_state_sealed_for_a_mounted_tool_is_refused_for_another_name() -> None:
    child = asking_child()

    @child.tool
    async def other(ctx: Context) -> str:
        name = await ctx.elicit("Your name?", Name)
        return f"other {name.data}"

    parent = gateway(child, "c")
    async with WireClient(parent, capabilities={"elicitation": {}}) as client:
        first = await client.follow_input("tools/call", {"name": "c_greet", "arguments": {}}, follow=False)
        replay = {
            "name": "c_other",
            "arguments": {},
            "inputResponses": {"elicitation-1": {"action": "accept", "content": {"name": "Eve"}}},
            "requestState": first["requestState"],
        }
        response = await client.request("tools/call", replay)
    assert "error" in response, response


class Counter:
    def __init__(self) -> None:
        self.runs = 0


def task_child(counter: Counter) -> Server:
    child = Server("child")

    @child.tool(task="optional")
    async def build(n: int, ctx: Context) -> list[int]:
        """Takes a while."""
        counter.runs += 1
        await ctx.report_progress(1, 2, "half way")
        await asyncio.sleep(0.01)
        return [n, n * 2, len(ctx.server.name)]

    @child.tool(task="required")
    async def purge(ctx: Context) -> str:
        """Asks first, as a task."""
        answer = await ctx.elicit("Purge?", Confirm)
        return "purged" if answer.data is not None and answer.data.confirm else "kept"

    return child


@pytest.mark.parametrize("version", [MODERN, LEGACY])
async def test_a_mounted_tool_runs_as_a_task(version: str) -> None:
    counter = Counter()
    parent = gateway(task_child(counter), "c")
    async with toolkit.Client(parent, protocol_version=version, elicitation=yes) as client:
        handle = await client.call_tool_as_task("c_build", {"n": 4})
        assert handle.task_id
        result = await client.task_result(handle)
        assert result.data == [4, 8, 5]
        assert (await handle.refresh())["status"] == "completed"
        purged = await client.task_result(await client.call_tool_as_task("c_purge"))
        assert purged.text == "purged"
    assert counter.runs == 1


# --- over the real wire: stdio --------------------------------------------------------------------


@pytest.mark.parametrize("version", [MODERN, LEGACY])
async def test_a_gateway_of_two_servers_over_stdio(version: str) -> None:
    heard: list[str] = []
    async with toolkit.Client(
        TOOLKIT_RUN,
        protocol_version=version,
        elicitation=yes,
        on_notification=lambda message: heard.append(message["method"]),
    ) as client:
        assert await tool_names(client) == [
            "add_city",
            "billing_charge",
            "billing_whoami",
            "billing_refund",
            "weather_temperatures",
        ]
        charged = await client.call_tool("billing_charge", {"amount": 3})
        assert charged.data == [3, 6]
        assert charged.structured_content == ([3, 6] if version == MODERN else {"result": [3, 6]})
        assert charged.meta is not None and charged.meta["billing/stamp"] == "charge"  # billing's middleware
        assert (await client.call_tool("billing_whoami")).data == {"server": "billing", "lifespan": {"ledger": "open"}}
        assert (await client.call_tool("billing_refund", {"amount": 3})).text == "refunded 3"
        assert (await client.call_tool("weather_temperatures", {"city": "Paris"})).data == [61, 63, 66]
        assert (await client.read_resource("data://billing/invoices/7"))[0] == {
            "uri": "data://billing/invoices/7",
            "mimeType": "text/plain",
            "text": "invoice 7",
        }
        assert (await client.read_resource("weather://weather/today"))[0]["text"] == "sunny"
        completion = await client.complete(
            {"type": "ref/resource", "uri": "data://billing/invoices/{number}"}, "number", "1"
        )
        assert completion["values"] == ["17"]
        prompt = await client.get_prompt("billing_remind", {"customer": "Ada"})
        assert prompt["messages"][0]["content"]["text"] == "Remind Ada to pay."

        await client.call_tool("add_city", {"city": "paris"})
        if version == LEGACY:  # the session hears of it; a stateless client lists again
            await wait_until(lambda: "notifications/tools/list_changed" in heard)
        assert "weather_temperature_paris" in await tool_names(client)
        assert (await client.call_tool("weather_temperature_paris")).data == 70


@pytest.mark.parametrize("version", [MODERN, LEGACY])
def test_every_message_a_gateway_sends_over_stdio_is_valid(stdio_client: Any, version: str) -> None:
    client: StdioClient = stdio_client(f"{APP}:server")
    client.use_era(version)
    assert len(client.result("tools/list")["tools"]) == 5
    client.call_tool("billing_charge", {"amount": 1})
    client.call_tool("billing_whoami")
    client.result("resources/templates/list")
    client.result("resources/read", {"uri": "data://billing/invoices/8"})
    client.result("prompts/list")
    client.result("prompts/get", {"name": "billing_remind", "arguments": {"customer": "Ada"}})
    client.call_tool("add_city", {"city": "oslo"})
    if version == LEGACY:
        client.wait_for(lambda m: m.get("method") == "notifications/tools/list_changed")
    client.assert_all_valid(version)


# --- over the real wire: HTTP ----------------------------------------------------------------------


@pytest.mark.parametrize("version", [MODERN, LEGACY])
async def test_a_gateway_over_http(version: str) -> None:
    child = billing_server()
    parent = gateway(child)
    parent.mount(asking_child(), "ask")
    heard: list[str] = []
    async with (
        serve(parent) as running,
        toolkit.Client(
            running.url,
            protocol_version=version,
            elicitation=yes,
            on_notification=lambda message: heard.append(message["method"]),
        ) as client,
    ):
        assert await tool_names(client) == ["billing_charge", "ask_greet"]
        charged = await client.call_tool("billing_charge", {"amount": 2})
        assert charged.data == [2, 4]
        assert charged.structured_content == ([2, 4] if version == MODERN else {"result": [2, 4]})
        assert (await client.call_tool("ask_greet")).text == "hello Ada"
        assert (await client.read_resource("data://billing/invoices/8"))[0]["uri"] == "data://billing/invoices/8"

        @child.tool
        def refund(amount: int) -> int:
            return -amount

        if version == LEGACY:  # over the session's GET stream
            await wait_until(lambda: "notifications/tools/list_changed" in heard)
        assert (await client.call_tool("billing_refund", {"amount": 2})).data == -2


def secure_gateway(issuer: TokenIssuer) -> tuple[Server, Server]:
    child = Server("billing")

    @child.tool(scopes=["billing:write"])
    def charge(amount: int, ctx: Context) -> dict[str, Any]:
        """Needs billing:write."""
        token = ctx.access_token
        assert token is not None
        return {"amount": amount, "caller": token.subject, "server": ctx.server.name}

    @child.tool
    def rates() -> list[float]:
        """Open to every caller."""
        return [0.2, 0.1]

    @child.resource("data://ledger", scopes=["billing:read"])
    def ledger() -> str:
        return "the ledger"

    parent = Server("gateway", auth=issuer.verifier(), authorization_servers=[issuer.issuer])
    parent.mount(child, "billing")
    return parent, child


@pytest.mark.parametrize("version", [MODERN, LEGACY])
async def test_a_mounted_tools_scopes_are_enforced_by_the_parents_auth(version: str) -> None:
    issuer = TokenIssuer(audience="http://127.0.0.1/mcp")
    parent, _ = secure_gateway(issuer)
    async with serve(parent) as running:
        reader = issuer.token(subject="bob", scopes=[])
        async with toolkit.Client(running.url, auth=reader, protocol_version=version) as client:
            assert await tool_names(client) == ["billing_rates"]
            assert await client.list_resources() == []
            assert (await client.call_tool("billing_rates")).data == [0.2, 0.1]
        with pytest.raises(ClientError, match="needs the scope"):
            async with toolkit.Client(running.url, auth=reader, protocol_version=version) as client:
                await client.call_tool("billing_charge", {"amount": 1})

        writer = issuer.token(subject="alice", scopes=["billing:write"])
        async with toolkit.Client(running.url, auth=writer, protocol_version=version) as client:
            assert await tool_names(client) == ["billing_charge", "billing_rates"]
            charged = await client.call_tool("billing_charge", {"amount": 5})
            assert charged.data == {"amount": 5, "caller": "alice", "server": "billing"}


async def test_a_host_app_that_skips_the_lifespan_is_told_when_only_a_child_has_one() -> None:
    @contextlib.asynccontextmanager
    async def child_life(server: Server) -> AsyncIterator[str]:
        yield "open"

    child = Server("child", lifespan=child_life)

    @child.tool
    def state(ctx: Context) -> str:
        return str(ctx.lifespan)

    parent = gateway(child, "c")
    host = Starlette(routes=[Mount("/ai", app=parent.http_app())])  # no lifespan=...: the user forgot it
    async with serve(host) as running:
        with pytest.raises(toolkit.ToolkitError, match="lifespan has not started"):
            async with toolkit.Client(running.base + "/ai/mcp", raise_on_error=False) as client:
                await client.call_tool("c_state")


def test_mounting_logs_no_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="toolkit"):
        gateway(billing_server())
    assert [record for record in caplog.records if record.levelno >= logging.WARNING] == []


async def test_mounting_into_a_running_server_is_refused_saying_when_to_mount() -> None:
    parent, child = Server("parent"), Server("late-child")

    @child.tool
    def ping() -> str:
        return "pong"

    async with toolkit.Client(parent):
        with pytest.raises(RegistrationError, match=r"mount server 'late-child' in 'parent' before it starts serving"):
            parent.mount(child, "late")
        with pytest.raises(RegistrationError, match=r"mount a proxied server in 'parent' before it starts serving"):
            parent.mount(toolkit.Client(child), "late")
    parent.mount(child, "late")  # stopped again: fine
    async with toolkit.Client(parent) as client:
        assert (await client.call_tool("late_ping", {})).text == "pong"


def test_a_nested_request_has_every_slot_of_its_parent() -> None:
    """``InboundRequest.nested`` copies slot by slot: a slot added later must be copied too."""
    from toolkit._inbound import InboundRequest

    async def send(message: dict[str, object]) -> None:
        return None

    parent = InboundRequest(1, "tools/call", {"name": "a_b"}, "2026-07-28", True, {}, None, send)
    nested = parent.nested({"name": "b"}, {})
    for slot in InboundRequest.__slots__:
        if slot not in ("params", "extras"):
            assert getattr(nested, slot) is getattr(parent, slot), slot
    assert (nested.params, nested.extras) == ({"name": "b"}, {})
