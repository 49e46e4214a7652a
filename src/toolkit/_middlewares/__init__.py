"""The middlewares toolkit ships: request logging, timing, a response-size cap, rate limits.

Each builds only on ``toolkit.middleware.Middleware`` (``_middleware``), the way a user's own would.
"""
