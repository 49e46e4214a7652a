"""A gateway: two small servers, billing and support, served as one endpoint under namespaces.

Run it:  toolkit run examples/mount.py                     (stdio)
         toolkit run examples/mount.py --transport http    (http://127.0.0.1:8000/mcp)

A client sees ``billing_unpaid_invoices``, ``billing_mark_paid``, ``support_open_ticket`` and the
gateway's own ``opening_hours``; billing's resource ``invoices://7`` is ``invoices://billing/7`` and its
prompt ``payment_reminder`` is ``billing_payment_reminder``. Billing keeps its own lifespan (its
ledger, opened when the gateway starts) and its own middleware; the gateway's ``Audit`` wraps
every call, mounted or not.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import AsyncIterator

from pydantic import BaseModel

from toolkit import Context, Server, ToolError, ToolResult
from toolkit.middleware import CallNext, McpRequest, Middleware

audit = logging.getLogger("acme.audit")
BOOKS_CLOSED = os.environ.get("ACME_BOOKS_CLOSED") == "1"


# --- billing: a server of its own, with a lifespan and a middleware ----------------------------------


class Invoice(BaseModel):
    number: int
    customer: str
    amount: float
    paid: bool = False


@contextlib.asynccontextmanager
async def open_ledger(server: Server) -> AsyncIterator[dict[int, Invoice]]:
    """Stands in for a database connection: open while the gateway runs."""
    ledger = {
        7: Invoice(number=7, customer="Ada", amount=120.0),
        8: Invoice(number=8, customer="Alan", amount=80.0, paid=True),
        17: Invoice(number=17, customer="Grace", amount=45.5),
    }
    yield ledger
    ledger.clear()


class BooksClosed(Middleware):
    """Billing's own rule, wherever billing is mounted: no payments recorded while the books are closed."""

    async def on_call_tool(self, request: McpRequest, call_next: CallNext[ToolResult]) -> ToolResult:
        if BOOKS_CLOSED and request.name == "mark_paid":  # billing's own name, not billing_mark_paid
            raise ToolError("The books are closed for the month; record the payment tomorrow.")
        return await call_next(request)


billing = Server("billing", lifespan=open_ledger, middleware=[BooksClosed()])


@billing.tool
def unpaid_invoices(ctx: Context) -> list[Invoice]:
    """Every invoice not paid yet."""
    return [invoice for invoice in ctx.lifespan.values() if not invoice.paid]


@billing.tool
def mark_paid(number: int, ctx: Context) -> Invoice:
    """Record that an invoice was paid."""
    invoice = ctx.lifespan.get(number)
    if invoice is None:
        raise ToolError(f"There is no invoice {number}; unpaid_invoices lists the open ones.")
    invoice.paid = True
    return invoice


@billing.resource("invoices://{number}")
def invoice(number: int, ctx: Context) -> Invoice:
    """One invoice."""
    return ctx.lifespan[number]


@billing.completion(resource="invoices://{number}", argument="number")
def invoice_numbers(value: str, ctx: Context) -> list[str]:
    return [str(number) for number in ctx.lifespan if str(number).startswith(value)]


@billing.prompt
def payment_reminder(customer: str) -> str:
    """A friendly reminder to pay."""
    return f"Write a short, friendly reminder to {customer} that an invoice is still open."


# --- support: another server, no lifespan ------------------------------------------------------------

support = Server("support")
TICKETS: list[str] = []


@support.tool
def open_ticket(customer: str, problem: str) -> int:
    """Open a support ticket; its number."""
    TICKETS.append(f"{customer}: {problem}")
    return len(TICKETS)


@support.resource("tickets://open")
def open_tickets() -> list[str]:
    """The open tickets."""
    return TICKETS


# --- the gateway: one endpoint, its own middleware and tools -----------------------------------------


class Audit(Middleware):
    """The gateway's: every tool call, mounted or not, under the name the client used."""

    async def on_call_tool(self, request: McpRequest, call_next: CallNext[ToolResult]) -> ToolResult:
        result = await call_next(request)
        audit.info("%s called %s (error: %s)", request.caller or "a local client", request.name, result.is_error)
        return result


server = Server("acme", instructions="Acme's billing and support, in one place.", middleware=[Audit()])
server.mount(billing, "billing")
server.mount(support, "support")


@server.tool
def opening_hours() -> str:
    """When a person answers the phone (the gateway's own tool, beside the mounted ones)."""
    return "Monday to Friday, 9:00 to 17:00 CET"


if __name__ == "__main__":
    server.run()
