"""The downstream clients: registered dynamically (RFC 7591) or named by a client ID metadata document.

A client ID metadata document (SEP-991, draft-ietf-oauth-client-id-metadata-document) is a URL
that a stranger hands the authorization server, which then fetches it: a server-side request
forgery waiting to happen. So the fetch (``MetadataDocuments``):

- takes https only (http on a loopback host only when ``allow_http_loopback``), a URL with a
  path, without credentials, fragment or query;
- resolves the host itself and refuses it when any address is loopback, private, link-local,
  reserved, multicast or otherwise not global (``allow_private_addresses`` lifts this, for
  tests and internal deployments), then connects to the address it checked (the TLS name and the
  ``Host`` header stay the URL's), so a second DNS answer cannot point it elsewhere;
- follows no redirect, reads at most ``max_bytes`` and gives up after ``timeout`` seconds in all
  (a server dripping one byte a second is cut off like a silent one);
- checks the server's certificate, against the public CAs or the ones ``verify`` names (an
  internal CA), never not at all: the document is trusted for the https origin it came from;
- checks the document (``client_id`` is the URL exactly, ``redirect_uris``, no shared secret) and
  keeps it for its ``Cache-Control: max-age`` (at most 24 hours, 5 minutes when it says nothing);
  a failed fetch is remembered for a minute, so a client cannot make the server fetch in a loop.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
import os
import re
import socket
import ssl
import time
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

from ..oauth import is_loopback
from ..tls import shared_tls

logger = logging.getLogger("toolkit.auth")

AUTH_METHODS: Final = ("none", "client_secret_basic", "client_secret_post")
MAX_REDIRECT_URIS: Final = 20
MAX_URI_LENGTH: Final = 2000
FORBIDDEN_SCHEMES: Final = frozenset({"javascript", "data", "file", "vbscript", "about", "blob", "filesystem", "ftp"})
MAX_CACHE_SECONDS: Final = 24 * 3600.0
DEFAULT_CACHE_SECONDS: Final = 300.0
FAILURE_CACHE_SECONDS: Final = 60.0
MAX_CACHED: Final = 1000
MAX_AGE: Final = re.compile(r"(?:^|,)\s*max-age\s*=\s*(\d+)", re.IGNORECASE)


class ClientRefused(Exception):
    """This client cannot be used: unknown, or its registration or metadata document fails a check.

    The message is shown to the user (never sent to a redirect URI that was not checked).
    """


@dataclass(frozen=True, slots=True)
class DownstreamClient:
    """An MCP client as the authorization server knows it."""

    client_id: str
    redirect_uris: tuple[str, ...]
    auth_method: str
    """``none`` (a public client, PKCE only), ``client_secret_basic`` or ``client_secret_post``."""
    secret_hash: str | None = None
    """The SHA-256 of its secret (a confidential client); the secret itself is never kept."""
    name: str | None = None
    metadata_document: bool = False
    """Named by a client ID metadata document (its id is that document's URL)."""

    def to_record(self) -> dict[str, Any]:
        return {
            "client_id": self.client_id,
            "redirect_uris": list(self.redirect_uris),
            "auth_method": self.auth_method,
            "secret_hash": self.secret_hash,
            "name": self.name,
        }

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> DownstreamClient:
        return cls(
            client_id=record["client_id"],
            redirect_uris=tuple(record["redirect_uris"]),
            auth_method=record["auth_method"],
            secret_hash=record.get("secret_hash"),
            name=record.get("name"),
        )


def check_redirect_uri(uri: object) -> str:
    """A redirect URI a client may register: absolute, no fragment; https, http on loopback only, or a
    private-use scheme of a native app (RFC 8252 §7.1), never ``javascript:``, ``data:``, ``file:``..."""
    if not isinstance(uri, str) or not uri or len(uri) > MAX_URI_LENGTH:
        raise ClientRefused(f"redirect_uris: {uri!r} is not a URI string of at most {MAX_URI_LENGTH} characters")
    try:
        parts = urlsplit(uri)
    except ValueError:
        raise ClientRefused(f"redirect_uris: {uri!r} is not a URI") from None
    scheme = parts.scheme.lower()
    if not scheme or parts.fragment or "#" in uri:
        raise ClientRefused(f"redirect_uris: {uri!r} must be absolute and have no fragment (RFC 6749 §3.1.2)")
    if scheme in FORBIDDEN_SCHEMES:
        raise ClientRefused(f"redirect_uris: the {scheme}: scheme is not allowed")
    if scheme in ("http", "https") and not parts.hostname:
        raise ClientRefused(f"redirect_uris: {uri!r} has no host")
    if scheme == "http" and not is_loopback(parts.hostname):
        raise ClientRefused(f"redirect_uris: {uri!r} is plain http; use https (http only on a loopback host)")
    return uri


def redirect_uris_of(document: dict[str, Any]) -> tuple[str, ...]:
    uris = document.get("redirect_uris")
    if not isinstance(uris, list) or not uris or len(uris) > MAX_REDIRECT_URIS:
        raise ClientRefused(f"redirect_uris: give a list of 1 to {MAX_REDIRECT_URIS} URIs")
    return tuple(check_redirect_uri(uri) for uri in uris)


def client_name_of(document: dict[str, Any]) -> str | None:
    name = document.get("client_name")
    if name is None:
        return None
    if not isinstance(name, str) or len(name) > 200:
        raise ClientRefused("client_name: give a string of at most 200 characters")
    return name


def is_metadata_document_url(client_id: str) -> bool:
    """Whether ``client_id`` names a client ID metadata document (a URL with a path), not a registered id."""
    return client_id.startswith(("https://", "http://"))


def trust_of(verify: object) -> ssl.SSLContext:
    """``client_metadata_verify=`` as the fetches' ``SSLContext``: for ``True``, the process's one of certifi's CAs."""
    if verify is True:
        return shared_tls(trust_env=False)
    if isinstance(verify, ssl.SSLContext):
        return verify
    if verify is False:
        raise ValueError(
            "client_metadata_verify=False: a client metadata document is trusted for the https origin it came "
            "from, so its certificate is always checked; give the CA bundle that signed it (a PEM file's path) "
            "or an ssl.SSLContext"
        )
    if isinstance(verify, str | os.PathLike):
        try:
            return ssl.create_default_context(cafile=os.fspath(verify))
        except (OSError, ssl.SSLError) as exc:
            raise ValueError(
                f"client_metadata_verify={os.fspath(verify)!r}: cannot load it as a PEM bundle of CA certificates "
                f"({exc})"
            ) from None
    raise TypeError(
        f"client_metadata_verify={verify!r}: give True, a PEM file of CA certificates (a path) or an ssl.SSLContext"
    )


@dataclass(frozen=True, slots=True)
class _Target:
    url: str
    """What is requested: the URL with the checked address in place of the host."""
    host_header: str
    tls_name: str | None


class MetadataDocuments:
    """Client ID metadata documents, fetched safely and cached (see the module docstring)."""

    def __init__(
        self,
        *,
        allow_http_loopback: bool = False,
        allow_private_addresses: bool = False,
        max_bytes: int = 16 * 1024,
        timeout: float = 5.0,
        verify: bool | str | os.PathLike[str] | ssl.SSLContext = True,
    ) -> None:
        self.allow_http_loopback = allow_http_loopback
        self.allow_private_addresses = allow_private_addresses
        self.max_bytes = max_bytes
        self.timeout = timeout
        self.verify = trust_of(verify)
        self._cache: dict[str, tuple[DownstreamClient | str, float]] = {}

    async def client(self, url: str) -> DownstreamClient:
        """The client that ``url`` names; ``ClientRefused`` saying why not."""
        cached = self._cache.get(url)
        if cached is not None and cached[1] > time.monotonic():
            if isinstance(cached[0], str):
                raise ClientRefused(cached[0])
            return cached[0]
        try:
            client, seconds = await self._fetch(url)
        except ClientRefused as exc:
            self._remember(url, str(exc), FAILURE_CACHE_SECONDS)
            raise
        self._remember(url, client, seconds)
        return client

    def _remember(self, url: str, value: DownstreamClient | str, seconds: float) -> None:
        if len(self._cache) >= MAX_CACHED:
            now = time.monotonic()
            self._cache = {key: held for key, held in self._cache.items() if held[1] > now}
            if len(self._cache) >= MAX_CACHED:
                del self._cache[next(iter(self._cache))]
        if seconds > 0:
            self._cache[url] = (value, time.monotonic() + seconds)

    async def _fetch(self, url: str) -> tuple[DownstreamClient, float]:
        target = await self._target(url)
        body, cache_control = await self._download(url, target)
        try:
            document = json.loads(body)
        except ValueError:
            raise ClientRefused(f"the client metadata document at {url} is not JSON") from None
        if not isinstance(document, dict):
            raise ClientRefused(f"the client metadata document at {url} is not a JSON object")
        if document.get("client_id") != url:
            raise ClientRefused(
                f"the client metadata document at {url} names client_id {document.get('client_id')!r}; "
                "it must be the document's own URL exactly"
            )
        method = document.get("token_endpoint_auth_method", "none")
        if method != "none":
            raise ClientRefused(
                f"the client metadata document at {url} asks for token_endpoint_auth_method {method!r}; "
                "a client named by a metadata document has no shared secret: use 'none' (PKCE)"
            )
        client = DownstreamClient(
            client_id=url,
            redirect_uris=redirect_uris_of(document),
            auth_method="none",
            name=client_name_of(document),
            metadata_document=True,
        )
        found = MAX_AGE.search(cache_control or "")
        seconds = min(float(found.group(1)), MAX_CACHE_SECONDS) if found else DEFAULT_CACHE_SECONDS
        if "no-store" in (cache_control or "").lower():
            seconds = 0.0
        return client, seconds

    async def _target(self, url: str) -> _Target:
        try:
            parts = urlsplit(url)
            host, port = parts.hostname, parts.port
        except ValueError:
            raise ClientRefused(f"client_id {url!r} is not a URL") from None
        scheme = parts.scheme.lower()
        if not host or parts.username is not None or parts.password is not None:
            raise ClientRefused(f"client_id {url!r}: a metadata document URL needs a host and no credentials")
        if parts.fragment or parts.query or parts.path in ("", "/") or "/." in parts.path:
            raise ClientRefused(f"client_id {url!r}: a metadata document URL has a path, no dot segments, no query")
        if scheme != "https" and not (scheme == "http" and self.allow_http_loopback and is_loopback(host)):
            raise ClientRefused(f"client_id {url!r}: a client metadata document must be served over https")
        port = port or (443 if scheme == "https" else 80)
        address = await self._checked_address(host, port, url)
        literal = f"[{address}]" if ":" in address else address
        netloc = f"{literal}:{port}"
        return _Target(
            url=urlunsplit((scheme, netloc, parts.path, "", "")),
            host_header=parts.netloc.rpartition("@")[2],
            tls_name=host if scheme == "https" else None,
        )

    async def _checked_address(self, host: str, port: int, url: str) -> str:
        try:
            addresses = [ipaddress.ip_address(host.strip("[]"))]
        except ValueError:
            try:
                infos = await asyncio.wait_for(
                    asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM), self.timeout
                )
            except (OSError, TimeoutError):
                raise ClientRefused(f"client_id {url!r}: its host {host!r} does not resolve") from None
            addresses = [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos]
        if not addresses:
            raise ClientRefused(f"client_id {url!r}: its host {host!r} does not resolve")
        if not self.allow_private_addresses:
            for address in addresses:
                if not address.is_global or address.is_multicast:
                    raise ClientRefused(
                        f"client_id {url!r}: {host} is a loopback, private, link-local or reserved address; "
                        "client metadata documents are only fetched from public addresses"
                    )
        return str(addresses[0])

    async def _download(self, url: str, target: _Target) -> tuple[bytes, str | None]:
        import httpx  # noqa: PLC0415 - the auth extra

        extensions = {"sni_hostname": target.tls_name} if target.tls_name else {}
        headers = {"host": target.host_header, "accept": "application/json", "accept-encoding": "identity"}
        chunks: list[bytes] = []
        size = 0
        try:
            async with (
                asyncio.timeout(self.timeout),
                httpx.AsyncClient(follow_redirects=False, trust_env=False, verify=self.verify) as http,
            ):
                request = http.build_request("GET", target.url, headers=headers, extensions=extensions)
                response = await http.send(request, stream=True)
                try:
                    if response.status_code != 200:
                        status = response.status_code
                        raise ClientRefused(f"the client metadata document at {url} answered HTTP {status}")
                    if response.headers.get("content-encoding", "identity").lower() != "identity":
                        raise ClientRefused(f"the client metadata document at {url} came compressed; serve it as is")
                    async for chunk in response.aiter_raw():
                        size += len(chunk)
                        if size > self.max_bytes:
                            raise ClientRefused(
                                f"the client metadata document at {url} is larger than {self.max_bytes} bytes"
                            )
                        chunks.append(chunk)
                finally:
                    await response.aclose()
        except TimeoutError:
            raise ClientRefused(f"the client metadata document at {url} took longer than {self.timeout:g} s") from None
        except httpx.HTTPError as exc:
            raise ClientRefused(f"the client metadata document at {url} could not be fetched ({exc})") from None
        return b"".join(chunks), response.headers.get("cache-control")
