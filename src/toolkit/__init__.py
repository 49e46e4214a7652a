"""toolkit: MCP servers from typed Python functions, with natural JSON Schema 2020-12 output.

Decorate functions on a ``Server``; toolkit derives their schemas from the type hints,
validates arguments, and sends results to clients of every protocol version in the shape
that version accepts.
"""

from typing import TYPE_CHECKING, Any

from ._content import Audio, ContentBlock, EmbeddedResource, Image, ResourceLink, Text, ToolResult
from ._context import Context
from ._depends import Depends
from ._errors import (
    McpError,
    PromptError,
    RegistrationError,
    ResourceError,
    SchemaError,
    ToolError,
    ToolkitError,
    URLElicitationRequired,
)
from ._inbound import Caller
from ._openapi import OpenAPI
from ._prompts import Message, Prompt
from ._registry import Selection
from ._resources import Resource, ResourceContents, ResourceTemplate, safe_join
from ._schema.hints import Header
from ._server import Server
from ._tools import Tool
from ._versions import KNOWN_VERSIONS, LATEST_VERSION, LEGACY_VERSIONS, MODERN_VERSIONS

if TYPE_CHECKING:
    from ._answers import ElicitResult, Root, SamplingResult
    from ._events import EventStore
    from ._extensions.apps import App, renders_apps
    from ._providers import CallerToken, Lifespan, ProtocolVersion, RequestHeader, RequestHeaders, ServerStore, Subject
    from ._sources.openapi.credentials import APIKey, Basic, Bearer
    from ._sources.openapi.routes import RouteMap
    from ._state import State
    from ._state_providers import LocalUserState, RequestState, SessionState, UserState
    from ._store.state import StateError, StateLimitError, StateLimits
    from ._transform import ArgTransform, transform_tool
    from .client import Client

__version__ = "0.1.0"

__all__ = [
    "KNOWN_VERSIONS",
    "LATEST_VERSION",
    "LEGACY_VERSIONS",
    "MODERN_VERSIONS",
    "APIKey",
    "App",
    "ArgTransform",
    "Audio",
    "Basic",
    "Bearer",
    "Caller",
    "CallerToken",
    "Client",
    "ContentBlock",
    "Context",
    "Depends",
    "ElicitResult",
    "EmbeddedResource",
    "EventStore",
    "Header",
    "Image",
    "Lifespan",
    "LocalUserState",
    "McpError",
    "Message",
    "OpenAPI",
    "Prompt",
    "PromptError",
    "ProtocolVersion",
    "RegistrationError",
    "RequestHeader",
    "RequestHeaders",
    "RequestState",
    "Resource",
    "ResourceContents",
    "ResourceError",
    "ResourceLink",
    "ResourceTemplate",
    "Root",
    "RouteMap",
    "SamplingResult",
    "SchemaError",
    "Selection",
    "Server",
    "ServerStore",
    "SessionState",
    "State",
    "StateError",
    "StateLimitError",
    "StateLimits",
    "Subject",
    "Text",
    "Tool",
    "ToolError",
    "ToolResult",
    "ToolkitError",
    "URLElicitationRequired",
    "UserState",
    "__version__",
    "renders_apps",
    "safe_join",
    "transform_tool",
]


# Imported on first use, not by ``import toolkit``: a server that never resumes an HTTP stream or
# asks its client anything would pay for them at start-up (they are dataclasses, whose creation
# compiles their generated methods).
def __getattr__(name: str) -> Any:
    value: Any
    if name == "EventStore":
        from ._events import EventStore as value  # noqa: PLC0415
    elif name == "Client":  # the client wing: loaded only by a program that is a client
        from .client import Client as value  # noqa: PLC0415
    elif name in ("ArgTransform", "transform_tool"):  # only servers that transform a tool load it
        from . import _transform  # noqa: PLC0415

        value = getattr(_transform, name)
    elif name in ("APIKey", "Basic", "Bearer"):  # an OpenAPI source's credentials: only with a document
        from ._sources.openapi import credentials  # noqa: PLC0415

        value = getattr(credentials, name)
    elif name in ("App", "renders_apps"):  # MCP Apps: only servers with an app load the extension
        from ._extensions import apps  # noqa: PLC0415

        value = getattr(apps, name)
    elif name == "RouteMap":
        from ._sources.openapi.routes import RouteMap as value  # noqa: PLC0415
    elif name in (
        "CallerToken",
        "Lifespan",
        "ProtocolVersion",
        "RequestHeader",
        "RequestHeaders",
        "ServerStore",
        "Subject",
    ):
        from . import _providers  # noqa: PLC0415 - the built-in providers: CallerToken loads the auth wing's AccessToken

        value = getattr(_providers, name)
    elif name in ("LocalUserState", "RequestState", "SessionState", "UserState"):
        from . import _state_providers  # noqa: PLC0415 - only servers that keep state load it

        value = getattr(_state_providers, name)
    elif name == "State":
        from ._state import State as value  # noqa: PLC0415
    elif name in ("StateError", "StateLimitError", "StateLimits"):
        from ._store import state  # noqa: PLC0415

        value = getattr(state, name)
    elif name in ("ElicitResult", "Root", "SamplingResult"):
        from . import _answers  # noqa: PLC0415

        value = getattr(_answers, name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
