"""One HTTP exchange of an OpenAPI operation, through httpx, bounded.

What the model's arguments made (an ``HttpRequest`` from ``requests.RequestPlan``) is sent to the
base URL with the configured credentials on top, and the answer read back under bounds:

- a deadline for the whole exchange (connection, redirects, the body), ``timeout`` seconds;
- the body read as a stream and given up past ``max_response_bytes`` (a ``Content-Length``
  announcing more is refused before reading); an error answer's body is read only as far as its
  excerpt (``ERROR_EXCERPT`` bytes);
- redirects followed by hand, at most ``MAX_REDIRECTS``, and only within the base URL's origin
  (scheme, host and port): a ``Location`` elsewhere is an error, so configured credentials never
  reach another host;
- a caller's own headers only those ``forward_headers`` names, and never over a credential.

Every failure is an ``ExchangeFailed`` whose message names the operation and the host, for the
tool's ``isError`` result.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol
from urllib.parse import quote

import httpx

from .credentials import Credential
from .operations import is_json_media

logger = logging.getLogger("toolkit.openapi")

ERROR_EXCERPT: Final = 2048
"""Bytes of an error answer's body quoted in the tool's error result."""
MAX_REDIRECTS: Final = 5
DEFAULT_TIMEOUT: Final = 30.0
DEFAULT_MAX_RESPONSE_BYTES: Final = 10 * 1024 * 1024
_REDIRECTS: Final = frozenset({301, 302, 303, 307, 308})
NOT_FORWARDED: Final = frozenset(
    {"host", "content-length", "content-type", "transfer-encoding", "connection", "upgrade", "te", "keep-alive"}
)
"""Headers that describe a connection or a body, not the caller: never taken from the caller."""


class OutgoingRequest(Protocol):
    """What ``requests.RequestPlan.request`` builds from a call's arguments (``requests.HttpRequest``):
    ``path``, ``query`` and ``cookies`` already percent-encoded, ``headers`` the parameters' only."""

    @property
    def method(self) -> str: ...
    @property
    def path(self) -> str: ...
    @property
    def query(self) -> Sequence[tuple[str, str]]: ...
    @property
    def headers(self) -> Sequence[tuple[str, str]]: ...
    @property
    def cookies(self) -> Sequence[tuple[str, str]]: ...
    @property
    def content(self) -> bytes | None: ...
    @property
    def content_type(self) -> str | None: ...


class ExchangeFailed(Exception):
    """The exchange gave no usable answer: what happened, for the model (``isError``) and the log."""


@dataclass
class Answer:
    """A 2xx answer, its body read in full (within the bound)."""

    status: int
    content_type: str
    """The media type, lower-case, without parameters (``application/json``); ``""`` if none."""
    charset: str | None
    body: bytes
    url: str
    """Where the answer came from (after any redirect)."""

    def text(self) -> str:
        """The body as text: its declared charset, else UTF-8; undecodable bytes replaced."""
        try:
            return self.body.decode(self.charset or "utf-8", errors="replace")
        except LookupError:  # a charset Python does not know
            return self.body.decode("utf-8", errors="replace")

    @property
    def is_json(self) -> bool:
        return is_json_media(self.content_type)


def origin(url: httpx.URL) -> tuple[str, str, int | None]:
    """Scheme, host and port (the default port made explicit): what a redirect must keep."""
    port = url.port or {"http": 80, "https": 443}.get(url.scheme)
    return url.scheme, url.host, port


class Sender:
    """How every operation of one source is sent: the base URL, credentials, forwarded headers, bounds."""

    def __init__(
        self,
        base_url: str | httpx.URL,
        *,
        credentials: Sequence[Credential] = (),
        auth: httpx.Auth | None = None,
        forward_headers: Iterable[str] = (),
        timeout: float | None = DEFAULT_TIMEOUT,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    ) -> None:
        self.base_url = httpx.URL(str(base_url))
        if self.base_url.scheme not in ("http", "https") or not self.base_url.host:
            raise ValueError(f"the base URL {str(base_url)!r} is not an http:// or https:// URL with a host")
        self.origin = origin(self.base_url)
        self._prefix = str(self.base_url.copy_with(query=None, fragment=None)).rstrip("/")
        self.credentials = tuple(credentials)
        self.auth = auth
        forwarded = []
        for name in forward_headers:
            if not isinstance(name, str) or not name:
                raise ValueError(f"forward_headers: {name!r} is not a header name")
            if name.lower() in NOT_FORWARDED:
                raise ValueError(
                    f"forward_headers: {name!r} describes the connection or the body; it is never forwarded"
                )
            forwarded.append(name.lower())
        self.forward_headers = tuple(forwarded)
        if timeout is not None and timeout <= 0:
            raise ValueError(f"timeout must be a positive number of seconds (or None: the client's own), not {timeout}")
        self.timeout = timeout
        if max_response_bytes < 1:
            raise ValueError(f"max_response_bytes must be at least 1, not {max_response_bytes}")
        self.max_response_bytes = max_response_bytes

    @property
    def host(self) -> str:
        """``host:port`` of the base URL, as errors name it."""
        port = f":{self.base_url.port}" if self.base_url.port else ""
        return f"{self.base_url.host}{port}"

    def caller_headers(self, context: Any) -> dict[str, str]:
        """The headers of the caller's own HTTP request that ``forward_headers`` names (none over stdio)."""
        if not self.forward_headers:
            return {}
        request = getattr(context, "request", None)
        headers = getattr(request, "headers", None)
        if headers is None:
            return {}
        found: dict[str, str] = {}
        for name in self.forward_headers:
            value = headers.get(name)
            if isinstance(value, str):
                found[name] = value
        return found

    async def send(self, client: httpx.AsyncClient, outgoing: OutgoingRequest, *, what: str, context: Any) -> Answer:
        """Send ``outgoing`` and read its 2xx answer; ``ExchangeFailed`` for anything else.

        ``what`` names the operation in errors (``"GET /pets/{petId}"``).
        """
        request = self.request(client, outgoing, context)
        try:
            if self.timeout is None:
                return await self._exchange(client, request, what)
            async with asyncio.timeout(self.timeout):
                return await self._exchange(client, request, what)
        except TimeoutError:
            raise ExchangeFailed(
                f"{what}: {self.host} did not answer within {self.timeout:g} s (the source's timeout)"
            ) from None
        except httpx.TimeoutException as exc:
            raise ExchangeFailed(f"{what}: {self.host} timed out ({type(exc).__name__})") from None
        except httpx.TransportError as exc:
            raise ExchangeFailed(f"{what}: could not reach {self.host}: {_reason(exc)}") from None
        except httpx.HTTPError as exc:  # a body that cannot be decoded, a redirect loop httpx saw
            raise ExchangeFailed(f"{what}: {self.host} sent an answer that cannot be read: {_reason(exc)}") from None

    def request(self, client: httpx.AsyncClient, outgoing: OutgoingRequest, context: Any) -> httpx.Request:
        """The httpx request: the call's own parts, the caller's forwarded headers over them, the
        credentials over everything (a credential's query parameter or cookie replaces one of the same name)."""
        headers: dict[str, str] = {name.lower(): value for name, value in outgoing.headers}
        headers.update(self.caller_headers(context))
        query = list(outgoing.query)
        cookies = list(outgoing.cookies)
        if self.credentials:
            added_headers: dict[str, str] = {}
            added_query: list[tuple[str, str]] = []
            added_cookies: dict[str, str] = {}
            for credential in self.credentials:
                credential.apply(added_headers, added_query, added_cookies)
            headers.update(added_headers)
            if added_query:
                encoded = [(_encoded(name), _encoded(value)) for name, value in added_query]
                replaced = {name for name, _ in encoded}
                query = [pair for pair in query if pair[0] not in replaced] + encoded
            if added_cookies:
                encoded = [(_encoded(name), _encoded(value)) for name, value in added_cookies.items()]
                replaced = {name for name, _ in encoded}
                cookies = [pair for pair in cookies if pair[0] not in replaced] + encoded
        if cookies:
            headers["cookie"] = "; ".join(f"{name}={value}" for name, value in cookies)
        if outgoing.content is not None and outgoing.content_type:
            headers["content-type"] = outgoing.content_type
        url = self._prefix + outgoing.path
        if query:
            url += "?" + "&".join(f"{name}={value}" for name, value in query)
        return client.build_request(outgoing.method, url, headers=headers, content=outgoing.content)

    async def _exchange(self, client: httpx.AsyncClient, request: httpx.Request, what: str) -> Answer:
        for _ in range(MAX_REDIRECTS + 1):
            response = await client.send(request, stream=True, follow_redirects=False, auth=self._auth(client))
            try:
                if response.status_code in _REDIRECTS and "location" in response.headers:
                    request = self._redirected(client, request, response, what)
                    continue
                if not 200 <= response.status_code < 300:
                    raise ExchangeFailed(await self._refusal(response, what))
                body = await self._body(response, what)
                media, charset = _media_type(response.headers.get("content-type", ""))
                return Answer(response.status_code, media, charset, body, str(response.url))
            finally:
                await response.aclose()
        raise ExchangeFailed(f"{what}: {self.host} redirected more than {MAX_REDIRECTS} times")

    def _auth(self, client: httpx.AsyncClient) -> Any:
        # httpx.USE_CLIENT_DEFAULT: the client's own auth, when the source configured none.
        return self.auth if self.auth is not None else httpx.USE_CLIENT_DEFAULT

    def _redirected(
        self, client: httpx.AsyncClient, request: httpx.Request, response: httpx.Response, what: str
    ) -> httpx.Request:
        """The request to send next, if the redirect stays on the base URL's origin (RFC 9110 §15.4)."""
        try:
            target = request.url.join(response.headers["location"])
        except httpx.InvalidURL:
            raise ExchangeFailed(f"{what}: {self.host} redirected to an invalid URL") from None
        if origin(target) != self.origin:
            shown = f"{target.scheme}://{target.host}" + (f":{target.port}" if target.port else "")
            raise ExchangeFailed(
                f"{what}: {self.host} redirected to {shown}, another origin than the base URL's; "
                "not followed (credentials stay with the configured host)"
            )
        method = request.method
        content: bytes | None = request.content
        headers = dict(request.headers)
        status = response.status_code
        if (status == 303 and method != "HEAD") or (status in (301, 302) and method == "POST"):
            method, content = "GET", None  # the body is not sent again
            for name in ("content-type", "content-length", "transfer-encoding"):
                headers.pop(name, None)
        headers.pop("content-length", None)
        return client.build_request(method, target, headers=headers, content=content)

    async def _body(self, response: httpx.Response, what: str) -> bytes:
        limit = self.max_response_bytes
        declared = response.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            raise ExchangeFailed(f"{what}: the answer is {int(declared)} bytes, over the limit of {limit} bytes")
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():  # decoded: a compressed body is bounded as it unpacks
            size += len(chunk)
            if size > limit:
                raise ExchangeFailed(f"{what}: the answer is over the limit of {limit} bytes; not read further")
            chunks.append(chunk)
        return b"".join(chunks)

    async def _refusal(self, response: httpx.Response, what: str) -> str:
        """``GET /pets/{petId}: HTTP 404 Not Found: {"detail": ...}``, the body cut to an excerpt."""
        read = bytearray()
        try:
            async for chunk in response.aiter_bytes():
                read += chunk
                if len(read) > ERROR_EXCERPT:
                    break
        except httpx.HTTPError as exc:  # the status is what matters; the body is a courtesy
            logger.debug("%s: reading an error body failed: %s", what, exc)
        reason = response.reason_phrase or ""
        message = f"{what}: HTTP {response.status_code}{' ' + reason if reason else ''}"
        excerpt = _excerpt(bytes(read[:ERROR_EXCERPT]), _media_type(response.headers.get("content-type", ""))[1])
        if excerpt:
            message += f": {excerpt}" + (" [...]" if len(read) > ERROR_EXCERPT else "")
        return message


def _media_type(header: str) -> tuple[str, str | None]:
    """``application/json; charset=utf-8`` → ``("application/json", "utf-8")``."""
    media, _, parameters = header.partition(";")
    charset = None
    for parameter in parameters.split(";"):
        key, _, value = parameter.strip().partition("=")
        if key.lower() == "charset" and value:
            charset = value.strip('"').lower()
    return media.strip().lower(), charset


def _excerpt(body: bytes, charset: str | None) -> str:
    """Printable text of ``body`` (decoded safely: undecodable bytes and control characters replaced)."""
    try:
        text = body.decode(charset or "utf-8", errors="replace")
    except LookupError:
        text = body.decode("utf-8", errors="replace")
    return "".join(char if char.isprintable() or char in "\n\t" else "\ufffd" for char in text).strip()


def _encoded(text: str) -> str:
    """A credential's query or cookie name or value, percent-encoded as ``requests`` encodes the call's own."""
    return quote(text, safe="")


def _reason(exc: httpx.HTTPError) -> str:
    return str(exc) or type(exc).__name__
