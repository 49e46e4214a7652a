"""The server's questions (elicitation, sampling, roots), answered with the user's handlers in either era.

Legacy: the server sends a request over the session and ``reply`` builds the response (a
failing or missing handler is a JSON-RPC error, ``ping`` is answered here). 2026-07-28: an
``input_required`` result lists the questions and ``answer`` gives each one's answer for the
next round. Either way an accepted form elicitation gets its schema's defaults (``completed``).

Elicitation has two modes (2025-11-25, 2026-07-28 client/elicitation), each with its own handler:
``elicitation_handler`` sends each question to the one for its mode, and a mode without one is
refused with -32602 as the spec requires; ``declared`` says which modes the client supports.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final

from .._errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    URL_ELICITATION_REQUIRED,
    ClientError,
    ToolkitError,
    URLElicitationRequired,
)

logger = logging.getLogger("toolkit.client")

Handler = Callable[[dict[str, Any]], Awaitable[Any] | Any]
"""Answers one question of the server: its ``params`` in, the result the client sends back out."""

QUESTIONS: Final = {"elicitation": "elicitation/create", "sampling": "sampling/createMessage", "roots": "roots/list"}
"""The client capability each question needs, and the method that asks it."""


class NoHandler(ToolkitError, LookupError):
    """The server asked for input (elicitation, sampling, roots) and this client has no handler for it."""


class UnsupportedMode(ToolkitError, ValueError):
    """The server asked for elicitation in a mode this client has no handler for (and did not declare)."""


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
        except UnsupportedMode as exc:  # 2025-11-25 client/elicitation, "Error Handling"
            response["error"] = {"code": INVALID_PARAMS, "message": f"Invalid params: {exc}"}
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


def elicitation_handler(form: Handler | None, url: Handler | None) -> Handler | None:
    """The ``elicitation/create`` handler: each question to ``form`` or ``url`` by its ``mode``.

    A URL handler gets ``{"mode": "url", "url", "message", "elicitationId"}`` (no id over
    2026-07-28) and returns ``"accept"``, ``"decline"`` or ``"cancel"`` (or the whole result).
    """
    if form is None and url is None:
        return None

    async def handle(params: dict[str, Any]) -> Any:
        mode = params.get("mode", "form") if isinstance(params, dict) else "form"
        chosen = url if mode == "url" else form if mode == "form" else None
        if chosen is None:
            raise UnsupportedMode(f"the server asked for {mode}-mode elicitation, which this client does not support")
        given = chosen(params)
        reply = await given if isinstance(given, Awaitable) else given
        return {"action": reply} if mode == "url" and isinstance(reply, str) else reply

    return handle


def declared(handlers: Mapping[str, Handler | None], *, form: bool, url: bool) -> dict[str, Any]:
    """The client capabilities the handlers stand for: ``elicitation: {}`` is form mode only (the
    spec's backwards-compatible form), ``{"url": {}}`` is added with a URL handler."""
    capabilities: dict[str, Any] = {name: {} for name, method in QUESTIONS.items() if handlers.get(method) is not None}
    if url:
        capabilities["elicitation"] = {"form": {}, "url": {}} if form else {"url": {}}
    return capabilities


def url_elicitation_required(error: ClientError) -> ClientError:
    """The server's error -32042 as ``URLElicitationRequired`` (its URLs at hand); any other as it is."""
    if error.code == URL_ELICITATION_REQUIRED and not isinstance(error, URLElicitationRequired):
        return URLElicitationRequired.received(error.error)
    return error
