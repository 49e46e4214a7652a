"""``RateLimit``: at most N requests in any window of T, per caller and tool, on the ``limits`` library.

```python
server.add_middleware(RateLimit("10/minute"))                      # per caller and tool
server.add_middleware(RateLimit("100/hour", per="caller", storage="redis://redis:6379/0"))
```

A refused request gets the JSON-RPC error ``RATE_LIMITED`` (-32000) with ``data.retryAfter``;
over Streamable HTTP its response is HTTP 429 with ``Retry-After``. Not an ``isError`` tool
result: rate limiting is between the client application and the server, and the host is what
should back off. A result would go to the model, which can neither wait nor see the header.
The error is the same in both eras; the MCP spec defines no rate-limit code, so it is taken
from JSON-RPC's implementation-defined server-error range (-32000 to -32099).

``limits`` is imported by the first ``RateLimit``, never by a server that does not use one.
"""

from __future__ import annotations

import inspect
import math
import time
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Final, Literal, get_args

from .._errors import McpError, StoreUnavailable
from .._store.base import redacted
from .base import CallNext, McpRequest, Middleware

if TYPE_CHECKING:
    from limits import RateLimitItem
    from limits.aio.strategies import RateLimiter

RATE_LIMITED: Final = -32000
"""The JSON-RPC error code of a refused request (JSON-RPC 2.0 §5.1's server-error range)."""

Strategy = Literal["moving-window", "fixed-window", "sliding-window-counter"]
KeyFunction = Callable[[McpRequest], str | None]
"""``per=`` as a function: the request's key, or ``None`` to leave the request unlimited."""

KEY_PARTS: Final = ("caller", "tool", "target", "method")
STORAGE_TIMEOUT: Final = 5.0
"""Seconds a Redis operation may take before the request fails with 503 (as toolkit's own store)."""
INSTALL_HINT: Final = "pip install 'toolkit-mcp[ratelimit]'"


class RateLimit(Middleware):
    """Refuse requests beyond ``limit`` (``"10/minute"``, ``"100 per hour"``; several: all apply).

    ``per`` says what is counted separately: a tuple of ``"caller"`` (the access token's subject;
    without authorization the HTTP client's IP address, or ``"stdio"``), ``"tool"`` (the tool or
    prompt name, or the resource URI; ``"target"`` is the same) and ``"method"``; or a function
    ``(request) -> str | None`` returning the key itself (``None``: this request is not limited).
    ``methods`` are the requests that count (``"*"``: every request); ``tools`` restricts
    ``tools/call`` to calls of these tools. ``storage`` is ``"memory://"`` (this process only)
    or ``"redis://HOST:PORT/DB"`` (shared by every replica); ``strategy`` is a ``limits``
    strategy, and ``key_prefix`` names the counters in the storage.
    """

    __slots__ = ("_failures", "_limiter", "key_prefix", "limits", "methods", "per", "storage", "strategy", "tools")

    def __init__(
        self,
        limit: str | Iterable[str],
        *,
        per: str | Sequence[str] | KeyFunction = ("caller", "tool"),
        methods: str | Iterable[str] = ("tools/call",),
        tools: str | Iterable[str] | None = None,
        storage: str = "memory://",
        strategy: Strategy = "moving-window",
        key_prefix: str = "toolkit",
    ) -> None:
        try:
            import limits  # noqa: PLC0415 (an optional dependency, loaded by the first RateLimit)
            from limits.aio.strategies import STRATEGIES  # noqa: PLC0415
        except ImportError as exc:
            raise ImportError(f"RateLimit needs the limits package: {INSTALL_HINT} ({exc})") from exc
        self.limits: tuple[RateLimitItem, ...] = _parse(limits, limit)
        self.per: tuple[str, ...] | KeyFunction = _per(per)
        self.methods: frozenset[str] | None = _names("methods", methods, everything="*")
        self.tools: frozenset[str] | None = None if tools is None else _names("tools", tools)
        if self.tools is not None and self.methods is not None and "tools/call" not in self.methods:
            raise ValueError(
                "RateLimit(tools=...) limits calls of those tools, but methods= does not count tools/call; "
                "add 'tools/call' to methods="
            )
        if strategy not in STRATEGIES:
            raise ValueError(f"RateLimit(strategy={strategy!r}): use one of {', '.join(map(repr, get_args(Strategy)))}")
        if not isinstance(key_prefix, str) or not key_prefix:
            raise ValueError(f"RateLimit(key_prefix={key_prefix!r}) must be a non-empty string")
        self.storage = storage
        self.strategy = strategy
        self.key_prefix = key_prefix
        backend, self._failures = _open_storage(storage, key_prefix)
        limiter: Callable[[Any], RateLimiter] = STRATEGIES[strategy]
        self._limiter = limiter(backend)

    async def on_request(self, request: McpRequest, call_next: CallNext[dict[str, Any]]) -> dict[str, Any]:
        # on_request runs before every method hook and the handler: a refused call costs no
        # argument validation and creates no task.
        if self._counts(request):
            key = self._key(request)
            if key is not None:
                await self._take(request, key)
        return await call_next(request)

    def _counts(self, request: McpRequest) -> bool:
        if self.methods is not None and request.method not in self.methods:
            return False
        return self.tools is None or request.method != "tools/call" or request.name in self.tools

    def _key(self, request: McpRequest) -> tuple[str, ...] | None:
        if callable(self.per):
            key = self.per(request)
            if key is None:
                return None
            if not isinstance(key, str):
                raise TypeError(f"RateLimit(per={self.per!r}) returned {type(key).__name__}; return a str or None")
            return (_escape(key),)
        return tuple(_escape(_part(request, part)) for part in self.per)

    async def _take(self, request: McpRequest, key: tuple[str, ...]) -> None:
        """Count the request against every limit, or refuse it with the time until it would pass."""
        try:
            refused = await self._hit(key)
            if refused is None:
                return
            reset = (await self._limiter.get_window_stats(refused, *key)).reset_time
        except self._failures as exc:
            reason = str(exc).rstrip(". ") or type(exc).__name__
            raise StoreUnavailable(
                f"the rate-limit storage ({redacted(self.storage)}) is unreachable: {reason}"
            ) from None
        retry_after = max(1, math.ceil(reset - time.time()))
        limit = describe(refused)
        raise McpError(
            RATE_LIMITED,
            f"Rate limit exceeded for {_subject(request)}: {limit}; retry after {retry_after} s",
            {"retryAfter": retry_after, "limit": limit},
            http_status=429,
            http_headers={"Retry-After": str(retry_after)},
        )

    async def _hit(self, key: tuple[str, ...]) -> RateLimitItem | None:
        """The limit that refuses the request, after counting it against all of them if none does."""
        limiter = self._limiter
        if len(self.limits) == 1:  # one atomic hit: exactly N pass, however many race
            (item,) = self.limits
            return None if await limiter.hit(item, *key) else item
        # Several: test them all first, so that a request one limit refuses does not use up
        # another's allowance (two racing requests may still both pass the test; the hits decide).
        for item in self.limits:
            if not await limiter.test(item, *key):
                return item
        for item in self.limits:
            if not await limiter.hit(item, *key):
                return item
        return None

    def __repr__(self) -> str:
        limits = [describe(item) for item in self.limits]
        shown = repr(limits[0]) if len(limits) == 1 else repr(limits)
        per = getattr(self.per, "__qualname__", repr(self.per)) if callable(self.per) else repr(self.per)
        methods = "'*'" if self.methods is None else repr(tuple(sorted(self.methods)))
        parts = [shown, f"per={per}", f"methods={methods}"]
        if self.tools is not None:
            parts.append(f"tools={tuple(sorted(self.tools))!r}")
        parts += [f"storage={redacted(self.storage)!r}", f"strategy={self.strategy!r}"]
        if self.key_prefix != "toolkit":
            parts.append(f"key_prefix={self.key_prefix!r}")
        return f"RateLimit({', '.join(parts)})"


def describe(item: RateLimitItem) -> str:
    """``10 per 1 minute``, ``2 per 3 seconds``: a limit as the error message and ``data.limit`` say it."""
    unit = item.GRANULARITY.name
    return f"{item.amount} per {item.multiples} {unit}{'s' if item.multiples != 1 else ''}"


def _parse(limits: Any, limit: str | Iterable[str]) -> tuple[RateLimitItem, ...]:
    texts = [limit] if isinstance(limit, str) else list(limit) if isinstance(limit, Iterable) else [limit]
    items: list[RateLimitItem] = []
    for text in texts:
        if not isinstance(text, str):
            raise ValueError(f"RateLimit: a limit is a string like '10/minute', not {text!r}")
        try:
            parsed = limits.parse_many(text)
        except ValueError:
            raise ValueError(
                f"RateLimit: cannot read the limit {text!r}; write '<count>/<unit>' or '<count> per <n> <unit>' "
                "with a unit of second, minute, hour, day, month or year ('10/minute', '100 per hour', "
                "'5 per 10 seconds'; several separated by ';')"
            ) from None
        for item in parsed:
            if item.amount < 1:
                raise ValueError(f"RateLimit: the limit {text!r} allows nothing; a limit allows at least 1 request")
        items.extend(parsed)
    if not items:
        raise ValueError("RateLimit: no limit given; pass one like '10/minute'")
    return tuple(items)


def _per(per: str | Sequence[str] | KeyFunction) -> tuple[str, ...] | KeyFunction:
    if callable(per):
        if inspect.iscoroutinefunction(per):
            raise TypeError(f"RateLimit(per={per.__qualname__}) must be a plain def function, not async def")
        return per
    parts = (per,) if isinstance(per, str) else tuple(per) if isinstance(per, Iterable) else (per,)
    unknown = [part for part in parts if part not in KEY_PARTS]
    if unknown or not parts:
        what = f"unknown key part(s) {', '.join(map(repr, unknown))}" if unknown else "no key parts"
        raise ValueError(
            f"RateLimit(per={per!r}): {what}; use any of {', '.join(map(repr, KEY_PARTS))}, "
            "or a function (request) -> str | None"
        )
    return parts


def _names(option: str, names: str | Iterable[str], *, everything: str | None = None) -> frozenset[str] | None:
    """``methods=``/``tools=`` as a set; ``None`` for ``everything`` (``"*"``)."""
    values = (names,) if isinstance(names, str) else tuple(names) if isinstance(names, Iterable) else (names,)
    if everything is not None and everything in values:
        return None
    if not values or any(not isinstance(value, str) or not value for value in values):
        hint = " (or '*' for every request)" if everything is not None else ""
        raise ValueError(f"RateLimit({option}={names!r}): give one or more non-empty names{hint}")
    return frozenset(values)


def _part(request: McpRequest, part: str) -> str:
    if part == "caller":
        if request.caller is not None:
            return request.caller
        client = request.http.client if request.http is not None else None
        return client[0] if client else request.transport
    if part == "method":
        return request.method
    return request.name or request.uri or ""  # "tool" and "target"


def _escape(value: str) -> str:
    """A key part that cannot run into the next one (``limits`` joins them with ``/``)."""
    return value.replace("%", "%25").replace("/", "%2F")


def _subject(request: McpRequest) -> str:
    if request.method == "tools/call" and request.name is not None:
        return f"tool {request.name!r}"
    if request.method == "prompts/get" and request.name is not None:
        return f"prompt {request.name!r}"
    if request.uri is not None:
        return f"resource {request.uri!r}"
    return request.method


def _open_storage(uri: str, key_prefix: str) -> tuple[Any, tuple[type[BaseException], ...]]:
    """The ``limits`` async storage ``uri`` names, and the exceptions that mean it is unreachable."""
    from limits.errors import ConfigurationError, StorageError  # noqa: PLC0415
    from limits.storage import storage_from_string  # noqa: PLC0415

    accepted = (
        "use 'memory://' (counted in this process) or 'redis://HOST:PORT/DB' (shared by every replica; "
        "rediss:// for TLS)"
    )
    if not isinstance(uri, str):
        raise ValueError(f"RateLimit(storage={uri!r}): {accepted}")
    options: dict[str, Any] = {}
    failures: tuple[type[BaseException], ...] = ()
    if uri in ("memory", "memory://"):
        uri = "memory://"
    elif uri.partition("://")[0] in ("redis", "rediss", "redis+unix"):
        try:
            import redis  # noqa: PLC0415
            from redis.asyncio.retry import Retry  # noqa: PLC0415
            from redis.backoff import NoBackoff  # noqa: PLC0415
        except ImportError as exc:
            raise ImportError(
                f"RateLimit(storage={redacted(uri)!r}) needs the redis package: "
                f"pip install 'toolkit-mcp[redis]' ({exc})"
            ) from exc
        # redis-py's async client (limits defaults to coredis); a dead Redis fails fast, as
        # toolkit's own store does: one immediate retry on a fresh connection, then 503.
        options = {
            "implementation": "redispy",
            "key_prefix": key_prefix,
            "socket_timeout": STORAGE_TIMEOUT,
            "socket_connect_timeout": STORAGE_TIMEOUT,
            "retry": Retry(NoBackoff(), 1),
            "retry_on_error": [redis.ConnectionError],
        }
        failures = (StorageError, redis.RedisError, OSError)
    else:
        raise ValueError(f"RateLimit(storage={redacted(uri)!r}): {accepted}")
    try:
        return storage_from_string(f"async+{uri}", **options), failures
    except ConfigurationError as exc:
        problem = str(exc).replace(uri, redacted(uri))  # limits may quote the URI, password and all
        raise ValueError(
            f"RateLimit(storage={redacted(uri)!r}): {problem}; write redis://HOST:PORT/DB (or rediss://)"
        ) from None
