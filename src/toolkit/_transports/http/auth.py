"""Bearer authorization over HTTP: the check before every MCP request, and the metadata document.

The ``ResourceServer`` (``toolkit._auth``) decides; this module speaks HTTP for it: which
resource a request addresses, where that resource's metadata lives (RFC 9728 §3.1), the
challenge headers, and the ``/.well-known/oauth-protected-resource`` endpoint.

The resource URL is the configured ``resource_url`` or, by default, built from the request:
its scheme, its ``Host`` (which DNS-rebinding protection has already held to the allowed
hosts) and its path. With any ``Host`` allowed, a client could name the resource at will, so
that combination needs ``resource_url``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final

from ..._auth.resource import WELL_KNOWN, Refusal, ResourceServer, metadata_url
from ..._auth.tokens import AccessToken
from ..._errors import INVALID_REQUEST
from ..._jsonrpc import encode, error_reply
from .asgi import header_map, respond
from .security import HostGuard

if TYPE_CHECKING:
    from starlette.types import Receive, Scope, Send

CORS: Final = [("access-control-allow-origin", "*")]
"""The metadata is public, and browser-based clients must be able to read it."""
STATUS_TEXT: Final = {400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 503: "Service Unavailable"}


class BearerGate:
    """Admits a request with a good bearer token; refuses the rest with the spec's challenge."""

    def __init__(self, resource_server: ResourceServer, guard: HostGuard) -> None:
        if resource_server.resource_url is None and (not guard.enabled or "*" in guard.allowed_hosts):
            raise ValueError(
                "auth= with any Host allowed (dns_rebinding_protection=False or allowed_hosts=['*']) needs "
                "Server(resource_url='https://your.host/mcp'): the resource URL cannot be taken from the request"
            )
        self.resource_server = resource_server

    def resource(self, scope: Scope, relative_path: str) -> str:
        """The resource URL of the endpoint at ``relative_path`` under this app's root."""
        configured = self.resource_server.resource_url
        if configured is not None:
            return configured
        return f"{origin(scope)}{scope.get('root_path', '')}{relative_path}".rstrip("/")

    def metadata_url(self, scope: Scope) -> str:
        """Where a client finds the metadata of the resource this request addressed."""
        configured = self.resource_server.resource_url
        if configured is not None:
            return metadata_url(configured)
        root = scope.get("root_path", "")
        return f"{origin(scope)}{root}{WELL_KNOWN}{relative(scope).rstrip('/')}"

    async def admit(self, scope: Scope, headers: dict[str, str], send: Send) -> AccessToken | None:
        """The request's verified token; ``None`` once a refusal has been sent."""
        server = self.resource_server
        outcome = await server.authenticate(headers.get("authorization"))
        if isinstance(outcome, Refusal):
            await self.refuse(scope, send, outcome)
            return None
        refusal = server.require(outcome)
        if refusal is not None:
            await self.refuse(scope, send, refusal)
            return None
        return outcome

    async def refuse(self, scope: Scope, send: Send, refusal: Refusal, request_id: Any = None) -> None:
        headers: list[tuple[str, str]] = []
        if refusal.status == 503:
            headers.append(("retry-after", "5"))
        else:
            headers.append(("www-authenticate", self.resource_server.challenge(refusal, self.metadata_url(scope))))
        message = f"{STATUS_TEXT[refusal.status]}: {refusal.description or refusal.error or 'send a bearer token'}"
        data: dict[str, Any] = {"error": refusal.error} if refusal.error else {}
        if refusal.scopes:
            data["scope"] = " ".join(refusal.scopes)
        body = encode(error_reply(request_id, INVALID_REQUEST, message, data or None))
        await respond(send, refusal.status, body, headers)


class ResourceMetadata:
    """The ASGI endpoint serving the protected resource metadata (RFC 9728 §3).

    At ``/.well-known/oauth-protected-resource/<path>`` it describes the resource at
    ``/<path>``; at the bare ``/.well-known/oauth-protected-resource`` it describes the MCP
    endpoint at ``endpoint_path``. Both under this app's root (a mount's prefix included).
    """

    def __init__(self, gate: BearerGate, guard: HostGuard, endpoint_path: str) -> None:
        self.gate = gate
        self.guard = guard
        self.endpoint_path = endpoint_path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        rejected = self.guard.check(header_map(scope))
        if rejected is not None:
            await respond(send, rejected[0], encode(error_reply(None, INVALID_REQUEST, rejected[1])))
            return
        if scope["method"] == "OPTIONS":
            allow = [("access-control-allow-methods", "GET, OPTIONS"), ("access-control-allow-headers", "*")]
            await respond(send, 204, headers=[*CORS, *allow])
            return
        if scope["method"] not in ("GET", "HEAD"):
            await respond(send, 405, headers=[("allow", "GET, HEAD, OPTIONS")])
            return
        suffix = relative(scope)[len(WELL_KNOWN) :]
        resource = self.gate.resource(scope, suffix or self.endpoint_path)
        body = json.dumps(self.gate.resource_server.metadata(resource)).encode()
        headers = [*CORS, ("cache-control", "public, max-age=3600")]
        await respond(send, 200, body if scope["method"] == "GET" else b"", headers)


def origin(scope: Scope) -> str:
    """``scheme://host[:port]`` of the request, lower-cased (the Host header, else the server address)."""
    scheme = str(scope.get("scheme", "http")).lower()
    for name, value in scope["headers"]:
        if name == b"host":
            return f"{scheme}://{value.decode('latin-1').strip().lower()}"
    host, port = scope.get("server") or ("127.0.0.1", 80)
    return f"{scheme}://{host}:{port}"


def relative(scope: Scope) -> str:
    """The request's path under the app's root (without a mount's prefix)."""
    path: str = scope["path"]
    root: str = scope.get("root_path", "")
    return path[len(root) :] if root and path.startswith(root) else path
