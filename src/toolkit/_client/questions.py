"""The server's questions (elicitation, sampling, roots), answered with the user's handlers in either era.

Legacy: the server sends a request over the session and ``reply`` builds the response (a
failing or missing handler is a JSON-RPC error, ``ping`` is answered here). 2026-07-28: an
``input_required`` result lists the questions and ``answer`` gives each one's answer for the
next round. Either way an accepted form elicitation gets its schema's defaults (``completed``).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final

from .._errors import INTERNAL_ERROR, METHOD_NOT_FOUND, ToolkitError

logger = logging.getLogger("toolkit.client")

Handler = Callable[[dict[str, Any]], Awaitable[Any] | Any]
"""Answers one question of the server: its ``params`` in, the result the client sends back out."""

QUESTIONS: Final = {"elicitation": "elicitation/create", "sampling": "sampling/createMessage", "roots": "roots/list"}
"""The client capability each question needs, and the method that asks it."""


class NoHandler(ToolkitError, LookupError):
    """The server asked for input (elicitation, sampling, roots) and this client has no handler for it."""


class InputRounds(ToolkitError):
    """A request still asked for input after ``max_rounds`` rounds of answers."""


async def answer(handlers: Mapping[str, Handler], method: str, params: Any) -> Any:
    """The answer to one question, from its handler (``NoHandler`` without one)."""
    handler = handlers.get(method)
    if handler is None:
        raise NoHandler(f"the server asked for {method} and this client has no handler for it")
    given = handler(params)
    return completed(method, params, await given if isinstance(given, Awaitable) else given)


async def reply(handlers: Mapping[str, Handler], message: dict[str, Any]) -> dict[str, Any]:
    """The response to one server request (legacy era): its handler's answer, or a JSON-RPC error."""
    method = message["method"]
    response: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
    if method == "ping":
        response["result"] = {}
    elif method not in handlers:
        response["error"] = {
            "code": METHOD_NOT_FOUND,
            "message": f"Method not found: this client does not answer {method}",
        }
    else:
        try:
            response["result"] = await answer(handlers, method, message.get("params") or {})
        except Exception as exc:
            logger.exception("the %s handler failed", method)
            response["error"] = {"code": INTERNAL_ERROR, "message": f"the client's {method} handler failed: {exc}"}
    return response


def completed(method: str, params: Any, answer: Any) -> Any:
    """An accepted form elicitation with each field the user left out set to its schema's ``default``.

    2025-11-25 client/elicitation: "Clients that support defaults SHOULD pre-populate form fields
    with these values": a handler that returns only what the user changed gets the rest filled in.
    """
    if method != "elicitation/create" or not isinstance(answer, dict) or answer.get("action") != "accept":
        return answer
    schema = params.get("requestedSchema") if isinstance(params, dict) else None
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict):
        return answer
    content = answer.get("content")
    filled = dict(content) if isinstance(content, dict) else {}
    for name, field in properties.items():
        if name not in filled and isinstance(field, dict) and "default" in field:
            filled[name] = field["default"]
    return {**answer, "content": filled}
