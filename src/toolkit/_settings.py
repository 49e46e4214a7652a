"""``Settings``: the server-wide options the engine reads while it serves.

``Server`` takes them as constructor arguments and exposes each as an attribute of its own
(``server.page_size = 4`` takes effect on the next request); the engine and every ``Context``
read this one object, so nothing below the facade ever holds the ``Server``. Transports are
handed their limits (``max_concurrent_requests``) when they are built, by ``run``/``http_app``.
"""

from __future__ import annotations

from typing import Any, Generic, Literal, Protocol, TypeVar, overload

from ._mrtr import StateSealer

T = TypeVar("T")


class Settings:
    # A plain class: a dataclass compiles its generated methods when this module is imported,
    # about 0.6 ms of every server's start-up for nothing this class needs.
    __slots__ = (
        "client_request_timeout",
        "icons",
        "instructions",
        "list_ttl_ms",
        "mask_errors",
        "max_argument_depth",
        "max_concurrent_requests",
        "max_running_tasks",
        "max_task_ttl_ms",
        "name",
        "page_size",
        "read_cache_scope",
        "read_ttl_ms",
        "state_sealer",
        "task_poll_interval_ms",
        "task_ttl_ms",
        "title",
        "tool_timeout",
        "tracing",
        "version",
        "website_url",
    )

    def __init__(
        self,
        *,
        name: str,
        version: str,
        instructions: str | None,
        title: str | None,
        website_url: str | None,
        icons: list[dict[str, Any]] | None,
        mask_errors: bool,
        page_size: int,
        list_ttl_ms: int,
        read_ttl_ms: int,
        read_cache_scope: Literal["public", "private"],
        state_sealer: StateSealer,
        client_request_timeout: float,
        tool_timeout: float | None,
        max_concurrent_requests: int,
        max_argument_depth: int,
        task_ttl_ms: int,
        max_task_ttl_ms: int,
        task_poll_interval_ms: int,
        max_running_tasks: int,
        tracing: bool = True,
    ) -> None:
        self.name = name
        self.version = version
        self.instructions = instructions
        self.title = title
        self.website_url = website_url
        self.icons = icons
        self.mask_errors = mask_errors
        self.page_size = page_size
        self.list_ttl_ms = list_ttl_ms
        self.read_ttl_ms = read_ttl_ms
        self.read_cache_scope = read_cache_scope
        self.state_sealer = state_sealer
        self.client_request_timeout = client_request_timeout
        self.tool_timeout = tool_timeout
        self.max_concurrent_requests = max_concurrent_requests
        self.max_argument_depth = max_argument_depth
        self.task_ttl_ms = task_ttl_ms
        self.max_task_ttl_ms = max_task_ttl_ms
        self.task_poll_interval_ms = task_poll_interval_ms
        self.max_running_tasks = max_running_tasks
        self.tracing = tracing
        """Trace requests once the application configures an OpenTelemetry SDK (``False``: never)."""


class HasSettings(Protocol):
    settings: Settings


class Setting(Generic[T]):
    """An attribute of its owner (the ``Server``) kept in its ``Settings``, where the engine reads it per request."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, holder: None, owner: type) -> Setting[T]: ...

    @overload
    def __get__(self, holder: HasSettings, owner: type | None = None) -> T: ...

    def __get__(self, holder: HasSettings | None, owner: type | None = None) -> T | Setting[T]:
        if holder is None:  # looked up on the class (help(), documentation tools)
            return self
        value: T = getattr(holder.settings, self.name)
        return value

    def __set__(self, holder: HasSettings, value: T) -> None:
        setattr(holder.settings, self.name, value)
