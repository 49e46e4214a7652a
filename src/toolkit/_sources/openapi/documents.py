"""An OpenAPI document from where the user keeps it: a mapping, a JSON or YAML file, or a URL fetched once.

Reading is bounded: a file or an answer over ``max_bytes`` is refused before it is parsed, a URL
is fetched with a timeout (redirects followed, at most five), and a YAML document whose aliases
would expand past ``MAX_NODES`` values (the "billion laughs") is refused before anything walks it.
YAML needs PyYAML (the ``openapi`` extra); JSON needs nothing. Nothing here resolves a ``$ref``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import pydantic_core

MAX_DOCUMENT_BYTES: Final = 64 * 1024 * 1024
"""The GitHub REST API's description is about 12 MB of JSON: room for five of it."""
FETCH_TIMEOUT: Final = 30.0
MAX_NODES: Final = 5_000_000
"""Values a document may hold once YAML aliases are expanded (the GitHub document: about 1.6 million)."""


class DocumentUnreadable(ValueError):
    """The document could not be read: where from, and why."""


def is_url(location: str) -> bool:
    return location.startswith(("http://", "https://"))


def load_document(
    source: Mapping[str, Any] | str | os.PathLike[str],
    *,
    max_bytes: int = MAX_DOCUMENT_BYTES,
    timeout: float = FETCH_TIMEOUT,
) -> tuple[dict[str, Any], str | None]:
    """The document as a dict, and the URL it came from (``None`` for a file or a mapping).

    ``source``: a mapping (taken as it is), a path to a ``.json``/``.yaml``/``.yml`` file, or an
    ``http(s)://`` URL. A file or answer that is not JSON is read as YAML.
    """
    if isinstance(source, Mapping):
        return dict(source), None
    location = os.fspath(source)
    if is_url(location):
        return parse_document(_fetch(location, max_bytes=max_bytes, timeout=timeout), location), location
    path = Path(location)
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise DocumentUnreadable(f"{location}: {size} bytes, over the limit of {max_bytes} bytes")
        data = path.read_bytes()
    except OSError as exc:
        raise DocumentUnreadable(f"cannot read the OpenAPI document {location}: {exc.strerror or exc}") from None
    return parse_document(data, location), None


def parse_document(data: bytes, where: str) -> dict[str, Any]:
    """JSON if it is JSON, else YAML; the top must be an object."""
    stripped = data.lstrip()
    if stripped[:1] in (b"{", b"["):
        try:
            document = pydantic_core.from_json(data)
        except ValueError as exc:
            raise DocumentUnreadable(f"{where}: not valid JSON: {exc}") from None
    else:
        document = _yaml(data, where)
    if not isinstance(document, dict):
        raise DocumentUnreadable(f"{where}: an OpenAPI document is an object at its top, not {type(document).__name__}")
    return document


def _yaml(data: bytes, where: str) -> Any:
    try:
        import yaml  # type: ignore[import-untyped]  # noqa: PLC0415 - only a YAML document needs it
    except ImportError:
        raise DocumentUnreadable(
            f"{where} is not JSON, and reading YAML needs PyYAML: pip install 'toolkit-mcp[openapi]'"
        ) from None
    try:
        document = yaml.load(data, Loader=_loader(yaml))  # a SafeLoader subclass
        expanded = _expanded_size(document, {})
    except yaml.YAMLError as exc:
        raise DocumentUnreadable(f"{where}: not valid JSON or YAML: {exc}") from None
    except RecursionError:
        raise DocumentUnreadable(f"{where}: nested too deeply to read") from None
    if expanded > MAX_NODES:
        raise DocumentUnreadable(
            f"{where}: its YAML aliases expand to {expanded} values, over the limit of {MAX_NODES} (refused unread)"
        )
    return document


def _loader(yaml: Any) -> Any:
    """PyYAML's safe loader with the JSON data model: timestamps stay strings (``format: date`` examples)."""

    class Loader(yaml.SafeLoader):  # type: ignore[misc]
        pass

    Loader.add_constructor("tag:yaml.org,2002:timestamp", Loader.construct_yaml_str)
    return Loader


def _expanded_size(node: Any, seen: dict[int, int]) -> int:
    """Values in ``node`` counted as a tree (a shared, aliased value once per place it appears); on the
    way, keys YAML read as numbers or booleans (``200:`` under ``responses``) become strings, as in JSON."""
    if not isinstance(node, dict | list):
        return 1
    known = seen.get(id(node))
    if known is not None:
        return known
    seen[id(node)] = 1  # a cycle (a recursive alias) counts once and stops here
    if isinstance(node, dict) and not all(isinstance(key, str) for key in node):
        items = [(_key(key), value) for key, value in node.items()]
        node.clear()
        node.update(items)
    children = node.values() if isinstance(node, dict) else node
    total = 1
    for child in children:
        total += _expanded_size(child, seen)
        if total > MAX_NODES:
            break
    seen[id(node)] = total
    return total


def _key(key: Any) -> str:
    if isinstance(key, bool):
        return "true" if key else "false"
    return "null" if key is None else str(key)


def _fetch(url: str, *, max_bytes: int, timeout: float) -> bytes:
    """The body at ``url`` (GET, redirects followed), within ``timeout`` seconds in all and ``max_bytes``."""
    import httpx  # noqa: PLC0415 - only a document given by URL is fetched

    deadline = time.monotonic() + timeout
    try:
        with (
            httpx.Client(timeout=timeout, follow_redirects=True, max_redirects=5) as client,
            client.stream("GET", url, headers={"accept": "application/json, application/yaml;q=0.9, */*;q=0.5"}) as got,
        ):
            if got.status_code != 200:
                raise DocumentUnreadable(f"fetching the OpenAPI document {url}: HTTP {got.status_code}")
            declared = got.headers.get("content-length")
            if declared is not None and declared.isdigit() and int(declared) > max_bytes:
                raise DocumentUnreadable(f"{url}: {declared} bytes, over the limit of {max_bytes} bytes")
            body = bytearray()
            for chunk in got.iter_bytes():
                body += chunk
                if len(body) > max_bytes:
                    raise DocumentUnreadable(f"{url}: over the limit of {max_bytes} bytes; not read further")
                if time.monotonic() > deadline:
                    raise DocumentUnreadable(f"fetching the OpenAPI document {url}: not done within {timeout:g} s")
            return bytes(body)
    except httpx.TimeoutException:
        raise DocumentUnreadable(f"fetching the OpenAPI document {url}: not done within {timeout:g} s") from None
    except httpx.HTTPError as exc:
        raise DocumentUnreadable(f"fetching the OpenAPI document {url}: {exc or type(exc).__name__}") from None
