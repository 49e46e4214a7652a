"""Plain HTTP routes a server serves beside MCP (``Server.custom_route``): a health check, a webhook.

Held here as plain data, checked when added; the HTTP transport makes them Starlette routes
(``create_app``), so a server that never serves HTTP imports nothing for them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ._errors import RegistrationError


class CustomRoute:
    """One plain HTTP endpoint: its path, the Starlette endpoint serving it, its methods and name."""

    __slots__ = ("endpoint", "methods", "name", "path")

    def __init__(self, path: str, endpoint: Callable[..., Any], methods: tuple[str, ...], name: str | None) -> None:
        self.path = path
        self.endpoint = endpoint
        self.methods = methods
        self.name = name

    def as_tuple(self) -> tuple[str, Callable[..., Any], list[str], str | None]:
        """What ``create_app`` takes: ``(path, endpoint, methods, name)``."""
        return self.path, self.endpoint, list(self.methods), self.name


class CustomRoutes:
    """A server's plain HTTP routes, in the order they were added."""

    def __init__(self) -> None:
        self.routes: list[CustomRoute] = []

    def check(self, path: Any, methods: Sequence[str]) -> None:
        """Refuse, before the function is even decorated, a path or methods that cannot be served."""
        if not isinstance(path, str) or not path.startswith("/"):
            raise RegistrationError(f"custom_route({path!r}): the path is an absolute URL path, like '/health'")
        if isinstance(methods, str):
            raise RegistrationError(f"custom_route({path!r}): methods= takes a list, e.g. methods=[{methods!r}]")

    def add(self, path: str, endpoint: Callable[..., Any], methods: Sequence[str], name: str | None) -> None:
        if not callable(endpoint):
            raise RegistrationError(f"custom_route({path!r}) decorates a function, not {endpoint!r}")
        wanted = {method.upper() for method in methods}
        for route in self.routes:
            if route.path == path and wanted & set(route.methods):
                raise RegistrationError(
                    f"custom_route({path!r}): {getattr(route.endpoint, '__name__', route.endpoint)}() already "
                    f"serves {sorted(wanted & set(route.methods))} there"
                )
        self.routes.append(CustomRoute(path, endpoint, tuple(method.upper() for method in methods), name))

    def served_beside(
        self, mcp_path: str, docs_path: str | None
    ) -> list[tuple[str, Callable[..., Any], list[str], str | None]]:
        """The routes for an app serving MCP at ``mcp_path`` (and the tools page at ``docs_path``); a clash refused."""
        for route in self.routes:
            if route.path in (mcp_path, docs_path):
                served = "MCP" if route.path == mcp_path else "the tools page"
                raise RegistrationError(
                    f"custom_route({route.path!r}) is where this app serves {served}; "
                    "choose another path for one of them"
                )
        return [route.as_tuple() for route in self.routes]
