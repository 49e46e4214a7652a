"""The user-agent step of the authorization code grant: the system browser and a loopback listener."""

from __future__ import annotations

import asyncio
import sys
import webbrowser
from collections.abc import Awaitable, Callable
from typing import Final
from urllib.parse import parse_qsl, urlsplit

from ..._auth.oauth import AuthorizationFailed, is_loopback

UserAgent = Callable[[str], Awaitable[str]]
"""The user-agent step: given the authorization URL, the URL the authorization server redirected
back to (``redirect_uri`` with its query). ``LoopbackBrowser`` is the default."""

_PAGE: Final = (
    "<!doctype html><meta charset=utf-8><title>{title}</title><body style='font-family:sans-serif'><p>{text}</p></body>"
)


class LoopbackBrowser:
    """The default user agent: open the authorization URL in the system browser and catch the
    redirect on the loopback ``redirect_uri`` (RFC 8252 §7.3) with a one-shot HTTP listener.

    Requests to another path, or with another ``state``, are answered 404/400 and ignored: only
    the redirect of this authorization ends the wait. ``open_url`` replaces ``webbrowser.open``
    (it is called in a thread and may block); ``timeout`` bounds the wait for the person.
    """

    def __init__(self, *, open_url: Callable[[str], object] | None = None, timeout: float = 300.0) -> None:
        self.open_url = open_url or webbrowser.open
        self.timeout = timeout

    async def __call__(self, authorization_url: str) -> str:
        query = dict(parse_qsl(urlsplit(authorization_url).query))
        redirect_uri, state = query.get("redirect_uri", ""), query.get("state", "")
        target = urlsplit(redirect_uri)
        if target.scheme != "http" or not is_loopback(target.hostname) or not target.port:
            raise AuthorizationFailed(
                f"LoopbackBrowser catches redirects to http://127.0.0.1:PORT/... only, not {redirect_uri!r}; "
                "pass another user_agent"
            )
        host = "127.0.0.1" if target.hostname == "localhost" else (target.hostname or "127.0.0.1")
        caught: asyncio.Future[str] = asyncio.get_running_loop().create_future()

        async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                async with asyncio.timeout(10.0):
                    head = await reader.readuntil(b"\r\n\r\n")
                method, _, rest = head.decode("latin-1").partition(" ")
                path_and_query = rest.partition(" ")[0]
                asked = urlsplit(path_and_query)
                params = dict(parse_qsl(asked.query))
                if method != "GET" or asked.path != (target.path or "/"):
                    status, text = "404 Not Found", "Nothing here."
                elif params.get("state") != state:
                    status, text = "400 Bad Request", "This is not the authorization this client is waiting for."
                else:
                    status, text = "200 OK", "Authorization received: you can close this window."
                    if not caught.done():
                        caught.set_result(f"http://{target.netloc}{path_and_query}")
                body = _PAGE.format(title="Authorization", text=text).encode()
                writer.write(
                    f"HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\n"
                    f"Content-Length: {len(body)}\r\nConnection: close\r\nCache-Control: no-store\r\n\r\n".encode()
                    + body
                )
                await writer.drain()
            except (OSError, TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
                pass
            finally:
                writer.close()

        try:
            server = await asyncio.start_server(answer, host, target.port, limit=16 * 1024)
        except OSError as exc:
            raise AuthorizationFailed(f"cannot listen for the redirect on {host}:{target.port}: {exc}") from None
        async with server:
            print(f"Opening the browser to sign in; if none opens, visit:\n  {authorization_url}", file=sys.stderr)
            await asyncio.to_thread(self.open_url, authorization_url)
            try:
                async with asyncio.timeout(self.timeout):
                    return await caught
            except TimeoutError:
                raise AuthorizationFailed(f"no authorization came back within {self.timeout:g} s") from None
