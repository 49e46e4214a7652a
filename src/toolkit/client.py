"""toolkit's MCP client: talk to any MCP server, of any era, over stdio, Streamable HTTP or in process.

::

    async with toolkit.Client("https://example.com/mcp") as client:
        tools = await client.list_tools()
        result = await client.call_tool("forecast", {"city": "Paris"})
        print(result.data)  # the natural value, whatever the server's protocol version

``toolkit.Client`` is imported from here on first use: ``import toolkit`` loads none of the client.
"""

from __future__ import annotations

from ._client.client import Client
from ._client.results import CallToolResult, OutputMismatch, ToolCallFailed
from ._client.session import ClientSession, InputRounds, NoHandler, VersionNotAgreed
from ._client.subscriptions import Subscription
from ._client.tasks import TaskHandle
from ._client.transport import Transport, TransportClosed
from ._errors import ClientError

__all__ = [
    "CallToolResult",
    "Client",
    "ClientError",
    "ClientSession",
    "InputRounds",
    "NoHandler",
    "OutputMismatch",
    "Subscription",
    "TaskHandle",
    "ToolCallFailed",
    "Transport",
    "TransportClosed",
    "VersionNotAgreed",
]
