"""An existing FastAPI app's endpoints as MCP tools, called in process: no second definition to keep in sync.

    toolkit run examples/openapi_app.py                      # stdio, for an MCP host
    toolkit run examples/openapi_app.py --transport http     # Streamable HTTP on 127.0.0.1:8000/mcp
    uvicorn examples.openapi_app:app                         # the app itself, unchanged

``Server.from_fastapi(app)`` reads ``app.openapi()``: each operation is a tool named by its
``operation_id``, its input schema made of the parameters and the body, its output schema the
response model's, natural (``list_books`` returns an array, ``count_books`` an integer). Calls go
through httpx's ASGI transport into the app, so its validation and dependencies run as for any
client. The route map makes ``GET /books/{isbn}`` a resource template instead of a tool,
``library://books/{isbn}``, for hosts that let the user attach a resource.
"""

from __future__ import annotations

from fastapi import FastAPI, HTTPException
from pydantic import BaseModel, Field

from toolkit import RouteMap, Server

app = FastAPI(title="Library", version="1.0.0")


class Book(BaseModel):
    isbn: str = Field(description="ISBN-13, digits only")
    title: str
    author: str
    year: int


BOOKS: dict[str, Book] = {
    "9780141439518": Book(isbn="9780141439518", title="Pride and Prejudice", author="Jane Austen", year=1813),
    "9780141439662": Book(isbn="9780141439662", title="Emma", author="Jane Austen", year=1815),
    "9780486282114": Book(isbn="9780486282114", title="Frankenstein", author="Mary Shelley", year=1818),
}


@app.get("/books", operation_id="list_books", summary="List books", tags=["books"])
def list_books(author: str | None = None) -> list[Book]:
    """Every book in the library, or only those by ``author``."""
    return [book for book in BOOKS.values() if author is None or book.author == author]


@app.get("/books/{isbn}", operation_id="get_book", summary="One book", tags=["books"])
def get_book(isbn: str) -> Book:
    """The book with this ISBN."""
    if isbn not in BOOKS:
        raise HTTPException(404, f"no book with ISBN {isbn}")
    return BOOKS[isbn]


@app.post("/books", operation_id="add_book", summary="Add a book", status_code=201, tags=["books", "write"])
def add_book(book: Book) -> Book:
    """Add a book (an ISBN already there is replaced)."""
    BOOKS[book.isbn] = book
    return book


@app.get("/count", operation_id="count_books", summary="How many books", tags=["books"])
def count_books() -> int:
    return len(BOOKS)


server = Server.from_fastapi(
    app,
    route_maps=[RouteMap(methods=["GET"], pattern=r"^/books/\{isbn\}$", kind="resource")],
    uri_scheme="library",
)
