"""``toolkit.Client``: an MCP client for people, over any transport, in either era.

A thin layer over ``ClientSession`` (the protocol) that connects to a target (``targets``),
reads results the way a user wants them (``results``: the natural value, checked against the
tool's ``outputSchema``), turns the server's notifications into callbacks and subscriptions
(``subscriptions``), and runs tools as tasks (``tasks``). ``client.session`` is the session
itself, for raw JSON-RPC.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from .._errors import ClientError, ToolkitError
from .questions import declared, elicitation_handler, url_elicitation_required
from .results import CallToolResult, ToolView, parse_into, text_value, tool_failed
from .session import AUTO, ClientSession, Handler, Progress
from .subscriptions import FILTER_FIELDS, Subscription
from .targets import connected, describe
from .tasks import TaskHandle, start_task

logger = logging.getLogger("toolkit.client")

Callback = Callable[[dict[str, Any]], Awaitable[None] | None]
"""Called with the ``params`` of a log message, or a whole notification."""


class Client:
    """A client of one MCP server: ``async with Client(target) as client: ...``.

    ``target``: a ``toolkit.Server`` (in this process), a URL (Streamable HTTP), a command
    (``["python", "server.py"]`` or a string: a child process over stdio), or a transport.

    - ``protocol_version``: ``"auto"`` (probe ``server/discover``, fall back to ``initialize``)
      or a version to speak exactly.
    - ``timeout``: seconds a request waits for its response (then it is cancelled on the server
      too); each call can say otherwise.
    - ``headers`` and ``auth`` (HTTP): sent with every request; ``auth`` is a bearer token
      string or an ``httpx.Auth`` (``toolkit.client.OAuth`` for the OAuth flow).
    - ``elicitation``, ``sampling``, ``roots``: answer the server's questions (each gets the
      request's ``params`` and returns its result); a client without one does not declare the
      capability. ``elicitation`` answers form mode; ``elicitation_url`` URL mode (it gets
      ``url``, ``message`` and, over 2025-11-25, ``elicitationId``, and returns "accept",
      "decline" or "cancel"; with it the client declares ``elicitation.url``). A server's
      error -32042 raises ``URLElicitationRequired`` (a ``ClientError``) with its URLs.
    - ``on_log``: each log message's ``params``; ``on_notification``: every notification.
    - ``raise_on_error``: ``call_tool`` raises ``ToolCallFailed`` (a ``ToolError``) for a
      result the tool marked ``isError``; ``check_output``: results are checked against the
      tool's ``outputSchema``.
    - ``env``, ``cwd``: the child process of a command target.
    """

    def __init__(
        self,
        target: Any,
        *,
        protocol_version: str = AUTO,
        timeout: float = 60.0,
        probe_timeout: float = 10.0,
        headers: Mapping[str, str] | None = None,
        auth: Any = None,
        client_info: dict[str, Any] | None = None,
        log_level: str | None = None,
        elicitation: Handler | None = None,
        elicitation_url: Handler | None = None,
        sampling: Handler | None = None,
        roots: Handler | None = None,
        on_log: Callback | None = None,
        on_notification: Callback | None = None,
        raise_on_error: bool = True,
        check_output: bool = True,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        http_options: Mapping[str, Any] | None = None,
    ) -> None:
        self.target = target
        self.protocol_version = protocol_version
        self.timeout = timeout
        self.probe_timeout = probe_timeout
        self.headers = headers
        self.auth = auth
        self.client_info = client_info or {"name": "toolkit-client", "version": "1.0"}
        self.log_level = log_level
        self.handlers = {
            "elicitation/create": elicitation_handler(elicitation, elicitation_url),
            "sampling/createMessage": sampling,
            "roots/list": roots,
        }
        self.capabilities = declared(self.handlers, form=elicitation is not None, url=elicitation_url is not None)
        self.on_log = on_log
        self.on_notification = on_notification
        self.raise_on_error = raise_on_error
        self.check_output = check_output
        self.env = env
        self.cwd = cwd
        self.http_options = dict(http_options or {})
        self._session: ClientSession | None = None
        self._stack: contextlib.AsyncExitStack | None = None
        self._views: dict[str, ToolView] | None = None
        self._legacy_listeners: list[Subscription] = []
        self._running_callbacks: set[Any] = set()

    def __repr__(self) -> str:
        return (
            f"Client({describe(self.target)!r}, protocol_version={self.negotiated_version or self.protocol_version!r})"
        )

    # --- the connection ---------------------------------------------------------------------------

    async def __aenter__(self) -> Client:
        if self._stack is not None:
            raise RuntimeError("this Client is already connected (use one `async with` at a time)")
        stack = contextlib.AsyncExitStack()
        try:
            session = await self.open_session(
                stack,
                capabilities=self.capabilities,
                handlers=self.handlers,
                on_message=self._observe,
                log_level=self.log_level,
            )
        except BaseException:
            await stack.aclose()
            raise
        self._session, self._stack = session, stack
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        stack, self._stack = self._stack, None
        for listener in self._legacy_listeners:
            listener.end()
        self._legacy_listeners.clear()
        self._session, self._views = None, None
        if stack is not None:
            await stack.aclose()

    async def open_session(
        self,
        stack: contextlib.AsyncExitStack,
        *,
        headers: Mapping[str, str] | None = None,
        capabilities: dict[str, Any] | None = None,
        handlers: Mapping[str, Handler | None] | None = None,
        on_message: Callable[[dict[str, Any]], None] | None = None,
        log_level: str | None = None,
    ) -> ClientSession:
        """A new session to this client's target with its settings, opened; ``stack`` closes it and its transport.

        What ``async with Client(...)`` does, for a caller that holds several sessions to one target
        (a proxy: one per downstream session). ``headers`` join the client's own.
        """
        transport = await stack.enter_async_context(
            connected(
                self.target,
                headers={**(self.headers or {}), **(headers or {})} or None,
                auth=self.auth,
                env=self.env,
                cwd=self.cwd,
                http_options=self.http_options,
            )
        )
        session = ClientSession(
            transport,
            protocol_version=self.protocol_version,
            capabilities=capabilities,
            client_info=self.client_info,
            log_level=log_level,
            handlers=handlers,
            on_message=on_message,
            timeout=self.timeout,
            probe_timeout=self.probe_timeout,
        )
        stack.push_async_callback(session.close)
        await session.open()
        return session

    @property
    def session(self) -> ClientSession:
        """The protocol session (raw JSON-RPC: ``request``, ``result``, ``notify``)."""
        if self._session is None:
            raise ToolkitError("this Client is not connected: use it inside `async with Client(...) as client:`")
        return self._session

    @property
    def negotiated_version(self) -> str | None:
        """The protocol version spoken with the server (``None`` before connecting)."""
        return self._session.protocol_version if self._session is not None else None

    @property
    def server_info(self) -> dict[str, Any] | None:
        return self.session.server_info

    @property
    def server_capabilities(self) -> dict[str, Any] | None:
        return self.session.server_capabilities

    @property
    def instructions(self) -> str | None:
        """The server's instructions (``initialize`` or ``server/discover``), if it gave any."""
        settled = self.session.initialize_result or self.session.discover_result or {}
        instructions = settled.get("instructions")
        return instructions if isinstance(instructions, str) else None

    # --- what the server sends unasked ------------------------------------------------------------

    def _observe(self, message: dict[str, Any]) -> None:
        """Every message of the server's besides responses: callbacks, the tool cache, legacy listeners."""
        if "id" in message:
            return  # a question of the server's: the session answers it with the handlers
        method = message.get("method")
        if method == "notifications/tools/list_changed":
            self._views = None  # the next call lists again
        if method == "notifications/message" and self.on_log is not None:
            self._callback(self.on_log, message.get("params") or {})
        if self.on_notification is not None:
            self._callback(self.on_notification, message)
        for listener in self._legacy_listeners:
            if listener.wants(message):
                listener.deliver(message)

    def _callback(self, callback: Callback, argument: dict[str, Any]) -> None:
        try:
            outcome = callback(argument)
        except Exception:
            logger.exception("a notification callback failed")
            return
        if isinstance(outcome, Awaitable):
            import asyncio  # noqa: PLC0415

            task = asyncio.ensure_future(outcome)
            self._running_callbacks.add(task)  # held: the loop keeps only a weak reference to a task
            task.add_done_callback(self._running_callbacks.discard)
            task.add_done_callback(_log_failure)

    # --- tools ------------------------------------------------------------------------------------

    async def list_tools(self) -> list[dict[str, Any]]:
        """Every tool the server lists (all pages), as it sent them."""
        session = self.session
        tools = await session.list_tools()
        self._views = {tool["name"]: ToolView(tool, session.modern) for tool in tools if isinstance(tool, dict)}
        return tools

    async def _view(self, name: str) -> ToolView | None:
        """What the listing says of tool ``name`` (listed once, again after ``list_changed``)."""
        if self._views is None:
            try:
                await self.list_tools()
            except ClientError as exc:  # a server that lists no tools can still be called
                logger.debug("tools/list failed (%s): calling without the tool's schemas", exc)
                self._views = {}
        return self._views.get(name) if self._views is not None else None

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        into: Any = None,
        progress: Progress | None = None,
        timeout: float | None = None,
        raise_on_error: bool | None = None,
        meta: dict[str, Any] | None = None,
    ) -> CallToolResult:
        """Call tool ``name``; its result, with ``data`` the natural value.

        ``into``: parse ``data`` into this type (a model, ``list[Forecast]``, ...).
        ``progress(progress, total, message)``: each progress report of this call.
        ``timeout``: this call's (default: the client's); on expiry the call is cancelled on
        the server and ``TimeoutError`` raised. A tool that reports an error raises
        ``ToolCallFailed`` unless ``raise_on_error=False``; a result that breaks the tool's
        ``outputSchema`` raises ``OutputMismatch``. Over 2026-07-28 the server's questions
        (``input_required``) are answered with the handlers, the call repeated until it ends.
        """
        view = await self._view(name)
        params = {"name": name, "arguments": dict(arguments or {})}
        try:
            raw = await self.session.follow_input("tools/call", params, meta=meta, timeout=timeout, progress=progress)
        except ClientError as exc:
            required = url_elicitation_required(exc)
            if required is exc:
                raise
            raise required from None
        return self._read(name, raw, view, into, raise_on_error)

    def _read(
        self, name: str, raw: dict[str, Any], view: ToolView | None, into: Any, raise_on_error: bool | None
    ) -> CallToolResult:
        if raw.get("isError") is True:
            result = CallToolResult(name, raw, None)
            if self.raise_on_error if raise_on_error is None else raise_on_error:
                raise tool_failed(result)
            return result
        if view is None:
            data = raw.get("structuredContent")
        else:
            if self.check_output:
                view.check(raw)
            data = view.natural(raw)
        if into is not None:
            if "structuredContent" not in raw:
                data = text_value(name, raw, into)  # 2024-11-05 and 2025-03-26 carry a value only as text
            data = parse_into(name, data, into)
        return CallToolResult(name, raw, data)

    async def call_tool_as_task(
        self, name: str, arguments: Mapping[str, Any] | None = None, *, ttl_ms: int | None = None
    ) -> TaskHandle:
        """Start tool ``name`` as a task (2025-11-25 experimental tasks, or the 2026-07-28 extension).

        The handle's ``wait()`` gives the raw result; ``client.task_result(handle)`` reads it as
        ``call_tool`` would. A server that answers at once without a task: ``ToolkitError``.
        """
        started = await start_task(self.session, name, dict(arguments or {}), ttl_ms=ttl_ms)
        if isinstance(started, dict):
            raise ToolkitError(f"the server ran tool {name!r} without a task (it did not accept task augmentation)")
        return started

    async def task_result(
        self, handle: TaskHandle, *, into: Any = None, timeout: float = 300.0, raise_on_error: bool | None = None
    ) -> CallToolResult:
        """Wait for a task to end and read its result as ``call_tool`` would."""
        raw = await handle.wait(timeout)
        return self._read(handle.name, raw, await self._view(handle.name), into, raise_on_error)

    # --- resources, prompts, completion -----------------------------------------------------------

    async def _every(self, method: str, key: str) -> list[dict[str, Any]]:
        """Every item of a paginated list (all pages)."""
        items: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            result = await self.session.result(method, {"cursor": cursor} if cursor else {})
            items.extend(result.get(key) or [])
            cursor = result.get("nextCursor")
            if not cursor:
                return items

    async def list_resources(self) -> list[dict[str, Any]]:
        return await self._every("resources/list", "resources")

    async def list_resource_templates(self) -> list[dict[str, Any]]:
        return await self._every("resources/templates/list", "resourceTemplates")

    async def read_resource(self, uri: str, *, timeout: float | None = None) -> list[dict[str, Any]]:
        """The contents of resource ``uri`` (each with ``uri``, ``mimeType``, and ``text`` or ``blob``)."""
        result = await self.session.follow_input("resources/read", {"uri": uri}, timeout=timeout)
        contents: list[dict[str, Any]] = result.get("contents") or []
        return contents

    async def list_prompts(self) -> list[dict[str, Any]]:
        return await self._every("prompts/list", "prompts")

    async def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None, *, timeout: float | None = None
    ) -> dict[str, Any]:
        """Prompt ``name`` rendered with ``arguments``: its ``messages`` (and ``description``)."""
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        return await self.session.follow_input("prompts/get", params, timeout=timeout)

    async def complete(
        self, ref: Mapping[str, Any], argument: str, value: str, *, context: Mapping[str, str] | None = None
    ) -> dict[str, Any]:
        """Completion of ``argument`` (typed so far: ``value``) for a prompt or a resource template.

        ``ref``: ``{"type": "ref/prompt", "name": ...}`` or ``{"type": "ref/resource", "uri": ...}``;
        ``context``: arguments already chosen. The ``completion`` (``values``, ``total``, ``hasMore``).
        """
        params: dict[str, Any] = {"ref": dict(ref), "argument": {"name": argument, "value": value}}
        if context:
            params["context"] = {"arguments": dict(context)}
        result = await self.session.result("completion/complete", params)
        completion: dict[str, Any] = result.get("completion") or {}
        return completion

    # --- the connection's own requests ------------------------------------------------------------

    async def ping(self) -> None:
        """Check the server answers: ``ping`` (legacy); 2026-07-28 removed it, ``server/discover`` stands in."""
        await self.session.result("server/discover" if self.session.modern else "ping")

    async def set_logging_level(self, level: str) -> None:
        """Ask for log messages at ``level`` and above.

        Legacy: ``logging/setLevel``; 2026-07-28: the level travels in every request's ``_meta``.
        """
        session = self.session
        if session.modern:
            session.set_log_level(level)
        else:
            await session.result("logging/setLevel", {"level": level})

    # --- notifications on request -----------------------------------------------------------------

    async def subscribe(self, uri: str) -> None:
        """``resources/subscribe`` (legacy era; 2026-07-28 has ``listen`` instead)."""
        self._legacy_only("resources/subscribe")
        await self.session.result("resources/subscribe", {"uri": uri})

    async def unsubscribe(self, uri: str) -> None:
        self._legacy_only("resources/unsubscribe")
        await self.session.result("resources/unsubscribe", {"uri": uri})

    def _legacy_only(self, method: str) -> None:
        if self.session.modern:
            raise ToolkitError(f"{method} is not in {self.negotiated_version}: use client.listen(resources=[...])")

    async def listen(
        self,
        *,
        tools: bool = False,
        prompts: bool = False,
        resources_list: bool = False,
        resources: Sequence[str] = (),
    ) -> Subscription:
        """The server's change notifications, as one subscription: ``async with await client.listen(...) as s``.

        ``tools``/``prompts``/``resources_list``: the list-changed notifications; ``resources``:
        ``notifications/resources/updated`` of these URIs. 2026-07-28: one
        ``subscriptions/listen``, acknowledged before this returns; legacy: the session's
        notifications, with ``resources/subscribe`` for each URI (unsubscribed on close).
        """
        requested: dict[str, Any] = {}
        for field, wanted in zip(FILTER_FIELDS, (tools, prompts, resources_list), strict=True):
            if wanted:
                requested[field] = True
        if resources:
            requested["resourceSubscriptions"] = list(resources)
        subscription = Subscription(requested)
        session = self.session
        if not session.modern:
            return await self._listen_legacy(subscription, list(resources))
        import asyncio  # noqa: PLC0415

        async def run() -> None:
            try:
                await session.request(
                    "subscriptions/listen",
                    {"notifications": requested},
                    timeout=None,
                    subscription=subscription.deliver,
                )
            except asyncio.CancelledError:
                subscription.end()
                raise
            except BaseException as exc:
                subscription.end(exc)
                return
            subscription.end()

        task = asyncio.ensure_future(run())

        async def close() -> None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

        subscription._closer = close
        try:  # the subscription has no timeout, but its acknowledgement is the answer waited for
            await asyncio.wait_for(subscription.wait_acknowledged(), self.timeout)
        except TimeoutError:
            await close()
            raise TimeoutError(
                f"the server did not acknowledge subscriptions/listen within {self.timeout:g} s"
            ) from None
        return subscription

    async def _listen_legacy(self, subscription: Subscription, uris: list[str]) -> Subscription:
        session = self.session
        for uri in uris:
            await session.result("resources/subscribe", {"uri": uri})
        self._legacy_listeners.append(subscription)
        subscription.acknowledged = dict(subscription.requested)

        async def close() -> None:
            if subscription in self._legacy_listeners:
                self._legacy_listeners.remove(subscription)
            if self._session is not None:
                for uri in uris:
                    with contextlib.suppress(ClientError, ConnectionError):
                        await session.result("resources/unsubscribe", {"uri": uri})

        subscription._closer = close
        subscription._acknowledge(subscription.acknowledged)
        return subscription


def _log_failure(task: Any) -> None:
    if not task.cancelled() and task.exception() is not None:
        logger.error("a notification callback failed", exc_info=task.exception())
