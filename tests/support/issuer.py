"""A local token issuer for the hostile cases: keys we control and a JWKS endpoint we can break.

The real authorization server (``tests/support/authserver.py``) issues only good tokens; the
refusal tests need forged, expired and foreign ones, and a key-set endpoint that goes down,
hangs or talks nonsense. ``Issuer`` signs whatever a test asks with its own RSA/EC keys and
serves their JWKS over real HTTP on 127.0.0.1 (a thread), counting the fetches.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

Mode = Literal["ok", "down", "slow", "garbage", "empty"]


@dataclass
class SigningKey:
    kid: str
    private: Any
    alg: str = "RS256"

    @classmethod
    def rsa(cls, kid: str) -> SigningKey:
        return cls(kid, rsa.generate_private_key(public_exponent=65537, key_size=2048))

    @classmethod
    def ec(cls, kid: str) -> SigningKey:
        return cls(kid, ec.generate_private_key(ec.SECP256R1()), "ES256")

    def jwk(self) -> dict[str, Any]:
        algorithm = jwt.algorithms.RSAAlgorithm if self.alg.startswith("RS") else jwt.algorithms.ECAlgorithm
        public = json.loads(algorithm.to_jwk(self.private.public_key()))
        return {**public, "kid": self.kid, "use": "sig", "alg": self.alg}

    def public_pem(self) -> bytes:
        return self.private.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )


@dataclass
class Issuer:
    """Signs tokens for ``audience`` as ``issuer``; its JWKS is at ``jwks_uri`` (see ``mode``)."""

    issuer: str
    audience: str
    keys: list[SigningKey]
    jwks_uri: str = ""
    mode: Mode = "ok"
    slow_seconds: float = 60.0
    """``slow``: the longest a fetch is held; ``release`` lets it answer sooner."""
    fetching: threading.Event = field(default_factory=threading.Event)
    """Set when a ``slow`` fetch has come in and is being held."""
    release: threading.Event = field(default_factory=threading.Event)
    fetches: int = 0
    published: list[SigningKey] = field(default_factory=list)
    """The keys the JWKS shows (default: ``keys``)."""

    def token(self, *, key: SigningKey | None = None, headers: dict[str, Any] | None = None, **claims: Any) -> str:
        """A signed token: subject alice, the audience, the issuer, an hour to live; ``claims`` override."""
        key = key or self.keys[0]
        now = int(time.time())
        body: dict[str, Any] = {
            "iss": self.issuer,
            "aud": self.audience,
            "sub": "alice",
            "client_id": "test-client",
            "scope": "",
            "iat": now,
            "exp": now + 3600,
        }
        body.update(claims)
        body = {name: value for name, value in body.items() if value is not None}
        return jwt.encode(body, key.private, algorithm=key.alg, headers={"kid": key.kid, **(headers or {})})

    def document(self) -> bytes:
        keys = self.published or self.keys
        return json.dumps({"keys": [key.jwk() for key in keys]}).encode()


def send_json(handler: BaseHTTPRequestHandler, status: int, body: bytes) -> None:
    """Answer with a JSON ``body``; a client that gave up meanwhile is no error."""
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        handler.send_response(status)
        handler.send_header("content-type", "application/json")
        handler.send_header("content-length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)


@contextlib.contextmanager
def serve_issuer(audience: str, *, issuer: str = "https://issuer.test") -> Iterator[Issuer]:
    """An ``Issuer`` with one RSA key, its JWKS served on a free port until the block ends."""
    state = Issuer(issuer=issuer, audience=audience, keys=[SigningKey.rsa("key-1")])

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            state.fetches += 1
            mode = state.mode
            if mode == "down":
                self.send_response(503)
                self.send_header("content-length", "0")
                self.end_headers()
                return
            if mode == "slow":  # held until the test releases it (or slow_seconds pass)
                state.fetching.set()
                state.release.wait(state.slow_seconds)
            body = b"<html>not a key set</html>" if mode == "garbage" else state.document()
            if mode == "empty":
                body = b'{"keys": []}'
            send_json(self, 200, body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    state.jwks_uri = f"http://127.0.0.1:{httpd.server_address[1]}/jwks"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)
