"""Which store a URL names (``toolkit run --store``, ``$TOOLKIT_STORE``, ``Server(store="...")``)."""

from __future__ import annotations

from .base import MemoryStore, Store


def open_store(url: str) -> Store:
    """The store a URL names: ``memory``, or ``redis://HOST:PORT/DB`` (``rediss://``, ``unix://``)."""
    if url in ("", "memory", "memory://"):
        return MemoryStore()
    if url.startswith(("redis://", "rediss://", "unix://")):
        try:
            from .redis import RedisStore  # noqa: PLC0415 (redis is an optional dependency)
        except ImportError as exc:
            raise ImportError(
                f"store {url.rsplit('@', maxsplit=1)[-1]!r} needs the redis package: "
                f"pip install 'toolkit-mcp[redis]' ({exc})"
            ) from exc
        return RedisStore(url)
    raise ValueError(f"store: {url!r} is not a store URL; use redis://HOST:PORT/DB, or memory")
