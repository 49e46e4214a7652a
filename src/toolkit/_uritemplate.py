"""URI templates (RFC 6570): parse one, and match a URI against it, safely.

Matching is the inverse of RFC 6570 expansion: each expression captures what its expansion
could have produced, its values are percent-decoded once, and a value that could walk out of a
directory is refused unless the template opts out (``allow_traversal``). What each form matches:

======================  ==========================================  =======================
form                    matches                                     a value may hold
======================  ==========================================  =======================
``{x}``                 one path segment (RFC 6570 level 1)         no ``/`` or ``\\``
``{x,y}``               one segment, values split on ``,``          no ``/`` or ``\\``
``{+x}`` ``{#x}``       the rest, reserved characters included      ``/``, never ``..``
``{x*}``                the rest (FastMCP's multi-segment wildcard)  ``/``, never ``..``
``{/x}`` ``{/x*}``      ``/seg`` / ``/seg/seg...``                  one segment per item
``{.x}`` ``{;x}``       ``.label`` / ``;x=value``                   one segment per item
``{?x,y}`` ``{&x}``     ``?x=1&y=2`` (any order, each optional)     ``/``, never ``..``
======================  ==========================================  =======================

"Never ``..``": after decoding, no ``.`` or ``..`` segment (``/`` and ``\\`` both separate
segments), no leading ``/`` or ``\\``, no drive letter, no NUL. ``{x:3}`` matches at most three
characters. A variable is a list when the function's parameter is one (``list[str]``): its
items, else the text. Expressions whose variables all have defaults in the function may be
absent from the URI when they start with a prefix character (``{/x}``, ``{?x}``, ...).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Final
from urllib.parse import quote, unquote

from ._errors import UnsafeValue

Value = str | list[str]

MAX_URI_LENGTH: Final = 8192
"""Longer URIs match no template: a bound on the regular expressions' work (a hostile URI)."""

_EXPRESSION: Final = re.compile(r"\{([^{}]*)\}")
_VARSPEC: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(?::([1-9][0-9]{0,3})|(\*))?$")
_DRIVE: Final = re.compile(r"^[A-Za-z]:")
_SEPARATORS: Final = re.compile(r"[/\\]")


@dataclass(frozen=True, slots=True)
class _Var:
    name: str
    prefix: int | None  # {x:3}
    explode: bool  # {x*}


@dataclass(frozen=True, slots=True)
class _Operator:
    first: str  # what the expansion starts with
    separator: str  # between items
    named: bool  # ;x=1  ?x=1  &x=1
    stop: str  # characters an item never holds unencoded in this form


# RFC 6570 appendix A, and the characters that end one item of each form.
_OPERATORS: Final = {
    "": _Operator("", ",", False, "/?#,"),
    "+": _Operator("", ",", False, ","),
    "#": _Operator("#", ",", False, ","),
    ".": _Operator(".", ".", False, "/?#."),
    "/": _Operator("/", "/", False, "/?#,"),
    ";": _Operator(";", ";", True, "/?#;,"),
    "?": _Operator("?", "&", True, "#&,"),
    "&": _Operator("&", "&", True, "#&,"),
}
_RESERVED_OPERATORS: Final = "=,!@|"  # RFC 6570 §2.2: reserved for future extensions
_RESERVED: Final = ":/?#[]@!$&'()*+,;="  # RFC 3986 §2.2: kept as they are by {+x} and {#x}


@dataclass(frozen=True, slots=True)
class _Expression:
    operator: str
    variables: tuple[_Var, ...]
    wide: bool  # its value may hold "/" (a path below the template's, checked for "..")

    @property
    def spec(self) -> _Operator:
        return _OPERATORS[self.operator]


class UriTemplate:
    """A parsed template; ``match(uri)`` gives the variables' decoded values, or ``None``."""

    def __init__(
        self,
        template: str,
        *,
        lists: Collection[str] = (),
        optional: Collection[str] = (),
        allow_traversal: bool = False,
    ) -> None:
        """``lists``: variables that take a list of items; ``optional``: ones that may be absent.

        Raises ``ValueError`` for a template RFC 6570 does not allow.
        """
        self.template = template
        self.allow_traversal = allow_traversal
        self._lists = frozenset(lists)
        self._expressions: list[_Expression] = []
        pieces: list[tuple[str, _Expression]] = []  # (the literal before it, the expression)
        position = 0
        for found in _EXPRESSION.finditer(template):
            literal, expression = template[position : found.start()], _parse(found.group(1))
            position = found.end()
            if expression.operator == "&" and not literal and pieces and pieces[-1][1].operator == "?":
                # {?a}{&b} is one query (?a=1&b=2): matched as {?a,b}, each part optional and in any
                # order, instead of the first expression's pattern taking the whole query.
                before, query = pieces.pop()
                expression = _Expression("?", query.variables + expression.variables, True)
                literal = before
            pieces.append((literal, expression))
        pattern = ["^"]
        for literal, expression in pieces:
            pattern.append(_literal(literal))
            body = self._regex(expression)
            skippable = expression.spec.first and all(var.name in optional for var in expression.variables)
            pattern.append(f"(?P<e{len(self._expressions)}>{body}){'?' if skippable else ''}")
            self._expressions.append(expression)
        pattern.append(_literal(template[position:]) + "$")
        self._pattern = re.compile("".join(pattern), re.DOTALL)
        names = [var.name for expression in self._expressions for var in expression.variables]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise ValueError(f"the variable {twice[0]!r} appears twice")
        self.variables: tuple[str, ...] = tuple(names)
        self._required = frozenset(names) - frozenset(optional)
        self._check_readable(optional)

    def _check_readable(self, optional: Collection[str]) -> None:
        """Refuse a template no URI could be read through: what it expands to must match it again.

        Expanded with sample values (every variable, then the required ones only), the URI must
        give back the same values; a template whose expressions run into each other (``{a}{b}``)
        or that a client cannot fill otherwise fails here, at registration, instead of advertising
        a template every read of which is "Resource not found".
        """
        full: dict[str, Value] = {name: self._sample(name) for name in self.variables}
        required = {name: value for name, value in full.items() if name not in optional}
        for values in (full, required):
            uri = self.expand(values)
            try:
                matched = self.match(uri)
            except UnsafeValue:
                matched = None
            if matched != values:
                raise ValueError(
                    f"no URI can be read through it: {uri!r}, its own expansion (RFC 6570) with "
                    f"{values}, matches as {matched}; separate the variables with a literal "
                    "character (a '/' say) or put them in one expression ({a,b})"
                )

    def _sample(self, name: str) -> Value:
        return ["v1", "v2"] if name in self._lists else f"v{self.variables.index(name)}"

    def expand(self, values: dict[str, Value]) -> str:
        """The URI this template makes of ``values`` (RFC 6570 §3.2; absent variables are undefined)."""
        parts: list[str] = []
        position = 0
        for found in _EXPRESSION.finditer(self.template):
            parts.append(self.template[position : found.start()])
            parts.append(_expand(_parse(found.group(1)), values))
            position = found.end()
        parts.append(self.template[position:])
        return "".join(parts)

    def _regex(self, expression: _Expression) -> str:
        """What the expression's expansion can look like (the values are split out afterwards)."""
        spec, variables = expression.spec, expression.variables
        first = re.escape(spec.first)
        if expression.wide:
            return f"{first}[^#]*" if spec.named else f"{first}.+"
        item = f"[^{re.escape(spec.stop)}]"
        if spec.named:
            return f"(?:{first}{item}*)+"
        if expression.operator == "":
            return f"{item}+(?:,{item}+)*" if len(variables) > 1 or variables[0].name in self._lists else "[^/?#]+"
        many = len(variables) > 1 or variables[0].explode or variables[0].name in self._lists
        if expression.operator == "/" and len(variables) == 1 and variables[0].name in self._lists:
            item = f"[^{re.escape(spec.stop.replace(',', ''))}]"  # {/x} of a list: /a,b
        return f"(?:{first}{item}+)+" if many else f"{first}{item}+"

    def shape(self, uri: str) -> bool:
        """Whether ``uri`` looks like an expansion of this template, whatever its values."""
        return len(uri) <= MAX_URI_LENGTH and self._pattern.match(uri) is not None

    def match(self, uri: str) -> dict[str, Value] | None:
        """The variables' values if ``uri`` has this template's shape; ``UnsafeValue`` if one is refused."""
        if len(uri) > MAX_URI_LENGTH:
            return None
        found = self._pattern.match(uri)
        if found is None:
            return None
        values: dict[str, Value] = {}
        for index, expression in enumerate(self._expressions):
            text = found.group(f"e{index}")
            if text is not None and not self._assign(expression, text[len(expression.spec.first) :], values):
                return None
        return values if self._required <= values.keys() else None

    def _assign(self, expression: _Expression, body: str, values: dict[str, Value]) -> bool:
        spec, variables = expression.spec, expression.variables
        if spec.named:
            return self._assign_named(expression, body, values)
        if len(variables) > 1:
            items = body.split(spec.separator)
            if len(items) > len(variables):
                return False
            return all(
                self._store(expression, var, [item], values) for var, item in zip(variables, items, strict=False)
            )
        var = variables[0]
        if var.name not in self._lists:
            return self._store(expression, var, [body], values)
        if expression.wide:  # {x*}, {+x} as a list: the path's segments
            return self._store(expression, var, body.split("/"), values)
        return self._store(expression, var, body.split(spec.separator if var.explode else ","), values)

    def _assign_named(self, expression: _Expression, body: str, values: dict[str, Value]) -> bool:
        by_name = {var.name: var for var in expression.variables}
        collected: dict[str, list[str]] = {}
        for pair in body.split(expression.spec.separator):
            if not pair:
                continue
            name, equals, raw = pair.partition("=")
            var = by_name.get(name)
            if var is None or (name in collected and not var.explode) or not (equals or expression.operator == ";"):
                return False
            collected.setdefault(name, []).extend([raw] if var.explode else raw.split(","))
        for name, items in collected.items():
            if not self._store(expression, by_name[name], items if name in self._lists else [",".join(items)], values):
                return False
        return True

    def _store(self, expression: _Expression, var: _Var, items: list[str], values: dict[str, Value]) -> bool:
        """Decode each item once, check it, and keep it; ``False`` when it cannot be this variable's."""
        spans = expression.wide or (expression.operator == "/" and var.explode and var.name not in self._lists)
        decoded = []
        for item in items:
            try:
                value = unquote(item, errors="strict")
            except UnicodeDecodeError:
                raise UnsafeValue(
                    f"URI variable {var.name!r} is not UTF-8 once percent-decoded, which is refused"
                ) from None
            if var.prefix is not None and len(value) > var.prefix:
                return False
            if not self.allow_traversal:
                _refuse_escapes(var.name, value, spans=spans)
            decoded.append(value)
        values[var.name] = decoded if var.name in self._lists else decoded[0]
        return True


def _literal(text: str) -> str:
    if "{" in text or "}" in text:
        raise ValueError(f"unbalanced brace in {text!r}")
    return re.escape(text)


def _parse(text: str) -> _Expression:
    operator = text[:1] if text[:1] and text[:1] in _OPERATORS.keys() | set(_RESERVED_OPERATORS) else ""
    if operator in _RESERVED_OPERATORS and operator:
        raise ValueError(f"{{{text}}}: the operator {operator!r} is reserved by RFC 6570 and means nothing yet")
    variables = []
    for spec in text[len(operator) :].split(","):
        found = _VARSPEC.match(spec)
        name = spec.split(":")[0].removesuffix("*")
        if found is None or not name.isidentifier():
            raise ValueError(f"{{{text}}}: {spec!r} is not a variable (a Python name, then :N or * if any)")
        variables.append(_Var(name, int(found.group(1)) if found.group(1) else None, found.group(2) == "*"))
    single_wildcard = operator == "" and len(variables) == 1 and variables[0].explode
    wide = operator in ("+", "#", "?", "&") or single_wildcard
    return _Expression(operator, tuple(variables), wide)


def _expand(expression: _Expression, values: dict[str, Value]) -> str:
    """One expression's expansion (RFC 6570 §3.2.1), values percent-encoded as its operator says."""
    spec = expression.spec
    safe = _RESERVED if expression.operator in ("+", "#") else ""
    items: list[str] = []
    for var in expression.variables:
        value = values.get(var.name)
        if value is None:
            continue
        if isinstance(value, str):
            text = quote(value[: var.prefix] if var.prefix else value, safe=safe)
            items.append(f"{var.name}={text}" if spec.named and (text or expression.operator != ";") else text)
            if spec.named and not text and expression.operator == ";":
                items[-1] = var.name
            continue
        encoded = [quote(item, safe=safe) for item in value]
        if var.explode:
            items.extend(f"{var.name}={item}" if spec.named else item for item in encoded)
        else:
            joined = ",".join(encoded)
            items.append(f"{var.name}={joined}" if spec.named else joined)
    return spec.first + spec.separator.join(items) if items else ""


def _refuse_escapes(name: str, value: str, *, spans: bool) -> None:
    """Refuse what could leave the directory a function joins the value onto."""
    if "\x00" in value:
        raise UnsafeValue(f"URI variable {name!r} holds a NUL character, which is refused")
    if not spans:
        if value in (".", "..") or _SEPARATORS.search(value):
            raise UnsafeValue(
                f"URI variable {name!r} is one path segment, and {value!r} is refused there "
                "('.', '..', '/' and '\\' are not allowed once decoded)"
            )
        return
    if value[:1] in ("/", "\\") or _DRIVE.match(value):
        raise UnsafeValue(f"URI variable {name!r}: the absolute path {value!r} is refused")
    if any(segment in (".", "..") for segment in _SEPARATORS.split(value)):
        raise UnsafeValue(f"URI variable {name!r}: {value!r} holds a '.' or '..' segment, which is refused")
