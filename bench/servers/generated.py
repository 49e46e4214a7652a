"""A deterministic, realistic 500-tool surface, built from pydantic + typing only.

Every framework under test registers the very same function objects produced here, so the
only thing that differs between them is what the framework does with the type hints.

The mix, per tool (seeded, so identical on every run and in every framework):
- 2 to 6 parameters drawn from constrained numbers (``Annotated[int, Field(ge=..., le=...)]``),
  ``Literal`` choices, ``Optional`` shared models, ``list[Model]``, ``dict[str, int]``, booleans,
  strings with descriptions, and (for about half the tools) a per-tool nested options model;
- a return type that is a per-tool result model (nesting shared models), a shared model,
  ``list[SharedModel]``, ``dict[str, int]`` or ``SharedModel | None``.
- ten model classes are shared across tools; each tool may also own one or two classes.
"""

# The generated hints use ``typing.Optional[X]`` on purpose (the shared classes use ``X | None``):
# the two are different runtime objects (typing.Union vs types.UnionType) and frameworks must
# handle both.
# ruff: noqa: UP045

import random
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal, Optional

from pydantic import BaseModel, Field, TypeAdapter, create_model

SEED = 20260728
REQUIRED: Any = object()  # sentinel: the parameter has no default

# --- models shared across many tools ---------------------------------------------------------


class Money(BaseModel):
    """An amount in a currency."""

    amount: Annotated[float, Field(ge=0, description="Non-negative amount")]
    currency: Literal["USD", "EUR", "GBP", "JPY"] = "USD"


class Address(BaseModel):
    """A postal address."""

    street: str
    city: str
    postal_code: Annotated[str, Field(min_length=3, max_length=10)]
    country: str = "US"


class Tag(BaseModel):
    """A key/value label."""

    key: Annotated[str, Field(min_length=1, max_length=64)]
    value: str | None = None


class GeoPoint(BaseModel):
    """A WGS84 coordinate."""

    lat: Annotated[float, Field(ge=-90, le=90)]
    lon: Annotated[float, Field(ge=-180, le=180)]


class Customer(BaseModel):
    """A customer record."""

    id: Annotated[int, Field(ge=1)]
    name: str
    email: str | None = None
    address: Address | None = None
    tags: list[Tag] = []


class LineItem(BaseModel):
    """One line of an order."""

    sku: str
    quantity: Annotated[int, Field(ge=1, le=1000)]
    unit_price: Money


class Order(BaseModel):
    """An order with its lines."""

    id: Annotated[int, Field(ge=1)]
    customer: Customer
    items: list[LineItem]
    status: Literal["pending", "paid", "shipped", "cancelled"] = "pending"
    total: Money
    metadata: dict[str, int] = {}


class Page(BaseModel):
    """Pagination controls."""

    cursor: str | None = None
    limit: Annotated[int, Field(ge=1, le=100)] = 20


class DateRange(BaseModel):
    """An inclusive range of ISO dates."""

    start: Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}$")]
    end: Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}$")]


class Attachment(BaseModel):
    """A file attached to a record."""

    name: str
    size_bytes: Annotated[int, Field(ge=0)]
    mime_type: str = "application/octet-stream"
    location: GeoPoint | None = None


_MONEY = {"amount": 12.5, "currency": "EUR"}
_ADDRESS = {"street": "1 Main St", "city": "Springfield", "postal_code": "12345"}
_TAG = {"key": "env", "value": "prod"}
_GEO = {"lat": 48.85, "lon": 2.35}
_CUSTOMER = {"id": 7, "name": "Ada", "address": _ADDRESS, "tags": [_TAG]}
_LINE = {"sku": "SKU-1", "quantity": 2, "unit_price": _MONEY}

# (class, a JSON sample that validates against it)
SHARED_MODELS: list[tuple[type[BaseModel], dict[str, Any]]] = [
    (Money, _MONEY),
    (Address, _ADDRESS),
    (Tag, _TAG),
    (GeoPoint, _GEO),
    (Customer, _CUSTOMER),
    (LineItem, _LINE),
    (Order, {"id": 1, "customer": _CUSTOMER, "items": [_LINE], "total": _MONEY}),
    (Page, {"limit": 10}),
    (DateRange, {"start": "2026-01-01", "end": "2026-01-31"}),
    (Attachment, {"name": "a.txt", "size_bytes": 3, "location": _GEO}),
]

_VERBS = ["get", "list", "search", "create", "update", "delete", "sync", "export", "archive", "score"]
_NOUNS = [
    "orders",
    "customers",
    "invoices",
    "shipments",
    "tickets",
    "products",
    "reviews",
    "payments",
    "accounts",
    "reports",
    "warehouses",
    "coupons",
]
_CHOICES = [
    ("asc", "desc"),
    ("draft", "published", "archived"),
    ("low", "medium", "high", "critical"),
    ("json", "csv", "xml"),
    ("daily", "weekly", "monthly", "yearly"),
]

# A generated type: (annotation, default or REQUIRED, JSON sample value).
Spec = tuple[Any, Any, Any]


def _constrained_int(rng: random.Random, desc: str) -> Spec:
    lo = rng.choice([0, 1, 10])
    hi = lo + rng.choice([10, 100, 1000, 10_000])
    ann = Annotated[int, Field(ge=lo, le=hi, description=desc)]
    return ann, (REQUIRED if rng.random() < 0.5 else lo), lo


def _constrained_float(rng: random.Random, desc: str) -> Spec:
    hi = rng.choice([1.0, 100.0, 1e6])
    return Annotated[float, Field(gt=0, lt=hi, description=desc)], hi / 2, hi / 4


def _literal(rng: random.Random, desc: str) -> Spec:
    choices = rng.choice(_CHOICES)
    return Annotated[Literal[choices], Field(description=desc)], choices[0], choices[0]


def _string(rng: random.Random, desc: str) -> Spec:
    return Annotated[str, Field(min_length=1, max_length=200, description=desc)], REQUIRED, "x"


def _flag(rng: random.Random, desc: str) -> Spec:
    return Annotated[bool, Field(description=desc)], False, True


def _counts(rng: random.Random, desc: str) -> Spec:
    return Optional[dict[str, int]], None, {"a": 1}


def _optional_shared(rng: random.Random, desc: str) -> Spec:
    model, sample = rng.choice(SHARED_MODELS)
    return Optional[model], None, sample


def _list_shared(rng: random.Random, desc: str) -> Spec:
    model, sample = rng.choice(SHARED_MODELS)
    ann = Annotated[list[model], Field(max_length=50, description=desc)]  # type: ignore[valid-type]
    return ann, REQUIRED, [sample]


def _tags(rng: random.Random, desc: str) -> Spec:
    return Optional[list[str]], None, ["a"]


_PARAM_KINDS: list[Callable[[random.Random, str], Spec]] = [
    _constrained_int,
    _constrained_float,
    _literal,
    _string,
    _flag,
    _counts,
    _optional_shared,
    _list_shared,
    _tags,
]


def _tool_model(rng: random.Random, name: str, n_fields: int) -> tuple[type[BaseModel], dict[str, Any]]:
    """A class owned by one tool, nesting shared models and constrained fields."""
    fields: dict[str, Any] = {}
    sample: dict[str, Any] = {}
    for j in range(n_fields):
        kind = rng.choice(_PARAM_KINDS)
        ann, default, value = kind(rng, f"Field {j} of {name}")
        field = f"f{j}_{kind.__name__.strip('_')}"
        fields[field] = (ann, ... if default is REQUIRED else default)
        sample[field] = value
    model = create_model(name, __doc__=f"Options owned by one generated tool ({name}).", **fields)
    return model, sample


def _return_type(rng: random.Random, stem: str) -> tuple[Any, Any]:
    roll = rng.random()
    if roll < 0.4:
        model, sample = _tool_model(rng, f"{stem}Result", rng.randint(2, 5))
        shared, shared_sample = rng.choice(SHARED_MODELS)
        related: Any = Optional[shared]
        result = create_model(
            f"{stem}Page",
            __doc__="A page of results.",
            items=(list[model], ...),  # type: ignore[valid-type]
            related=(related, None),
            total=(Annotated[int, Field(ge=0)], ...),
        )
        return result, {"items": [sample], "related": shared_sample, "total": 1}
    if roll < 0.6:
        model, sample = rng.choice(SHARED_MODELS)
        return model, sample
    if roll < 0.8:
        model, sample = rng.choice(SHARED_MODELS)
        return list[model], [sample, sample]  # type: ignore[valid-type]
    if roll < 0.9:
        return dict[str, int], {"count": 3}
    model, sample = rng.choice(SHARED_MODELS)
    return Optional[model], sample


def _make_function(
    name: str, doc: str, params: list[tuple[str, Any, Any]], returns: Any, result: Any
) -> Callable[..., Awaitable[Any]]:
    """A real ``async def`` with real annotations, so every framework sees an ordinary function."""
    namespace: dict[str, Any] = {"_R": returns}
    required, optional = [], []
    for j, (pname, ann, default) in enumerate(params):
        namespace[f"_T{j}"] = ann
        if default is REQUIRED:
            required.append(f"{pname}: _T{j}")
        else:
            namespace[f"_D{j}"] = default
            optional.append(f"{pname}: _T{j} = _D{j}")
    adapter: list[TypeAdapter[Any]] = []

    def _result() -> Any:
        if not adapter:
            adapter.append(TypeAdapter(returns))
        return adapter[0].validate_python(result)

    namespace["_result"] = _result
    signature = ", ".join(required + optional)
    source = f"async def {name}({signature}) -> _R:\n    {doc!r}\n    return _result()\n"
    exec(source, namespace)
    fn = namespace[name]
    fn.__module__ = __name__
    return fn  # type: ignore[no-any-return]


def build_tools(count: int = 500, seed: int = SEED) -> list[Callable[..., Awaitable[Any]]]:
    """``count`` distinct async tool functions, identical for a given seed."""
    rng = random.Random(seed)
    tools = []
    for i in range(count):
        verb, noun = rng.choice(_VERBS), rng.choice(_NOUNS)
        name = f"{verb}_{noun}_{i:03d}"
        stem = f"{verb.title()}{noun.title()}{i:03d}"
        params: list[tuple[str, Any, Any]] = []
        for j in range(rng.randint(2, 6)):
            kind = rng.choice(_PARAM_KINDS)
            ann, default, _ = kind(rng, f"Parameter {j} controls the {noun} {verb}.")
            params.append((f"p{j}_{kind.__name__.strip('_')}", ann, default))
        if rng.random() < 0.5:
            model, _ = _tool_model(rng, f"{stem}Options", rng.randint(2, 6))
            params.append(("options", model, REQUIRED if rng.random() < 0.5 else None))
            if params[-1][2] is None:
                params[-1] = ("options", Optional[model], None)
        returns, result = _return_type(rng, stem)
        doc = f"{verb.title()} {noun} (generated tool {i}).\n\n    Used by the benchmark's 500-tool workload."
        tools.append(_make_function(name, doc, params, returns, result))
    return tools
