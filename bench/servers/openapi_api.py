"""A tiny real HTTP API for the ``openapi`` scenario's calls: one JSON operation and its OpenAPI document.

``GET /items?limit=N`` (1 <= N <= 100, default 10) answers a JSON array of the first N items of
``bench/driver.py``'s ``expected_items()`` pattern (``{"id", "name", "price", "tags"}``), so
``limit=10`` is exactly the ``items`` workload's ten items; ``GET /openapi.json`` answers
``DOCUMENT``, the OpenAPI 3.1 document describing that one operation (``operationId``
``list_items``). Anything else: 404; a bad ``limit``: 400.

Standard library only, one asyncio ``Protocol`` speaking HTTP/1.1 with keep-alive, every answer
encoded once and reused: the API's own CPU is not what the scenario measures (it measures the
process calling it), so it should cost as little and vary as little as possible.

    python bench/servers/openapi_api.py --port 8124
    python bench/servers/openapi_api.py --write-document /tmp/items.json   # the document, then exit
"""

import argparse
import asyncio
import contextlib
import json
from typing import Any
from urllib.parse import parse_qs, urlsplit

OPERATION = "list_items"
DOCUMENT: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "Items API", "version": "1.0.0"},
    "paths": {
        "/items": {
            "get": {
                "operationId": OPERATION,
                "summary": "List items",
                "description": "The first `limit` items.",
                "parameters": [
                    {
                        "name": "limit",
                        "in": "query",
                        "required": False,
                        "schema": {"type": "integer", "minimum": 1, "maximum": 100, "default": 10},
                    }
                ],
                "responses": {
                    "200": {
                        "description": "The items",
                        "content": {
                            "application/json": {
                                "schema": {"type": "array", "items": {"$ref": "#/components/schemas/Item"}}
                            }
                        },
                    }
                },
            }
        }
    },
    "components": {
        "schemas": {
            "Item": {
                "type": "object",
                "properties": {
                    "id": {"type": "integer"},
                    "name": {"type": "string"},
                    "price": {"type": "number"},
                    "tags": {"type": "array", "items": {"type": "string"}},
                },
                "required": ["id", "name", "price", "tags"],
            }
        }
    },
}


def items(limit: int) -> list[dict[str, Any]]:
    """The first ``limit`` items (``limit=10``: ``bench/driver.py``'s ``expected_items()``)."""
    return [{"id": i, "name": f"item-{i}", "price": 1.5 * i, "tags": ["bench", f"t{i % 3}"]} for i in range(limit)]


def _response(status: str, body: bytes, content_type: str = "application/json") -> bytes:
    head = f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {len(body)}\r\n\r\n"
    return head.encode("ascii") + body


NOT_FOUND = _response("404 Not Found", b'{"detail":"not found"}')
BAD_LIMIT = _response("400 Bad Request", b'{"detail":"limit must be an integer from 1 to 100"}')
DOCUMENT_RESPONSE = _response("200 OK", json.dumps(DOCUMENT).encode())
_ITEMS: dict[bytes, bytes] = {}  # request target -> the whole response, encoded once


def answer(target: bytes) -> bytes:
    cached = _ITEMS.get(target)
    if cached is not None:
        return cached
    url = urlsplit(target.decode("latin-1"))
    if url.path == "/openapi.json":
        return DOCUMENT_RESPONSE
    if url.path != "/items":
        return NOT_FOUND
    values = parse_qs(url.query).get("limit", ["10"])
    try:
        limit = int(values[-1])
    except ValueError:
        return BAD_LIMIT
    if not 1 <= limit <= 100:
        return BAD_LIMIT
    response = _response("200 OK", json.dumps(items(limit), separators=(",", ":")).encode())
    if len(_ITEMS) < 1000:
        _ITEMS[target] = response
    return response


class Http11(asyncio.Protocol):
    """HTTP/1.1 requests on one connection: the head is read up to its blank line, a body skipped."""

    def __init__(self) -> None:
        self.buffer = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        assert self.transport is not None
        self.buffer += data
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head = self.buffer[:end]
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value.strip())
            if len(self.buffer) < end + 4 + length:
                return
            self.buffer = self.buffer[end + 4 + length :]
            parts = head.split(b"\r\n", 1)[0].split(b" ")
            if len(parts) != 3 or parts[0] != b"GET":
                self.transport.write(NOT_FOUND)
                continue
            self.transport.write(answer(parts[1]))


async def serve(host: str, port: int) -> None:
    server = await asyncio.get_running_loop().create_server(Http11, host, port)
    async with server:
        await server.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8124)
    parser.add_argument("--write-document", metavar="PATH", help="write the OpenAPI document to PATH and exit")
    args = parser.parse_args()
    if args.write_document:
        with open(args.write_document, "w", encoding="utf-8") as f:
            json.dump(DOCUMENT, f, indent=1)
        return
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(args.host, args.port))


if __name__ == "__main__":
    main()
