"""Middleware: code that runs around every request a server answers.

```python
from toolkit import Server
from toolkit.middleware import Middleware, RateLimit, RequestLogging

server = Server("weather")
server.add_middleware(RequestLogging())
server.add_middleware(RateLimit("10/minute", per="caller"))
```

``Middleware`` is the base class of your own (override ``on_request``, ``on_call_tool``, ``on_list``,
``on_read_resource``, ``on_get_prompt``); the others are the built-in middlewares.
"""

from typing import TYPE_CHECKING, Any

from ._middleware.base import CallNext, McpRequest, Middleware, MiddlewareFunction

if TYPE_CHECKING:
    from ._middleware.logging import RequestLogging
    from ._middleware.ratelimit import RateLimit
    from ._middleware.size import ResponseSizeLimit
    from ._middleware.timing import Timing

__all__ = [
    "CallNext",
    "McpRequest",
    "Middleware",
    "MiddlewareFunction",
    "RateLimit",
    "RequestLogging",
    "ResponseSizeLimit",
    "Timing",
]

_BUILT_IN = {
    "RateLimit": "ratelimit",
    "RequestLogging": "logging",
    "ResponseSizeLimit": "size",
    "Timing": "timing",
}


# The built-in middlewares load on first use: an application imports only the ones it runs.
def __getattr__(name: str) -> Any:
    module = _BUILT_IN.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib  # noqa: PLC0415

    value = getattr(importlib.import_module(f"toolkit._middleware.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
