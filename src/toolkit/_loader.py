"""Finding the user's server: ``path/to/app.py:attr`` or ``package.module:attr``.

The CLI loads its APP here, and so does each worker process of ``toolkit run --workers N``
(``worker_app``), so both see the same thing the same way.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import json
import os
import sys
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeAlias, TypeGuard

from ._environment import settings_from_environment
from ._errors import AppNotFound, RunAtImport
from ._server import Server
from ._transports.base import settle_allocator

if TYPE_CHECKING:
    from starlette.types import ASGIApp

    from ._transports.http.app import McpApp


class HostApp:
    """Another ASGI app (Starlette, FastAPI, ...) named as APP, served as it is.

    ``mounted`` is the ``server.http_app()`` it mounts, when one is found among its routes:
    what ``toolkit run`` over stdio, ``toolkit tools`` and ``toolkit call`` use, and whose
    requests a graceful shutdown ends.
    """

    __slots__ = ("app", "mounted")

    def __init__(self, app: ASGIApp, mounted: McpApp | None) -> None:
        self.app = app
        self.mounted = mounted


Target: TypeAlias = "Server | McpApp | HostApp"


def load_target(spec: str) -> Target:
    """Load ``path/to/app.py:attr`` or ``package.module:attr`` (``attr`` defaults to ``server``).

    ``attr`` may name a ``Server``, an app made by ``server.http_app(...)`` (to serve it with
    the HTTP options it was built with), another ASGI app mounting one (served as it is, its
    lifespan run), or a function returning any of them.
    """
    target, _, attr = spec.partition(":")
    attr = attr or "server"
    module = _import_refusing_run(target)
    try:
        obj = getattr(module, attr)
    except AttributeError:
        if is_plain_directory(target):  # a directory taken for a namespace package
            raise AppNotFound(not_a_file(target, Path(target).resolve())) from None
        found = [name for name, value in vars(module).items() if isinstance(value, Server)]
        hint = f"; it has {', '.join(found)}" if found else ""
        raise AppNotFound(f"{target} has no attribute {attr!r}{hint}. Use {target}:NAME") from None
    if not isinstance(obj, Server) and not is_http_app(obj) and not is_asgi_app(obj) and callable(obj):
        obj = obj()  # a factory
    if isinstance(obj, Server) or is_http_app(obj):
        loaded: Target = obj
        return loaded
    if is_asgi_app(obj):
        return HostApp(obj, mounted_app(obj))
    raise AppNotFound(
        f"{spec} is a {type(obj).__name__}, not a toolkit Server, server.http_app() or an ASGI app mounting one"
    )


def is_asgi_app(value: Any) -> bool:
    """Whether ``value`` is an ASGI application: ``async (scope, receive, send)``, a function or an object.

    An ASGI app is callable, and calling it as a factory fails (``Starlette.__call__() missing 3
    required positional arguments``): it is told from a factory by its signature.
    """
    if inspect.isclass(value) or not callable(value):
        return False
    call = value if inspect.isfunction(value) or inspect.ismethod(value) else type(value).__call__
    if not inspect.iscoroutinefunction(call):
        return False
    try:
        parameters = inspect.signature(value).parameters
    except (TypeError, ValueError):
        return False
    return len(parameters) == 3


def mounted_app(app: Any, depth: int = 0) -> McpApp | None:
    """The ``server.http_app()`` mounted in ``app`` (``Mount(path, app=...)``, FastAPI's ``app.mount``), if any."""
    if is_http_app(app):
        return app
    if depth > 8:
        return None
    for route in getattr(app, "routes", None) or ():
        found = mounted_app(getattr(route, "app", None), depth + 1)
        if found is not None:
            return found
    return None


def _import_refusing_run(target: str) -> Any:
    """Import APP's module; a ``server.run()`` its import reaches is refused, saying where and what to write.

    Called at module level (not under ``if __name__ == "__main__":``), ``server.run()`` would serve
    over stdio inside the import: ``toolkit tools`` hung reading stdin, ``toolkit dev`` never served.
    """
    Server.importing_app = True
    try:
        return _import(target)
    except RunAtImport as exc:
        frames = [frame for frame in traceback.extract_tb(exc.__traceback__) if not _is_toolkit(frame.filename)]
        where = f" at {os.path.basename(frames[-1].filename)}:{frames[-1].lineno}" if frames else ""
        raise AppNotFound(
            f"{target} calls server.run(){where} while it is imported, so the server would start before the "
            'toolkit command could use it. Put the call under `if __name__ == "__main__":` (then '
            "`python FILE` still runs it), or remove it: the toolkit command runs the server itself"
        ) from None
    finally:
        Server.importing_app = False


def _is_toolkit(filename: str) -> bool:
    package = os.path.dirname(os.path.abspath(__file__))
    return filename.startswith("<frozen ") or os.path.abspath(filename).startswith(package + os.sep)


def _import(target: str) -> Any:
    if target.endswith(".py") or os.sep in target or "/" in target:
        path = Path(target).resolve()
        if path.is_dir():
            raise AppNotFound(not_a_file(target, path))
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


def is_plain_directory(target: str) -> bool:
    """A directory that is not a package (no ``__init__.py``): Python imports it as an empty namespace."""
    return Path(target).is_dir() and not (Path(target) / "__init__.py").exists()


def not_a_file(target: str, path: Path) -> str:
    """What to say when APP is a directory: the Python files in it that make a ``Server``, to pick from."""
    found = sorted(
        child.name
        for child in path.glob("*.py")
        if "Server(" in child.read_text(errors="replace") or "FastMCP(" in child.read_text(errors="replace")
    )
    shown = os.path.join(target, found[0] if found else "server.py")
    listed = f" (files there that make a Server: {', '.join(found)})" if found else ""
    return f"{target} is a directory; give the Python file that makes the server, e.g. {shown}{listed}"


def is_http_app(value: Any) -> TypeGuard[McpApp]:
    """Whether ``value`` is an app made by ``server.http_app()``."""
    # Duck-typed: checking isinstance(value, McpApp) would import the HTTP stack into every stdio start.
    return isinstance(getattr(getattr(value, "state", None), "server", None), Server)


def server_of(target: Target) -> Server:
    """The ``Server`` itself, or the one behind an app made by ``server.http_app()`` (mounted or not)."""
    if isinstance(target, Server):
        return target
    if isinstance(target, HostApp):
        if target.mounted is None:
            raise AppNotFound(
                f"the ASGI app {type(target.app).__name__} mounts no toolkit server (server.http_app()) that "
                "toolkit could find among its routes; name the Server instead (app.py:server)"
            )
        target = target.mounted
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


def auth_from_environment(target: Target) -> None:
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
    if not isinstance(target, Server) or target.resource_server is not None:
        raise ValueError(
            f"{flags}: this app is configured in code (auth=, or server.http_app()); set authorization there"
        )
    server = target
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


def store_from_environment(target: Target) -> None:
    """Give the server the store ``$TOOLKIT_STORE`` names, unless its code chose one."""
    url = os.environ.get(STORE_ENVIRONMENT)
    if not url:
        return
    if not isinstance(target, Server):
        raise ValueError(
            f"--store (${STORE_ENVIRONMENT}): this app was built with server.http_app(); pass store= to Server() there"
        )
    if target.store is not None:
        raise ValueError(f"--store (${STORE_ENVIRONMENT}): the server's code already sets store=; use one or the other")
    target.store = url


def deployment_settings(target: Target) -> None:
    """Apply the ``TOOLKIT_*`` settings in the environment to the server ``target`` is or mounts (``_environment``)."""
    if isinstance(target, HostApp) and target.mounted is None:
        return
    settings_from_environment(server_of(target))


def worker_app() -> Any:
    """The app each uvicorn worker builds (``toolkit run --workers N``)."""
    settle_allocator()
    target = load_target(os.environ["TOOLKIT_APP"])
    auth_from_environment(target)
    store_from_environment(target)
    deployment_settings(target)
    if isinstance(target, HostApp):
        return target.app
    if not isinstance(target, Server):
        return target
    options = json.loads(os.environ.get("TOOLKIT_HTTP_OPTIONS", "{}"))
    return target.http_app(os.environ.get("TOOLKIT_HTTP_PATH", "/mcp"), **options)
