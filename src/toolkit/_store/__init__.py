"""The store wing: state that crosses requests, behind one interface with two implementations.

``base`` defines ``Store`` and ``MemoryStore`` (one process, the default); ``redis`` holds
``RedisStore`` (any number of replicas) and is imported only when a Redis store is used.
"""
