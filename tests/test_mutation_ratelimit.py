"""Exact behaviour of ``RateLimit`` where mutation testing found the other tests lenient.

Each test pins a detail that a changed line in ``src/toolkit/_middleware/ratelimit.py`` altered
without any other fast test failing (``scripts/mutate src/toolkit/_middleware/ratelimit.py``;
docs/contributing.md).
"""

from __future__ import annotations

import asyncio
import functools
import math
import re
import time
from types import SimpleNamespace
from typing import Any

import pytest

from toolkit._errors import McpError, StoreUnavailable
from toolkit._middleware.ratelimit import describe
from toolkit.middleware import RateLimit


def request(
    method: str = "tools/call",
    name: str | None = "search",
    *,
    uri: str | None = None,
    caller: str | None = None,
    client: tuple[str, int] | None = None,
    transport: str = "stdio",
) -> Any:
    """What RateLimit reads of an ``McpRequest``."""
    http = SimpleNamespace(client=client) if client is not None or transport == "http" else None
    return SimpleNamespace(
        method=method, name=name, uri=uri, caller=caller, http=http, transport=transport, arguments={}
    )


async def passed(request: Any) -> dict[str, Any]:
    return {"ok": True}


async def refusal(limit: RateLimit, req: Any) -> McpError:
    with pytest.raises(McpError) as raised:
        await limit.on_request(req, passed)
    return raised.value


async def test_the_refusal_is_http_429_with_retry_after_the_seconds_in_data() -> None:
    limit = RateLimit("1/minute")
    assert await limit.on_request(request(), passed) == {"ok": True}
    error = await refusal(limit, request())
    retry_after = error.data["retryAfter"]
    assert 59 <= retry_after <= 60
    assert error.http_status == 429
    assert {name.lower(): value for name, value in error.http_headers.items()} == {"retry-after": str(retry_after)}


async def test_retry_after_counts_from_the_first_request_of_the_window() -> None:
    """Rule: the wait is until this key's window frees a slot (not a whole new window)."""
    limit = RateLimit("2 per 3 seconds")
    start = time.time()
    for _ in range(2):
        await limit.on_request(request(), passed)
    await asyncio.sleep(1.2)
    error = await refusal(limit, request())
    assert error.data["retryAfter"] == max(1, math.ceil(start + 3 - time.time()))
    assert error.data["retryAfter"] == 2


async def test_several_limits_count_per_key_and_a_refused_request_uses_none() -> None:
    limit = RateLimit(["5/minute", "2/minute"], per="caller")
    alice, bob = request(caller="sub:alice"), request(caller="sub:bob")
    for _ in range(2):
        await limit.on_request(alice, passed)
    assert (await refusal(limit, alice)).data["limit"] == "2 per 1 minute"
    assert await limit.on_request(bob, passed) == {"ok": True}  # bob has his own counters
    five = limit.limits[0]
    stats = await limit._limiter.get_window_stats(five, *limit._key(alice))
    assert stats.remaining == 3  # the refused request did not use the 5/minute allowance


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        (
            "Error 111 connecting to 127.0.0.1:6390. Connection refused.",
            "Error 111 connecting to 127.0.0.1:6390. Connection refused",
        ),
        ("", "OSError"),
        ("bad reply X.", "bad reply X"),
        (". odd", ". odd"),
    ],
)
async def test_an_unreachable_storage_is_503_saying_which_and_why(
    monkeypatch: pytest.MonkeyPatch, message: str, reason: str
) -> None:
    limit = RateLimit("1/minute", storage="redis://me:hunter2@127.0.0.1:6390/0")

    async def unreachable(*args: Any) -> bool:
        raise OSError(message) if message else OSError()

    monkeypatch.setattr(limit._limiter, "hit", unreachable)
    with pytest.raises(StoreUnavailable) as raised:
        await limit.on_request(request(), passed)
    assert raised.value.http_status == 503
    assert raised.value.message == (
        f"Service Unavailable: the rate-limit storage (redis://me:***@127.0.0.1:6390/0) is unreachable: {reason}; "
        "retry shortly"
    )


async def test_a_key_function_returning_something_else_is_a_type_error() -> None:
    def tenant(request: Any) -> Any:
        return 5

    limit = RateLimit("1/minute", per=tenant)
    with pytest.raises(
        TypeError, match=rf"^RateLimit\(per={re.escape(repr(tenant))}\) returned int; return a str or None$"
    ):
        await limit.on_request(request(), passed)


def test_key_parts() -> None:
    """Rule: the caller is the token's subject, else the HTTP client's address (not its port), else the transport."""
    limit = RateLimit("1/minute", per=("caller", "tool", "method"), methods="*")
    assert limit._key(request(caller="sub:a")) == ("sub:a", "search", "tools%2Fcall")
    assert limit._key(request(client=("10.0.0.1", 5555), transport="http")) == ("10.0.0.1", "search", "tools%2Fcall")
    assert limit._key(request(transport="http")) == ("http", "search", "tools%2Fcall")
    assert limit._key(request()) == ("stdio", "search", "tools%2Fcall")
    assert limit._key(request("resources/read", None, uri="note://a")) == ("stdio", "note:%2F%2Fa", "resources%2Fread")
    assert limit._key(request("tools/list", None)) == ("stdio", "", "tools%2Flist")


def test_key_parts_are_escaped_so_they_cannot_run_into_each_other() -> None:
    limit = RateLimit("1/minute", per=lambda request: "a/b%2Fc")
    assert limit._key(request()) == ("a%2Fb%252Fc",)


def test_repr_shows_a_key_function_by_name_and_every_non_default() -> None:
    def tenant(request: Any) -> str | None:
        return None

    limit = RateLimit("1/minute", per=tenant, methods="*", tools=["b", "a"], key_prefix="app")
    assert repr(limit) == (
        "RateLimit('1 per 1 minute', per=test_repr_shows_a_key_function_by_name_and_every_non_default.<locals>.tenant, "
        "methods='*', tools=('a', 'b'), storage='memory://', strategy='moving-window', key_prefix='app')"
    )
    nameless = functools.partial(tenant)
    assert f"per={nameless!r}," in repr(RateLimit(["1/minute", "5/hour"], per=nameless))
    assert repr(RateLimit(["1/minute", "5/hour"])).startswith("RateLimit(['1 per 1 minute', '5 per 1 hour'], ")


async def test_a_prompts_get_without_a_name_is_named_by_its_method() -> None:
    limit = RateLimit("1/minute", methods="*")
    await limit.on_request(request("prompts/get", None), passed)
    error = await refusal(limit, request("prompts/get", None))
    assert error.message.startswith("Rate limit exceeded for prompts/get: 1 per 1 minute; retry after ")


@pytest.mark.parametrize("storage", ["memory", "memory://", "redis://127.0.0.1:6390/0", "rediss://127.0.0.1:6390/0"])
def test_the_storages_accepted(storage: str) -> None:
    assert RateLimit("1/minute", storage=storage).storage == storage


async def test_memory_is_memory() -> None:
    limit = RateLimit("1/minute", storage="memory")
    await limit.on_request(request(), passed)
    assert (await refusal(limit, request())).http_status == 429


def test_a_storage_that_is_not_a_string_is_refused_saying_what_is_accepted() -> None:
    message = (
        "RateLimit(storage=5): use 'memory://' (counted in this process) or 'redis://HOST:PORT/DB' "
        "(shared by every replica; rediss:// for TLS)"
    )
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        RateLimit("1/minute", storage=5)  # type: ignore[arg-type]


UNREADABLE = (
    "; write '<count>/<unit>' or '<count> per <n> <unit>' with a unit of second, minute, hour, day, month or year "
    "('10/minute', '100 per hour', '5 per 10 seconds'; several separated by ';')"
)


@pytest.mark.parametrize(
    ("limit", "options", "message"),
    [
        ("ten/minute", {}, f"RateLimit: cannot read the limit 'ten/minute'{UNREADABLE}"),
        (["1/minute", 5], {}, "RateLimit: a limit is a string like '10/minute', not 5"),
        (5, {}, "RateLimit: a limit is a string like '10/minute', not 5"),
        ("0/minute", {}, "RateLimit: the limit '0/minute' allows nothing; a limit allows at least 1 request"),
        (
            "1/minute;0/hour",
            {},
            "RateLimit: the limit '1/minute;0/hour' allows nothing; a limit allows at least 1 request",
        ),
        ([], {}, "RateLimit: no limit given; pass one like '10/minute'"),
        (
            "1/minute",
            {"per": ("caller", "user", "who")},
            "RateLimit(per=('caller', 'user', 'who')): unknown key part(s) 'user', 'who'; use any of 'caller', "
            "'tool', 'target', 'method', or a function (request) -> str | None",
        ),
        (
            "1/minute",
            {"per": ()},
            "RateLimit(per=()): no key parts; use any of 'caller', 'tool', 'target', 'method', "
            "or a function (request) -> str | None",
        ),
        (
            "1/minute",
            {"per": 5},
            "RateLimit(per=5): unknown key part(s) 5; use any of 'caller', 'tool', 'target', 'method', "
            "or a function (request) -> str | None",
        ),
        (
            "1/minute",
            {"methods": ["tools/call", ""]},
            "RateLimit(methods=['tools/call', '']): give one or more non-empty names (or '*' for every request)",
        ),
        ("1/minute", {"tools": [5]}, "RateLimit(tools=[5]): give one or more non-empty names"),
        ("1/minute", {"tools": 5}, "RateLimit(tools=5): give one or more non-empty names"),
        (
            "1/minute",
            {"methods": "tools/list", "tools": "search"},
            "RateLimit(tools=...) limits calls of those tools, but methods= does not count tools/call; "
            "add 'tools/call' to methods=",
        ),
        (
            "1/minute",
            {"strategy": "token-bucket"},
            "RateLimit(strategy='token-bucket'): use one of 'moving-window', 'fixed-window', 'sliding-window-counter'",
        ),
        ("1/minute", {"key_prefix": 5}, "RateLimit(key_prefix=5) must be a non-empty string"),
        (
            "1/minute",
            {"storage": "memcached://me:pw@h:1"},
            "RateLimit(storage='memcached://me:***@h:1'): use 'memory://' (counted in this process) or "
            "'redis://HOST:PORT/DB' (shared by every replica; rediss:// for TLS)",
        ),
    ],
)
def test_configuration_mistakes_are_refused_in_these_words(limit: Any, options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError) as raised:
        RateLimit(limit, **options)
    assert str(raised.value) == message


def test_what_is_counted() -> None:
    """Rule: methods= and tools= select what counts; "*" is every method; other tools than tools= are free."""
    every = RateLimit("1/minute", methods=["*", "tools/list"])
    assert every.methods is None
    assert every._counts(request("tools/list", None)) and every._counts(request())
    tools = RateLimit("1/minute", methods=["tools/call", "prompts/get"], tools="search")
    assert tools.tools == frozenset({"search"}) and tools.methods == frozenset({"tools/call", "prompts/get"})
    assert tools._counts(request()) and not tools._counts(request(name="lookup"))
    assert tools._counts(request("prompts/get", "greet"))
    assert not tools._counts(request("tools/list", None))


def test_several_limits_in_one_string_all_apply() -> None:
    limit = RateLimit("2 per 3 seconds; 10/hour")
    assert [describe(item) for item in limit.limits] == ["2 per 3 seconds", "10 per 1 hour"]


def test_a_redis_storage_fails_fast_and_names_its_counters() -> None:
    """Rule: 5 s timeouts, one immediate retry on a fresh connection, the key prefix, redis-py (as toolkit's store)."""
    import redis
    from redis.backoff import NoBackoff

    storage = RateLimit("1/minute", storage="redis://127.0.0.1:6390/0", key_prefix="app")._limiter.storage
    options = storage.options
    assert (options["socket_timeout"], options["socket_connect_timeout"]) == (5.0, 5.0)
    assert options["retry_on_error"] == [redis.ConnectionError]
    retry = options["retry"]
    assert isinstance(retry._backoff, NoBackoff) and retry._retries == 1
    assert type(storage.bridge).__name__ == "RedispyBridge" and storage.bridge.key_prefix == "app"
    assert RateLimit("1/minute", storage="redis+unix:///tmp/redis.sock").storage == "redis+unix:///tmp/redis.sock"


def test_a_redis_url_limits_cannot_read_is_refused_without_its_password() -> None:
    message = (
        "RateLimit(storage='redis://me:***@localhost'): Missing host or port in location localhost; "
        "write redis://HOST:PORT/DB (or rediss://)"
    )
    with pytest.raises(ValueError) as raised:
        RateLimit("1/minute", storage="redis://me:pw@localhost")
    assert str(raised.value) == message


def test_without_redis_installed_a_redis_storage_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "redis", None)
    with pytest.raises(ImportError) as raised:
        RateLimit("1/minute", storage="redis://me:pw@h:1/0")
    assert str(raised.value).startswith(
        "RateLimit(storage='redis://me:***@h:1/0') needs the redis package: pip install 'toolkit-mcp[redis]' ("
    )
