"""Multi round-trip input (2026-07-28): input_required, inputResponses and sealed requestState."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from tests.wire import assert_valid

from toolkit import Context, Server
from toolkit.testing import Client

VERSION = "2026-07-28"
CAPABILITIES = {"elicitation": {}, "sampling": {}, "roots": {}}


def accept(content: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": content}


def make_server(secret: str | list[str] | None = None) -> tuple[Server, list[str]]:
    server = Server("mrtr", state_secret=secret)
    runs: list[str] = []

    @server.tool
    async def two_rounds(ctx: Context, greeting: str = "hi") -> str:
        runs.append("two_rounds")
        name = await ctx.elicit("Name?", {"type": "object", "properties": {"name": {"type": "string"}}}, key="name")
        color = await ctx.elicit("Color?", {"type": "object", "properties": {"color": {"type": "string"}}}, key="color")
        return f"{greeting} {name.data['name']} ({color.data['color']})"  # type: ignore[index]

    @server.tool
    async def all_at_once(ctx: Context) -> str:
        answer, completion, roots = await asyncio.gather(
            ctx.elicit("Ok?", {"type": "object", "properties": {"ok": {"type": "boolean"}}}, key="confirm"),
            ctx.sample("hello", key="llm"),
            ctx.list_roots(key="roots"),
        )
        return f"{answer.action} {completion.text} {len(roots)}"

    @server.tool
    async def adaptive(ctx: Context) -> str:
        if ctx.client_supports("elicitation"):
            return str((await ctx.elicit("Name?", {"type": "object", "properties": {}}, key="name")).action)
        return (await ctx.sample("Pick a name", key="llm")).text

    @server.prompt
    async def personal(ctx: Context) -> str:
        """A prompt that asks for context first."""
        answer = await ctx.elicit("Context?", {"type": "object", "properties": {"context": {"type": "string"}}})
        return f"Use this context: {answer.data['context']}"  # type: ignore[index]

    @server.resource("test://secret")
    async def secret_resource(ctx: Context) -> str:
        answer = await ctx.elicit("Password?", {"type": "object", "properties": {"password": {"type": "string"}}})
        return "open" if answer.accepted else "closed"

    return server, runs


async def call(client: Client, name: str, arguments: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    response = await client.request("tools/call", {"name": name, "arguments": arguments or {}, **extra})
    assert_valid(response, VERSION, method="tools/call")
    return response


async def test_several_rounds_carry_earlier_answers_in_the_state() -> None:
    server, runs = make_server()
    async with Client(server, capabilities=CAPABILITIES) as client:
        first = (await call(client, "two_rounds", {"greeting": "hey"}))["result"]
        assert first["resultType"] == "input_required"
        assert list(first["inputRequests"]) == ["name"]
        assert "ttlMs" not in first and "cacheScope" not in first
        second = (
            await call(
                client,
                "two_rounds",
                {"greeting": "hey"},
                inputResponses={"name": accept({"name": "Alice"})},
                requestState=first["requestState"],
            )
        )["result"]
        assert second["resultType"] == "input_required"
        assert list(second["inputRequests"]) == ["color"]
        assert second["requestState"] != first["requestState"]
        third = (
            await call(
                client,
                "two_rounds",
                {"greeting": "hey"},
                inputResponses={"color": accept({"color": "blue"})},
                requestState=second["requestState"],
            )
        )["result"]
        assert third["resultType"] == "complete"
        assert third["content"] == [{"type": "text", "text": "hey Alice (blue)"}]
        assert runs == ["two_rounds"] * 3  # the tool runs from the top each round


async def test_several_inputs_in_one_round() -> None:
    server, _ = make_server()
    async with Client(server, capabilities=CAPABILITIES) as client:
        first = (await call(client, "all_at_once"))["result"]
        assert first["resultType"] == "input_required"
        methods = {key: request["method"] for key, request in first["inputRequests"].items()}
        assert methods == {"confirm": "elicitation/create", "llm": "sampling/createMessage", "roots": "roots/list"}
        answers = {
            "confirm": accept({"ok": True}),
            "llm": {"role": "assistant", "content": {"type": "text", "text": "hey"}, "model": "m"},
            "roots": {"roots": [{"uri": "file:///a"}, {"uri": "file:///b"}]},
            "unrelated": {"ignored": True},
        }
        done = (await call(client, "all_at_once", inputResponses=answers, requestState=first["requestState"]))["result"]
        assert done["content"][0]["text"] == "accept hey 2"


async def test_the_capabilities_of_the_request_decide_what_is_asked() -> None:
    server, _ = make_server()
    async with Client(server, capabilities={"sampling": {}}) as client:
        first = (await call(client, "adaptive"))["result"]
        assert [request["method"] for request in first["inputRequests"].values()] == ["sampling/createMessage"]


@pytest.mark.parametrize(
    "responses",
    [
        {"wrong_key": accept({"name": "x"})},
        {"name": 12345},
        {"name": {"action": "maybe"}},
        None,
    ],
)
async def test_unusable_answers_are_asked_again(responses: Any) -> None:
    server, _ = make_server()
    async with Client(server, capabilities=CAPABILITIES) as client:
        first = (await call(client, "two_rounds"))["result"]
        again = (await call(client, "two_rounds", inputResponses=responses, requestState=first["requestState"]))[
            "result"
        ]
        assert again["resultType"] == "input_required"
        assert list(again["inputRequests"]) == ["name"]


async def test_tampered_state_is_a_json_rpc_error() -> None:
    server, _ = make_server()
    async with Client(server, capabilities=CAPABILITIES) as client:
        first = (await call(client, "two_rounds"))["result"]
        response = await call(
            client,
            "two_rounds",
            inputResponses={"name": accept({"name": "x"})},
            requestState=first["requestState"] + "-TAMPERED",
        )
        assert response["error"]["code"] == -32602
        assert "requestState" in response["error"]["message"]


async def test_state_is_bound_to_its_request() -> None:
    server, _ = make_server()
    async with Client(server, capabilities=CAPABILITIES) as client:
        first = (await call(client, "two_rounds", {"greeting": "hi"}))["result"]
        other_arguments = await call(
            client, "two_rounds", {"greeting": "bye"}, inputResponses={}, requestState=first["requestState"]
        )
        assert other_arguments["error"]["code"] == -32602
        other_tool = await call(client, "adaptive", inputResponses={}, requestState=first["requestState"])
        assert other_tool["error"]["code"] == -32602


async def test_state_expires(monkeypatch: pytest.MonkeyPatch) -> None:
    server, _ = make_server()
    async with Client(server, capabilities=CAPABILITIES) as client:
        first = (await call(client, "two_rounds"))["result"]
        later = time.time() + server.state_sealer.ttl_seconds + 1
        monkeypatch.setattr(time, "time", lambda: later)
        response = await call(client, "two_rounds", inputResponses={}, requestState=first["requestState"])
        assert response["error"]["code"] == -32602
        assert "expired" in response["error"]["message"]


async def test_replicas_sharing_a_secret_accept_each_others_state() -> None:
    one, _ = make_server("shared-secret")
    two, _ = make_server("shared-secret")
    three, _ = make_server("another-secret")
    async with Client(one, capabilities=CAPABILITIES) as first_client:
        state = (await call(first_client, "two_rounds"))["result"]["requestState"]
    async with Client(two, capabilities=CAPABILITIES) as second_client:
        result = (await call(second_client, "two_rounds", inputResponses={}, requestState=state))["result"]
        assert result["resultType"] == "input_required"  # verified, and asks again for the name
    async with Client(three, capabilities=CAPABILITIES) as third_client:
        assert (await call(third_client, "two_rounds", inputResponses={}, requestState=state))["error"][
            "code"
        ] == -32602


async def test_key_rotation_keeps_states_in_flight_working() -> None:
    before, _ = make_server("old-secret")
    during, _ = make_server(["new-secret", "old-secret"])  # the new key seals, the old one still opens
    after, _ = make_server("new-secret")  # the old key retired once its states expired
    async with Client(before, capabilities=CAPABILITIES) as client:
        old_state = (await call(client, "two_rounds"))["result"]["requestState"]
    async with Client(during, capabilities=CAPABILITIES) as client:
        answered = await call(
            client, "two_rounds", inputResponses={"name": accept({"name": "Ada"})}, requestState=old_state
        )
        new_state = answered["result"]["requestState"]  # sealed with the new key
        assert new_state.split(".")[1] != old_state.split(".")[1]
    async with Client(after, capabilities=CAPABILITIES) as client:
        done = await call(
            client, "two_rounds", inputResponses={"color": accept({"color": "red"})}, requestState=new_state
        )
        assert done["result"]["content"][0]["text"] == "hi Ada (red)"
        retired = await call(client, "two_rounds", inputResponses={}, requestState=old_state)
        assert retired["error"]["code"] == -32602
        assert "does not have" in retired["error"]["message"]


def test_state_secret_ring_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from toolkit._mrtr import StateSealer

    monkeypatch.setenv("TOOLKIT_STATE_SECRET", "new-secret old-secret")
    ring = StateSealer()
    sealed_by_old = StateSealer("old-secret").seal(method="tools/call", name="t", arguments={}, answers={"k": 1})
    assert ring.open(sealed_by_old, method="tools/call", name="t", arguments={}) == {"k": 1}
    with pytest.raises(ValueError, match="state_secret"):
        StateSealer([])


async def test_prompts_and_resources_can_ask_too() -> None:
    server, _ = make_server()
    context = {"action": "accept", "content": {"context": "test context"}}
    async with Client(server, elicitation=lambda params: context) as client:
        first = await client.request("prompts/get", {"name": "personal"})
        assert_valid(first, VERSION, method="prompts/get")
        assert first["result"]["resultType"] == "input_required"
        prompt = await client.get_prompt("personal")
        assert prompt["messages"][0]["content"]["text"] == "Use this context: test context"
        first_read = await client.request("resources/read", {"uri": "test://secret"})
        assert_valid(first_read, VERSION, method="resources/read")
        assert first_read["result"]["resultType"] == "input_required"
        assert (await client.read_resource("test://secret"))["contents"][0]["text"] == "open"


async def test_lists_never_ask_for_input() -> None:
    server, _ = make_server()
    async with Client(server, capabilities=CAPABILITIES) as client:
        for method in ("tools/list", "prompts/list", "resources/list"):
            result = await client.result(method)
            assert result["resultType"] == "complete"


def test_a_state_lives_at_least_its_ttl(monkeypatch: pytest.MonkeyPatch) -> None:
    """The expiry is a whole second rounded up: never shorter than ``ttl_seconds`` (a flake once)."""
    import toolkit._mrtr as mrtr

    sealer = mrtr.StateSealer("secret", ttl_seconds=1)
    monkeypatch.setattr(mrtr.time, "time", lambda: 100.99)
    state = sealer.seal(method="tools/call", name="t", arguments={}, answers={"k": 1})
    monkeypatch.setattr(mrtr.time, "time", lambda: 101.98)  # 0.99 s later: still inside its second
    assert sealer.open(state, method="tools/call", name="t", arguments={}) == {"k": 1}
    monkeypatch.setattr(mrtr.time, "time", lambda: 102.01)  # past 100.99 + 1, rounded up
    with pytest.raises(mrtr.McpError, match="expired"):
        sealer.open(state, method="tools/call", name="t", arguments={})
