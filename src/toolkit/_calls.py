"""The requests that run a server's code: ``tools/call``, ``resources/read``, ``prompts/get``,
``completion/complete``, and the multi round-trip input (2026-07-28) any of them may ask for.

The engine (``_engine``) decides the era, builds the inbound request and dispatches; ``Calls``
finds the tool, resource or prompt in the registry, prepares its ``Context`` (loading the
answers of earlier rounds), runs it through the ``on_call_tool`` middleware and tracing when
there are any, and shapes the outcome for the caller's version through ``_compat``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from . import _compat
from ._completions import choices, completion_result
from ._components import CallContext, PromptBase, ResourceBase, ToolBase
from ._content import CallOutcome
from ._context import Context, Services
from ._errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    ArgumentsTooDeep,
    InputRequired,
    McpError,
    PromptError,
    ResourceError,
    ToolError,
    URLElicitationRequired,
)
from ._extensions.base import Extension
from ._inbound import InboundRequest
from ._jsonrpc import Raw, TooDeep, encode, json_type
from ._middleware.base import VIEW, Pipeline, call_tool
from ._registry import Registry
from ._settings import Settings

if TYPE_CHECKING:
    from ._uritemplate import Value

logger = logging.getLogger("toolkit")

Envelop = Callable[..., dict[str, Any]]
"""The engine's ``envelop(result, inbound, *, result_type=...)``: the modern envelope, once per result."""


class Calls:
    """Runs tools, reads resources, renders prompts and completes arguments for the engine."""

    def __init__(
        self,
        registry: Registry,
        settings: Settings,
        shapes: _compat.ToolShapes,
        envelop: Envelop,
        *,
        owner: Any,
        lifespan_state: Callable[[], Any],
    ) -> None:
        self.registry = registry
        self.settings = settings
        self.shapes = shapes
        self.call_hooks: list[Extension] = []
        """Extensions with a ``tools/call`` hook (``Engine.add_extension``); none: nothing is asked."""
        self.envelop = envelop
        self.services = Services(settings, owner, lifespan_state, self.read_resource)
        self.pipeline: Pipeline | None = None
        """The middleware (set by ``Engine.use``); ``None``: none, the plain path."""
        self._closings: dict[str, bytes] = {}
        """The end of a spliced result, by protocol version (``_closing``)."""

    async def tools_call(self, inbound: InboundRequest) -> dict[str, Any] | Raw:
        params = inbound.params
        name = required_str(params, "name")
        tool = self.registry.tools.get(name)
        if tool is None:
            raise McpError(INVALID_PARAMS, f"Unknown tool: {name!r}", {"name": name})
        try:
            arguments = _arguments(params)
        except ArgumentsTooDeep:  # for a tool, bad arguments are an isError result
            return self.envelop(_compat.call_result(tool.too_deep(), None, inbound.version), inbound)
        for extension in self.call_hooks:  # usually none wants it: no list, no call object
            if extension.wants_call(tool, params):
                wanting = [hook for hook in self.call_hooks if hook.wants_call(tool, params)]
                return await self._around(wanting, _ToolCall(self, inbound, tool, arguments))
        # No middleware and no extension around the call: only the encoder reads this result.
        return await self._plain_call(inbound, tool, arguments, unseen=self.pipeline is None)

    async def _around(self, extensions: list[Extension], call: _ToolCall) -> dict[str, Any]:
        """The call through the ``around_call`` hooks of ``extensions``, outermost first."""
        extension, rest = extensions[0], extensions[1:]

        async def call_next() -> dict[str, Any]:
            if rest:
                return await self._around(rest, call)
            result = await self._plain_call(call.inbound, call.tool, call.arguments)
            assert isinstance(result, dict)  # not unseen: the hooks read it
            return result

        return await extension.around_call(call, call_next)

    async def _plain_call(
        self, inbound: InboundRequest, tool: ToolBase, arguments: dict[str, Any], *, unseen: bool = False
    ) -> dict[str, Any] | Raw:
        """The call with no hook around it; ``unseen``: nothing but the encoder reads the result (a big
        value's text fallback is then written by the encoder, never made whole; a proxied result of the
        caller's version is sent on as it came, ``CallOutcome.wire``). Only ``unseen`` gives a ``Raw``."""
        name = tool.name
        context = self._prepare(inbound, name, arguments)
        try:
            if self.pipeline is None and inbound.trace is None and not tool.validate_arguments:
                outcome = await tool.call(arguments, context)  # the plain path: no hook, no span
            else:
                outcome = await self._call(inbound, tool, arguments, context)
        except InputRequired:
            return self._input_required(inbound, name, arguments)
        except URLElicitationRequired as exc:
            if not inbound.modern:
                raise
            # 2026-07-28 reserves -32042 unused: the same URLs are this round's questions, and the
            # retry runs the tool again, which raises again until the user has been there.
            inbound.pending_inputs.update(_compat.url_input_requests(exc, inbound.version))
            return self._input_required(inbound, name, arguments)
        except ToolError as exc:  # raised outside the tool body (a missing legacy capability)
            outcome = CallOutcome.error(str(exc))
        if outcome.is_error and inbound.trace is not None:
            inbound.trace.tool_error(outcome)
        shape = self.shapes.get(tool, inbound.version)
        wire = outcome.wire
        if unseen and wire is not None:  # a proxied result, sent on as it came (as the caller's version has it)
            members = wire[1] if wire[0] == inbound.version else _compat.members_for(*wire[1:], inbound.version, shape)
            if members is not None:
                return Raw(members + self._closing(inbound))
        result = _compat.call_result(outcome, shape, inbound.version, unseen=unseen)
        return self.envelop(result, inbound)

    def _closing(self, inbound: InboundRequest) -> bytes:
        """What follows a spliced result's members: the era's envelope and the closing brace (made once
        per version: the server's info is)."""
        closing = self._closings.get(inbound.version)
        if closing is None:
            envelope = encode(self.envelop({}, inbound))
            closing = self._closings[inbound.version] = b"}" if envelope == b"{}" else b"," + envelope[1:]
        return closing

    async def _call(
        self, inbound: InboundRequest, tool: ToolBase, arguments: dict[str, Any], context: Context
    ) -> CallOutcome:
        """Run ``tool`` through the ``on_call_tool`` middleware, if any."""
        chain = self.pipeline.call_tool if self.pipeline is not None else None
        if chain is None:
            return await _run_tool(inbound, tool, arguments, context)
        return await call_tool(chain, inbound, tool, lambda arguments: _run_tool(inbound, tool, arguments, context))

    async def resources_read(self, inbound: InboundRequest) -> dict[str, Any]:
        uri = required_str(inbound.params, "uri")
        context = self._prepare(inbound, uri, {})
        try:
            contents, resource = await self._read(uri, context, inbound)
        except InputRequired:
            return self._input_required(inbound, uri, {})
        result: dict[str, Any] = {"contents": contents}
        settings = self.settings
        ttl = getattr(contents, "ttl_ms", None)  # a ReadContents: the freshness its source gave
        if ttl is None:
            ttl = resource.ttl_ms if resource.ttl_ms is not None else settings.read_ttl_ms
        scope = getattr(contents, "cache_scope", None) or resource.cache_scope or settings.read_cache_scope
        _compat.cacheable(result, inbound.version, ttl, scope)
        return self.envelop(result, inbound)

    async def _read(
        self, uri: str, context: Context, inbound: InboundRequest
    ) -> tuple[list[dict[str, Any]], ResourceBase]:
        found = self.registry.find_resource(uri)
        if found is None:
            raise _compat.resource_not_found(uri, inbound.version)
        target, variables = found
        try:
            contents = await target.read(uri, variables, context)
        except (InputRequired, McpError):
            raise
        except (ResourceError, ToolError) as exc:
            raise McpError(INTERNAL_ERROR, str(exc), {"uri": uri}) from None
        except ValueError as exc:
            raise McpError(INVALID_PARAMS, f"Invalid params: {exc}", {"uri": uri}) from None
        except Exception:
            logger.exception("resource %r raised", uri)
            raise McpError(INTERNAL_ERROR, f"Error reading resource {uri}", {"uri": uri}) from None
        return contents, target

    async def read_resource(self, uri: str, inbound: InboundRequest) -> list[dict[str, Any]]:
        """A resource's contents as they would go on the wire (``ctx.read_resource``)."""
        contents, _ = await self._read(uri, Context(inbound, self.services), inbound)
        return contents

    async def prompts_get(self, inbound: InboundRequest) -> dict[str, Any]:
        name = required_str(inbound.params, "name")
        prompt = self.registry.prompts.get(name)
        if prompt is None:
            raise McpError(INVALID_PARAMS, f"Unknown prompt: {name!r}", {"name": name})
        arguments = _arguments(inbound.params)
        context = self._prepare(inbound, name, arguments)
        try:
            result = await prompt.render(arguments, context)
        except InputRequired:
            return self._input_required(inbound, name, arguments)
        except (PromptError, ToolError) as exc:
            raise McpError(INVALID_PARAMS, str(exc)) from None
        except McpError:
            raise
        except Exception:
            logger.exception("prompt %r raised", name)
            raise McpError(INTERNAL_ERROR, f"Error rendering prompt {name!r}") from None
        return self.envelop(result, inbound)

    async def complete(self, inbound: InboundRequest) -> dict[str, Any]:
        params = inbound.params
        ref = params.get("ref")
        argument = params.get("argument")
        if not isinstance(ref, dict) or not isinstance(argument, dict) or not isinstance(argument.get("name"), str):
            raise McpError(INVALID_PARAMS, 'Invalid params: completion/complete needs "ref" and "argument.name"')
        context_args = (params.get("context") or {}).get("arguments") or {}
        value = str(argument.get("value", ""))
        try:
            values = await self._completions(
                ref, argument["name"], value, context_args, Context(inbound, self.services)
            )
        except McpError:
            raise
        except Exception:
            logger.exception("completion for %r raised", ref)
            raise McpError(INTERNAL_ERROR, "Error computing completions") from None
        return self.envelop(completion_result(values), inbound)

    async def _completions(
        self, ref: dict[str, Any], argument: str, value: str, arguments: dict[str, str], context: Context
    ) -> list[str]:
        registry = self.registry
        kind = ref.get("type")
        if kind == "ref/prompt":
            target = str(ref.get("name"))
            prompt = registry.prompts.get(target)
            if prompt is None:
                raise McpError(INVALID_PARAMS, f"Unknown prompt: {target!r}", {"name": target})
            params = prompt.completion_hints()
        elif kind == "ref/resource":
            target = str(ref.get("uri"))
            template = registry.templates.get(target)
            if template is None and target not in registry.resources:
                raise McpError(INVALID_PARAMS, f"Unknown resource template: {target!r}", {"uri": target})
            params = template.completion_hints() if template is not None else {}
        else:
            raise McpError(
                INVALID_PARAMS, f'Invalid params: unknown ref type {kind!r}; use "ref/prompt" or "ref/resource"'
            )
        completer = registry.completers.get((kind, target, argument))
        if completer is not None:
            return await completer.values(value, arguments, context)
        ask = getattr(prompt if kind == "ref/prompt" else template, "complete", None)
        if ask is not None:  # a mounted or proxied prompt or template: its own server completes it
            given = await ask(argument, value, arguments, context)
            if given is not None:
                return list(given)
        options = choices(params.get(argument))
        return [option for option in options or [] if option.startswith(value)]

    # --- as a mounted server's engine (the ``_sources.mounted.Runner``) ------------------------------

    async def run_tool(self, tool: ToolBase, arguments: dict[str, Any], outer: CallContext) -> CallOutcome:
        """Run this server's ``tool`` for a parent's call: this server's ``on_call_tool`` middleware,
        ``ctx.server`` and ``ctx.lifespan``; the parent's request (its stream, answers, task, trace)."""
        inbound = _nested(outer, {"name": tool.name, "arguments": arguments})
        context = Context(inbound, self.services)

        async def run(given: dict[str, Any]) -> CallOutcome:
            try:
                if given is not arguments and tool.validate_arguments:  # a middleware replaced the checked ones
                    problem = tool.invalid_arguments(given)
                    if problem is not None:
                        return CallOutcome.error(f"Invalid arguments for tool {tool.name!r}: {problem}")
                return await tool.call(given, context)
            except ToolError as exc:
                return CallOutcome.error(str(exc))

        chain = self.pipeline.call_tool if self.pipeline is not None else None
        if chain is None:
            return await run(arguments)
        return await call_tool(chain, inbound, tool, run)

    async def run_read(
        self, resource: ResourceBase, uri: str, variables: Mapping[str, Value], outer: CallContext
    ) -> list[dict[str, Any]]:
        """Read this server's ``resource`` for a parent's ``resources/read`` (this server's ``ctx``)."""
        inbound = _nested(outer, {"uri": uri})
        return await resource.read(uri, variables, Context(inbound, self.services))

    async def run_render(self, prompt: PromptBase, arguments: dict[str, Any], outer: CallContext) -> dict[str, Any]:
        """Render this server's ``prompt`` for a parent's ``prompts/get`` (this server's ``ctx``)."""
        inbound = _nested(outer, {"name": prompt.name, "arguments": arguments})
        return await prompt.render(arguments, Context(inbound, self.services))

    async def run_complete(
        self, ref_type: str, target: str, argument: str, value: str, arguments: dict[str, str], outer: CallContext
    ) -> list[str] | None:
        """This server's completer for one argument, or ``None`` if it has none."""
        completer = self.registry.completers.get((ref_type, target, argument))
        if completer is None:
            return None
        ref = {"type": ref_type, "name" if ref_type == "ref/prompt" else "uri": target}
        inbound = _nested(outer, {"ref": ref, "argument": {"name": argument, "value": value}})
        return await completer.values(value, arguments, Context(inbound, self.services))

    # --- multi round-trip input -------------------------------------------------------------------

    def _prepare(self, inbound: InboundRequest, name: str, arguments: dict[str, Any]) -> Context:
        """The handler's ``Context``; in the modern era, load the answers of earlier rounds."""
        if inbound.modern:
            answers: dict[str, Any] = {}
            state = inbound.params.get("requestState")
            if state is not None:
                sealer = self.settings.state_sealer
                answers.update(
                    sealer.open(state, method=inbound.method, name=name, arguments=arguments, caller=inbound.caller)
                )
            responses = inbound.params.get("inputResponses")
            if isinstance(responses, dict):
                answers.update({key: value for key, value in responses.items() if isinstance(value, dict)})
            inbound.answers = answers
        return Context(inbound, self.services)

    def _input_required(self, inbound: InboundRequest, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        if not inbound.modern or not inbound.pending_inputs:  # pragma: no cover - legacy never raises it
            raise McpError(INTERNAL_ERROR, "Internal error: input requested outside the modern era")
        state = self.settings.state_sealer.seal(
            method=inbound.method, name=name, arguments=arguments, answers=inbound.answers, caller=inbound.caller
        )
        result = {"inputRequests": dict(inbound.pending_inputs), "requestState": state}
        return self.envelop(result, inbound, result_type="input_required")


async def _run_tool(
    inbound: InboundRequest, tool: ToolBase, arguments: dict[str, Any], context: Context
) -> CallOutcome:
    """``tool.call``, traced when tracing is on; arguments checked first for a tool that asks for it."""
    try:
        if tool.validate_arguments:
            problem = tool.invalid_arguments(arguments)
            if problem is not None:
                return CallOutcome.error(f"Invalid arguments for tool {tool.name!r}: {problem}")
        if inbound.trace is not None:
            return await inbound.trace.call_tool(tool, arguments, context)
        return await tool.call(arguments, context)
    except ToolError as exc:  # raised outside the tool body (a missing legacy capability)
        return CallOutcome.error(str(exc))


def _nested(outer: CallContext, params: dict[str, Any]) -> InboundRequest:
    """The parent's inbound request as a mounted server sees it: its own names in ``params``.

    The stream, the answers of earlier rounds, the questions still pending and the task are the
    parent's (shared, so a question the child asks ends the parent's round); the middleware's
    view of the request is the child's own.
    """
    parent: InboundRequest = outer._inbound  # type: ignore[attr-defined]  # a Context: the engine made it
    extras = parent.extras
    if VIEW in extras:
        extras = {key: value for key, value in extras.items() if key != VIEW}
    return parent.nested({**parent.params, **params}, extras)


def required_str(params: dict[str, Any], name: str) -> str:
    value = params.get(name)
    if not isinstance(value, str):
        problem = "is missing" if value is None else f"must be a string, not {type(value).__name__}"
        raise McpError(INVALID_PARAMS, f'Invalid params: "{name}" {problem}', {"param": name, "problem": problem})
    return value


def _arguments(params: dict[str, Any]) -> dict[str, Any]:
    if "arguments" not in params:  # absent: no arguments; null is not an object in any version's schema
        return {}
    arguments = params["arguments"]
    if isinstance(arguments, TooDeep):
        raise ArgumentsTooDeep
    if not isinstance(arguments, dict):
        problem = f"must be an object, not {json_type(arguments)}"
        raise McpError(
            INVALID_PARAMS, f'Invalid params: "arguments" {problem}', {"param": "arguments", "problem": problem}
        )
    return arguments


class _ToolCall:
    """One ``tools/call`` as an extension's ``around_call`` hook sees it (``_extensions.base.ToolCall``)."""

    __slots__ = ("_calls", "arguments", "inbound", "tool")

    def __init__(self, calls: Calls, inbound: InboundRequest, tool: ToolBase, arguments: dict[str, Any]) -> None:
        self._calls = calls
        self.inbound = inbound
        self.tool = tool
        self.arguments = arguments

    def context(self, *, with_answers: bool = True) -> Context:
        if with_answers:
            return self._calls._prepare(self.inbound, self.tool.name, self.arguments)
        return Context(self.inbound, self._calls.services)

    async def run(self, context: Context) -> dict[str, Any]:
        calls, inbound, tool = self._calls, self.inbound, self.tool
        outcome = await calls._call(inbound, tool, self.arguments, context)
        result = _compat.call_result(outcome, calls.shapes.get(tool, inbound.version), inbound.version)
        return calls.envelop(result, inbound)

    def input_required(self) -> dict[str, Any]:
        return self._calls._input_required(self.inbound, self.tool.name, self.arguments)
