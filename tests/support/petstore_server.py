"""A small real server implementing the Petstore documents of ``@readme/oas-examples`` (3.0 and 3.1).

    with running_petstore() as url:      # uvicorn in a subprocess on a free 127.0.0.1 port, always stopped
        toolkit run --openapi petstore.json --base-url {url}/v2

The documents say their API lives at ``http://petstore.swagger.io/v2``: every operation is served
under ``/v2``, on pets, orders and users held in memory (a fresh process starts with none). What
the documents leave open is decided here the way the public Petstore behaves: a created pet gets
the next id; an unknown id is 404 ``{"code": 404, "type": "error", "message": ...}``; an id that is
not an integer is 400; ``getPetById`` and ``getInventory`` (security ``api_key``) answer 401 without
the ``api_key`` header, whose value is ``API_KEY``.

Form and multipart bodies are parsed with the standard library (``urllib.parse`` and ``email``), so
the server needs no ``python-multipart``: ``updatePetWithForm`` reads
``application/x-www-form-urlencoded``; ``uploadFile`` reads ``multipart/form-data`` (3.0) or
``application/octet-stream`` (3.1) and says in its ``ApiResponse`` message what it received.

Every request is recorded (method, path, query, ``Host``) and ``GET /_recorded`` (outside the
documents) lists them: a test proves where calls went.
"""

from __future__ import annotations

import contextlib
import email.parser
import email.policy
import hashlib
import json
import subprocess
import urllib.parse
from collections.abc import Iterator
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.types import ASGIApp, Receive, Scope, Send
from tests.support.processes import PYTHON, REPO, free_port, stop, wait_for_port

API_KEY = "special-key"
"""The ``api_key`` header value ``getPetById`` and ``getInventory`` require."""

PETS: dict[int, dict[str, Any]] = {}
ORDERS: dict[int, dict[str, Any]] = {}
USERS: dict[str, dict[str, Any]] = {}
RECORDED: list[dict[str, Any]] = []
_NEXT_ID = [1]


def _next_id() -> int:
    _NEXT_ID[0] += 1
    return _NEXT_ID[0] - 1


def _problem(status: int, message: str) -> JSONResponse:
    """An error answer, shaped as the documents' ``ApiResponse``."""
    return JSONResponse({"code": status, "type": "error", "message": message}, status_code=status)


def _identifier(request: Request, name: str) -> int | JSONResponse:
    try:
        return int(request.path_params[name])
    except ValueError:
        return _problem(400, f"Invalid ID supplied: {request.path_params[name]!r}")


async def _json_object(request: Request) -> dict[str, Any] | JSONResponse:
    if not request.headers.get("content-type", "").startswith("application/json"):
        return _problem(415, f"send application/json, not {request.headers.get('content-type')!r}")
    try:
        body = json.loads(await request.body())
    except ValueError:
        return _problem(400, "the body is not JSON")
    return body if isinstance(body, dict) else _problem(400, "the body is not a JSON object")


def _unauthorised(request: Request) -> JSONResponse | None:
    if request.headers.get("api_key") != API_KEY:
        return _problem(401, "send the api_key header")
    return None


# --- pets ------------------------------------------------------------------------------------------


async def add_pet(request: Request) -> Response:
    body = await _json_object(request)
    if isinstance(body, Response):
        return body
    if not isinstance(body.get("name"), str) or not isinstance(body.get("photoUrls"), list):
        return _problem(405, "Invalid input: a pet needs a name and photoUrls")
    pet = {**body, "id": _next_id()}
    PETS[pet["id"]] = pet
    return JSONResponse(pet)


async def update_pet(request: Request) -> Response:
    body = await _json_object(request)
    if isinstance(body, Response):
        return body
    if not isinstance(body.get("id"), int):
        return _problem(400, "Invalid ID supplied")
    if body["id"] not in PETS:
        return _problem(404, f"Pet not found: {body['id']}")
    PETS[body["id"]] = body
    return JSONResponse(body)


async def find_by_status(request: Request) -> Response:
    wanted = request.query_params.getlist("status")
    if not wanted or not set(wanted) <= {"available", "pending", "sold"}:
        return _problem(400, f"Invalid status value: {wanted}")
    return JSONResponse([pet for pet in PETS.values() if pet.get("status") in wanted])


async def find_by_tags(request: Request) -> Response:
    wanted = set(request.query_params.getlist("tags"))
    found = [pet for pet in PETS.values() if wanted & {tag.get("name") for tag in pet.get("tags", [])}]
    return JSONResponse(found)


async def pet(request: Request) -> Response:
    pet_id = _identifier(request, "petId")
    if isinstance(pet_id, Response):
        return pet_id
    if request.method == "GET":
        refused = _unauthorised(request)
        if refused is not None:
            return refused
    if pet_id not in PETS:
        return _problem(404, f"Pet not found: {pet_id}")
    if request.method == "GET":
        return JSONResponse(PETS[pet_id])
    if request.method == "DELETE":
        del PETS[pet_id]
        return JSONResponse({"code": 200, "type": "unknown", "message": str(pet_id)})
    # POST: updatePetWithForm, application/x-www-form-urlencoded
    kind = request.headers.get("content-type", "")
    if not kind.startswith("application/x-www-form-urlencoded"):
        return _problem(415, f"send a form, not {kind!r}")
    fields = urllib.parse.parse_qs((await request.body()).decode(), keep_blank_values=True, strict_parsing=False)
    for name in ("name", "status"):
        if name in fields:
            PETS[pet_id][name] = fields[name][-1]
    return JSONResponse(PETS[pet_id])


async def upload_file(request: Request) -> Response:
    pet_id = _identifier(request, "petId")
    if isinstance(pet_id, Response):
        return pet_id
    if pet_id not in PETS:
        return _problem(404, f"Pet not found: {pet_id}")
    kind = request.headers.get("content-type", "")
    body = await request.body()
    received: dict[str, Any] = {"content_type": kind.split(";")[0]}
    if kind.startswith("multipart/form-data"):
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            b"Content-Type: " + kind.encode("latin-1") + b"\r\n\r\n" + body
        )
        if not message.is_multipart():
            return _problem(400, "a multipart body without parts")
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            payload = part.get_payload(decode=True)
            if name == "file":
                received["file"] = {
                    "filename": part.get_filename(),
                    "content_type": part.get_content_type(),
                    "bytes": len(payload),
                    "sha256": hashlib.sha256(payload).hexdigest(),
                }
            else:
                received[str(name)] = payload.decode()
    elif kind.startswith("application/octet-stream"):
        received["file"] = {"bytes": len(body), "sha256": hashlib.sha256(body).hexdigest()}
    else:
        return _problem(415, f"send multipart/form-data or application/octet-stream, not {kind!r}")
    return JSONResponse({"code": 200, "type": "upload", "message": json.dumps(received, sort_keys=True)})


# --- the store and users ------------------------------------------------------------------------------


async def inventory(request: Request) -> Response:
    refused = _unauthorised(request)
    if refused is not None:
        return refused
    counts: dict[str, int] = {}
    for each in PETS.values():
        status = str(each.get("status", "unknown"))
        counts[status] = counts.get(status, 0) + 1
    return JSONResponse(counts)


async def place_order(request: Request) -> Response:
    body = await _json_object(request)
    if isinstance(body, Response):
        return body
    if body.get("petId") not in PETS:
        return _problem(400, f"Invalid Order: no pet {body.get('petId')}")
    order = {"complete": False, **body, "id": _next_id()}
    ORDERS[order["id"]] = order
    return JSONResponse(order)


async def order(request: Request) -> Response:
    order_id = _identifier(request, "orderId")
    if isinstance(order_id, Response):
        return order_id
    if order_id not in ORDERS:
        return _problem(404, f"Order not found: {order_id}")
    if request.method == "DELETE":
        del ORDERS[order_id]
        return Response(status_code=200)
    return JSONResponse(ORDERS[order_id])


async def create_user(request: Request) -> Response:
    body = await _json_object(request)
    if isinstance(body, Response):
        return body
    USERS[str(body.get("username"))] = body
    return JSONResponse(body)


async def user(request: Request) -> Response:
    name = request.path_params["username"]
    if name not in USERS:
        return _problem(404, f"User not found: {name}")
    if request.method == "DELETE":
        del USERS[name]
        return Response(status_code=200)
    if request.method == "PUT":
        body = await _json_object(request)
        if isinstance(body, Response):
            return body
        USERS.pop(name)
        USERS[str(body.get("username", name))] = body
        return Response(status_code=200)
    return JSONResponse(USERS[name])


async def login(request: Request) -> Response:
    name, password = request.query_params.get("username"), request.query_params.get("password")
    if name not in USERS or USERS[name].get("password") != password:
        return _problem(400, "Invalid username/password supplied")
    return JSONResponse(f"logged in user session:{name}")


async def logout(request: Request) -> Response:
    return JSONResponse({"code": 200, "type": "unknown", "message": "ok"})


async def recorded(request: Request) -> Response:
    return JSONResponse([entry for entry in RECORDED if entry["path"] != "/_recorded"])


class Recorder:
    """Record every request this server gets, before routing (a 404 is recorded too)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = {name.decode("latin-1"): value.decode("latin-1") for name, value in scope["headers"]}
            query = scope["query_string"].decode("latin-1")
            RECORDED.append({"method": scope["method"], "path": scope["path"], "query": query, "host": headers["host"]})
        await self.app(scope, receive, send)


routes = [
    Route("/pet", add_pet, methods=["POST"]),
    Route("/pet", update_pet, methods=["PUT"]),
    Route("/pet/findByStatus", find_by_status, methods=["GET"]),
    Route("/pet/findByTags", find_by_tags, methods=["GET"]),
    Route("/pet/{petId}", pet, methods=["GET", "POST", "DELETE"]),
    Route("/pet/{petId}/uploadImage", upload_file, methods=["POST"]),
    Route("/store/inventory", inventory, methods=["GET"]),
    Route("/store/order", place_order, methods=["POST"]),
    Route("/store/order/{orderId}", order, methods=["GET", "DELETE"]),
    Route("/user", create_user, methods=["POST"]),
    Route("/user/login", login, methods=["GET"]),
    Route("/user/logout", logout, methods=["GET"]),
    Route("/user/{username}", user, methods=["GET", "PUT", "DELETE"]),
]
app = Recorder(Starlette(routes=[Mount("/v2", routes=routes), Route("/_recorded", recorded, methods=["GET"])]))


@contextlib.contextmanager
def running_petstore() -> Iterator[str]:
    """This server under uvicorn in a subprocess on a free 127.0.0.1 port: its origin; stopped on exit."""
    port = free_port()
    argv = [str(PYTHON), "-m", "uvicorn", "tests.support.petstore_server:app", "--host", "127.0.0.1"]
    argv += ["--port", str(port), "--log-level", "warning", "--timeout-graceful-shutdown", "1"]
    process = subprocess.Popen(argv, cwd=REPO, stdin=subprocess.DEVNULL)
    try:
        wait_for_port(port, process=process)
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(process)
