"""JSON-RPC 2.0: parse one frame, classify it, encode replies; correlate our requests with their answers.

One frame in, one reply out: a frame that cannot be parsed or is not a valid message
still gets an error (-32700 / -32600), never silence (ARCHITECTURE §1, §6). ``Correlator``
is the other direction, for either side of the wire: a request this side sends waits for the
response with its id (a server asking its legacy client for input; a client asking its server).
"""

from __future__ import annotations

import asyncio
import collections
import gc
import itertools
import re
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, Final

import pydantic_core

from ._errors import INTERNAL_ERROR, INVALID_REQUEST, PARSE_ERROR
from ._json_pieces import STREAM_ABOVE, Streamed, text_length
from ._types import RequestId

# The message classes are plain classes, not dataclasses: a frozen dataclass compiles its
# generated methods when this module is imported (about 0.3 ms each, paid by every server's
# start-up). Their attributes are ``Final``: a parsed message is never changed.


class Request:
    __slots__ = ("id", "method", "params")

    def __init__(self, id: RequestId, method: str, params: dict[str, Any]) -> None:
        self.id: Final = id
        self.method: Final = method
        self.params: Final = params

    def __repr__(self) -> str:
        return f"Request(id={self.id!r}, method={self.method!r}, params={self.params!r})"


class Notification:
    __slots__ = ("method", "params")

    def __init__(self, method: str, params: dict[str, Any]) -> None:
        self.method: Final = method
        self.params: Final = params

    def __repr__(self) -> str:
        return f"Notification(method={self.method!r}, params={self.params!r})"


class Response:
    """A reply to a request this side sent (a legacy client answering its server; a server answering a client)."""

    __slots__ = ("error", "id", "result")

    def __init__(self, id: RequestId, result: Any, error: dict[str, Any] | None) -> None:
        self.id: Final = id
        self.result: Final = result
        self.error: Final = error

    def __repr__(self) -> str:
        return f"Response(id={self.id!r}, result={self.result!r}, error={self.error!r})"


class Invalid:
    """A frame that is not a valid message; ``reply`` is the error to send back."""

    __slots__ = ("reply",)

    def __init__(self, reply: dict[str, Any]) -> None:
        self.reply: Final = reply

    def __repr__(self) -> str:
        return f"Invalid(reply={self.reply!r})"


Message = Request | Notification | Response | Invalid


class Reply:
    """An encoded JSON-RPC response and the HTTP status the Streamable HTTP transport should use.

    ``body`` is the whole response. A big result (``encode_result`` gives a ``Streamed``) is
    encoded only when ``body`` is first read; ``pieces()`` gives the same bytes in pieces without
    ever holding them whole, for a transport that writes them one after another (stdio).
    """

    __slots__ = ("_body", "_streamed", "headers", "is_error", "status")

    def __init__(
        self,
        body: bytes | Streamed,
        status: int = 200,
        is_error: bool = False,
        headers: dict[str, str] | None = None,
    ) -> None:
        if isinstance(body, Streamed):
            self._body: bytes | None = None
            self._streamed: Streamed | None = body
        else:
            self._body = body
            self._streamed = None
        self.status = status
        self.is_error = is_error
        self.headers = headers
        """Extra HTTP response headers (``Retry-After``), when the reply is a whole HTTP response."""

    @property
    def body(self) -> bytes:
        body = self._body
        if body is None:
            assert self._streamed is not None
            body = self._body = self._streamed.encode()
            self._streamed = None
        return body

    @property
    def streamed(self) -> bool:
        """Whether ``pieces()`` encodes as it goes (a big result whose ``body`` was not read)."""
        return self._streamed is not None

    def pieces(self) -> Iterator[bytes | memoryview]:
        """The response in pieces of about ``PIECE_BYTES``: ``body``, or a big result encoded as it goes.

        A value pydantic-core cannot encode raises (``ValueError``, ``TypeError``) when its piece is
        made, perhaps after others were written: ``failure()`` is then the answer to send instead.
        """
        if self._streamed is None:
            return iter((self.body,))
        return self._streamed.pieces()

    def failure(self) -> bytes:
        """The internal-error response owed when ``pieces()`` failed (what ``Lifecycle`` answers an exception)."""
        assert self._streamed is not None
        return encode(error_reply(self._streamed.message["id"], INTERNAL_ERROR, "Internal error"))

    def __repr__(self) -> str:
        return f"Reply(body={self.body!r}, status={self.status!r}, is_error={self.is_error!r})"


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


class TooDeep:
    """Stands for a value nested deeper than the JSON parser goes (see ``parse``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<nested too deeply>"


TOO_DEEP: Final = TooDeep()


# Above this size the cyclic collector is kept away from the parse. Building a million
# containers with it running triggers collection after collection over the growing heap (a
# 3 MB frame held the event loop for 0.6 s instead of 0.1 s), and re-enabling it afterwards
# would traverse the new containers three times over (gen 0, 1, 2: another 0.3 s). So the
# collector is paused while parsing, and the result is then moved straight to the oldest
# generation with freeze() + unfreeze(): JSON values hold no cycles, refcounting frees them
# when the request is done, and the next full collection (if any comes first) visits them
# once. Skipped when the application froze objects itself or disabled the collector.
_PAUSE_GC_ABOVE: Final = 64 * 1024


def _load(frame: bytes | str) -> Any:
    if len(frame) <= _PAUSE_GC_ABOVE or not gc.isenabled() or gc.get_freeze_count():
        return pydantic_core.from_json(frame, allow_inf_nan=False)
    gc.disable()
    try:
        return pydantic_core.from_json(frame, allow_inf_nan=False)
    finally:
        gc.freeze()
        gc.unfreeze()
        gc.enable()


def parse(frame: bytes | str) -> Message:
    """Parse and classify one frame."""
    try:
        payload = _load(frame)
    except ValueError as exc:
        if "recursion limit" in str(exc):
            salvaged = _salvage(frame.encode() if isinstance(frame, str) else frame)
            if salvaged is not None:
                return classify(salvaged)
        return Invalid(error_reply(None, PARSE_ERROR, f"Parse error: {exc}"))
    return classify(payload)


# --- valid JSON nested beyond the parser's limit --------------------------------------------------
#
# pydantic-core refuses to build values nested more than ~200 levels. Such a message is still
# valid JSON with a readable id, and a client waiting for that id must get an answer, so the
# top-level object (and its "params" object) is skimmed without building the deep values:
# shallow members are parsed, deep ones become TOO_DEEP for the handler to refuse.


def _skip_string(data: bytes, index: int) -> int:
    """Index just past the string starting at ``data[index] == '"'``."""
    index += 1
    while True:
        quote = data.index(b'"', index)
        backslashes = 0
        while data[quote - 1 - backslashes] == 0x5C:
            backslashes += 1
        if backslashes % 2 == 0:
            return quote + 1
        index = quote + 1


# Pattern sources, compiled on first use (``re`` keeps them): only a frame nested beyond the
# parser's limit needs them, and a pattern compiled at import costs every server's start-up.
_STRUCTURE: Final = rb'["\[\]{}]'
_SCALAR_END: Final = rb"[,}\]\s]"
_WHITESPACE: Final = rb"[ \t\n\r]*"


def _skip_value(data: bytes, index: int) -> int:
    """Index just past the JSON value starting at ``index`` (no values are built)."""
    if data[index] not in b'"[{':  # a number, true, false or null
        end = re.compile(_SCALAR_END).search(data, index)
        return end.start() if end else len(data)
    structure = re.compile(_STRUCTURE)
    depth = 0
    while True:
        found = structure.search(data, index)
        if found is None:
            raise ValueError("unterminated value")
        index = found.start()
        char = data[index]
        if char == 0x22:  # "
            index = _skip_string(data, index)
            if depth == 0:
                return index
            continue
        depth += 1 if char in b"[{" else -1
        index += 1
        if depth == 0:
            return index


def _after_whitespace(data: bytes, index: int) -> int:
    found = re.compile(_WHITESPACE).match(data, index)
    assert found is not None  # the pattern matches the empty string
    return found.end()


def _expect(data: bytes, index: int, char: bytes) -> int:
    """Index just past ``char``, which must come next (after whitespace)."""
    index = _after_whitespace(data, index)
    if data[index : index + 1] != char:
        raise ValueError(f"expected {char!r} at {index}")
    return index + 1


def _members(data: bytes, *, whole: bool) -> dict[str, bytes] | None:
    """The raw member values of the JSON object ``data``, or None if it is not one.

    ``whole``: nothing but whitespace may follow the object. Malformed JSON raises ValueError.
    """
    index = _after_whitespace(data, 0)
    if data[index : index + 1] != b"{":
        return None
    index += 1
    members: dict[str, bytes] = {}
    index = _after_whitespace(data, index)
    if data[index : index + 1] != b"}":
        while True:
            index = _after_whitespace(data, index)
            if data[index : index + 1] != b'"':
                raise ValueError(f"expected a member name at {index}")
            end = _skip_string(data, index)
            key = pydantic_core.from_json(data[index:end])
            index = _after_whitespace(data, _expect(data, end, b":"))
            end = _skip_value(data, index)
            members[key] = data[index:end]
            index = _after_whitespace(data, end)
            if data[index : index + 1] == b",":
                index += 1
                continue
            if data[index : index + 1] != b"}":
                raise ValueError(f"expected ',' or '}}' at {index}")
            break
    if whole and _after_whitespace(data, index + 1) != len(data):
        raise ValueError("data after the message")
    return members


def _shallow(raw: bytes) -> Any:
    """The value, or TOO_DEEP if only its depth keeps it from being parsed (ValueError if invalid)."""
    try:
        return pydantic_core.from_json(raw, allow_inf_nan=False)
    except ValueError as exc:
        if "recursion limit" in str(exc):
            return TOO_DEEP
        raise


def _salvage(data: bytes) -> dict[str, Any] | None:
    """The message with its deep values as TOO_DEEP, or None if it is not valid JSON after all."""
    try:
        members = _members(data, whole=True)
        if members is None:
            return None
        message = {key: _shallow(raw) for key, raw in members.items() if key != "params"}
        if "params" in members:
            params = _members(members["params"], whole=True)
            message["params"] = {key: _shallow(raw) for key, raw in params.items()} if params is not None else TOO_DEEP
        return message
    except (ValueError, IndexError):
        return None


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


def encode_result(request_id: RequestId, result: dict[str, Any] | Raw) -> bytes | Streamed:
    """The response carrying ``result``: its bytes, or a ``Streamed`` for a big one (see ``STREAM_ABOVE``)."""
    if isinstance(result, Raw):
        return b'{"jsonrpc":"2.0","id":' + pydantic_core.to_json(request_id) + b',"result":' + result.data + b"}"
    if text_length(result) > STREAM_ABOVE:
        return Streamed({"jsonrpc": "2.0", "id": request_id, "result": result})
    return pydantic_core.to_json({"jsonrpc": "2.0", "id": request_id, "result": result}, inf_nan_mode="null")


def json_type(value: Any) -> str:
    """The JSON name of a parsed value's type, for messages a client reads ("null", "array", ...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else type(value).__name__


class _Expired(Exception):
    """A request's timeout passed (``Correlator.request`` raises the ``failure`` it makes instead)."""


def _expire(future: asyncio.Future[Any]) -> None:
    if not future.done():
        future.set_exception(_Expired())


class Correlator:
    """Requests this side sent, each waiting for the response with its id: ids, futures, timeouts.

    ``failure`` makes the exception a waiting request gets: ``("timeout", method, seconds)``,
    ``("error", method, error object)`` or ``("closed", method, reason)``.
    """

    __slots__ = ("_deadlines", "_failure", "_ids", "_loop", "_pending", "_timer")

    def __init__(self, failure: Callable[[str, str, Any], Exception], *, first_id: int = 1) -> None:
        self._failure = failure
        self._pending: dict[RequestId, tuple[str, asyncio.Future[Any]]] = {}
        self._ids = itertools.count(first_id)
        self._deadlines: collections.deque[tuple[float, asyncio.Future[Any]]] | None = None
        """The requests waiting with a timeout, by deadline (in the order sent, when they share a
        timeout): one timer for all of them (``_expire_due``), not one each. Made by the first such
        request: a deque's first block is 600 bytes, and a legacy session holds a correlator
        whether or not the server ever asks its client anything."""
        self._timer: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def __len__(self) -> int:
        return len(self._pending)

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None,
        send: Callable[[dict[str, Any]], Awaitable[None]],
        timeout: float | None,
        abandoned: Callable[[RequestId, str], None] | None = None,
    ) -> Any:
        """Send a request with a fresh id and wait for its result; its error or a timeout raise.

        ``abandoned(id, why)`` is called when this side stops waiting while the request may still
        run on the other side: on the timeout (``why`` says so) or when the waiting task is
        cancelled (``"cancelled"``), so the caller can cancel it over there.
        """
        request_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = (method, future)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        timer: asyncio.TimerHandle | None = None
        try:
            await send(message)
            if future.done():  # answered while it was sent (an in-process server): no timer, no loop pass
                return future.result()
            if timeout is not None:  # the future fails at its deadline (asyncio.timeout adds a Timeout
                # object and cancels the task; wait_for adds a future and a callback)
                timer = self._expire_at(timeout, future)
            try:
                return await future
            except _Expired:
                if abandoned is not None:
                    abandoned(request_id, f"no response within {timeout:g} s")
                raise self._failure("timeout", method, timeout) from None
            except asyncio.CancelledError:
                # Cancelling the task cancels the future it awaits: only a response that did arrive means done.
                answered = future.done() and not future.cancelled()
                if abandoned is not None and not answered:
                    abandoned(request_id, "cancelled")
                raise
        finally:
            if timer is not None:
                timer.cancel()
            self._pending.pop(request_id, None)
            deadlines = self._deadlines
            if deadlines:
                while deadlines and deadlines[0][1].done():  # answered in order: the queue stays short
                    deadlines.popleft()
                if len(deadlines) > 2 * len(self._pending) + 16:
                    # Answered behind one still waiting (a slow call): kept, with their results, until
                    # it ends. Every entry still waiting is a pending request, so at least half go.
                    self._deadlines = collections.deque(entry for entry in deadlines if not entry[1].done())
            if future.done() and not future.cancelled():
                future.exception()  # read: a failure set while ``send`` raised is not "never retrieved"

    def _expire_at(self, timeout: float, future: asyncio.Future[Any]) -> asyncio.TimerHandle | None:
        """Fail ``future`` with ``_Expired`` in ``timeout`` seconds: queued behind the deadlines already
        there (the shared timer); a deadline earlier than the last queued gets a timer of its own."""
        loop = asyncio.get_running_loop()
        deadlines = self._deadlines
        if deadlines is None:
            deadlines = self._deadlines = collections.deque()
        if loop is not self._loop:  # first use, or another event loop (the old one's timer is gone with it)
            self._loop, self._timer = loop, None
            deadlines.clear()
        deadline = loop.time() + timeout
        if deadlines and deadline < deadlines[-1][0]:
            return loop.call_at(deadline, _expire, future)
        deadlines.append((deadline, future))
        timer = self._timer
        if timer is None or timer.when() > deadline:  # none, or set for a later one (the queue was empty)
            if timer is not None:
                timer.cancel()
            self._timer = loop.call_at(deadline, self._expire_due)
        return None

    def _expire_due(self) -> None:
        """The shared timer: fail the requests whose deadline passed, then wait for the next one."""
        self._timer = None
        loop = self._loop
        deadlines = self._deadlines
        while deadlines and loop is not None:
            deadline, future = deadlines[0]
            if not future.done():
                if deadline > loop.time():
                    self._timer = loop.call_at(deadline, self._expire_due)
                    return
                future.set_exception(_Expired())
            deadlines.popleft()

    def resolve(self, response: Response) -> bool:
        """Hand a response to the request waiting for it; ``False`` if none is."""
        return self.settle(response.id, response.result, response.error)

    def settle(self, request_id: RequestId, result: Any, error: dict[str, Any] | None = None) -> bool:
        """Answer request ``request_id`` with ``result`` (or ``error``); ``False`` if nothing waits for it."""
        pending = self._pending.get(request_id)
        if pending is None or pending[1].done():
            return False
        method, future = pending
        if error is not None:
            future.set_exception(self._failure("error", method, error))
        else:
            future.set_result(result)
        return True

    def close(self, reason: str) -> None:
        """Fail every request still waiting (the session or connection ended)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._deadlines is not None:
            self._deadlines.clear()
        for method, future in self._pending.values():
            if not future.done():
                future.set_exception(self._failure("closed", method, reason))
