"""Streamable HTTP, the client side: every message a POST; answers in JSON or an SSE stream, in either era.

- A request is POSTed from a task of its own, which then reads the answer: one JSON object (a
  JSON array too, 2025-03-26 batches) or an SSE stream whose ``message`` events are delivered
  as they arrive, the response last. ``send`` returns once the request has been sent, so the
  session's timeout covers the wait for the answer; ``abandon(id)`` closes that request's
  stream, which in 2026-07-28 IS its cancellation (basic/patterns/cancellation,
  "Transport-Specific Cancellation"). Notifications and answers to the server's requests are
  POSTed in ``send`` itself (``202 Accepted``).
- Every HTTP failure of a request becomes a JSON-RPC error response for its id (the server's
  own JSON-RPC error body when it sent one), so the caller gets a clear ``ClientError`` rather
  than a wait for its timeout: a status without MCP body, a body that is not MCP (an HTML page),
  invalid JSON, an event over ``max_message_bytes``, a stream that ends without the response.
  A server that cannot be reached makes ``send`` raise ``ConnectionError`` naming the URL.
- Legacy era (2025-03-26 to 2025-11-25, transports "Streamable HTTP"): the ``Mcp-Session-Id``
  of the ``initialize`` answer is sent on every later request and ``DELETE``d on ``close``; a
  404 for it says the session is gone ("Session Management" 3-4). After the handshake a GET
  stream carries what the server sends outside requests ("Listening for Messages"; 405 means
  it has none). A request's stream that ends early after the server gave event ids is resumed
  with GET and ``Last-Event-ID``, after the server's ``retry`` ("Resumability and Redelivery").
  All of that but the header itself is ``http_legacy_session.LegacySession``.
- Modern era (2026-07-28, transports/streamable-http): no sessions, no GET stream, no
  resumption ("Resumable SSE streams via Last-Event-ID are not supported"); a long-lived
  ``subscriptions/listen`` is an ordinary request whose stream stays open.

The era of each message is the ``MCP-Protocol-Version`` the session sends beside it (none: the
legacy handshake).

Bodies are read bounded, and SSE events parsed into messages, by ``http_bodies``. HTTP itself
goes through ``exchange.HttpClient``: ``http11.Http11Client`` (HTTP/1.1 on asyncio, a fraction of
httpx's CPU per request) unless only httpx can do it: an ``auth`` (an ``httpx.Auth``: OAuth), a
user's ``http_client``, a proxy in the environment, a URL it does not take. httpx is imported
only then.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import logging
from collections.abc import Callable, Coroutine, Mapping
from typing import TYPE_CHECKING, Any, Final

import pydantic_core

from .._errors import INTERNAL_ERROR
from .._headers import PROTOCOL_VERSION
from .._jsonrpc import encode, error_reply
from .._types import RequestId
from .._versions import is_modern
from .exchange import ConnectFailed, HttpClient, HttpError, HttpResponse, HttpTimeout, ReadTimeout, lean_reachable
from .http_bodies import ACCEPT_BOTH, MalformedMessage, excerpt, media_type, media_type_of, read_limited, read_messages
from .http_legacy_session import SESSION_ID, LegacySession
from .sse import EventTooLarge, SseParser
from .transport import FAILURE_KEY, Deliver, OnClose, TransportClosed, parse_response

if TYPE_CHECKING:
    import httpx

    from .http11_connection import Connection, Event, Http11Response

logger = logging.getLogger("toolkit.client")

DEFAULT_MAX_MESSAGE_BYTES: Final = 16 * 1024 * 1024
DEFAULT_RETRY_MS: Final = 1000
"""How long to wait before reconnecting when the server sent no ``retry``."""
KEEPALIVE_SECONDS: Final = 2.0
"""How long an idle connection is kept for reuse: under the shortest keep-alive servers use (uvicorn's 5 s)."""
_POSTS_KEPT: Final = 1024
ERROR_BODY_BYTES: Final = 64 * 1024
"""How much of an error status's body is read, looking for a JSON-RPC error in it."""


RequestHeaders = dict[str, tuple[str, str]]
"""A request's headers by lower-case name (a later one of the same name replaces an earlier one)."""


class PendingRequest:
    """One request being answered: its id, whether its response came, where its stream stands."""

    __slots__ = ("answered", "headers", "last_event_id", "legacy", "request_id", "resumable", "retry", "session")

    def __init__(self, request_id: RequestId, headers: Mapping[str, str] | None, legacy: bool) -> None:
        self.request_id = request_id
        self.headers = headers
        """What the session sent beside the request (a resuming GET sends them again)."""
        self.legacy = legacy
        self.resumable = legacy
        """Whether a stream that ends early may be resumed: legacy era, and nothing wrong in it so far."""
        self.session = False
        """Whether the request named a legacy session (then a 404 means the session is gone)."""
        self.answered = False
        self.last_event_id: str | None = None
        self.retry: int | None = None


class _Watched:
    """A request written by ``Http11Client.send_now``; its connection watches the answer (``_watch``)."""

    __slots__ = ("body", "cancelled", "connection", "context", "headers", "pending")

    def __init__(
        self, pending: PendingRequest, headers: RequestHeaders, body: bytes, context: contextvars.Context
    ) -> None:
        self.pending = pending
        self.headers = headers
        self.body = body
        self.context = context
        """The sender's: a task that reads the answer runs in it, as one started by the sender would."""
        self.connection: Connection
        self.cancelled = False

    def cancel(self) -> None:
        """Stop watching and close the connection (over 2026-07-28 HTTP, that cancels the request)."""
        if not self.cancelled:
            self.cancelled = True
            self.connection.close()


class HttpTransport:
    """One MCP endpoint over Streamable HTTP, as ``ClientSession`` drives it.

    ``headers`` go on every HTTP request (after the MCP ones: a user's header of the same name
    wins); ``auth`` is an ``httpx.Auth`` (OAuth, a bearer token); ``http_client`` is used instead
    of a client of our own (and is not closed by us). ``timeout``: seconds to connect, write, get
    a pooled connection, and for the small exchanges (notifications, ``DELETE``);
    ``read_timeout``: seconds an answer may stay silent (``None``: no limit; the session's own
    timeout bounds each request, and a subscription's stream may stay quiet for hours).
    ``max_message_bytes``: the largest message (a JSON body, one SSE event) accepted.
    ``get_stream``: open the legacy GET stream after the handshake. ``max_reconnects``: attempts
    in a row, without anything received, to resume a stream or reopen the GET stream.
    """

    sends_headers: Final = True
    """The session's headers go on the wire: tools with invalid ``x-mcp-header`` annotations are left out."""

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        auth: httpx.Auth | None = None,
        http_client: httpx.AsyncClient | None = None,
        timeout: float = 30.0,
        read_timeout: float | None = None,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        get_stream: bool = True,
        max_reconnects: int = 5,
        retry_ms: int = DEFAULT_RETRY_MS,
    ) -> None:
        self.url = url
        self.headers = dict(headers or {})
        self.auth = auth
        self.timeout = timeout
        self.read_timeout = read_timeout
        self.max_message_bytes = max_message_bytes
        self.get_stream = get_stream
        self.max_reconnects = max_reconnects
        self.retry_ms = retry_ms
        self.session_id: str | None = None
        """The legacy session the server assigned (``Mcp-Session-Id``), once it did."""
        self.session_expired = False
        """Set when the server answered 404 for our session: a new session is needed (a new transport)."""
        self.close_reason: str | None = None
        """Why the connection ended (``close()``, or the server ended the session): ``send`` raises it."""
        self._on_close: OnClose | None = None
        self._http_client = http_client
        self._http: HttpClient | None = None
        self._deliver: Deliver | None = None
        self._closed = False
        self._legacy = LegacySession(self)
        self._reading: dict[RequestId, asyncio.Task[None] | _Watched] = {}
        self._resolve: Callable[[dict[str, Any]], bool] | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._listening: asyncio.Task[None] | None = None
        self._posts: dict[
            int, tuple[Mapping[str, str] | None, str | None, RequestHeaders, tuple[tuple[str, str], ...]]
        ] = {}
        """Each request's headers made so far, by the session's headers beside it (``_post_headers``)."""

    # --- the Transport protocol ---------------------------------------------------------------

    async def open(self, deliver: Deliver, *, on_close: OnClose | None = None) -> None:
        """Get ready to send; ``on_close(reason)`` is told once that the connection ended.

        Over HTTP that is ``close()``, or the server ending the legacy session (a 404 for it): each
        request has a connection of its own, and a request whose answer fails gets its own error.
        """
        if self._closed:
            raise TransportClosed(f"the HTTP transport to {self.url} was closed")
        if self._http is None:
            self._http = self._http_client_for_url()
        self._deliver = deliver
        self._on_close = on_close

    def resolve_responses_with(self, resolve: Callable[[dict[str, Any]], bool]) -> None:
        """Hand a plain JSON response straight to ``resolve`` (the session's), from the connection, without a task.

        ``resolve(message)`` is ``False`` if ``message`` is not a response it takes; it then goes
        to ``deliver`` as everything else does.
        """
        self._resolve = resolve

    async def send(self, message: dict[str, Any], *, headers: Mapping[str, str] | None = None) -> None:
        if self.close_reason is not None:
            raise TransportClosed(self.close_reason)
        if self._deliver is None or self._http is None:
            raise TransportClosed(f"the HTTP transport to {self.url} is not open")
        version = headers.get(PROTOCOL_VERSION) if headers else None
        modern = version is not None and is_modern(version)
        if version is not None and not modern:
            self._legacy.version = version
        request_id = message.get("id")
        if "method" in message and isinstance(request_id, str | int):
            await self._send_request(request_id, message, headers, legacy=not modern)
            return
        await self._post_message(message, headers, modern)
        if message.get("method") == "notifications/cancelled":
            # Legacy cancellation: the server was told; its stream for that request has nothing more to say.
            params = message.get("params")
            cancelled = params.get("requestId") if isinstance(params, dict) else None
            if isinstance(cancelled, str | int):
                await self.abandon(cancelled)

    async def abandon(self, request_id: RequestId) -> bool:
        """Close the answer stream of request ``request_id``; ``False`` if nothing of it is being read.

        Over 2026-07-28 Streamable HTTP, closing the stream is the request's cancellation (the
        server MUST treat the disconnect so); nothing more of that request is delivered.
        """
        reading = self._reading.get(request_id)
        if isinstance(reading, _Watched):
            reading.cancel()
            self._forget(request_id, reading)
            return True
        if reading is None or reading.done():
            return False
        reading.cancel()
        if reading is not asyncio.current_task():
            await asyncio.wait({reading})
        return True

    async def close(self) -> None:
        """Stop reading, ``DELETE`` the legacy session, close our HTTP client; idempotent."""
        if self._closed:
            return
        self._closed = True
        self._deliver = None
        for reading in list(self._reading.values()):
            if isinstance(reading, _Watched):
                reading.cancel()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)
        self._end(f"the HTTP transport to {self.url} was closed")
        http = self._http
        if http is None:
            return
        try:
            if self.session_id is not None and not self.session_expired:
                await self._legacy.end(self.session_id)
        finally:
            await http.aclose()

    @property
    def lean(self) -> bool:
        """Whether requests go through toolkit's own HTTP/1.1 client rather than httpx (known once open)."""
        from .http11 import Http11Client  # noqa: PLC0415

        return isinstance(self._http, Http11Client)

    # --- sending --------------------------------------------------------------------------------

    def _http_client_for_url(self) -> HttpClient:
        """toolkit's HTTP/1.1 client, or httpx where only httpx will do (see the module's docstring)."""
        if self.auth is None and self._http_client is None and lean_reachable(self.url):
            from .http11 import Http11Client  # noqa: PLC0415

            return Http11Client(timeout=self.timeout, keepalive=KEEPALIVE_SECONDS)
        from .httpx_client import HttpxClient  # noqa: PLC0415

        return HttpxClient(self._http_client, auth=self.auth, timeout=self.timeout, keepalive=KEEPALIVE_SECONDS)

    def _headers(self, extra: Mapping[str, str] | None, accept: str) -> RequestHeaders:
        """The MCP headers, the session's (``extra``), the user's, and the legacy session id."""
        headers: RequestHeaders = {"accept": ("Accept", accept)}
        if extra:
            for name, value in extra.items():
                headers[name.lower()] = (name, value)
        for name, value in self.headers.items():
            headers[name.lower()] = (name, value)
        if self.session_id is not None:
            headers["mcp-session-id"] = (SESSION_ID, self.session_id)
        return headers

    def _post_headers(self, extra: Mapping[str, str] | None) -> tuple[RequestHeaders, tuple[tuple[str, str], ...]]:
        """The headers of a request's POST (by lower-case name, and as sent), made once per ``extra``
        mapping and session id (the same tuple each time: the HTTP client knows its head by it).

        The session hands the same mapping for the same method and name (``ClientSession._headers_for``);
        the user's ``headers`` are fixed when the transport is made. Callers only read what this returns.
        """
        kept = self._posts.get(id(extra))
        if kept is not None and kept[0] is extra and kept[1] == self.session_id:
            return kept[2], kept[3]
        request_headers = self._headers(extra, ACCEPT_BOTH)
        request_headers["content-type"] = ("Content-Type", "application/json")
        values = tuple(request_headers.values())
        if len(self._posts) >= _POSTS_KEPT:
            self._posts.clear()
        self._posts[id(extra)] = (extra, self.session_id, request_headers, values)  # extra held: its id stays its own
        return request_headers, values

    async def _http_request(
        self,
        method: str,
        headers: RequestHeaders,
        body: bytes | None,
        read_timeout: float | None,
        on_sent: Callable[[], None] | None = None,
    ) -> HttpResponse:
        assert self._http is not None
        return await self._http.request(
            method, self.url, tuple(headers.values()), body, read_timeout=read_timeout, on_sent=on_sent
        )

    def _unreachable(self, exc: BaseException) -> ConnectionError:
        detail = str(exc) or type(exc).__name__
        if isinstance(exc, ConnectFailed):
            return ConnectionError(f"cannot connect to the MCP server at {self.url}: {detail}")
        if isinstance(exc, HttpTimeout):
            return ConnectionError(f"the MCP server at {self.url} did not take the request within {self.timeout:g} s")
        return ConnectionError(f"the HTTP request to {self.url} failed: {detail}")

    async def _send_request(
        self, request_id: RequestId, message: dict[str, Any], headers: Mapping[str, str] | None, *, legacy: bool
    ) -> None:
        """POST a request and see that its answer is read; return once it has been sent.

        On a kept-alive connection of toolkit's own client, the request is written here and the
        connection itself hands a plain JSON response to the session (``_watch``): no task, no
        loop pass between the answer and the caller. Anything else (an SSE stream, an error
        status, a redirect, a stale connection) is read by a task, as every request is otherwise.
        """
        request_headers, values = self._post_headers(headers)
        pending = PendingRequest(request_id, headers, legacy)
        pending.session = "mcp-session-id" in request_headers
        body = encode(message)
        watched = None
        if self._resolve is not None and self.read_timeout is None:
            watched = self._write_now(pending, request_headers, values, body)
        if watched is not None:
            if not watched.connection.writing:  # the socket's buffer is full: wait for room
                await self._drain(watched)
            return
        loop = asyncio.get_running_loop()
        sent: asyncio.Future[None] = loop.create_future()
        self._read_in_task(pending, self._run_request(pending, request_headers, body, sent))
        try:
            await sent
        except asyncio.CancelledError:
            task = self._reading.get(request_id)
            if task is not None:
                task.cancel()  # the caller gave up before the request was out
            raise

    def _write_now(
        self, pending: PendingRequest, headers: RequestHeaders, values: tuple[tuple[str, str], ...], body: bytes
    ) -> _Watched | None:
        """Write the request on an idle connection, its answer watched by the connection; ``None`` if none is idle."""
        send_now = getattr(self._http, "send_now", None)
        if send_now is None:
            return None
        watched = _Watched(pending, headers, body, contextvars.copy_context())
        try:
            started = send_now("POST", self.url, values, body, functools.partial(self._watch, watched))
        except HttpError as exc:
            raise self._unreachable(exc) from exc
        if started is None:
            return None
        watched.connection = started[0]
        self._reading[pending.request_id] = watched
        return watched

    async def _drain(self, watched: _Watched) -> None:
        """Until a request written with ``_write_now`` is out (the connection is closed if it cannot be)."""
        try:
            await watched.connection.drain(self.timeout)
        except BaseException as exc:
            watched.cancel()
            self._forget(watched.pending.request_id, watched)
            if isinstance(exc, HttpError):
                raise self._unreachable(exc) from exc
            raise

    def _watch(self, watched: _Watched, response: Http11Response, event: Event) -> bool:
        """Called by the connection of a request sent with ``_write_now``: ``True`` once the response is taken over.

        A complete ``200`` JSON body that is our request's response goes to the session at once;
        while it arrives, nothing is done. Anything else goes to a task that reads it as
        ``_run_request`` would (and sends the request again on a fresh connection if the kept-alive
        one had gone stale, or follows a redirect, as ``Http11Client.request`` does).
        """
        if watched.cancelled:
            return True
        if event == "head":
            if response.status == 200 and media_type_of(response.headers.get("content-type")) == "application/json":
                return False  # the body follows
        elif event == "complete" and self._resolved(watched.pending, response):  # a 200 JSON (else taken at its head)
            self._forget(watched.pending.request_id, watched)
            watched.connection.done(response)  # read to its end: back to the pool
            return True
        self._read_in_task(watched.pending, self._take_over(watched, response), watched.context)
        return True

    def _resolved(self, pending: PendingRequest, response: Http11Response) -> bool:
        """Hand a complete JSON body to the session if it is exactly our request's response."""
        body = response.body_so_far()
        if len(body) > self.max_message_bytes:
            return False
        try:
            message = parse_response(body)
        except ValueError:
            return False
        if not isinstance(message, dict) or message.get("id") != pending.request_id:
            return False
        assert self._resolve is not None
        session_id = response.headers.get("mcp-session-id") if pending.legacy else None
        if not self._resolve(message):
            return False
        if session_id is not None:
            self.session_id = session_id
        pending.answered = True
        return True

    async def _take_over(self, watched: _Watched, response: Http11Response) -> None:
        """Read what ``_watch`` did not take (see there), from a task of its own."""
        from .http11 import REDIRECTS  # noqa: PLC0415 - loaded already: the connection is http11's
        from .http11_connection import RemoteClosed  # noqa: PLC0415

        pending = watched.pending
        stale = (
            isinstance(response.error, RemoteClosed) and response.error.before_response and watched.connection.reused
        )
        redirect = response.status in REDIRECTS and response.header("location") is not None
        if stale or redirect:
            await response.aclose()
            sent = asyncio.get_running_loop().create_future()
            sent.set_result(None)  # the caller went on long ago
            await self._run_request(pending, watched.headers, watched.body, sent)
            return
        try:
            try:
                await response.wait_head()
            except Exception as exc:
                await response.aclose()
                failure: BaseException = self._unreachable(exc) if isinstance(exc, HttpError) else exc
                await self._fail(pending, str(failure), exception=failure)
                return
            await self._answer_from(response, pending)
        except Exception as exc:  # a bug of ours: fail the request, not the loop
            logger.exception("reading the answer to request %r failed", pending.request_id)
            await self._fail(pending, f"reading the answer from {self.url} failed: {exc}")

    def _read_in_task(
        self,
        pending: PendingRequest,
        reading: Coroutine[Any, Any, None],
        context: contextvars.Context | None = None,
    ) -> None:
        """Read the answer to ``pending`` in a task (``abandon`` cancels it; ``close`` waits for it)."""
        request_id = pending.request_id
        task = asyncio.get_running_loop().create_task(reading, context=context)
        self._reading[request_id] = task
        self._tasks.add(task)
        task.add_done_callback(lambda done: self._forget(request_id, done))

    def _forget(self, request_id: RequestId, reading: asyncio.Task[None] | _Watched) -> None:
        if isinstance(reading, asyncio.Task):
            self._tasks.discard(reading)
        if self._reading.get(request_id) is reading:
            del self._reading[request_id]

    async def _post_message(self, message: dict[str, Any], headers: Mapping[str, str] | None, modern: bool) -> None:
        """POST a notification or an answer to the server's request: ``202 Accepted`` expected."""
        request_headers = self._headers(headers, ACCEPT_BOTH)
        request_headers["content-type"] = ("Content-Type", "application/json")
        try:
            response = await self._http_request("POST", request_headers, encode(message), self.timeout)
        except HttpError as exc:
            raise self._unreachable(exc) from exc
        try:
            what = message.get("method") or f"the answer to request {message.get('id')!r}"
            if response.status >= 400:
                quoted = excerpt(await read_limited(response, ERROR_BODY_BYTES) or b"")
                gone = self._legacy.gone(response, "mcp-session-id" in request_headers)
                if gone is not None:
                    logger.warning("%s; %s was not delivered", gone, what)
                    self._end(gone)
                else:
                    logger.warning("%s refused %s: HTTP %s %s", self.url, what, response.status, quoted)
                return
            await read_limited(response, ERROR_BODY_BYTES)
        finally:
            await response.aclose()
        if message.get("method") == "notifications/initialized" and not modern:
            await self._listen()

    # --- reading a request's answer -------------------------------------------------------------

    async def _run_request(
        self, pending: PendingRequest, headers: RequestHeaders, body: bytes, sent: asyncio.Future[None]
    ) -> None:
        def on_sent() -> None:
            if not sent.done():
                sent.set_result(None)

        try:
            try:
                response = await self._http_request("POST", headers, body, self.read_timeout, on_sent)
            except Exception as exc:
                failure: BaseException = self._unreachable(exc) if isinstance(exc, HttpError) else exc
                if not sent.done():
                    sent.set_exception(failure)
                else:  # the caller waits on the session: it gets this exception itself (an OAuthError, say)
                    await self._fail(pending, str(failure), exception=failure)
                return
            if not sent.done():
                sent.set_result(None)  # a transport without httpcore's trace: the answer has begun
            await self._answer_from(response, pending)
        except Exception as exc:  # a bug of ours, or of a user's httpx.Auth: fail the request, not the loop
            logger.exception("reading the answer to request %r failed", pending.request_id)
            await self._fail(pending, f"reading the answer from {self.url} failed: {exc}")
        finally:
            if not sent.done():
                sent.set_exception(TransportClosed(f"the HTTP transport to {self.url} was closed"))

    async def _answer_from(self, response: HttpResponse, pending: PendingRequest) -> None:
        """Deliver the answer ``response`` carries, then resume its stream if it broke off (legacy)."""
        try:
            await self._read_answer(response, pending)
        finally:
            await response.aclose()
        if not pending.answered:
            await self._legacy.resume(pending)

    async def _read_answer(self, response: HttpResponse, pending: PendingRequest) -> None:
        """Deliver what one HTTP answer to a request carries; on failure, an error for the request."""
        session_id = response.header("mcp-session-id")
        if session_id is not None and pending.legacy:
            self.session_id = session_id  # the initialize answer's: kept before the session reads it and goes on
        status = response.status
        content_type = media_type(response)
        if status >= 400:
            await self._refused(response, pending)
        elif status in (202, 204):
            await self._fail(
                pending, f"{self.url} answered request {pending.request_id!r} with HTTP {status}, no response"
            )
        elif content_type == "application/json":
            await self._read_json(response, pending)
        elif content_type == "text/event-stream":
            await self._read_stream(response, pending)
        else:
            quoted = excerpt(await read_limited(response, ERROR_BODY_BYTES) or b"")
            await self._fail(
                pending,
                f"{self.url} is not an MCP endpoint: it answered HTTP {status} with "
                f"{content_type or 'no Content-Type'}, not application/json or text/event-stream: {quoted}",
                status,
            )

    async def _read_json(self, response: HttpResponse, pending: PendingRequest) -> None:
        body = await read_limited(response, self.max_message_bytes)
        if body is None:
            await self._fail(pending, f"{self.url} answered with a JSON body over {self.max_message_bytes} bytes")
            return
        try:
            parsed = parse_response(body)
        except ValueError:
            await self._fail(pending, f"{self.url} answered with invalid JSON: {excerpt(body)}")
            return
        for message in parsed if isinstance(parsed, list) else [parsed]:  # a list: a 2025-03-26 batch
            if isinstance(message, dict):
                await self._deliver_for(pending, message)
        if not pending.answered:
            await self._fail(
                pending, f"{self.url} answered without a response to request {pending.request_id!r}: {excerpt(body)}"
            )

    async def _read_stream(self, response: HttpResponse, pending: PendingRequest) -> None:
        """Deliver a request's SSE stream as it arrives; a stream that breaks off may be resumed after."""
        parser = SseParser(self.max_message_bytes)
        parser.last_event_id, parser.retry = pending.last_event_id, pending.retry
        try:
            await read_messages(response, parser, functools.partial(self._deliver_answer, pending), self.url)
        except (EventTooLarge, MalformedMessage) as exc:
            await self._fail(pending, f"{self.url} sent a bad SSE stream: {exc}")
            pending.resumable = False
        except ReadTimeout:
            await self._fail(pending, f"{self.url} sent nothing for {self.read_timeout:g} s")
            pending.resumable = False
        except HttpError as exc:  # the connection broke: resumable, like a stream that ended early
            logger.debug("the stream of request %r broke off: %s", pending.request_id, exc)
        pending.last_event_id, pending.retry = parser.last_event_id, parser.retry

    async def _refused(self, response: HttpResponse, pending: PendingRequest) -> None:
        """An HTTP error status: the server's JSON-RPC error when it sent one, else one saying what happened."""
        status = response.status
        body = await read_limited(response, ERROR_BODY_BYTES) or b""
        gone = self._legacy.gone(response, pending.session)
        if gone is not None:
            await self._fail(pending, gone, status)
            self._end(gone)
            return
        try:
            parsed = pydantic_core.from_json(body) if body else None
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and isinstance(parsed.get("error"), dict):
            await self._deliver_for(pending, parsed)
            if pending.answered:
                return
        reason = f"HTTP {status} {response.reason}".rstrip()
        detail = f": {excerpt(body)}" if body else " with no body"
        await self._fail(pending, f"{self.url} answered {reason}{detail}", status)

    def _end(self, reason: str) -> None:
        """The connection ended: ``send`` raises ``reason`` from now on; ``on_close`` hears it, once."""
        if self.close_reason is None:
            self.close_reason = reason
        on_close, self._on_close = self._on_close, None
        if on_close is not None:
            try:
                on_close(reason)
            except Exception:
                logger.exception("the on_close callback of the HTTP transport to %s failed", self.url)

    async def _deliver_for(self, pending: PendingRequest, message: dict[str, Any]) -> None:
        """A message of a request's answer; an error with no id is that request's error."""
        if "method" not in message:
            if "error" in message and message.get("id") is None:
                message = {**message, "id": pending.request_id}
            if message.get("id") == pending.request_id:
                pending.answered = True
        deliver = self._deliver
        if deliver is not None:
            await deliver(message)

    async def _deliver_answer(self, pending: PendingRequest, message: dict[str, Any]) -> bool:
        """A message on a request's stream; whether the stream is over (the response came)."""
        await self._deliver_for(pending, message)
        return pending.answered

    async def _fail(
        self, pending: PendingRequest, text: str, status: int | None = None, *, exception: BaseException | None = None
    ) -> None:
        """Answer the request with a JSON-RPC error saying what went wrong (nothing else will answer it).

        ``exception``: what failed on this side; the session raises it instead of ``ClientError``.
        """
        if pending.answered:
            return
        data = {"httpStatus": status} if status is not None else None
        reply = error_reply(pending.request_id, INTERNAL_ERROR, text, data)
        if exception is not None:
            reply[FAILURE_KEY] = exception
        await self._deliver_for(pending, reply)

    # --- the legacy GET stream ---------------------------------------------------------------------

    async def _listen(self) -> None:
        """Open the GET stream once the legacy handshake is done (2025-11-25 "Listening for Messages");
        return once its request is out, so that the next request follows it."""
        if not self.get_stream or self._listening is not None or self._closed:
            return
        loop = asyncio.get_running_loop()
        opened: asyncio.Future[None] = loop.create_future()
        task = loop.create_task(self._legacy.listen(opened))
        self._listening = task
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        await asyncio.wait({opened, task}, return_when=asyncio.FIRST_COMPLETED)
