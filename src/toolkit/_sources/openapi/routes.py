"""Which operation becomes what (``RouteMap``), under which name, with which annotations.

- Route maps are tried in order; the first that matches an operation decides its kind. With none
  matching, an operation is a tool (fastmcp's default too: an API's GETs often take query
  parameters a resource cannot carry, and a model can call a tool but not read a resource on its
  own, as a host decides what to read). A ``"resource"`` map applies to GET operations only, and
  only to those a URI can carry (no request body, no required header or cookie parameter): one
  without path parameters is a resource, one with them a template (``"template"`` means the same).
- A tool's name is its ``operationId``, sanitised to the tool-name rule of the MCP spec (2025-11-25
  and 2026-07-28, "Tool Names": 1 to 128 characters of ``A-Z a-z 0-9 _ - .``; ``list pets!`` →
  ``list_pets``), else made of the method and the path (``GET /pets/{petId}`` → ``get_pets_petId``).
  A name two operations would share gets ``_2``, ``_3``, ... in document order; every name that
  differs from the one the operation asked for is reported (``OpenAPISource.renamed``; a collision
  is also a warning in the log).
- Annotations come from the method's HTTP semantics (RFC 9110 §9.2): GET, HEAD, OPTIONS and TRACE
  are read-only and idempotent; PUT and DELETE idempotent; DELETE destructive. POST, PUT and PATCH
  leave ``destructiveHint`` unset (the spec's default: it may be). Every one is open-world: it
  reaches a system outside the server.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from typing import Any, Final, Literal

RouteKind = Literal["tool", "resource", "template", "exclude"]
ROUTE_KINDS: Final[tuple[RouteKind, ...]] = ("tool", "resource", "template", "exclude")
HTTP_METHODS: Final = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
"""The operations a Path Item Object may hold, in the order they are read."""

MAX_NAME: Final = 128
_NOT_IN_NAME: Final = re.compile(r"[^A-Za-z0-9_.-]+")
_SAFE: Final = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})


@dataclass(frozen=True)
class RouteMap:
    """Turn the operations it matches into ``kind``: ``"tool"``, ``"resource"`` (or ``"template"``), ``"exclude"``.

    An operation matches when its method is one of ``methods`` (``"*"``: any), ``pattern`` (a
    regular expression) is found in its path (``re.search``: anchor it with ``^``/``$``), and it
    carries every tag of ``tags`` (none: any operation). The first map that matches decides.

    >>> RouteMap(methods=["GET"], kind="resource")          # every GET a resource or template
    >>> RouteMap(pattern=r"^/admin/", kind="exclude")        # nothing under /admin
    >>> RouteMap(tags={"internal"}, kind="exclude")
    """

    methods: Collection[str] | Literal["*"] = "*"
    pattern: str | re.Pattern[str] = ""
    tags: Collection[str] = field(default_factory=frozenset)
    kind: RouteKind = "tool"

    def __post_init__(self) -> None:
        if self.kind not in ROUTE_KINDS:
            raise ValueError(f"RouteMap: kind={self.kind!r} is not one of {', '.join(map(repr, ROUTE_KINDS))}")
        if self.methods != "*":
            if isinstance(self.methods, str):
                raise TypeError(f'RouteMap: methods= takes a list, e.g. methods=[{self.methods!r}], or "*"')
            methods = frozenset(method.upper() for method in self.methods)
            unknown = sorted(methods - {method.upper() for method in HTTP_METHODS})
            if unknown:
                raise ValueError(f"RouteMap: {unknown} are not HTTP methods an OpenAPI operation has")
            object.__setattr__(self, "methods", methods)
        if isinstance(self.tags, str):
            raise TypeError(f"RouteMap: tags= takes a list of tags, e.g. tags=[{self.tags!r}]")
        object.__setattr__(self, "tags", frozenset(self.tags))
        try:
            compiled = re.compile(self.pattern) if isinstance(self.pattern, str) else self.pattern
        except re.error as exc:
            raise ValueError(f"RouteMap: pattern={self.pattern!r} is not a regular expression: {exc}") from None
        object.__setattr__(self, "_compiled", compiled)

    def matches(self, method: str, path: str, tags: Collection[str]) -> bool:
        """Whether this map applies to the operation ``method path`` carrying ``tags``."""
        if self.methods != "*" and method.upper() not in self.methods:
            return False
        if self.tags and not frozenset(self.tags) <= frozenset(tags):
            return False
        compiled: re.Pattern[str] = self._compiled  # type: ignore[attr-defined]
        return compiled.search(path) is not None


def route_kind(
    route_maps: Iterable[RouteMap], method: str, path: str, tags: Collection[str], *, readable: bool
) -> RouteKind:
    """The kind the first fitting map gives ``method path`` (``"tool"`` if none): a resource map fits
    only a GET a URI can carry (``readable``); ``"template"`` is returned as ``"resource"``."""
    for route in route_maps:
        if route.kind in ("resource", "template") and (method.upper() != "GET" or not readable):
            continue
        if route.matches(method, path, tags):
            return "resource" if route.kind == "template" else route.kind
    return "tool"


def sanitized(name: str, limit: int = MAX_NAME) -> str:
    """``name`` in the tool-name alphabet, cut to ``limit``: each run of other characters one ``_``, and
    the ends of a name that needed it trimmed of ``_`` (``list pets!`` → ``list_pets``; empty if
    nothing is left). A name already in the alphabet is only cut."""
    cleaned = _NOT_IN_NAME.sub("_", name)
    if cleaned != name:
        cleaned = cleaned.strip("_")
    return cleaned[:limit]


def derived_name(method: str, path: str, limit: int = MAX_NAME) -> str:
    """A name for an operation without an ``operationId``: ``GET /pets/{petId}`` → ``get_pets_petId``."""
    segments = [sanitized(segment.replace("{", "").replace("}", "")) for segment in path.split("/")]
    return "_".join([method.lower(), *(segment.strip("_") for segment in segments if segment.strip("_"))])[:limit]


class Names:
    """Tool names handed out in document order: unique, each within ``limit`` characters."""

    def __init__(self, limit: int = MAX_NAME) -> None:
        self.limit = limit
        self.taken: set[str] = set()

    def claim(self, wanted: str) -> str:
        """``wanted`` if free, else ``wanted_2``, ``wanted_3``, ... (cut so the suffix fits)."""
        name = wanted[: self.limit]
        number = 1
        while name in self.taken:
            number += 1
            suffix = f"_{number}"
            name = wanted[: self.limit - len(suffix)] + suffix
        self.taken.add(name)
        return name


def annotations_for(method: str) -> dict[str, Any]:
    """The tool annotations an HTTP method implies (RFC 9110 §9.2.1 safe, §9.2.2 idempotent)."""
    upper = method.upper()
    annotations: dict[str, Any] = {}
    if upper in _SAFE:
        annotations["readOnlyHint"] = True
        annotations["idempotentHint"] = True
    else:
        annotations["readOnlyHint"] = False
        annotations["idempotentHint"] = upper in ("PUT", "DELETE")
        if upper == "DELETE":
            annotations["destructiveHint"] = True
    annotations["openWorldHint"] = True
    return annotations
