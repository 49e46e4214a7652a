"""Where state that crosses requests lives: in this process, or in Redis for several replicas.

>>> from toolkit import Server
>>> server = Server("weather", store="redis://127.0.0.1:6379/0")  # doctest: +SKIP

``Server(store=...)`` takes a URL or one of these; ``toolkit run --store URL`` and
``$TOOLKIT_STORE`` do the same from the command line. ``RedisStore`` needs
``pip install 'toolkit-mcp[redis]'``; importing this module imports redis. See
docs/deployment.md.
"""

from ._errors import StoreUnavailable
from ._store.base import MemoryStore, Store
from ._store.redis import RedisEventStore, RedisStore
from ._store.redis_state import RedisStateStore
from ._store.sessions import SessionRecord
from ._store.state import MemoryStateStore, StateLimits, StateStore
from ._store.tasks import MemoryTaskStore, TaskRecord, TaskStore

__all__ = [
    "MemoryStateStore",
    "MemoryStore",
    "MemoryTaskStore",
    "RedisEventStore",
    "RedisStateStore",
    "RedisStore",
    "SessionRecord",
    "StateLimits",
    "StateStore",
    "Store",
    "StoreUnavailable",
    "TaskRecord",
    "TaskStore",
]
