"""Tool transformation: the same tool under another name, description or set of arguments.

``transform_tool(tool, ...)`` builds a ``TransformedTool``, a ``ToolBase`` in front of another
one (a decorated function, a mounted or a proxied tool, another transformed one). Everything is
worked out once, when it is built: the input schema with arguments renamed, re-described,
given a default or hidden (removed, their value fixed or computed per call), and the map back
to the inner tool's names. A call is then a dict rebuilt and the inner tool's ``call``.

The outer tool's arguments are checked against its own schema. Mapped back, they satisfy the
inner tool's schema by construction (fixed values were checked here, computed ones are checked
per call), so a decorated function converts them without checking them a second time.
"""

from __future__ import annotations

import copy
import functools
import inspect
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, Final

import jsonschema_rs
import pydantic_core
from typing_extensions import TypedDict

from ._components import CallContext, ToolBase
from ._content import CallOutcome
from ._errors import RegistrationError
from ._schema.checks import check_schema, describe_errors
from ._schema.keywords import REFERENCE_KEYWORDS, children
from ._tools import Tool

logger = logging.getLogger("toolkit")


class _Missing:
    """The type of ``MISSING``: no default given."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final = _Missing()

_PLAIN_ROOT: Final = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "$defs",
        "definitions",
        "$schema",
        "$id",
        "$comment",
        "title",
        "description",
        "examples",
    }
)
"""Root keywords that name no argument: an input schema with only these (and ``x-`` ones) can have
its arguments renamed or hidden. ``oneOf``, ``dependentRequired``, ``if``... name arguments too."""


class ArgTransform:
    """How ``transform_tool`` changes one argument of a tool.

    - ``name``: the name clients see for it (the inner tool still gets its own);
    - ``description``: its description in the input schema, replacing the tool's own;
    - ``default``: a value used when the client leaves it out (it becomes optional);
    - ``hide=True``: clients no longer see it; the inner tool gets ``default``, or
      ``default_factory()`` called on every call (a function, sync or async, taking nothing),
      or, for an argument the tool does not require, nothing at all.
    """

    __slots__ = ("default", "default_factory", "description", "hide", "name")

    def __init__(
        self,
        *,
        name: str | None = None,
        description: str | None = None,
        hide: bool = False,
        default: Any = MISSING,
        default_factory: Callable[[], Any] | None = None,
    ) -> None:
        if name is not None and (not isinstance(name, str) or not name):
            raise TypeError(f"ArgTransform(name={name!r}): a name is a non-empty string")
        if hide and (name is not None or description is not None):
            raise TypeError("ArgTransform(hide=True) takes no name= or description=: a hidden argument is not shown")
        if default is not MISSING and default_factory is not None:
            raise TypeError("ArgTransform takes default= or default_factory=, not both")
        if default_factory is not None:
            if not callable(default_factory):
                raise TypeError(f"ArgTransform(default_factory={default_factory!r}): give a function taking nothing")
            if not hide:
                raise TypeError(
                    "ArgTransform(default_factory=...) needs hide=True: a value computed per call cannot be shown "
                    "as the argument's default, so the argument is hidden"
                )
        self.name = name
        self.description = description
        self.hide = hide
        self.default = default
        self.default_factory = default_factory

    def __repr__(self) -> str:
        given = [
            f"{field}={value!r}"
            for field in ("name", "description", "hide", "default", "default_factory")
            if (value := getattr(self, field)) not in (None, False, MISSING)
        ]
        return f"ArgTransform({', '.join(given)})"


class TransformOptions(TypedDict, total=False):
    """The options of ``transform_tool`` and ``server.transform_tool`` (each documented on ``transform_tool``)."""

    name: str | None
    title: str | None
    description: str | None
    annotations: Mapping[str, Any] | None
    meta: Mapping[str, Any] | None
    tags: Iterable[str] | None
    arguments: Mapping[str, ArgTransform] | None


def transform_tool(
    tool: ToolBase,
    *,
    name: str | None = None,
    title: str | None = None,
    description: str | None = None,
    annotations: Mapping[str, Any] | None = None,
    meta: Mapping[str, Any] | None = None,
    tags: Iterable[str] | None = None,
    arguments: Mapping[str, ArgTransform] | None = None,
) -> TransformedTool:
    """A new tool in front of ``tool``: renamed, re-described, with its arguments reshaped.

    Each option left out keeps the tool's own (``annotations``, ``meta`` and ``tags`` are
    replaced whole). ``arguments`` maps an argument's name, as ``tool`` has it, to an
    ``ArgTransform``. The new tool's output schema, scopes and task support are ``tool``'s,
    and calling it calls ``tool``. Register it with ``server.add_tool(...)``; or let
    ``server.transform_tool(name, ...)`` replace a registered tool by its transformed version.

    >>> search = transform_tool(server.tools["search"], name="find",
    ...                         arguments={"limit": ArgTransform(hide=True, default=10)})
    """
    if not isinstance(tool, ToolBase):
        raise TypeError(f"transform_tool takes a tool (server.tools['name'], a ToolBase), not {tool!r}")
    return TransformedTool(
        tool,
        name=name,
        title=title,
        description=description,
        annotations=annotations,
        meta=meta,
        tags=tags,
        arguments=arguments or {},
    )


class TransformedTool(ToolBase):
    """A tool in front of another (``inner``), built by ``transform_tool``."""

    def __init__(
        self,
        inner: ToolBase,
        *,
        name: str | None,
        title: str | None,
        description: str | None,
        annotations: Mapping[str, Any] | None,
        meta: Mapping[str, Any] | None,
        tags: Iterable[str] | None,
        arguments: Mapping[str, ArgTransform],
    ) -> None:
        self.inner = inner
        self._where = f"transform_tool({inner.name!r})"
        if name is not None and (not isinstance(name, str) or not name):
            raise TypeError(f"{self._where}: name={name!r} is not a tool name")
        if not isinstance(arguments, Mapping):
            raise TypeError(f"{self._where}: arguments= maps argument names to ArgTransform(...), not {arguments!r}")
        self._outer_names: dict[str, str] = {}
        """The inner tool's name → the name clients send, for every renamed argument."""
        self._hidden: set[str] = set()
        self._fixed: list[tuple[str, Any]] = []
        """Hidden arguments and their fixed values (JSON), by inner name."""
        self._defaults: list[tuple[str, str, Any]] = []
        """Shown arguments given a default: (outer name, inner name, value)."""
        self._computed: list[tuple[str, Callable[[], Any], jsonschema_rs.Validator]] = []
        """Hidden arguments computed per call: (inner name, factory, the check of its value)."""
        schema = self._input_schema(inner.input_schema, dict(arguments)) if arguments else inner.input_schema
        self._inner_names = {outer: inner_name for inner_name, outer in self._outer_names.items()}
        self._shadowed: frozenset[str] = frozenset()
        """Inner names clients must not send, where the schema is open to more properties."""
        if schema.get("additionalProperties") is not False:
            behind = inner._shadowed if isinstance(inner, TransformedTool) else frozenset()
            shadowed = self._outer_names.keys() | self._hidden | behind
            self._shadowed = frozenset(shadowed) - set(schema.get("properties", {}))
        super().__init__(
            name or inner.name,
            input_schema=schema,
            title=title if title is not None else inner.title,
            description=description if description is not None else inner.description,
            annotations=annotations if annotations is not None else inner.annotations,
            icons=inner.icons,
            meta=meta if meta is not None else inner.meta,
            scopes=inner.scopes,
            tags=tags if tags is not None else inner.tags,
            task=inner.task,
            max_argument_depth=inner.max_argument_depth,
        )
        self.task_start = inner.task_start
        # The inner tool's result is the result: its schema and its validator, compiled once by it.
        self.output_schema = inner.output_schema
        self._output_validator = inner._output_validator
        self._call_inner: Callable[[dict[str, Any], CallContext], Awaitable[CallOutcome]] = (
            functools.partial(inner.call, checked=True) if isinstance(inner, Tool) else inner.call
        )

    # --- the input schema, rewritten once ----------------------------------------------------------

    def _input_schema(self, schema: Mapping[str, Any], arguments: dict[str, ArgTransform]) -> dict[str, Any]:
        properties = schema.get("properties")
        if not isinstance(properties, dict):
            properties = {}
        odd = sorted(key for key in schema if key not in _PLAIN_ROOT and not key.startswith("x-"))
        if odd or _refers_to_properties(schema):
            said = f"{odd[0]!r} at its root" if odd else "a $ref into its own properties"
            raise RegistrationError(
                f"{self._where}: its input schema has {said}, which can name arguments; transform_tool "
                "renames, hides or gives defaults to arguments of a plain object schema only (properties, required)"
            )
        unknown = [argument for argument in arguments if argument not in properties]
        if unknown:
            known = ", ".join(map(repr, properties)) or "none"
            raise RegistrationError(
                f"{self._where}: the tool has no argument {unknown[0]!r} (its arguments: {known}); "
                "name arguments as the tool has them"
            )
        for argument, given in arguments.items():
            if not isinstance(given, ArgTransform):
                raise TypeError(f"{self._where}: arguments[{argument!r}] must be an ArgTransform(...), not {given!r}")
        required = [name for name in schema.get("required", []) if isinstance(name, str)]
        shown: dict[str, Any] = {}
        for argument, fragment in properties.items():
            change = arguments.get(argument)
            if change is None:
                shown[argument] = fragment
            elif change.hide:
                self._hide(argument, change, argument in required, schema)
            else:
                outer = self._shown_name(argument, change, properties, arguments)
                shown[outer] = self._shown_fragment(argument, change, fragment, schema)
        outer_required = [
            self._outer_names.get(name, name)
            for name in required
            if name not in arguments or not (arguments[name].hide or arguments[name].default is not MISSING)
        ]
        rewritten: dict[str, Any] = {}
        for key, value in schema.items():  # the keywords in their order; properties and required rewritten
            if key == "properties":
                rewritten[key] = shown
            elif key == "required":
                if outer_required:
                    rewritten[key] = outer_required
            else:
                rewritten[key] = value
        return rewritten

    def _hide(self, argument: str, change: ArgTransform, required: bool, schema: Mapping[str, Any]) -> None:
        self._hidden.add(argument)
        if change.default_factory is not None:
            self._computed.append((argument, change.default_factory, _value_check(argument, schema)))
        elif change.default is not MISSING:
            self._fixed.append((argument, self._checked_default(argument, change.default, schema)))
        elif required:
            raise RegistrationError(
                f"{self._where}: the tool requires the argument {argument!r}, so hiding it needs a value: "
                "ArgTransform(hide=True, default=...) or ArgTransform(hide=True, default_factory=...)"
            )

    def _shown_name(
        self,
        argument: str,
        change: ArgTransform,
        properties: Mapping[str, Any],
        arguments: Mapping[str, ArgTransform],
    ) -> str:
        outer = change.name or argument
        if outer == argument:
            return outer
        theirs = arguments.get(outer)
        kept_there = outer in properties and (theirs is None or (not theirs.hide and (theirs.name or outer) == outer))
        renamed_there = [other for other, change in arguments.items() if other != argument and change.name == outer]
        if kept_there or renamed_there:
            clash = f"the argument {outer!r}" if kept_there else f"the argument {renamed_there[0]!r}, renamed too"
            raise RegistrationError(
                f"{self._where}: renaming the argument {argument!r} to {outer!r} clashes with {clash}; "
                "choose another name"
            )
        self._outer_names[argument] = outer
        return outer

    def _shown_fragment(self, argument: str, change: ArgTransform, fragment: Any, schema: Mapping[str, Any]) -> Any:
        if change.description is None and change.default is MISSING:
            return fragment
        fragment = dict(fragment) if isinstance(fragment, dict) else ({} if fragment is True else {"not": {}})
        if change.description is not None:
            fragment["description"] = change.description
        if change.default is not MISSING:
            value = self._checked_default(argument, change.default, schema)
            fragment["default"] = value
            self._defaults.append((self._outer_names.get(argument, argument), argument, value))
        return fragment

    def _checked_default(self, argument: str, value: Any, schema: Mapping[str, Any]) -> Any:
        """``value`` as JSON, checked against the argument's schema now rather than on every call."""
        try:
            value = pydantic_core.to_jsonable_python(value)
        except (pydantic_core.PydanticSerializationError, TypeError, ValueError) as exc:
            raise RegistrationError(f"{self._where}: the default of {argument!r} has no JSON form ({exc})") from None
        check = _value_check(argument, schema)
        if not check.is_valid({argument: value}):
            problem = "; ".join(describe_errors(check, {argument: value}, root="arguments"))
            raise RegistrationError(f"{self._where}: the default of {argument!r} does not fit its schema: {problem}")
        return value

    # --- a call ----------------------------------------------------------------------------------

    async def call(self, arguments: dict[str, Any], context: CallContext) -> CallOutcome:
        """Map the arguments back to the inner tool's names, add the hidden ones, call the inner tool."""
        if self._shadowed and not self._shadowed.isdisjoint(arguments):
            sent = sorted(self._shadowed.intersection(arguments))[0]
            return CallOutcome.error(f"Invalid arguments for tool {self.name!r}: {sent!r} is not one of its arguments")
        names = self._inner_names
        mapped = {names.get(key, key): value for key, value in arguments.items()} if names else dict(arguments)
        for inner_name, value in self._fixed:
            mapped[inner_name] = copy.deepcopy(value) if isinstance(value, dict | list) else value
        for outer, inner_name, value in self._defaults:
            if outer not in arguments:
                mapped[inner_name] = copy.deepcopy(value) if isinstance(value, dict | list) else value
        for inner_name, factory, check in self._computed:
            try:
                value = factory()
                if inspect.isawaitable(value):
                    value = await value
                value = pydantic_core.to_jsonable_python(value)
            except Exception:
                logger.exception("tool %r: the default_factory of the hidden argument %r raised", self.name, inner_name)
                return CallOutcome.error(f"Error executing tool {self.name!r}")
            if not check.is_valid({inner_name: value}):
                problem = "; ".join(describe_errors(check, {inner_name: value}, root="arguments"))
                logger.error(
                    "tool %r: default_factory gave %r a value its schema refuses: %s", self.name, inner_name, problem
                )
                return CallOutcome.error(f"Error executing tool {self.name!r}")
            mapped[inner_name] = value
        return await self._call_inner(mapped, context)

    def __repr__(self) -> str:
        return f"TransformedTool(name={self.name!r}, inner={self.inner!r})"


def _value_check(argument: str, schema: Mapping[str, Any]) -> jsonschema_rs.Validator:
    """A validator of ``{argument: value}`` against the argument's schema (its ``$defs`` kept)."""
    single: dict[str, Any] = {
        key: value for key, value in schema.items() if key in ("$schema", "$id", "$defs", "definitions")
    }
    single["type"] = "object"
    single["properties"] = {argument: schema["properties"][argument]}
    return check_schema(single, what=f"argument {argument!r}", assert_formats=True)


def _refers_to_properties(schema: Any) -> bool:
    """Whether a ``$ref`` in ``schema`` points into its properties (renaming one would break it)."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, dict):
            for keyword in REFERENCE_KEYWORDS:
                reference = node.get(keyword)
                if isinstance(reference, str) and reference.startswith("#/properties"):
                    return True
            stack.extend(children(node))
    return False
