"""An in-memory MCP client for tests: talk to a ``Server`` without a subprocess or a socket.

It speaks either era exactly as a real client would (``initialize`` for a legacy version,
per-request ``_meta`` for 2026-07-28) and gives back raw wire JSON, so a test sees what a
client would see::

    async with Client(server) as client:                      # 2026-07-28
        result = await client.call_tool("get_count")
        assert result["structuredContent"] == 42

    async with Client(server, protocol_version="2025-11-25") as client:
        result = await client.call_tool("get_count")
        assert result["structuredContent"] == {"result": 42}

Answers to the server's questions (elicitation, sampling, roots) come from the handlers
you pass; in the modern era ``call_tool`` follows ``input_required`` rounds for you
(``follow_input=False`` to see them).

For the natural value whatever the era (``result.data``: ``42`` in both), use
``toolkit.Client(server)``, the public client, in process too. ``serve_http`` serves a server
on a free port for a test; ``TokenIssuer`` signs access tokens for a ``JWTVerifier``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, Literal

from ._client.memory import MemoryTransport
from ._client.session import ClientSession
from ._client.tasks import call_task
from ._errors import ClientError
from ._server import Server
from ._session import Connection
from ._versions import LATEST_VERSION, is_known

if TYPE_CHECKING:
    from ._auth.jwt import JWTVerifier
    from ._auth.tokens import AccessToken

__all__ = ["Client", "ClientError", "Handler", "TokenIssuer", "serve_http"]

Handler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]] | dict[str, Any]]

POLL_SECONDS = 0.005
"""How often ``call_task`` polls a 2026-07-28 task: in process, waiting costs a test more than asking."""


class Client(ClientSession):
    """An in-process client of ``server`` speaking ``protocol_version``.

    A ``ClientSession`` (``toolkit._client``) over the memory transport, wired to ``server.engine``
    as one client (its own ``Connection``) while the server's lifespan runs: every request, answer
    and round on the wire is the session's. What it adds: the lifespan, ``messages`` (what the
    server sent besides responses), ``_http_status`` on each response, and ``call_task``.
    """

    def __init__(
        self,
        server: Server,
        *,
        protocol_version: str = LATEST_VERSION,
        capabilities: dict[str, Any] | None = None,
        client_info: dict[str, Any] | None = None,
        log_level: str | None = None,
        elicitation: Handler | None = None,
        sampling: Handler | None = None,
        roots: Handler | None = None,
        access_token: AccessToken | None = None,
    ) -> None:
        if not is_known(protocol_version):  # pinned only: a test reads protocol_version before it connects
            raise ValueError(f"unknown protocol version {protocol_version!r}")
        self.server = server
        self.access_token = access_token
        """Sent with every request as if verified (see what a caller with these scopes sees)."""
        self.messages: list[dict[str, Any]] = []
        """Every message the server sent besides responses (notifications, requests), in order."""
        self._connection = Connection()
        super().__init__(
            MemoryTransport(server.engine, self._connection, access_token=access_token, http_status=True),
            protocol_version=protocol_version,
            capabilities=capabilities,
            client_info=client_info or {"name": "toolkit-testing", "version": "1.0"},
            log_level=log_level,
            handlers={"elicitation/create": elicitation, "sampling/createMessage": sampling, "roots/list": roots},
            on_message=self.messages.append,
        )
        self._stack = contextlib.AsyncExitStack()

    async def __aenter__(self) -> Client:
        await self._stack.enter_async_context(self.server.running())
        await self.open()
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        self.server.engine.forget(self._connection.session)
        await self.close()
        await self._stack.aclose()

    @property
    def notifications(self) -> list[dict[str, Any]]:
        return [message for message in self.messages if "id" not in message]

    async def call_task(
        self, name: str, arguments: dict[str, Any] | None = None, *, ttl_ms: int | None = None, timeout: float = 30.0
    ) -> dict[str, Any]:
        """Call a tool as a task and follow it to its end; the ``CallToolResult`` it ends with.

        2026-07-28: the call declares the tasks extension; ``tasks/get`` is polled and the
        task's questions are answered with this client's handlers (``tasks/update``).
        2025-11-25: the call carries ``"task"`` (``ttl_ms`` as its ``ttl``) and ``tasks/result``
        waits for the end (questions arrive as requests, answered by the handlers). A failed
        task raises ``ClientError`` with its error, and so does a cancelled one; a call the
        server answers without a task returns that result. ``timeout``: how long to follow the
        task before ``TimeoutError``.
        """
        return await call_task(self, name, arguments, ttl_ms=ttl_ms, timeout=timeout, poll_interval=POLL_SECONDS)


@contextlib.contextmanager
def serve_http(target: Server | Any, *, path: str = "/mcp", **options: Any) -> Iterator[str]:
    """Serve ``target`` over Streamable HTTP on a free 127.0.0.1 port for the ``with`` block; its MCP URL.

    ``target``: a ``Server`` (served by ``target.http_app(path, **options)``) or any ASGI app (its
    URL is then the bare ``http://127.0.0.1:PORT``). uvicorn runs in a thread of its own with the
    app's lifespan, so the block may be sync or async, and any client (``toolkit.Client(url)``, the
    ``mcp`` SDK's, ``httpx``) can talk to it::

        with serve_http(server) as url:
            async with toolkit.Client(url) as client:
                ...
    """
    import socket  # noqa: PLC0415 - the HTTP stack: only for tests that serve over HTTP
    import threading  # noqa: PLC0415

    from ._transports.http.runner import graceful_server  # noqa: PLC0415

    app = target.http_app(path, **options) if isinstance(target, Server) else target
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = graceful_server(app, host="127.0.0.1", port=port, shutdown_grace=2.0)
    server.config.access_log = False
    failed: list[BaseException] = []

    def run() -> None:
        try:
            server.run(sockets=[sock])
        except BaseException as exc:  # handed to the test: a server that could not start
            failed.append(exc)

    thread = threading.Thread(target=run, name=f"toolkit-testing-http-{port}", daemon=True)
    thread.start()
    try:
        while not server.started:
            if not thread.is_alive():
                raise RuntimeError(f"the HTTP server stopped before it started: {failed[0] if failed else 'no error'}")
            thread.join(0.005)
        yield f"http://127.0.0.1:{port}{path if isinstance(target, Server) else ''}"
    finally:
        server.should_exit = True
        thread.join(SHUTDOWN_SECONDS)
        if thread.is_alive():
            server.force_exit = True
            thread.join(SHUTDOWN_SECONDS)
        sock.close()


SHUTDOWN_SECONDS = 10.0
"""How long ``serve_http`` waits for the server to stop, twice (gracefully, then forced)."""


class TokenIssuer:
    """Signs test access tokens for a ``JWTVerifier``: a key pair made for the test, its JWKS, and tokens.

    ::

        issuer = TokenIssuer(audience="https://mcp.example.com/mcp")
        server = Server("secure", auth=issuer.verifier(), authorization_servers=[issuer.issuer])
        token = issuer.token(subject="alice", scopes=["notes:read"])

    ``verifier()`` is a ``JWTVerifier`` holding the public key (no key set to fetch); ``jwks`` is
    the key set a verifier with ``jwks_uri=`` would fetch, to serve yourself. Needs the ``auth``
    extra (PyJWT).
    """

    def __init__(
        self,
        *,
        issuer: str = "https://issuer.test",
        audience: str = "https://mcp.test/mcp",
        algorithm: Literal["RS256", "ES256"] = "RS256",
        kid: str = "test-key",
    ) -> None:
        from cryptography.hazmat.primitives.asymmetric import ec, rsa  # noqa: PLC0415 - only in tests that sign

        self.issuer = issuer
        self.audience = audience
        self.algorithm = algorithm
        self.kid = kid
        self._private: Any = (
            rsa.generate_private_key(public_exponent=65537, key_size=2048)
            if algorithm == "RS256"
            else ec.generate_private_key(ec.SECP256R1())
        )

    @property
    def public_pem(self) -> bytes:
        from cryptography.hazmat.primitives import serialization  # noqa: PLC0415

        public: bytes = self._private.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        return public

    @property
    def jwks(self) -> dict[str, Any]:
        """The JSON Web Key Set holding the public key (``{"keys": [...]}``)."""
        import json  # noqa: PLC0415

        import jwt  # noqa: PLC0415 - the auth extra

        algorithm: Any = jwt.algorithms.RSAAlgorithm if self.algorithm == "RS256" else jwt.algorithms.ECAlgorithm
        key = json.loads(algorithm.to_jwk(self._private.public_key()))
        return {"keys": [{**key, "kid": self.kid, "use": "sig", "alg": self.algorithm}]}

    def verifier(self, **options: Any) -> JWTVerifier:
        """A ``JWTVerifier`` of this issuer's tokens for its audience (``options``: the verifier's others)."""
        from ._auth.jwt import JWTVerifier  # noqa: PLC0415

        return JWTVerifier(
            public_key=self.public_pem,
            issuer=self.issuer,
            audience=self.audience,
            algorithms=[self.algorithm],
            **options,
        )

    def token(
        self,
        *,
        subject: str = "test-user",
        scopes: Iterable[str] = (),
        client_id: str = "test-client",
        expires_in: float = 3600,
        **claims: Any,
    ) -> str:
        """A signed access token: ``sub``, ``scope``, ``client_id``, ``iss``, ``aud``, ``iat``, ``exp``.

        ``claims`` add to those or override them.

        A claim given as ``None`` is left out; ``expires_in`` below zero makes an expired token.
        """
        import time  # noqa: PLC0415

        import jwt  # noqa: PLC0415

        now = int(time.time())
        body: dict[str, Any] = {
            "iss": self.issuer,
            "aud": self.audience,
            "sub": subject,
            "client_id": client_id,
            "scope": " ".join(scopes),
            "iat": now,
            "exp": now + int(expires_in),
            **claims,
        }
        body = {name: value for name, value in body.items() if value is not None}
        return jwt.encode(body, self._private, algorithm=self.algorithm, headers={"kid": self.kid})
