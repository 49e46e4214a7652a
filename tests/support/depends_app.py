"""A server whose tools take dependencies, for the wire tests of ``tests/test_depends.py``.

``toolkit run tests/support/depends_app.py [--transport http ...]``. What the providers do is
written to ``EVENTS`` (this process's), which the ``events`` tool returns and ``forget`` clears:
the tests read the order of opening and closing, and that a cancelled call's generators were
closed, from there.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Annotated, Any

from toolkit import (
    CallerToken,
    Context,
    Depends,
    Lifespan,
    ProtocolVersion,
    RequestHeader,
    Server,
    Subject,
)

PATIENT = 60.0
"""How long the blocked provider waits for its gate: far longer than the test takes to open it."""

EVENTS: list[str] = []
GATE = threading.Event()


@contextlib.asynccontextmanager
async def lifespan(server: Server) -> AsyncIterator[dict[str, Any]]:
    yield {"greeting": "hello"}


server = Server("depends-test", lifespan=lifespan)


async def open_connection(ctx: Context) -> AsyncIterator[str]:
    """An async generator: opened first, closed last."""
    EVENTS.append("open connection")
    try:
        yield f"connection for {ctx.request_id}"
    except BaseException as exc:  # what the call ended with, cancellation included
        EVENTS.append(f"connection saw {type(exc).__name__}")
        raise
    finally:
        EVENTS.append("close connection")


def transaction(conn: Annotated[str, Depends(open_connection)]) -> Iterator[str]:
    """A plain generator on the connection: runs in a worker thread, closed before it."""
    EVENTS.append(f"begin in {threading.current_thread().name}")
    try:
        yield "transaction"
    except BaseException as exc:
        EVENTS.append(f"rollback after {type(exc).__name__}")
        raise
    else:
        EVENTS.append("commit")
    finally:
        EVENTS.append("end")


async def account_of(subject: Subject | None, tenant: Annotated[str, RequestHeader("x-tenant")] = "public") -> str:
    return f"{tenant}/{subject or 'anonymous'}"


@server.tool
async def whoami(
    subject: Subject | None,
    token: CallerToken | None,
    account: Annotated[str, Depends(account_of)],
    version: ProtocolVersion,
    greeting: Annotated[str, Lifespan("greeting")],
    tenant: Annotated[str | None, RequestHeader("x-tenant")],
) -> dict[str, Any]:
    """Who is calling, as the built-in providers see it."""
    return {
        "subject": subject,
        "client_id": token.client_id if token is not None else None,
        "account": account,
        "version": version,
        "greeting": greeting,
        "tenant": tenant,
    }


@server.tool
def transfer(amount: int, tx: Annotated[str, Depends(transaction)]) -> str:
    """Moves ``amount`` in a transaction: a negative amount fails, and the transaction rolls back."""
    if amount < 0:
        raise ValueError("a negative amount")
    EVENTS.append(f"transfer {amount}")
    return f"moved {amount} in {tx}"


@server.tool
async def hang(tx: Annotated[str, Depends(transaction)]) -> str:
    """Waits an hour in a transaction, unless cancelled."""
    EVENTS.append("hanging")
    await asyncio.sleep(3600)
    return "waited"


def gate() -> str:
    """A provider that blocks its thread until ``open_gate`` is called (or PATIENT seconds pass)."""
    EVENTS.append("waiting at the gate")
    return "opened" if GATE.wait(PATIENT) else "never opened"


@server.tool
async def through_gate(state: Annotated[str, Depends(gate)]) -> str:
    return state


@server.tool
async def open_gate() -> str:
    GATE.set()
    return "open"


@server.tool
def events() -> list[str]:
    """What the providers did, in order."""
    return list(EVENTS)


@server.tool
def forget() -> None:
    """Start the record afresh."""
    EVENTS.clear()
    GATE.clear()
