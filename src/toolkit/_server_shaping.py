"""``ShapingMixin``: the ``Server`` methods that shape what it exposes, whatever the source.

Switching components off and on by name or tag, deciding per caller who sees what, and
replacing a tool by a transformed version. The rules live in the registry (applied when it
merges its sources, so they hold for components that arrive later, mounted and proxied ones
included) and the visibility function in the engine (asked per request, only when there is one).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeVar, Unpack

from ._components import declared_strings
from ._inbound import Caller
from ._registry import Registry

if TYPE_CHECKING:
    from ._engine import Engine
    from ._transform import TransformOptions

VisibilityT = TypeVar("VisibilityT", bound=Callable[[Any, Caller], bool])


class ShapingMixin:
    """``disable``, ``enable``, ``visibility``/``set_visibility`` and ``transform_tool`` (docs/shaping.md)."""

    registry: Registry
    engine: Engine

    def disable(self, *names: str, tags: Iterable[str] | None = None) -> None:
        """Stop offering the components with these names (tools, prompts) or URIs, or carrying one of ``tags``.

        A rule, not a one-off edit: a component registered, mounted or proxied later obeys it
        too. A disabled component is neither listed nor usable: calling it is the error an
        unknown one gets. Connected clients are told of each list that changed.
        ``server.enable(...)`` with the same names or tags undoes it.
        """
        self.registry.set_enabled(False, *self._targets("disable", names, tags))

    def enable(self, *names: str, tags: Iterable[str] | None = None) -> None:
        """Offer again what ``disable`` switched off, by the same names or tags, or by narrower ones.

        A rule by name outranks the rules by tag: after ``disable(tags={"admin"})``,
        ``enable("reset")`` offers ``reset`` although it is tagged ``admin``; any other component is
        off while one of its tags is off.
        """
        self.registry.set_enabled(True, *self._targets("enable", names, tags))

    @staticmethod
    def _targets(
        method: str, names: tuple[str, ...], tags: Iterable[str] | None
    ) -> tuple[frozenset[str], frozenset[str]]:
        for name in names:
            if not isinstance(name, str):
                raise TypeError(
                    f"server.{method}() takes names one by one, server.{method}('a', 'b'), "
                    f"and tags as tags={{...}}; not {name!r}"
                )
        return declared_strings(names, f"server.{method}()", "names"), declared_strings(
            tags, f"server.{method}()", "tags="
        )

    def visibility(self, fn: VisibilityT, /) -> VisibilityT:
        """Decorator: ``fn(component, caller) -> bool`` decides who sees what (see ``set_visibility``)."""
        self.set_visibility(fn)
        return fn

    def set_visibility(self, fn: Callable[[Any, Caller], bool] | None) -> None:
        """Show each caller only the components ``fn(component, caller)`` returns true for; ``None``: everyone sees all.

        ``component`` is a tool, resource, template or prompt (``.name``, ``.tags``, ``.scopes``,
        a resource's ``.uri``); ``caller`` a ``toolkit.Caller`` (its ``access_token``,
        ``client_info``, ``session_id``, ``protocol_version``). It is asked for every entry of
        every list, and before every call, read, prompt and completion: a hidden component is
        answered as an unknown one. It runs on the event loop, so keep it quick and never let
        it block; it comes on top of the scopes (a token without a component's scopes does not
        see it either way).
        """
        if fn is not None and not callable(fn):
            raise TypeError(f"set_visibility takes a function (component, caller) -> bool, or None; not {fn!r}")
        self.engine.set_visibility(fn)

    def transform_tool(self, tool: str, /, **options: Unpack[TransformOptions]) -> None:
        """Offer the tool named ``tool`` transformed (``toolkit.transform_tool``'s options), wherever it comes from.

        A rule: the tool a source offers under that name now, or later, is replaced by its
        transformed version (worked out once per tool, not per call). A tool there now is
        transformed at once, so a mistake (an unknown argument) raises here. Calling it again
        for the same name replaces the rule; with no options, the tool is offered as it is.
        """
        if not isinstance(tool, str):
            raise TypeError(
                f"server.transform_tool takes the tool's name, not {tool!r}; for a tool object use "
                "server.add_tool(toolkit.transform_tool(tool, ...))"
            )
        if not options:
            self.registry.transform_tool(tool, None)
            return
        from ._transform import TransformOptions as Known  # noqa: PLC0415
        from ._transform import transform_tool  # noqa: PLC0415 (only servers that transform a tool load it)

        unknown = sorted(set(options) - set(Known.__annotations__))
        if unknown:
            raise TypeError(f"server.transform_tool({tool!r}): unexpected option(s) {', '.join(unknown)}")
        self.registry.transform_tool(tool, lambda found: transform_tool(found, **options))
