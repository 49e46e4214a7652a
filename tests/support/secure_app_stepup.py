"""secure_app's server with authorization configured in code, advertising only ``forecast:read``.

Its protected resource metadata says ``scopes_supported: ["forecast:read"]``, so a client asks
for that scope alone; ``admin_reset`` then answers 403 ``insufficient_scope`` with
``scope="admin"``, and the client must step up (tests/test_auth_real.py). The authorization
server and this server's URL come from the environment:

    SECURE_APP_ISSUER=http://127.0.0.1:4000 SECURE_APP_JWKS_URI=http://127.0.0.1:4000/jwks \\
    SECURE_APP_RESOURCE=http://127.0.0.1:8000/mcp \\
        toolkit run tests/support/secure_app_stepup.py --transport http --port 8000
"""

from __future__ import annotations

import os

from secure_app import server  # `toolkit run` puts this file's folder on sys.path

from toolkit.auth import JWTVerifier

ISSUER = os.environ["SECURE_APP_ISSUER"]
RESOURCE = os.environ["SECURE_APP_RESOURCE"]

server.set_auth(
    JWTVerifier(jwks_uri=os.environ["SECURE_APP_JWKS_URI"], issuer=ISSUER, audience=RESOURCE),
    authorization_servers=[ISSUER],
    resource_url=RESOURCE,
    scopes_supported=["forecast:read"],
)
