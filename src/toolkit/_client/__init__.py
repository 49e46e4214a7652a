"""The client wing: one MCP session over any transport, in either era; never the server side.

- ``transport``: what the session needs of a transport (``Transport``: ``open(deliver)``,
  ``send(message, headers=...)``, ``close()``): every message from the server, responses
  included, is delivered to the session, which correlates them itself.
- ``memory``: ``MemoryTransport``, an engine in this process with no framing, handed its entry
  points by the layer that owns the server (``toolkit.testing`` wires ``Server.engine`` in).
- ``session``: ``ClientSession``: the protocol version (pinned, or ``"auto"``: ``server/discover``
  then ``initialize``), the legacy handshake, the modern per-request ``_meta``, request
  correlation, the server's questions answered with the user's handlers (legacy requests; modern
  ``input_required`` rounds), ``ClientError`` for a JSON-RPC error.
- ``tasks``: a tool call run as a task, followed to its end in both forms (2025-11-25
  experimental; the 2026-07-28 extension).

Wall 1 (ARCHITECTURE §1): this wing and ``_transports/`` never import each other. What both sides
of the wire share (JSON-RPC and its correlation, the method table, the headers, framing, the
versions, the era rules) lives below them, so the client sends exactly what the server checks.
The wing imports only the foundation, ``_compat`` and itself: never the engine, never ``_server``.
"""
