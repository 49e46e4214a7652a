"""Published and hostile OpenAPI documents through the whole OpenAPI wing, with real parts.

- GitHub's REST API description (``@octokit/openapi``, 3.0.3, 1,200+ operations, installed by
  ``scripts/apidocs --install-only``) loads through ``Server.from_openapi`` (nothing is sent);
  every generated input and output schema passes the 2020-12 metaschema and ``check_schema``;
  ``tools/list`` validates against the official schema of every protocol version toolkit serves.
- The Petstore documents (``@readme/oas-examples``, 3.0 and 3.1) served by ``toolkit run --openapi``
  over stdio against a real server implementing them (tests/support/petstore_server.py, uvicorn on
  a free 127.0.0.1 port), driven by ``toolkit.Client`` in 2026-07-28 and a 2025-11-25 session:
  JSON, form and multipart bodies, arrays and primitives as natural results, errors as ``isError``.
- Hostile documents at the source level: external ``$ref``s, ``$ref`` cycles, 100k operations, huge
  enums, a ``servers`` URL on another host (proved with a second real server that records requests).

Times and memory are printed (``-s``), never asserted.
"""

from __future__ import annotations

import base64
import hashlib
import http.server
import json
import logging
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import jsonschema_rs
import pytest
from tests.support import apidocs
from tests.support.petstore_server import API_KEY, running_petstore
from tests.support.processes import TOOLKIT
from tests.wire import assert_result_valid, assert_valid, validator

import toolkit
from toolkit import OpenAPI, Server
from toolkit._schema.checks import DIALECT_2020_12, check_schema
from toolkit._sources.openapi.documents import DocumentUnreadable, load_document
from toolkit._sources.openapi.schemas import MAX_ENUM_VALUES, OpenAPIDocumentError
from toolkit._sources.openapi.source import OpenAPISource
from toolkit._versions import KNOWN_VERSIONS, LATEST_VERSION, STRUCTURED_OUTPUT_SINCE, at_least
from toolkit.testing import Client

METASCHEMA = jsonschema_rs.validator_for({"$ref": DIALECT_2020_12}, offline=True)
"""The 2020-12 metaschema (jsonschema-rs carries it: nothing is fetched)."""
NOWHERE = "http://127.0.0.1:9"
"""A base URL nothing is sent to: these servers are built and listed, never called."""


def rss_mib() -> int:
    """This process's resident memory now, in MiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) // 1024
    return 0


# --- GitHub's REST API ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def github() -> Server:
    """GitHub's REST API as a server, loaded once for the module (the warnings about renamed
    operations are logged, not shown)."""
    path = apidocs.github()
    logging.getLogger("toolkit.openapi").setLevel(logging.ERROR)
    try:
        before = rss_mib()
        started = time.perf_counter()
        server = Server.from_openapi(path, base_url="https://api.github.com")
        elapsed = time.perf_counter() - started
    finally:
        logging.getLogger("toolkit.openapi").setLevel(logging.NOTSET)
    assert server.openapi is not None
    print(
        f"\nGitHub REST API ({path.stat().st_size // 1024} KiB): Server.from_openapi in {elapsed:.2f} s, "
        f"RSS {rss_mib()} MiB ({rss_mib() - before:+d}); {len(server.openapi.items('tools'))} tools"
    )
    return server


def test_the_github_rest_api_loads_every_operation_but_the_deprecated(github: Server) -> None:
    source = github.openapi
    assert source is not None
    document = json.loads(apidocs.github().read_text())
    methods = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}
    declared = sum(1 for item in document["paths"].values() for method in item if method in methods)
    assert declared >= 1_200
    assert source.base_url == "https://api.github.com"
    tools = source.items("tools")
    assert len(tools) + len(source.skipped) == declared
    assert len(tools) >= 1_100
    assert all(reason.startswith("deprecated") for reason in source.skipped.values()), {
        operation: reason for operation, reason in source.skipped.items() if not reason.startswith("deprecated")
    }


async def test_every_generated_github_schema_passes_the_metaschema_and_toolkits_checks(github: Server) -> None:
    async with Client(github, protocol_version=LATEST_VERSION) as client:
        listed = await client.list_tools()
    started = time.perf_counter()
    outputs = 0
    for tool in listed:
        for key, is_input in (("inputSchema", True), ("outputSchema", False)):
            if key not in tool:
                continue
            schema = tool[key]
            errors = [f"{'/'.join(map(str, e.instance_path))}: {e.message}" for e in METASCHEMA.iter_errors(schema)]
            assert not errors, (tool["name"], key, errors[:3])
            check_schema(schema, what=f"tool {tool['name']!r}: {key}", assert_formats=is_input)
            outputs += not is_input
    # most operations answer JSON, so most output schemas were checked too (869 of 1,186 at the pinned
    # version: one whose 2xx answers include one without content, such as a 204, has none)
    assert outputs > len(listed) * 2 // 3
    print(f"\n{len(listed)} input and {outputs} output schemas checked in {time.perf_counter() - started:.2f} s")


@pytest.mark.parametrize("version", KNOWN_VERSIONS)
async def test_the_github_tools_list_is_valid_in_every_protocol_version(github: Server, version: str) -> None:
    started = time.perf_counter()
    tools: list[dict[str, Any]] = []
    async with Client(github, protocol_version=version) as client:
        cursor: str | None = None
        while True:
            response = await client.request("tools/list", {"cursor": cursor} if cursor else {})
            assert_valid(response, version, method="tools/list")  # each page, as that version's schema says
            tools.extend(response["result"]["tools"])
            cursor = response["result"].get("nextCursor")
            if not cursor:
                break
    assert len(tools) == len(github.openapi.items("tools"))  # type: ignore[union-attr]
    assert len({tool["name"] for tool in tools}) == len(tools)
    with_output = [tool for tool in tools if "outputSchema" in tool]
    if at_least(version, STRUCTURED_OUTPUT_SINCE):
        assert len(with_output) > len(tools) * 2 // 3
        listing = next(tool for tool in tools if tool["name"] == "repos_list-for-org")  # GET /orgs/{org}/repos
        modern = version == LATEST_VERSION
        assert listing["outputSchema"]["type"] == ("array" if modern else "object")  # natural for 2026-07-28
    else:
        assert not with_output  # no outputSchema before 2025-06-18
    print(f"\n{version}: {len(tools)} tools listed and validated in {time.perf_counter() - started:.2f} s")


# --- the Petstore, end to end -----------------------------------------------------------------------------


PETSTORE_OPERATIONS = {
    "addPet",
    "updatePet",
    "findPetsByStatus",
    "findPetsByTags",
    "getPetById",
    "updatePetWithForm",
    "deletePet",
    "uploadFile",
    "getInventory",
    "placeOrder",
    "getOrderById",
    "deleteOrder",
    "createUser",
    "createUsersWithArrayInput",
    "createUsersWithListInput",
    "loginUser",
    "logoutUser",
    "getUserByName",
    "updateUser",
    "deleteUser",
}
FILE_BYTES = b"\x89PNG\r\n\x1a\n\x00\xff--boundary\r\n\r\nend"
"""A file whose bytes are not text and hold what a multipart body's framing is made of."""


@pytest.fixture
def petstore() -> Iterator[str]:
    """A fresh Petstore server (no pets yet): its origin."""
    with running_petstore() as url:
        yield url


def recorded(origin: str) -> list[dict[str, Any]]:
    """What the Petstore server at ``origin`` was asked, in order."""
    answer = httpx.get(f"{origin}/_recorded")
    answer.raise_for_status()
    requests: list[dict[str, Any]] = answer.json()
    return requests


@pytest.mark.parametrize("document", ["3.0", "3.1"])
@pytest.mark.parametrize("version", [LATEST_VERSION, "2025-11-25"])
async def test_the_petstore_end_to_end_over_stdio(petstore: str, document: str, version: str) -> None:
    path = apidocs.petstore(document)  # type: ignore[arg-type]
    assert json.loads(path.read_text())["servers"] == [{"url": "http://petstore.swagger.io/v2"}]
    command = [str(TOOLKIT), "run", "--openapi", str(path), "--base-url", f"{petstore}/v2"]
    command += ["--api-header", f"api_key: {API_KEY}", "--include-deprecated"]  # findPetsByTags is deprecated
    modern = version == LATEST_VERSION

    async with toolkit.Client(command, protocol_version=version) as client:

        async def call(name: str, arguments: dict[str, Any]) -> Any:
            result = await client.call_tool(name, arguments, raise_on_error=False)
            assert_result_valid(result.raw, version, "tools/call")
            return result

        def natural(result: Any, value: Any) -> None:
            assert not result.is_error, result.text
            assert result.data == value
            wrapped = not modern and not isinstance(value, dict)
            assert result.structured_content == ({"result": value} if wrapped else value)

        listed = {tool["name"]: tool for tool in await client.list_tools()}
        assert set(listed) == PETSTORE_OPERATIONS
        tool_schema = validator(version, "Tool")
        for entry in listed.values():
            assert tool_schema.is_valid(entry), (entry["name"], [e.message for e in tool_schema.iter_errors(entry)][:3])
        assert listed["getPetById"]["annotations"]["readOnlyHint"] is True
        assert listed["deletePet"]["annotations"]["destructiveHint"] is True
        assert listed["findPetsByStatus"]["outputSchema"]["type"] == ("array" if modern else "object")
        assert "outputSchema" not in listed["addPet"]  # the documents declare no 2xx answer for it
        assert "api_key" not in listed["deletePet"]["inputSchema"]["properties"]  # the configuration sends it
        assert "id" not in listed["addPet"]["inputSchema"]["properties"]  # readOnly: the server gives it

        # add two pets: no 2xx schema is declared, so the answer is text (the JSON the server sent)
        rex = {"name": "rex", "photoUrls": ["https://example.com/rex.png"], "status": "available"}
        rex["tags"] = [{"id": 1, "name": "dog"}]
        added = await call("addPet", rex)
        assert not added.is_error and added.structured_content is None, added.text
        rex = json.loads(added.text)
        assert isinstance(rex["id"], int) and rex["name"] == "rex"
        cleo = json.loads((await call("addPet", {"name": "cleo", "photoUrls": [], "status": "pending"})).text)

        # find by status: an array stays an array (2026-07-28), wrapped for the legacy session
        natural(await call("findPetsByStatus", {"status": ["available"]}), [rex])
        natural(await call("findPetsByStatus", {"status": ["available", "pending"]}), [rex, cleo])
        natural(await call("findPetsByStatus", {"status": ["sold"]}), [])
        natural(await call("findPetsByTags", {"tags": ["dog"]}), [rex])
        natural(await call("getPetById", {"petId": rex["id"]}), rex)  # the api_key header from --api-header

        # a form body: characters a form must encode arrive as they were sent
        form = await call("updatePetWithForm", {"petId": rex["id"], "name": "rex & co=1+1", "status": "sold"})
        assert not form.is_error, form.text
        rex = {**rex, "name": "rex & co=1+1", "status": "sold"}
        natural(await call("getPetById", {"petId": rex["id"]}), rex)
        natural(await call("getInventory", {}), {"sold": 1, "pending": 1})

        # a file: multipart/form-data in 3.0, the bytes themselves (application/octet-stream) in 3.1
        encoded = base64.b64encode(FILE_BYTES).decode()
        digest = {"bytes": len(FILE_BYTES), "sha256": hashlib.sha256(FILE_BYTES).hexdigest()}
        if document == "3.0":
            upload = await call("uploadFile", {"petId": rex["id"], "additionalMetadata": "front é", "file": encoded})
            expected = {"content_type": "multipart/form-data", "additionalMetadata": "front é"}
            expected["file"] = {**digest, "filename": "file", "content_type": "application/octet-stream"}
        else:
            upload = await call("uploadFile", {"petId": rex["id"], "body": encoded})
            expected = {"content_type": "application/octet-stream", "file": digest}
        assert not upload.is_error, upload.text
        assert upload.data["code"] == 200 and json.loads(upload.data["message"]) == expected

        # the store and users: a primitive stays a primitive
        order = (await call("placeOrder", {"petId": cleo["id"], "quantity": 2, "status": "placed"})).data
        assert order == {"petId": cleo["id"], "quantity": 2, "status": "placed", "complete": False, "id": order["id"]}
        natural(await call("getOrderById", {"orderId": order["id"]}), order)
        assert not (await call("deleteOrder", {"orderId": order["id"]})).is_error
        ada = {"username": "ada", "password": "secret", "email": "ada@example.com", "userStatus": 1}
        assert not (await call("createUser", ada)).is_error
        natural(await call("loginUser", {"username": "ada", "password": "secret"}), "logged in user session:ada")
        natural(await call("getUserByName", {"username": "ada"}), ada)

        # errors: an HTTP error status is an isError result naming the operation, the status and the body
        missing = await call("getPetById", {"petId": 999})
        assert missing.is_error and missing.structured_content is None
        assert missing.text == (
            "Tool 'getPetById': GET /pet/{petId}: HTTP 404 Not Found: "
            '{"code":404,"type":"error","message":"Pet not found: 999"}'
        )
        refused = await call("loginUser", {"username": "ada", "password": "wrong"})
        assert refused.is_error and "HTTP 400 Bad Request" in refused.text
        invalid = await call("getPetById", {"petId": "one"})
        assert invalid.is_error and "petId" in invalid.text  # the input schema, checked before any request

        # delete, then it is gone
        deleted = await call("deletePet", {"petId": rex["id"]})
        assert not deleted.is_error, deleted.text
        gone = await call("getPetById", {"petId": rex["id"]})
        assert gone.is_error and "HTTP 404" in gone.text
        natural(await call("findPetsByStatus", {"status": ["available", "pending", "sold"]}), [cleo])

    asked = recorded(petstore)
    assert {entry["host"] for entry in asked} == {petstore.removeprefix("http://")}
    assert all(entry["path"].startswith("/v2/") for entry in asked)
    assert {"method": "GET", "path": "/v2/pet/findByStatus", "query": "status=available&status=pending"} in [
        {key: entry[key] for key in ("method", "path", "query")} for entry in asked
    ]  # an array in the query, exploded as the document says


# --- hostile documents --------------------------------------------------------------------------------------


def document(paths: dict[str, Any], schemas: dict[str, Any] | None = None, **components: Any) -> dict[str, Any]:
    return {
        "openapi": "3.0.3",
        "info": {"title": "hostile", "version": "1"},
        "paths": paths,
        "components": {"schemas": schemas or {}, **components},
    }


def answers(schema: dict[str, Any]) -> dict[str, Any]:
    """An operation's ``responses`` whose 200 is JSON of ``schema``."""
    return {"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}}


FINE = {"get": {"operationId": "fine", "responses": answers({"type": "string"})}}
"""An operation nothing is wrong with, beside the hostile one: it stays."""


def only_left_out(built: Server | OpenAPISource, operation: str) -> str:
    """``operation`` is left out and the fine one kept: why it was left out."""
    source = built.openapi if isinstance(built, Server) else built
    assert source is not None
    assert set(source.items("tools")) == {"fine"}
    assert set(source.skipped) == {operation}
    return source.skipped[operation]


@pytest.mark.parametrize(
    "reference", ["https://example.com/schemas/pet.json", "pet.yaml#/Pet", "//example.com/pet", "pet.json"]
)
def test_an_external_ref_in_a_schema_leaves_its_operation_out_saying_what_to_do(
    reference: str, caplog: pytest.LogCaptureFixture
) -> None:
    hostile = document(
        {"/fine": FINE, "/pets": {"get": {"responses": answers({"$ref": "#/components/schemas/Pet"})}}},
        {"Pet": {"type": "object", "properties": {"owner": {"$ref": reference}}}},
    )
    for built in (Server.from_openapi(hostile, base_url=NOWHERE), OpenAPI(hostile, base_url=NOWHERE).source()):
        reason = only_left_out(built, "GET /pets")
        assert reason.startswith(f"'#/components/schemas/Pet/properties/owner/$ref' refers to {reference!r}")
        assert "outside this document; toolkit never fetches a reference" in reason
        assert "into this document's components and refer to it as '#/components/...'" in reason
        assert reason.endswith("(reached from '#/paths/~1pets/get/responses/200/content/application~1json/schema')")
    assert any("GET /pets is left out" in record.getMessage() for record in caplog.records)


def test_an_external_ref_where_the_document_structure_needs_an_object_refuses_the_document() -> None:
    hostile = document({"/fine": FINE, "/pets": {"parameters": [{"$ref": "https://example.com/p.yaml"}], **FINE}})
    for make in (
        lambda: Server.from_openapi(hostile, base_url=NOWHERE),
        lambda: OpenAPI(hostile, base_url=NOWHERE).source(),
    ):
        with pytest.raises(OpenAPIDocumentError) as caught:
            make()
        assert str(caught.value).startswith("'#/paths/~1pets/parameters/0/$ref' refers to 'https://example.com/p.yaml'")
        assert "toolkit never fetches a reference" in str(caught.value)
        assert caught.value.pointer == "#/paths/~1pets/parameters/0/$ref"


@pytest.mark.parametrize(
    "schemas",
    [
        {"Pet": {"$ref": "#/components/schemas/Pet"}},
        {"Pet": {"$ref": "#/components/schemas/Dog"}, "Dog": {"$ref": "#/components/schemas/Cat"},
         "Cat": {"$ref": "#/components/schemas/Pet"}},
    ],
)  # fmt: skip
def test_a_schema_ref_cycle_of_nothing_but_refs_leaves_its_operation_out(schemas: dict[str, Any]) -> None:
    hostile = document({"/fine": FINE, "/pets": {"get": {"responses": answers({"$ref": "#/components/schemas/Pet"})}}})
    hostile["components"]["schemas"] = schemas
    reason = only_left_out(Server.from_openapi(hostile, base_url=NOWHERE), "GET /pets")
    assert reason.startswith("'#/components/schemas/Pet' refers back to itself without describing any part")
    assert "#/components/schemas/Pet → " in reason
    assert "make one of these schemas describe something" in reason


def test_a_recursive_schema_that_describes_something_is_served() -> None:
    node = {
        "type": "object",
        "properties": {"children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}}},
    }
    built = Server.from_openapi(document({"/tree": {"get": {"operationId": "tree", "responses": answers(node)}}},
                                         {"Node": node}), base_url=NOWHERE)  # fmt: skip
    assert built.openapi is not None and set(built.openapi.items("tools")) == {"tree"}


@pytest.mark.parametrize(
    ("paths", "components", "where"),
    [
        ({"/pets": {"$ref": "#/paths/~1dogs"}, "/dogs": {"$ref": "#/paths/~1pets"}}, {}, "#/paths/~1pets"),
        (
            {"/pets": {"parameters": [{"$ref": "#/components/parameters/A"}], **FINE}},
            {"parameters": {"A": {"$ref": "#/components/parameters/B"}, "B": {"$ref": "#/components/parameters/A"}}},
            "#/paths/~1pets/parameters/0",
        ),
    ],
)
def test_a_ref_cycle_in_the_documents_structure_refuses_it_naming_the_place(
    paths: dict[str, Any], components: dict[str, Any], where: str
) -> None:
    with pytest.raises(OpenAPIDocumentError) as caught:
        Server.from_openapi(document(paths, **components), base_url=NOWHERE)
    assert str(caught.value).startswith(f"'{where}': its references go round in a circle ({where} → ")
    assert caught.value.pointer == where


def test_a_ref_cycle_in_the_documents_structure_says_what_to_do() -> None:
    hostile = document({"/pets": {"$ref": "#/paths/~1dogs"}, "/dogs": {"$ref": "#/paths/~1pets"}})
    with pytest.raises(OpenAPIDocumentError, match="point one of them at the object itself"):
        Server.from_openapi(hostile, base_url=NOWHERE)


def test_a_huge_enum_is_refused_above_the_bound_naming_the_place() -> None:
    def with_enum(values: int) -> dict[str, Any]:
        parameter = {"name": "code", "in": "query", "schema": {"type": "integer", "enum": list(range(values))}}
        return document({"/fine": FINE, "/codes": {"get": {"parameters": [parameter], "responses": answers({})}}})

    at_bound = Server.from_openapi(with_enum(MAX_ENUM_VALUES), base_url=NOWHERE)
    assert at_bound.openapi is not None and at_bound.openapi.skipped == {}
    started = time.perf_counter()
    reason = only_left_out(Server.from_openapi(with_enum(1_000_000), base_url=NOWHERE), "GET /codes")
    print(f"\nan enum of 1,000,000 values refused in {time.perf_counter() - started:.2f} s")
    assert reason.startswith(
        f"'#/paths/~1codes/get/parameters/0/schema/enum' lists 1000000 values, "
        f"more than toolkit's bound of {MAX_ENUM_VALUES}"
    )


def test_a_huge_enum_message_says_what_to_do() -> None:
    parameter = {"name": "code", "in": "query", "schema": {"enum": list(range(MAX_ENUM_VALUES + 1))}}
    hostile = document({"/fine": FINE, "/codes": {"get": {"parameters": [parameter], "responses": answers({})}}})
    reason = only_left_out(Server.from_openapi(hostile, base_url=NOWHERE), "GET /codes")
    assert "RouteMap" in reason


HUNDRED_THOUSAND = """
import json, resource, sys, time
from toolkit import Server
document = json.loads(sys.stdin.read())
started = time.perf_counter()
built = Server.from_openapi(document, base_url="http://127.0.0.1:9")
elapsed = time.perf_counter() - started
tools = built.openapi.items("tools")
print(json.dumps({"tools": len(tools), "skipped": len(built.openapi.skipped), "seconds": elapsed,
                  "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}))
"""


@pytest.mark.slow
@pytest.mark.timeout(900)  # a hang guard: the load takes ~20-30 s on 2 busy cores
def test_a_hundred_thousand_operations_load() -> None:
    """No bound on the number of operations (docs/openapi.md lists none): all of them load.

    In a process of its own: its memory is its own, and coverage's tracing does not slow it."""
    operations = 100_000
    item = {"type": "object", "properties": {"id": {"type": "integer"}, "name": {"type": "string"}}}
    parameter = {"name": "id", "in": "path", "required": True, "schema": {"type": "integer"}}
    listing = answers({"type": "array", "items": {"$ref": "#/components/schemas/Item"}})
    paths = {
        f"/items{n}/{{id}}": {"get": {"operationId": f"get_items_{n}", "parameters": [parameter], "responses": listing}}
        for n in range(operations)
    }
    loaded = subprocess.run(
        [sys.executable, "-c", HUNDRED_THOUSAND],
        input=json.dumps(document(paths, {"Item": item})),
        capture_output=True,
        text=True,
        check=False,
    )
    assert loaded.returncode == 0, loaded.stderr[-4000:]
    figures = json.loads(loaded.stdout.splitlines()[-1])
    assert figures["tools"] == operations and figures["skipped"] == 0
    print(f"\n{operations} operations loaded in {figures['seconds']:.1f} s; peak RSS {figures['peak_rss_mib']} MiB")


# --- where calls go ----------------------------------------------------------------------------------------


@pytest.fixture
def decoy() -> Iterator[str]:
    """Another Petstore server, on another port: where the document's ``servers`` point."""
    with running_petstore() as url:
        yield url


async def test_a_servers_url_on_another_host_is_never_used_silently(petstore: str, decoy: str, tmp_path: Path) -> None:
    hostile = json.loads(apidocs.petstore("3.1").read_text())
    hostile["servers"] = [{"url": f"{decoy}/v2"}]
    pet = {"name": "rex", "photoUrls": []}

    with pytest.raises(ValueError, match=r"where should calls go\?") as caught:
        Server.from_openapi(hostile)
    assert f"{decoy}/v2" in str(caught.value) and "use_servers=True" in str(caught.value)

    configured = Server.from_openapi(hostile, base_url=f"{petstore}/v2", auth=toolkit.APIKey("api_key", API_KEY))
    async with toolkit.Client(configured) as client:
        added = json.loads((await client.call_tool("addPet", pet)).text)
        assert (await client.call_tool("getPetById", {"petId": added["id"]})).data == added
    written = tmp_path / "petstore.json"
    written.write_text(json.dumps(hostile))
    command = [str(TOOLKIT), "run", "--openapi", str(written), "--base-url", f"{petstore}/v2"]
    async with toolkit.Client(command) as client:
        assert (await client.call_tool("findPetsByStatus", {"status": ["available", "sold"]})).data == []

    assert recorded(decoy) == []  # nothing reached the document's server
    asked = [(entry["method"], entry["path"]) for entry in recorded(petstore)]
    assert asked == [("POST", "/v2/pet"), ("GET", f"/v2/pet/{added['id']}"), ("GET", "/v2/pet/findByStatus")]

    chosen = Server.from_openapi(hostile, use_servers=True)  # asked for: then, and only then, it is used
    async with toolkit.Client(chosen) as client:
        assert not (await client.call_tool("addPet", pet)).is_error
    assert [(entry["method"], entry["path"]) for entry in recorded(decoy)] == [("POST", "/v2/pet")]


# --- a document fetched from a URL: bounded in size and time ---------------------------------------------


class _Hostile(http.server.BaseHTTPRequestHandler):
    """``/declared``: a Content-Length over the bound; ``/chunked``: no length, a body over it; ``/slow``: silent."""

    def do_GET(self) -> None:
        if self.path == "/slow":
            time.sleep(3)  # past the client's bound: it has gone, nothing is written
            return
        body = b'{"openapi": "3.1.0", "x": "' + b"a" * 50_000 + b'"}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        if self.path == "/declared":
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for start in range(0, len(body), 4096):
            piece = body[start : start + 4096]
            self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
        self.wfile.write(b"0\r\n\r\n")

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def hostile_url() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hostile)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_a_document_url_is_read_within_its_size_and_time_bounds(hostile_url: str) -> None:
    with pytest.raises(DocumentUnreadable, match=r"/declared: \d+ bytes, over the limit of 10000 bytes"):
        load_document(f"{hostile_url}/declared", max_bytes=10_000)
    with pytest.raises(DocumentUnreadable, match=r"/chunked: over the limit of 10000 bytes; not read further"):
        load_document(f"{hostile_url}/chunked", max_bytes=10_000)
    with pytest.raises(DocumentUnreadable, match=r"not done within 0.5 s"):
        load_document(f"{hostile_url}/slow", timeout=0.5)
    document, url = load_document(f"{hostile_url}/chunked")  # within the default bound: read whole
    assert document["openapi"] == "3.1.0" and url == f"{hostile_url}/chunked"
