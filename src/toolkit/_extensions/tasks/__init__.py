"""The tasks extension (``io.modelcontextprotocol/tasks``; 2025-11-25's experimental tasks too).

- ``extension.py``: ``TasksExtension``, what tasks add to a server, on the extension API: the
  ``tasks/*`` methods, the capability, the ``tools/call`` hook that turns a call into a task, the
  ``execution.taskSupport`` of each listed tool, the store and the bus between replicas.
- ``runs.py``: ``Tasks`` and ``TaskRun``: creating, running, looking up and steering tasks.
"""
