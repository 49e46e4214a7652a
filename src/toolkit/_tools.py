"""The Tool model: a decorated function, its natural schemas, and how a call runs.

Everything derivable is computed once, here, at registration: the input and output
schemas (natural 2020-12, whatever the protocol version), their validators, the
per-parameter converters and the return-value serializer. A call is then: check the
arguments against the advertised schema (so the schema and the validator agree by
construction), convert them with pydantic, run the function, serialize the result.
How an older client sees the tool is not this module's business (see ``_compat``).
"""

from __future__ import annotations

import asyncio
import collections.abc
import inspect
import logging
import typing
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final, Literal, NotRequired, Unpack, get_args, get_origin

import pydantic
import pydantic_core
from typing_extensions import TypedDict

from ._components import TaskSupport, ToolBase, declared_tags, not_serializable
from ._content import CallOutcome, ContentBlock, ToolResult
from ._depends import sent_by_client
from ._errors import ArgumentsInvalid, McpError, OutputInvalid, RegistrationError, SchemaError, ToolError
from ._functions import FACTORY, FunctionInfo, Param, failure_hint, filled, inspect_function, invoke, where_defined
from ._schema import hints, unions
from ._schema.checks import describe_errors

if TYPE_CHECKING:
    from ._extensions.apps import App, AppLink

logger = logging.getLogger("toolkit")


def _is_block(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, ContentBlock)


def _is_content_annotation(annotation: Any) -> bool:
    """``str``, a content block, ``ToolResult``, or a list/union of blocks: no output schema.

    ``list[str]`` is data (a JSON array of strings), not content: a list counts as content
    only when it holds block types (``list[Text | Image]``, ``list[str | Image]``).
    """
    if annotation is str or annotation is ToolResult or _is_block(annotation):
        return True
    origin = get_origin(annotation)
    if origin is typing.Annotated:
        return _is_content_annotation(get_args(annotation)[0])
    args = [arg for arg in get_args(annotation) if arg is not Ellipsis]
    if origin is typing.Union or type(annotation).__name__ == "UnionType":
        return bool(args) and all(_is_content_annotation(arg) for arg in args)
    if origin in (list, tuple, collections.abc.Sequence):
        members = [member for arg in args for member in (get_args(arg) or (arg,))]
        return any(_is_block(member) for member in members) and all(
            member is str or _is_block(member) for member in members
        )
    return False


def _converter(annotation: Any) -> Callable[[Any], Any]:
    """Turn a schema-valid JSON value into what the function expects."""
    simple = hints.primitive(annotation)
    if simple is not None:  # the schema check already enforced the constraints
        annotation = simple[0]
    if annotation is str or annotation is bool or annotation is Any:
        return lambda value: value
    if annotation is int:
        return lambda value: int(value) if isinstance(value, float) else value
    if annotation is float:
        return _to_float
    return hints.adapter_for(annotation).validate_python


def _to_float(value: Any) -> Any:
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            return float(value)
        except OverflowError:
            raise ValueError("a number beyond the range of a 64-bit float") from None
    return value


def _error_location(error: Mapping[str, Any], root: str) -> str:
    path = "/".join(str(part) for part in error.get("loc", ()))
    return f"{root}/{path}" if path else root


def _schema_object(schema: Any, what: str) -> dict[str, Any]:
    if not isinstance(schema, Mapping):
        raise SchemaError(f"{what} must be a JSON Schema object (a dict), not {type(schema).__name__}")
    return dict(schema)


class ToolOptions(TypedDict, total=False):
    """The keyword options of ``@server.tool`` / ``server.add_tool`` (each documented on ``Server.tool``)."""

    name: str | None
    title: str | None
    description: str | None
    annotations: Mapping[str, Any] | None
    meta: Mapping[str, Any] | None
    icons: list[dict[str, Any]] | None
    input_schema: Mapping[str, Any] | None
    output_schema: Mapping[str, Any] | None
    structured_output: bool | None
    root_param: str | None
    timeout: float | None
    scopes: Iterable[str] | None
    tags: Iterable[str] | None
    task: TaskSupport
    task_start: Literal["call", "begin_task"]
    blocking: bool
    app: App | AppLink | str | None


class Tool(ToolBase):
    """A registered tool. Built by ``@server.tool``; rarely constructed directly."""

    validate_arguments = False  # bind() checks them, then converts them to the parameters' types

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        context_type: type,
        mask_errors: bool | Callable[[], bool] = True,
        max_argument_depth: int = 64,
        **options: Unpack[ToolOptions],
    ) -> None:
        unknown = sorted(set(options) - set(ToolOptions.__annotations__))
        if unknown:
            raise TypeError(
                f"tool {getattr(fn, '__name__', fn)!r}: unexpected option(s) {', '.join(unknown)}; "
                f"the options are {', '.join(ToolOptions.__annotations__)}"
            )
        info = inspect_function(fn, kind="tool", context_type=context_type, dependencies=True)
        self.fn = fn
        self.info = info
        name = options.get("name") or info.name
        self.name = name
        self._what = f"tool {name!r}"
        description = options.get("description")
        self.timeout = options.get("timeout")
        task_start = options.get("task_start", "call")
        if task_start not in ("call", "begin_task"):
            raise ValueError(
                f"tool {name!r}: task_start={task_start!r} is not 'call' (the task starts with the call) "
                "or 'begin_task' (it starts when the function awaits ctx.begin_task())"
            )
        if task_start == "begin_task" and not (info.is_async and info.context_param is not None):
            raise ValueError(
                f"tool {name!r}: task_start='begin_task' needs an async function that takes a Context "
                "(the task begins when it awaits ctx.begin_task())"
            )
        blocking = options.get("blocking")
        if blocking is not None and info.is_async:
            raise ValueError(
                f"tool {name!r}: blocking= is for a plain def function (blocking=False runs it on the "
                "event loop instead of a worker thread); an async def already runs on the event loop"
            )
        self.inline = blocking is False
        """A plain function that never blocks (``blocking=False``): called on the event loop, no thread."""
        self._mask_errors = mask_errors
        self._provided = frozenset(dependency.name for dependency in info.dependencies)
        if info.dependencies:  # called through an Injector (_injection); a tool without them pays nothing
            from ._injection import inject  # noqa: PLC0415 - loaded by the servers whose functions have dependencies

            masked = lambda: self.mask_errors  # noqa: E731 - read on each failure: Server(mask_errors=) may change
            self.info = info = inject(
                info, kind="tool", name=name, context_type=context_type, inline=self.inline, masked=masked
            )
        self._return_hint: tuple[Any] | None = None  # with a typed serializer: (the hint it serializes through,)
        input_schema = self._build_input_schema(info, options.get("input_schema"), options.get("root_param"))
        if options.get("input_schema") is None:
            for untyped in info.untyped:
                _warn_untyped(name, fn, next(param for param in info.params if param.name == untyped))
        output_schema, self._serialize = self._build_output(
            info, options.get("output_schema"), options.get("structured_output")
        )
        super().__init__(
            name,
            input_schema=input_schema,
            output_schema=output_schema,
            title=options.get("title"),
            description=description if description is not None else (info.doc.summary or ""),
            annotations=options.get("annotations"),
            icons=options.get("icons"),
            meta=options.get("meta"),
            scopes=options.get("scopes"),
            tags=_tags(options.get("tags"), name, info.name, fn),
            task=options.get("task", "forbidden"),
            max_argument_depth=max_argument_depth,
            # generated from the hints: compiled by the first call (a hand-written one now, as given)
            compile_later=options.get("input_schema") is None and options.get("output_schema") is None,
        )
        self.task_start = task_start

    # --- registration ------------------------------------------------------------------------

    def _build_input_schema(
        self, info: FunctionInfo, input_schema: Mapping[str, Any] | None, root_param: str | None
    ) -> dict[str, Any]:
        self._root_param = root_param
        if input_schema is not None:
            if root_param is not None:
                raise RegistrationError(f"{self._what}: give either input_schema= or root_param=, not both")
            self._converters: tuple[tuple[str, Callable[[Any], Any]], ...] | None = ()
            self._known = None
            return _schema_object(input_schema, f"{self._what}: input_schema=")
        if info.accepts_kwargs:
            raise RegistrationError(
                f"{self._what} takes **kwargs; toolkit cannot derive a schema for it. Name the parameters, "
                "or pass input_schema= describing them"
            )
        self._converters = None  # made by the first call (``_make_converters``): pydantic's validators
        self._known = frozenset(param.name for param in info.params)
        if root_param is not None:
            return self._root_schema(info, root_param)
        return self._object_schema(info)

    def _root_schema(self, info: FunctionInfo, root_param: str) -> dict[str, Any]:
        others = [param.name for param in info.params if param.name != root_param]
        if root_param not in self._known or others:  # type: ignore[operator]
            raise RegistrationError(
                f"{self._what}: root_param={root_param!r} must name the tool's only parameter "
                f"(besides a Context); the function takes {[param.name for param in info.params]}"
            )
        annotation = info.params[0].annotation
        schema = hints.type_schema(annotation, "validation")
        defs = schema.get("$defs", {})
        schema = hints.inline_root_ref(schema)
        if not unions.is_object_schema(schema, defs):
            raise RegistrationError(
                f"{self._what}: root_param {root_param!r} must be a model or a union of models (its JSON "
                f"must always be an object); {annotation!r} is not"
            )
        return {"type": "object", **{key: value for key, value in schema.items() if key != "type"}}

    def _object_schema(self, info: FunctionInfo) -> dict[str, Any]:
        properties: dict[str, Any] = {}
        defs: dict[str, Any] = {}
        clash = False
        for param in info.params:
            fragment, fragment_defs = hints.split_defs(hints.type_schema(param.annotation, "validation"))
            for def_name, definition in fragment_defs.items():
                if defs.setdefault(def_name, definition) != definition:
                    clash = True
            properties[param.name] = fragment
        if clash:  # two types share a name: let pydantic name them in one pass
            properties, defs = self._combined_properties(info)
        for param in info.params:
            fragment = properties[param.name] = dict(properties[param.name])
            described = info.doc.params.get(param.name)
            if described and "description" not in fragment:
                fragment["description"] = described
            if not param.required and param.default is not FACTORY:
                shown, value = hints.json_default(param.annotation, param.default)
                if shown:
                    fragment["default"] = value
        schema: dict[str, Any] = {"type": "object", "properties": properties}
        required = [param.name for param in info.params if param.required]
        if required:
            schema["required"] = required
        schema["additionalProperties"] = False
        if defs:
            schema["$defs"] = defs
        return schema

    def _combined_properties(self, info: FunctionInfo) -> tuple[dict[str, Any], dict[str, Any]]:
        fields = {p.name: (p.annotation if p.required else NotRequired[p.annotation]) for p in info.params}
        arguments = TypedDict(f"{self.name}_arguments", fields)  # type: ignore[misc]
        schema = hints.type_schema(arguments, "validation")
        defs = schema.pop("$defs", {})
        return dict(schema.get("properties", {})), defs

    def _build_output(
        self, info: FunctionInfo, output_schema: Mapping[str, Any] | None, structured_output: bool | None
    ) -> tuple[dict[str, Any] | None, Callable[[Any], Any] | None]:
        annotation = info.return_annotation
        typed = info.has_return_annotation and not _is_content_annotation(annotation)
        if output_schema is not None:
            if structured_output is False:
                raise RegistrationError(f"{self._what}: output_schema= contradicts structured_output=False")
            serialize = self._serializer(annotation) if typed else pydantic_core.to_jsonable_python
            return _schema_object(output_schema, f"{self._what}: output_schema="), serialize
        if structured_output is False:
            return None, None
        if structured_output is None and not typed:
            return None, None
        if not info.has_return_annotation or annotation is ToolResult:
            raise RegistrationError(
                f"{self._what}: structured_output=True needs a return type hint (or output_schema=) to "
                "derive the output schema from"
            )
        return hints.type_schema(annotation, "serialization"), self._serializer(annotation)

    def _serializer(self, annotation: Any) -> Callable[[Any], Any]:
        self._return_hint = (annotation,)
        adapter: pydantic.TypeAdapter[Any] | None = None

        def serialize(value: Any) -> Any:
            nonlocal adapter
            if adapter is None:  # built by the first result, not at registration
                adapter = hints.adapter_for(annotation)
            # No pydantic warnings: the result is checked against the output schema next,
            # which catches a value that does not fit the declared type.
            return adapter.dump_python(value, mode="json", by_alias=True, warnings=False)

        return serialize

    # --- calling -----------------------------------------------------------------------------

    def bind(self, arguments: Mapping[str, Any], *, size: int = 0, checked: bool = False) -> dict[str, Any]:
        """Validate ``arguments`` and return the keyword arguments for the function.

        ``size`` is the number of JSON values in the arguments, when known: for very large
        arguments only the first problem is described (listing them all can take seconds).
        ``checked``: the caller has already checked them against this tool's input schema.
        """
        if not checked and not self._input_validator.is_valid(arguments):
            provided = self._provided.intersection(arguments)
            if provided:
                raise ArgumentsInvalid(sent_by_client(self.info.dependencies, provided))
            limit = 5 if size < _DESCRIBE_ALL_BELOW else 1
            problems = describe_errors(self._input_validator, arguments, root="arguments", limit=limit)
            raise ArgumentsInvalid("; ".join(problems))
        converters = self._converters
        if converters is None:
            converters = self._converters = self._make_converters()
        if self._root_param is not None:
            converter = converters[0][1]
            return {self._root_param: self._convert(converter, dict(arguments), "arguments")}
        if self._known is None:  # hand-written input schema: the JSON values as they are
            return dict(arguments)
        kwargs: dict[str, Any] = {}
        for name, converter in converters:
            if name in arguments:
                kwargs[name] = self._convert(converter, arguments[name], f"arguments/{name}")
        return kwargs

    def _make_converters(self) -> tuple[tuple[str, Callable[[Any], Any]], ...]:
        """Each parameter's converter: pydantic validators, built on the first call rather than at
        registration (a server of hundreds of tools starts without compiling one it may never run)."""
        return tuple((param.name, _converter(param.annotation)) for param in self.info.params)

    @staticmethod
    def _convert(converter: Callable[[Any], Any], value: Any, where: str) -> Any:
        try:
            return converter(value)
        except pydantic.ValidationError as exc:
            problems = [f"{_error_location(error, where)}: {error['msg']}" for error in exc.errors()]
            raise ArgumentsInvalid("; ".join(problems)) from None
        except (ValueError, OverflowError) as exc:
            raise ArgumentsInvalid(f"{where}: {exc}") from None

    async def call(self, arguments: dict[str, Any] | None, context: Any, *, checked: bool = False) -> CallOutcome:
        """Run the tool. Argument and tool failures come back as ``is_error`` outcomes.

        ``checked``: ``arguments`` are known to satisfy the input schema (a transformed tool
        checked its own and mapped them back), so they are converted without a second check.
        """
        prepared = await self.prepare(arguments, context, checked=checked)
        if not isinstance(prepared, dict):
            return prepared
        value = await self.run(prepared)
        if isinstance(value, CallOutcome):
            return value
        return self.finish(value)

    # The three phases of ``call`` (tracing times each one).

    async def prepare(
        self, arguments: dict[str, Any] | None, context: Any, *, checked: bool = False
    ) -> dict[str, Any] | CallOutcome:
        """The function's keyword arguments from validated ``arguments``, or the ``is_error`` outcome."""
        size = await normalize_arguments(arguments, self.max_argument_depth) if arguments else 0
        if size < 0:
            return self.too_deep()
        try:
            kwargs = self.bind(arguments or {}, size=size, checked=checked)
        except ArgumentsInvalid as exc:
            return CallOutcome.error(f"Invalid arguments for tool {self.name!r}: {exc}")
        if self.info.context_param is not None:
            kwargs[self.info.context_param] = context
        return kwargs

    async def run(self, kwargs: dict[str, Any]) -> Any:
        """The function's return value, or a ``CallOutcome`` for a failure (see ``failed``)."""
        try:
            if self.inline:
                value = self.info.fn(**filled(self.info, kwargs))
                if inspect.isawaitable(value):
                    value = await value
            elif self.timeout is None:
                value = await invoke(self.info, kwargs)
            else:
                async with asyncio.timeout(self.timeout):
                    value = await invoke(self.info, kwargs)
        except ToolError as exc:
            return CallOutcome.error(str(exc))
        except McpError:
            raise
        except TimeoutError:
            if self.timeout is None:
                raise
            return CallOutcome.error(f"Tool {self.name!r} timed out after {self.timeout:g} s")
        except (Exception, SystemExit) as exc:
            # SystemExit too: a tool that calls sys.exit() (argparse on bad input, say) must
            # not end the whole server; it is one failed call.
            hint = failure_hint(exc)
            logger.exception("tool %r raised%s", self.name, f" ({hint})" if hint else "")
            if self.mask_errors:
                return CallOutcome.error(f"Error executing tool {self.name!r}")
            said = f"Error executing tool {self.name!r}: {type(exc).__name__}: {exc}"
            return CallOutcome.error(f"{said} ({hint})" if hint else said)
        return value

    @property
    def mask_errors(self) -> bool:
        """Whether a client sees "Error executing tool" rather than the exception (``Server(mask_errors=...)``)."""
        mask = self._mask_errors
        return mask() if callable(mask) else mask

    @staticmethod
    def failed(value: Any) -> bool:
        """Whether ``run`` ended in a failure rather than with the function's value."""
        return isinstance(value, CallOutcome)

    def structured(self, value: Any) -> Any:
        """``value`` serialized through the return type, checked against the output schema."""
        assert self._serialize is not None or self.output_schema is None
        serialize = self._serialize or pydantic_core.to_jsonable_python
        try:
            structured = serialize(value)
        except (pydantic_core.PydanticSerializationError, TypeError, ValueError) as exc:
            raise not_serializable(value, exc) from None
        validator = self._output_validator
        if validator is None or validator.is_valid(structured):
            return structured
        if self._return_hint is not None:
            # A dict where the hint says model, say: validate into the declared type first.
            try:
                converted = hints.adapter_for(self._return_hint[0]).validate_python(value)
                structured = serialize(converted)
            except (pydantic.ValidationError, pydantic_core.PydanticSerializationError, TypeError, ValueError):
                pass
            else:
                if validator.is_valid(structured):
                    return structured
        raise OutputInvalid("; ".join(describe_errors(validator, structured, root="result")))


def _tags(tags: Iterable[str] | None, name: str, function: str, fn: Callable[..., Any]) -> frozenset[str]:
    """``tags=`` checked, the error naming where the function is (looked up only when there are tags)."""
    if tags is None:
        return frozenset()
    return declared_tags(tags, f"tool {name!r} ({function}() in {where_defined(fn)})")


def _warn_untyped(tool: str, fn: Callable[..., Any], param: Param) -> None:
    """A parameter without a hint accepts any JSON value, passed as it came: say so, and what to write.

    A logged warning, not ``warnings.warn``: it shows on the terminal under ``toolkit run`` and
    ``toolkit dev`` (Python prints a warning with no logging configured), without failing a
    test suite run with warnings as errors. ``Any`` written out says "anything" on purpose.
    """
    default = param.default
    suggested = type(default).__name__ if isinstance(default, str | int | float | bool) else "str"
    if default is None:
        suggested += " | None"
    logger.warning(
        "tool %r (%s): parameter %r has no type hint, so clients may send any JSON value there and the function "
        'gets it as it came ("no" stays a string, which is true). Annotate it (%s: %s), or with Any to take '
        "any value on purpose",
        tool,
        where_defined(fn),
        param.name,
        param.name,
        suggested,
    )


_EXACT_FLOAT_LIMIT: Final = 2.0**53
_YIELD_EVERY: Final = 20_000
_DESCRIBE_ALL_BELOW: Final = 10_000


async def normalize_arguments(arguments: dict[str, Any], limit: int) -> int:
    """Check the nesting depth and make large whole numbers ints; the number of values, or -1.

    -1 means the arguments nest deeper than ``limit``. JSON Schema counts ``1e20`` as an
    integer, and so must the validator: a float this large is always whole, so it becomes
    the int it denotes (pydantic would refuse it for ``int``). Iterative and in place (the
    arguments were parsed for this request alone); on huge arguments it lets other requests
    run every ``_YIELD_EVERY`` values, so one client cannot stall the others.
    """
    stack: list[tuple[Any, int]] = [(arguments, 1)]
    seen = 0
    next_pause = _YIELD_EVERY
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return -1
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, child in items:
            seen += 1
            if isinstance(child, dict | list):
                stack.append((child, depth + 1))
            elif isinstance(child, float) and abs(child) >= _EXACT_FLOAT_LIMIT and child.is_integer():
                node[key] = int(child)  # replaces a value: safe while iterating
            if seen >= next_pause:
                next_pause = seen + _YIELD_EVERY
                await asyncio.sleep(0)
    return seen
