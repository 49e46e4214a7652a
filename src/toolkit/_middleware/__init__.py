"""Middleware: the base every middleware builds on, and the ones toolkit ships.

- ``base.py``: ``Middleware``, ``McpRequest`` and the chains a request runs through (``Pipeline``,
  ``serve``, ``call_tool``); public as ``toolkit.middleware``.
- ``logging.py``, ``timing.py``, ``size.py``, ``ratelimit.py``: the built-ins, each built only on
  ``base.py``, the way a user's own would be (loaded on first use).
"""
