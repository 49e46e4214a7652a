"""A real FastAPI app for the OpenAPI tests: every kind of parameter, body and answer a generated tool meets.

Served in process (``Server.from_fastapi(app)``, httpx's ASGI transport) and by uvicorn in a
subprocess (``python -m uvicorn tests.support.openapi_app:app``), its document is FastAPI's own
``app.openapi()``. What it checks itself (the bearer token, the API keys, basic credentials) is
checked by FastAPI dependencies, so a credential reaches it exactly as a client would send it.
"""

from __future__ import annotations

import asyncio
import secrets
from typing import Annotated, Literal
from urllib.parse import parse_qs

from fastapi import Cookie, Depends, FastAPI, Header, HTTPException, Query, Request, Response
from fastapi.responses import JSONResponse, PlainTextResponse, RedirectResponse, StreamingResponse
from fastapi.security import (
    APIKeyCookie,
    APIKeyHeader,
    APIKeyQuery,
    HTTPAuthorizationCredentials,
    HTTPBasic,
    HTTPBasicCredentials,
    HTTPBearer,
)
from pydantic import BaseModel, Field

TOKEN = "test-token-123"
API_KEY = "key-456"
USER, PASSWORD = "ada", "lovelace"
HUGE_BYTES = 1_000_000

app = FastAPI(title="Items API", version="1.0.0", description="Items, pets and the odd failure.")


class NewItem(BaseModel):
    name: str = Field(description="What the item is called")
    price: float = Field(ge=0)
    tags: list[str] = []


class Item(NewItem):
    id: int


class Cat(BaseModel):
    kind: Literal["cat"] = "cat"
    name: str
    indoor: bool


class Dog(BaseModel):
    kind: Literal["dog"] = "dog"
    name: str
    good: bool = True


ITEMS: dict[int, Item] = {
    1: Item(id=1, name="lamp", price=12.5, tags=["home"]),
    2: Item(id=2, name="chair", price=40.0, tags=["home", "wood"]),
}


# --- parameters and bodies --------------------------------------------------------------------------


@app.get("/items", operation_id="list_items", tags=["items"], summary="List the items")
def list_items(
    tag: Annotated[list[str] | None, Query(description="Only items with one of these tags")] = None,
    limit: Annotated[int, Query(ge=1, le=100, description="At most this many")] = 10,
) -> list[Item]:
    """Every item, the newest last."""
    found = [item for item in ITEMS.values() if not tag or set(tag) & set(item.tags)]
    return found[:limit]


@app.get("/items/{item_id}", operation_id="get_item", tags=["items"], summary="One item")
def get_item(item_id: int) -> Item:
    if item_id not in ITEMS:
        raise HTTPException(404, f"no item {item_id}")
    return ITEMS[item_id]


@app.post("/items", operation_id="create_item", tags=["items"], status_code=201, summary="Add an item")
def create_item(item: NewItem) -> Item:
    made = Item(id=max(ITEMS) + 1, **item.model_dump())
    ITEMS[made.id] = made
    return made


@app.put("/items/{item_id}", operation_id="replace_item", tags=["items"])
def replace_item(item_id: int, item: NewItem) -> Item:
    replaced = Item(id=item_id, **item.model_dump())
    ITEMS[item_id] = replaced
    return replaced


@app.delete("/items/{item_id}", operation_id="delete_item", tags=["items", "admin"], status_code=204)
def delete_item(item_id: int) -> Response:
    ITEMS.pop(item_id, None)
    return Response(status_code=204)


@app.get("/count", operation_id="count_items", tags=["items"])
def count_items() -> int:
    return len(ITEMS)


@app.get("/echo/{word}", operation_id="echo_everything", tags=["echo"])
def echo_everything(
    word: str,
    times: int,
    x_trace: Annotated[str, Header(description="A trace id")],
    flags: Annotated[list[int], Query()] = [],  # noqa: B006 (FastAPI reads the default)
    theme: Annotated[str, Cookie()] = "light",
) -> dict[str, object]:
    """Path, query (an array too), header and cookie, as the app received them."""
    return {"word": word, "times": times, "trace": x_trace, "flags": flags, "theme": theme}


@app.get("/remember", operation_id="remember_theme", tags=["echo"])
def remember_theme(response: Response) -> dict[str, str]:
    """Sets a cookie, as an API starting a session would."""
    response.set_cookie("theme", "remembered")
    return {"set": "theme"}


@app.get("/pets/{name}", operation_id="get_pet", tags=["pets"])
def get_pet(name: str) -> Cat | Dog:
    """A cat when the name starts with c, else a dog."""
    return Cat(name=name, indoor=True) if name.startswith("c") else Dog(name=name)


@app.get("/hello", operation_id="hello_text", response_class=PlainTextResponse, tags=["echo"])
def hello_text(name: str = "world") -> str:
    return f"hello {name}"


FORM_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "application/x-www-form-urlencoded": {
                "schema": {
                    "type": "object",
                    "properties": {"user": {"type": "string"}, "remember": {"type": "boolean"}},
                    "required": ["user"],
                }
            }
        },
    }
}


@app.post("/login", operation_id="form_login", tags=["echo"], openapi_extra=FORM_BODY)
async def form_login(request: Request) -> dict[str, object]:
    """A form body (parsed by hand: no python-multipart here), echoed with its content type."""
    fields = parse_qs((await request.body()).decode())
    return {"content_type": request.headers.get("content-type"), "fields": fields}


# --- answers that go wrong ---------------------------------------------------------------------------


@app.get("/fail/{status}", operation_id="fail_with", tags=["errors"])
def fail_with(status: int) -> dict[str, str]:
    """Answer ``status`` with a body longer than the excerpt a tool quotes."""
    return JSONResponse({"error": "it went wrong", "padding": "x" * 5000}, status_code=status)  # type: ignore[return-value]


@app.get("/broken", operation_id="broken_item", tags=["errors"], response_model=Item)
def broken_item() -> JSONResponse:
    """Declares an Item and sends something else (FastAPI does not check a Response it is handed)."""
    return JSONResponse({"id": "not a number"})


@app.get("/slow", operation_id="slow", tags=["errors"])
async def slow(seconds: float = 60.0) -> dict[str, float]:
    await asyncio.sleep(seconds)
    return {"slept": seconds}


@app.get("/huge", operation_id="huge", tags=["errors"])
def huge(streamed: bool = False) -> Response:
    """``HUGE_BYTES`` of JSON: with a Content-Length, or streamed without one."""
    if not streamed:
        return Response(b'"' + b"a" * (HUGE_BYTES - 2) + b'"', media_type="application/json")

    def chunks():  # type: ignore[no-untyped-def]
        yield b'"'
        for _ in range(HUGE_BYTES // 1000 - 1):
            yield b"a" * 1000
        yield b"a" * 998
        yield b'"'

    return StreamingResponse(chunks(), media_type="application/json")


@app.get("/away", operation_id="redirect_away", tags=["errors"])
def redirect_away() -> RedirectResponse:
    return RedirectResponse("http://elsewhere.invalid/items", status_code=302)


@app.get("/moved", operation_id="redirect_here", tags=["items"])
def redirect_here() -> RedirectResponse:
    """Moved to /count on the same origin (a relative Location)."""
    return RedirectResponse("/count", status_code=307)


@app.get("/old", operation_id="old_items", tags=["items"], deprecated=True)
def old_items() -> list[Item]:
    return list(ITEMS.values())


# --- credentials --------------------------------------------------------------------------------------

bearer = HTTPBearer()
basic = HTTPBasic()
key_header = APIKeyHeader(name="X-API-Key")
key_query = APIKeyQuery(name="api_key")
key_cookie = APIKeyCookie(name="session")


def check_bearer(credentials: Annotated[HTTPAuthorizationCredentials, Depends(bearer)]) -> str:
    if not secrets.compare_digest(credentials.credentials, TOKEN):
        raise HTTPException(401, "bad token")
    return credentials.credentials


@app.get("/secret", operation_id="read_secret", tags=["auth"])
def read_secret(token: Annotated[str, Depends(check_bearer)], request: Request) -> dict[str, str | None]:
    """Bearer-protected; says which of the caller's headers reached it."""
    return {"secret": "42", "tenant": request.headers.get("x-tenant"), "agent": request.headers.get("x-agent")}


@app.get("/keyed/header", operation_id="keyed_header", tags=["auth"])
def keyed_header(key: Annotated[str, Depends(key_header)]) -> dict[str, bool]:
    return {"ok": key == API_KEY}


@app.get("/keyed/query", operation_id="keyed_query", tags=["auth"])
def keyed_query(key: Annotated[str, Depends(key_query)]) -> dict[str, bool]:
    return {"ok": key == API_KEY}


@app.get("/keyed/cookie", operation_id="keyed_cookie", tags=["auth"])
def keyed_cookie(key: Annotated[str, Depends(key_cookie)]) -> dict[str, bool]:
    return {"ok": key == API_KEY}


@app.get("/basic", operation_id="basic_user", tags=["auth"])
def basic_user(credentials: Annotated[HTTPBasicCredentials, Depends(basic)]) -> dict[str, str]:
    if credentials.username != USER or credentials.password != PASSWORD:
        raise HTTPException(401, "bad credentials")
    return {"user": credentials.username}
