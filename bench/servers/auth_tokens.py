"""Signing material for the ``auth`` scenario: an RSA key pair, its JWKS, and RS256 access tokens.

Run by the harness with toolkit's venv Python (PyJWT and cryptography live there, not in the
driver's standard library, nor in the anchors' venv), before the authenticated server starts::

    python bench/servers/auth_tokens.py OUTDIR --audience http://127.0.0.1:PORT/mcp \\
        --issuer http://127.0.0.1:JWKS_PORT --count N

Writes ``OUTDIR/jwks.json`` (the public key, ``kid`` ``bench-1``, ``use`` ``sig``, ``alg`` RS256)
and ``OUTDIR/tokens.json``: ``{"token": <one reusable token>, "fresh": [<N distinct tokens>],
"expires_at": <unix time>}``. Every token carries ``iss``, ``aud`` (the resource URL), ``iat``,
``nbf``, ``exp`` (an hour from now), ``sub``, ``client_id``, ``scope`` and a unique ``jti``, and
``kid`` in its header; the fresh ones differ only by ``jti`` (so each has a signature the server
has never seen). The private key is never written.
"""

import argparse
import json
import time
import uuid
from pathlib import Path

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa

KID = "bench-1"
LIFETIME = 3600


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--audience", required=True, help="the resource URL: http://127.0.0.1:PORT/mcp")
    parser.add_argument("--issuer", required=True)
    parser.add_argument("--count", type=int, required=True, help="distinct single-use tokens to make")
    args = parser.parse_args()

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
    jwk.update({"kid": KID, "use": "sig", "alg": "RS256"})

    now = int(time.time())
    claims = {
        "iss": args.issuer,
        "aud": args.audience,
        "iat": now,
        "nbf": now,
        "exp": now + LIFETIME,
        "sub": "bench-user",
        "client_id": "bench-client",
        "scope": "bench",
    }
    header = {"kid": KID}

    def token() -> str:
        return jwt.encode({**claims, "jti": uuid.uuid4().hex}, key, algorithm="RS256", headers=header)

    tokens = {"token": token(), "fresh": [token() for _ in range(args.count)], "expires_at": now + LIFETIME}
    args.outdir.mkdir(parents=True, exist_ok=True)
    (args.outdir / "jwks.json").write_text(json.dumps({"keys": [jwk]}))
    (args.outdir / "tokens.json").write_text(json.dumps(tokens))
    print(json.dumps({"fresh": len(tokens["fresh"]), "kid": KID}))


if __name__ == "__main__":
    main()
