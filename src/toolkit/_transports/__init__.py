"""The transports wing: bytes in and out, one request lifecycle, never a ``Server``.

- ``base``: what a transport needs of the engine (``EngineFacing``) and the one request
  lifecycle both transports share (the busy check, running a request in its own task, the
  answer owed when the server stops versus none when the client cancels, the shutdown drain).
- ``stdio``: newline-delimited JSON-RPC on stdin/stdout.
- ``http``: Streamable HTTP, split by job (``app``, ``security``, ``sessions``, ``streams``,
  ``events``, ``runner``).

A transport is handed an engine, its limits and the callables it needs (the ``Server``
facade builds them); it imports nothing above the store layer.
"""
