"""Class schemas ``corejson`` has translated, kept for the next document that holds them.

A server's tools share their models: ``Customer`` sits inside fifty tools' schemas, and each of
those documents used to translate it again. A translated definition is the same in every
document (its name and body depend only on the class and the mode), so ``corejson`` keeps it here
with the classes it refers to, in the order it met them, and replays that: each definition is
added exactly where a fresh translation would add it (``tests/test_cold_start.py`` compares the
bytes with an empty store).

An entry is used only for the very class object it came from, as long as that class keeps the
core schema it had (``model_rebuild`` gives it another), so neither a new class of the same name at
the same address nor a rebuilt one can meet a stale translation. The store is bounded.

A kept body is the very object of the first document that held it, and of every later one: the
subschemas of generated schemas are shared and never changed (``hints.type_schema``), except by
``hints.tidy``, which runs on each document as it is made and leaves a tidied node as it is (the
tag marks it consumes are gone, the ``oneOf``/``anyOf`` choice comes out the same again). So a kept
body is tidied once (``tidied``), and its references are found once, for every later document.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from .._types import JsonSchema, Mode

_MAX: Final = 4096


class Translated:
    """One class's definition in one mode, and the classes it refers to, in order."""

    __slots__ = ("_references", "body", "children", "cls", "core_schema", "tidied")

    def __init__(
        self, body: JsonSchema, children: list[tuple[str, dict[str, Any]]], cls: Any, *, tidied: bool = False
    ) -> None:
        self.body = body
        self.children = tuple(children)
        """(core ref, core schema) of each class reference met while translating, repeats included."""
        self.cls = cls
        self.core_schema = _own_schema(cls)
        self.tidied = tidied
        """Whether ``hints.tidy`` has nothing (more) to do in the body: it holds no union, tag mark or
        keyword of the user's, or a document holding it was tidied (tidying again changes nothing)."""
        self._references: tuple[str, ...] | None = None

    def fits(self, cls: Any) -> bool:
        return cls is self.cls and _own_schema(cls) is self.core_schema

    def references(self, walk: Callable[[Any, list[str]], None]) -> tuple[str, ...]:
        """Every reference in the body (``walk`` finds them), found once: tidying changes none."""
        found = self._references
        if found is None:
            listed: list[str] = []
            walk(self.body, listed)
            found = self._references = tuple(listed)
        return found


def _own_schema(cls: Any) -> Any:
    return getattr(cls, "__dict__", {}).get("__pydantic_core_schema__")


_STORE: dict[tuple[str, Mode], Translated] = {}
_BODIES: dict[int, Translated] = {}  # by id() of the body: which dicts are kept bodies


def find(core_ref: str, mode: Mode, cls: Any) -> Translated | None:
    """The translation of the class ``cls`` (whose core ref is ``core_ref``) in ``mode``, if kept."""
    entry = _STORE.get((core_ref, mode))
    return entry if entry is not None and entry.fits(cls) else None


def keep(core_ref: str, mode: Mode, entry: Translated) -> None:
    if len(_STORE) >= _MAX or len(_BODIES) >= _MAX:
        forget()
    _STORE[(core_ref, mode)] = entry
    _BODIES[id(entry.body)] = entry


def kept(body: Any) -> bool:
    """Whether ``body`` is a kept definition (shared, never changed once tidied), this very object."""
    entry = _BODIES.get(id(body))
    return entry is not None and entry.body is body


def forget() -> None:
    """Empty the store (tests compare with fresh translations)."""
    _STORE.clear()
    _BODIES.clear()
