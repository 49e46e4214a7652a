"""One request relayed to an upstream server, and what the upstream sends about it relayed back.

- Progress and log messages about the request go to the caller's ``Context`` (in order, before
  the result); the upstream is asked for every log level, and the caller's own level filters.
- The upstream's questions (elicitation, sampling, roots) go to the caller:
  - a caller that can wait for an answer (a legacy session, or a call running as a task) is
    asked at once, whatever the upstream's era (a modern upstream's rounds are followed here);
  - a modern caller outside a task answers in rounds: a modern upstream's ``inputRequests``
    become this round's questions, and its ``requestState`` rides inside toolkit's own sealed
    state (``Context.end_round``); a legacy upstream asking mid-call cannot wait for a round
    (its request is still open), so it is answered with a decline (elicitation) or an error
    (sampling, roots) — the one case that cannot be bridged directly (ARCHITECTURE §7): run
    the call as a task to bridge it.
- A caller cancelling cancels the upstream request (the client session does it).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any, Final, NoReturn, Protocol

from .._client.questions import QUESTIONS
from .._client.session import CallScope, ClientSession
from .._client.transport import TransportClosed
from .._errors import INTERNAL_ERROR, ClientError, McpError, ToolError
from .._types import LOG_RANK

logger = logging.getLogger("toolkit.proxy")

_QUESTION_METHODS: Final = frozenset(QUESTIONS.values())


class RelayContext(Protocol):
    """What a relayed request needs of the caller's ``Context``."""

    @property
    def asks_in_rounds(self) -> bool: ...

    @property
    def round_answers(self) -> Mapping[str, Any]: ...

    @property
    def kept(self) -> Any: ...

    async def ask(self, method: str, params: dict[str, Any], *, key: str | None = None) -> Any: ...

    def end_round(self, questions: Mapping[str, dict[str, Any]], keep: dict[str, Any] | None = None) -> NoReturn: ...

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None: ...

    async def log(self, level: Any, data: Any, *, logger: str | None = None) -> None: ...


class Relay:
    """Forwards to ``context`` what the upstream sends about one request, in order."""

    def __init__(self, context: RelayContext, what: str) -> None:
        self.context = context
        self.what = what
        self._last: asyncio.Future[None] | None = None
        waits = not context.asks_in_rounds
        handlers = {method: (self._asker(method) if waits else self._refuser(method)) for method in _QUESTION_METHODS}
        self.scope = CallScope(handlers, self._notified)

    def _asker(self, method: str) -> Any:
        async def ask(params: dict[str, Any]) -> Any:
            await self.flush()
            return await self.context.ask(method, params)

        return ask

    def _refuser(self, method: str) -> Any:
        def refuse(params: dict[str, Any]) -> Any:
            logger.info(
                "%s asked the caller %s mid-call, which a 2026-07-28 caller outside a task cannot answer: %s",
                self.what,
                method,
                "declined" if method == "elicitation/create" else "refused",
            )
            if method == "elicitation/create":
                return {"action": "decline"}
            raise ToolError(
                f"{method} cannot be relayed to a 2026-07-28 caller in the middle of a call; run the call as a task"
            )

        return refuse

    def _then(self, make: Any) -> None:
        """Run ``make()`` after what was relayed before it (a progress report, a log message)."""
        before = self._last

        async def run() -> None:
            if before is not None:
                await before
            try:
                await make()
            except Exception as exc:  # the caller went away: nothing to relay to
                logger.debug("relaying to the caller failed: %s", exc)

        self._last = asyncio.ensure_future(run())

    def progress(self, progress: float, total: float | None, message: str | None) -> None:
        self._then(lambda: self.context.report_progress(progress, total, message))

    def _notified(self, message: dict[str, Any]) -> bool:
        if message.get("method") != "notifications/message":
            return False
        params = message.get("params")
        if isinstance(params, dict) and params.get("level") in LOG_RANK:
            name = params.get("logger")
            self._then(
                lambda: self.context.log(
                    params["level"], params.get("data"), logger=name if isinstance(name, str) else None
                )
            )
        return True

    async def flush(self) -> None:
        """Wait until everything relayed so far has gone out."""
        if self._last is not None:
            await self._last


async def relayed(
    session: ClientSession, method: str, params: dict[str, Any], context: RelayContext, what: str, *, progress: bool
) -> dict[str, Any]:
    """The upstream's complete ``result`` for ``method`` (rounds and questions relayed as above).

    A JSON-RPC error from upstream is raised as an ``McpError`` with its code, message and data;
    an upstream that cannot be reached raises ``ConnectionError`` or ``TimeoutError``.
    """
    relay = Relay(context, what)
    rounds = session.modern and context.asks_in_rounds
    target = params.get("name") or params.get("uri")
    if rounds:
        kept = context.kept
        if isinstance(kept, dict) and kept.get("method") == method and kept.get("target") == target:
            answers = context.round_answers
            params = {
                **params,
                "inputResponses": {key: answers[key] for key in kept.get("keys", ()) if key in answers},
            }
            if "state" in kept:
                params["requestState"] = kept["state"]
    try:
        result = await session.follow_input(
            method,
            params,
            follow=not rounds,
            progress=relay.progress if progress else None,
            scope=relay.scope,
        )
    except ClientError as exc:
        error = exc.error
        await relay.flush()
        code = error.get("code")
        raise McpError(
            code if isinstance(code, int) else INTERNAL_ERROR,
            str(error.get("message", "the upstream server failed")),
            error.get("data"),
        ) from None
    await relay.flush()
    if rounds and result.get("resultType") == "input_required":
        asked = result.get("inputRequests")
        if not isinstance(asked, dict) or not asked:
            raise McpError(INTERNAL_ERROR, f"{what} asked for input without saying what")
        keep: dict[str, Any] = {"method": method, "target": target, "keys": list(asked)}
        if "requestState" in result:
            keep["state"] = result["requestState"]
        context.end_round(asked, keep)
    return result


def unreachable(what: str, exc: BaseException) -> str:
    """What a caller is told when the upstream could not answer."""
    if isinstance(exc, TimeoutError):
        return f"{what} did not answer in time ({exc})"
    if isinstance(exc, TransportClosed):
        return f"{what} closed the connection: {exc}"
    return f"{what} is unavailable: {exc}"
