"""``Context``: what a tool, resource or prompt can do beyond returning a value.

Declare a parameter of type ``Context`` and toolkit passes one in (it never appears in the
input schema). The same code works in both protocol eras:

- legacy (2025-11-25 and older): ``elicit``/``sample``/``list_roots`` send a request to the
  client over the session and wait for the answer;
- modern (2026-07-28): they use multi round-trip input. On the first round the call ends
  with ``resultType: "input_required"``; the client retries with the answers and the
  function runs again from the top, this time getting them. Code before an ``elicit``
  may therefore run more than once: keep it free of side effects, or do the side effects
  after the questions. To ask several questions in one round, start them together with
  ``asyncio.gather(ctx.elicit(...), ctx.sample(...))``: each records its question before
  the round ends, and all of them go out in the same ``inputRequests``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, NoReturn, TypeVar, cast, overload

import pydantic
from pydantic import BaseModel

from . import _compat
from ._errors import ClientRequestError, InputRequired, ToolError
from ._inbound import BEGIN_TASK, RUNS_AS, InboundRequest, RunsAs
from ._settings import Settings
from ._types import LOG_RANK, LogLevel

if TYPE_CHECKING:
    from ._answers import ElicitResult, Root, SamplingResult
    from ._auth.tokens import AccessToken
    from ._server import Server
    from ._state import Scopes

T = TypeVar("T")


RELAY_KEY: Final = "toolkit/relay"
"""Where ``Context.end_round`` keeps what a relaying server needs on the next round."""

_QUESTIONS: Final = {"elicitation": "elicitation/create", "sampling": "sampling/createMessage", "roots": "roots/list"}

_NOT_GIVEN: Any = object()
"""``ctx.elicit(response_type=...)`` left out (``None`` is a schema there: no data)."""


class Services:
    """What a ``Context`` reaches beyond its own request; the engine hands the same one to every call."""

    __slots__ = ("lifespan_state", "read_resource", "server", "settings")

    def __init__(
        self,
        settings: Settings,
        server: Any,
        lifespan_state: Callable[[], Any],
        read_resource: Callable[[str, InboundRequest], Awaitable[list[dict[str, Any]]]],
    ) -> None:
        self.settings = settings
        self.server = server
        """The ``Server`` facade, for ``ctx.server`` (held, never called, below the facade)."""
        self.lifespan_state = lifespan_state
        self.read_resource = read_resource


class Context:
    """Per-request access to logging, progress, client input, resources and server state."""

    def __init__(self, inbound: InboundRequest, services: Services) -> None:
        self._inbound = inbound
        self._services = services
        self._last_progress: float | None = None
        self._sequence = 0

    if not TYPE_CHECKING:  # for type checkers a Context has only what it has

        def __getattr__(self, name: str) -> Any:
            instead = _FASTMCP_NAMES.get(name)
            if instead is None:
                raise AttributeError(f"'Context' object has no attribute {name!r}")
            raise AttributeError(f"'Context' object has no attribute {name!r} (FastMCP's); in toolkit, {instead}")

    # --- about the request --------------------------------------------------------------------

    @property
    def request_id(self) -> str | int:
        return self._inbound.request_id

    @property
    def method(self) -> str:
        return self._inbound.method

    @property
    def protocol_version(self) -> str:
        """The protocol version in force for this request."""
        return self._inbound.version

    @property
    def session_id(self) -> str | None:
        """The legacy HTTP session's id; ``None`` on stdio and in the stateless modern era."""
        return self._inbound.session.id if self._inbound.session is not None else None

    @property
    def client_info(self) -> dict[str, Any] | None:
        return self._inbound.client_info

    @property
    def log_level(self) -> LogLevel | None:
        """The least severe log level the client takes on this request; ``None``: it takes no log messages.

        Legacy era: the session's ``logging/setLevel`` (``"debug"`` until set). Modern era: the
        request's ``io.modelcontextprotocol/logLevel``, absent unless the client asked.
        """
        return cast("LogLevel | None", self._inbound.log_level)  # checked against LOG_RANK when it came in

    @property
    def access_token(self) -> AccessToken | None:
        """The caller's verified access token (subject, client id, scopes, claims, expiry).

        Set on every request of an HTTP server with ``auth=``; ``None`` otherwise (stdio takes
        its credentials from the environment, as the spec says).
        """
        return self._inbound.access_token

    @property
    def client_capabilities(self) -> dict[str, Any]:
        return self._inbound.client_capabilities

    def client_supports(self, capability: str) -> bool:
        """Whether the client declared ``capability`` ("sampling", "elicitation", "roots", ...)."""
        return self._inbound.client_supports(capability)

    @property
    def request(self) -> Any:
        """What the transport knows of the request, or ``None`` (stdio, in-memory).

        Over HTTP: an object with ``headers`` (a dict, lower-case names), ``client``
        (``(host, port)``) and ``scope`` (the ASGI inbound).
        """
        return self._inbound.request_info

    @property
    def server(self) -> Server:
        server: Server = self._services.server
        return server

    @property
    def lifespan(self) -> Any:
        """What the server's lifespan context manager yielded (``None`` without one)."""
        return self._services.lifespan_state()

    @property
    def state(self) -> Scopes:
        """State kept between calls: ``ctx.state.user``, ``await ctx.state.session(handle)``, ``ctx.state.request``.

        Each is a ``State`` (``get``/``set``/``incr``/``append``/``update``) on the server's store;
        ``await ctx.state.new_session()`` mints a session handle. See docs/state.md.
        """
        from ._state import Scopes  # noqa: PLC0415 - on first use: a server that keeps no state never loads it

        return Scopes(self._inbound, self.server)

    # --- logging and progress -----------------------------------------------------------------

    async def log(
        self, level: LogLevel, data: Any, *, logger: str | None = None, extra: Mapping[str, Any] | None = None
    ) -> None:
        """Send ``notifications/message`` to the client, if it asked for this level.

        Legacy era: filtered by ``logging/setLevel``. Modern era: sent only when the request's
        ``_meta`` carries ``io.modelcontextprotocol/logLevel``, at that level or above.
        ``extra``: structured fields sent with the message, as ``{"message": data, **extra}``.
        """
        if level not in LOG_RANK:
            raise ValueError(f"unknown log level {level!r}; use one of {list(LOG_RANK)}")
        if extra:
            data = {"message": data, **extra}
        threshold = self._inbound.log_level
        if threshold is None or LOG_RANK[level] < LOG_RANK[threshold]:
            return
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        await self._inbound.send({"jsonrpc": "2.0", "method": "notifications/message", "params": params})

    async def debug(self, data: Any, *, logger: str | None = None, extra: Mapping[str, Any] | None = None) -> None:
        await self.log("debug", data, logger=logger, extra=extra)

    async def info(self, data: Any, *, logger: str | None = None, extra: Mapping[str, Any] | None = None) -> None:
        await self.log("info", data, logger=logger, extra=extra)

    async def notice(self, data: Any, *, logger: str | None = None, extra: Mapping[str, Any] | None = None) -> None:
        await self.log("notice", data, logger=logger, extra=extra)

    async def warning(self, data: Any, *, logger: str | None = None, extra: Mapping[str, Any] | None = None) -> None:
        await self.log("warning", data, logger=logger, extra=extra)

    async def error(self, data: Any, *, logger: str | None = None, extra: Mapping[str, Any] | None = None) -> None:
        await self.log("error", data, logger=logger, extra=extra)

    async def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """Send ``notifications/progress``, if the request carried a progress token.

        Progress must increase (spec); a value not above the last one sent is dropped. In a
        task, the progress also becomes the task's ``statusMessage`` (``message``, else
        "progress/total"): 2026-07-28 sends no progress notifications for tasks.
        """
        if self._last_progress is not None and progress <= self._last_progress:
            return
        self._last_progress = progress
        runs_as: RunsAs | None = self._inbound.extras.get(RUNS_AS)
        if runs_as is not None:
            await runs_as.progress(progress, total, message)
        token = self._inbound.progress_token
        if token is None:
            return
        params: dict[str, Any] = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        params = _compat.fields_for("ProgressNotificationParams", params, self._inbound.version)
        await self._inbound.send({"jsonrpc": "2.0", "method": "notifications/progress", "params": params})

    async def close_stream(self) -> None:
        """End this request's SSE connection now; the request goes on (legacy HTTP with an event store).

        The client reconnects with ``Last-Event-ID`` and receives the rest, the result included
        (SEP-1699 polling). Elsewhere (stdio, the modern era, no event store) it does nothing.
        """
        close = getattr(self._inbound.request_info, "close_stream", None)
        if close is not None and not self._inbound.modern:
            await close()

    # --- tasks --------------------------------------------------------------------------------

    async def begin_task(self) -> None:
        """From here on, the call is a task: the client gets its task handle, the function runs on.

        For tools registered with ``task_start="begin_task"``: what comes before runs as an
        ordinary call (2026-07-28: questions asked there are multi round-trip input, answered
        before the task exists). Anywhere else (a call that is already a task, a client that
        cannot take one, a tool without tasks) it does nothing.
        """
        extras = self._inbound.extras
        begin = extras.get(BEGIN_TASK)
        if begin is None or RUNS_AS in extras:
            return
        asked, ready = begin
        if not asked.done():
            asked.set_result(None)
        await ready.wait()

    @property
    def wants_progress(self) -> bool:
        """Whether ``report_progress`` goes anywhere: the client asked for it (a progress token), or
        the call is a task (its status message), or may become one."""
        inbound = self._inbound
        return inbound.progress_token is not None or RUNS_AS in inbound.extras or BEGIN_TASK in inbound.extras

    @property
    def runs_as_task(self) -> bool:
        """Whether this call is a task, or becomes one when it awaits ``begin_task()`` (the client can
        take one): what a proxy asks before calling its upstream as a task."""
        extras = self._inbound.extras
        return RUNS_AS in extras or BEGIN_TASK in extras

    # --- resources ----------------------------------------------------------------------------

    async def read_resource(self, uri: str) -> list[dict[str, Any]]:
        """Read one of this server's resources; the contents as they would go on the wire."""
        return await self._services.read_resource(uri, self._inbound)

    # --- input from the client ----------------------------------------------------------------

    def _key(self, kind: str, key: str | None) -> str:
        self._sequence += 1
        return key if key is not None else f"{kind}-{self._sequence}"

    async def _ask(
        self,
        capability: str,
        method: str,
        params: dict[str, Any],
        key: str | None,
        valid: Callable[[Any], bool],
    ) -> Any:
        inbound = self._inbound
        input_key = self._key(capability, key)
        inbound.require(capability)
        runs_as: RunsAs | None = inbound.extras.get(RUNS_AS)
        if runs_as is not None:
            return await runs_as.ask(input_key, method, params, valid)
        if inbound.modern:
            answer = inbound.answers.get(input_key)
            if valid(answer):
                return answer
            # Not answered yet, or answered with something unusable: ask (again). The spec
            # prefers re-requesting missing input over failing the request.
            inbound.pending_inputs[input_key] = {"method": method, "params": params}
            raise InputRequired(input_key)
        assert inbound.session is not None
        try:
            timeout = self._services.settings.client_request_timeout
            return await inbound.session.request(method, params, inbound.send, timeout)
        except ClientRequestError as exc:
            raise ToolError(f"{method} failed: {exc}") from None

    # --- relaying another server's questions (what a proxy does) ------------------------------

    async def ask(self, method: str, params: dict[str, Any], *, key: str | None = None) -> Any:
        """Ask the client ``method`` (``elicitation/create``, ``sampling/createMessage``, ``roots/list``)
        with ``params`` as they are, and return its answer as it came.

        What ``elicit``, ``sample`` and ``list_roots`` do underneath, for a server relaying questions
        it did not write (a proxy). In the modern era, outside a task, the first call ends the round
        (see ``asks_in_rounds``).
        """
        capability = next((name for name, asked in _QUESTIONS.items() if asked == method), None)
        if capability is None:
            raise ValueError(
                f"ctx.ask: {method!r} is not a question a client answers; use one of {list(_QUESTIONS.values())}"
            )
        return await self._ask(capability, method, params, key, _is_object)

    @property
    def asks_in_rounds(self) -> bool:
        """Whether a question ends this call's round (2026-07-28 outside a task) rather than waiting for its answer."""
        inbound = self._inbound
        return inbound.modern and RUNS_AS not in inbound.extras

    @property
    def round_answers(self) -> Mapping[str, Any]:
        """The answers the client gave in earlier rounds (2026-07-28), by question key, and what ``end_round`` kept."""
        return self._inbound.answers

    @property
    def kept(self) -> Any:
        """What ``end_round(..., keep=...)`` kept on the round before this one (``None``: nothing)."""
        return self._inbound.answers.get(RELAY_KEY) if self._inbound.modern else None

    def end_round(self, questions: Mapping[str, dict[str, Any]], keep: dict[str, Any] | None = None) -> NoReturn:
        """End this round asking ``questions`` (key → ``{"method", "params"}``) all at once (2026-07-28).

        ``keep`` comes back as ``kept`` on the next round, sealed in toolkit's own ``requestState``
        (a proxy keeps the upstream server's there).
        """
        inbound = self._inbound
        if not inbound.modern:
            raise ToolError("end_round: only a 2026-07-28 request answers in rounds")
        inbound.pending_inputs.update(questions)
        if keep is not None:
            inbound.answers[RELAY_KEY] = keep
        raise InputRequired(next(iter(questions), RELAY_KEY))

    @overload
    async def elicit(self, message: str, schema: type[T], *, key: str | None = None) -> ElicitResult[T]: ...

    @overload
    async def elicit(
        self, message: str, schema: dict[str, Any], *, key: str | None = None
    ) -> ElicitResult[dict[str, Any]]: ...

    @overload
    async def elicit(self, message: str, schema: None = None, *, key: str | None = None) -> ElicitResult[None]: ...

    @overload
    async def elicit(self, message: str, schema: object, *, key: str | None = None) -> ElicitResult[Any]: ...

    @overload
    async def elicit(self, message: str, *, response_type: object, key: str | None = None) -> ElicitResult[Any]: ...

    async def elicit(
        self, message: str, schema: object = None, *, key: str | None = None, response_type: object = _NOT_GIVEN
    ) -> ElicitResult[Any]:
        """Ask the user for input (``elicitation/create``, form mode).

        ``schema`` is a pydantic model (the answer comes back as an instance of it), a JSON
        Schema dict of a flat object with primitive properties, or one value: ``str``, ``int``,
        ``float``, ``bool``, a ``Literal`` or ``Enum``, a list of choices (``["low", "high"]``;
        ``[["a", "b"]]`` to pick several), or ``None`` (no data: the user accepts or not). A
        single value is asked as an object with one property, ``value``, and ``data`` is the
        value itself. ``key`` names the question in the modern era's ``inputRequests``
        (default: generated in call order). ``response_type=`` is fastmcp's name for ``schema``.
        """
        from ._schema.elicitation import elicitation_form, elicitation_schema  # noqa: PLC0415 - on first use

        if response_type is not _NOT_GIVEN:
            if schema is not None:
                raise TypeError("ctx.elicit: give the schema once, as the second argument or as response_type=")
            schema = response_type

        form = elicitation_form(schema)
        model = schema if isinstance(schema, type) and issubclass(schema, BaseModel) else None
        requested = form.schema if form is not None else elicitation_schema(schema)  # type: ignore[arg-type]
        params = {"mode": "form", "message": message, "requestedSchema": requested}
        params = _compat.fields_for("ElicitRequestFormParams", params, self._inbound.version)
        answer = await self._ask("elicitation", "elicitation/create", params, key, _valid_elicit_answer)
        return self._elicit_result(answer, model, form.read if form is not None else None)

    def _elicit_result(
        self, answer: Any, model: type[BaseModel] | None, read: Callable[[dict[str, Any]], Any] | None
    ) -> ElicitResult[Any]:
        from ._answers import ElicitResult  # noqa: PLC0415 - imported on first use (see _answers)

        action = answer.get("action") if isinstance(answer, dict) else None
        if action not in ("accept", "decline", "cancel"):
            raise ToolError("the client's elicitation answer is not a valid ElicitResult")
        if action != "accept":
            return ElicitResult(action)
        content = answer.get("content") or {}
        if read is not None:
            try:
                return ElicitResult("accept", read(content))
            except (pydantic.ValidationError, ValueError) as exc:
                said = exc.errors()[0]["msg"] if isinstance(exc, pydantic.ValidationError) else str(exc)
                raise ToolError(f"the user's answer does not fit the question: {said}") from None
        if model is None:
            return ElicitResult("accept", content)
        try:
            return ElicitResult("accept", model.model_validate(content))
        except pydantic.ValidationError as exc:
            raise ToolError(f"the user's answer does not fit {model.__name__}: {exc.errors()[0]['msg']}") from None

    # --- URL-mode elicitation (2025-11-25, 2026-07-28) ----------------------------------------

    @property
    def can_elicit_url(self) -> bool:
        """Whether ``elicit_url`` reaches this client: it declared ``elicitation.url``, its version has URL mode."""
        inbound = self._inbound
        return _compat.carries_url_mode(inbound.version) and _compat.accepts_url_mode(inbound.client_capabilities)

    async def elicit_url(
        self, url: str, message: str, *, elicitation_id: str | None = None, key: str | None = None
    ) -> ElicitResult[None]:
        """Send the user to ``url`` (URL-mode elicitation): for secrets, third-party OAuth, payments.

        The answer's ``action`` says whether the user agreed to go ("accept"), refused ("decline")
        or dismissed it ("cancel"); accepting does not mean they are done: what they do there
        reaches your server, not the client. ``url``: ``https`` (``http`` on localhost) with no
        credentials in it, else ``ValueError``. ``elicitation_id`` (2025-11-25; default a new
        UUID) is what ``elicitation_complete`` names later: make your own and put it in the URL
        to recognise the user's return. A client that did not declare ``elicitation.url``, or a
        version without URL mode (before 2025-11-25), is refused (check ``can_elicit_url``).
        """
        from ._errors import new_elicitation_id, unsafe_url  # noqa: PLC0415 - URL-mode helpers, on first use

        problem = unsafe_url(url)
        if problem is not None:
            raise ValueError(f"ctx.elicit_url in {self._target()}: {problem}")
        if not self.can_elicit_url:
            raise _compat.url_mode_refused(self._target(), self._inbound.version)
        if elicitation_id is None:
            elicitation_id = new_elicitation_id()
        params = _compat.url_params(url, message, elicitation_id, self._inbound.version)
        answer = await self._ask("elicitation", "elicitation/create", params, key, _valid_elicit_answer)
        from ._answers import ElicitResult  # noqa: PLC0415 - imported on first use (see _answers)

        if not _valid_elicit_answer(answer):
            raise ToolError("the client's elicitation answer is not a valid ElicitResult")
        return ElicitResult(answer["action"])

    async def elicitation_complete(self, elicitation_id: str) -> None:
        """Tell the client the user finished at the URL of ``elicit_url`` (or ``URLElicitationRequired``).

        2025-11-25: ``notifications/elicitation/complete`` on this request's stream (the client
        that was asked, as the spec requires). 2026-07-28 has no such notification: the client
        learns it when it retries, so nothing is sent; neither before 2025-11-25.
        """
        notification = _compat.completion_notification(elicitation_id, self._inbound.version)
        if notification is not None:
            await self._inbound.send(notification)

    def _target(self) -> str:
        params = self._inbound.params
        name = params.get("name", params.get("uri"))
        return f"{self._inbound.method} {name!r}" if name is not None else self._inbound.method

    async def sample(
        self,
        messages: str | Sequence[dict[str, Any]],
        *,
        max_tokens: int = 512,
        system_prompt: str | None = None,
        temperature: float | None = None,
        model_preferences: dict[str, Any] | None = None,
        stop_sequences: list[str] | None = None,
        key: str | None = None,
    ) -> SamplingResult:
        """Ask the client's LLM for a completion (``sampling/createMessage``).

        ``messages`` is a user prompt string or a list of ``{"role", "content"}`` messages.
        """
        if isinstance(messages, str):
            wire_messages: list[dict[str, Any]] = [{"role": "user", "content": {"type": "text", "text": messages}}]
        else:
            wire_messages = list(messages)
        params: dict[str, Any] = {"messages": wire_messages, "maxTokens": max_tokens}
        for name, value in (
            ("systemPrompt", system_prompt),
            ("temperature", temperature),
            ("modelPreferences", model_preferences),
            ("stopSequences", stop_sequences),
        ):
            if value is not None:
                params[name] = value
        answer = await self._ask("sampling", "sampling/createMessage", params, key, _valid_sampling_answer)
        if not isinstance(answer, dict) or "content" not in answer:
            raise ToolError("the client's sampling answer is not a valid CreateMessageResult")
        from ._answers import SamplingResult  # noqa: PLC0415 - imported on first use (see _answers)

        return SamplingResult(
            role=str(answer.get("role", "assistant")),
            content=answer["content"],
            model=answer.get("model"),
            stop_reason=answer.get("stopReason"),
            raw=answer,
        )

    async def list_roots(self, *, key: str | None = None) -> list[Root]:
        """The client's roots (``roots/list``)."""
        answer = await self._ask("roots", "roots/list", {}, key, _valid_roots_answer)
        roots = answer.get("roots") if isinstance(answer, dict) else None
        if not isinstance(roots, list):
            raise ToolError("the client's roots/list answer is not a valid ListRootsResult")
        from ._answers import Root  # noqa: PLC0415 - imported on first use (see _answers)

        return [
            Root(uri=str(root["uri"]), name=root.get("name"))
            for root in roots
            if isinstance(root, dict) and "uri" in root
        ]


_FASTMCP_NAMES: Final = {
    "request_context": "ctx.lifespan is what the lifespan yielded (request_context.lifespan_context), "
    "ctx.request the HTTP request, ctx.session_id and ctx.request_id the rest",
    "get_state": "ctx.state.user / await ctx.state.session(handle) / ctx.state.request (see docs/state.md)",
    "set_state": "ctx.state.user / await ctx.state.session(handle) / ctx.state.request (see docs/state.md)",
    "fastmcp": "ctx.server is the Server",
    "client_id": "ctx.access_token.client_id (HTTP with auth=), or ctx.client_info",
    "session": "ctx.session_id identifies the session; ctx.elicit, ctx.sample and ctx.list_roots ask the client",
}
"""Names FastMCP's ``Context`` has and toolkit's does not, and what to write instead."""


def _is_object(answer: Any) -> bool:
    return isinstance(answer, dict)


def _valid_elicit_answer(answer: Any) -> bool:
    return isinstance(answer, dict) and answer.get("action") in ("accept", "decline", "cancel")


def _valid_sampling_answer(answer: Any) -> bool:
    return isinstance(answer, dict) and "content" in answer


def _valid_roots_answer(answer: Any) -> bool:
    return isinstance(answer, dict) and isinstance(answer.get("roots"), list)
