"""Resources, resource templates, prompts and completions, in both eras."""

from __future__ import annotations

import base64
from enum import Enum
from typing import Annotated, Literal

import pytest
from pydantic import Field
from tests.wire import assert_valid

from toolkit import EmbeddedResource, Image, Message, RegistrationError, ResourceContents, ResourceError, Server
from toolkit.testing import Client

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)
VERSIONS = ("2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")


class Tone(Enum):
    FORMAL = "formal"
    CASUAL = "casual"


def make_server() -> Server:
    server = Server("library")

    @server.resource("test://static-text", mime_type="text/plain", description="Plain text")
    def static_text() -> str:
        return "This is the content of the static text resource."

    @server.resource("test://static-binary", mime_type="image/png")
    def static_binary() -> bytes:
        return PNG

    @server.resource("test://json")
    def json_resource() -> dict[str, int]:
        return {"answer": 42}

    @server.resource("test://two-parts")
    def two_parts() -> list[ResourceContents]:
        return [ResourceContents(text="first"), ResourceContents(text="# second", mime_type="text/markdown")]

    @server.resource("test://template/{id}/data", mime_type="application/json", name="template-data")
    def template_data(id: int) -> dict[str, object]:
        """Data for one id."""
        return {"id": str(id), "templateTest": True, "data": f"Data for ID: {id}"}

    @server.resource("test://files/{+path}")
    def nested_file(path: str) -> str:
        return f"file at {path}"

    @server.resource("test://broken")
    def broken() -> str:
        raise ResourceError("the backing store is offline")

    @server.prompt
    def test_simple_prompt() -> str:
        """A prompt without arguments."""
        return "This is a simple prompt for testing."

    @server.prompt
    def test_prompt_with_arguments(
        arg1: Annotated[str, Field(description="First argument")], arg2: str, count: int = 1
    ) -> str:
        """A prompt with arguments.

        Args:
            arg2: Second argument.
        """
        return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}' x{count}"

    @server.prompt(name="conversation", title="A short conversation")
    def conversation(tone: Tone) -> list[Message]:
        """Several messages, with an embedded resource and an image."""
        return [
            Message(f"Answer in a {tone.value} tone."),
            Message(EmbeddedResource("test://static-text", text="Embedded text", mime_type="text/plain")),
            Message(Image(PNG, mime_type="image/png")),
            Message("Understood.", role="assistant"),
        ]

    @server.prompt
    def styled(style: Literal["short", "long", "lyrical"]) -> str:
        """Completes its argument from the Literal."""
        return style

    @server.completion(prompt="test_prompt_with_arguments", argument="arg1")
    def complete_arg1(value: str, arguments: dict[str, str]) -> list[str]:
        return [option for option in ("alpha", "beta", "alphabet") if option.startswith(value)]

    @server.completion(resource="test://template/{id}/data", argument="id")
    def complete_id(value: str) -> list[str]:
        return [str(number) for number in range(150) if str(number).startswith(value)]

    return server


@pytest.mark.parametrize("version", VERSIONS)
async def test_lists_and_reads(version: str) -> None:
    async with Client(make_server(), protocol_version=version) as client:
        listed = await client.request("resources/list")
        assert_valid(listed, version, method="resources/list")
        uris = [resource["uri"] for resource in listed["result"]["resources"]]
        assert uris == [
            "test://static-text",
            "test://static-binary",
            "test://json",
            "test://two-parts",
            "test://broken",
        ]
        assert listed["result"]["resources"][0] == {
            "uri": "test://static-text",
            "name": "static_text",
            "description": "Plain text",
            "mimeType": "text/plain",
        }
        templates = await client.request("resources/templates/list")
        assert_valid(templates, version, method="resources/templates/list")
        assert templates["result"]["resourceTemplates"][0] == {
            "uriTemplate": "test://template/{id}/data",
            "name": "template-data",
            "description": "Data for one id.",
            "mimeType": "application/json",
        }
        for uri in ("test://static-text", "test://static-binary", "test://json", "test://template/123/data"):
            read = await client.request("resources/read", {"uri": uri})
            assert_valid(read, version, method="resources/read")
        text = await client.result("resources/read", {"uri": "test://static-text"})
        assert text["contents"] == [
            {
                "uri": "test://static-text",
                "mimeType": "text/plain",
                "text": "This is the content of the static text resource.",
            }
        ]
        blob = await client.result("resources/read", {"uri": "test://static-binary"})
        assert base64.b64decode(blob["contents"][0]["blob"]) == PNG
        assert blob["contents"][0]["mimeType"] == "image/png"
        data = await client.result("resources/read", {"uri": "test://template/123/data"})
        assert data["contents"][0]["text"] == '{"id":"123","templateTest":true,"data":"Data for ID: 123"}'
        json_value = await client.result("resources/read", {"uri": "test://json"})
        assert json_value["contents"][0] == {
            "uri": "test://json",
            "mimeType": "application/json",
            "text": '{"answer":42}',
        }
        parts = await client.result("resources/read", {"uri": "test://two-parts"})
        assert [part.get("mimeType") for part in parts["contents"]] == [None, "text/markdown"]
        nested = await client.result("resources/read", {"uri": "test://files/a/b/c.txt"})
        assert nested["contents"][0]["text"] == "file at a/b/c.txt"
        if version == "2026-07-28":
            assert text["ttlMs"] == 0 and text["cacheScope"] == "private"
            assert listed["result"]["ttlMs"] == 60_000 and listed["result"]["cacheScope"] == "public"


@pytest.mark.parametrize("version", VERSIONS)
async def test_unknown_resource_errors_with_the_uri(version: str) -> None:
    async with Client(make_server(), protocol_version=version) as client:
        response = await client.request(
            "resources/read", {"uri": "test://nonexistent-resource-for-conformance-testing"}
        )
        assert_valid(response, version, method="resources/read")
        # 2026-07-28 says -32602 (resources.mdx, Error Handling); earlier versions said -32002.
        assert response["error"]["code"] == (-32602 if version == "2026-07-28" else -32002)
        assert response["error"]["data"] == {"uri": "test://nonexistent-resource-for-conformance-testing"}


async def test_resource_errors_and_bad_template_values() -> None:
    async with Client(make_server()) as client:
        broken = await client.request("resources/read", {"uri": "test://broken"})
        assert broken["error"]["code"] == -32603
        assert "offline" in broken["error"]["message"]
        bad = await client.request("resources/read", {"uri": "test://template/abc/data"})
        assert bad["error"]["code"] == -32602
        assert "id" in bad["error"]["message"]


@pytest.mark.parametrize("version", VERSIONS)
async def test_prompts(version: str) -> None:
    async with Client(make_server(), protocol_version=version) as client:
        listed = await client.request("prompts/list")
        assert_valid(listed, version, method="prompts/list")
        prompts = {prompt["name"]: prompt for prompt in listed["result"]["prompts"]}
        assert all(prompt["description"] for prompt in prompts.values())
        assert prompts["test_prompt_with_arguments"]["arguments"] == [
            {"name": "arg1", "description": "First argument", "required": True},
            {"name": "arg2", "description": "Second argument.", "required": True},
            {"name": "count", "required": False},
        ]
        simple = await client.request("prompts/get", {"name": "test_simple_prompt"})
        assert_valid(simple, version, method="prompts/get")
        assert simple["result"]["messages"] == [
            {"role": "user", "content": {"type": "text", "text": "This is a simple prompt for testing."}}
        ]
        with_args = await client.request(
            "prompts/get",
            {"name": "test_prompt_with_arguments", "arguments": {"arg1": "testValue1", "arg2": "v2", "count": "3"}},
        )
        assert_valid(with_args, version, method="prompts/get")
        assert (
            with_args["result"]["messages"][0]["content"]["text"]
            == "Prompt with arguments: arg1='testValue1', arg2='v2' x3"
        )
        conversation = await client.request("prompts/get", {"name": "conversation", "arguments": {"tone": "casual"}})
        assert_valid(conversation, version, method="prompts/get")
        kinds = [(message["role"], message["content"]["type"]) for message in conversation["result"]["messages"]]
        assert kinds == [("user", "text"), ("user", "resource"), ("user", "image"), ("assistant", "text")]


async def test_prompt_argument_errors_are_invalid_params() -> None:
    async with Client(make_server()) as client:
        missing = await client.request(
            "prompts/get", {"name": "test_prompt_with_arguments", "arguments": {"arg1": "x"}}
        )
        assert missing["error"]["code"] == -32602
        assert "arg2" in missing["error"]["message"]
        wrong = await client.request("prompts/get", {"name": "conversation", "arguments": {"tone": "rude"}})
        assert wrong["error"]["code"] == -32602
        unknown = await client.request("prompts/get", {"name": "nope"})
        assert unknown["error"]["code"] == -32602


@pytest.mark.parametrize("version", ("2026-07-28", "2025-11-25", "2025-03-26"))
async def test_completions(version: str) -> None:
    async with Client(make_server(), protocol_version=version) as client:
        ref = {"type": "ref/prompt", "name": "test_prompt_with_arguments"}
        response = await client.request(
            "completion/complete", {"ref": ref, "argument": {"name": "arg1", "value": "alp"}}
        )
        assert_valid(response, version, method="completion/complete")
        assert response["result"]["completion"] == {"values": ["alpha", "alphabet"], "total": 2, "hasMore": False}
        template = {"type": "ref/resource", "uri": "test://template/{id}/data"}
        many = await client.result("completion/complete", {"ref": template, "argument": {"name": "id", "value": ""}})
        assert len(many["completion"]["values"]) == 100
        assert many["completion"]["hasMore"] is True and many["completion"]["total"] == 150
        literal = await client.result(
            "completion/complete",
            {"ref": {"type": "ref/prompt", "name": "styled"}, "argument": {"name": "style", "value": "l"}},
        )
        assert literal["completion"]["values"] == ["long", "lyrical"]
        enum = await client.result(
            "completion/complete",
            {"ref": {"type": "ref/prompt", "name": "conversation"}, "argument": {"name": "tone", "value": ""}},
        )
        assert enum["completion"]["values"] == ["formal", "casual"]
        nothing = await client.result(
            "completion/complete",
            {"ref": {"type": "ref/prompt", "name": "test_simple_prompt"}, "argument": {"name": "x", "value": ""}},
        )
        assert nothing["completion"]["values"] == []
        unknown = await client.request(
            "completion/complete",
            {"ref": {"type": "ref/prompt", "name": "missing"}, "argument": {"name": "x", "value": ""}},
        )
        assert unknown["error"]["code"] == -32602


async def test_capabilities_follow_what_is_registered() -> None:
    bare = Server("bare")

    @bare.tool
    def only_tool() -> int:
        return 1

    async with Client(bare, protocol_version="2025-11-25") as client:
        assert client.initialize_result is not None
        assert set(client.initialize_result["capabilities"]) == {"tools", "logging"}
        assert (await client.request("prompts/list"))["error"]["code"] == -32601
        assert (await client.request("resources/list"))["error"]["code"] == -32601
    async with Client(make_server(), protocol_version="2025-11-25") as client:
        assert client.initialize_result is not None
        capabilities = client.initialize_result["capabilities"]
        assert capabilities["resources"] == {"subscribe": True, "listChanged": True}
        assert capabilities["prompts"] == {"listChanged": True}
        assert capabilities["completions"] == {}


async def test_subscribe_and_updates_for_legacy_sessions() -> None:
    server = make_server()
    async with Client(server, protocol_version="2025-11-25") as client:
        assert await client.result("resources/subscribe", {"uri": "test://static-text"}) == {}
        await server.notify_resource_updated("test://static-text")
        await server.notify_resource_updated("test://json")  # not subscribed
        updates = [m["params"]["uri"] for m in client.notifications if m["method"] == "notifications/resources/updated"]
        assert updates == ["test://static-text"]
        assert await client.result("resources/unsubscribe", {"uri": "test://static-text"}) == {}
        await server.notify_resource_updated("test://static-text")
        assert len([m for m in client.notifications if m["method"] == "notifications/resources/updated"]) == 1


def test_registration_errors_name_the_function() -> None:
    server = Server("errors")
    with pytest.raises(RegistrationError, match=r"takes parameters \['x'\]"):

        @server.resource("test://fixed")
        def needs_argument(x: str) -> str:
            return x

    with pytest.raises(RegistrationError, match="no parameter for"):

        @server.resource("test://{a}/{b}")
        def missing_variable(a: str) -> str:
            return a

    @server.resource("test://once")
    def once() -> str:
        return ""

    with pytest.raises(RegistrationError, match="already registered"):

        @server.resource("test://once")
        def twice() -> str:
            return ""
