"""A remote MCP server, of any era, as a source: its lists as a snapshot, its calls relayed.

The snapshot is fetched when the proxying server starts and fetched again when the upstream
says a list changed (legacy: ``notifications/*/list_changed``; 2026-07-28: a standing
``subscriptions/listen``) or after a reconnection. Schemas need no bridging (a legacy object
schema is natural, a modern one is natural). Results are made natural once on the way in
(``_compat.natural_outcome``, the inverse of ``call_result``) and shaped once on the way out by
the engine; with ``unwrap_results``, an upstream's declared ``{"result": x}`` wrapper (fastmcp,
the ``mcp`` SDK) is undone too, so a 2026-07-28 caller gets ``x`` and the natural schema.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

from .._client.client import Client
from .._client.session import ClientSession
from .._client.subscriptions import FILTER_FIELDS
from .._compat.tasks import task_form
from .._compat.tools import as_sent, natural_outcome, natural_output_schema
from .._components import TASK_SUPPORT, PromptBase, ReadContents, ResourceBase, TaskSupport, TemplateBase, ToolBase
from .._content import CallOutcome
from .._errors import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND, ClientError, McpError, SchemaError, ToolkitError
from .._registry import KINDS, Kind
from .._schema.headers import header_params
from .._uritemplate import UriTemplate
from .bridge import Relay, RelayContext, TaskQuestions, may_wait, relayed, unreachable
from .namespace import inner_uri, outer_name, outer_uri
from .results import AsSent, is_json_of, without_wrap_mark
from .upstream import FIRST_BACKOFF, MAX_BACKOFF, Sessions, Upstream

if TYPE_CHECKING:
    from .._uritemplate import Value

logger = logging.getLogger("toolkit.proxy")

_LISTS: Final[dict[Kind, tuple[str, str, str]]] = {
    "tools": ("tools/list", "tools", "tools"),
    "resources": ("resources/list", "resources", "resources"),
    "templates": ("resources/templates/list", "resourceTemplates", "resources"),
    "prompts": ("prompts/list", "prompts", "prompts"),
}
"""Each kind's list method, the result field holding it, and the capability that offers it."""

_CHANGED: Final[dict[str, tuple[Kind, ...]]] = {
    "notifications/tools/list_changed": ("tools",),
    "notifications/prompts/list_changed": ("prompts",),
    "notifications/resources/list_changed": ("resources", "templates"),
}


class _Remote:
    """What the remote components share: the source that relays them."""

    source: ProxySource

    async def _relay(
        self,
        method: str,
        params: dict[str, Any],
        context: Any,
        *,
        progress: bool = False,
        task: bool = False,
        relay: Relay | None = None,
    ) -> dict[str, Any]:
        source = self.source
        session = source.open_session_for(context)
        if session is None:
            session = await source.session_for(context)
        try:
            return await relayed(
                session,
                method,
                params,
                context,
                source.label,
                progress=progress,
                task=task,
                questions=source.questions,
                relay=relay,
            )
        except TimeoutError:
            source.upstream.timed_out(session)  # hung, or only slow? a ping tells
            raise


class RemoteTool(_Remote, ToolBase):
    """An upstream tool: its listing as advertised (under the outer name), its call relayed."""

    validate_arguments = False  # the upstream checks its own arguments

    def __init__(self, source: ProxySource, entry: dict[str, Any], version: str) -> None:
        self.source = source
        self.remote_name = str(entry["name"])
        self.name = outer_name(source.namespace, self.remote_name)
        self._what = f"tool {self.name!r}"
        self.title = entry.get("title") if isinstance(entry.get("title"), str) else None
        description = entry.get("description")
        self.description = description if isinstance(description, str) else ""
        self.annotations = entry.get("annotations") if isinstance(entry.get("annotations"), dict) else None
        self.meta = entry.get("_meta") if isinstance(entry.get("_meta"), dict) else None
        self.icons = entry.get("icons") if isinstance(entry.get("icons"), list) else None
        self.scopes = frozenset()
        self.tags = frozenset()
        execution = entry.get("execution")
        declared = execution.get("taskSupport") if isinstance(execution, dict) else None
        # A 2026-07-28 upstream decides per call whether a tool runs as a task (SEP-2663: not listed),
        # so each may here; a legacy upstream's is as it declares, else optional, so that a question
        # it asks mid-call can reach a 2026-07-28 caller through a task (bridge.py).
        form = task_form(version)  # the era's way of running a tool as a task (_compat)
        self.task: TaskSupport = "optional" if form == "extension" or declared not in TASK_SUPPORT else declared
        self.task_start = "begin_task"
        """Ours begins when it must: when the upstream answers with a task (after any questions it asked
        first), or when a legacy upstream asks a question a 2026-07-28 caller can answer only in one."""
        self.upstream_task: str | None = (
            form if form == "extension" or (form == "experimental" and declared == "required") else None
        )
        """How the call runs upstream as a task: ``"extension"`` (when the caller can take a task; the
        upstream decides), ``"experimental"`` (a 2025-11-25 tool it runs only as one)."""
        self.max_argument_depth = 64
        schema = entry.get("inputSchema")
        self.input_schema = schema if isinstance(schema, dict) else {"type": "object"}
        self._input_validator = None  # type: ignore[assignment]
        self.header_params = header_params(self.input_schema, self._what)
        self.version = version
        advertised = entry.get("outputSchema")
        self.advertised_output = advertised if isinstance(advertised, dict) else None
        natural, self.unwrap = natural_output_schema(
            self.remote_name, advertised, version, unwrap_declared=source.unwrap_results
        )
        """``unwrap``: whether results still travel as ``{"result": x}``, which this side takes off."""
        self.output_schema = natural
        self._output_validator = None

    async def call(self, arguments: dict[str, Any], context: Any) -> CallOutcome:
        params = {"name": self.remote_name, "arguments": arguments}
        relay = Relay(context, self.source.label)
        try:
            task = self.upstream_task == "experimental" or (self.upstream_task == "extension" and may_wait(context))
            progress = getattr(context, "wants_progress", True)  # no token upstream when nobody reads progress
            result = await self._relay("tools/call", params, context, progress=progress, task=task, relay=relay)
        except McpError:
            raise
        except (ConnectionError, TimeoutError, ToolkitError) as exc:
            return CallOutcome.error(f"Tool {self.name!r}: {unreachable(self.source.label, exc)}")
        version = self.version
        body, relay.scope.body = relay.scope.body, None
        if body is not None and not self.unwrap:
            sent = as_sent(body, result, version)
            if sent is not None:  # sent on as it came, unless something reads it
                return AsSent(result, version, self.advertised_output, *sent)
        try:
            outcome = natural_outcome(result, self.version, self.advertised_output)
        except ValueError as exc:
            return CallOutcome.error(f"Tool {self.name!r}: {self.source.label} sent a result that is not one ({exc})")
        if self.unwrap and isinstance(outcome.structured, dict) and list(outcome.structured) == ["result"]:
            wrapped = outcome.structured
            outcome.structured = wrapped["result"]
            outcome.fallback_text = None  # the wrapper's text, if it was one: the engine writes the value's
            if is_json_of(outcome.content, wrapped, outcome.structured):
                outcome.content = None  # the wrapper's JSON as text: the engine writes the value's
            outcome.meta = without_wrap_mark(outcome.meta)
        return outcome


def _caller(context: Any) -> tuple[str | None, str | None]:
    """The caller's legacy session id and bearer token, which choose its upstream session."""
    return getattr(context, "session_id", None), getattr(getattr(context, "access_token", None), "token", None)


def _listed(made: RemoteResource | RemoteTemplate, source: ProxySource, entry: dict[str, Any], remote: str) -> None:
    """What a remote resource or template takes from its listing; ``remote`` is its URI (template) upstream."""
    made.source = source
    made.entry = entry
    made.uri = outer_uri(source.namespace, remote)
    made.name = str(entry.get("name") or remote)
    made.mime_type = entry.get("mimeType")
    made.ttl_ms = None
    made.cache_scope = None
    made.scopes = frozenset()
    made.tags = frozenset()


class RemoteResource(_Remote, ResourceBase):
    """An upstream resource under its outer URI."""

    entry: dict[str, Any]
    tags: frozenset[str]

    def __init__(self, source: ProxySource, entry: dict[str, Any]) -> None:
        self.remote_uri = str(entry["uri"])
        _listed(self, source, entry, self.remote_uri)

    def listing(self) -> dict[str, Any]:
        return {**self.entry, "uri": self.uri}

    async def read(self, uri: str, variables: Mapping[str, Value], context: Any) -> list[dict[str, Any]]:
        return await _read(self, self.remote_uri, context)

    async def watch(self, uri: str) -> None:
        await self.source.watch(self.remote_uri, watching=True)

    async def unwatch(self, uri: str) -> None:
        await self.source.watch(self.remote_uri, watching=False)


class RemoteTemplate(_Remote, TemplateBase):
    """An upstream resource template under its outer URI template; matching is done here, reading upstream."""

    entry: dict[str, Any]
    tags: frozenset[str]

    def __init__(self, source: ProxySource, entry: dict[str, Any]) -> None:
        self.remote_template = str(entry["uriTemplate"])
        _listed(self, source, entry, self.remote_template)
        self.uri_template = self.uri
        self.template = UriTemplate(self.remote_template, allow_traversal=True)  # the upstream judges its values

    def listing(self) -> dict[str, Any]:
        return {**self.entry, "uriTemplate": self.uri_template}

    def match(self, uri: str) -> dict[str, Value] | None:
        inner = inner_uri(self.source.namespace, uri)
        return None if inner is None else self.template.match(inner)

    def shape(self, uri: str) -> bool:
        return self.match(uri) is not None

    async def read(self, uri: str, variables: Mapping[str, Value], context: Any) -> list[dict[str, Any]]:
        inner = inner_uri(self.source.namespace, uri)
        return await _read(self, inner if inner is not None else uri, context)

    async def watch(self, uri: str) -> None:
        inner = inner_uri(self.source.namespace, uri)
        await self.source.watch(inner if inner is not None else uri, watching=True)

    async def unwatch(self, uri: str) -> None:
        inner = inner_uri(self.source.namespace, uri)
        await self.source.watch(inner if inner is not None else uri, watching=False)

    async def complete(self, argument: str, value: str, arguments: dict[str, str], context: Any) -> list[str] | None:
        return await _complete(self, {"type": "ref/resource", "uri": self.remote_template}, argument, value, arguments)


class RemotePrompt(_Remote, PromptBase):
    """An upstream prompt under its outer name."""

    def __init__(self, source: ProxySource, entry: dict[str, Any]) -> None:
        self.source = source
        self.entry = entry
        self.remote_name = str(entry["name"])
        self.name = outer_name(source.namespace, self.remote_name)
        self.scopes = frozenset()
        self.tags = frozenset()

    def listing(self) -> dict[str, Any]:
        return {**self.entry, "name": self.name}

    async def render(self, arguments: dict[str, Any], context: Any) -> dict[str, Any]:
        params: dict[str, Any] = {"name": self.remote_name, "arguments": arguments}
        try:
            result = await self._relay("prompts/get", params, context)
        except McpError:
            raise
        except (ConnectionError, TimeoutError, ToolkitError) as exc:
            raise McpError(INTERNAL_ERROR, unreachable(self.source.label, exc)) from None
        return {key: value for key, value in result.items() if key in ("description", "messages", "_meta")}

    async def complete(self, argument: str, value: str, arguments: dict[str, str], context: Any) -> list[str] | None:
        return await _complete(self, {"type": "ref/prompt", "name": self.remote_name}, argument, value, arguments)


async def _read(item: RemoteResource | RemoteTemplate, uri: str, context: RelayContext) -> list[dict[str, Any]]:
    source = item.source
    try:
        result = await item._relay("resources/read", {"uri": uri}, context)
    except McpError:
        raise
    except (ConnectionError, TimeoutError, ToolkitError) as exc:
        raise McpError(INTERNAL_ERROR, unreachable(source.label, exc), {"uri": uri}) from None
    contents = result.get("contents")
    if not isinstance(contents, list):
        raise McpError(INTERNAL_ERROR, f"{source.label} sent a read result without contents", {"uri": uri})
    ttl, scope = result.get("ttlMs"), result.get("cacheScope")  # 2026-07-28: the upstream's freshness, kept
    return ReadContents(
        (
            {**content, "uri": outer_uri(source.namespace, content["uri"])}
            if isinstance(content, dict) and isinstance(content.get("uri"), str)
            else content
            for content in contents
        ),
        ttl_ms=ttl if isinstance(ttl, int) and not isinstance(ttl, bool) and ttl >= 0 else None,
        cache_scope=scope if scope in ("public", "private") else None,
    )


async def _complete(
    item: RemoteTemplate | RemotePrompt, ref: dict[str, Any], argument: str, value: str, arguments: dict[str, str]
) -> list[str] | None:
    source = item.source
    session = await source.upstream.shared()
    if (session.server_capabilities or {}).get("completions") is None:
        return None
    params: dict[str, Any] = {"ref": ref, "argument": {"name": argument, "value": value}}
    if arguments:
        params["context"] = {"arguments": arguments}
    try:
        result = await session.result("completion/complete", params)
    except McpError:
        raise
    except (ConnectionError, TimeoutError, ToolkitError) as exc:
        raise McpError(INTERNAL_ERROR, unreachable(source.label, exc)) from None
    values = (result.get("completion") or {}).get("values")
    return [str(each) for each in values] if isinstance(values, list) else []


class ProxySource:
    """The components of an upstream server under ``namespace``, for the registry (a ``Source``)."""

    def __init__(
        self,
        client: Client,
        *,
        namespace: str | None,
        label: str,
        unwrap_results: bool = False,
        sessions: Sessions = "auto",
        idle_timeout: float = 300.0,
        max_sessions: int = 100,
        forward_token: bool = False,
        select: Callable[[Kind, str, Any], bool] | None = None,
        on_resource_updated: Callable[[str], Awaitable[None]] | None = None,
        required: bool = True,
    ) -> None:
        self.namespace = namespace
        self.label = label
        self.required = required
        """False: unreachable when the server starts, it is left out and joins once it answers (``start``)."""
        self.unreachable: str | None = None
        """Why it could not be reached at the start, while it has not joined (``required=False``)."""
        self.unwrap_results = unwrap_results
        self.select = select
        self.on_resource_updated = on_resource_updated
        self.questions = TaskQuestions(patience=client.timeout)
        """Where the questions of a 2025-11-25 upstream's tasks find the call that follows the task."""
        self.upstream = Upstream(
            client,
            handlers=self.questions.handlers,
            on_message=self._notified,
            on_connected=self._connected,
            sessions=sessions,
            idle_timeout=idle_timeout,
            max_sessions=max_sessions,
            forward_token=forward_token,
        )
        self._tables: dict[Kind, dict[str, Any]] = {kind: {} for kind in KINDS}
        self._listed: dict[Kind, tuple[str, list[dict[str, Any]]]] = {}
        """Each kind's entries as last listed, and in which version: the same again is no change."""
        self._listeners: list[Callable[[Kind], None]] = []
        self._tasks: set[asyncio.Task[Any]] = set()
        self._listening: asyncio.Task[Any] | None = None
        self._changed_kinds: set[Kind] = set()
        """What the upstream said changed and is not listed again yet."""
        self._refetching: asyncio.Task[Any] | None = None
        self._starting = False
        self._watched: Counter[str] = Counter()
        """The upstream URIs watched for updates here, each with its number of subscriptions (``watch``)."""

    def items(self, kind: Kind) -> Mapping[str, Any]:
        return self._tables[kind]

    def on_change(self, listener: Callable[[Kind], None]) -> None:
        self._listeners.append(listener)

    # --- lifecycle --------------------------------------------------------------------------------

    async def start(self) -> None:
        """Connect and take the first snapshot (a failure here fails the proxying server's start, unless
        the source is not ``required``: then it joins later, from ``_join``)."""
        self._starting = True
        try:
            session = await self.upstream.start()
            await self._fetch(session, KINDS)
        except (OSError, TimeoutError, ToolkitError, McpError) as exc:
            if self.required:
                raise
            self.unreachable = str(exc) or type(exc).__name__
            logger.warning(
                "%s could not be reached; serving without it, trying again (every %g s at most): %s",
                self.label,
                MAX_BACKOFF,
                self.unreachable,
            )
            self._spawn(self._join())
        finally:
            self._starting = False

    async def _join(self) -> None:
        """Try the upstream again, with the reconnection backoff, until it answers and lists what it
        offers (a start that connected but could not list has no lists yet); the change is announced."""
        backoff = FIRST_BACKOFF
        while True:
            await asyncio.sleep(backoff)
            self._starting = True  # the lists are taken here, as the start takes them (_connected leaves them)
            try:
                await self._fetch(await self.upstream.join(), KINDS)
            except (OSError, TimeoutError, ToolkitError, McpError) as exc:
                self.unreachable = str(exc) or type(exc).__name__
                logger.debug("%s still cannot be reached: %s", self.label, self.unreachable)
                backoff = min(MAX_BACKOFF, backoff * 2)
                continue
            finally:
                self._starting = False
            self.unreachable = None
            logger.warning("%s can be reached now: its components join", self.label)
            return

    async def stop(self) -> None:
        tasks = [*self._tasks, *([self._listening] if self._listening is not None else [])]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._listening = None
        await self.upstream.stop()

    def session_ended(self, session_id: str) -> None:
        """A downstream legacy session ended: the upstream session it had of its own is closed."""
        self.upstream.end_caller(session_id)

    def open_session_for(self, context: Any) -> ClientSession | None:
        """The session for ``context`` when it is open already (``None``: ask ``session_for``)."""
        return self.upstream.open_session_for(*_caller(context))

    async def session_for(self, context: Any) -> ClientSession:
        return await self.upstream.session_for(*_caller(context))

    # --- the snapshot -----------------------------------------------------------------------------

    def _connected(self, session: ClientSession) -> None:
        """A (re)connection: listen for list changes; after a reconnection, take the snapshot again
        (and subscribe again to the resources watched here)."""
        if session.modern:
            self._listening = self._spawn(self._listen(session))
        elif self._watched and not self._starting:
            self._spawn(self._resubscribe(session))
        if not self._starting:
            self._spawn(self._fetch(session, KINDS))

    # --- resource subscriptions -------------------------------------------------------------------

    async def watch(self, remote_uri: str, *, watching: bool) -> None:
        """A subscription here to ``remote_uri`` began (``watching``) or ended: the first and the last
        are told upstream.

        A legacy upstream that declares ``resources.subscribe`` gets ``resources/subscribe`` (or
        ``unsubscribe``) on the shared session; a modern one, the standing ``subscriptions/listen``
        opened again with the URIs watched now (``resourceSubscriptions``). The updates come back
        through ``_notified`` as ``notifications/resources/updated``. An upstream that offers no
        subscriptions sends none: nothing to do.
        """
        count = self._watched[remote_uri] + (1 if watching else -1)
        if count > 0:
            self._watched[remote_uri] = count
        else:
            self._watched.pop(remote_uri, None)
        if count != (1 if watching else 0):
            return  # others watch it too: upstream already knows
        session = await self.upstream.shared()
        if session.modern:
            if self._listening is not None:
                self._listening.cancel()
            acknowledged = asyncio.Event()
            listening = self._listening = self._spawn(self._listen(session, acknowledged))
            waiting = asyncio.ensure_future(acknowledged.wait())
            try:  # until the upstream listens with the new filter (or the listen ended: nothing to wait for),
                # as long as a request would wait for its answer (the listen itself waits on)
                await asyncio.wait((waiting, listening), timeout=session.timeout, return_when=asyncio.FIRST_COMPLETED)
            finally:
                waiting.cancel()
        elif _subscribable(session):
            await session.result("resources/subscribe" if watching else "resources/unsubscribe", {"uri": remote_uri})

    async def _resubscribe(self, session: ClientSession) -> None:
        if not _subscribable(session):
            return
        for remote_uri in sorted(self._watched):
            try:
                await session.result("resources/subscribe", {"uri": remote_uri})
            except (ConnectionError, TimeoutError, ToolkitError) as exc:
                logger.warning("%s: could not subscribe to %s again: %s", self.label, remote_uri, exc)

    def _spawn(self, work: Awaitable[Any]) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _listen(self, session: ClientSession, acknowledged: asyncio.Event | None = None) -> None:
        """A standing ``subscriptions/listen`` for the lists' changes and the watched resources (2026-07-28
        upstream); ``acknowledged`` is set when the upstream says it listens.

        A subscription that ends while the session lives (the upstream restarted: over HTTP the
        session outlives it) is opened again after a backoff, and the lists are taken again, as what
        changed meanwhile went unheard. An upstream that refuses to listen is not asked again.
        """

        def notified(message: dict[str, Any]) -> None:  # the session's on_message (_notified) saw it already
            if message.get("method") != "notifications/subscriptions/acknowledged":
                return
            if acknowledged is not None:
                acknowledged.set()
            # The lists again, now that the upstream listens: what changed between the snapshot and
            # this acknowledgement was announced to nobody (at start, and after a listen ended).
            self._spawn(self._refetch_quietly())

        backoff = 0.0
        while session.closed_reason is None:
            wanted: dict[str, Any] = dict.fromkeys(FILTER_FIELDS, True)
            if self._watched:
                wanted["resourceSubscriptions"] = sorted(self._watched)
            listening = asyncio.ensure_future(
                session.request("subscriptions/listen", {"notifications": wanted}, timeout=None, subscription=notified)
            )
            began = time.monotonic()
            try:
                response = await listening
            except (ConnectionError, TimeoutError, ToolkitError) as exc:
                response = {"error": {"code": INTERNAL_ERROR, "message": str(exc)}}
            error = response.get("error")
            if isinstance(error, dict) and error.get("code") in (METHOD_NOT_FOUND, INVALID_PARAMS):
                logger.debug("%s: the upstream does not listen: %s", self.label, error.get("message"))
                return
            logger.debug("%s: the list subscription ended: %s", self.label, error or "by the upstream")
            if time.monotonic() - began > MAX_BACKOFF:
                backoff = 0.0  # it had been listening a while: the trouble is new
            backoff = min(MAX_BACKOFF, backoff * 2 if backoff else FIRST_BACKOFF)
            await asyncio.sleep(backoff)

    def _notified(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        kinds = _CHANGED.get(method) if isinstance(method, str) else None
        if kinds is not None:
            self._changed_kinds.update(kinds)
            if self._refetching is None or self._refetching.done():
                self._refetching = self._spawn(self._refetch_changed())
        elif method == "notifications/resources/updated" and self.on_resource_updated is not None:
            params = message.get("params")
            uri = params.get("uri") if isinstance(params, dict) else None
            if isinstance(uri, str):
                self._spawn(self.on_resource_updated(outer_uri(self.namespace, uri)))

    async def _refetch_changed(self) -> None:
        """List again what the upstream said changed: one fetch at a time, however many notifications
        came meanwhile (a flood of list changes costs one list per kind per round, not one per message)."""
        while self._changed_kinds:
            kinds = tuple(kind for kind in KINDS if kind in self._changed_kinds)
            self._changed_kinds.clear()
            await self._refetch(kinds)

    async def _refetch_quietly(self) -> None:
        with contextlib.suppress(McpError):
            await self._refetch(KINDS)

    async def _refetch(self, kinds: tuple[Kind, ...]) -> None:
        try:
            await self._fetch(await self.upstream.shared(), kinds)
        except McpError:
            raise
        except (ConnectionError, TimeoutError, ToolkitError) as exc:
            logger.warning("%s: could not list again after a change: %s", self.label, exc)

    async def _fetch(self, session: ClientSession, kinds: tuple[Kind, ...]) -> None:
        capabilities = session.server_capabilities  # None: not asked (a pinned 2026-07-28 session)
        version = session.protocol_version or ""
        for kind in kinds:
            method, field, capability = _LISTS[kind]
            if capabilities is not None and capabilities.get(capability) is None:
                entries: list[dict[str, Any]] = []
            else:
                try:
                    entries = (
                        await session.list_tools() if kind == "tools" else await _all_pages(session, method, field)
                    )
                except ClientError as exc:
                    if capabilities is not None or exc.code != METHOD_NOT_FOUND:
                        raise
                    entries = []
            if self._listed.get(kind) == (version, entries):
                continue  # listed again, unchanged: nothing to rebuild, nobody to tell (a cursor stays good)
            self._listed[kind] = (version, entries)
            table: dict[str, Any] = {}
            for entry in entries:
                item = self._item(kind, entry, version)
                if item is None:
                    continue
                key = item.uri_template if kind == "templates" else item.uri if kind == "resources" else item.name
                if self.select is None or self.select(kind, key, item):
                    table[key] = item
            self._tables[kind] = table
            for listener in self._listeners:
                listener(kind)

    def _item(self, kind: Kind, entry: Any, version: str) -> Any:
        try:
            if kind == "tools":
                return RemoteTool(self, entry, version)
            if kind == "resources":
                return RemoteResource(self, entry)
            if kind == "templates":
                return RemoteTemplate(self, entry)
            return RemotePrompt(self, entry)
        except (KeyError, TypeError, ValueError, SchemaError) as exc:
            logger.warning("%s: left out a %s entry it listed (%s): %r", self.label, kind[:-1], exc, entry)
            return None


def _subscribable(session: ClientSession) -> bool:
    """Whether a legacy upstream declared ``resources.subscribe``."""
    resources = (session.server_capabilities or {}).get("resources")
    return isinstance(resources, dict) and resources.get("subscribe") is True


async def _all_pages(session: ClientSession, method: str, field: str) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        result = await session.result(method, {"cursor": cursor} if cursor else {})
        page = result.get(field)
        entries.extend(entry for entry in page or () if isinstance(entry, dict))
        cursor = result.get("nextCursor")
        if not cursor:
            return entries
