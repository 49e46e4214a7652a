"""A server for the real-client check of MCP Apps and URL-mode elicitation (tests/test_apps_url_interop.py).

    toolkit run tests/support/apps_url_app.py:server --transport http --port P

- ``panel`` is linked to the app ``ui://demo/panel`` (``_meta.ui.resourceUri``) and says whether
  the calling client declared the UI extension (``renders_apps``);
- ``connect`` asks with ``ctx.elicit_url`` and returns the action the client answered (then sends
  ``elicitation_complete``, which 2025-11-25 carries as a notification);
- ``linked`` raises ``URLElicitationRequired`` until the user has opened ``/link/{state}`` (the page
  stands in for a third party's authorization: opening it is the user finishing there).

The HTML is inline (no app-side library): the check is what the clients see, not a rendering.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import HTMLResponse

from toolkit import App, Context, Server, URLElicitationRequired, renders_apps

PAGE = "<!doctype html><html><body><p id='panel'>panel</p></body></html>"
panel_app = App(
    "ui://demo/panel",
    html=PAGE,
    title="Demo panel",
    connect_domains=["https://api.example.com"],
    prefers_border=True,
)
server = Server("apps-url-interop")
STATE = "link-7f3a"
VISITED: set[str] = set()


def link_url(ctx: Context) -> str:
    """The page's URL on this server (over stdio there is none: the URL names 127.0.0.1 without a port)."""
    host = ctx.request.headers.get("host", "127.0.0.1") if ctx.request is not None else "127.0.0.1"
    return f"http://{host}/link/{STATE}"


@server.custom_route("/link/{state}", methods=["GET"])
async def link(request: Request) -> HTMLResponse:
    """Where the user lands: opening it marks the state as done."""
    VISITED.add(request.path_params["state"])
    return HTMLResponse("<p>Linked. You can close this tab.</p>")


@server.tool(app=panel_app)
def panel(ctx: Context) -> str:
    """The demo panel: an app where the client renders apps, text otherwise."""
    return f"renders_apps={renders_apps(ctx)}"


@server.tool
async def connect(ctx: Context) -> str:
    """Send the user to the link page with URL-mode elicitation."""
    if not ctx.can_elicit_url:
        return "can_elicit_url=False"
    answer = await ctx.elicit_url(link_url(ctx), "Link your demo account", elicitation_id=STATE)
    if answer.accepted:
        await ctx.elicitation_complete(STATE)
    return f"action={answer.action}"


@server.tool
def linked(ctx: Context) -> str:
    """Needs the link page visited first: raises URLElicitationRequired until it was."""
    if STATE not in VISITED:
        raise URLElicitationRequired(link_url(ctx), "Link your demo account first", elicitation_id=STATE)
    return "linked"
