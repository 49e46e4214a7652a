"""toolkit: MCP servers from typed Python functions, with natural JSON Schema 2020-12 output.

Decorate functions on a ``Server``; toolkit derives their schemas from the type hints,
validates arguments, and sends results to clients of every protocol version in the shape
that version accepts.
"""

from ._content import Audio, ContentBlock, EmbeddedResource, Image, ResourceLink, Text, ToolResult
from ._context import Context, ElicitResult, Root, SamplingResult
from ._errors import (
    McpError,
    PromptError,
    RegistrationError,
    ResourceError,
    SchemaError,
    ToolError,
    ToolkitError,
)
from ._events import EventStore
from ._prompts import Message, Prompt
from ._resources import Resource, ResourceContents, ResourceTemplate
from ._schema.hints import Header
from ._server import Server
from ._tools import Tool
from ._versions import KNOWN_VERSIONS, LATEST_VERSION, LEGACY_VERSIONS, MODERN_VERSIONS

__version__ = "0.1.0"

__all__ = [
    "KNOWN_VERSIONS",
    "LATEST_VERSION",
    "LEGACY_VERSIONS",
    "MODERN_VERSIONS",
    "Audio",
    "ContentBlock",
    "Context",
    "ElicitResult",
    "EmbeddedResource",
    "EventStore",
    "Header",
    "Image",
    "McpError",
    "Message",
    "Prompt",
    "PromptError",
    "RegistrationError",
    "Resource",
    "ResourceContents",
    "ResourceError",
    "ResourceLink",
    "ResourceTemplate",
    "Root",
    "SamplingResult",
    "SchemaError",
    "Server",
    "Text",
    "Tool",
    "ToolError",
    "ToolResult",
    "ToolkitError",
    "__version__",
]
