"""The server the official MCP conformance suite (``@modelcontextprotocol/conformance``) tests.

Run it:  toolkit run examples/conformance_server.py --transport http --port 8000
Test it: scripts/conformance

Every tool, resource and prompt below has the exact name and behaviour a server scenario
of the suite expects, for both protocol eras: the same functions answer a 2025-11-25
session (elicitation, sampling and roots as requests to the client) and a stateless
2026-07-28 client (the same questions as multi round-trip ``input_required`` results).
"""

from __future__ import annotations

import asyncio
import base64
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from toolkit import (
    Audio,
    Context,
    EmbeddedResource,
    EventStore,
    Header,
    Image,
    McpError,
    Message,
    ResourceContents,
    Server,
    Text,
    ToolError,
)

server = Server(
    "toolkit-conformance-server",
    version="1.0.0",
    instructions="Fixture for the MCP conformance suite: every tool, resource and prompt is a test case.",
    event_store=EventStore(),
)

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
WAV = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
STEP = 0.05


# --- content ------------------------------------------------------------------------------------


@server.tool
def test_simple_text() -> str:
    """Returns a simple text response."""
    return "This is a simple text response for testing."


@server.tool
def test_image_content() -> Image:
    """Returns a 1x1 PNG image."""
    return Image(PNG, mime_type="image/png")


@server.tool
def test_audio_content() -> Audio:
    """Returns a short WAV clip."""
    return Audio(WAV, mime_type="audio/wav")


@server.tool
def test_embedded_resource() -> EmbeddedResource:
    """Returns an embedded text resource."""
    return EmbeddedResource(
        "test://embedded-resource", text="This is an embedded resource content.", mime_type="text/plain"
    )


@server.tool
def test_multiple_content_types() -> list[Text | Image | EmbeddedResource]:
    """Returns text, an image and an embedded resource together."""
    return [
        Text("Multiple content types test:"),
        Image(PNG, mime_type="image/png"),
        EmbeddedResource(
            "test://mixed-content-resource", text='{"test":"data","value":123}', mime_type="application/json"
        ),
    ]


@server.tool
def test_error_handling() -> str:
    """Always fails with a tool error."""
    raise ToolError("This tool intentionally returns an error for testing")


# --- logging, progress, polling -----------------------------------------------------------------


@server.tool
async def test_tool_with_logging(ctx: Context) -> str:
    """Sends three log messages while it runs."""
    await ctx.info("Tool execution started")
    await asyncio.sleep(STEP)
    await ctx.info("Tool processing data")
    await asyncio.sleep(STEP)
    await ctx.info("Tool execution completed")
    return "Tool with logging executed successfully"


@server.tool
async def test_logging_tool(ctx: Context) -> str:
    """Logs at info level; a client that did not ask for logs gets none."""
    await ctx.info("test_logging_tool ran")
    return "Logging tool executed"


@server.tool
async def test_tool_with_progress(ctx: Context) -> str:
    """Reports progress 0, 50 and 100 of 100."""
    for progress in (0, 50, 100):
        await ctx.report_progress(progress, 100, f"Completed step {progress // 50 + 1} of 3")
        await asyncio.sleep(STEP)
    return "Progress tool completed"


@server.tool
async def test_reconnection(ctx: Context) -> str:
    """Closes its SSE stream before answering; the client resumes with Last-Event-ID."""
    await asyncio.sleep(STEP)
    await ctx.close_stream()
    await asyncio.sleep(0.2)
    return "Reconnection test completed"


# --- input from the client (requests on 2025-x, input_required on 2026-07-28) ---------------------


class Name(BaseModel):
    name: str


class Confirm(BaseModel):
    ok: bool


class Color(BaseModel):
    color: str


class PromptContext(BaseModel):
    context: str


class Contact(BaseModel):
    username: str = Field(description="Your username")
    email: str = Field(description="Your email address")


@server.tool
async def test_sampling(prompt: str, ctx: Context) -> str:
    """Asks the client's LLM to answer the prompt."""
    answer = await ctx.sample(prompt, max_tokens=100)
    return f"LLM response: {answer.text}"


@server.tool
async def test_elicitation(message: str, ctx: Context) -> str:
    """Asks the user for a username and an email."""
    answer = await ctx.elicit(message, Contact)
    if answer.accepted and answer.data is not None:
        return f"User provided: username={answer.data.username}, email={answer.data.email}"
    return f"User {answer.action}ed the request"


class Defaults(BaseModel):
    name: str = "John Doe"
    age: int = 30
    score: float = 95.5
    status: Literal["active", "inactive", "pending"] = "active"
    verified: bool = True


@server.tool
async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
    """Asks for a form whose every field has a default (SEP-1034)."""
    answer = await ctx.elicit("Please review the defaults and confirm", Defaults)
    return f"Elicitation completed: action={answer.action}, content={answer.data}"


ENUMS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
        "titledSingle": {
            "type": "string",
            "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"},
            ],
        },
        "legacyEnum": {
            "type": "string",
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"],
        },
        "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
        "titledMulti": {
            "type": "array",
            "items": {
                "anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"},
                ]
            },
        },
    },
    "required": [],
}


@server.tool
async def test_elicitation_sep1330_enums(ctx: Context) -> str:
    """Asks for a form with every kind of enum field (SEP-1330)."""
    answer = await ctx.elicit("Pick your options", ENUMS_SCHEMA)
    return f"Elicitation completed: action={answer.action}, content={answer.data}"


@server.tool
async def test_missing_capability(ctx: Context) -> str:
    """Needs the client's sampling capability."""
    answer = await ctx.sample("Say hello", max_tokens=20)
    return f"Sampling answered: {answer.text}"


@server.tool
async def test_streaming_elicitation(ctx: Context) -> str:
    """Asks the user a question mid-call."""
    answer = await ctx.elicit("What is your name?", Name)
    return f"Hello, {answer.data.name}!" if answer.accepted and answer.data else "No name given"


@server.tool
async def test_input_required_result_elicitation(ctx: Context) -> str:
    """Asks the user's name (key "user_name")."""
    answer = await ctx.elicit("What is your name?", Name, key="user_name")
    return f"Hello, {answer.data.name}!" if answer.accepted and answer.data else f"User {answer.action}ed"


@server.tool
async def test_input_required_result_sampling(ctx: Context) -> str:
    """Asks the client's LLM a question (key "capital_question")."""
    answer = await ctx.sample("What is the capital of France?", max_tokens=100, key="capital_question")
    return f"The model said: {answer.text}"


@server.tool
async def test_input_required_result_list_roots(ctx: Context) -> str:
    """Asks for the client's roots (key "client_roots")."""
    roots = await ctx.list_roots(key="client_roots")
    return "Roots: " + ", ".join(f"{root.name or ''} <{root.uri}>" for root in roots)


@server.tool
async def test_input_required_result_request_state(ctx: Context) -> str:
    """Asks for a confirmation; the answer comes back with the signed request state."""
    answer = await ctx.elicit("Please confirm", Confirm, key="confirm")
    return f"state-ok: confirmed={answer.data.ok if answer.data else False}"


@server.tool
async def test_input_required_result_multiple_inputs(ctx: Context) -> str:
    """Asks three questions at once: a name, an LLM greeting and the client's roots."""
    name, greeting, roots = await asyncio.gather(
        ctx.elicit("What is your name?", Name, key="user_name"),
        ctx.sample("Generate a greeting", max_tokens=50, key="greeting"),
        ctx.list_roots(key="client_roots"),
    )
    who = name.data.name if name.accepted and name.data else "stranger"
    return f"{greeting.text} {who} ({len(roots)} roots)"


@server.tool
async def test_input_required_result_multi_round(ctx: Context) -> str:
    """Asks two questions, one round each."""
    name = await ctx.elicit("Step 1: What is your name?", Name, key="step1")
    color = await ctx.elicit("Step 2: What is your favorite color?", Color, key="step2")
    who = name.data.name if name.data else "someone"
    favourite = color.data.color if color.data else "no colour"
    return f"{who} likes {favourite}"


@server.tool
async def test_input_required_result_tampered_state(ctx: Context) -> str:
    """Asks a question; a tampered request state is refused."""
    answer = await ctx.elicit("Please confirm", Confirm, key="confirm")
    return f"confirmed={answer.data.ok if answer.data else False}"


@server.tool
async def test_input_required_result_capabilities(ctx: Context) -> str:
    """Asks the user if the client can elicit, else asks the client's LLM."""
    if ctx.client_supports("elicitation"):
        answer = await ctx.elicit("What is your name?", Name, key="user_name")
        return f"Hello, {answer.data.name}!" if answer.data else "No name given"
    sampled = await ctx.sample("Suggest a name", max_tokens=20, key="name_suggestion")
    return f"Hello, {sampled.text}!"


@server.prompt
async def test_input_required_result_prompt(ctx: Context) -> Message:
    """A prompt that asks the user for its context first."""
    answer = await ctx.elicit("What context should the prompt use?", PromptContext, key="user_context")
    context = answer.data.context if answer.data else "none"
    return Message(f"Use this context: {context}")


# --- tasks (the io.modelcontextprotocol/tasks extension; 2025-11-25 experimental tasks) ----------


@server.tool
def greet(name: str) -> str:
    """Greets someone at once (never a task)."""
    return f"Hello, {name}!"


@server.tool(task="optional")
async def slow_compute(ctx: Context, seconds: int = 3, label: str = "default") -> str:
    """Works for `seconds` seconds; a task when the client can take one."""
    for second in range(seconds):
        await ctx.report_progress(second, seconds, f"{label}: {second} of {seconds} s")
        await asyncio.sleep(1)
    return f"{label}: done after {seconds} s"


@server.tool(task="required")
async def failing_job() -> str:
    """Runs as a task and ends with a tool error (isError)."""
    await asyncio.sleep(0.5)
    raise ToolError("the job failed: the input could not be processed")


@server.tool(task="required")
async def protocol_error_job() -> str:
    """Runs as a task and ends with a JSON-RPC error (the task fails)."""
    await asyncio.sleep(0.5)
    raise McpError(-32603, "the job's backend refused the request")


class DeleteConfirmation(BaseModel):
    confirm: bool


@server.tool(task="required")
async def confirm_delete(filename: str, ctx: Context) -> str:
    """Runs as a task that asks the user to confirm a deletion."""
    answer = await ctx.elicit(f"Delete {filename!r}?", DeleteConfirmation)
    confirmed = answer.accepted and answer.data is not None and answer.data.confirm
    return f"Deleted {filename}" if confirmed else f"Kept {filename}"


@server.tool(task="required")
async def multi_input(ctx: Context) -> str:
    """Runs as a task that asks two questions at once."""
    name, confirm = await asyncio.gather(
        ctx.elicit("What is your name?", Name, key="name"),
        ctx.elicit("Shall I go on?", DeleteConfirmation, key="confirm"),
    )
    who = name.data.name if name.accepted and name.data else "someone"
    return f"{who} confirmed={bool(confirm.data and confirm.data.confirm)}"


@server.tool(task="required", task_start="begin_task")
async def test_tool_with_task(ctx: Context) -> str:
    """Asks the user's name first (multi round-trip input), then works on as a task."""
    answer = await ctx.elicit("What is your name?", Name, key="user_name")
    await ctx.begin_task()
    await asyncio.sleep(0.2)
    return f"Hello, {answer.data.name}!" if answer.accepted and answer.data else "Hello, stranger!"


# --- list changes and HTTP headers --------------------------------------------------------------


def _temporary_tool() -> str:
    """Added and removed by test_trigger_tool_change."""
    return "temporary"


def _temporary_prompt() -> str:
    """Added and removed by test_trigger_prompt_change."""
    return "temporary"


@server.tool
async def test_trigger_tool_change() -> str:
    """Adds and removes a tool, so listeners get notifications/tools/list_changed."""
    server.add_tool(_temporary_tool, name="test_temporary_tool")
    server.remove_tool("test_temporary_tool")
    return "Tool list changed"


@server.tool
async def test_trigger_prompt_change() -> str:
    """Adds and removes a prompt, so listeners get notifications/prompts/list_changed."""
    server.prompt(name="test_temporary_prompt")(_temporary_prompt)
    server.remove_prompt("test_temporary_prompt")
    return "Prompt list changed"


@server.tool
def test_x_mcp_header(region: Annotated[str, Header("Region")]) -> str:
    """Echoes its region, which 2026-07-28 clients also send as the Mcp-Param-Region header."""
    return f"region={region}"


# --- JSON Schema 2020-12 and SEP-2106 -----------------------------------------------------------

JSON_SCHEMA_2020_12: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


@server.tool(input_schema=JSON_SCHEMA_2020_12)
def json_schema_2020_12_tool(
    name: str | None = None,
    address: dict[str, str] | None = None,
    contactMethod: str | None = None,
    phone: str | None = None,
    email: str | None = None,
) -> str:
    """Takes arguments described with JSON Schema 2020-12 keywords ($defs, $anchor, allOf, if/then/else)."""
    reach = phone if contactMethod == "phone" else email or phone
    return f"{name or 'Someone'} can be reached at {reach}"


@server.tool
def sep_2106_array_output_tool() -> list[int]:
    """Returns an array (SEP-2106: outputSchema of type "array")."""
    return [1, 2, 3]


@server.tool
def sep_2106_primitive_output_tool() -> float:
    """Returns a number (SEP-2106: outputSchema of type "number")."""
    return 42.5


# --- resources ----------------------------------------------------------------------------------


@server.resource("test://static-text", name="static-text", mime_type="text/plain")
def static_text() -> str:
    """A static text resource."""
    return "This is the content of the static text resource."


@server.resource("test://static-binary", name="static-binary", mime_type="image/png")
def static_binary() -> bytes:
    """A static binary resource (a 1x1 PNG)."""
    return base64.b64decode(PNG)


@server.resource("test://template/{id}/data", name="template-data", mime_type="application/json")
def template_data(id: str) -> dict[str, Any]:
    """Data for any id."""
    return {"id": id, "templateTest": True, "data": f"Data for ID: {id}"}


@server.resource("test://watched-resource", name="watched-resource", mime_type="text/plain")
def watched_resource() -> ResourceContents:
    """A resource clients can subscribe to."""
    return ResourceContents(text="Watched resource content")


# --- prompts and completion ---------------------------------------------------------------------


@server.prompt
def test_simple_prompt() -> str:
    """A simple prompt without arguments."""
    return "This is a simple prompt for testing."


@server.prompt
def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
    """A prompt with two required arguments.

    Args:
        arg1: First test argument.
        arg2: Second test argument.
    """
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@server.prompt
def test_prompt_with_embedded_resource(resourceUri: str) -> list[Message]:
    """A prompt that embeds a resource.

    Args:
        resourceUri: URI of the resource to embed.
    """
    return [
        Message(EmbeddedResource(resourceUri, text="Embedded resource content for testing.", mime_type="text/plain")),
        Message("Please process the embedded resource above."),
    ]


@server.prompt
def test_prompt_with_image() -> list[Message]:
    """A prompt that shows an image."""
    return [Message(Image(PNG, mime_type="image/png")), Message("Please analyze the image above.")]


@server.completion(argument="arg1", prompt="test_prompt_with_arguments")
def complete_arg1(value: str) -> list[str]:
    return [option for option in ("test1", "test2", "testing") if option.startswith(value)]


@server.completion(argument="arg2", prompt="test_prompt_with_arguments")
def complete_arg2(value: str) -> list[str]:
    return [option for option in ("value1", "value2") if option.startswith(value)]
