"""An ASGI wrapper that records what reaches a server, so an HTTP client's test sees what it put on the wire."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Seen:
    """One HTTP request as it reached the server."""

    method: str
    headers: dict[str, str]
    client: tuple[str, int] | None = None
    """The client's address and port: requests that share a port came on one connection."""


class Recorder:
    """An ASGI app that records the method and headers of every HTTP request, then hands it to ``app``."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.seen: list[Seen] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in scope["headers"]}
            client = scope.get("client")
            self.seen.append(Seen(scope["method"], headers, tuple(client) if client else None))
        await self.app(scope, receive, send)

    def methods(self) -> list[str]:
        return [seen.method for seen in self.seen]

    def connections(self) -> int:
        """How many connections the requests came on."""
        return len({seen.client for seen in self.seen})
