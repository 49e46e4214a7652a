"""Streamable HTTP, one module per job.

- ``app``: the ASGI endpoint: routes POST/GET/DELETE, decides each request's era, opens legacy
  sessions; ``create_app`` and ``McpApp``.
- ``asgi``: small ASGI helpers (responses, the header map, ``ctx.request``).
- ``security``: DNS-rebinding protection (Host/Origin) and the modern era's header mirroring.
- ``sessions``: the legacy session table, its limit and its idle reaper.
- ``streams``: answering one request as plain JSON or as an SSE stream (typed queue items).
- ``events``: the GET stream of a legacy session, and resuming a stream with ``Last-Event-ID``.
- ``runner``: uvicorn, worker processes, graceful shutdown.
"""
