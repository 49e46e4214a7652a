"""Same-document references: JSON pointers into an OpenAPI document, and ``$defs`` names.

The translator (``schemas.py``) and the request plans (``requests.py``) both follow references
and never fetch one (SEP-2106). Here: a pointer's tokens escaped and read back (RFC 6901), a
component's ``$defs`` name, ``References`` (one document's references followed and checked, each
schema reference named once), the check that a definition does not reach itself through nothing
but references, and ``Definitions`` (which definitions a translated schema reaches).
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Final, Literal

from ..._schema.keywords import REFERENCE_KEYWORDS, SUBSCHEMA, SUBSCHEMA_LIST, SUBSCHEMA_MAP, children
from ..._types import REF_PREFIX

_NAME: Final = re.compile(r"[A-Za-z0-9._-]+")


class OpenAPIDocumentError(ValueError):
    """A document (or a part of it) toolkit refuses; the message names where (a JSON pointer such as
    '#/paths/~1pets/get/responses/200') and what is wrong / what to do.

    ``pointer`` is that place, as a URI fragment of the document (``#/components/schemas/Pet``).
    """

    def __init__(self, message: str, *, pointer: str = "") -> None:
        super().__init__(message)
        self.pointer = pointer


def escape_token(token: str) -> str:
    """``token`` as one JSON Pointer reference token (RFC 6901 §3)."""
    return token.replace("~", "~0").replace("/", "~1")


def def_name(component: str) -> str:
    """The ``$defs`` name of the component schema ``component``: itself when it is in OpenAPI's
    alphabet ``[A-Za-z0-9._-]`` (every valid component name is), else each other character as ``:``
    and two hex digits per UTF-8 byte. One-to-one, and free of anything a JSON pointer escapes."""
    if _NAME.fullmatch(component):
        return component
    return "".join(c if _NAME.fullmatch(c) else "".join(f":{b:02x}" for b in c.encode()) for c in component) or ":"


def pointer(tokens: tuple[str, ...]) -> str:
    """The JSON pointer (a URI fragment: ``#/a/b``) of the reference tokens ``tokens``."""
    return "#" + "".join("/" + escape_token(token) for token in tokens)


Trail = tuple[Any, str] | str
"""Where a node sits: ``(parent trail, token)``, or the pointer of the root; rendered only for messages."""


def render(trail: Trail) -> str:
    """The JSON pointer (a URI fragment) of ``trail``."""
    tokens: list[str] = []
    while not isinstance(trail, str):
        trail, token = trail
        tokens.append(escape_token(token))
    return trail + "".join("/" + token for token in reversed(tokens))


def defs_entry(reference: str) -> str | None:
    """The ``$defs`` entry a ``#/$defs/<Name>[/...]`` reference is in (pointer escapes undone)."""
    if not reference.startswith(REF_PREFIX):
        return None
    token = reference[len(REF_PREFIX) :].split("/", 1)[0]
    return urllib.parse.unquote(token).replace("~1", "/").replace("~0", "~")


class References:
    """The same-document references of one OpenAPI document, followed and checked.

    A schema reference is named (``schema_name``) and its target checked once per ``$ref``
    string; a refused one is refused again, quickly, wherever it appears.
    """

    def __init__(self, document: Mapping[str, Any], version: Literal["3.0", "3.1"]) -> None:
        self._document = document
        self._version = version
        self._targets: dict[str, tuple[str, ...]] = {}
        """Each definition name handed out: the pointer tokens of its schema in the document."""
        self._names: dict[str, str] = {}
        """A schema ``$ref`` string: its definition name."""
        self._refused: dict[str, str] = {}
        """A schema ``$ref`` string: why it is refused (wherever it appears)."""

    def locate(self, node: Any, *, where: str) -> tuple[Any, str]:
        """``node`` itself, or, when it is a Reference Object, what it refers to; and where that sits.

        The place is ``where`` without a ``$ref``: the one to name in messages about the node, and
        the ``where`` of the schemas inside it. Chains of references are followed; a 3.1
        reference's ``summary`` and ``description`` replace the target's (OpenAPI 3.1 §4.8.23).
        External references and cycles are refused.
        """
        overrides: dict[str, Any] = {}
        seen: list[str] = []
        here = where
        while isinstance(node, Mapping) and "$ref" in node:
            reference = node["$ref"]
            if self._version == "3.1":
                for key in ("summary", "description"):
                    if key in node and key not in overrides:
                        overrides[key] = node[key]
            tokens = self.parse(reference, f"{here}/$ref")
            target = pointer(tokens)
            if target in seen or target == where:
                chain = " → ".join([where, *seen, target])
                raise OpenAPIDocumentError(
                    f"'{where}': its references go round in a circle ({chain}) and never reach an object; "
                    "point one of them at the object itself",
                    pointer=where,
                )
            seen.append(target)
            node = self.lookup(tokens, f"{here}/$ref", reference)
            here = target
        if overrides and isinstance(node, Mapping):
            return {**node, **overrides}, here
        return node, here

    def parse(self, reference: Any, where: str) -> tuple[str, ...]:
        """The pointer tokens of a same-document reference; anything else is refused."""
        if not isinstance(reference, str):
            raise OpenAPIDocumentError(f"'{where}' must be a string, not {type(reference).__name__}", pointer=where)
        if not reference.startswith("#"):
            raise OpenAPIDocumentError(
                f"'{where}' refers to {reference!r}, outside this document; toolkit never fetches a reference "
                "(SEP-2106): bundle what it refers to into this document's components and refer to it "
                "as '#/components/...'",
                pointer=where,
            )
        fragment = urllib.parse.unquote(reference[1:])
        if fragment and not fragment.startswith("/"):
            raise OpenAPIDocumentError(
                f"'{where}' refers to the anchor {reference!r}; toolkit follows JSON pointers only "
                "('#/components/schemas/Name')",
                pointer=where,
            )
        return tuple(token.replace("~1", "/").replace("~0", "~") for token in fragment.split("/")[1:])

    def lookup(self, tokens: tuple[str, ...], where: str, reference: str) -> Any:
        node: Any = self._document
        for token in tokens:
            if isinstance(node, Mapping) and token in node:
                node = node[token]
            elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
                node = node[int(token)]
            else:
                raise OpenAPIDocumentError(
                    f"'{where}' refers to {reference!r}, which is not in the document "
                    "(in an OpenAPI document '#' is the document's root)",
                    pointer=where,
                )
        return node

    def schema_name(self, reference: Any, trail: Trail) -> str:
        """The definition name a schema's ``$ref`` becomes (its target checked once per string)."""
        if isinstance(reference, str):
            known = self._names.get(reference)
            if known is not None:
                return known
        where = render((trail, "$ref"))
        if isinstance(reference, str) and reference in self._refused:
            raise OpenAPIDocumentError(f"'{where}' {self._refused[reference]}", pointer=where)
        try:
            tokens = self.parse(reference, where)
            target = self.lookup(tokens, where, reference)
            if len(tokens) == 3 and tokens[:2] == ("components", "schemas"):
                name = def_name(tokens[2])
            elif _is_schema_location(tokens):
                name = "@" + def_name(pointer(tokens)[1:])
            else:
                raise OpenAPIDocumentError(
                    f"'{where}' refers to {reference!r}, which is not a Schema Object; "
                    "a schema may refer to schemas only",
                    pointer=where,
                )
            if not isinstance(target, Mapping | bool):
                raise OpenAPIDocumentError(
                    f"'{where}' refers to {reference!r}, which is a {type(target).__name__}, not a schema",
                    pointer=where,
                )
        except OpenAPIDocumentError as error:
            if isinstance(reference, str):  # the same reference elsewhere fails the same way, quickly
                self._refused[reference] = str(error).removeprefix(f"'{where}' ")
            raise
        self._names[reference] = name
        self._targets[name] = tokens
        return name

    def target(self, name: str) -> tuple[str, ...]:
        """The pointer tokens of the schema the definition ``name`` stands for."""
        return self._targets[name]

    def place(self, name: str) -> str:
        """The pointer of the schema the definition ``name`` stands for, for messages."""
        return pointer(self._targets[name])


def refuse_cycles(
    start: str, following: Callable[[str], Iterable[str]], place: Callable[[str], str], acyclic: set[str]
) -> None:
    """Refuse a definition that reaches itself through references and in-place keywords alone.

    ``following(name)`` is the definitions ``name`` refers to where the instance itself is
    evaluated, ``place(name)`` its pointer for the message; ``acyclic`` holds the names known to
    reach no such cycle, and grows, so that calls sharing it walk each definition once.
    """
    if start in acyclic:
        return
    path: list[str] = []
    on_path: set[str] = set()
    stack: list[tuple[str, Iterator[str]]] = []

    def enter(name: str) -> None:
        path.append(name)
        on_path.add(name)
        stack.append((name, iter(following(name))))

    enter(start)
    while stack:
        name, steps = stack[-1]
        step = next(steps, None)
        if step is None:
            stack.pop()
            path.pop()
            on_path.discard(name)
            acyclic.add(name)
        elif step in on_path:
            cycle = [*path[path.index(step) :], step]
            where = place(step)
            chain = " → ".join(place(each) for each in cycle)
            raise OpenAPIDocumentError(
                f"'{where}' refers back to itself without describing any part of the value ({chain}): "
                "validating it would never end; make one of these schemas describe something",
                pointer=where,
            )
        elif step not in acyclic:
            enter(step)


def _is_schema_location(tokens: tuple[str, ...]) -> bool:
    """Whether the pointer ``tokens`` names a Schema Object: a component schema, the ``schema`` of a
    parameter, header or media type, or a subschema inside one of those."""
    start = None
    if tokens[:2] == ("components", "schemas") and len(tokens) >= 3:
        start = 3
    else:
        for index in range(2, len(tokens)):
            if tokens[index] == "schema" and tokens[index - 2] in ("content", "parameters", "headers"):
                start = index + 1
                break
    if start is None:
        return False
    index = start
    while index < len(tokens):
        keyword = tokens[index]
        if keyword in SUBSCHEMA or keyword == "items":
            index += 1
        elif index + 1 < len(tokens) and (
            keyword in SUBSCHEMA_MAP or (keyword in SUBSCHEMA_LIST and tokens[index + 1].isdigit())
        ):
            index += 2  # a keyword, then a name or an index
        else:
            return False
    return True


class Definitions(Mapping[str, dict[str, Any]]):
    """A document's ``$defs``, each definition's references read once, for every plan to share.

    ``RequestPlan.build`` takes any mapping; handing it the same ``Definitions`` for all of a
    document's operations keeps a document with interlinked components linear to load (each
    plan's ``$defs`` are the definitions its arguments reach, found through these lists).
    """

    def __init__(self, defs: Mapping[str, dict[str, Any]]) -> None:
        self._defs = defs
        self._order = {name: index for index, name in enumerate(defs)}
        self._references: dict[str, tuple[str, ...]] = {}

    def __getitem__(self, name: str) -> dict[str, Any]:
        return self._defs[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._defs)

    def __len__(self) -> int:
        return len(self._defs)

    def references(self, name: str) -> tuple[str, ...]:
        """The definitions ``name``'s schema refers to directly (cached)."""
        found = self._references.get(name)
        if found is None:
            found = self._references[name] = _referenced(self._defs[name])
        return found

    def reachable(self, schemas: Iterable[Any], where: str) -> dict[str, Any]:
        """The definitions ``schemas`` reach, in the document's order (shared, never copied)."""
        seen: set[str] = set()
        pending = list(_referenced(list(schemas)))
        while pending:
            name = pending.pop()
            if name in seen:
                continue
            if name not in self._defs:
                raise ValueError(f"{where}: a schema refers to #/$defs/{name}, which the document does not define")
            seen.add(name)
            pending.extend(self.references(name))
        return {name: self._defs[name] for name in sorted(seen, key=self._order.__getitem__)}


def _referenced(node: Any) -> tuple[str, ...]:
    """The ``$defs`` names the references in the schema ``node`` point into (data keywords skipped)."""
    found: list[str] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, dict):
            for keyword in REFERENCE_KEYWORDS:
                value = current.get(keyword)
                name = defs_entry(value) if isinstance(value, str) else None
                if name is not None:
                    found.append(name)
            stack.extend(children(current))
        elif isinstance(current, list):
            stack.extend(current)
    return tuple(dict.fromkeys(found))
