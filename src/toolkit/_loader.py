"""Finding the user's server: ``path/to/app.py:attr`` or ``package.module:attr``.

The CLI loads its APP here, and so does each worker process of ``toolkit run --workers N``
(``worker_app``), so both see the same thing the same way.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeGuard

from ._errors import AppNotFound
from ._server import Server
from ._transports.base import settle_allocator

if TYPE_CHECKING:
    from ._transports.http.app import McpApp


def load_target(spec: str) -> Server | McpApp:
    """Load ``path/to/app.py:attr`` or ``package.module:attr`` (``attr`` defaults to ``server``).

    ``attr`` may name a ``Server``, an app made by ``server.http_app(...)`` (to serve it with
    the HTTP options it was built with), or a function returning either.
    """
    target, _, attr = spec.partition(":")
    attr = attr or "server"
    module = _import(target)
    try:
        obj = getattr(module, attr)
    except AttributeError:
        found = [name for name, value in vars(module).items() if isinstance(value, Server)]
        hint = f"; it has {', '.join(found)}" if found else ""
        raise AppNotFound(f"{target} has no attribute {attr!r}{hint}. Use {target}:NAME") from None
    if not isinstance(obj, Server) and not is_http_app(obj) and callable(obj):
        obj = obj()
    if isinstance(obj, Server) or is_http_app(obj):
        loaded: Server | McpApp = obj
        return loaded
    raise AppNotFound(f"{spec} is a {type(obj).__name__}, not a toolkit Server (or server.http_app())")


def _import(target: str) -> Any:
    if target.endswith(".py") or os.sep in target or "/" in target:
        path = Path(target).resolve()
        if not path.is_file():
            raise AppNotFound(f"no such file: {target}")
        sys.path.insert(0, str(path.parent))
        module_name = path.stem
        module_spec = importlib.util.spec_from_file_location(module_name, path)
        if module_spec is None or module_spec.loader is None:
            raise AppNotFound(f"cannot import {target}")
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[module_name] = module
        module_spec.loader.exec_module(module)
        return module
    sys.path.insert(0, os.getcwd())
    try:
        return importlib.import_module(target)
    except ModuleNotFoundError as exc:
        raise AppNotFound(f"cannot import module {target!r}: {exc}") from None


def is_http_app(value: Any) -> TypeGuard[McpApp]:
    """Whether ``value`` is an app made by ``server.http_app()``."""
    # Duck-typed: checking isinstance(value, McpApp) would import the HTTP stack into every stdio start.
    return isinstance(getattr(getattr(value, "state", None), "server", None), Server)


def server_of(target: Server | McpApp) -> Server:
    """The ``Server`` itself, or the one behind an app made by ``server.http_app()``."""
    if isinstance(target, Server):
        return target
    server: Server = target.state.server
    return server


AUTH_ENVIRONMENT: Final = {
    "TOOLKIT_AUTH_JWKS_URI": "--auth-jwks-uri",
    "TOOLKIT_AUTH_ISSUER": "--auth-issuer",
    "TOOLKIT_AUTH_AUDIENCE": "--auth-audience",
    "TOOLKIT_AUTH_AUTHORIZATION_SERVERS": "--authorization-server",
    "TOOLKIT_AUTH_REQUIRED_SCOPES": "--required-scope",
    "TOOLKIT_RESOURCE_URL": "--resource-url",
}
"""The environment that configures JWT authorization, and the ``toolkit run`` flag setting each."""


def auth_from_environment(target: Server | McpApp) -> None:
    """Protect the server with a ``JWTVerifier`` when ``TOOLKIT_AUTH_JWKS_URI`` is set.

    ``TOOLKIT_AUTH_ISSUER`` is required; the audience defaults to ``TOOLKIT_RESOURCE_URL``
    and the authorization servers to the issuer. Multiple values are space-separated.
    """
    given = {name: os.environ[name] for name in AUTH_ENVIRONMENT if os.environ.get(name)}
    if not given:
        return
    flags = ", ".join(f"{AUTH_ENVIRONMENT[name]} (${name})" for name in given)
    if "TOOLKIT_AUTH_JWKS_URI" not in given:
        raise ValueError(f"{flags} configure JWT authorization, which needs --auth-jwks-uri too")
    server = server_of(target)
    if not isinstance(target, Server) or server.resource_server is not None:
        raise ValueError(
            f"{flags}: this app is configured in code (auth=, or server.http_app()); set authorization there"
        )
    from ._auth.jwt import JWTVerifier  # noqa: PLC0415 - the auth extra, only when asked for

    issuer = given.get("TOOLKIT_AUTH_ISSUER")
    resource = given.get("TOOLKIT_RESOURCE_URL")
    audience = given.get("TOOLKIT_AUTH_AUDIENCE", resource)
    if issuer is None or audience is None:
        raise ValueError(
            "JWT authorization needs --auth-issuer and --auth-audience (or --resource-url, the default audience)"
        )
    verifier = JWTVerifier(jwks_uri=given["TOOLKIT_AUTH_JWKS_URI"], issuer=issuer, audience=audience.split())
    server.set_auth(
        verifier,
        authorization_servers=given.get("TOOLKIT_AUTH_AUTHORIZATION_SERVERS", issuer).split(),
        resource_url=resource,
        required_scopes=given.get("TOOLKIT_AUTH_REQUIRED_SCOPES", "").split(),
    )


STORE_ENVIRONMENT = "TOOLKIT_STORE"
"""The store URL ``toolkit run --store`` sets (``redis://HOST:PORT/DB``)."""


def store_from_environment(target: Server | McpApp) -> None:
    """Give the server the store ``$TOOLKIT_STORE`` names, unless its code chose one."""
    url = os.environ.get(STORE_ENVIRONMENT)
    if not url:
        return
    server = server_of(target)
    if not isinstance(target, Server):
        raise ValueError(
            f"--store (${STORE_ENVIRONMENT}): this app was built with server.http_app(); pass store= to Server() there"
        )
    if server.store is not None:
        raise ValueError(f"--store (${STORE_ENVIRONMENT}): the server's code already sets store=; use one or the other")
    server.store = url


def worker_app() -> McpApp:
    """The app each uvicorn worker builds (``toolkit run --workers N``)."""
    settle_allocator()
    target = load_target(os.environ["TOOLKIT_APP"])
    auth_from_environment(target)
    store_from_environment(target)
    if not isinstance(target, Server):
        return target
    options = json.loads(os.environ.get("TOOLKIT_HTTP_OPTIONS", "{}"))
    return target.http_app(os.environ.get("TOOLKIT_HTTP_PATH", "/mcp"), **options)
