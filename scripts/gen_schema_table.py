"""Generate the JSON in docs/tools-and-schemas.md from toolkit itself, so the page cannot drift.

    .venv/bin/python scripts/gen_schema_table.py          # rewrite the page
    .venv/bin/python scripts/gen_schema_table.py --check  # exit 1 if the page is stale

The page marks generated regions with ``<!-- BEGIN GENERATED: name -->`` and
``<!-- END GENERATED: name -->``. Known names:

- ``table-types``: the Python types the hint table uses (this script's ``TYPES``);
- ``hint-table``: for each return annotation, what 2026-07-28 and 2025-11-25 clients see;
- ``listing:TOOL``: the ``tools/list`` entry of TOOL, a tool defined in a python block of the page;
- ``call:TOOL:ARGUMENTS``: the ``CallToolResult`` of calling TOOL with the JSON ``ARGUMENTS``.

Everything comes off the wire of toolkit's in-memory test client, exactly as a client sees it.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import html
import json
import logging
import re
import sys
import types
from pathlib import Path
from typing import Any

from toolkit import Server
from toolkit.testing import Client

PAGE = Path(__file__).resolve().parent.parent / "docs" / "tools-and-schemas.md"
MODERN = "2026-07-28"
LEGACY = "2025-11-25"

TYPES = """\
import dataclasses
import enum
from datetime import UTC, datetime
from typing import Annotated, Literal

from pydantic import AwareDatetime, BaseModel, Field, computed_field
from typing_extensions import NotRequired, TypedDict

from toolkit import Text, ToolResult


class Forecast(BaseModel):
    city: str
    temp: float


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Point(TypedDict):
    x: int
    y: int
    label: NotRequired[str]


@dataclasses.dataclass
class Span:
    start: int
    end: int = 0


class Node(BaseModel):
    value: int
    children: list["Node"] = []


class Cat(BaseModel):
    kind: Literal["cat"]
    lives: int


class Dog(BaseModel):
    kind: Literal["dog"]
    good: bool


class Point2D(BaseModel):
    x: int
    y: int


class Point3D(BaseModel):
    x: int
    y: int
    z: int


class Profile(BaseModel):
    display_name: str = Field(serialization_alias="displayName")

    @computed_field
    @property
    def initials(self) -> str:
        return self.display_name[:1]
"""

NO_ANNOTATION = "(no annotation)"

# (return annotation, what the tool returns), both evaluated in the namespace of TYPES.
HINTS: list[tuple[str, str]] = [
    ("int", "42"),
    ("float", "21.5"),
    ("bool", "True"),
    ("None", "None"),
    ("str", "'sunny'"),
    ("list[int]", "[1, 2]"),
    ("list[str]", "['a', 'b']"),
    ("tuple[int, str]", "(1, 'a')"),
    ("dict[str, float]", "{'Paris': 21.5}"),
    ("Literal['celsius', 'fahrenheit']", "'celsius'"),
    ("Color", "Color.RED"),
    ("Forecast", "Forecast(city='Paris', temp=21.5)"),
    ("list[Forecast]", "[Forecast(city='Paris', temp=21.5)]"),
    ("Forecast | None", "None"),
    ("Point", "{'x': 1, 'y': 2}"),
    ("Span", "Span(start=1)"),
    ("Node", "Node(value=1, children=[Node(value=2)])"),
    ("Cat | Dog", "Cat(kind='cat', lives=9)"),
    ("Annotated[Cat | Dog, Field(discriminator='kind')]", "Dog(kind='dog', good=True)"),
    ("Point2D | Point3D", "Point3D(x=1, y=2, z=3)"),
    ("int | str", "7"),
    ("int | float", "1.0"),
    ("list[int] | list[str]", "[]"),
    ("Profile", "Profile(display_name='Ada')"),
    ("datetime", "datetime(2026, 6, 21, 5, 11)"),
    ("AwareDatetime", "datetime(2026, 6, 21, 5, 11, tzinfo=UTC)"),
    ("Text", "Text('sunny')"),
    ("ToolResult", "ToolResult('done')"),
    (NO_ANNOTATION, "{'a': 1}"),
]

_REGION = re.compile(
    r"(<!-- BEGIN GENERATED: (?P<name>[^>]*?) -->\n)(?P<body>.*?)(<!-- END GENERATED: (?P=name) -->)",
    re.DOTALL,
)
_PYTHON_BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)
_ABSENT: Any = object()


@dataclasses.dataclass(frozen=True)
class Row:
    hint: str
    returns: str
    natural: dict[str, Any] | None
    modern_value: Any
    legacy: dict[str, Any] | None
    legacy_value: Any


def _module(name: str, source: str, filename: str) -> dict[str, Any]:
    """Run ``source`` as a fresh module named ``name`` (registered, so dataclasses and pydantic resolve names)."""
    module = types.ModuleType(name)
    sys.modules[name] = module
    exec(compile(source, filename, "exec", dont_inherit=True), module.__dict__)
    return module.__dict__


def _namespace() -> dict[str, Any]:
    return _module("toolkit_docs_types", TYPES, "<table types>")


def _returning(hint: Any, value: Any, annotated: bool) -> Any:
    def tool() -> Any:
        return value

    tool.__annotations__ = {"return": hint} if annotated else {}
    return tool


async def _see(server: Server, version: str) -> dict[str, tuple[dict[str, Any] | None, Any]]:
    seen: dict[str, tuple[dict[str, Any] | None, Any]] = {}
    async with Client(server, protocol_version=version) as client:
        for tool in await client.list_tools():
            result = await client.call_tool(tool["name"])
            if result.get("isError"):
                raise RuntimeError(f"{tool['name']} failed: {result}")
            seen[tool["name"]] = (tool.get("outputSchema"), result.get("structuredContent", _ABSENT))
    return seen


def collect_rows() -> list[Row]:
    """What clients of 2026-07-28 and 2025-11-25 see for each return annotation in ``HINTS``."""
    namespace = _namespace()
    server = Server("schema-table")
    for index, (hint, returns) in enumerate(HINTS):
        annotated = hint != NO_ANNOTATION
        annotation = eval(hint, namespace) if annotated else None
        server.add_tool(_returning(annotation, eval(returns, namespace), annotated), name=f"row{index}")
    modern = asyncio.run(_see(server, MODERN))
    legacy = asyncio.run(_see(server, LEGACY))
    return [
        Row(hint, returns, *modern[f"row{index}"], *legacy[f"row{index}"])
        for index, (hint, returns) in enumerate(HINTS)
    ]


def _code(value: Any) -> str:
    if value is _ABSENT:
        return "—"
    text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    return "<code>" + html.escape(text, quote=False).replace("|", "&#124;") + "</code>"


def _hint(hint: str) -> str:
    if hint == NO_ANNOTATION:
        return hint
    return "<code>" + html.escape(hint, quote=False).replace("|", "&#124;") + "</code>"


def render_table(rows: list[Row]) -> str:
    lines = [
        "| Return annotation | The tool returns | `outputSchema` (2026-07-28) | `structuredContent` (2026-07-28) "
        "| `outputSchema` (2025-11-25) | `structuredContent` (2025-11-25) |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        cells = [
            _hint(row.hint),
            _hint(row.returns),
            _code(row.natural if row.natural is not None else _ABSENT),
            _code(row.modern_value),
            _code(row.legacy if row.legacy is not None else _ABSENT),
            _code(row.legacy_value),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _page_servers(page: str) -> list[Server]:
    servers: list[Server] = []
    for index, source in enumerate(_PYTHON_BLOCK.findall(page)):
        namespace = _module(f"toolkit_docs_example_{index}", source, f"<docs example {index}>")
        servers.extend(value for value in namespace.values() if isinstance(value, Server))
    return servers


def _find(servers: list[Server], name: str) -> Server:
    for server in servers:
        if name in server.tools:
            return server
    raise KeyError(f"no python block of the page defines a tool named {name!r}")


async def _listing(server: Server, name: str) -> dict[str, Any]:
    async with Client(server, protocol_version=MODERN) as client:
        return next(tool for tool in await client.list_tools() if tool["name"] == name)


async def _call(server: Server, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    async with Client(server, protocol_version=MODERN) as client:
        result = await client.call_tool(name, arguments)
    result.pop("_meta", None)
    return result


def _json_block(value: Any) -> str:
    return "```json\n" + json.dumps(value, indent=2, ensure_ascii=False) + "\n```\n"


def render_page(page: str) -> str:
    """``page`` with every generated region regenerated."""
    servers: list[Server] | None = None
    rows: list[Row] | None = None

    def regenerate(match: re.Match[str]) -> str:
        nonlocal servers, rows
        name = match.group("name")
        if name == "table-types":
            body = "```python\n" + TYPES + "```\n"
        elif name == "hint-table":
            rows = rows or collect_rows()
            body = render_table(rows)
        elif name.startswith(("listing:", "call:")):
            kind, _, rest = name.partition(":")
            tool, _, arguments = rest.partition(":")
            servers = servers if servers is not None else _page_servers(page)
            server = _find(servers, tool)
            if kind == "listing":
                body = _json_block(asyncio.run(_listing(server, tool)))
            else:
                body = _json_block(asyncio.run(_call(server, tool, json.loads(arguments or "{}"))))
        else:
            raise ValueError(f"unknown generated region {name!r}")
        return match.group(1) + body + match.group(4)

    return _REGION.sub(regenerate, page)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the page is stale; change nothing")
    options = parser.parse_args()
    logging.disable(logging.ERROR)  # the error examples log on purpose
    page = PAGE.read_text()
    fresh = render_page(page)
    if options.check:
        if fresh != page:
            print(f"{PAGE} is stale: run scripts/gen_schema_table.py", file=sys.stderr)
            return 1
        return 0
    if fresh != page:
        PAGE.write_text(fresh)
        print(f"rewrote {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
