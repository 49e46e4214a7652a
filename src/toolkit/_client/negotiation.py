"""How a client and a server agree on a protocol version: the ``"auto"`` probe, the legacy handshake, a retry.

- ``probe``: ``server/discover`` with the newest version; a result or an error only a modern
  server gives means a modern server, anything else (or nothing within ``probe_timeout``) a
  legacy one, which ``initialize`` opens (2026-07-28 basic/versioning, "Backward
  Compatibility"; transports/stdio, same section).
- ``initialize``: the legacy handshake, ``notifications/initialized``, the log level.
- ``agreed_again``: a modern server that refuses a request's version but lists one this client
  speaks gets the request again, once (basic/versioning, ``UnsupportedProtocolVersionError``).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Final

from .._errors import HEADER_MISMATCH, MISSING_CAPABILITY, UNSUPPORTED_VERSION, ClientError, ToolkitError
from .._headers import for_request
from .._versions import KNOWN_VERSIONS, LATEST_LEGACY_VERSION, LEGACY_VERSIONS, is_known, is_modern
from .transport import FAILURE_KEY

if TYPE_CHECKING:
    from .session import ClientSession

logger = logging.getLogger("toolkit.client")

AUTO: Final = "auto"
"""``protocol_version="auto"``: the newest version the server speaks, found by probing."""

MODERN_ERRORS: Final = frozenset({UNSUPPORTED_VERSION, HEADER_MISMATCH, MISSING_CAPABILITY})
"""Error codes only a modern server answers with: a probe refused with one found a modern server."""


class VersionNotAgreed(ToolkitError):
    """The server and this client speak no protocol version in common (the message says what each offered)."""


async def probe(session: ClientSession, version: str, *, retry: bool) -> None:
    """``server/discover`` with ``version``: a result or a modern error means a modern server; else legacy.

    Any other error, or none in time, is a legacy server (the fallback is never keyed to one code:
    transports/stdio, "Backward Compatibility"). ``UnsupportedProtocolVersionError`` lists what the
    server speaks: the newest version in common is probed once more (or opens with ``initialize``).
    """
    params = {"_meta": session.modern_meta(version)}
    try:
        response = await session.exchange(
            "server/discover", params, session.probe_timeout, for_request("server/discover", params, version)
        )
    except TimeoutError:
        logger.debug("no answer to server/discover within %g s: a legacy server", session.probe_timeout)
        await initialize(session, None)
        return
    raise_failure(response)  # the transport failed (a sign-in refused): no era to learn from it
    if "result" in response:
        session.discover_result = response["result"]
        session.settle(version)
        return
    error = response.get("error") or {}
    code = error.get("code")
    if code not in MODERN_ERRORS:
        await initialize(session, None)
        return
    if code != UNSUPPORTED_VERSION:
        raise ClientError(error)  # a modern server refusing the probe itself
    data = error.get("data")
    supported = data.get("supported") if isinstance(data, dict) else None
    choice = newest_in_common(supported)
    if choice is None:
        raise VersionNotAgreed(f"the server speaks {supported!r}; this client speaks {list(KNOWN_VERSIONS)}")
    if not is_modern(choice):
        await initialize(session, choice)  # a dual-era server whose modern versions are not ours
    elif retry:  # once, even with the version just sent: a server may refuse it once and list it
        await probe(session, choice, retry=False)
    else:
        raise ClientError(error)


async def initialize(session: ClientSession, version: str | None) -> None:
    """The legacy handshake: ``initialize``, ``notifications/initialized``, ``logging/setLevel`` if it logs."""
    requested = version or LATEST_LEGACY_VERSION
    params = {"protocolVersion": requested, "capabilities": session.capabilities, "clientInfo": session.client_info}
    response = await session.exchange("initialize", params, session.timeout, None)
    if "error" in response:
        raise_failure(response)
        raise ClientError(response["error"])
    result: dict[str, Any] = response["result"]
    answered = result.get("protocolVersion")
    # A pinned version is the only one acceptable; after a probe, any legacy version we speak.
    acceptable = (requested,) if version == session.requested_version else LEGACY_VERSIONS
    if not isinstance(answered, str) or answered not in acceptable:
        raise VersionNotAgreed(f"the server answered initialize with {answered!r}; this client speaks {acceptable}")
    session.initialize_result = result
    session.settle(answered)
    await session.notify("notifications/initialized")
    declared = result.get("capabilities")
    if session.log_level is not None and isinstance(declared, dict) and isinstance(declared.get("logging"), dict):
        # Only a server that declares logging has logging/setLevel (mcp 1.x FastMCP answers -32601 otherwise).
        await session.result("logging/setLevel", {"level": session.log_level})


def agreed_again(session: ClientSession, response: dict[str, Any]) -> bool:
    """A modern server refused the version (``UnsupportedProtocolVersionError``) but names one we speak.

    2026-07-28 basic/versioning: the client retries with a version from ``supported``. It
    settles on it (a pinned session only on its own version, which a server may refuse once
    and list) and says whether the request should go again, once.
    """
    error = response.get("error")
    if not session.modern or not isinstance(error, dict) or error.get("code") != UNSUPPORTED_VERSION:
        return False
    data = error.get("data")
    choice = newest_in_common(data.get("supported") if isinstance(data, dict) else None)
    if choice is None or not is_modern(choice):
        return False
    if session.requested_version not in (AUTO, choice):  # pinned: only its own version
        return False
    session.settle(choice)
    return True


def raise_failure(response: dict[str, Any]) -> None:
    """Raise what failed a request on the transport's side, as it was raised there (``FAILURE_KEY``)."""
    failure = response.get(FAILURE_KEY)
    if isinstance(failure, BaseException):
        raise failure


def newest_in_common(supported: Any) -> str | None:
    """The newest version of ``supported`` (a server's list) this client speaks too."""
    if not isinstance(supported, list):
        return None
    known = [version for version in supported if isinstance(version, str) and is_known(version)]
    return max(known, key=KNOWN_VERSIONS.index, default=None)
