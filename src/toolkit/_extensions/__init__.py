"""Extensions: what a protocol extension adds to a server, on the public API of ``base.py``.

- ``base.py``: ``Extension`` (capabilities per version, extra methods per era, a hook around
  ``tools/call``, a hook on each ``tools/list`` entry, sources, a lifespan, bus messages) and
  ``ToolCall`` (what the ``tools/call`` hook may do with the call it wraps). An extension is never
  handed the ``Server``: it gets an ``ExtensionHost``, the few engine services it may use.
- ``tasks.py``: the tasks extension (``io.modelcontextprotocol/tasks``; 2025-11-25's experimental
  form too), built on that API.
"""
