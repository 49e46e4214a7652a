"""URL-mode elicitation per version (2025-11-25 and 2026-07-28 client/elicitation).

- ``ctx.elicit_url``: 2025-11-25 sends ``elicitation/create`` with ``mode: "url"`` and an
  ``elicitationId``; 2026-07-28 puts it in ``inputRequests``, without an id (its schema has none);
  older versions have no URL mode: refused, nothing sent.
- ``ctx.elicitation_complete``: 2025-11-25 sends ``notifications/elicitation/complete``; 2026-07-28
  has no such notification (the client learns the outcome when it retries): nothing is sent.
- ``URLElicitationRequired``: 2025-11-25 answers error -32042 with ``data.elicitations``;
  2026-07-28 reserves -32042 unused, so the call ends in an ``input_required`` round asking for
  the same URLs (``url_input_requests``); its retry runs the tool again.

The client capability: ``elicitation.url`` (an empty ``elicitation`` object means form only).
"""

from __future__ import annotations

from typing import Any, Final

from .._errors import MISSING_CAPABILITY, McpError, ToolError, URLElicitationRequired
from .._versions import at_least, is_modern
from .envelope import error_http_status

URL_MODE_SINCE: Final = "2025-11-25"
"""URL-mode elicitation, its completion notification and error -32042 appear in this version."""


def carries_url_mode(version: str) -> bool:
    return at_least(version, URL_MODE_SINCE)


def accepts_url_mode(client_capabilities: dict[str, Any]) -> bool:
    """Whether the client declared URL-mode elicitation (``elicitation: {url: {}}``)."""
    elicitation = client_capabilities.get("elicitation")
    return isinstance(elicitation, dict) and isinstance(elicitation.get("url"), dict)


def url_params(url: str, message: str, elicitation_id: str, version: str) -> dict[str, Any]:
    """``ElicitRequestURLParams`` as ``version`` has them: 2026-07-28 has no ``elicitationId``."""
    if is_modern(version):
        return {"mode": "url", "message": message, "url": url}
    return {"mode": "url", "message": message, "url": url, "elicitationId": elicitation_id}


def completion_notification(elicitation_id: str, version: str) -> dict[str, Any] | None:
    """``notifications/elicitation/complete`` for ``version``, or ``None`` where it does not exist."""
    if is_modern(version) or not carries_url_mode(version):
        return None
    return {
        "jsonrpc": "2.0",
        "method": "notifications/elicitation/complete",
        "params": {"elicitationId": elicitation_id},
    }


def url_input_requests(required: URLElicitationRequired, version: str) -> dict[str, dict[str, Any]]:
    """The modern round that stands for error -32042: one ``elicitation/create`` per URL, keyed by its id."""
    return {
        str(each["elicitationId"]): {
            "method": "elicitation/create",
            "params": url_params(str(each["url"]), str(each["message"]), str(each["elicitationId"]), version),
        }
        for each in required.elicitations
    }


def url_mode_refused(target: str, version: str) -> Exception:
    """``ctx.elicit_url`` (in ``target``, "tools/call 'connect'") for a client that cannot take it.

    Before 2025-11-25 URL mode does not exist: the tool fails (``isError``), nothing is sent.
    2026-07-28: the request fails with -32021 naming ``elicitation.url`` (an ``elicitation: {}``
    client declared form mode only). 2025-11-25: the tool fails saying the client lacks it.
    """
    instead = "check ctx.can_elicit_url first and give the user the link another way"
    if not carries_url_mode(version):
        return ToolError(
            f"{target} needs URL-mode elicitation, which protocol {version} does not have "
            f"(2025-11-25 and later do): {instead}"
        )
    if is_modern(version):
        return McpError(
            MISSING_CAPABILITY,
            f"{target} needs URL-mode elicitation, which the request's _meta clientCapabilities does not "
            "declare (elicitation.url)",
            {"requiredCapabilities": {"elicitation": {"url": {}}}},
            http_status=error_http_status(MISSING_CAPABILITY, version),
        )
    return ToolError(
        f"{target} needs URL-mode elicitation, which the client did not declare at initialize "
        f"(elicitation.url): {instead}"
    )
