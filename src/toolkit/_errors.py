"""toolkit's exceptions: one small hierarchy, each named for what went wrong."""

from __future__ import annotations

from typing import Any


class ToolkitError(Exception):
    """Base class of every error toolkit raises on purpose."""


class RegistrationError(ToolkitError, ValueError):
    """A tool, resource or prompt cannot be registered as written.

    Raised at decoration time, so the mistake surfaces when the server module is
    imported rather than when a client first calls the function.
    """


class SchemaError(RegistrationError):
    """A JSON Schema (generated or hand-written) fails toolkit's checks.

    ``pointer`` is the JSON Pointer of the offending subschema inside the schema.
    """

    def __init__(self, message: str, *, pointer: str = "") -> None:
        super().__init__(message)
        self.pointer = pointer


class ToolError(ToolkitError):
    """Raise from a tool to report a failure the model should see.

    The message is sent to the client verbatim as an ``isError`` result. Any other
    exception is masked (see ``Server(mask_errors=...)``) so internals do not leak.
    """


class ResourceError(ToolkitError):
    """Raise from a resource function to fail ``resources/read`` with this message."""


class PromptError(ToolkitError):
    """Raise from a prompt function to fail ``prompts/get`` with this message."""


class McpError(ToolkitError):
    """A JSON-RPC error to send back as the response to a request.

    Handlers raise it; the engine turns it into ``{"error": {"code", "message", "data"}}``.
    ``http_status`` is the status the Streamable HTTP transport answers with (the spec
    gives some modern-era errors their own status).
    """

    def __init__(self, code: int, message: str, data: Any = None, *, http_status: int = 200) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data
        self.http_status = http_status

    def to_error(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error
