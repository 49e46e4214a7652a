"""``ResponseSizeLimit``: refuse to send a result bigger than a given number of bytes.

```python
server.add_middleware(ResponseSizeLimit(1_000_000))
```
"""

from __future__ import annotations

import logging
from typing import Any

import pydantic_core

from .. import _compat
from .._content import CallOutcome
from .._errors import INTERNAL_ERROR, McpError
from .base import CallNext, McpRequest, Middleware

logger = logging.getLogger("toolkit")


class ResponseSizeLimit(Middleware):
    """Replace any result over ``max_bytes`` (as JSON) with an error, and log a warning.

    A ``tools/call`` result over the limit becomes an ``isError`` result that tells the model
    the size and the limit (it may then ask for less); any other request fails with a
    JSON-RPC internal error (-32603) saying the same. The size counted is the JSON-RPC
    ``result`` object as encoded, so every result is encoded once more to measure it.

    Add it after the middlewares that should see the error instead of the large result
    (``RequestLogging`` then logs a ``tool_error``).
    """

    __slots__ = ("max_bytes",)

    def __init__(self, max_bytes: int) -> None:
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int):
            raise TypeError(f"ResponseSizeLimit(max_bytes=...) takes an int, not {type(max_bytes).__name__}")
        if max_bytes < 1:
            raise ValueError(f"ResponseSizeLimit(max_bytes={max_bytes}): the limit must be at least 1 byte")
        self.max_bytes = max_bytes

    async def on_request(self, request: McpRequest, call_next: CallNext[dict[str, Any]]) -> dict[str, Any]:
        result = await call_next(request)
        size = len(pydantic_core.to_json(result, inf_nan_mode="null"))  # as the engine encodes it
        if size <= self.max_bytes:
            return result
        target = request.name if request.name is not None else request.uri
        what = f"{request.method} {target!r}" if target is not None else request.method
        logger.warning(
            "the result of %s is %d bytes, over the ResponseSizeLimit of %d bytes: sent an error instead",
            what,
            size,
            self.max_bytes,
        )
        if request.method == "tools/call":
            text = f"The result of tool {target!r} is {size} bytes, over this server's limit of {self.max_bytes} bytes"
            return _compat.call_result(CallOutcome.error(text), None, request.protocol_version)
        raise McpError(
            INTERNAL_ERROR,
            f"Response too large: the result of {what} is {size} bytes, over this server's limit of "
            f"{self.max_bytes} bytes",
            {"size": size, "maxBytes": self.max_bytes},
        )

    def __repr__(self) -> str:
        return f"ResponseSizeLimit({self.max_bytes})"
