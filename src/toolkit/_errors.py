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
URL_ELICITATION_REQUIRED: Final = -32042
"""2025-11-25 client/elicitation, "URL Elicitation Required Error"; 2026-07-28 reserves it unused."""


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


class URLElicitationRequired(McpError, ClientError):
    """The request cannot go on until the user has been to a URL (JSON-RPC error -32042, 2025-11-25).

    A tool raises it, for instance when it needs the user's token for a third-party service it
    does not have yet: ``raise URLElicitationRequired(url, "Connect your GitHub account")``; the
    client shows the URL, the user goes there, the client calls again. ``also(...)`` adds another
    URL. ``elicitation_id`` defaults to a new UUID; give your own to recognise the user's return
    (put it in the URL). The URL must be ``https`` (``http`` only on localhost) and carry no
    credentials (2025-11-25 client/elicitation, "Safe URL Handling"): else ``ValueError``.

    ``toolkit.Client`` raises it too (a ``ClientError``) when a server answers -32042;
    ``elicitations`` then holds what the server sent (``mode``, ``elicitationId``, ``url``,
    ``message``), unchecked.
    """

    def __init__(
        self,
        url: str,
        message: str,
        *,
        elicitation_id: str | None = None,
        text: str = "This request requires more information.",
    ) -> None:
        self._start(text, [])
        self.also(url, message, elicitation_id=elicitation_id)

    def _start(self, text: str, elicitations: list[dict[str, Any]]) -> None:
        # Not McpError.__init__: through the MRO its super() is ClientError's, which takes an error object.
        Exception.__init__(self, text)
        self.message = text
        self.elicitations = elicitations
        self.data: dict[str, Any] = {"elicitations": elicitations}
        self.code: int = URL_ELICITATION_REQUIRED
        self.http_status = 200
        self.http_headers: dict[str, str] = {}
        self.error = {"code": URL_ELICITATION_REQUIRED, "message": text, "data": self.data}

    def also(self, url: str, message: str, *, elicitation_id: str | None = None) -> URLElicitationRequired:
        """One more URL the user must visit before the request can go on; ``self``, to raise."""
        problem = unsafe_url(url)
        if problem is not None:
            raise ValueError(f"URLElicitationRequired: {problem}")
        if elicitation_id is None:
            elicitation_id = new_elicitation_id()
        self.elicitations.append({"mode": "url", "elicitationId": elicitation_id, "url": url, "message": message})
        return self

    @property
    def urls(self) -> list[str]:
        return [str(each.get("url")) for each in self.elicitations]

    @classmethod
    def received(cls, error: dict[str, Any]) -> URLElicitationRequired:
        """The error a server sent (a client's view): its URL elicitations as they came."""
        data = error.get("data")
        listed = data.get("elicitations") if isinstance(data, dict) else None
        elicitations = [each for each in listed if isinstance(each, dict)] if isinstance(listed, list) else []
        received = cls.__new__(cls)
        received._start(str(error.get("message") or "URL elicitation required"), elicitations)
        received.error = error
        return received

    def __str__(self) -> str:
        return f"{self.code}: {self.message} (open: {', '.join(self.urls) or 'no URL given'})"


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


# --- URL-mode elicitation (the server's rules, checked where a URL is given) ----------------------

_LOCAL_HOSTS: Final = frozenset({"localhost", "127.0.0.1", "::1"})
_CREDENTIAL_PARAMETERS: Final = frozenset(
    {"access_token", "refresh_token", "id_token", "password", "passwd", "client_secret", "api_key", "apikey"}
)


def unsafe_url(url: str) -> str | None:
    """Why ``url`` may not be sent in a URL-mode elicitation, or ``None`` when it may.

    2025-11-25 client/elicitation, "Safe URL Handling": HTTPS outside development (``http`` is
    accepted for localhost only), no credentials and nothing pre-authenticated in the URL (no
    user-info part, no query parameter named like a credential).
    """
    from urllib.parse import parse_qsl, urlsplit  # noqa: PLC0415 - only a server sending URLs needs it

    if not isinstance(url, str) or not url or any(char.isspace() or ord(char) < 32 for char in url):
        return f"{url!r} is not a URL (no spaces or control characters; give an absolute https:// URL)"
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError as exc:
        return f"{url!r} is not a valid URL ({exc})"
    if parts.scheme not in ("https", "http") or not host:
        return f"{url!r} is not an absolute http(s) URL; give https://host/path"
    if parts.scheme == "http" and host not in _LOCAL_HOSTS:
        return f"{url!r} uses http; the user is sent to it with their secrets: use https (http only for localhost)"
    if parts.username is not None or parts.password is not None:
        return f"the URL {parts.scheme}://{host}... carries credentials (user:password@); the URL must not hold any"
    named = sorted({name for name, _ in parse_qsl(parts.query)} & _CREDENTIAL_PARAMETERS)
    if named:
        return (
            f"the URL carries {', '.join(named)} in its query: a URL sent to the client must hold no credentials "
            "(keep them on the server, bound to the user; put only an opaque id in the URL)"
        )
    return None


def new_elicitation_id() -> str:
    """A fresh, unguessable ``elicitationId`` (a UUID, as the spec's examples use)."""
    import uuid  # noqa: PLC0415 - only a server sending URLs needs it

    return str(uuid.uuid4())
