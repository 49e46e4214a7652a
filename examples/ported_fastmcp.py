"""A library's lending desk, ported from a fastmcp 2.x server (``from fastmcp import FastMCP``).

Run it:  toolkit run examples/ported_fastmcp.py                                  (stdio)
         toolkit run examples/ported_fastmcp.py --transport http --port 8000      (http://127.0.0.1:8000/mcp)
         python examples/ported_fastmcp.py                                        (stdio, server.run())

What changed, line by line (fastmcp 2.x on the left, this file on the right)::

    from fastmcp import Context, FastMCP            from toolkit import Context, Server, ToolError
    yield {"catalog": catalog}                      yield catalog   (any object)
    mcp = FastMCP("lending-desk", lifespan=...)     server = Server("lending-desk", lifespan=...)
    @mcp.custom_route("/health", methods=["GET"])   @server.custom_route("/health", methods=["GET"])
    @mcp.tool                                       @server.tool
    limit: int = Field(5, ge=1, le=20, ...)         the same: schema, bounds and default as written
    ctx.request_context.lifespan_context["..."]     ctx.lifespan
    await ctx.info("...", extra={...})              the same
    @mcp.resource("books://author/{surname}{?since}")   the same ({?query} templates match)
    await ctx.elicit("...", response_type=int)      await ctx.elicit("...", int)
    result.action == "accept"                       answer.accepted (answer.action is there too)
    fastmcp run server.py --transport http          toolkit run server.py --transport http
    mcp.run()                                       server.run()

A tool returning ``list[Book]`` gives a 2026-07-28 client the list itself as ``structuredContent``
and a 2025-11-25 client ``{"result": [...]}``, as fastmcp 2.x does. ``borrow`` asks a question
(elicitation): in the 2026-07-28 era the call ends with ``input_required`` and runs again from the
top with the answer, so it changes nothing before the question.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from pydantic import BaseModel, Field
from starlette.requests import Request
from starlette.responses import JSONResponse

from toolkit import Context, Server, ToolError


class Book(BaseModel):
    isbn: str
    title: str
    author: str
    year: int
    copies: int


@dataclass
class Catalog:
    books: dict[str, Book]
    loans: list[tuple[str, int]] = field(default_factory=list)


def opening_stock() -> dict[str, Book]:
    books = [
        Book(isbn="9780441478125", title="The Left Hand of Darkness", author="Ursula K. Le Guin", year=1969, copies=2),
        Book(isbn="9780547773742", title="A Wizard of Earthsea", author="Ursula K. Le Guin", year=1968, copies=9),
        Book(isbn="9780061054884", title="The Dispossessed", author="Ursula K. Le Guin", year=1974, copies=1),
        Book(isbn="9780441013593", title="Dune", author="Frank Herbert", year=1965, copies=3),
        Book(isbn="9780765326355", title="The Way of Kings", author="Brandon Sanderson", year=2010, copies=0),
    ]
    return {book.isbn: book for book in books}


@contextlib.asynccontextmanager
async def lifespan(server: Server) -> AsyncIterator[Catalog]:
    yield Catalog(books=opening_stock())  # opened when the server starts, for every request


server = Server(
    "lending-desk",
    version="1.0.0",
    instructions="A library's catalogue and lending desk. Search before borrowing; borrow asks for how long.",
    lifespan=lifespan,
)


@server.custom_route("/health", methods=["GET"])
async def health(request: Request) -> JSONResponse:
    return JSONResponse({"status": "ok"})


@server.tool(annotations={"readOnlyHint": True})
async def search_books(
    ctx: Context,
    query: str = Field(description="Words from the title or the author's name"),
    limit: int = Field(5, ge=1, le=20, description="How many books at most"),
) -> list[Book]:
    """Books whose title or author has every word of the query."""
    catalog: Catalog = ctx.lifespan
    words = query.lower().split()
    found = [
        book for book in catalog.books.values() if all(word in f"{book.title} {book.author}".lower() for word in words)
    ]
    await ctx.info(f"{len(found)} books match {query!r}", extra={"query": query, "matches": len(found)})
    return found[:limit]


@server.resource("books://author/{surname}{?since}", mime_type="application/json")
def books_by(
    surname: str, ctx: Context, since: int = Field(0, ge=0, description="Only books from this year on")
) -> list[Book]:
    """An author's books (by surname), oldest first; ?since=YEAR for the later ones."""
    catalog: Catalog = ctx.lifespan
    books = [
        book for book in catalog.books.values() if book.author.lower().endswith(surname.lower()) and book.year >= since
    ]
    return sorted(books, key=lambda book: book.year)


@server.tool(annotations={"destructiveHint": False, "idempotentHint": False})
async def borrow(isbn: str, ctx: Context) -> str:
    """Borrow a book: asks the user for how many weeks (1 to 6)."""
    catalog: Catalog = ctx.lifespan
    book = catalog.books.get(isbn)
    if book is None:
        raise ToolError(f"There is no book with ISBN {isbn}.")
    if book.copies == 0:
        raise ToolError(f"Every copy of {book.title} is out.")
    answer = await ctx.elicit(f"For how many weeks do you want {book.title}?", int)
    if not answer.accepted or answer.data is None:
        return "Nothing was borrowed."
    weeks = answer.data
    if not 1 <= weeks <= 6:
        raise ToolError(f"A loan is 1 to 6 weeks, not {weeks}.")
    # Only now, after the question, change anything (see the docstring).
    book.copies -= 1
    catalog.loans.append((isbn, weeks))
    return f"{book.title} is yours for {weeks} weeks."


if __name__ == "__main__":
    server.run()
