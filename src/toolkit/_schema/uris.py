"""URI references resolved against a base (RFC 3986 §5.2), for ``$id`` and ``$ref``.

JSON Schema resolves each ``$id`` against the base URI of the resource around it, and each
``$ref`` against the base URI of the resource it sits in (2020-12 Core §8.2.1, §8.2.3). The
registration checks do the same, to know which schema of the document a reference names; no
URI is ever fetched. ``urllib.parse.urljoin`` is not used: it resolves only the schemes it
lists (``urn:``, say, is not one), and schemas may use any.
"""

from __future__ import annotations

import re
from typing import Final

DEFAULT_BASE: Final = "json-schema:///"
"""The base URI of a document without a root ``$id``: jsonschema-rs's, so that a relative
reference resolves to the same URI here and in the validator."""

# RFC 3986 Appendix B: scheme, authority, path, query, fragment; None where a part is absent.
_PARTS: Final = re.compile(r"(?:([^:/?#]+):)?(?://([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?", re.DOTALL)


def _split(uri: str) -> tuple[str | None, str | None, str, str | None, str | None]:
    match = _PARTS.fullmatch(uri)
    assert match is not None  # every part is optional: any string matches
    scheme, authority, path, query, fragment = match.groups()
    return scheme, authority, path, query, fragment


def resolve(base: str, reference: str) -> str:
    """``reference`` resolved against the absolute URI ``base`` (RFC 3986 §5.2.2, strict)."""
    scheme, authority, path, query, fragment = _split(reference)
    if scheme is None:
        base_scheme, base_authority, base_path, base_query, _ = _split(base)
        scheme = base_scheme
        if authority is None:
            authority = base_authority
            if not path:
                path = base_path
                if query is None:
                    query = base_query
            elif not path.startswith("/"):
                path = _merge(base_authority, base_path, path)
    uri = f"{scheme}:" if scheme is not None else ""
    if authority is not None:
        uri += f"//{authority}"
    uri += remove_dot_segments(path)
    if query is not None:
        uri += f"?{query}"
    if fragment is not None:
        uri += f"#{fragment}"
    return uri


def _merge(base_authority: str | None, base_path: str, path: str) -> str:
    """RFC 3986 §5.2.3."""
    if base_authority is not None and not base_path:
        return "/" + path
    return base_path[: base_path.rfind("/") + 1] + path


def remove_dot_segments(path: str) -> str:
    """RFC 3986 §5.2.4, its steps A to E, in one pass over ``path`` (linear in its length)."""
    output: list[str] = []
    i, end = 0, len(path)
    while i < end:
        if path.startswith("../", i):  # A
            i += 3
        elif path.startswith(("./", "/./"), i):  # A, and B: "/./" becomes "/"
            i += 2
        elif path.startswith("/.", i) and i + 2 == end:  # B: a final "/." becomes "/"
            output.append("/")
            i = end
        elif path.startswith("/../", i):  # C: "/../" becomes "/", and the last segment goes
            i += 3
            if output:
                output.pop()
        elif path.startswith("/..", i) and i + 3 == end:  # C: a final "/.." too
            if output:
                output.pop()
            output.append("/")
            i = end
        elif path.startswith(".", i) and (i + 1 == end or (i + 2 == end and path[i + 1] == ".")):  # D: "." or ".."
            i = end
        else:  # E: the first segment, with its "/", moves to the output
            stop = path.find("/", i + 1 if path[i] == "/" else i)
            stop = end if stop == -1 else stop
            output.append(path[i:stop])
            i = stop
    return "".join(output)
