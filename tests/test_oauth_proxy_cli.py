"""toolkit as the authorization server without code, its OpenID discovery document, and a client named by a URL.

- ``toolkit run --oauth-proxy-*`` and ``TOOLKIT_OAUTH_PROXY_*``: real ``toolkit run`` processes
  (one worker; two sharing a real ``redis-server``) in front of the test rig's oidc-provider
  (tests/test_oauth_proxy.py's ``idp``: one confidential client, as Google or Entra would have),
  logged into by toolkit's own client through the consent page and the upstream's login; and
  every refusal of a configuration that cannot work, before anything is served.
- ``/.well-known/openid-configuration``: the RFC 8414 document as OpenID Connect Discovery serves it.
- A client ID metadata document: ``mcp`` 2.3.0's OAuth client names itself by an https URL the
  test serves on 127.0.0.1 with a certificate made here, signed by a CA made here, which the
  proxy is told to trust (``client_metadata_verify=``); without that, the document is refused.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import datetime
import ipaddress
import json
import os
import ssl
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from tests.http_support import serve
from tests.support.apps import WEATHER
from tests.support.authserver import READY_TIMEOUT, AuthServer
from tests.support.consent_login import ConsentingLogin
from tests.support.issuer import send_json
from tests.support.oauth_login import query
from tests.support.processes import REPO, TOOLKIT, free_port, http_server
from tests.support.proxy_flow import ProxyFlow, new_verifier, s256
from tests.support.redis_rig import redis_server, require
from tests.test_auth_real import missing
from tests.test_oauth_proxy import UPSTREAM_CLIENT, idp, proxied_server

from toolkit import Server
from toolkit.auth import OIDC, OAuthProxy
from toolkit.client import Client, OAuth

pytestmark = pytest.mark.timeout(READY_TIMEOUT + 180)
__all__ = ["idp"]  # the module's upstream, shared with test_oauth_proxy

TIMEOUT = 60.0
START_TIMEOUT = 90.0
"""For ``toolkit run`` to listen: generous, the machine may be busy (nothing is timed by it)."""

APP = """
import os

import httpx

from toolkit import Context, Server
from toolkit.auth import UpstreamToken

server = Server("cli-proxied")


@server.tool
async def upstream_me(token: UpstreamToken, ctx: Context) -> dict:
    \"\"\"Who the upstream says the caller is, asked with the caller's own upstream token.\"\"\"
    async with httpx.AsyncClient(timeout=60) as http:
        reply = await http.get(os.environ["TEST_USERINFO"], headers={"authorization": f"Bearer {token}"})
    reply.raise_for_status()
    access = ctx.access_token
    return {"subject": access.subject, "upstream": reply.json()["sub"], "pid": os.getpid()}
"""

IN_CODE = """
from toolkit import Server
from toolkit.auth import OIDC, OAuthProxy

server = Server(
    "in-code",
    auth=OAuthProxy(upstream=OIDC("https://idp.example", "id", "secret"), base_url="https://mcp.example"),
)
"""


def clean_environment(**extra: str) -> dict[str, str]:
    """This process's environment without any authorization variable, plus ``extra``."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("TOOLKIT_AUTH_", "TOOLKIT_OAUTH_PROXY_"))
        and name not in ("TOOLKIT_RESOURCE_URL", "TOOLKIT_STORE")
    }
    return {**env, **extra}


def toolkit(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``toolkit ARGS`` run to its end (a refusal: nothing is served), with a clean environment plus ``env``."""
    return subprocess.run(
        [str(TOOLKIT), *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=clean_environment(**env),
        stdin=subprocess.DEVNULL,
    )


def write_app(directory: Path, text: str = APP, name: str = "proxied_app.py") -> Path:
    app = directory / name
    app.write_text(text)
    return app


def rsa_pem() -> str:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    return pem.decode()


def ec_pem() -> str:
    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    return pem.decode()


def public_n(pem: str) -> str:
    """The base64url modulus of an RSA private key's public half, as a JWK shows it."""
    key = serialization.load_pem_private_key(pem.encode(), password=None)
    assert isinstance(key, rsa.RSAPrivateKey)
    n = key.public_key().public_numbers().n
    return base64.urlsafe_b64encode(n.to_bytes((n.bit_length() + 7) // 8, "big")).rstrip(b"=").decode()


async def log_in_and_call(url: str, tool: str = "upstream_me", calls: int = 1) -> tuple[list[Any], ConsentingLogin]:
    """toolkit's own client logs in (discovery, registration, consent, the upstream) and calls ``tool``."""
    login = ConsentingLogin()
    oauth = OAuth(user_agent=login, allow_http_loopback=True, client_name="cli-tests")
    async with Client(url, auth=oauth, timeout=TIMEOUT) as client:
        results = [(await client.call_tool(tool)).data for _ in range(calls)]
    return results, login


# --- toolkit run --oauth-proxy-* ----------------------------------------------------------------------


async def test_flags_make_toolkit_the_authorization_server(idp: AuthServer, tmp_path: Path) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = clean_environment(
        TOOLKIT_OAUTH_PROXY_CLIENT_SECRET=UPSTREAM_CLIENT[1], TEST_USERINFO=idp.metadata["userinfo_endpoint"]
    )
    flags = [
        "--oauth-proxy-issuer",
        idp.issuer,
        "--oauth-proxy-client-id",
        UPSTREAM_CLIENT[0],
        "--oauth-proxy-base-url",
        base,
        "--oauth-proxy-upstream-scope",
        "openid",
    ]
    app = write_app(tmp_path)
    with http_server(app, *flags, path="/tools/mcp", port=port, env=env, timeout=START_TIMEOUT) as running:
        async with httpx.AsyncClient(timeout=TIMEOUT) as http:
            resource = (await http.get(f"{base}/.well-known/oauth-protected-resource/tools/mcp")).json()
            metadata = (await http.get(f"{base}/.well-known/oauth-authorization-server")).json()
            openid = (await http.get(f"{base}/.well-known/openid-configuration")).json()
        (result,), login = await log_in_and_call(running.url)

    # The resource is the base URL + --path: every token's audience, what the client asked for.
    assert running.url == f"{base}/tools/mcp"
    assert resource["resource"] == running.url and resource["authorization_servers"] == [base]
    assert metadata["issuer"] == base and metadata["authorization_endpoint"] == f"{base}/authorize"
    assert openid == {**metadata, **{key: openid[key] for key in OPENID_ONLY}}
    assert result["subject"] == "alice" and result["upstream"] == "alice"
    (page,) = login.consent_pages
    assert "cli-tests" in page and idp.issuer in page
    (asked,) = [query(url) for url in login.authorizations]
    assert asked["resource"] == running.url and asked["code_challenge_method"] == "S256"


async def test_the_environment_and_files_configure_every_worker(idp: AuthServer, tmp_path: Path) -> None:
    """Nothing on the command line but ``--workers 2 --store``: the variables and files reach each worker,
    whose keys are the same (a token one signs, the other accepts) and whose logins are in Redis."""
    require("redis-server")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    signing_key = rsa_pem()
    files = {
        "secret": UPSTREAM_CLIENT[1] + "\n",  # a file written by hand ends with a newline, which is not the secret's
        "signing.pem": signing_key,
        "previous.pem": ec_pem() + ec_pem(),  # two keys rotated out, one after the other
        "sealing.key": base64.b64encode(os.urandom(32)).decode() + "\n",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    with redis_server() as redis:
        env = clean_environment(
            TOOLKIT_OAUTH_PROXY_ISSUER=idp.issuer,
            TOOLKIT_OAUTH_PROXY_CLIENT_ID=UPSTREAM_CLIENT[0],
            TOOLKIT_OAUTH_PROXY_CLIENT_SECRET_FILE=str(tmp_path / "secret"),
            TOOLKIT_OAUTH_PROXY_BASE_URL=base,
            TOOLKIT_OAUTH_PROXY_UPSTREAM_SCOPES="openid",
            TOOLKIT_OAUTH_PROXY_SIGNING_KEY_FILE=str(tmp_path / "signing.pem"),
            TOOLKIT_OAUTH_PROXY_PREVIOUS_SIGNING_KEYS_FILE=str(tmp_path / "previous.pem"),
            TOOLKIT_OAUTH_PROXY_ENCRYPTION_KEY_FILE=str(tmp_path / "sealing.key"),
            TEST_USERINFO=idp.metadata["userinfo_endpoint"],
        )
        app = write_app(tmp_path)
        flags = ["--workers", "2", "--store", redis.url]
        with http_server(app, *flags, port=port, env=env, timeout=START_TIMEOUT) as running:
            async with httpx.AsyncClient(timeout=TIMEOUT) as http:
                keys = [(await http.get(f"{base}/jwks")).json() for _ in range(4)]
            # Several logins and calls, so that both workers very likely take part in each step.
            outcomes = [await log_in_and_call(running.url, calls=3) for _ in range(3)]

    # The file's key signs (first), the two rotated out are published beside it, the same in every worker.
    assert all([key["kty"] for key in each["keys"]] == ["RSA", "EC", "EC"] for each in keys)
    assert all(each["keys"][0]["n"] == public_n(signing_key) and each == keys[0] for each in keys)
    results = [result for calls, _ in outcomes for result in calls]
    assert all(result["subject"] == "alice" and result["upstream"] == "alice" for result in results)
    assert all(len(login.consent_pages) == 1 for _, login in outcomes)


PROVIDERS = {
    "google": ([], "https://accounts.google.com"),
    "github": ([], "https://github.com"),
    "entra": (
        ["--oauth-proxy-tenant", "contoso.onmicrosoft.com"],
        "https://login.microsoftonline.com/contoso.onmicrosoft.com/v2.0",
    ),
    "entra-some-tenants": (
        [
            "--oauth-proxy-tenant",
            "organizations",
            "--oauth-proxy-allowed-tenant",
            "8eaef023-2b34-4da1-9baa-8bc8c9d6a490",
        ],
        "https://login.microsoftonline.com/organizations/v2.0",
    ),
    "auth0": (
        ["--oauth-proxy-domain", "example.us.auth0.com", "--oauth-proxy-audience", "https://api.example.com"],
        "https://example.us.auth0.com/",
    ),
    "keycloak": (
        ["--oauth-proxy-keycloak-url", "http://127.0.0.1:8080", "--oauth-proxy-realm", "staff"],
        "http://127.0.0.1:8080/realms/staff",
    ),
}


@pytest.mark.parametrize(("provider", "case"), PROVIDERS.items(), ids=PROVIDERS.keys())
async def test_a_provider_name_picks_its_preset(provider: str, case: tuple[list[str], str]) -> None:
    """``--oauth-proxy-provider NAME`` and its own flags make that preset: the consent page names its issuer.

    Nobody logs in (no test reaches the internet): registration and ``/authorize`` ask nothing of the provider.
    """
    args, issuer = case
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    flags = ["--oauth-proxy-provider", provider.partition("-")[0], *args]
    flags += ["--oauth-proxy-client-id", "toolkit", "--oauth-proxy-base-url", base]
    with http_server(WEATHER, *flags, port=port, env=clean_environment(**SECRET), timeout=START_TIMEOUT):
        async with httpx.AsyncClient(timeout=TIMEOUT) as http:
            flow = ProxyFlow(base, http)
            try:
                page = await flow.consent_page(await flow.register(), new_verifier())
            finally:
                await flow.aclose()
    assert f"You will sign in with <code>{issuer}</code>" in page.text


@dataclass
class Refused:
    args: list[str]
    message: list[str]
    env: dict[str, str] = field(default_factory=dict)
    never_shown: str | None = None


PROXY = [
    "--oauth-proxy-issuer",
    "https://idp.example",
    "--oauth-proxy-client-id",
    "toolkit",
    "--oauth-proxy-base-url",
    "https://mcp.example.com",
]
SECRET = {"TOOLKIT_OAUTH_PROXY_CLIENT_SECRET": "upstream-secret"}

REFUSALS = {
    "jwt-and-proxy": Refused(
        [*PROXY, "--auth-jwks-uri", "https://as.example/jwks"],
        ["--auth-jwks-uri", "--oauth-proxy-issuer", "contradict"],
        SECRET,
    ),
    "jwt-variable-and-proxy-flag": Refused(
        PROXY, ["$TOOLKIT_AUTH_ISSUER", "--oauth-proxy-issuer"], {**SECRET, "TOOLKIT_AUTH_ISSUER": "https://as.example"}
    ),
    "secret-on-the-command-line": Refused(
        [*PROXY, "--oauth-proxy-client-secret", "S3CRET-VALUE"],
        ["not taken on the command line", "$TOOLKIT_OAUTH_PROXY_CLIENT_SECRET", "--oauth-proxy-client-secret-file"],
        never_shown="S3CRET-VALUE",
    ),
    "signing-key-on-the-command-line": Refused(
        [*PROXY, "--oauth-proxy-signing-key=-----BEGIN PRIVATE KEY-----"],
        ["not taken on the command line", "$TOOLKIT_OAUTH_PROXY_SIGNING_KEY", "--oauth-proxy-signing-key-file"],
        SECRET,
        never_shown="BEGIN PRIVATE KEY",
    ),
    "no-secret": Refused(PROXY, ["needs", "$TOOLKIT_OAUTH_PROXY_CLIENT_SECRET", "--oauth-proxy-client-secret-file"]),
    "no-client-or-base": Refused(
        ["--oauth-proxy-issuer", "https://idp.example"],
        ["--oauth-proxy-client-id ($TOOLKIT_OAUTH_PROXY_CLIENT_ID)", "--oauth-proxy-base-url"],
        SECRET,
    ),
    "another-provider's-flag": Refused(
        [*PROXY, "--oauth-proxy-realm", "staff"],
        ["--oauth-proxy-realm", "is for --oauth-proxy-provider keycloak"],
        SECRET,
    ),
    "preset-without-its-location": Refused(
        ["--oauth-proxy-provider", "auth0", *PROXY[2:]], ["--oauth-proxy-domain ($TOOLKIT_OAUTH_PROXY_DOMAIN)"], SECRET
    ),
    "secret-twice": Refused(
        [*PROXY, "--oauth-proxy-client-secret-file", "/dev/null"],
        ["$TOOLKIT_OAUTH_PROXY_CLIENT_SECRET and --oauth-proxy-client-secret-file", "give one"],
        SECRET,
    ),
    "unreadable-key-file": Refused(
        [*PROXY, "--oauth-proxy-signing-key-file", "/nonexistent/signing.pem"],
        ["--oauth-proxy-signing-key-file", "/nonexistent/signing.pem", "cannot be read"],
        SECRET,
    ),
    "bad-encryption-key": Refused(
        PROXY, ["--oauth-proxy-*", "encryption_key"], {**SECRET, "TOOLKIT_OAUTH_PROXY_ENCRYPTION_KEY": "c2hvcnQ="}
    ),
    "a-preset's-own-check": Refused(
        ["--oauth-proxy-provider", "entra", "--oauth-proxy-allowed-tenant", "contoso", *PROXY[2:]],
        ["--oauth-proxy-*", "Entra(tenants=...)"],
        SECRET,
    ),
    "workers-without-a-store": Refused([*PROXY, "--workers", "2"], ["--workers 2", "needs --store"], SECRET),
    "a-store-with-keys-made-at-start": Refused(
        [*PROXY, "--store", "redis://127.0.0.1:9/0"],
        ["several processes", "$TOOLKIT_OAUTH_PROXY_SIGNING_KEY", "$TOOLKIT_OAUTH_PROXY_ENCRYPTION_KEY"],
        SECRET,
    ),
}


@pytest.mark.parametrize("case", REFUSALS.values(), ids=REFUSALS.keys())
def test_a_configuration_that_cannot_work_is_refused_before_serving(case: Refused) -> None:
    completed = toolkit(
        "run", str(WEATHER), "--transport", "http", "--port", str(free_port()), *case.args, env=case.env
    )
    assert completed.returncode == 2, completed
    for part in case.message:
        assert part in completed.stderr, completed.stderr
    assert "Traceback" not in completed.stderr
    if case.never_shown is not None:
        assert case.never_shown not in completed.stderr + completed.stdout


def test_an_app_configured_in_code_refuses_the_flags(tmp_path: Path) -> None:
    completed = toolkit(
        "run", str(write_app(tmp_path, IN_CODE, "in_code.py")), "--transport", "http", *PROXY, env=SECRET
    )
    assert completed.returncode == 2
    assert "configured in code" in completed.stderr and "--oauth-proxy-issuer" in completed.stderr


def test_the_gateway_takes_the_flags_over_http_only() -> None:
    """``toolkit proxy`` shares ``toolkit run``'s authorization flags: over stdio they are refused."""
    completed = toolkit("proxy", "http://127.0.0.1:9/mcp", *PROXY, env=SECRET)
    assert completed.returncode == 2
    assert "--oauth-proxy-issuer is for a gateway served over HTTP" in completed.stderr


# --- /.well-known/openid-configuration ------------------------------------------------------------------

OPENID_ONLY = ("subject_types_supported", "id_token_signing_alg_values_supported")
"""What OpenID Connect Discovery §3 requires beyond RFC 8414 (and the TypeScript SDK's parser insists on)."""


async def test_the_openid_configuration_is_the_rfc_8414_document_as_openid_connect_serves_it() -> None:
    port = free_port()
    proxy = OAuthProxy(
        upstream=OIDC("https://idp.example", "toolkit", "secret"),  # never asked: nobody logs in here
        base_url=f"http://127.0.0.1:{port}",
        scopes=["files:read"],
        signing_key=ec_pem(),
    )
    async with serve(Server("discovery", auth=proxy), port=port) as running, httpx.AsyncClient() as http:
        rfc8414 = await http.get(f"{running.base}/.well-known/oauth-authorization-server")
        openid = await http.get(f"{running.base}/.well-known/openid-configuration")
        head = await http.head(f"{running.base}/.well-known/openid-configuration")
        post = await http.post(f"{running.base}/.well-known/openid-configuration")

    assert openid.status_code == 200 and openid.headers["access-control-allow-origin"] == "*"
    document = openid.json()
    assert document == {**rfc8414.json(), "subject_types_supported": ["public"], OPENID_ONLY[1]: ["ES256"]}
    # What a client checks (OpenID Connect Discovery §4.3, MCP's discovery): the issuer it asked.
    assert document["issuer"] == running.base
    assert document["scopes_supported"] == ["files:read"]
    assert head.status_code == 200 and head.content == b""
    assert post.status_code == 405


# --- a client ID metadata document, over https -----------------------------------------------------------


@dataclass
class Authority:
    """A CA made for the test, and a server certificate it signed for 127.0.0.1."""

    ca_file: Path
    cert_file: Path
    key_file: Path


def make_authority(directory: Path) -> Authority:
    now = datetime.datetime.now(datetime.UTC)

    def name(text: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, text)])

    ca_key, leaf_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(name("toolkit test CA"))
        .issuer_name(name("toolkit test CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=False,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    leaf = (
        x509.CertificateBuilder()
        .subject_name(name("127.0.0.1"))
        .issuer_name(ca.subject)
        .public_key(leaf_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(leaf_key.public_key()), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    authority = Authority(directory / "ca.pem", directory / "server.pem", directory / "server.key")
    authority.ca_file.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    authority.cert_file.write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    authority.key_file.write_bytes(
        leaf_key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return authority


@dataclass
class Documents:
    """Client metadata documents served over https: the base URL, and the paths asked for."""

    base: str
    requests: list[str]


@contextlib.contextmanager
def https_documents(authority: Authority, documents: dict[str, dict[str, Any]]) -> Iterator[Documents]:
    """``documents`` (path -> JSON) served over https on 127.0.0.1 with ``authority``'s certificate."""
    served = Documents("", [])

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            served.requests.append(self.path)
            document = documents.get(self.path)
            body = json.dumps(document).encode() if document is not None else b"{}"
            send_json(self, 200 if document is not None else 404, body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(authority.cert_file, authority.key_file)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    served.base = f"https://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, name="cimd-documents", daemon=True)
    thread.start()
    try:
        yield served
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


MCP230_REDIRECT_URI = "http://localhost:33419/callback"  # tests/support/proxy_mcp230_client.py's


def client_document(url: str) -> dict[str, Any]:
    return {
        "client_id": url,
        "client_name": "mcp 2.3.0 by its metadata document",
        "redirect_uris": [MCP230_REDIRECT_URI],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    }


async def test_the_mcp_sdk_230_client_logs_in_by_its_client_id_metadata_document(
    idp: AuthServer, tmp_path: Path
) -> None:
    python = REPO / ".interop" / "py-mcp230" / "bin" / "python"
    if not python.exists():
        missing("the mcp 2.3.0 interop venv is missing: scripts/interop --install-only installs it")
    authority = make_authority(tmp_path)
    port = free_port()
    documents: dict[str, dict[str, Any]] = {}
    with https_documents(authority, documents) as served:
        client_id = f"{served.base}/clients/mcp230.json"  # its port known once it listens
        documents["/clients/mcp230.json"] = client_document(client_id)
        server, _ = proxied_server(idp, port, allow_private_addresses=True, client_metadata_verify=authority.ca_file)
        async with serve(server, port=port) as running:
            child = await asyncio.create_subprocess_exec(
                str(python), str(REPO / "tests" / "support" / "proxy_mcp230_client.py"), "--url", running.url,
                "--tool", "upstream_me", "--client-metadata-url", client_id, cwd=REPO,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            )  # fmt: skip
            out, err = await child.communicate()
    assert child.returncode == 0, err.decode()
    doc = json.loads(out.decode().strip().splitlines()[-1])
    assert doc["structured"]["subject"] == "alice" and doc["structured"]["upstream"] == "alice"
    assert doc["structured"]["client"] == client_id  # the token was issued to the document's URL, no registration
    assert doc["consent_pages"] == 1
    (asked,) = doc["authorizations"]
    assert asked["client_id"] == client_id and asked["code_challenge_method"] == "S256"
    assert served.requests == ["/clients/mcp230.json"]  # fetched once (at /authorize), then kept


async def test_a_document_whose_certificate_is_not_trusted_is_refused(tmp_path: Path) -> None:
    """The same document, one proxy told of the CA and one not: the certificate check refuses it, as for anyone."""
    authority = make_authority(tmp_path)
    documents: dict[str, dict[str, Any]] = {}
    pages: dict[str, httpx.Response] = {}
    with https_documents(authority, documents) as served:
        client_id = f"{served.base}/clients/mcp230.json"
        documents["/clients/mcp230.json"] = client_document(client_id)
        for trust, verify in (("default", True), ("the test CA", str(authority.ca_file))):
            port = free_port()
            proxy = OAuthProxy(
                upstream=OIDC("https://idp.example", "toolkit", "secret"),  # never asked: nobody gets that far
                base_url=f"http://127.0.0.1:{port}",
                allow_private_addresses=True,
                client_metadata_verify=verify,
            )
            authorize = f"http://127.0.0.1:{port}/authorize?" + urlencode(
                {
                    "response_type": "code",
                    "client_id": client_id,
                    "redirect_uri": MCP230_REDIRECT_URI,
                    "state": "client-state",
                    "code_challenge": s256(new_verifier()),
                    "code_challenge_method": "S256",
                }
            )
            async with serve(Server("cimd", auth=proxy), port=port), httpx.AsyncClient(timeout=TIMEOUT) as browser:
                pages[trust] = await browser.get(authorize)

    refused, trusted = pages["default"], pages["the test CA"]
    assert refused.status_code == 400 and "Unknown application" in refused.text
    assert "could not be fetched" in refused.text and "CERTIFICATE_VERIFY_FAILED" in refused.text
    assert trusted.status_code == 200 and "Allow" in trusted.text
    assert "its metadata document at" in trusted.text and "mcp 2.3.0 by its metadata document" in trusted.text
    assert served.requests == ["/clients/mcp230.json"]  # the refused fetch never got to ask


def test_turning_the_certificate_check_off_is_refused(tmp_path: Path) -> None:
    upstream = OIDC("https://idp.example", "toolkit", "secret")
    with pytest.raises(ValueError, match="always checked"):
        OAuthProxy(upstream=upstream, base_url="https://mcp.example.com", client_metadata_verify=False)
    with pytest.raises(ValueError, match="cannot load it as a PEM bundle"):
        OAuthProxy(upstream=upstream, base_url="https://mcp.example.com", client_metadata_verify=tmp_path / "none.pem")
    context = ssl.create_default_context()
    proxy = OAuthProxy(upstream=upstream, base_url="https://mcp.example.com", client_metadata_verify=context)
    assert proxy.documents.verify is context
