"""The naming rules of a mounted or proxied source: one for names, one for resource URIs.

- A tool or prompt ``charge`` under the namespace ``billing`` is ``billing_charge``.
- A resource URI (or template) gets the namespace as the first segment after its scheme:
  ``data://invoices/7`` → ``data://billing/invoices/7``, ``file:///etc/x`` →
  ``file://billing//etc/x``, ``urn:isbn:1`` → ``urn:billing/isbn:1``. A URI without a scheme
  gets it in front: ``invoices`` → ``billing/invoices``.

Both are undone exactly (``inner_uri``), so a caller's URI is mapped back to the child's own.
"""

from __future__ import annotations

import re
from typing import Final

from .._errors import RegistrationError

_NAMESPACE: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_SCHEME: Final = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):(//)?")


def checked_namespace(namespace: str) -> str:
    """``namespace`` if it can prefix names and URIs, else a ``RegistrationError`` saying what fits."""
    if not isinstance(namespace, str) or not _NAMESPACE.match(namespace):
        raise RegistrationError(
            f"namespace={namespace!r}: use letters, digits, '_', '-' or '.', starting with a letter or a digit "
            "(at most 64 characters), e.g. namespace='billing'"
        )
    return namespace


def outer_name(namespace: str | None, name: str) -> str:
    """The name a caller sees for the child's ``name``."""
    return name if namespace is None else f"{namespace}_{name}"


def outer_uri(namespace: str | None, uri: str) -> str:
    """The URI (or URI template) a caller sees for the child's ``uri``."""
    if namespace is None:
        return uri
    scheme = _SCHEME.match(uri)
    if scheme is None:
        if uri.startswith("{"):
            raise RegistrationError(
                f"the resource template {uri!r} starts with a variable, so it has no scheme to put the namespace "
                f"{namespace!r} after; mount this server without a namespace, or give the template a fixed scheme"
            )
        return f"{namespace}/{uri}"
    head = scheme.group(0)
    return f"{head}{namespace}/{uri[len(head) :]}"


def inner_uri(namespace: str | None, uri: str) -> str | None:
    """The child's own URI behind a caller's ``uri``; ``None`` if ``uri`` is not under ``namespace``."""
    if namespace is None:
        return uri
    scheme = _SCHEME.match(uri)
    head = scheme.group(0) if scheme is not None else ""
    prefix = f"{head}{namespace}/"
    if not uri.startswith(prefix):
        return None
    return head + uri[len(prefix) :]
