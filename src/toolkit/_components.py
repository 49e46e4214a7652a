"""What a server offers, whatever stands behind it: the base classes of tools, resources and prompts.

The engine, ``_compat``, telemetry and the tools page see a tool as a ``ToolBase``: a name, its
natural schemas and metadata, the scopes that guard it, and one ``call``. A decorated function
(``Tool``) is one kind; a tool of a mounted server, of a remote server or of an OpenAPI operation
are others. Schemas are checked when the component is built (ARCHITECTURE §5), whatever made them.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final, Generic, Literal, Protocol, TypeVar, cast

import pydantic_core

from ._content import NO_STRUCTURED, CallOutcome, Text, ToolResult, is_content, to_blocks
from ._errors import NotSerializable, OutputInvalid, SchemaError
from ._functions import declared_scopes
from ._schema.checks import LazyValidator, Validates, check_schema, check_uncompiled, compiled, describe_errors
from ._schema.headers import header_params

if TYPE_CHECKING:
    from ._uritemplate import Value

logger = logging.getLogger("toolkit")

_UNKNOWN_TYPE = re.compile(r"unknown type: <class '(?:[\w.]+\.)?([^'.]+)'>")


def not_serializable(value: Any, exc: Exception) -> NotSerializable:
    """``value`` failed to serialize: the error naming the type at fault (pydantic names it, when inside)."""
    found = _UNKNOWN_TYPE.search(str(exc))
    what = found[1] if found else type(value).__name__
    return NotSerializable(what, str(exc))


def not_json_message(name: str, value: Any, exc: NotSerializable) -> str:
    """What went wrong and what to do, for a return value with no JSON form (the log; unmasked, the client)."""
    outer = type(value).__name__
    returned = f"a {exc.what}" if outer == exc.what else f"a {outer} holding a {exc.what}"
    return (
        f"Tool {name!r} returned {returned}, which has no JSON form. Make {exc.what} a pydantic model or a "
        "dataclass (and annotate the return type with it), or return dicts and lists of JSON values"
    )


def declared_tags(tags: Iterable[str] | None, what: str) -> frozenset[str]:
    """The ``tags=`` of a tool, resource or prompt, checked (``declared_strings``)."""
    return declared_strings(tags, what, "tags=")


def declared_strings(values: Iterable[str] | None, what: str, option: str) -> frozenset[str]:
    """An option naming several tags or names (``tags=``, ``names=``): non-empty strings; a lone string is a mistake."""
    if values is None:
        return frozenset()
    noun = "tag" if "tags" in option else "name"
    if isinstance(values, str):
        raise TypeError(
            f"{what}: {option} takes an iterable of strings, e.g. {option}{{{values!r}}}, not the string "
            f"{values!r} (which would be read as one {noun} per character)"
        )
    try:
        result = frozenset(values)
    except TypeError:
        raise TypeError(f"{what}: {option} takes an iterable of strings, not {values!r}") from None
    for value in result:
        if not isinstance(value, str) or not value:
            raise TypeError(f"{what}: every {noun} must be a non-empty string; {value!r} is not")
    return result


TaskSupport = Literal["forbidden", "optional", "required"]
TASK_SUPPORT: Final[tuple[TaskSupport, ...]] = ("forbidden", "optional", "required")


class CallContext(Protocol):
    """What a component may ask of the request it serves (toolkit's ``Context`` is one)."""

    @property
    def protocol_version(self) -> str: ...

    @property
    def client_capabilities(self) -> dict[str, Any]: ...

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None: ...

    async def log(self, level: Any, data: Any, *, logger: str | None = None) -> None: ...


V = TypeVar("V", bound="Validates | None")


class _FirstUse(Generic[V]):
    """A tool's validator, compiled by its first use and kept as the instance's own attribute.

    A non-data descriptor: once the instance has the attribute, Python finds it before this, so
    only the first call pays for the laziness.
    """

    def __init__(self, schema_attribute: str, *, assert_formats: bool = False) -> None:
        self._schema_attribute = schema_attribute
        self._assert_formats = assert_formats
        self._name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    def __get__(self, instance: Any, owner: type | None = None) -> V:
        if instance is None:
            raise AttributeError(self._name)
        schema = getattr(instance, self._schema_attribute)
        validator: Any = None if schema is None else compiled(schema, assert_formats=self._assert_formats)
        instance.__dict__[self._name] = validator
        return cast("V", validator)


class ToolBase:
    """A tool as the engine serves it. Subclass it and write ``call`` for a tool that is not a function.

    ``call`` gets the arguments as the client sent them (checked against the input schema when
    ``validate_arguments`` is left on) and returns a ``CallOutcome``: its structured value is the
    natural one, shaped for each protocol version by ``_compat``.
    """

    validate_arguments = True
    """Whether the engine checks arguments against ``input_schema`` before ``call`` (off: ``call`` does)."""

    compile_on_first_use = False
    """Keep the schemas' compiled validators only once the tool is called (every schema is still
    checked when the tool is made): for tools that come by the thousand, most never called."""

    def __init__(
        self,
        name: str,
        *,
        input_schema: Mapping[str, Any],
        output_schema: Mapping[str, Any] | None = None,
        title: str | None = None,
        description: str = "",
        annotations: Mapping[str, Any] | None = None,
        icons: list[dict[str, Any]] | None = None,
        meta: Mapping[str, Any] | None = None,
        scopes: Iterable[str] | None = None,
        tags: Iterable[str] | None = None,
        task: TaskSupport = "forbidden",
        max_argument_depth: int = 64,
        compile_later: bool = False,
    ) -> None:
        """``compile_later``: the schemas were generated from type hints; they are checked now (every
        refusal as usual) and their validators compiled by the first call that needs one."""
        self.name = name
        self._what = f"tool {name!r}"
        self.title = title
        self.description = description
        self.annotations = dict(annotations) if annotations else None
        self.meta = dict(meta) if meta else None
        self.icons = icons
        self.scopes = declared_scopes(scopes, self._what)
        """OAuth scopes a caller's access token must grant to see and call this tool."""
        self.tags = declared_tags(tags, self._what)
        """Labels for the server's own use (``server.disable(tags=...)``, a mount's ``include=``); never sent."""
        if task not in TASK_SUPPORT:
            raise ValueError(
                f"{self._what}: task={task!r} is not one of {', '.join(map(repr, TASK_SUPPORT))} "
                '(whether a client may run it as a task: "optional", "required", or "forbidden", the default)'
            )
        self.task: TaskSupport = task
        """Whether the tool runs as a task: never (default), when the client can take one, or always."""
        self.task_start: Literal["call", "begin_task"] = "call"
        self.max_argument_depth = max_argument_depth
        self.input_schema = dict(input_schema)
        lazy = self.compile_on_first_use
        later = compile_later and not lazy
        if later:  # the validator: made on first use (_FirstUse)
            check_uncompiled(self.input_schema, what=f"{self._what}: input schema", assert_formats=True)
        else:
            self._input_validator = check_schema(
                self.input_schema, what=f"{self._what}: input schema", assert_formats=True, remember=not lazy
            )
        if lazy:
            self._input_validator = LazyValidator(self.input_schema, assert_formats=True)
        if self.input_schema.get("type") != "object":
            raise SchemaError(
                f'{self._what}: an input schema must have "type": "object" at its root (tool arguments '
                "are always a JSON object)"
            )
        self.header_params = header_params(self.input_schema, self._what)
        """``x-mcp-header`` name → property path, for the HTTP transport to check."""
        self.output_schema = dict(output_schema) if output_schema is not None else None
        if self.output_schema is None:
            self._output_validator = None
        elif later:
            check_uncompiled(self.output_schema, what=f"{self._what}: output schema")
        else:
            # Every structured result is checked against the advertised schema: a client that
            # validates would reject what we sent.
            self._output_validator = check_schema(
                self.output_schema, what=f"{self._what}: output schema", remember=not lazy
            )
            if lazy:
                self._output_validator = LazyValidator(self.output_schema)

    # Left to their first use when compile_later: the instance attribute, once set, hides these.
    _input_validator: _FirstUse[Validates] = _FirstUse("input_schema", assert_formats=True)
    _output_validator: _FirstUse[Validates | None] = _FirstUse("output_schema")

    async def call(self, arguments: dict[str, Any], context: CallContext) -> CallOutcome:
        """Run the tool; failures the model should see come back as ``CallOutcome.error(...)``."""
        raise NotImplementedError(f"{type(self).__name__} must define call()")

    def invalid_arguments(self, arguments: Mapping[str, Any], *, limit: int = 5) -> str | None:
        """What is wrong with ``arguments`` against the input schema, or ``None``."""
        if self._input_validator.is_valid(arguments):
            return None
        return "; ".join(describe_errors(self._input_validator, arguments, root="arguments", limit=limit))

    def too_deep(self) -> CallOutcome:
        """The answer to arguments nested deeper than ``max_argument_depth``."""
        return CallOutcome.error(
            f"Invalid arguments for tool {self.name!r}: nested deeper than {self.max_argument_depth} levels"
        )

    def finish(self, value: Any) -> CallOutcome:
        """The outcome of a value the tool produced, checked against the output schema."""
        try:
            return self.outcome(value)
        except NotSerializable as exc:
            said = not_json_message(
                self.name, value.structured_content if isinstance(value, ToolResult) else value, exc
            )
            logger.error("%s (pydantic: %s)", said, exc)
            if getattr(self, "mask_errors", True):
                return CallOutcome.error(f"Tool {self.name!r} returned a value that is not JSON (see the server's log)")
            return CallOutcome.error(said)
        except OutputInvalid as exc:
            logger.error("tool %r returned a result that violates its output schema: %s", self.name, exc)
            return CallOutcome.error(f"Tool {self.name!r} produced a result that does not match its output schema")

    def outcome(self, value: Any) -> CallOutcome:
        """Turn a value (or a ``ToolResult``) into a ``CallOutcome``; ``OutputInvalid`` if it breaks the schema."""
        if isinstance(value, ToolResult):
            structured = NO_STRUCTURED
            if value.has_structured_content:
                structured = self.structured(value.structured_content)
            elif self.output_schema is not None and not value.is_error:
                raise OutputInvalid("a ToolResult without structured_content, but the tool has an output schema")
            return CallOutcome(value.content, structured, value.is_error, value.meta)
        if self.output_schema is not None:
            return CallOutcome(None, self.structured(value))
        if value is None:
            return CallOutcome([])
        if is_content(value):
            return CallOutcome(to_blocks(value))
        if isinstance(value, (list, tuple)) and not value:
            return CallOutcome([])
        try:
            text = pydantic_core.to_json(value, inf_nan_mode="null").decode()
        except pydantic_core.PydanticSerializationError as exc:  # its repr reached the client once
            raise not_serializable(value, exc) from None
        return CallOutcome([Text(text)])

    def structured(self, value: Any) -> Any:
        """``value`` as JSON, checked against the output schema (``OutputInvalid`` if it breaks it)."""
        try:
            structured = pydantic_core.to_jsonable_python(value)
        except (pydantic_core.PydanticSerializationError, TypeError, ValueError) as exc:
            raise not_serializable(value, exc) from None
        validator = self._output_validator
        if validator is None or validator.is_valid(structured):
            return structured
        raise OutputInvalid("; ".join(describe_errors(validator, structured, root="result")))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


class ReadContents(list):  # type: ignore[type-arg]
    """What ``ResourceBase.read`` may return instead of a plain list: the contents, with the freshness
    their source gave them (a proxied read: the upstream's ``ttlMs`` and ``cacheScope``), which the
    ``resources/read`` result then carries in place of the resource's own."""

    def __init__(
        self, contents: Iterable[dict[str, Any]], *, ttl_ms: int | None = None, cache_scope: str | None = None
    ) -> None:
        super().__init__(contents)
        self.ttl_ms = ttl_ms
        self.cache_scope = cache_scope


class ResourceBase:
    """A resource at a fixed URI, as the engine serves it: its listing and one ``read``."""

    uri: str
    name: str
    mime_type: str | None
    ttl_ms: int | None
    cache_scope: str | None
    scopes: frozenset[str]
    tags: frozenset[str] = frozenset()
    """Labels for the server's own use (``server.disable(tags=...)``, a mount's ``include=``); never sent."""

    def listing(self) -> dict[str, Any]:
        """Its ``resources/list`` entry (natural: ``_compat`` shapes it per version)."""
        raise NotImplementedError(f"{type(self).__name__} must define listing()")

    async def read(self, uri: str, variables: Mapping[str, Value], context: CallContext) -> list[dict[str, Any]]:
        """The ``contents`` of a read."""
        raise NotImplementedError(f"{type(self).__name__} must define read()")

    async def watch(self, uri: str) -> None:
        """A client subscribed to ``uri`` (one of this resource's): a resource that learns of changes
        from elsewhere (a proxied one) starts listening; one per subscription, ended by ``unwatch``."""

    async def unwatch(self, uri: str) -> None:
        """A subscription to ``uri`` ended (see ``watch``)."""


class TemplateBase(ResourceBase):
    """Resources whose URIs follow a template: ``match`` says whether a URI is one, with its values."""

    uri_template: str

    def match(self, uri: str) -> dict[str, Value] | None:
        """The variables' values if ``uri`` has the template's shape; ``UnsafeValue`` if one is refused."""
        raise NotImplementedError(f"{type(self).__name__} must define match()")

    def shape(self, uri: str) -> bool:
        """Whether ``uri`` has the template's shape, whatever its values (for the scopes that guard it)."""
        raise NotImplementedError(f"{type(self).__name__} must define shape()")

    def completion_hints(self) -> Mapping[str, Any]:
        """Variable name → type hint, to complete ``Literal``/enum values; none by default."""
        return {}


class PromptBase:
    """A prompt as the engine serves it: its listing and one ``render``."""

    name: str
    scopes: frozenset[str]
    tags: frozenset[str] = frozenset()
    """Labels for the server's own use (``server.disable(tags=...)``, a mount's ``include=``); never sent."""

    def listing(self) -> dict[str, Any]:
        """Its ``prompts/list`` entry."""
        raise NotImplementedError(f"{type(self).__name__} must define listing()")

    async def render(self, arguments: dict[str, Any], context: CallContext) -> dict[str, Any]:
        """The ``prompts/get`` result (``description``, ``messages``)."""
        raise NotImplementedError(f"{type(self).__name__} must define render()")

    def completion_hints(self) -> Mapping[str, Any]:
        """Argument name → type hint, to complete ``Literal``/enum values; none by default."""
        return {}
