"""toolkit's MCP client: talk to any MCP server, of any era, over stdio, Streamable HTTP or in process.

::

    async with toolkit.Client("https://example.com/mcp") as client:
        tools = await client.list_tools()
        result = await client.call_tool("forecast", {"city": "Paris"})
        print(result.data)  # the natural value, whatever the server's protocol version

``toolkit.Client`` is imported from here on first use: ``import toolkit`` loads none of the client.
The OAuth names (``OAuth``, the token storages, ``LoopbackBrowser``, the ``OAuthError`` family)
load httpx, and are imported on first use too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._client.client import Client
from ._client.results import CallToolResult, OutputMismatch, ToolCallFailed
from ._client.session import ClientSession, InputRounds, NoHandler, VersionNotAgreed
from ._client.subscriptions import Subscription
from ._client.tasks import TaskHandle
from ._client.transport import Transport, TransportClosed
from ._errors import ClientError

if TYPE_CHECKING:
    from ._client.oauth import (
        AccessDenied,
        AuthorizationFailed,
        FileTokenStorage,
        InsecureURL,
        LoopbackBrowser,
        MemoryTokenStorage,
        MetadataRefused,
        OAuth,
        OAuthError,
        RegistrationFailed,
        TokenRequestFailed,
        TokenStorage,
        UserAgent,
    )

_OAUTH = frozenset(
    {
        "AccessDenied",
        "AuthorizationFailed",
        "FileTokenStorage",
        "InsecureURL",
        "LoopbackBrowser",
        "MemoryTokenStorage",
        "MetadataRefused",
        "OAuth",
        "OAuthError",
        "RegistrationFailed",
        "TokenRequestFailed",
        "TokenStorage",
        "UserAgent",
    }
)


def __getattr__(name: str) -> Any:
    if name in _OAUTH:  # httpx: only for a program that signs in
        from ._client import oauth  # noqa: PLC0415

        value = getattr(oauth, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "AccessDenied",
    "AuthorizationFailed",
    "CallToolResult",
    "Client",
    "ClientError",
    "ClientSession",
    "FileTokenStorage",
    "InputRounds",
    "InsecureURL",
    "LoopbackBrowser",
    "MemoryTokenStorage",
    "MetadataRefused",
    "NoHandler",
    "OAuth",
    "OAuthError",
    "OutputMismatch",
    "RegistrationFailed",
    "Subscription",
    "TaskHandle",
    "TokenRequestFailed",
    "TokenStorage",
    "ToolCallFailed",
    "Transport",
    "TransportClosed",
    "UserAgent",
    "VersionNotAgreed",
]
