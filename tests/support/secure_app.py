"""A weather server behind OAuth, for the real-authorization-server tests (tests/test_auth_real.py).

No authorization in code: ``toolkit run`` adds it from its flags,

    toolkit run tests/support/secure_app.py --transport http --port 8000 \\
        --auth-jwks-uri http://127.0.0.1:4000/jwks --auth-issuer http://127.0.0.1:4000 \\
        --resource-url http://127.0.0.1:8000/mcp

so its protected resource metadata advertises ``scopes_supported: ["admin", "forecast:read"]``
(every scope a tool requires).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from toolkit import Context, Server

server = Server("secure-weather", version="1.0.0")


class HourlyForecast(BaseModel):
    hour: str
    temp: float


@server.tool(scopes=["forecast:read"])
def forecast(city: str) -> list[HourlyForecast]:
    """Hourly forecast for a city (needs forecast:read)."""
    return [HourlyForecast(hour="09:00", temp=20.5), HourlyForecast(hour="10:00", temp=21.0 + len(city))]


@server.tool
def whoami(ctx: Context) -> dict[str, Any]:
    """Who the access token says is calling."""
    token = ctx.access_token
    if token is None:
        return {"subject": None, "client_id": None, "scopes": []}
    return {"subject": token.subject, "client_id": token.client_id, "scopes": sorted(token.scopes)}


@server.tool(scopes=["admin"])
def admin_reset() -> str:
    """Reset every forecast (needs admin)."""
    return "reset done"
