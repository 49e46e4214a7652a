"""Resources: static URIs and URI templates, and how a read becomes ``contents``.

A template's variables (``test://template/{id}/data``) are matched against the URI
(``_uritemplate``: RFC 6570, values decoded once, traversal refused) and passed to the function
by name, converted to the parameter's type.
"""

from __future__ import annotations

import base64
import collections.abc
import os
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import pydantic
import pydantic_core

from ._components import ResourceBase, TemplateBase, declared_tags
from ._errors import RegistrationError
from ._functions import FunctionInfo, declared_scopes, inspect_function, invoke, where_defined
from ._schema import hints

if TYPE_CHECKING:
    from ._uritemplate import Value

_SEQUENCES: Final = (list, tuple, set, frozenset, collections.abc.Sequence, collections.abc.Set)


class ResourceContents:
    """One item of a read result, when a function wants to give several or set the URI/mime type."""

    __slots__ = ("blob", "meta", "mime_type", "text", "uri")

    def __init__(
        self,
        *,
        text: str | None = None,
        blob: bytes | str | None = None,
        mime_type: str | None = None,
        uri: str | None = None,
        meta: dict[str, Any] | None = None,
    ) -> None:
        if (text is None) == (blob is None):
            raise TypeError("ResourceContents() takes exactly one of text= or blob=")
        self.text = text
        self.blob = None if blob is None else (blob if isinstance(blob, str) else base64.b64encode(blob).decode())
        self.mime_type, self.uri, self.meta = mime_type, uri, meta

    def to_wire(self, uri: str, mime_type: str | None) -> dict[str, Any]:
        wire: dict[str, Any] = {"uri": self.uri or uri}
        mime = self.mime_type or mime_type
        if mime is not None:
            wire["mimeType"] = mime
        if self.text is not None:
            wire["text"] = self.text
        else:
            wire["blob"] = self.blob
        if self.meta:
            wire["_meta"] = self.meta
        return wire


class _Readable:
    """What static resources and templates share: metadata, the function, the read."""

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        context_type: type,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        annotations: Mapping[str, Any] | None = None,
        icons: list[dict[str, Any]] | None = None,
        meta: Mapping[str, Any] | None = None,
        ttl_ms: int | None = None,
        cache_scope: str | None = None,
        scopes: Iterable[str] | None = None,
        tags: Iterable[str] | None = None,
    ) -> None:
        self.fn = fn
        self.info: FunctionInfo = inspect_function(fn, kind="resource", context_type=context_type, dependencies=True)
        self.name = name or self.info.name
        if self.info.dependencies:  # read through an Injector (_injection); one without them pays nothing
            from ._injection import inject  # noqa: PLC0415 - loaded by the servers whose functions have dependencies

            self.info = inject(self.info, kind="resource", name=self.name, context_type=context_type)
        self.title = title
        self.description = description if description is not None else self.info.doc.summary
        self.mime_type = mime_type
        self.annotations = dict(annotations) if annotations else None
        self.icons = icons
        self.meta = dict(meta) if meta else None
        self.ttl_ms = ttl_ms
        self.cache_scope = cache_scope
        for param in self.info.params:  # a type pydantic cannot read fails now, not at the first read
            if param.annotation not in (str, Any):
                hints.adapter_for(param.annotation)
        self.scopes = declared_scopes(scopes, f"resource {self.name!r}")
        """OAuth scopes a caller's access token must grant to see and read this resource."""
        self.tags = declared_tags(tags, f"resource {self.name!r} ({self.info.name}() in {where_defined(fn)})")
        """Labels for the server's own use (``server.disable(tags=...)``); never sent."""

    def _listing(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"name": self.name}
        for key, value in (
            ("title", self.title),
            ("description", self.description),
            ("mimeType", self.mime_type),
            ("annotations", self.annotations),
            ("icons", self.icons),
            ("_meta", self.meta),
        ):
            if value:
                entry[key] = value
        return entry

    async def read(self, uri: str, variables: Mapping[str, Value], context: Any) -> list[dict[str, Any]]:
        kwargs: dict[str, Any] = {}
        for param in self.info.params:
            if param.name in variables:
                kwargs[param.name] = _convert(param.annotation, variables[param.name], param.name)
        if self.info.context_param is not None:
            kwargs[self.info.context_param] = context
        value = await invoke(self.info, kwargs)
        return self.contents(uri, value)

    def contents(self, uri: str, value: Any) -> list[dict[str, Any]]:
        if isinstance(value, ResourceContents):
            return [value.to_wire(uri, self.mime_type)]
        if isinstance(value, (list, tuple)) and value and all(isinstance(item, ResourceContents) for item in value):
            return [item.to_wire(uri, self.mime_type) for item in value]
        if isinstance(value, str):
            return [{"uri": uri, "mimeType": self.mime_type or "text/plain", "text": value}]
        if isinstance(value, (bytes, bytearray, memoryview)):
            blob = base64.b64encode(bytes(value)).decode("ascii")
            return [{"uri": uri, "mimeType": self.mime_type or "application/octet-stream", "blob": blob}]
        text = pydantic_core.to_json(value, inf_nan_mode="null").decode()
        return [{"uri": uri, "mimeType": self.mime_type or "application/json", "text": text}]


def safe_join(root: str | os.PathLike[str], *parts: str) -> Path:
    """``root/parts...`` resolved, refused with ``ValueError`` if it lands outside ``root``.

    For a resource template mapped onto files: symbolic links are followed before the check, so
    a link inside ``root`` pointing out of it is refused too. The ``ValueError`` reaches the
    client as invalid params (``-32602``) without the server's paths.
    """
    base = Path(root).resolve()
    if any("\x00" in part for part in parts):
        raise ValueError("a path with a NUL character is refused")
    candidate = base.joinpath(*parts).resolve()
    if not candidate.is_relative_to(base):
        raise ValueError(f"{'/'.join(parts)!r} is outside the resource's directory")
    return candidate


def _takes_items(annotation: Any) -> bool:
    """Whether a parameter wants a URI variable's items (``list[int]``) rather than its text."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _takes_items(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return any(_takes_items(arg) for arg in typing.get_args(annotation) if arg is not type(None))
    return origin in _SEQUENCES or annotation in _SEQUENCES


def _convert(annotation: Any, raw: Value, name: str) -> Any:
    if annotation is str or annotation is Any:
        return raw
    adapter = hints.adapter_for(annotation)
    try:
        return adapter.validate_python(raw)
    except pydantic.ValidationError as first:
        try:  # '{"a": 1}' for a dict, say: URI variables are strings
            if isinstance(raw, str):
                return adapter.validate_json(raw)
        except pydantic.ValidationError:
            pass
        raise ValueError(f"URI variable {name!r}: {first.errors()[0]['msg']}") from None


class Resource(_Readable, ResourceBase):
    """A resource at a fixed URI."""

    def __init__(self, uri: str, fn: Callable[..., Any], **options: Any) -> None:
        super().__init__(fn, **options)
        self.uri = uri
        if self.info.params:
            raise RegistrationError(
                f"resource {uri!r}: {self.name}() takes parameters "
                f"{[param.name for param in self.info.params]}, but the URI has no {{variables}} to fill them"
            )

    def listing(self) -> dict[str, Any]:
        return {"uri": self.uri, **self._listing()}


class ResourceTemplate(_Readable, TemplateBase):
    """Resources whose URIs follow a template; the variables are the function's arguments."""

    def __init__(
        self, uri_template: str, fn: Callable[..., Any], *, allow_traversal: bool = False, **options: Any
    ) -> None:
        super().__init__(fn, **options)
        self.uri_template = uri_template
        from ._uritemplate import UriTemplate  # noqa: PLC0415 (its regular expressions: only for servers with templates)

        params = {param.name: param for param in self.info.params}
        try:
            self.template = UriTemplate(
                uri_template,
                lists=[name for name, param in params.items() if _takes_items(param.annotation)],
                optional=[name for name, param in params.items() if not param.required],
                allow_traversal=allow_traversal,
            )
        except ValueError as exc:
            raise RegistrationError(f"resource template {uri_template!r} of {self.name}(): {exc}") from None
        self.variables = list(self.template.variables)
        provided = [each.name for each in self.info.dependencies if each.name in self.variables]
        if provided:
            raise RegistrationError(
                f"resource template {uri_template!r}: {self.name}() takes {provided} from a dependency, so the URI "
                "cannot give them; rename the variable or the parameter"
            )
        missing = [variable for variable in self.variables if variable not in params]
        if missing and not self.info.accepts_kwargs:
            raise RegistrationError(f"resource template {uri_template!r}: {self.name}() has no parameter for {missing}")
        extra = [param.name for param in self.info.params if param.name not in self.variables and param.required]
        if extra:
            raise RegistrationError(
                f"resource template {uri_template!r}: {self.name}() requires {extra}, "
                "which the template does not provide"
            )

    def match(self, uri: str) -> dict[str, Value] | None:
        """The decoded variables if ``uri`` has the template's shape; ``UnsafeValue`` if one is refused."""
        return self.template.match(uri)

    def shape(self, uri: str) -> bool:
        return self.template.shape(uri)

    def completion_hints(self) -> Mapping[str, Any]:
        return {param.name: param.annotation for param in self.info.params}

    def listing(self) -> dict[str, Any]:
        return {"uriTemplate": self.uri_template, **self._listing()}
