"""What the client answers to ``ctx.elicit``, ``ctx.sample`` and ``ctx.list_roots``.

Kept apart from ``_context``, and imported on first use there and in ``toolkit``: creating a
dataclass compiles its generated methods, start-up time a server that never asks the client
anything would pay for nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class ElicitResult(Generic[T]):
    """The user's answer: ``action`` is "accept", "decline" or "cancel"; ``data`` is set on accept."""

    action: Literal["accept", "decline", "cancel"]
    data: T | None = None

    @property
    def accepted(self) -> bool:
        return self.action == "accept"


@dataclass(frozen=True, slots=True)
class SamplingResult:
    """The client's LLM completion (``sampling/createMessage``)."""

    role: str
    content: Any
    model: str | None = None
    stop_reason: str | None = None
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        """The completion's text (the concatenated text blocks)."""
        blocks = self.content if isinstance(self.content, list) else [self.content]
        return "".join(block.get("text", "") for block in blocks if isinstance(block, dict))


@dataclass(frozen=True, slots=True)
class Root:
    """A root the client exposes (``roots/list``)."""

    uri: str
    name: str | None = None
