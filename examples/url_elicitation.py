"""URL-mode elicitation: a tool that needs the user's GitHub token sends them to a URL.

The token must never pass through the MCP client (2025-11-25 client/elicitation, "URL Mode
Elicitation for OAuth Flows"): the server sends the user to its own connect page, that page runs
the OAuth flow with GitHub, and the token lands on the server, bound to the user.

    toolkit run examples/url_elicitation.py --transport http

- ``connect_github`` asks with ``ctx.elicit_url`` and waits until the user is back;
- ``github_repos`` raises ``URLElicitationRequired`` when there is no token yet (the client shows
  the URL, the user goes there, the client calls again).

Here the connect page stands in for GitHub's authorization (``/connect/{state}`` stores a token
at once); a real server redirects to ``https://github.com/login/oauth/authorize`` and stores the
token its callback receives. Over stdio there is no page: the URL is ``CONNECT_BASE_URL``'s.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import os
import secrets

from starlette.requests import Request
from starlette.responses import HTMLResponse

from toolkit import Context, Server, URLElicitationRequired

server = Server("github-connect")

SECRET = secrets.token_bytes(32)
TOKENS: dict[str, str] = {}
"""The user's GitHub token, by user: kept on the server, never sent to the client."""
WAITING: dict[str, asyncio.Event] = {}
USERS: dict[str, str] = {}
"""Which user a connect URL was made for (the state in the URL -> the user)."""


def user_of(ctx: Context) -> str:
    """Who is calling: the verified token's subject with ``auth=``; one local user without (development)."""
    return ctx.access_token.subject if ctx.access_token is not None else "local"


def connect_url(ctx: Context, user: str) -> str:
    """The connect page for this user: an opaque state in the URL, the same on every round (2026-07-28
    runs the tool again from the top), nothing about the user in it."""
    state = hmac.new(SECRET, user.encode(), hashlib.sha256).hexdigest()[:32]
    USERS[state] = user
    headers = ctx.request.headers if ctx.request is not None else {}
    base = os.environ.get("CONNECT_BASE_URL") or f"http://{headers.get('host', '127.0.0.1:8000')}"
    return f"{base}/connect/{state}"


@server.custom_route("/connect/{state}", methods=["GET"])
async def connect(request: Request) -> HTMLResponse:
    """Where the user lands. A real server checks here that the browser's user is the one the URL was
    made for (a session cookie), then redirects to GitHub; its callback stores the token."""
    user = USERS.get(request.path_params["state"])
    if user is None:
        return HTMLResponse("<p>This link has expired.</p>", status_code=404)
    TOKENS[user] = "gho_" + secrets.token_hex(8)  # what GitHub's token endpoint would return
    WAITING.setdefault(user, asyncio.Event()).set()
    return HTMLResponse("<p>GitHub is connected. You can close this tab.</p>")


@server.tool
async def connect_github(ctx: Context) -> str:
    """Connect the user's GitHub account."""
    user = user_of(ctx)
    if user in TOKENS:
        return "GitHub is connected"
    if not ctx.can_elicit_url:
        return f"Open {connect_url(ctx, user)} to connect GitHub, then ask again"
    url = connect_url(ctx, user)
    state = url.rsplit("/", 1)[1]
    answer = await ctx.elicit_url(url, "Connect your GitHub account", elicitation_id=state)
    if not answer.accepted:
        return f"GitHub is not connected (you chose {answer.action})"
    try:
        await asyncio.wait_for(WAITING.setdefault(user, asyncio.Event()).wait(), timeout=600)
    except TimeoutError:
        return "GitHub is not connected: the page was not finished in 10 minutes"
    await ctx.elicitation_complete(state)
    return "GitHub is connected"


@server.tool
def github_repos(ctx: Context) -> list[str]:
    """The user's repositories (needs GitHub connected)."""
    user = user_of(ctx)
    if user not in TOKENS:
        url = connect_url(ctx, user)
        raise URLElicitationRequired(url, "Connect your GitHub account first", elicitation_id=url.rsplit("/", 1)[1])
    return ["octocat/hello-world", "octocat/spoon-knife"]  # GET https://api.github.com/user/repos with the token


if __name__ == "__main__":
    server.run()
