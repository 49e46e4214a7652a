"""``ClientSession``: the protocol logic of an MCP client, in either era, over any transport.

- The version: pinned (a legacy version opens with ``initialize``; the modern one needs no
  handshake), or ``"auto"``: probe with ``server/discover`` and fall back to ``initialize``
  (``negotiation``).
- Every request: an id and a future (``_jsonrpc.Correlator``); the modern era's ``_meta``
  (version, client capabilities and info, log level; the keys in ``_types``); the headers an HTTP
  transport sends beside it (``_headers.for_request``, ``Mcp-Param-*`` from the listed tools);
  a progress callback; a subscription's notifications; cancellation on the server of what it
  gives up on.
- The server's questions (elicitation, sampling, roots) go to the user's handlers
  (``questions``): as requests over the session (legacy), answered in tasks of their own so the
  transport keeps reading; or as ``inputRequests`` of an ``input_required`` result (modern),
  answered by calling again with ``inputResponses`` and the ``requestState`` (``follow_input``).
- A JSON-RPC error is ``ClientError`` for the ``result``-returning calls; ``request`` returns
  the response as it came (raw wire JSON), for callers that look at errors themselves.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import itertools
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final

from .._errors import (
    INTERNAL_ERROR,
    ClientError,
    SchemaError,
)
from .._headers import PROTOCOL_VERSION, ParamPaths, for_request
from .._jsonrpc import Correlator
from .._methods import named_field
from .._schema.headers import header_params
from .._types import (
    CLIENT_CAPABILITIES_KEY,
    CLIENT_INFO_KEY,
    LOG_LEVEL_KEY,
    PROTOCOL_VERSION_KEY,
    SERVER_INFO_KEY,
    SUBSCRIPTION_ID_KEY,
    RequestId,
)
from .._versions import LATEST_VERSION, is_known, is_modern
from . import negotiation, questions
from .negotiation import AUTO, VersionNotAgreed, raise_failure
from .questions import QUESTIONS, Handler, InputRounds, NoHandler
from .transport import BODY_KEY, CLOSE_GRACE, Transport, TransportClosed

__all__ = [
    "AUTO",
    "QUESTIONS",
    "CallScope",
    "ClientSession",
    "Handler",
    "InputRounds",
    "NoHandler",
    "Progress",
    "VersionNotAgreed",
]

logger = logging.getLogger("toolkit.client")

Progress = Callable[[float, float | None, str | None], None]
"""Called with each progress report about a request: ``progress``, ``total`` and ``message``."""

DEFAULT_CLIENT_INFO: Final = {"name": "toolkit-client", "version": "1.0"}

_HEADERS_KEPT: Final = 1024
"""The modern routing headers kept per method and name, at most (``_headers_for``)."""

_SENDING: contextvars.ContextVar[RequestId | None] = contextvars.ContextVar("toolkit_client_sending", default=None)
"""The scoped request being sent: what a transport delivers from a task it starts while sending (an
HTTP POST's stream) or within the send (the memory transport) is about that request."""


class CallScope:
    """Who takes what the server sends about one request of ours (a proxy forwarding a call).

    ``handlers`` answer the server's questions asked during the request (legacy: over the
    session; modern: its ``input_required`` rounds); ``on_message`` sees the notifications about
    it first and says whether it took one (a log message); those it leaves go to the session's.
    A message is about the request when the transport says so (an HTTP request's own stream, the
    memory transport), or when it is the only scoped request in flight (stdio carries no
    relation); otherwise the session's own handlers and ``on_message`` take it.
    """

    __slots__ = ("body", "handlers", "on_message")

    def __init__(
        self, handlers: Mapping[str, Handler], on_message: Callable[[dict[str, Any]], bool] | None = None
    ) -> None:
        self.handlers = handlers
        self.on_message = on_message
        self.body: bytes | None = None
        """The JSON text of the request's response, when the transport read it whole (``BODY_KEY``)."""


def _failure(kind: str, method: str, detail: Any) -> Exception:
    """What a request of ours raises when it gets no response (``Correlator``)."""
    if kind == "timeout":
        return TimeoutError(f"the server did not answer {method} within {detail:g} s")
    if kind == "error":  # not reached: responses resolve whole (see _deliver)
        return ClientError(detail)
    return TransportClosed(f"{method} got no response: {detail}")


def _result_of(method: str, response: dict[str, Any]) -> dict[str, Any]:
    """A response's ``result``: every MCP result is an object, so anything else fails as the server's error."""
    result = response.get("result")
    if not isinstance(result, dict):
        message = f"the server answered {method} with a result that is not an object: {result!r:.200}"
        raise ClientError({"code": INTERNAL_ERROR, "message": message})
    return result


class ClientSession:
    """One client's conversation with one server over ``transport``.

    ``protocol_version``: a known version (pinned) or ``"auto"``. ``handlers``: the method of a
    question (``elicitation/create``, ``sampling/createMessage``, ``roots/list``) → its answer;
    without ``capabilities``, each handler declares the capability it answers. ``on_message``
    sees every message the server sends besides responses, in order, before it is handled.
    ``timeout``: how long a request waits for its response; ``probe_timeout``: how long the
    ``"auto"`` probe waits before taking the server for a legacy one.
    """

    def __init__(
        self,
        transport: Transport,
        *,
        protocol_version: str = AUTO,
        capabilities: dict[str, Any] | None = None,
        client_info: dict[str, Any] | None = None,
        log_level: str | None = None,
        handlers: Mapping[str, Handler | None] | None = None,
        on_message: Callable[[dict[str, Any]], None] | None = None,
        timeout: float = 300.0,
        probe_timeout: float = 10.0,
    ) -> None:
        if protocol_version != AUTO and not is_known(protocol_version):
            raise ValueError(f"unknown protocol version {protocol_version!r}")
        self.transport = transport
        self._sends_headers: bool = getattr(transport, "sends_headers", True)
        """Whether the transport sends anything beside a message (HTTP's headers; not stdio's pipe)."""
        self.requested_version = protocol_version
        self.handlers = {method: handler for method, handler in (handlers or {}).items() if handler is not None}
        if capabilities is None:
            capabilities = {name: {} for name, method in QUESTIONS.items() if method in self.handlers}
        self.capabilities = capabilities
        self.client_info = client_info or dict(DEFAULT_CLIENT_INFO)
        self.log_level = log_level
        self.timeout = timeout
        self.probe_timeout = probe_timeout
        self.on_message = on_message
        self.protocol_version: str | None = None
        """The version spoken: the pinned one, or what ``open`` settled on."""
        self.modern = False
        self.initialize_result: dict[str, Any] | None = None
        """The server's ``initialize`` result (legacy era)."""
        self.discover_result: dict[str, Any] | None = None
        """The server's ``server/discover`` result (``"auto"`` that found a modern server)."""
        self._requests = Correlator(_failure)
        self._meta: dict[str, Any] = {}
        self._legacy_headers: dict[str, str] | None = None
        self._connected = False
        self._answering: dict[str | int, asyncio.Task[None]] = {}
        self._cancelling: set[asyncio.Task[None]] = set()
        self._progress: dict[str, Progress] = {}
        self._subscriptions: dict[RequestId, Callable[[dict[str, Any]], None]] = {}
        self._progress_ids = itertools.count(1)
        self._scopes: dict[RequestId, CallScope] = {}
        self.closed_reason: str | None = None
        """Why the connection ended (the server exited, the stream closed, ``close()``); ``None`` while open."""
        self.tool_params: dict[str, ParamPaths] = {}
        """Each listed tool's ``x-mcp-header`` parameters (modern HTTP sends them as ``Mcp-Param-*``)."""
        self._headers_kept: dict[tuple[str, str, str | None], Mapping[str, str]] = {}
        if protocol_version != AUTO:
            self.settle(protocol_version)

    # --- the connection and the version ---------------------------------------------------------

    async def __aenter__(self) -> ClientSession:
        await self.open()
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self.close()

    async def connect(self) -> None:
        """Open the transport, no handshake (``open`` does both; a raw caller may speak the handshake itself)."""
        if not self._connected:
            await self.transport.open(self._deliver, on_close=self._lost)
            direct = getattr(self.transport, "resolve_responses_with", None)
            if direct is not None:
                direct(self._resolve_response)
            self._connected = True

    async def open(self) -> None:
        """Connect and settle the version: ``initialize`` for a legacy one, a probe for ``"auto"``."""
        await self.connect()
        if self.requested_version == AUTO:
            await self._probe(LATEST_VERSION, retry=True)
        elif not self.modern:
            await self._initialize(self.requested_version)

    async def close(self) -> None:
        """Stop answering the server, fail what still waits for a response, close the transport."""
        answering = [task for task in self._answering.values() if task is not asyncio.current_task()]
        for task in answering:
            task.cancel()
        await asyncio.gather(*answering, return_exceptions=True)
        if self._cancelling:  # the server hears of what we stopped waiting for before the connection ends
            cancelling = set(self._cancelling)
            _, late = await asyncio.wait(cancelling, timeout=CLOSE_GRACE)
            for task in late:
                task.cancel()
            await asyncio.gather(*cancelling, return_exceptions=True)
        self._requests.close("the session was closed")
        self.closed_reason = self.closed_reason or "the session was closed"
        await self._disconnect()

    async def _disconnect(self) -> None:
        if self._connected:
            self._connected = False
            await self.transport.close()

    def _lost(self, reason: str) -> None:
        """The transport ended (the server exited, the stream closed): what still waits fails now, saying why.

        The first reason stays: a session aborted says why, not that its transport then closed."""
        self.closed_reason = reason = self.closed_reason or reason
        self._requests.close(reason)

    async def abort(self, reason: str) -> None:
        """Give the server up (it answers nothing): what still waits fails now with ``reason``, and the
        transport closes (a child process is stopped) without waiting for the server to hear of what
        was cancelled, which a server that reads nothing would never take. ``close`` still ends the rest."""
        self._lost(reason)
        await self._disconnect()

    def settle(self, version: str) -> None:
        self.protocol_version = version
        self.modern = is_modern(version)
        if self.modern:
            self._meta = self.modern_meta(version)
        else:
            self._legacy_headers = {PROTOCOL_VERSION: version}

    def set_log_level(self, level: str) -> None:
        """Ask for log messages at ``level`` from now on, in every request's ``_meta`` (2026-07-28)."""
        self.log_level = level
        if self.modern and self.protocol_version is not None:
            self._meta = self.modern_meta(self.protocol_version)

    def modern_meta(self, version: str) -> dict[str, Any]:
        meta: dict[str, Any] = {
            PROTOCOL_VERSION_KEY: version,
            CLIENT_CAPABILITIES_KEY: self.capabilities,
            CLIENT_INFO_KEY: self.client_info,
        }
        if self.log_level is not None:
            meta[LOG_LEVEL_KEY] = self.log_level
        return meta

    async def _probe(self, version: str, *, retry: bool) -> None:
        await negotiation.probe(self, version, retry=retry)

    async def _initialize(self, version: str | None) -> None:
        await negotiation.initialize(self, version)

    @property
    def in_flight(self) -> int:
        """How many of our requests wait for their response now."""
        return len(self._requests)

    @property
    def server_capabilities(self) -> dict[str, Any] | None:
        """What the server declared (``initialize`` or ``server/discover``); ``None`` when it was not asked."""
        settled = self.initialize_result or self.discover_result
        return settled.get("capabilities") if settled is not None else None

    @property
    def server_info(self) -> dict[str, Any] | None:
        if self.initialize_result is not None:
            info: dict[str, Any] | None = self.initialize_result.get("serverInfo")
            return info
        if self.discover_result is not None:
            return (self.discover_result.get("_meta") or {}).get(SERVER_INFO_KEY)
        return None

    # --- requests and notifications -------------------------------------------------------------

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        meta: dict[str, Any] | None = None,
        timeout: float | None = None,
        progress: Progress | None = None,
        subscription: Callable[[dict[str, Any]], None] | None = None,
        scope: CallScope | None = None,
    ) -> dict[str, Any]:
        """Send one request; its response as it came (``result`` or ``error``, and what the transport added).

        ``meta`` joins the session's own ``_meta`` (a key of ``params["_meta"]`` wins over both);
        ``timeout`` replaces the session's for this request; ``progress`` is called with each
        ``notifications/progress`` the server sends about it (a ``progressToken`` is added).
        A request given up on (its timeout, or the caller cancelled it) is cancelled on the server.
        ``subscription``: the request opens a subscription (``subscriptions/listen``); each
        notification carrying its id (``_meta`` ``subscriptionId``) goes to this callable. Its
        response comes only when the subscription ends, so it waits for it without the session's
        timeout, unless ``timeout`` is given.
        ``scope``: who answers the questions and takes the notifications about this request.
        """
        given = dict(params or {})
        token: str | None = None
        if progress is not None:
            token = f"progress-{next(self._progress_ids)}"
            self._progress[token] = progress
        seconds = timeout if timeout is not None or subscription is not None else self.timeout
        try:
            for attempt in range(2):
                sent = self._with_meta(given, meta, token)
                headers = self._headers_for(method, sent)
                response = await self.exchange(method, sent, seconds, headers, subscription, scope)
                if attempt or "error" not in response or not negotiation.agreed_again(self, response):
                    return response
            raise AssertionError("unreachable: the second attempt returns")  # pragma: no cover
        finally:
            if token is not None:
                del self._progress[token]

    def _with_meta(self, params: dict[str, Any], meta: dict[str, Any] | None, token: str | None) -> dict[str, Any]:
        """``params`` with the session's ``_meta``, the caller's, and the progress token."""
        merged = {**self._meta, **meta} if meta else self._meta
        if token is not None:
            merged = {**merged, "progressToken": token}
        if not (merged or "_meta" in params):
            return params
        return {**params, "_meta": {**merged, **params.get("_meta", {})}}

    async def result(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        meta: dict[str, Any] | None = None,
        timeout: float | None = None,
        progress: Progress | None = None,
    ) -> dict[str, Any]:
        """Send one request; its ``result``, or ``ClientError`` with the JSON-RPC error."""
        response = await self.request(method, params, meta=meta, timeout=timeout, progress=progress)
        if "error" in response:
            raise_failure(response)
            raise ClientError(response["error"])
        return _result_of(method, response)

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        await self.connect()
        params = params or {}
        message = {"jsonrpc": "2.0", "method": method, "params": params}
        await self.transport.send(message, headers=self._headers_for(method, params))

    def _headers_for(self, method: str, params: dict[str, Any]) -> Mapping[str, str] | None:
        """What an HTTP transport sends beside a message: the modern routing headers, or the legacy version.

        The same method and name without ``Mcp-Param-*`` headers get the same headers every time:
        made once, kept (the transports only read them), for every name up to ``_HEADERS_KEPT``.
        """
        if not self._sends_headers:
            return None
        version = self.protocol_version
        if not self.modern or version is None:
            return self._legacy_headers
        if method == "tools/call":
            name = params.get("name")
            paths = self.tool_params.get(name) if type(name) is str else None
            if paths:
                return for_request(method, params, version, paths)
        field = named_field(method)
        named = params.get(field) if field is not None else None
        if named is not None and type(named) is not str:
            return for_request(method, params, version)
        key = (method, version, named)
        headers = self._headers_kept.get(key)
        if headers is None:
            if len(self._headers_kept) >= _HEADERS_KEPT:
                self._headers_kept.clear()
            headers = self._headers_kept[key] = for_request(method, params, version)
        return headers

    async def exchange(
        self,
        method: str,
        params: dict[str, Any],
        timeout: float | None,
        headers: Mapping[str, str] | None,
        subscription: Callable[[dict[str, Any]], None] | None = None,
        scope: CallScope | None = None,
    ) -> dict[str, Any]:
        """Send a request and wait for its whole response (``timeout=None``: as long as it takes)."""
        if not self._connected:
            await self.connect()  # a pinned session used raw, without open()
        send: Callable[[dict[str, Any]], Awaitable[None]]
        filed: list[RequestId] = []
        if subscription is not None:
            send = self._subscribing(subscription, headers)
        elif scope is not None:
            send = self._scoped(scope, headers, filed)
        else:
            send = functools.partial(self.transport.send, headers=headers)
        abandoned = None if method == "initialize" else self._abandoned  # initialize is never cancelled
        try:
            response: dict[str, Any] = await self._requests.request(method, params, send, timeout, abandoned)
        except TransportClosed as exc:
            reason = self.closed_reason  # why the session ended (abort's reason), said to a send it cut short
            if reason is None or reason in str(exc):
                raise
            raise TransportClosed(f"{method} got no response: {reason}") from exc
        finally:
            for request_id in filed:
                self._scopes.pop(request_id, None)
        return response

    def _scoped(
        self, scope: CallScope, headers: Mapping[str, str] | None, filed: list[RequestId]
    ) -> Callable[[dict[str, Any]], Awaitable[None]]:
        """A ``send`` that files ``scope`` under the request's id (noted in ``filed``), and marks what the
        transport delivers for it."""

        async def send(message: dict[str, Any]) -> None:
            request_id = message["id"]
            self._scopes[request_id] = scope
            filed.append(request_id)
            scope.body = None  # the text of this request's response, if the transport keeps it
            sending = _SENDING.set(request_id)
            try:
                await self.transport.send(message, headers=headers)
            finally:
                _SENDING.reset(sending)

        return send

    def _scope_for_message(self) -> CallScope | None:
        """The scope of the request a message just delivered is about, if it can be told."""
        scopes = self._scopes
        if not scopes:
            return None
        related = _SENDING.get()
        if related is not None:
            return scopes.get(related)
        if len(scopes) == 1:
            return next(iter(scopes.values()))
        return None

    def _subscribing(
        self, subscription: Callable[[dict[str, Any]], None], headers: Mapping[str, str] | None
    ) -> Callable[[dict[str, Any]], Awaitable[None]]:
        """A ``send`` that files ``subscription`` under the request's id before the request leaves."""

        async def send(message: dict[str, Any]) -> None:
            request_id = message["id"]
            self._subscriptions[request_id] = subscription
            try:
                await self.transport.send(message, headers=headers)
            except BaseException:
                self._subscriptions.pop(request_id, None)
                raise

        return send

    def _abandoned(self, request_id: RequestId, why: str) -> None:
        """We stopped waiting for ``request_id``: cancel it on the server, the way this era and transport say."""
        task = asyncio.get_running_loop().create_task(self._cancel(request_id, why))
        self._cancelling.add(task)
        task.add_done_callback(self._cancelling.discard)

    async def _cancel(self, request_id: RequestId, why: str) -> None:
        """Close the request's own stream where that is the signal, else ``notifications/cancelled``.

        2026-07-28 basic/patterns/cancellation: over Streamable HTTP, closing the request's SSE
        stream is the cancellation (no notification expected); over stdio, and in the legacy era
        on every transport, the client sends ``notifications/cancelled``.
        """
        abandon = getattr(self.transport, "abandon", None)
        try:
            if self.modern and abandon is not None and await abandon(request_id):
                return
            await self.notify("notifications/cancelled", {"requestId": request_id, "reason": why})
        except (TransportClosed, ConnectionError, OSError) as exc:
            logger.debug("could not cancel request %r on the server: %s", request_id, exc)

    def _resolve_response(self, message: dict[str, Any]) -> bool:
        """Resolve our request with ``message``, a response; ``False`` if it is not one (no usable id, or a method).

        A transport that can tell a response on its own hands it here directly, without a task
        (``resolve_responses_with``): the whole response resolves the request, as it came.
        """
        message_id = message.get("id")
        if "method" in message or not isinstance(message_id, str | int):
            return False
        body = message.pop(BODY_KEY, None)
        if type(body) is bytes and self._scopes:  # bytes: the transport's (no JSON value is bytes)
            scope = self._scopes.get(message_id)
            if scope is not None:
                scope.body = body
        if self._subscriptions:
            self._subscriptions.pop(message_id, None)  # the server ended the subscription
        if not self._requests.settle(message_id, message):
            logger.debug("a response nothing waits for: %r", message)
        return True

    async def _deliver(self, message: dict[str, Any]) -> None:
        """Everything the server sends: responses resolve our requests; the rest is observed and handled."""
        method = message.get("method")
        if method is None:
            if not self._resolve_response(message):
                logger.debug("a response without an id we could have sent: %r", message)
            return
        scope = self._scope_for_message() if self._scopes else None
        if scope is not None and scope.on_message is not None and "id" not in message and scope.on_message(message):
            pass  # taken by the request it is about
        elif self.on_message is not None:
            self.on_message(message)
        if method == "notifications/progress":
            self._progressed(message.get("params"))
            return
        if self._subscriptions and "id" not in message:
            params = message.get("params")
            meta = params.get("_meta") if isinstance(params, dict) else None
            subscription_id = meta.get(SUBSCRIPTION_ID_KEY) if isinstance(meta, dict) else None
            listener = self._subscriptions.get(subscription_id) if isinstance(subscription_id, str | int) else None
            if listener is not None:
                listener(message)
                return
        if "id" in message:
            request_id = message["id"]
            if not isinstance(request_id, str | int):
                logger.debug("a request with an id that cannot be answered: %r", message)
                return
            handlers = scope.handlers if scope is not None else self.handlers
            task = asyncio.get_running_loop().create_task(self._answer_request(message, handlers))
            self._answering[request_id] = task
            task.add_done_callback(lambda _: self._answering.pop(request_id, None))
        elif method == "notifications/cancelled":
            params = message.get("params")
            cancelled = params.get("requestId") if isinstance(params, dict) else None
            running = self._answering.get(cancelled) if isinstance(cancelled, str | int) else None
            if running is not None:
                running.cancel()

    def _progressed(self, params: Any) -> None:
        """Hand a ``notifications/progress`` to the callback of the request it is about."""
        if not isinstance(params, dict):
            return
        callback = self._progress.get(params.get("progressToken"))  # type: ignore[arg-type]
        if callback is None:
            return
        progress, total, message = params.get("progress"), params.get("total"), params.get("message")
        if not isinstance(progress, int | float):
            return  # not a progress report (the schema requires a number)
        try:
            callback(
                progress,
                total if isinstance(total, int | float) else None,
                message if isinstance(message, str) else None,
            )
        except Exception:
            logger.exception("the progress callback failed")

    async def _answer_request(self, message: dict[str, Any], handlers: Mapping[str, Handler]) -> None:
        """Answer one server request (legacy era) with its handler; any failure is a JSON-RPC error."""
        method = message["method"]
        reply = await questions.reply(handlers, message)
        try:
            await self.transport.send(reply, headers=self._headers_for(method, {}))
        except TransportClosed:
            logger.debug("closed before the answer to %s could be sent", method)

    # --- the server's questions, modern era --------------------------------------------------------

    async def answer(self, asked: dict[str, Any], handlers: Mapping[str, Handler] | None = None) -> Any:
        """The answer to one of the server's ``inputRequests`` (``method`` and ``params``), from its handler."""
        chosen = self.handlers if handlers is None else handlers
        return await questions.answer(chosen, asked["method"], asked.get("params", {}))

    async def follow_input(
        self,
        method: str,
        params: dict[str, Any],
        *,
        meta: dict[str, Any] | None = None,
        follow: bool = True,
        max_rounds: int = 10,
        timeout: float | None = None,
        progress: Progress | None = None,
        scope: CallScope | None = None,
    ) -> dict[str, Any]:
        """The ``result`` of ``method``, answering ``input_required`` rounds (``follow=False``: the first round).

        ``scope``: its handlers answer the rounds' questions, and it takes the requests' notifications.
        """
        handlers = scope.handlers if scope is not None else None
        for _ in range(max_rounds):
            response = await self.request(method, params, meta=meta, timeout=timeout, progress=progress, scope=scope)
            if "error" in response:
                raise_failure(response)
                raise ClientError(response["error"])
            result = response.get("result")
            if type(result) is not dict:
                result = _result_of(method, response)  # fails, saying why
            if result.get("resultType") != "input_required" or not follow:
                return result
            asked = result.get("inputRequests") or {}
            responses = {key: await self.answer(question, handlers) for key, question in asked.items()}
            params = {**params, "inputResponses": responses}
            if "requestState" in result:
                params["requestState"] = result["requestState"]
            else:
                params.pop("requestState", None)
        raise InputRounds(f"{method} still needed input after {max_rounds} rounds")

    # --- the requests every client makes ------------------------------------------------------------

    async def list_tools(self) -> list[dict[str, Any]]:
        """Every tool, all pages."""
        tools: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            result = await self.result("tools/list", {"cursor": cursor} if cursor else {})
            tools.extend(result["tools"])
            cursor = result.get("nextCursor")
            if not cursor:
                return self._headed(tools)

    def _headed(self, tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Read each tool's ``x-mcp-header`` parameters; over HTTP, drop a tool that breaks their rules.

        2026-07-28 streamable-http, "Custom Headers from Tool Parameters": a client that sends
        headers MUST exclude such a tool from ``tools/list`` and SHOULD log why; one malformed
        tool does not hide the others. Other transports MAY ignore the annotations: kept, unread.
        """
        strict = bool(getattr(self.transport, "sends_headers", False))
        kept: list[dict[str, Any]] = []
        params: dict[str, ParamPaths] = {}
        for tool in tools:
            schema = tool.get("inputSchema") if isinstance(tool, dict) else None
            try:
                paths = header_params(schema, f"tool {tool.get('name')!r}") if isinstance(schema, dict) else {}
            except SchemaError as exc:
                if strict:
                    logger.warning("left out of tools/list: %s", exc)
                    continue
                paths = {}
            if paths:
                params[tool["name"]] = paths
            kept.append(tool)
        self.tool_params = params
        return kept

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        meta: dict[str, Any] | None = None,
        follow_input: bool = True,
        max_rounds: int = 10,
    ) -> dict[str, Any]:
        """The ``CallToolResult`` (``input_required`` rounds answered with the handlers)."""
        params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
        return await self.follow_input("tools/call", params, meta=meta, follow=follow_input, max_rounds=max_rounds)

    async def get_prompt(
        self, name: str, arguments: dict[str, str] | None = None, *, follow_input: bool = True
    ) -> dict[str, Any]:
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments
        return await self.follow_input("prompts/get", params, follow=follow_input)

    async def read_resource(self, uri: str, *, follow_input: bool = True) -> dict[str, Any]:
        return await self.follow_input("resources/read", {"uri": uri}, follow=follow_input)
