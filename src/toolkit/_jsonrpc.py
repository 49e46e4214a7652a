"""JSON-RPC 2.0 framing: parse one frame, classify it, and encode replies.

One frame in, one reply out: a frame that cannot be parsed or is not a valid message
still gets an error (-32700 / -32600), never silence (ARCHITECTURE §1, §6).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import pydantic_core

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603
HEADER_MISMATCH: Final = -32020
MISSING_CAPABILITY: Final = -32021
UNSUPPORTED_VERSION: Final = -32022

RequestId = str | int


@dataclass(frozen=True, slots=True)
class Request:
    id: RequestId
    method: str
    params: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Notification:
    method: str
    params: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Response:
    """A client's reply to a request the server sent (legacy era)."""

    id: RequestId
    result: Any
    error: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class Invalid:
    """A frame that is not a valid message; ``reply`` is the error to send back."""

    reply: dict[str, Any]


Message = Request | Notification | Response | Invalid


class Raw:
    """Pre-encoded JSON spliced into a reply as is (cached ``tools/list`` pages)."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data


def error_reply(request_id: RequestId | None, code: int, message: str, data: Any = None) -> dict[str, Any]:
    """An error response; without ``id`` when the request's id could not be read.

    JSON-RPC 2.0 would send ``"id": null``, but MCP's schemas (2025-11-25 on) type ``id`` as a
    string or integer and make it optional for exactly this case (basic/index, "Error Responses").
    """
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    if request_id is None:
        return {"jsonrpc": "2.0", "error": error}
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def _valid_id(value: Any) -> bool:
    return isinstance(value, str | int) and not isinstance(value, bool)


def parse(frame: bytes | str) -> Message:
    """Parse and classify one frame."""
    try:
        payload = pydantic_core.from_json(frame, allow_inf_nan=False)
    except ValueError as exc:
        return Invalid(error_reply(None, PARSE_ERROR, f"Parse error: {exc}"))
    return classify(payload)


def classify(payload: Any) -> Message:
    """Classify an already-parsed JSON value."""
    if isinstance(payload, list):
        return Invalid(
            error_reply(None, INVALID_REQUEST, "Invalid Request: batches are not supported; send one message per frame")
        )
    if not isinstance(payload, dict):
        return Invalid(error_reply(None, INVALID_REQUEST, "Invalid Request: a message must be a JSON object"))
    raw_id = payload.get("id")
    request_id = raw_id if _valid_id(raw_id) else None
    if payload.get("jsonrpc") != "2.0":
        return Invalid(error_reply(request_id, INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"'))
    method = payload.get("method")
    if method is None:
        if ("result" in payload) != ("error" in payload) and _valid_id(raw_id):
            error = payload.get("error")
            if error is not None and not isinstance(error, dict):
                return Invalid(error_reply(request_id, INVALID_REQUEST, 'Invalid Request: "error" must be an object'))
            return Response(request_id if request_id is not None else str(raw_id), payload.get("result"), error)
        return Invalid(error_reply(request_id, INVALID_REQUEST, 'Invalid Request: missing "method"'))
    if not isinstance(method, str):
        return Invalid(error_reply(request_id, INVALID_REQUEST, 'Invalid Request: "method" must be a string'))
    params = payload.get("params", {})
    if params is None:
        params = {}
    if not isinstance(params, dict):
        return Invalid(
            error_reply(request_id, INVALID_REQUEST, 'Invalid Request: "params" must be an object when present')
        )
    if "id" not in payload:
        return Notification(method, params)
    if not _valid_id(raw_id):
        return Invalid(error_reply(None, INVALID_REQUEST, 'Invalid Request: "id" must be a string or an integer'))
    assert request_id is not None
    return Request(request_id, method, params)


def busy_reply(request_id: RequestId, limit: int) -> dict[str, Any]:
    """The answer to a request over the concurrency limit (``Server(max_concurrent_requests=...)``)."""
    return error_reply(
        request_id,
        INTERNAL_ERROR,
        f"Server busy: {limit} requests are already in flight for this client; retry when one completes",
        {"reason": "busy", "limit": limit},
    )


def encode(message: dict[str, Any]) -> bytes:
    # JSON has no NaN or Infinity; pydantic-core would write them bare (invalid JSON).
    return pydantic_core.to_json(message, inf_nan_mode="null")


def encode_result(request_id: RequestId, result: dict[str, Any] | Raw) -> bytes:
    if isinstance(result, Raw):
        return b'{"jsonrpc":"2.0","id":' + pydantic_core.to_json(request_id) + b',"result":' + result.data + b"}"
    return pydantic_core.to_json({"jsonrpc": "2.0", "id": request_id, "result": result}, inf_nan_mode="null")


def notification(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return message
