"""An existing FastAPI application with its own routes, and an MCP endpoint mounted inside it.

Run it:  uvicorn asgi_mount:app --app-dir examples --port 8000
         (or: python examples/asgi_mount.py)

    GET  http://127.0.0.1:8000/health                the app's own routes
    GET  http://127.0.0.1:8000/api/products?q=mug
    POST http://127.0.0.1:8000/ai/mcp                the MCP endpoint (both protocol eras)

Starlette, and so FastAPI, runs the lifespan of the outermost application only. toolkit's
app has a lifespan of its own (it enters ``Server(lifespan=...)``, here the catalog that both
the routes and the tools use, and looks after the legacy HTTP sessions), so the host
application enters it from its own lifespan.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from fastapi import FastAPI
from pydantic import BaseModel

from toolkit import Context, Server, ToolError


class Product(BaseModel):
    sku: str
    name: str
    price_eur: float
    stock: int


class Catalog:
    """Stands in for a database connection pool: opened at startup, closed at shutdown."""

    def __init__(self) -> None:
        self.products: dict[str, Product] = {}

    async def open(self) -> None:
        self.products = {
            "MUG-1": Product(sku="MUG-1", name="Blue mug", price_eur=12.5, stock=40),
            "MUG-2": Product(sku="MUG-2", name="Travel mug", price_eur=19.0, stock=0),
            "TEA-1": Product(sku="TEA-1", name="Green tea, 100 g", price_eur=7.9, stock=120),
        }

    async def close(self) -> None:
        self.products = {}

    def search(self, query: str) -> list[Product]:
        return [product for product in self.products.values() if query.lower() in product.name.lower()]


catalog = Catalog()


@contextlib.asynccontextmanager
async def open_catalog(server: Server) -> AsyncIterator[Catalog]:
    await catalog.open()
    try:
        yield catalog
    finally:
        await catalog.close()


server = Server("shop", version="1.0.0", lifespan=open_catalog)


@server.tool
def search_products(query: str, ctx: Context) -> list[Product]:
    """Products whose name contains the query (case-insensitive)."""
    shop: Catalog = ctx.lifespan
    return shop.search(query)


@server.tool
def stock_level(sku: str, ctx: Context) -> int:
    """How many units of a product are in stock."""
    shop: Catalog = ctx.lifespan
    product = shop.products.get(sku)
    if product is None:
        raise ToolError(f"No product {sku!r}; search_products finds SKUs.")
    return product.stock


mcp_app = server.http_app(path="/mcp")


@contextlib.asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    # toolkit's lifespan runs Server(lifespan=open_catalog) and looks after the legacy HTTP
    # sessions; a mounted app's lifespan does not run by itself, so enter it here.
    async with mcp_app.lifespan(app):
        yield


app = FastAPI(title="Shop", lifespan=lifespan)


@app.get("/health")
async def health() -> dict[str, str]:
    return {"status": "ok", "mcp": "/ai/mcp"}


@app.get("/api/products")
async def products(q: str = "") -> list[Product]:
    return catalog.search(q)


app.mount("/ai", mcp_app)


if __name__ == "__main__":
    import uvicorn

    uvicorn.run(app, host="127.0.0.1", port=8000)
