"""Finding the user's server: ``path/to/app.py:attr`` or ``package.module:attr``.

The CLI loads its APP here, and so does each worker process of ``toolkit run --workers N``
(``worker_app``), so both see the same thing the same way.
"""

from __future__ import annotations

import asyncio
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
from ._errors import AppNotFound, RunAtImport, StoreUnavailable
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
    """Load ``path/to/app.py:attr`` or ``package.module:attr``.

    ``attr`` may name a ``Server``, an app made by ``server.http_app(...)`` (to serve it with
    the HTTP options it was built with), another ASGI app mounting one (served as it is, its
    lifespan run), or a function returning any of them. Without ``attr``: the module's
    ``server``, or, when it has none, its one ``Server`` (``mcp = Server(...)``, as FastMCP
    users name it); several are refused, naming them.
    """
    target, _, attr = spec.partition(":")
    module = _import_refusing_run(target)
    try:
        obj = getattr(module, attr or "server")
    except AttributeError:
        if is_plain_directory(target):  # a directory taken for a namespace package
            raise AppNotFound(not_a_file(target, Path(target).resolve())) from None
        found = _servers_of(module)
        if not attr and len(set(map(id, found.values()))) == 1:
            return next(iter(found.values()))
        hint = f"; it has {', '.join(found)}" if found else ""
        if not attr and found:
            raise AppNotFound(f"{target} has no attribute 'server'{hint}. Say which: {target}:NAME") from None
        raise AppNotFound(f"{target} has no attribute {attr or 'server'!r}{hint}. Use {target}:NAME") from None
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


def _servers_of(module: Any) -> dict[str, Server]:
    """The module's top-level variables holding a ``Server``, by name."""
    return {name: value for name, value in vars(module).items() if isinstance(value, Server)}


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


JWT_ENVIRONMENT: Final = {
    "TOOLKIT_AUTH_JWKS_URI": "--auth-jwks-uri",
    "TOOLKIT_AUTH_ISSUER": "--auth-issuer",
    "TOOLKIT_AUTH_AUDIENCE": "--auth-audience",
    "TOOLKIT_AUTH_AUTHORIZATION_SERVERS": "--authorization-server",
}
"""The environment that configures JWT authorization (tokens of another authorization server), and its flags."""

RESOURCE_ENVIRONMENT: Final = {
    "TOOLKIT_AUTH_REQUIRED_SCOPES": "--required-scope",
    "TOOLKIT_RESOURCE_URL": "--resource-url",
}
"""What either kind of authorization takes: the resource's URL, the scopes every request needs."""

OAUTH_PROXY_ENVIRONMENT: Final = {
    "TOOLKIT_OAUTH_PROXY_PROVIDER": "--oauth-proxy-provider",
    "TOOLKIT_OAUTH_PROXY_ISSUER": "--oauth-proxy-issuer",
    "TOOLKIT_OAUTH_PROXY_TENANT": "--oauth-proxy-tenant",
    "TOOLKIT_OAUTH_PROXY_ALLOWED_TENANTS": "--oauth-proxy-allowed-tenant",
    "TOOLKIT_OAUTH_PROXY_DOMAIN": "--oauth-proxy-domain",
    "TOOLKIT_OAUTH_PROXY_AUDIENCE": "--oauth-proxy-audience",
    "TOOLKIT_OAUTH_PROXY_KEYCLOAK_URL": "--oauth-proxy-keycloak-url",
    "TOOLKIT_OAUTH_PROXY_REALM": "--oauth-proxy-realm",
    "TOOLKIT_OAUTH_PROXY_CLIENT_ID": "--oauth-proxy-client-id",
    "TOOLKIT_OAUTH_PROXY_CLIENT_SECRET_FILE": "--oauth-proxy-client-secret-file",
    "TOOLKIT_OAUTH_PROXY_UPSTREAM_SCOPES": "--oauth-proxy-upstream-scope",
    "TOOLKIT_OAUTH_PROXY_BASE_URL": "--oauth-proxy-base-url",
    "TOOLKIT_OAUTH_PROXY_SCOPES": "--oauth-proxy-scope",
    "TOOLKIT_OAUTH_PROXY_SIGNING_KEY_FILE": "--oauth-proxy-signing-key-file",
    "TOOLKIT_OAUTH_PROXY_PREVIOUS_SIGNING_KEYS_FILE": "--oauth-proxy-previous-signing-keys-file",
    "TOOLKIT_OAUTH_PROXY_ENCRYPTION_KEY_FILE": "--oauth-proxy-encryption-key-file",
}
"""The environment that makes toolkit the authorization server (``OAuthProxy``), and the flag setting each.

Any of them turns it on. The secrets are not among them: they come from ``OAUTH_PROXY_SECRETS``'
variables or from the files these name, never from a command line, which anyone on the machine
can read in the process list.
"""

OAUTH_PROXY_SECRETS: Final = {
    "TOOLKIT_OAUTH_PROXY_CLIENT_SECRET": "TOOLKIT_OAUTH_PROXY_CLIENT_SECRET_FILE",
    "TOOLKIT_OAUTH_PROXY_SIGNING_KEY": "TOOLKIT_OAUTH_PROXY_SIGNING_KEY_FILE",
    "TOOLKIT_OAUTH_PROXY_PREVIOUS_SIGNING_KEYS": "TOOLKIT_OAUTH_PROXY_PREVIOUS_SIGNING_KEYS_FILE",
    "TOOLKIT_OAUTH_PROXY_ENCRYPTION_KEY": "TOOLKIT_OAUTH_PROXY_ENCRYPTION_KEY_FILE",
}
"""Each secret's variable, and the variable naming a file that holds it instead (one or the other)."""

OAUTH_PROXY_PROVIDERS: Final[dict[str, tuple[str, tuple[str, ...], dict[str, str]]]] = {
    "oidc": ("OIDC", ("TOOLKIT_OAUTH_PROXY_ISSUER",), {}),
    "google": ("Google", (), {}),
    "github": ("GitHub", (), {}),
    "entra": ("Entra", (), {"TOOLKIT_OAUTH_PROXY_TENANT": "tenant", "TOOLKIT_OAUTH_PROXY_ALLOWED_TENANTS": "tenants"}),
    "auth0": ("Auth0", ("TOOLKIT_OAUTH_PROXY_DOMAIN",), {"TOOLKIT_OAUTH_PROXY_AUDIENCE": "audience"}),
    "keycloak": ("Keycloak", ("TOOLKIT_OAUTH_PROXY_KEYCLOAK_URL", "TOOLKIT_OAUTH_PROXY_REALM"), {}),
}
"""``--oauth-proxy-provider``: the class in ``toolkit.auth``, the variables giving its leading arguments (before
``client_id, client_secret``), and those giving its optional keyword arguments."""

LISTS: Final = frozenset({"TOOLKIT_OAUTH_PROXY_ALLOWED_TENANTS"})
"""The keyword arguments above that take several values (space-separated in the variable)."""

AUTH_ENVIRONMENT: Final = {**JWT_ENVIRONMENT, **RESOURCE_ENVIRONMENT, **OAUTH_PROXY_ENVIRONMENT}
"""Every variable configuring authorization over HTTP, and the ``toolkit run`` flag setting each."""


def auth_from_environment(target: Target, *, path: str | None = None) -> None:
    """Protect the server as the ``TOOLKIT_AUTH_*`` or the ``TOOLKIT_OAUTH_PROXY_*`` variables say.

    ``TOOLKIT_AUTH_JWKS_URI``: a ``JWTVerifier``; ``TOOLKIT_AUTH_ISSUER`` is required, the audience
    defaults to ``TOOLKIT_RESOURCE_URL`` and the authorization servers to the issuer. Any
    ``TOOLKIT_OAUTH_PROXY_*``: toolkit is the authorization server (``OAuthProxy``), its resource
    ``TOOLKIT_RESOURCE_URL`` or the base URL + ``path`` (the endpoint's; ``$TOOLKIT_HTTP_PATH`` in a
    worker). The two are refused together. Multiple values are space-separated.
    """
    jwt = {name: os.environ[name] for name in JWT_ENVIRONMENT if os.environ.get(name)}
    proxy = {name: os.environ[name] for name in OAUTH_PROXY_ENVIRONMENT if os.environ.get(name)}
    shared = {name: os.environ[name] for name in RESOURCE_ENVIRONMENT if os.environ.get(name)}
    if jwt and proxy:
        first, second = next(iter(jwt)), next(iter(proxy))
        raise ValueError(
            f"{AUTH_ENVIRONMENT[first]} (${first}) and {AUTH_ENVIRONMENT[second]} (${second}) contradict each "
            f"other: {AUTH_ENVIRONMENT[first]} checks the tokens of another authorization server, "
            f"{AUTH_ENVIRONMENT[second]} makes toolkit the authorization server (OAuthProxy); give one kind"
        )
    given = {**jwt, **proxy, **shared}
    if not given:
        return
    flags = ", ".join(f"{AUTH_ENVIRONMENT[name]} (${name})" for name in given)
    if not proxy and "TOOLKIT_AUTH_JWKS_URI" not in given:
        raise ValueError(
            f"{flags} configure JWT authorization, which needs --auth-jwks-uri too (or --oauth-proxy-* flags: "
            "toolkit as the authorization server)"
        )
    if not isinstance(target, Server) or target.resource_server is not None:
        raise ValueError(
            f"{flags}: this app is configured in code (auth=, or server.http_app()); set authorization there"
        )
    server = target
    resource = given.get("TOOLKIT_RESOURCE_URL")
    required = given.get("TOOLKIT_AUTH_REQUIRED_SCOPES", "").split()
    if proxy:
        endpoint = path or os.environ.get("TOOLKIT_HTTP_PATH") or "/mcp"
        authorization_server = oauth_proxy_from_environment(proxy, resource, endpoint)
        server.set_auth(authorization_server, authorization_servers=(), required_scopes=required)
        return
    from ._auth.jwt import JWTVerifier  # noqa: PLC0415 - the auth extra, only when asked for

    issuer = given.get("TOOLKIT_AUTH_ISSUER")
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
        required_scopes=required,
    )


def oauth_proxy_from_environment(given: dict[str, str], resource: str | None, path: str) -> Any:
    """The ``OAuthProxy`` the ``TOOLKIT_OAUTH_PROXY_*`` variables (``given``) and the secrets' describe."""
    import toolkit.auth  # noqa: PLC0415 - the authorization server, only when asked for

    def flag(name: str) -> str:
        return f"{AUTH_ENVIRONMENT[name]} (${name})"

    provider = given.get("TOOLKIT_OAUTH_PROXY_PROVIDER", "oidc")
    if provider not in OAUTH_PROXY_PROVIDERS:
        known = ", ".join(OAUTH_PROXY_PROVIDERS)
        raise ValueError(
            f"{flag('TOOLKIT_OAUTH_PROXY_PROVIDER')}: {provider!r} is not a provider toolkit knows ({known})"
        )
    class_name, leading, optional = OAUTH_PROXY_PROVIDERS[provider]
    for name in given:
        users = [each for each, (_, first, rest) in OAUTH_PROXY_PROVIDERS.items() if name in first or name in rest]
        if users and provider not in users:
            raise ValueError(f"{flag(name)} is for --oauth-proxy-provider {' or '.join(users)}, not {provider}")
    needed = [*leading, "TOOLKIT_OAUTH_PROXY_CLIENT_ID", "TOOLKIT_OAUTH_PROXY_BASE_URL"]
    missing = [flag(name) for name in needed if name not in given]
    client_secret = secret_from_environment("TOOLKIT_OAUTH_PROXY_CLIENT_SECRET")
    if client_secret is None:
        missing.append("the client secret ($TOOLKIT_OAUTH_PROXY_CLIENT_SECRET or --oauth-proxy-client-secret-file)")
    if missing:
        raise ValueError(f"toolkit as the authorization server ({provider}) needs {', '.join(missing)}")
    upstream_class = getattr(toolkit.auth, class_name)
    accepted = inspect.signature(upstream_class).parameters
    options: dict[str, Any] = {
        keyword: given[name].split() if name in LISTS else given[name]
        for name, keyword in optional.items()
        if name in given
    }
    if "TOOLKIT_OAUTH_PROXY_UPSTREAM_SCOPES" in given:
        options["scopes"] = given["TOOLKIT_OAUTH_PROXY_UPSTREAM_SCOPES"].split()
    if "allow_http_loopback" in accepted:
        options["allow_http_loopback"] = True  # a provider on this machine, as the operator typed its URL
    base_url = given["TOOLKIT_OAUTH_PROXY_BASE_URL"]
    previous = secret_from_environment("TOOLKIT_OAUTH_PROXY_PREVIOUS_SIGNING_KEYS")
    encryption = secret_from_environment("TOOLKIT_OAUTH_PROXY_ENCRYPTION_KEY")
    encryption_keys: list[str | bytes] = [*encryption.split()] if encryption else []
    signing_key = secret_from_environment("TOOLKIT_OAUTH_PROXY_SIGNING_KEY")
    scopes = given.get("TOOLKIT_OAUTH_PROXY_SCOPES")
    try:
        upstream = upstream_class(
            *(given[name] for name in leading), given["TOOLKIT_OAUTH_PROXY_CLIENT_ID"], client_secret, **options
        )
        return toolkit.auth.OAuthProxy(
            upstream=upstream,
            base_url=base_url,
            resource_url=resource or base_url.rstrip("/") + path,
            scopes=scopes.split() if scopes is not None else None,
            signing_key=signing_key,
            previous_signing_keys=pem_blocks(previous) if previous else (),
            encryption_key=encryption_keys or None,
        )
    except ValueError as exc:  # the provider's or the proxy's check of one value: say where it came from
        raise ValueError(f"toolkit as the authorization server (--oauth-proxy-*): {exc}") from None


def secret_from_environment(variable: str) -> str | None:
    """A secret from its variable, or from the file its ``_FILE`` variable names (a trailing newline dropped)."""
    file_variable = OAUTH_PROXY_SECRETS[variable]
    value, path = os.environ.get(variable), os.environ.get(file_variable)
    if value and path:
        flag = OAUTH_PROXY_ENVIRONMENT[file_variable]
        raise ValueError(f"${variable} and {flag} (${file_variable}) both give it: give one")
    if not path:
        return value or None
    try:
        text = Path(path).read_text()
    except (OSError, UnicodeDecodeError) as exc:
        flag = OAUTH_PROXY_ENVIRONMENT[file_variable]
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
        raise ValueError(f"{flag} (${file_variable}) {path}: cannot be read ({reason})") from None
    text = text.rstrip("\r\n")
    if not text.strip():
        raise ValueError(f"{OAUTH_PROXY_ENVIRONMENT[file_variable]} (${file_variable}) {path}: the file is empty")
    return text


def pem_blocks(text: str) -> list[str]:
    """The PEM blocks of ``text``, each whole: several keys written one after another."""
    marker = "-----BEGIN "
    return [marker + block for block in text.split(marker)[1:]]


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


def unreachable_store(server: Server) -> str | None:
    """Why the server's shared store cannot be reached now (``None``: it can, or there is none to check)."""
    store = server.store
    if store is None or not store.shared:
        return None
    url = getattr(store, "url", None)
    if not isinstance(url, str):
        return None  # a store of the user's own: it is started (and checked) with the server
    from ._store.urls import open_store  # noqa: PLC0415 - only with a shared store

    probe = open_store(url)

    async def reach() -> None:
        try:
            await probe.start()
        finally:
            await probe.close()

    try:
        asyncio.run(reach())
    except StoreUnavailable as exc:
        return exc.message.removeprefix("Service Unavailable: ").removesuffix("; retry shortly")
    return None


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
