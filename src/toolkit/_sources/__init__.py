"""Sources of components besides the server's own decorators (ARCHITECTURE §7).

- ``namespace``: the naming rules of a mounted or proxied source (``billing_charge``,
  ``data://billing/invoices``);
- ``mounted``: another ``Server`` in this process, its calls run by its own engine through a
  runner the facade hands down;
- ``proxy``: any MCP server, of any era, over the client.

Each is a ``_registry.Source``: a snapshot per kind and a change callback, so the request path
stays a dict lookup whatever stands behind a tool. The engine never imports this wing.
"""
