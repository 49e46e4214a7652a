"""The legacy Streamable HTTP session, the client side: its GET stream, resumed request streams, its end.

Legacy era only (2025-03-26 to 2025-11-25, transports "Streamable HTTP"); 2026-07-28 has no
sessions, no GET stream and no resumption ("Resumable SSE streams via Last-Event-ID are not
supported"). ``HttpTransport`` keeps the ``Mcp-Session-Id`` the ``initialize`` answer gave and
sends it on every later request; ``LegacySession`` does the rest of what the session entails:

- The GET stream, opened once the handshake is done, carries what the server sends outside
  requests ("Listening for Messages"; 405: the server offers none). It is reopened after the
  server's ``retry`` with ``Last-Event-ID`` when it ends, until ``max_reconnects`` attempts in a
  row brought nothing.
- A request's SSE stream that ends before its response, after the server gave event ids, is
  resumed with GET and ``Last-Event-ID`` after the server's ``retry`` ("Resumability and
  Redelivery"); a stream that cannot be resumed fails its request with a JSON-RPC error saying why.
- A 404 for a request that named the session says the server ended it ("Session Management" 3-4):
  ``session_expired`` is set and the transport ends. ``close`` ``DELETE``s the session
  ("Session Management" 5; 405: the server keeps it).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any, Final

from .._headers import PROTOCOL_VERSION
from .exchange import HttpError, HttpResponse
from .http_bodies import ACCEPT_BOTH, MalformedMessage, media_type, read_messages
from .sse import EventTooLarge, SseParser
from .transport import CLOSE_GRACE

if TYPE_CHECKING:
    from .http import HttpTransport, PendingRequest

logger = logging.getLogger("toolkit.client")

SESSION_ID: Final = "Mcp-Session-Id"
LAST_EVENT_ID: Final = "Last-Event-ID"


class LegacySession:
    """What one ``HttpTransport`` does for its legacy session beyond sending its ``Mcp-Session-Id``."""

    def __init__(self, transport: HttpTransport) -> None:
        self.transport = transport
        self.version: str | None = None
        """The legacy ``MCP-Protocol-Version`` the session last sent: the GET stream and ``DELETE`` carry it too."""

    def _version_header(self) -> dict[str, str] | None:
        return {PROTOCOL_VERSION: self.version} if self.version is not None else None

    def gone(self, response: HttpResponse, named_session: bool) -> str | None:
        """404 for a request that named our session: the server ended it (2025-11-25 Session Management 3-4).

        What to say about it, or ``None`` for any other answer.
        """
        if response.status != 404 or not named_session:
            return None
        self.transport.session_expired = True
        return (
            f"{self.transport.url} no longer knows this session (HTTP 404 for its Mcp-Session-Id: it expired or was "
            "ended); open a new session"
        )

    # --- resuming a request's stream ------------------------------------------------------------

    async def resume(self, pending: PendingRequest) -> None:
        """The request's stream ended without its response: resume it (legacy), or fail the request."""
        transport = self.transport
        attempts = 0
        while not pending.answered:
            if not pending.resumable or pending.last_event_id is None:
                why = "it gave no event id to resume from" if pending.legacy else "2026-07-28 streams do not resume"
                await transport._fail(
                    pending,
                    f"{transport.url} ended the stream of request {pending.request_id!r} before its response ({why})",
                )
                return
            if attempts >= transport.max_reconnects:
                await transport._fail(
                    pending,
                    f"{transport.url}: the stream of request {pending.request_id!r} could not be resumed "
                    f"({attempts} attempts)",
                )
                return
            attempts += 1
            await asyncio.sleep((pending.retry if pending.retry is not None else transport.retry_ms) / 1000)
            headers = transport._headers(pending.headers, "text/event-stream")
            headers["last-event-id"] = (LAST_EVENT_ID, pending.last_event_id)
            try:
                response = await transport._http_request("GET", headers, None, transport.read_timeout)
            except HttpError as exc:
                logger.debug("resuming the stream of request %r failed: %s", pending.request_id, exc)
                continue
            before = pending.last_event_id
            try:
                if response.status >= 400 or media_type(response) != "text/event-stream":
                    await transport._read_answer(response, pending)  # the refusal, as an error for the request
                    return
                await transport._read_stream(response, pending)
            finally:
                await response.aclose()
            if pending.last_event_id != before:
                attempts = 0  # progress: the budget is for attempts in a row that got nothing

    # --- the GET stream -------------------------------------------------------------------------

    async def listen(self, opened: asyncio.Future[None] | None = None) -> None:
        """Read the GET stream (2025-11-25 "Listening for Messages"), reopening it while that brings something.

        ``opened`` is resolved once the first ``GET`` has been written (or could not be), so that
        the requests after the handshake follow it: a server sees the session's stream opened
        before them, as the client said it would (conformance: a late ``GET`` looks like a
        resumption to a server waiting for one).
        """
        try:
            await self._listen(opened)
        finally:
            if opened is not None and not opened.done():
                opened.set_result(None)

    async def _listen(self, opened: asyncio.Future[None] | None) -> None:
        transport = self.transport

        def sent() -> None:
            if opened is not None and not opened.done():
                opened.set_result(None)

        failures = 0
        last_event_id: str | None = None
        retry = transport.retry_ms
        while not transport._closed:
            headers = transport._headers(self._version_header(), "text/event-stream")
            if last_event_id is not None:
                headers["last-event-id"] = (LAST_EVENT_ID, last_event_id)
            received = False
            try:
                response = await transport._http_request("GET", headers, None, transport.read_timeout, sent)
            except HttpError as exc:
                logger.debug("%s: the GET stream could not be opened: %s", transport.url, exc)
                sent()
            else:
                sent()  # a transport without httpcore's trace: the answer has begun
                try:
                    status = response.status
                    if status == 405:
                        logger.debug("%s offers no GET stream (405)", transport.url)
                        return
                    if status >= 400 or media_type(response) != "text/event-stream":
                        gone = self.gone(response, "mcp-session-id" in headers)
                        if gone is not None:
                            logger.warning("%s: the GET stream ends", gone)
                            transport._end(gone)
                        else:
                            logger.warning("%s refused the GET stream: HTTP %s", transport.url, status)
                        return
                    parser = SseParser(transport.max_message_bytes)
                    parser.last_event_id = last_event_id
                    try:
                        received = await read_messages(response, parser, self._deliver_unsolicited, transport.url)
                    except (EventTooLarge, MalformedMessage) as exc:
                        logger.warning("%s sent a bad SSE stream on GET: %s", transport.url, exc)
                    except HttpError as exc:
                        logger.debug("%s: the GET stream broke off: %s", transport.url, exc)
                    last_event_id = parser.last_event_id
                    retry = parser.retry if parser.retry is not None else retry
                finally:
                    await response.aclose()
            failures = 0 if received else failures + 1
            if failures > transport.max_reconnects:
                logger.warning(
                    "%s: the GET stream could not be kept open; giving up after %d attempts", transport.url, failures
                )
                return
            await asyncio.sleep(retry / 1000)

    async def _deliver_unsolicited(self, message: dict[str, Any]) -> bool:
        deliver = self.transport._deliver
        if deliver is not None:
            await deliver(message)
        return False

    # --- the end --------------------------------------------------------------------------------

    async def end(self, session_id: str) -> None:
        """``DELETE`` the session (2025-11-25 Session Management 5; 405: the server keeps it)."""
        transport = self.transport
        headers = transport._headers(self._version_header(), ACCEPT_BOTH)
        headers["mcp-session-id"] = (SESSION_ID, session_id)
        try:
            async with asyncio.timeout(CLOSE_GRACE):  # a courtesy: a server that takes nothing holds no close
                response = await transport._http_request("DELETE", headers, None, transport.timeout)
        except (HttpError, TimeoutError) as exc:
            logger.debug("%s: ending session failed: %s", transport.url, exc or f"no answer within {CLOSE_GRACE:g} s")
            return
        try:
            if response.status >= 400 and response.status not in (404, 405):
                logger.debug("%s refused to end the session: HTTP %s", transport.url, response.status)
        finally:
            await response.aclose()
