"""toolkit's exceptions and JSON-RPC error codes: one small hierarchy, each named for what went wrong.

The public ones (re-exported from ``toolkit``) are what users raise or catch; the private ones
carry a failure between two layers of toolkit and never reach a user as such.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

# --- JSON-RPC error codes (JSON-RPC 2.0 §5.1; MCP 2026-07-28 basic/index, "Error Codes") -----------

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603
RESOURCE_NOT_FOUND: Final = -32002
"""Legacy versions' code for an unknown resource URI; 2026-07-28 uses INVALID_PARAMS."""
HEADER_MISMATCH: Final = -32020
MISSING_CAPABILITY: Final = -32021
UNSUPPORTED_VERSION: Final = -32022


# --- public --------------------------------------------------------------------------------------


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
    gives some modern-era errors their own status), when the error is the whole HTTP
    response; on stdio, and inside a stream, only the JSON-RPC error is sent.
    """

    def __init__(
        self,
        code: int,
        message: str,
        data: Any = None,
        *,
        http_status: int = 200,
        http_headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data
        self.http_status = http_status
        self.http_headers = dict(http_headers) if http_headers else {}
        """Headers the Streamable HTTP response carries too (``Retry-After`` with a 429, say)."""


class StoreUnavailable(McpError):
    """The store (e.g. Redis) cannot be reached: the request that needed it fails with HTTP 503.

    Service resumes by itself once the store is back; nothing waits longer than the store's timeout.
    """

    def __init__(self, message: str) -> None:
        super().__init__(INTERNAL_ERROR, f"Service Unavailable: {message}; retry shortly", http_status=503)


class AppNotFound(ToolkitError):
    """``toolkit run APP``: APP names no file, module, attribute or server, or cannot be loaded as it is
    (its import runs the server): the message says which, and what to write."""


class ClientError(ToolkitError):
    """``toolkit.testing.Client``: the server answered with a JSON-RPC error; ``error`` is its ``error`` object."""

    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(f"{error.get('code')}: {error.get('message')}")
        self.error = error
        self.code = error.get("code")


class ElicitationSchemaError(ToolkitError, TypeError):
    """``ctx.elicit(...)`` was given a schema elicitation cannot carry (flat objects of primitives only)."""


# --- between toolkit's layers -------------------------------------------------------------------


class ArgumentsTooDeep(McpError):
    """Arguments nested beyond the JSON parser's limit (a prompt's -32602; a tool's isError result)."""

    def __init__(self) -> None:
        problem = "is nested too deeply"
        super().__init__(
            INVALID_PARAMS, f'Invalid params: "arguments" {problem}', {"param": "arguments", "problem": problem}
        )


class UnsafeValue(ValueError):
    """A URI has a resource template's shape, but a variable's value could escape a directory."""


class InputRequired(BaseException):
    """Raised inside a handler when it needs client input it does not have yet (2026-07-28).

    A ``BaseException`` so that a tool's own ``except Exception`` does not swallow it.
    Toolkit catches it and answers with ``resultType: "input_required"``.
    """


class RunAtImport(BaseException):
    """``server.run()`` called while the CLI imports the app; the loader says where and what to write.

    A ``BaseException``, like ``InputRequired``, so that the app's own ``except Exception`` lets it through.
    """


class ClientRequestError(Exception):
    """The client answered a server-to-client request with an error, or not in time."""


class ArgumentsInvalid(Exception):
    """The arguments of a call fail validation; the message lists why."""


class OutputInvalid(Exception):
    """A tool's return value fails its output schema (a server bug, reported as ``isError``)."""


class NotSerializable(OutputInvalid):
    """A tool's return value, or a value inside it, has no JSON form; ``what`` names its type."""

    def __init__(self, what: str, detail: str) -> None:
        super().__init__(detail)
        self.what = what


class Unsupported(Exception):
    """This core schema needs pydantic's own generator (the fast translator cannot do it)."""
