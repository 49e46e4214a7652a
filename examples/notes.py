"""A notes server: resources, a resource template, prompts, progress and elicitation.

Run it:  toolkit run examples/notes.py                       (stdio)
         toolkit run examples/notes.py --transport http      (http://127.0.0.1:8000/mcp)

The same code serves every protocol version: asking the user to confirm a deletion is a
server-to-client request for a 2025-11-25 client, and a multi round-trip
``input_required`` result for a 2026-07-28 one.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from datetime import date
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from toolkit import Context, Message, Server, ToolError


class Note(BaseModel):
    id: int
    title: str
    body: str
    tags: list[str] = []
    created: date


class Confirm(BaseModel):
    confirm: bool = Field(description="Really delete this note?")


class NoteStore:
    """Stands in for a database: opened when the server starts, closed when it stops."""

    def __init__(self) -> None:
        self.notes: dict[int, Note] = {}

    def add(self, title: str, body: str, tags: list[str]) -> Note:
        note = Note(id=max(self.notes, default=0) + 1, title=title, body=body, tags=tags, created=date(2026, 11, 1))
        self.notes[note.id] = note
        return note


@contextlib.asynccontextmanager
async def lifespan(server: Server) -> AsyncIterator[NoteStore]:
    store = NoteStore()
    store.add("Groceries", "Milk, eggs, coffee.", ["home"])
    store.add("Launch plan", "Ship toolkit 0.1 on Monday.", ["work", "toolkit"])
    yield store


server = Server("notes", version="1.0.0", instructions="Personal notes. Read notes://all first.", lifespan=lifespan)


def store_of(ctx: Context) -> NoteStore:
    store: NoteStore = ctx.lifespan
    return store


@server.resource("notes://all", mime_type="application/json")
def all_notes(ctx: Context) -> list[Note]:
    """Every note."""
    return list(store_of(ctx).notes.values())


@server.resource("notes://{note_id}", mime_type="text/markdown")
def note_text(note_id: int, ctx: Context) -> str:
    """One note as Markdown."""
    note = store_of(ctx).notes.get(note_id)
    if note is None:
        raise ValueError(f"there is no note {note_id}")
    return f"# {note.title}\n\n{note.body}\n"


@server.tool
async def add_note(title: str, body: str, ctx: Context, tags: list[str] | None = None) -> Note:
    """Add a note."""
    note = store_of(ctx).add(title, body, tags or [])
    await ctx.info(f"added note {note.id}")
    await server.notify_resource_updated("notes://all")
    return note


@server.tool
def search_notes(
    query: Annotated[str, Field(min_length=1, description="Text to look for in titles and bodies")], ctx: Context
) -> list[Note]:
    """Notes whose title or body contains the query (case-insensitive)."""
    needle = query.lower()
    return [note for note in store_of(ctx).notes.values() if needle in f"{note.title} {note.body}".lower()]


@server.tool
async def reindex(ctx: Context) -> int:
    """Rebuild the search index, reporting progress. Returns how many notes were indexed."""
    notes = list(store_of(ctx).notes.values())
    for done, _ in enumerate(notes, start=1):
        await asyncio.sleep(0.01)
        await ctx.report_progress(done, len(notes), f"indexed {done} of {len(notes)}")
    return len(notes)


@server.tool(annotations={"destructiveHint": True})
async def delete_note(note_id: int, ctx: Context) -> str:
    """Delete a note, after asking the user to confirm."""
    store = store_of(ctx)
    note = store.notes.get(note_id)
    if note is None:
        raise ToolError(f"There is no note {note_id}; search_notes lists the notes.")
    answer = await ctx.elicit(f"Delete the note {note.title!r}?", Confirm)
    if not (answer.accepted and answer.data and answer.data.confirm):
        return f"Kept {note.title!r}."
    del store.notes[note_id]  # after the question: a retried round must not delete twice
    await server.notify_resource_updated("notes://all")
    return f"Deleted {note.title!r}."


@server.prompt
def summarize(note_id: int, style: Literal["bullets", "paragraph"] = "bullets") -> list[Message]:
    """Ask the model to summarize one note."""
    return [
        Message(f"Summarize the note at notes://{note_id} as {style}."),
        Message("I will read the note and summarize it.", role="assistant"),
    ]


@server.completion(prompt="summarize", argument="note_id")
def note_ids(value: str, ctx: Context) -> list[str]:
    return [str(note_id) for note_id in store_of(ctx).notes if str(note_id).startswith(value)]
