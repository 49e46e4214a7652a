"""examples/notes.py: resources, prompts, progress and elicitation, as a user runs them."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.wire import assert_valid

from toolkit import Server
from toolkit.testing import Client

EXAMPLE = Path(__file__).parent.parent / "examples" / "notes.py"


def load() -> Server:
    spec = importlib.util.spec_from_file_location("notes_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["notes_example"] = module
    spec.loader.exec_module(module)
    server: Server = module.server
    return server


def confirm(answer: bool) -> Any:
    def handler(params: dict[str, Any]) -> dict[str, Any]:
        assert params["requestedSchema"]["properties"]["confirm"]["type"] == "boolean"
        return {"action": "accept", "content": {"confirm": answer}}

    return handler


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
async def test_notes_example(version: str) -> None:
    server = load()
    async with Client(server, protocol_version=version, elicitation=confirm(True)) as client:
        notes = await client.read_resource("notes://all")
        assert [note["title"] for note in json.loads(notes["contents"][0]["text"])] == [
            "Groceries",
            "Launch plan",
        ]
        markdown = await client.read_resource("notes://2")
        assert markdown["contents"][0] == {
            "uri": "notes://2",
            "mimeType": "text/markdown",
            "text": "# Launch plan\n\nShip toolkit 0.1 on Monday.\n",
        }
        found = await client.call_tool("search_notes", {"query": "ship"})
        natural = found["structuredContent"] if version == "2026-07-28" else found["structuredContent"]["result"]
        assert [note["id"] for note in natural] == [2]
        indexed = await client.call_tool("reindex", meta={"progressToken": 5})
        assert indexed["content"][0]["text"] == "2"
        progress = [m["params"]["progress"] for m in client.notifications if m["method"] == "notifications/progress"]
        assert progress == [1, 2]
        deleted = await client.call_tool("delete_note", {"note_id": 1})
        assert deleted["content"][0]["text"] == "Deleted 'Groceries'."
        missing = await client.call_tool("delete_note", {"note_id": 1})
        assert missing["isError"] is True
        prompt = await client.get_prompt("summarize", {"note_id": "2"})
        assert prompt["messages"][0]["content"]["text"] == "Summarize the note at notes://2 as bullets."
        completion = await client.result(
            "completion/complete",
            {"ref": {"type": "ref/prompt", "name": "summarize"}, "argument": {"name": "note_id", "value": ""}},
        )
        assert completion["completion"]["values"] == ["2"]
        for message in client.messages:
            assert_valid(message, version)


async def test_declining_keeps_the_note() -> None:
    async with Client(load(), elicitation=confirm(False)) as client:
        kept = await client.call_tool("delete_note", {"note_id": 1})
        assert kept["content"][0]["text"] == "Kept 'Groceries'."
        assert len((await client.call_tool("search_notes", {"query": "groceries"}))["structuredContent"]) == 1
