"""Generate the wire JSON shown in the docs from toolkit itself, so the pages cannot drift.

    .venv/bin/python scripts/gen_docs.py          # rewrite the stale regions
    .venv/bin/python scripts/gen_docs.py --check  # exit 1 if a page is stale; change nothing

It covers every page of docs/ except tools-and-schemas.md (scripts/gen_schema_table.py owns
that one). A generated region is written between two HTML comments:

    <!-- BEGIN GENERATED: KIND:TARGET@VERSION:JSON -->
    ...
    <!-- END GENERATED: KIND:TARGET@VERSION:JSON -->

``@VERSION`` is optional (default 2026-07-28), and so is ``:JSON`` (default ``{}``). The server
is the one defined by the nearest Python block above the region (a program, or a snippet
include of a file under examples/). Kinds:

- ``listing:TOOL`` -- the tool's entry in ``tools/list``;
- ``call:TOOL:ARGUMENTS`` -- the ``CallToolResult`` of ``tools/call``;
- ``input-required:TOOL:ARGUMENTS`` -- the first answer of a call that asks the client for
  input (2026-07-28), the client declaring elicitation, sampling and roots;
- ``server-request:TOOL:ARGUMENTS`` -- the first request the server sends the client during
  the call (legacy versions);
- ``request:METHOD:PARAMS`` -- the result of any request;
- ``matrix:TOOL,TOOL,...:ARGUMENTS_BY_TOOL`` -- a table: per protocol version, the output
  schema and the structured content each tool gives.

Everything comes off the wire of toolkit's in-memory test client, exactly as a client sees it,
except a ``requestState``, which is sealed with a per-process key and a random nonce: only its
format number is kept.
"""

from __future__ import annotations

import argparse
import asyncio
import html
import importlib.util
import itertools
import json
import logging
import re
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolkit import KNOWN_VERSIONS, LATEST_VERSION, Server
from toolkit.testing import Client

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
OWNED_ELSEWHERE = {"tools-and-schemas.md"}

REGION = re.compile(
    r"(<!-- BEGIN GENERATED: (?P<name>[^>]*?) -->\n)(?P<body>.*?)(<!-- END GENERATED: (?P=name) -->)",
    re.DOTALL,
)
FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?P<info>[^\n]*)\n(?P<code>.*?)^(?P=indent)```[ \t]*$", re.DOTALL | re.M)
SNIPPET = re.compile(r'^--8<-- "(?P<path>[^"]+)"\s*$')
FRAGMENT = re.compile(r"^#\s*fragment\b", re.IGNORECASE)
TITLE = re.compile(r'title="([^"]+)"')
_modules = itertools.count()


@dataclass(frozen=True)
class Block:
    """One fenced code block of a page."""

    page: Path
    line: int
    language: str
    title: str | None
    code: str

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    @property
    def snippet(self) -> Path | None:
        """The file a ``--8<-- "path"`` block includes, if that is all the block holds."""
        match = SNIPPET.match(self.code.strip())
        return ROOT / match["path"] if match else None

    @property
    def is_python(self) -> bool:
        return self.language in ("python", "py")

    @property
    def is_fragment(self) -> bool:
        """A Python block that says, on its first line, that it is not a whole program."""
        return self.is_python and bool(FRAGMENT.match(self.code.lstrip()))

    @property
    def source(self) -> str:
        path = self.snippet
        return path.read_text() if path is not None else self.code


def blocks(page: Path, text: str | None = None) -> list[Block]:
    text = page.read_text() if text is None else text
    found = []
    for match in FENCE.finditer(text):
        info = match["info"].strip()
        language = info.split(" ")[0].strip("{}.") if info else ""
        title = TITLE.search(info)
        code = "\n".join(line.removeprefix(match["indent"]) for line in match["code"].splitlines()) + "\n"
        line = text.count("\n", 0, match.start()) + 1
        found.append(Block(page, line, language, title[1] if title else None, code))
    return found


def load_module(source: str, name: str | None = None) -> Any:
    """Run ``source`` as a module from a real file, the way ``toolkit run`` imports a program."""
    name = name or f"toolkit_docs_block_{next(_modules)}"
    with tempfile.TemporaryDirectory(prefix="toolkit-docs-") as directory:
        path = Path(directory) / f"{name}.py"
        path.write_text(source)
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return module


def server_of(module: Any) -> Server | None:
    server = getattr(module, "server", None)
    return server if isinstance(server, Server) else None


# --- what a client sees --------------------------------------------------------------------------


def _answer(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "decline"}


def _sample(params: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": "..."}, "model": "docs"}


def _roots(params: dict[str, Any]) -> dict[str, Any]:
    return {"roots": []}


def _shorten_state(result: dict[str, Any]) -> dict[str, Any]:
    state = result.get("requestState")
    if isinstance(state, str):
        result["requestState"] = state.split(".", 1)[0] + ".…"
    return result


async def _listing(server: Server, version: str, tool: str) -> Any:
    async with Client(server, protocol_version=version) as client:
        return next(entry for entry in await client.list_tools() if entry["name"] == tool)


async def _call(server: Server, version: str, tool: str, arguments: dict[str, Any]) -> Any:
    async with Client(server, protocol_version=version) as client:
        return await client.call_tool(tool, arguments)


async def _input_required(server: Server, version: str, tool: str, arguments: dict[str, Any]) -> Any:
    async with Client(server, protocol_version=version, elicitation=_answer, sampling=_sample, roots=_roots) as client:
        result = await client.call_tool(tool, arguments, follow_input=False)
    if result.get("resultType") != "input_required":
        raise ValueError(f"{tool}({arguments}) asked for no input under {version}: {result}")
    return _shorten_state(result)


async def _server_request(server: Server, version: str, tool: str, arguments: dict[str, Any]) -> Any:
    async with Client(server, protocol_version=version, elicitation=_answer, sampling=_sample, roots=_roots) as client:
        await client.call_tool(tool, arguments)
        requests = [message for message in client.messages if "id" in message and "method" in message]
    if not requests:
        raise ValueError(f"{tool}({arguments}) sent the client no request under {version}")
    return requests[0]


async def _request(server: Server, version: str, method: str, params: dict[str, Any]) -> Any:
    async with Client(server, protocol_version=version) as client:
        return await client.result(method, params)


def _code(value: Any) -> str:
    if value is _ABSENT:
        return "(absent)"
    text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    return "<code>" + html.escape(text, quote=False).replace("|", "&#124;") + "</code>"


_ABSENT: Any = object()


async def _matrix(server: Server, tools: list[str], arguments: dict[str, Any]) -> str:
    lines = []
    for tool in tools:
        lines += [
            f"`{tool}`",
            "",
            "| Protocol version | `outputSchema` | `structuredContent` | `content` |",
            "|---|---|---|---|",
        ]
        for version in reversed(KNOWN_VERSIONS):
            listing = await _listing(server, version, tool)
            result = await _call(server, version, tool, arguments.get(tool, {}))
            cells = [
                version,
                _code(listing.get("outputSchema", _ABSENT)),
                _code(result.get("structuredContent", _ABSENT)),
                _code(result["content"]),
            ]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def _json_block(value: Any) -> str:
    return "```json\n" + json.dumps(value, indent=2, ensure_ascii=False) + "\n```\n"


# --- regions ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Region:
    kind: str
    target: str
    version: str
    data: Any

    @classmethod
    def parse(cls, name: str) -> Region:
        kind, _, rest = name.partition(":")
        target, _, data = rest.partition(":")
        target, _, version = target.partition("@")
        version = version or LATEST_VERSION
        if version not in KNOWN_VERSIONS:
            raise ValueError(f"generated region {name!r}: unknown protocol version {version!r}")
        return cls(kind, target, version, json.loads(data) if data else {})

    async def render(self, server: Server) -> str:
        if self.kind == "listing":
            return _json_block(await _listing(server, self.version, self.target))
        if self.kind == "call":
            return _json_block(await _call(server, self.version, self.target, self.data))
        if self.kind == "input-required":
            return _json_block(await _input_required(server, self.version, self.target, self.data))
        if self.kind == "server-request":
            return _json_block(await _server_request(server, self.version, self.target, self.data))
        if self.kind == "request":
            return _json_block(await _request(server, self.version, self.target, self.data))
        if self.kind == "matrix":
            return await _matrix(server, self.target.split(","), self.data)
        raise ValueError(f"unknown kind of generated region {self.kind!r}")


def _programs_before(page: Path, text: str) -> Iterator[tuple[int, Server]]:
    """Each Python program of the page that defines a ``server``, with the offset where its block ends."""
    for match, block in zip(FENCE.finditer(text), blocks(page, text), strict=True):
        if block.is_python and not block.is_fragment:
            server = server_of(load_module(block.source))
            if server is not None:
                yield match.end(), server


def render_page(page: Path, text: str | None = None) -> str:
    """The page with every generated region regenerated."""
    text = page.read_text() if text is None else text
    programs = list(_programs_before(page, text)) if REGION.search(text) else []

    def regenerate(match: re.Match[str]) -> str:
        above = [server for end, server in programs if end <= match.start()]
        if not above:
            raise ValueError(f"{page.name}: region {match['name']!r} has no Python program above it")
        body = asyncio.run(Region.parse(match["name"]).render(above[-1]))
        return match.group(1) + body + match.group(4)

    return REGION.sub(regenerate, text)


def pages() -> list[Path]:
    return sorted(path for path in DOCS.glob("*.md") if path.name not in OWNED_ELSEWHERE)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a page is stale; change nothing")
    options = parser.parse_args()
    logging.disable(logging.ERROR)  # examples that fail on purpose log it
    stale = []
    for page in pages():
        text = page.read_text()
        fresh = render_page(page, text)
        if fresh != text:
            stale.append(page)
            if not options.check:
                page.write_text(fresh)
                print(f"rewrote {page.relative_to(ROOT)}")
    if options.check and stale:
        names = ", ".join(str(page.relative_to(ROOT)) for page in stale)
        print(f"stale: {names}; run .venv/bin/python scripts/gen_docs.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
