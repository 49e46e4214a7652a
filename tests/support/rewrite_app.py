"""A server whose ``on_request`` middleware rewrites a tool call's arguments, for tests/test_middleware_rewrite.py.

``describe`` takes one integer ``n``. A client that calls it with ``{"rewrite": "valid"}`` or
``{"rewrite": "invalid"}`` (arguments the tool itself would refuse: no ``n``) has them replaced,
in ``on_request``, by ``{"n": 42}`` or ``{"n": "forty-two"}``. What the tool receives, or the
validation error the client gets, shows whether the rewritten arguments were validated.
"""

from __future__ import annotations

from typing import Any

from toolkit import Server
from toolkit.middleware import CallNext, McpRequest

server = Server("rewrite-app")

REWRITES: dict[str, dict[str, Any]] = {"valid": {"n": 42}, "invalid": {"n": "forty-two"}}


@server.middleware
async def rewrite(request: McpRequest, call_next: CallNext[dict[str, Any]]) -> dict[str, Any]:
    """Replace the arguments of a ``describe`` call that asks for a rewrite."""
    if request.method == "tools/call" and request.name == "describe":
        wanted = request.arguments.get("rewrite")
        if isinstance(wanted, str) and wanted in REWRITES:
            request.arguments = dict(REWRITES[wanted])
    return await call_next(request)


@server.tool
def describe(n: int) -> dict[str, Any]:
    """What the tool received: the value and its Python type."""
    return {"n": n, "type": type(n).__name__}
