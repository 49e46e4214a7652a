"""``InboundRequest``: one request as its handler and its ``Context`` see it, whichever era.

A modern request brings its version, capabilities and log level in ``_meta`` and is served
statelessly; a legacy request borrows them from the session ``initialize`` opened
(2026-07-28 basic/versioning, "Backward Compatibility").
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final, Protocol

from . import _compat
from ._errors import INVALID_PARAMS, INVALID_REQUEST, McpError
from ._jsonrpc import Request
from ._session import Connection, Session
from ._types import (
    CLIENT_CAPABILITIES_KEY,
    CLIENT_INFO_KEY,
    LOG_LEVEL_KEY,
    LOG_RANK,
    PROTOCOL_VERSION_KEY,
    RequestId,
    Send,
)
from ._versions import BEFORE_INITIALIZE, MODERN_VERSIONS, negotiate_legacy, unsupported_version

if TYPE_CHECKING:
    from ._auth.tokens import AccessToken
    from ._telemetry import RequestTrace


RUNS_AS: Final = "runs_as"
"""``extras`` key: a ``RunsAs`` the call's progress and questions go through (a task's run)."""
BEGIN_TASK: Final = "begin_task"
"""``extras`` key: what ``ctx.begin_task()`` completes (a call that becomes a task when it asks)."""


class RunsAs(Protocol):
    """What a call runs as, when that takes over its progress and its questions (``extras[RUNS_AS]``)."""

    async def progress(self, progress: float, total: float | None, message: str | None) -> None: ...

    async def ask(self, key: str, method: str, params: dict[str, Any], valid: Callable[[Any], bool]) -> Any: ...


class InboundRequest:
    """Everything about one request that its handler and its ``Context`` need."""

    # A plain class: a dataclass compiles its generated methods when this module is imported,
    # start-up time every server pays for nothing this class needs.
    __slots__ = (
        "access_token",
        "answers",
        "client_capabilities",
        "client_info",
        "extras",
        "log_level",
        "method",
        "modern",
        "params",
        "pending_inputs",
        "progress_token",
        "request_id",
        "request_info",
        "send",
        "session",
        "trace",
        "version",
    )

    def __init__(
        self,
        request_id: RequestId,
        method: str,
        params: dict[str, Any],
        version: str,
        modern: bool,
        client_capabilities: dict[str, Any],
        client_info: dict[str, Any] | None,
        send: Send,
        session: Session | None = None,
        log_level: str | None = None,
        progress_token: str | int | None = None,
        answers: dict[str, Any] | None = None,
        pending_inputs: dict[str, dict[str, Any]] | None = None,
        request_info: Any = None,
        access_token: AccessToken | None = None,
    ) -> None:
        self.request_id = request_id
        self.method = method
        self.params = params
        self.version = version
        self.modern = modern
        self.client_capabilities = client_capabilities
        self.client_info = client_info
        self.send = send
        self.session = session
        self.log_level = log_level
        """Lowest level to send as ``notifications/message``; ``None`` sends none."""
        self.progress_token = progress_token
        self.answers: dict[str, Any] = {} if answers is None else answers
        """Modern: input responses gathered over the rounds of this request."""
        self.pending_inputs: dict[str, dict[str, Any]] = {} if pending_inputs is None else pending_inputs
        """Modern: input requests raised in this round."""
        self.request_info: Any = request_info
        """The transport's view of the request (e.g. the Starlette ``Request`` over HTTP)."""
        self.access_token: AccessToken | None = access_token
        """The caller's verified access token; ``None`` when the request carried none (stdio, no ``auth=``)."""
        self.extras: dict[str, Any] = {}
        """Per-request state of extensions, by key (``_extensions.base``: ``RUNS_AS``, ``BEGIN_TASK``)."""
        self.trace: RequestTrace | None = None
        """The request's span and measurement, when an OpenTelemetry SDK is configured."""

    def nested(self, params: dict[str, Any], extras: dict[str, Any]) -> InboundRequest:
        """This request as a mounted server serves it: its own ``params`` and ``extras``, the rest shared
        (the stream, the answers of earlier rounds, the questions pending). Slots copied one by one:
        ``copy.copy`` goes through ``__reduce_ex__``, a cost on every mounted call."""
        nested = InboundRequest.__new__(InboundRequest)
        nested.request_id = self.request_id
        nested.method = self.method
        nested.params = params
        nested.version = self.version
        nested.modern = self.modern
        nested.client_capabilities = self.client_capabilities
        nested.client_info = self.client_info
        nested.send = self.send
        nested.session = self.session
        nested.log_level = self.log_level
        nested.progress_token = self.progress_token
        nested.answers = self.answers
        nested.pending_inputs = self.pending_inputs
        nested.request_info = self.request_info
        nested.access_token = self.access_token
        nested.extras = extras
        nested.trace = self.trace
        return nested

    @property
    def caller(self) -> str | None:
        """Who state handed to the client belongs to (the token's subject), if anyone."""
        return self.access_token.caller if self.access_token is not None else None

    def client_supports(self, capability: str) -> bool:
        return isinstance(self.client_capabilities.get(capability), dict)

    def require(self, capability: str) -> None:
        """Fail the request unless the client declared ``capability``."""
        if self.client_supports(capability):
            return
        raise _compat.missing_capability(capability, self.version)


class Caller:
    """Who a request comes from, as a visibility function sees it (``server.set_visibility``); read-only.

    A view of the request being served: nothing is copied until asked for.
    """

    __slots__ = ("_inbound",)

    def __init__(self, inbound: InboundRequest) -> None:
        self._inbound = inbound

    @property
    def access_token(self) -> AccessToken | None:
        """The caller's verified token (HTTP with ``auth=``); ``None`` without one (stdio, no ``auth=``)."""
        return self._inbound.access_token

    @property
    def client_info(self) -> Mapping[str, Any]:
        """What the client says it is (``name``, ``version``, ...): ``initialize``'s, or the request's ``_meta``."""
        return MappingProxyType(self._inbound.client_info or {})

    @property
    def client_capabilities(self) -> Mapping[str, Any]:
        return MappingProxyType(self._inbound.client_capabilities)

    @property
    def session_id(self) -> str | None:
        """The legacy session's id (over HTTP; ``None`` over stdio and for stateless requests)."""
        session = self._inbound.session
        return session.id if session is not None else None

    @property
    def protocol_version(self) -> str:
        return self._inbound.version

    @property
    def request_info(self) -> Any:
        """The transport's view of the request (the Starlette ``Request`` over HTTP), if any."""
        return self._inbound.request_info

    def __repr__(self) -> str:
        token = self._inbound.access_token
        return (
            f"Caller(protocol_version={self.protocol_version!r}, client_info={dict(self.client_info)!r}, "
            f"session_id={self.session_id!r}, subject={token.subject if token is not None else None!r})"
        )


def modern_inbound(request: Request, send: Send) -> InboundRequest:
    """A modern request's inbound, from its ``_meta`` alone (-32602 / -32022 when that is incomplete)."""
    params = request.params
    meta = params.get("_meta")
    if not isinstance(meta, dict):
        raise McpError(
            INVALID_PARAMS,
            'Invalid params: a modern request needs "_meta" with '
            f'"{PROTOCOL_VERSION_KEY}" and "{CLIENT_CAPABILITIES_KEY}"',
            http_status=400,
        )
    version = meta.get(PROTOCOL_VERSION_KEY)
    if not isinstance(version, str):
        raise McpError(INVALID_PARAMS, f'Invalid params: "_meta" lacks "{PROTOCOL_VERSION_KEY}"', http_status=400)
    capabilities = meta.get(CLIENT_CAPABILITIES_KEY)
    if not isinstance(capabilities, dict):
        raise McpError(INVALID_PARAMS, f'Invalid params: "_meta" lacks "{CLIENT_CAPABILITIES_KEY}"', http_status=400)
    if version not in MODERN_VERSIONS:
        raise unsupported_version(version)
    log_level = meta.get(LOG_LEVEL_KEY)
    if log_level is not None and log_level not in LOG_RANK:
        raise McpError(INVALID_PARAMS, f"Invalid params: unknown log level {log_level!r}; use one of {list(LOG_RANK)}")
    client_info = meta.get(CLIENT_INFO_KEY)
    return InboundRequest(
        request_id=request.id,
        method=request.method,
        params=params,
        version=version,
        modern=True,
        client_capabilities=capabilities,
        client_info=client_info if isinstance(client_info, dict) else None,
        send=send,
        log_level=log_level,
        progress_token=_progress_token(meta),
    )


def legacy_inbound(request: Request, connection: Connection | None, send: Send) -> InboundRequest | None:
    """A legacy request's inbound, from its session; ``None`` for ``initialize`` (the engine opens the session)."""
    if request.method == "initialize":
        if connection is None:
            raise McpError(INVALID_REQUEST, "Invalid Request: initialize is not available here")
        return None
    session = connection.session if connection is not None else None
    if session is None or not session.ready:
        if request.method == "ping":  # allowed before initialize
            session = session or Session()
        else:
            raise McpError(
                INVALID_REQUEST,
                "Invalid Request: the session is not initialized. Send 'initialize' first, or use protocol "
                f'version {MODERN_VERSIONS[-1]} by putting "{PROTOCOL_VERSION_KEY}" and '
                f'"{CLIENT_CAPABILITIES_KEY}" in the request\'s "_meta"',
            )
    session.last_active = asyncio.get_running_loop().time()
    meta = request.params.get("_meta")
    return InboundRequest(
        request_id=request.id,
        method=request.method,
        params=request.params,
        version=session.version or BEFORE_INITIALIZE,
        modern=False,
        client_capabilities=session.client_capabilities,
        client_info=session.client_info or None,
        send=send,
        session=session,
        log_level=session.log_level,
        progress_token=_progress_token(meta) if isinstance(meta, dict) else None,
    )


def initialize_inbound(request: Request, connection: Connection, send: Send) -> InboundRequest:
    """``initialize``'s inbound: the version it negotiates, the capabilities it declares, its session."""
    params = request.params
    requested = params.get("protocolVersion")
    if not isinstance(requested, str):
        raise McpError(INVALID_PARAMS, 'Invalid params: initialize needs "protocolVersion"')
    capabilities = params.get("capabilities")
    client_info = params.get("clientInfo")
    return InboundRequest(
        request.id,
        "initialize",
        params,
        negotiate_legacy(requested),
        False,
        capabilities if isinstance(capabilities, dict) else {},
        client_info if isinstance(client_info, dict) else None,
        send,
        session=connection.session,
    )


def _progress_token(meta: dict[str, Any]) -> str | int | None:
    token = meta.get("progressToken")
    if isinstance(token, bool):
        return None
    return token if isinstance(token, (str, int)) else None
