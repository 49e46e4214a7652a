"""Notes per tenant: tools that take a database connection, the tenant and the caller, never from the model.

    toolkit run examples/dependencies.py                     # stdio: the tenant is "public"
    toolkit run examples/dependencies.py --transport http    # send X-Tenant: acme to be acme

Each function declares what it needs, and the server provides it on every call (docs/dependencies.md):

- ``Db``: a connection from the pool the lifespan opened, handed back after the call, also when
  the call failed (an async generator provider);
- ``Tenant``: the ``X-Tenant`` header, checked (``public`` when there is none: over stdio, say);
- ``Subject``: who is calling, the access token's ``sub`` (``None`` without a token).

None of them is in a tool's input schema: the model sees only ``text``.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Annotated

from toolkit import Depends, Lifespan, RequestHeader, Server, Subject, ToolError


@dataclass
class Pool:
    """Stands in for a real connection pool (asyncpg's, say): the notes of every tenant."""

    notes: dict[str, list[str]] = field(default_factory=dict)
    free: int = 4


@dataclass
class Connection:
    pool: Pool

    def notes(self, tenant: str) -> list[str]:
        return self.pool.notes.setdefault(tenant, [])


@contextlib.asynccontextmanager
async def lifespan(server: Server) -> AsyncIterator[dict[str, Pool]]:
    yield {"pool": Pool()}


server = Server("notes-with-dependencies", lifespan=lifespan)


async def connection(pool: Annotated[Pool, Lifespan("pool")]) -> AsyncIterator[Connection]:
    """One connection for the call, back to the pool afterwards, whatever happened."""
    if pool.free == 0:
        raise ToolError("the database is busy; try again")
    pool.free -= 1
    try:
        yield Connection(pool)
    finally:
        pool.free += 1


def tenant(name: Annotated[str, RequestHeader("x-tenant")] = "public") -> str:
    """The caller's tenant, from the X-Tenant header."""
    if not name.isidentifier():
        raise ToolError(f"X-Tenant: {name!r} is not a tenant's name")
    return name


Db = Annotated[Connection, Depends(connection)]
Tenant = Annotated[str, Depends(tenant, blocking=False)]  # quick, no I/O: called on the event loop


@server.tool
async def add_note(text: str, db: Db, tenant: Tenant, author: Subject | None) -> int:
    """Add a note; returns how many the tenant has."""
    notes = db.notes(tenant)
    notes.append(f"{text} ({author or 'anonymous'})")
    return len(notes)


@server.tool
async def list_notes(db: Db, tenant: Tenant) -> list[str]:
    """The tenant's notes, oldest first."""
    return db.notes(tenant)


@server.prompt
async def review_notes(db: Db, tenant: Tenant) -> str:
    """Ask the model to review the tenant's notes."""
    notes = "\n".join(f"- {note}" for note in db.notes(tenant)) or "(none yet)"
    return f"Review the notes of {tenant} and suggest what to do first:\n{notes}"


if __name__ == "__main__":
    server.run()
